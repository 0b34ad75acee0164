//! Sequence number and first row id inheritance (spec "Sequence Number Inheritance", "First Row
//! ID Inheritance"): null values in a manifest's entries take their values from the manifest's
//! entry in the manifest list.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StructArray};
use frazil_values::{Error, Result};

/// What a manifest's entries inherit from its manifest list entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ManifestFile {
    pub added_snapshot_id: Option<i64>,
    /// The manifest's sequence number; 0 for manifests of v1 manifest lists.
    pub sequence_number: Option<i64>,
    pub first_row_id: Option<i64>,
    /// What the entry says of the file (length, counts by status), checked on read.
    pub promised: crate::promised::Promised,
}

const ADDED: i32 = 1;
const DATA: i32 = 0;

impl ManifestFile {
    /// The entry at `row` of a manifest list ([`crate::read_manifest_list`]'s columns; a
    /// missing or null column is unknown).
    pub fn from_list_row(list: &RecordBatch, row: usize) -> ManifestFile {
        let get = |name: &str| -> Option<i64> {
            let c = list.column_by_name(name)?;
            if row >= c.len() || c.is_null(row) {
                return None;
            }
            if let Some(a) = c.as_primitive_opt::<Int64Type>() {
                return Some(a.value(row));
            }
            c.as_primitive_opt::<Int32Type>()
                .map(|a| a.value(row) as i64)
        };
        ManifestFile {
            added_snapshot_id: get("added_snapshot_id"),
            sequence_number: get("sequence_number"),
            first_row_id: get("first_row_id"),
            promised: crate::Promised {
                length: get("manifest_length"),
                added_files: get("added_files_count"),
                existing_files: get("existing_files_count"),
                deleted_files: get("deleted_files_count"),
                added_rows: get("added_rows_count"),
                existing_rows: get("existing_rows_count"),
                deleted_rows: get("deleted_rows_count"),
            },
        }
    }
}

fn column<'a>(batch: &'a RecordBatch, name: &str) -> Option<(usize, &'a ArrayRef)> {
    let i = batch.schema().index_of(name).ok()?;
    Some((i, batch.column(i)))
}

fn replace_nulls(
    array: &ArrayRef,
    value: Option<i64>,
    applies: impl Fn(usize) -> bool,
) -> Result<ArrayRef> {
    let Some(value) = value else {
        return Ok(array.clone());
    };
    let a = array
        .as_primitive_opt::<Int64Type>()
        .ok_or_else(|| Error::decode("inherited column is not a long"))?;
    if a.null_count() == 0 {
        return Ok(array.clone());
    }
    let out: Int64Array = (0..a.len())
        .map(|i| {
            if a.is_null(i) {
                applies(i).then_some(value)
            } else {
                Some(a.value(i))
            }
        })
        .collect();
    Ok(Arc::new(out.with_data_type(array.data_type().clone())))
}

/// Applies inheritance to a batch of `manifest_entry` columns.
pub fn inherit(batch: RecordBatch, manifest: &ManifestFile) -> Result<RecordBatch> {
    let schema = batch.schema();
    let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
    let status = column(&batch, "status")
        .and_then(|(_, a)| a.as_primitive_opt::<Int32Type>().cloned())
        .ok_or_else(|| Error::decode("manifest has no status column"))?;
    let seq = manifest.sequence_number;
    // Java also fills sequence numbers of non-added entries in v1 manifests (sequence number 0),
    // which is the spec's "default to 0" for v1.
    let seq_applies = |i: usize| seq == Some(0) || status.value(i) == ADDED;
    if let Some((i, a)) = column(&batch, "snapshot_id") {
        columns[i] = replace_nulls(a, manifest.added_snapshot_id, |_| true)?;
    }
    for name in ["sequence_number", "file_sequence_number"] {
        if let Some((i, a)) = column(&batch, name) {
            columns[i] = replace_nulls(a, seq, seq_applies)?;
        }
    }
    if let (Some(first), Some((i, df))) = (manifest.first_row_id, column(&batch, "data_file")) {
        let df = df
            .as_struct_opt()
            .ok_or_else(|| Error::decode("data_file is not a struct"))?;
        columns[i] = Arc::new(inherit_first_row_id(df, first)?);
    }
    RecordBatch::try_new(schema, columns)
        .map_err(|e| Error::decode(format!("inheritance produced inconsistent columns: {e}")))
}

