//! Bindings of `frazil_values::variant_shredding`: variant columns (`struct<metadata, value>`) from and to
//! JSON text, one Arrow array at a time.

use std::sync::Arc;

use arrow_array::Array;
use arrow_schema::{DataType, Field};
use frazil_values::variant_shredding;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::arrow::{export, import_array, ArrowArrayExport};
use crate::error::IntoPyResult;

/// The value bytes of a (possibly shredded) variant group `struct<metadata, value?,
/// typed_value?>`: `typed_value` merged back into `value` (null where a value is missing).
#[pyfunction]
fn variant_unshred(py: Python<'_>, group: &Bound<'_, PyAny>) -> PyResult<ArrowArrayExport> {
    let imported = import_array(group)?;
    let out = py
        .detach(|| variant_shredding::unshred(imported.array.as_ref()))
        .py()?;
    let field = Field::new(imported.field.name(), DataType::Binary, true);
    Ok(export(out, Arc::new(field)))
}

/// JSON text (a string array) as a variant `struct<metadata, value>` array.
#[pyfunction]
fn variant_from_json(py: Python<'_>, json: &Bound<'_, PyAny>) -> PyResult<ArrowArrayExport> {
    let imported = import_array(json)?;
    let out = py
        .detach(|| variant_shredding::from_json_array(imported.array.as_ref()))
        .py()?;
    let field = Field::new(imported.field.name(), out.data_type().clone(), true);
    Ok(export(Arc::new(out), Arc::new(field)))
}

/// A variant `struct<metadata, value>` array as JSON text.
#[pyfunction]
fn variant_to_json(py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<ArrowArrayExport> {
    let imported = import_array(values)?;
    let out = py
        .detach(|| variant_shredding::to_json_array(imported.array.as_ref()))
        .py()?;
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
