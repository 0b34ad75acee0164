//! Avro records decoded straight into Arrow columns. A *target* describes the columns the spec
//! defines (by field id); it is resolved once per file against the writer's schema into a plan
//! that reads each writer field into its column, skips what the target does not want, and fills
//! what the writer lacks. No value is materialized outside its column.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{make_array, ArrayRef, RecordBatch, StructArray};
use arrow_buffer::{BooleanBufferBuilder, Buffer, NullBufferBuilder};
use arrow_data::ArrayDataBuilder;
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema as ArrowSchema, TimeUnit};
use frazil_values::{Error, Result};

use crate::avro::decode::{Reader, Skip};
use crate::avro::schema::{Record, Schema};

/// The Arrow field metadata key carrying an Iceberg field id (the Parquet convention that
/// PyArrow and PyIceberg also use).
pub const FIELD_ID_KEY: &str = "PARQUET:field_id";

/// A column the spec defines.
#[derive(Debug, Clone)]
pub struct TField {
    pub id: i32,
    pub name: &'static str,
    pub ty: TType,
    pub presence: Presence,
}

#[derive(Debug, Clone)]
pub enum TType {
    Int,
    Long,
    Boolean,
    String,
    Binary,
    Struct(Vec<TField>),
    List(Box<TField>),
    Map(Box<TField>, Box<TField>),
    /// The partition tuple: typed by the writer's own partition record.
    Partition,
}

/// What to do when the writer's schema lacks a field.
#[derive(Debug, Clone, Copy)]
pub enum Presence {
    Required,
    Optional,
    /// The spec's read default for files that predate the field (e.g. v1 `content` = 0).
    Default(i64),
}

impl TField {
    pub const fn new(id: i32, name: &'static str, ty: TType, presence: Presence) -> TField {
        TField {
            id,
            name,
            ty,
            presence,
        }
    }
}

