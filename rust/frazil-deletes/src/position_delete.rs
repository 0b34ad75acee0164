//! Position deletes applied to a data file's rows: for the row range `[start, start + n)` a
//! keep-mask (true = row survives) or the batch-relative indices of the surviving rows; and
//! position delete file columns (`file_path`, `pos`) merged into one bitmap per data file.

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, UInt32Type, UInt64Type};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, PrimitiveArray};
use arrow_buffer::{BooleanBuffer, Buffer, MutableBuffer, ScalarBuffer};
use arrow_schema::DataType;
use frazil_values::{Error, Result};

use crate::bitmap::PositionBitmap;

/// The most positions [`positions_buffer`] materializes (2 GiB of Int64) when the caller does
/// not know the data file's row count.
pub const MAX_POSITIONS: u64 = 1 << 28;

/// The keep-mask of rows `[start, start + length)`: bit `i` is false when position
/// `start + i` is deleted.
pub fn keep_mask(bitmap: &PositionBitmap, start: u64, length: usize) -> BooleanBuffer {
    // Whole 64-bit words, so deleted bits are cleared a word at a time.
    let words = length.div_ceil(64);
    let mut buf = MutableBuffer::from_len_zeroed(words * 8);
    buf.as_slice_mut().fill(0xFF);
    let bits: &mut [u64] = buf.typed_data_mut();
    let (mut word, mut cleared) = (usize::MAX, 0u64);
    bitmap.for_each_in_range(start, start.saturating_add(length as u64), |pos| {
        let i = (pos - start) as usize;
        if i >> 6 != word {
            if word != usize::MAX {
                bits[word] &= !cleared;
            }
            (word, cleared) = (i >> 6, 0);
        }
        cleared |= 1 << (i & 63);
    });
    if word != usize::MAX {
        bits[word] &= !cleared;
    }
    BooleanBuffer::new(buf.into(), 0, length)
}

/// The batch-relative indices (0-based) of the rows of `[start, start + length)` that are
/// not deleted, ascending: what `take` needs to filter the batch.
pub fn keep_indices(bitmap: &PositionBitmap, start: u64, length: usize) -> ScalarBuffer<i64> {
    let end = start.saturating_add(length as u64);
    let deleted = bitmap.range_cardinality(start, end) as usize;
    let mut out: Vec<i64> = Vec::with_capacity(length.saturating_sub(deleted));
    let mut next = 0i64;
    bitmap.for_each_in_range(start, end, |pos| {
        let i = (pos - start) as i64;
        out.extend(next..i);
        next = i + 1;
    });
    out.extend(next..length as i64);
    ScalarBuffer::from(out)
}

/// Every position as an Int64 buffer (`_pos` and position delete `pos` are longs; positions
/// are below 2^63, so the values are the same read as unsigned). With the data file's
/// `record_count` every position must be below it, so the buffer is at most 8 bytes per row;
/// without it, at most [`MAX_POSITIONS`] are materialized. Either is checked before anything
/// is allocated.
pub fn positions_buffer(
    bitmap: &PositionBitmap,
    record_count: Option<u64>,
) -> Result<ScalarBuffer<i64>> {
    match record_count {
        Some(n) => bitmap.check_within(n)?,
        None => {
            let cardinality = bitmap.cardinality();
            if cardinality > MAX_POSITIONS {
                return Err(Error::invalid(format!(
                    "the deletion vector holds {cardinality} positions, more than the \
                     {MAX_POSITIONS} materialized without the data file's record count"
                )));
            }
        }
    }
    let v = bitmap.to_vec();
    let len = v.len();
    Ok(ScalarBuffer::new(Buffer::from_vec(v), 0, len))
}

fn collect_positions<T>(array: &PrimitiveArray<T>, what: &str) -> Result<Vec<u64>>
where
    T: ArrowPrimitiveType,
    T::Native: TryInto<u64> + Copy + std::fmt::Display,
{
    if array.null_count() > 0 {
        return Err(Error::invalid(format!(
            "{what} holds {} nulls; a deleted position cannot be null",
            array.null_count()
        )));
    }
    array
        .values()
        .iter()
        .map(|&v| {
            v.try_into()
                .map_err(|_| Error::invalid(format!("{what} holds a negative position: {v}")))
        })
        .collect()
}

/// The positions of an integer array (Int64, UInt64, Int32 or UInt32; no nulls, none
/// negative).
pub fn positions_of(array: &dyn Array, what: &str) -> Result<Vec<u64>> {
    match array.data_type() {
        DataType::Int64 => collect_positions(array.as_primitive::<Int64Type>(), what),
        DataType::UInt64 => collect_positions(array.as_primitive::<UInt64Type>(), what),
        DataType::Int32 => collect_positions(array.as_primitive::<Int32Type>(), what),
        DataType::UInt32 => collect_positions(array.as_primitive::<UInt32Type>(), what),
        other => Err(Error::invalid(format!(
            "{what} must be an integer array (int64, uint64, int32 or uint32), not {other}"
        ))),
    }
}

