//! Arrow array builders, one per target column type, filled value by value while decoding.

use arrow_array::{make_array, ArrayRef};
use arrow_buffer::{BooleanBufferBuilder, Buffer, NullBufferBuilder};
use arrow_data::ArrayDataBuilder;
use arrow_schema::{DataType, FieldRef, Fields};
use frazil_values::{Error, Result};

use super::plan::Fill;
use super::read::internal;

pub(super) enum Builder {
    Null(usize),
    Bool(BooleanBufferBuilder, NullBufferBuilder),
    I32(Vec<i32>, NullBufferBuilder),
    I64(Vec<i64>, NullBufferBuilder),
    F32(Vec<f32>, NullBufferBuilder),
    F64(Vec<f64>, NullBufferBuilder),
    I128(Vec<i128>, NullBufferBuilder),
    Bytes {
        offsets: Vec<i32>,
        data: Vec<u8>,
        nulls: NullBufferBuilder,
    },
    Fixed {
        size: usize,
        data: Vec<u8>,
        nulls: NullBufferBuilder,
    },
    Struct {
        fields: Fields,
        children: Vec<Builder>,
        nulls: NullBufferBuilder,
        len: usize,
    },
    List {
        field: FieldRef,
        offsets: Vec<i32>,
        child: Box<Builder>,
        nulls: NullBufferBuilder,
    },
    Map {
        entries: FieldRef,
        offsets: Vec<i32>,
        keys: Box<Builder>,
        values: Box<Builder>,
        nulls: NullBufferBuilder,
    },
}

pub(super) fn nb() -> NullBufferBuilder {
    NullBufferBuilder::new(0)
}

pub(super) fn offset(n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| Error::unsupported("a column exceeds 2 GiB"))
}

impl Builder {
    pub(super) fn for_type(dt: &DataType) -> Result<Builder> {
        Ok(match dt {
            DataType::Null => Builder::Null(0),
            DataType::Boolean => Builder::Bool(BooleanBufferBuilder::new(0), nb()),
            DataType::Int32 | DataType::Date32 => Builder::I32(Vec::new(), nb()),
            DataType::Int64 | DataType::Time64(_) | DataType::Timestamp(_, _) => {
                Builder::I64(Vec::new(), nb())
            }
            DataType::Float32 => Builder::F32(Vec::new(), nb()),
            DataType::Float64 => Builder::F64(Vec::new(), nb()),
            DataType::Decimal128(_, _) => Builder::I128(Vec::new(), nb()),
            DataType::Utf8 | DataType::Binary => Builder::Bytes {
                offsets: vec![0],
                data: Vec::new(),
                nulls: nb(),
            },
            DataType::FixedSizeBinary(n) => Builder::Fixed {
                size: *n as usize,
                data: Vec::new(),
                nulls: nb(),
            },
            DataType::Struct(fields) => Builder::Struct {
                fields: fields.clone(),
                children: fields
                    .iter()
                    .map(|f| Builder::for_type(f.data_type()))
                    .collect::<Result<_>>()?,
                nulls: nb(),
                len: 0,
            },
            DataType::List(field) => Builder::List {
                field: field.clone(),
                offsets: vec![0],
                child: Box::new(Builder::for_type(field.data_type())?),
                nulls: nb(),
            },
            DataType::Map(entries, _) => {
                let DataType::Struct(kv) = entries.data_type() else {
                    return Err(Error::unsupported("map entries must be a struct"));
                };
                Builder::Map {
                    entries: entries.clone(),
                    offsets: vec![0],
                    keys: Box::new(Builder::for_type(kv[0].data_type())?),
                    values: Box::new(Builder::for_type(kv[1].data_type())?),
                    nulls: nb(),
                }
            }
            other => return Err(Error::unsupported(format!("no column builder for {other}"))),
        })
    }

    pub(super) fn len(&self) -> usize {
        match self {
            Builder::Null(n) => *n,
            Builder::Bool(v, _) => v.len(),
            Builder::I32(v, _) => v.len(),
            Builder::I64(v, _) => v.len(),
            Builder::F32(v, _) => v.len(),
            Builder::F64(v, _) => v.len(),
            Builder::I128(v, _) => v.len(),
            Builder::Bytes { offsets, .. }
            | Builder::List { offsets, .. }
            | Builder::Map { offsets, .. } => offsets.len() - 1,
            Builder::Fixed { nulls, .. } => nulls.len(),
            Builder::Struct { len, .. } => *len,
        }
    }

