//! Borrowed single values (spec Appendix D) for comparing bounds without allocating: decoded
//! from a binary bound (with the spec's type promotions) or taken from a literal, and ordered
//! as the spec orders values of one type. Every reader of binary bounds (metrics and partition
//! summary evaluators, the delete file index, manifest summaries, `binary::from_bytes`)
//! decodes through [`decode`], so the promotions and length rules live here once.

use std::cmp::Ordering;

use crate::decimal;
use crate::error::{Error, Result};
use crate::literal::Literal;
use crate::temporal::{MICROS_PER_DAY, NANOS_PER_DAY};
use crate::types::PrimitiveType;

/// One value of a primitive type, borrowing its bytes where it has any.
#[derive(Debug, Clone, Copy)]
pub enum Val<'a> {
    Bool(bool),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
    I128(i128),
    /// A uuid as one big-endian number: numeric order is the spec's byte order.
    U128(u128),
    /// Strings (UTF-8), fixed and binary: unsigned byte-wise order, which for UTF-8 is code
    /// point order.
    Bytes(&'a [u8]),
}

impl Val<'_> {
    pub fn is_nan(&self) -> bool {
        match self {
            Val::F32(v) => v.is_nan(),
            Val::F64(v) => v.is_nan(),
            _ => false,
        }
    }
}

/// Java's float order for bounds (NaN above everything, NaN equal to NaN) but IEEE 754 for
/// zeros: the spec compares with IEEE order, where -0.0 = 0.0, so a bound of -0.0 never hides
/// a 0.0 (or the other way round).
fn float_cmp<T: PartialOrd>(a: T, b: T, a_nan: bool, b_nan: bool) -> Ordering {
    match (a_nan, b_nan) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// The spec's order of two values of one type; `None` when the kinds differ (no answer).
pub fn compare(a: &Val<'_>, b: &Val<'_>) -> Option<Ordering> {
    Some(match (a, b) {
        (Val::Bool(x), Val::Bool(y)) => x.cmp(y),
        (Val::I32(x), Val::I32(y)) => x.cmp(y),
        (Val::I64(x), Val::I64(y)) => x.cmp(y),
        (Val::I128(x), Val::I128(y)) => x.cmp(y),
        (Val::U128(x), Val::U128(y)) => x.cmp(y),
        (Val::F32(x), Val::F32(y)) => float_cmp(*x, *y, x.is_nan(), y.is_nan()),
        (Val::F64(x), Val::F64(y)) => float_cmp(*x, *y, x.is_nan(), y.is_nan()),
        (Val::Bytes(x), Val::Bytes(y)) => x.cmp(y),
        _ => return None,
    })
}

/// A literal as a comparable value; `None` for nested values.
pub fn of_literal(l: &Literal) -> Option<Val<'_>> {
    Some(match l {
        Literal::Boolean(b) => Val::Bool(*b),
        Literal::Int(v) | Literal::Date(v) => Val::I32(*v),
        Literal::Long(v)
        | Literal::Time(v)
        | Literal::Timestamp(v)
        | Literal::TimestampTz(v)
        | Literal::TimestampNs(v)
        | Literal::TimestampTzNs(v) => Val::I64(*v),
        Literal::Float(v) => Val::F32(*v),
        Literal::Double(v) => Val::F64(*v),
        Literal::Decimal(v) => Val::I128(*v),
        Literal::Uuid(u) => Val::U128(*u),
        Literal::String(s) => Val::Bytes(s.as_bytes()),
        Literal::Fixed(b) | Literal::Binary(b) => Val::Bytes(b),
        Literal::Struct(_) | Literal::List(_) | Literal::Map(_) => return None,
    })
}

fn exact<const N: usize>(data: &[u8], ty: &PrimitiveType) -> Result<[u8; N]> {
    data.try_into()
        .map_err(|_| Error::decode(format!("a {ty} value needs {N} bytes, got {}", data.len())))
}

/// A bound written for a `date` and read for a promoted timestamp; dates out of the timestamp's
/// range must fail rather than wrap (spec: "values outside the promoted type's range must result
/// in a runtime failure").
fn date_bound(data: &[u8], ty: &PrimitiveType, ticks_per_day: i64) -> Result<i64> {
    let days = i32::from_le_bytes(exact(data, ty)?) as i64;
    days.checked_mul(ticks_per_day)
        .ok_or_else(|| Error::decode(format!("date {days} is outside the range of {ty}")))
}

