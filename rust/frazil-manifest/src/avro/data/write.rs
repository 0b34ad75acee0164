//! Avro data files written from Arrow record batches: the Avro schema made from the Arrow
//! schema (spec Appendix A: Iceberg's types as Avro types with `field-id`, `element-id`,
//! `key-id`, `value-id`; optional fields as `["null", T]` with a null default; maps with
//! non-string keys as arrays of key/value records), then each row in the binary encoding.
//! The Arrow schema is the table schema's (`PARQUET:field_id` on every field).

use std::collections::HashSet;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
    Time64MicrosecondType, TimestampMicrosecondType, TimestampNanosecondType,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, Field, TimeUnit};
use frazil_values::{Error, Result};
use serde_json::{json, Value};

use super::column::FIELD_ID_KEY;
use crate::avro::codec::Codec;
use crate::avro::encode::{bytes, long, ContainerWriter};

fn field_id(f: &Field) -> Result<i32> {
    f.metadata()
        .get(FIELD_ID_KEY)
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| Error::invalid(format!("field {:?} has no field id", f.name())))
}

fn is_uuid(f: &Field) -> bool {
    f.metadata()
        .get("ARROW:extension:name")
        .is_some_and(|n| n == "arrow.uuid")
}

/// Bytes of the smallest two's-complement integer holding `precision` decimal digits.
fn decimal_bytes(precision: u8) -> usize {
    (1..=16)
        .find(|&n| {
            let max = 10f64.powi(i32::from(precision)) - 1.0;
            max < 2f64.powi(8 * n as i32 - 1)
        })
        .unwrap_or(16)
}

/// Avro schema JSON of Arrow fields; named types (records, fixed) are defined once and
/// referenced by name afterwards, as Avro requires.
struct SchemaWriter {
    named: HashSet<String>,
}

impl SchemaWriter {
    fn named(&mut self, name: String, define: impl FnOnce(String) -> Value) -> Value {
        if self.named.insert(name.clone()) {
            define(name)
        } else {
            Value::String(name)
        }
    }

    fn field(&mut self, f: &Field) -> Result<Value> {
        let t = self.value_type(f)?;
        let mut out = json!({"name": f.name(), "field-id": field_id(f)?});
        if f.is_nullable() {
            out["type"] = json!(["null", t]);
            out["default"] = Value::Null;
        } else {
            out["type"] = t;
        }
        Ok(out)
    }

    fn optional(&mut self, f: &Field) -> Result<Value> {
        let t = self.value_type(f)?;
        Ok(if f.is_nullable() {
            json!(["null", t])
        } else {
            t
        })
    }

