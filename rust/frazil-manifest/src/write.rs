//! Manifests and manifest lists encoded from Arrow columns (the same shape the readers produce):
//! the Avro schema each format version prescribes (spec "Manifests", "Manifest Lists",
//! Appendix A) with field ids, the partition record typed by the partition struct's columns,
//! and the required key-value metadata.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, StructArray};
use arrow_schema::{DataType, Field, TimeUnit};
use frazil_values::{Error, Result};
use serde_json::{json, Value};

use crate::avro::encode::{bytes as put_bytes, long as put_long, ContainerWriter};
use crate::avro::Codec;
use crate::columns::{Presence, TField, TType as T, FIELD_ID_KEY};
use crate::content_stats::{self, StatsField};
use crate::manifest;
use crate::paths;
use frazil_values::types::PrimitiveType;

/// How a value is written.
#[derive(Debug, Clone)]
enum Kind {
    Boolean,
    Int,
    Long,
    Float,
    Double,
    String,
    Bytes,
    Fixed(usize),
    /// A decimal in a fixed of this many bytes.
    Decimal(usize),
    Struct(Vec<WField>),
    List(Box<WField>),
    Map(Box<WField>, Box<WField>),
}

#[derive(Debug, Clone)]
struct WField {
    name: String,
    id: i32,
    optional: bool,
    kind: Kind,
    /// Written when the column is absent or null and the field is required.
    default: Option<i64>,
    /// Extra Avro schema properties (logical types).
    avro: Value,
}

fn f(id: i32, name: &str, optional: bool, kind: Kind) -> WField {
    WField {
        name: name.to_string(),
        id,
        optional,
        kind,
        default: None,
        avro: Value::Null,
    }
}

fn map(id: i32, name: &str, key: i32, value: i32, v: Kind) -> WField {
    f(
        id,
        name,
        true,
        Kind::Map(
            Box::new(f(key, "key", false, Kind::Int)),
            Box::new(f(value, "value", false, v)),
        ),
    )
}

fn list(id: i32, name: &str, element: i32, kind: Kind) -> WField {
    f(
        id,
        name,
        true,
        Kind::List(Box::new(f(element, "element", false, kind))),
    )
}

fn check_version(v: u8) -> Result<()> {
    if (1..=4).contains(&v) {
        Ok(())
    } else {
        Err(Error::unsupported(format!(
            "format version {v} manifests cannot be written (1 to 4 can)"
        )))
    }
}

/// The Avro form of a stats struct's bound for a field of type `ty`.
fn bound_kind(ty: &PrimitiveType) -> Option<(Kind, Value)> {
    use PrimitiveType as P;
    let ts = |logical: &str, utc: bool| json!({"logicalType": logical, "adjust-to-utc": utc});
    Some(match ty {
        P::Boolean => (Kind::Boolean, Value::Null),
        P::Int => (Kind::Int, Value::Null),
        P::Date => (Kind::Int, json!({"logicalType": "date"})),
        P::Long => (Kind::Long, Value::Null),
        P::Time => (Kind::Long, json!({"logicalType": "time-micros"})),
        P::Timestamp => (Kind::Long, ts("timestamp-micros", false)),
        P::TimestampTz => (Kind::Long, ts("timestamp-micros", true)),
        P::TimestampNs => (Kind::Long, ts("timestamp-nanos", false)),
        P::TimestampTzNs => (Kind::Long, ts("timestamp-nanos", true)),
        P::Float => (Kind::Float, Value::Null),
        P::Double => (Kind::Double, Value::Null),
        P::Decimal { precision, scale } => (
            Kind::Decimal(decimal_bytes(*precision as u8)),
            json!({"logicalType": "decimal", "precision": precision, "scale": scale}),
        ),
        P::Uuid => (Kind::Fixed(16), json!({"logicalType": "uuid"})),
        P::Fixed(n) => (Kind::Fixed(*n as usize), Value::Null),
        P::String => (Kind::String, Value::Null),
        P::Binary => (Kind::Bytes, Value::Null),
        P::Geometry { .. } | P::Geography { .. } | P::Variant | P::Unknown => return None,
    })
}

