//! What a manifest's entry in the manifest list says about it (spec "Manifest Lists"): file and
//! row counts by status, the minimum data sequence number of its live entries, and a
//! `field_summary` per partition field (contains_null, contains_nan, lower and upper bounds in
//! their binary single-value form, -0.0 ordered before +0.0).

use std::cmp::Ordering;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, StructArray};
use arrow_schema::{DataType, Field, TimeUnit};
use frazil_values::bound::{self, Val};
use frazil_values::{binary, Error, Literal, PrimitiveType, Result};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSummary {
    pub contains_null: bool,
    pub contains_nan: bool,
    pub lower_bound: Option<Vec<u8>>,
    pub upper_bound: Option<Vec<u8>>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ManifestSummary {
    pub added_files_count: i32,
    pub existing_files_count: i32,
    pub deleted_files_count: i32,
    pub added_rows_count: i64,
    pub existing_rows_count: i64,
    pub deleted_rows_count: i64,
    /// `None` when a live entry's sequence number is still to be inherited (it is then the
    /// sequence number of the snapshot that commits the manifest).
    pub min_sequence_number: Option<i64>,
    pub partitions: Vec<FieldSummary>,
}

/// The Iceberg type of a partition column, from its Arrow type.
pub fn primitive_type(field: &Field) -> Result<PrimitiveType> {
    let uuid = field
        .metadata()
        .get("ARROW:extension:name")
        .is_some_and(|n| n == "arrow.uuid");
    Ok(match field.data_type() {
        DataType::Boolean => PrimitiveType::Boolean,
        DataType::Int32 => PrimitiveType::Int,
        DataType::Date32 => PrimitiveType::Date,
        DataType::Int64 => PrimitiveType::Long,
        DataType::Time64(TimeUnit::Microsecond) => PrimitiveType::Time,
        DataType::Timestamp(TimeUnit::Microsecond, None) => PrimitiveType::Timestamp,
        DataType::Timestamp(TimeUnit::Microsecond, Some(_)) => PrimitiveType::TimestampTz,
        DataType::Timestamp(TimeUnit::Nanosecond, None) => PrimitiveType::TimestampNs,
        DataType::Timestamp(TimeUnit::Nanosecond, Some(_)) => PrimitiveType::TimestampTzNs,
        DataType::Float32 => PrimitiveType::Float,
        DataType::Float64 => PrimitiveType::Double,
        DataType::Utf8 | DataType::LargeUtf8 => PrimitiveType::String,
        DataType::Binary | DataType::LargeBinary => PrimitiveType::Binary,
        DataType::FixedSizeBinary(16) if uuid => PrimitiveType::Uuid,
        DataType::FixedSizeBinary(n) => PrimitiveType::Fixed(*n as u64),
        DataType::Decimal128(p, s) => PrimitiveType::Decimal {
            precision: u32::from(*p),
            scale: i32::from(*s),
        },
        other => {
            return Err(Error::unsupported(format!(
                "partition field {} of Arrow type {other} has no Iceberg type",
                field.name()
            )))
        }
    })
}

/// Running min and max under `cmp`.
struct Bounds<T> {
    lo: Option<T>,
    hi: Option<T>,
}

impl<T: Copy> Bounds<T> {
    fn new() -> Self {
        Bounds { lo: None, hi: None }
    }
    fn add(&mut self, v: T, cmp: impl Fn(&T, &T) -> Ordering) {
        if self
            .lo
            .as_ref()
            .is_none_or(|lo| cmp(&v, lo) == Ordering::Less)
        {
            self.lo = Some(v);
        }
        if self
            .hi
            .as_ref()
            .is_none_or(|hi| cmp(&v, hi) == Ordering::Greater)
        {
            self.hi = Some(v);
        }
    }
    fn finish(self, lit: impl Fn(T) -> Literal) -> (Option<Literal>, Option<Literal>) {
        (self.lo.map(&lit), self.hi.map(&lit))
    }
}

fn bounds_of<'a, T: Copy + 'a>(
    a: &'a dyn Array,
    value: impl Fn(usize) -> T,
    cmp: impl Fn(&T, &T) -> Ordering,
    lit: impl Fn(T) -> Literal,
) -> (Option<Literal>, Option<Literal>) {
    let mut b = Bounds::new();
    for i in 0..a.len() {
        if a.is_valid(i) {
            b.add(value(i), &cmp);
        }
    }
    b.finish(lit)
}

/// Bounds of a float column: NaN is counted in `contains_nan`, never a bound, and `total_cmp`
/// puts -0.0 before +0.0, as the spec requires.
fn float_bounds<'a, T: Copy + 'a>(
    a: &'a dyn Array,
    value: impl Fn(usize) -> T,
    is_nan: impl Fn(T) -> bool,
    cmp: impl Fn(&T, &T) -> Ordering,
    lit: impl Fn(T) -> Literal,
    contains_nan: &mut bool,
) -> (Option<Literal>, Option<Literal>) {
    let mut b = Bounds::new();
    for i in (0..a.len()).filter(|&i| a.is_valid(i)) {
        let x = value(i);
        if is_nan(x) {
            *contains_nan = true;
        } else {
            b.add(x, &cmp);
        }
    }
    b.finish(lit)
}

/// The `field_summary` of one partition column.
pub fn field_summary(a: &dyn Array, field: &Field) -> Result<FieldSummary> {
    let ty = primitive_type(field)?;
    let mut contains_nan = false;
    let (lo, hi) = match a.data_type() {
        DataType::Boolean => {
            let v = a.as_boolean();
            bounds_of(a, |i| v.value(i), Ord::cmp, Literal::Boolean)
        }
        DataType::Int32 | DataType::Date32 => {
            let vals: &[i32] = match a.data_type() {
                DataType::Date32 => a.as_primitive::<Date32Type>().values(),
                _ => a.as_primitive::<Int32Type>().values(),
            };
            let lit = if ty == PrimitiveType::Date {
                Literal::Date
            } else {
                Literal::Int
            };
            bounds_of(a, |i| vals[i], Ord::cmp, lit)
        }
        DataType::Int64 | DataType::Time64(_) | DataType::Timestamp(_, _) => {
            let vals: &[i64] = match a.data_type() {
                DataType::Time64(TimeUnit::Microsecond) => {
                    a.as_primitive::<Time64MicrosecondType>().values()
                }
                DataType::Time64(_) => a.as_primitive::<Time64NanosecondType>().values(),
                DataType::Timestamp(TimeUnit::Microsecond, _) => {
                    a.as_primitive::<TimestampMicrosecondType>().values()
                }
                DataType::Timestamp(TimeUnit::Nanosecond, _) => {
                    a.as_primitive::<TimestampNanosecondType>().values()
                }
                DataType::Timestamp(_, _) => {
                    return Err(Error::unsupported(
                        "timestamps must be in micro- or nanoseconds",
                    ))
                }
                _ => a.as_primitive::<Int64Type>().values(),
            };
            let lit: fn(i64) -> Literal = match ty {
                PrimitiveType::Time => Literal::Time,
                PrimitiveType::Timestamp => Literal::Timestamp,
                PrimitiveType::TimestampTz => Literal::TimestampTz,
                PrimitiveType::TimestampNs => Literal::TimestampNs,
                PrimitiveType::TimestampTzNs => Literal::TimestampTzNs,
                _ => Literal::Long,
            };
            bounds_of(a, |i| vals[i], Ord::cmp, lit)
        }
        DataType::Float32 => {
            let v = a.as_primitive::<Float32Type>();
            float_bounds(
                a,
                |i| v.value(i),
                f32::is_nan,
                f32::total_cmp,
                Literal::Float,
                &mut contains_nan,
            )
        }
        DataType::Float64 => {
            let v = a.as_primitive::<Float64Type>();
            float_bounds(
                a,
                |i| v.value(i),
                f64::is_nan,
                f64::total_cmp,
                Literal::Double,
                &mut contains_nan,
            )
        }
        DataType::Decimal128(_, _) => {
            let v = a.as_primitive::<Decimal128Type>();
            bounds_of(a, |i| v.value(i), Ord::cmp, Literal::Decimal)
        }
        // Byte order is UTF-8 code point order for strings and unsigned order for binaries.
        DataType::Utf8 => {
            let v = a.as_string::<i32>();
            bounds_of(
                a,
                |i| v.value(i),
                Ord::cmp,
                |s| Literal::String(s.to_string()),
            )
        }
        DataType::LargeUtf8 => {
            let v = a.as_string::<i64>();
            bounds_of(
                a,
                |i| v.value(i),
                Ord::cmp,
                |s| Literal::String(s.to_string()),
            )
        }
        DataType::Binary => {
            let v = a.as_binary::<i32>();
            bounds_of(a, |i| v.value(i), Ord::cmp, |b| Literal::Binary(b.to_vec()))
        }
        DataType::LargeBinary => {
            let v = a.as_binary::<i64>();
            bounds_of(a, |i| v.value(i), Ord::cmp, |b| Literal::Binary(b.to_vec()))
        }
        DataType::FixedSizeBinary(_) => {
            let v = a.as_fixed_size_binary();
            let uuid = ty == PrimitiveType::Uuid;
            bounds_of(
                a,
                |i| v.value(i),
                Ord::cmp,
                |b: &[u8]| match <[u8; 16]>::try_from(b) {
                    Ok(u) if uuid => Literal::Uuid(u128::from_be_bytes(u)),
                    _ => Literal::Fixed(b.to_vec()),
                },
            )
        }
        other => {
            return Err(Error::unsupported(format!(
                "partition field {} of Arrow type {other} cannot be summarized",
                field.name()
            )))
        }
    };
    let encode = |l: Option<Literal>| l.map(|l| binary::to_bytes(&l, &ty)).transpose();
    Ok(FieldSummary {
        contains_null: a.null_count() > 0,
        contains_nan,
        lower_bound: encode(lo)?,
        upper_bound: encode(hi)?,
    })
}

fn column<'a>(s: &'a StructArray, name: &str) -> Result<&'a dyn Array> {
    s.column_by_name(name)
        .map(|a| a.as_ref())
        .ok_or_else(|| Error::invalid(format!("manifest entries have no {name} column")))
}

