//! Borrowed single values for comparisons without allocation: from literals, from binary bounds
//! (Appendix D, with the spec's promotions) and from Arrow columns of partition values.

use std::cmp::Ordering;

use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BinaryArray, BooleanArray, FixedSizeBinaryArray,
    LargeBinaryArray, PrimitiveArray,
};
use arrow_schema::DataType;
use frazil_values::temporal::{MICROS_PER_DAY, NANOS_PER_DAY};
use frazil_values::{Error, Literal, PrimitiveType, Result};

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

pub fn lit_val(l: &Literal) -> Option<Val<'_>> {
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

pub fn compare_literals(a: &Literal, b: &Literal) -> Option<Ordering> {
    compare(&lit_val(a)?, &lit_val(b)?)
}

pub fn lit_is_nan(l: &Literal) -> bool {
    lit_val(l).is_some_and(|v| v.is_nan())
}

/// Decodes a binary bound (Appendix D) of a field of type `ty`. Bounds that cannot be read
/// (a wrong length, a type with no comparable form) are `None`, which every evaluator reads as
/// "no bound": a corrupt statistic must never prune a file.
pub fn decode_bound<'a>(b: &'a [u8], ty: &PrimitiveType) -> Option<Val<'a>> {
    use PrimitiveType as P;
    let i32_of = |b: &[u8]| Some(i32::from_le_bytes(b.try_into().ok()?));
    let i64_of = |b: &[u8]| Some(i64::from_le_bytes(b.try_into().ok()?));
    Some(match ty {
        P::Boolean => match b {
            [0] => Val::Bool(false),
            [_] => Val::Bool(true),
            _ => return None,
        },
        P::Int | P::Date => Val::I32(i32_of(b)?),
        // Promotions: a long bound written as an int, a double bound as a float, a timestamp
        // bound as a date.
        P::Long if b.len() == 4 => Val::I64(i32_of(b)? as i64),
        P::Long | P::Time | P::TimestampTz | P::TimestampTzNs => Val::I64(i64_of(b)?),
        P::Timestamp if b.len() == 4 => Val::I64((i32_of(b)? as i64).checked_mul(MICROS_PER_DAY)?),
        P::TimestampNs if b.len() == 4 => Val::I64((i32_of(b)? as i64).checked_mul(NANOS_PER_DAY)?),
        P::Timestamp | P::TimestampNs => Val::I64(i64_of(b)?),
        P::Float => Val::F32(f32::from_le_bytes(b.try_into().ok()?)),
        P::Double if b.len() == 4 => Val::F64(f32::from_le_bytes(b.try_into().ok()?) as f64),
        P::Double => Val::F64(f64::from_le_bytes(b.try_into().ok()?)),
        P::Decimal { .. } => Val::I128(frazil_values::decimal::from_be_bytes(b).ok()?),
        P::Uuid => Val::U128(u128::from_be_bytes(b.try_into().ok()?)),
        P::String | P::Binary | P::Fixed(_) => Val::Bytes(b),
        P::Unknown | P::Variant | P::Geometry { .. } | P::Geography { .. } => return None,
    })
}

/// A column of values of one Iceberg type, read as `Val`s by row.
pub enum Column {
    /// The column is absent: every value is unknown.
    Missing,
    /// Every value is null (an Arrow null column, e.g. a void partition).
    Null,
    Bool(BooleanArray),
    I32(PrimitiveArray<Int32Type>),
    I64(PrimitiveArray<Int64Type>),
    F32(PrimitiveArray<Float32Type>),
    F64(PrimitiveArray<Float64Type>),
    I128(PrimitiveArray<Decimal128Type>),
    Uuid(FixedSizeBinaryArray),
    Fixed(FixedSizeBinaryArray),
    Bytes(BinaryArray),
    LargeBytes(LargeBinaryArray),
}

/// The same buffers read as another primitive type of the same width (Date32 as Int32,
/// Timestamp as Int64, ...): no copy.
fn reinterpret<T: ArrowPrimitiveType>(a: &dyn Array) -> Result<PrimitiveArray<T>> {
    let data = a
        .to_data()
        .into_builder()
        .data_type(T::DATA_TYPE)
        .build()
        .map_err(|e| Error::invalid(format!("cannot read a {} column: {e}", a.data_type())))?;
    Ok(PrimitiveArray::<T>::from(data))
}