/// The `content_stats` struct type (spec "Content Stats"), the same layout as
/// [`content_stats::from_maps`] builds: names and ids by the spec's offsets.
fn content_stats_field(fields: &[StatsField]) -> WField {
    use crate::content_stats as cs;
    let stats = fields
        .iter()
        .map(|sf| {
            let b = sf.base;
            let geo = matches!(
                sf.ty,
                PrimitiveType::Geometry { .. } | PrimitiveType::Geography { .. }
            );
            let mut children = Vec::new();
            if geo {
                for (offset, first, name) in [
                    (cs::LOWER_BOUND, cs::GEO_LOWER, "lower_bound"),
                    (cs::UPPER_BOUND, cs::GEO_UPPER, "upper_bound"),
                ] {
                    let coords = ["x", "y", "z", "m"]
                        .iter()
                        .enumerate()
                        .map(|(k, c)| f(b + first + k as i32, c, k >= 2, Kind::Double))
                        .collect();
                    children.push(f(b + offset, name, true, Kind::Struct(coords)));
                }
            } else if let Some((kind, avro)) = bound_kind(&sf.ty) {
                for (offset, name) in [
                    (cs::LOWER_BOUND, "lower_bound"),
                    (cs::UPPER_BOUND, "upper_bound"),
                ] {
                    let mut w = f(b + offset, name, true, kind.clone());
                    w.avro = avro.clone();
                    children.push(w);
                }
            }
            if !geo {
                children.push(f(b + cs::TIGHT_BOUNDS, "tight_bounds", true, Kind::Boolean));
            }
            children.push(f(b + cs::VALUE_COUNT, "value_count", true, Kind::Long));
            if sf.optional {
                children.push(f(
                    b + cs::NULL_VALUE_COUNT,
                    "null_value_count",
                    true,
                    Kind::Long,
                ));
            }
            if matches!(sf.ty, PrimitiveType::Float | PrimitiveType::Double) {
                children.push(f(
                    b + cs::NAN_VALUE_COUNT,
                    "nan_value_count",
                    true,
                    Kind::Long,
                ));
            }
            if geo
                || matches!(
                    sf.ty,
                    PrimitiveType::String | PrimitiveType::Binary | PrimitiveType::Variant
                )
            {
                children.push(f(
                    b + cs::AVG_VALUE_SIZE,
                    "avg_value_size_in_bytes",
                    true,
                    Kind::Int,
                ));
            }
            f(b, &sf.name, true, Kind::Struct(children))
        })
        .collect();
    f(
        cs::CONTENT_STATS_ID,
        "content_stats",
        true,
        Kind::Struct(stats),
    )
}

/// Whether format `version` writes the `manifest_entry` / `data_file` field `name` (the fields
/// themselves are [`manifest::manifest_entry`]'s, the one definition readers use too).
fn written_in(name: &str, version: u8) -> bool {
    match name {
        "content"
        | "sequence_number"
        | "file_sequence_number"
        | "equality_ids"
        | "referenced_data_file" => version >= 2,
        "first_row_id" | "content_offset" | "content_size_in_bytes" => version >= 3,
        "content_stats" => version >= 4,
        // v4 holds these in content_stats
        "value_counts" | "null_value_counts" | "nan_value_counts" | "lower_bounds"
        | "upper_bounds" => version < 4,
        // read from old files, never written
        "distinct_counts" => false,
        _ => true,
    }
}

/// How a field of the one definition is written: required when readers require it or have a
/// default for it (v2's `content`); map values and list elements required, as Java writes them.
fn written(field: &TField) -> Result<WField> {
    let kind = |ty: &T| match ty {
        T::Int => Ok(Kind::Int),
        T::Long => Ok(Kind::Long),
        T::Boolean => Ok(Kind::Boolean),
        T::String => Ok(Kind::String),
        T::Binary => Ok(Kind::Bytes),
        _ => Err(Error::unsupported(format!(
            "{}: not a written type",
            field.name
        ))),
    };
    Ok(match &field.ty {
        T::Map(k, v) => map(field.id, field.name, k.id, v.id, kind(&v.ty)?),
        T::List(e) => list(field.id, field.name, e.id, kind(&e.ty)?),
        ty => f(
            field.id,
            field.name,
            matches!(field.presence, Presence::Optional),
            kind(ty)?,
        ),
    })
}

