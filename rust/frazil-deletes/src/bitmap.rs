//! A set of row positions (0 <= pos < 2^63): 32-bit roaring bitmaps keyed by the positions'
//! high 32 bits, in the "portable" 64-bit serialization the spec's `deletion-vector-v1` uses
//! (RoaringFormatSpec, "Extension for 64-bit implementations").

use std::collections::BTreeMap;

use frazil_values::{Error, Result};
use roaring::RoaringBitmap;

/// The largest position a deletion vector may hold (the most significant bit must be 0).
pub const MAX_POSITION: u64 = (1 << 63) - 1;
/// The bytes of an empty 32-bit roaring bitmap: the no-run cookie and a container count.
const MIN_BITMAP_BYTES: usize = 8;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct PositionBitmap {
    /// Never holds an empty bitmap, so equality and the key count are canonical.
    maps: BTreeMap<u32, RoaringBitmap>,
}

fn split(pos: u64) -> (u32, u32) {
    ((pos >> 32) as u32, pos as u32)
}

fn join(key: u32, low: u32) -> u64 {
    (u64::from(key) << 32) | u64::from(low)
}

fn out_of_range(pos: u64) -> Error {
    Error::invalid(format!(
        "position {pos} is out of range for a deletion vector (0 to 2^63-1)"
    ))
}

impl PositionBitmap {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one position; true if it was not yet present.
    pub fn insert(&mut self, pos: u64) -> Result<bool> {
        if pos > MAX_POSITION {
            return Err(out_of_range(pos));
        }
        let (key, low) = split(pos);
        Ok(self.maps.entry(key).or_default().insert(low))
    }

    /// Adds positions in any order (duplicates allowed). Sorted input, the usual case for
    /// position delete files, is appended without a search per value.
    pub fn extend(&mut self, positions: &[u64]) -> Result<()> {
        if let Some(&bad) = positions.iter().find(|&&p| p > MAX_POSITION) {
            return Err(out_of_range(bad));
        }
        if positions.is_sorted() {
            self.extend_sorted(positions);
        } else {
            let mut sorted = positions.to_vec();
            sorted.sort_unstable();
            self.extend_sorted(&sorted);
        }
        Ok(())
    }

    fn extend_sorted(&mut self, positions: &[u64]) {
        let mut rest = positions;
        while let Some(&first) = rest.first() {
            let key = split(first).0;
            let n = rest.partition_point(|&p| split(p).0 == key);
            let (group, tail) = rest.split_at(n);
            rest = tail;
            let map = self.maps.entry(key).or_default();
            let appendable = map.max().is_none_or(|max| max < split(first).1);
            for &p in group {
                let low = split(p).1;
                if appendable {
                    // Only fails on a duplicate of the previous value, which is then a no-op.
                    let _ = map.try_push(low);
                } else {
                    map.insert(low);
                }
            }
        }
    }

    /// Builds a bitmap from positions in any order.
    pub fn from_positions(positions: &[u64]) -> Result<Self> {
        let mut b = Self::new();
        b.extend(positions)?;
        Ok(b)
    }

    pub fn contains(&self, pos: u64) -> bool {
        let (key, low) = split(pos);
        self.maps.get(&key).is_some_and(|m| m.contains(low))
    }

    pub fn cardinality(&self) -> u64 {
        self.maps.values().map(RoaringBitmap::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.maps.is_empty()
    }

    pub fn min(&self) -> Option<u64> {
        let (key, m) = self.maps.iter().next()?;
        Some(join(*key, m.min()?))
    }

    pub fn max(&self) -> Option<u64> {
        let (key, m) = self.maps.iter().next_back()?;
        Some(join(*key, m.max()?))
    }

    /// Checks every position against the row count of the data file the vector applies to:
    /// each must be below it, so the cardinality is at most `record_count`. A crafted vector
    /// of run containers holds billions of positions in a few kilobytes; this is what bounds
    /// anything sized by its cardinality.
    pub fn check_within(&self, record_count: u64) -> Result<()> {
        match self.max() {
            Some(max) if max >= record_count => Err(Error::decode(format!(
                "deleted position {max} is not below the data file's record count \
                 {record_count} (the vector holds {} positions)",
                self.cardinality()
            ))),
            _ => Ok(()),
        }
    }

    /// Adds every position of `other` (merging new deletes into a file's existing DV).
    pub fn union_with(&mut self, other: &PositionBitmap) {
        for (key, m) in &other.maps {
            *self.maps.entry(*key).or_default() |= m;
        }
    }

    /// Every position, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.maps
            .iter()
            .flat_map(|(key, m)| m.iter().map(move |low| join(*key, low)))
    }

