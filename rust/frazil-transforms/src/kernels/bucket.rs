//! `bucket[N]` over arrays: Iceberg hash of each value, then `(hash & MAX) % N`.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::ByteArrayType;
use arrow_array::types::*;
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, FixedSizeBinaryArray, GenericByteArray, Int32Array,
    OffsetSizeTrait,
};
use arrow_buffer::{i256, ScalarBuffer};
use arrow_schema::{DataType, TimeUnit};
use frazil_values::{Error, Result};

use super::{byte_range, downcast, map_values, output_vec};
use crate::murmur3::{hash_bytes, hash_decimal, hash_long};
use crate::scalar::micros_from_nanos;

/// `a % n` for any `a < 2^31` by a 32x32->64-bit multiply and a shift (Granlund-Montgomery,
/// N = 31-bit dividends need a 32-bit magic), so the hot loop has no division and can be
/// vectorized with plain SSE2 `pmuludq`.
#[derive(Clone, Copy)]
struct Modulus {
    n: u32,
    // u32 so that the product is a 32x32->64 multiply, which SIMD units have.
    magic: u32,
    shift: u32,
}

impl Modulus {
    fn new(n: u32) -> Self {
        debug_assert!(n > 0 && n <= i32::MAX as u32);
        let l = 32 - (n - 1).leading_zeros(); // ceil(log2(n))
        let shift = 31 + l;
        // magic = ceil(2^(31+l) / n) < 2^32; then n * magic - 2^(31+l) < 2^l makes every
        // quotient of a 31-bit dividend exact.
        let magic = (1u64 << shift).div_ceil(n as u64) as u32;
        Modulus { n, magic, shift }
    }

    #[inline(always)]
    fn bucket(self, hash: i32) -> i32 {
        let a = (hash & i32::MAX) as u32;
        let q = ((a as u64 * self.magic as u64) >> self.shift) as u32;
        a.wrapping_sub(q.wrapping_mul(self.n)) as i32
    }
}

fn ints<T: ArrowPrimitiveType>(
    array: &dyn Array,
    m: Modulus,
    f: impl Fn(T::Native) -> i64 + Copy,
) -> Int32Array {
    let array = array.as_primitive::<T>();
    let out = map_values(array.values(), |v| m.bucket(hash_long(f(v))));
    Int32Array::new(ScalarBuffer::from(out), array.nulls().cloned())
}

fn checked_ints<T: ArrowPrimitiveType>(
    array: &dyn Array,
    m: Modulus,
    f: impl Fn(T::Native) -> Option<i64>,
) -> Result<Int32Array> {
    array.as_primitive::<T>().try_unary::<_, Int32Type, _>(|v| {
        f(v).map(|x| m.bucket(hash_long(x))).ok_or_else(|| {
            Error::invalid(format!(
                "value {v:?} is outside the range of its Iceberg type"
            ))
        })
    })
}

fn decimals<T: ArrowPrimitiveType>(
    array: &dyn Array,
    m: Modulus,
    f: impl Fn(T::Native) -> i128 + Copy,
) -> Int32Array {
    let array = array.as_primitive::<T>();
    let out = map_values(array.values(), |v| m.bucket(hash_decimal(f(v))));
    Int32Array::new(ScalarBuffer::from(out), array.nulls().cloned())
}

/// Minimal big-endian bytes of a 256-bit integer, for decimal256 values outside i128.
fn hash_i256(v: i256) -> i32 {
    match v.to_i128() {
        Some(small) => hash_decimal(small),
        None => {
            let bytes = v.to_be_bytes();
            let mut start = 0;
            while start < 31
                && ((bytes[start] == 0 && bytes[start + 1] & 0x80 == 0)
                    || (bytes[start] == 0xff && bytes[start + 1] & 0x80 != 0))
            {
                start += 1;
            }
            hash_bytes(&bytes[start..])
        }
    }
}

fn byte_arrays<T: ByteArrayType>(array: &dyn Array, m: Modulus) -> Result<Int32Array>
where
    T::Offset: OffsetSizeTrait,
{
    let array: &GenericByteArray<T> = downcast(array)?;
    let offsets = array.value_offsets();
    let values = array.value_data();
    let mut out = output_vec(array.len());
    for i in 0..array.len() {
        out.push(m.bucket(hash_bytes(byte_range(offsets, values, i)?)));
    }
    Ok(Int32Array::new(
        ScalarBuffer::from(out),
        array.nulls().cloned(),
    ))
}

fn views(array: &dyn Array, m: Modulus) -> Int32Array {
    let out: Vec<i32> = match array.data_type() {
        DataType::Utf8View => array
            .as_string_view()
            .bytes_iter()
            .map(|b| m.bucket(hash_bytes(b)))
            .collect(),
        _ => array
            .as_binary_view()
            .bytes_iter()
            .map(|b| m.bucket(hash_bytes(b)))
            .collect(),
    };
    Int32Array::new(ScalarBuffer::from(out), array.nulls().cloned())
}

