//! A theta sketch built from values' binary single-value serializations, serialized as the
//! compact, ordered form (serial version 3) that Apache DataSketches (Java, C++, Python) reads.
//!
//! Each non-null value becomes its Appendix D bytes; empty byte strings are skipped, as
//! DataSketches skips empty items. The hash of an item is the first half of
//! MurmurHash3_x64_128 (seed 9001) shifted right once. Like DataSketches' default (QuickSelect)
//! update sketch, the sketch keeps every distinct hash below theta until it holds more than
//! 15/16 of `2k`, then rebuilds to the `k` smallest with theta the `k+1`-th; so it is exact up to
//! 7680 distinct values at the default `k` = 4096, and fed the same items in the same order it
//! serializes to the same bytes as DataSketches (tested against the Python package).

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
    Time64MicrosecondType, TimestampMicrosecondType, TimestampNanosecondType,
};
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use arrow_array::Array;
use arrow_schema::{DataType, TimeUnit};
use frazil_values::{binary, Error, Literal, PrimitiveType, Result};

use crate::murmur3::hash_x64_128_h1;

/// DataSketches' default update seed.
pub const DEFAULT_SEED: u64 = 9001;
/// DataSketches' default nominal entries, `2^12`.
pub const DEFAULT_LG_K: u8 = 12;
/// Theta of a sketch in exact mode (hashes are 63-bit).
const MAX_THETA: u64 = i64::MAX as u64;

const SERIAL_VERSION: u8 = 3;
const FAMILY_COMPACT: u8 = 3;
const FLAG_READ_ONLY: u8 = 1 << 1;
const FLAG_EMPTY: u8 = 1 << 2;
const FLAG_COMPACT: u8 = 1 << 3;
const FLAG_ORDERED: u8 = 1 << 4;

/// The 16-bit hash of the seed that every serialized sketch carries, so sketches of different
/// seeds are never combined.
pub fn seed_hash(seed: u64) -> u16 {
    (hash_x64_128_h1(&seed.to_le_bytes(), 0) & 0xffff) as u16
}

#[derive(Debug, Clone)]
pub struct ThetaSketch {
    k: usize,
    theta: u64,
    /// Distinct hashes below theta.
    hashes: HashSet<u64, BuildHasherDefault<PassThrough>>,
    seen_any: bool,
}

/// The items are already uniform 63-bit hashes: the set needs no second hash.
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8) | u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

impl Default for ThetaSketch {
    fn default() -> Self {
        Self::new(DEFAULT_LG_K).unwrap_or_else(|_| unreachable!())
    }
}

impl ThetaSketch {
    /// A sketch keeping `2^lg_k` hashes (`lg_k` from 4 to 26, DataSketches' range).
    pub fn new(lg_k: u8) -> Result<Self> {
        if !(4..=26).contains(&lg_k) {
            return Err(Error::invalid(format!(
                "theta sketch lg_k must be 4..=26, got {lg_k}"
            )));
        }
        Ok(ThetaSketch {
            k: 1 << lg_k,
            theta: MAX_THETA,
            hashes: HashSet::default(),
            seen_any: false,
        })
    }

    /// Adds one item (its bytes as hashed by DataSketches' `update(byte[])`).
    pub fn update_bytes(&mut self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        self.seen_any = true;
        let hash = hash_x64_128_h1(data, DEFAULT_SEED) >> 1;
        if hash == 0 || hash >= self.theta {
            return;
        }
        // DataSketches' rebuild threshold: 15/16 of a table of 2k slots.
        if self.hashes.insert(hash) && self.hashes.len() > 2 * self.k / 16 * 15 {
            self.rebuild();
        }
    }

    /// Adds every non-null value of `array`, read as Iceberg type `ty` and serialized by the
    /// spec's binary single-value rule.
    pub fn update_array(&mut self, array: &dyn Array, ty: &PrimitiveType) -> Result<()> {
        let mut each = |value: Literal| -> Result<()> {
            self.update_bytes(&binary::to_bytes(&value, ty)?);
            Ok(())
        };
        for_each_literal(array, ty, &mut each)
    }

