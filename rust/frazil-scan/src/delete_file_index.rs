//! Delete files attached to data files (spec "Scan Planning"; the facts follow Java's
//! `DeleteFileIndex`):
//!
//! * a deletion vector (a position delete in Puffin format) applies to exactly the data file
//!   named by its `referenced_data_file`, and then position delete files are ignored for that
//!   data file; at most one DV per data file, and its data sequence number must not be below the
//!   data file's;
//! * a position delete file applies to data files with data sequence number <= its own: to the
//!   file named by `referenced_data_file` when that is set, else to files of the same spec and
//!   partition whose path lies within its `file_path` bounds;
//! * an equality delete file applies to data files with data sequence number < its own, in the
//!   same spec and partition, or to all data files when its spec is unpartitioned (global);
//!   data files whose metrics show no overlap with the delete's on an equality field are spared.
//!
//! Delete entries are first selected by the row filter like data entries (live, partition
//! projection, metrics); an equality delete file is only pruned on its equality fields: its
//! other columns do not say which rows it deletes.

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, Int32Array, MapArray, RecordBatch, StructArray};
use arrow_schema::DataType;
use frazil_values::{Error, PrimitiveType, Result};

use crate::expr::{Expr, Schema};
use crate::project::PartitionSpec;
use frazil_values::bound::{compare, decode_bound};

/// Content of a manifest entry's file (spec "Manifests").
pub const CONTENT_POSITION_DELETES: i32 = 1;
pub const CONTENT_EQUALITY_DELETES: i32 = 2;
/// Field id of `file_path` in position delete files (spec "Position Delete Files").
pub const DELETE_FILE_PATH_ID: i32 = 2147483546;

/// The deletes of each selected data entry of a manifest: entry `i`'s delete files are
/// `indices[offsets[i]..offsets[i + 1]]`, positions in the concatenation (in input order) of
/// the delete manifests' selected entries.
#[derive(Debug, Clone)]
pub struct TaskDeletes {
    pub offsets: Int32Array,
    pub indices: Int32Array,
}

impl TaskDeletes {
    /// Each entry's delete file indices as one `list<int32>` array (the offsets are valid:
    /// one more than entries, ascending from 0).
    pub fn into_list_array(self) -> arrow_array::ListArray {
        let item = std::sync::Arc::new(arrow_schema::Field::new_list_field(DataType::Int32, false));
        let offsets = arrow_buffer::OffsetBuffer::new(self.offsets.values().clone());
        arrow_array::ListArray::new(item, offsets, std::sync::Arc::new(self.indices), None)
    }

    pub fn none(n: usize) -> TaskDeletes {
        TaskDeletes {
            offsets: Int32Array::from(vec![0; n + 1]),
            indices: Int32Array::from(Vec::<i32>::new()),
        }
    }
}

/// The `data_file` columns of a manifest batch that delete attachment reads.
pub(crate) struct FileColumns<'a> {
    pub sequence_number: Option<&'a arrow_array::Int64Array>,
    pub content: Option<&'a Int32Array>,
    pub file_path: ArrayRef,
    pub file_format: Option<ArrayRef>,
    pub referenced_data_file: Option<ArrayRef>,
    pub equality_ids: Option<&'a arrow_array::ListArray>,
    pub value_counts: Option<&'a MapArray>,
    pub null_counts: Option<&'a MapArray>,
    pub lower_bounds: Option<&'a MapArray>,
    pub upper_bounds: Option<&'a MapArray>,
    pub partition: Option<&'a StructArray>,
}

fn map_of<'a>(s: &'a StructArray, name: &str) -> Option<&'a MapArray> {
    s.column_by_name(name).and_then(|c| c.as_map_opt())
}

