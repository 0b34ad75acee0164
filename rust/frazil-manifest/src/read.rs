//! One container file into one record batch.

use std::collections::HashMap;

use arrow_array::RecordBatch;
use frazil_values::Result;

use crate::avro::Container;
use crate::columns::{Plan, TField};

/// How many bytes of columns per byte of input a file may reserve up front.
const RESERVE_PER_INPUT_BYTE: usize = 64;

pub fn read_container(data: &[u8], target: &[TField]) -> Result<RecordBatch> {
    let container = Container::parse(data)?;
    let plan = Plan::resolve(&container.header.schema, target)?;
    let mut columns = plan.columns()?;
    // Size the columns for the whole file once the first block shows the shape of a record
    // (values per map, bytes per path), instead of regrowing and copying them block by block.
    // The claim is capped so that hostile counts cannot allocate beyond a multiple of the input.
    let claimed = container.record_count_hint();
    let budget = data.len().saturating_mul(RESERVE_PER_INPUT_BYTE);
    let mut first = true;
    container.for_each_block(|block| {
        plan.decode_into(&mut columns, block.bytes, block.count)?;
        if first && block.count > 0 {
            first = false;
            let per_record = (block.bytes.len() / block.count).max(1);
            let more = claimed.saturating_sub(block.count).min(budget / per_record);
            columns.reserve(more, budget);
        }
        Ok(())
    })?;
    let metadata: HashMap<String, String> = container
        .header
        .metadata
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), String::from_utf8(v.clone()).ok()?)))
        .collect();
    columns.finish(&plan.fields, metadata)
}
