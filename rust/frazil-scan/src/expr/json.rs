//! Reading bound expressions from JSON (expressions spec, Appendix B); the twin of
//! `python/frazil/expressions/json.py`, which writes what this reads.
//!
//! # Depth
//! An expression built by hand in Python nests one level per `and`/`or` (a chain of n
//! predicates written `Or(Or(Or(a, b), c), ...)` nests n deep), and serde_json alone stops at
//! 128 levels. So this reader:
//! - accepts JSON nested up to [`MAX_JSON_DEPTH`] levels (checked by a scan of the text before
//!   anything is built), deserialized and read on a stack that grows on demand (`stacker`), and
//!   taken apart iteratively, so nothing overflows the thread's stack;
//! - rebuilds every chain of one operator (`a and (b and c)`, `(a or b) or c`, any shape) as a
//!   balanced tree of its operands, in the order written: n predicates nest about log2(n) deep;
//!   NOT of NOT cancels;
//! - refuses, with an `InvalidArgument` error, an expression that still nests more than
//!   [`MAX_DEPTH`] levels of and/or/not after that (only alternations such as
//!   `a and (b or (c and ...))` can), so that projection, the evaluators and residuals, which
//!   recurse over [`Expr`], run in bounded stack on any thread.

use frazil_values::json as value_json;
use frazil_values::{Error, Literal, PrimitiveType, Result, Type};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Expr, FieldInfo, Op, Predicate, Schema};
use crate::value::lit_is_nan;

/// The deepest JSON nesting [`Expr::from_json_str`] reads (a hand-built left-deep chain of n
/// predicates nests about n + 3 levels).
pub const MAX_JSON_DEPTH: usize = 200_000;

/// The deepest nesting of and/or/not an expression may keep once its same-operator chains are
/// balanced. Balanced chains of a million predicates nest 20 levels.
pub const MAX_DEPTH: usize = 500;

// Grow the stack by STACK_SEGMENT whenever less than RED_ZONE is left.
const RED_ZONE: usize = 128 * 1024;
const STACK_SEGMENT: usize = 4 * 1024 * 1024;

fn grow<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, f)
}

pub(super) fn from_json_str(text: &str, schema: &Schema) -> Result<Expr> {
    let depth = json_depth(text);
    if depth > MAX_JSON_DEPTH {
        return Err(Error::invalid(format!(
            "expression JSON nests {depth} levels deep; at most {MAX_JSON_DEPTH} are read \
             (build long conjunctions and disjunctions balanced: And(*terms), Or(*terms))"
        )));
    }
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let value = {
        let stacked = serde_stacker::Deserializer {
            de: &mut de,
            red_zone: RED_ZONE,
            stack_size: STACK_SEGMENT,
        };
        Value::deserialize(stacked)
    }
    .and_then(|v| de.end().map(|()| Dismantled(v)))
    .map_err(|e| Error::parse(format!("expression is not valid JSON: {e}")))?;
    from_json(&value.0, schema)
}

pub(super) fn from_json(value: &Value, schema: &Schema) -> Result<Expr> {
    grow(|| parse(value, schema)).map(|(e, _)| e)
}

/// The deepest nesting of objects and arrays in JSON text (brackets outside strings); linear
/// and allocation-free, so a hostile depth is refused before any of it is built.
fn json_depth(text: &str) -> usize {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for b in text.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                max = max.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// A JSON value that is taken apart iteratively when dropped: serde_json drops recursively,
/// which overflows the stack on deep input.
struct Dismantled(Value);

impl Drop for Dismantled {
    fn drop(&mut self) {
        let mut stack = vec![std::mem::take(&mut self.0)];
        while let Some(v) = stack.pop() {
            match v {
                Value::Array(items) => stack.extend(items),
                Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
                _ => {}
            }
        }
    }
}

/// A short rendering of a value for an error message (deep values are cut, never recursed).
fn brief(v: &Value) -> String {
    fn write(v: &Value, budget: usize, out: &mut String) {
        if out.len() > 160 {
            out.push('…');
            return;
        }
        match v {
            Value::Array(items) if budget == 0 && !items.is_empty() => out.push_str("[…]"),
            Value::Object(map) if budget == 0 && !map.is_empty() => out.push_str("{…}"),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(item, budget - 1, out);
                }
                out.push(']');
            }
            Value::Object(map) => {
                out.push('{');
                for (i, (k, item)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(':');
                    write(item, budget - 1, out);
                }
                out.push('}');
            }
            scalar => out.push_str(&scalar.to_string()),
        }
    }
    let mut out = String::new();
    write(v, 3, &mut out);
    out
}

