//! Bindings of `frazil_values::variant`: variant columns (`struct<metadata, value>`) from and to
//! JSON text, one Arrow array at a time.

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, StructArray};
use arrow_schema::{DataType, Field, Fields};
use frazil_values::variant;
use frazil_values::{Error, Result};
use pyo3::prelude::*;

use crate::arrow::{export, import_array, ArrowArrayExport};
use crate::error::IntoPyResult;

fn at_row(i: usize, e: Error) -> Error {
    Error::new(e.kind, format!("row {i}: {}", e.message))
}

fn strings(array: &dyn Array) -> Result<Vec<Option<&str>>> {
    Ok(match array.data_type() {
        DataType::Utf8 => array.as_string::<i32>().iter().collect(),
        DataType::LargeUtf8 => array.as_string::<i64>().iter().collect(),
        DataType::Utf8View => array.as_string_view().iter().collect(),
        other => {
            return Err(Error::invalid(format!(
                "JSON text must be a string array, got {other}"
            )))
        }
    })
}

fn binaries(array: &dyn Array) -> Result<Vec<Option<&[u8]>>> {
    Ok(match array.data_type() {
        DataType::Binary => array.as_binary::<i32>().iter().collect(),
        DataType::LargeBinary => array.as_binary::<i64>().iter().collect(),
        DataType::BinaryView => array.as_binary_view().iter().collect(),
        other => {
            return Err(Error::invalid(format!(
                "variant bytes must be binary, got {other}"
            )))
        }
    })
}

pub fn variant_fields() -> Fields {
    Fields::from(vec![
        Field::new("metadata", DataType::Binary, false),
        Field::new("value", DataType::Binary, false),
    ])
}

fn encode(array: &dyn Array) -> Result<StructArray> {
    let texts = strings(array)?;
    let mut metadata = BinaryBuilder::new();
    let mut value = BinaryBuilder::new();
    for (i, t) in texts.iter().enumerate() {
        // A null row still needs (ignored) child values: the children are required.
        let (m, v) = match t {
            Some(t) => variant::from_json(t).map_err(|e| at_row(i, e))?,
            None => (vec![1, 0, 0], vec![0]),
        };
        metadata.append_value(m);
        value.append_value(v);
    }
    let nulls = array.logical_nulls();
    StructArray::try_new(
        variant_fields(),
        vec![
            Arc::new(metadata.finish()) as ArrayRef,
            Arc::new(value.finish()),
        ],
        nulls,
    )
    .map_err(|e| Error::invalid(e.to_string()))
}

fn decode(array: &dyn Array) -> Result<ArrayRef> {
    let s = array
        .as_struct_opt()
        .ok_or_else(|| Error::invalid("a variant column must be a struct<metadata, value>"))?;
    let child = |name: &str| {
        s.column_by_name(name)
            .ok_or_else(|| Error::invalid(format!("a variant column has no {name:?} field")))
    };
    let (m, v) = (
        binaries(child("metadata")?.as_ref())?,
        binaries(child("value")?.as_ref())?,
    );
    let mut out = StringBuilder::new();
    for i in 0..s.len() {
        match (s.is_valid(i), m[i], v[i]) {
            (true, Some(m), Some(v)) => {
                out.append_value(variant::to_json(m, v).map_err(|e| at_row(i, e))?)
            }
            // A shredded column's value may be missing where typed_value holds it.
            (true, _, None) => {
                return Err(Error::unsupported(format!(
                    "row {i}: the variant has no value bytes (shredded into typed_value)"
                )))
            }
            _ => out.append_null(),
        }
    }
    Ok(Arc::new(out.finish()))
}

