//! Bindings of `frazil_manifest`: manifest lists and manifests, bytes in, Arrow record batches
//! out, decoded with the GIL released (many manifests on several threads).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::StructArray;
use frazil_manifest::avro::Codec;
use frazil_manifest::manifest::COLUMN_STATS;
use frazil_manifest::{ManifestFile, Promised, ReadOptions, WriteOptions};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::arrow::{
    array_export, export_batch, import_stream, ArrowArrayExport, RecordBatchExport,
};
use crate::error::{invalid, IntoPyResult};

/// `location`: the table location of a v4 table, which its paths are read against.
#[pyfunction]
#[pyo3(signature = (data, location = None))]
fn manifest_read_list(
    py: Python<'_>,
    data: PyBackedBytes,
    location: Option<String>,
) -> PyResult<RecordBatchExport> {
    let batch = py
        .detach(|| match &location {
            Some(l) => frazil_manifest::manifest_list::read_manifest_list_at(&data, l),
            None => frazil_manifest::read_manifest_list(&data),
        })
        .py()?;
    Ok(export_batch(batch))
}

/// A manifest's entry in its manifest list, as Python passes it: (added_snapshot_id,
/// sequence_number, first_row_id) for inheritance alone, or those followed by manifest_length,
/// added/existing/deleted_files_count and added/existing/deleted_rows_count, which the read
/// then holds the file to (`frazil_manifest::Promised`).
#[derive(FromPyObject)]
pub(crate) enum ListEntry {
    Promised((L, L, L, L, L, L, L, L, L, L)),
    Inherit((L, L, L)),
}

/// A long the row may leave null.
type L = Option<i64>;

impl ListEntry {
    pub(crate) fn manifest_file(self) -> ManifestFile {
        match self {
            ListEntry::Inherit((added_snapshot_id, sequence_number, first_row_id)) => {
                ManifestFile {
                    added_snapshot_id,
                    sequence_number,
                    first_row_id,
                    promised: Promised::default(),
                }
            }
            ListEntry::Promised((a, s, f, length, af, ef, df, ar, er, dr)) => ManifestFile {
                added_snapshot_id: a,
                sequence_number: s,
                first_row_id: f,
                promised: Promised {
                    length,
                    added_files: af,
                    existing_files: ef,
                    deleted_files: df,
                    added_rows: ar,
                    existing_rows: er,
                    deleted_rows: dr,
                },
            },
        }
    }
}

pub(crate) type Inherit = Option<ListEntry>;

fn options(
    inherit: Inherit,
    columns: Option<Vec<String>>,
    location: Option<&Arc<str>>,
) -> ReadOptions {
    ReadOptions {
        manifest_file: inherit.map(ListEntry::manifest_file),
        columns,
        table_location: location.cloned(),
        ..Default::default()
    }
}

/// `inherit` is (added_snapshot_id, sequence_number, first_row_id) of the manifest's entry in
/// its manifest list; `location` the table location relative v4 paths resolve against.
#[pyfunction]
#[pyo3(signature = (data, inherit = None, columns = None, location = None))]
fn manifest_read(
    py: Python<'_>,
    data: PyBackedBytes,
    inherit: Inherit,
    columns: Option<Vec<String>>,
    location: Option<String>,
) -> PyResult<RecordBatchExport> {
    let location: Option<Arc<str>> = location.map(Arc::from);
    let options = options(inherit, columns, location.as_ref());
    let batch = py
        .detach(|| frazil_manifest::read_manifest(&data, &options))
        .py()?;
    Ok(export_batch(batch))
}

/// Many manifests at once, on up to `threads` threads; returns one export per manifest or the
/// first error, naming the manifest that failed by its path in `paths` (its index without).
#[pyfunction]
#[pyo3(signature = (datas, inherits, columns = None, threads = None, location = None, paths = None))]
fn manifest_read_many(
    py: Python<'_>,
    datas: Vec<PyBackedBytes>,
    inherits: Vec<Inherit>,
    columns: Option<Vec<String>>,
    threads: Option<usize>,
    location: Option<String>,
    paths: Option<Vec<Option<String>>>,
) -> PyResult<Vec<RecordBatchExport>> {
    let location: Option<Arc<str>> = location.map(Arc::from);
    let paths = paths
        .unwrap_or_default()
        .into_iter()
        .map(|p| p.map(Arc::from));
    let jobs: Vec<(&[u8], ReadOptions)> = datas
        .iter()
        .zip(inherits.into_iter().chain(std::iter::repeat_with(|| None)))
        .zip(paths.chain(std::iter::repeat(None)))
        .map(|((d, i), path)| {
            let options = ReadOptions {
                path,
                ..options(i, columns.clone(), location.as_ref())
            };
            (d.as_ref(), options)
        })
        .collect();
    let batches = py
        .detach(|| frazil_manifest::read_manifests(&jobs, threads))
        .py()?;
    Ok(batches.into_iter().map(export_batch).collect())
}

/// Rows of a table (anything with `__arrow_c_stream__`) as struct chunks.
fn import_rows(obj: &Bound<'_, PyAny>) -> PyResult<Vec<StructArray>> {
    let (_, chunks) = import_stream(obj)?;
    chunks
        .iter()
        .map(|c| {
            c.as_struct_opt()
                .cloned()
                .ok_or_else(|| invalid("expected a table (a stream of record batches)"))
        })
        .collect()
}

