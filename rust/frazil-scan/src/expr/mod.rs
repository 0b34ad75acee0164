//! Bound expressions (expressions spec, Appendix B): predicates on field ids with literals of the
//! field's type. The Python layer binds names and converts literals; this module reads the bound
//! JSON ([`json`]: any depth, same-operator chains balanced, see its docs for the limits),
//! checks it against the schema, and writes expressions back (residuals) in the same form.

use std::collections::HashMap;

use frazil_values::json as value_json;
use frazil_values::{Error, Literal, PrimitiveType, Result, StructType, Type};
use serde_json::Value;

use crate::value::compare_literals;

pub mod json;
pub use json::{MAX_DEPTH, MAX_JSON_DEPTH};

/// A field a predicate may reference: a primitive reachable through structs only.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldInfo {
    pub id: i32,
    pub name: String,
    pub ty: PrimitiveType,
    pub required: bool,
    /// A direct child of the schema's root struct (strict metrics only trust those).
    pub top_level: bool,
}

/// The fields of a schema (or of a partition type) by id.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    pub fields: HashMap<i32, FieldInfo>,
}

impl Schema {
    pub fn from_struct(s: &StructType) -> Schema {
        let mut fields = HashMap::new();
        index(s, true, true, &mut fields);
        Schema { fields }
    }

    /// Parses a schema's JSON (Appendix C), e.g. one entry of table metadata's `schemas`.
    pub fn from_json(text: &str) -> Result<Schema> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Error::parse(format!("schema JSON is not valid JSON: {e}")))?;
        match Type::from_json(&value)? {
            Type::Struct(s) => Ok(Schema::from_struct(&s)),
            _ => Err(Error::parse("schema JSON must be a struct type")),
        }
    }

    pub fn field(&self, id: i32) -> Result<&FieldInfo> {
        self.fields
            .get(&id)
            .ok_or_else(|| Error::invalid(format!("field id {id} is not in the schema")))
    }
}

fn index(s: &StructType, top: bool, parents_required: bool, out: &mut HashMap<i32, FieldInfo>) {
    for f in &s.fields {
        match &f.field_type {
            Type::Primitive(p) => {
                out.insert(
                    f.id,
                    FieldInfo {
                        id: f.id,
                        name: f.name.clone(),
                        ty: p.clone(),
                        // A required field in an optional struct can still read as null.
                        required: f.required && parents_required,
                        top_level: top,
                    },
                );
            }
            Type::Struct(inner) => index(inner, false, parents_required && f.required, out),
            // Values in lists and maps are not single values of a row.
            Type::List(_) | Type::Map(_) => {}
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    IsNull,
    NotNull,
    IsNaN,
    NotNaN,
    Lt,
    LtEq,
    Gt,
    GtEq,
    Eq,
    NotEq,
    StartsWith,
    NotStartsWith,
    In,
    NotIn,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::IsNull => "is-null",
            Op::NotNull => "not-null",
            Op::IsNaN => "is-nan",
            Op::NotNaN => "not-nan",
            Op::Lt => "lt",
            Op::LtEq => "lt-eq",
            Op::Gt => "gt",
            Op::GtEq => "gt-eq",
            Op::Eq => "eq",
            Op::NotEq => "not-eq",
            Op::StartsWith => "starts-with",
            Op::NotStartsWith => "not-starts-with",
            Op::In => "in",
            Op::NotIn => "not-in",
        }
    }

    fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "is-null" => Op::IsNull,
            "not-null" => Op::NotNull,
            "is-nan" => Op::IsNaN,
            "not-nan" => Op::NotNaN,
            "lt" => Op::Lt,
            "lt-eq" => Op::LtEq,
            "gt" => Op::Gt,
            "gt-eq" => Op::GtEq,
            "eq" => Op::Eq,
            "not-eq" => Op::NotEq,
            "starts-with" => Op::StartsWith,
            "not-starts-with" => Op::NotStartsWith,
            "in" => Op::In,
            "not-in" => Op::NotIn,
            _ => return None,
        })
    }

    pub fn negate(self) -> Op {
        match self {
            Op::IsNull => Op::NotNull,
            Op::NotNull => Op::IsNull,
            Op::IsNaN => Op::NotNaN,
            Op::NotNaN => Op::IsNaN,
            Op::Lt => Op::GtEq,
            Op::LtEq => Op::Gt,
            Op::Gt => Op::LtEq,
            Op::GtEq => Op::Lt,
            Op::Eq => Op::NotEq,
            Op::NotEq => Op::Eq,
            Op::StartsWith => Op::NotStartsWith,
            Op::NotStartsWith => Op::StartsWith,
            Op::In => Op::NotIn,
            Op::NotIn => Op::In,
        }
    }

    /// `lit OP ref` read as `ref OP' lit`.
    fn flip(self) -> Option<Op> {
        Some(match self {
            Op::Lt => Op::Gt,
            Op::LtEq => Op::GtEq,
            Op::Gt => Op::Lt,
            Op::GtEq => Op::LtEq,
            Op::Eq => Op::Eq,
            Op::NotEq => Op::NotEq,
            _ => return None,
        })
    }

    pub fn is_unary(self) -> bool {
        matches!(self, Op::IsNull | Op::NotNull | Op::IsNaN | Op::NotNaN)
    }

    pub fn is_set(self) -> bool {
        matches!(self, Op::In | Op::NotIn)
    }
}

