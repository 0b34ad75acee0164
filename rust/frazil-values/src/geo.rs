//! Bounding boxes of `geometry` and `geography` values (spec "Bounds for Geometry and
//! Geography", Appendix D bound serialization, Appendix G): a WKB reader that visits every
//! coordinate, the box of a column's values, its x:y[:z][:m] bound form, and box intersection
//! with the geography antimeridian rule (xmin > xmax wraps through ±180).
//!
//! WKB is read in its ISO form (dimensions as +1000/+2000/+3000 type codes) and in the
//! extended (EWKB) form PostGIS-like writers produce (Z/M/SRID flag bits). Curved types have
//! control points outside their curve's box, so a value of such a type yields no box
//! ([`Error`] of kind unsupported) rather than a wrong one.

use arrow_array::cast::AsArray;
use arrow_array::{Array, BooleanArray};
use arrow_schema::DataType;

use crate::error::{Error, Result};

/// A box over the X, Y, Z and M dimensions; a dimension without any value is `None`.
/// For a geography box, `xmin > xmax` means the box wraps through the antimeridian.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoundingBox {
    pub xmin: f64,
    pub ymin: f64,
    pub xmax: f64,
    pub ymax: f64,
    pub z: Option<(f64, f64)>,
    pub m: Option<(f64, f64)>,
}

#[derive(Default, Clone, Copy)]
struct Range(Option<(f64, f64)>);

impl Range {
    fn add(&mut self, v: f64) {
        if v.is_nan() {
            return; // spec: NaN coordinates are skipped, per dimension
        }
        self.0 = Some(match self.0 {
            None => (v, v),
            Some((lo, hi)) => (lo.min(v), hi.max(v)),
        });
    }

    fn merge(&mut self, other: Range) {
        if let Some((lo, hi)) = other.0 {
            self.add(lo);
            self.add(hi);
        }
    }
}

/// What the coordinates of some values span. Geometry keeps one x range; geography keeps
/// every x interval seen so the smallest covering arc of the longitude circle can be chosen.
#[derive(Default, Clone)]
pub struct BoundsAccumulator {
    geography: bool,
    x: Range,
    y: Range,
    z: Range,
    m: Range,
    /// Geography only: longitude arcs `(lo, hi)` (`lo > hi` wraps) already covered.
    arcs: Vec<(f64, f64)>,
    /// Geography only: a value with edges was seen; its box is not the box of its vertices
    /// (great-circle edges bulge poleward and may cross the antimeridian), so none is kept.
    unbounded: bool,
}

impl BoundsAccumulator {
    pub fn new(geography: bool) -> Self {
        BoundsAccumulator {
            geography,
            ..Default::default()
        }
    }

    /// Adds one WKB value.
    pub fn add_wkb(&mut self, wkb: &[u8]) -> Result<()> {
        let mut r = Reader { data: wkb, pos: 0 };
        r.geometry(self, 0)?;
        if r.pos != wkb.len() {
            return Err(Error::invalid(format!(
                "WKB value has {} trailing bytes",
                wkb.len() - r.pos
            )));
        }
        Ok(())
    }

    /// Adds a box (e.g. the box of another batch of the same column).
    pub fn add_box(&mut self, b: &BoundingBox) {
        self.y.add(b.ymin);
        self.y.add(b.ymax);
        self.z.merge(Range(b.z));
        self.m.merge(Range(b.m));
        if self.geography {
            self.arcs.push((b.xmin, b.xmax));
        } else {
            self.x.add(b.xmin);
            self.x.add(b.xmax);
        }
    }

    /// Replaces the longitude arcs kept so far by one arc covering them (still a bound, so
    /// memory stays constant across batches; the box may grow by at most the merged gaps).
    pub fn compact(&mut self) {
        if let Some(arc) = covering_arc(&self.arcs) {
            self.arcs = vec![arc];
        }
    }

    fn point(&mut self, c: [f64; 4]) {
        if self.geography && !c[0].is_nan() {
            self.arcs.push((c[0], c[0]));
        } else {
            self.x.add(c[0]);
        }
        self.y.add(c[1]);
        self.z.add(c[2]);
        self.m.add(c[3]);
    }

