//! v4 `content_stats` (spec "Content Stats"): the typed per-field stats structs that replace the
//! v1-v3 metrics maps in manifests. In memory frazil keeps one shape for every version, the
//! maps (bounds in their binary single-value form), so that planning, pruning and metadata
//! tables read v4 stats exactly as they read v3 ones: the v4 writer turns the maps into the
//! struct typed by the manifest's schema, the reader turns the struct back into the maps.
//!
//! IDs: the stats struct of table field `f` has id `base = 10_000 + 200 * f` and its metrics
//! the ids `base + offset` (lower bound 1, upper bound 2, tight bounds 3, value count 4, null
//! count 5, NaN count 6, average value size 7; geo bound coordinates 10 to 17). Writing from
//! maps adapts old stats to the current schema as the spec asks: stats of dropped fields are
//! discarded, added fields have none, and bounds of promoted fields are read with the spec's
//! promotions (`bound::decode`) and written as the promoted type.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Decimal128Builder, FixedSizeBinaryBuilder, Float32Builder,
    Float64Builder, Int32Builder, Int64Builder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, MapArray, StructArray};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields, TimeUnit};
use frazil_values::bound::{self, Val};
use frazil_values::types::{PrimitiveType, Type};
use frazil_values::{decimal, Error, Result};
use serde_json::Value;

use crate::columns::{KeySet, FIELD_ID_KEY};
#[cfg(test)]
use crate::paths;

/// The `data_file` field id of `content_stats`.
pub const CONTENT_STATS_ID: i32 = 146;
pub const LOWER_BOUND: i32 = 1;
pub const UPPER_BOUND: i32 = 2;
pub const TIGHT_BOUNDS: i32 = 3;
pub const VALUE_COUNT: i32 = 4;
pub const NULL_VALUE_COUNT: i32 = 5;
pub const NAN_VALUE_COUNT: i32 = 6;
pub const AVG_VALUE_SIZE: i32 = 7;
/// First offset of the `geo_lower` (x, y, z, m) and `geo_upper` coordinates.
pub const GEO_LOWER: i32 = 10;
pub const GEO_UPPER: i32 = 14;
/// Stats ids of table fields lie in `[MIN_STATS_ID, MAX_STATS_ID)`.
pub const MIN_STATS_ID: i32 = 10_000;
pub const MAX_STATS_ID: i32 = 200_000_000;
const RANGE: i32 = 200;
/// Reserved metadata fields with stats ids of their own.
const RESERVED: [(i32, i32); 2] = [(2_147_483_539, 9000), (2_147_483_540, 9200)];

/// The `base-id` of a table field's stats struct, `None` when it has no stats id.
pub fn stats_base_id(field_id: i32) -> Option<i32> {
    if let Some((_, base)) = RESERVED.iter().find(|(f, _)| *f == field_id) {
        return Some(*base);
    }
    let base = i64::from(field_id) * i64::from(RANGE) + i64::from(MIN_STATS_ID);
    (field_id >= 0 && base < i64::from(MAX_STATS_ID)).then_some(base as i32)
}

/// The table field id of a stats struct's `base-id`, `None` when it is not one.
pub fn field_of_base(base: i32) -> Option<i32> {
    if let Some((field, _)) = RESERVED.iter().find(|(_, b)| *b == base) {
        return Some(*field);
    }
    ((MIN_STATS_ID..MAX_STATS_ID).contains(&base) && (base - MIN_STATS_ID) % RANGE == 0)
        .then_some((base - MIN_STATS_ID) / RANGE)
}

/// A table field whose stats a manifest's `content_stats` holds.
#[derive(Debug, Clone)]
pub struct StatsField {
    pub id: i32,
    pub base: i32,
    /// The full name, made a valid Avro name.
    pub name: String,
    pub ty: PrimitiveType,
    pub optional: bool,
}

impl StatsField {
    fn is_float(&self) -> bool {
        matches!(self.ty, PrimitiveType::Float | PrimitiveType::Double)
    }
    fn is_geo(&self) -> bool {
        matches!(
            self.ty,
            PrimitiveType::Geometry { .. } | PrimitiveType::Geography { .. }
        )
    }
    fn has_avg_size(&self) -> bool {
        self.is_geo()
            || matches!(
                self.ty,
                PrimitiveType::String | PrimitiveType::Binary | PrimitiveType::Variant
            )
    }
    /// Variant bounds are variant objects, not written here (no variant encoder yet).
    fn has_bounds(&self) -> bool {
        !matches!(self.ty, PrimitiveType::Variant | PrimitiveType::Unknown)
    }
}

