//! A Parquet file's footer and the decoding of its row groups (see the crate docs).

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch};
use arrow_schema::{DataType, FieldRef, Schema, SchemaRef};
use bytes::{Buf, Bytes};
use frazil_values::{Error, Result};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection,
    RowSelectionPolicy,
};
use parquet::arrow::ProjectionMask;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use parquet::file::reader::{ChunkReader, Length};

const MAGIC: &[u8; 4] = b"PAR1";
const ENCRYPTED_MAGIC: &[u8; 4] = b"PARE";

/// The number of bytes at the end of a file that hold its footer (metadata + the 8-byte tail),
/// from at least its last 8 bytes.
pub fn footer_length(tail: &[u8]) -> Result<usize> {
    let n = tail.len();
    if n < 8 {
        return Err(Error::decode(format!(
            "not a Parquet file: {n} bytes where its tail needs 8"
        )));
    }
    let magic = &tail[n - 4..];
    if magic == ENCRYPTED_MAGIC {
        return Err(Error::unsupported(
            "the file has an encrypted footer (read through the table's decryption)",
        ));
    }
    if magic != MAGIC {
        return Err(Error::decode(
            "not a Parquet file: no PAR1 magic at its end",
        ));
    }
    let mut len = [0u8; 4];
    len.copy_from_slice(&tail[n - 8..n - 4]);
    Ok(u32::from_le_bytes(len) as usize + 8)
}

/// A file's parsed footer: its metadata and the Arrow schema its columns decode to.
#[derive(Debug, Clone)]
pub struct Footer {
    reader: ArrowReaderMetadata,
    schema: SchemaRef,
    file_length: u64,
    /// `reader` with its top-level string columns decoded as dictionaries (built on first
    /// use; None where arrow-rs refuses it): see [`Self::decode_columns`].
    dictionaries: std::sync::OnceLock<Option<ArrowReaderMetadata>>,
}

impl Footer {
    /// The footer of a file of `file_length` bytes from its last bytes (`tail`, at least
    /// [`footer_length`] of them). `want`: the Arrow schema the caller wants the file's columns
    /// in (every top-level column, in file order), used where arrow-rs can decode to it; the
    /// caller compares [`Self::schema`] with it.
    pub fn parse(tail: &[u8], file_length: u64, want: Option<SchemaRef>) -> Result<Self> {
        let need = footer_length(tail)?;
        if need > tail.len() || need as u64 > file_length {
            return Err(Error::decode(format!(
                "Parquet footer of {need} bytes does not fit in the {} bytes given (file of \
                 {file_length} bytes)",
                tail.len()
            )));
        }
        let meta = &tail[tail.len() - need..tail.len() - 8];
        let metadata = ParquetMetaDataReader::decode_metadata(meta)
            .map_err(|e| Error::decode(format!("Parquet footer: {e}")))?;
        let metadata = Arc::new(metadata);
        let plain = ArrowReaderMetadata::try_new(Arc::clone(&metadata), ArrowReaderOptions::new())
            .map_err(|e| Error::decode(format!("Parquet schema: {e}")))?;
        let reader = match &want {
            Some(want) if want != plain.schema() => {
                let hint = hint_schema(plain.schema(), want);
                ArrowReaderMetadata::try_new(
                    Arc::clone(&metadata),
                    ArrowReaderOptions::new().with_schema(hint),
                )
                // a schema arrow-rs will not decode to: its own (the caller then reads otherwise)
                .unwrap_or(plain)
            }
            _ => plain,
        };
        let schema = Arc::clone(reader.schema());
        Ok(Self {
            reader,
            schema,
            file_length,
            dictionaries: std::sync::OnceLock::new(),
        })
    }

    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    pub fn metadata(&self) -> &Arc<ParquetMetaData> {
        self.reader.metadata()
    }

    pub fn file_length(&self) -> u64 {
        self.file_length
    }

