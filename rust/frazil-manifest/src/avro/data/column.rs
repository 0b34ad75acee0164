//! One Arrow column built from Avro values: the Iceberg Avro type mapping (spec Appendix A) from
//! a file's schema, the decoding of values into Arrow buffers, and the finished array.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
    Time32MillisecondType, Time64MicrosecondType, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType,
};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BooleanArray, FixedSizeBinaryArray, LargeBinaryArray,
    LargeListArray, LargeStringArray, MapArray, NullArray, PrimitiveArray, StructArray,
};
use arrow_buffer::{BooleanBufferBuilder, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields, TimeUnit};
use frazil_values::{Error, Result};

use crate::avro::decode::{Reader, Skip};
use crate::avro::schema::Schema;

/// The Arrow field metadata key of a field id, as in Parquet files read by pyarrow.
pub const FIELD_ID_KEY: &str = "PARQUET:field_id";

/// The widest decimal Arrow's decimal128 holds.
const MAX_DECIMAL_PRECISION: u32 = 38;

pub struct Column {
    name: String,
    field_id: Option<i32>,
    /// The union branch that is null, for an optional (`["null", T]`) value.
    null_branch: Option<i64>,
    valid: Option<BooleanBufferBuilder>,
    len: usize,
    values: Values,
}

enum Values {
    Null,
    Boolean(BooleanBufferBuilder),
    /// int, date, time-millis
    Int(Vec<i32>, DataType),
    /// long, time-micros, timestamp(-millis|-micros|-nanos)
    Long(Vec<i64>, DataType),
    Float(Vec<f32>),
    Double(Vec<f64>),
    Bytes {
        offsets: Vec<i64>,
        data: Vec<u8>,
        utf8: bool,
    },
    Fixed {
        size: usize,
        data: Vec<u8>,
    },
    Decimal {
        /// The fixed size, or `None` for bytes.
        fixed: Option<usize>,
        values: Vec<i128>,
        precision: u8,
        scale: i8,
    },
    Struct(Vec<Member>),
    List {
        offsets: Vec<i64>,
        item: Box<Column>,
    },
    /// An Avro map (string keys), or an array of key/value records (Iceberg's map with
    /// non-string keys, `"logicalType": "map"`).
    Map {
        offsets: Vec<i32>,
        key: Box<Column>,
        value: Box<Column>,
        avro_map: bool,
    },
}

/// A record's field: read into a column, or passed over.
pub enum Member {
    Read(Column),
    Skip(Skip),
}

fn unsupported(name: &str, what: impl std::fmt::Display) -> Error {
    Error::unsupported(format!("Avro field {name:?}: {what} is not supported"))
}

impl Column {
    /// The column of `schema` (a record field's, an array's items, a map's values).
    pub fn new(name: &str, field_id: Option<i32>, schema: &Schema) -> Result<Column> {
        let (null_branch, inner) = match schema {
            Schema::Union(b) if b.len() == 2 && b[0] == Schema::Null && b[1] != Schema::Null => {
                (Some(0), &b[1])
            }
            Schema::Union(b) if b.len() == 2 && b[1] == Schema::Null && b[0] != Schema::Null => {
                (Some(1), &b[0])
            }
            Schema::Union(b) if b.is_empty() => {
                return Err(Error::decode(format!(
                    "Avro field {name:?}: an empty union"
                )))
            }
            Schema::Union(_) => {
                return Err(unsupported(
                    name,
                    format!("{} (only [\"null\", T] unions are)", schema.kind()),
                ))
            }
            other => (None, other),
        };
        let values = Values::new(name, inner)?;
        Ok(Column {
            name: name.to_string(),
            field_id,
            valid: null_branch.map(|_| BooleanBufferBuilder::new(0)),
            null_branch,
            len: 0,
            values,
        })
    }

