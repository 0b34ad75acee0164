//! Bindings of `frazil_transforms`: a transform travels as its spec string.

use arrow_array::{make_array, ArrayRef};
use arrow_data::ArrayData;
use arrow_schema::FieldRef;
use frazil_transforms::{apply_field, Transform};
use frazil_values::Type;
use pyo3::prelude::*;

use crate::arrow::{export, import_array, import_stream, ArrowArrayExport};
use crate::error::{invalid, IntoPyResult};
use crate::values::{literal_to_py, parse_primitive, parse_type, py_to_literal};

fn parse(transform: &str) -> PyResult<Transform> {
    Transform::parse(transform).py()
}

fn integer(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<i64> {
    if obj.is_instance_of::<pyo3::types::PyBool>() {
        return Err(invalid(format!("{what} must be an integer, got a bool")));
    }
    obj.extract::<i64>().map_err(|_| {
        invalid(format!(
            "{what} must be a positive integer, got {}",
            obj.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    })
}

/// Murmur3 x86 32-bit of bytes, unsigned (`frazil_transforms::murmur3`).
#[pyfunction]
#[pyo3(signature = (data, seed = 0))]
fn murmur3_32(data: &[u8], seed: u32) -> u32 {
    frazil_transforms::murmur3::hash_bytes_with_seed(data, seed) as u32
}

#[pyfunction]
fn transform_parse(text: &str) -> PyResult<String> {
    Ok(parse(text)?.to_string())
}

/// A transform parsed as a metadata reader must (spec "Partition Transforms"): an unknown name
/// is kept, not refused.
#[pyclass(frozen, get_all, module = "frazil._native")]
pub struct LenientTransform {
    /// The canonical transform string.
    transform: String,
    /// Whether the transform is one this version knows.
    known: bool,
}

#[pyfunction]
fn transform_parse_lenient(text: &str) -> PyResult<LenientTransform> {
    let t = Transform::parse_lenient(text).py()?;
    Ok(LenientTransform {
        known: !matches!(t, Transform::Unknown(_)),
        transform: t.to_string(),
    })
}

#[pyfunction]
fn transform_bucket(n: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(Transform::bucket(integer(n, "bucket count N")?)
        .py()?
        .to_string())
}

#[pyfunction]
fn transform_truncate(w: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(Transform::truncate(integer(w, "truncate width W")?)
        .py()?
        .to_string())
}

#[pyfunction]
fn transform_preserves_order(transform: &str) -> PyResult<bool> {
    Ok(parse(transform)?.preserves_order())
}

#[pyfunction]
fn transform_can_transform(transform: &str, type_json: &str) -> PyResult<bool> {
    Ok(parse(transform)?.can_transform(&parse_type(type_json)?))
}

/// The result type as Appendix C JSON text.
#[pyfunction]
fn transform_result_type(transform: &str, type_json: &str) -> PyResult<String> {
    let ty: Type = parse(transform)?
        .result_type(&parse_type(type_json)?)
        .py()?;
    Ok(ty.to_json().to_string())
}

fn apply_one(
    py: Python<'_>,
    t: &Transform,
    array: ArrayRef,
    field: &FieldRef,
) -> PyResult<ArrowArrayExport> {
    let (out, field) = py.detach(|| apply_field(t, &array, field)).py()?;
    Ok(export(out, field))
}

#[pyfunction]
fn transform_apply(
    py: Python<'_>,
    transform: &str,
    array: &Bound<'_, PyAny>,
) -> PyResult<ArrowArrayExport> {
    let t = parse(transform)?;
    let imported = import_array(array)?;
    apply_one(py, &t, imported.array, &imported.field)
}

/// A transformed stream: one array per input chunk, and an empty array of the result type, so
/// that a stream with no chunks still has a type.
#[pyclass(frozen, get_all, module = "frazil._native")]
pub struct TransformedChunks {
    chunks: Vec<Py<ArrowArrayExport>>,
    empty: Py<ArrowArrayExport>,
}

/// Applies a transform to every chunk of a stream.
#[pyfunction]
fn transform_apply_stream(
    py: Python<'_>,
    transform: &str,
    stream: &Bound<'_, PyAny>,
) -> PyResult<TransformedChunks> {
    let t = parse(transform)?;
    let (field, chunks) = import_stream(stream)?;
    let empty = make_array(ArrayData::new_empty(field.data_type()));
    let empty = Py::new(py, apply_one(py, &t, empty, &field)?)?;
    let chunks = chunks
        .into_iter()
        .map(|chunk| Py::new(py, apply_one(py, &t, chunk, &field)?))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(TransformedChunks { chunks, empty })
}

#[pyfunction]
fn transform_apply_scalar<'py>(
    py: Python<'py>,
    transform: &str,
    value: &Bound<'py, PyAny>,
    type_json: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let t = parse(transform)?;
    let source = parse_primitive(type_json)?;
    let literal = if value.is_none() {
        None
    } else {
        Some(py_to_literal(value, &Type::Primitive(source.clone()))?)
    };
    let out = t.apply_literal(literal.as_ref(), &source).py()?;
    literal_to_py(py, out.as_ref())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<LenientTransform>()?;
    m.add_class::<TransformedChunks>()?;
    m.add_function(wrap_pyfunction!(murmur3_32, m)?)?;
    m.add_function(wrap_pyfunction!(transform_parse, m)?)?;
    m.add_function(wrap_pyfunction!(transform_parse_lenient, m)?)?;
    m.add_function(wrap_pyfunction!(transform_bucket, m)?)?;
    m.add_function(wrap_pyfunction!(transform_truncate, m)?)?;
    m.add_function(wrap_pyfunction!(transform_preserves_order, m)?)?;
    m.add_function(wrap_pyfunction!(transform_can_transform, m)?)?;
    m.add_function(wrap_pyfunction!(transform_result_type, m)?)?;
    m.add_function(wrap_pyfunction!(transform_apply, m)?)?;
    m.add_function(wrap_pyfunction!(transform_apply_stream, m)?)?;
    m.add_function(wrap_pyfunction!(transform_apply_scalar, m)?)?;
    Ok(())
}
