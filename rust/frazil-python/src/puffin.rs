//! Bindings of `frazil_deletes::puffin`: Puffin files, bytes in, footer metadata and blob
//! bytes out (the twin of `frazil/manifest/puffin.py`); decoding and encoding run with the GIL released.

use frazil_deletes::puffin::{self, BlobInput, BlobMetadata, CompressionCodec, FileMetadata};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::PyBytes;

use crate::error::IntoPyResult;

type Properties = Vec<(String, String)>;
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

/// One entry of a Puffin footer's `blobs` list (properties as (key, value) pairs in footer
/// order).
#[pyclass(frozen, get_all, module = "frazil._native")]
pub struct PuffinBlobMetadata {
    blob_type: String,
    fields: Vec<i32>,
    snapshot_id: i64,
    sequence_number: i64,
    offset: u64,
    length: u64,
    compression_codec: Option<String>,
    properties: Properties,
}

/// A Puffin footer: its blobs and the file's properties.
#[pyclass(frozen, get_all, module = "frazil._native")]
pub struct PuffinFileMetadata {
    blobs: Vec<Py<PuffinBlobMetadata>>,
    properties: Properties,
}

/// A written Puffin file: its bytes and the footer written into them.
#[pyclass(frozen, get_all, module = "frazil._native")]
pub struct PuffinWritten {
    data: Py<PyBytes>,
    metadata: Py<PuffinFileMetadata>,
}

fn file_metadata(py: Python<'_>, m: FileMetadata) -> PyResult<Py<PuffinFileMetadata>> {
    let blobs = m
        .blobs
        .into_iter()
        .map(|b: BlobMetadata| {
            Py::new(
                py,
                PuffinBlobMetadata {
                    blob_type: b.blob_type,
                    fields: b.fields,
                    snapshot_id: b.snapshot_id,
                    sequence_number: b.sequence_number,
                    offset: b.offset,
                    length: b.length,
                    compression_codec: b.compression_codec,
                    properties: b.properties,
                },
            )
        })
        .collect::<PyResult<_>>()?;
    Py::new(
        py,
        PuffinFileMetadata {
            blobs,
            properties: m.properties,
        },
    )
}

/// The footer of a whole Puffin file.
#[pyfunction]
fn puffin_read_metadata(
    py: Python<'_>,
    data: PyBackedBytes,
    location: &str,
) -> PyResult<Py<PuffinFileMetadata>> {
    let metadata = py
        .detach(|| puffin::read_file_metadata(&data, location))
        .py()?;
    file_metadata(py, metadata)
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
    let blob = BlobMetadata::located(blob_type, offset, length, compression_codec);
    let bytes = py
        .detach(|| puffin::read_blob(&data, &blob, location))
        .py()?;
    Ok(PyBytes::new(py, &bytes))
}

/// A whole Puffin file holding `blobs` in order.
#[pyfunction]
#[pyo3(signature = (blobs, properties, compress_footer = false))]
fn puffin_write(
    py: Python<'_>,
    blobs: Vec<BlobInputTuple>,
    properties: Properties,
    compress_footer: bool,
) -> PyResult<PuffinWritten> {
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
    Ok(PuffinWritten {
        data: PyBytes::new(py, &bytes).unbind(),
        metadata: file_metadata(py, metadata)?,
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PuffinBlobMetadata>()?;
    m.add_class::<PuffinFileMetadata>()?;
    m.add_class::<PuffinWritten>()?;
    m.add_function(wrap_pyfunction!(puffin_read_metadata, m)?)?;
    m.add_function(wrap_pyfunction!(puffin_read_blob, m)?)?;
    m.add_function(wrap_pyfunction!(puffin_write, m)?)?;
    Ok(())
}