impl Column {
    /// Reads `array` as values of `ty`; the Arrow type must be one that a reader of `ty`
    /// produces (the manifest decoder's or PyArrow's).
    pub fn new(array: &ArrayRef, ty: &PrimitiveType, what: &str) -> Result<Column> {
        use PrimitiveType as P;
        let dt = array.data_type();
        let bad = || {
            Error::invalid(format!(
                "{what}: an Arrow {dt} column cannot hold {ty} values"
            ))
        };
        if *dt == DataType::Null {
            return Ok(Column::Null);
        }
        Ok(match ty {
            P::Boolean => Column::Bool(array.as_boolean_opt().ok_or_else(bad)?.clone()),
            P::Int | P::Date => match dt {
                DataType::Int32 | DataType::Date32 => Column::I32(reinterpret(array)?),
                _ => return Err(bad()),
            },
            P::Long
            | P::Time
            | P::Timestamp
            | P::TimestampTz
            | P::TimestampNs
            | P::TimestampTzNs => match dt {
                DataType::Int64 | DataType::Time64(_) | DataType::Timestamp(_, _) => {
                    Column::I64(reinterpret(array)?)
                }
                // An int column promoted to long (partition values written before promotion).
                DataType::Int32 | DataType::Date32 if *ty == P::Long => {
                    let a: PrimitiveArray<Int32Type> = reinterpret(array)?;
                    Column::I64(a.unary(|v| v as i64))
                }
                _ => return Err(bad()),
            },
            P::Float => match dt {
                DataType::Float32 => Column::F32(reinterpret(array)?),
                _ => return Err(bad()),
            },
            P::Double => match dt {
                DataType::Float64 => Column::F64(reinterpret(array)?),
                DataType::Float32 => {
                    let a: PrimitiveArray<Float32Type> = reinterpret(array)?;
                    Column::F64(a.unary(|v| v as f64))
                }
                _ => return Err(bad()),
            },
            P::Decimal { .. } => match dt {
                DataType::Decimal128(_, _) => Column::I128(
                    array
                        .as_primitive_opt::<Decimal128Type>()
                        .ok_or_else(bad)?
                        .clone(),
                ),
                _ => return Err(bad()),
            },
            P::Uuid => match dt {
                DataType::FixedSizeBinary(16) => Column::Uuid(array.as_fixed_size_binary().clone()),
                _ => return Err(bad()),
            },
            P::String | P::Binary | P::Fixed(_) => match dt {
                DataType::Utf8 | DataType::Binary => {
                    let data = array
                        .to_data()
                        .into_builder()
                        .data_type(DataType::Binary)
                        .build()
                        .map_err(|_| bad())?;
                    Column::Bytes(BinaryArray::from(data))
                }
                DataType::LargeUtf8 | DataType::LargeBinary => {
                    let data = array
                        .to_data()
                        .into_builder()
                        .data_type(DataType::LargeBinary)
                        .build()
                        .map_err(|_| bad())?;
                    Column::LargeBytes(LargeBinaryArray::from(data))
                }
                DataType::FixedSizeBinary(_) => Column::Fixed(array.as_fixed_size_binary().clone()),
                _ => return Err(bad()),
            },
            P::Unknown | P::Variant | P::Geometry { .. } | P::Geography { .. } => Column::Missing,
        })
    }

    pub fn is_missing(&self) -> bool {
        matches!(self, Column::Missing)
    }

    /// The value at row `i`; `None` is null (or unknown for a missing column).
    #[inline]
    pub fn get(&self, i: usize) -> Option<Val<'_>> {
        macro_rules! prim {
            ($a:expr, $v:ident) => {
                if $a.is_null(i) {
                    None
                } else {
                    Some(Val::$v($a.value(i)))
                }
            };
        }
        match self {
            Column::Missing | Column::Null => None,
            Column::Bool(a) => prim!(a, Bool),
            Column::I32(a) => prim!(a, I32),
            Column::I64(a) => prim!(a, I64),
            Column::F32(a) => prim!(a, F32),
            Column::F64(a) => prim!(a, F64),
            Column::I128(a) => prim!(a, I128),
            Column::Bytes(a) => prim!(a, Bytes),
            Column::LargeBytes(a) => prim!(a, Bytes),
            Column::Fixed(a) => prim!(a, Bytes),
            Column::Uuid(a) => {
                if a.is_null(i) {
                    None
                } else {
                    Some(Val::U128(u128::from_be_bytes(a.value(i).try_into().ok()?)))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let ty = |s: &str| s.parse::<PrimitiveType>().unwrap();
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
        // utf-8 byte order is code point order: U+FFFF < U+10FFFF (UTF-16 order says otherwise)
        let a = "a\u{FFFF}".as_bytes();
        let b = "a\u{10FFFF}".as_bytes();
        assert_eq!(
            compare(&Val::Bytes(a), &Val::Bytes(b)),
            Some(Ordering::Less)
        );
    }
}