    /// The Arrow schema of `columns` (top-level indices), in file order.
    pub fn projected_schema(&self, columns: &[usize]) -> Result<SchemaRef> {
        let columns = file_order(columns);
        Ok(Arc::new(
            self.schema().project(&columns).map_err(arrow_error)?,
        ))
    }

    /// The number of rows of row group `rg`.
    pub(crate) fn row_count(&self, rg: usize) -> Result<usize> {
        self.check_row_group(rg)?;
        usize::try_from(self.metadata().row_group(rg).num_rows())
            .map_err(|_| Error::decode("row group with a negative row count"))
    }

    pub fn num_row_groups(&self) -> usize {
        self.metadata().num_row_groups()
    }

    fn mask(&self, columns: &[usize]) -> Result<ProjectionMask> {
        let n = self.schema().fields().len();
        if let Some(c) = columns.iter().find(|&&c| c >= n) {
            return Err(Error::invalid(format!(
                "column {c} out of range (the file has {n} top-level columns)"
            )));
        }
        Ok(ProjectionMask::roots(
            self.metadata().file_metadata().schema_descr(),
            columns.iter().copied(),
        ))
    }

    pub(crate) fn check_row_group(&self, rg: usize) -> Result<()> {
        if rg >= self.num_row_groups() {
            return Err(Error::invalid(format!(
                "row group {rg} out of range (the file has {})",
                self.num_row_groups()
            )));
        }
        Ok(())
    }

    /// The (offset, length) byte ranges of the column chunks of `columns` (top-level column
    /// indices) in row group `rg`, adjacent ones merged, in file order.
    pub fn byte_ranges(&self, rg: usize, columns: &[usize]) -> Result<Vec<(u64, u64)>> {
        self.check_row_group(rg)?;
        let mask = self.mask(columns)?;
        let group = self.metadata().row_group(rg);
        let mut ranges: Vec<(u64, u64)> = group
            .columns()
            .iter()
            .enumerate()
            .filter(|(i, _)| mask.leaf_included(*i))
            .map(|(_, c)| c.byte_range())
            .collect();
        ranges.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
        for (start, len) in ranges {
            let end = start.checked_add(len).filter(|&e| e <= self.file_length);
            let Some(end) = end else {
                return Err(Error::decode(format!(
                    "column chunk at {start} of {len} bytes is beyond the file ({} bytes)",
                    self.file_length
                )));
            };
            match merged.last_mut() {
                Some((s, l)) if *s + *l >= start => *l = (*l).max(end - *s),
                _ => merged.push((start, len)),
            }
        }
        Ok(merged)
    }

    /// The rows of row group `rg`, columns `columns` (top-level indices, in file order in the
    /// result), from the bytes of [`Self::byte_ranges`], in batches of at most `batch_size`
    /// rows; the columns are decoded on up to `threads` threads. `keep`: one flag per row of
    /// the row group, its rows to decode (the others, deleted rows, are skipped by the decoder
    /// where they run long and filtered out right after decoding where they are scattered).
    pub fn decode(
        &self,
        rg: usize,
        columns: &[usize],
        ranges: &Ranges,
        batch_size: usize,
        threads: usize,
        keep: Option<&BooleanArray>,
    ) -> Result<Vec<RecordBatch>> {
        let rows = self.row_count(rg)?;
        let selection = match keep {
            Some(keep) => {
                if keep.len() != rows || keep.null_count() > 0 {
                    return Err(Error::invalid(format!(
                        "a keep-mask of {} rows ({} null) for a row group of {rows} rows",
                        keep.len(),
                        keep.null_count()
                    )));
                }
                Some(Selected {
                    rows: keep.true_count(),
                    selection: RowSelection::from_filters(std::slice::from_ref(keep)),
                    policy: RowSelectionPolicy::default(),
                })
            }
            None => None,
        };
        self.decode_selected(rg, columns, ranges, batch_size, threads, selection.as_ref())
    }

