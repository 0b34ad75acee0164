//! A `ScanTasks` JSON object (a `fetchScanTasks` page, or a completed `planTableScan`
//! result) into the plan's Arrow columns.

use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder, BinaryBuilder, Int32Builder, Int64Builder, ListBuilder, MapBuilder,
    MapFieldNames, StringBuilder,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, FixedSizeBinaryArray,
    Float32Array, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray, StructArray,
    Time64MicrosecondArray, TimestampMicrosecondArray, TimestampNanosecondArray,
};
use arrow_schema::{Field, Fields};
use frazil_values::{json, Error, Literal, PrimitiveType, Result, Type};
use serde_json::{Map, Value};

use crate::Layout;

/// A page read back: one row per task, and one per delete file the tasks refer to.
pub struct Page {
    /// The content-file columns, `sequence_number` (a data file's `data-sequence-number`),
    /// `residual` (the task's `residual-filter` as compact JSON text, null when absent) and
    /// `delete_file_references` (positions in `deletes`).
    pub tasks: RecordBatch,
    /// The content-file columns and `sequence_number` (always null: not on the wire).
    pub deletes: RecordBatch,
    /// Further pages to fetch (`plan-tasks`).
    pub plan_tasks: Vec<String>,
}

/// Partition values of one partition field, by row.
enum Part {
    Bool(Vec<Option<bool>>),
    I32(Vec<Option<i32>>),
    I64(Vec<Option<i64>>),
    F32(Vec<Option<f32>>),
    F64(Vec<Option<f64>>),
    I128(Vec<Option<i128>>),
    Str(Vec<Option<String>>),
    Bin(Vec<Option<Vec<u8>>>),
}

impl Part {
    fn new(ty: &PrimitiveType) -> Part {
        use PrimitiveType as P;
        match ty {
            P::Boolean => Part::Bool(vec![]),
            P::Int | P::Date => Part::I32(vec![]),
            P::Long
            | P::Time
            | P::Timestamp
            | P::TimestampTz
            | P::TimestampNs
            | P::TimestampTzNs => Part::I64(vec![]),
            P::Float => Part::F32(vec![]),
            P::Double => Part::F64(vec![]),
            P::Decimal { .. } => Part::I128(vec![]),
            P::String => Part::Str(vec![]),
            _ => Part::Bin(vec![]),
        }
    }

    fn push(&mut self, v: Option<Literal>) {
        use Literal as L;
        match (self, v) {
            (Part::Bool(x), Some(L::Boolean(b))) => x.push(Some(b)),
            (Part::I32(x), Some(L::Int(v) | L::Date(v))) => x.push(Some(v)),
            (
                Part::I64(x),
                Some(
                    L::Long(v)
                    | L::Time(v)
                    | L::Timestamp(v)
                    | L::TimestampTz(v)
                    | L::TimestampNs(v)
                    | L::TimestampTzNs(v),
                ),
            ) => x.push(Some(v)),
            (Part::F32(x), Some(L::Float(v))) => x.push(Some(v)),
            (Part::F64(x), Some(L::Double(v))) => x.push(Some(v)),
            (Part::I128(x), Some(L::Decimal(v))) => x.push(Some(v)),
            (Part::Str(x), Some(L::String(v))) => x.push(Some(v)),
            (Part::Bin(x), Some(L::Binary(v) | L::Fixed(v))) => x.push(Some(v)),
            (Part::Bin(x), Some(L::Uuid(v))) => x.push(Some(v.to_be_bytes().to_vec())),
            (p, _) => p.push_null(),
        }
    }

    fn push_null(&mut self) {
        match self {
            Part::Bool(x) => x.push(None),
            Part::I32(x) => x.push(None),
            Part::I64(x) => x.push(None),
            Part::F32(x) => x.push(None),
            Part::F64(x) => x.push(None),
            Part::I128(x) => x.push(None),
            Part::Str(x) => x.push(None),
            Part::Bin(x) => x.push(None),
        }
    }