    /// Reserves room for `n` more values, and for lists and maps as many more children as
    /// they held per value so far, so growing columns are not copied again and again. Every
    /// reservation is capped by `budget`, the bytes left to decode: a hostile record count
    /// cannot make it allocate beyond a small multiple of the input.
    pub(super) fn reserve(&mut self, n: usize, budget: usize) {
        let per = |children: usize, len: usize| {
            if len == 0 {
                0
            } else {
                n.saturating_mul(children.div_ceil(len)).min(budget / 2)
            }
        };
        match self {
            Builder::Null(_) => {}
            Builder::Bool(v, _) => v.reserve(n),
            Builder::I32(v, _) => v.reserve(n),
            Builder::I64(v, _) => v.reserve(n),
            Builder::F32(v, _) => v.reserve(n),
            Builder::F64(v, _) => v.reserve(n),
            Builder::I128(v, _) => v.reserve(n),
            Builder::Bytes { offsets, data, .. } => {
                let len = offsets.len() - 1;
                data.reserve(per(data.len(), len));
                offsets.reserve(n);
            }
            Builder::Fixed { size, data, .. } => data.reserve(n.saturating_mul(*size).min(budget)),
            Builder::Struct { children, .. } => {
                for c in children {
                    c.reserve(n, budget);
                }
            }
            Builder::List { offsets, child, .. } => {
                let more = per(child.len(), offsets.len() - 1);
                offsets.reserve(n);
                child.reserve(more, budget);
            }
            Builder::Map {
                offsets,
                keys,
                values,
                ..
            } => {
                let more = per(keys.len(), offsets.len() - 1);
                offsets.reserve(n);
                keys.reserve(more, budget);
                values.reserve(more, budget);
            }
        }
    }

    /// Appends the values of `other`, a builder of the same type (a later run of blocks).
    pub(super) fn append(&mut self, other: Builder) -> Result<()> {
        fn nulls_from(into: &mut NullBufferBuilder, mut from: NullBufferBuilder) {
            let n = from.len();
            match from.finish() {
                Some(buffer) => into.append_buffer(&buffer),
                None => into.append_n_non_nulls(n),
            }
        }
        /// `from`'s offsets after the leading 0, moved past `base` children.
        fn offsets_from(into: &mut Vec<i32>, from: &[i32], base: usize) -> Result<()> {
            let base = offset(base)?;
            into.reserve(from.len().saturating_sub(1));
            for &o in from.get(1..).unwrap_or_default() {
                into.push(
                    o.checked_add(base)
                        .ok_or_else(|| Error::unsupported("a column exceeds 2 GiB"))?,
                );
            }
            Ok(())
        }
        match (self, other) {
            (Builder::Null(a), Builder::Null(b)) => *a += b,
            (Builder::Bool(a, an), Builder::Bool(mut b, bn)) => {
                a.append_buffer(&b.finish());
                nulls_from(an, bn);
            }
            (Builder::I32(a, an), Builder::I32(b, bn)) => {
                a.extend_from_slice(&b);
                nulls_from(an, bn);
            }
            (Builder::I64(a, an), Builder::I64(b, bn)) => {
                a.extend_from_slice(&b);
                nulls_from(an, bn);
            }
            (Builder::F32(a, an), Builder::F32(b, bn)) => {
                a.extend_from_slice(&b);
                nulls_from(an, bn);
            }
            (Builder::F64(a, an), Builder::F64(b, bn)) => {
                a.extend_from_slice(&b);
                nulls_from(an, bn);
            }
            (Builder::I128(a, an), Builder::I128(b, bn)) => {
                a.extend_from_slice(&b);
                nulls_from(an, bn);
            }
            (
                Builder::Bytes {
                    offsets,
                    data,
                    nulls,
                },
                Builder::Bytes {
                    offsets: bo,
                    data: bd,
                    nulls: bn,
                },
            ) => {
                offsets_from(offsets, &bo, data.len())?;
                data.extend_from_slice(&bd);
                nulls_from(nulls, bn);
            }
            (
                Builder::Fixed { size, data, nulls },
                Builder::Fixed {
                    size: bs,
                    data: bd,
                    nulls: bn,
                },
            ) if *size == bs => {
                data.extend_from_slice(&bd);
                nulls_from(nulls, bn);
            }
            (
                Builder::Struct {
                    children,
                    nulls,
                    len,
                    ..
                },
                Builder::Struct {
                    children: bc,
                    nulls: bn,
                    len: bl,
                    ..
                },
            ) if children.len() == bc.len() => {
                for (c, b) in children.iter_mut().zip(bc) {
                    c.append(b)?;
                }
                nulls_from(nulls, bn);
                *len += bl;
            }
            (
                Builder::List {
                    offsets,
                    child,
                    nulls,
                    ..
                },
                Builder::List {
                    offsets: bo,
                    child: bc,
                    nulls: bn,
                    ..
                },
            ) => {
                offsets_from(offsets, &bo, child.len())?;
                child.append(*bc)?;
                nulls_from(nulls, bn);
            }
            (
                Builder::Map {
                    offsets,
                    keys,
                    values,
                    nulls,
                    ..
                },
                Builder::Map {
                    offsets: bo,
                    keys: bk,
                    values: bv,
                    nulls: bn,
                    ..
                },
            ) => {
                offsets_from(offsets, &bo, keys.len())?;
                keys.append(*bk)?;
                values.append(*bv)?;
                nulls_from(nulls, bn);
            }
            _ => return Err(internal()),
        }
        Ok(())
    }