    /// A record's columns, `read` choosing the fields decoded (the others are skipped).
    pub fn members(
        record: &crate::avro::schema::Record,
        mut read: impl FnMut(usize) -> bool,
    ) -> Result<Vec<Member>> {
        record
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                Ok(if read(i) {
                    Member::Read(Column::new(&f.name, f.field_id, &f.schema)?)
                } else {
                    Member::Skip(Skip::of(&f.schema))
                })
            })
            .collect()
    }

    fn nullable(&self) -> bool {
        self.null_branch.is_some() || matches!(self.values, Values::Null)
    }

    pub fn field(&self) -> Field {
        let mut f = Field::new(&self.name, self.values.data_type(), self.nullable());
        if let Some(id) = self.field_id {
            f = f.with_metadata(HashMap::from([(FIELD_ID_KEY.to_string(), id.to_string())]));
        }
        f
    }

    /// Decodes one value.
    #[inline]
    pub fn decode(&mut self, r: &mut Reader<'_>) -> Result<()> {
        if let Some(null_branch) = self.null_branch {
            let branch = r.long()?;
            if branch == null_branch {
                self.push_empty();
                return Ok(());
            }
            if branch != 1 - null_branch {
                return Err(Error::decode(format!(
                    "field {:?}: union branch {branch} out of range",
                    self.name
                )));
            }
            if let Some(v) = &mut self.valid {
                v.append(true);
            }
        }
        self.len += 1;
        self.values.decode(r, &self.name)
    }

    /// A null (an optional value) or a placeholder (a required value under a null parent).
    pub fn push_empty(&mut self) {
        if let Some(v) = &mut self.valid {
            v.append(false);
        }
        self.len += 1;
        self.values.push_empty();
    }

    pub fn finish(self) -> Result<ArrayRef> {
        let nulls = self.valid.map(|mut v| NullBuffer::new(v.finish()));
        self.values.finish(self.len, nulls)
    }
}

impl Values {
    fn new(name: &str, schema: &Schema) -> Result<Values> {
        Ok(match schema {
            Schema::Null => Values::Null,
            Schema::Boolean => Values::Boolean(BooleanBufferBuilder::new(0)),
            Schema::Int { logical } => Values::Int(
                Vec::new(),
                match logical.as_deref() {
                    Some("date") => DataType::Date32,
                    Some("time-millis") => DataType::Time32(TimeUnit::Millisecond),
                    _ => DataType::Int32,
                },
            ),
            Schema::Long {
                logical,
                adjust_to_utc,
            } => {
                let tz = adjust_to_utc.then(|| Arc::from("UTC"));
                Values::Long(
                    Vec::new(),
                    match logical.as_deref() {
                        Some("time-micros") => DataType::Time64(TimeUnit::Microsecond),
                        Some("timestamp-millis") => DataType::Timestamp(TimeUnit::Millisecond, tz),
                        Some("timestamp-micros") => DataType::Timestamp(TimeUnit::Microsecond, tz),
                        Some("timestamp-nanos") => DataType::Timestamp(TimeUnit::Nanosecond, tz),
                        Some("local-timestamp-millis") => {
                            DataType::Timestamp(TimeUnit::Millisecond, None)
                        }
                        Some("local-timestamp-micros") => {
                            DataType::Timestamp(TimeUnit::Microsecond, None)
                        }
                        Some("local-timestamp-nanos") => {
                            DataType::Timestamp(TimeUnit::Nanosecond, None)
                        }
                        _ => DataType::Int64,
                    },
                )
            }
            Schema::Float => Values::Float(Vec::new()),
            Schema::Double => Values::Double(Vec::new()),
            Schema::String | Schema::Bytes { decimal: None } => Values::Bytes {
                offsets: vec![0],
                data: Vec::new(),
                utf8: matches!(schema, Schema::String),
            },
            Schema::Bytes {
                decimal: Some((p, s)),
            } => decimal(name, None, *p, *s)?,
            Schema::Fixed {
                size,
                decimal: Some((p, s)),
                ..
            } => decimal(name, Some(*size), *p, *s)?,
            Schema::Fixed { size, .. } => {
                if i32::try_from(*size).is_err() {
                    return Err(unsupported(name, format!("fixed[{size}]")));
                }
                Values::Fixed {
                    size: *size,
                    data: Vec::new(),
                }
            }
            Schema::Enum { .. } => return Err(unsupported(name, "an Avro enum")),
            Schema::Union(_) => return Err(unsupported(name, "a union inside a union")),
            Schema::Record(r) => Values::Struct(Column::members(r, |_| true)?),
            Schema::Array {
                items,
                element_id,
                logical_map,
            } => match (logical_map, items.as_ref()) {
                (true, Schema::Record(kv)) if kv.fields.len() == 2 => Values::Map {
                    offsets: vec![0],
                    key: Box::new(Column::new(
                        "key",
                        kv.fields[0].field_id,
                        &kv.fields[0].schema,
                    )?),
                    value: Box::new(Column::new(
                        "value",
                        kv.fields[1].field_id,
                        &kv.fields[1].schema,
                    )?),
                    avro_map: false,
                },
                (true, _) => {
                    return Err(Error::decode(format!(
                        "Avro field {name:?}: a logical map whose items are not key/value records"
                    )))
                }
                (false, items) => Values::List {
                    offsets: vec![0],
                    item: Box::new(Column::new("element", *element_id, items)?),
                },
            },
            Schema::Map {
                values,
                key_id,
                value_id,
            } => Values::Map {
                offsets: vec![0],
                key: Box::new(Column::new("key", *key_id, &Schema::String)?),
                value: Box::new(Column::new("value", *value_id, values)?),
                avro_map: true,
            },
        })
    }

