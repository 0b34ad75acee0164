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
use pyo3::types::PyBytes;

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

/// The typed value at row `i` of a primitive `typed_value` array.
fn primitive_at(array: &dyn Array, i: usize) -> Result<variant::Primitive<'_>> {
    use arrow_array::types::*;
    use arrow_schema::TimeUnit;
    use variant::Primitive as P;
    Ok(match array.data_type() {
        DataType::Boolean => P::Bool(array.as_boolean().value(i)),
        DataType::Int8 => P::Int(array.as_primitive::<Int8Type>().value(i) as i64),
        DataType::Int16 => P::Int(array.as_primitive::<Int16Type>().value(i) as i64),
        DataType::Int32 => P::Int(array.as_primitive::<Int32Type>().value(i) as i64),
        DataType::Int64 => P::Int(array.as_primitive::<Int64Type>().value(i)),
        DataType::Float32 => P::Float(array.as_primitive::<Float32Type>().value(i)),
        DataType::Float64 => P::Double(array.as_primitive::<Float64Type>().value(i)),
        DataType::Date32 => P::Date(array.as_primitive::<Date32Type>().value(i)),
        DataType::Decimal128(_, scale) => P::Decimal(
            array.as_primitive::<Decimal128Type>().value(i),
            u8::try_from(*scale).map_err(|_| Error::unsupported("a negative decimal scale"))?,
        ),
        DataType::Decimal32(_, scale) => P::Decimal(
            array.as_primitive::<Decimal32Type>().value(i) as i128,
            u8::try_from(*scale).map_err(|_| Error::unsupported("a negative decimal scale"))?,
        ),
        DataType::Decimal64(_, scale) => P::Decimal(
            array.as_primitive::<Decimal64Type>().value(i) as i128,
            u8::try_from(*scale).map_err(|_| Error::unsupported("a negative decimal scale"))?,
        ),
        DataType::Time64(TimeUnit::Microsecond) => {
            P::TimeMicros(array.as_primitive::<Time64MicrosecondType>().value(i))
        }
        DataType::Timestamp(TimeUnit::Microsecond, tz) => P::Timestamp(
            array.as_primitive::<TimestampMicrosecondType>().value(i),
            false,
            tz.is_some(),
        ),
        DataType::Timestamp(TimeUnit::Nanosecond, tz) => P::Timestamp(
            array.as_primitive::<TimestampNanosecondType>().value(i),
            true,
            tz.is_some(),
        ),
        DataType::Utf8 => P::String(array.as_string::<i32>().value(i)),
        DataType::LargeUtf8 => P::String(array.as_string::<i64>().value(i)),
        DataType::Utf8View => P::String(array.as_string_view().value(i)),
        DataType::Binary => P::Binary(array.as_binary::<i32>().value(i)),
        DataType::LargeBinary => P::Binary(array.as_binary::<i64>().value(i)),
        DataType::FixedSizeBinary(16) => P::Uuid(u128::from_be_bytes(
            array
                .as_fixed_size_binary()
                .value(i)
                .try_into()
                .unwrap_or([0; 16]),
        )),
        other => {
            return Err(Error::unsupported(format!(
                "a shredded variant typed_value of type {other}"
            )))
        }
    })
}

fn binary_at(array: &dyn Array, i: usize) -> Result<Option<&[u8]>> {
    if array.is_null(i) {
        return Ok(None);
    }
    Ok(Some(match array.data_type() {
        DataType::Binary => array.as_binary::<i32>().value(i),
        DataType::LargeBinary => array.as_binary::<i64>().value(i),
        DataType::BinaryView => array.as_binary_view().value(i),
        other => {
            return Err(Error::invalid(format!(
                "variant bytes must be binary, got {other}"
            )))
        }
    }))
}

// Shredding nests a level per object field or array element; deeper is refused.
const MAX_SHRED_DEPTH: usize = 64;

