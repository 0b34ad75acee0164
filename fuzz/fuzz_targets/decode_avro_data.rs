//! Any bytes, read as an Avro data file: batches or an error, never a panic, and never more
//! memory than libFuzzer's limit (dev/fuzz sets it). Read whole, projected and split, with and
//! without a manifest record count bounding the rows.
#![no_main]

use frazil_manifest::avro::data::{data_schema, read_data, DataReadOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = data_schema(data);
    let _ = read_data(data, &DataReadOptions::default());
    let bounded = DataReadOptions {
        columns: Some(vec![0]),
        split: Some((0, data.len() as u64 / 2)),
        batch_rows: 7,
        max_records: Some(data.len() as u64),
    };
    let _ = read_data(data, &bounded);
});
