//! Evaluators over Arrow columns. Each predicate is evaluated for all rows into a boolean vector
//! and the expression tree combines those vectors; no row allocates.
//!
//! * [`ManifestEvaluator`]: a spec's inclusive projection against the manifest list's partition
//!   field summaries (Java's `ManifestEvaluator`).
//! * [`PartitionEvaluator`]: a partition predicate against `data_file.partition` tuples (Java's
//!   `Evaluator` on a partition struct).
//! * [`MetricsEvaluator`]: the row filter against column metrics, inclusive ("rows might match",
//!   Java's `InclusiveMetricsEvaluator`) or strict ("all rows match", `StrictMetricsEvaluator`).

use std::cmp::Ordering;
use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, MapArray, StructArray};
use arrow_schema::DataType;
use frazil_values::{Error, PrimitiveType, Result};

use crate::expr::{Expr, Op, Predicate, Schema};
use crate::value::{compare, decode_bound, lit_val, Column, Val};

/// Java skips bound checks for larger IN sets (`IN_PREDICATE_LIMIT`); kept so that the planned
/// file set is the reference's.
pub const IN_PREDICATE_LIMIT: usize = 200;

/// Evaluates `expr` over `n` rows, asking `leaf` for each predicate's vector. AND and OR skip
/// their right side when the left decides every row.
pub fn eval_tree<F>(expr: &Expr, n: usize, leaf: &mut F) -> Result<Vec<bool>>
where
    F: FnMut(&Predicate) -> Result<Vec<bool>>,
{
    Ok(match expr {
        Expr::True => vec![true; n],
        Expr::False => vec![false; n],
        Expr::Pred(p) => leaf(p)?,
        Expr::Not(a) => {
            let mut v = eval_tree(a, n, leaf)?;
            v.iter_mut().for_each(|b| *b = !*b);
            v
        }
        Expr::And(a, b) => {
            let mut l = eval_tree(a, n, leaf)?;
            if l.iter().any(|x| *x) {
                let r = eval_tree(b, n, leaf)?;
                l.iter_mut().zip(r).for_each(|(x, y)| *x &= y);
            }
            l
        }
        Expr::Or(a, b) => {
            let mut l = eval_tree(a, n, leaf)?;
            if l.iter().any(|x| !*x) {
                let r = eval_tree(b, n, leaf)?;
                l.iter_mut().zip(r).for_each(|(x, y)| *x |= y);
            }
            l
        }
    })
}

/// A predicate's literals as comparable values.
struct Lits<'a> {
    vals: Vec<Val<'a>>,
}