    /// The box of everything added; `None` when X or Y has no value (spec: then no box), or
    /// for geography values with edges.
    pub fn finish(&self) -> Option<BoundingBox> {
        if self.unbounded {
            return None;
        }
        let (ymin, ymax) = self.y.0?;
        let (xmin, xmax) = if self.geography {
            covering_arc(&self.arcs)?
        } else {
            self.x.0?
        };
        Some(BoundingBox {
            xmin,
            ymin,
            xmax,
            ymax,
            z: self.z.0,
            m: self.m.0,
        })
    }
}

/// The smallest arc of the longitude circle [-180, 180] covering every arc (`lo > hi` wraps);
/// an arc that does not wrap is preferred when both are as small.
fn covering_arc(arcs: &[(f64, f64)]) -> Option<(f64, f64)> {
    let mut parts: Vec<(f64, f64)> = Vec::with_capacity(arcs.len() + 1);
    for &(lo, hi) in arcs {
        if lo > hi {
            parts.push((lo, 180.0));
            parts.push((-180.0, hi));
        } else {
            parts.push((lo, hi));
        }
    }
    parts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut union: Vec<(f64, f64)> = Vec::new();
    for (lo, hi) in parts {
        match union.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => union.push((lo, hi)),
        }
    }
    let (first, last) = (*union.first()?, *union.last()?);
    // The gap through the antimeridian, then each gap between covered stretches: the box is
    // the circle minus the largest gap.
    let wrap_gap = (180.0 - last.1) + (first.0 + 180.0);
    let mut best = (wrap_gap, (first.0, last.1));
    for w in union.windows(2) {
        let gap = w[1].0 - w[0].1;
        if gap > best.0 {
            best = (gap, (w[1].0, w[0].1));
        }
    }
    Some(best.1)
}

impl BoundingBox {
    /// The box of one WKB value (`None`: empty, or a geography value with edges).
    pub fn of_wkb(wkb: &[u8], geography: bool) -> Result<Option<BoundingBox>> {
        let mut acc = BoundsAccumulator::new(geography);
        acc.add_wkb(wkb)?;
        Ok(acc.finish())
    }

    /// The bound form of Appendix D: the lower (or upper) point as x:y, x:y:z, x:y:NaN:m or
    /// x:y:z:m, each an 8-byte little-endian double.
    pub fn to_bounds(&self) -> (Vec<u8>, Vec<u8>) {
        let point = |x: f64, y: f64, z: Option<f64>, m: Option<f64>| {
            let mut out = Vec::with_capacity(32);
            out.extend_from_slice(&x.to_le_bytes());
            out.extend_from_slice(&y.to_le_bytes());
            if z.is_some() || m.is_some() {
                out.extend_from_slice(&z.unwrap_or(f64::NAN).to_le_bytes());
            }
            if let Some(m) = m {
                out.extend_from_slice(&m.to_le_bytes());
            }
            out
        };
        (
            point(
                self.xmin,
                self.ymin,
                self.z.map(|z| z.0),
                self.m.map(|m| m.0),
            ),
            point(
                self.xmax,
                self.ymax,
                self.z.map(|z| z.1),
                self.m.map(|m| m.1),
            ),
        )
    }

    /// A box from its lower and upper bound points (Appendix D).
    pub fn from_bounds(lower: &[u8], upper: &[u8]) -> Result<BoundingBox> {
        let lo = point_of(lower)?;
        let hi = point_of(upper)?;
        let dim = |i: usize| match (lo.get(i), hi.get(i)) {
            (Some(a), Some(b)) if !a.is_nan() && !b.is_nan() => Some((*a, *b)),
            _ => None,
        };
        Ok(BoundingBox {
            xmin: lo[0],
            ymin: lo[1],
            xmax: hi[0],
            ymax: hi[1],
            z: dim(2),
            m: dim(3),
        })
    }

    /// Whether the boxes of two bound pairs (Appendix D points) may share a point over X and
    /// Y; a NaN X or Y bound is refused.
    pub fn bounds_intersect(
        (lower, upper): (&[u8], &[u8]),
        (other_lower, other_upper): (&[u8], &[u8]),
        geography: bool,
    ) -> Result<bool> {
        let a = BoundingBox::from_bounds(lower, upper)?;
        let b = BoundingBox::from_bounds(other_lower, other_upper)?;
        if a.xmin.is_nan() || b.xmin.is_nan() {
            return Err(Error::invalid("a geo bound has a NaN X or Y"));
        }
        Ok(a.intersects_xy(&b, geography))
    }

