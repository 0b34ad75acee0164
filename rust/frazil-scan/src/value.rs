//! Arrow columns of values (partition tuples, bound bytes) read by row as the borrowed values
//! of `frazil_values::bound`, which decodes binary bounds and orders values for every
//! evaluator.

use std::cmp::Ordering;

use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BinaryArray, BooleanArray, FixedSizeBinaryArray,
    LargeBinaryArray, PrimitiveArray,
};
use arrow_schema::DataType;
use frazil_values::bound::{compare, of_literal, Val};
use frazil_values::{Error, Literal, PrimitiveType, Result};

pub fn compare_literals(a: &Literal, b: &Literal) -> Option<Ordering> {
    compare(&of_literal(a)?, &of_literal(b)?)
}

pub fn lit_is_nan(l: &Literal) -> bool {
    of_literal(l).is_some_and(|v| v.is_nan())
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
