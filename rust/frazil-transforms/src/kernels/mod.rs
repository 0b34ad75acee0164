//! Arrow kernels: each transform over a whole array, for every Arrow layout that can carry its
//! source types. Values are normalized to the Iceberg representation (micros, days, i128
//! unscaled) on the fly, inside one tight loop per layout; nulls pass through as the input's
//! validity bitmap, untouched.

mod bucket;
mod temporal;
mod truncate;

use std::sync::Arc;

use arrow_array::{make_array, new_null_array, Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};
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

#[cfg(test)]
mod tests;