/// Summarizes `manifest_entry` rows (chunks of one struct type) for the manifest list.
pub fn summarize(chunks: &[StructArray]) -> Result<ManifestSummary> {
    let mut s = ManifestSummary::default();
    let mut min_seq: Option<i64> = None;
    let mut seq_unknown = false;
    let mut partition_chunks: Vec<StructArray> = Vec::new();
    for chunk in chunks {
        let status = column(chunk, "status")?
            .as_primitive_opt::<Int32Type>()
            .ok_or_else(|| Error::invalid("status must be int32"))?;
        let df = column(chunk, "data_file")?
            .as_struct_opt()
            .ok_or_else(|| Error::invalid("data_file must be a struct"))?;
        let counts = column(df, "record_count")?
            .as_primitive_opt::<Int64Type>()
            .ok_or_else(|| Error::invalid("record_count must be int64"))?;
        let seq = chunk
            .column_by_name("sequence_number")
            .and_then(|a| a.as_primitive_opt::<Int64Type>());
        for i in 0..chunk.len() {
            let rows = if counts.is_valid(i) {
                counts.value(i)
            } else {
                0
            };
            let st = if status.is_valid(i) {
                status.value(i)
            } else {
                -1
            };
            let (files, total) = match st {
                0 => (&mut s.existing_files_count, &mut s.existing_rows_count),
                1 => (&mut s.added_files_count, &mut s.added_rows_count),
                2 => (&mut s.deleted_files_count, &mut s.deleted_rows_count),
                other => return Err(Error::invalid(format!("row {i}: invalid status {other}"))),
            };
            *files += 1;
            *total = total.saturating_add(rows);
            if st != 2 {
                match seq.filter(|a| a.is_valid(i)) {
                    Some(a) => min_seq = Some(min_seq.map_or(a.value(i), |m| m.min(a.value(i)))),
                    None => seq_unknown = true,
                }
            }
        }
        if let Some(p) = df
            .column_by_name("partition")
            .and_then(|p| p.as_struct_opt())
        {
            partition_chunks.push(p.clone());
        }
    }
    s.min_sequence_number = if seq_unknown { None } else { min_seq };
    if let Some(first) = partition_chunks.first() {
        let fields = first.fields().clone();
        for (j, field) in fields.iter().enumerate() {
            let mut total = FieldSummary::default();
            let mut lo: Option<(Vec<u8>, usize)> = None;
            let mut hi: Option<(Vec<u8>, usize)> = None;
            // Summaries of several chunks merge by decoding their bounds again.
            let ty = primitive_type(field)?;
            for (k, chunk) in partition_chunks.iter().enumerate() {
                let col = chunk.column(j);
                let part = field_summary(col.as_ref(), field)?;
                total.contains_null |= part.contains_null;
                total.contains_nan |= part.contains_nan;
                if let Some(b) = part.lower_bound {
                    if lo
                        .as_ref()
                        .is_none_or(|(cur, _)| cmp_bound(&b, cur, &ty) == Ordering::Less)
                    {
                        lo = Some((b, k));
                    }
                }
                if let Some(b) = part.upper_bound {
                    if hi
                        .as_ref()
                        .is_none_or(|(cur, _)| cmp_bound(&b, cur, &ty) == Ordering::Greater)
                    {
                        hi = Some((b, k));
                    }
                }
            }
            total.lower_bound = lo.map(|(b, _)| b);
            total.upper_bound = hi.map(|(b, _)| b);
            s.partitions.push(total);
        }
    }
    Ok(s)
}

/// Bounds compare as decoded values (`frazil_values::bound`), except that floats use the
/// total order (-0.0 < 0.0), as each chunk's summary does; unreadable bounds compare as bytes.
fn cmp_bound(a: &[u8], b: &[u8], ty: &PrimitiveType) -> Ordering {
    let (Some(x), Some(y)) = (bound::decode_bound(a, ty), bound::decode_bound(b, ty)) else {
        return a.cmp(b);
    };
    match (x, y) {
        (Val::F32(x), Val::F32(y)) => x.total_cmp(&y),
        (Val::F64(x), Val::F64(y)) => x.total_cmp(&y),
        _ => bound::compare(&x, &y).unwrap_or_else(|| a.cmp(b)),
    }
}
