//! One container file into one record batch.

use std::collections::HashMap;

use arrow_array::RecordBatch;
use frazil_values::Result;

use crate::avro::Container;
use crate::columns::{Plan, TField};

pub fn read_container(data: &[u8], target: &[TField]) -> Result<RecordBatch> {
    let container = Container::parse(data)?;
    let plan = Plan::resolve(&container.header.schema, target)?;
    let mut columns = plan.columns()?;
    container.for_each_block(|block| plan.decode_into(&mut columns, block.bytes, block.count))?;
    let metadata: HashMap<String, String> = container
        .header
        .metadata
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), String::from_utf8(v.clone()).ok()?)))
        .collect();
    columns.finish(&plan.fields, metadata)
}