fn str_bytes(a: &ArrayRef, i: usize) -> Option<&[u8]> {
    if a.is_null(i) {
        return None;
    }
    match a.data_type() {
        DataType::Utf8 => Some(a.as_string::<i32>().value(i).as_bytes()),
        DataType::LargeUtf8 => Some(a.as_string::<i64>().value(i).as_bytes()),
        DataType::Utf8View => Some(a.as_string_view().value(i).as_bytes()),
        _ => None,
    }
}

fn string_col(s: &StructArray, name: &str) -> Option<ArrayRef> {
    s.column_by_name(name)
        .filter(|c| {
            matches!(
                c.data_type(),
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            )
        })
        .cloned()
}

impl<'a> FileColumns<'a> {
    pub fn new(batch: &'a RecordBatch) -> Result<FileColumns<'a>> {
        let df = batch
            .column_by_name("data_file")
            .and_then(|c| c.as_struct_opt())
            .ok_or_else(|| Error::invalid("manifest batch has no data_file struct column"))?;
        Ok(FileColumns {
            sequence_number: batch
                .column_by_name("sequence_number")
                .and_then(|c| c.as_primitive_opt::<Int64Type>()),
            content: df
                .column_by_name("content")
                .and_then(|c| c.as_primitive_opt::<Int32Type>()),
            file_path: string_col(df, "file_path")
                .ok_or_else(|| Error::invalid("manifest batch has no data_file.file_path"))?,
            file_format: string_col(df, "file_format"),
            referenced_data_file: string_col(df, "referenced_data_file"),
            equality_ids: df
                .column_by_name("equality_ids")
                .and_then(|c| c.as_list_opt()),
            value_counts: map_of(df, "value_counts"),
            null_counts: map_of(df, "null_value_counts"),
            lower_bounds: map_of(df, "lower_bounds"),
            upper_bounds: map_of(df, "upper_bounds"),
            partition: df
                .column_by_name("partition")
                .and_then(|c| c.as_struct_opt()),
        })
    }

    /// The data sequence number; a null one (v1 tables) is 0, as Java reads it.
    pub fn seq(&self, i: usize) -> i64 {
        self.sequence_number
            .filter(|s| !s.is_null(i))
            .map_or(0, |s| s.value(i))
    }

    pub fn content(&self, i: usize) -> i32 {
        self.content
            .filter(|c| !c.is_null(i))
            .map_or(0, |c| c.value(i))
    }

    pub fn path(&self, i: usize) -> &[u8] {
        str_bytes(&self.file_path, i).unwrap_or_default()
    }

    fn is_puffin(&self, i: usize) -> bool {
        self.file_format
            .as_ref()
            .and_then(|f| str_bytes(f, i))
            .is_some_and(|f| f.eq_ignore_ascii_case(b"puffin"))
    }

    fn referenced(&self, i: usize) -> Option<&[u8]> {
        str_bytes(self.referenced_data_file.as_ref()?, i)
    }

    pub fn equality_ids(&self, i: usize) -> Vec<i32> {
        let Some(list) = self.equality_ids.filter(|l| !l.is_null(i)) else {
            return Vec::new();
        };
        let values = list.value(i);
        match values.as_primitive_opt::<Int32Type>() {
            Some(v) => v.iter().flatten().collect(),
            None => match values.as_primitive_opt::<Int64Type>() {
                Some(v) => v.iter().flatten().map(|x| x as i32).collect(),
                None => Vec::new(),
            },
        }
    }
}

/// The value of key `id` in row `i` of a map keyed by int32 field ids, as a values index.
fn map_index(map: Option<&MapArray>, i: usize, id: i32) -> Option<usize> {
    let map = map?;
    if map.is_null(i) {
        return None;
    }
    let keys = map.keys().as_primitive_opt::<Int32Type>()?;
    let offsets = map.value_offsets();
    let (s, e) = (offsets[i] as usize, offsets[i + 1] as usize);
    keys.values()[s..e]
        .iter()
        .position(|k| *k == id)
        .map(|p| s + p)
        .filter(|j| !map.values().is_null(*j))
}

fn map_count(map: Option<&MapArray>, i: usize, id: i32) -> Option<i64> {
    let j = map_index(map, i, id)?;
    map?.values()
        .as_primitive_opt::<Int64Type>()
        .map(|v| v.value(j))
}

fn map_bytes(map: Option<&MapArray>, i: usize, id: i32) -> Option<&[u8]> {
    let j = map_index(map, i, id)?;
    let values = map?.values();
    match values.data_type() {
        DataType::Binary => Some(values.as_binary::<i32>().value(j)),
        DataType::LargeBinary => Some(values.as_binary::<i64>().value(j)),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Partition keys

/// Encodes partition tuples as bytes that are equal exactly when Java's `StructLikeWrapper`
/// calls the tuples equal: integers widened (a promoted int reads equal to its long), floats by
/// bits with one NaN (Java's `Double.compare`: NaN = NaN, -0.0 != 0.0), strings and binaries
/// length-prefixed, and every field of the spec, unknown transforms included.
pub(crate) struct PartitionKeys {
    spec_id: i32,
    columns: Vec<Option<ArrayRef>>,
}

fn field_id_of(f: &arrow_schema::Field) -> Option<i32> {
    f.metadata().get("PARQUET:field_id")?.parse().ok()
}

impl PartitionKeys {
    pub fn new(spec: &PartitionSpec, partition: Option<&StructArray>) -> PartitionKeys {
        let columns = spec
            .fields
            .iter()
            .map(|pf| {
                let p = partition?;
                let fields = p.fields();
                let pos = fields
                    .iter()
                    .position(|f| field_id_of(f) == Some(pf.field_id))
                    .or_else(|| fields.iter().position(|f| f.name() == &pf.name))?;
                let col = p.column(pos).clone();
                // A null tuple reads as all fields null.
                Some(match p.nulls() {
                    Some(nulls) if nulls.null_count() > 0 => {
                        let merged = arrow_buffer::NullBuffer::union(Some(nulls), col.nulls());
                        let data = col.to_data().into_builder().nulls(merged).build().ok()?;
                        arrow_array::make_array(data)
                    }
                    _ => col,
                })
            })
            .collect();
        PartitionKeys {
            spec_id: spec.spec_id,
            columns,
        }
    }

    pub fn write(&self, i: usize, out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        out.extend_from_slice(&self.spec_id.to_le_bytes());
        for col in &self.columns {
            let Some(a) = col else {
                out.push(2); // the manifest lacks the field: it never equals a present value
                continue;
            };
            if a.is_null(i) {
                out.push(0);
                continue;
            }
            out.push(1);
            let long = |out: &mut Vec<u8>, v: i64| out.extend_from_slice(&v.to_le_bytes());
            let double = |out: &mut Vec<u8>, v: f64| {
                let bits = if v.is_nan() {
                    f64::NAN.to_bits()
                } else {
                    v.to_bits()
                };
                out.extend_from_slice(&bits.to_le_bytes());
            };
            let bytes = |out: &mut Vec<u8>, b: &[u8]| {
                out.extend_from_slice(&(b.len() as u64).to_le_bytes());
                out.extend_from_slice(b);
            };
            use arrow_array::types::*;
            match a.data_type() {
                DataType::Boolean => out.push(a.as_boolean().value(i) as u8),
                DataType::Int32 => long(out, a.as_primitive::<Int32Type>().value(i) as i64),
                DataType::Date32 => long(out, a.as_primitive::<Date32Type>().value(i) as i64),
                DataType::Int64 => long(out, a.as_primitive::<Int64Type>().value(i)),
                DataType::Time64(_) | DataType::Timestamp(_, _) => {
                    let data = a.to_data();
                    let v = data.buffers()[0].typed_data::<i64>()[data.offset() + i];
                    long(out, v)
                }
                DataType::Float32 => double(out, a.as_primitive::<Float32Type>().value(i) as f64),
                DataType::Float64 => double(out, a.as_primitive::<Float64Type>().value(i)),
                DataType::Decimal128(_, _) => out
                    .extend_from_slice(&a.as_primitive::<Decimal128Type>().value(i).to_le_bytes()),
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
                    bytes(out, str_bytes(a, i).unwrap_or_default())
                }
                DataType::Binary => bytes(out, a.as_binary::<i32>().value(i)),
                DataType::LargeBinary => bytes(out, a.as_binary::<i64>().value(i)),
                DataType::FixedSizeBinary(_) => bytes(out, a.as_fixed_size_binary().value(i)),
                DataType::Null => {
                    out.pop();
                    out.push(0);
                }
                other => {
                    return Err(Error::unsupported(format!(
                        "partition values of Arrow type {other} cannot be matched to delete files"
                    )))
                }
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The index

#[derive(Debug, Clone)]
struct PosDelete {
    index: i32,
    seq: i64,
    path_lower: Option<Vec<u8>>,
    path_upper: Option<Vec<u8>>,
}

#[derive(Debug, Clone)]
struct EqField {
    id: i32,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    nulls: Option<i64>,
    values: Option<i64>,
}

#[derive(Debug, Clone)]
struct EqDelete {
    index: i32,
    seq: i64,
    fields: Vec<EqField>,
}

#[derive(Debug, Clone)]
struct Dv {
    index: i32,
    seq: i64,
}

/// The selected delete files of a scan, indexed for attachment to data files.
#[derive(Debug, Default)]
pub struct DeleteIndex {
    global_eq: Vec<EqDelete>,
    eq_by_partition: HashMap<Vec<u8>, Vec<EqDelete>>,
    pos_by_partition: HashMap<Vec<u8>, Vec<PosDelete>>,
    pos_by_path: HashMap<Vec<u8>, Vec<PosDelete>>,
    dv_by_path: HashMap<Vec<u8>, Dv>,
    len: usize,
}

impl DeleteIndex {
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Indexes the selected entries of delete manifests: `manifests` pairs each manifest's spec
    /// with its batch of selected live delete entries, in the order that numbers them.
    pub fn build(manifests: &[(&PartitionSpec, &RecordBatch)]) -> Result<DeleteIndex> {
        let mut index = DeleteIndex::default();
        let mut key = Vec::new();
        let mut next: i32 = 0;
        for (spec, batch) in manifests {
            let cols = FileColumns::new(batch)?;
            let keys = PartitionKeys::new(spec, cols.partition);
            for i in 0..batch.num_rows() {
                let pos = next;
                next = next
                    .checked_add(1)
                    .ok_or_else(|| Error::invalid("too many delete files (over 2^31)"))?;
                let seq = cols.seq(i);
                match cols.content(i) {
                    CONTENT_POSITION_DELETES => {
                        let path = cols.path(i);
                        if cols.is_puffin(i) {
                            let Some(target) = cols.referenced(i) else {
                                return Err(Error::invalid(format!(
                                    "deletion vector {} has no referenced_data_file",
                                    String::from_utf8_lossy(path)
                                )));
                            };
                            let dv = Dv { index: pos, seq };
                            if index.dv_by_path.insert(target.to_vec(), dv).is_some() {
                                return Err(Error::invalid(format!(
                                    "more than one deletion vector for data file {}",
                                    String::from_utf8_lossy(target)
                                )));
                            }
                            continue;
                        }
                        let d = PosDelete {
                            index: pos,
                            seq,
                            path_lower: map_bytes(cols.lower_bounds, i, DELETE_FILE_PATH_ID)
                                .map(<[u8]>::to_vec),
                            path_upper: map_bytes(cols.upper_bounds, i, DELETE_FILE_PATH_ID)
                                .map(<[u8]>::to_vec),
                        };
                        match cols.referenced(i) {
                            Some(target) => index
                                .pos_by_path
                                .entry(target.to_vec())
                                .or_default()
                                .push(d),
                            None => {
                                keys.write(i, &mut key)?;
                                index
                                    .pos_by_partition
                                    .entry(key.clone())
                                    .or_default()
                                    .push(d)
                            }
                        }
                    }
                    CONTENT_EQUALITY_DELETES => {
                        let fields = cols
                            .equality_ids(i)
                            .into_iter()
                            .map(|id| EqField {
                                id,
                                lower: map_bytes(cols.lower_bounds, i, id).map(<[u8]>::to_vec),
                                upper: map_bytes(cols.upper_bounds, i, id).map(<[u8]>::to_vec),
                                nulls: map_count(cols.null_counts, i, id),
                                values: map_count(cols.value_counts, i, id),
                            })
                            .collect();
                        let d = EqDelete {
                            index: pos,
                            seq,
                            fields,
                        };
                        if spec.is_unpartitioned() {
                            index.global_eq.push(d);
                        } else {
                            keys.write(i, &mut key)?;
                            index
                                .eq_by_partition
                                .entry(key.clone())
                                .or_default()
                                .push(d);
                        }
                    }
                    other => {
                        return Err(Error::invalid(format!(
                            "delete manifest entry {} has content {other}, not a delete file",
                            String::from_utf8_lossy(cols.path(i))
                        )))
                    }
                }
            }
        }
        index.len = next as usize;
        index.global_eq.sort_by_key(|d| d.seq);
        index
            .eq_by_partition
            .values_mut()
            .for_each(|v| v.sort_by_key(|d| d.seq));
        index
            .pos_by_partition
            .values_mut()
            .for_each(|v| v.sort_by_key(|d| d.seq));
        index
            .pos_by_path
            .values_mut()
            .for_each(|v| v.sort_by_key(|d| d.seq));
        Ok(index)
    }

    /// The deletes of the rows `rows` of a data manifest batch written with `spec`.
    pub fn attach(
        &self,
        spec: &PartitionSpec,
        schema: &Schema,
        batch: &RecordBatch,
        rows: &[usize],
    ) -> Result<TaskDeletes> {
        if self.is_empty() {
            return Ok(TaskDeletes::none(rows.len()));
        }
        let cols = FileColumns::new(batch)?;
        let keys = PartitionKeys::new(spec, cols.partition);
        let partitioned_deletes =
            !self.eq_by_partition.is_empty() || !self.pos_by_partition.is_empty();
        let mut key = Vec::new();
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        let mut indices = Vec::new();
        offsets.push(0i32);
        for &i in rows {
            let seq = cols.seq(i);
            let path = cols.path(i);
            if partitioned_deletes {
                keys.write(i, &mut key)?;
            }
            let eqs = self.global_eq.iter().chain(
                partitioned_deletes
                    .then(|| self.eq_by_partition.get(key.as_slice()))
                    .flatten()
                    .into_iter()
                    .flatten(),
            );
            for d in eqs {
                if d.seq > seq && eq_may_apply(d, &cols, i, schema) {
                    indices.push(d.index);
                }
            }
            if let Some(dv) = self.dv_by_path.get(path) {
                if dv.seq < seq {
                    return Err(Error::invalid(format!(
                        "deletion vector for {} has data sequence number {}, below the data \
                         file's {seq}",
                        String::from_utf8_lossy(path),
                        dv.seq
                    )));
                }
                indices.push(dv.index);
            } else {
                if partitioned_deletes {
                    if let Some(list) = self.pos_by_partition.get(key.as_slice()) {
                        let start = list.partition_point(|d| d.seq < seq);
                        for d in &list[start..] {
                            if path_within(path, d) {
                                indices.push(d.index);
                            }
                        }
                    }
                }
                if let Some(list) = self.pos_by_path.get(path) {
                    let start = list.partition_point(|d| d.seq < seq);
                    indices.extend(list[start..].iter().map(|d| d.index));
                }
            }
            offsets.push(
                i32::try_from(indices.len())
                    .map_err(|_| Error::invalid("too many attached delete files (over 2^31)"))?,
            );
        }
        Ok(TaskDeletes {
            offsets: Int32Array::from(offsets),
            indices: Int32Array::from(indices),
        })
    }
}

/// Whether a data file path lies within a position delete file's `file_path` bounds (UTF-8
/// byte order, which is code point order).
fn path_within(path: &[u8], d: &PosDelete) -> bool {
    d.path_lower.as_deref().is_none_or(|lo| path >= lo)
        && d.path_upper.as_deref().is_none_or(|up| path <= up)
}

/// Whether an equality delete file may delete rows of data file `i`: per equality field, the
/// null counts and value ranges must allow a common value (Java's
/// `canContainEqDeletesForFile`). Unknown fields and missing metrics may always match.
fn eq_may_apply(d: &EqDelete, data: &FileColumns<'_>, i: usize, schema: &Schema) -> bool {
    for f in &d.fields {
        let Some(info) = schema.fields.get(&f.id) else {
            continue; // not a primitive of the schema (nested, dropped): assume a match
        };
        let required = info.required;
        let data_nulls = map_count(data.null_counts, i, f.id);
        let data_values = map_count(data.value_counts, i, f.id);
        let contains_null = |n: Option<i64>| !required && n.is_none_or(|n| n > 0);
        let all_non_null = |n: Option<i64>| required || n.is_some_and(|n| n <= 0);
        let all_null = |n: Option<i64>, v: Option<i64>| {
            !required && matches!((n, v), (Some(n), Some(v)) if n == v)
        };
        if contains_null(data_nulls) && contains_null(f.nulls) {
            continue; // null rows are deleted and the data has some
        }
        if all_null(data_nulls, data_values) && all_non_null(f.nulls) {
            return false;
        }
        if all_null(f.nulls, f.values) && all_non_null(data_nulls) {
            return false;
        }
        let (Some(dl), Some(du), Some(xl), Some(xu)) = (
            map_bytes(data.lower_bounds, i, f.id),
            map_bytes(data.upper_bounds, i, f.id),
            f.lower.as_deref(),
            f.upper.as_deref(),
        ) else {
            continue;
        };
        if !ranges_overlap(&info.ty, dl, du, xl, xu) {
            return false;
        }
    }
    true
}

fn ranges_overlap(ty: &PrimitiveType, dl: &[u8], du: &[u8], xl: &[u8], xu: &[u8]) -> bool {
    let (Some(dl), Some(du), Some(xl), Some(xu)) = (
        decode_bound(dl, ty),
        decode_bound(du, ty),
        decode_bound(xl, ty),
        decode_bound(xu, ty),
    ) else {
        return true;
    };
    let le = |a, b| compare(&a, &b).is_none_or(|o| o != std::cmp::Ordering::Greater);
    le(xl, du) && le(dl, xu)
}

/// The filter restricted to predicates on `ids` (others become true): what may prune an
/// equality delete file by its own metrics. `expr` must be free of NOT (`rewrite_not`), so
/// that widening a leaf widens the whole.
pub fn restrict_to_fields(expr: &Expr, ids: &[i32]) -> Expr {
    match expr {
        Expr::True | Expr::False => expr.clone(),
        Expr::And(a, b) => Expr::and(restrict_to_fields(a, ids), restrict_to_fields(b, ids)),
        Expr::Or(a, b) => Expr::or(restrict_to_fields(a, ids), restrict_to_fields(b, ids)),
        Expr::Not(_) => Expr::True,
        Expr::Pred(p) if ids.contains(&p.field_id) => expr.clone(),
        Expr::Pred(_) => Expr::True,
    }
}
