//! Bindings of `frazil_manifest::avro::data`: Avro data files, bytes in, Arrow record batches
//! out, decoded with the GIL released.

use frazil_manifest::avro::data::{data_schema, read_data, DataReadOptions};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;

use crate::arrow::RecordBatchExport;
use crate::error::IntoPyResult;

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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(avro_data_schema, m)?)?;
    m.add_function(wrap_pyfunction!(avro_data_read, m)?)?;
    Ok(())
}
