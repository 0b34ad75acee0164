//! Any bytes, read as a whole Puffin file: the footer, then every blob it lists (decompressed)
//! and every `deletion-vector-v1` blob decoded. A value or an error, never a panic, and never
//! more memory than libFuzzer's limit (dev/fuzz sets it). A footer that parses writes back to
//! JSON that parses to the same footer.
#![no_main]

use frazil_deletes::puffin::{file_metadata_json, parse_file_metadata};
use frazil_deletes::{deserialize_dv, read_blob, read_file_metadata, DV_BLOB_TYPE};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(metadata) = read_file_metadata(data, "fuzz.puffin") else {
        return;
    };
    let again = parse_file_metadata(file_metadata_json(&metadata).as_bytes());
    assert_eq!(again.as_ref(), Ok(&metadata));
    for blob in &metadata.blobs {
        if let Ok(bytes) = read_blob(data, blob, "fuzz.puffin") {
            if blob.blob_type == DV_BLOB_TYPE {
                let _ = deserialize_dv(&bytes, "in fuzz.puffin");
            }
        }
    }
});
