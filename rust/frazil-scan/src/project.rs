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
    go(&expr.clone().rewrite_not(), spec, schema, strict)
}

#[cfg(test)]
mod tests {
    use super::*;
    use frazil_values::temporal::MICROS_PER_HOUR;

    fn field(t: &str) -> PartitionField {
        PartitionField {
            source_id: 1,
            field_id: 1000,
            name: "p".into(),
            transform: Transform::parse(t).unwrap(),
        }
    }

    fn ty(s: &str) -> PrimitiveType {
        s.parse().unwrap()
    }

    fn proj(
        t: &str,
        src: &str,
        op: Op,
        lits: Vec<Literal>,
        strict: bool,
    ) -> Option<(Op, Vec<Literal>)> {
        project_predicate(&Predicate::new(1, op, lits), &field(t), &ty(src), strict)
            .map(|p| (p.op, p.literals))
    }

    fn i(v: i32) -> Literal {
        Literal::Int(v)
    }

    #[test]
    fn identity_passes_through() {
        for strict in [false, true] {
            for op in [Op::Lt, Op::NotEq, Op::Eq, Op::GtEq] {
                assert_eq!(
                    proj("identity", "int", op, vec![i(5)], strict),
                    Some((op, vec![i(5)]))
                );
            }
            assert_eq!(
                proj("identity", "double", Op::IsNaN, vec![], strict),
                Some((Op::IsNaN, vec![]))
            );
        }
    }

    #[test]
    fn bucket() {
        // bucket[16] of 34 is 3 for int and long alike (spec Appendix B: hash 2017239379)
        let b = Transform::Bucket(16)
            .apply_literal(Some(&Literal::Long(34)), &ty("long"))
            .unwrap()
            .unwrap();
        assert_eq!(
            proj("bucket[16]", "long", Op::Eq, vec![Literal::Long(34)], false),
            Some((Op::Eq, vec![b.clone()]))
        );
        assert_eq!(
            proj("bucket[16]", "long", Op::Eq, vec![Literal::Long(34)], true),
            None
        );
        assert_eq!(
            proj(
                "bucket[16]",
                "long",
                Op::NotEq,
                vec![Literal::Long(34)],
                true
            ),
            Some((Op::NotEq, vec![b]))
        );
        for op in [Op::Lt, Op::LtEq, Op::Gt, Op::GtEq, Op::NotEq, Op::NotIn] {
            assert_eq!(
                proj("bucket[16]", "long", op, vec![Literal::Long(34)], false),
                None
            );
        }
        // IN: the buckets of the values, de-duplicated (a set of one is an equality)
        let vals: Vec<Literal> = (0..40).map(Literal::Long).collect();
        let (op, lits) = proj("bucket[4]", "long", Op::In, vals, false).unwrap();
        assert_eq!(op, Op::In);
        assert_eq!(lits, vec![i(0), i(1), i(2), i(3)]);
        assert_eq!(
            proj(
                "bucket[4]",
                "long",
                Op::NotIn,
                vec![Literal::Long(1), Literal::Long(2)],
                false
            ),
            None
        );
        assert_eq!(
            proj("bucket[16]", "long", Op::IsNull, vec![], false),
            Some((Op::IsNull, vec![]))
        );
    }

    #[test]
    fn truncate_integers() {
        // inclusive: ranges are closed before truncating
        let cases = [
            (Op::Lt, 100, Some((Op::LtEq, 90))),
            (Op::LtEq, 100, Some((Op::LtEq, 100))),
            (Op::Gt, 100, Some((Op::GtEq, 100))),
            (Op::GtEq, 99, Some((Op::GtEq, 90))),
            (Op::Eq, -1, Some((Op::Eq, -10))),
            (Op::Lt, -10, Some((Op::LtEq, -20))),
            (Op::Gt, -1, Some((Op::GtEq, 0))),
            (Op::NotEq, 5, None),
        ];
        for (op, v, want) in cases {
            assert_eq!(
                proj("truncate[10]", "int", op, vec![i(v)], false),
                want.map(|(o, x)| (o, vec![i(x)])),
                "{op:?} {v}"
            );
        }
        let strict = [
            (Op::Lt, 100, Some((Op::Lt, 100))),
            (Op::LtEq, 100, Some((Op::Lt, 100))),
            (Op::LtEq, 99, Some((Op::Lt, 100))),
            (Op::Gt, 100, Some((Op::Gt, 100))),
            (Op::GtEq, 100, Some((Op::Gt, 90))),
            (Op::NotEq, -5, Some((Op::NotEq, -10))),
            (Op::Eq, 5, None),
        ];
        for (op, v, want) in strict {
            assert_eq!(
                proj("truncate[10]", "int", op, vec![i(v)], true),
                want.map(|(o, x)| (o, vec![i(x)])),
                "strict {op:?} {v}"
            );
        }
        // decimals: width in units of the scale; 10.65 < x projects to >= 10.50 (w=50)
        assert_eq!(
            proj(
                "truncate[50]",
                "decimal(9,2)",
                Op::Gt,
                vec![Literal::Decimal(1065)],
                false
            ),
            Some((Op::GtEq, vec![Literal::Decimal(1050)]))
        );
        assert_eq!(
            proj(
                "truncate[10]",
                "decimal(9,2)",
                Op::Lt,
                vec![Literal::Decimal(-100)],
                false
            ),
            Some((Op::LtEq, vec![Literal::Decimal(-110)]))
        );
        // long boundaries wrap as Java's do and stay safe
        assert_eq!(
            proj(
                "truncate[10]",
                "long",
                Op::Gt,
                vec![Literal::Long(i64::MAX)],
                false
            )
            .map(|p| p.0),
            Some(Op::GtEq)
        );
    }

