//! A theta sketch of values' binary single-value serializations, built by Apache DataSketches
//! (the `datasketches` crate) and serialized in the compact, ordered form (serial version 3)
//! that DataSketches Java, C++ and Python read.
//!
//! Each non-null value becomes its Appendix D bytes and is offered as raw bytes, hashed as Java's
//! `UpdateSketch.update(byte[])` hashes them (MurmurHash3_x64_128, seed 9001); empty byte strings
//! are skipped, as DataSketches' `update` skips empty items. The defaults are those of Java's
//! `UpdateSketch.builder().build()` that the Java reference uses: `lg_k` 12, resize factor X8.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
    Time64MicrosecondType, TimestampMicrosecondType, TimestampNanosecondType,
};

use arrow_array::Array;
use arrow_schema::{DataType, TimeUnit};
use datasketches::hash::value::raw_bytes;
use datasketches::theta::{self, ThetaSketchBuilder, ThetaUnionBuilder};
use frazil_values::{binary, Error, Literal, PrimitiveType, Result};

/// DataSketches' default nominal entries, `2^12`.
pub const DEFAULT_LG_K: u8 = 12;

#[derive(Debug)]
pub struct ThetaSketch {
    inner: theta::ThetaSketch,
}

impl Default for ThetaSketch {
    fn default() -> Self {
        Self::new(DEFAULT_LG_K).unwrap_or_else(|_| unreachable!())
    }
}

impl ThetaSketch {
    /// A sketch keeping `2^lg_k` hashes (`lg_k` from 5 to 26, the library's range).
    pub fn new(lg_k: u8) -> Result<Self> {
        // Seed and resize factor stay the library's defaults, which are Java's (9001, X8).
        let inner = ThetaSketchBuilder::default()
            .lg_k(lg_k)
            .build()
            .map_err(|e| Error::invalid(format!("theta sketch lg_k {lg_k}: {e}")))?;
        Ok(ThetaSketch { inner })
    }

    /// Adds one item (its bytes as hashed by DataSketches' `update(byte[])`).
    pub fn update_bytes(&mut self, data: &[u8]) {
        // The library hashes an empty slice; Java and C++ skip empty items.
        if !data.is_empty() {
            self.inner.update(raw_bytes::from_slice(data));
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

    /// The number of distinct values this sketch estimates.
    pub fn estimate(&self) -> f64 {
        self.inner.estimate()
    }

    /// The compact, ordered serialization (serial version 3).
    pub fn to_compact_bytes(&self) -> Vec<u8> {
        self.inner.compact(true).serialize()
    }

    /// Whether no non-empty item was offered (even one whose hash theta rejected counts).
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }
}

/// The estimate of a serialized compact theta sketch of the default seed (as any DataSketches
/// implementation writes it, serial versions 1 to 4).
pub fn estimate_of(data: &[u8]) -> Result<f64> {
    Ok(deserialize(data)?.estimate())
}

fn deserialize(data: &[u8]) -> Result<theta::CompactThetaSketch> {
    theta::CompactThetaSketch::deserialize(data)
        .map_err(|e| Error::decode(format!("not a valid theta sketch: {e}")))
}

/// The union of serialized theta sketches (DataSketches' set union: the sketch of all their
/// values), for merging sketches computed apart.
#[derive(Debug)]
pub struct ThetaUnion {
    inner: theta::ThetaUnion,
}

impl ThetaUnion {
    /// A union keeping up to `2^lg_k` hashes, like a sketch of that `lg_k`.
    pub fn new(lg_k: u8) -> Result<Self> {
        let inner = ThetaUnionBuilder::default()
            .lg_k(lg_k)
            .build()
            .map_err(|e| Error::invalid(format!("theta union lg_k {lg_k}: {e}")))?;
        Ok(ThetaUnion { inner })
    }

    /// Adds a serialized compact sketch.
    pub fn update_bytes(&mut self, data: &[u8]) -> Result<()> {
        let sketch = deserialize(data)?;
        self.inner
            .update(&sketch)
            .map_err(|e| Error::decode(format!("cannot merge theta sketch: {e}")))
    }

    /// The number of distinct values the union estimates.
    pub fn estimate(&self) -> f64 {
        self.inner.to_sketch(false).estimate()
    }

    /// The union as a compact, ordered sketch (serial version 3).
    pub fn to_compact_bytes(&self) -> Vec<u8> {
        self.inner.to_sketch(true).serialize()
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
    fn empty_and_single() {
        let mut s = ThetaSketch::default();
        // Java's empty compact sketch: no seed hash (C++ writes 0x93cc; both read either).
        assert_eq!(s.to_compact_bytes(), [1, 3, 3, 0, 0, 0x1e, 0, 0].to_vec());
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
    fn union_of_halves_is_the_sketch_of_all_and_reading_checks_bytes() {
        let (mut a, mut b, mut all) = (
            ThetaSketch::default(),
            ThetaSketch::default(),
            ThetaSketch::default(),
        );
        for i in 0..3000u32 {
            let item = i.to_le_bytes();
            if i % 2 == 0 {
                a.update_bytes(&item)
            } else {
                b.update_bytes(&item)
            }
            all.update_bytes(&item);
        }
        let mut u = ThetaUnion::new(DEFAULT_LG_K).expect("lg_k");
        assert_eq!(
            u.to_compact_bytes(),
            ThetaSketch::default().to_compact_bytes()
        );
        u.update_bytes(&a.to_compact_bytes()).expect("a");
        u.update_bytes(&b.to_compact_bytes()).expect("b");
        assert_eq!(u.to_compact_bytes(), all.to_compact_bytes());
        assert_eq!(u.estimate(), 3000.0);
        let bytes = all.to_compact_bytes();
        assert_eq!(estimate_of(&bytes).expect("valid"), 3000.0);
        // Every truncation of a valid image is an error, never a panic.
        for len in 0..bytes.len() {
            let err = estimate_of(&bytes[..len]);
            assert!(err.is_err(), "{len}");
        }
        assert!(u.update_bytes(b"not a sketch").is_err());
    }

    #[test]
    fn wrong_array_type_is_an_error() {
        let mut s = ThetaSketch::default();
        let values = StringArray::from(vec!["a"]);
        let err = s
            .update_array(&values, &PrimitiveType::Long)
            .expect_err("mismatch");
        assert!(err.message.contains("Utf8"), "{}", err.message);
        assert!(ThetaSketch::new(4).is_err());
    }
}