    fn value_type(&mut self, f: &Field) -> Result<Value> {
        Ok(match f.data_type() {
            DataType::Boolean => json!("boolean"),
            DataType::Int32 => json!("int"),
            DataType::Int64 => json!("long"),
            DataType::Float32 => json!("float"),
            DataType::Float64 => json!("double"),
            DataType::Date32 => json!({"type": "int", "logicalType": "date"}),
            DataType::Time64(TimeUnit::Microsecond) => {
                json!({"type": "long", "logicalType": "time-micros"})
            }
            DataType::Timestamp(unit @ (TimeUnit::Microsecond | TimeUnit::Nanosecond), tz) => {
                let logical = if *unit == TimeUnit::Microsecond {
                    "timestamp-micros"
                } else {
                    "timestamp-nanos"
                };
                json!({"type": "long", "logicalType": logical, "adjust-to-utc": tz.is_some()})
            }
            DataType::Utf8 | DataType::LargeUtf8 => json!("string"),
            DataType::Binary | DataType::LargeBinary => json!("bytes"),
            DataType::FixedSizeBinary(16) if is_uuid(f) => self.named(
                "uuid_fixed".into(),
                |n| json!({"type": "fixed", "name": n, "size": 16, "logicalType": "uuid"}),
            ),
            DataType::FixedSizeBinary(n) => self.named(
                format!("fixed_{n}"),
                |name| json!({"type": "fixed", "name": name, "size": n}),
            ),
            DataType::Decimal128(p, s) => self.named(format!("decimal_{p}_{s}"), |name| {
                json!({"type": "fixed", "name": name, "size": decimal_bytes(*p),
                       "logicalType": "decimal", "precision": p, "scale": s})
            }),
            DataType::Struct(fields) => {
                let fields = fields
                    .iter()
                    .map(|c| self.field(c))
                    .collect::<Result<Vec<_>>>()?;
                let name = format!("r{}", field_id(f)?);
                self.named(
                    name,
                    |name| json!({"type": "record", "name": name, "fields": fields}),
                )
            }
            DataType::List(item) | DataType::LargeList(item) => {
                json!({"type": "array", "items": self.optional(item)?,
                       "element-id": field_id(item)?})
            }
            DataType::Map(entries, _) => {
                let DataType::Struct(kv) = entries.data_type() else {
                    return Err(Error::invalid("map entries are not a struct"));
                };
                let (key, value) = (&kv[0], &kv[1]);
                let (kid, vid) = (field_id(key)?, field_id(value)?);
                if matches!(key.data_type(), DataType::Utf8 | DataType::LargeUtf8) {
                    json!({"type": "map", "values": self.optional(value)?,
                           "key-id": kid, "value-id": vid})
                } else {
                    let k = self.value_type(key)?;
                    let v = self.optional(value)?;
                    let name = format!("k{kid}_v{vid}");
                    let record = self.named(name, |name| {
                        json!({"type": "record", "name": name, "fields": [
                            {"name": "key", "type": k, "field-id": kid},
                            {"name": "value", "type": v, "field-id": vid}]})
                    });
                    json!({"type": "array", "logicalType": "map", "items": record})
                }
            }
            other => {
                return Err(Error::unsupported(format!(
                    "field {:?}: Arrow type {other} has no Iceberg Avro type",
                    f.name()
                )))
            }
        })
    }
}

/// The Avro schema (JSON text) of a table's Arrow schema.
pub fn avro_schema(fields: &[&Field]) -> Result<String> {
    let mut w = SchemaWriter {
        named: HashSet::new(),
    };
    let fields = fields
        .iter()
        .map(|f| w.field(f))
        .collect::<Result<Vec<_>>>()?;
    Ok(json!({"type": "record", "name": "table", "fields": fields}).to_string())
}