fn typed_values(array: &dyn Array) -> Result<ArrayRef> {
    use arrow_array::types::*;
    use variant::Primitive as P;
    let n = array.len();
    let mut out = BinaryBuilder::new();
    let mut emit = |i: usize, p: Option<P<'_>>| match p {
        Some(p) if array.is_valid(i) => out.append_value(variant::encode_primitive(p)),
        _ => out.append_null(),
    };
    macro_rules! each {
        ($cast:expr, $f:expr) => {{
            let a = $cast;
            for i in 0..n {
                emit(i, Some($f(a.value(i))));
            }
        }};
    }
    match array.data_type() {
        DataType::Boolean => each!(array.as_boolean(), P::Bool),
        DataType::Int8 => each!(array.as_primitive::<Int8Type>(), |v| P::Int(v as i64)),
        DataType::Int16 => each!(array.as_primitive::<Int16Type>(), |v| P::Int(v as i64)),
        DataType::Int32 => each!(array.as_primitive::<Int32Type>(), |v| P::Int(v as i64)),
        DataType::Int64 => each!(array.as_primitive::<Int64Type>(), P::Int),
        DataType::Float32 => each!(array.as_primitive::<Float32Type>(), P::Float),
        DataType::Float64 => each!(array.as_primitive::<Float64Type>(), P::Double),
        DataType::Date32 => each!(array.as_primitive::<Date32Type>(), P::Date),
        DataType::Decimal128(_, scale) => {
            let scale = u8::try_from(*scale).map_err(|_| Error::unsupported("negative scale"))?;
            each!(array.as_primitive::<Decimal128Type>(), |v| P::Decimal(
                v, scale
            ))
        }
        DataType::Time64(arrow_schema::TimeUnit::Microsecond) => {
            each!(array.as_primitive::<Time64MicrosecondType>(), P::TimeMicros)
        }
        DataType::Timestamp(unit, tz) => {
            let utc = tz.is_some();
            match unit {
                arrow_schema::TimeUnit::Microsecond => {
                    each!(array.as_primitive::<TimestampMicrosecondType>(), |v| {
                        P::Timestamp(v, false, utc)
                    })
                }
                arrow_schema::TimeUnit::Nanosecond => {
                    each!(array.as_primitive::<TimestampNanosecondType>(), |v| {
                        P::Timestamp(v, true, utc)
                    })
                }
                other => {
                    return Err(Error::unsupported(format!(
                        "typed_value timestamp[{other:?}]"
                    )))
                }
            }
        }
        DataType::Utf8 => each!(array.as_string::<i32>(), P::String),
        DataType::LargeUtf8 => each!(array.as_string::<i64>(), P::String),
        DataType::Utf8View => each!(array.as_string_view(), P::String),
        DataType::Binary => each!(array.as_binary::<i32>(), P::Binary),
        DataType::LargeBinary => each!(array.as_binary::<i64>(), P::Binary),
        DataType::FixedSizeBinary(16) => each!(array.as_fixed_size_binary(), |v: &[u8]| {
            P::Uuid(u128::from_be_bytes(v.try_into().unwrap_or([0; 16])))
        }),
        other => {
            return Err(Error::unsupported(format!(
                "shredded variant typed_value of type {other} (only primitives are read)"
            )))
        }
    }
    Ok(Arc::new(out.finish()))
}

/// The variant value bytes of a shredded column's primitive `typed_value` array (null where
/// it is null).
#[pyfunction]
fn variant_encode_typed(py: Python<'_>, typed: &Bound<'_, PyAny>) -> PyResult<ArrowArrayExport> {
    let imported = import_array(typed)?;
    let out = py.detach(|| typed_values(imported.array.as_ref())).py()?;
    let field = Field::new(imported.field.name(), DataType::Binary, true);
    Ok(export(out, Arc::new(field)))
}

/// JSON text (a string array) as a variant `struct<metadata, value>` array.
#[pyfunction]
fn variant_from_json(py: Python<'_>, json: &Bound<'_, PyAny>) -> PyResult<ArrowArrayExport> {
    let imported = import_array(json)?;
    let out = py.detach(|| encode(imported.array.as_ref())).py()?;
    let field = Field::new(imported.field.name(), out.data_type().clone(), true);
    Ok(export(Arc::new(out), Arc::new(field)))
}

/// A variant `struct<metadata, value>` array as JSON text.
#[pyfunction]
fn variant_to_json(py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<ArrowArrayExport> {
    let imported = import_array(values)?;
    let out = py.detach(|| decode(imported.array.as_ref())).py()?;
    let field = Field::new(imported.field.name(), DataType::Utf8, true);
    Ok(export(out, Arc::new(field)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(variant_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(variant_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(variant_encode_typed, m)?)?;
    Ok(())
}
