//! What the metadata tables (Python twin: `frazil/table/inspect/__init__.py`) compute per data file:
//! the `readable_metrics` column of `files` and `entries`, one struct per table column with its
//! `column_size`, `value_count`, `null_value_count`, `nan_value_count` and its `lower_bound` /
//! `upper_bound` decoded from the binary single-value form (spec Appendix D, through
//! `frazil_values::bound::decode`, so the type promotions live in one place) into the column's
//! Arrow type. One pass over the `data_file` maps, no per-value Python objects.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Decimal128Builder, FixedSizeBinaryBuilder, Float32Builder,
    Float64Builder, Int32Builder, Int64Builder, StringBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, MapArray, NullArray, StructArray};
use arrow_schema::{DataType, Field, Fields, TimeUnit};
use frazil_values::bound::{decode, Val};
use frazil_values::{Error, PrimitiveType, Result};

/// One table column of `readable_metrics`: its (dotted) name, field id and type.
#[derive(Debug, Clone)]
pub struct MetricsColumn {
    pub name: String,
    pub id: i32,
    pub ty: PrimitiveType,
}

const COUNTS: [&str; 4] = [
    "column_sizes",
    "value_counts",
    "null_value_counts",
    "nan_value_counts",
];
const COUNT_NAMES: [&str; 4] = [
    "column_size",
    "value_count",
    "null_value_count",
    "nan_value_count",
];

/// The Arrow type a column's bounds decode to: frazil's Iceberg-to-Arrow mapping, with
/// `Utf8`/`Binary` offsets (the caller casts to the large types it uses), a uuid as its 16
/// bytes, and `Null` for types without a binary single-value form.
pub fn bound_type(ty: &PrimitiveType) -> Result<DataType> {
    use PrimitiveType as P;
    let utc = || Some(Arc::from("UTC"));
    Ok(match ty {
        P::Boolean => DataType::Boolean,
        P::Int => DataType::Int32,
        P::Long => DataType::Int64,
        P::Float => DataType::Float32,
        P::Double => DataType::Float64,
        P::Decimal { precision, scale } => {
            let p = u8::try_from(*precision).ok().filter(|p| *p <= 38);
            let s = i8::try_from(*scale).ok();
            match (p, s) {
                (Some(p), Some(s)) => DataType::Decimal128(p, s),
                _ => {
                    return Err(Error::unsupported(format!(
                        "{ty} has no Arrow decimal128 type"
                    )))
                }
            }
        }
        P::Date => DataType::Date32,
        P::Time => DataType::Time64(TimeUnit::Microsecond),
        P::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
        P::TimestampTz => DataType::Timestamp(TimeUnit::Microsecond, utc()),
        P::TimestampNs => DataType::Timestamp(TimeUnit::Nanosecond, None),
        P::TimestampTzNs => DataType::Timestamp(TimeUnit::Nanosecond, utc()),
        P::String => DataType::Utf8,
        P::Binary => DataType::Binary,
        P::Uuid => DataType::FixedSizeBinary(16),
        P::Fixed(n) => DataType::FixedSizeBinary(
            i32::try_from(*n).map_err(|_| Error::unsupported(format!("{ty} is too wide")))?,
        ),
        P::Unknown | P::Variant | P::Geometry { .. } | P::Geography { .. } => DataType::Null,
    })
}

enum Bounds {
    Null(usize),
    Bool(BooleanBuilder),
    I32(Int32Builder),
    I64(Int64Builder),
    F32(Float32Builder),
    F64(Float64Builder),
    I128(Decimal128Builder),
    Fixed(FixedSizeBinaryBuilder, usize),
    Str(StringBuilder),
    Bin(BinaryBuilder),
}

impl Bounds {
    fn new(dt: &DataType, n: usize) -> Bounds {
        match dt {
            DataType::Boolean => Bounds::Bool(BooleanBuilder::with_capacity(n)),
            DataType::Int32 | DataType::Date32 => Bounds::I32(Int32Builder::with_capacity(n)),
            DataType::Int64 | DataType::Time64(_) | DataType::Timestamp(_, _) => {
                Bounds::I64(Int64Builder::with_capacity(n))
            }
            DataType::Float32 => Bounds::F32(Float32Builder::with_capacity(n)),
            DataType::Float64 => Bounds::F64(Float64Builder::with_capacity(n)),
            DataType::Decimal128(_, _) => Bounds::I128(Decimal128Builder::with_capacity(n)),
            DataType::FixedSizeBinary(w) => {
                Bounds::Fixed(FixedSizeBinaryBuilder::with_capacity(n, *w), *w as usize)
            }
            DataType::Utf8 => Bounds::Str(StringBuilder::with_capacity(n, 0)),
            DataType::Binary => Bounds::Bin(BinaryBuilder::with_capacity(n, 0)),
            _ => Bounds::Null(0),
        }
    }

