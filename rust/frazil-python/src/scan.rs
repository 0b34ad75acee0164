//! Bindings of `frazil_scan`: a row filter bound to a table's schema and specs
//! (`ScanPlanner`), manifest pruning over a manifest list batch, and whole-scan planning
//! (decoding, selection, residuals, delete attachment) with the GIL released.

use std::sync::Arc;

use frazil_manifest::ReadOptions;
use frazil_scan::{DeletePlan, PlannedScan as Planned, ScanPlanner};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;

use crate::arrow::{array_export, export_batch, import_batch, ArrowArrayExport, RecordBatchExport};
use crate::error::{invalid, IntoPyResult};

use crate::manifest::{Inherit, ListEntry};

/// One planned manifest (`frazil_scan::PlannedManifest`): its row in the manifest list, its
/// content (0: data, 1: deletes), the selected entries, and for a data manifest each entry's
/// residual (an index into `PlannedScan.residuals`) and delete files (indices into the
/// concatenated entries of the delete manifests, in order).
#[pyclass(frozen, get_all, module = "frazil._native")]
pub struct PlannedManifest {
    row: usize,
    content: i32,
    entries: Py<RecordBatchExport>,
    positions: Py<ArrowArrayExport>,
    residual_index: Py<ArrowArrayExport>,
    deletes: Py<ArrowArrayExport>,
}

/// A planned scan (`frazil_scan::PlannedScan`): its manifests in `rows` order and the distinct
/// residuals (expressions spec JSON) their entries refer to.
#[pyclass(frozen, get_all, module = "frazil._native")]
pub struct PlannedScan {
    manifests: Vec<Py<PlannedManifest>>,
    residuals: Vec<String>,
}

#[pyclass(frozen, module = "frazil._native", name = "ScanPlanner")]
pub struct PyScanPlanner {
    inner: ScanPlanner,
    /// The table location relative v4 paths resolve against.
    table_location: Option<Arc<str>>,
}

#[pymethods]
impl PyScanPlanner {
    /// `schema_json`: the scan's schema; `specs_json`: the table's partition specs (a JSON
    /// list); `filter_json`: the row filter bound to that schema (expressions spec JSON);
    /// `table_location`: what relative (v4) paths in manifests resolve against.
    #[new]
    #[pyo3(signature = (schema_json, specs_json, filter_json, table_location = None))]
    fn new(
        py: Python<'_>,
        schema_json: &str,
        specs_json: &str,
        filter_json: &str,
        table_location: Option<String>,
    ) -> PyResult<Self> {
        let inner = py
            .detach(|| ScanPlanner::new(schema_json, specs_json, filter_json))
            .py()?;
        Ok(PyScanPlanner {
            inner,
            table_location: table_location.map(Arc::from),
        })
    }

    /// Which rows of a manifest list record batch may hold matching entries (a boolean array).
    fn prune_manifests(
        &self,
        py: Python<'_>,
        manifest_list: &Bound<'_, PyAny>,
    ) -> PyResult<ArrowArrayExport> {
        let batch = import_batch(manifest_list)?;
        let keep = py.detach(|| self.inner.prune_manifests(&batch)).py()?;
        Ok(array_export(Arc::new(keep), false))
    }

    /// The filter as the residuals of undecided files write it, as JSON.
    fn filter_json(&self) -> PyResult<String> {
        self.inner.filter_json().py()
    }

    /// The bound filter's inclusive projection onto a spec, as JSON.
    fn partition_filter_json(&self, spec_id: i32) -> PyResult<String> {
        self.inner.partition_filter_json(spec_id).py()
    }

    /// Plans the delete manifests at `rows` of `manifest_list` (their bytes in `datas`,
    /// inheritance in `inherits`: (added_snapshot_id, sequence_number, first_row_id)),
    /// decoding and planning on up to `threads` threads: the delete files of the scan, indexed
    /// for `plan_data`.
    #[pyo3(signature = (manifest_list, rows, datas, inherits, threads = None))]
    fn plan_deletes(
        &self,
        py: Python<'_>,
        manifest_list: &Bound<'_, PyAny>,
        rows: Vec<usize>,
        datas: Vec<PyBackedBytes>,
        inherits: Vec<Inherit>,
        threads: Option<usize>,
    ) -> PyResult<PyDeletePlan> {
        let batch = import_batch(manifest_list)?;
        let options = read_options(&rows, &datas, inherits, self.table_location.as_ref())?;
        let plan = py
            .detach(|| {
                self.inner.plan_deletes(
                    &batch,
                    &rows,
                    |k, what| what.read(&datas[k], &options[k]),
                    threads,
                )
            })
            .py()?;
        let manifests = plan
            .manifests
            .iter()
            .map(|m| export_manifest(py, m.clone()))
            .collect::<PyResult<_>>()?;
        Ok(PyDeletePlan {
            inner: plan,
            manifests,
        })
    }