/// The `manifest_entry` schema of a format version, with the given partition fields (and for
/// v4 the `content_stats` fields).
fn manifest_entry(
    version: u8,
    mut partition: Vec<WField>,
    stats: &[StatsField],
) -> Result<Vec<WField>> {
    let mut df = Vec::new();
    for field in manifest::data_file() {
        if !written_in(field.name, version) {
            continue;
        }
        df.push(match field.name {
            "partition" => f(
                field.id,
                field.name,
                false,
                Kind::Struct(std::mem::take(&mut partition)),
            ),
            "content_stats" => content_stats_field(stats),
            _ => written(&field)?,
        });
        if field.name == "file_size_in_bytes" && version == 1 {
            // "Always write a default in v1": Java writes 64 MiB.
            let mut block = f(105, "block_size_in_bytes", false, Kind::Long);
            block.default = Some(64 << 20);
            df.push(block);
        }
    }
    let mut entry = Vec::new();
    for field in manifest::manifest_entry() {
        if !written_in(field.name, version) {
            continue;
        }
        entry.push(match field.name {
            "data_file" => f(
                field.id,
                field.name,
                false,
                Kind::Struct(std::mem::take(&mut df)),
            ),
            // v1's snapshot id is required: it has no inheritance
            "snapshot_id" => f(field.id, field.name, version > 1, Kind::Long),
            _ => written(&field)?,
        });
    }
    Ok(entry)
}

/// The `manifest_file` schema of a format version.
fn manifest_file(version: u8) -> Vec<WField> {
    let v1 = version == 1;
    let summary = Kind::Struct(vec![
        f(509, "contains_null", false, Kind::Boolean),
        f(518, "contains_nan", true, Kind::Boolean),
        f(510, "lower_bound", true, Kind::Bytes),
        f(511, "upper_bound", true, Kind::Bytes),
    ]);
    let mut out = vec![
        f(500, "manifest_path", false, Kind::String),
        f(501, "manifest_length", false, Kind::Long),
        f(502, "partition_spec_id", false, Kind::Int),
    ];
    if !v1 {
        out.push(f(517, "content", false, Kind::Int));
        out.push(f(515, "sequence_number", false, Kind::Long));
        out.push(f(516, "min_sequence_number", false, Kind::Long));
    }
    out.push(f(503, "added_snapshot_id", false, Kind::Long));
    out.push(f(504, "added_files_count", v1, Kind::Int));
    out.push(f(505, "existing_files_count", v1, Kind::Int));
    out.push(f(506, "deleted_files_count", v1, Kind::Int));
    out.push(f(512, "added_rows_count", v1, Kind::Long));
    out.push(f(513, "existing_rows_count", v1, Kind::Long));
    out.push(f(514, "deleted_rows_count", v1, Kind::Long));
    out.push(f(
        507,
        "partitions",
        true,
        Kind::List(Box::new(f(508, "element", false, summary))),
    ));
    out.push(f(519, "key_metadata", true, Kind::Bytes));
    if version >= 3 {
        out.push(f(520, "first_row_id", true, Kind::Long));
    }
    out
}

/// Minimum bytes of a fixed holding any decimal of precision `p` (Appendix A).
fn decimal_bytes(p: u8) -> usize {
    let max = frazil_values::decimal::pow10(u32::from(p));
    (1..=16usize)
        .find(|n| max <= 1u128 << (8 * n - 1))
        .unwrap_or(16)
}

/// The partition fields, from the partition struct column's Arrow fields (each must carry its
/// partition field id as `PARQUET:field_id` metadata, as the readers produce).
fn partition_fields(df: &DataType) -> Result<Vec<WField>> {
    let DataType::Struct(fields) = df else {
        return Err(Error::invalid("data_file must be a struct column"));
    };
    let Some(part) = fields.iter().find(|f| f.name() == "partition") else {
        return Ok(Vec::new());
    };
    let DataType::Struct(pfields) = part.data_type() else {
        return Err(Error::invalid(
            "data_file.partition must be a struct column",
        ));
    };
    pfields.iter().map(|p| partition_field(p)).collect()
}

