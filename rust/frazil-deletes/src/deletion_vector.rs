//! `deletion-vector-v1` blobs (`puffin-spec.md`, "Blob types"): a 4-byte big-endian length of
//! magic plus vector, the magic `D1 D3 39 64`, the portable 64-bit roaring vector, and a
//! big-endian CRC-32 of magic plus vector. The length, magic and CRC are all verified before
//! the vector is decoded, as the Java reference does.

use frazil_values::{Error, Result};

use crate::bitmap::PositionBitmap;

pub const DV_BLOB_TYPE: &str = "deletion-vector-v1";
pub const DV_MAGIC: [u8; 4] = [0xD1, 0xD3, 0x39, 0x64];
/// The `_pos` metadata column's field id, which DV blobs list in `fields`.
pub const ROW_POSITION_FIELD_ID: i32 = i32::MAX - 2;
/// Length prefix, magic, an empty vector's 8-byte count, CRC.
const MIN_DV_LEN: usize = 4 + 4 + 8 + 4;

/// The blob bytes of a deletion vector.
pub fn serialize_dv(bitmap: &PositionBitmap) -> Vec<u8> {
    let vector_len = bitmap.serialized_size();
    let mut out = Vec::with_capacity(vector_len + 12);
    // Magic plus vector: a vector too large for 4 bytes cannot come from a data file of
    // fewer than 2^63 rows held in memory, so the cast is checked only in debug builds.
    let len = (vector_len + 4) as u32;
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&DV_MAGIC);
    bitmap.serialize_into(&mut out);
    debug_assert_eq!(out.len(), vector_len + 8);
    let crc = crc32fast::hash(&out[4..]);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

/// Decodes a deletion vector blob. `context` names it in errors (file, offset, length, and
/// the data file it applies to when known).
pub fn deserialize_dv(blob: &[u8], context: &str) -> Result<PositionBitmap> {
    let fail =
        |problem: String| Error::decode(format!("invalid deletion vector {context}: {problem}"));
    if blob.len() < MIN_DV_LEN {
        return Err(fail(format!(
            "{} bytes is shorter than the smallest deletion vector ({MIN_DV_LEN} bytes)",
            blob.len()
        )));
    }
    let declared = u32::from_be_bytes([blob[0], blob[1], blob[2], blob[3]]) as u64;
    let actual = blob.len() as u64 - 8;
    if declared != actual {
        return Err(fail(format!(
            "length field says {declared} bytes of magic and vector, but the blob holds {actual}"
        )));
    }
    let body = &blob[4..blob.len() - 4];
    if body[..4] != DV_MAGIC {
        return Err(fail(format!(
            "expected magic {DV_MAGIC:02X?}, found {:02X?}",
            &body[..4]
        )));
    }
    let tail = &blob[blob.len() - 4..];
    let stored = u32::from_be_bytes([tail[0], tail[1], tail[2], tail[3]]);
    let computed = crc32fast::hash(body);
    if stored != computed {
        return Err(fail(format!(
            "CRC-32 mismatch: stored {stored:#010x}, computed {computed:#010x}"
        )));
    }
    PositionBitmap::deserialize(&body[4..]).map_err(fail)
}

/// Decodes the deletion vector stored at `[offset, offset + length)` of `data` (a whole Puffin
/// file, as a DV's `content_offset` and `content_size_in_bytes` locate it), or all of `data`
/// when `length` is None and `offset` is 0.
pub fn read_dv(
    data: &[u8],
    offset: u64,
    length: Option<u64>,
    context: &str,
) -> Result<PositionBitmap> {
    let length = length.unwrap_or((data.len() as u64).saturating_sub(offset));
    let end = offset
        .checked_add(length)
        .filter(|&e| e <= data.len() as u64);
    match end {
        // Both fit in usize: they are at most data.len().
        Some(end) => deserialize_dv(&data[offset as usize..end as usize], context),
        None => Err(Error::decode(format!(
            "invalid deletion vector {context}: offset {offset} and length {length} lie beyond \
             the end of the {} bytes given",
            data.len()
        ))),
    }
}