    /// Plans the data manifests at `rows` (arguments as `plan_deletes`') against the scan's
    /// `DeletePlan`; may be called for several runs of manifests (residuals are per call).
    /// Data files' column stats maps are in the entries only with `include_column_stats`.
    #[pyo3(signature = (deletes, manifest_list, rows, datas, inherits, threads = None, include_column_stats = true))]
    #[allow(clippy::too_many_arguments)]
    fn plan_data(
        &self,
        py: Python<'_>,
        deletes: &PyDeletePlan,
        manifest_list: &Bound<'_, PyAny>,
        rows: Vec<usize>,
        datas: Vec<PyBackedBytes>,
        inherits: Vec<Inherit>,
        threads: Option<usize>,
        include_column_stats: bool,
    ) -> PyResult<PlannedScan> {
        let batch = import_batch(manifest_list)?;
        let options = read_options(&rows, &datas, inherits, self.table_location.as_ref())?;
        let planned = py
            .detach(|| {
                self.inner.plan_data(
                    &deletes.inner,
                    &batch,
                    &rows,
                    |k, what| what.read(&datas[k], &options[k]),
                    threads,
                    include_column_stats,
                )
            })
            .py()?;
        export_planned(py, planned)
    }
}

/// The planned delete manifests of a scan (`frazil_scan::DeletePlan`): `manifests` as
/// `PlannedManifest`s, and the index `ScanPlanner.plan_data` attaches from.
#[pyclass(frozen, module = "frazil._native", name = "DeletePlan")]
pub struct PyDeletePlan {
    inner: DeletePlan,
    manifests: Vec<Py<PlannedManifest>>,
}

#[pymethods]
impl PyDeletePlan {
    #[getter]
    fn manifests(&self, py: Python<'_>) -> Vec<Py<PlannedManifest>> {
        self.manifests.iter().map(|m| m.clone_ref(py)).collect()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }
}

fn read_options(
    rows: &[usize],
    datas: &[PyBackedBytes],
    inherits: Vec<Inherit>,
    location: Option<&Arc<str>>,
) -> PyResult<Vec<ReadOptions>> {
    if datas.len() != rows.len() || inherits.len() != rows.len() {
        return Err(invalid(
            "rows, datas and inherits must have one element per manifest",
        ));
    }
    Ok(inherits
        .into_iter()
        .map(|i| ReadOptions {
            manifest_file: i.map(ListEntry::manifest_file),
            table_location: location.cloned(),
            ..Default::default()
        })
        .collect())
}

fn export_manifest(
    py: Python<'_>,
    p: frazil_scan::PlannedManifest,
) -> PyResult<Py<PlannedManifest>> {
    let positions: Vec<i64> = p.positions.iter().map(|&i| i as i64).collect();
    let manifest = PlannedManifest {
        row: p.row,
        content: p.content,
        entries: Py::new(py, export_batch(p.entries))?,
        positions: Py::new(
            py,
            array_export(Arc::new(arrow_array::Int64Array::from(positions)), false),
        )?,
        residual_index: Py::new(py, array_export(Arc::new(p.residual_index), false))?,
        deletes: Py::new(
            py,
            array_export(Arc::new(p.deletes.into_list_array()), false),
        )?,
    };
    Py::new(py, manifest)
}

fn export_planned(py: Python<'_>, planned: Planned) -> PyResult<PlannedScan> {
    let manifests = planned
        .manifests
        .into_iter()
        .map(|p| export_manifest(py, p))
        .collect::<PyResult<_>>()?;
    Ok(PlannedScan {
        manifests,
        residuals: planned.residuals,
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyScanPlanner>()?;
    m.add_class::<PlannedManifest>()?;
    m.add_class::<PlannedScan>()?;
    m.add_class::<PyDeletePlan>()?;
    Ok(())
}
