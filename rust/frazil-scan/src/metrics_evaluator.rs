//! [`MetricsEvaluator`]: the row filter against data files' column metrics (value, null and
//! NaN counts, lower and upper bounds), inclusive ("rows might match", Java's
//! `InclusiveMetricsEvaluator`) or strict ("all rows must match", `StrictMetricsEvaluator`), over
//! a `data_file` struct column as the manifest decoder produces it.

use std::cmp::Ordering;
use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, Int64Array, MapArray, StructArray};
use arrow_schema::DataType;
use frazil_values::bound::{compare, Val};
use frazil_values::{Error, PrimitiveType, Result};

use crate::expr::{Expr, Op, Schema};
use crate::leaf::{eval_tree, is_float, prefix_of, Bound, Lits, IN_PREDICATE_LIMIT};
use crate::value::Column;

/// The metrics of one field, per data file.
struct FieldMetrics {
    values: Vec<Option<i64>>,
    nulls: Vec<Option<i64>>,
    nans: Vec<Option<i64>>,
    lower: Vec<Option<u32>>,
    upper: Vec<Option<u32>>,
}

/// The `data_file` metrics columns of a manifest batch.
pub struct MetricsColumns {
    pub len: usize,
    record_count: Option<Int64Array>,
    value_counts: Option<MapArray>,
    null_counts: Option<MapArray>,
    nan_counts: Option<MapArray>,
    lower_bounds: Option<MapArray>,
    upper_bounds: Option<MapArray>,
    lower_values: Column,
    upper_values: Column,
}

pub(crate) fn map_col(s: &StructArray, name: &str) -> Result<Option<MapArray>> {
    match s.column_by_name(name) {
        None => Ok(None),
        Some(c) if *c.data_type() == DataType::Null => Ok(None),
        Some(c) => c
            .as_map_opt()
            .cloned()
            .map(Some)
            .ok_or_else(|| Error::invalid(format!("data_file.{name} must be a map column"))),
    }
}

/// For each row, the index into the map's values of key `id`.
pub(crate) fn lookup(map: &Option<MapArray>, id: i32, n: usize) -> Result<Vec<Option<u32>>> {
    let Some(map) = map else {
        return Ok(vec![None; n]);
    };
    let keys = map
        .keys()
        .as_primitive_opt::<arrow_array::types::Int32Type>()
        .ok_or_else(|| Error::invalid("metrics map keys must be int32 field ids"))?;
    let keys = keys.values();
    let offsets = map.value_offsets();
    Ok((0..n)
        .map(|i| {
            if map.is_null(i) {
                return None;
            }
            let (s, e) = (offsets[i] as usize, offsets[i + 1] as usize);
            keys[s..e]
                .iter()
                .position(|k| *k == id)
                .map(|p| (s + p) as u32)
        })
        .collect())
}

fn counts(map: &Option<MapArray>, id: i32, n: usize) -> Result<Vec<Option<i64>>> {
    let idx = lookup(map, id, n)?;
    let Some(map) = map else {
        return Ok(idx.iter().map(|_| None).collect());
    };
    let values = map
        .values()
        .as_primitive_opt::<Int64Type>()
        .ok_or_else(|| Error::invalid("metrics count values must be int64"))?;
    Ok(idx
        .into_iter()
        .map(|j| j.and_then(|j| (!values.is_null(j as usize)).then(|| values.value(j as usize))))
        .collect())
}

impl MetricsColumns {
    /// A `data_file` struct column, or manifest entries (a struct with a `data_file` column).
    pub fn of(s: &StructArray) -> Result<MetricsColumns> {
        match s.column_by_name("data_file") {
            Some(c) => {
                MetricsColumns::new(c.as_struct_opt().ok_or_else(|| {
                    Error::invalid("the entries' data_file column must be a struct")
                })?)
            }
            None => MetricsColumns::new(s),
        }
    }

    pub fn from_manifest(batch: &arrow_array::RecordBatch) -> Result<MetricsColumns> {
        let data_file = batch
            .column_by_name("data_file")
            .and_then(|c| c.as_struct_opt())
            .ok_or_else(|| Error::invalid("manifest batch has no data_file struct column"))?;
        MetricsColumns::new(data_file)
    }