    #[test]
    fn truncate_strings() {
        let s = |v: &str| Literal::String(v.into());
        let cases = [
            (Op::StartsWith, "ab", false, Some((Op::StartsWith, "ab"))),
            (Op::StartsWith, "abc", false, Some((Op::Eq, "abc"))),
            (Op::StartsWith, "abcd", false, Some((Op::StartsWith, "abc"))),
            (Op::StartsWith, "abcd", true, None),
            (Op::StartsWith, "abc", true, Some((Op::Eq, "abc"))),
            (
                Op::NotStartsWith,
                "ab",
                false,
                Some((Op::NotStartsWith, "ab")),
            ),
            (Op::NotStartsWith, "abc", false, Some((Op::NotEq, "abc"))),
            (Op::NotStartsWith, "abcd", false, None),
            (
                Op::NotStartsWith,
                "abcd",
                true,
                Some((Op::NotStartsWith, "abc")),
            ),
            (Op::Lt, "abcd", false, Some((Op::LtEq, "abc"))),
            (Op::Gt, "abcd", false, Some((Op::GtEq, "abc"))),
            (Op::Eq, "abcd", false, Some((Op::Eq, "abc"))),
            (Op::Eq, "abcd", true, None),
            (Op::LtEq, "abcd", true, Some((Op::Lt, "abc"))),
            (Op::GtEq, "abcd", true, Some((Op::Gt, "abc"))),
            (Op::NotEq, "abcd", true, Some((Op::NotEq, "abc"))),
            // widths count code points, not UTF-16 units: two emoji are a prefix of width 3
            (
                Op::StartsWith,
                "😀😀",
                false,
                Some((Op::StartsWith, "😀😀")),
            ),
            (
                Op::StartsWith,
                "😀😀😀😀",
                false,
                Some((Op::StartsWith, "😀😀😀")),
            ),
            (
                Op::StartsWith,
                "\u{10FFFF}\u{10FFFF}\u{10FFFF}",
                true,
                Some((Op::Eq, "\u{10FFFF}\u{10FFFF}\u{10FFFF}")),
            ),
        ];
        for (op, v, strict, want) in cases {
            assert_eq!(
                proj("truncate[3]", "string", op, vec![s(v)], strict),
                want.map(|(o, x)| (o, vec![s(x)])),
                "{op:?} {v} strict={strict}"
            );
        }
        let b = |v: &[u8]| Literal::Binary(v.to_vec());
        assert_eq!(
            proj("truncate[2]", "binary", Op::Lt, vec![b(&[1, 2, 3])], false),
            Some((Op::LtEq, vec![b(&[1, 2])]))
        );
        assert_eq!(
            proj(
                "truncate[2]",
                "binary",
                Op::In,
                vec![b(&[1, 2, 3]), b(&[1, 2, 4])],
                false
            ),
            Some((Op::Eq, vec![b(&[1, 2])]))
        );
    }

