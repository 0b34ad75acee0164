//! The v1-v3 stats maps of `data_file` rows as a v4 `content_stats` column (writing).

use super::*;

// ---------------------------------------------------------------------------------------------
// Maps -> content_stats (writing)

/// The metrics of one field across the rows, gathered from the maps.
struct Gathered {
    lower: Vec<Option<Vec<u8>>>,
    upper: Vec<Option<Vec<u8>>>,
    values: Vec<Option<i64>>,
    nulls: Vec<Option<i64>>,
    nans: Vec<Option<i64>>,
}

fn int_long_map(a: Option<&ArrayRef>, name: &str) -> Result<Option<MapArray>> {
    map_of(a, name)
}

fn map_of(a: Option<&ArrayRef>, name: &str) -> Result<Option<MapArray>> {
    match a {
        None => Ok(None),
        Some(a) if a.data_type() == &DataType::Null => Ok(None),
        Some(a) => a
            .as_map_opt()
            .cloned()
            .map(Some)
            .ok_or_else(|| Error::invalid(format!("data_file.{name} must be a map column"))),
    }
}

fn keys_of(m: &MapArray, name: &str) -> Result<Int32Array> {
    m.keys()
        .as_primitive_opt::<Int32Type>()
        .cloned()
        .ok_or_else(|| Error::invalid(format!("data_file.{name} keys must be int32")))
}

/// Fills `slot(row, field)` from a map column: one pass over its entries.
fn gather_long(
    df: &StructArray,
    name: &str,
    index: &HashMap<i32, usize>,
    mut slot: impl FnMut(usize, usize, i64),
) -> Result<()> {
    let Some(m) = int_long_map(df.column_by_name(name), name)? else {
        return Ok(());
    };
    let values = m
        .values()
        .as_primitive_opt::<Int64Type>()
        .ok_or_else(|| Error::invalid(format!("data_file.{name} values must be int64")))?;
    for_each_entry(&m, name, index, |row, f, j| {
        if values.is_valid(j) {
            slot(row, f, values.value(j));
        }
    })
}

fn gather_bytes(
    df: &StructArray,
    name: &str,
    index: &HashMap<i32, usize>,
    mut slot: impl FnMut(usize, usize, &[u8]),
) -> Result<()> {
    let Some(m) = map_of(df.column_by_name(name), name)? else {
        return Ok(());
    };
    let values = m
        .values()
        .as_binary_opt::<i32>()
        .ok_or_else(|| Error::invalid(format!("data_file.{name} values must be binary")))?;
    for_each_entry(&m, name, index, |row, f, j| {
        if values.is_valid(j) {
            slot(row, f, values.value(j));
        }
    })
}

/// Calls `entry(row, field position, entry index)` for each entry of a non-null map whose key
/// is a field in `index`.
fn for_each_entry(
    m: &MapArray,
    name: &str,
    index: &HashMap<i32, usize>,
    mut entry: impl FnMut(usize, usize, usize),
) -> Result<()> {
    let keys = keys_of(m, name)?;
    let offsets = m.value_offsets();
    for row in 0..m.len() {
        if m.is_null(row) {
            continue;
        }
        for j in offsets[row] as usize..offsets[row + 1] as usize {
            if let Some(&f) = index.get(&keys.value(j)) {
                entry(row, f, j);
            }
        }
    }
    Ok(())
}

