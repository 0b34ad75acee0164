//! Binding of `frazil_scan::metrics_evaluator` (Python twin: `frazil.expressions.metrics_evaluator`):
//! a bound row filter evaluated over the column metrics of a `data_file` struct column, strict
//! or inclusive, with the GIL released.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::BooleanArray;
use arrow_schema::{DataType, Field};
use frazil_scan::{Expr, MetricsColumns, MetricsEvaluator, Schema};
use pyo3::prelude::*;

use crate::arrow::{export, import_array, ArrowArrayExport};
use crate::error::{invalid, IntoPyResult};

#[pyclass(frozen, module = "frazil._native", name = "MetricsEvaluator")]
pub struct PyMetricsEvaluator {
    schema: Schema,
    expr: Expr,
    strict: bool,
    sql_nulls: bool,
}

#[pymethods]
impl PyMetricsEvaluator {
    /// `schema_json`: the schema the filter is bound to; `filter_json`: the bound filter
    /// (expressions spec JSON); `strict`: "all rows must match" instead of "rows might match";
    /// `sql_nulls`: strict under SQL's null semantics (`MetricsEvaluator::sql_nulls`).
    #[new]
    #[pyo3(signature = (schema_json, filter_json, strict, sql_nulls = false))]
    fn new(
        py: Python<'_>,
        schema_json: &str,
        filter_json: &str,
        strict: bool,
        sql_nulls: bool,
    ) -> PyResult<Self> {
        let (schema, expr) = py
            .detach(|| Expr::bound_from_json(schema_json, filter_json))
            .py()?;
        Ok(PyMetricsEvaluator {
            schema,
            expr,
            strict,
            sql_nulls,
        })
    }

    /// One boolean per row of `data_files`: a `data_file` struct array, or manifest entries (a
    /// record batch or struct array with a `data_file` column).
    fn eval(&self, py: Python<'_>, data_files: &Bound<'_, PyAny>) -> PyResult<ArrowArrayExport> {
        let imported = import_array(data_files)?;
        let s = imported
            .array
            .as_struct_opt()
            .ok_or_else(|| invalid("expected a data_file struct array or manifest entries"))?;
        let result = py
            .detach(|| {
                let m = MetricsColumns::of(s)?;
                MetricsEvaluator::new(&self.expr, &self.schema, self.strict)
                    .sql_nulls(self.sql_nulls)
                    .eval(&m)
            })
            .py()?;
        Ok(export(
            Arc::new(BooleanArray::from(result)),
            Arc::new(Field::new("", DataType::Boolean, false)),
        ))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyMetricsEvaluator>()?;
    Ok(())
}