    /// [`Self::decode`] of the rows `selected` selects (every row without it).
    pub(crate) fn decode_selected(
        &self,
        rg: usize,
        columns: &[usize],
        ranges: &Ranges,
        batch_size: usize,
        threads: usize,
        selected: Option<&Selected>,
    ) -> Result<Vec<RecordBatch>> {
        let all = self.row_count(rg)?;
        let columns = file_order(columns);
        let schema = self.projected_schema(&columns)?;
        let rows = selected.map_or(all, |s| s.rows);
        let step = batch_size.max(1);
        let sizes: Vec<usize> = (0..rows)
            .step_by(step)
            .map(|o| step.min(rows - o))
            .collect();
        if columns.is_empty() {
            return sizes
                .iter()
                .map(|&n| {
                    let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(n));
                    RecordBatch::try_new_with_options(Arc::clone(&schema), Vec::new(), &options)
                        .map_err(arrow_error)
                })
                .collect();
        }
        let threads = threads.clamp(1, columns.len());
        let per = columns.len().div_ceil(threads);
        let parts: Vec<Result<Vec<Vec<ArrayRef>>>> = if threads == 1 {
            vec![self.decode_columns(rg, &columns, ranges, &sizes, selected)]
        } else {
            let sizes = &sizes;
            std::thread::scope(|s| {
                let handles: Vec<_> = columns
                    .chunks(per)
                    .map(|chunk| {
                        s.spawn(move || self.decode_columns(rg, chunk, ranges, sizes, selected))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(Error::decode("Parquet decoding thread panicked"))
                        })
                    })
                    .collect()
            })
        };
        // per column its chunks, one per batch
        let mut by_column: Vec<std::vec::IntoIter<ArrayRef>> = Vec::with_capacity(columns.len());
        for part in parts {
            by_column.extend(part?.into_iter().map(|chunks| chunks.into_iter()));
        }
        sizes
            .iter()
            .map(|_| {
                let arrays: Vec<ArrayRef> = by_column
                    .iter_mut()
                    .map(|chunks| chunks.next())
                    .collect::<Option<_>>()
                    .ok_or_else(|| Error::decode("a column decoded fewer batches than its rows"))?;
                RecordBatch::try_new(Arc::clone(&schema), arrays).map_err(arrow_error)
            })
            .collect()
    }

    /// Each of `columns` decoded in chunks of `sizes` rows (one list of chunks per column),
    /// only the rows `selected` selects where there is one.
    fn decode_columns(
        &self,
        rg: usize,
        columns: &[usize],
        ranges: &Ranges,
        sizes: &[usize],
        selected: Option<&Selected>,
    ) -> Result<Vec<Vec<ArrayRef>>> {
        let step = sizes.first().copied().unwrap_or(1).max(1);
        let total = self.metadata().row_group(rg).num_rows();
        // between 1/32 and 1/2 of the rows selected: see `as_dictionary`
        let few = selected.is_some_and(|s| {
            let rows = s.rows as i64;
            rows.saturating_mul(2) <= total && rows.saturating_mul(32) >= total
        });
        let mut out = Vec::with_capacity(columns.len());
        for &c in columns {
            let dictionary = if few { self.as_dictionary(rg, c) } else { None };
            let mut builder = ParquetRecordBatchReaderBuilder::new_with_metadata(
                ranges.clone(),
                dictionary.unwrap_or(&self.reader).clone(),
            )
            .with_projection(self.mask(&[c])?)
            .with_row_groups(vec![rg])
            .with_batch_size(step);
            if let Some(s) = selected {
                builder = builder
                    .with_row_selection(s.selection.clone())
                    .with_row_selection_policy(s.policy);
            }
            let reader = builder.build().map_err(parquet_error)?;
            let mut chunks = Vec::with_capacity(sizes.len());
            for batch in reader {
                let chunk = batch.map_err(arrow_error)?.column(0).clone();
                chunks.push(match dictionary {
                    Some(_) => undictionary(&chunk)?,
                    None => chunk,
                });
            }
            let got: Vec<usize> = chunks.iter().map(|a| a.len()).collect();
            if got != sizes {
                return Err(Error::decode(format!(
                    "column {} decoded {} rows where its row group has {}",
                    self.schema().field(c).name(),
                    got.iter().sum::<usize>(),
                    sizes.iter().sum::<usize>()
                )));
            }
            out.push(chunks);
        }
        Ok(out)
    }
}