/// A geo bound struct (`geo_lower` at offset 10, `geo_upper` at 14) from binary points.
fn geo_array(base: i32, first: i32, points: &[Option<Vec<u8>>]) -> ArrayRef {
    let mut coords: Vec<Float64Builder> = (0..4).map(|_| Float64Builder::new()).collect();
    let mut valid = Vec::with_capacity(points.len());
    for p in points {
        let xyzm: Option<Vec<f64>> = p.as_ref().and_then(|b| {
            matches!(b.len(), 16 | 24 | 32).then(|| {
                b.chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                    .collect()
            })
        });
        valid.push(xyzm.is_some());
        for (k, c) in coords.iter_mut().enumerate() {
            // x:y:NaN:m means z is unset
            let v = xyzm.as_ref().and_then(|v| v.get(k).copied());
            match v {
                Some(v) if !(k >= 2 && v.is_nan()) => c.append_value(v),
                _ if k < 2 => c.append_value(0.0), // required; the struct is null then
                _ => c.append_null(),
            }
        }
    }
    let fields: Fields = ["x", "y", "z", "m"]
        .iter()
        .enumerate()
        .map(|(k, n)| {
            Field::new(*n, DataType::Float64, k >= 2).with_metadata(meta(base + first + k as i32))
        })
        .collect();
    let arrays: Vec<ArrayRef> = coords
        .iter_mut()
        .map(|c| Arc::new(c.finish()) as ArrayRef)
        .collect();
    Arc::new(StructArray::new(
        fields,
        arrays,
        Some(NullBuffer::from(valid)),
    ))
}