    fn data_type(&self) -> DataType {
        match self {
            Values::Null => DataType::Null,
            Values::Boolean(_) => DataType::Boolean,
            Values::Int(_, t) | Values::Long(_, t) => t.clone(),
            Values::Float(_) => DataType::Float32,
            Values::Double(_) => DataType::Float64,
            Values::Bytes { utf8: true, .. } => DataType::LargeUtf8,
            Values::Bytes { utf8: false, .. } => DataType::LargeBinary,
            Values::Fixed { size, .. } => DataType::FixedSizeBinary(*size as i32),
            Values::Decimal {
                precision, scale, ..
            } => DataType::Decimal128(*precision, *scale),
            Values::Struct(members) => DataType::Struct(struct_fields(members)),
            Values::List { item, .. } => DataType::LargeList(Arc::new(item.field())),
            Values::Map { key, value, .. } => DataType::Map(entries_field(key, value), false),
        }
    }

    #[inline]
    fn decode(&mut self, r: &mut Reader<'_>, name: &str) -> Result<()> {
        match self {
            Values::Null => {}
            Values::Boolean(b) => b.append(r.boolean()?),
            Values::Int(v, _) => v.push(r.int()?),
            Values::Long(v, _) => v.push(r.long()?),
            Values::Float(v) => v.push(r.float()?),
            Values::Double(v) => v.push(r.double()?),
            Values::Bytes { offsets, data, .. } => {
                data.extend_from_slice(r.bytes()?);
                offsets.push(data.len() as i64);
            }
            Values::Fixed { size, data } => data.extend_from_slice(r.take(*size, "a fixed")?),
            Values::Decimal { fixed, values, .. } => {
                let b = match fixed {
                    Some(n) => r.take(*n, "a fixed")?,
                    None => r.bytes()?,
                };
                values.push(unscaled(b, name)?);
            }
            Values::Struct(members) => {
                for m in members {
                    match m {
                        Member::Read(c) => c.decode(r)?,
                        Member::Skip(s) => s.run(r)?,
                    }
                }
            }
            Values::List { offsets, item } => {
                let mut n = *offsets.last().unwrap_or(&0);
                loop {
                    let count = r.block_count()?;
                    if count == 0 {
                        break;
                    }
                    for _ in 0..count {
                        item.decode(r)?;
                    }
                    n += count as i64;
                }
                offsets.push(n);
            }
            Values::Map {
                offsets,
                key,
                value,
                ..
            } => {
                let mut n = i64::from(*offsets.last().unwrap_or(&0));
                loop {
                    let count = r.block_count()?;
                    if count == 0 {
                        break;
                    }
                    for _ in 0..count {
                        key.decode(r)?;
                        value.decode(r)?;
                    }
                    n += count as i64;
                }
                let n = i32::try_from(n).map_err(|_| {
                    Error::unsupported(format!(
                        "field {name:?}: more than {} map entries in one batch",
                        i32::MAX
                    ))
                })?;
                offsets.push(n);
            }
        }
        Ok(())
    }