/// [`read_dv`], its positions checked to be below `record_count` (the data file's rows) when
/// given.
pub fn read_dv_within(
    data: &[u8],
    offset: u64,
    length: Option<u64>,
    context: &str,
    record_count: Option<u64>,
) -> Result<PositionBitmap> {
    let dv = read_dv(data, offset, length, context)?;
    if let Some(n) = record_count {
        dv.check_within(n).map_err(|e| {
            Error::decode(format!("invalid deletion vector {context}: {}", e.message))
        })?;
    }
    Ok(dv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Positions 1, 2, 3 and 1000 (one 32-bit bitmap, key 0), checked field by field against
    /// the spec's layout.
    #[test]
    fn layout_matches_the_spec() -> Result<()> {
        let b = PositionBitmap::from_positions(&[1, 2, 3, 1000])?;
        let blob = serialize_dv(&b);
        let len = u32::from_be_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
        assert_eq!(len, blob.len() - 8);
        assert_eq!(&blob[4..8], &DV_MAGIC);
        assert_eq!(&blob[8..16], &1u64.to_le_bytes());
        assert_eq!(&blob[16..20], &0u32.to_le_bytes());
        let crc = crc32fast::hash(&blob[4..blob.len() - 4]);
        assert_eq!(&blob[blob.len() - 4..], &crc.to_be_bytes());
        assert_eq!(deserialize_dv(&blob, "t")?.to_vec(), vec![1, 2, 3, 1000]);
        Ok(())
    }

    #[test]
    fn corruption_is_named() -> Result<()> {
        let blob = serialize_dv(&PositionBitmap::from_positions(&[5, 1 << 40])?);
        let mut crc = blob.clone();
        let n = crc.len();
        crc[n - 6] ^= 0x10;
        let e = deserialize_dv(&crc, "in f.puffin").unwrap_err();
        assert!(e.message.contains("CRC-32 mismatch") && e.message.contains("f.puffin"));
        let mut magic = blob.clone();
        magic[5] = 0;
        assert!(deserialize_dv(&magic, "x")
            .unwrap_err()
            .message
            .contains("magic"));
        let e = deserialize_dv(&blob[..blob.len() - 1], "x").unwrap_err();
        assert!(e.message.contains("length field"), "{}", e.message);
        let e = deserialize_dv(&blob[..3], "x").unwrap_err();
        assert!(e.message.contains("shorter"));
        Ok(())
    }

    proptest! {
        #[test]
        fn dv_round_trips(positions in prop::collection::vec(
            prop_oneof![0u64..70_000, 0u64..(1 << 40), (1u64 << 62)..(1 << 63)], 0..1000)) {
            let b = PositionBitmap::from_positions(&positions).expect("in range");
            let back = deserialize_dv(&serialize_dv(&b), "t").expect("round trip");
            prop_assert_eq!(back, b);
        }

        #[test]
        fn truncations_and_bit_flips_never_panic(
            positions in prop::collection::vec(0u64..(1 << 34), 0..300),
            cut in any::<prop::sample::Index>(),
            flip in any::<prop::sample::Index>(),
            bit in 0u8..8,
        ) {
            let blob = serialize_dv(&PositionBitmap::from_positions(&positions).expect("in range"));
            let _ = deserialize_dv(&blob[..cut.index(blob.len() + 1)], "t");
            let mut flipped = blob.clone();
            let i = flip.index(flipped.len());
            flipped[i] ^= 1 << bit;
            // A flip anywhere is caught by the length, magic or CRC check.
            prop_assert!(deserialize_dv(&flipped, "t").is_err());
        }
    }

    #[test]
    fn read_within_a_record_count() -> Result<()> {
        let blob = serialize_dv(&PositionBitmap::from_positions(&[0, 7])?);
        assert_eq!(
            read_dv_within(&blob, 0, None, "x", Some(8))?.cardinality(),
            2
        );
        let e = read_dv_within(&blob, 0, None, "x", Some(7)).expect_err("7 is not below 7");
        assert!(
            e.message.starts_with("invalid deletion vector x: "),
            "{}",
            e.message
        );
        Ok(())
    }
}
