//! [`ManifestEvaluator`]: a spec's inclusive projection of the row filter against the manifest
//! list's partition field summaries (Java's `ManifestEvaluator`).

use std::cmp::Ordering;
use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::{Array, BooleanArray};
use frazil_values::bound::compare;
use frazil_values::{Error, PrimitiveType, Result};

use crate::expr::{Expr, Op, Predicate, Schema};
use crate::leaf::{eval_tree, is_float, prefix_of, Bound, Lits, IN_PREDICATE_LIMIT};
use crate::value::Column;

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
            expr: expr.rewrite_not(partition_schema),
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
        let lower = || sm.lower.get();
        let upper = || sm.upper.get();
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
