//! Bindings of `frazil_parquet`: a Parquet file's footer from its tail bytes, the byte ranges
//! of the column chunks a read needs, and their decoding into Arrow record batches with the GIL
//! released (the twin of `frazil/table/scan/formats.py`'s `NativeParquet`).

use std::sync::Arc;

use bytes::Bytes;
use frazil_parquet::{footer_length, Footer, Kept, Late, Ranges, Walk};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;

use arrow_array::{Array, RecordBatch, UInt8Array};

use crate::arrow::{
    import_array, import_keep_mask, import_schema, mask_export, ArrowArrayExport, RecordBatchExport,
};
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
        parts: Vec<(u64, Bound<'_, PyAny>)>,
    ) -> PyResult<Option<ArrowArrayExport>> {
        let ranges = ranges_of(self.inner.file_length(), parts)?;
        let keep = py
            .detach(|| {
                self.inner
                    .page_keep(row_group, &filter.expr, &filter.schema, &ranges)
            })
            .py()?;
        Ok(keep.map(mask_export))
    }

    /// (kept, rows kept, columns left): `Footer::filter_rows`; `parts`: the bytes of the
    /// filter's columns (`inputs`), `columns`: every column the read wants.
    #[allow(clippy::too_many_arguments)]
    fn filter_rows(
        &self,
        py: Python<'_>,
        row_group: usize,
        columns: Vec<usize>,
        parts: Vec<(u64, Bound<'_, PyAny>)>,
        threads: usize,
        keep: Option<Bound<'_, PyAny>>,
        filter: &PyRowFilter,
        inputs: Vec<usize>,
    ) -> PyResult<(KeptRows, usize, Vec<usize>)> {
        let keep = keep.map(|k| import_keep_mask(&k)).transpose()?;
        let ranges = ranges_of(self.inner.file_length(), parts)?;
        let late = Late {
            filter: &filter.inner,
            inputs: &inputs,
        };
        let kept = py
            .detach(|| {
                self.inner
                    .filter_rows(row_group, &columns, &ranges, threads, keep.as_ref(), &late)
            })
            .py()?;
        let (rows, rest) = (kept.rows(), kept.rest().to_vec());
        Ok((KeptRows { inner: kept }, rows, rest))
    }

    /// `Footer::decode_kept`; `parts`: the bytes of the columns left, `walk`: a `Walk` name.
    fn decode_kept(
        &self,
        py: Python<'_>,
        kept: &KeptRows,
        parts: Vec<(u64, Bound<'_, PyAny>)>,
        batch_size: usize,
        threads: usize,
        walk: &str,
    ) -> PyResult<RecordBatchExport> {
        let walk = Walk::named(walk).py()?;
        let ranges = ranges_of(self.inner.file_length(), parts)?;
        let batches = py
            .detach(|| {
                self.inner
                    .decode_kept(&kept.inner, &ranges, batch_size, threads, walk)
            })
            .py()?;
        self.export(kept.inner.columns(), batches)
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
        parts: Vec<(u64, Bound<'_, PyAny>)>,
        batch_size: usize,
        threads: usize,
        keep: Option<Bound<'_, PyAny>>,
    ) -> PyResult<RecordBatchExport> {
        let keep = keep.map(|k| import_keep_mask(&k)).transpose()?;
        let ranges = ranges_of(self.inner.file_length(), parts)?;
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
        self.export(&columns, batches)
    }
}

/// The rows a row filter keeps in a row group, native until `decode_kept`.
#[pyclass(frozen, module = "frazil._native", name = "KeptRows")]
pub struct KeptRows {
    inner: Kept,
}

impl ParquetFooter {
    /// `batches` of `columns` for Python (their schema even when there is no batch).
    fn export(&self, columns: &[usize], batches: Vec<RecordBatch>) -> PyResult<RecordBatchExport> {
        let schema = match batches.first() {
            Some(b) => b.schema(),
            None => self.inner.projected_schema(columns).py()?,
        };
        Ok(RecordBatchExport { schema, batches })
    }
}

/// The bytes Python read (uint8 Arrow arrays, shared without a copy), by file offset.
fn ranges_of(file_length: u64, parts: Vec<(u64, Bound<'_, PyAny>)>) -> PyResult<Ranges> {
    let bytes = |part: &Bound<'_, PyAny>| -> PyResult<Bytes> {
        let array = import_array(part)?.array;
        let values = array.as_any().downcast_ref::<UInt8Array>();
        let values = values.filter(|a| a.null_count() == 0);
        let values = values.ok_or_else(|| crate::error::invalid("file bytes: a uint8 array"))?;
        Ok(Bytes::from_owner(values.values().inner().clone()))
    };
    let parts = parts.into_iter().map(|(o, part)| Ok((o, bytes(&part)?)));
    Ok(Ranges::new(file_length, parts.collect::<PyResult<_>>()?))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<KeptRows>()?;
    m.add_class::<ParquetFooter>()
}