fn write_options(
    format_version: u8,
    metadata: Vec<(String, String)>,
    codec: &str,
    location: Option<String>,
) -> PyResult<WriteOptions> {
    Ok(WriteOptions {
        format_version,
        codec: Codec::parse(codec).py()?,
        metadata,
        table_location: location,
    })
}

/// Whether `path` starts with a URI scheme (`frazil_manifest::paths::has_scheme`).
#[pyfunction]
fn path_has_scheme(path: &str) -> bool {
    frazil_manifest::paths::has_scheme(path)
}

/// Spec "Path Resolution" of one path (`frazil_manifest::paths::resolve`).
#[pyfunction]
fn path_resolve(path: &str, location: &str) -> PyResult<String> {
    frazil_manifest::paths::resolve(path, location).py()
}

/// Spec "Path Relativization" of one path (`frazil_manifest::paths::relativize`).
#[pyfunction]
fn path_relativize(path: &str, location: &str) -> String {
    frazil_manifest::paths::relativize(path, location)
}

#[pyfunction]
#[pyo3(signature = (entries, format_version, metadata, codec = "deflate", location = None))]
fn manifest_write<'py>(
    py: Python<'py>,
    entries: &Bound<'py, PyAny>,
    format_version: u8,
    metadata: Vec<(String, String)>,
    codec: &str,
    location: Option<String>,
) -> PyResult<Bound<'py, PyBytes>> {
    let chunks = import_rows(entries)?;
    let options = write_options(format_version, metadata, codec, location)?;
    let data = py
        .detach(|| frazil_manifest::write_manifest(&chunks, &options))
        .py()?;
    Ok(PyBytes::new(py, &data))
}

#[pyfunction]
#[pyo3(signature = (manifests, format_version, metadata, codec = "deflate", location = None))]
fn manifest_write_list<'py>(
    py: Python<'py>,
    manifests: &Bound<'py, PyAny>,
    format_version: u8,
    metadata: Vec<(String, String)>,
    codec: &str,
    location: Option<String>,
) -> PyResult<Bound<'py, PyBytes>> {
    let chunks = import_rows(manifests)?;
    let options = write_options(format_version, metadata, codec, location)?;
    let data = py
        .detach(|| frazil_manifest::write_manifest_list(&chunks, &options))
        .py()?;
    Ok(PyBytes::new(py, &data))
}

/// The manifest list fields the entries determine, as a dict (one per manifest).
#[pyfunction]
fn manifest_summarize<'py>(
    py: Python<'py>,
    entries: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let chunks = import_rows(entries)?;
    let s = py
        .detach(|| frazil_manifest::summary::summarize(&chunks))
        .py()?;
    let d = PyDict::new(py);
    d.set_item("added_files_count", s.added_files_count)?;
    d.set_item("existing_files_count", s.existing_files_count)?;
    d.set_item("deleted_files_count", s.deleted_files_count)?;
    d.set_item("added_rows_count", s.added_rows_count)?;
    d.set_item("existing_rows_count", s.existing_rows_count)?;
    d.set_item("deleted_rows_count", s.deleted_rows_count)?;
    d.set_item("min_sequence_number", s.min_sequence_number)?;
    let parts = PyList::empty(py);
    for p in &s.partitions {
        let f = PyDict::new(py);
        f.set_item("contains_null", p.contains_null)?;
        f.set_item("contains_nan", p.contains_nan)?;
        f.set_item(
            "lower_bound",
            p.lower_bound.as_deref().map(|b| PyBytes::new(py, b)),
        )?;
        f.set_item(
            "upper_bound",
            p.upper_bound.as_deref().map(|b| PyBytes::new(py, b)),
        )?;
        parts.append(f)?;
    }
    d.set_item("partitions", parts)?;
    Ok(d)
}

/// An empty array of the `manifest_entry` struct type (the manifest crate's one definition).
#[pyfunction]
fn manifest_entry_type() -> PyResult<ArrowArrayExport> {
    let entry = frazil_manifest::manifest::manifest_entry_type().py()?;
    Ok(array_export(arrow_array::new_empty_array(&entry), true))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The `data_file` fields holding column stats: one list, the manifest crate's.
    m.add("COLUMN_STATS", COLUMN_STATS.to_vec())?;
    m.add_class::<RecordBatchExport>()?;
    m.add_function(wrap_pyfunction!(manifest_entry_type, m)?)?;
    m.add_function(wrap_pyfunction!(manifest_read_list, m)?)?;
    m.add_function(wrap_pyfunction!(manifest_read, m)?)?;
    m.add_function(wrap_pyfunction!(manifest_read_many, m)?)?;
    m.add_function(wrap_pyfunction!(manifest_write, m)?)?;
    m.add_function(wrap_pyfunction!(manifest_write_list, m)?)?;
    m.add_function(wrap_pyfunction!(manifest_summarize, m)?)?;
    m.add_function(wrap_pyfunction!(path_has_scheme, m)?)?;
    m.add_function(wrap_pyfunction!(path_resolve, m)?)?;
    m.add_function(wrap_pyfunction!(path_relativize, m)?)?;
    Ok(())
}
