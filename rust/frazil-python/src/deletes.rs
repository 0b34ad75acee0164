//! Bindings of `frazil_deletes`: Puffin files (bytes in, footer tuples and blob bytes out),
//! deletion vectors as an opaque `DeletionVector` (positions in and out as Arrow arrays,
//! keep-masks and keep-indices for row ranges), and position delete files grouped by data
//! file; all native work runs with the GIL released.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array};
use arrow_schema::Field;
use frazil_deletes::puffin::{self, BlobInput, BlobMetadata, CompressionCodec};
use frazil_deletes::{apply, PositionBitmap};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::PyBytes;

use crate::arrow::{export, import_array, import_stream, ArrowArrayExport};
use crate::error::{invalid, IntoPyResult};

type Properties = Vec<(String, String)>;
/// (type, fields, snapshot-id, sequence-number, offset, length, compression-codec, properties)
type BlobTuple = (
    String,
    Vec<i32>,
    i64,
    i64,
    u64,
    u64,
    Option<String>,
    Properties,
);
/// (type, fields, snapshot-id, sequence-number, data, compression-codec, properties)
type BlobInputTuple = (
    String,
    Vec<i32>,
    i64,
    i64,
    PyBackedBytes,
    Option<String>,
    Properties,
);

/// A written file's bytes and each blob's (offset, length).
type Written<'py> = (Bound<'py, PyBytes>, Vec<(u64, u64)>);

fn blob_tuple(b: BlobMetadata) -> BlobTuple {
    (
        b.blob_type,
        b.fields,
        b.snapshot_id,
        b.sequence_number,
        b.offset,
        b.length,
        b.compression_codec,
        b.properties,
    )
}

fn array_export(array: ArrayRef, nullable: bool) -> ArrowArrayExport {
    let field = Arc::new(Field::new("", array.data_type().clone(), nullable));
    export(array, field)
}

/// The chunks of an Arrow array or chunked array (`__arrow_c_array__` or `__arrow_c_stream__`).
fn import_chunks(obj: &Bound<'_, PyAny>) -> PyResult<Vec<ArrayRef>> {
    if obj.hasattr("__arrow_c_array__")? {
        Ok(vec![import_array(obj)?.array])
    } else if obj.hasattr("__arrow_c_stream__")? {
        Ok(import_stream(obj)?.1)
    } else {
        Err(invalid(format!(
            "expected an Arrow array or chunked array, got {}",
            obj.get_type().name()?
        )))
    }
}

/// Footer of a whole Puffin file: (blobs, file properties).
#[pyfunction]
fn puffin_read_metadata(
    py: Python<'_>,
    data: PyBackedBytes,
    location: &str,
) -> PyResult<(Vec<BlobTuple>, Properties)> {
    let metadata = py
        .detach(|| puffin::read_file_metadata(&data, location))
        .py()?;
    Ok((
        metadata.blobs.into_iter().map(blob_tuple).collect(),
        metadata.properties,
    ))
}

/// One blob's bytes, decompressed; `data` is the whole file.
#[pyfunction]
#[pyo3(signature = (data, blob_type, offset, length, compression_codec, location))]
fn puffin_read_blob<'py>(
    py: Python<'py>,
    data: PyBackedBytes,
    blob_type: String,
    offset: u64,
    length: u64,
    compression_codec: Option<String>,
    location: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let blob = BlobMetadata {
        blob_type,
        fields: Vec::new(),
        snapshot_id: -1,
        sequence_number: -1,
        offset,
        length,
        compression_codec,
        properties: Vec::new(),
    };
    let bytes = py
        .detach(|| puffin::read_blob(&data, &blob, location))
        .py()?;
    Ok(PyBytes::new(py, &bytes))
}