/// A predicate on one field. `literals` is empty for unary ops, one value for comparisons and
/// starts-with, and a sorted, de-duplicated set for in/not-in.
#[derive(Debug, Clone, PartialEq)]
pub struct Predicate {
    pub field_id: i32,
    pub op: Op,
    pub literals: Vec<Literal>,
}

impl Predicate {
    pub fn new(field_id: i32, op: Op, literals: Vec<Literal>) -> Predicate {
        Predicate {
            field_id,
            op,
            literals,
        }
    }

    pub fn literal(&self) -> Option<&Literal> {
        self.literals.first()
    }

    /// The Java binder's simplifications, applied to every predicate this crate builds: a set of
    /// one is a comparison, an empty set is a constant; set literals are sorted and unique.
    pub fn normalized(mut self) -> Expr {
        if self.op.is_set() {
            sort_dedup(&mut self.literals);
            match (self.op, self.literals.len()) {
                (Op::In, 0) => return Expr::False,
                (Op::NotIn, 0) => return Expr::True,
                (Op::In, 1) => self.op = Op::Eq,
                (Op::NotIn, 1) => self.op = Op::NotEq,
                _ => {}
            }
        }
        Expr::Pred(self)
    }

    fn negate(&self) -> Predicate {
        Predicate::new(self.field_id, self.op.negate(), self.literals.clone())
    }

    /// `NOT self` under the spec's 2-valued semantics (see [`Expr::rewrite_not`]).
    fn negate_exact(&self, schema: &Schema) -> Expr {
        let negated = Expr::Pred(self.negate());
        if !matches!(self.op, Op::Lt | Op::LtEq | Op::Gt | Op::GtEq) {
            return negated;
        }
        let field = schema.fields.get(&self.field_id);
        let mut out = negated;
        if !field.is_some_and(|f| f.required) {
            out = Expr::or(
                out,
                Expr::Pred(Predicate::new(self.field_id, Op::IsNull, vec![])),
            );
        }
        if field.is_some_and(|f| matches!(f.ty, PrimitiveType::Float | PrimitiveType::Double)) {
            out = Expr::or(
                out,
                Expr::Pred(Predicate::new(self.field_id, Op::IsNaN, vec![])),
            );
        }
        out
    }
}

pub(crate) fn sort_dedup(literals: &mut Vec<Literal>) {
    literals.sort_by(|a, b| compare_literals(a, b).unwrap_or(std::cmp::Ordering::Equal));
    literals.dedup_by(|a, b| compare_literals(a, b) == Some(std::cmp::Ordering::Equal));
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    True,
    False,
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Pred(Predicate),
}

