//! Bindings of `frazil_parquet`: a Parquet file's footer from its tail bytes, the byte ranges
//! of the column chunks a read needs, and their decoding into Arrow record batches with the GIL
//! released (the twin of `frazil/table/scan/formats.py`'s `NativeParquet`).

use std::sync::Arc;

use bytes::Bytes;
use frazil_parquet::{footer_length, Footer, Ranges};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;

use arrow_array::BooleanArray;
use arrow_schema::{DataType, Field};

use crate::arrow::{export, import_keep_mask, import_schema, ArrowArrayExport, RecordBatchExport};
use crate::error::IntoPyResult;
use crate::row_filter::PyRowFilter;

/// A parsed Parquet footer.
#[pyclass(frozen, module = "frazil._native")]
pub struct ParquetFooter {
    inner: Footer,
}

#[pymethods]
impl ParquetFooter {
    /// The footer of a file of `file_length` bytes from its last bytes; `want`: the Arrow
    /// schema (`__arrow_c_schema__`) to decode its columns to where arrow-rs can.
    #[new]
    #[pyo3(signature = (tail, file_length, want = None))]
    fn new(
        py: Python<'_>,
        tail: PyBackedBytes,
        file_length: u64,
        want: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let want = want.map(|w| import_schema(&w)).transpose()?;
        let inner = py.detach(|| Footer::parse(&tail, file_length, want)).py()?;
        Ok(Self { inner })
    }

    /// How many bytes at the end of the file hold the footer (from at least its last 8).
    #[staticmethod]
    fn footer_length(tail: &[u8]) -> PyResult<usize> {
        footer_length(tail).py()
    }

    /// The Arrow schema the file's columns decode to (`__arrow_c_schema__`).
    fn schema(&self) -> RecordBatchExport {
        RecordBatchExport {
            schema: Arc::clone(self.inner.schema()),
            batches: Vec::new(),
        }
    }

    #[getter]
    fn num_row_groups(&self) -> usize {
        self.inner.num_row_groups()
    }

    /// (offset, length) of the page index bytes `page_keep` reads for `filter`'s columns in
    /// row group `row_group` (none where the file has no page index for them).
    fn page_index_ranges(
        &self,
        row_group: usize,
        filter: &PyRowFilter,
    ) -> PyResult<Vec<(u64, u64)>> {
        self.inner
            .page_index_ranges(row_group, &filter.expr.referenced_field_ids())
            .py()
    }

    /// Per row of row group `row_group`, whether `filter` may hold for it by its page bounds
    /// (from `parts`, the bytes of `page_index_ranges`); None where no page is skipped.
    fn page_keep(
        &self,
        py: Python<'_>,
        row_group: usize,
        filter: &PyRowFilter,
        parts: Vec<(u64, PyBackedBytes)>,
    ) -> PyResult<Option<ArrowArrayExport>> {
        let parts = parts
            .into_iter()
            .map(|(o, b)| (o, Bytes::from_owner(b)))
            .collect();
        let ranges = Ranges::new(self.inner.file_length(), parts);
        let keep = py
            .detach(|| {
                self.inner
                    .page_keep(row_group, &filter.expr, &filter.schema, &ranges)
            })
            .py()?;
        Ok(keep.map(|k| {
            export(
                Arc::new(BooleanArray::new(k, None)),
                Arc::new(Field::new("", DataType::Boolean, false)),
            )
        }))
    }

    /// (offset, length) of the bytes to read for `columns` of row group `row_group`.
    fn byte_ranges(&self, row_group: usize, columns: Vec<usize>) -> PyResult<Vec<(u64, u64)>> {
        self.inner.byte_ranges(row_group, &columns).py()
    }

    /// The row group's rows, `columns` only, from `parts` ((offset, bytes) of the ranges);
    /// `keep`: a boolean array, one flag per row of the row group, the rows to decode.
    #[pyo3(signature = (row_group, columns, parts, batch_size, threads, keep = None))]
    #[allow(clippy::too_many_arguments)]
    fn decode(
        &self,
        py: Python<'_>,
        row_group: usize,
        columns: Vec<usize>,
        parts: Vec<(u64, PyBackedBytes)>,
        batch_size: usize,
        threads: usize,
        keep: Option<Bound<'_, PyAny>>,
    ) -> PyResult<RecordBatchExport> {
        let keep = keep.map(|k| import_keep_mask(&k)).transpose()?;
        let parts = parts
            .into_iter()
            .map(|(o, b)| (o, Bytes::from_owner(b)))
            .collect();
        let ranges = Ranges::new(self.inner.file_length(), parts);
        let batches = py
            .detach(|| {
                self.inner.decode(
                    row_group,
                    &columns,
                    &ranges,
                    batch_size,
                    threads,
                    keep.as_ref(),
                )
            })
            .py()?;
        let mut cols = columns.clone();
        cols.sort_unstable();
        cols.dedup();
        let schema = match batches.first() {
            Some(b) => b.schema(),
            None => Arc::new(
                self.inner
                    .schema()
                    .project(&cols)
                    .map_err(|e| crate::error::invalid(format!("Parquet columns: {e}")))?,
            ),
        };
        Ok(RecordBatchExport { schema, batches })
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ParquetFooter>()
}
