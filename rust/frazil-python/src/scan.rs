//! Bindings of `frazil_scan`: a row filter bound to a table's schema and specs
//! (`ScanPlanner`), manifest pruning over a manifest list batch, and whole-scan planning
//! (decoding, selection, residuals, delete attachment) with the GIL released.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, ListArray, RecordBatch};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field};
use frazil_manifest::{ManifestFile, ReadOptions};
use frazil_scan::{ScanPlanner, TaskDeletes};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;

use crate::arrow::{export, export_batch, import_array, ArrowArrayExport, RecordBatchExport};
use crate::error::{invalid, IntoPyResult};

type Inherit = Option<(Option<i64>, Option<i64>, Option<i64>)>;

fn import_batch(obj: &Bound<'_, PyAny>) -> PyResult<RecordBatch> {
    let imported = import_array(obj)?;
    let s = imported
        .array
        .as_struct_opt()
        .ok_or_else(|| invalid("expected a record batch (a struct array)"))?;
    Ok(RecordBatch::from(s.clone()))
}

fn array_export(array: ArrayRef) -> ArrowArrayExport {
    let field = Arc::new(Field::new("", array.data_type().clone(), false));
    export(array, field)
}

/// Each entry's delete file indices as one `list<int32>` array (the crate keeps the offsets
/// valid: one more than entries, ascending from 0).
fn deletes_export(deletes: TaskDeletes) -> ArrowArrayExport {
    let item = Arc::new(Field::new_list_field(DataType::Int32, false));
    let offsets = OffsetBuffer::new(deletes.offsets.values().clone());
    let list = ListArray::new(item, offsets, Arc::new(deletes.indices), None);
    array_export(Arc::new(list))
}

/// One planned manifest (`frazil_scan::PlannedManifest`): its row in the manifest list, its
/// content (0: data, 1: deletes), the selected entries, and for a data manifest each entry's
/// residual (an index into `PlannedScan.residuals`) and delete files (indices into the
/// concatenated entries of the delete manifests, in order).
#[pyclass(frozen, get_all, module = "frazil._native")]
pub struct PlannedManifest {
    row: usize,
    content: i32,
    entries: Py<RecordBatchExport>,
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
}

#[pymethods]
impl PyScanPlanner {
    /// `schema_json`: the scan's schema; `specs_json`: the table's partition specs (a JSON
    /// list); `filter_json`: the row filter bound to that schema (expressions spec JSON).
    #[new]
    fn new(
        py: Python<'_>,
        schema_json: &str,
        specs_json: &str,
        filter_json: &str,
    ) -> PyResult<Self> {
        let inner = py
            .detach(|| ScanPlanner::new(schema_json, specs_json, filter_json))
            .py()?;
        Ok(PyScanPlanner { inner })
    }

    /// Which rows of a manifest list record batch may hold matching entries (a boolean array).
    fn prune_manifests(
        &self,
        py: Python<'_>,
        manifest_list: &Bound<'_, PyAny>,
    ) -> PyResult<ArrowArrayExport> {
        let batch = import_batch(manifest_list)?;
        let keep = py.detach(|| self.inner.prune_manifests(&batch)).py()?;
        Ok(array_export(Arc::new(keep)))
    }

    /// The bound filter's inclusive projection onto a spec, as JSON.
    fn partition_filter_json(&self, spec_id: i32) -> PyResult<String> {
        self.inner.partition_filter_json(spec_id).py()
    }

    /// Plans the manifests at `rows` of `manifest_list` (their bytes in `datas`, inheritance in
    /// `inherits`: (added_snapshot_id, sequence_number, first_row_id)), decoding and planning
    /// on up to `threads` threads.
    /// Data files' column stats maps are in the entries only with `include_column_stats`.
    #[pyo3(signature = (manifest_list, rows, datas, inherits, threads = None, include_column_stats = true))]
    #[allow(clippy::too_many_arguments)]
    fn plan_files(
        &self,
        py: Python<'_>,
        manifest_list: &Bound<'_, PyAny>,
        rows: Vec<usize>,
        datas: Vec<PyBackedBytes>,
        inherits: Vec<Inherit>,
        threads: Option<usize>,
        include_column_stats: bool,
    ) -> PyResult<PlannedScan> {
        if datas.len() != rows.len() || inherits.len() != rows.len() {
            return Err(invalid(
                "rows, datas and inherits must have one element per manifest",
            ));
        }
        let batch = import_batch(manifest_list)?;
        let options: Vec<ReadOptions> = inherits
            .into_iter()
            .map(|i| ReadOptions {
                manifest_file: i.map(|(added_snapshot_id, sequence_number, first_row_id)| {
                    ManifestFile {
                        added_snapshot_id,
                        sequence_number,
                        first_row_id,
                    }
                }),
                columns: None,
                threads: None,
            })
            .collect();
        let no_stats = frazil_manifest::manifest::without_column_stats();
        let planned = py
            .detach(|| {
                self.inner.plan_files(
                    &batch,
                    &rows,
                    |k, load| {
                        let options = ReadOptions {
                            columns: (!load.column_stats).then(|| no_stats.clone()),
                            threads: Some(load.threads),
                            ..options[k].clone()
                        };
                        frazil_manifest::read_manifest(&datas[k], &options)
                    },
                    threads,
                    include_column_stats,
                )
            })
            .py()?;
        let manifests = planned
            .manifests
            .into_iter()
            .map(|p| {
                let manifest = PlannedManifest {
                    row: p.row,
                    content: p.content,
                    entries: Py::new(py, export_batch(p.entries))?,
                    residual_index: Py::new(py, array_export(Arc::new(p.residual_index)))?,
                    deletes: Py::new(py, deletes_export(p.deletes))?,
                };
                Py::new(py, manifest)
            })
            .collect::<PyResult<_>>()?;
        Ok(PlannedScan {
            manifests,
            residuals: planned.residuals,
        })
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyScanPlanner>()?;
    m.add_class::<PlannedManifest>()?;
    m.add_class::<PlannedScan>()?;
    Ok(())
}
