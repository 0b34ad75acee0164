//! Binding of `frazil_scan::row_filter` (Python twin: `frazil.table.scan.filter`): a bound
//! row filter compiled once, evaluated per batch of columns with the GIL released.

use arrow_array::ArrayRef;
use frazil_scan::expr::Schema;
use frazil_scan::{Expr, RowFilter};
use pyo3::prelude::*;

use crate::arrow::{import_array, mask_export, ArrowArrayExport};
use crate::error::IntoPyResult;

#[pyclass(frozen, module = "frazil._native", name = "RowFilter")]
pub struct PyRowFilter {
    pub(crate) inner: RowFilter,
    /// The bound filter and its schema, for the page index (`ParquetFooter.page_keep`).
    pub(crate) expr: Expr,
    pub(crate) schema: Schema,
}

#[pymethods]
impl PyRowFilter {
    /// `schema_json`: the schema the filter is bound to; `filter_json`: the bound filter
    /// (expressions spec JSON).
    #[new]
    fn new(py: Python<'_>, schema_json: &str, filter_json: &str) -> PyResult<Self> {
        let (inner, expr, schema) = py
            .detach(|| {
                let (schema, expr) = Expr::bound_from_json(schema_json, filter_json)?;
                Ok::<_, frazil_values::Error>((RowFilter::new(&expr, &schema)?, expr, schema))
            })
            .py()?;
        Ok(PyRowFilter {
            inner,
            expr,
            schema,
        })
    }

    /// The field ids of the columns `mask` takes, in order.
    fn field_ids(&self) -> Vec<i32> {
        self.inner.field_ids().to_vec()
    }

    /// Per row, whether it makes the filter true (no nulls): `columns` holds one array per
    /// `field_ids()` entry, `length` rows each.
    fn mask(
        &self,
        py: Python<'_>,
        columns: Vec<Bound<'_, PyAny>>,
        length: usize,
    ) -> PyResult<ArrowArrayExport> {
        let arrays = columns
            .iter()
            .map(|c| Ok(import_array(c)?.array))
            .collect::<PyResult<Vec<ArrayRef>>>()?;
        let mask = py.detach(|| self.inner.eval(&arrays, length)).py()?;
        Ok(mask_export(mask))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRowFilter>()
}
