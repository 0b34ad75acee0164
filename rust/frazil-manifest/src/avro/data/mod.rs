//! Avro data files (spec Appendix A, "Avro"): an object container of table rows decoded into
//! Arrow record batches as the file's schema says, field ids (`field-id`, `element-id`,
//! `key-id`, `value-id`) kept as `PARQUET:field_id` field metadata, so that the reader matching
//! columns to the table schema by id (projection, evolution, name mapping) is the one Parquet
//! files use. Optional values are `["null", T]` unions; maps with string keys are Avro maps,
//! other maps arrays of key/value records (`"logicalType": "map"`).
//!
//! A read decodes only the top-level columns asked for (the rest are skipped in the encoding)
//! and only the blocks of a split. Allocation is bounded by the input: every length is checked
//! against the bytes of its block, each block's records against its inflated bytes, and the
//! file's records against the count its manifest entry gives.

pub mod column;
pub mod write;

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_array::RecordBatchOptions;
use arrow_schema::{Schema as ArrowSchema, SchemaRef};
use frazil_values::{Error, Result};

use super::container::Container;
use super::decode::Reader;
use super::schema::{Record, Schema};
use column::{finish_members, struct_fields, Column, Member};

/// Without a record count from metadata, the most records a block may claim per compressed
/// byte: above deflate's largest ratio (about 1032), below what would let a small input claim
/// billions of rows.
pub const MAX_RECORDS_PER_BYTE: u64 = 2048;

#[derive(Debug, Clone, Default)]
pub struct DataReadOptions {
    /// Top-level fields to decode, by position in the file's record; `None`: all.
    pub columns: Option<Vec<usize>>,
    /// A split `(start, length)` in bytes: the blocks whose preceding sync marker starts in it
    /// (as Java's `DataFileReader.sync` / `pastSync` choose them); `None`: every block.
    pub split: Option<(u64, u64)>,
    /// Rows per batch (the last may have fewer); 0: one batch.
    pub batch_rows: usize,
    /// The file's record count from its manifest entry: more records in the file is an error.
    pub max_records: Option<u64>,
}

/// A batch of rows and the position in the file of its first row.
pub struct DataBatch {
    pub first_row: u64,
    pub batch: RecordBatch,
}

fn record(schema: &Schema) -> Result<&Record> {
    match schema {
        Schema::Record(r) => Ok(r),
        other => Err(Error::unsupported(format!(
            "an Avro data file whose schema is {} (a record of columns expected)",
            other.kind()
        ))),
    }
}

fn columns(record: &Record, wanted: Option<&[usize]>) -> Result<Vec<Member>> {
    if let Some(w) = wanted {
        if let Some(bad) = w.iter().find(|&&i| i >= record.fields.len()) {
            return Err(Error::invalid(format!(
                "column {bad} of a file with {} columns",
                record.fields.len()
            )));
        }
    }
    Column::members(record, |i| wanted.is_none_or(|w| w.contains(&i)))
}

/// The Arrow schema of an Avro data file: every top-level field, as a read decodes it.
pub fn data_schema(data: &[u8]) -> Result<SchemaRef> {
    let container = Container::parse(data)?;
    let members = columns(record(&container.header.schema)?, None)?;
    Ok(Arc::new(ArrowSchema::new(struct_fields(&members))))
}

/// The rows of an Avro data file, in batches, with the schema they have.
pub fn read_data(data: &[u8], options: &DataReadOptions) -> Result<(SchemaRef, Vec<DataBatch>)> {
    let container = Container::parse(data)?;
    let container = match options.max_records {
        // Records are bounded by the manifest's count below; near-constant columns compress
        // beyond any fixed records-per-byte bound.
        Some(_) => container.with_max_records_per_byte(u64::MAX),
        None => container.with_max_records_per_byte(MAX_RECORDS_PER_BYTE),
    };
    let rec = record(&container.header.schema)?.clone();
    let wanted = options.columns.as_deref();
    let schema = Arc::new(ArrowSchema::new(struct_fields(&columns(&rec, wanted)?)));

    let blocks = container.block_headers()?;
    let total: u64 = blocks.iter().map(|(_, n)| *n as u64).sum();
    if let Some(max) = options.max_records {
        if total > max {
            return Err(Error::decode(format!(
                "the file's blocks claim {total} records, its manifest entry {max}"
            )));
        }
    }
    // The blocks of the split, and the rows before them.
    let chosen: Vec<usize> = (0..blocks.len())
        .filter(|&i| match options.split {
            None => true,
            Some((start, length)) => {
                let sync = (blocks[i].0 - 16) as u64;
                start <= sync && sync < start.saturating_add(length)
            }
        })
        .collect();
    let (Some(&first), Some(&last)) = (chosen.first(), chosen.last()) else {
        return Ok((schema, Vec::new()));
    };
    let mut first_row: u64 = blocks[..first].iter().map(|(_, n)| *n as u64).sum();
    let end = blocks.get(last + 1).map_or(data.len(), |(off, _)| *off);

    let mut out = Vec::new();
    let mut members = columns(&rec, wanted)?;
    let mut rows = 0usize;
    let finish = |members: Vec<Member>, rows: usize| -> Result<RecordBatch> {
        let arrays = finish_members(members)?;
        RecordBatch::try_new_with_options(
            Arc::clone(&schema),
            arrays,
            &RecordBatchOptions::new().with_row_count(Some(rows)),
        )
        .map_err(|e| Error::decode(format!("invalid values: {e}")))
    };
    container.for_each_block_in(blocks[first].0..end, |block| {
        let mut r = Reader::new(block.bytes);
        for _ in 0..block.count {
            for m in &mut members {
                match m {
                    Member::Read(c) => c.decode(&mut r)?,
                    Member::Skip(s) => s.run(&mut r)?,
                }
            }
            rows += 1;
            // Batches of exactly `batch_rows` (the last shorter): no slicing after.
            if rows == options.batch_rows {
                let done = std::mem::replace(&mut members, columns(&rec, wanted)?);
                out.push(DataBatch {
                    first_row,
                    batch: finish(done, rows)?,
                });
                first_row += rows as u64;
                rows = 0;
            }
        }
        if !r.is_empty() {
            return Err(Error::decode(format!(
                "{} bytes after the block's {} records",
                r.remaining(),
                block.count
            )));
        }
        Ok(())
    })?;
    if rows > 0 {
        out.push(DataBatch {
            first_row,
            batch: finish(members, rows)?,
        });
    }
    Ok((schema, out))
}

#[cfg(test)]
mod tests;