    /// Drops the values after the first `len` (an entry a key projection does not keep). Only
    /// the scalar columns a map's values can be hold entries that may be dropped.
    pub(super) fn truncate(&mut self, len: usize) -> Result<()> {
        if len > self.len() {
            return Err(internal());
        }
        match self {
            Builder::Null(n) => *n = len,
            Builder::Bool(v, n) => {
                v.truncate(len);
                n.truncate(len);
            }
            Builder::I32(v, n) => {
                v.truncate(len);
                n.truncate(len);
            }
            Builder::I64(v, n) => {
                v.truncate(len);
                n.truncate(len);
            }
            Builder::F32(v, n) => {
                v.truncate(len);
                n.truncate(len);
            }
            Builder::F64(v, n) => {
                v.truncate(len);
                n.truncate(len);
            }
            Builder::I128(v, n) => {
                v.truncate(len);
                n.truncate(len);
            }
            Builder::Bytes {
                offsets,
                data,
                nulls,
            } => {
                offsets.truncate(len + 1);
                let end = offsets.last().copied().ok_or_else(internal)?;
                data.truncate(usize::try_from(end).map_err(|_| internal())?);
                nulls.truncate(len);
            }
            Builder::Fixed { size, data, nulls } => {
                data.truncate(len.saturating_mul(*size));
                nulls.truncate(len);
            }
            Builder::Struct { .. } | Builder::List { .. } | Builder::Map { .. } => {
                return Err(Error::unsupported(
                    "map entries with nested values cannot be projected to keys",
                ))
            }
        }
        Ok(())
    }

    #[inline]
    pub(super) fn append_null(&mut self) {
        match self {
            Builder::Null(n) => *n += 1,
            Builder::Bool(v, n) => {
                v.append(false);
                n.append_null();
            }
            Builder::I32(v, n) => {
                v.push(0);
                n.append_null();
            }
            Builder::I64(v, n) => {
                v.push(0);
                n.append_null();
            }
            Builder::F32(v, n) => {
                v.push(0.0);
                n.append_null();
            }
            Builder::F64(v, n) => {
                v.push(0.0);
                n.append_null();
            }
            Builder::I128(v, n) => {
                v.push(0);
                n.append_null();
            }
            Builder::Bytes { offsets, nulls, .. }
            | Builder::List { offsets, nulls, .. }
            | Builder::Map { offsets, nulls, .. } => {
                let last = offsets[offsets.len() - 1];
                offsets.push(last);
                nulls.append_null();
            }
            Builder::Fixed { size, data, nulls } => {
                data.resize(data.len() + *size, 0);
                nulls.append_null();
            }
            Builder::Struct {
                children,
                nulls,
                len,
                ..
            } => {
                for c in children {
                    c.append_null();
                }
                nulls.append_null();
                *len += 1;
            }
        }
    }

