//! Any bytes, read as a manifest and as a manifest list: a value or an error, never a panic,
//! and never more memory than libFuzzer's limit (dev/fuzz sets it).
#![no_main]

use frazil_manifest::{read_manifest, read_manifest_list, ReadOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = read_manifest(data, &ReadOptions::default());
    // the key-projected stats maps (field ids 1 and 2) decode by other code paths
    let projected = ReadOptions {
        stats_field_ids: Some([1, 2].as_slice().into()),
        ..ReadOptions::default()
    };
    let _ = read_manifest(data, &projected);
    let _ = read_manifest_list(data);
});