fn get<'a>(obj: &'a Map<String, Value>, key: &str, what: &str) -> Result<&'a Value> {
    obj.get(key)
        .ok_or_else(|| Error::parse(format!("{what} expression has no {key:?}")))
}

fn too_deep() -> Error {
    Error::invalid(format!(
        "the expression nests and/or/not more than {MAX_DEPTH} levels deep even with its \
         and-chains and or-chains balanced; simplify it"
    ))
}

/// An expression and its nesting depth (and/or/not levels).
type Parsed = (Expr, usize);

fn parse(value: &Value, schema: &Schema) -> Result<Parsed> {
    let obj = match value {
        Value::Bool(true) => return Ok((Expr::True, 0)),
        Value::Bool(false) => return Ok((Expr::False, 0)),
        Value::String(s) if s == "true" => return Ok((Expr::True, 0)),
        Value::String(s) if s == "false" => return Ok((Expr::False, 0)),
        Value::Object(obj) => obj,
        other => return Err(Error::parse(format!("not a predicate: {}", brief(other)))),
    };
    let kind = obj.get("type").and_then(Value::as_str).ok_or_else(|| {
        Error::parse(format!(
            "predicate without a string \"type\": {}",
            brief(value)
        ))
    })?;
    match kind {
        "true" => Ok((Expr::True, 0)),
        "false" => Ok((Expr::False, 0)),
        "not" => {
            let (child, depth) = grow(|| parse(get(obj, "child", kind)?, schema))?;
            Ok(match child {
                Expr::True => (Expr::False, 0),
                Expr::False => (Expr::True, 0),
                // NOT NOT x is x (the child's depth counted the inner NOT).
                Expr::Not(_) => (Expr::not(child), depth - 1),
                _ if depth >= MAX_DEPTH => return Err(too_deep()),
                child => (Expr::not(child), depth + 1),
            })
        }
        "and" | "or" => {
            let mut operands = Vec::new();
            for operand in chain(value, kind)? {
                operands.push(grow(|| parse(operand, schema))?);
            }
            balanced(kind == "and", operands)
        }
        _ => Ok((leaf(kind, obj, value, schema)?, 0)),
    }
}

/// The operands of a chain of one operator, in the order written, whatever its shape;
/// iterative, so a chain thousands of levels deep costs no stack.
fn chain<'a>(root: &'a Value, kind: &str) -> Result<Vec<&'a Value>> {
    let mut out = Vec::new();
    let mut pending = vec![root];
    while let Some(node) = pending.pop() {
        match node.as_object() {
            Some(o) if o.get("type").and_then(Value::as_str) == Some(kind) => {
                pending.push(get(o, "right", kind)?);
                pending.push(get(o, "left", kind)?);
            }
            _ => out.push(node),
        }
    }
    Ok(out)
}

/// A balanced tree of `operands` (split at half, as Python's `And(*terms)`, so a tree built
/// balanced there reads back unchanged). Kept as written, without folding constants, so that
/// a round trip is faithful.
fn balanced(and: bool, operands: Vec<Parsed>) -> Result<Parsed> {
    fn build(and: bool, n: usize, items: &mut impl Iterator<Item = Parsed>) -> Result<Parsed> {
        if n == 1 {
            return items
                .next()
                .ok_or_else(|| Error::invalid("empty and/or chain"));
        }
        let (a, da) = build(and, n / 2, items)?;
        let (b, db) = build(and, n - n / 2, items)?;
        let depth = da.max(db) + 1;
        if depth > MAX_DEPTH {
            return Err(too_deep());
        }
        let (a, b) = (Box::new(a), Box::new(b));
        Ok((if and { Expr::And(a, b) } else { Expr::Or(a, b) }, depth))
    }
    let n = operands.len();
    build(and, n, &mut operands.into_iter())
}