/// Decodes a value of type `ty` from its binary single-value form. Strict about lengths, with
/// the spec's promotion table: a 4-byte `long` bound was written as an `int`, a 4-byte `double`
/// bound as a `float`, a 4-byte `timestamp`/`timestamp_ns` bound as a `date`. Does not check
/// what only a full value needs (UTF-8, fixed length, decimal precision, time range): see
/// `binary::from_bytes`.
pub fn decode<'a>(data: &'a [u8], ty: &PrimitiveType) -> Result<Val<'a>> {
    use PrimitiveType as P;
    Ok(match ty {
        P::Boolean => match exact::<1>(data, ty)? {
            [0] => Val::Bool(false),
            _ => Val::Bool(true),
        },
        P::Int | P::Date => Val::I32(i32::from_le_bytes(exact(data, ty)?)),
        P::Long if data.len() == 4 => Val::I64(i32::from_le_bytes(exact(data, ty)?) as i64),
        P::Long | P::Time | P::TimestampTz | P::TimestampTzNs => {
            Val::I64(i64::from_le_bytes(exact(data, ty)?))
        }
        P::Timestamp if data.len() == 4 => Val::I64(date_bound(data, ty, MICROS_PER_DAY)?),
        P::TimestampNs if data.len() == 4 => Val::I64(date_bound(data, ty, NANOS_PER_DAY)?),
        P::Timestamp | P::TimestampNs => Val::I64(i64::from_le_bytes(exact(data, ty)?)),
        P::Float => Val::F32(f32::from_le_bytes(exact(data, ty)?)),
        P::Double if data.len() == 4 => Val::F64(f32::from_le_bytes(exact(data, ty)?) as f64),
        P::Double => Val::F64(f64::from_le_bytes(exact(data, ty)?)),
        P::Decimal { .. } => Val::I128(decimal::from_be_bytes(data)?),
        P::Uuid => Val::U128(u128::from_be_bytes(exact(data, ty)?)),
        P::String | P::Binary | P::Fixed(_) => Val::Bytes(data),
        P::Unknown => {
            return Err(Error::unsupported(
                "unknown values have no binary single-value form",
            ))
        }
        // Geo bounds are points and variant bounds are variant objects (Appendix D); neither
        // has a comparable form here yet.
        P::Variant | P::Geometry { .. } | P::Geography { .. } => {
            return Err(Error::unsupported(format!(
                "{ty} values have no supported binary single-value form yet"
            )))
        }
    })
}

/// [`decode`] for evaluators: a bound that cannot be read is `None`, which they read as "no
/// bound", so a corrupt statistic never prunes a file.
pub fn decode_bound<'a>(data: &'a [u8], ty: &PrimitiveType) -> Option<Val<'a>> {
    decode(data, ty).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(s: &str) -> PrimitiveType {
        s.parse().unwrap()
    }

    #[test]
    fn float_order() {
        assert_eq!(
            compare(&Val::F64(-0.0), &Val::F64(0.0)),
            Some(Ordering::Equal)
        );
        assert_eq!(
            compare(&Val::F64(f64::NAN), &Val::F64(f64::INFINITY)),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare(&Val::F32(f32::NAN), &Val::F32(-f32::NAN)),
            Some(Ordering::Equal)
        );
        assert_eq!(compare(&Val::I32(1), &Val::I64(1)), None);
    }

    #[test]
    fn bounds_with_promotion() {
        assert!(matches!(
            decode_bound(&(-3i32).to_le_bytes(), &ty("long")),
            Some(Val::I64(-3))
        ));
        assert!(matches!(
            decode_bound(&1i32.to_le_bytes(), &ty("timestamp")),
            Some(Val::I64(MICROS_PER_DAY))
        ));
        assert!(matches!(
            decode_bound(&[0xff, 0x38], &ty("decimal(9,2)")),
            Some(Val::I128(-200))
        ));
        assert!(decode_bound(&[1, 2, 3], &ty("int")).is_none());
        // a timestamptz bound cannot have been a date
        assert!(decode_bound(&1i32.to_le_bytes(), &ty("timestamptz")).is_none());
        // utf-8 byte order is code point order: U+FFFF < U+10FFFF (UTF-16 order says otherwise)
        let a = "a\u{FFFF}".as_bytes();
        let b = "a\u{10FFFF}".as_bytes();
        assert_eq!(
            compare(&Val::Bytes(a), &Val::Bytes(b)),
            Some(Ordering::Less)
        );
    }
}
