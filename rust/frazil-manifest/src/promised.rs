//! What a manifest list entry promises about its manifest (spec "Manifest Lists":
//! `manifest_length` and the file and row counts by status), held against the bytes read and
//! the entries decoded. A manifest cut short is still a valid Avro file when the cut falls after
//! its header or between blocks (an interrupted copy leaves one); without this check it reads
//! as fewer entries, and a scan silently returns fewer rows.
//!
//! Only what damage does is refused: a file holding fewer entries (or rows) than promised.
//! Real tables disagree with their lists in harmless ways, and are read: manifests rewritten by
//! path-relocating tools keep the old `manifest_length` (longer or shorter than the file),
//! some writers undercount, or count an entry under another status (tests/external's tables).
//! So the length is only the fallback when no count is known, and refuses only a file that is
//! shorter than promised and holds no entries (a cut inside a block is a decoding error anyway).

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
/// The statuses in the order of the arrays below.
const STATUS: [&str; 3] = ["added", "existing", "deleted"];

impl Promised {
    fn files(&self) -> [Option<i64>; 3] {
        [self.added_files, self.existing_files, self.deleted_files]
    }

    fn rows(&self) -> [Option<i64>; 3] {
        [self.added_rows, self.existing_rows, self.deleted_rows]
    }

    /// Whether the file is shorter than promised.
    fn cut_short(&self, size: usize) -> bool {
        self.length.is_some_and(|l| (size as u64) < l.max(0) as u64)
    }

    /// A decoding error of a file shorter than promised, saying so.
    pub fn explain(&self, e: Error, size: usize) -> Error {
        match self.length {
            Some(length) if self.cut_short(size) => Error::new(
                e.kind,
                format!(
                    "{e} (the manifest list promises a file of {length} bytes, the file has \
                     {size}: cut short?)"
                ),
            ),
            _ => e,
        }
    }

    /// Checks the decoded `manifest_entry` columns (`status` and, when a row count is promised,
    /// `data_file.record_count`; all entries, before any filtering) of a file of `size` bytes.
    pub fn check(&self, size: usize, entries: &RecordBatch) -> Result<()> {
        let (files, rows) = (self.files(), self.rows());
        let counted = files.iter().chain(&rows).any(Option::is_some);
        if !counted {
            // Lengths go stale when tools rewrite manifests (relocation), so a short file with
            // entries is read; one with none is what a copy cut after the header leaves.
            return match self.length {
                Some(length) if self.cut_short(size) && entries.num_rows() == 0 => {
                    Err(Error::decode(format!(
                        "the manifest list promises a file of {length} bytes, the file has \
                         {size} and no entries"
                    )))
                }
                _ => Ok(()),
            };
        }
        let (held_files, held_rows) = held(entries, rows.iter().any(Option::is_some))?;
        short("files", &files, &held_files)?;
        short("rows", &rows, &held_rows)
    }
}

/// Entries and the sums of their record counts (when `with_rows`) by status.
fn held(entries: &RecordBatch, with_rows: bool) -> Result<([i64; 3], [i64; 3])> {
    let status = entries
        .column_by_name("status")
        .and_then(|c| c.as_primitive_opt::<Int32Type>())
        .ok_or_else(|| Error::decode("manifest has no int status column"))?;
    let counts = match with_rows {
        false => None,
        true => Some(
            entries
                .column_by_name("data_file")
                .and_then(|c| c.as_struct_opt())
                .and_then(|df| df.column_by_name("record_count"))
                .and_then(|c| c.as_primitive_opt::<Int64Type>())
                .ok_or_else(|| Error::decode("manifest has no long data_file.record_count"))?,
        ),
    };
    let mut files = [0i64; 3];
    let mut rows = [0i64; 3];
    for i in 0..status.len() {
        let k = match status.is_valid(i).then(|| status.value(i)) {
            Some(ADDED) => 0,
            Some(EXISTING) => 1,
            Some(DELETED) => 2,
            _ => continue,
        };
        files[k] += 1;
        if let Some(c) = counts.filter(|c| c.is_valid(i)) {
            rows[k] = rows[k].saturating_add(c.value(i));
        }
    }
    Ok((files, rows))
}

