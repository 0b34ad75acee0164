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

mod from_maps;
#[cfg(test)]
mod tests;
mod to_maps;

pub use from_maps::from_maps;
pub use to_maps::to_maps;

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

/// Arrow field metadata carrying a field id.
pub(crate) fn meta(id: i32) -> HashMap<String, String> {
    HashMap::from([(FIELD_ID_KEY.to_string(), id.to_string())])
}

/// The field id an Arrow field carries.
pub(crate) fn field_id(f: &Field) -> Option<i32> {
    f.metadata().get(FIELD_ID_KEY)?.parse().ok()
}
