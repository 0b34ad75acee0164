//! Residuals (Java's `ResidualEvaluator`): the row filter simplified for one partition tuple. A
//! predicate whose strict projection holds for the tuple becomes true, one whose inclusive
//! projection fails becomes false; what remains must still be applied to the rows read.
//!
//! Residuals are computed for all entries of a manifest at once: each predicate is decided for
//! every tuple (a vector), entries are grouped by their decisions, and each distinct residual is
//! built once.

use std::collections::HashMap;

use frazil_values::Result;

use crate::expr::{Expr, Predicate, Schema};
use crate::partition_evaluator::{PartitionColumns, PartitionEvaluator};
use crate::project::{project_predicate, PartitionSpec};

pub struct ResidualEvaluator {
    filter: Expr,
    /// Per predicate of `filter` (in visiting order): its strict and inclusive projections.
    leaves: Vec<(Vec<Predicate>, Vec<Predicate>)>,
}

/// One residual per entry, as an index into a list of distinct residuals.
#[derive(Debug, Clone, PartialEq)]
pub struct Residuals {
    pub index: Vec<i32>,
    pub exprs: Vec<Expr>,
}

impl ResidualEvaluator {
    pub fn new(filter: &Expr, spec: &PartitionSpec, schema: &Schema) -> ResidualEvaluator {
        let filter = filter.clone().rewrite_not(schema);
        let mut preds = Vec::new();
        filter.predicates(&mut preds);
        let leaves = preds
            .iter()
            .map(|p| {
                let Some(source) = schema.fields.get(&p.field_id) else {
                    return (Vec::new(), Vec::new());
                };
                let parts = spec.fields.iter().filter(|f| f.source_id == p.field_id);
                let mut strict = Vec::new();
                let mut inclusive = Vec::new();
                for f in parts {
                    strict.extend(project_predicate(p, f, &source.ty, true));
                    inclusive.extend(project_predicate(p, f, &source.ty, false));
                }
                (strict, inclusive)
            })
            .collect();
        ResidualEvaluator { filter, leaves }
    }

    /// The residual for one set of decisions (`None`: keep the predicate).
    pub fn residual(&self, decisions: &[Option<bool>]) -> Expr {
        fn go(e: &Expr, d: &[Option<bool>], k: &mut usize) -> Expr {
            match e {
                Expr::True => Expr::True,
                Expr::False => Expr::False,
                Expr::And(a, b) => {
                    let a = go(a, d, k);
                    Expr::and(a, go(b, d, k))
                }
                Expr::Or(a, b) => {
                    let a = go(a, d, k);
                    Expr::or(a, go(b, d, k))
                }
                Expr::Not(a) => Expr::not(go(a, d, k)),
                Expr::Pred(p) => {
                    let r = match d.get(*k).copied().flatten() {
                        Some(true) => Expr::True,
                        Some(false) => Expr::False,
                        None => Expr::Pred(p.clone()),
                    };
                    *k += 1;
                    r
                }
            }
        }
        go(&self.filter, decisions, &mut 0)
    }

    pub fn eval(&self, cols: &PartitionColumns) -> Result<Residuals> {
        let n = cols.len;
        if self
            .leaves
            .iter()
            .all(|(s, i)| s.is_empty() && i.is_empty())
            || n == 0
        {
            return Ok(Residuals {
                index: vec![0; n],
                exprs: vec![self.residual(&[])],
            });
        }
        let mut decisions: Vec<Vec<Option<bool>>> = Vec::with_capacity(self.leaves.len());
        // entries grouped by the decisions so far: (group, decision) -> next group
        let mut group = vec![0u32; n];
        for (strict, inclusive) in &self.leaves {
            let mut d = vec![None; n];
            // a strict projection that holds wins over an inclusive one that fails (Java's
            // order; both at once cannot happen on consistent data)
            for q in strict {
                PartitionEvaluator::decide(q, cols, &mut d, true)?;
            }
            for q in inclusive {
                PartitionEvaluator::decide(q, cols, &mut d, false)?;
            }
            let mut next: HashMap<(u32, Option<bool>), u32> = HashMap::new();
            for (g, x) in group.iter_mut().zip(&d) {
                let len = next.len() as u32;
                *g = *next.entry((*g, *x)).or_insert(len);
            }
            decisions.push(d);
        }
        let mut representative: HashMap<u32, usize> = HashMap::new();
        for (i, g) in group.iter().enumerate() {
            representative.entry(*g).or_insert(i);
        }
        let mut by_group: HashMap<u32, i32> = HashMap::new();
        let mut exprs: Vec<Expr> = Vec::new();
        let mut reps: Vec<(u32, usize)> = representative.into_iter().collect();
        reps.sort_by_key(|(_, row)| *row);
        for (g, row) in reps {
            let d: Vec<Option<bool>> = decisions.iter().map(|v| v[row]).collect();
            let e = self.residual(&d);
            let idx = match exprs.iter().position(|x| *x == e) {
                Some(i) => i,
                None => {
                    exprs.push(e);
                    exprs.len() - 1
                }
            };
            by_group.insert(g, idx as i32);
        }
        let index = group.iter().map(|g| by_group[g]).collect();
        Ok(Residuals { index, exprs })
    }
}