/// An Avro name from a field's full name: characters Avro names may not hold become `_x<hex>`.
fn avro_name(full: &str) -> String {
    let mut out = String::with_capacity(full.len());
    for (i, c) in full.chars().enumerate() {
        let ok = c.is_ascii_alphabetic() || c == '_' || (i > 0 && c.is_ascii_digit());
        if ok {
            out.push(c);
        } else if i == 0 && c.is_ascii_digit() {
            out.push('_');
            out.push(c);
        } else {
            out.push_str(&format!("_x{:X}", c as u32));
        }
    }
    out
}

/// The fields of a table schema (its JSON) that get a stats struct: every primitive field,
/// nested ones included, whose id has a stats range, and the row lineage fields.
pub fn stats_fields(schema_json: &str) -> Result<Vec<StatsField>> {
    let value: Value = serde_json::from_str(schema_json)
        .map_err(|e| Error::invalid(format!("manifest schema is not JSON: {e}")))?;
    let ty = Type::from_json(&value)
        .map_err(|e| Error::invalid(format!("manifest schema: {}", e.message)))?;
    let mut out = Vec::new();
    walk(&ty, "", &mut out, None);
    // the row lineage metadata columns, whose stats writers keep (optional longs; spec
    // "Content Stats": reserved base ids 9000 and 9200)
    for (id, name) in [
        (2_147_483_539, "_last_updated_sequence_number"),
        (2_147_483_540, "_row_id"),
    ] {
        if let Some(base) = stats_base_id(id) {
            out.push(StatsField {
                id,
                base,
                name: name.to_string(),
                ty: PrimitiveType::Long,
                optional: true,
            });
        }
    }
    Ok(out)
}

fn walk(ty: &Type, prefix: &str, out: &mut Vec<StatsField>, leaf: Option<(i32, bool)>) {
    let join = |name: &str| {
        if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}.{name}")
        }
    };
    match ty {
        Type::Primitive(p) => {
            if let Some((id, optional)) = leaf {
                if let Some(base) = stats_base_id(id) {
                    out.push(StatsField {
                        id,
                        base,
                        name: avro_name(prefix),
                        ty: p.clone(),
                        optional,
                    });
                }
            }
        }
        Type::Struct(s) => {
            for f in &s.fields {
                walk(
                    &f.field_type,
                    &join(&f.name),
                    out,
                    Some((f.id, !f.required)),
                );
            }
        }
        Type::List(l) => walk(
            &l.element,
            &join("element"),
            out,
            Some((l.element_id, !l.element_required)),
        ),
        Type::Map(m) => {
            walk(&m.key, &join("key"), out, Some((m.key_id, false)));
            walk(
                &m.value,
                &join("value"),
                out,
                Some((m.value_id, !m.value_required)),
            );
        }
    }
}

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
    let keys = keys_of(&m, name)?;
    let values = m
        .values()
        .as_primitive_opt::<Int64Type>()
        .ok_or_else(|| Error::invalid(format!("data_file.{name} values must be int64")))?;
    let offsets = m.value_offsets();
    for row in 0..m.len() {
        if m.is_null(row) {
            continue;
        }
        for j in offsets[row] as usize..offsets[row + 1] as usize {
            if let Some(&f) = index.get(&keys.value(j)) {
                if values.is_valid(j) {
                    slot(row, f, values.value(j));
                }
            }
        }
    }
    Ok(())
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
    let keys = keys_of(&m, name)?;
    let values = m
        .values()
        .as_binary_opt::<i32>()
        .ok_or_else(|| Error::invalid(format!("data_file.{name} values must be binary")))?;
    let offsets = m.value_offsets();
    for row in 0..m.len() {
        if m.is_null(row) {
            continue;
        }
        for j in offsets[row] as usize..offsets[row + 1] as usize {
            if let Some(&f) = index.get(&keys.value(j)) {
                if values.is_valid(j) {
                    slot(row, f, values.value(j));
                }
            }
        }
    }
    Ok(())
}

