//! Any bytes, decoded as a `deletion-vector-v1` blob, and again framed with a valid length,
//! magic and CRC-32 (which random bytes almost never carry) so the portable 64-bit roaring
//! decoder sees them: a bitmap or an error, never a panic. A bitmap that decodes serializes to
//! a blob that decodes to the same positions, and its keep-mask agrees with it.
#![no_main]

use frazil_deletes::deletion_vector::DV_MAGIC;
use frazil_deletes::{deserialize_dv, position_delete, serialize_dv};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = deserialize_dv(data, "fuzz");
    let Ok(len) = u32::try_from(data.len() + 4) else {
        return;
    };
    let mut blob = Vec::with_capacity(data.len() + 12);
    blob.extend_from_slice(&len.to_be_bytes());
    blob.extend_from_slice(&DV_MAGIC);
    blob.extend_from_slice(data);
    let crc = crc32fast::hash(&blob[4..]);
    blob.extend_from_slice(&crc.to_be_bytes());
    let Ok(bitmap) = deserialize_dv(&blob, "fuzz") else {
        return;
    };
    let back = deserialize_dv(&serialize_dv(&bitmap), "fuzz").expect("a DV we wrote decodes");
    assert_eq!(back, bitmap);
    if let Some(min) = bitmap.min() {
        let mask = position_delete::keep_mask(&bitmap, min, 128);
        for (i, kept) in mask.iter().enumerate() {
            assert_eq!(kept, !bitmap.contains(min + i as u64));
        }
    }
});