fn partition_field(p: &Field) -> Result<WField> {
    let id = p
        .metadata()
        .get(FIELD_ID_KEY)
        .and_then(|v| v.parse::<i32>().ok())
        .ok_or_else(|| {
            Error::invalid(format!(
                "partition field {} has no {FIELD_ID_KEY} metadata",
                p.name()
            ))
        })?;
    let uuid = p
        .metadata()
        .get("ARROW:extension:name")
        .is_some_and(|n| n == "arrow.uuid");
    let (kind, avro) = match p.data_type() {
        DataType::Boolean => (Kind::Boolean, Value::Null),
        DataType::Int32 => (Kind::Int, Value::Null),
        DataType::Date32 => (Kind::Int, json!({"logicalType": "date"})),
        DataType::Int64 => (Kind::Long, Value::Null),
        DataType::Time64(TimeUnit::Microsecond) => {
            (Kind::Long, json!({"logicalType": "time-micros"}))
        }
        DataType::Timestamp(unit @ (TimeUnit::Microsecond | TimeUnit::Nanosecond), tz) => {
            let logical = if *unit == TimeUnit::Microsecond {
                "timestamp-micros"
            } else {
                "timestamp-nanos"
            };
            (
                Kind::Long,
                json!({"logicalType": logical, "adjust-to-utc": tz.is_some()}),
            )
        }
        DataType::Float32 => (Kind::Float, Value::Null),
        DataType::Float64 => (Kind::Double, Value::Null),
        DataType::Utf8 | DataType::LargeUtf8 => (Kind::String, Value::Null),
        DataType::Binary | DataType::LargeBinary => (Kind::Bytes, Value::Null),
        DataType::FixedSizeBinary(16) if uuid => (Kind::Fixed(16), json!({"logicalType": "uuid"})),
        DataType::FixedSizeBinary(n) => (Kind::Fixed(*n as usize), Value::Null),
        DataType::Decimal128(p, s) => (
            Kind::Decimal(decimal_bytes(*p)),
            json!({"logicalType": "decimal", "precision": p, "scale": s}),
        ),
        other => {
            return Err(Error::unsupported(format!(
                "partition field {} of Arrow type {other} cannot be written",
                p.name()
            )))
        }
    };
    Ok(WField {
        name: p.name().clone(),
        id,
        optional: true,
        kind,
        default: None,
        avro,
    })
}

// ---------------------------------------------------------------------------------------------
// Schema JSON

fn type_json(field: &WField) -> Value {
    let base = match &field.kind {
        Kind::Boolean => json!("boolean"),
        Kind::Int => json!("int"),
        Kind::Long => json!("long"),
        Kind::Float => json!("float"),
        Kind::Double => json!("double"),
        Kind::String => json!("string"),
        Kind::Bytes => json!("bytes"),
        Kind::Fixed(n) | Kind::Decimal(n) => {
            json!({"type": "fixed", "name": format!("fixed_{}", field.id), "size": n})
        }
        Kind::Struct(fields) => json!({
            "type": "record",
            "name": if field.id == 102 { "r102".to_string() } else { format!("r{}", field.id) },
            "fields": fields.iter().map(field_json).collect::<Vec<_>>(),
        }),
        Kind::List(e) => json!({"type": "array", "items": type_json(e), "element-id": e.id}),
        Kind::Map(k, v) => json!({
            "type": "array",
            "logicalType": "map",
            "items": {
                "type": "record",
                "name": format!("k{}_v{}", k.id, v.id),
                "fields": [field_json(k), field_json(v)],
            },
        }),
    };
    let with_props = match (base, &field.avro) {
        (Value::String(t), Value::Object(props)) => {
            let mut obj = serde_json::Map::new();
            obj.insert("type".into(), Value::String(t));
            obj.extend(props.clone());
            Value::Object(obj)
        }
        (Value::Object(mut obj), Value::Object(props)) => {
            obj.extend(props.clone());
            Value::Object(obj)
        }
        (base, _) => base,
    };
    if field.optional {
        json!(["null", with_props])
    } else {
        with_props
    }
}

fn field_json(field: &WField) -> Value {
    let mut obj = json!({"name": field.name, "type": type_json(field), "field-id": field.id});
    if field.optional {
        obj["default"] = Value::Null;
    }
    obj
}

