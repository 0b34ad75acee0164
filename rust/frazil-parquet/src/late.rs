//! Late materialization: a row group's filter columns are decoded first, the row filter is
//! evaluated on them, and the other columns are decoded for the rows it keeps only (Python
//! twin: `LateFilter` in `frazil.table.scan.filter`). The filter's mask never leaves Rust:
//! [`Footer::filter_rows`] decodes the filter's columns and evaluates it, [`Footer::decode_kept`]
//! decodes the other columns for the kept rows (their bytes are read only if a row is kept).
//!
//! arrow-rs walks the selection of the other columns as a bit mask where the kept rows are
//! scattered (each page is decoded, then filtered) and as runs to skip where they are not
//! (pages without a kept row are not decompressed).

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch};
use arrow_buffer::{BooleanBuffer, MutableBuffer};
use frazil_scan::RowFilter;
use frazil_values::{Error, Result};
use parquet::arrow::arrow_reader::{RowSelection, RowSelectionPolicy};

use crate::read::{arrow_error, file_order, Footer, Ranges, Selected};

/// How the other columns' kept rows are walked: as arrow-rs chooses (`Auto`), or always as a
/// bit mask or always as runs (for tests that want both walks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walk {
    Auto,
    Mask,
    Runs,
}

impl Walk {
    /// The walk named `name`: "auto", "mask" or "runs".
    pub fn named(name: &str) -> Result<Walk> {
        match name {
            "auto" => Ok(Walk::Auto),
            "mask" => Ok(Walk::Mask),
            "runs" => Ok(Walk::Runs),
            other => Err(Error::invalid(format!("unknown walk {other:?}"))),
        }
    }

    fn policy(self) -> RowSelectionPolicy {
        match self {
            Walk::Auto => RowSelectionPolicy::default(),
            Walk::Mask => RowSelectionPolicy::Mask,
            Walk::Runs => RowSelectionPolicy::Selectors,
        }
    }
}

/// A row filter to apply while decoding: `filter`, whose `field_ids()` entries are held by the
/// top-level columns `inputs` (one per entry, each decoding to the filter's input type).
pub struct Late<'a> {
    pub filter: &'a RowFilter,
    pub inputs: &'a [usize],
}

/// The rows of a row group a [`Late`] filter keeps, after its columns were decoded
/// ([`Footer::filter_rows`]): those columns' kept rows, and which rows the other columns are
/// to be decoded for ([`Footer::decode_kept`]).
#[derive(Debug)]
pub struct Kept {
    rg: usize,
    /// every column read, sorted
    columns: Vec<usize>,
    /// the filter's columns (sorted) and their kept rows
    filter_columns: Vec<usize>,
    filtered: Vec<ArrayRef>,
    /// the other columns (sorted), to be decoded for the rows `selection` selects
    rest: Vec<usize>,
    selection: Option<RowSelection>,
    rows: usize,
}

impl Kept {
    /// The number of rows the filter keeps.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Every column read, sorted.
    pub fn columns(&self) -> &[usize] {
        &self.columns
    }

    /// The columns still to decode (read their bytes for [`Footer::decode_kept`]).
    pub fn rest(&self) -> &[usize] {
        &self.rest
    }
}