/// A predicate on one field.
fn leaf(kind: &str, obj: &Map<String, Value>, value: &Value, schema: &Schema) -> Result<Expr> {
    let op =
        Op::parse(kind).ok_or_else(|| Error::parse(format!("unknown predicate type {kind:?}")))?;
    // The deprecated form names its reference "term"; only bound (id) terms are accepted here.
    let (field, flipped_literal) = if op.is_unary() || op.is_set() {
        let child = obj
            .get("child")
            .or_else(|| obj.get("term"))
            .ok_or_else(|| Error::parse(format!("{kind} predicate has no \"child\"")))?;
        (reference(child, schema)?, None)
    } else if let Some(term) = obj.get("term") {
        (
            reference(term, schema)?,
            Some((get(obj, "value", kind)?, false)),
        )
    } else {
        let left = get(obj, "left", kind)?;
        let right = get(obj, "right", kind)?;
        if is_reference(left) {
            (reference(left, schema)?, Some((right, false)))
        } else if is_reference(right) {
            (reference(right, schema)?, Some((left, true)))
        } else {
            return Err(Error::unsupported(format!(
                "{kind} predicate must compare a field reference with a literal: {}",
                brief(value)
            )));
        }
    };
    let mut op = op;
    let mut literals = Vec::new();
    if let Some((lit, flipped)) = flipped_literal {
        if flipped {
            op = op.flip().ok_or_else(|| {
                Error::unsupported(format!("{kind} needs the reference on the left"))
            })?;
        }
        literals.push(literal(lit, field)?);
    } else if op.is_set() {
        literals = literal_set(get(obj, "values", kind)?, field)?;
    }
    check(op, field, &literals)?;
    // Java's binder: null tests on a required field are constants.
    match (op, field.required) {
        (Op::IsNull, true) => return Ok(Expr::False),
        (Op::NotNull, true) => return Ok(Expr::True),
        _ => {}
    }
    Ok(Predicate::new(field.id, op, literals).normalized())
}

fn is_reference(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("reference")
}

fn reference<'a>(v: &Value, schema: &'a Schema) -> Result<&'a FieldInfo> {
    let obj = v
        .as_object()
        .filter(|_| is_reference(v))
        .ok_or_else(|| match v {
            Value::String(name) => Error::invalid(format!(
                "unbound reference {name:?}: bind names to field ids before planning"
            )),
            _ => Error::unsupported(format!(
                "only field references are supported, got {}",
                brief(v)
            )),
        })?;
    let id = match obj.get("id").and_then(Value::as_i64) {
        Some(id) => {
            i32::try_from(id).map_err(|_| Error::parse(format!("field id {id} is out of range")))?
        }
        None => {
            return Err(Error::invalid(format!(
                "unbound reference {}: bind names to field ids before planning",
                brief(v)
            )))
        }
    };
    schema.field(id)
}

fn literal(v: &Value, field: &FieldInfo) -> Result<Literal> {
    let (value, data_type) = match v {
        Value::Object(obj) if obj.get("type").and_then(Value::as_str) == Some("literal") => {
            let value = get(obj, "value", "literal")?;
            let ty = match obj.get("data-type") {
                Some(t) => Some(Type::from_json(t)?),
                None => None,
            };
            (value, ty)
        }
        other => (other, None),
    };
    decode_literal(value, data_type, field)
}

fn literal_set(v: &Value, field: &FieldInfo) -> Result<Vec<Literal>> {
    match v {
        Value::Array(items) => items.iter().map(|i| literal(i, field)).collect(),
        Value::Object(obj) if obj.get("type").and_then(Value::as_str) == Some("literals") => {
            let ty = match obj.get("data-type") {
                Some(t) => Some(Type::from_json(t)?),
                None => None,
            };
            get(obj, "values", "literals")?
                .as_array()
                .ok_or_else(|| Error::parse("literals \"values\" must be a list"))?
                .iter()
                .map(|i| decode_literal(i, ty.clone(), field))
                .collect()
        }
        other => Err(Error::parse(format!("not a literal set: {}", brief(other)))),
    }
}

fn decode_literal(value: &Value, data_type: Option<Type>, field: &FieldInfo) -> Result<Literal> {
    let target = Type::Primitive(field.ty.clone());
    let ty = data_type.unwrap_or_else(|| target.clone());
    let lit = value_json::from_json(value, &ty)?.ok_or_else(|| {
        Error::invalid(format!(
            "null literal for field {:?} (id {}): use is-null or not-null",
            field.name, field.id
        ))
    })?;
    convert(lit, &field.ty).map_err(|e| {
        Error::invalid(format!(
            "literal for field {:?} (id {}): {e}",
            field.name, field.id
        ))
    })
}

