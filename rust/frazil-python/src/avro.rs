//! Bindings of `frazil_manifest::avro::data`: Avro data files, bytes in, Arrow record batches
//! out, decoded with the GIL released.

use frazil_manifest::avro::data::write::DataWriter;
use frazil_manifest::avro::data::{data_schema, read_data, DataReadOptions};
use frazil_manifest::avro::Codec;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::PyBytes;

use crate::arrow::{import_batch, RecordBatchExport};
use crate::error::{invalid, IntoPyResult};

/// The file's Arrow schema (an export without batches).
#[pyfunction]
fn avro_data_schema(py: Python<'_>, data: PyBackedBytes) -> PyResult<RecordBatchExport> {
    let schema = py.detach(|| data_schema(&data)).py()?;
    Ok(RecordBatchExport {
        schema,
        batches: Vec::new(),
    })
}

/// (position of each batch's first row, the batches); see `DataReadOptions`.
#[pyfunction]
#[pyo3(signature = (data, columns = None, split = None, batch_rows = 0, max_records = None))]
fn avro_data_read(
    py: Python<'_>,
    data: PyBackedBytes,
    columns: Option<Vec<usize>>,
    split: Option<(u64, u64)>,
    batch_rows: usize,
    max_records: Option<u64>,
) -> PyResult<(Vec<u64>, RecordBatchExport)> {
    let options = DataReadOptions {
        columns,
        split,
        batch_rows,
        max_records,
    };
    let (schema, batches) = py.detach(|| read_data(&data, &options)).py()?;
    let firsts = batches.iter().map(|b| b.first_row).collect();
    let batches = batches.into_iter().map(|b| b.batch).collect();
    Ok((firsts, RecordBatchExport { schema, batches }))
}

/// An Avro data file being written: `template` (a record batch, possibly empty) gives the
/// table's Arrow schema with field ids; `codec` is `avro.codec`.
#[pyclass(module = "frazil._native")]
pub struct AvroDataWriter {
    writer: Option<DataWriter>,
}

#[pymethods]
impl AvroDataWriter {
    #[new]
    fn new(template: &Bound<'_, PyAny>, codec: &str) -> PyResult<Self> {
        let batch = import_batch(template)?;
        let fields = batch
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        let codec = Codec::parse(codec).py()?;
        Ok(AvroDataWriter {
            writer: Some(DataWriter::new(fields, codec).py()?),
        })
    }

    fn write(&mut self, py: Python<'_>, batch: &Bound<'_, PyAny>) -> PyResult<()> {
        let batch = import_batch(batch)?;
        let writer = self
            .writer
            .as_mut()
            .ok_or_else(|| invalid("the writer is finished"))?;
        py.detach(|| writer.write(&batch)).py()
    }

    /// The file's bytes completed since the last call.
    fn take_written<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let writer = self
            .writer
            .as_mut()
            .ok_or_else(|| invalid("the writer is finished"))?;
        Ok(PyBytes::new(py, &writer.take_written()))
    }

    /// The rest of the file.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let writer = self
            .writer
            .take()
            .ok_or_else(|| invalid("the writer is finished"))?;
        let rest = py.detach(|| writer.finish()).py()?;
        Ok(PyBytes::new(py, &rest))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<AvroDataWriter>()?;
    m.add_function(wrap_pyfunction!(avro_data_schema, m)?)?;
    m.add_function(wrap_pyfunction!(avro_data_read, m)?)?;
    Ok(())
}