/// The unshredded value bytes at row `i` of a (value, typed_value) pair (VariantShredding:
/// a missing value is `None`; a typed object's fields merge with a partially shredded object
/// in `value`).
fn unshred_at(
    value: Option<&dyn Array>,
    typed: Option<&dyn Array>,
    i: usize,
    metadata: &[u8],
    depth: usize,
) -> Result<Option<Vec<u8>>> {
    if depth > MAX_SHRED_DEPTH {
        return Err(Error::invalid("variant shredding is nested too deeply"));
    }
    let v = match value {
        Some(a) => binary_at(a, i)?,
        None => None,
    };
    let t = match typed {
        Some(a) if a.is_valid(i) => a,
        _ => return Ok(v.map(<[u8]>::to_vec)),
    };
    match t.data_type() {
        DataType::Struct(_) => {
            let s = t.as_struct();
            let mut fields: Vec<(&str, usize, Vec<u8>)> = Vec::new();
            for (f, child) in s.fields().iter().zip(s.columns()) {
                let pair = child.as_struct_opt().ok_or_else(|| {
                    Error::invalid(format!("shredded field {:?} is not a group", f.name()))
                })?;
                if let Some(bytes) = unshred_at(
                    pair.column_by_name("value").map(|a| a.as_ref()),
                    pair.column_by_name("typed_value").map(|a| a.as_ref()),
                    i,
                    metadata,
                    depth + 1,
                )? {
                    fields.push((f.name(), variant::key_id(metadata, f.name())?, bytes));
                }
            }
            if let Some(rest) = v {
                let keys = variant::dictionary(metadata)?;
                for (id, bytes) in variant::object_fields(rest)? {
                    let key = keys
                        .get(id)
                        .ok_or_else(|| Error::decode(format!("field id {id} out of range")))?;
                    fields.push((key, id, bytes.to_vec()));
                }
            }
            Ok(Some(variant::encode_object(&mut fields)))
        }
        DataType::List(_) | DataType::LargeList(_) => {
            let (element, range): (&StructArray, std::ops::Range<usize>) =
                if let Some(l) = t.as_list_opt::<i32>() {
                    let o = l.value_offsets();
                    (struct_of(l.values())?, o[i] as usize..o[i + 1] as usize)
                } else {
                    let l = t.as_list::<i64>();
                    let o = l.value_offsets();
                    (struct_of(l.values())?, o[i] as usize..o[i + 1] as usize)
                };
            let (ev, et) = (
                element.column_by_name("value").map(|a| a.as_ref()),
                element.column_by_name("typed_value").map(|a| a.as_ref()),
            );
            let items = range
                .map(|j| {
                    unshred_at(ev, et, j, metadata, depth + 1)?
                        .ok_or_else(|| Error::decode("a shredded array element is missing"))
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(Some(variant::encode_array(&items)))
        }
        _ => Ok(Some(variant::encode_primitive(primitive_at(t, i)?))),
    }
}

fn struct_of(a: &ArrayRef) -> Result<&StructArray> {
    a.as_struct_opt()
        .ok_or_else(|| Error::invalid("a shredded array's elements are not groups"))
}

/// The value bytes of every row of a shredded variant group (null where the value is
/// missing).
fn unshred(array: &dyn Array) -> Result<ArrayRef> {
    let s = array
        .as_struct_opt()
        .ok_or_else(|| Error::invalid("a variant column must be a group"))?;
    let metadata = s
        .column_by_name("metadata")
        .ok_or_else(|| Error::invalid("a variant group has no metadata"))?;
    let value = s.column_by_name("value").map(|a| a.as_ref());
    let typed = s.column_by_name("typed_value").map(|a| a.as_ref());
    let mut out = BinaryBuilder::new();
    for i in 0..s.len() {
        let m = binary_at(metadata.as_ref(), i)?;
        match (s.is_valid(i), m) {
            (true, Some(m)) => {
                match unshred_at(value, typed, i, m, 0).map_err(|e| at_row(i, e))? {
                    Some(bytes) => out.append_value(bytes),
                    None => out.append_null(),
                }
            }
            _ => out.append_null(),
        }
    }
    Ok(Arc::new(out.finish()))
}

/// The value bytes of a (possibly shredded) variant group `struct<metadata, value?,
/// typed_value?>`: `typed_value` merged back into `value` (null where a value is missing).
#[pyfunction]
fn variant_unshred(py: Python<'_>, group: &Bound<'_, PyAny>) -> PyResult<ArrowArrayExport> {
    let imported = import_array(group)?;
    let out = py.detach(|| unshred(imported.array.as_ref())).py()?;
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

/// A Parquet footer (`FileMetaData` bytes) with the groups of `field_ids` annotated VARIANT.
#[pyfunction]
fn parquet_annotate_variants<'py>(
    py: Python<'py>,
    footer: &[u8],
    field_ids: Vec<i32>,
) -> PyResult<Bound<'py, PyBytes>> {
    let out = frazil_values::parquet_variant::annotate_variant_groups(footer, &field_ids).py()?;
    Ok(PyBytes::new(py, &out))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parquet_annotate_variants, m)?)?;
    m.add_function(wrap_pyfunction!(variant_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(variant_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(variant_unshred, m)?)?;
    Ok(())
}
