//! `year`, `month`, `day` and `hour` over date and timestamp arrays, with floor semantics before
//! 1970 as the spec requires. All return int32 (`day` as days from the epoch).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, Int32Array};
use arrow_schema::{DataType, TimeUnit};
use frazil_values::{Error, Result};

use super::map_values;
use crate::scalar::{
    days_from_micros, days_from_nanos, hours_from_micros, hours_from_nanos, months_from_days,
    years_from_days,
};
use crate::transform::Transform;

// The part extracted is a const parameter, so each (layout, part) loop is compiled on its own
// with no per-value branch.
const YEAR: u8 = 0;
const MONTH: u8 = 1;
const DAY: u8 = 2;
const HOUR: u8 = 3;

const MILLIS_PER_DAY: i64 = 86_400_000;

#[inline(always)]
fn from_days<const P: u8>(days: i32) -> i32 {
    match P {
        YEAR => years_from_days(days),
        MONTH => months_from_days(days),
        _ => days,
    }
}

#[inline(always)]
fn from_micros<const P: u8>(micros: i64) -> i32 {
    if P == HOUR {
        hours_from_micros(micros)
    } else {
        from_days::<P>(days_from_micros(micros))
    }
}

#[inline(always)]
fn from_nanos<const P: u8>(nanos: i64) -> i32 {
    if P == HOUR {
        hours_from_nanos(nanos)
    } else {
        from_days::<P>(days_from_nanos(nanos))
    }
}

fn map<T: ArrowPrimitiveType>(
    array: &dyn Array,
    f: impl Fn(T::Native) -> i32 + Copy,
) -> Int32Array {
    let array = array.as_primitive::<T>();
    let out = map_values(array.values(), f);
    Int32Array::new(out.into(), array.nulls().cloned())
}

/// Second and millisecond timestamps are scaled to micros first; a value that does not fit is
/// not a valid Iceberg timestamp, so it is an error rather than a wrapped answer.
fn scaled<T: ArrowPrimitiveType<Native = i64>, const P: u8>(
    array: &dyn Array,
    scale: i64,
) -> Result<Int32Array> {
    array.as_primitive::<T>().try_unary(|v| {
        v.checked_mul(scale).map(from_micros::<P>).ok_or_else(|| {
            Error::invalid(format!("timestamp {v} is outside the microsecond range"))
        })
    })
}

fn run<const P: u8>(array: &dyn Array) -> Result<Int32Array> {
    use DataType as D;
    let is_date = matches!(array.data_type(), D::Date32 | D::Date64);
    if P == HOUR && is_date {
        return Err(Error::unsupported("hour cannot be applied to a date"));
    }
    Ok(match array.data_type() {
        D::Date32 => map::<Date32Type>(array, from_days::<P>),
        D::Date64 => map::<Date64Type>(array, |ms| {
            from_days::<P>(ms.div_euclid(MILLIS_PER_DAY) as i32)
        }),
        D::Timestamp(TimeUnit::Second, _) => scaled::<TimestampSecondType, P>(array, 1_000_000)?,
        D::Timestamp(TimeUnit::Millisecond, _) => {
            scaled::<TimestampMillisecondType, P>(array, 1_000)?
        }
        D::Timestamp(TimeUnit::Microsecond, _) => {
            map::<TimestampMicrosecondType>(array, from_micros::<P>)
        }
        D::Timestamp(TimeUnit::Nanosecond, _) => {
            map::<TimestampNanosecondType>(array, from_nanos::<P>)
        }
        other => {
            return Err(Error::unsupported(format!(
                "date/time transforms cannot be applied to Arrow type {other}"
            )))
        }
    })
}

pub(super) fn temporal(transform: &Transform, array: &dyn Array) -> Result<ArrayRef> {
    let out = match transform {
        Transform::Year => run::<YEAR>(array)?,
        Transform::Month => run::<MONTH>(array)?,
        Transform::Day => run::<DAY>(array)?,
        Transform::Hour => run::<HOUR>(array)?,
        other => {
            return Err(Error::invalid(format!(
                "{other} is not a date/time transform"
            )))
        }
    };
    Ok(Arc::new(out))
}