    /// Whether the boxes may share a point over X and Y (Z and M are not compared).
    /// `geography`: a box whose `xmin > xmax` covers `x >= xmin || x <= xmax`.
    pub fn intersects_xy(&self, other: &BoundingBox, geography: bool) -> bool {
        let y = self.ymin <= other.ymax && other.ymin <= self.ymax;
        y && x_overlaps((self.xmin, self.xmax), (other.xmin, other.xmax), geography)
    }
}

fn x_overlaps(a: (f64, f64), b: (f64, f64), geography: bool) -> bool {
    let split = |(lo, hi): (f64, f64)| -> Vec<(f64, f64)> {
        if geography && lo > hi {
            vec![(lo, f64::INFINITY), (f64::NEG_INFINITY, hi)]
        } else {
            vec![(lo, hi)]
        }
    };
    split(a)
        .iter()
        .any(|p| split(b).iter().any(|q| p.0 <= q.1 && q.0 <= p.1))
}

fn point_of(data: &[u8]) -> Result<Vec<f64>> {
    if !matches!(data.len(), 16 | 24 | 32) {
        return Err(Error::invalid(format!(
            "a geo bound is 16, 24 or 32 bytes, got {}",
            data.len()
        )));
    }
    Ok(data
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect())
}

// WKB nesting deeper than this is refused (a crafted value must not overflow the stack).
const MAX_NESTING: usize = 64;

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N]> {
        let end = self.pos + N;
        let bytes = self.data.get(self.pos..end).ok_or_else(|| {
            Error::invalid(format!(
                "WKB value ends early (needs {N} bytes at offset {})",
                self.pos
            ))
        })?;
        self.pos = end;
        Ok(bytes.try_into().unwrap_or([0; N]))
    }

    fn u32(&mut self, le: bool) -> Result<u32> {
        let b = self.take::<4>()?;
        Ok(if le {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    }

    fn f64(&mut self, le: bool) -> Result<f64> {
        let b = self.take::<8>()?;
        Ok(if le {
            f64::from_le_bytes(b)
        } else {
            f64::from_be_bytes(b)
        })
    }

    fn count(&mut self, le: bool, min_item: usize) -> Result<usize> {
        let n = self.u32(le)? as usize;
        // A count larger than the bytes left could hold is corrupt (and must not allocate).
        if n.saturating_mul(min_item) > self.data.len() - self.pos {
            return Err(Error::invalid(format!(
                "WKB count {n} at offset {} exceeds the value's length",
                self.pos - 4
            )));
        }
        Ok(n)
    }

    fn geometry(&mut self, acc: &mut BoundsAccumulator, depth: usize) -> Result<()> {
        if depth > MAX_NESTING {
            return Err(Error::invalid("WKB nesting is too deep"));
        }
        let le = match self.take::<1>()?[0] {
            0 => false,
            1 => true,
            b => {
                return Err(Error::invalid(format!(
                    "WKB byte order must be 0 or 1, got {b}"
                )))
            }
        };
        let raw = self.u32(le)?;
        let (mut z, mut m) = (raw & 0x8000_0000 != 0, raw & 0x4000_0000 != 0);
        if raw & 0x2000_0000 != 0 {
            self.u32(le)?; // EWKB SRID
        }
        let code = raw & 0x0FFF_FFFF;
        match code / 1000 {
            0 => {}
            1 => z = true,
            2 => m = true,
            3 => (z, m) = (true, true),
            _ => return Err(Error::invalid(format!("unknown WKB geometry type {raw}"))),
        }
        let dims = 2 + z as usize + m as usize;
        let coord = |r: &mut Self, acc: &mut BoundsAccumulator| -> Result<()> {
            let mut c = [f64::NAN; 4];
            c[0] = r.f64(le)?;
            c[1] = r.f64(le)?;
            if z {
                c[2] = r.f64(le)?;
            }
            if m {
                c[3] = r.f64(le)?;
            }
            acc.point(c);
            Ok(())
        };
        match code % 1000 {
            1 => coord(self, acc)?,
            2 => {
                acc.unbounded |= acc.geography;
                for _ in 0..self.count(le, dims * 8)? {
                    coord(self, acc)?;
                }
            }
            3 | 17 => {
                acc.unbounded |= acc.geography;
                for _ in 0..self.count(le, 4)? {
                    for _ in 0..self.count(le, dims * 8)? {
                        coord(self, acc)?;
                    }
                }
            }
            // Multi*, collections, polyhedral surfaces and TINs hold whole WKB values.
            4..=7 | 15 | 16 => {
                for _ in 0..self.count(le, 5)? {
                    self.geometry(acc, depth + 1)?;
                }
            }
            8..=14 => {
                return Err(Error::unsupported(format!(
                    "WKB curve type {raw} has no box computed from its points"
                )))
            }
            _ => return Err(Error::invalid(format!("unknown WKB geometry type {raw}"))),
        }
        Ok(())
    }
}

fn at_row(i: usize, e: Error) -> Error {
    Error::new(e.kind, format!("row {i}: {}", e.message))
}

/// The WKB values of a binary array, `None` for a null.
fn wkb_values(array: &dyn Array) -> Result<Box<dyn Iterator<Item = Option<&[u8]>> + '_>> {
    Ok(match array.data_type() {
        DataType::Binary => Box::new(array.as_binary::<i32>().iter()),
        DataType::LargeBinary => Box::new(array.as_binary::<i64>().iter()),
        DataType::BinaryView => Box::new(array.as_binary_view().iter()),
        other => {
            return Err(Error::invalid(format!(
                "WKB values must be a binary array, got {other}"
            )))
        }
    })
}