    /// The positions in `[start, end)`, ascending.
    pub fn range(&self, start: u64, end: u64) -> impl Iterator<Item = u64> + '_ {
        let (first_key, first_low) = split(start);
        let last = end.checked_sub(1).filter(|_| end > start);
        let (last_key, last_low) = last.map_or((0, 0), split);
        let keys = last.map(|_| self.maps.range(first_key..=last_key));
        keys.into_iter().flatten().flat_map(move |(&key, m)| {
            let lo = if key == first_key { first_low } else { 0 };
            let hi = if key == last_key { last_low } else { u32::MAX };
            m.range(lo..=hi).map(move |low| join(key, low))
        })
    }

    /// Calls `f` with each position in `[start, end)`, ascending. Internal iteration (roaring's
    /// `fold`) is several times faster than driving [`Self::range`] by `next`.
    pub fn for_each_in_range(&self, start: u64, end: u64, mut f: impl FnMut(u64)) {
        if end <= start {
            return;
        }
        let (first_key, first_low) = split(start);
        let (last_key, last_low) = split(end - 1);
        for (&key, m) in self.maps.range(first_key..=last_key) {
            let lo = if key == first_key { first_low } else { 0 };
            let hi = if key == last_key { last_low } else { u32::MAX };
            let base = u64::from(key) << 32;
            m.range(lo..=hi).for_each(|low| f(base | u64::from(low)));
        }
    }

    /// How many positions fall in `[start, end)`.
    pub fn range_cardinality(&self, start: u64, end: u64) -> u64 {
        if end <= start {
            return 0;
        }
        let (first_key, first_low) = split(start);
        let (last_key, last_low) = split(end - 1);
        self.maps
            .range(first_key..=last_key)
            .map(|(&key, m)| {
                let lo = if key == first_key { first_low } else { 0 };
                let hi = if key == last_key { last_low } else { u32::MAX };
                m.range_cardinality(lo..=hi)
            })
            .sum()
    }

    /// The exact size of [`Self::serialize_into`]'s output.
    pub fn serialized_size(&self) -> usize {
        8 + self
            .maps
            .values()
            .map(|m| 4 + optimized(m).serialized_size())
            .sum::<usize>()
    }

    /// Appends the portable 64-bit serialization: an 8-byte little-endian bitmap count, then
    /// per bitmap (keys ascending) a 4-byte little-endian key and the 32-bit portable format.
    /// Bitmaps are run-length encoded where that is smaller, as the Java reference writes them.
    pub fn serialize_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.maps.len() as u64).to_le_bytes());
        for (key, m) in &self.maps {
            out.extend_from_slice(&key.to_le_bytes());
            // Writing to a Vec cannot fail.
            let _ = optimized(m).serialize_into(&mut *out);
        }
    }

    /// Reads the portable 64-bit serialization, which must fill `data` exactly. Keys must
    /// ascend and stay below 2^31 (positions < 2^63); empty bitmaps (the Java reference writes
    /// one for each key below its largest) are accepted and dropped.
    pub fn deserialize(data: &[u8]) -> std::result::Result<Self, String> {
        if data.len() < 8 {
            return Err(format!(
                "roaring bitmap of {} bytes is too short for its 8-byte bitmap count",
                data.len()
            ));
        }
        let mut count_bytes = [0u8; 8];
        count_bytes.copy_from_slice(&data[..8]);
        let count = u64::from_le_bytes(count_bytes);
        let mut rest = &data[8..];
        // Each bitmap takes at least its key and an empty bitmap's header: a count beyond that
        // is a corrupt length, refused before anything is allocated for it.
        if count > (rest.len() / (4 + MIN_BITMAP_BYTES)) as u64 {
            return Err(format!(
                "roaring bitmap count {count} cannot fit in the {} bytes that follow it",
                rest.len()
            ));
        }
        let mut maps = BTreeMap::new();
        let mut last_key: Option<u32> = None;
        for i in 0..count {
            if rest.len() < 4 {
                return Err(format!("truncated before the key of bitmap {i} of {count}"));
            }
            let key = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
            rest = &rest[4..];
            if key > (MAX_POSITION >> 32) as u32 {
                return Err(format!(
                    "bitmap key {key} would hold positions of 2^63 or more"
                ));
            }
            if last_key.is_some_and(|last| key <= last) {
                return Err(format!(
                    "bitmap keys must ascend, but key {key} follows key {}",
                    last_key.unwrap_or_default()
                ));
            }
            last_key = Some(key);
            // Reading from a slice advances it past exactly the bitmap's bytes.
            let m = RoaringBitmap::deserialize_from(&mut rest)
                .map_err(|e| format!("corrupt 32-bit roaring bitmap for key {key}: {e}"))?;
            if !m.is_empty() {
                maps.insert(key, m);
            }
        }
        if !rest.is_empty() {
            return Err(format!(
                "{} unexpected bytes after the last roaring bitmap",
                rest.len()
            ));
        }
        Ok(PositionBitmap { maps })
    }

    pub fn to_vec(&self) -> Vec<u64> {
        let mut v = Vec::with_capacity(self.cardinality() as usize);
        v.extend(self.iter());
        v
    }
}