/// Aligns a literal with the field type by the spec's promotions (and their safe inverses).
fn convert(lit: Literal, ty: &PrimitiveType) -> Result<Literal> {
    use PrimitiveType as P;
    if lit.validate_primitive(ty).is_ok() {
        return Ok(lit);
    }
    let out = match (&lit, ty) {
        (Literal::Int(v), P::Long) => Some(Literal::Long(*v as i64)),
        (Literal::Long(v), P::Int) => i32::try_from(*v).ok().map(Literal::Int),
        (Literal::Float(v), P::Double) => Some(Literal::Double(*v as f64)),
        (Literal::Double(v), P::Float) => {
            let f = *v as f32;
            (f as f64 == *v).then_some(Literal::Float(f))
        }
        (Literal::Int(v), P::Date) => Some(Literal::Date(*v)),
        (Literal::Date(d), P::Timestamp) => (*d as i64)
            .checked_mul(frazil_values::temporal::MICROS_PER_DAY)
            .map(Literal::Timestamp),
        (Literal::Date(d), P::TimestampNs) => (*d as i64)
            .checked_mul(frazil_values::temporal::NANOS_PER_DAY)
            .map(Literal::TimestampNs),
        (Literal::Binary(b), P::Fixed(n)) if b.len() as u64 == *n => {
            Some(Literal::Fixed(b.clone()))
        }
        (Literal::Fixed(b), P::Binary) => Some(Literal::Binary(b.clone())),
        _ => None,
    };
    match out {
        Some(l) => {
            l.validate_primitive(ty)?;
            Ok(l)
        }
        None => Err(Error::invalid(format!(
            "{} value {lit:?} cannot be used as a {ty}",
            lit.kind()
        ))),
    }
}

