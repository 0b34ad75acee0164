//! Bindings of `frazil_deletes::equality_delete`: an opaque `EqualityDeleteSet` built once from
//! the key columns of equality delete files (an Arrow stream), probed per batch of data rows
//! for a keep-mask; building and probing run with the GIL released.

use arrow_array::{Array, ArrayRef};
use frazil_deletes::EqualityDeleteSet;
use pyo3::prelude::*;

use crate::arrow::{import_array, import_keep_mask, import_stream, mask_export, ArrowArrayExport};
use crate::error::IntoPyResult;

/// The keys of equality delete files sharing their equality field ids
/// (`frazil.manifest.deletes.EqualityDeleteSet` wraps it).
#[pyclass(frozen, module = "frazil._native", name = "EqualityDeleteSet")]
pub struct PyEqualityDeleteSet {
    inner: EqualityDeleteSet,
}

#[pymethods]
impl PyEqualityDeleteSet {
    /// From the delete rows' key columns, one per equality field id in order: anything with
    /// `__arrow_c_stream__` of structs (a pyarrow Table or RecordBatchReader).
    #[staticmethod]
    fn from_keys(py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Self> {
        let (field, chunks) = import_stream(keys)?;
        let inner = py
            .detach(|| EqualityDeleteSet::from_key_chunks(field.data_type(), &chunks))
            .py()?;
        Ok(PyEqualityDeleteSet { inner })
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// The keep-mask of a batch: `columns` are its key arrays (in the set's order), `keep`
    /// its position-delete keep-mask (rows already deleted are not probed).
    #[pyo3(signature = (columns, keep = None))]
    fn keep_mask(
        &self,
        py: Python<'_>,
        columns: Vec<Bound<'_, PyAny>>,
        keep: Option<Bound<'_, PyAny>>,
    ) -> PyResult<ArrowArrayExport> {
        let arrays = columns
            .iter()
            .map(|c| Ok(import_array(c)?.array))
            .collect::<PyResult<Vec<ArrayRef>>>()?;
        let keep = keep.map(|k| import_keep_mask(&k)).transpose()?;
        let keep = keep.map(|k| k.values().clone());
        let mask = py
            .detach(|| {
                let refs: Vec<&dyn Array> = arrays.iter().map(|a| a.as_ref()).collect();
                self.inner.keep_mask(&refs, keep.as_ref())
            })
            .py()?;
        Ok(mask_export(mask))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyEqualityDeleteSet>()
}
