//! Bindings of `frazil_deletes`: deletion vectors as an opaque `DeletionVector` (positions in
//! and out as Arrow arrays, keep-masks and keep-indices for row ranges), and position delete
//! files grouped by data file; all native work runs with the GIL released. Puffin files are in
//! `puffin.rs`.

use std::sync::Arc;

use arrow_array::Int64Array;
use frazil_deletes::{position_delete, PositionBitmap};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::PyBytes;

use crate::arrow::{array_export, import_chunks, import_stream, mask_export, ArrowArrayExport};
use crate::error::IntoPyResult;

/// Position delete rows (anything with `__arrow_c_stream__` of structs holding `file_path`
/// and `pos` columns) grouped into one deletion vector per data file.
#[pyfunction]
#[pyo3(signature = (rows, data_file = None))]
fn deletes_group_positions(
    py: Python<'_>,
    rows: &Bound<'_, PyAny>,
    data_file: Option<String>,
) -> PyResult<Vec<(String, PyDeletionVector)>> {
    let (_, chunks) = import_stream(rows)?;
    let groups = py
        .detach(|| position_delete::group_position_delete_rows(&chunks, data_file.as_deref()))
        .py()?;
    Ok(groups
        .into_iter()
        .map(|(path, inner)| (path, PyDeletionVector { inner }))
        .collect())
}

/// A set of deleted row positions of one data file (`frazil.manifest.deletes.DeletionVector` wraps it).
#[pyclass(frozen, module = "frazil._native", name = "DeletionVector")]
pub struct PyDeletionVector {
    inner: PositionBitmap,
}

#[pymethods]
impl PyDeletionVector {
    #[new]
    fn new() -> Self {
        PyDeletionVector {
            inner: PositionBitmap::new(),
        }
    }

    /// From an integer Arrow array or chunked array of positions (any order, duplicates ok).
    #[staticmethod]
    fn from_positions(py: Python<'_>, positions: &Bound<'_, PyAny>) -> PyResult<Self> {
        let chunks = import_chunks(positions)?;
        let inner = py
            .detach(|| position_delete::bitmap_of_chunks(&chunks))
            .py()?;
        Ok(PyDeletionVector { inner })
    }

    /// From a `deletion-vector-v1` blob at `[offset, offset + length)` of `data`;
    /// `context` names it in errors.
    #[staticmethod]
    #[pyo3(signature = (data, offset = 0, length = None, context = "", record_count = None))]
    fn deserialize(
        py: Python<'_>,
        data: PyBackedBytes,
        offset: u64,
        length: Option<u64>,
        context: &str,
        record_count: Option<u64>,
    ) -> PyResult<Self> {
        let inner = py
            .detach(|| frazil_deletes::read_dv_within(&data, offset, length, context, record_count))
            .py()?;
        Ok(PyDeletionVector { inner })
    }

    /// The `deletion-vector-v1` blob bytes.
    fn serialize<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes = py.detach(|| frazil_deletes::serialize_dv(&self.inner));
        PyBytes::new(py, &bytes)
    }

    #[getter]
    fn cardinality(&self) -> u64 {
        self.inner.cardinality()
    }

    #[getter]
    fn min(&self) -> Option<u64> {
        self.inner.min()
    }

    #[getter]
    fn max(&self) -> Option<u64> {
        self.inner.max()
    }

    fn contains(&self, pos: u64) -> bool {
        self.inner.contains(pos)
    }

    /// How many of the positions `[start, start + length)` are deleted.
    fn deleted_count(&self, start: u64, length: u64) -> u64 {
        self.inner
            .range_cardinality(start, start.saturating_add(length))
    }

    /// Every position, ascending, as an Int64 array; each checked to be below `record_count`
    /// (the data file's rows) when given, else at most `MAX_POSITIONS` of them.
    #[pyo3(signature = (record_count = None))]
    fn positions(&self, py: Python<'_>, record_count: Option<u64>) -> PyResult<ArrowArrayExport> {
        let values = py
            .detach(|| position_delete::positions_buffer(&self.inner, record_count))
            .py()?;
        Ok(array_export(Arc::new(Int64Array::new(values, None)), false))
    }

    fn keep_mask(&self, py: Python<'_>, start: u64, length: usize) -> ArrowArrayExport {
        let mask = py.detach(|| position_delete::keep_mask(&self.inner, start, length));
        mask_export(mask)
    }

    fn keep_indices(&self, py: Python<'_>, start: u64, length: usize) -> ArrowArrayExport {
        let values = py.detach(|| position_delete::keep_indices(&self.inner, start, length));
        array_export(Arc::new(Int64Array::new(values, None)), false)
    }

    fn union(&self, py: Python<'_>, other: &PyDeletionVector) -> Self {
        let inner = py.detach(|| {
            let mut b = self.inner.clone();
            b.union_with(&other.inner);
            b
        });
        PyDeletionVector { inner }
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyDeletionVector>()
            .is_ok_and(|o| o.get().inner == self.inner)
    }

    fn __len__(&self) -> usize {
        self.inner.cardinality() as usize
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDeletionVector>()?;
    m.add_function(wrap_pyfunction!(deletes_group_positions, m)?)?;
    Ok(())
}