/// Encodes value `i` of `array` (whose field is `f`), with its union branch if `f` is nullable.
fn encode(out: &mut Vec<u8>, f: &Field, array: &dyn Array, i: usize) -> Result<()> {
    if f.is_nullable() {
        if array.is_null(i) {
            long(out, 0);
            return Ok(());
        }
        long(out, 1);
    } else if array.is_null(i) {
        return Err(Error::invalid(format!(
            "required field {:?} holds a null",
            f.name()
        )));
    }
    match array.data_type() {
        DataType::Boolean => out.push(u8::from(array.as_boolean().value(i))),
        DataType::Int32 => long(out, i64::from(array.as_primitive::<Int32Type>().value(i))),
        DataType::Date32 => long(out, i64::from(array.as_primitive::<Date32Type>().value(i))),
        DataType::Int64 => long(out, array.as_primitive::<Int64Type>().value(i)),
        DataType::Time64(_) => long(out, array.as_primitive::<Time64MicrosecondType>().value(i)),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => long(
            out,
            array.as_primitive::<TimestampNanosecondType>().value(i),
        ),
        DataType::Timestamp(_, _) => long(
            out,
            array.as_primitive::<TimestampMicrosecondType>().value(i),
        ),
        DataType::Float32 => {
            out.extend_from_slice(&array.as_primitive::<Float32Type>().value(i).to_le_bytes())
        }
        DataType::Float64 => {
            out.extend_from_slice(&array.as_primitive::<Float64Type>().value(i).to_le_bytes())
        }
        DataType::Utf8 => bytes(out, array.as_string::<i32>().value(i).as_bytes()),
        DataType::LargeUtf8 => bytes(out, array.as_string::<i64>().value(i).as_bytes()),
        DataType::Binary => bytes(out, array.as_binary::<i32>().value(i)),
        DataType::LargeBinary => bytes(out, array.as_binary::<i64>().value(i)),
        DataType::FixedSizeBinary(_) => {
            out.extend_from_slice(array.as_fixed_size_binary().value(i))
        }
        DataType::Decimal128(p, _) => {
            let n = decimal_bytes(*p);
            let v = array.as_primitive::<Decimal128Type>().value(i);
            out.extend_from_slice(&v.to_be_bytes()[16 - n..]);
        }
        DataType::Struct(fields) => {
            let s = array.as_struct();
            for (c, child) in fields.iter().zip(s.columns()) {
                encode(out, c, child.as_ref(), i)?;
            }
        }
        DataType::List(item) => {
            let l = array.as_list::<i32>();
            let (start, end) = (
                l.value_offsets()[i] as usize,
                l.value_offsets()[i + 1] as usize,
            );
            items(out, item, l.values().as_ref(), start..end)?;
        }
        DataType::LargeList(item) => {
            let l = array.as_list::<i64>();
            let (start, end) = (
                l.value_offsets()[i] as usize,
                l.value_offsets()[i + 1] as usize,
            );
            items(out, item, l.values().as_ref(), start..end)?;
        }
        DataType::Map(entries, _) => {
            let m = array.as_map();
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(Error::invalid("map entries are not a struct"));
            };
            let (start, end) = (
                m.value_offsets()[i] as usize,
                m.value_offsets()[i + 1] as usize,
            );
            if end > start {
                long(out, (end - start) as i64);
                // A map key is never null: no union (an Avro map's key is a bare string).
                let key = kv[0].as_ref().clone().with_nullable(false);
                for j in start..end {
                    encode(out, &key, m.keys().as_ref(), j)?;
                    encode(out, &kv[1], m.values().as_ref(), j)?;
                }
            }
            long(out, 0);
        }
        other => {
            return Err(Error::unsupported(format!(
                "field {:?}: Arrow type {other} has no Iceberg Avro type",
                f.name()
            )))
        }
    }
    Ok(())
}

fn items(
    out: &mut Vec<u8>,
    item: &Field,
    values: &dyn Array,
    range: std::ops::Range<usize>,
) -> Result<()> {
    if !range.is_empty() {
        long(out, range.len() as i64);
        for j in range {
            encode(out, item, values, j)?;
        }
    }
    long(out, 0);
    Ok(())
}

/// An Avro data file being written: batches in, the container's bytes out as blocks fill.
pub struct DataWriter {
    fields: Vec<Field>,
    container: ContainerWriter,
    rows: u64,
}

impl DataWriter {
    /// `codec`: `avro.codec` of the file (`write.avro.compression-codec`).
    pub fn new(fields: Vec<Field>, codec: Codec) -> Result<DataWriter> {
        let schema = avro_schema(&fields.iter().collect::<Vec<_>>())?;
        Ok(DataWriter {
            container: ContainerWriter::new(&schema, codec, &[]),
            fields,
            rows: 0,
        })
    }

    /// Encodes the rows of `batch` (columns in the order of the writer's fields).
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_columns() != self.fields.len() {
            return Err(Error::invalid(format!(
                "a batch of {} columns for a file of {}",
                batch.num_columns(),
                self.fields.len()
            )));
        }
        for i in 0..batch.num_rows() {
            let out = self.container.record_buffer();
            for (f, c) in self.fields.iter().zip(batch.columns()) {
                encode(out, f, c.as_ref(), i)?;
            }
            self.container.end_record()?;
        }
        self.rows += batch.num_rows() as u64;
        Ok(())
    }

    /// The bytes of the blocks completed since the last call (the header first).
    pub fn take_written(&mut self) -> Vec<u8> {
        self.container.take_written()
    }

    /// The rest of the file.
    pub fn finish(self) -> Result<Vec<u8>> {
        self.container.finish()
    }
}