    pub fn new(data_file: &StructArray) -> Result<MetricsColumns> {
        let lower_bounds = map_col(data_file, "lower_bounds")?;
        let upper_bounds = map_col(data_file, "upper_bounds")?;
        let values_of = |m: &Option<MapArray>| match m {
            Some(m) => Column::new(m.values(), &PrimitiveType::Binary, "metrics bounds"),
            None => Ok(Column::Missing),
        };
        Ok(MetricsColumns {
            len: data_file.len(),
            record_count: data_file
                .column_by_name("record_count")
                .and_then(|c| c.as_primitive_opt::<Int64Type>())
                .cloned(),
            value_counts: map_col(data_file, "value_counts")?,
            null_counts: map_col(data_file, "null_value_counts")?,
            nan_counts: map_col(data_file, "nan_value_counts")?,
            lower_values: values_of(&lower_bounds)?,
            upper_values: values_of(&upper_bounds)?,
            lower_bounds,
            upper_bounds,
        })
    }

    fn field(&self, id: i32) -> Result<FieldMetrics> {
        let n = self.len;
        Ok(FieldMetrics {
            values: counts(&self.value_counts, id, n)?,
            nulls: counts(&self.null_counts, id, n)?,
            nans: counts(&self.nan_counts, id, n)?,
            lower: lookup(&self.lower_bounds, id, n)?,
            upper: lookup(&self.upper_bounds, id, n)?,
        })
    }

    fn record_count(&self, i: usize) -> Option<i64> {
        let rc = self.record_count.as_ref()?;
        (!rc.is_null(i)).then(|| rc.value(i))
    }
}

/// Evaluates a row filter against file metrics.
pub struct MetricsEvaluator<'s> {
    expr: Expr,
    schema: &'s Schema,
    strict: bool,
    sql_nulls: bool,
}

/// One file's metrics of one field, as the Java visitors ask for them.
struct Row<'a> {
    value: Option<i64>,
    null: Option<i64>,
    nan: Option<i64>,
    lower: Bound<'a>,
    upper: Bound<'a>,
    lower_raw: Option<&'a [u8]>,
    upper_raw: Option<&'a [u8]>,
    float: bool,
}

impl Row<'_> {
    fn may_contain_null(&self) -> bool {
        self.null != Some(0)
    }
    fn nulls_only(&self) -> bool {
        matches!((self.value, self.null), (Some(v), Some(n)) if v - n == 0)
    }
    fn may_contain_nan(&self) -> bool {
        self.nan != Some(0)
    }
    fn nans_only(&self) -> bool {
        matches!((self.nan, self.value), (Some(a), Some(v)) if a == v)
    }
    /// Strict: unknown counts are assumed to be non-zero (Java assumes zero when the map lacks
    /// the field; that can call a file "all match" when it is not).
    fn can_contain_nan(&self) -> bool {
        self.float && self.may_contain_nan()
    }
    fn lower(&self) -> Option<Option<Val<'_>>> {
        self.lower.get()
    }
    fn upper(&self) -> Option<Option<Val<'_>>> {
        self.upper.get()
    }
}

impl<'s> MetricsEvaluator<'s> {
    pub fn new(expr: &Expr, schema: &'s Schema, strict: bool) -> Self {
        MetricsEvaluator {
            expr: expr.clone().rewrite_not(schema),
            schema,
            strict,
            sql_nulls: false,
        }
    }

    /// Strict evaluation under SQL's null semantics, where a comparison with null is not true:
    /// Iceberg's negated predicates (`!=`, `NOT IN`, `NOT STARTS WITH`, `NOT NaN`) hold for
    /// null, so a file proven to match them must also have no nulls in the column (as if each
    /// were `col IS NOT NULL AND ...`). What row-level deletes need to remove a file unread
    /// when they delete only the rows whose filter is true.
    pub fn sql_nulls(mut self, on: bool) -> Self {
        self.sql_nulls = on;
        self
    }