impl Expr {
    /// `a AND b`, folding constants as Java's `Expressions.and` does.
    pub fn and(a: Expr, b: Expr) -> Expr {
        match (a, b) {
            (Expr::False, _) | (_, Expr::False) => Expr::False,
            (Expr::True, x) | (x, Expr::True) => x,
            (a, b) => Expr::And(Box::new(a), Box::new(b)),
        }
    }

    /// `a OR b`, folding constants.
    pub fn or(a: Expr, b: Expr) -> Expr {
        match (a, b) {
            (Expr::True, _) | (_, Expr::True) => Expr::True,
            (Expr::False, x) | (x, Expr::False) => x,
            (a, b) => Expr::Or(Box::new(a), Box::new(b)),
        }
    }

    #[allow(clippy::should_implement_trait)]
    pub fn not(mut a: Expr) -> Expr {
        match &mut a {
            Expr::True => Expr::False,
            Expr::False => Expr::True,
            Expr::Not(inner) => take(inner),
            _ => Expr::Not(Box::new(a)),
        }
    }

    /// The predicate of a predicate expression. (Expr implements Drop, so its parts are taken
    /// out rather than moved out.)
    pub fn into_predicate(mut self) -> Option<Predicate> {
        match &mut self {
            Expr::Pred(p) => Some(std::mem::replace(p, Predicate::new(0, Op::Eq, Vec::new()))),
            _ => None,
        }
    }

    /// Pushes every NOT down to the predicates (Java's `RewriteNot`), which evaluators that only
    /// answer "might match" need: the negation of "might" is not "cannot".
    ///
    /// The rewrite keeps the spec's 2-valued semantics exactly: `NOT (x < c)` is true where
    /// `x < c` is false, which includes null and NaN values, so it becomes
    /// `x >= c OR x IS NULL OR x IS NaN` (the null test only for optional fields of `schema`,
    /// the NaN test only for float and double). Java's `RewriteNot` makes it `x >= c` alone,
    /// which drops null and NaN rows. `!=`, `NOT IN`, `NOT STARTS WITH` and the null and NaN
    /// tests are already exact negations.
    pub fn rewrite_not(self, schema: &Schema) -> Expr {
        self.push(false, schema)
    }

