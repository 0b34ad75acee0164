//! One container file into one record batch.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::RecordBatch;
use frazil_values::{Error, Result};

use crate::avro::{Container, Schema};
use crate::columns::{Columns, Plan, TField};
use crate::recent::Recent;

/// How many bytes of columns per byte of input a file may reserve up front.
const RESERVE_PER_INPUT_BYTE: usize = 64;
/// The fewest compressed bytes per thread worth a thread of its own.
const MIN_BYTES_PER_THREAD: usize = 256 << 10;

/// Decodes a container into one batch of `target` columns, its blocks split over up to
/// `threads` threads (each decodes a run of consecutive blocks into its own columns, which are
/// then appended in order).
pub fn read_container(data: &[u8], target: &[TField], threads: usize) -> Result<RecordBatch> {
    read_in_parts(data, target, threads.min(data.len() / MIN_BYTES_PER_THREAD))
}

fn read_in_parts(data: &[u8], target: &[TField], parts: usize) -> Result<RecordBatch> {
    let container = Container::parse(data)?;
    // a table's manifests share their schema and are read for the same columns: resolved
    // once (see `recent`)
    static PLANS: Recent<(Arc<Schema>, Vec<TField>), Arc<Plan>> = Recent::new(16);
    let schema = &container.header.schema;
    let plan = PLANS.get_or_make(
        |(s, t)| Arc::ptr_eq(s, schema) && t.as_slice() == target,
        || {
            Ok::<_, Error>((
                (schema.clone(), target.to_vec()),
                Arc::new(Plan::resolve(schema, target)?),
            ))
        },
    )?;
    let ranges = container.split(parts.max(1));
    let columns = match ranges.as_slice() {
        [] => plan.columns()?,
        [only] => decode_range(&container, &plan, only.clone(), None)?,
        [first, rest @ ..] => std::thread::scope(|scope| -> Result<Columns> {
            let others: Vec<_> = rest
                .iter()
                .map(|r| {
                    let (container, plan) = (&container, &plan);
                    scope.spawn(move || decode_range(container, plan, r.clone(), None))
                })
                .collect();
            // the first part's columns are sized for the whole file, so that the others are
            // appended in place rather than every column regrown and copied
            let whole = first.start..ranges.last().map_or(first.end, |r| r.end);
            let mut columns = decode_range(&container, &plan, first.clone(), Some(whole))?;
            for handle in others {
                let part = handle
                    .join()
                    .map_err(|_| Error::decode("a decoder thread failed"))??;
                columns.append(part)?;
            }
            Ok(columns)
        })?,
    };
    let metadata: HashMap<String, String> = container
        .header
        .metadata
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), String::from_utf8(v.clone()).ok()?)))
        .collect();
    columns.finish(&plan.fields, metadata)
}