/// The value at `i` of a string array of any Arrow string layout.
fn string_accessor<'a>(array: &'a dyn Array) -> Result<Box<dyn Fn(usize) -> &'a str + 'a>> {
    Ok(match array.data_type() {
        DataType::Utf8 => {
            let a = array.as_string::<i32>();
            Box::new(move |i| a.value(i))
        }
        DataType::LargeUtf8 => {
            let a = array.as_string::<i64>();
            Box::new(move |i| a.value(i))
        }
        DataType::Utf8View => {
            let a = array.as_string_view();
            Box::new(move |i| a.value(i))
        }
        other => {
            return Err(Error::invalid(format!(
                "file_path must be a string array, not {other}"
            )))
        }
    })
}

/// Groups the rows of position delete files (`file_path`, `pos` column chunks, per the spec's
/// "Position Delete Files") into one bitmap per data file, in order of first appearance;
/// with `only`, keeps just that data file's positions.
pub fn group_position_deletes(
    chunks: &[(&dyn Array, &dyn Array)],
    only: Option<&str>,
) -> Result<Vec<(String, PositionBitmap)>> {
    let mut groups: Vec<(String, Vec<u64>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for &(file_path, pos) in chunks {
        if file_path.len() != pos.len() {
            return Err(Error::invalid(format!(
                "file_path has {} rows but pos has {}",
                file_path.len(),
                pos.len()
            )));
        }
        if file_path.null_count() > 0 {
            return Err(Error::invalid(
                "file_path holds nulls; every position delete names its data file",
            ));
        }
        let positions = positions_of(pos, "pos")?;
        let path_at = string_accessor(file_path)?;
        // Files are sorted by path, so runs of one path are long: one lookup per run.
        let mut i = 0;
        while i < positions.len() {
            let path = path_at(i);
            let mut j = i + 1;
            while j < positions.len() && path_at(j) == path {
                j += 1;
            }
            if only.is_none_or(|o| o == path) {
                let g = match index.get(path) {
                    Some(&g) => g,
                    None => {
                        groups.push((path.to_string(), Vec::new()));
                        index.insert(path.to_string(), groups.len() - 1);
                        groups.len() - 1
                    }
                };
                groups[g].1.extend_from_slice(&positions[i..j]);
            }
            i = j;
        }
    }
    groups
        .into_iter()
        .map(|(path, p)| Ok((path, PositionBitmap::from_positions(&p)?)))
        .collect()
}

/// [`group_position_deletes`] of position delete rows given as struct chunks (a table's
/// record batches) holding `file_path` and `pos` columns.
pub fn group_position_delete_rows(
    rows: &[ArrayRef],
    only: Option<&str>,
) -> Result<Vec<(String, PositionBitmap)>> {
    let mut pairs = Vec::with_capacity(rows.len());
    for chunk in rows {
        let s = chunk
            .as_struct_opt()
            .ok_or_else(|| Error::invalid("position delete rows must be a table of structs"))?;
        let column = |name: &str| {
            s.column_by_name(name).map(|c| c.as_ref()).ok_or_else(|| {
                Error::invalid(format!("position delete rows lack a {name:?} column"))
            })
        };
        pairs.push((column("file_path")?, column("pos")?));
    }
    group_position_deletes(&pairs, only)
}

/// The bitmap of the positions in integer array chunks (any order, duplicates ok).
pub fn bitmap_of_chunks(chunks: &[ArrayRef]) -> Result<PositionBitmap> {
    let mut b = PositionBitmap::new();
    for chunk in chunks {
        b.extend(&positions_of(chunk.as_ref(), "positions")?)?;
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};
    use proptest::prelude::*;

    /// A deletion vector bomb: one bitmap of run containers, each one run of 65,536 positions,
    /// holds 2^28 + 65,536 positions in about 57 KiB; `positions()` of it took 2.1 GB. Refused
    /// before any allocation, without the data file's row count or past it.
    #[test]
    fn run_container_bombs_are_refused_before_allocation() -> Result<()> {
        let mut m = roaring::RoaringBitmap::new();
        m.insert_range(0..(MAX_POSITIONS + 65_536) as u32);
        m.optimize();
        let mut bytes = 1u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(&0u32.to_le_bytes());
        m.serialize_into(&mut bytes).expect("to a Vec");
        drop(m);
        assert!(bytes.len() < 64 << 10, "{}", bytes.len());
        let b = PositionBitmap::deserialize(&bytes).map_err(Error::decode)?;
        assert_eq!(b.cardinality(), MAX_POSITIONS + 65_536);
        let e = positions_buffer(&b, None).unwrap_err();
        assert!(
            e.message.contains("without the data file's record count"),
            "{e}"
        );
        let e = positions_buffer(&b, Some(1_000_000)).unwrap_err();
        assert_eq!(e.kind, frazil_values::ErrorKind::Decode);
        assert!(
            e.message
                .contains("not below the data file's record count 1000000"),
            "{e}"
        );
        // Within its data file's rows, a vector materializes.
        let small = PositionBitmap::from_positions(&[0, 7, 999_999])?;
        assert_eq!(
            positions_buffer(&small, Some(1_000_000))?.as_ref(),
            &[0, 7, 999_999]
        );
        assert!(positions_buffer(&small, Some(999_999)).is_err());
        assert_eq!(positions_buffer(&small, None)?.len(), 3);
        Ok(())
    }

    #[test]
    fn groups_by_file() -> Result<()> {
        let paths = StringArray::from(vec!["a", "a", "b", "a", "b"]);
        let pos = Int64Array::from(vec![3, 1, 7, 1, 0]);
        let g = group_position_deletes(&[(&paths, &pos)], None)?;
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].0, "a");
        assert_eq!(g[0].1.to_vec(), vec![1, 3]);
        assert_eq!(g[1].1.to_vec(), vec![0, 7]);
        let g = group_position_deletes(&[(&paths, &pos), (&paths, &pos)], Some("b"))?;
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].1.to_vec(), vec![0, 7]);
        let negative = Int64Array::from(vec![1, 2, 3, -1, 0]);
        assert!(group_position_deletes(&[(&paths, &negative)], None).is_err());
        Ok(())
    }

    proptest! {
        #[test]
        fn mask_and_indices_agree_with_a_filter(
            positions in prop::collection::vec(0u64..2000, 0..400),
            start in 0u64..1500,
            length in 0usize..1000,
        ) {
            let b = PositionBitmap::from_positions(&positions).expect("in range");
            let mask = keep_mask(&b, start, length);
            let expected: Vec<bool> =
                (0..length).map(|i| !b.contains(start + i as u64)).collect();
            prop_assert_eq!(mask.iter().collect::<Vec<_>>(), expected.clone());
            let kept: Vec<i64> = expected
                .iter()
                .enumerate()
                .filter(|(_, k)| **k)
                .map(|(i, _)| i as i64)
                .collect();
            prop_assert_eq!(keep_indices(&b, start, length).to_vec(), kept);
        }
    }

    #[test]
    fn ranges_across_the_32_bit_boundary() -> Result<()> {
        let b = PositionBitmap::from_positions(&[(1 << 32) - 1, 1 << 32, (1 << 32) + 2])?;
        let mask = keep_mask(&b, (1 << 32) - 2, 5);
        assert_eq!(
            mask.iter().collect::<Vec<_>>(),
            vec![true, false, false, true, false]
        );
        assert_eq!(keep_indices(&b, (1 << 32) - 2, 5).to_vec(), vec![0, 3]);
        Ok(())
    }

    #[test]
    fn rows_and_chunks() -> Result<()> {
        use arrow_array::StructArray;
        use arrow_schema::{Field, Fields};
        use std::sync::Arc;
        let rows = StructArray::new(
            Fields::from(vec![
                Field::new("file_path", DataType::Utf8, false),
                Field::new("pos", DataType::Int64, false),
            ]),
            vec![
                Arc::new(StringArray::from(vec!["a", "a", "b"])) as ArrayRef,
                Arc::new(Int64Array::from(vec![3, 1, 2])),
            ],
            None,
        );
        let groups = group_position_delete_rows(&[Arc::new(rows) as ArrayRef], None)?;
        let sizes: Vec<_> = groups
            .iter()
            .map(|(p, b)| (p.as_str(), b.cardinality()))
            .collect();
        assert_eq!(sizes, vec![("a", 2), ("b", 1)]);
        let e =
            group_position_delete_rows(&[Arc::new(Int64Array::from(vec![1])) as ArrayRef], None)
                .expect_err("not structs");
        assert!(e.message.contains("table of structs"), "{}", e.message);
        let chunks: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(vec![5, 1])),
            Arc::new(Int64Array::from(vec![1, 9])),
        ];
        let b = bitmap_of_chunks(&chunks)?;
        assert_eq!((b.cardinality(), b.min(), b.max()), (3, Some(1), Some(9)));
        Ok(())
    }
}