fn check(op: Op, field: &FieldInfo, literals: &[Literal]) -> Result<()> {
    let name = |what: &str| {
        Error::invalid(format!(
            "{} on field {:?} (id {}) of type {}: {what}",
            op.as_str(),
            field.name,
            field.id,
            field.ty
        ))
    };
    match op {
        Op::IsNaN | Op::NotNaN
            if !matches!(field.ty, PrimitiveType::Float | PrimitiveType::Double) =>
        {
            return Err(name("NaN tests need a float or double field"))
        }
        Op::StartsWith | Op::NotStartsWith if field.ty != PrimitiveType::String => {
            return Err(name("starts-with needs a string field"))
        }
        _ => {}
    }
    if matches!(
        field.ty,
        PrimitiveType::Variant
            | PrimitiveType::Geometry { .. }
            | PrimitiveType::Geography { .. }
            | PrimitiveType::Unknown
    ) && !matches!(op, Op::IsNull | Op::NotNull)
    {
        return Err(name("only null tests are supported on this type"));
    }
    if literals.iter().any(lit_is_nan) {
        return Err(name("NaN literal; use is-nan or not-nan"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Schema {
        Schema::from_json(
            r#"{"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"}]}"#,
        )
        .unwrap()
    }

    fn eq(v: i64) -> String {
        format!(r#"{{"type":"eq","left":{{"type":"reference","id":1}},"right":{v}}}"#)
    }

    /// A chain of `n` predicates nested one level per operand, built as text (no recursion).
    fn chain_text(n: i64, kind: &str, left_deep: bool) -> String {
        let open = format!(r#"{{"type":"{kind}","left":"#);
        let mut text = String::new();
        if left_deep {
            // ((0 op 1) op 2) ...
            text.push_str(&open.repeat(n as usize - 1));
            text.push_str(&eq(0));
            for i in 1..n {
                text.push_str(&format!(r#","right":{}}}"#, eq(i)));
            }
        } else {
            // 1 op (2 op (... op 0))
            for i in 1..n {
                text.push_str(&format!("{open}{},\"right\":", eq(i)));
            }
            text.push_str(&eq(0));
            text.push_str(&"}".repeat(n as usize - 1));
        }
        text
    }

    fn depth(e: &Expr) -> usize {
        match e {
            Expr::And(a, b) | Expr::Or(a, b) => 1 + depth(a).max(depth(b)),
            Expr::Not(a) => 1 + depth(a),
            _ => 0,
        }
    }

    fn literals(e: &Expr) -> Vec<i64> {
        let mut preds = Vec::new();
        e.predicates(&mut preds);
        preds
            .iter()
            .map(|p| match p.literal() {
                Some(Literal::Long(v)) => *v,
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn deep_chains_are_balanced_in_order() {
        let n = 20_000;
        for (kind, left_deep) in [("or", true), ("or", false), ("and", true), ("and", false)] {
            let text = chain_text(n, kind, left_deep);
            let e = Expr::from_json_str(&text, &schema()).unwrap();
            // ceil(log2(20000)) = 15
            assert_eq!(depth(&e), 15, "{kind} left_deep={left_deep}");
            let order: Vec<i64> = if left_deep {
                (0..n).collect()
            } else {
                (1..n).chain([0]).collect()
            };
            assert_eq!(literals(&e), order);
            assert!(matches!(
                (&e, kind),
                (Expr::Or(..), "or") | (Expr::And(..), "and")
            ));
        }
    }

    #[test]
    fn balanced_input_reads_back_unchanged() {
        // Python's And(a, b, c) is And(a, And(b, c)): the split at half is the same here.
        let text = format!(
            r#"{{"type":"and","left":{},"right":{{"type":"and","left":{},"right":{}}}}}"#,
            eq(1),
            eq(2),
            eq(3)
        );
        let e = Expr::from_json_str(&text, &schema()).unwrap();
        let back = e.to_json(&schema()).unwrap();
        assert_eq!(
            back,
            serde_json::from_str::<Value>(&text).unwrap().pipe_typed()
        );
    }

    trait PipeTyped {
        fn pipe_typed(self) -> Value;
    }
    impl PipeTyped for Value {
        /// The literal form `to_json` writes for a long.
        fn pipe_typed(mut self) -> Value {
            let mut stack = vec![&mut self];
            while let Some(v) = stack.pop() {
                if let Value::Object(o) = v {
                    if let Some(r) = o.get_mut("right") {
                        if r.is_i64() {
                            *r = serde_json::json!({"type":"literal","value":r.clone(),"data-type":"long"});
                        }
                    }
                    stack.extend(o.values_mut());
                }
            }
            self
        }
    }

    #[test]
    fn deep_not_nests_cancel() {
        for n in [30_000usize, 30_001] {
            let text = format!(
                "{}{}{}",
                r#"{"type":"not","child":"#.repeat(n),
                eq(7),
                "}".repeat(n)
            );
            let e = Expr::from_json_str(&text, &schema()).unwrap();
            assert_eq!(depth(&e), n % 2, "{n}");
        }
    }

    #[test]
    fn alternations_past_the_limit_are_refused() {
        let nest = |levels: usize| {
            let mut text = String::new();
            for i in 0..levels {
                let kind = if i % 2 == 0 { "and" } else { "or" };
                text.push_str(&format!(r#"{{"type":"{kind}","left":{},"right":"#, eq(1)));
            }
            text.push_str(&eq(0));
            text.push_str(&"}".repeat(levels));
            text
        };
        let ok = Expr::from_json_str(&nest(MAX_DEPTH), &schema()).unwrap();
        assert_eq!(depth(&ok), MAX_DEPTH);
        let err = Expr::from_json_str(&nest(MAX_DEPTH + 1), &schema()).unwrap_err();
        assert_eq!(err.kind, frazil_values::ErrorKind::InvalidArgument);
        assert!(err.message.contains("500 levels"), "{}", err.message);
        let err = Expr::from_json_str(&nest(5_000), &schema()).unwrap_err();
        assert_eq!(err.kind, frazil_values::ErrorKind::InvalidArgument);
    }

    #[test]
    fn json_past_the_limit_is_refused_before_parsing() {
        let text = format!(
            "{}{}",
            "[".repeat(MAX_JSON_DEPTH + 1),
            "]".repeat(MAX_JSON_DEPTH + 1)
        );
        let err = Expr::from_json_str(&text, &schema()).unwrap_err();
        assert_eq!(err.kind, frazil_values::ErrorKind::InvalidArgument);
        // Just under the limit: read (on a grown stack), refused as not a predicate, dropped.
        let text = format!(
            r#"{{"type":"is-null","child":{}1{}}}"#,
            "[".repeat(MAX_JSON_DEPTH - 2),
            "]".repeat(MAX_JSON_DEPTH - 2)
        );
        let err = Expr::from_json_str(&text, &schema()).unwrap_err();
        assert!(err.message.len() < 400, "{}", err.message);
        // Brackets inside strings do not count.
        assert_eq!(json_depth(r#"{"a":"[[[{{\"]"}"#), 1);
        assert!(Expr::from_json_str("[1", &schema()).is_err());
        assert!(Expr::from_json_str("true false", &schema()).is_err());
    }

    #[test]
    fn deep_expressions_built_by_hand_drop() {
        let mut e = Expr::Pred(Predicate::new(1, Op::Eq, vec![Literal::Long(0)]));
        for i in 1..1_000_000 {
            let p = Expr::Pred(Predicate::new(1, Op::Eq, vec![Literal::Long(i)]));
            e = Expr::Or(Box::new(e), Box::new(Expr::Not(Box::new(p))));
        }
        drop(e);
    }
}