/// An error when the file holds fewer `what` than the present promises add up to (a writer may
/// count an entry under another status, never count entries that are not there); it names a
/// status that came up short.
fn short(what: &str, promised: &[Option<i64>; 3], held: &[i64; 3]) -> Result<()> {
    let mut wanted = 0i64;
    let mut got = 0i64;
    for (p, h) in promised.iter().zip(held) {
        if let Some(p) = p {
            wanted = wanted.saturating_add(*p);
            got = got.saturating_add(*h);
        }
    }
    if got >= wanted {
        return Ok(());
    }
    let k = (0..3)
        .find(|&k| promised[k].is_some_and(|p| p > held[k]))
        .unwrap_or(0);
    let (promised, status, held) = (promised[k].unwrap_or(0), STATUS[k], held[k]);
    Err(Error::decode(match what {
        "files" => {
            format!("the manifest list promises {promised} {status} files, the file holds {held}")
        }
        _ => format!(
            "the manifest list promises {promised} {status} {what}, the file's {status} entries \
             hold {held}"
        ),
    }))
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
        p.check(0, &e).unwrap();
        // nothing promised (a v1 list without counts): nothing checked, not even the columns
        Promised::default()
            .check(0, &RecordBatch::new_empty(Arc::new(Schema::empty())))
            .unwrap();
        // only what is present is checked
        promised([Some(2), None, None], [None; 3])
            .check(0, &e)
            .unwrap();
    }

    #[test]
    fn an_empty_manifest_that_promised_files_is_refused() {
        let e = entries(&[], &[]);
        let err = promised([Some(10), Some(0), Some(0)], [None; 3])
            .check(0, &e)
            .unwrap_err();
        assert_eq!(err.kind, frazil_values::ErrorKind::Decode);
        assert_eq!(
            err.message,
            "the manifest list promises 10 added files, the file holds 0"
        );
    }

    #[test]
    fn each_count_short_of_its_promise_is_refused() {
        let e = entries(&[Some(1), Some(0), Some(2)], &[10, 5, 7]);
        let cases = [
            (
                promised([Some(2), None, None], [None; 3]),
                "2 added files, the file holds 1",
            ),
            (
                promised([None, Some(2), None], [None; 3]),
                "2 existing files",
            ),
            (
                promised([Some(1), Some(1), Some(2)], [None; 3]),
                "2 deleted files",
            ),
            (promised([None; 3], [Some(11), None, None]), "11 added rows"),
            (
                promised([None; 3], [None, Some(6), None]),
                "6 existing rows",
            ),
            (
                promised([None; 3], [None, None, Some(70)]),
                "70 deleted rows",
            ),
        ];
        for (p, says) in cases {
            let err = p.check(0, &e).unwrap_err();
            assert!(err.message.contains(says), "{err}");
        }
    }

    /// What real tables do (tests/external): an undercount (Impala's test data promises 1 added
    /// file where 2 are), entries counted under another status (a v1 table from DuckDB's tests
    /// promises 4 added rows that are existing), a stale `manifest_length`.
    #[test]
    fn harmless_disagreements_of_real_tables_are_read() {
        let e = entries(&[Some(1), Some(1)], &[4, 4]);
        promised([Some(1), Some(0), Some(0)], [Some(4), Some(0), Some(0)])
            .check(0, &e)
            .unwrap();
        let existing = entries(&[Some(0)], &[4]);
        promised([Some(1), Some(0), Some(0)], [Some(4), Some(0), Some(0)])
            .check(0, &existing)
            .unwrap();
        for length in [0, 1940, 1986, 99_999] {
            let p = Promised {
                length: Some(length),
                ..promised([Some(2), Some(0), Some(0)], [None; 3])
            };
            p.check(1960, &e).unwrap();
        }
    }

    #[test]
    fn without_counts_an_empty_file_shorter_than_promised_is_refused() {
        let p = Promised {
            length: Some(100),
            ..Promised::default()
        };
        let none = entries(&[], &[]);
        p.check(100, &none).unwrap();
        p.check(101, &none).unwrap(); // longer: a stale length, as above
        let err = p.check(40, &none).unwrap_err();
        assert_eq!(
            err.message,
            "the manifest list promises a file of 100 bytes, the file has 40 and no entries"
        );
        // shorter but with entries: a stale length (a v1 table from DuckDB's tests, relocated)
        p.check(40, &entries(&[Some(1)], &[3])).unwrap();
        let e = p.explain(Error::decode("block at byte 7: truncated file"), 40);
        assert!(e
            .message
            .ends_with("a file of 100 bytes, the file has 40: cut short?)"));
        let e = p.explain(Error::decode("bad"), 100);
        assert_eq!(e.message, "bad");
    }
}