/// A whole Puffin file: its bytes and each blob's (offset, length).
#[pyfunction]
#[pyo3(signature = (blobs, properties, compress_footer = false))]
fn puffin_write<'py>(
    py: Python<'py>,
    blobs: Vec<BlobInputTuple>,
    properties: Properties,
    compress_footer: bool,
) -> PyResult<Written<'py>> {
    let inputs = blobs
        .iter()
        .map(
            |(blob_type, fields, snapshot_id, sequence_number, data, codec, props)| {
                Ok(BlobInput {
                    blob_type: blob_type.clone(),
                    fields: fields.clone(),
                    snapshot_id: *snapshot_id,
                    sequence_number: *sequence_number,
                    data: data.as_ref(),
                    codec: CompressionCodec::from_name(codec.as_deref())?,
                    properties: props.clone(),
                })
            },
        )
        .collect::<Result<Vec<_>, frazil_values::Error>>()
        .py()?;
    let (bytes, metadata) = py
        .detach(|| puffin::write_puffin(&inputs, &properties, compress_footer))
        .py()?;
    let ranges = metadata
        .blobs
        .iter()
        .map(|b| (b.offset, b.length))
        .collect();
    Ok((PyBytes::new(py, &bytes), ranges))
}

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
    let mut columns = Vec::with_capacity(chunks.len());
    for chunk in &chunks {
        let s = chunk
            .as_struct_opt()
            .ok_or_else(|| invalid("position delete rows must be a table of structs"))?;
        let column = |name: &str| {
            s.column_by_name(name)
                .cloned()
                .ok_or_else(|| invalid(format!("position delete rows lack a {name:?} column")))
        };
        columns.push((column("file_path")?, column("pos")?));
    }
    let pairs: Vec<(&dyn Array, &dyn Array)> = columns
        .iter()
        .map(|(f, p)| (f.as_ref(), p.as_ref()))
        .collect();
    let groups = py
        .detach(|| apply::group_position_deletes(&pairs, data_file.as_deref()))
        .py()?;
    Ok(groups
        .into_iter()
        .map(|(path, inner)| (path, PyDeletionVector { inner }))
        .collect())
}

/// A set of deleted row positions of one data file (`frazil.deletes.DeletionVector` wraps it).
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
            .detach(|| {
                let mut b = PositionBitmap::new();
                for chunk in &chunks {
                    b.extend(&apply::positions_of(chunk.as_ref(), "positions")?)?;
                }
                Ok(b)
            })
            .py()?;
        Ok(PyDeletionVector { inner })
    }

    /// From a `deletion-vector-v1` blob at `[offset, offset + length)` of `data`;
    /// `context` names it in errors.
    #[staticmethod]
    #[pyo3(signature = (data, offset = 0, length = None, context = ""))]
    fn deserialize(
        py: Python<'_>,
        data: PyBackedBytes,
        offset: u64,
        length: Option<u64>,
        context: &str,
    ) -> PyResult<Self> {
        let inner = py
            .detach(|| frazil_deletes::read_dv(&data, offset, length, context))
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

    /// Every position, ascending, as an Int64 array.
    fn positions(&self, py: Python<'_>) -> ArrowArrayExport {
        let values = py.detach(|| apply::positions_buffer(&self.inner));
        array_export(Arc::new(Int64Array::new(values, None)), false)
    }

    fn keep_mask(&self, py: Python<'_>, start: u64, length: usize) -> ArrowArrayExport {
        let mask = py.detach(|| apply::keep_mask(&self.inner, start, length));
        array_export(Arc::new(BooleanArray::new(mask, None)), false)
    }

    fn keep_indices(&self, py: Python<'_>, start: u64, length: usize) -> ArrowArrayExport {
        let values = py.detach(|| apply::keep_indices(&self.inner, start, length));
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
    m.add_function(wrap_pyfunction!(puffin_read_metadata, m)?)?;
    m.add_function(wrap_pyfunction!(puffin_read_blob, m)?)?;
    m.add_function(wrap_pyfunction!(puffin_write, m)?)?;
    m.add_function(wrap_pyfunction!(deletes_group_positions, m)?)?;
    Ok(())
}