fn record_json(name: &str, fields: &[WField]) -> String {
    json!({
        "type": "record",
        "name": name,
        "fields": fields.iter().map(field_json).collect::<Vec<_>>(),
    })
    .to_string()
}

// ---------------------------------------------------------------------------------------------
// Values

fn i64_at(a: &dyn Array, i: usize) -> Option<i64> {
    Some(match a.data_type() {
        DataType::Int64 => a.as_primitive::<Int64Type>().value(i),
        DataType::Int32 => i64::from(a.as_primitive::<Int32Type>().value(i)),
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            a.as_primitive::<TimestampMicrosecondType>().value(i)
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            a.as_primitive::<TimestampNanosecondType>().value(i)
        }
        DataType::Time64(TimeUnit::Microsecond) => {
            a.as_primitive::<Time64MicrosecondType>().value(i)
        }
        _ => return None,
    })
}

fn i32_at(a: &dyn Array, i: usize) -> Option<i32> {
    Some(match a.data_type() {
        DataType::Int32 => a.as_primitive::<Int32Type>().value(i),
        DataType::Date32 => a.as_primitive::<Date32Type>().value(i),
        DataType::Int64 => i32::try_from(a.as_primitive::<Int64Type>().value(i)).ok()?,
        _ => return None,
    })
}

fn bytes_at(a: &dyn Array, i: usize) -> Option<&[u8]> {
    Some(match a.data_type() {
        DataType::Utf8 => a.as_string::<i32>().value(i).as_bytes(),
        DataType::LargeUtf8 => a.as_string::<i64>().value(i).as_bytes(),
        DataType::Binary => a.as_binary::<i32>().value(i),
        DataType::LargeBinary => a.as_binary::<i64>().value(i),
        DataType::FixedSizeBinary(_) => a.as_fixed_size_binary().value(i),
        _ => return None,
    })
}

fn wrong(field: &WField, a: &dyn Array) -> Error {
    Error::invalid(format!(
        "column {} has Arrow type {}, which cannot be written as its spec type",
        field.name,
        a.data_type()
    ))
}

fn child<'a>(s: &'a StructArray, name: &str) -> Option<&'a ArrayRef> {
    s.column_by_name(name)
}

fn write_field(out: &mut Vec<u8>, field: &WField, col: Option<&ArrayRef>, i: usize) -> Result<()> {
    let present = col.filter(|c| c.data_type() != &DataType::Null && c.is_valid(i));
    let Some(a) = present else {
        if field.optional {
            put_long(out, 0);
            return Ok(());
        }
        if let Some(d) = field.default {
            match field.kind {
                Kind::Int => put_long(out, d),
                _ => put_long(out, d),
            }
            return Ok(());
        }
        return Err(Error::invalid(format!(
            "required field {} (id {}) is {} in row {i}",
            field.name,
            field.id,
            if col.is_some() { "null" } else { "missing" }
        )));
    };
    if field.optional {
        put_long(out, 1);
    }
    write_value(out, field, a.as_ref(), i)
}

