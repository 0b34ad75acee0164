//! Predicate projection through partition transforms (spec "Scan Planning"): the *inclusive*
//! projection matches every partition that may hold a matching row, the *strict* projection only
//! partitions whose rows all match. Rules and boundary fixes follow the Java reference's
//! `Transform.project`/`projectStrict` (incl. its fixes for pre-epoch values that old writers
//! transformed one unit too high), except that string widths count code points as the spec's
//! truncate does.

use frazil_transforms::scalar::truncate_str;
use frazil_transforms::Transform;
use frazil_values::{Error, Literal, PrimitiveType, Result, Type};
use serde_json::Value;

use crate::expr::{Expr, FieldInfo, Op, Predicate, Schema};

#[derive(Debug, Clone, PartialEq)]
pub struct PartitionField {
    pub source_id: i32,
    pub field_id: i32,
    pub name: String,
    pub transform: Transform,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PartitionSpec {
    pub spec_id: i32,
    pub fields: Vec<PartitionField>,
}

impl PartitionSpec {
    /// Parses a partition spec's JSON (Appendix C). Unknown transforms are kept (and ignored
    /// for filtering); v1 specs without field ids get Java's sequential ids from 1000.
    pub fn from_json(value: &Value) -> Result<PartitionSpec> {
        let obj = value
            .as_object()
            .ok_or_else(|| Error::parse(format!("partition spec must be an object: {value}")))?;
        let spec_id = obj
            .get("spec-id")
            .and_then(Value::as_i64)
            .and_then(|v| i32::try_from(v).ok())
            .ok_or_else(|| Error::parse("partition spec has no integer \"spec-id\""))?;
        let list = obj
            .get("fields")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::parse("partition spec has no \"fields\" list"))?;
        let mut fields = Vec::with_capacity(list.len());
        for (i, f) in list.iter().enumerate() {
            let int = |key: &str| {
                f.get(key)
                    .and_then(Value::as_i64)
                    .and_then(|v| i32::try_from(v).ok())
            };
            let source_id = match int("source-id") {
                Some(id) => id,
                None => match f.get("source-ids").and_then(Value::as_array) {
                    // Multi-argument transforms are unknown here; the field is ignored.
                    Some(ids) if ids.len() == 1 => ids[0]
                        .as_i64()
                        .and_then(|v| i32::try_from(v).ok())
                        .ok_or_else(|| Error::parse("partition field \"source-ids\" invalid"))?,
                    Some(_) => -1,
                    None => return Err(Error::parse("partition field has no \"source-id\"")),
                },
            };
            let transform = f
                .get("transform")
                .and_then(Value::as_str)
                .ok_or_else(|| Error::parse("partition field has no \"transform\""))?;
            fields.push(PartitionField {
                source_id,
                field_id: int("field-id").unwrap_or(1000 + i as i32),
                name: f
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                transform: Transform::parse_lenient(transform)?,
            });
        }
        Ok(PartitionSpec { spec_id, fields })
    }

    /// Parses a list of specs (table metadata's `partition-specs`) or a single spec.
    pub fn list_from_json(text: &str) -> Result<Vec<PartitionSpec>> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Error::parse(format!("partition specs are not valid JSON: {e}")))?;
        match &value {
            Value::Array(items) => items.iter().map(PartitionSpec::from_json).collect(),
            other => Ok(vec![PartitionSpec::from_json(other)?]),
        }
    }

    /// The partition tuple's fields, typed by each transform's result type. Fields whose
    /// transform is unknown or whose source is not in `schema` are typed `unknown`: they are
    /// never used for filtering.
    pub fn partition_schema(&self, schema: &Schema) -> Schema {
        let mut out = Schema::default();
        for f in &self.fields {
            let ty = schema
                .fields
                .get(&f.source_id)
                .and_then(|src| {
                    f.transform
                        .result_type(&Type::Primitive(src.ty.clone()))
                        .ok()
                })
                .and_then(|t| t.as_primitive().cloned())
                .unwrap_or(PrimitiveType::Unknown);
            out.fields.insert(
                f.field_id,
                FieldInfo {
                    id: f.field_id,
                    name: f.name.clone(),
                    ty,
                    required: false,
                    top_level: true,
                },
            );
        }
        out
    }

    pub fn is_unpartitioned(&self) -> bool {
        self.fields
            .iter()
            .all(|f| matches!(f.transform, Transform::Void))
    }
}