    fn append(&mut self, bytes: Option<&[u8]>, ty: &PrimitiveType) -> Result<()> {
        let Some(bytes) = bytes else {
            self.append_null();
            return Ok(());
        };
        if let Bounds::Null(k) = self {
            *k += 1;
            return Ok(());
        }
        match (self, decode(bytes, ty)?) {
            (Bounds::Bool(b), Val::Bool(v)) => b.append_value(v),
            (Bounds::I32(b), Val::I32(v)) => b.append_value(v),
            (Bounds::I64(b), Val::I64(v)) => b.append_value(v),
            (Bounds::F32(b), Val::F32(v)) => b.append_value(v),
            (Bounds::F64(b), Val::F64(v)) => b.append_value(v),
            (Bounds::I128(b), Val::I128(v)) => b.append_value(v),
            (Bounds::Fixed(b, _), Val::U128(v)) => b
                .append_value(v.to_be_bytes())
                .map_err(|e| Error::decode(e.to_string()))?,
            // A fixed bound of another length (a truncating writer): no value of the column's
            // type can show it.
            (Bounds::Fixed(b, w), Val::Bytes(v)) => {
                if v.len() == *w {
                    b.append_value(v)
                        .map_err(|e| Error::decode(e.to_string()))?
                } else {
                    b.append_null()
                }
            }
            (Bounds::Str(b), Val::Bytes(v)) => b.append_value(
                std::str::from_utf8(v)
                    .map_err(|e| Error::decode(format!("a string bound is not UTF-8: {e}")))?,
            ),
            (Bounds::Bin(b), Val::Bytes(v)) => b.append_value(v),
            _ => return Err(Error::decode(format!("not a {ty} value"))),
        }
        Ok(())
    }

    fn append_null(&mut self) {
        match self {
            Bounds::Null(k) => *k += 1,
            Bounds::Bool(b) => b.append_null(),
            Bounds::I32(b) => b.append_null(),
            Bounds::I64(b) => b.append_null(),
            Bounds::F32(b) => b.append_null(),
            Bounds::F64(b) => b.append_null(),
            Bounds::I128(b) => b.append_null(),
            Bounds::Fixed(b, _) => b.append_null(),
            Bounds::Str(b) => b.append_null(),
            Bounds::Bin(b) => b.append_null(),
        }
    }

    fn finish(self, dt: &DataType) -> Result<ArrayRef> {
        let cast = |a: ArrayRef| -> Result<ArrayRef> {
            let data = a
                .to_data()
                .into_builder()
                .data_type(dt.clone())
                .build()
                .map_err(|e| Error::invalid(e.to_string()))?;
            Ok(arrow_array::make_array(data))
        };
        Ok(match self {
            Bounds::Null(k) => Arc::new(NullArray::new(k)),
            Bounds::Bool(mut b) => Arc::new(b.finish()),
            Bounds::I32(mut b) => cast(Arc::new(b.finish()))?,
            Bounds::I64(mut b) => cast(Arc::new(b.finish()))?,
            Bounds::F32(mut b) => Arc::new(b.finish()),
            Bounds::F64(mut b) => Arc::new(b.finish()),
            Bounds::I128(mut b) => cast(Arc::new(b.finish()))?,
            Bounds::Fixed(mut b, _) => Arc::new(b.finish()),
            Bounds::Str(mut b) => Arc::new(b.finish()),
            Bounds::Bin(mut b) => Arc::new(b.finish()),
        })
    }
}

fn map_column<'a>(data_file: &'a StructArray, name: &str) -> Result<Option<&'a MapArray>> {
    match data_file.column_by_name(name) {
        None => Ok(None),
        Some(c) if *c.data_type() == DataType::Null => Ok(None),
        Some(c) => c
            .as_map_opt()
            .map(Some)
            .ok_or_else(|| Error::invalid(format!("data_file.{name} is not a map column"))),
    }
}

