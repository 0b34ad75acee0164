//! Manifest lists (spec "Manifest Lists"): the `manifest_file` struct, read into Arrow columns.

use arrow_array::RecordBatch;
use frazil_values::Result;

use crate::columns::{Presence as P, TField, TType as T};
use crate::read::read_container;

/// The `field_summary` struct (ids 509, 518, 510, 511).
pub fn field_summary() -> Vec<TField> {
    vec![
        TField::new(509, "contains_null", T::Boolean, P::Required),
        TField::new(518, "contains_nan", T::Boolean, P::Optional),
        TField::new(510, "lower_bound", T::Binary, P::Optional),
        TField::new(511, "upper_bound", T::Binary, P::Optional),
    ]
}

/// The `manifest_file` struct, v1 to v3, with the spec's read defaults for v1 files.
pub fn manifest_file() -> Vec<TField> {
    vec![
        TField::new(500, "manifest_path", T::String, P::Required),
        TField::new(501, "manifest_length", T::Long, P::Required),
        TField::new(502, "partition_spec_id", T::Int, P::Required),
        TField::new(517, "content", T::Int, P::Default(0)),
        TField::new(515, "sequence_number", T::Long, P::Default(0)),
        TField::new(516, "min_sequence_number", T::Long, P::Default(0)),
        TField::new(503, "added_snapshot_id", T::Long, P::Optional),
        TField::new(504, "added_files_count", T::Int, P::Optional),
        TField::new(505, "existing_files_count", T::Int, P::Optional),
        TField::new(506, "deleted_files_count", T::Int, P::Optional),
        TField::new(512, "added_rows_count", T::Long, P::Optional),
        TField::new(513, "existing_rows_count", T::Long, P::Optional),
        TField::new(514, "deleted_rows_count", T::Long, P::Optional),
        TField::new(
            507,
            "partitions",
            T::List(Box::new(TField::new(
                508,
                "element",
                T::Struct(field_summary()),
                P::Optional,
            ))),
            P::Optional,
        ),
        TField::new(519, "key_metadata", T::Binary, P::Optional),
        TField::new(520, "first_row_id", T::Long, P::Optional),
    ]
}

/// Decodes a manifest list into one record batch of `manifest_file` columns; the file's
/// key-value metadata (`snapshot-id`, `format-version`, ...) becomes the schema's metadata.
pub fn read_manifest_list(data: &[u8]) -> Result<RecordBatch> {
    read_container(data, &manifest_file(), 1)
}

/// [`read_manifest_list`] for a v4 table at `location`: `manifest_path`s resolved (v4 lists)
/// or qualified (older lists), as [`crate::paths::read_column`] does.
pub fn read_manifest_list_at(data: &[u8], location: &str) -> Result<RecordBatch> {
    let batch = read_manifest_list(data)?;
    let version = crate::manifest::header_version(&batch);
    let Ok(i) = batch.schema().index_of("manifest_path") else {
        return Ok(batch);
    };
    let mut columns = batch.columns().to_vec();
    columns[i] = crate::paths::read_column(&columns[i], version, location)
        .map_err(|e| frazil_values::Error::decode(format!("manifest_path: {}", e.message)))?;
    RecordBatch::try_new(batch.schema(), columns)
        .map_err(|e| frazil_values::Error::decode(e.to_string()))
}
