//! What the evaluators share: the walk of an expression tree into per-row boolean vectors,
//! a predicate's literals as comparable values, one predicate on one value, and a bound read
//! from a column of binary bounds.

use std::cmp::Ordering;

use frazil_values::bound::{compare, decode_bound, of_literal, Val};
use frazil_values::{Error, PrimitiveType, Result};

use crate::expr::{Expr, Op, Predicate};
use crate::value::Column;

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
pub struct Lits<'a> {
    pub vals: Vec<Val<'a>>,
}

impl<'a> Lits<'a> {
    pub fn new(p: &'a Predicate) -> Result<Lits<'a>> {
        let vals = p
            .literals
            .iter()
            .map(|l| {
                of_literal(l).ok_or_else(|| {
                    Error::unsupported(format!("{} literals cannot be compared", l.kind()))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Lits { vals })
    }

    pub fn one(&self) -> Option<&Val<'a>> {
        self.vals.first()
    }

    /// Set membership; the literals are sorted (see `Predicate::normalized`).
    pub fn contains(&self, v: &Val<'_>) -> Option<bool> {
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
    pub fn any_within(&self, lower: Option<&Val<'_>>, upper: Option<&Val<'_>>) -> Option<bool> {
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

pub fn prefix_of<'a>(lits: &Lits<'a>) -> Option<&'a [u8]> {
    match lits.one() {
        Some(Val::Bytes(b)) => Some(b),
        _ => None,
    }
}

/// `op` on a non-null value, exactly, with the spec's NaN rules (a comparison with NaN is
/// false, `!=` true); `None` when the value cannot be compared.
pub fn eval_value(op: Op, lits: &Lits<'_>, v: &Val<'_>) -> Option<bool> {
    if v.is_nan()
        && matches!(
            op,
            Op::Lt | Op::LtEq | Op::Gt | Op::GtEq | Op::Eq | Op::NotEq
        )
    {
        return Some(op == Op::NotEq);
    }
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

#[derive(Clone, Copy)]
pub enum Bound<'a> {
    Absent,
    /// Present but unreadable: no conclusion may be drawn from it.
    Unreadable,
    Val(Val<'a>),
}

impl<'a> Bound<'a> {
    pub fn read(col: &'a Column, i: usize, ty: &PrimitiveType) -> Bound<'a> {
        match col.get(i) {
            None => Bound::Absent,
            Some(Val::Bytes(b)) => match decode_bound(b, ty) {
                Some(v) => Bound::Val(v),
                None => Bound::Unreadable,
            },
            Some(_) => Bound::Unreadable,
        }
    }

    /// `Some(None)`: no bound; `Some(Some(v))`: the bound; `None`: unreadable (no conclusion).
    pub fn get(&self) -> Option<Option<Val<'a>>> {
        match *self {
            Bound::Absent => Some(None),
            Bound::Unreadable => None,
            Bound::Val(v) => Some(Some(v)),
        }
    }

    /// A raw bound, or none; its decoding is the caller's.
    pub fn from_raw(raw: Option<&'a [u8]>, ty: &PrimitiveType) -> Bound<'a> {
        match raw {
            None => Bound::Absent,
            Some(b) => decode_bound(b, ty).map_or(Bound::Unreadable, Bound::Val),
        }
    }

    pub fn raw(col: &'a Column, i: usize) -> Option<&'a [u8]> {
        match col.get(i) {
            Some(Val::Bytes(b)) => Some(b),
            _ => None,
        }
    }
}

pub fn is_float(ty: &PrimitiveType) -> bool {
    matches!(ty, PrimitiveType::Float | PrimitiveType::Double)
}