    pub(super) fn append_fill(&mut self, fill: Fill) -> Result<()> {
        match (fill, self) {
            (Fill::Null, b) => b.append_null(),
            (Fill::Value(v), Builder::I32(vals, n)) => {
                vals.push(v as i32);
                n.append_non_null();
            }
            (Fill::Value(v), Builder::I64(vals, n)) => {
                vals.push(v);
                n.append_non_null();
            }
            (Fill::Value(_), _) => return Err(Error::unsupported("default for a non-integer")),
        }
        Ok(())
    }

    pub(super) fn finish(self, dt: &DataType) -> Result<ArrayRef> {
        let built = |b: ArrayDataBuilder| -> Result<ArrayRef> { Ok(make_array(build(b)?)) };
        let base = |len: usize, mut nulls: NullBufferBuilder| {
            ArrayDataBuilder::new(dt.clone())
                .len(len)
                .nulls(nulls.finish())
        };
        match self {
            Builder::Null(n) => built(ArrayDataBuilder::new(DataType::Null).len(n)),
            Builder::Bool(mut v, n) => {
                let len = v.len();
                built(base(len, n).add_buffer(v.finish().into_inner()))
            }
            Builder::I32(v, n) => built(base(v.len(), n).add_buffer(Buffer::from_vec(v))),
            Builder::I64(v, n) => built(base(v.len(), n).add_buffer(Buffer::from_vec(v))),
            Builder::F32(v, n) => built(base(v.len(), n).add_buffer(Buffer::from_vec(v))),
            Builder::F64(v, n) => built(base(v.len(), n).add_buffer(Buffer::from_vec(v))),
            Builder::I128(v, n) => built(base(v.len(), n).add_buffer(Buffer::from_vec(v))),
            Builder::Bytes {
                offsets,
                data,
                nulls,
            } => built(
                base(offsets.len() - 1, nulls)
                    .add_buffer(Buffer::from_vec(offsets))
                    .add_buffer(Buffer::from_vec(data)),
            ),
            Builder::Fixed { data, nulls, .. } => {
                let len = nulls.len();
                built(base(len, nulls).add_buffer(Buffer::from_vec(data)))
            }
            Builder::Struct {
                fields,
                children,
                nulls,
                len,
            } => {
                let mut child_data = Vec::with_capacity(children.len());
                for (c, f) in children.into_iter().zip(fields.iter()) {
                    child_data.push(c.finish(f.data_type())?.to_data());
                }
                built(base(len, nulls).child_data(child_data))
            }
            Builder::List {
                field,
                offsets,
                child,
                nulls,
            } => {
                let child = child.finish(field.data_type())?;
                built(
                    base(offsets.len() - 1, nulls)
                        .add_buffer(Buffer::from_vec(offsets))
                        .child_data(vec![child.to_data()]),
                )
            }
            Builder::Map {
                entries,
                offsets,
                keys,
                values,
                nulls,
            } => {
                let DataType::Struct(kv) = entries.data_type() else {
                    return Err(Error::unsupported("map entries must be a struct"));
                };
                let n = keys.len();
                let keys = keys.finish(kv[0].data_type())?;
                let values = values.finish(kv[1].data_type())?;
                let entries_data = build(
                    ArrayDataBuilder::new(entries.data_type().clone())
                        .len(n)
                        .child_data(vec![keys.to_data(), values.to_data()]),
                )?;
                built(
                    base(offsets.len() - 1, nulls)
                        .add_buffer(Buffer::from_vec(offsets))
                        .child_data(vec![entries_data]),
                )
            }
        }
    }
}

/// Builds a column's array data. The builders make valid columns whatever the input: offsets
/// are pushed as the running length of their child or bytes (so they start at 0, never
/// decrease, and end at that length), strings were checked for UTF-8 as they were read, every
/// record appends exactly one value to every column, and null buffers grow with their values.
/// So release builds skip Arrow's full validation, which walks every offset and string again;
/// test, debug and fuzzing builds validate and fail on any inconsistency.
#[allow(unexpected_cfgs)] // `fuzzing`: set by dev/fuzz
pub(super) fn build(b: ArrayDataBuilder) -> Result<arrow_data::ArrayData> {
    if cfg!(any(debug_assertions, fuzzing)) {
        b.build()
            .map_err(|e| Error::decode(format!("inconsistent column: {e}")))
    } else {
        // SAFETY: see above; the invariants hold by construction, checked in debug builds.
        Ok(unsafe { b.build_unchecked() })
    }
}