    fn finish(self, ty: &PrimitiveType) -> Result<ArrayRef> {
        use PrimitiveType as P;
        let bad = |e: arrow_schema::ArrowError| Error::invalid(format!("partition {ty}: {e}"));
        Ok(match (self, ty) {
            (Part::Bool(x), _) => Arc::new(BooleanArray::from(x)),
            (Part::I32(x), P::Date) => Arc::new(Date32Array::from(x)),
            (Part::I32(x), _) => Arc::new(Int32Array::from(x)),
            (Part::I64(x), P::Time) => Arc::new(Time64MicrosecondArray::from(x)),
            (Part::I64(x), P::Timestamp) => Arc::new(TimestampMicrosecondArray::from(x)),
            (Part::I64(x), P::TimestampTz) => {
                Arc::new(TimestampMicrosecondArray::from(x).with_timezone("UTC"))
            }
            (Part::I64(x), P::TimestampNs) => Arc::new(TimestampNanosecondArray::from(x)),
            (Part::I64(x), P::TimestampTzNs) => {
                Arc::new(TimestampNanosecondArray::from(x).with_timezone("UTC"))
            }
            (Part::I64(x), _) => Arc::new(Int64Array::from(x)),
            (Part::F32(x), _) => Arc::new(Float32Array::from(x)),
            (Part::F64(x), _) => Arc::new(Float64Array::from(x)),
            (Part::I128(x), P::Decimal { precision, scale }) => Arc::new(
                Decimal128Array::from(x)
                    .with_precision_and_scale(*precision as u8, *scale as i8)
                    .map_err(bad)?,
            ),
            (Part::I128(x), _) => Arc::new(Decimal128Array::from(x)),
            (Part::Str(x), _) => Arc::new(StringArray::from(x)),
            (Part::Bin(x), P::Uuid) => Arc::new(fixed(x, 16).map_err(bad)?),
            (Part::Bin(x), P::Fixed(n)) => Arc::new(fixed(x, *n as i32).map_err(bad)?),
            (Part::Bin(x), _) => Arc::new(BinaryArray::from_iter(x)),
        })
    }
}

fn fixed(
    x: Vec<Option<Vec<u8>>>,
    n: i32,
) -> std::result::Result<FixedSizeBinaryArray, arrow_schema::ArrowError> {
    FixedSizeBinaryArray::try_from_sparse_iter_with_size(x.into_iter(), n)
}

type CountMap = MapBuilder<Int32Builder, Int64Builder>;
type BoundMap = MapBuilder<Int32Builder, BinaryBuilder>;

fn map_names() -> MapFieldNames {
    MapFieldNames {
        entry: "entries".into(),
        key: "key".into(),
        value: "value".into(),
    }
}

/// Builders of the content-file columns.
struct Files {
    content: Int32Builder,
    path: StringBuilder,
    format: StringBuilder,
    spec_id: Int32Builder,
    partition: Vec<Part>,
    record_count: Int64Builder,
    size: Int64Builder,
    counts: Vec<CountMap>,
    bounds: Vec<BoundMap>,
    key_metadata: BinaryBuilder,
    split_offsets: ListBuilder<Int64Builder>,
    equality_ids: ListBuilder<Int32Builder>,
    sort_order_id: Int32Builder,
    first_row_id: Int64Builder,
    referenced: StringBuilder,
    content_offset: Int64Builder,
    content_size: Int64Builder,
    sequence_number: Int64Builder,
}

const COUNT_KEYS: [&str; 4] = [
    "column-sizes",
    "value-counts",
    "null-value-counts",
    "nan-value-counts",
];
const COUNT_NAMES: [&str; 4] = [
    "column_sizes",
    "value_counts",
    "null_value_counts",
    "nan_value_counts",
];
const BOUND_KEYS: [&str; 2] = ["lower-bounds", "upper-bounds"];
const BOUND_NAMES: [&str; 2] = ["lower_bounds", "upper_bounds"];

