//! The REST scan-planning wire form (`frazil_rest`): plan rows to a JSON page and back.

use std::collections::HashMap;

use frazil_rest::{read_page, write_page, Layout};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::arrow::{export_batch, import_chunks, RecordBatchExport};
use crate::error::IntoPyResult;

type Fields = Vec<(i32, String)>;
type Specs = HashMap<i32, Vec<i64>>;

#[pyfunction]
fn rest_write_page<'py>(
    py: Python<'py>,
    tasks: &Bound<'py, PyAny>,
    deletes: &Bound<'py, PyAny>,
    delete_rows: Vec<i64>,
    residuals: HashMap<String, String>,
    fields: Fields,
    specs: Specs,
) -> PyResult<Bound<'py, PyBytes>> {
    let layout = Layout::parse(&fields, specs).py()?;
    let (tasks, deletes) = (import_chunks(tasks)?, import_chunks(deletes)?);
    let out = py
        .detach(|| write_page(&tasks, &deletes, &delete_rows, &residuals, &layout))
        .py()?;
    Ok(PyBytes::new(py, &out))
}

#[pyfunction]
fn rest_read_page(
    py: Python<'_>,
    data: &[u8],
    fields: Fields,
    specs: Specs,
) -> PyResult<(RecordBatchExport, RecordBatchExport, Vec<String>)> {
    let layout = Layout::parse(&fields, specs).py()?;
    let page = py.detach(|| read_page(data, &layout)).py()?;
    Ok((
        export_batch(page.tasks),
        export_batch(page.deletes),
        page.plan_tasks,
    ))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(rest_write_page, m)?)?;
    m.add_function(wrap_pyfunction!(rest_read_page, m)?)?;
    Ok(())
}
