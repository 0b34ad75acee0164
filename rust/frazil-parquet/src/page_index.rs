//! A row group's page index (parquet-format's `ColumnIndex` and `OffsetIndex`, written by
//! parquet-mr/Java by default and by pyarrow on request) as the page bounds the row filter
//! reads ([`frazil_scan::page_filter`]). Only bounds that mean the same as Iceberg's are given:
//! top-level, non-repeated columns whose values are ordered as Iceberg orders them (signed
//! ints, dates, times and timestamps in micro or nanoseconds, unsigned bytes of strings,
//! binaries, fixed and UUIDs, booleans). Floats (NaN), decimals (another byte form) and
//! anything else give no bounds, so nothing is skipped for them.

use arrow_buffer::BooleanBuffer;
use frazil_scan::expr::{Expr, Schema};
use frazil_scan::page_filter::{keep_rows, ColumnPages};
use frazil_values::{Error, Result};
use parquet::basic::{ColumnOrder, ConvertedType, LogicalType, TimeUnit, Type as Physical};
use parquet::file::page_index::column_index::ColumnIndexMetaData;
use parquet::file::page_index::index_reader::{decode_column_index, decode_offset_index};
use parquet::file::reader::ChunkReader;
use parquet::schema::types::ColumnDescriptor;

use crate::read::{Footer, Ranges};

/// Whether a column's page bounds, in the binary single-value form of its physical type, are
/// Iceberg bounds of the column's values.
fn comparable(column: &ColumnDescriptor, order: ColumnOrder) -> bool {
    if column.max_rep_level() != 0 || column.path().parts().len() != 1 {
        return false;
    }
    if matches!(order, ColumnOrder::UNDEFINED | ColumnOrder::UNKNOWN) {
        // statistics from before parquet-format 2.4 compare bytes signed
        return false;
    }
    let converted = column.converted_type();
    match (column.physical_type(), column.logical_type_ref()) {
        (Physical::BOOLEAN, None) => converted == ConvertedType::NONE,
        (Physical::INT32, None) => matches!(
            converted,
            ConvertedType::NONE
                | ConvertedType::DATE
                | ConvertedType::INT_8
                | ConvertedType::INT_16
                | ConvertedType::INT_32
        ),
        (Physical::INT32, Some(LogicalType::Date)) => true,
        (Physical::INT32 | Physical::INT64, Some(LogicalType::Integer(i))) => i.is_signed,
        (Physical::INT64, None) => matches!(
            converted,
            ConvertedType::NONE
                | ConvertedType::INT_64
                | ConvertedType::TIME_MICROS
                | ConvertedType::TIMESTAMP_MICROS
        ),
        (Physical::INT64, Some(LogicalType::Time(t))) => matches!(t.unit, TimeUnit::MICROS),
        (Physical::INT64, Some(LogicalType::Timestamp(t))) => {
            matches!(t.unit, TimeUnit::MICROS | TimeUnit::NANOS)
        }
        (Physical::BYTE_ARRAY, None) => {
            matches!(converted, ConvertedType::NONE | ConvertedType::UTF8)
        }
        (Physical::BYTE_ARRAY, Some(LogicalType::String)) => true,
        (Physical::FIXED_LEN_BYTE_ARRAY, None) => converted == ConvertedType::NONE,
        (Physical::FIXED_LEN_BYTE_ARRAY, Some(LogicalType::Uuid)) => true,
        _ => false,
    }
}

impl Footer {
    /// Row group `rg`'s columns with page bounds for `field_ids`: (leaf index, field id, column
    /// index range, offset index range).
    #[allow(clippy::type_complexity)]
    fn page_columns(
        &self,
        rg: usize,
        field_ids: &[i32],
    ) -> Result<Vec<(usize, i32, std::ops::Range<u64>, std::ops::Range<u64>)>> {
        self.check_row_group(rg)?;
        let file = self.metadata().file_metadata();
        let descr = file.schema_descr();
        let group = self.metadata().row_group(rg);
        let mut out = Vec::new();
        for (i, chunk) in group.columns().iter().enumerate() {
            let column = descr.column(i);
            let info = column.self_type().get_basic_info();
            if !info.has_id() || !field_ids.contains(&info.id()) {
                continue;
            }
            if !comparable(&column, file.column_order(i)) {
                continue;
            }
            let (Some(index), Some(offsets)) =
                (chunk.column_index_range(), chunk.offset_index_range())
            else {
                continue;
            };
            let within = |r: &std::ops::Range<u64>| r.start <= r.end && r.end <= self.file_length();
            if !within(&index) || !within(&offsets) {
                return Err(Error::decode(format!(
                    "the page index of column {} lies beyond the file ({} bytes)",
                    column.path(),
                    self.file_length()
                )));
            }
            out.push((i, info.id(), index, offsets));
        }
        Ok(out)
    }