    fn push_empty(&mut self) {
        match self {
            Values::Null => {}
            Values::Boolean(b) => b.append(false),
            Values::Int(v, _) => v.push(0),
            Values::Long(v, _) => v.push(0),
            Values::Float(v) => v.push(0.0),
            Values::Double(v) => v.push(0.0),
            Values::Bytes { offsets, data, .. } => offsets.push(data.len() as i64),
            Values::Fixed { size, data } => data.resize(data.len() + *size, 0),
            Values::Decimal { values, .. } => values.push(0),
            Values::Struct(members) => {
                for m in members {
                    if let Member::Read(c) = m {
                        c.push_empty();
                    }
                }
            }
            Values::List { offsets, .. } => offsets.push(*offsets.last().unwrap_or(&0)),
            Values::Map { offsets, .. } => offsets.push(*offsets.last().unwrap_or(&0)),
        }
    }

    fn finish(self, len: usize, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let arrow = |e: arrow_schema::ArrowError| Error::decode(format!("invalid values: {e}"));
        let data_type = self.data_type();
        Ok(match self {
            Values::Null => Arc::new(NullArray::new(len)),
            Values::Boolean(mut b) => Arc::new(BooleanArray::new(b.finish(), nulls)),
            Values::Int(v, t) => match t {
                DataType::Date32 => primitive::<Date32Type>(v, nulls),
                DataType::Time32(_) => primitive::<Time32MillisecondType>(v, nulls),
                _ => primitive::<Int32Type>(v, nulls),
            },
            Values::Long(v, t) => match &t {
                DataType::Time64(_) => primitive::<Time64MicrosecondType>(v, nulls),
                DataType::Timestamp(unit, tz) => match unit {
                    TimeUnit::Millisecond => Arc::new(
                        PrimitiveArray::<TimestampMillisecondType>::new(v.into(), nulls)
                            .with_timezone_opt(tz.clone()),
                    ),
                    TimeUnit::Nanosecond => Arc::new(
                        PrimitiveArray::<TimestampNanosecondType>::new(v.into(), nulls)
                            .with_timezone_opt(tz.clone()),
                    ),
                    _ => Arc::new(
                        PrimitiveArray::<TimestampMicrosecondType>::new(v.into(), nulls)
                            .with_timezone_opt(tz.clone()),
                    ),
                },
                _ => primitive::<Int64Type>(v, nulls),
            },
            Values::Float(v) => primitive::<Float32Type>(v, nulls),
            Values::Double(v) => primitive::<Float64Type>(v, nulls),
            Values::Bytes {
                offsets,
                data,
                utf8,
            } => {
                let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
                if utf8 {
                    Arc::new(
                        LargeStringArray::try_new(offsets, Buffer::from_vec(data), nulls)
                            .map_err(arrow)?,
                    )
                } else {
                    Arc::new(LargeBinaryArray::new(
                        offsets,
                        Buffer::from_vec(data),
                        nulls,
                    ))
                }
            }
            Values::Fixed { size, data } => Arc::new(
                FixedSizeBinaryArray::try_new(size as i32, Buffer::from_vec(data), nulls)
                    .map_err(arrow)?,
            ),
            Values::Decimal {
                values,
                precision,
                scale,
                ..
            } => Arc::new(
                PrimitiveArray::<Decimal128Type>::new(values.into(), nulls)
                    .with_precision_and_scale(precision, scale)
                    .map_err(arrow)?,
            ),
            Values::Struct(members) => {
                let DataType::Struct(fields) = data_type else {
                    unreachable!("a struct's type")
                };
                let arrays = finish_members(members)?;
                if fields.is_empty() {
                    Arc::new(StructArray::new_empty_fields(len, nulls))
                } else {
                    Arc::new(StructArray::try_new(fields, arrays, nulls).map_err(arrow)?)
                }
            }
            Values::List { offsets, item } => {
                let field = Arc::new(item.field());
                let values = item.finish()?;
                Arc::new(
                    LargeListArray::try_new(
                        field,
                        OffsetBuffer::new(ScalarBuffer::from(offsets)),
                        values,
                        nulls,
                    )
                    .map_err(arrow)?,
                )
            }
            Values::Map {
                offsets,
                key,
                value,
                avro_map,
            } => {
                let entries = entries_field(&key, &value);
                let DataType::Struct(fields) = entries.data_type().clone() else {
                    unreachable!("map entries are a struct")
                };
                let keys = key.finish()?;
                if !avro_map && keys.null_count() > 0 {
                    return Err(Error::decode("a map key is null"));
                }
                let values = value.finish()?;
                let entries_array =
                    StructArray::try_new(fields, vec![keys, values], None).map_err(arrow)?;
                Arc::new(
                    MapArray::try_new(
                        entries,
                        OffsetBuffer::new(ScalarBuffer::from(offsets)),
                        entries_array,
                        nulls,
                        false,
                    )
                    .map_err(arrow)?,
                )
            }
        })
    }
}