/// A typed bound column from binary bounds; a bound that does not decode as the field's type
/// is left out (unknown), as the evaluators treat it.
fn bound_array(f: &StatsField, offset: i32, bounds: &[Option<Vec<u8>>]) -> Result<ArrayRef> {
    use PrimitiveType as P;
    if f.is_geo() {
        let first = if offset == LOWER_BOUND {
            GEO_LOWER
        } else {
            GEO_UPPER
        };
        return Ok(geo_array(f.base, first, bounds));
    }
    fn decode<'a>(b: &'a Option<Vec<u8>>, ty: &PrimitiveType) -> Option<Val<'a>> {
        b.as_deref().and_then(|b| bound::decode_bound(b, ty))
    }
    let val = |b| decode(b, &f.ty);
    macro_rules! prim {
        ($builder:expr, $pat:pat => $v:expr) => {{
            let mut b = $builder;
            for x in bounds {
                match val(x) {
                    Some($pat) => b.append_value($v),
                    _ => b.append_null(),
                }
            }
            Arc::new(b.finish()) as ArrayRef
        }};
    }
    Ok(match &f.ty {
        P::Boolean => prim!(BooleanBuilder::new(), Val::Bool(v) => v),
        P::Int | P::Date => prim!(Int32Builder::new(), Val::I32(v) => v),
        P::Long | P::Time | P::Timestamp | P::TimestampTz | P::TimestampNs | P::TimestampTzNs => {
            prim!(Int64Builder::new(), Val::I64(v) => v)
        }
        P::Float => prim!(Float32Builder::new(), Val::F32(v) => v),
        P::Double => prim!(Float64Builder::new(), Val::F64(v) => v),
        P::Decimal { precision, scale } => {
            let b = Decimal128Builder::new()
                .with_precision_and_scale(*precision as u8, *scale as i8)
                .map_err(|e| Error::invalid(e.to_string()))?;
            prim!(b, Val::I128(v) => v)
        }
        P::Uuid => {
            let mut b = FixedSizeBinaryBuilder::new(16);
            for x in bounds {
                match val(x) {
                    Some(Val::U128(v)) => b
                        .append_value(v.to_be_bytes())
                        .map_err(|e| Error::invalid(e.to_string()))?,
                    _ => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
        P::Fixed(n) => {
            let mut b = FixedSizeBinaryBuilder::new(*n as i32);
            for x in bounds {
                match val(x) {
                    Some(Val::Bytes(v)) if v.len() as u64 == *n => b
                        .append_value(v)
                        .map_err(|e| Error::invalid(e.to_string()))?,
                    _ => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
        P::String | P::Binary => prim!(BinaryBuilder::new(), Val::Bytes(v) => v),
        other => {
            return Err(Error::unsupported(format!(
                "{other} bounds cannot be written as content_stats"
            )))
        }
    })
}

fn longs(v: &[Option<i64>]) -> ArrayRef {
    Arc::new(Int64Array::from(v.to_vec()))
}

/// The `content_stats` column for `data_file` rows holding the v1-v3 maps, with one stats
/// struct per field of `fields` (null where the file has no stats for it).
pub fn from_maps(df: &StructArray, fields: &[StatsField]) -> Result<StructArray> {
    let n = df.len();
    let index: HashMap<i32, usize> = fields.iter().enumerate().map(|(i, f)| (f.id, i)).collect();
    let mut g: Vec<Gathered> = fields
        .iter()
        .map(|_| Gathered {
            lower: vec![None; n],
            upper: vec![None; n],
            values: vec![None; n],
            nulls: vec![None; n],
            nans: vec![None; n],
        })
        .collect();
    gather_long(df, "value_counts", &index, |r, f, v| {
        g[f].values[r] = Some(v)
    })?;
    gather_long(df, "null_value_counts", &index, |r, f, v| {
        g[f].nulls[r] = Some(v)
    })?;
    gather_long(df, "nan_value_counts", &index, |r, f, v| {
        g[f].nans[r] = Some(v)
    })?;
    gather_bytes(df, "lower_bounds", &index, |r, f, v| {
        g[f].lower[r] = Some(v.to_vec())
    })?;
    gather_bytes(df, "upper_bounds", &index, |r, f, v| {
        g[f].upper[r] = Some(v.to_vec())
    })?;

    let mut outer_fields = Vec::with_capacity(fields.len());
    let mut outer_arrays = Vec::with_capacity(fields.len());
    for (f, g) in fields.iter().zip(&g) {
        let mut cols: Vec<(Field, ArrayRef)> = Vec::new();
        let mut push = |offset: i32, name: &str, a: ArrayRef| {
            let field =
                Field::new(name, a.data_type().clone(), true).with_metadata(meta(f.base + offset));
            cols.push((field, a));
        };
        if f.has_bounds() {
            push(
                LOWER_BOUND,
                "lower_bound",
                bound_array(f, LOWER_BOUND, &g.lower)?,
            );
            push(
                UPPER_BOUND,
                "upper_bound",
                bound_array(f, UPPER_BOUND, &g.upper)?,
            );
        }
        if !f.is_geo() {
            // the maps do not say whether bounds are exact: unknown
            push(
                TIGHT_BOUNDS,
                "tight_bounds",
                Arc::new(BooleanBuilder::new().finish_with_nulls(n)),
            );
        }
        push(VALUE_COUNT, "value_count", longs(&g.values));
        if f.optional {
            push(NULL_VALUE_COUNT, "null_value_count", longs(&g.nulls));
        }
        if f.is_float() {
            push(NAN_VALUE_COUNT, "nan_value_count", longs(&g.nans));
        }
        if f.has_avg_size() {
            push(
                AVG_VALUE_SIZE,
                "avg_value_size_in_bytes",
                Arc::new(Int32Array::new_null(n)),
            );
        }
        let valid: Vec<bool> = (0..n)
            .map(|r| {
                g.lower[r].is_some()
                    || g.upper[r].is_some()
                    || g.values[r].is_some()
                    || g.nulls[r].is_some()
                    || g.nans[r].is_some()
            })
            .collect();
        let (fs, arrays): (Vec<Field>, Vec<ArrayRef>) = cols.into_iter().unzip();
        let s = StructArray::try_new(Fields::from(fs), arrays, Some(NullBuffer::from(valid)))
            .map_err(|e| Error::invalid(e.to_string()))?;
        outer_fields
            .push(Field::new(&f.name, s.data_type().clone(), true).with_metadata(meta(f.base)));
        outer_arrays.push(Arc::new(s) as ArrayRef);
    }
    if outer_fields.is_empty() {
        return Ok(StructArray::new_empty_fields(n, None));
    }
    StructArray::try_new(Fields::from(outer_fields), outer_arrays, None)
        .map_err(|e| Error::invalid(e.to_string()))
}

/// Finishes the column of BooleanBuilder with `n` nulls.
trait NullsExt {
    fn finish_with_nulls(self, n: usize) -> arrow_array::BooleanArray;
}
impl NullsExt for BooleanBuilder {
    fn finish_with_nulls(mut self, n: usize) -> arrow_array::BooleanArray {
        self.append_nulls(n);
        self.finish()
    }
}