impl Footer {
    /// The reader that decodes column `c` of row group `rg` as a dictionary, where `c` is a
    /// top-level string column whose chunk is dictionary encoded. Under a selection of a
    /// few scattered rows this saves most of a string column's decoding: the selection
    /// filters the keys, and only the kept rows' strings are copied out ([`undictionary`]),
    /// where a plain decode copies every row's string before the filter drops most of them.
    /// Below 1/32 of the rows it costs more than it saves: building the page's dictionary as
    /// an Arrow array (a large one for a column of many distinct values) outweighs copying
    /// the few kept strings, and long runs of unselected rows are skipped anyway.
    fn as_dictionary(&self, rg: usize, c: usize) -> Option<&ArrowReaderMetadata> {
        let field = self.schema().fields().get(c)?;
        if !matches!(field.data_type(), DataType::Utf8 | DataType::LargeUtf8) {
            return None;
        }
        let mask = self.mask(&[c]).ok()?;
        let group = self.metadata().row_group(rg);
        let mut leaves = (0..group.num_columns()).filter(|&i| mask.leaf_included(i));
        let (leaf, more) = (leaves.next()?, leaves.next());
        if more.is_some() || group.column(leaf).dictionary_page_offset().is_none() {
            return None;
        }
        self.dictionaries
            .get_or_init(|| {
                let fields: Vec<FieldRef> = self
                    .schema()
                    .fields()
                    .iter()
                    .map(|f| match f.data_type() {
                        t @ (DataType::Utf8 | DataType::LargeUtf8) => {
                            Arc::new(f.as_ref().clone().with_data_type(DataType::Dictionary(
                                Box::new(DataType::Int32),
                                Box::new(t.clone()),
                            )))
                        }
                        _ => Arc::clone(f),
                    })
                    .collect();
                let hint = Schema::new_with_metadata(fields, self.schema().metadata().clone());
                let options = ArrowReaderOptions::new().with_schema(Arc::new(hint));
                ArrowReaderMetadata::try_new(Arc::clone(self.metadata()), options).ok()
            })
            .as_ref()
    }
}

/// A dictionary-decoded string column as the plain strings it stands for.
fn undictionary(chunk: &ArrayRef) -> Result<ArrayRef> {
    let dict = chunk
        .as_any()
        .downcast_ref::<arrow_array::DictionaryArray<arrow_array::types::Int32Type>>()
        .ok_or_else(|| Error::decode("a string column did not decode to a dictionary"))?;
    arrow_select::take::take(dict.values().as_ref(), dict.keys(), None).map_err(arrow_error)
}

/// `columns` (top-level indices) sorted, each once: the order decoded batches hold them in.
pub(crate) fn file_order(columns: &[usize]) -> Vec<usize> {
    let mut columns = columns.to_vec();
    columns.sort_unstable();
    columns.dedup();
    columns
}

/// The rows of a row group to decode: `rows` of them, as `selection` selects them, which
/// arrow-rs walks as `policy` says (a bit mask where selected rows are scattered, runs to skip
/// where they are not).
#[derive(Debug, Clone)]
pub(crate) struct Selected {
    pub rows: usize,
    pub selection: RowSelection,
    pub policy: RowSelectionPolicy,
}

pub(crate) fn arrow_error(e: arrow_schema::ArrowError) -> Error {
    Error::decode(format!("Parquet data: {e}"))
}