    #[test]
    fn time_transforms_before_the_epoch() {
        let d = Literal::Date;
        // day(date) is exact: no fix
        assert_eq!(
            proj("day", "date", Op::Eq, vec![d(-5)], false),
            Some((Op::Eq, vec![d(-5)]))
        );
        // month(1969-12-31) = -1: old writers said 0, so both are admitted
        assert_eq!(
            proj("month", "date", Op::Eq, vec![d(-1)], false),
            Some((Op::In, vec![i(-1), i(0)]))
        );
        assert_eq!(
            proj("year", "date", Op::Lt, vec![d(-365)], false),
            Some((Op::LtEq, vec![i(-1)])) // <= year(-366) = -2, fixed to -1
        );
        assert_eq!(proj("month", "date", Op::NotEq, vec![d(-1)], false), None);
        // timestamps: every transform is fixed, day included
        let ts = Literal::Timestamp;
        assert_eq!(
            proj("day", "timestamp", Op::Eq, vec![ts(-1)], false),
            Some((Op::In, vec![d(-1), d(0)]))
        );
        assert_eq!(
            proj(
                "hour",
                "timestamp",
                Op::Lt,
                vec![ts(-MICROS_PER_HOUR)],
                false
            ),
            Some((Op::LtEq, vec![i(-1)])) // <= hour(-1h - 1us) = -2, fixed to -1
        );
        assert_eq!(
            proj(
                "hour",
                "timestamp",
                Op::GtEq,
                vec![ts(-MICROS_PER_HOUR)],
                false
            ),
            Some((Op::GtEq, vec![i(-1)]))
        );
        // strict: gt/gt-eq at or below zero move up one
        assert_eq!(
            proj(
                "hour",
                "timestamp",
                Op::GtEq,
                vec![ts(-MICROS_PER_HOUR)],
                true
            ),
            Some((Op::Gt, vec![i(-1)])) // > hour(-1h - 1us) = -2, fixed to -1
        );
        assert_eq!(
            proj("day", "timestamp", Op::NotEq, vec![ts(-1)], true),
            Some((Op::NotIn, vec![d(-1), d(0)]))
        );
        assert_eq!(proj("day", "timestamp", Op::Eq, vec![ts(5)], true), None);
        // ranges after the epoch
        let micros_day = frazil_values::temporal::MICROS_PER_DAY;
        assert_eq!(
            proj("day", "timestamp", Op::Gt, vec![ts(micros_day)], false),
            Some((Op::GtEq, vec![d(1)]))
        );
        assert_eq!(
            proj("day", "timestamp", Op::Lt, vec![ts(micros_day)], false),
            Some((Op::LtEq, vec![d(0)]))
        );
        assert_eq!(
            proj("day", "timestamp", Op::Lt, vec![ts(micros_day)], true),
            Some((Op::Lt, vec![d(1)]))
        );
        assert_eq!(
            proj("day", "timestamp", Op::LtEq, vec![ts(micros_day - 1)], true),
            Some((Op::Lt, vec![d(1)]))
        );
        // IN over timestamps, with a pre-epoch value
        assert_eq!(
            proj(
                "day",
                "timestamp",
                Op::In,
                vec![ts(-1), ts(micros_day)],
                false
            ),
            Some((Op::In, vec![d(-1), d(0), d(1)]))
        );
        // nanosecond timestamps
        assert_eq!(
            proj(
                "day",
                "timestamp_ns",
                Op::GtEq,
                vec![Literal::TimestampNs(86_400_000_000_000)],
                false
            ),
            Some((Op::GtEq, vec![d(1)]))
        );
    }

    #[test]
    fn void_and_unknown_project_to_nothing() {
        assert_eq!(proj("void", "int", Op::Eq, vec![i(1)], false), None);
        let unknown = PartitionField {
            source_id: 1,
            field_id: 1000,
            name: "z".into(),
            transform: Transform::parse_lenient("zorder").unwrap(),
        };
        assert_eq!(
            project_predicate(
                &Predicate::new(1, Op::Eq, vec![i(1)]),
                &unknown,
                &ty("int"),
                false
            ),
            None
        );
    }

    #[test]
    fn whole_expressions() {
        let schema = Schema::from_json(
            r#"{"type":"struct","fields":[{"id":1,"name":"ts","required":false,"type":"timestamp"},
            {"id":2,"name":"id","required":false,"type":"long"}]}"#,
        )
        .unwrap();
        let spec = PartitionSpec::from_json(&serde_json::json!({"spec-id":0,"fields":[
            {"source-id":1,"field-id":1000,"name":"d","transform":"day"},
            {"source-id":1,"field-id":1001,"name":"h","transform":"hour"},
            {"source-id":2,"field-id":1002,"name":"b","transform":"bucket[4]"}]}))
        .unwrap();
        let day = frazil_values::temporal::MICROS_PER_DAY;
        let e = Expr::Not(Box::new(Expr::Or(
            Box::new(Expr::Pred(Predicate::new(
                1,
                Op::Lt,
                vec![Literal::Timestamp(day)],
            ))),
            Box::new(Expr::Pred(Predicate::new(
                2,
                Op::Eq,
                vec![Literal::Long(7)],
            ))),
        )));
        // NOT(ts < X OR id = 7) = ts >= X AND id != 7; id != 7 has no inclusive projection
        let inc = project(&e, &spec, &schema, false);
        assert_eq!(
            inc,
            Expr::And(
                Box::new(Expr::Pred(Predicate::new(
                    1000,
                    Op::GtEq,
                    vec![Literal::Date(1)]
                ))),
                Box::new(Expr::Pred(Predicate::new(1001, Op::GtEq, vec![i(24)]))),
            )
        );
        let strict = project(&e, &spec, &schema, true);
        let b7 = Transform::Bucket(4)
            .apply_literal(Some(&Literal::Long(7)), &ty("long"))
            .unwrap()
            .unwrap();
        assert_eq!(
            strict,
            Expr::And(
                Box::new(Expr::Or(
                    // > day(X - 1us) = 0, moved up one by Java's fix for day <= 0
                    Box::new(Expr::Pred(Predicate::new(
                        1000,
                        Op::Gt,
                        vec![Literal::Date(1)]
                    ))),
                    Box::new(Expr::Pred(Predicate::new(1001, Op::Gt, vec![i(23)]))),
                )),
                Box::new(Expr::Pred(Predicate::new(1002, Op::NotEq, vec![b7]))),
            )
        );
    }
}