    fn push(mut self, negate: bool, schema: &Schema) -> Expr {
        // Expr implements Drop, so children are taken out rather than moved out of the match.
        match (&mut self, negate) {
            (Expr::True, false) | (Expr::False, true) => Expr::True,
            (Expr::True, true) | (Expr::False, false) => Expr::False,
            (Expr::Not(inner), n) => take(inner).push(!n, schema),
            (Expr::And(a, b), false) => {
                Expr::and(take(a).push(false, schema), take(b).push(false, schema))
            }
            (Expr::And(a, b), true) => {
                Expr::or(take(a).push(true, schema), take(b).push(true, schema))
            }
            (Expr::Or(a, b), false) => {
                Expr::or(take(a).push(false, schema), take(b).push(false, schema))
            }
            (Expr::Or(a, b), true) => {
                Expr::and(take(a).push(true, schema), take(b).push(true, schema))
            }
            (Expr::Pred(p), true) => p.negate_exact(schema),
            (Expr::Pred(_), false) => self,
        }
    }
    /// Visits the predicates, left to right.
    pub fn predicates<'a>(&'a self, out: &mut Vec<&'a Predicate>) {
        match self {
            Expr::True | Expr::False => {}
            Expr::And(a, b) | Expr::Or(a, b) => {
                a.predicates(out);
                b.predicates(out);
            }
            Expr::Not(a) => a.predicates(out),
            Expr::Pred(p) => out.push(p),
        }
    }

    /// The field ids the predicates reference, sorted and unique: the columns whose stats an
    /// evaluation of this expression can read (e.g. `ReadOptions::stats_field_ids`). Walks
    /// with an explicit stack, so any depth the parser accepts is fine.
    pub fn referenced_field_ids(&self) -> Vec<i32> {
        let mut ids = Vec::new();
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            match e {
                Expr::True | Expr::False => {}
                Expr::And(a, b) | Expr::Or(a, b) => {
                    stack.push(b);
                    stack.push(a);
                }
                Expr::Not(a) => stack.push(a),
                Expr::Pred(p) => ids.push(p.field_id),
            }
        }
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Parses a bound expression (expressions spec, Appendix B) against `schema`, with its
    /// and/or chains balanced (see [`json`] for the depth limits).
    pub fn from_json(value: &Value, schema: &Schema) -> Result<Expr> {
        json::from_json(value, schema)
    }

    /// A schema (Appendix C JSON text) and a filter bound to it (expressions JSON text).
    pub fn bound_from_json(schema_json: &str, filter_json: &str) -> Result<(Schema, Expr)> {
        let schema = Schema::from_json(schema_json)?;
        let expr = Expr::from_json_str(filter_json, &schema)?;
        Ok((schema, expr))
    }

    /// [`Expr::from_json`] of JSON text, read on a growing stack to any depth up to
    /// [`MAX_JSON_DEPTH`].
    pub fn from_json_str(text: &str, schema: &Schema) -> Result<Expr> {
        json::from_json_str(text, schema)
    }

    /// The current JSON form with id references and typed literals.
    pub fn to_json(&self, schema: &Schema) -> Result<Value> {
        // Objects are built from owned values: `json!` would serialize each interpolated child
        // again (a copy of the whole subtree at every level).
        Ok(match self {
            Expr::True => Value::Bool(true),
            Expr::False => Value::Bool(false),
            Expr::And(a, b) | Expr::Or(a, b) => {
                let kind = if matches!(self, Expr::And(..)) {
                    "and"
                } else {
                    "or"
                };
                object([
                    ("type", kind.into()),
                    ("left", a.to_json(schema)?),
                    ("right", b.to_json(schema)?),
                ])
            }
            Expr::Not(a) => object([("type", "not".into()), ("child", a.to_json(schema)?)]),
            Expr::Pred(p) => {
                let field = schema.field(p.field_id)?;
                let ty = Type::Primitive(field.ty.clone());
                let reference = object([("type", "reference".into()), ("id", p.field_id.into())]);
                let op = p.op.as_str().into();
                if p.op.is_unary() {
                    object([("type", op), ("child", reference)])
                } else if p.op.is_set() {
                    let values = p
                        .literals
                        .iter()
                        .map(|l| value_json::to_json(Some(l), &ty))
                        .collect::<Result<Vec<_>>>()?;
                    let literals = object([
                        ("type", "literals".into()),
                        ("values", Value::Array(values)),
                        ("data-type", ty.to_json()),
                    ]);
                    object([("type", op), ("child", reference), ("values", literals)])
                } else {
                    let lit = p.literal().ok_or_else(|| {
                        Error::invalid(format!("{} predicate without a literal", p.op.as_str()))
                    })?;
                    let literal = object([
                        ("type", "literal".into()),
                        ("value", value_json::to_json(Some(lit), &ty)?),
                        ("data-type", ty.to_json()),
                    ]);
                    object([("type", op), ("left", reference), ("right", literal)])
                }
            }
        })
    }
}

fn object<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// Takes a child out of its box (leaving a constant), for code that rebuilds an expression.
fn take(child: &mut Box<Expr>) -> Expr {
    std::mem::replace(&mut **child, Expr::True)
}

