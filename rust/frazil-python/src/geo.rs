//! Bindings of `frazil_values::geo`: the bounding box of geometry/geography WKB columns, kept
//! across a file's batches in one native accumulator.

use std::sync::Arc;

use arrow_array::BooleanArray;
use arrow_schema::{DataType, Field};
use frazil_values::geo::{BoundingBox, BoundsAccumulator};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::arrow::{export, import_array, import_chunks, ArrowArrayExport};
use crate::error::IntoPyResult;

/// The bounding box of WKB values added batch by batch (`geography`: longitudes on a circle).
#[pyclass(module = "frazil._native")]
pub struct GeoBounds {
    acc: BoundsAccumulator,
}

#[pymethods]
impl GeoBounds {
    #[new]
    fn new(geography: bool) -> Self {
        GeoBounds {
            acc: BoundsAccumulator::new(geography),
        }
    }

    /// Adds the values of an array or chunked array (`__arrow_c_array__` or
    /// `__arrow_c_stream__`) of binary WKB; nulls are skipped.
    fn add(&mut self, py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let arrays = import_chunks(values)?;
        let acc = &mut self.acc;
        py.detach(|| {
            for a in &arrays {
                acc.add_wkb_array(a.as_ref())?;
            }
            acc.compact();
            Ok(())
        })
        .py()
    }

    /// Adds a box (e.g. a Parquet column chunk's geospatial statistics); `None` for a
    /// dimension without values. A geography box may wrap (`xmin > xmax`).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (xmin, ymin, xmax, ymax, zmin=None, zmax=None, mmin=None, mmax=None))]
    fn add_box(
        &mut self,
        xmin: f64,
        ymin: f64,
        xmax: f64,
        ymax: f64,
        zmin: Option<f64>,
        zmax: Option<f64>,
        mmin: Option<f64>,
        mmax: Option<f64>,
    ) {
        self.acc.add_box(&BoundingBox {
            xmin,
            ymin,
            xmax,
            ymax,
            z: zmin.zip(zmax),
            m: mmin.zip(mmax),
        });
        self.acc.compact();
    }

    /// The (lower, upper) bound points (Appendix D), or `None` without a box.
    fn bounds<'py>(&self, py: Python<'py>) -> Option<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let (lo, hi) = self.acc.finish()?.to_bounds();
        Some((PyBytes::new(py, &lo), PyBytes::new(py, &hi)))
    }
}

/// Whether the boxes of two bound pairs share a point over X and Y (`geography`: the
/// antimeridian rule).
#[pyfunction]
fn geo_bounds_intersect(
    lower: &[u8],
    upper: &[u8],
    other_lower: &[u8],
    other_upper: &[u8],
    geography: bool,
) -> PyResult<bool> {
    BoundingBox::bounds_intersect((lower, upper), (other_lower, other_upper), geography).py()
}

/// Per value of a binary WKB array: whether its box may share a point with the query box
/// (`lower`/`upper` bound points); null for null values, true where a value has no box
/// (an empty value, or a geography value with edges) so nothing is dropped on a guess.
#[pyfunction]
fn geo_intersects_box(
    py: Python<'_>,
    values: &Bound<'_, PyAny>,
    lower: &[u8],
    upper: &[u8],
    geography: bool,
) -> PyResult<ArrowArrayExport> {
    let query = BoundingBox::from_bounds(lower, upper).py()?;
    let imported = import_array(values)?;
    let array = imported.array;
    let out = py
        .detach(|| frazil_values::geo::intersects_box_array(array.as_ref(), &query, geography))
        .py()?;
    let field = Arc::new(Field::new(imported.field.name(), DataType::Boolean, true));
    Ok(export(Arc::new(out), field))
}

/// Per data file of a `data_file` struct array (`lower_bounds`, `upper_bounds` maps): whether
/// it may hold a value of `field_id` whose box intersects the query box.
#[pyfunction]
fn geo_prune(
    py: Python<'_>,
    data_files: &Bound<'_, PyAny>,
    field_id: i32,
    lower: &[u8],
    upper: &[u8],
    geography: bool,
) -> PyResult<ArrowArrayExport> {
    let query = BoundingBox::from_bounds(lower, upper).py()?;
    let imported = import_array(data_files)?;
    let array = imported.array;
    let keep = py
        .detach(|| {
            frazil_scan::geo_evaluator::may_intersect(array.as_ref(), field_id, &query, geography)
        })
        .py()?;
    let out = BooleanArray::from(keep);
    Ok(export(
        Arc::new(out),
        Arc::new(Field::new("keep", DataType::Boolean, false)),
    ))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<GeoBounds>()?;
    m.add_function(wrap_pyfunction!(geo_bounds_intersect, m)?)?;
    m.add_function(wrap_pyfunction!(geo_intersects_box, m)?)?;
    m.add_function(wrap_pyfunction!(geo_prune, m)?)?;
    Ok(())
}