fn need<'a>(obj: &'a Map<String, Value>, key: &str, at: &str) -> Result<&'a Value> {
    obj.get(key)
        .ok_or_else(|| Error::parse(format!("{at}: missing {key:?}")))
}

fn int(v: &Value, key: &str, at: &str) -> Result<i64> {
    v.as_i64()
        .ok_or_else(|| Error::parse(format!("{at}.{key}: unexpected value {}", short(v))))
}

fn text<'a>(v: &'a Value, key: &str, at: &str) -> Result<&'a str> {
    v.as_str()
        .ok_or_else(|| Error::parse(format!("{at}.{key}: unexpected value {}", short(v))))
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 80 {
        format!("{}...", &s[..s.floor_char_boundary_compat(80)])
    } else {
        s
    }
}

trait FloorBoundary {
    fn floor_char_boundary_compat(&self, i: usize) -> usize;
}

impl FloorBoundary for str {
    fn floor_char_boundary_compat(&self, mut i: usize) -> usize {
        while !self.is_char_boundary(i) {
            i -= 1;
        }
        i
    }
}

fn opt_int(obj: &Map<String, Value>, key: &str, at: &str) -> Result<Option<i64>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => int(v, key, at).map(Some),
    }
}

fn int_list(v: &Value, key: &str, at: &str) -> Result<Vec<i64>> {
    v.as_array()
        .ok_or_else(|| Error::parse(format!("{at}.{key}: expected a list, got {}", short(v))))?
        .iter()
        .map(|x| int(x, key, at))
        .collect()
}

/// `{"keys": [...], "values": [...]}` of equal lengths.
fn map_parts<'a>(v: &'a Value, key: &str, at: &str) -> Result<(Vec<i64>, &'a Vec<Value>)> {
    let bad = || {
        Error::parse(format!(
            "{at}.{key}: expected keys and values, got {}",
            short(v)
        ))
    };
    let obj = v.as_object().ok_or_else(bad)?;
    let keys = int_list(obj.get("keys").ok_or_else(bad)?, key, at)?;
    let values = obj
        .get("values")
        .and_then(Value::as_array)
        .ok_or_else(bad)?;
    if keys.len() != values.len() {
        return Err(bad());
    }
    Ok((keys, values))
}