fn fixed(array: &dyn Array, m: Modulus) -> Result<Int32Array> {
    let array: &FixedSizeBinaryArray = downcast(array)?;
    let width = array.value_length() as usize;
    let data = array.value_data();
    let out: Vec<i32> = if width == 0 {
        vec![m.bucket(hash_bytes(&[])); array.len()]
    } else {
        let needed = width * array.len();
        let data = data.get(..needed).ok_or_else(|| {
            Error::invalid("malformed Arrow array: fixed-size binary buffer too short")
        })?;
        data.chunks_exact(width)
            .map(|b| m.bucket(hash_bytes(b)))
            .collect()
    };
    Ok(Int32Array::new(
        ScalarBuffer::from(out),
        array.nulls().cloned(),
    ))
}

const MILLIS_PER_DAY: i64 = 86_400_000;

pub(super) fn bucket(array: &dyn Array, n: u32) -> Result<ArrayRef> {
    use DataType as D;
    let m = Modulus::new(n);
    let out = match array.data_type() {
        D::Int8 => ints::<Int8Type>(array, m, |v| v as i64),
        D::Int16 => ints::<Int16Type>(array, m, |v| v as i64),
        D::Int32 => ints::<Int32Type>(array, m, |v| v as i64),
        D::Int64 => ints::<Int64Type>(array, m, |v| v),
        D::UInt8 => ints::<UInt8Type>(array, m, |v| v as i64),
        D::UInt16 => ints::<UInt16Type>(array, m, |v| v as i64),
        D::UInt32 => ints::<UInt32Type>(array, m, |v| v as i64),
        D::UInt64 => checked_ints::<UInt64Type>(array, m, |v| i64::try_from(v).ok())?,
        D::Date32 => ints::<Date32Type>(array, m, |v| v as i64),
        D::Date64 => ints::<Date64Type>(array, m, |v| v.div_euclid(MILLIS_PER_DAY)),
        D::Time32(TimeUnit::Second) => ints::<Time32SecondType>(array, m, |v| v as i64 * 1_000_000),
        D::Time32(_) => ints::<Time32MillisecondType>(array, m, |v| v as i64 * 1_000),
        D::Time64(TimeUnit::Nanosecond) => {
            ints::<Time64NanosecondType>(array, m, micros_from_nanos)
        }
        D::Time64(_) => ints::<Time64MicrosecondType>(array, m, |v| v),
        D::Timestamp(TimeUnit::Second, _) => {
            checked_ints::<TimestampSecondType>(array, m, |v| v.checked_mul(1_000_000))?
        }
        D::Timestamp(TimeUnit::Millisecond, _) => {
            checked_ints::<TimestampMillisecondType>(array, m, |v| v.checked_mul(1_000))?
        }
        D::Timestamp(TimeUnit::Microsecond, _) => ints::<TimestampMicrosecondType>(array, m, |v| v),
        D::Timestamp(TimeUnit::Nanosecond, _) => {
            ints::<TimestampNanosecondType>(array, m, micros_from_nanos)
        }
        D::Decimal32(..) => decimals::<Decimal32Type>(array, m, |v| v as i128),
        D::Decimal64(..) => decimals::<Decimal64Type>(array, m, |v| v as i128),
        D::Decimal128(..) => decimals::<Decimal128Type>(array, m, |v| v),
        D::Decimal256(..) => array
            .as_primitive::<Decimal256Type>()
            .unary::<_, Int32Type>(|v| m.bucket(hash_i256(v))),
        D::Utf8 => byte_arrays::<Utf8Type>(array, m)?,
        D::LargeUtf8 => byte_arrays::<LargeUtf8Type>(array, m)?,
        D::Binary => byte_arrays::<BinaryType>(array, m)?,
        D::LargeBinary => byte_arrays::<LargeBinaryType>(array, m)?,
        D::Utf8View | D::BinaryView => views(array, m),
        D::FixedSizeBinary(_) => fixed(array, m)?,
        other => {
            return Err(Error::unsupported(format!(
                "bucket cannot be applied to Arrow type {other}"
            )))
        }
    };
    Ok(Arc::new(out) as ArrayRef)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::bucket_of_hash;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn modulus_matches_division(h: i32, n in 1u32..=i32::MAX as u32) {
            prop_assert_eq!(Modulus::new(n).bucket(h), bucket_of_hash(h, n));
        }
    }

    #[test]
    fn modulus_edges() {
        for n in [
            1u32,
            2,
            3,
            7,
            16,
            1000,
            65_537,
            i32::MAX as u32 - 1,
            i32::MAX as u32,
        ] {
            let m = Modulus::new(n);
            for h in [
                0,
                1,
                -1,
                i32::MAX,
                i32::MIN,
                i32::MAX - 1,
                n as i32 - 1,
                n as i32,
            ] {
                assert_eq!(m.bucket(h), bucket_of_hash(h, n), "h={h} n={n}");
            }
        }
    }
}
