//! Plans: a target resolved once per file against the writer's Avro schema (which writer field
//! feeds which column, what is skipped, what is filled), and the `Columns` they decode into.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema as ArrowSchema, TimeUnit};
use frazil_values::{Error, Result};

use super::builder::Builder;
use super::read::internal;
use super::read::read_record;
use super::KeySet;
use super::Presence;
use super::TField;
use super::TType;
use super::FIELD_ID_KEY;
use crate::avro::decode::{Reader, Skip};
use crate::avro::schema::{Record, Schema};

#[derive(Debug, Clone, Copy)]
pub(super) enum Fill {
    Null,
    Value(i64),
}

#[derive(Debug)]
pub(super) enum Op {
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
    /// `Map`, `MapIntLong` and `MapIntBytes` keeping only the entries whose key is in the set.
    MapKeep(Vec<(Option<usize>, Op, Schema)>, KeySet),
    MapIntLongKeep(KeySet),
    MapIntBytesKeep(KeySet),
    Nullable {
        null_index: Option<i64>,
        value_index: i64,
        op: Box<Op>,
    },
}

#[derive(Debug)]
pub(super) struct RecordPlan {
    pub(super) steps: Vec<Step>,
    pub(super) fills: Vec<(usize, Fill)>,
}

#[derive(Debug)]
pub(super) enum Step {
    Skip(Skip),
    Read(usize, Op),
}

/// A resolved file: its record plan and the Arrow fields of the columns it fills.
pub struct Plan {
    pub(super) root: RecordPlan,
    pub fields: Fields,
}

pub(crate) fn field_meta(id: i32) -> HashMap<String, String> {
    HashMap::from([(FIELD_ID_KEY.to_string(), id.to_string())])
}

pub(super) fn mismatch(path: &str, writer: &Schema, want: &str) -> Error {
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
        // not per one-record block (PyIceberg writes a block per entry): the caller reserves
        // for a run of blocks, and a push grows a column as well as a reserve of one would
        if plausible > 1 {
            for b in &mut columns.builders {
                b.reserve(plausible, bytes.len());
            }
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

pub(super) fn child_path(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

pub(super) fn resolve_record(
    record: &Record,
    target: &[TField],
    path: &str,
) -> Result<(RecordPlan, Fields)> {
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

pub(super) fn map_entries(key: DataType, key_id: i32, value: DataType, value_id: i32) -> FieldRef {
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
pub(crate) fn target_type(ty: &TType) -> Result<DataType> {
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
        TType::MapKeys(map, _) => target_type(map)?,
    })
}

pub(super) fn resolve_union<'a>(
    branches: &'a [Schema],
    path: &str,
) -> Result<(Option<i64>, i64, &'a Schema)> {
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

pub(super) fn resolve_value(writer: &Schema, target: &TType, path: &str) -> Result<(Op, DataType)> {
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
    if let TType::MapKeys(map, keys) = target {
        if !matches!(map.as_ref(), TType::Map(k, _) if matches!(k.ty, TType::Int)) {
            return Err(Error::unsupported(format!(
                "{path}: only maps with int keys can be projected to keys"
            )));
        }
        let (op, dt) = resolve_value(writer, map, path)?;
        let op = match op {
            Op::MapIntLong => Op::MapIntLongKeep(keys.clone()),
            Op::MapIntBytes => Op::MapIntBytesKeep(keys.clone()),
            Op::Map(ops) => Op::MapKeep(ops, keys.clone()),
            // a null-typed writer field: nothing to filter
            other => other,
        };
        return Ok((op, dt));
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
pub(super) fn natural_record(record: &Record, path: &str) -> Result<(Op, DataType)> {
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

pub(super) fn natural(writer: &Schema, path: &str) -> Result<(Op, DataType, bool)> {
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

pub(super) fn decimal_type(p: u32, s: i32, path: &str) -> Result<DataType> {
    let (Ok(p), Ok(s)) = (u8::try_from(p), i8::try_from(s)) else {
        return Err(Error::unsupported(format!("{path}: decimal({p}, {s})")));
    };
    if p == 0 || p > 38 {
        return Err(Error::unsupported(format!("{path}: decimal({p}, {s})")));
    }
    Ok(DataType::Decimal128(p, s))
}