fn unhex(s: &str, key: &str, at: &str) -> Result<Vec<u8>> {
    let bad = || Error::parse(format!("{at}.{key}: {s:?} is not hex"));
    let b = s.as_bytes();
    if b.len() % 2 != 0 {
        return Err(bad());
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    b.chunks(2)
        .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(bad)
}

impl Files {
    fn new(layout: &Layout) -> Files {
        Files {
            content: Int32Builder::new(),
            path: StringBuilder::new(),
            format: StringBuilder::new(),
            spec_id: Int32Builder::new(),
            partition: layout.fields.iter().map(|(_, t)| Part::new(t)).collect(),
            record_count: Int64Builder::new(),
            size: Int64Builder::new(),
            counts: (0..4)
                .map(|_| {
                    MapBuilder::new(Some(map_names()), Int32Builder::new(), Int64Builder::new())
                })
                .collect(),
            bounds: (0..2)
                .map(|_| {
                    MapBuilder::new(Some(map_names()), Int32Builder::new(), BinaryBuilder::new())
                })
                .collect(),
            key_metadata: BinaryBuilder::new(),
            split_offsets: ListBuilder::new(Int64Builder::new()),
            equality_ids: ListBuilder::new(Int32Builder::new()),
            sort_order_id: Int32Builder::new(),
            first_row_id: Int64Builder::new(),
            referenced: StringBuilder::new(),
            content_offset: Int64Builder::new(),
            content_size: Int64Builder::new(),
            sequence_number: Int64Builder::new(),
        }
    }

    /// Appends one content file (the REST form, or Java 1.10's: upper-case enums and
    /// partition objects keyed by partition field id).
    fn push(&mut self, v: &Value, layout: &Layout, at: &str) -> Result<()> {
        let obj = v
            .as_object()
            .ok_or_else(|| Error::parse(format!("{at}: expected an object, got {}", short(v))))?;
        let spec_id = int(need(obj, "spec-id", at)?, "spec-id", at)?;
        let positions = i32::try_from(spec_id)
            .ok()
            .and_then(|s| layout.specs.get(&s))
            .ok_or_else(|| Error::parse(format!("{at}: unknown partition spec id {spec_id}")))?;
        let content = match text(need(obj, "content", at)?, "content", at)? {
            "data" | "DATA" => 0,
            "position-deletes" | "POSITION_DELETES" => 1,
            "equality-deletes" | "EQUALITY_DELETES" => 2,
            c => return Err(Error::parse(format!("{at}.content: unknown content {c:?}"))),
        };
        let path = text(need(obj, "file-path", at)?, "file-path", at)?;
        let format = text(need(obj, "file-format", at)?, "file-format", at)?;
        let record_count = int(need(obj, "record-count", at)?, "record-count", at)?;
        let size = int(
            need(obj, "file-size-in-bytes", at)?,
            "file-size-in-bytes",
            at,
        )?;
        // the partition: an array in spec order, or (1.10) an object by field id
        let mut values: Vec<Option<&Value>> = vec![None; layout.fields.len()];
        match obj.get("partition") {
            None => {
                if !positions.is_empty() {
                    return Err(Error::parse(format!(
                        "{at}.partition: expected {} values, got none",
                        positions.len()
                    )));
                }
            }
            Some(Value::Array(a)) => {
                if a.len() != positions.len() {
                    return Err(Error::parse(format!(
                        "{at}.partition: expected {} values, got {}",
                        positions.len(),
                        short(&Value::Array(a.clone()))
                    )));
                }
                for (&p, x) in positions.iter().zip(a) {
                    if let Some(p) = p {
                        values[p] = Some(x);
                    }
                }
            }
            Some(Value::Object(o)) => {
                for &p in positions.iter().flatten() {
                    values[p] = o.get(&layout.fields[p].0.to_string());
                }
            }
            Some(other) => {
                return Err(Error::parse(format!(
                    "{at}.partition: unexpected value {}",
                    short(other)
                )))
            }
        }
        for ((part, value), (_, ty)) in self.partition.iter_mut().zip(values).zip(&layout.fields) {
            match value {
                None | Some(Value::Null) => part.push_null(),
                Some(x) => {
                    let lit = json::from_json(x, &Type::Primitive(ty.clone()))
                        .map_err(|e| Error::parse(format!("{at}.partition: {e}")))?;
                    part.push(lit)
                }
            }
        }
        self.content.append_value(content);
        self.path.append_value(path);
        self.format.append_value(format.to_ascii_uppercase());
        self.spec_id.append_value(spec_id as i32);
        self.record_count.append_value(record_count);
        self.size.append_value(size);
        for (k, b) in COUNT_KEYS.iter().zip(&mut self.counts) {
            match obj.get(*k) {
                None | Some(Value::Null) => b.append(false).map_err(arrow)?,
                Some(m) => {
                    let (keys, vals) = map_parts(m, k, at)?;
                    for (key, val) in keys.into_iter().zip(vals) {
                        b.keys().append_value(key as i32);
                        b.values().append_option(match val {
                            Value::Null => None,
                            x => Some(int(x, k, at)?),
                        });
                    }
                    b.append(true).map_err(arrow)?;
                }
            }
        }
        for (k, b) in BOUND_KEYS.iter().zip(&mut self.bounds) {
            match obj.get(*k) {
                None | Some(Value::Null) => b.append(false).map_err(arrow)?,
                Some(m) => {
                    let (keys, vals) = map_parts(m, k, at)?;
                    for (key, val) in keys.into_iter().zip(vals) {
                        b.keys().append_value(key as i32);
                        match val {
                            Value::Null => b.values().append_null(),
                            x => b.values().append_value(unhex(text(x, k, at)?, k, at)?),
                        }
                    }
                    b.append(true).map_err(arrow)?;
                }
            }
        }
        match obj.get("key-metadata") {
            None | Some(Value::Null) => self.key_metadata.append_null(),
            Some(x) => self.key_metadata.append_value(unhex(
                text(x, "key-metadata", at)?,
                "key-metadata",
                at,
            )?),
        }
        match obj.get("split-offsets") {
            None | Some(Value::Null) => self.split_offsets.append_null(),
            Some(x) => self
                .split_offsets
                .append_value(int_list(x, "split-offsets", at)?.into_iter().map(Some)),
        }
        match obj.get("equality-ids") {
            None | Some(Value::Null) => self.equality_ids.append_null(),
            Some(x) => self.equality_ids.append_value(
                int_list(x, "equality-ids", at)?
                    .into_iter()
                    .map(|v| Some(v as i32)),
            ),
        }
        self.sort_order_id
            .append_option(opt_int(obj, "sort-order-id", at)?.map(|v| v as i32));
        self.first_row_id
            .append_option(opt_int(obj, "first-row-id", at)?);
        match obj.get("referenced-data-file") {
            None | Some(Value::Null) => self.referenced.append_null(),
            Some(x) => self
                .referenced
                .append_value(text(x, "referenced-data-file", at)?),
        }
        self.content_offset
            .append_option(opt_int(obj, "content-offset", at)?);
        self.content_size
            .append_option(opt_int(obj, "content-size-in-bytes", at)?);
        self.sequence_number
            .append_option(opt_int(obj, "data-sequence-number", at)?);
        Ok(())
    }

    fn finish(mut self, layout: &Layout) -> Result<Vec<(Field, ArrayRef)>> {
        let children = std::mem::take(&mut self.partition)
            .into_iter()
            .zip(&layout.fields)
            .map(|(p, (_, ty))| p.finish(ty))
            .collect::<Result<Vec<_>>>()?;
        let part_fields: Fields = children
            .iter()
            .zip(&layout.fields)
            .map(|(a, (id, _))| Field::new(id.to_string(), a.data_type().clone(), true))
            .collect();
        let n = self.path.len();
        let partition: ArrayRef = if children.is_empty() {
            Arc::new(StructArray::new_empty_fields(n, None))
        } else {
            Arc::new(StructArray::try_new(part_fields, children, None).map_err(arrow)?)
        };
        let mut cols: Vec<(&str, ArrayRef)> = vec![
            ("content", Arc::new(self.content.finish())),
            ("file_path", Arc::new(self.path.finish())),
            ("file_format", Arc::new(self.format.finish())),
            ("spec_id", Arc::new(self.spec_id.finish())),
            ("partition", partition),
            ("record_count", Arc::new(self.record_count.finish())),
            ("file_size_in_bytes", Arc::new(self.size.finish())),
        ];
        for (name, mut b) in COUNT_NAMES.iter().zip(self.counts) {
            cols.push((name, Arc::new(b.finish())));
        }
        for (name, mut b) in BOUND_NAMES.iter().zip(self.bounds) {
            cols.push((name, Arc::new(b.finish())));
        }
        cols.push(("key_metadata", Arc::new(self.key_metadata.finish())));
        cols.push(("split_offsets", Arc::new(self.split_offsets.finish())));
        cols.push(("equality_ids", Arc::new(self.equality_ids.finish())));
        cols.push(("sort_order_id", Arc::new(self.sort_order_id.finish())));
        cols.push(("first_row_id", Arc::new(self.first_row_id.finish())));
        cols.push(("referenced_data_file", Arc::new(self.referenced.finish())));
        cols.push(("content_offset", Arc::new(self.content_offset.finish())));
        cols.push((
            "content_size_in_bytes",
            Arc::new(self.content_size.finish()),
        ));
        cols.push(("sequence_number", Arc::new(self.sequence_number.finish())));
        Ok(cols
            .into_iter()
            .map(|(name, a)| (Field::new(name, a.data_type().clone(), true), a))
            .collect())
    }
}

fn arrow(e: arrow_schema::ArrowError) -> Error {
    Error::invalid(format!("building the plan's columns: {e}"))
}

fn batch(cols: Vec<(Field, ArrayRef)>) -> Result<RecordBatch> {
    let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = cols.into_iter().unzip();
    RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), arrays).map_err(arrow)
}