fn primitive<T: ArrowPrimitiveType>(v: Vec<T::Native>, nulls: Option<NullBuffer>) -> ArrayRef {
    Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(v), nulls))
}

pub fn finish_members(members: Vec<Member>) -> Result<Vec<ArrayRef>> {
    members
        .into_iter()
        .filter_map(|m| match m {
            Member::Read(c) => Some(c.finish()),
            Member::Skip(_) => None,
        })
        .collect()
}

pub fn struct_fields(members: &[Member]) -> Fields {
    members
        .iter()
        .filter_map(|m| match m {
            Member::Read(c) => Some(c.field()),
            Member::Skip(_) => None,
        })
        .collect()
}

fn entries_field(key: &Column, value: &Column) -> Arc<Field> {
    // Arrow map keys are never null; a non-string key is an Iceberg required key too.
    let key = key.field().with_nullable(false);
    Arc::new(Field::new(
        "entries",
        DataType::Struct(Fields::from(vec![key, value.field()])),
        false,
    ))
}

fn decimal(name: &str, fixed: Option<usize>, precision: u32, scale: i32) -> Result<Values> {
    if precision == 0 || precision > MAX_DECIMAL_PRECISION || fixed.is_some_and(|n| n > 16) {
        return Err(unsupported(
            name,
            format!("decimal({precision}, {scale}) (at most 38 digits in 16 bytes)"),
        ));
    }
    let scale = i8::try_from(scale)
        .ok()
        .filter(|s| i32::from(*s).unsigned_abs() <= precision)
        .ok_or_else(|| unsupported(name, format!("decimal({precision}, {scale})")))?;
    Ok(Values::Decimal {
        fixed,
        values: Vec::new(),
        precision: precision as u8,
        scale,
    })
}

/// A big-endian two's-complement unscaled value of at most 16 bytes.
#[inline]
fn unscaled(b: &[u8], name: &str) -> Result<i128> {
    if b.len() > 16 {
        return Err(Error::decode(format!(
            "field {name:?}: a decimal of {} bytes (at most 16)",
            b.len()
        )));
    }
    if b.is_empty() {
        return Ok(0);
    }
    let fill = if b[0] & 0x80 != 0 { 0xff } else { 0 };
    let mut full = [fill; 16];
    full[16 - b.len()..].copy_from_slice(b);
    Ok(i128::from_be_bytes(full))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unscaled_values_are_sign_extended() {
        assert_eq!(unscaled(&[0x01, 0x00], "d").ok(), Some(256));
        assert_eq!(unscaled(&[0xff], "d").ok(), Some(-1));
        assert_eq!(unscaled(&[0xfe, 0x0c], "d").ok(), Some(-500));
        assert_eq!(unscaled(&[], "d").ok(), Some(0));
        assert!(unscaled(&[0; 17], "d").is_err());
    }
}