fn apply(t: &Transform, lit: &Literal, source: &PrimitiveType) -> Option<Literal> {
    t.apply_literal(Some(lit), source).ok().flatten()
}

fn pred(field: i32, op: Op, lits: Vec<Literal>) -> Option<Predicate> {
    Some(Predicate::new(field, op, lits))
}

/// A value one step below or above an integral literal, wrapping as Java's int and long do
/// (a wrapped boundary only makes a projection less selective or never true).
fn step(lit: &Literal, up: bool) -> Option<Literal> {
    let d = if up { 1 } else { -1 };
    Some(match lit {
        Literal::Int(v) => Literal::Int(v.wrapping_add(d)),
        Literal::Date(v) => Literal::Date(v.wrapping_add(d)),
        Literal::Long(v) => Literal::Long(v.wrapping_add(d as i64)),
        Literal::Timestamp(v) => Literal::Timestamp(v.wrapping_add(d as i64)),
        Literal::TimestampTz(v) => Literal::TimestampTz(v.wrapping_add(d as i64)),
        Literal::TimestampNs(v) => Literal::TimestampNs(v.wrapping_add(d as i64)),
        Literal::TimestampTzNs(v) => Literal::TimestampTzNs(v.wrapping_add(d as i64)),
        // Decimals are arbitrary precision in Java; out of 128 bits there is no projection.
        Literal::Decimal(v) => Literal::Decimal(v.checked_add(d as i128)?),
        _ => return None,
    })
}

/// `truncateInteger`/`truncateLong`/`truncateDecimal`: ranges closed, then transformed.
fn integral_inclusive(
    p: &Predicate,
    f: i32,
    t: &Transform,
    src: &PrimitiveType,
) -> Option<Predicate> {
    let v = p.literal()?;
    let tr = |l: &Literal| apply(t, l, src);
    match p.op {
        Op::Lt => pred(f, Op::LtEq, vec![tr(&step(v, false)?)?]),
        Op::LtEq => pred(f, Op::LtEq, vec![tr(v)?]),
        Op::Gt => pred(f, Op::GtEq, vec![tr(&step(v, true)?)?]),
        Op::GtEq => pred(f, Op::GtEq, vec![tr(v)?]),
        Op::Eq => pred(f, Op::Eq, vec![tr(v)?]),
        _ => None,
    }
}

fn integral_strict(p: &Predicate, f: i32, t: &Transform, src: &PrimitiveType) -> Option<Predicate> {
    let v = p.literal()?;
    let tr = |l: &Literal| apply(t, l, src);
    match p.op {
        Op::Lt => pred(f, Op::Lt, vec![tr(v)?]),
        Op::LtEq => pred(f, Op::Lt, vec![tr(&step(v, true)?)?]),
        Op::Gt => pred(f, Op::Gt, vec![tr(v)?]),
        Op::GtEq => pred(f, Op::Gt, vec![tr(&step(v, false)?)?]),
        Op::NotEq => pred(f, Op::NotEq, vec![tr(v)?]),
        // adjacent values share a partition: equality is never guaranteed
        _ => None,
    }
}

fn transform_set(p: &Predicate, f: i32, t: &Transform, src: &PrimitiveType) -> Option<Predicate> {
    let lits = p
        .literals
        .iter()
        .map(|l| apply(t, l, src))
        .collect::<Option<Vec<_>>>()?;
    pred(f, p.op, lits)
}

fn code_points(s: &str) -> usize {
    s.chars().count()
}

fn string_inclusive(
    p: &Predicate,
    f: i32,
    w: u32,
    t: &Transform,
    src: &PrimitiveType,
) -> Option<Predicate> {
    let v = p.literal()?;
    let tr = |l: &Literal| apply(t, l, src);
    match (p.op, v) {
        (Op::StartsWith, Literal::String(s)) => match code_points(s).cmp(&(w as usize)) {
            std::cmp::Ordering::Less => pred(f, Op::StartsWith, vec![v.clone()]),
            std::cmp::Ordering::Equal => pred(f, Op::Eq, vec![v.clone()]),
            std::cmp::Ordering::Greater => pred(f, Op::StartsWith, vec![tr(v)?]),
        },
        (Op::NotStartsWith, Literal::String(s)) => match code_points(s).cmp(&(w as usize)) {
            std::cmp::Ordering::Less => pred(f, Op::NotStartsWith, vec![v.clone()]),
            std::cmp::Ordering::Equal => pred(f, Op::NotEq, vec![v.clone()]),
            std::cmp::Ordering::Greater => None,
        },
        (Op::Lt | Op::LtEq, _) => pred(f, Op::LtEq, vec![tr(v)?]),
        (Op::Gt | Op::GtEq, _) => pred(f, Op::GtEq, vec![tr(v)?]),
        (Op::Eq, _) => pred(f, Op::Eq, vec![tr(v)?]),
        _ => None,
    }
}