    /// The (offset, length) byte ranges [`Self::page_bounds`] reads for the columns of row
    /// group `rg` holding `field_ids`, adjacent ones merged (writers put a row group's column
    /// indexes together, then its offset indexes); none where the file has no page index for
    /// them.
    pub fn page_index_ranges(&self, rg: usize, field_ids: &[i32]) -> Result<Vec<(u64, u64)>> {
        let mut ranges: Vec<std::ops::Range<u64>> = self
            .page_columns(rg, field_ids)?
            .into_iter()
            .flat_map(|(_, _, a, b)| [a, b])
            .collect();
        ranges.sort_unstable_by_key(|r| (r.start, r.end));
        let mut merged: Vec<std::ops::Range<u64>> = Vec::with_capacity(ranges.len());
        for r in ranges {
            match merged.last_mut() {
                Some(last) if last.end >= r.start => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        Ok(merged
            .into_iter()
            .map(|r| (r.start, r.end - r.start))
            .collect())
    }

    /// The page bounds of the columns of row group `rg` holding `field_ids`, from the bytes
    /// of [`Self::page_index_ranges`].
    pub fn page_bounds(
        &self,
        rg: usize,
        field_ids: &[i32],
        ranges: &Ranges,
    ) -> Result<Vec<ColumnPages>> {
        let descr = self.metadata().file_metadata().schema_descr();
        let mut out = Vec::new();
        for (i, field_id, index, offsets) in self.page_columns(rg, field_ids)? {
            let column = descr.column(i);
            let bad = |what: &str, e: parquet::errors::ParquetError| {
                Error::decode(format!(
                    "the {what} of column {} in row group {rg}: {e}",
                    column.path()
                ))
            };
            let read = |r: &std::ops::Range<u64>, what: &str| {
                ranges
                    .get_bytes(r.start, (r.end - r.start) as usize)
                    .map_err(|e| bad(what, e))
            };
            let offsets = decode_offset_index(&read(&offsets, "offset index")?)
                .map_err(|e| bad("offset index", e))?;
            let index = decode_column_index(&read(&index, "column index")?, column.physical_type())
                .map_err(|e| bad("column index", e))?;
            let first_rows: Vec<i64> = offsets
                .page_locations()
                .iter()
                .map(|p| p.first_row_index)
                .collect();
            let n = first_rows.len();
            if index.num_pages() != n as u64 {
                return Err(Error::decode(format!(
                    "the page index of column {} in row group {rg}: {} pages in its column \
                     index, {n} in its offset index",
                    column.path(),
                    index.num_pages()
                )));
            }
            let mut pages = ColumnPages {
                field_id,
                first_rows,
                ..ColumnPages::default()
            };
            for p in 0..n {
                let (lo, hi) = page_bounds(&index, p);
                pages.lower.push(lo);
                pages.upper.push(hi);
                pages.nulls.push(index.null_count(p));
                pages.all_null.push(index.is_null_page(p));
            }
            out.push(pages);
        }
        Ok(out)
    }
}

impl Footer {
    /// Per row of row group `rg`, whether `expr` (bound to `schema`) may hold for it by the
    /// page bounds of its columns (from the bytes of [`Self::page_index_ranges`]); `None`
    /// where no page can be skipped.
    pub fn page_keep(
        &self,
        rg: usize,
        expr: &Expr,
        schema: &Schema,
        ranges: &Ranges,
    ) -> Result<Option<BooleanBuffer>> {
        let pages = self.page_bounds(rg, &expr.referenced_field_ids(), ranges)?;
        keep_rows(
            expr,
            schema,
            self.metadata().row_group(rg).num_rows(),
            &pages,
        )
    }
}

/// Page `p`'s min and max in the binary single-value form of the physical type.
fn page_bounds(index: &ColumnIndexMetaData, p: usize) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
    match index {
        ColumnIndexMetaData::BOOLEAN(x) => (
            x.min_value(p).map(|&v| vec![u8::from(v)]),
            x.max_value(p).map(|&v| vec![u8::from(v)]),
        ),
        ColumnIndexMetaData::INT32(x) => (
            x.min_value(p).map(|v| v.to_le_bytes().to_vec()),
            x.max_value(p).map(|v| v.to_le_bytes().to_vec()),
        ),
        ColumnIndexMetaData::INT64(x) => (
            x.min_value(p).map(|v| v.to_le_bytes().to_vec()),
            x.max_value(p).map(|v| v.to_le_bytes().to_vec()),
        ),
        ColumnIndexMetaData::BYTE_ARRAY(x) | ColumnIndexMetaData::FIXED_LEN_BYTE_ARRAY(x) => (
            x.min_value(p).map(<[u8]>::to_vec),
            x.max_value(p).map(<[u8]>::to_vec),
        ),
        // not `comparable`
        _ => (None, None),
    }
}
