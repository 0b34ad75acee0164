//! Arrow kernels: each transform over a whole array, for every Arrow layout that can carry its
//! source types. Values are normalized to the Iceberg representation (micros, days, i128
//! unscaled) on the fly, inside one tight loop per layout; nulls pass through as the input's
//! validity bitmap, untouched.

mod bucket;
mod temporal;
mod truncate;

use std::sync::Arc;

use arrow_array::{make_array, new_null_array, Array, ArrayRef};
use arrow_schema::{DataType, Field, FieldRef, TimeUnit};
use frazil_values::{Error, PrimitiveType, Result, Type};

use crate::transform::Transform;

/// The Iceberg type of an Arrow layout. `is_uuid` marks a 16-byte fixed-size binary that carries
/// the `arrow.uuid` extension type, which the C data interface passes as field metadata only.
pub fn source_type_of(data_type: &DataType, is_uuid: bool) -> Result<PrimitiveType> {
    use DataType as D;
    use PrimitiveType as P;
    Ok(match data_type {
        D::Null => P::Unknown,
        D::Boolean => P::Boolean,
        D::Int8 | D::Int16 | D::Int32 | D::UInt8 | D::UInt16 => P::Int,
        // u64 is accepted where its values fit a long; the kernels check each value.
        D::Int64 | D::UInt32 | D::UInt64 => P::Long,
        D::Float16 | D::Float32 => P::Float,
        D::Float64 => P::Double,
        D::Decimal32(p, s) | D::Decimal64(p, s) | D::Decimal128(p, s) | D::Decimal256(p, s) => {
            PrimitiveType::decimal(*p as u32, *s as i32).map_err(|_| {
                Error::unsupported(format!(
                    "{data_type} is not an Iceberg decimal: precision must be at most 38"
                ))
            })?
        }
        D::Date32 | D::Date64 => P::Date,
        D::Time32(_) | D::Time64(_) => P::Time,
        D::Timestamp(TimeUnit::Nanosecond, None) => P::TimestampNs,
        D::Timestamp(TimeUnit::Nanosecond, Some(_)) => P::TimestampTzNs,
        D::Timestamp(_, None) => P::Timestamp,
        D::Timestamp(_, Some(_)) => P::TimestampTz,
        D::Utf8 | D::LargeUtf8 | D::Utf8View => P::String,
        D::Binary | D::LargeBinary | D::BinaryView => P::Binary,
        D::FixedSizeBinary(16) if is_uuid => P::Uuid,
        D::FixedSizeBinary(n) => P::Fixed(*n as u64),
        other => {
            return Err(Error::unsupported(format!(
                "Arrow type {other} has no Iceberg primitive type a transform can take"
            )))
        }
    })
}

/// Whether a field carries the `arrow.uuid` extension type (a 16-byte fixed that is a uuid).
pub fn is_uuid(field: &Field) -> bool {
    field
        .metadata()
        .get("ARROW:extension:name")
        .is_some_and(|name| name == "arrow.uuid")
}

/// [`apply_array`] of an array under its field, with the result's field: identity and void
/// keep the input's field, so extension types such as `arrow.uuid` survive.
pub fn apply_field(
    transform: &Transform,
    array: &ArrayRef,
    field: &FieldRef,
) -> Result<(ArrayRef, FieldRef)> {
    let out = apply_array(transform, array, is_uuid(field))?;
    let field = match transform {
        Transform::Identity | Transform::Void => Arc::clone(field),
        _ => Arc::new(Field::new(field.name(), out.data_type().clone(), true)),
    };
    Ok((out, field))
}

/// Applies `transform` to every value of `array`; nulls stay null.
pub fn apply_array(transform: &Transform, array: &ArrayRef, is_uuid: bool) -> Result<ArrayRef> {
    let source = source_type_of(array.data_type(), is_uuid)?;
    let source_type = Type::Primitive(source.clone());
    if !transform.can_transform(&source_type) {
        return Err(transform.cannot_transform(&source_type));
    }
    // The C data interface hands over unvalidated buffers; views index into them without bounds
    // checks, so they are validated in full (offsets are bounds-checked in the loops instead).
    if matches!(array.data_type(), DataType::Utf8View | DataType::BinaryView) {
        array
            .to_data()
            .validate_full()
            .map_err(|e| Error::invalid(format!("malformed Arrow array: {e}")))?;
    }
    match transform {
        Transform::Identity => Ok(array.clone()),
        Transform::Void => Ok(new_null_array(array.data_type(), array.len())),
        Transform::Bucket(n) => bucket::bucket(array.as_ref(), *n),
        Transform::Truncate(w) => truncate::truncate(array.as_ref(), *w),
        Transform::Year | Transform::Month | Transform::Day | Transform::Hour => {
            temporal::temporal(transform, array.as_ref())
        }
        Transform::Unknown(_) => Err(transform.cannot_transform(&source_type)),
    }
}