fn optimized(m: &RoaringBitmap) -> RoaringBitmap {
    let mut m = m.clone();
    m.optimize();
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(b: &PositionBitmap) -> PositionBitmap {
        let mut out = Vec::new();
        b.serialize_into(&mut out);
        assert_eq!(out.len(), b.serialized_size());
        PositionBitmap::deserialize(&out).expect("own output must read back")
    }

    #[test]
    fn empty() {
        let b = PositionBitmap::new();
        let mut out = Vec::new();
        b.serialize_into(&mut out);
        assert_eq!(out, 0u64.to_le_bytes());
        assert_eq!(round_trip(&b), b);
        assert_eq!(b.range(0, 10).count(), 0);
    }

    #[test]
    fn out_of_range_positions_are_refused() {
        assert!(PositionBitmap::from_positions(&[1 << 63]).is_err());
        assert!(PositionBitmap::from_positions(&[MAX_POSITION]).is_ok());
    }

    #[test]
    fn java_style_gaps_are_read() -> std::result::Result<(), String> {
        // Java writes an empty bitmap for every key below the largest one.
        let mut data = 2u64.to_le_bytes().to_vec();
        data.extend_from_slice(&0u32.to_le_bytes());
        RoaringBitmap::new()
            .serialize_into(&mut data)
            .map_err(|e| e.to_string())?;
        data.extend_from_slice(&1u32.to_le_bytes());
        let mut m = RoaringBitmap::new();
        m.insert(5);
        m.serialize_into(&mut data).map_err(|e| e.to_string())?;
        let b = PositionBitmap::deserialize(&data)?;
        assert_eq!(b.to_vec(), vec![(1u64 << 32) + 5]);
        Ok(())
    }

    #[test]
    fn hostile_counts_and_keys() {
        let data = u64::MAX.to_le_bytes();
        assert!(PositionBitmap::deserialize(&data)
            .unwrap_err()
            .contains("cannot fit"));
        let mut data = 1u64.to_le_bytes().to_vec();
        data.extend_from_slice(&0x8000_0000u32.to_le_bytes());
        data.extend_from_slice(&[0x3A, 0x30, 0, 0, 0, 0, 0, 0]);
        assert!(PositionBitmap::deserialize(&data)
            .unwrap_err()
            .contains("2^63"));
    }

    proptest! {
        #[test]
        fn positions_round_trip(
            mut positions in prop::collection::vec(
                prop_oneof![0u64..100_000, 0u64..(1 << 34), 0u64..=MAX_POSITION], 0..2000)
        ) {
            let b = PositionBitmap::from_positions(&positions).expect("in range");
            positions.sort_unstable();
            positions.dedup();
            prop_assert_eq!(b.to_vec(), positions.clone());
            prop_assert_eq!(b.cardinality(), positions.len() as u64);
            let back = round_trip(&b);
            prop_assert_eq!(back.to_vec(), positions);
        }

        #[test]
        fn ranges_match_a_filter(
            positions in prop::collection::vec(0u64..(3 << 32), 0..500),
            start in 0u64..(3 << 32),
            len in 0u64..(1 << 33),
        ) {
            let b = PositionBitmap::from_positions(&positions).expect("in range");
            let end = start + len;
            let expected: Vec<u64> = b.iter().filter(|&p| p >= start && p < end).collect();
            prop_assert_eq!(b.range(start, end).collect::<Vec<_>>(), expected.clone());
            prop_assert_eq!(b.range_cardinality(start, end), expected.len() as u64);
        }

        #[test]
        fn union_is_set_union(
            a in prop::collection::vec(0u64..(1 << 33), 0..300),
            c in prop::collection::vec(0u64..(1 << 33), 0..300),
        ) {
            let mut x = PositionBitmap::from_positions(&a).expect("in range");
            x.union_with(&PositionBitmap::from_positions(&c).expect("in range"));
            let mut all: Vec<u64> = a.iter().chain(c.iter()).copied().collect();
            all.sort_unstable();
            all.dedup();
            prop_assert_eq!(x.to_vec(), all);
        }

        #[test]
        fn arbitrary_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = PositionBitmap::deserialize(&data);
        }
    }
}