    pub fn eval(&self, m: &MetricsColumns) -> Result<Vec<bool>> {
        let n = m.len;
        let mut cache: HashMap<i32, FieldMetrics> = HashMap::new();
        let mut result = eval_tree(&self.expr, n, &mut |p| {
            let info = self.schema.field(p.field_id)?;
            let fm = match cache.entry(p.field_id) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => e.insert(m.field(p.field_id)?),
            };
            let lits = Lits::new(p)?;
            let float = is_float(&info.ty);
            Ok((0..n)
                .map(|i| {
                    let lower_raw =
                        fm.lower[i].and_then(|j| Bound::raw(&m.lower_values, j as usize));
                    let upper_raw =
                        fm.upper[i].and_then(|j| Bound::raw(&m.upper_values, j as usize));
                    let ty = &info.ty;
                    let row = Row {
                        value: fm.values[i],
                        null: fm.nulls[i],
                        nan: fm.nans[i],
                        lower: Bound::from_raw(lower_raw, ty),
                        upper: Bound::from_raw(upper_raw, ty),
                        lower_raw,
                        upper_raw,
                        float,
                    };
                    if self.strict {
                        strict_leaf(p.op, &lits, &row, info.top_level, self.sql_nulls)
                            .unwrap_or(false)
                    } else {
                        inclusive_leaf(p.op, &lits, &row).unwrap_or(true)
                    }
                })
                .collect())
        })?;
        for (i, r) in result.iter_mut().enumerate() {
            match m.record_count(i) {
                // an empty file has no rows to match (inclusive) and all of its rows match (strict)
                Some(0) => *r = self.strict,
                Some(c) if c < 0 => *r = true, // Java: imported files with unknown counts
                _ => {}
            }
        }
        Ok(result)
    }
}

/// Java's `InclusiveEvalVisitor` for one file: `false` only when no row can match.
fn inclusive_leaf(op: Op, lits: &Lits<'_>, r: &Row<'_>) -> Option<bool> {
    let lit = || lits.one();
    Some(match op {
        Op::IsNull => r.may_contain_null(),
        Op::NotNull => !r.nulls_only(),
        Op::IsNaN => !r.nulls_only() && r.may_contain_nan(),
        Op::NotNaN => !r.nans_only(),
        Op::Lt | Op::LtEq => {
            if r.nulls_only() || r.nans_only() {
                return Some(false);
            }
            match r.lower()? {
                Some(lo) if !lo.is_nan() => {
                    let c = compare(&lo, lit()?)?;
                    if op == Op::Lt {
                        c == Ordering::Less
                    } else {
                        c != Ordering::Greater
                    }
                }
                _ => true,
            }
        }
        Op::Gt | Op::GtEq => {
            if r.nulls_only() || r.nans_only() {
                return Some(false);
            }
            match r.upper()? {
                Some(up) => {
                    let c = compare(&up, lit()?)?;
                    if op == Op::Gt {
                        c == Ordering::Greater
                    } else {
                        c != Ordering::Less
                    }
                }
                None => true,
            }
        }
        Op::Eq => {
            if r.nulls_only() || r.nans_only() {
                return Some(false);
            }
            if let Some(Some(lo)) = r.lower() {
                if !lo.is_nan() && compare(&lo, lit()?)? == Ordering::Greater {
                    return Some(false);
                }
            }
            match r.upper()? {
                Some(up) => compare(&up, lit()?)? != Ordering::Less,
                None => true,
            }
        }
        // Java's `InclusiveMetricsEvaluator` never prunes these (bounds need not be values
        // of the column); the planned file set must be the reference's.
        Op::NotEq | Op::NotIn => true,
        Op::In => {
            if r.nulls_only() || r.nans_only() {
                return Some(false);
            }
            if lits.vals.len() > IN_PREDICATE_LIMIT {
                return Some(true);
            }
            match r.lower()? {
                Some(lo) if !lo.is_nan() => lits.any_within(Some(&lo), r.upper()?.as_ref())?,
                _ => true,
            }
        }
        // Truncated bounds are prefixes (lower) or incremented prefixes (upper), so comparing
        // each bound's first |prefix| bytes with the prefix is exact for UTF-8.
        Op::StartsWith => {
            if r.nulls_only() {
                return Some(false);
            }
            let prefix = prefix_of(lits)?;
            let Some(lo) = r.lower_raw else {
                return Some(true);
            };
            if &lo[..prefix.len().min(lo.len())] > prefix {
                return Some(false);
            }
            let Some(up) = r.upper_raw else {
                return Some(true);
            };
            &up[..prefix.len().min(up.len())] >= prefix
        }
        Op::NotStartsWith => {
            if r.may_contain_null() {
                return Some(true);
            }
            let prefix = prefix_of(lits)?;
            match (r.lower_raw, r.upper_raw) {
                (Some(lo), Some(up)) => !(lo.starts_with(prefix) && up.starts_with(prefix)),
                _ => true,
            }
        }
    })
}