/// Decodes the blocks in `range`; the columns are sized for the blocks in `size_for` (by
/// default `range`).
fn decode_range(
    container: &Container<'_>,
    plan: &Plan,
    range: Range<usize>,
    size_for: Option<Range<usize>>,
) -> Result<Columns> {
    let mut columns = plan.columns()?;
    // Size the columns for the whole range once the first block shows the shape of a record
    // (values per map, bytes per path), instead of regrowing and copying them block by block.
    // The records to come are estimated from the first block's share of the range's bytes
    // (walking a million block headers to count them costs more than a wrong guess), and the
    // claim is capped so that hostile counts cannot allocate beyond a multiple of the input.
    let size_for = size_for.unwrap_or_else(|| range.clone());
    let budget = size_for.len().saturating_mul(RESERVE_PER_INPUT_BYTE);
    let mut first = true;
    container.for_each_block_in(range, |block| {
        plan.decode_into(&mut columns, block.bytes, block.count)?;
        if first && block.count > 0 {
            first = false;
            let stride = block.end.saturating_sub(block.offset).max(1) as u128;
            let claimed = (size_for.len() as u128 * block.count as u128 / stride)
                .try_into()
                .unwrap_or(usize::MAX);
            let per_record = (block.bytes.len() / block.count).max(1);
            let more = claimed.saturating_sub(block.count).min(budget / per_record);
            columns.reserve(more, budget);
        }
        Ok(())
    })?;
    Ok(columns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::manifest_entry;

    fn data(name: &str) -> Vec<u8> {
        let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(path).unwrap()
    }

    /// A manifest of many small blocks: the Java file's entries written again and again.
    fn many_blocks(codec: crate::avro::Codec, copies: usize) -> Vec<u8> {
        use crate::write::{write_manifest, WriteOptions};
        use arrow_array::StructArray;
        let source = read_in_parts(&data("v2-data.avro"), &manifest_entry(), 1).unwrap();
        let meta = source.schema().metadata().clone();
        let metadata = [
            "schema",
            "partition-spec",
            "partition-spec-id",
            "format-version",
            "content",
        ]
        .iter()
        .filter_map(|k| Some((k.to_string(), meta.get(k)?.clone())))
        .chain([("schema-id".to_string(), "0".to_string())])
        .collect();
        let options = WriteOptions {
            format_version: 2,
            codec,
            metadata,
            table_location: None,
        };
        let batch = StructArray::from(source);
        let batches = vec![batch; copies];
        write_manifest(&batches, &options).unwrap()
    }

    /// Files of different writer schemas read in turn, for different columns: each read gets
    /// its own file's plan from the kept ones (`recent`), the same batch every time.
    #[test]
    fn kept_plans_follow_each_file() {
        use crate::columns::project;
        use crate::manifest::manifest_entry as entry;
        let files = [
            "v1-data.avro",
            "v2-data.avro",
            "v3-data.avro",
            "v2-deletes.avro",
        ];
        let narrow = project(
            &entry(),
            &["status".to_string(), "data_file.file_path".to_string()],
            "",
        );
        let targets = [entry(), narrow];
        let first: Vec<Vec<RecordBatch>> = files
            .iter()
            .map(|f| {
                targets
                    .iter()
                    .map(|t| read_in_parts(&data(f), t, 1).unwrap())
                    .collect()
            })
            .collect();
        assert_ne!(first[0][0].schema(), first[0][1].schema());
        for _ in 0..3 {
            for (k, f) in files.iter().enumerate().rev() {
                for (j, t) in targets.iter().enumerate().rev() {
                    assert_eq!(
                        read_in_parts(&data(f), t, 1).unwrap(),
                        first[k][j],
                        "{f} {j}"
                    );
                }
            }
        }
    }

    #[test]
    fn split_decoding_equals_one_thread() {
        let bytes = many_blocks(crate::avro::Codec::Null, 3000);
        let container = Container::parse(&bytes).unwrap();
        assert!(
            container.split(8).len() > 2,
            "the test file has too few blocks"
        );
        let one = read_in_parts(&bytes, &manifest_entry(), 1).unwrap();
        for parts in [2, 3, 8, 1000] {
            let split = read_in_parts(&bytes, &manifest_entry(), parts).unwrap();
            assert_eq!(split.schema(), one.schema());
            for (a, b) in split.columns().iter().zip(one.columns()) {
                assert_eq!(a.to_data(), b.to_data(), "{parts} parts");
            }
        }
        // the public path splits a file this size over its threads too
        assert!(bytes.len() >= 2 * MIN_BYTES_PER_THREAD, "{}", bytes.len());
        let threaded = read_container(&bytes, &manifest_entry(), 2).unwrap();
        assert_eq!(threaded, one);
    }

    #[test]
    fn damaged_files_split_fail_cleanly() {
        let bytes = many_blocks(crate::avro::Codec::Deflate, 600);
        let whole = read_in_parts(&bytes, &manifest_entry(), 1).unwrap();
        let step = bytes.len() / 97;
        for at in (0..bytes.len()).step_by(step.max(1)) {
            let cut = read_in_parts(&bytes[..at], &manifest_entry(), 4);
            assert!(cut.is_err() || at >= bytes.len() - 16, "cut at {at}");
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x5a;
            let one = read_in_parts(&flipped, &manifest_entry(), 1);
            let four = read_in_parts(&flipped, &manifest_entry(), 4);
            // the same verdict either way; a flip may leave a valid (different) file
            assert_eq!(one.is_ok(), four.is_ok(), "flip at {at}");
            if let (Ok(a), Ok(b)) = (one, four) {
                assert_eq!(a, b, "flip at {at}");
            }
        }
        assert_eq!(whole.num_rows() % 600, 0);
    }
}