    fn rebuild(&mut self) {
        let mut all: Vec<u64> = self.hashes.drain().collect();
        let (_, theta, _) = all.select_nth_unstable(self.k);
        self.theta = *theta;
        all.truncate(self.k);
        self.hashes.extend(all);
    }

    /// The number of distinct values this sketch estimates.
    pub fn estimate(&self) -> f64 {
        if self.theta == MAX_THETA {
            self.hashes.len() as f64
        } else {
            self.hashes.len() as f64 / (self.theta as f64 / MAX_THETA as f64)
        }
    }

    /// The compact, ordered serialization (serial version 3) with the default seed.
    pub fn to_compact_bytes(&self) -> Vec<u8> {
        let mut sorted: Vec<u64> = self.hashes.iter().copied().collect();
        sorted.sort_unstable();
        let exact = self.theta == MAX_THETA;
        let empty = exact && self.hashes.is_empty();
        // An empty sketch and one holding a single hash in exact mode need only one preamble
        // long; exact mode two (with the count), estimation mode three (with theta).
        let pre_longs: u8 = if empty || (exact && self.hashes.len() == 1) {
            1
        } else if exact {
            2
        } else {
            3
        };
        let mut flags = FLAG_READ_ONLY | FLAG_COMPACT | FLAG_ORDERED;
        if empty {
            flags |= FLAG_EMPTY;
        }
        let mut out = Vec::with_capacity(8 * (pre_longs as usize + self.hashes.len()));
        out.extend_from_slice(&[pre_longs, SERIAL_VERSION, FAMILY_COMPACT, 0, 0, flags]);
        out.extend_from_slice(&seed_hash(DEFAULT_SEED).to_le_bytes());
        if pre_longs > 1 {
            out.extend_from_slice(&(self.hashes.len() as u32).to_le_bytes());
            out.extend_from_slice(&[0u8; 4]);
        }
        if pre_longs > 2 {
            out.extend_from_slice(&self.theta.to_le_bytes());
        }
        for h in &sorted {
            out.extend_from_slice(&h.to_le_bytes());
        }
        out
    }

    /// Whether any non-empty item was offered (even one whose hash theta rejected).
    pub fn is_empty(&self) -> bool {
        !self.seen_any
    }
}

fn mismatch(array: &dyn Array, ty: &PrimitiveType) -> Error {
    Error::invalid(format!(
        "an Arrow array of {} cannot hold values of Iceberg type {ty}",
        array.data_type()
    ))
}

