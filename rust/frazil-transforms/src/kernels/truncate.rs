//! `truncate[W]` over arrays: integers and decimals floored to a multiple of W, strings to W code
//! points, binaries to W bytes. Integer outputs use the Iceberg result type (int or long); byte
//! and decimal outputs keep the input's layout.

use std::sync::Arc;

use arrow_array::builder::{BinaryViewBuilder, StringViewBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, GenericByteArray, Int32Array, Int64Array, OffsetSizeTrait,
    PrimitiveArray,
};
use arrow_buffer::{i256, ArrowNativeType, Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::DataType;
use frazil_values::{Error, Result};

use super::{byte_range, downcast, map_values, output_vec};
use crate::scalar::{
    truncate_bytes, truncate_i128, truncate_i32, truncate_i64, truncate_utf8_bytes,
};
use strength_reduce::StrengthReducedU64;

fn to_int<T: ArrowPrimitiveType>(
    array: &dyn Array,
    w: u32,
    f: impl Fn(T::Native) -> i32 + Copy,
) -> ArrayRef {
    let array = array.as_primitive::<T>();
    let out = map_values(array.values(), |v| truncate_i32(f(v), w));
    Arc::new(Int32Array::new(out.into(), array.nulls().cloned()))
}

/// `truncate_i64` with the division by W strength-reduced to multiplies: a 64-bit hardware
/// division costs more than everything else in the loop.
#[derive(Clone, Copy)]
struct LongTruncator {
    w: i64,
    divisor: StrengthReducedU64,
}

impl LongTruncator {
    fn new(w: u32) -> Self {
        LongTruncator {
            w: w as i64,
            divisor: StrengthReducedU64::new(w as u64),
        }
    }

    /// Equals Java's `v - (((v % W) + W) % W)`: the inner sum cannot overflow for W < 2^31, so
    /// that is `v - rem_euclid(v, W)`, wrapping only in the final subtraction as Java does.
    #[inline(always)]
    fn apply(self, v: i64) -> i64 {
        let r = (v.unsigned_abs() % self.divisor) as i64;
        let rem = if v >= 0 || r == 0 { r } else { self.w - r };
        v.wrapping_sub(rem)
    }
}

fn to_long<T: ArrowPrimitiveType>(
    array: &dyn Array,
    w: u32,
    f: impl Fn(T::Native) -> i64 + Copy,
) -> ArrayRef {
    let array = array.as_primitive::<T>();
    let t = LongTruncator::new(w);
    let out = map_values(array.values(), |v| t.apply(f(v)));
    Arc::new(Int64Array::new(out.into(), array.nulls().cloned()))
}

fn overflow(v: impl std::fmt::Debug, w: u32) -> Error {
    Error::invalid(format!(
        "truncating decimal {v:?} by {w} leaves the decimal's range"
    ))
}

/// Decimals keep their Arrow type, precision and scale; the arithmetic runs on i128.
fn decimals<T: DecimalType>(
    array: &dyn Array,
    w: u32,
    widen: impl Fn(T::Native) -> i128,
    narrow: impl Fn(i128) -> Option<T::Native>,
) -> Result<ArrayRef> {
    let input = array.as_primitive::<T>();
    let out: PrimitiveArray<T> = input.try_unary(|v| {
        truncate_i128(widen(v), w)
            .and_then(&narrow)
            .ok_or_else(|| overflow(v, w))
    })?;
    let (p, s) = (input.precision(), input.scale());
    Ok(Arc::new(
        out.with_precision_and_scale(p, s)
            .map_err(|e| Error::invalid(e.to_string()))?,
    ))
}

fn decimal256(array: &dyn Array, w: u32) -> Result<ArrayRef> {
    let input = array.as_primitive::<Decimal256Type>();
    let width = i256::from_i128(w as i128);
    let out: PrimitiveArray<Decimal256Type> = input.try_unary(|v| {
        // rem_euclid for a positive width
        let r = v
            .checked_rem(width)
            .and_then(|r| r.checked_add(width))
            .and_then(|r| r.checked_rem(width));
        r.and_then(|r| v.checked_sub(r))
            .ok_or_else(|| overflow(v, w))
    })?;
    Ok(Arc::new(
        out.with_precision_and_scale(input.precision(), input.scale())
            .map_err(|e| Error::invalid(e.to_string()))?,
    ))
}

/// Strings and binaries with 32- or 64-bit offsets: one pass that copies each kept prefix.
fn byte_arrays<T: ByteArrayType>(array: &dyn Array, w: u32, utf8: bool) -> Result<ArrayRef>
where
    T::Offset: OffsetSizeTrait,
{
    let input: &GenericByteArray<T> = downcast(array)?;
    let offsets = input.value_offsets();
    let data = input.value_data();
    let len = input.len();
    let mut out_offsets = output_vec(len + 1);
    let mut out_values = Vec::with_capacity(data.len().min(len.saturating_mul(w as usize)));
    out_offsets.push(T::Offset::usize_as(0));
    for i in 0..len {
        if input.is_valid(i) {
            let value = byte_range(offsets, data, i)?;
            let kept = if utf8 {
                truncate_utf8_bytes(value, w)
            } else {
                truncate_bytes(value, w)
            };
            out_values.extend_from_slice(kept);
        }
        out_offsets.push(
            T::Offset::from_usize(out_values.len())
                .ok_or_else(|| Error::invalid("truncated values exceed the offset range"))?,
        );
    }
    let offsets = OffsetBuffer::new(ScalarBuffer::from(out_offsets));
    let values = Buffer::from_vec(out_values);
    // SAFETY: the offsets are monotonic and end at the values' length by construction, and each
    // value is a prefix of an input value cut where a code point starts, so it is UTF-8 whenever
    // the input is (which the C data interface requires of a string array's producer).
    // Re-validating every output byte would cost a third of the kernel.
    let out =
        unsafe { GenericByteArray::<T>::new_unchecked(offsets, values, input.nulls().cloned()) };
    debug_assert!(out.to_data().validate_full().is_ok());
    Ok(Arc::new(out))
}

fn views(array: &dyn Array, w: u32) -> ArrayRef {
    if let DataType::Utf8View = array.data_type() {
        let input = array.as_string_view();
        let mut b = StringViewBuilder::with_capacity(input.len());
        for v in input.iter() {
            b.append_option(v.map(|s| crate::scalar::truncate_str(s, w)));
        }
        Arc::new(b.finish())
    } else {
        let input = array.as_binary_view();
        let mut b = BinaryViewBuilder::with_capacity(input.len());
        for v in input.iter() {
            b.append_option(v.map(|s| truncate_bytes(s, w)));
        }
        Arc::new(b.finish())
    }
}

pub(super) fn truncate(array: &dyn Array, w: u32) -> Result<ArrayRef> {
    use DataType as D;
    let out = match array.data_type() {
        D::Int8 => to_int::<Int8Type>(array, w, |v| v as i32),
        D::Int16 => to_int::<Int16Type>(array, w, |v| v as i32),
        D::Int32 => to_int::<Int32Type>(array, w, |v| v),
        D::UInt8 => to_int::<UInt8Type>(array, w, |v| v as i32),
        D::UInt16 => to_int::<UInt16Type>(array, w, |v| v as i32),
        D::Int64 => to_long::<Int64Type>(array, w, |v| v),
        D::UInt32 => to_long::<UInt32Type>(array, w, |v| v as i64),
        D::UInt64 => {
            let out: Int64Array = array.as_primitive::<UInt64Type>().try_unary(|v| {
                i64::try_from(v)
                    .map(|v| truncate_i64(v, w))
                    .map_err(|_| Error::invalid(format!("value {v} is outside the range of long")))
            })?;
            Arc::new(out)
        }
        D::Decimal32(..) => {
            decimals::<Decimal32Type>(array, w, |v| v as i128, |v| i32::try_from(v).ok())?
        }
        D::Decimal64(..) => {
            decimals::<Decimal64Type>(array, w, |v| v as i128, |v| i64::try_from(v).ok())?
        }
        D::Decimal128(..) => decimals::<Decimal128Type>(array, w, |v| v, Some)?,
        D::Decimal256(..) => decimal256(array, w)?,
        D::Utf8 => byte_arrays::<Utf8Type>(array, w, true)?,
        D::LargeUtf8 => byte_arrays::<LargeUtf8Type>(array, w, true)?,
        D::Binary => byte_arrays::<BinaryType>(array, w, false)?,
        D::LargeBinary => byte_arrays::<LargeBinaryType>(array, w, false)?,
        D::Utf8View | D::BinaryView => views(array, w),
        other => {
            return Err(Error::unsupported(format!(
                "truncate cannot be applied to Arrow type {other}"
            )))
        }
    };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn fast_long_truncation_matches_java_formula(v: i64, w in 1u32..=i32::MAX as u32) {
            prop_assert_eq!(LongTruncator::new(w).apply(v), truncate_i64(v, w));
        }
    }

    #[test]
    fn long_truncation_edges() {
        for w in [1u32, 2, 10, 1000, i32::MAX as u32] {
            let t = LongTruncator::new(w);
            for v in [i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX, i64::MAX - 1] {
                assert_eq!(t.apply(v), truncate_i64(v, w), "v={v} w={w}");
            }
        }
    }
}
