//! File pruning by bounding box for `geometry` / `geography` columns: a data file may hold a
//! value whose box intersects a query box unless its geo bounds (spec "Bounds for Geometry and
//! Geography", Appendix D points) say otherwise. Files without bounds for the field, or with
//! bounds that cannot be read, are kept.

use arrow_array::cast::AsArray;
use arrow_array::{Array, MapArray, StructArray};
use arrow_schema::DataType;
use frazil_values::geo::BoundingBox;
use frazil_values::{Error, Result};

use crate::metrics_evaluator::{lookup, map_col};

fn bound_at(map: &Option<MapArray>, at: Option<u32>) -> Option<&[u8]> {
    let (map, at) = (map.as_ref()?, at? as usize);
    let values = map.values();
    if values.is_null(at) {
        return None;
    }
    match values.data_type() {
        DataType::Binary => Some(values.as_binary::<i32>().value(at)),
        DataType::LargeBinary => Some(values.as_binary::<i64>().value(at)),
        DataType::BinaryView => Some(values.as_binary_view().value(at)),
        _ => None,
    }
}

/// Per data file of a `data_file` struct column: whether it may hold a value of field
/// `field_id` whose box intersects `query` (`geography`: the antimeridian rule).
pub fn may_intersect(
    data_file: &StructArray,
    field_id: i32,
    query: &BoundingBox,
    geography: bool,
) -> Result<Vec<bool>> {
    let n = data_file.len();
    let lower = map_col(data_file, "lower_bounds")?;
    let upper = map_col(data_file, "upper_bounds")?;
    if lower.as_ref().is_some_and(|m| {
        !matches!(
            m.values().data_type(),
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        )
    }) {
        return Err(Error::invalid(
            "data_file.lower_bounds values must be binary",
        ));
    }
    let (lo, hi) = (lookup(&lower, field_id, n)?, lookup(&upper, field_id, n)?);
    Ok((0..n)
        .map(|i| {
            let (Some(l), Some(u)) = (bound_at(&lower, lo[i]), bound_at(&upper, hi[i])) else {
                return true;
            };
            match BoundingBox::from_bounds(l, u) {
                Ok(b) if !b.xmin.is_nan() && !b.ymin.is_nan() => b.intersects_xy(query, geography),
                _ => true, // an unreadable bound never prunes
            }
        })
        .collect())
}