fn write_value(out: &mut Vec<u8>, field: &WField, a: &dyn Array, i: usize) -> Result<()> {
    match &field.kind {
        Kind::Boolean => {
            let b = a.as_boolean_opt().ok_or_else(|| wrong(field, a))?;
            out.push(u8::from(b.value(i)));
        }
        Kind::Int => put_long(out, i64::from(i32_at(a, i).ok_or_else(|| wrong(field, a))?)),
        Kind::Long => put_long(out, i64_at(a, i).ok_or_else(|| wrong(field, a))?),
        Kind::Float => {
            let v = a
                .as_primitive_opt::<Float32Type>()
                .ok_or_else(|| wrong(field, a))?;
            out.extend_from_slice(&v.value(i).to_le_bytes());
        }
        Kind::Double => {
            let v = a
                .as_primitive_opt::<Float64Type>()
                .ok_or_else(|| wrong(field, a))?;
            out.extend_from_slice(&v.value(i).to_le_bytes());
        }
        Kind::String | Kind::Bytes => {
            put_bytes(out, bytes_at(a, i).ok_or_else(|| wrong(field, a))?)
        }
        Kind::Fixed(n) => {
            let b = bytes_at(a, i).ok_or_else(|| wrong(field, a))?;
            if b.len() != *n {
                return Err(Error::invalid(format!(
                    "{}: a fixed[{n}] value of {} bytes",
                    field.name,
                    b.len()
                )));
            }
            out.extend_from_slice(b);
        }
        Kind::Decimal(n) => {
            let v = a
                .as_primitive_opt::<Decimal128Type>()
                .ok_or_else(|| wrong(field, a))?
                .value(i);
            let be = v.to_be_bytes();
            let (dropped, kept) = be.split_at(16 - n);
            let sign = if v < 0 { 0xff } else { 0 };
            if dropped.iter().any(|b| *b != sign) || (kept[0] ^ sign) & 0x80 != 0 {
                return Err(Error::invalid(format!(
                    "{}: decimal value {v} does not fit its precision",
                    field.name
                )));
            }
            out.extend_from_slice(kept);
        }
        Kind::Struct(fields) => {
            let s = a.as_struct_opt().ok_or_else(|| wrong(field, a))?;
            for f in fields {
                write_field(out, f, child(s, &f.name), i)?;
            }
        }
        Kind::List(element) => {
            let (values, start, end) = match a.data_type() {
                DataType::List(_) => {
                    let l = a.as_list::<i32>();
                    let o = l.value_offsets();
                    (l.values(), o[i] as usize, o[i + 1] as usize)
                }
                DataType::LargeList(_) => {
                    let l = a.as_list::<i64>();
                    let o = l.value_offsets();
                    (l.values(), o[i] as usize, o[i + 1] as usize)
                }
                _ => return Err(wrong(field, a)),
            };
            if end > start {
                put_long(out, (end - start) as i64);
                for j in start..end {
                    write_field(out, element, Some(values), j)?;
                }
            }
            put_long(out, 0);
        }
        Kind::Map(k, v) => {
            let m = a.as_map_opt().ok_or_else(|| wrong(field, a))?;
            let o = m.value_offsets();
            let (start, end) = (o[i] as usize, o[i + 1] as usize);
            if end > start {
                put_long(out, (end - start) as i64);
                for j in start..end {
                    write_field(out, k, Some(m.keys()), j)?;
                    write_field(out, v, Some(m.values()), j)?;
                }
            }
            put_long(out, 0);
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Files

/// Options shared by the writers.
#[derive(Debug, Clone)]
pub struct WriteOptions {
    pub format_version: u8,
    pub codec: Codec,
    /// Key-value metadata, written in this order.
    pub metadata: Vec<(String, String)>,
    /// The table location: from v4, paths under it are written relative to it (spec "Path
    /// Relativization"); ignored before v4, whose paths are all absolute.
    pub table_location: Option<String>,
}

impl WriteOptions {
    fn relative_to(&self) -> Option<&str> {
        self.table_location
            .as_deref()
            .filter(|_| self.format_version >= 4)
    }
}

/// A struct array with some columns replaced (by name) or appended.
fn with_columns(s: &StructArray, changes: Vec<(Field, ArrayRef)>) -> Result<StructArray> {
    let mut fields: Vec<Field> = s.fields().iter().map(|f| f.as_ref().clone()).collect();
    let mut columns: Vec<ArrayRef> = s.columns().to_vec();
    for (field, column) in changes {
        match fields.iter().position(|f| f.name() == field.name()) {
            Some(i) => {
                fields[i] = field;
                columns[i] = column;
            }
            None => {
                fields.push(field);
                columns.push(column);
            }
        }
    }
    StructArray::try_new(fields.into(), columns, s.nulls().cloned())
        .map_err(|e| Error::invalid(e.to_string()))
}

/// Relativizes the string columns `names` of `s` against `location`.
fn relativized(s: &StructArray, names: &[&str], location: &str) -> Result<Vec<(Field, ArrayRef)>> {
    let mut out = Vec::new();
    for name in names {
        if let Some(i) = s.fields().iter().position(|f| f.name() == name) {
            let column = paths::relativize_column(s.column(i), location)?;
            let field = s.fields()[i]
                .as_ref()
                .clone()
                .with_data_type(column.data_type().clone());
            out.push((field, column));
        }
    }
    Ok(out)
}

fn require_metadata(options: &WriteOptions, keys: &[&str], what: &str) -> Result<()> {
    for key in keys {
        if !options.metadata.iter().any(|(k, _)| k == key) {
            return Err(Error::invalid(format!(
                "a v{} {what} needs {key:?} metadata",
                options.format_version
            )));
        }
    }
    Ok(())
}

fn write_rows(
    schema_name: &str,
    fields: &[WField],
    chunks: &[StructArray],
    options: &WriteOptions,
) -> Result<Vec<u8>> {
    let schema = record_json(schema_name, fields);
    let mut writer = ContainerWriter::new(&schema, options.codec, &options.metadata);
    for chunk in chunks {
        for i in 0..chunk.len() {
            let out = writer.record_buffer();
            for f in fields {
                write_field(out, f, child(chunk, &f.name), i)
                    .map_err(|e| Error::new(e.kind, format!("row {i}: {e}")))?;
            }
            writer.end_record()?;
        }
    }
    writer.finish()
}

/// Encodes `manifest_entry` rows (chunks of one struct type, as the reader produces) as a
/// manifest of `options.format_version`. The metadata must hold the keys the spec requires for
/// that version (`schema`, `partition-spec`, and from v2 `schema-id`, `partition-spec-id`,
/// `format-version`, `content`).
pub fn write_manifest(chunks: &[StructArray], options: &WriteOptions) -> Result<Vec<u8>> {
    check_version(options.format_version)?;
    if options.format_version == 1 {
        require_metadata(options, &["schema", "partition-spec"], "manifest")?;
    } else {
        require_metadata(
            options,
            &[
                "schema",
                "schema-id",
                "partition-spec",
                "partition-spec-id",
                "format-version",
                "content",
            ],
            "manifest",
        )?;
    }
    let partition = match chunks.first() {
        Some(c) => match c.column_by_name("data_file") {
            Some(df) => partition_fields(df.data_type())?,
            None => return Err(Error::invalid("manifest entries need a data_file column")),
        },
        None => Vec::new(),
    };
    let stats = if options.format_version >= 4 {
        let schema = options
            .metadata
            .iter()
            .find(|(k, _)| k == "schema")
            .map_or("", |(_, v)| v.as_str());
        content_stats::stats_fields(schema)?
    } else {
        Vec::new()
    };
    let fields = manifest_entry(options.format_version, partition, &stats)?;
    if options.format_version < 4 {
        return write_rows("manifest_entry", &fields, chunks, options);
    }
    // v4: the stats maps become content_stats, paths under the table location relative
    let mut v4_chunks = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        let Some(df) = chunk
            .column_by_name("data_file")
            .and_then(|c| c.as_struct_opt())
        else {
            return Err(Error::invalid(
                "manifest entries need a data_file struct column",
            ));
        };
        let cs = content_stats::from_maps(df, &stats)?;
        let mut changes = vec![(
            Field::new("content_stats", cs.data_type().clone(), true),
            Arc::new(cs) as ArrayRef,
        )];
        if let Some(location) = options.relative_to() {
            changes.extend(relativized(
                df,
                &["file_path", "referenced_data_file"],
                location,
            )?);
        }
        let df = with_columns(df, changes)?;
        let field = Field::new("data_file", df.data_type().clone(), false);
        v4_chunks.push(with_columns(
            chunk,
            vec![(field, Arc::new(df) as ArrayRef)],
        )?);
    }
    write_rows("manifest_entry", &fields, &v4_chunks, options)
}

/// Encodes `manifest_file` rows as a manifest list of `options.format_version`.
pub fn write_manifest_list(chunks: &[StructArray], options: &WriteOptions) -> Result<Vec<u8>> {
    check_version(options.format_version)?;
    require_metadata(options, &["snapshot-id"], "manifest list")?;
    let fields = manifest_file(options.format_version);
    let Some(location) = options.relative_to() else {
        return write_rows("manifest_file", &fields, chunks, options);
    };
    let relative: Vec<StructArray> = chunks
        .iter()
        .map(|c| with_columns(c, relativized(c, &["manifest_path"], location)?))
        .collect::<Result<_>>()?;
    write_rows("manifest_file", &fields, &relative, options)
}
