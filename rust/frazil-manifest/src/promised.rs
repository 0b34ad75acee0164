//! What a manifest list entry promises about its manifest (spec "Manifest Lists":
//! `manifest_length` and the file and row counts by status), held against the bytes read and
//! the entries decoded. A manifest cut short is still a valid Avro file when the cut falls after
//! its header or between blocks (an interrupted copy leaves one); without this check it reads
//! as fewer entries, and a scan silently returns fewer rows.

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use frazil_values::{Error, Result};

/// The promises of one `manifest_file` row; `None` is unknown (the counts are optional in v1
/// manifest lists) and not checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Promised {
    /// `manifest_length`: the file's size in bytes.
    pub length: Option<i64>,
    /// `added_files_count`, `existing_files_count`, `deleted_files_count`.
    pub added_files: Option<i64>,
    pub existing_files: Option<i64>,
    pub deleted_files: Option<i64>,
    /// `added_rows_count`, `existing_rows_count`, `deleted_rows_count`: the sums of the
    /// entries' `record_count` by status.
    pub added_rows: Option<i64>,
    pub existing_rows: Option<i64>,
    pub deleted_rows: Option<i64>,
}

const EXISTING: i32 = 0;
const ADDED: i32 = 1;
const DELETED: i32 = 2;

impl Promised {
    /// The length promise against the size of the file read (`data.len()` of a whole-file
    /// read): checked before decoding, so a cut file is named as such rather than by whatever
    /// the decoder trips over.
    pub fn check_length(&self, size: usize) -> Result<()> {
        match self.length {
            Some(length) if u64::try_from(length).ok() != Some(size as u64) => {
                Err(Error::decode(format!(
                    "the manifest list promises a file of {length} bytes, the file has {size} \
                     (truncated or replaced?)"
                )))
            }
            _ => Ok(()),
        }
    }

    /// The count promises against the decoded `manifest_entry` columns (`status` and, when a
    /// row count is promised, `data_file.record_count`), before any filtering.
    pub fn check_entries(&self, entries: &RecordBatch) -> Result<()> {
        let files = [self.added_files, self.existing_files, self.deleted_files];
        let rows = [self.added_rows, self.existing_rows, self.deleted_rows];
        if files.iter().chain(&rows).all(Option::is_none) {
            return Ok(());
        }
        let status = entries
            .column_by_name("status")
            .and_then(|c| c.as_primitive_opt::<Int32Type>())
            .ok_or_else(|| Error::decode("manifest has no int status column"))?;
        let counts = if rows.iter().any(Option::is_some) {
            let counts = entries
                .column_by_name("data_file")
                .and_then(|c| c.as_struct_opt())
                .and_then(|df| df.column_by_name("record_count"))
                .and_then(|c| c.as_primitive_opt::<Int64Type>())
                .ok_or_else(|| Error::decode("manifest has no long data_file.record_count"))?;
            Some(counts)
        } else {
            None
        };
        // index 0 added, 1 existing, 2 deleted, as the arrays above
        let mut held_files = [0i64; 3];
        let mut held_rows = [0i64; 3];
        for i in 0..status.len() {
            let k = match status.is_valid(i).then(|| status.value(i)) {
                Some(ADDED) => 0,
                Some(EXISTING) => 1,
                Some(DELETED) => 2,
                _ => continue,
            };
            held_files[k] += 1;
            if let Some(c) = counts {
                if c.is_valid(i) {
                    held_rows[k] = held_rows[k].saturating_add(c.value(i));
                }
            }
        }
        const STATUS: [&str; 3] = ["added", "existing", "deleted"];
        for k in 0..3 {
            if let Some(promised) = files[k].filter(|&n| n != held_files[k]) {
                return Err(Error::decode(format!(
                    "the manifest list promises {promised} {} files, the file holds {}",
                    STATUS[k], held_files[k]
                )));
            }
        }
        for k in 0..3 {
            if let Some(promised) = rows[k].filter(|&n| n != held_rows[k]) {
                return Err(Error::decode(format!(
                    "the manifest list promises {promised} {} rows, the file's {} entries hold {}",
                    STATUS[k], STATUS[k], held_rows[k]
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int32Array, Int64Array, StructArray};
    use arrow_schema::{DataType, Field, Fields, Schema};

    fn entries(status: &[Option<i32>], records: &[i64]) -> RecordBatch {
        let df_fields = Fields::from(vec![Field::new("record_count", DataType::Int64, false)]);
        let df = StructArray::new(
            df_fields.clone(),
            vec![Arc::new(Int64Array::from(records.to_vec())) as ArrayRef],
            None,
        );
        let schema = Schema::new(vec![
            Field::new("status", DataType::Int32, true),
            Field::new("data_file", DataType::Struct(df_fields), false),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![Arc::new(Int32Array::from(status.to_vec())), Arc::new(df)],
        )
        .unwrap()
    }

    fn promised(files: [Option<i64>; 3], rows: [Option<i64>; 3]) -> Promised {
        Promised {
            length: None,
            added_files: files[0],
            existing_files: files[1],
            deleted_files: files[2],
            added_rows: rows[0],
            existing_rows: rows[1],
            deleted_rows: rows[2],
        }
    }

    #[test]
    fn matching_counts_pass() {
        let e = entries(&[Some(1), Some(1), Some(0), Some(2)], &[10, 5, 7, 3]);
        let p = promised([Some(2), Some(1), Some(1)], [Some(15), Some(7), Some(3)]);
        p.check_entries(&e).unwrap();
        // nothing promised (a v1 list without counts): nothing checked, not even the columns
        Promised::default()
            .check_entries(&RecordBatch::new_empty(Arc::new(Schema::empty())))
            .unwrap();
        // only what is present is checked
        promised([Some(2), None, None], [None; 3])
            .check_entries(&e)
            .unwrap();
    }

    #[test]
    fn an_empty_manifest_that_promised_files_is_refused() {
        let e = entries(&[], &[]);
        let err = promised([Some(10), Some(0), Some(0)], [None; 3])
            .check_entries(&e)
            .unwrap_err();
        assert_eq!(err.kind, frazil_values::ErrorKind::Decode);
        assert_eq!(
            err.message,
            "the manifest list promises 10 added files, the file holds 0"
        );
    }

    #[test]
    fn each_count_is_checked() {
        let e = entries(&[Some(1), Some(0), Some(2)], &[10, 5, 7]);
        let cases = [
            (
                promised([None, Some(2), None], [None; 3]),
                "2 existing files",
            ),
            (
                promised([None, None, Some(0)], [None; 3]),
                "0 deleted files",
            ),
            (promised([None; 3], [Some(11), None, None]), "11 added rows"),
            (
                promised([None; 3], [None, Some(4), None]),
                "4 existing rows",
            ),
            (
                promised([None; 3], [None, None, Some(70)]),
                "70 deleted rows",
            ),
        ];
        for (p, says) in cases {
            let err = p.check_entries(&e).unwrap_err();
            assert!(err.message.contains(says), "{err}");
        }
    }

    #[test]
    fn length_must_equal_the_file_size() {
        let p = Promised {
            length: Some(100),
            ..Promised::default()
        };
        p.check_length(100).unwrap();
        let short = p.check_length(40).unwrap_err();
        assert!(
            short
                .message
                .contains("a file of 100 bytes, the file has 40"),
            "{short}"
        );
        assert!(p.check_length(101).is_err());
        assert!(Promised {
            length: Some(-1),
            ..Promised::default()
        }
        .check_length(0)
        .is_err());
        Promised::default().check_length(7).unwrap();
    }
}