impl BoundsAccumulator {
    /// Adds the non-null values of a binary WKB array; an error names its row.
    pub fn add_wkb_array(&mut self, array: &dyn Array) -> Result<()> {
        for (i, v) in wkb_values(array)?.enumerate() {
            if let Some(v) = v {
                self.add_wkb(v).map_err(|e| at_row(i, e))?;
            }
        }
        Ok(())
    }
}

/// Per value of a binary WKB array: whether its box may share a point with `query`; null for
/// null values, true where a value has no box (an empty value, or a geography value with
/// edges) so nothing is dropped on a guess.
pub fn intersects_box_array(
    array: &dyn Array,
    query: &BoundingBox,
    geography: bool,
) -> Result<BooleanArray> {
    wkb_values(array)?
        .enumerate()
        .map(|(i, v)| {
            v.map(|v| {
                let b = BoundingBox::of_wkb(v, geography).map_err(|e| at_row(i, e))?;
                Ok(b.is_none_or(|b| b.intersects_xy(query, geography)))
            })
            .transpose()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(x: f64, y: f64) -> Vec<u8> {
        let mut v = vec![1, 1, 0, 0, 0];
        v.extend_from_slice(&x.to_le_bytes());
        v.extend_from_slice(&y.to_le_bytes());
        v
    }

    fn boxed(values: &[Vec<u8>], geography: bool) -> Option<BoundingBox> {
        let mut acc = BoundsAccumulator::new(geography);
        for v in values {
            acc.add_wkb(v).unwrap();
        }
        acc.finish()
    }

    #[test]
    fn points_and_nan() {
        let b = boxed(
            &[point(1.0, 2.0), point(-3.0, f64::NAN), point(5.0, -1.0)],
            false,
        )
        .unwrap();
        assert_eq!((b.xmin, b.ymin, b.xmax, b.ymax), (-3.0, -1.0, 5.0, 2.0));
        assert_eq!((b.z, b.m), (None, None));
        assert_eq!(b.to_bounds().0.len(), 16);
        // Only NaN in Y: no box.
        assert!(boxed(&[point(1.0, f64::NAN)], false).is_none());
    }

    #[test]
    fn big_endian_xyzm_linestring() {
        // ISO LineString ZM (3002), big-endian, two points.
        let mut v = vec![0u8];
        v.extend_from_slice(&3002u32.to_be_bytes());
        v.extend_from_slice(&2u32.to_be_bytes());
        for c in [1.0f64, 2.0, 3.0, 4.0, -1.0, 5.0, f64::NAN, 8.0] {
            v.extend_from_slice(&c.to_be_bytes());
        }
        let b = boxed(&[v], false).unwrap();
        assert_eq!((b.xmin, b.xmax, b.ymin, b.ymax), (-1.0, 1.0, 2.0, 5.0));
        assert_eq!((b.z, b.m), (Some((3.0, 3.0)), Some((4.0, 8.0))));
        let (lo, hi) = b.to_bounds();
        assert_eq!(BoundingBox::from_bounds(&lo, &hi).unwrap(), b);
    }

    #[test]
    fn xym_bound_has_nan_z() {
        let mut v = vec![1u8];
        v.extend_from_slice(&2001u32.to_le_bytes());
        for c in [1.0f64, 2.0, 7.0] {
            v.extend_from_slice(&c.to_le_bytes());
        }
        let (lo, _) = boxed(&[v], false).unwrap().to_bounds();
        assert_eq!(lo.len(), 32);
        assert!(f64::from_le_bytes(lo[16..24].try_into().unwrap()).is_nan());
        assert_eq!(f64::from_le_bytes(lo[24..32].try_into().unwrap()), 7.0);
    }

    #[test]
    fn geography_points_wrap_the_antimeridian() {
        let b = boxed(&[point(170.0, 1.0), point(-175.0, 2.0)], true).unwrap();
        assert_eq!((b.xmin, b.xmax), (170.0, -175.0));
        let q = |x0, x1| BoundingBox {
            xmin: x0,
            ymin: 0.0,
            xmax: x1,
            ymax: 3.0,
            z: None,
            m: None,
        };
        assert!(b.intersects_xy(&q(179.0, 180.0), true));
        assert!(!b.intersects_xy(&q(0.0, 10.0), true));
        let b = boxed(&[point(-10.0, 1.0), point(20.0, 2.0)], true).unwrap();
        assert_eq!((b.xmin, b.xmax), (-10.0, 20.0));
    }

    #[test]
    fn geography_with_edges_has_no_box() {
        let mut v = vec![1u8, 2, 0, 0, 0, 2, 0, 0, 0];
        for c in [1.0f64, 2.0, 3.0, 4.0] {
            v.extend_from_slice(&c.to_le_bytes());
        }
        assert!(boxed(&[v.clone()], true).is_none());
        assert!(boxed(&[v], false).is_some());
    }

    #[test]
    fn corrupt_values_are_errors() {
        let mut acc = BoundsAccumulator::new(false);
        assert!(acc.add_wkb(&[1, 1, 0, 0]).is_err());
        assert!(acc.add_wkb(&[1, 2, 0, 0, 0, 255, 255, 255, 255]).is_err());
        assert!(acc.add_wkb(&[7]).is_err());
        let mut p = point(1.0, 2.0);
        p.push(0);
        assert!(acc.add_wkb(&p).is_err());
    }

    #[test]
    fn arrays_of_wkb() {
        let point = |x: f64, y: f64| {
            let mut w = vec![1u8, 1, 0, 0, 0];
            w.extend_from_slice(&x.to_le_bytes());
            w.extend_from_slice(&y.to_le_bytes());
            w
        };
        let (a, b) = (point(1.0, 2.0), point(5.0, 6.0));
        let values = arrow_array::BinaryArray::from(vec![Some(a.as_slice()), None, Some(&b)]);
        let mut acc = BoundsAccumulator::new(false);
        acc.add_wkb_array(&values).expect("add");
        let bounds = acc.finish().expect("a box");
        assert_eq!((bounds.xmin, bounds.xmax), (1.0, 5.0));
        let query = BoundingBox::of_wkb(&point(0.5, 1.5), false)
            .expect("box")
            .expect("a box");
        let hits = intersects_box_array(
            &values,
            &BoundingBox {
                xmax: 2.0,
                ymax: 3.0,
                ..query
            },
            false,
        )
        .expect("intersect");
        assert_eq!(
            hits.iter().collect::<Vec<_>>(),
            vec![Some(true), None, Some(false)]
        );
        let bad = arrow_array::BinaryArray::from(vec![&[1u8][..]]);
        let e = acc.add_wkb_array(&bad).expect_err("truncated");
        assert!(e.message.starts_with("row 0: "), "{}", e.message);
        let (lo, hi) = bounds.to_bounds();
        assert!(BoundingBox::bounds_intersect((&lo, &hi), (&lo, &hi), false).expect("bounds"));
        let nan = f64::NAN.to_le_bytes().repeat(2);
        assert!(BoundingBox::bounds_intersect((&nan, &nan), (&lo, &hi), false).is_err());
    }
}