/// Calls `f` with each non-null value of `array` as a literal of `ty`.
fn for_each_literal(
    array: &dyn Array,
    ty: &PrimitiveType,
    f: &mut dyn FnMut(Literal) -> Result<()>,
) -> Result<()> {
    use PrimitiveType as P;
    macro_rules! each {
        ($arr:expr, $make:expr) => {{
            let arr = $arr;
            for i in 0..arr.len() {
                if arr.is_valid(i) {
                    f($make(arr.value(i)))?;
                }
            }
            Ok(())
        }};
    }
    match (ty, array.data_type()) {
        (P::Boolean, DataType::Boolean) => each!(array.as_boolean(), Literal::Boolean),
        (P::Int, DataType::Int32) => each!(array.as_primitive::<Int32Type>(), Literal::Int),
        (P::Long, DataType::Int64) => each!(array.as_primitive::<Int64Type>(), Literal::Long),
        (P::Float, DataType::Float32) => {
            each!(array.as_primitive::<Float32Type>(), Literal::Float)
        }
        (P::Double, DataType::Float64) => {
            each!(array.as_primitive::<Float64Type>(), Literal::Double)
        }
        (P::Decimal { .. }, DataType::Decimal128(..)) => {
            each!(array.as_primitive::<Decimal128Type>(), Literal::Decimal)
        }
        (P::Date, DataType::Date32) => each!(array.as_primitive::<Date32Type>(), Literal::Date),
        (P::Time, DataType::Time64(TimeUnit::Microsecond)) => {
            each!(array.as_primitive::<Time64MicrosecondType>(), Literal::Time)
        }
        (P::Timestamp | P::TimestampTz, DataType::Timestamp(TimeUnit::Microsecond, _)) => {
            let make = if matches!(ty, P::Timestamp) {
                Literal::Timestamp
            } else {
                Literal::TimestampTz
            };
            each!(array.as_primitive::<TimestampMicrosecondType>(), make)
        }
        (P::TimestampNs | P::TimestampTzNs, DataType::Timestamp(TimeUnit::Nanosecond, _)) => {
            let make = if matches!(ty, P::TimestampNs) {
                Literal::TimestampNs
            } else {
                Literal::TimestampTzNs
            };
            each!(array.as_primitive::<TimestampNanosecondType>(), make)
        }
        (P::String, DataType::Utf8) => {
            each!(array.as_string::<i32>(), |s: &str| Literal::String(
                s.into()
            ))
        }
        (P::String, DataType::LargeUtf8) => {
            each!(array.as_string::<i64>(), |s: &str| Literal::String(
                s.into()
            ))
        }
        (P::String, DataType::Utf8View) => {
            each!(array.as_string_view(), |s: &str| Literal::String(s.into()))
        }
        (P::Binary, DataType::Binary) => {
            each!(array.as_binary::<i32>(), |b: &[u8]| Literal::Binary(
                b.into()
            ))
        }
        (P::Binary, DataType::LargeBinary) => {
            each!(array.as_binary::<i64>(), |b: &[u8]| Literal::Binary(
                b.into()
            ))
        }
        (P::Binary, DataType::BinaryView) => {
            each!(array.as_binary_view(), |b: &[u8]| Literal::Binary(b.into()))
        }
        (P::Fixed(_), DataType::FixedSizeBinary(_)) => {
            each!(array.as_fixed_size_binary(), |b: &[u8]| Literal::Fixed(
                b.into()
            ))
        }
        (P::Uuid, DataType::FixedSizeBinary(16)) => {
            each!(array.as_fixed_size_binary(), |b: &[u8]| {
                let mut be = [0u8; 16];
                be.copy_from_slice(b);
                Literal::Uuid(u128::from_be_bytes(be))
            })
        }
        _ => Err(mismatch(array, ty)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};

    #[test]
    fn default_seed_hash() {
        // Every serialized DataSketches sketch of the default seed carries 0x93cc.
        assert_eq!(seed_hash(DEFAULT_SEED), 0x93cc);
    }

    #[test]
    fn empty_and_single() {
        let mut s = ThetaSketch::default();
        assert_eq!(
            s.to_compact_bytes(),
            [1, 3, 3, 0, 0, 0x1e, 0xcc, 0x93].to_vec()
        );
        s.update_bytes(b"");
        assert!(s.is_empty());
        s.update_bytes(b"v0");
        let bytes = s.to_compact_bytes();
        assert_eq!(bytes.len(), 16);
        assert_eq!(bytes[0], 1);
        assert_eq!(bytes[5], 0x1a);
    }

    #[test]
    fn exact_below_k_and_estimates_above() {
        let mut s = ThetaSketch::new(10).expect("lg_k");
        let values: Int64Array = (0..1000i64).chain(0..1000).collect();
        s.update_array(&values, &PrimitiveType::Long)
            .expect("update");
        assert_eq!(s.estimate(), 1000.0);
        let bytes = s.to_compact_bytes();
        assert_eq!(bytes[0], 2);
        assert_eq!(
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]),
            1000
        );

        let values: Int64Array = (0..100_000i64).collect();
        s.update_array(&values, &PrimitiveType::Long)
            .expect("update");
        let est = s.estimate();
        // At least 1024 hashes: relative standard error at most 1/sqrt(1024) = 3%; allow 4 sigma.
        assert!((est - 100_000.0).abs() < 12_500.0, "{est}");
        let bytes = s.to_compact_bytes();
        assert_eq!(bytes[0], 3);
        let retained = (bytes.len() - 24) / 8;
        assert!((1024..=1920).contains(&retained), "{retained}");
    }

    #[test]
    fn wrong_array_type_is_an_error() {
        let mut s = ThetaSketch::default();
        let values = StringArray::from(vec!["a"]);
        let err = s
            .update_array(&values, &PrimitiveType::Long)
            .expect_err("mismatch");
        assert!(err.message.contains("Utf8"), "{}", err.message);
        assert!(ThetaSketch::new(3).is_err());
    }
}