impl<'a> Lits<'a> {
    fn new(p: &'a Predicate) -> Result<Lits<'a>> {
        let vals = p
            .literals
            .iter()
            .map(|l| {
                lit_val(l).ok_or_else(|| {
                    Error::unsupported(format!("{} literals cannot be compared", l.kind()))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Lits { vals })
    }

    fn one(&self) -> Option<&Val<'a>> {
        self.vals.first()
    }

    /// Set membership; the literals are sorted (see `Predicate::normalized`).
    fn contains(&self, v: &Val<'_>) -> Option<bool> {
        let mut err = false;
        let found = self
            .vals
            .binary_search_by(|x| {
                compare(x, v).unwrap_or_else(|| {
                    err = true;
                    Ordering::Equal
                })
            })
            .is_ok();
        (!err).then_some(found)
    }

    /// Whether any literal lies in `[lower, upper]` (an absent side is unbounded).
    fn any_within(&self, lower: Option<&Val<'_>>, upper: Option<&Val<'_>>) -> Option<bool> {
        for l in &self.vals {
            let above = match lower {
                Some(lo) => compare(lo, l)? != Ordering::Greater,
                None => true,
            };
            let below = match upper {
                Some(up) => compare(up, l)? != Ordering::Less,
                None => true,
            };
            if above && below {
                return Some(true);
            }
        }
        Some(false)
    }
}

fn prefix_of<'a>(lits: &Lits<'a>) -> Option<&'a [u8]> {
    match lits.one() {
        Some(Val::Bytes(b)) => Some(b),
        _ => None,
    }
}

/// `op` on a non-null value, exactly; `None` when the value cannot be compared.
fn eval_value(op: Op, lits: &Lits<'_>, v: &Val<'_>) -> Option<bool> {
    let cmp = || compare(v, lits.one()?);
    Some(match op {
        Op::IsNull => false,
        Op::NotNull => true,
        Op::IsNaN => v.is_nan(),
        Op::NotNaN => !v.is_nan(),
        Op::Lt => cmp()? == Ordering::Less,
        Op::LtEq => cmp()? != Ordering::Greater,
        Op::Gt => cmp()? == Ordering::Greater,
        Op::GtEq => cmp()? != Ordering::Less,
        Op::Eq => cmp()? == Ordering::Equal,
        Op::NotEq => cmp()? != Ordering::Equal,
        Op::In => lits.contains(v)?,
        Op::NotIn => !lits.contains(v)?,
        Op::StartsWith | Op::NotStartsWith => {
            let (Val::Bytes(b), Some(prefix)) = (v, prefix_of(lits)) else {
                return None;
            };
            b.starts_with(prefix) == (op == Op::StartsWith)
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Partition tuples

/// The partition tuples of a manifest's entries, by partition field id.
pub struct PartitionColumns {
    pub len: usize,
    columns: HashMap<i32, Column>,
}

fn field_id_of(f: &arrow_schema::Field) -> Option<i32> {
    f.metadata().get("PARQUET:field_id")?.parse().ok()
}

impl PartitionColumns {
    /// Reads the partition struct (`data_file.partition`), matching children to the partition
    /// schema by field id (Arrow field metadata), else by name.
    pub fn new(partition: &StructArray, schema: &Schema) -> Result<PartitionColumns> {
        let len = partition.len();
        let mut columns = HashMap::new();
        let fields = partition.fields();
        for info in schema.fields.values() {
            let pos = fields
                .iter()
                .position(|f| field_id_of(f) == Some(info.id))
                .or_else(|| fields.iter().position(|f| f.name() == &info.name));
            let col = match pos {
                None => Column::Missing,
                Some(_) if info.ty == PrimitiveType::Unknown => Column::Missing,
                Some(i) => {
                    let mut array: ArrayRef = partition.column(i).clone();
                    // A null tuple makes every field null.
                    if let Some(nulls) = partition.nulls() {
                        let merged = arrow_buffer::NullBuffer::union(Some(nulls), array.nulls());
                        let data = array
                            .to_data()
                            .into_builder()
                            .nulls(merged)
                            .build()
                            .map_err(|e| Error::invalid(format!("partition column: {e}")))?;
                        array = arrow_array::make_array(data);
                    }
                    Column::new(
                        &array,
                        &info.ty,
                        &format!("partition field {:?}", info.name),
                    )?
                }
            };
            columns.insert(info.id, col);
        }
        Ok(PartitionColumns { len, columns })
    }

    /// The partition struct of a manifest batch (`data_file.partition`).
    pub fn from_manifest(
        batch: &arrow_array::RecordBatch,
        schema: &Schema,
    ) -> Result<PartitionColumns> {
        let n = batch.num_rows();
        let data_file = batch
            .column_by_name("data_file")
            .and_then(|c| c.as_struct_opt())
            .ok_or_else(|| Error::invalid("manifest batch has no data_file struct column"))?;
        match data_file
            .column_by_name("partition")
            .and_then(|c| c.as_struct_opt())
        {
            Some(p) => PartitionColumns::new(p, schema),
            None => Ok(PartitionColumns {
                len: n,
                columns: schema
                    .fields
                    .keys()
                    .map(|id| (*id, Column::Missing))
                    .collect(),
            }),
        }
    }

    pub fn column(&self, id: i32) -> Option<&Column> {
        self.columns.get(&id)
    }
}

/// Filters partition tuples with an expression over partition field ids.
pub struct PartitionEvaluator;

impl PartitionEvaluator {
    /// Java's `Evaluator` on partition tuples: a null value sorts before every value (so
    /// `p < X` holds for null, `p > X` does not), null is never in a set and never starts with
    /// a prefix. This is the reference's file selection; residuals use stricter null rules.
    /// Fields that are missing or cannot be compared might match.
    pub fn eval(expr: &Expr, cols: &PartitionColumns) -> Result<Vec<bool>> {
        let n = cols.len;
        eval_tree(expr, n, &mut |p| {
            let lits = Lits::new(p)?;
            let Some(col) = cols.column(p.field_id).filter(|c| !c.is_missing()) else {
                return Ok(vec![true; n]);
            };
            Ok((0..n)
                .map(|i| match col.get(i) {
                    Some(v) => eval_value(p.op, &lits, &v).unwrap_or(true),
                    None => matches!(
                        p.op,
                        Op::IsNull
                            | Op::NotNaN
                            | Op::Lt
                            | Op::LtEq
                            | Op::NotEq
                            | Op::NotIn
                            | Op::NotStartsWith
                    ),
                })
                .collect())
        })
    }

    /// For residuals: per row, whether `p` certainly holds (`Some(true)`), certainly fails
    /// (`Some(false)`), or is undecided. A null value only decides null tests and the positive
    /// comparisons (null never satisfies them); negated comparisons on null are left to the
    /// reader, whose null semantics may differ (SQL's three-valued logic).
    pub fn decide(
        p: &Predicate,
        cols: &PartitionColumns,
        out: &mut [Option<bool>],
        strict: bool,
    ) -> Result<()> {
        let lits = Lits::new(p)?;
        let Some(col) = cols.column(p.field_id).filter(|c| !c.is_missing()) else {
            return Ok(());
        };
        for (i, slot) in out.iter_mut().enumerate() {
            let r = match col.get(i) {
                Some(v) => eval_value(p.op, &lits, &v),
                None => match p.op {
                    Op::IsNull => Some(true),
                    Op::NotNull
                    | Op::IsNaN
                    | Op::Lt
                    | Op::LtEq
                    | Op::Gt
                    | Op::GtEq
                    | Op::Eq
                    | Op::In
                    | Op::StartsWith => Some(false),
                    _ => None,
                },
            };
            // strict projections only prove truth, inclusive ones only falsity
            match (r, strict) {
                (Some(true), true) => *slot = Some(true),
                (Some(false), false) if slot.is_none() => *slot = Some(false),
                _ => {}
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Manifest list partition summaries

/// Prunes manifests with an inclusive partition projection and the manifest list's
/// `partitions` summaries (positions follow the spec's fields).
pub struct ManifestEvaluator<'s> {
    expr: Expr,
    /// partition field id -> (position in the spec, result type)
    positions: HashMap<i32, (usize, &'s PrimitiveType)>,
}

struct Summaries<'a> {
    list: &'a arrow_array::ListArray,
    contains_null: Option<&'a BooleanArray>,
    contains_nan: Option<&'a BooleanArray>,
    lower: Column,
    upper: Column,
}

struct Summary<'a> {
    contains_null: bool,
    contains_nan: Option<bool>,
    lower: Bound<'a>,
    upper: Bound<'a>,
}

#[derive(Clone, Copy)]
enum Bound<'a> {
    Absent,
    /// Present but unreadable: no conclusion may be drawn from it.
    Unreadable,
    Val(Val<'a>),
}

impl<'a> Bound<'a> {
    fn read(col: &'a Column, i: usize, ty: &PrimitiveType) -> Bound<'a> {
        match col.get(i) {
            None => Bound::Absent,
            Some(Val::Bytes(b)) => match decode_bound(b, ty) {
                Some(v) => Bound::Val(v),
                None => Bound::Unreadable,
            },
            Some(_) => Bound::Unreadable,
        }
    }

    fn raw(col: &'a Column, i: usize) -> Option<&'a [u8]> {
        match col.get(i) {
            Some(Val::Bytes(b)) => Some(b),
            _ => None,
        }
    }
}

fn is_float(ty: &PrimitiveType) -> bool {
    matches!(ty, PrimitiveType::Float | PrimitiveType::Double)
}

impl<'s> ManifestEvaluator<'s> {
    /// `expr` is the inclusive projection of the row filter onto `spec`; `partition_schema` the
    /// spec's partition schema.
    pub fn new(
        expr: Expr,
        spec: &crate::project::PartitionSpec,
        partition_schema: &'s Schema,
    ) -> Self {
        let positions = spec
            .fields
            .iter()
            .enumerate()
            .filter_map(|(pos, f)| {
                let info = partition_schema.fields.get(&f.field_id)?;
                Some((f.field_id, (pos, &info.ty)))
            })
            .collect();
        ManifestEvaluator {
            expr: expr.rewrite_not(),
            positions,
        }
    }

    /// Evaluates the manifest list rows `rows` (all rows when `None`) of `manifest_list`.
    pub fn eval(
        &self,
        manifest_list: &arrow_array::RecordBatch,
        rows: &[usize],
    ) -> Result<Vec<bool>> {
        let n = rows.len();
        let Some(partitions) = manifest_list.column_by_name("partitions") else {
            return Ok(vec![true; n]);
        };
        let list = partitions
            .as_list_opt::<i32>()
            .ok_or_else(|| Error::invalid("manifest list \"partitions\" must be a list"))?;
        let values = list
            .values()
            .as_struct_opt()
            .ok_or_else(|| Error::invalid("manifest list \"partitions\" must hold structs"))?;
        let bool_col = |name: &str| values.column_by_name(name).and_then(|c| c.as_boolean_opt());
        let bytes_col = |name: &str| -> Result<Column> {
            match values.column_by_name(name) {
                Some(c) => Column::new(c, &PrimitiveType::Binary, name),
                None => Ok(Column::Missing),
            }
        };
        let s = Summaries {
            list,
            contains_null: bool_col("contains_null"),
            contains_nan: bool_col("contains_nan"),
            lower: bytes_col("lower_bound")?,
            upper: bytes_col("upper_bound")?,
        };
        eval_tree(&self.expr, n, &mut |p| {
            let lits = Lits::new(p)?;
            let Some(&(pos, ty)) = self.positions.get(&p.field_id) else {
                return Ok(vec![true; n]);
            };
            Ok(rows
                .iter()
                .map(|&row| self.leaf(p, &lits, &s, row, pos, ty).unwrap_or(true))
                .collect())
        })
    }

    fn summary<'a>(
        s: &'a Summaries<'a>,
        row: usize,
        pos: usize,
        ty: &PrimitiveType,
    ) -> Option<Summary<'a>> {
        if s.list.is_null(row) {
            return None;
        }
        let offsets = s.list.value_offsets();
        let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
        let j = start + pos;
        if j >= end {
            return None;
        }
        if s.list.values().is_null(j) {
            return None;
        }
        Some(Summary {
            // an unknown contains_null must be assumed true
            contains_null: s.contains_null.is_none_or(|c| c.is_null(j) || c.value(j)),
            contains_nan: s
                .contains_nan
                .and_then(|c| (!c.is_null(j)).then(|| c.value(j))),
            lower: Bound::read(&s.lower, j, ty),
            upper: Bound::read(&s.upper, j, ty),
        })
    }

    /// `None` means "might match" (no summary, unreadable bound, incomparable values).
    fn leaf(
        &self,
        p: &Predicate,
        lits: &Lits<'_>,
        s: &Summaries<'_>,
        row: usize,
        pos: usize,
        ty: &PrimitiveType,
    ) -> Option<bool> {
        let sm = Self::summary(s, row, pos, ty)?;
        let all_null = || {
            let all = sm.contains_null && matches!(sm.lower, Bound::Absent);
            if all && is_float(ty) {
                sm.contains_nan == Some(false)
            } else {
                all
            }
        };
        let lit = || lits.one();
        let lower = || match sm.lower {
            Bound::Absent => Some(None),
            Bound::Unreadable => None,
            Bound::Val(v) => Some(Some(v)),
        };
        let upper = || match sm.upper {
            Bound::Absent => Some(None),
            Bound::Unreadable => None,
            Bound::Val(v) => Some(Some(v)),
        };
        Some(match p.op {
            Op::IsNull => sm.contains_null,
            Op::NotNull => !all_null(),
            Op::IsNaN => sm.contains_nan != Some(false) && !all_null(),
            Op::NotNaN => {
                !(sm.contains_nan == Some(true)
                    && !sm.contains_null
                    && matches!(sm.lower, Bound::Absent))
            }
            Op::Lt | Op::LtEq => match lower()? {
                None => false, // all values are null (or NaN)
                Some(lo) => {
                    let c = compare(&lo, lit()?)?;
                    if p.op == Op::Lt {
                        c == Ordering::Less
                    } else {
                        c != Ordering::Greater
                    }
                }
            },
            Op::Gt | Op::GtEq => match upper()? {
                None => false,
                Some(up) => {
                    let c = compare(&up, lit()?)?;
                    if p.op == Op::Gt {
                        c == Ordering::Greater
                    } else {
                        c != Ordering::Less
                    }
                }
            },
            Op::Eq => match lower()? {
                None => false,
                Some(lo) => {
                    if compare(&lo, lit()?)? == Ordering::Greater {
                        false
                    } else {
                        match upper()? {
                            Some(up) => compare(&up, lit()?)? != Ordering::Less,
                            None => true,
                        }
                    }
                }
            },
            // Java never prunes these on bounds (`ManifestEvaluator.notEq/notIn`); the planned
            // file set must be the reference's.
            Op::NotEq | Op::NotIn => true,
            Op::In => match lower()? {
                None => false,
                Some(_) if lits.vals.len() > IN_PREDICATE_LIMIT => true,
                Some(lo) => lits.any_within(Some(&lo), upper()?.as_ref())?,
            },
            Op::StartsWith => {
                let prefix = prefix_of(lits)?;
                let Some(lo) = Bound::raw(&s.lower, Self::j(s, row, pos)?) else {
                    return Some(false);
                };
                let n = prefix.len().min(lo.len());
                if &lo[..n] > prefix {
                    return Some(false);
                }
                let Some(up) = Bound::raw(&s.upper, Self::j(s, row, pos)?) else {
                    return Some(true);
                };
                let n = prefix.len().min(up.len());
                &up[..n] >= prefix
            }
            Op::NotStartsWith => {
                if sm.contains_null {
                    return Some(true);
                }
                let prefix = prefix_of(lits)?;
                let j = Self::j(s, row, pos)?;
                match (Bound::raw(&s.lower, j), Bound::raw(&s.upper, j)) {
                    (Some(lo), Some(up)) => !(lo.starts_with(prefix) && up.starts_with(prefix)),
                    _ => true,
                }
            }
        })
    }

    fn j(s: &Summaries<'_>, row: usize, pos: usize) -> Option<usize> {
        Some(s.list.value_offsets()[row] as usize + pos)
    }
}

// ---------------------------------------------------------------------------------------------
// Column metrics

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

fn map_col(s: &StructArray, name: &str) -> Result<Option<MapArray>> {
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
fn lookup(map: &Option<MapArray>, id: i32, n: usize) -> Result<Vec<Option<u32>>> {
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
        match self.lower {
            Bound::Absent => Some(None),
            Bound::Unreadable => None,
            Bound::Val(v) => Some(Some(v)),
        }
    }
    fn upper(&self) -> Option<Option<Val<'_>>> {
        match self.upper {
            Bound::Absent => Some(None),
            Bound::Unreadable => None,
            Bound::Val(v) => Some(Some(v)),
        }
    }
}

impl<'s> MetricsEvaluator<'s> {
    pub fn new(expr: &Expr, schema: &'s Schema, strict: bool) -> Self {
        MetricsEvaluator {
            expr: expr.clone().rewrite_not(),
            schema,
            strict,
        }
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
                        lower: decode_raw(lower_raw, ty),
                        upper: decode_raw(upper_raw, ty),
                        lower_raw,
                        upper_raw,
                        float,
                    };
                    if self.strict {
                        strict_leaf(p.op, &lits, &row, info.top_level).unwrap_or(false)
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

fn decode_raw<'a>(raw: Option<&'a [u8]>, ty: &PrimitiveType) -> Bound<'a> {
    match raw {
        None => Bound::Absent,
        Some(b) => decode_bound(b, ty).map_or(Bound::Unreadable, Bound::Val),
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
fn strict_leaf(op: Op, lits: &Lits<'_>, r: &Row<'_>, top_level: bool) -> Option<bool> {
    let lit = || lits.one();
    // Java only trusts metrics of top-level fields here (nested values may be null through a
    // null parent without being counted).
    if !top_level && !matches!(op, Op::IsNaN | Op::NotNaN) {
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

/// A boolean vector as an Arrow array (no nulls).
pub fn to_boolean_array(v: Vec<bool>) -> BooleanArray {
    BooleanArray::from(v)
}
