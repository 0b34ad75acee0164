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
use std::borrow::Cow;
use std::collections::HashMap;

use arrow_array::types::Int32Type;
use arrow_array::DictionaryArray;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

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
    fn push(&mut self, f: &FileDe<'_>, layout: &Layout, at: &dyn Fn() -> String) -> Result<()> {
        let spec_id = f.spec_id;
        let positions = i32::try_from(spec_id)
            .ok()
            .and_then(|s| layout.specs.get(&s))
            .ok_or_else(|| {
                Error::parse(format!("{}: unknown partition spec id {spec_id}", at()))
            })?;
        let content = match f.content.as_ref() {
            "data" | "DATA" => 0,
            "position-deletes" | "POSITION_DELETES" => 1,
            "equality-deletes" | "EQUALITY_DELETES" => 2,
            c => {
                return Err(Error::parse(format!(
                    "{}.content: unknown content {c:?}",
                    at()
                )))
            }
        };
        // the partition: an array in spec order, or (1.10) an object by field id
        let mut values: Vec<Option<&Value>> = vec![None; layout.fields.len()];
        match &f.partition {
            None => {
                if !positions.is_empty() {
                    return Err(Error::parse(format!(
                        "{}.partition: expected {} values, got none",
                        at(),
                        positions.len()
                    )));
                }
            }
            Some(Value::Array(a)) => {
                if a.len() != positions.len() {
                    return Err(Error::parse(format!(
                        "{}.partition: expected {} values, got {}",
                        at(),
                        positions.len(),
                        a.len()
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
                    "{}.partition: unexpected value {}",
                    at(),
                    short(other)
                )))
            }
        }
        for ((part, value), (_, ty)) in self.partition.iter_mut().zip(values).zip(&layout.fields) {
            match value {
                None | Some(Value::Null) => part.push_null(),
                Some(x) => {
                    let lit = json::from_json(x, &Type::Primitive(ty.clone()))
                        .map_err(|e| Error::parse(format!("{}.partition: {e}", at())))?;
                    part.push(lit)
                }
            }
        }
        self.content.append_value(content);
        self.path.append_value(f.file_path.as_ref());
        self.format.append_value(f.file_format.to_ascii_uppercase());
        self.spec_id.append_value(spec_id as i32);
        self.record_count.append_value(f.record_count);
        self.size.append_value(f.file_size_in_bytes);
        let counts = [
            &f.column_sizes,
            &f.value_counts,
            &f.null_value_counts,
            &f.nan_value_counts,
        ];
        for ((m, b), k) in counts.into_iter().zip(&mut self.counts).zip(COUNT_KEYS) {
            match m {
                None => b.append(false).map_err(arrow)?,
                Some(m) => {
                    if m.keys.len() != m.values.len() {
                        return Err(Error::parse(format!(
                            "{}.{k}: keys and values differ in length",
                            at()
                        )));
                    }
                    for (key, val) in m.keys.iter().zip(&m.values) {
                        b.keys().append_value(*key);
                        b.values().append_option(*val);
                    }
                    b.append(true).map_err(arrow)?;
                }
            }
        }
        for ((m, b), k) in [&f.lower_bounds, &f.upper_bounds]
            .into_iter()
            .zip(&mut self.bounds)
            .zip(BOUND_KEYS)
        {
            match m {
                None => b.append(false).map_err(arrow)?,
                Some(m) => {
                    if m.keys.len() != m.values.len() {
                        return Err(Error::parse(format!(
                            "{}.{k}: keys and values differ in length",
                            at()
                        )));
                    }
                    for (key, val) in m.keys.iter().zip(&m.values) {
                        b.keys().append_value(*key);
                        match val {
                            None => b.values().append_null(),
                            Some(x) => b.values().append_value(unhex(x, k, &at())?),
                        }
                    }
                    b.append(true).map_err(arrow)?;
                }
            }
        }
        match &f.key_metadata {
            None => self.key_metadata.append_null(),
            Some(x) => self
                .key_metadata
                .append_value(unhex(x, "key-metadata", &at())?),
        }
        match &f.split_offsets {
            None => self.split_offsets.append_null(),
            Some(x) => self.split_offsets.append_value(x.iter().map(|v| Some(*v))),
        }
        match &f.equality_ids {
            None => self.equality_ids.append_null(),
            Some(x) => self.equality_ids.append_value(x.iter().map(|v| Some(*v))),
        }
        self.sort_order_id.append_option(f.sort_order_id);
        self.first_row_id.append_option(f.first_row_id);
        self.referenced
            .append_option(f.referenced_data_file.as_deref());
        self.content_offset.append_option(f.content_offset);
        self.content_size.append_option(f.content_size_in_bytes);
        self.sequence_number.append_option(f.data_sequence_number);
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

#[derive(Deserialize)]
struct MapDe<T> {
    keys: Vec<i32>,
    values: Vec<Option<T>>,
}

/// A content file as the wire has it (strings borrowed from the body unless escaped).
#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct FileDe<'a> {
    spec_id: i64,
    #[serde(borrow)]
    content: Cow<'a, str>,
    #[serde(borrow)]
    file_path: Cow<'a, str>,
    #[serde(borrow)]
    file_format: Cow<'a, str>,
    #[serde(default)]
    partition: Option<Value>,
    file_size_in_bytes: i64,
    record_count: i64,
    #[serde(default)]
    column_sizes: Option<MapDe<i64>>,
    #[serde(default)]
    value_counts: Option<MapDe<i64>>,
    #[serde(default)]
    null_value_counts: Option<MapDe<i64>>,
    #[serde(default)]
    nan_value_counts: Option<MapDe<i64>>,
    #[serde(default, borrow)]
    lower_bounds: Option<MapDe<Cow<'a, str>>>,
    #[serde(default, borrow)]
    upper_bounds: Option<MapDe<Cow<'a, str>>>,
    #[serde(default, borrow)]
    key_metadata: Option<Cow<'a, str>>,
    #[serde(default)]
    split_offsets: Option<Vec<i64>>,
    #[serde(default)]
    equality_ids: Option<Vec<i32>>,
    #[serde(default)]
    sort_order_id: Option<i32>,
    #[serde(default)]
    first_row_id: Option<i64>,
    #[serde(default, borrow)]
    referenced_data_file: Option<Cow<'a, str>>,
    #[serde(default)]
    content_offset: Option<i64>,
    #[serde(default)]
    content_size_in_bytes: Option<i64>,
    #[serde(default)]
    data_sequence_number: Option<i64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct TaskDe<'a> {
    #[serde(borrow)]
    data_file: FileDe<'a>,
    #[serde(default)]
    delete_file_references: Option<Vec<i64>>,
    #[serde(default, borrow)]
    residual_filter: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct PageDe<'a> {
    #[serde(default, borrow)]
    file_scan_tasks: Option<Vec<TaskDe<'a>>>,
    #[serde(default, borrow)]
    delete_files: Option<Vec<FileDe<'a>>>,
    #[serde(default)]
    plan_tasks: Option<Vec<String>>,
}

/// Reads a `ScanTasks` object (`file-scan-tasks`, `delete-files`, `plan-tasks`; other
/// members are left to the caller). Malformed input is a parse error naming where it is.
pub fn read_page(data: &[u8], layout: &Layout) -> Result<Page> {
    // serde would take a JSON array for the struct too
    if data.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(Error::parse("a scan tasks response is not a JSON object"));
    }
    let page: PageDe<'_> = serde_json::from_slice(data)
        .map_err(|e| Error::parse(format!("a scan tasks response is malformed: {e}")))?;
    let deletes_de = page.delete_files.unwrap_or_default();
    let mut deletes = Files::new(layout);
    for (i, d) in deletes_de.iter().enumerate() {
        deletes.push(d, layout, &|| format!("delete-files[{i}]"))?;
    }
    let n_deletes = deletes_de.len() as i64;
    let mut files = Files::new(layout);
    // residuals: few distinct texts, as a dictionary
    let mut texts: HashMap<&str, i32> = HashMap::new();
    let mut text_values = StringBuilder::new();
    let mut keys = Int32Builder::new();
    let mut refs = ListBuilder::new(Int32Builder::new()).with_field(Arc::new(Field::new(
        "item",
        arrow_schema::DataType::Int32,
        false,
    )));
    for (i, t) in page.file_scan_tasks.unwrap_or_default().iter().enumerate() {
        files.push(&t.data_file, layout, &|| {
            format!("file-scan-tasks[{i}].data-file")
        })?;
        for &k in t.delete_file_references.iter().flatten() {
            if !(0..n_deletes).contains(&k) {
                return Err(Error::parse(format!(
                    "file-scan-tasks[{i}].delete-file-references: {k} out of range"
                )));
            }
            refs.values().append_value(k as i32);
        }
        refs.append(true);
        match t.residual_filter {
            None => keys.append_null(),
            Some(r) => {
                let next = texts.len() as i32;
                let k = *texts.entry(r.get()).or_insert_with(|| {
                    text_values.append_value(r.get());
                    next
                });
                keys.append_value(k);
            }
        }
    }
    let residual =
        DictionaryArray::<Int32Type>::try_new(keys.finish(), Arc::new(text_values.finish()))
            .map_err(arrow)?;
    let mut cols = files.finish(layout)?;
    cols.push((
        Field::new("residual", residual.data_type().clone(), true),
        Arc::new(residual),
    ));
    let refs = refs.finish();
    cols.push((
        Field::new("delete_file_references", refs.data_type().clone(), false),
        Arc::new(refs),
    ));
    Ok(Page {
        plan_tasks: page.plan_tasks.unwrap_or_default(),
        tasks: batch(cols)?,
        deletes: batch(deletes.finish(layout)?)?,
    })
}