/// Reads a `ScanTasks` object (`file-scan-tasks`, `delete-files`; other members are left to
/// the caller). Malformed input is a parse error naming where it is.
pub fn read_page(data: &[u8], layout: &Layout) -> Result<Page> {
    let value: Value = serde_json::from_slice(data)
        .map_err(|e| Error::parse(format!("a scan tasks response is not JSON: {e}")))?;
    let obj = value
        .as_object()
        .ok_or_else(|| Error::parse("a scan tasks response is not a JSON object"))?;
    let list = |key: &str| -> Result<&[Value]> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(&[]),
            Some(Value::Array(a)) => Ok(a),
            Some(v) => Err(Error::parse(format!(
                "{key}: expected a list, got {}",
                short(v)
            ))),
        }
    };
    let deletes_json = list("delete-files")?;
    let mut deletes = Files::new(layout);
    for (i, d) in deletes_json.iter().enumerate() {
        deletes.push(d, layout, &format!("delete-files[{i}]"))?;
    }
    let n_deletes = deletes_json.len() as i64;
    let mut files = Files::new(layout);
    let mut residual = StringBuilder::new();
    let mut refs = ListBuilder::new(Int32Builder::new()).with_field(Arc::new(Field::new(
        "item",
        arrow_schema::DataType::Int32,
        false,
    )));
    for (i, t) in list("file-scan-tasks")?.iter().enumerate() {
        let at = format!("file-scan-tasks[{i}]");
        let obj = t
            .as_object()
            .ok_or_else(|| Error::parse(format!("{at}: expected an object")))?;
        files.push(
            need(obj, "data-file", &at)?,
            layout,
            &format!("{at}.data-file"),
        )?;
        match obj.get("delete-file-references") {
            None | Some(Value::Null) => {}
            Some(r) => {
                for k in int_list(r, "delete-file-references", &at)? {
                    if !(0..n_deletes).contains(&k) {
                        return Err(Error::parse(format!(
                            "{at}.delete-file-references: {k} out of range"
                        )));
                    }
                    refs.values().append_value(k as i32);
                }
            }
        }
        refs.append(true);
        match obj.get("residual-filter") {
            None => residual.append_null(),
            Some(r) => residual.append_value(r.to_string()),
        }
    }
    let mut cols = files.finish(layout)?;
    cols.push((
        Field::new("residual", arrow_schema::DataType::Utf8, true),
        Arc::new(residual.finish()),
    ));
    let refs = refs.finish();
    cols.push((
        Field::new("delete_file_references", refs.data_type().clone(), false),
        Arc::new(refs),
    ));
    let plan_tasks = list("plan-tasks")?
        .iter()
        .enumerate()
        .map(|(i, v)| text(v, &format!("plan-tasks[{i}]"), "").map(str::to_string))
        .collect::<Result<_>>()?;
    Ok(Page {
        plan_tasks,
        tasks: batch(cols)?,
        deletes: batch(deletes.finish(layout)?)?,
    })
}