fn meta(id: i32) -> HashMap<String, String> {
    HashMap::from([(FIELD_ID_KEY.to_string(), id.to_string())])
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

// ---------------------------------------------------------------------------------------------
// content_stats -> maps (reading)

fn field_id(f: &Field) -> Option<i32> {
    f.metadata().get(FIELD_ID_KEY)?.parse().ok()
}

/// Single-value binary form of a typed bound (Appendix D), from the Arrow type the Avro type
/// decodes to; geo points as x:y[:z][:m].
fn bound_bytes(a: &dyn Array, i: usize, base: i32, out: &mut Vec<u8>) -> Option<()> {
    out.clear();
    match a.data_type() {
        DataType::Boolean => out.push(u8::from(a.as_boolean().value(i))),
        DataType::Int32 => out.extend(a.as_primitive::<Int32Type>().value(i).to_le_bytes()),
        DataType::Date32 => out.extend(a.as_primitive::<Date32Type>().value(i).to_le_bytes()),
        DataType::Int64 => out.extend(a.as_primitive::<Int64Type>().value(i).to_le_bytes()),
        DataType::Time64(TimeUnit::Microsecond) => out.extend(
            a.as_primitive::<Time64MicrosecondType>()
                .value(i)
                .to_le_bytes(),
        ),
        DataType::Timestamp(TimeUnit::Microsecond, _) => out.extend(
            a.as_primitive::<TimestampMicrosecondType>()
                .value(i)
                .to_le_bytes(),
        ),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => out.extend(
            a.as_primitive::<TimestampNanosecondType>()
                .value(i)
                .to_le_bytes(),
        ),
        DataType::Float32 => out.extend(a.as_primitive::<Float32Type>().value(i).to_le_bytes()),
        DataType::Float64 => out.extend(a.as_primitive::<Float64Type>().value(i).to_le_bytes()),
        DataType::Decimal128(_, _) => {
            let mut buf = [0u8; 16];
            out.extend_from_slice(decimal::min_be_bytes(
                a.as_primitive::<Decimal128Type>().value(i),
                &mut buf,
            ));
        }
        DataType::Utf8 => out.extend_from_slice(a.as_string::<i32>().value(i).as_bytes()),
        DataType::Binary => out.extend_from_slice(a.as_binary::<i32>().value(i)),
        DataType::FixedSizeBinary(_) => out.extend_from_slice(a.as_fixed_size_binary().value(i)),
        DataType::Struct(fields) => {
            // a geo point: coordinates found by id; anything else (a variant) is skipped
            let s = a.as_struct();
            let coord = |k: i32| -> Option<Option<f64>> {
                let pos = fields.iter().position(|f| {
                    field_id(f)
                        .is_some_and(|id| id == base + GEO_LOWER + k || id == base + GEO_UPPER + k)
                })?;
                let c = s.column(pos).as_primitive_opt::<Float64Type>()?;
                Some(c.is_valid(i).then(|| c.value(i)))
            };
            let (x, y) = (coord(0)??, coord(1)??);
            let (z, m) = (coord(2).flatten(), coord(3).flatten());
            out.extend(x.to_le_bytes());
            out.extend(y.to_le_bytes());
            match (z, m) {
                (None, None) => {}
                (Some(z), None) => out.extend(z.to_le_bytes()),
                (z, Some(m)) => {
                    out.extend(z.unwrap_or(f64::NAN).to_le_bytes());
                    out.extend(m.to_le_bytes());
                }
            }
        }
        _ => return None,
    }
    Some(())
}

/// Map entries being built: per row, (key, value) pairs.
struct MapParts<V> {
    offsets: Vec<i32>,
    keys: Vec<i32>,
    values: Vec<V>,
    valid: Vec<bool>,
}

impl<V> MapParts<V> {
    fn new(n: usize) -> Self {
        MapParts {
            offsets: {
                let mut o = Vec::with_capacity(n + 1);
                o.push(0);
                o
            },
            keys: Vec::new(),
            values: Vec::new(),
            valid: Vec::with_capacity(n),
        }
    }
    fn end_row(&mut self) {
        let start = self.offsets.last().copied().unwrap_or(0);
        let end = self.keys.len() as i32;
        self.valid.push(end > start);
        self.offsets.push(end);
    }
    fn finish(self, dt: &DataType, values: ArrayRef) -> Result<ArrayRef> {
        let DataType::Map(entries, sorted) = dt else {
            return Err(Error::invalid("a stats map column is not a map"));
        };
        let DataType::Struct(kv) = entries.data_type() else {
            return Err(Error::invalid("a stats map's entries are not a struct"));
        };
        let offsets = self.offsets;
        let s = StructArray::try_new(
            kv.clone(),
            vec![Arc::new(Int32Array::from(self.keys)), values],
            None,
        )
        .map_err(|e| Error::invalid(e.to_string()))?;
        let m = MapArray::try_new(
            entries.clone(),
            OffsetBuffer::new(offsets.into()),
            s,
            Some(NullBuffer::from(self.valid)),
            *sorted,
        )
        .map_err(|e| Error::invalid(e.to_string()))?;
        Ok(Arc::new(m))
    }
}

/// A decoded stats struct: its table field id and the positions of its metrics.
struct Resolved {
    field: i32,
    column: usize,
    at: [Option<usize>; 8],
}

/// Checks the ids of a decoded `content_stats` struct and finds each metric by id.
fn resolve(fields: &Fields) -> Result<Vec<Resolved>> {
    let mut seen: HashMap<i32, &str> = HashMap::new();
    let mut out = Vec::with_capacity(fields.len());
    for (column, f) in fields.iter().enumerate() {
        let base = field_id(f).ok_or_else(|| {
            Error::decode(format!(
                "content_stats: stats struct {} has no field id",
                f.name()
            ))
        })?;
        let field = field_of_base(base).ok_or_else(|| {
            Error::decode(format!(
                "content_stats: {} has id {base}, which is not a stats struct id \
                 (10_000 + 200 * field id, below 200_000_000)",
                f.name()
            ))
        })?;
        if let Some(other) = seen.insert(base, f.name()) {
            return Err(Error::decode(format!(
                "content_stats: stats structs {other} and {} both have id {base}",
                f.name()
            )));
        }
        let DataType::Struct(children) = f.data_type() else {
            return Err(Error::decode(format!(
                "content_stats: {} is not a struct",
                f.name()
            )));
        };
        let mut at = [None; 8];
        for (k, c) in children.iter().enumerate() {
            let id = field_id(c).ok_or_else(|| {
                Error::decode(format!(
                    "content_stats: {}.{} has no field id",
                    f.name(),
                    c.name()
                ))
            })?;
            let offset = id - base;
            if !(1..RANGE).contains(&offset) {
                return Err(Error::decode(format!(
                    "content_stats: {}.{} has id {id}, outside its struct's range [{base}, {})",
                    f.name(),
                    c.name(),
                    base + RANGE
                )));
            }
            if (1..=7).contains(&offset) {
                let slot = &mut at[offset as usize];
                if slot.is_some() {
                    return Err(Error::decode(format!(
                        "content_stats: {} has two fields with id {id}",
                        f.name()
                    )));
                }
                *slot = Some(k);
            }
        }
        out.push(Resolved { field, column, at });
    }
    Ok(out)
}

/// Replaces the stats maps of decoded `data_file` rows by those the `content_stats` column
/// holds (when the file has one) and drops that column; `keep` limits the maps to some ids.
pub fn to_maps(df: &StructArray, keep: Option<&KeySet>) -> Result<StructArray> {
    let Some(pos) = df.fields().iter().position(|f| f.name() == "content_stats") else {
        return Ok(df.clone());
    };
    let stats = df
        .column(pos)
        .as_struct_opt()
        .ok_or_else(|| Error::decode("content_stats is not a struct"))?;
    let resolved = resolve(stats.fields())?;
    let resolved: Vec<Resolved> = match keep {
        Some(k) => resolved
            .into_iter()
            .filter(|r| k.contains(r.field))
            .collect(),
        None => resolved,
    };
    let n = df.len();
    let mut fields: Vec<Arc<Field>> = Vec::with_capacity(df.num_columns());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(df.num_columns());
    let v4 = !stats.fields().is_empty();
    for (i, f) in df.fields().iter().enumerate() {
        if i == pos {
            continue;
        }
        let offset = match f.name().as_str() {
            "value_counts" => Some(VALUE_COUNT),
            "null_value_counts" => Some(NULL_VALUE_COUNT),
            "nan_value_counts" => Some(NAN_VALUE_COUNT),
            "lower_bounds" => Some(LOWER_BOUND),
            "upper_bounds" => Some(UPPER_BOUND),
            _ => None,
        };
        let column = match offset {
            Some(o) if v4 => {
                let built = if o == LOWER_BOUND || o == UPPER_BOUND {
                    bounds_map(stats, &resolved, o, f.data_type(), n)?
                } else {
                    counts_map(stats, &resolved, o, f.data_type(), n)?
                };
                fields.push(Arc::new(
                    f.as_ref().clone().with_data_type(built.data_type().clone()),
                ));
                columns.push(built);
                continue;
            }
            _ => df.column(i).clone(),
        };
        fields.push(f.clone());
        columns.push(column);
    }
    StructArray::try_new(Fields::from(fields), columns, df.nulls().cloned())
        .map_err(|e| Error::decode(e.to_string()))
}

fn counts_map(
    stats: &StructArray,
    resolved: &[Resolved],
    offset: i32,
    dt: &DataType,
    n: usize,
) -> Result<ArrayRef> {
    let cols: Vec<(i32, &StructArray, Option<&Int64Array>)> = resolved
        .iter()
        .map(|r| {
            let s = stats.column(r.column).as_struct();
            let c = r.at[offset as usize].and_then(|k| s.column(k).as_primitive_opt::<Int64Type>());
            (r.field, s, c)
        })
        .collect();
    let mut parts = MapParts::<i64>::new(n);
    for row in 0..n {
        for (field, s, c) in &cols {
            if let Some(c) = c {
                if s.is_valid(row) && c.is_valid(row) {
                    parts.keys.push(*field);
                    parts.values.push(c.value(row));
                }
            }
        }
        parts.end_row();
    }
    let values = Arc::new(Int64Array::from(std::mem::take(&mut parts.values)));
    parts.finish(dt, values)
}

fn bounds_map(
    stats: &StructArray,
    resolved: &[Resolved],
    offset: i32,
    dt: &DataType,
    n: usize,
) -> Result<ArrayRef> {
    let cols: Vec<(i32, i32, &StructArray, Option<&ArrayRef>)> = resolved
        .iter()
        .map(|r| {
            let s = stats.column(r.column).as_struct();
            let c = r.at[offset as usize].map(|k| s.column(k));
            (r.field, stats_base_id(r.field).unwrap_or(0), s, c)
        })
        .collect();
    let mut parts = MapParts::<()>::new(n);
    let mut values = BinaryBuilder::new();
    let mut buf = Vec::new();
    for row in 0..n {
        for (field, base, s, c) in &cols {
            if let Some(c) = c {
                if s.is_valid(row)
                    && c.is_valid(row)
                    && bound_bytes(c.as_ref(), row, *base, &mut buf).is_some()
                {
                    parts.keys.push(*field);
                    values.append_value(&buf);
                }
            }
        }
        parts.end_row();
    }
    parts.finish(dt, Arc::new(values.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{read_manifest, ReadOptions};
    use crate::write::{write_manifest, WriteOptions};
    use arrow_array::RecordBatch;

    fn java(name: &str) -> RecordBatch {
        let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
        read_manifest(&std::fs::read(path).unwrap(), &ReadOptions::default()).unwrap()
    }

    fn as_v4(source: &RecordBatch, location: Option<&str>) -> Vec<u8> {
        let meta = source.schema().metadata().clone();
        let mut metadata: Vec<(String, String)> =
            ["schema", "partition-spec", "partition-spec-id", "content"]
                .iter()
                .filter_map(|k| Some((k.to_string(), meta.get(k)?.clone())))
                .collect();
        metadata.push(("schema-id".into(), "0".into()));
        metadata.push(("format-version".into(), "4".into()));
        let options = WriteOptions {
            format_version: 4,
            codec: crate::avro::Codec::Null,
            metadata,
            table_location: location.map(str::to_string),
        };
        write_manifest(&[StructArray::from(source.clone())], &options).unwrap()
    }

    #[test]
    fn ids_follow_the_spec_table() {
        assert_eq!(stats_base_id(2), Some(10_400));
        assert_eq!(field_of_base(10_400), Some(2));
        assert_eq!(stats_base_id(2_147_483_540), Some(9200));
        assert_eq!(field_of_base(9000), Some(2_147_483_539));
        assert_eq!(field_of_base(10_401), None);
        assert_eq!(stats_base_id(999_950), None);
    }

    /// Java's manifests written as v4 and read back: the same metrics maps (the types file
    /// has int, long, string, date, timestamp(tz), decimals, boolean, binary, float and double
    /// columns with nulls, NaN and -0.0).
    #[test]
    fn v4_round_trip_keeps_the_metrics() {
        for name in [
            "v2-data.avro",
            "v3-data.avro",
            "types-data.avro",
            "v3-deletes.avro",
        ] {
            round_trip(name);
        }
    }

    fn round_trip(name: &str) {
        let source = java(name);
        let bytes = as_v4(&source, None);
        let back = read_manifest(&bytes, &ReadOptions::default()).unwrap();
        let (a, b) = (
            source.column_by_name("data_file").unwrap().as_struct(),
            back.column_by_name("data_file").unwrap().as_struct(),
        );
        for name in [
            "value_counts",
            "null_value_counts",
            "nan_value_counts",
            "lower_bounds",
            "upper_bounds",
            "file_path",
        ] {
            let (x, y) = (
                a.column_by_name(name).unwrap(),
                b.column_by_name(name).unwrap(),
            );
            for row in 0..a.len() {
                // the entries of a row, as text (the map arrays' layouts may differ)
                let entries = |m: &ArrayRef| -> Vec<(i32, String)> {
                    let e = m.as_map().value(row);
                    let keys = e.column(0).as_primitive::<Int32Type>();
                    let mut out: Vec<(i32, String)> = (0..e.len())
                        .map(|j| (keys.value(j), format!("{:?}", e.column(1).slice(j, 1))))
                        .collect();
                    out.sort();
                    out
                };
                if name == "file_path" {
                    assert_eq!(x.slice(row, 1).to_data(), y.slice(row, 1).to_data());
                } else if x.is_valid(row) && x.as_map().value(row).len() > 0 {
                    assert_eq!(entries(x), entries(y), "{name} row {row}");
                }
            }
        }
    }

    #[test]
    fn v4_paths_are_relative_and_resolve() {
        let source = java("v2-data.avro");
        let df = source.column_by_name("data_file").unwrap().as_struct();
        let path = df
            .column_by_name("file_path")
            .unwrap()
            .as_string::<i32>()
            .value(0)
            .to_string();
        let (location, _) = path.rsplit_once('/').unwrap();
        let (location, _) = location.rsplit_once('/').unwrap();
        let location = format!("file://{location}");
        let bytes = as_v4(&source, Some(&location));
        let raw = read_manifest(&bytes, &ReadOptions::default()).unwrap();
        let raw_path = raw
            .column_by_name("data_file")
            .unwrap()
            .as_struct()
            .column_by_name("file_path")
            .unwrap()
            .as_string::<i32>()
            .value(0)
            .to_string();
        assert!(
            !paths::has_scheme(&raw_path) && path.ends_with(&format!("/{raw_path}")),
            "{raw_path}"
        );
        let moved = ReadOptions {
            table_location: Some("s3://elsewhere/t".into()),
            ..Default::default()
        };
        let back = read_manifest(&bytes, &moved).unwrap();
        let got = back
            .column_by_name("data_file")
            .unwrap()
            .as_struct()
            .column_by_name("file_path")
            .unwrap()
            .as_string::<i32>()
            .value(0)
            .to_string();
        assert_eq!(got, format!("s3://elsewhere/t/{raw_path}"));
    }
}

#[cfg(test)]
mod geo_tests {
    use super::*;
    use arrow_array::builder::{BinaryBuilder, Int32Builder, Int64Builder, MapBuilder};
    use arrow_array::new_null_array;

    fn point(c: &[f64]) -> Vec<u8> {
        c.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    /// The spec's example: an optional geometry field 4 has stats ids 10_800, bounds 10_801 and
    /// 10_802 with coordinates at offsets 10-13 and 14-17, no tight_bounds or NaN count.
    #[test]
    fn geo_bounds_use_the_spec_struct_ids_and_round_trip() {
        let schema = r#"{"type":"struct","schema-id":0,"fields":[
            {"id":4,"name":"location","required":false,"type":"geometry"}]}"#;
        let fields = stats_fields(schema).unwrap();
        assert_eq!(fields.len(), 3); // and the row lineage fields
        assert_eq!((fields[1].base, fields[2].base), (9000, 9200));
        assert_eq!(fields[0].base, 10_800);
        // three files: x:y, x:y:z, x:y:NaN:m
        let lows = [
            point(&[1.0, 2.0]),
            point(&[1.0, 2.0, 3.0]),
            point(&[1.0, 2.0, f64::NAN, 4.0]),
        ];
        let mut lower = MapBuilder::new(None, Int32Builder::new(), BinaryBuilder::new());
        let mut upper = MapBuilder::new(None, Int32Builder::new(), BinaryBuilder::new());
        let mut counts = MapBuilder::new(None, Int32Builder::new(), Int64Builder::new());
        for low in &lows {
            lower.keys().append_value(4);
            lower.values().append_value(low);
            lower.append(true).unwrap();
            upper.keys().append_value(4);
            upper.values().append_value(point(&[9.0, 8.0]));
            upper.append(true).unwrap();
            counts.keys().append_value(4);
            counts.values().append_value(5);
            counts.append(true).unwrap();
        }
        let (lower, upper, counts) = (lower.finish(), upper.finish(), counts.finish());
        let df = StructArray::from(vec![
            (
                Arc::new(Field::new("value_counts", counts.data_type().clone(), true)),
                Arc::new(counts.clone()) as ArrayRef,
            ),
            (
                Arc::new(Field::new("lower_bounds", lower.data_type().clone(), true)),
                Arc::new(lower.clone()) as ArrayRef,
            ),
            (
                Arc::new(Field::new("upper_bounds", upper.data_type().clone(), true)),
                Arc::new(upper.clone()) as ArrayRef,
            ),
        ]);
        let cs = from_maps(&df, &fields).unwrap();
        let loc = cs.column(0).as_struct();
        let ids: Vec<i32> = loc.fields().iter().map(|f| field_id(f).unwrap()).collect();
        assert_eq!(ids, [10_801, 10_802, 10_804, 10_805, 10_807]);
        let lb = loc.column(0).as_struct();
        let coord_ids: Vec<i32> = lb.fields().iter().map(|f| field_id(f).unwrap()).collect();
        assert_eq!(coord_ids, [10_810, 10_811, 10_812, 10_813]);
        let ub = loc.column(1).as_struct();
        let coord_ids: Vec<i32> = ub.fields().iter().map(|f| field_id(f).unwrap()).collect();
        assert_eq!(coord_ids, [10_814, 10_815, 10_816, 10_817]);
        let z = lb.column(2).as_primitive::<Float64Type>();
        assert!(z.is_null(0) && z.value(1) == 3.0 && z.is_null(2)); // NaN z means unset
                                                                    // back to the maps: the same binary points
        let with_stats = StructArray::from(vec![
            (
                Arc::new(Field::new("value_counts", counts.data_type().clone(), true)),
                Arc::new(counts.clone()) as ArrayRef,
            ),
            (
                Arc::new(Field::new("lower_bounds", lower.data_type().clone(), true)),
                new_null_array(lower.data_type(), 3),
            ),
            (
                Arc::new(Field::new("upper_bounds", upper.data_type().clone(), true)),
                new_null_array(upper.data_type(), 3),
            ),
            (
                Arc::new(Field::new("content_stats", cs.data_type().clone(), true)),
                Arc::new(cs) as ArrayRef,
            ),
        ]);
        let back = to_maps(&with_stats, None).unwrap();
        assert!(back.column_by_name("content_stats").is_none());
        let got = back.column_by_name("lower_bounds").unwrap().as_map();
        for (row, low) in lows.iter().enumerate() {
            let entry = got.value(row);
            let v = entry.column(1).as_binary::<i32>();
            let want = if row == 2 {
                point(&[1.0, 2.0, f64::NAN, 4.0])
            } else {
                low.clone()
            };
            assert_eq!(v.value(0).len(), want.len(), "row {row}");
            assert_eq!(&v.value(0)[..16], &want[..16]);
            assert_eq!(&v.value(0)[want.len() - 8..], &want[want.len() - 8..]);
        }
        let counts_back = back.column_by_name("value_counts").unwrap().as_map();
        assert_eq!(
            counts_back
                .value(1)
                .column(1)
                .as_primitive::<Int64Type>()
                .value(0),
            5
        );
    }
}