/// Java's `StrictEvalVisitor` for one file: `true` only when every row must match.
fn strict_leaf(
    op: Op,
    lits: &Lits<'_>,
    r: &Row<'_>,
    top_level: bool,
    sql_nulls: bool,
) -> Option<bool> {
    let lit = || lits.one();
    // Java only trusts metrics of top-level fields here (nested values may be null through a
    // null parent without being counted).
    if !top_level && !matches!(op, Op::IsNaN | Op::NotNaN) {
        return Some(false);
    }
    let negated = matches!(op, Op::NotEq | Op::NotIn | Op::NotStartsWith | Op::NotNaN);
    if sql_nulls && negated && (!top_level || r.may_contain_null()) {
        return Some(false);
    }
    let unclean = r.may_contain_null() || r.can_contain_nan();
    Some(match op {
        Op::IsNull => r.nulls_only(),
        Op::NotNull => !r.may_contain_null(),
        Op::IsNaN => r.nans_only(),
        Op::NotNaN => !r.may_contain_nan() || r.nulls_only(),
        Op::Lt | Op::LtEq => {
            if unclean {
                return Some(false);
            }
            match r.upper()? {
                Some(up) => {
                    let c = compare(&up, lit()?)?;
                    if op == Op::Lt {
                        c == Ordering::Less
                    } else {
                        c != Ordering::Greater
                    }
                }
                None => false,
            }
        }
        Op::Gt | Op::GtEq => {
            if unclean {
                return Some(false);
            }
            match r.lower()? {
                Some(lo) if !lo.is_nan() => {
                    let c = compare(&lo, lit()?)?;
                    if op == Op::Gt {
                        c == Ordering::Greater
                    } else {
                        c != Ordering::Less
                    }
                }
                _ => false,
            }
        }
        Op::Eq => {
            if unclean {
                return Some(false);
            }
            match (r.lower()?, r.upper()?) {
                (Some(lo), Some(up)) => {
                    compare(&lo, lit()?)? == Ordering::Equal
                        && compare(&up, lit()?)? == Ordering::Equal
                }
                _ => false,
            }
        }
        Op::NotEq => {
            if r.nulls_only() || r.nans_only() {
                return Some(true);
            }
            if let Some(lo) = r.lower()? {
                if lo.is_nan() {
                    return Some(false);
                }
                if compare(&lo, lit()?)? == Ordering::Greater {
                    return Some(true);
                }
            }
            match r.upper()? {
                Some(up) => compare(&up, lit()?)? == Ordering::Less,
                None => false,
            }
        }
        Op::In => {
            if unclean {
                return Some(false);
            }
            match (r.lower()?, r.upper()?) {
                (Some(lo), Some(up)) => {
                    lits.contains(&lo)?
                        && lits.contains(&up)?
                        && compare(&lo, &up)? == Ordering::Equal
                }
                _ => false,
            }
        }
        Op::NotIn => {
            if r.nulls_only() || r.nans_only() {
                return Some(true);
            }
            let lower = r.lower()?;
            if lower.is_some_and(|l| l.is_nan()) {
                return Some(false);
            }
            let upper = r.upper()?;
            (lower.is_some() || upper.is_some())
                && !lits.any_within(lower.as_ref(), upper.as_ref())?
        }
        Op::StartsWith => {
            if r.may_contain_null() {
                return Some(false);
            }
            let prefix = prefix_of(lits)?;
            match (r.lower_raw, r.upper_raw) {
                (Some(lo), Some(up)) => lo.starts_with(prefix) && up.starts_with(prefix),
                _ => false,
            }
        }
        Op::NotStartsWith => {
            if r.nulls_only() {
                return Some(true);
            }
            let prefix = prefix_of(lits)?;
            if let Some(lo) = r.lower_raw {
                if &lo[..prefix.len().min(lo.len())] > prefix {
                    return Some(true);
                }
            }
            if let Some(up) = r.upper_raw {
                if &up[..prefix.len().min(up.len())] < prefix {
                    return Some(true);
                }
            }
            false
        }
    })
}