fn string_strict(
    p: &Predicate,
    f: i32,
    w: u32,
    t: &Transform,
    src: &PrimitiveType,
) -> Option<Predicate> {
    let v = p.literal()?;
    let tr = |l: &Literal| apply(t, l, src);
    match (p.op, v) {
        (Op::StartsWith, Literal::String(s)) => match code_points(s).cmp(&(w as usize)) {
            std::cmp::Ordering::Less => pred(f, Op::StartsWith, vec![v.clone()]),
            std::cmp::Ordering::Equal => pred(f, Op::Eq, vec![v.clone()]),
            std::cmp::Ordering::Greater => None,
        },
        (Op::NotStartsWith, Literal::String(s)) => match code_points(s).cmp(&(w as usize)) {
            std::cmp::Ordering::Less => pred(f, Op::NotStartsWith, vec![v.clone()]),
            std::cmp::Ordering::Equal => pred(f, Op::NotEq, vec![v.clone()]),
            std::cmp::Ordering::Greater => pred(
                f,
                Op::NotStartsWith,
                vec![Literal::String(truncate_str(s, w).to_string())],
            ),
        },
        (Op::Lt | Op::LtEq, _) => pred(f, Op::Lt, vec![tr(v)?]),
        (Op::Gt | Op::GtEq, _) => pred(f, Op::Gt, vec![tr(v)?]),
        (Op::NotEq, _) => pred(f, Op::NotEq, vec![tr(v)?]),
        _ => None,
    }
}

fn int_of(l: &Literal) -> Option<i32> {
    match l {
        Literal::Int(v) | Literal::Date(v) => Some(*v),
        _ => None,
    }
}

fn with_int(like: &Literal, v: i32) -> Literal {
    match like {
        Literal::Date(_) => Literal::Date(v),
        _ => Literal::Int(v),
    }
}

/// Java's `fixInclusiveTimeProjection`: old writers put pre-epoch values one unit too high, so
/// negative boundaries also admit that unit.
fn fix_inclusive_time(p: Option<Predicate>) -> Option<Predicate> {
    let mut p = p?;
    match p.op {
        Op::Lt | Op::LtEq => {
            let v = int_of(p.literal()?)?;
            if v < 0 {
                p.literals[0] = with_int(&p.literals[0], v + 1);
            }
            Some(p)
        }
        Op::Eq => {
            let l = p.literal()?.clone();
            let v = int_of(&l)?;
            if v < 0 {
                return pred(p.field_id, Op::In, vec![l.clone(), with_int(&l, v + 1)]);
            }
            Some(p)
        }
        Op::In => {
            let mut extra = Vec::new();
            for l in &p.literals {
                let v = int_of(l)?;
                if v < 0 {
                    extra.push(with_int(l, v + 1));
                }
            }
            p.literals.extend(extra);
            Some(p)
        }
        Op::NotEq | Op::NotIn => None,
        _ => Some(p),
    }
}

/// Java's `fixStrictTimeProjection`, the strict counterpart.
fn fix_strict_time(p: Option<Predicate>) -> Option<Predicate> {
    let mut p = p?;
    match p.op {
        Op::Gt | Op::GtEq => {
            let v = int_of(p.literal()?)?;
            if v <= 0 {
                p.literals[0] = with_int(&p.literals[0], v + 1);
            }
            Some(p)
        }
        Op::Eq | Op::In => None,
        Op::NotEq => {
            let l = p.literal()?.clone();
            let v = int_of(&l)?;
            if v < 0 {
                return pred(p.field_id, Op::NotIn, vec![l.clone(), with_int(&l, v + 1)]);
            }
            Some(p)
        }
        Op::NotIn => {
            let mut extra = Vec::new();
            for l in &p.literals {
                let v = int_of(l)?;
                if v < 0 {
                    extra.push(with_int(l, v + 1));
                }
            }
            p.literals.extend(extra);
            Some(p)
        }
        _ => Some(p),
    }
}

