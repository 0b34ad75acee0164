//! Theta sketches of columns (`frazil-statistics`): Arrow arrays in, compact sketch bytes out.

use frazil_statistics::{estimate_of, ThetaSketch, ThetaUnion};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::arrow::import_chunks;
use crate::error::IntoPyResult;
use crate::values::parse_primitive;

/// A theta sketch of one column's values (hashed in their binary single-value form), fed batch
/// by batch; `to_bytes` gives the compact serialization DataSketches reads.
#[pyclass(module = "frazil._native", name = "ThetaSketch")]
pub struct PyThetaSketch {
    inner: ThetaSketch,
}

#[pymethods]
impl PyThetaSketch {
    #[new]
    #[pyo3(signature = (lg_k = 12))]
    fn new(lg_k: u8) -> PyResult<Self> {
        Ok(PyThetaSketch {
            inner: ThetaSketch::new(lg_k).py()?,
        })
    }

    /// Adds the non-null values of an Arrow array (or every chunk of a stream) of Iceberg
    /// primitive type `type_json`.
    fn update(
        &mut self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        type_json: &str,
    ) -> PyResult<()> {
        let ty = parse_primitive(type_json)?;
        let arrays = import_chunks(values)?;
        let inner = &mut self.inner;
        py.detach(|| {
            arrays
                .iter()
                .try_for_each(|a| inner.update_array(a.as_ref(), &ty))
        })
        .py()
    }

    fn estimate(&self) -> f64 {
        self.inner.estimate()
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_compact_bytes())
    }

    /// The estimate of a serialized compact sketch (any DataSketches implementation's).
    #[staticmethod]
    fn estimate_of(data: &[u8]) -> PyResult<f64> {
        estimate_of(data).py()
    }
}

/// DataSketches' theta union of serialized compact sketches; `to_bytes` gives the merged
/// compact sketch.
#[pyclass(module = "frazil._native", name = "ThetaUnion")]
pub struct PyThetaUnion {
    inner: ThetaUnion,
}

#[pymethods]
impl PyThetaUnion {
    #[new]
    #[pyo3(signature = (lg_k = 12))]
    fn new(lg_k: u8) -> PyResult<Self> {
        Ok(PyThetaUnion {
            inner: ThetaUnion::new(lg_k).py()?,
        })
    }

    fn update(&mut self, data: &[u8]) -> PyResult<()> {
        self.inner.update_bytes(data).py()
    }

    fn estimate(&self) -> f64 {
        self.inner.estimate()
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_compact_bytes())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyThetaSketch>()?;
    m.add_class::<PyThetaUnion>()?;
    Ok(())
}
