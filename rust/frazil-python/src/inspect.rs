//! Binding of `frazil_scan::inspect` (Python twin: `frazil/table/inspect/__init__.py`): the
//! `readable_metrics` column of the metadata tables, computed with the GIL released.

use std::sync::Arc;

use arrow_array::Array;
use arrow_schema::Field;
use frazil_scan::inspect::{readable_metrics, MetricsColumn};
use pyo3::prelude::*;

use crate::arrow::{export, import_array, ArrowArrayExport};
use crate::error::IntoPyResult;
use crate::values::parse_primitive;

/// `data_files`: a `data_file` struct array (as `manifest_read` decodes it); `columns`: one
/// `(name, field_id, primitive type JSON)` per struct field of the result.
#[pyfunction]
fn inspect_readable_metrics(
    py: Python<'_>,
    data_files: &Bound<'_, PyAny>,
    columns: Vec<(String, i32, String)>,
) -> PyResult<ArrowArrayExport> {
    let imported = import_array(data_files)?;
    let columns = columns
        .into_iter()
        .map(|(name, id, ty)| {
            Ok(MetricsColumn {
                name,
                id,
                ty: parse_primitive(&ty)?,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let result = py
        .detach(|| readable_metrics(imported.array.as_ref(), &columns))
        .py()?;
    let field = Field::new("readable_metrics", result.data_type().clone(), false);
    Ok(export(Arc::new(result), Arc::new(field)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(inspect_readable_metrics, m)?)?;
    Ok(())
}