/// Projects one predicate on a source field through one partition field; `None` means no
/// projection (inclusive: may match anything; strict: guarantees nothing).
pub fn project_predicate(
    p: &Predicate,
    field: &PartitionField,
    source: &PrimitiveType,
    strict: bool,
) -> Option<Predicate> {
    let f = field.field_id;
    let t = &field.transform;
    use PrimitiveType as P;
    if matches!(t, Transform::Void | Transform::Unknown(_)) {
        return None;
    }
    if !t.can_transform(&Type::Primitive(source.clone())) {
        return None;
    }
    if matches!(p.op, Op::IsNull | Op::NotNull) {
        // every transform maps null to null and only null to null
        return pred(f, p.op, vec![]);
    }
    let out = match t {
        Transform::Identity => Some(Predicate::new(f, p.op, p.literals.clone())),
        Transform::Bucket(_) => match (p.op, strict) {
            (Op::Eq, false) | (Op::NotEq, true) => {
                pred(f, p.op, vec![apply(t, p.literal()?, source)?])
            }
            (Op::In, false) | (Op::NotIn, true) => transform_set(p, f, t, source),
            _ => None,
        },
        Transform::Truncate(w) => match source {
            P::Int | P::Long | P::Decimal { .. } => match (p.op, strict) {
                (Op::In, false) | (Op::NotIn, true) => transform_set(p, f, t, source),
                (_, false) => integral_inclusive(p, f, t, source),
                (_, true) => integral_strict(p, f, t, source),
            },
            P::String | P::Binary => match (p.op, strict) {
                (Op::In, false) | (Op::NotIn, true) => transform_set(p, f, t, source),
                (_, false) => string_inclusive(p, f, *w, t, source),
                (_, true) => string_strict(p, f, *w, t, source),
            },
            _ => None,
        },
        Transform::Year | Transform::Month | Transform::Day | Transform::Hour => {
            let projected = match (p.op, strict) {
                (Op::In, false) | (Op::NotIn, true) => transform_set(p, f, t, source),
                (Op::In | Op::NotIn, _) => None,
                (_, false) => integral_inclusive(p, f, t, source),
                (_, true) => integral_strict(p, f, t, source),
            };
            // Java fixes dates only for year and month (day of a date is exact), and every
            // timestamp transform.
            let fix = !(matches!(t, Transform::Day) && *source == P::Date);
            match (fix, strict) {
                (false, _) => projected,
                (true, false) => fix_inclusive_time(projected),
                (true, true) => fix_strict_time(projected),
            }
        }
        Transform::Void | Transform::Unknown(_) => None,
    };
    // normalized() only folds empty sets, which projection never produces
    out.map(|p| {
        p.normalized()
            .into_predicate()
            .unwrap_or_else(|| Predicate::new(f, Op::In, vec![]))
    })
}

/// Projects a whole row filter onto a spec's partition fields. NOT is rewritten first; each
/// predicate becomes the AND (inclusive) or OR (strict) of its projections through every
/// partition field of its source column.
pub fn project(expr: &Expr, spec: &PartitionSpec, schema: &Schema, strict: bool) -> Expr {
    fn go(e: &Expr, spec: &PartitionSpec, schema: &Schema, strict: bool) -> Expr {
        match e {
            Expr::True => Expr::True,
            Expr::False => Expr::False,
            Expr::And(a, b) => Expr::and(go(a, spec, schema, strict), go(b, spec, schema, strict)),
            Expr::Or(a, b) => Expr::or(go(a, spec, schema, strict), go(b, spec, schema, strict)),
            // rewrite_not left no NOT; be conservative if one slipped through
            Expr::Not(_) => {
                if strict {
                    Expr::False
                } else {
                    Expr::True
                }
            }
            Expr::Pred(p) => {
                let Some(source) = schema.fields.get(&p.field_id) else {
                    return if strict { Expr::False } else { Expr::True };
                };
                let mut out = if strict { Expr::False } else { Expr::True };
                for field in spec.fields.iter().filter(|f| f.source_id == p.field_id) {
                    if let Some(q) = project_predicate(p, field, &source.ty, strict) {
                        out = if strict {
                            Expr::or(out, q.normalized())
                        } else {
                            Expr::and(out, q.normalized())
                        };
                    }
                }
                out
            }
        }
    }
    go(&expr.clone().rewrite_not(schema), spec, schema, strict)
}

#[cfg(test)]
mod tests;