/// `first_row_id` of data files: the manifest's `first_row_id` plus the record counts of the
/// preceding data files whose `first_row_id` was null too.
fn inherit_first_row_id(df: &StructArray, first: i64) -> Result<StructArray> {
    let (fields, mut children, nulls) = df.clone().into_parts();
    let find = |name: &str| fields.iter().position(|f| f.name() == name);
    let (Some(fi), Some(ci), Some(ri)) =
        (find("first_row_id"), find("content"), find("record_count"))
    else {
        return Ok(StructArray::new(fields, children, nulls));
    };
    let ids = children[fi]
        .as_primitive_opt::<Int64Type>()
        .ok_or_else(|| Error::decode("first_row_id is not a long"))?;
    let content = children[ci]
        .as_primitive_opt::<Int32Type>()
        .ok_or_else(|| Error::decode("content is not an int"))?;
    let counts = children[ri]
        .as_primitive_opt::<Int64Type>()
        .ok_or_else(|| Error::decode("record_count is not a long"))?;
    let mut next = first;
    let out: Int64Array = (0..ids.len())
        .map(|i| {
            if ids.is_valid(i) {
                return Ok(Some(ids.value(i)));
            }
            if content.is_null(i) || content.value(i) != DATA {
                return Ok(None);
            }
            let id = next;
            let count = if counts.is_valid(i) {
                counts.value(i)
            } else {
                0
            };
            next = next
                .checked_add(count)
                .ok_or_else(|| Error::decode("first_row_id overflows a long"))?;
            Ok(Some(id))
        })
        .collect::<Result<_>>()?;
    children[fi] = Arc::new(out);
    StructArray::try_new(fields, children, nulls)
        .map_err(|e| Error::decode(format!("inheritance produced an inconsistent struct: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, StructArray};
    use arrow_schema::{DataType, Field, Fields, Schema};

    fn batch(
        status: Vec<i32>,
        seq: Vec<Option<i64>>,
        content: Vec<i32>,
        counts: Vec<i64>,
        ids: Vec<Option<i64>>,
    ) -> RecordBatch {
        let n = status.len();
        let df_fields = Fields::from(vec![
            Field::new("content", DataType::Int32, true),
            Field::new("record_count", DataType::Int64, true),
            Field::new("first_row_id", DataType::Int64, true),
        ]);
        let df = StructArray::new(
            df_fields.clone(),
            vec![
                Arc::new(Int32Array::from(content)),
                Arc::new(Int64Array::from(counts)),
                Arc::new(Int64Array::from(ids)),
            ],
            None,
        );
        let schema = Schema::new(vec![
            Field::new("status", DataType::Int32, true),
            Field::new("snapshot_id", DataType::Int64, true),
            Field::new("sequence_number", DataType::Int64, true),
            Field::new("file_sequence_number", DataType::Int64, true),
            Field::new("data_file", DataType::Struct(df_fields), true),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(Int32Array::from(status)),
                Arc::new(Int64Array::from(vec![None; n])),
                Arc::new(Int64Array::from(seq.clone())),
                Arc::new(Int64Array::from(seq)),
                Arc::new(df),
            ],
        )
        .unwrap()
    }

    fn longs(b: &RecordBatch, name: &str) -> Vec<Option<i64>> {
        b.column_by_name(name)
            .unwrap()
            .as_primitive::<Int64Type>()
            .iter()
            .collect()
    }

    #[test]
    fn sequence_numbers_are_inherited_only_by_added_entries() {
        let b = batch(
            vec![1, 0, 2, 1],
            vec![None, None, Some(3), Some(4)],
            vec![0; 4],
            vec![1; 4],
            vec![None; 4],
        );
        let m = ManifestFile {
            added_snapshot_id: Some(9),
            sequence_number: Some(5),
            first_row_id: None,
            ..ManifestFile::default()
        };
        let out = inherit(b.clone(), &m).unwrap();
        assert_eq!(longs(&out, "snapshot_id"), vec![Some(9); 4]);
        assert_eq!(
            longs(&out, "sequence_number"),
            vec![Some(5), None, Some(3), Some(4)]
        );
        assert_eq!(
            longs(&out, "file_sequence_number"),
            vec![Some(5), None, Some(3), Some(4)]
        );
        // v1 manifest lists (sequence number 0): every null becomes 0
        let m = ManifestFile {
            added_snapshot_id: Some(9),
            sequence_number: Some(0),
            first_row_id: None,
            ..ManifestFile::default()
        };
        let out = inherit(b, &m).unwrap();
        assert_eq!(
            longs(&out, "sequence_number"),
            vec![Some(0), Some(0), Some(3), Some(4)]
        );
    }

    #[test]
    fn first_row_ids_count_only_preceding_null_data_files() {
        let b = batch(
            vec![1, 1, 0, 1, 2],
            vec![None; 5],
            vec![0, 0, 0, 1, 0],
            vec![10, 20, 30, 40, 50],
            vec![None, Some(7), None, None, None],
        );
        let m = ManifestFile {
            added_snapshot_id: Some(1),
            sequence_number: Some(1),
            first_row_id: Some(100),
            ..ManifestFile::default()
        };
        let out = inherit(b, &m).unwrap();
        let df = out.column_by_name("data_file").unwrap().as_struct();
        let ids: Vec<_> = df
            .column_by_name("first_row_id")
            .unwrap()
            .as_primitive::<Int64Type>()
            .iter()
            .collect();
        assert_eq!(ids, vec![Some(100), Some(7), Some(110), None, Some(140)]);
    }
}