/// Dropping never recurses more than one level: nested and/or/not children are detached onto
/// a heap stack first, so a deep expression (say, a chain built by hand with `Expr::and` in a
/// loop) drops without overflowing the stack.
impl Drop for Expr {
    fn drop(&mut self) {
        fn detach(e: &mut Expr, stack: &mut Vec<Expr>) {
            let mut push = |child: &mut Box<Expr>| {
                if matches!(**child, Expr::And(..) | Expr::Or(..) | Expr::Not(_)) {
                    stack.push(std::mem::replace(&mut **child, Expr::True));
                }
            };
            match e {
                Expr::And(a, b) | Expr::Or(a, b) => {
                    push(a);
                    push(b);
                }
                Expr::Not(a) => push(a),
                Expr::True | Expr::False | Expr::Pred(_) => {}
            }
        }
        let mut stack = Vec::new();
        detach(self, &mut stack);
        while let Some(mut e) = stack.pop() {
            detach(&mut e, &mut stack);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn schema() -> Schema {
        Schema::from_json(
            r#"{"type":"struct","fields":[
            {"id":1,"name":"id","required":true,"type":"long"},
            {"id":2,"name":"data","required":false,"type":"string"},
            {"id":3,"name":"f","required":false,"type":"double"},
            {"id":4,"name":"s","required":false,"type":{"type":"struct","fields":[
                {"id":5,"name":"x","required":true,"type":"int"}]}}
            ]}"#,
        )
        .unwrap()
    }

    fn parse(text: &str) -> Result<Expr> {
        Expr::from_json_str(text, &schema())
    }

