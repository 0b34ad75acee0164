//! File pruning by bounding box for `geometry` / `geography` columns: a data file may hold a
//! value whose box intersects a query box unless its geo bounds (spec "Bounds for Geometry and
//! Geography", Appendix D points) say otherwise. Files without bounds for the field, or with
//! bounds that cannot be read, are kept.

use arrow_array::cast::AsArray;
use arrow_array::{Array, MapArray};
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
    data_file: &dyn Array,
    field_id: i32,
    query: &BoundingBox,
    geography: bool,
) -> Result<Vec<bool>> {
    let data_file = data_file
        .as_struct_opt()
        .ok_or_else(|| Error::invalid("data files must be a struct array"))?;
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::builder::{BinaryBuilder, Int32Builder, MapBuilder};
    use arrow_array::{ArrayRef, StructArray};
    use arrow_schema::{Field, Fields};

    use super::*;

    fn point(x: f64, y: f64) -> Vec<u8> {
        [x.to_le_bytes(), y.to_le_bytes()].concat()
    }

    fn bounds(rows: &[Option<Vec<u8>>]) -> ArrayRef {
        let mut b = MapBuilder::new(None, Int32Builder::new(), BinaryBuilder::new());
        for r in rows {
            if let Some(v) = r {
                b.keys().append_value(7);
                b.values().append_value(v);
            }
            b.append(true).unwrap();
        }
        Arc::new(b.finish())
    }

    #[test]
    fn prunes_by_box_and_keeps_unknowns() {
        let lower = bounds(&[
            Some(point(0.0, 0.0)),
            Some(point(10.0, 10.0)),
            None,
            Some(vec![1, 2, 3]),
            Some(point(170.0, 0.0)),
        ]);
        let upper = bounds(&[
            Some(point(1.0, 1.0)),
            Some(point(11.0, 11.0)),
            None,
            Some(vec![1, 2, 3]),
            Some(point(-170.0, 1.0)),
        ]);
        let fields = Fields::from(vec![
            Field::new("lower_bounds", lower.data_type().clone(), true),
            Field::new("upper_bounds", upper.data_type().clone(), true),
        ]);
        let files = StructArray::new(fields, vec![lower, upper], None);
        let query = BoundingBox {
            xmin: 0.5,
            ymin: 0.5,
            xmax: 2.0,
            ymax: 2.0,
            z: None,
            m: None,
        };
        // A box that does not wrap misses the wrapping file's span [170, 180] ∪ [-180, -170].
        assert_eq!(
            may_intersect(&files, 7, &query, true).unwrap(),
            vec![true, false, true, true, false]
        );
        let across = BoundingBox {
            xmin: 175.0,
            xmax: 176.0,
            ..query
        };
        assert_eq!(
            may_intersect(&files, 7, &across, true).unwrap(),
            vec![false, false, true, true, true]
        );
        // Another field: no bounds, nothing pruned.
        assert_eq!(
            may_intersect(&files, 8, &query, false).unwrap(),
            vec![true; 5]
        );
    }
}