impl Footer {
    /// The rows of row group `rg` that `late.filter` holds for, among those `keep` keeps
    /// (see [`Self::decode`]): the filter's columns are decoded (from `ranges`, which need
    /// hold only theirs) and the filter evaluated; `columns`: every column the read wants,
    /// the filter's among them.
    pub fn filter_rows(
        &self,
        rg: usize,
        columns: &[usize],
        ranges: &Ranges,
        threads: usize,
        keep: Option<&BooleanArray>,
        late: &Late<'_>,
    ) -> Result<Kept> {
        let rows = self.row_count(rg)?;
        if late.inputs.len() != late.filter.field_ids().len() {
            return Err(Error::invalid(format!(
                "the row filter reads {} columns, {} given",
                late.filter.field_ids().len(),
                late.inputs.len()
            )));
        }
        let columns = file_order(columns);
        let filter_columns = file_order(late.inputs);
        if let Some(c) = filter_columns
            .iter()
            .find(|c| columns.binary_search(c).is_err())
        {
            return Err(Error::invalid(format!(
                "the row filter reads column {c}, which is not among the columns read"
            )));
        }
        let rest: Vec<usize> = columns
            .iter()
            .copied()
            .filter(|c| filter_columns.binary_search(c).is_err())
            .collect();
        let mut kept = Kept {
            rg,
            columns,
            filter_columns,
            filtered: Vec::new(),
            rest,
            selection: None,
            rows: 0,
        };
        // the filter's columns, every row `keep` keeps, in one batch
        let first = self.decode(rg, &kept.filter_columns, ranges, rows.max(1), threads, keep)?;
        let Some(head) = first.into_iter().next() else {
            return Ok(kept);
        };
        let n = head.num_rows();
        let inputs: Vec<ArrayRef> = late
            .inputs
            .iter()
            .map(|c| {
                let i = kept.filter_columns.binary_search(c).unwrap_or(0);
                Arc::clone(head.column(i))
            })
            .collect();
        let mask = late.filter.eval(&inputs, n)?;
        kept.rows = mask.count_set_bits();
        if kept.rows == 0 {
            return Ok(kept);
        }
        kept.filtered = if kept.rows == n {
            head.columns().to_vec()
        } else {
            let predicate = BooleanArray::new(mask.clone(), None);
            head.columns()
                .iter()
                .map(|a| arrow_select::filter::filter(a.as_ref(), &predicate))
                .collect::<std::result::Result<_, _>>()
                .map_err(arrow_error)?
        };
        if !kept.rest.is_empty() {
            let bits = match keep {
                Some(k) => spread(k.values(), &mask),
                None => mask,
            };
            kept.selection = Some(RowSelection::from_filters(&[BooleanArray::new(bits, None)]));
        }
        Ok(kept)
    }

    /// `kept`'s rows, every column read, in batches of at most `batch_size` rows, columns in
    /// file order: the other columns decoded (from `ranges`, which need hold only theirs) for
    /// the kept rows only, walked as `walk` says.
    pub fn decode_kept(
        &self,
        kept: &Kept,
        ranges: &Ranges,
        batch_size: usize,
        threads: usize,
        walk: Walk,
    ) -> Result<Vec<RecordBatch>> {
        if kept.rows == 0 {
            return Ok(Vec::new());
        }
        let others = match &kept.selection {
            Some(selection) => {
                let selected = Selected {
                    rows: kept.rows,
                    selection: selection.clone(),
                    policy: walk.policy(),
                };
                let rg = kept.rg;
                self.decode_selected(rg, &kept.rest, ranges, batch_size, threads, Some(&selected))?
            }
            None => Vec::new(),
        };
        let schema = self.projected_schema(&kept.columns)?;
        let step = batch_size.max(1);
        let mut out = Vec::with_capacity(kept.rows.div_ceil(step));
        for (b, offset) in (0..kept.rows).step_by(step).enumerate() {
            let len = step.min(kept.rows - offset);
            let arrays = kept
                .columns
                .iter()
                .map(|c| match kept.filter_columns.binary_search(c) {
                    Ok(i) => Ok(kept.filtered[i].slice(offset, len)),
                    Err(_) => {
                        let batch = others.get(b).filter(|x| x.num_rows() == len);
                        let i = kept.rest.binary_search(c).unwrap_or(0);
                        batch.map(|x| Arc::clone(x.column(i))).ok_or_else(|| {
                            Error::decode(
                                "the other columns decoded fewer rows than the filter kept",
                            )
                        })
                    }
                })
                .collect::<Result<Vec<ArrayRef>>>()?;
            out.push(RecordBatch::try_new(Arc::clone(&schema), arrays).map_err(arrow_error)?);
        }
        Ok(out)
    }
}

/// Per row of a row group: kept by `keep` and by `mask`, whose flags are for the rows `keep`
/// keeps, in order.
fn spread(keep: &BooleanBuffer, mask: &BooleanBuffer) -> BooleanBuffer {
    let mut bits = MutableBuffer::from_len_zeroed(keep.len().div_ceil(8));
    let out = bits.as_slice_mut();
    let mut flags = mask.iter();
    for i in keep.set_indices() {
        if flags.next().unwrap_or(false) {
            out[i / 8] |= 1 << (i % 8);
        }
    }
    BooleanBuffer::new(bits.into(), 0, keep.len())
}