fn parquet_error(e: parquet::errors::ParquetError) -> Error {
    Error::decode(format!("Parquet data: {e}"))
}

/// The schema to ask arrow-rs for: `want`'s, with maps' entries named as arrow-rs names them
/// (`plain`'s), which it insists on (the name does not cross the C data interface anyway).
fn hint_schema(plain: &SchemaRef, want: &SchemaRef) -> SchemaRef {
    if plain.fields().len() != want.fields().len() {
        return Arc::clone(want);
    }
    let fields: Vec<FieldRef> = plain
        .fields()
        .iter()
        .zip(want.fields().iter())
        .map(|(p, w)| {
            Arc::new(
                w.as_ref()
                    .clone()
                    .with_data_type(map_names_of(w.data_type(), p.data_type())),
            )
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, want.metadata().clone()))
}

/// `want` with the names of its maps' entries fields taken from `like` where both have a map.
fn map_names_of(want: &DataType, like: &DataType) -> DataType {
    let field = |w: &FieldRef, l: &FieldRef, name: &str| -> FieldRef {
        Arc::new(
            w.as_ref()
                .clone()
                .with_name(name)
                .with_data_type(map_names_of(w.data_type(), l.data_type())),
        )
    };
    match (want, like) {
        (DataType::Map(w, sorted), DataType::Map(l, _)) => {
            DataType::Map(field(w, l, l.name()), *sorted)
        }
        (DataType::Struct(ws), DataType::Struct(ls)) if ws.len() == ls.len() => DataType::Struct(
            ws.iter()
                .zip(ls.iter())
                .map(|(w, l)| field(w, l, w.name()))
                .collect::<Vec<_>>()
                .into(),
        ),
        (DataType::LargeList(w), DataType::List(l) | DataType::LargeList(l)) => {
            DataType::LargeList(field(w, l, w.name()))
        }
        (DataType::List(w), DataType::List(l) | DataType::LargeList(l)) => {
            DataType::List(field(w, l, w.name()))
        }
        _ => want.clone(),
    }
}

/// The byte ranges of one file a caller read, addressed by file offset: the `ChunkReader` the
/// decoder reads column chunks from. Cloning shares the bytes.
#[derive(Debug, Clone)]
pub struct Ranges {
    file_length: u64,
    parts: Arc<Vec<(u64, Bytes)>>,
}

impl Ranges {
    /// `parts`: (file offset, bytes) pairs, in any order.
    pub fn new(file_length: u64, mut parts: Vec<(u64, Bytes)>) -> Self {
        parts.sort_unstable_by_key(|(o, _)| *o);
        Self {
            file_length,
            parts: Arc::new(parts),
        }
    }

    fn find(&self, start: u64, length: u64) -> parquet::errors::Result<Bytes> {
        let i = self.parts.partition_point(|(o, _)| *o <= start);
        if i > 0 {
            let (o, b) = &self.parts[i - 1];
            let off = (start - o) as usize;
            if (off as u64).saturating_add(length) <= b.len() as u64 {
                return Ok(b.slice(off..off + length as usize));
            }
        }
        Err(parquet::errors::ParquetError::General(format!(
            "bytes {start}..{} were not read",
            start.saturating_add(length)
        )))
    }
}

impl Length for Ranges {
    fn len(&self) -> u64 {
        self.file_length
    }
}

impl ChunkReader for Ranges {
    type T = bytes::buf::Reader<Bytes>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        // to the end of the part holding `start`
        let i = self.parts.partition_point(|(o, _)| *o <= start);
        let rest = match i.checked_sub(1).map(|j| &self.parts[j]) {
            Some((o, b)) if start - o <= b.len() as u64 => b.slice((start - o) as usize..),
            _ => {
                return Err(parquet::errors::ParquetError::General(format!(
                    "byte {start} was not read"
                )))
            }
        };
        Ok(rest.reader())
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        self.find(start, length as u64)
    }
}

#[cfg(test)]
mod tests;