    #[test]
    fn referenced_field_ids_are_sorted_and_unique() {
        let e = parse(
            r#"{"type":"or","left":{"type":"not","child":{"type":"is-null","term":{"type":"reference","id":5}}},
            "right":{"type":"and","left":{"type":"lt","left":{"type":"reference","id":2},
            "right":{"type":"literal","value":"m","data-type":"string"}},
            "right":{"type":"and","left":{"type":"gt-eq","left":{"type":"reference","id":1},
            "right":{"type":"literal","value":5,"data-type":"long"}},
            "right":{"type":"not-nan","term":{"type":"reference","id":3}}}}}"#,
        )
        .unwrap();
        assert_eq!(e.referenced_field_ids(), vec![1, 2, 3, 5]);
        assert_eq!(Expr::True.referenced_field_ids(), Vec::<i32>::new());
        assert_eq!(Expr::False.referenced_field_ids(), Vec::<i32>::new());
        // a left-deep chain deeper than any recursion would survive, ids repeated
        let mut deep = Expr::Pred(Predicate::new(7, Op::IsNull, Vec::new()));
        for i in 0..200_000 {
            let p = Expr::Pred(Predicate::new([4, 1, 9][i % 3], Op::NotNull, Vec::new()));
            deep = Expr::Or(Box::new(Expr::not(deep)), Box::new(p));
        }
        assert_eq!(deep.referenced_field_ids(), vec![1, 4, 7, 9]);
    }

    #[test]
    fn current_form() {
        let e = parse(
            r#"{"type":"and","left":{"type":"lt","left":{"type":"reference","id":1},
            "right":{"type":"literal","value":5,"data-type":"long"}},
            "right":{"type":"in","child":{"type":"reference","id":2},
            "values":{"type":"literals","values":["b","a","b"],"data-type":"string"}}}"#,
        )
        .unwrap();
        let expected = Expr::And(
            Box::new(Expr::Pred(Predicate::new(
                1,
                Op::Lt,
                vec![Literal::Long(5)],
            ))),
            Box::new(Expr::Pred(Predicate::new(
                2,
                Op::In,
                vec![Literal::String("a".into()), Literal::String("b".into())],
            ))),
        );
        assert_eq!(e, expected);
        let back = Expr::from_json(&e.to_json(&schema()).unwrap(), &schema()).unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn literal_on_the_left_flips() {
        let e = parse(r#"{"type":"lt","left":5,"right":{"type":"reference","id":1}}"#).unwrap();
        assert_eq!(
            e,
            Expr::Pred(Predicate::new(1, Op::Gt, vec![Literal::Long(5)]))
        );
    }

    #[test]
    fn binder_simplifications() {
        // id is required, s.x is required inside an optional struct
        assert_eq!(
            parse(r#"{"type":"is-null","child":{"type":"reference","id":1}}"#).unwrap(),
            Expr::False
        );
        assert_eq!(
            parse(r#"{"type":"not-null","child":{"type":"reference","id":1}}"#).unwrap(),
            Expr::True
        );
        assert!(matches!(
            parse(r#"{"type":"is-null","child":{"type":"reference","id":5}}"#).unwrap(),
            Expr::Pred(_)
        ));
        assert_eq!(
            parse(r#"{"type":"in","child":{"type":"reference","id":1},"values":[3]}"#).unwrap(),
            Expr::Pred(Predicate::new(1, Op::Eq, vec![Literal::Long(3)]))
        );
        assert_eq!(
            parse(r#"{"type":"not-in","child":{"type":"reference","id":1},"values":[]}"#).unwrap(),
            Expr::True
        );
        // an int literal for a long field is promoted
        assert_eq!(
            parse(r#"{"type":"eq","left":{"type":"reference","id":1},"right":{"type":"literal","value":3,"data-type":"int"}}"#).unwrap(),
            Expr::Pred(Predicate::new(1, Op::Eq, vec![Literal::Long(3)]))
        );
        assert_eq!(parse("true").unwrap(), Expr::True);
        assert_eq!(parse(r#"{"type":"false"}"#).unwrap(), Expr::False);
    }

    #[test]
    fn bad_input() {
        for text in [
            r#"{"type":"lt","left":{"type":"reference","id":99},"right":1}"#,
            r#"{"type":"lt","left":{"type":"reference","name":"id"},"right":1}"#,
            r#"{"type":"lt","left":"id","right":1}"#,
            r#"{"type":"lt","left":{"type":"reference","id":1},"right":null}"#,
            r#"{"type":"lt","left":{"type":"reference","id":1},"right":"x"}"#,
            r#"{"type":"eq","left":{"type":"reference","id":3},"right":"NaN"}"#,
            r#"{"type":"is-nan","child":{"type":"reference","id":1}}"#,
            r#"{"type":"starts-with","left":{"type":"reference","id":1},"right":1}"#,
            r#"{"type":"starts-with","left":"a","right":{"type":"reference","id":2}}"#,
            r#"{"type":"bogus"}"#,
            r#"{"type":"and","left":true}"#,
            r#"[1]"#,
            r#"{"type":"lt","left":{"type":"reference","id":1},"right":{"type":"literal","value":3000000000,"data-type":"long"}} "#,
        ] {
            let r = parse(text);
            if text.contains("3000000000") {
                assert!(r.is_ok(), "{text}");
            } else {
                assert!(r.is_err(), "{text} parsed as {r:?}");
            }
        }
    }

    #[test]
    fn rewrite_not_pushes_down() {
        let e = parse(
            r#"{"type":"not","child":{"type":"or","left":{"type":"lt","left":{"type":"reference","id":1},"right":5},
            "right":{"type":"not","child":{"type":"is-null","child":{"type":"reference","id":2}}}}}"#,
        )
        .unwrap()
        .rewrite_not(&schema());
        // id is required: NOT (id < 5) is id >= 5
        assert_eq!(
            e,
            Expr::And(
                Box::new(Expr::Pred(Predicate::new(
                    1,
                    Op::GtEq,
                    vec![Literal::Long(5)]
                ))),
                Box::new(Expr::Pred(Predicate::new(2, Op::IsNull, vec![]))),
            )
        );
        // f is an optional double: NOT (f > 1) also holds for null and NaN
        let e = parse(
            r#"{"type":"not","child":{"type":"gt","left":{"type":"reference","id":3},"right":1.0}}"#,
        )
        .unwrap()
        .rewrite_not(&schema());
        let pred = |op| Box::new(Expr::Pred(Predicate::new(3, op, vec![])));
        assert_eq!(
            e,
            Expr::Or(
                Box::new(Expr::Or(
                    Box::new(Expr::Pred(Predicate::new(
                        3,
                        Op::LtEq,
                        vec![Literal::Double(1.0)]
                    ))),
                    pred(Op::IsNull),
                )),
                pred(Op::IsNaN),
            )
        );
    }
}