/// The `readable_metrics` struct column for the rows of a `data_file` struct array (as the
/// manifest decoder produces it): one non-null struct per column of `columns`, named by its
/// `name`, with the counts as `Int64` and the bounds as [`bound_type`]. A bound that cannot be
/// decoded as its column's type is an error naming the column.
pub fn readable_metrics(data_file: &dyn Array, columns: &[MetricsColumn]) -> Result<StructArray> {
    let data_file = data_file
        .as_struct_opt()
        .ok_or_else(|| Error::invalid("expected a data_file struct array"))?;
    let n = data_file.len();
    let slot: HashMap<i32, usize> = columns.iter().enumerate().map(|(k, c)| (c.id, k)).collect();
    let types = columns
        .iter()
        .map(|c| bound_type(&c.ty))
        .collect::<Result<Vec<_>>>()?;

    // Counts: one Int64 column per (metric, column), filled row by row.
    let mut counts: Vec<Vec<Int64Builder>> = (0..COUNTS.len())
        .map(|_| {
            (0..columns.len())
                .map(|_| Int64Builder::with_capacity(n))
                .collect()
        })
        .collect();
    let mut row: Vec<Option<i64>> = vec![None; columns.len()];
    for (m, name) in COUNTS.iter().enumerate() {
        let map = map_column(data_file, name)?;
        let parts = match map {
            Some(map) => {
                let keys = map.keys().as_primitive_opt::<Int32Type>();
                let values = map.values().as_primitive_opt::<Int64Type>();
                match (keys, values) {
                    (Some(k), Some(v)) => Some((map, k, v)),
                    _ => {
                        return Err(Error::invalid(format!(
                            "data_file.{name} is not map<int, long>"
                        )))
                    }
                }
            }
            None => None,
        };
        for i in 0..n {
            row.iter_mut().for_each(|v| *v = None);
            if let Some((map, keys, values)) = parts {
                if map.is_valid(i) {
                    let offsets = map.value_offsets();
                    for j in offsets[i] as usize..offsets[i + 1] as usize {
                        if let Some(&k) = slot.get(&keys.value(j)) {
                            row[k] = values.is_valid(j).then(|| values.value(j));
                        }
                    }
                }
            }
            for (b, v) in counts[m].iter_mut().zip(&row) {
                b.append_option(*v);
            }
        }
    }

    // Bounds: the bytes of each column's bound, decoded as they are appended.
    let mut bounds: Vec<Vec<Bounds>> = (0..2)
        .map(|_| types.iter().map(|dt| Bounds::new(dt, n)).collect())
        .collect();
    let mut row: Vec<Option<&[u8]>> = vec![None; columns.len()];
    for (m, name) in ["lower_bounds", "upper_bounds"].iter().enumerate() {
        let map = map_column(data_file, name)?;
        let keys = map.map(|m| m.keys().as_primitive_opt::<Int32Type>());
        let keys = match keys {
            Some(None) => return Err(Error::invalid(format!("data_file.{name} has non-int keys"))),
            Some(Some(k)) => Some(k),
            None => None,
        };
        let values = map.map(|m| m.values());
        let bytes_at = |j: usize| -> Result<Option<&[u8]>> {
            let v = values.expect("values exist with keys");
            if v.is_null(j) {
                return Ok(None);
            }
            if let Some(b) = v.as_binary_opt::<i32>() {
                Ok(Some(b.value(j)))
            } else if let Some(b) = v.as_binary_opt::<i64>() {
                Ok(Some(b.value(j)))
            } else {
                Err(Error::invalid(format!(
                    "data_file.{name} has non-binary values"
                )))
            }
        };
        for i in 0..n {
            row.iter_mut().for_each(|v| *v = None);
            if let (Some(map), Some(keys)) = (map, keys) {
                if map.is_valid(i) {
                    let offsets = map.value_offsets();
                    for j in offsets[i] as usize..offsets[i + 1] as usize {
                        if let Some(&k) = slot.get(&keys.value(j)) {
                            row[k] = bytes_at(j)?;
                        }
                    }
                }
            }
            for (k, (b, v)) in bounds[m].iter_mut().zip(&row).enumerate() {
                let c = &columns[k];
                b.append(*v, &c.ty).map_err(|e| {
                    let which = if m == 0 { "lower" } else { "upper" };
                    Error::decode(format!(
                        "the {which} bound of column {} (id {}) of data file {i}: {e}",
                        c.name, c.id
                    ))
                })?;
            }
        }
    }

    let mut fields = Vec::with_capacity(columns.len());
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(columns.len());
    let mut uppers = bounds.pop().expect("two bound lists");
    let mut lowers = bounds.pop().expect("two bound lists");
    for k in (0..columns.len()).rev() {
        let dt = &types[k];
        let mut child_fields: Vec<Field> = COUNT_NAMES
            .iter()
            .map(|name| Field::new(*name, DataType::Int64, true))
            .collect();
        child_fields.push(Field::new("lower_bound", dt.clone(), true));
        child_fields.push(Field::new("upper_bound", dt.clone(), true));
        let mut children: Vec<ArrayRef> = counts
            .iter_mut()
            .map(|per_column| Arc::new(per_column[k].finish()) as ArrayRef)
            .collect();
        children.push(lowers.pop().expect("one per column").finish(dt)?);
        children.push(uppers.pop().expect("one per column").finish(dt)?);
        let child_fields = Fields::from(child_fields);
        let s = StructArray::try_new(child_fields.clone(), children, None)
            .map_err(|e| Error::invalid(e.to_string()))?;
        fields.push(Field::new(
            columns[k].name.clone(),
            DataType::Struct(child_fields),
            false,
        ));
        arrays.push(Arc::new(s));
    }
    fields.reverse();
    arrays.reverse();
    if columns.is_empty() {
        return Ok(StructArray::new_empty_fields(n, None));
    }
    StructArray::try_new(Fields::from(fields), arrays, None)
        .map_err(|e| Error::invalid(e.to_string()))
}