/// The Arrow type `apply_array` returns for an input of `data_type`.
pub fn result_data_type(
    transform: &Transform,
    data_type: &DataType,
    is_uuid: bool,
) -> Result<DataType> {
    let empty = make_array(arrow_data::ArrayData::new_empty(data_type));
    Ok(apply_array(transform, &Arc::clone(&empty), is_uuid)?
        .data_type()
        .clone())
}

fn downcast<T: 'static>(array: &dyn Array) -> Result<&T> {
    array.as_any().downcast_ref::<T>().ok_or_else(|| {
        Error::invalid(format!(
            "array does not match its type {}",
            array.data_type()
        ))
    })
}

/// The value range `[start, end)` of slot `i` of a variable-length array, bounds-checked so that
/// a malformed array from outside is an error, never an out-of-bounds read.
#[inline(always)]
fn byte_range<'a, O: arrow_array::OffsetSizeTrait>(
    offsets: &[O],
    values: &'a [u8],
    i: usize,
) -> Result<&'a [u8]> {
    let (start, end) = (offsets[i].as_usize(), offsets[i + 1].as_usize());
    values.get(start..end).ok_or_else(|| {
        Error::invalid(format!(
            "malformed Arrow array: offsets {start}..{end} out of bounds"
        ))
    })
}

/// Maps a slice of native values through a per-value function. The loop is compiled for
/// baseline x86-64, AVX2 and AVX-512 (chosen at run time): murmur3's 32-bit multiplies only
/// vectorize from AVX2 on, and 64-bit divisions by constants only with AVX-512. Wheels stay
/// portable.
#[inline(always)]
pub(crate) fn map_values<T: Copy, O: Copy, F: Fn(T) -> O + Copy>(input: &[T], f: F) -> Vec<O> {
    let mut out = output_vec(input.len());
    {
        let dst = &mut out.spare_capacity_mut()[..input.len()];
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl") {
            // SAFETY: the CPU supports these features, checked just above.
            unsafe { map_avx512(input, dst, f) };
        } else if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            unsafe { map_avx2(input, dst, f) };
        } else {
            map_into(input, dst, f);
        }
        #[cfg(not(target_arch = "x86_64"))]
        map_into(input, dst, f);
    }
    // SAFETY: every one of the first `input.len()` slots was written above.
    unsafe { out.set_len(input.len()) };
    out
}

/// An empty vector with room for `len` values. Large ones are backed by transparent huge pages
/// where the kernel offers them on request (as numpy does): first-touch page faults on 4 KiB
/// pages otherwise cost more than the transform itself.
pub(crate) fn output_vec<O>(len: usize) -> Vec<O> {
    let out = Vec::with_capacity(len);
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = len * std::mem::size_of::<O>();
        if bytes >= 2 * HUGE {
            let start = out.as_ptr() as usize;
            let aligned = start.next_multiple_of(HUGE);
            let usable = (start + bytes).saturating_sub(aligned) / HUGE * HUGE;
            if usable > 0 {
                // SAFETY: the range lies inside the allocation just made; MADV_HUGEPAGE is only
                // advice and changes no contents.
                unsafe {
                    libc::madvise(aligned as *mut libc::c_void, usable, libc::MADV_HUGEPAGE);
                }
            }
        }
    }
    out
}

#[inline(always)]
fn map_into<T: Copy, O: Copy, F: Fn(T) -> O>(
    input: &[T],
    dst: &mut [std::mem::MaybeUninit<O>],
    f: F,
) {
    for (d, v) in dst.iter_mut().zip(input) {
        d.write(f(*v));
    }
}

/// The same loop compiled with wider vector units enabled; `map_into` is inlined into each.
macro_rules! map_with_features {
    ($name:ident, $features:literal) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $features)]
        fn $name<T: Copy, O: Copy, F: Fn(T) -> O>(
            input: &[T],
            dst: &mut [std::mem::MaybeUninit<O>],
            f: F,
        ) {
            map_into(input, dst, f)
        }
    };
}

map_with_features!(map_avx512, "avx512f,avx512vl,avx512dq,avx512bw");
map_with_features!(map_avx2, "avx2");

#[cfg(test)]
mod tests;