/// Keeps the fields named by `paths` (dotted: `data_file.file_path`; a struct's name keeps all
/// of it) plus `always`.
pub fn project(fields: &[TField], paths: &[String], prefix: &str) -> Vec<TField> {
    let mut out = Vec::new();
    for f in fields {
        let path = if prefix.is_empty() {
            f.name.to_string()
        } else {
            format!("{prefix}.{}", f.name)
        };
        if paths.contains(&path) {
            out.push(f.clone());
        } else if paths.iter().any(|p| p.starts_with(&format!("{path}."))) {
            if let TType::Struct(children) = &f.ty {
                let mut f = f.clone();
                f.ty = TType::Struct(project(children, paths, &path));
                out.push(f);
            } else {
                out.push(f.clone());
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Builders

enum Builder {
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

fn nb() -> NullBufferBuilder {
    NullBufferBuilder::new(0)
}

fn offset(n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| Error::unsupported("a column exceeds 2 GiB"))
}

impl Builder {
    fn for_type(dt: &DataType) -> Result<Builder> {
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

    fn len(&self) -> usize {
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
    fn reserve(&mut self, n: usize, budget: usize) {
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
    fn append(&mut self, other: Builder) -> Result<()> {
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

    #[inline]
    fn append_null(&mut self) {
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

    fn append_fill(&mut self, fill: Fill) -> Result<()> {
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

    fn finish(self, dt: &DataType) -> Result<ArrayRef> {
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
fn build(b: ArrayDataBuilder) -> Result<arrow_data::ArrayData> {
    if cfg!(any(debug_assertions, fuzzing)) {
        b.build()
            .map_err(|e| Error::decode(format!("inconsistent column: {e}")))
    } else {
        // SAFETY: see above; the invariants hold by construction, checked in debug builds.
        Ok(unsafe { b.build_unchecked() })
    }
}

// ---------------------------------------------------------------------------------------------
// Plans

#[derive(Debug, Clone, Copy)]
enum Fill {
    Null,
    Value(i64),
}

#[derive(Debug)]
enum Op {
    Null,
    Bool,
    Int,
    IntToLong,
    /// A long in the file where the spec says int: range-checked.
    LongToInt,
    Long,
    Float,
    Double,
    /// string or bytes, appended as they are (strings were checked for UTF-8)
    Str,
    Bytes,
    /// fixed[n] into a binary or fixed-size column
    FixedToBytes(usize),
    Fixed(usize),
    DecimalFixed(usize),
    DecimalBytes,
    Record(RecordPlan),
    List(Box<Op>),
    /// An array of key-value records: ops for the record's fields in writer order, each
    /// reading into the keys (0), the values (1) or nothing (skip).
    Map(Vec<(Option<usize>, Op, Schema)>),
    /// The common metrics maps: required int keys, required long values, nothing else.
    MapIntLong,
    /// The bounds maps: required int keys, required bytes values, nothing else.
    MapIntBytes,
    Nullable {
        null_index: Option<i64>,
        value_index: i64,
        op: Box<Op>,
    },
}

#[derive(Debug)]
struct RecordPlan {
    steps: Vec<Step>,
    fills: Vec<(usize, Fill)>,
}

#[derive(Debug)]
enum Step {
    Skip(Skip),
    Read(usize, Op),
}

/// A resolved file: its record plan and the Arrow fields of the columns it fills.
pub struct Plan {
    root: RecordPlan,
    pub fields: Fields,
}

fn field_meta(id: i32) -> HashMap<String, String> {
    HashMap::from([(FIELD_ID_KEY.to_string(), id.to_string())])
}

fn mismatch(path: &str, writer: &Schema, want: &str) -> Error {
    Error::decode(format!(
        "schema does not match the spec: {path} is Avro {} in the file, expected {want}",
        writer.kind()
    ))
}

impl Plan {
    /// Resolves the writer's record schema against the target fields, by field id.
    pub fn resolve(writer: &Schema, target: &[TField]) -> Result<Plan> {
        let Schema::Record(record) = writer else {
            return Err(mismatch("the file's schema", writer, "a record"));
        };
        let (root, fields) = resolve_record(record, target, "")?;
        Ok(Plan { root, fields })
    }

    /// Decodes `count` records from `bytes` into new builders.
    pub fn decode_into(&self, columns: &mut Columns, bytes: &[u8], count: usize) -> Result<()> {
        let mut r = Reader::new(bytes);
        // A real entry takes dozens of bytes at least; a count beyond that is not trusted.
        let plausible = count.min(bytes.len() / 16);
        for b in &mut columns.builders {
            b.reserve(plausible, bytes.len());
        }
        for i in 0..count {
            read_record(&self.root, &mut r, &mut columns.builders)
                .map_err(|e| Error::new(e.kind, format!("record {i}: {e}")))?;
            columns.len += 1;
        }
        if !r.is_empty() {
            return Err(Error::decode(format!(
                "{} bytes left over after {count} records",
                r.remaining()
            )));
        }
        Ok(())
    }

    pub fn columns(&self) -> Result<Columns> {
        Ok(Columns {
            builders: self
                .fields
                .iter()
                .map(|f| Builder::for_type(f.data_type()))
                .collect::<Result<_>>()?,
            len: 0,
        })
    }
}

/// The columns being filled by a plan.
pub struct Columns {
    builders: Vec<Builder>,
    len: usize,
}

impl Columns {
    /// Reserves room for `n` more records (see `Builder::reserve` for `budget`).
    pub fn reserve(&mut self, n: usize, budget: usize) {
        for b in &mut self.builders {
            b.reserve(n, budget);
        }
    }

    /// Appends the records of `other` (columns of the same plan, decoded from later blocks).
    pub fn append(&mut self, other: Columns) -> Result<()> {
        if self.builders.len() != other.builders.len() {
            return Err(internal());
        }
        for (a, b) in self.builders.iter_mut().zip(other.builders) {
            a.append(b)?;
        }
        self.len += other.len;
        Ok(())
    }

    pub fn finish(self, fields: &Fields, metadata: HashMap<String, String>) -> Result<RecordBatch> {
        let mut arrays = Vec::with_capacity(fields.len());
        for (b, f) in self.builders.into_iter().zip(fields.iter()) {
            arrays.push(b.finish(f.data_type())?);
        }
        let schema = Arc::new(ArrowSchema::new_with_metadata(fields.clone(), metadata));
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(self.len));
        RecordBatch::try_new_with_options(schema, arrays, &options)
            .map_err(|e| Error::decode(format!("inconsistent columns: {e}")))
    }
}

fn child_path(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

fn resolve_record(record: &Record, target: &[TField], path: &str) -> Result<(RecordPlan, Fields)> {
    let mut fields: Vec<Option<FieldRef>> = vec![None; target.len()];
    let mut steps = Vec::with_capacity(record.fields.len());
    let mut taken = vec![false; target.len()];
    for wf in &record.fields {
        let slot = wf
            .field_id
            .and_then(|id| target.iter().position(|t| t.id == id))
            .filter(|i| !taken[*i]);
        match slot {
            None => steps.push(Step::Skip(Skip::of(&wf.schema))),
            Some(i) => {
                taken[i] = true;
                let t = &target[i];
                let p = child_path(path, t.name);
                let (op, dt) = resolve_value(&wf.schema, &t.ty, &p)?;
                fields[i] = Some(Arc::new(
                    Field::new(t.name, dt, true).with_metadata(field_meta(t.id)),
                ));
                steps.push(Step::Read(i, op));
            }
        }
    }
    let mut fills = Vec::new();
    for (i, t) in target.iter().enumerate() {
        if taken[i] {
            continue;
        }
        let p = child_path(path, t.name);
        let fill = match t.presence {
            Presence::Required => {
                return Err(Error::decode(format!(
                    "schema does not match the spec: required field {p} (id {}) is missing",
                    t.id
                )))
            }
            Presence::Optional => Fill::Null,
            Presence::Default(v) => Fill::Value(v),
        };
        let dt = match &t.ty {
            TType::Partition => DataType::Struct(Fields::empty()),
            other => target_type(other)?,
        };
        fields[i] = Some(Arc::new(
            Field::new(t.name, dt, true).with_metadata(field_meta(t.id)),
        ));
        fills.push((i, fill));
    }
    let fields: Fields = fields.into_iter().flatten().collect();
    Ok((RecordPlan { steps, fills }, fields))
}

fn map_entries(key: DataType, key_id: i32, value: DataType, value_id: i32) -> FieldRef {
    Arc::new(Field::new(
        "entries",
        DataType::Struct(Fields::from(vec![
            Field::new("key", key, false).with_metadata(field_meta(key_id)),
            Field::new("value", value, true).with_metadata(field_meta(value_id)),
        ])),
        false,
    ))
}

/// The Arrow type of a target type (used for columns the writer lacks).
fn target_type(ty: &TType) -> Result<DataType> {
    Ok(match ty {
        TType::Int => DataType::Int32,
        TType::Long => DataType::Int64,
        TType::Boolean => DataType::Boolean,
        TType::String => DataType::Utf8,
        TType::Binary => DataType::Binary,
        TType::Partition => DataType::Struct(Fields::empty()),
        TType::Struct(fields) => DataType::Struct(
            fields
                .iter()
                .map(|f| {
                    Ok(Field::new(f.name, target_type(&f.ty)?, true)
                        .with_metadata(field_meta(f.id)))
                })
                .collect::<Result<Fields>>()?,
        ),
        TType::List(e) => DataType::List(Arc::new(
            Field::new("element", target_type(&e.ty)?, true).with_metadata(field_meta(e.id)),
        )),
        TType::Map(k, v) => DataType::Map(
            map_entries(target_type(&k.ty)?, k.id, target_type(&v.ty)?, v.id),
            false,
        ),
    })
}

fn resolve_union<'a>(branches: &'a [Schema], path: &str) -> Result<(Option<i64>, i64, &'a Schema)> {
    let mut null_index = None;
    let mut value = None;
    for (i, b) in branches.iter().enumerate() {
        if *b == Schema::Null {
            null_index = Some(i as i64);
        } else if value.is_some() {
            return Err(Error::unsupported(format!(
                "{path}: unions of more than one non-null type are not Iceberg schemas"
            )));
        } else {
            value = Some((i as i64, b));
        }
    }
    match value {
        Some((i, b)) => Ok((null_index, i, b)),
        None => Ok((null_index, -1, &Schema::Null)),
    }
}

fn resolve_value(writer: &Schema, target: &TType, path: &str) -> Result<(Op, DataType)> {
    if let Schema::Union(branches) = writer {
        let (null_index, value_index, inner) = resolve_union(branches, path)?;
        let (op, dt) = resolve_value(inner, target, path)?;
        return Ok((
            Op::Nullable {
                null_index,
                value_index,
                op: Box::new(op),
            },
            dt,
        ));
    }
    if let TType::Partition = target {
        return match writer {
            Schema::Record(r) => natural_record(r, path),
            other => Err(mismatch(path, other, "a record")),
        };
    }
    Ok(match (writer, target) {
        (Schema::Null, t) => (Op::Null, target_type(t)?),
        (Schema::Int { .. }, TType::Int) => (Op::Int, DataType::Int32),
        (Schema::Int { .. }, TType::Long) => (Op::IntToLong, DataType::Int64),
        (Schema::Long { .. }, TType::Long) => (Op::Long, DataType::Int64),
        // Some writers (PyIceberg 0.12's equality_ids) store spec ints as Avro longs; read them
        // as ints when they fit.
        (Schema::Long { .. }, TType::Int) => (Op::LongToInt, DataType::Int32),
        (Schema::Boolean, TType::Boolean) => (Op::Bool, DataType::Boolean),
        (Schema::String, TType::String) => (Op::Str, DataType::Utf8),
        (Schema::Bytes { .. }, TType::Binary) => (Op::Bytes, DataType::Binary),
        (Schema::Fixed { size, .. }, TType::Binary) => (Op::FixedToBytes(*size), DataType::Binary),
        (Schema::Record(r), TType::Struct(fields)) => {
            let (plan, fields) = resolve_record(r, fields, path)?;
            (Op::Record(plan), DataType::Struct(fields))
        }
        (Schema::Array { items, .. }, TType::List(element)) => {
            let (op, dt) = resolve_value(items, &element.ty, &format!("{path}.element"))?;
            let field = Field::new("element", dt, true).with_metadata(field_meta(element.id));
            (Op::List(Box::new(op)), DataType::List(Arc::new(field)))
        }
        (Schema::Array { items, .. }, TType::Map(k, v)) => {
            let Schema::Record(kv) = items.as_ref() else {
                return Err(mismatch(path, writer, "an array of key-value records"));
            };
            let mut ops = Vec::with_capacity(kv.fields.len());
            let mut types = [None, None];
            for (pos, f) in kv.fields.iter().enumerate() {
                let slot = match f.field_id {
                    Some(id) if id == k.id => Some(0),
                    Some(id) if id == v.id => Some(1),
                    Some(_) => None,
                    None if pos < 2 => Some(pos),
                    None => None,
                };
                match slot {
                    Some(s) if types[s].is_none() => {
                        if s == 0 && matches!(f.schema, Schema::Union(_)) {
                            return Err(Error::decode(format!(
                                "{path}: map keys must not be optional"
                            )));
                        }
                        let t = if s == 0 { &k.ty } else { &v.ty };
                        let (op, dt) = resolve_value(&f.schema, t, &format!("{path}.{}", f.name))?;
                        types[s] = Some(dt);
                        ops.push((Some(s), op, Schema::Null));
                    }
                    _ => ops.push((None, Op::Null, f.schema.clone())),
                }
            }
            let [Some(kt), Some(vt)] = types else {
                return Err(mismatch(
                    path,
                    writer,
                    "key-value records with a key and a value",
                ));
            };
            let fast = match ops.as_slice() {
                [(Some(0), Op::Int, _), (Some(1), Op::Long, _)] => Some(Op::MapIntLong),
                [(Some(0), Op::Int, _), (Some(1), Op::Bytes, _)] => Some(Op::MapIntBytes),
                _ => None,
            };
            let op = fast.unwrap_or(Op::Map(ops));
            (op, DataType::Map(map_entries(kt, k.id, vt, v.id), false))
        }
        (w, t) => return Err(mismatch(path, w, &format!("{t:?}").to_lowercase())),
    })
}

/// The partition record, read with the Arrow types its Avro types and logical types name.
fn natural_record(record: &Record, path: &str) -> Result<(Op, DataType)> {
    let mut steps = Vec::with_capacity(record.fields.len());
    let mut fields = Vec::with_capacity(record.fields.len());
    for (i, f) in record.fields.iter().enumerate() {
        let p = child_path(path, &f.name);
        let (op, dt, uuid) = natural(&f.schema, &p)?;
        let mut meta = f.field_id.map(field_meta).unwrap_or_default();
        if uuid {
            meta.insert("ARROW:extension:name".into(), "arrow.uuid".into());
        }
        fields.push(Field::new(&f.name, dt, true).with_metadata(meta));
        steps.push(Step::Read(i, op));
    }
    Ok((
        Op::Record(RecordPlan {
            steps,
            fills: Vec::new(),
        }),
        DataType::Struct(Fields::from(fields)),
    ))
}

fn natural(writer: &Schema, path: &str) -> Result<(Op, DataType, bool)> {
    Ok(match writer {
        Schema::Union(branches) => {
            let (null_index, value_index, inner) = resolve_union(branches, path)?;
            let (op, dt, uuid) = natural(inner, path)?;
            (
                Op::Nullable {
                    null_index,
                    value_index,
                    op: Box::new(op),
                },
                dt,
                uuid,
            )
        }
        Schema::Null => (Op::Null, DataType::Null, false),
        Schema::Boolean => (Op::Bool, DataType::Boolean, false),
        Schema::Int { logical } => match logical.as_deref() {
            Some("date") => (Op::Int, DataType::Date32, false),
            _ => (Op::Int, DataType::Int32, false),
        },
        Schema::Long {
            logical,
            adjust_to_utc,
        } => {
            let tz = adjust_to_utc.then(|| "UTC".into());
            let dt = match logical.as_deref() {
                Some("time-micros") => DataType::Time64(TimeUnit::Microsecond),
                Some("timestamp-micros") => DataType::Timestamp(TimeUnit::Microsecond, tz),
                Some("timestamp-nanos") => DataType::Timestamp(TimeUnit::Nanosecond, tz),
                _ => DataType::Int64,
            };
            (Op::Long, dt, false)
        }
        Schema::Float => (Op::Float, DataType::Float32, false),
        Schema::Double => (Op::Double, DataType::Float64, false),
        Schema::String => (Op::Str, DataType::Utf8, false),
        Schema::Bytes {
            decimal: Some((p, s)),
        } => (Op::DecimalBytes, decimal_type(*p, *s, path)?, false),
        Schema::Bytes { decimal: None } => (Op::Bytes, DataType::Binary, false),
        Schema::Fixed {
            size,
            logical,
            decimal,
            ..
        } => match decimal {
            Some((p, s)) => {
                if *size > 16 {
                    return Err(Error::unsupported(format!(
                        "{path}: decimal in {size} bytes"
                    )));
                }
                (Op::DecimalFixed(*size), decimal_type(*p, *s, path)?, false)
            }
            None => {
                let width = i32::try_from(*size)
                    .map_err(|_| Error::unsupported(format!("{path}: fixed[{size}]")))?;
                let uuid = logical.as_deref() == Some("uuid") && *size == 16;
                (Op::Fixed(*size), DataType::FixedSizeBinary(width), uuid)
            }
        },
        Schema::Record(r) => {
            let (op, dt) = natural_record(r, path)?;
            (op, dt, false)
        }
        other => {
            return Err(Error::unsupported(format!(
                "{path}: partition values of Avro type {} are not supported",
                other.kind()
            )))
        }
    })
}

fn decimal_type(p: u32, s: i32, path: &str) -> Result<DataType> {
    let (Ok(p), Ok(s)) = (u8::try_from(p), i8::try_from(s)) else {
        return Err(Error::unsupported(format!("{path}: decimal({p}, {s})")));
    };
    if p == 0 || p > 38 {
        return Err(Error::unsupported(format!("{path}: decimal({p}, {s})")));
    }
    Ok(DataType::Decimal128(p, s))
}

// ---------------------------------------------------------------------------------------------
// Decoding

fn read_record(plan: &RecordPlan, r: &mut Reader<'_>, children: &mut [Builder]) -> Result<()> {
    for step in &plan.steps {
        match step {
            Step::Skip(skip) => skip.run(r)?,
            Step::Read(i, op) => read(op, r, &mut children[*i])?,
        }
    }
    for (i, fill) in &plan.fills {
        children[*i].append_fill(*fill)?;
    }
    Ok(())
}

fn be_i128(bytes: &[u8]) -> Result<i128> {
    if bytes.len() > 16 {
        return Err(Error::decode(format!("decimal of {} bytes", bytes.len())));
    }
    if bytes.is_empty() {
        return Ok(0);
    }
    let fill = if bytes[0] & 0x80 != 0 { 0xff } else { 0 };
    let mut buf = [fill; 16];
    buf[16 - bytes.len()..].copy_from_slice(bytes);
    Ok(i128::from_be_bytes(buf))
}

fn internal() -> Error {
    Error::decode("internal error: plan and column disagree")
}

#[inline]
fn read(op: &Op, r: &mut Reader<'_>, b: &mut Builder) -> Result<()> {
    match (op, b) {
        (
            Op::Nullable {
                null_index,
                value_index,
                op,
            },
            b,
        ) => {
            let i = r.long()?;
            if Some(i) == *null_index {
                b.append_null();
            } else if i == *value_index {
                read(op, r, b)?;
            } else {
                return Err(Error::decode(format!("union branch {i} out of range")));
            }
        }
        (Op::Null, b) => b.append_null(),
        (Op::Int, Builder::I32(v, n)) => {
            v.push(r.int()?);
            n.append_non_null();
        }
        (Op::LongToInt, Builder::I32(v, n)) => {
            let value = r.long()?;
            v.push(
                i32::try_from(value).map_err(|_| {
                    Error::decode(format!("long {value} does not fit the int field"))
                })?,
            );
            n.append_non_null();
        }
        (Op::IntToLong, Builder::I64(v, n)) => {
            v.push(i64::from(r.int()?));
            n.append_non_null();
        }
        (Op::Long, Builder::I64(v, n)) => {
            v.push(r.long()?);
            n.append_non_null();
        }
        (Op::Bool, Builder::Bool(v, n)) => {
            v.append(r.boolean()?);
            n.append_non_null();
        }
        (Op::Float, Builder::F32(v, n)) => {
            v.push(r.float()?);
            n.append_non_null();
        }
        (Op::Double, Builder::F64(v, n)) => {
            v.push(r.double()?);
            n.append_non_null();
        }
        (
            Op::Str | Op::Bytes | Op::FixedToBytes(_),
            Builder::Bytes {
                offsets,
                data,
                nulls,
            },
        ) => {
            let bytes = match op {
                Op::Str => r.string()?.as_bytes(),
                Op::FixedToBytes(n) => r.take(*n, "a fixed")?,
                _ => r.bytes()?,
            };
            data.extend_from_slice(bytes);
            offsets.push(offset(data.len())?);
            nulls.append_non_null();
        }
        (Op::Fixed(n), Builder::Fixed { size, data, nulls }) if n == size => {
            data.extend_from_slice(r.take(*n, "a fixed")?);
            nulls.append_non_null();
        }
        (Op::DecimalFixed(size), Builder::I128(v, n)) => {
            v.push(be_i128(r.take(*size, "a decimal")?)?);
            n.append_non_null();
        }
        (Op::DecimalBytes, Builder::I128(v, n)) => {
            v.push(be_i128(r.bytes()?)?);
            n.append_non_null();
        }
        (
            Op::Record(plan),
            Builder::Struct {
                children,
                nulls,
                len,
                ..
            },
        ) => {
            read_record(plan, r, children)?;
            nulls.append_non_null();
            *len += 1;
        }
        (
            Op::List(item),
            Builder::List {
                offsets,
                child,
                nulls,
                ..
            },
        ) => {
            loop {
                let n = r.block_count()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    read(item, r, child)?;
                }
            }
            offsets.push(offset(child.len())?);
            nulls.append_non_null();
        }
        (
            Op::Map(ops),
            Builder::Map {
                offsets,
                keys,
                values,
                nulls,
                ..
            },
        ) => {
            loop {
                let n = r.block_count()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    for (slot, op, skip) in ops {
                        match slot {
                            Some(0) => read(op, r, keys)?,
                            Some(_) => read(op, r, values)?,
                            None => r.skip(skip)?,
                        }
                    }
                }
            }
            offsets.push(offset(keys.len())?);
            nulls.append_non_null();
        }
        (
            Op::MapIntLong,
            Builder::Map {
                offsets,
                keys,
                values,
                nulls,
                ..
            },
        ) => {
            let (Builder::I32(kv, kn), Builder::I64(vv, vn)) = (keys.as_mut(), values.as_mut())
            else {
                return Err(internal());
            };
            loop {
                let n = r.block_count()?;
                if n == 0 {
                    break;
                }
                // written in place: no capacity check per value (n is bounded by the bytes
                // left; on an error the whole decode fails, so the zeros never escape)
                let start = kv.len();
                kv.reserve(n);
                vv.reserve(n);
                let keys = &mut kv.spare_capacity_mut()[..n];
                let vals = &mut vv.spare_capacity_mut()[..n];
                for (k, v) in keys.iter_mut().zip(vals) {
                    k.write(r.int()?);
                    v.write(r.long()?);
                }
                // SAFETY: the n values after `start` were all written just above (an error
                // returns before this, leaving the lengths as they were).
                unsafe {
                    kv.set_len(start + n);
                    vv.set_len(start + n);
                }
                kn.append_n_non_nulls(n);
                vn.append_n_non_nulls(n);
            }
            offsets.push(offset(kv.len())?);
            nulls.append_non_null();
        }
        (
            Op::MapIntBytes,
            Builder::Map {
                offsets,
                keys,
                values,
                nulls,
                ..
            },
        ) => {
            let (
                Builder::I32(kv, kn),
                Builder::Bytes {
                    offsets: vo,
                    data,
                    nulls: vn,
                },
            ) = (keys.as_mut(), values.as_mut())
            else {
                return Err(internal());
            };
            loop {
                let n = r.block_count()?;
                if n == 0 {
                    break;
                }
                let (start, ostart) = (kv.len(), vo.len());
                kv.reserve(n);
                vo.reserve(n);
                let keys = &mut kv.spare_capacity_mut()[..n];
                let offs = &mut vo.spare_capacity_mut()[..n];
                for (k, o) in keys.iter_mut().zip(offs) {
                    k.write(r.int()?);
                    let bytes = r.bytes()?;
                    // most bounds are 8 bytes: a fixed-size copy, not a memcpy call
                    match <&[u8; 8]>::try_from(bytes) {
                        Ok(eight) => data.extend_from_slice(eight),
                        Err(_) => data.extend_from_slice(bytes),
                    }
                    // checked once per block below: a wrapped offset fails the decode
                    o.write(data.len() as i32);
                }
                offset(data.len())?;
                // SAFETY: as above, all n keys and offsets were written.
                unsafe {
                    kv.set_len(start + n);
                    vo.set_len(ostart + n);
                }
                kn.append_n_non_nulls(n);
                vn.append_n_non_nulls(n);
            }
            offsets.push(offset(kv.len())?);
            nulls.append_non_null();
        }
        _ => return Err(internal()),
    }
    Ok(())
}

/// Finds a column of a struct array by name.
pub fn struct_column<'a>(array: &'a StructArray, name: &str) -> Option<&'a ArrayRef> {
    array.column_by_name(name)
}
