//! [`RowFilter`]: a bound expression evaluated on the rows of Arrow columns (Java's
//! `Evaluator`, over a batch instead of one struct), with the expressions spec's semantics.
//!
//! The spec ("Tests", "Comparisons", "Boolean logic") makes every predicate 2-valued and
//! null-safe: a predicate is true or false, never null, and `NOT e` is true exactly where `e`
//! is false. So `e` and `NOT e` partition the rows:
//! - `x = c`, `x < c`, `x <= c`, `x > c`, `x >= c`, `x IN (..)`, `x STARTS WITH c` are false
//!   when `x` is null or NaN (literals are never null or NaN);
//! - `x != c`, `x NOT IN (..)`, `x NOT STARTS WITH c` are their negations: true for null and NaN;
//! - `IS NaN` is false and `IS NOT NaN` true for null;
//! - floats compare in IEEE order (`-0.0 = 0.0`); strings, binary, fixed and uuid byte-wise.
//!
//! Where Java's `Evaluator` (1.10) differs, the spec is followed: Java orders null first
//! (`null < 5` and `null <= 5` are true there) and orders NaN above every value through
//! `Double.compare` (`NaN > 1.0` is true, `-0.0 < 0.0`).
//!
//! Evaluation is linear in rows x distinct leaves and never recurses per term: and/or chains
//! are flattened into n-ary nodes (the parser has already bounded the depth, see
//! [`crate::expr::json`]), `=`/`IN` terms on one field inside an OR, and `!=`/`NOT IN` terms
//! on one field inside an AND, become one hash-set probe, and and/or stop once every row is
//! decided.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use arrow_array::{Array, ArrayRef};
use arrow_buffer::BooleanBuffer;
use frazil_values::bound::{compare, of_literal, Val};
use frazil_values::{Error, Literal, PrimitiveType, Result};

use crate::expr::{Expr, Op, Predicate, Schema};
use crate::value::Column;

/// A compiled row filter. [`RowFilter::field_ids`] names the columns [`RowFilter::eval`]
/// takes, in order.
pub struct RowFilter {
    root: Node,
    field_ids: Vec<i32>,
    types: Vec<PrimitiveType>,
}

enum Node {
    Const(bool),
    And(Vec<Node>),
    Or(Vec<Node>),
    Not(Box<Node>),
    Leaf(Leaf),
}

struct Leaf {
    /// Index into the filter's columns.
    col: usize,
    op: Op,
    /// The comparison literal, or the starts-with prefix.
    lit: Option<Literal>,
    /// `IN`/`NOT IN` members.
    set: Option<LitSet>,
}

impl RowFilter {
    /// Compiles a bound expression (as [`Expr::from_json`] reads it) against the schema it is
    /// bound to.
    pub fn new(expr: &Expr, schema: &Schema) -> Result<RowFilter> {
        let mut b = Builder {
            schema,
            field_ids: Vec::new(),
            types: Vec::new(),
            cols: HashMap::new(),
        };
        let root = b.node(expr)?;
        Ok(RowFilter {
            root,
            field_ids: b.field_ids,
            types: b.types,
        })
    }

    /// The field ids of the columns `eval` takes, in order.
    pub fn field_ids(&self) -> &[i32] {
        &self.field_ids
    }

    /// One boolean per row: whether the row makes the expression true. `columns` holds one
    /// array per [`RowFilter::field_ids`] entry, each of `len` rows (a null parent struct must
    /// already be folded into the child's nulls).
    pub fn eval(&self, columns: &[ArrayRef], len: usize) -> Result<BooleanBuffer> {
        if columns.len() != self.field_ids.len() {
            return Err(Error::invalid(format!(
                "the row filter reads {} columns, got {}",
                self.field_ids.len(),
                columns.len()
            )));
        }
        let cols = columns
            .iter()
            .zip(&self.field_ids)
            .zip(&self.types)
            .map(|((a, id), ty)| {
                if a.len() != len {
                    return Err(Error::invalid(format!(
                        "filter column of field {id} has {} rows, the batch {len}",
                        a.len()
                    )));
                }
                Column::new(a, ty, &format!("filter column of field {id}"))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(eval(&self.root, &cols, len))
    }
}

struct Builder<'s> {
    schema: &'s Schema,
    field_ids: Vec<i32>,
    types: Vec<PrimitiveType>,
    cols: HashMap<i32, usize>,
}

impl Builder<'_> {
    fn col(&mut self, id: i32) -> Result<usize> {
        if let Some(c) = self.cols.get(&id) {
            return Ok(*c);
        }
        let info = self.schema.field(id)?;
        let c = self.field_ids.len();
        self.field_ids.push(id);
        self.types.push(info.ty.clone());
        self.cols.insert(id, c);
        Ok(c)
    }

    fn node(&mut self, e: &Expr) -> Result<Node> {
        Ok(match e {
            Expr::True => Node::Const(true),
            Expr::False => Node::Const(false),
            Expr::Not(a) => Node::Not(Box::new(self.node(a)?)),
            Expr::Pred(p) => Node::Leaf(self.leaf(p)?),
            Expr::And(..) | Expr::Or(..) => {
                let and = matches!(e, Expr::And(..));
                let mut terms = Vec::new();
                flatten(e, and, &mut terms);
                // `=`/`IN` under OR and `!=`/`NOT IN` under AND on one field merge into one set.
                let (merge_ops, set_op) = if and {
                    ([Op::NotEq, Op::NotIn], Op::NotIn)
                } else {
                    ([Op::Eq, Op::In], Op::In)
                };
                let mut merged: Vec<(i32, Vec<Literal>)> = Vec::new();
                let mut nodes = Vec::new();
                for t in terms {
                    match t {
                        Expr::Pred(p) if merge_ops.contains(&p.op) && self.hashable(p) => {
                            match merged.iter_mut().find(|(id, _)| *id == p.field_id) {
                                Some((_, lits)) => lits.extend(p.literals.iter().cloned()),
                                None => merged.push((p.field_id, p.literals.clone())),
                            }
                        }
                        other => nodes.push(self.node(other)?),
                    }
                }
                for (id, lits) in merged {
                    let p = Predicate::new(id, set_op, lits);
                    nodes.push(Node::Leaf(self.leaf(&p)?));
                }
                if and {
                    Node::And(nodes)
                } else {
                    Node::Or(nodes)
                }
            }
        })
    }

    fn hashable(&self, p: &Predicate) -> bool {
        p.literals.iter().all(|l| of_literal(l).is_some())
    }

    fn leaf(&mut self, p: &Predicate) -> Result<Leaf> {
        let col = self.col(p.field_id)?;
        let needs_lit = !p.op.is_unary() && !p.op.is_set();
        let lit = if needs_lit {
            let l = p.literal().ok_or_else(|| {
                Error::invalid(format!("{} predicate without a literal", p.op.as_str()))
            })?;
            if of_literal(l).is_none() {
                return Err(Error::unsupported(format!(
                    "{} literals cannot be compared",
                    l.kind()
                )));
            }
            Some(l.clone())
        } else {
            None
        };
        let set = if p.op.is_set() {
            Some(LitSet::new(&p.literals)?)
        } else {
            None
        };
        if matches!(p.op, Op::StartsWith | Op::NotStartsWith)
            && !matches!(lit.as_ref().and_then(of_literal), Some(Val::Bytes(_)))
        {
            return Err(Error::invalid(
                "starts-with needs a string or binary prefix",
            ));
        }
        Ok(Leaf {
            col,
            op: p.op,
            lit,
            set,
        })
    }
}

/// The operands of a chain of one operator, in order, without recursion.
fn flatten<'e>(e: &'e Expr, and: bool, out: &mut Vec<&'e Expr>) {
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        match x {
            Expr::And(a, b) if and => {
                stack.push(b);
                stack.push(a);
            }
            Expr::Or(a, b) if !and => {
                stack.push(b);
                stack.push(a);
            }
            other => out.push(other),
        }
    }
}

fn eval(node: &Node, cols: &[Column], n: usize) -> BooleanBuffer {
    match node {
        Node::Const(b) => constant(*b, n),
        Node::Not(a) => !&eval(a, cols, n),
        Node::Leaf(l) => eval_leaf(l, &cols[l.col], n),
        Node::And(terms) | Node::Or(terms) => {
            let and = matches!(node, Node::And(_));
            let mut acc: Option<BooleanBuffer> = None;
            for t in terms {
                let v = eval(t, cols, n);
                let next = match acc {
                    None => v,
                    Some(a) if and => &a & &v,
                    Some(a) => &a | &v,
                };
                // every row decided: false for AND, true for OR
                let decided = if and {
                    next.count_set_bits() == 0
                } else {
                    next.count_set_bits() == n
                };
                acc = Some(next);
                if decided {
                    break;
                }
            }
            acc.unwrap_or_else(|| constant(and, n))
        }
    }
}

fn constant(b: bool, n: usize) -> BooleanBuffer {
    if b {
        BooleanBuffer::new_set(n)
    } else {
        BooleanBuffer::new_unset(n)
    }
}

/// One predicate on every row; null and NaN values follow the spec (see the module docs).
fn eval_leaf(l: &Leaf, col: &Column, n: usize) -> BooleanBuffer {
    let positive = |f: &dyn Fn(&Val<'_>) -> bool| {
        BooleanBuffer::collect_bool(n, |i| col.get(i).is_some_and(|v| f(&v)))
    };
    let lit = l.lit.as_ref().and_then(of_literal);
    let cmp = |v: &Val<'_>, want: Cmp| -> bool {
        match &lit {
            Some(c) if !v.is_nan() => compare(v, c).is_some_and(|o| want.holds(o)),
            _ => false,
        }
    };
    let ordered = |want: Cmp| match lit.as_ref() {
        Some(c) => fast_compare(col, c, want, n).unwrap_or_else(|| positive(&|v| cmp(v, want))),
        None => BooleanBuffer::new_unset(n),
    };
    match l.op {
        Op::Lt => ordered(Cmp::Lt),
        Op::LtEq => ordered(Cmp::LtEq),
        Op::Gt => ordered(Cmp::Gt),
        Op::GtEq => ordered(Cmp::GtEq),
        Op::Eq => ordered(Cmp::Eq),
        Op::NotEq => !&ordered(Cmp::Eq),
        Op::IsNull => BooleanBuffer::collect_bool(n, |i| col.get(i).is_none()),
        Op::NotNull => BooleanBuffer::collect_bool(n, |i| col.get(i).is_some()),
        Op::IsNaN => positive(&|v| v.is_nan()),
        Op::NotNaN => !&positive(&|v| v.is_nan()),
        Op::In | Op::NotIn => {
            let member = match &l.set {
                Some(s) => s
                    .members(col, n)
                    .unwrap_or_else(|| positive(&|v| s.contains(v))),
                None => BooleanBuffer::new_unset(n),
            };
            if l.op == Op::In {
                member
            } else {
                !&member
            }
        }
        Op::StartsWith | Op::NotStartsWith => {
            let prefix: &[u8] = match &lit {
                Some(Val::Bytes(b)) => b,
                _ => &[],
            };
            let m = positive(&|v| matches!(v, Val::Bytes(b) if b.starts_with(prefix)));
            if l.op == Op::StartsWith {
                m
            } else {
                !&m
            }
        }
    }
}

/// `found` where the row is valid: a null row is never a match.
fn and_valid(found: BooleanBuffer, nulls: Option<&arrow_buffer::NullBuffer>) -> BooleanBuffer {
    match nulls {
        Some(nb) => &found & nb.inner(),
        None => found,
    }
}

/// An ordered comparison `value <op> literal`: an enum, not a function pointer, so that each
/// operator gets its own loop over the values (a call per row costs more than the compare).
#[derive(Clone, Copy)]
enum Cmp {
    Lt,
    LtEq,
    Gt,
    GtEq,
    Eq,
}

impl Cmp {
    fn holds(self, o: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        match self {
            Cmp::Lt => o == Less,
            Cmp::LtEq => o != Greater,
            Cmp::Gt => o == Greater,
            Cmp::GtEq => o != Less,
            Cmp::Eq => o == Equal,
        }
    }
}

/// `values[i] <want> c` for every row, one loop per operator. With floats the operators are
/// IEEE's: false for NaN, `-0.0 = 0.0`.
fn compare_values<T: PartialOrd + Copy>(values: &[T], c: T, want: Cmp, n: usize) -> BooleanBuffer {
    let v = &values[..n];
    match want {
        Cmp::Lt => BooleanBuffer::collect_bool(n, |i| v[i] < c),
        Cmp::LtEq => BooleanBuffer::collect_bool(n, |i| v[i] <= c),
        Cmp::Gt => BooleanBuffer::collect_bool(n, |i| v[i] > c),
        Cmp::GtEq => BooleanBuffer::collect_bool(n, |i| v[i] >= c),
        Cmp::Eq => BooleanBuffer::collect_bool(n, |i| v[i] == c),
    }
}

/// `value <want> literal` for every row of the common numeric columns, straight from the
/// Arrow buffers (`None`: compare value by value). Null and NaN rows are false; floats compare
/// in IEEE order (`-0.0 = 0.0`).
fn fast_compare(col: &Column, lit: &Val<'_>, want: Cmp, n: usize) -> Option<BooleanBuffer> {
    Some(match (col, lit) {
        (Column::I64(a), Val::I64(c)) => {
            and_valid(compare_values(a.values(), *c, want, n), a.nulls())
        }
        (Column::I32(a), Val::I32(c)) => {
            and_valid(compare_values(a.values(), *c, want, n), a.nulls())
        }
        (Column::F64(a), Val::F64(c)) => {
            and_valid(compare_values(a.values(), *c, want, n), a.nulls())
        }
        (Column::F32(a), Val::F32(c)) => {
            and_valid(compare_values(a.values(), *c, want, n), a.nulls())
        }
        _ => return None,
    })
}

/// FxHash's multiply-rotate with a final mix: set probes run once per row, and SipHash would
/// cost more than the rest of the evaluation (the keys are literals of the user's filter, not
/// attacker-chosen). The final mix (MurmurHash3's fmix64) matters: the table indexes by the low
/// bits, which a last multiply leaves depending only on the last chunk, and keys such as
/// `key-12345` share everything else.
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_i64(&mut self, v: i64) {
        self.write_u64(v as u64)
    }
    fn write_u128(&mut self, v: u128) {
        self.write_u64(v as u64);
        self.write_u64((v >> 64) as u64)
    }
    fn write_i128(&mut self, v: i128) {
        self.write_u128(v as u128)
    }
}

type FxSet<T> = std::collections::HashSet<T, BuildHasherDefault<FxHasher>>;

/// `IN` members keyed so that equal values (in the spec's order) are equal keys.
enum LitSet {
    Bool([bool; 2]),
    Int(FxSet<i64>),
    /// Float bits with -0.0 read as 0.0 (IEEE equality); literals are never NaN.
    Float(FxSet<u64>),
    I128(FxSet<i128>),
    U128(FxSet<u128>),
    Bytes(BytesSet),
}

/// Strings and binaries: entries are (hash, start, length) over one arena, so a probe touches
/// the table and one contiguous buffer rather than a heap allocation per member.
#[derive(Default)]
struct BytesSet {
    arena: Vec<u8>,
    table: hashbrown::HashTable<(u64, usize, usize)>,
}

impl BytesSet {
    /// Eight bytes at a time, the last word overlapping the one before (no per-byte tail).
    #[inline]
    fn hash(b: &[u8]) -> u64 {
        let word =
            |i: usize| u64::from_le_bytes(<[u8; 8]>::try_from(&b[i..i + 8]).unwrap_or_default());
        let n = b.len();
        let mut h = FxHasher(n as u64);
        if n < 8 {
            let mut w = [0u8; 8];
            w[..n].copy_from_slice(b);
            h.write_u64(u64::from_le_bytes(w));
        } else {
            let mut i = 0;
            while i + 8 <= n {
                h.write_u64(word(i));
                i += 8;
            }
            if i < n {
                h.write_u64(word(n - 8));
            }
        }
        h.finish()
    }

    fn insert(&mut self, b: &[u8]) {
        if self.contains(b) {
            return;
        }
        let h = BytesSet::hash(b);
        let start = self.arena.len();
        self.arena.extend_from_slice(b);
        self.table
            .insert_unique(h, (h, start, b.len()), |(h, _, _)| *h);
    }

    #[inline]
    fn contains(&self, b: &[u8]) -> bool {
        let h = BytesSet::hash(b);
        self.table
            .find(h, |&(eh, start, len)| {
                eh == h && len == b.len() && &self.arena[start..start + len] == b
            })
            .is_some()
    }
}

#[derive(PartialEq)]
enum KeyKind {
    Bool,
    Int,
    Float,
    I128,
    U128,
    Bytes,
}

fn float_key(v: f64) -> u64 {
    if v == 0.0 {
        0
    } else {
        v.to_bits()
    }
}

impl LitSet {
    fn key_kind(v: &Val<'_>) -> KeyKind {
        match v {
            Val::Bool(_) => KeyKind::Bool,
            Val::I32(_) | Val::I64(_) => KeyKind::Int,
            Val::F32(_) | Val::F64(_) => KeyKind::Float,
            Val::I128(_) => KeyKind::I128,
            Val::U128(_) => KeyKind::U128,
            Val::Bytes(_) => KeyKind::Bytes,
        }
    }

    fn new(literals: &[Literal]) -> Result<LitSet> {
        let vals = literals
            .iter()
            .map(|l| {
                of_literal(l).ok_or_else(|| {
                    Error::unsupported(format!("{} literals cannot be compared", l.kind()))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let kind = vals.first().map(LitSet::key_kind);
        if vals
            .iter()
            .any(|v| Some(LitSet::key_kind(v)) != kind || v.is_nan())
        {
            return Err(Error::invalid(
                "set literals must share one type and not be NaN",
            ));
        }
        let mut set = match kind {
            None | Some(KeyKind::Bool) => LitSet::Bool([false; 2]),
            Some(KeyKind::Int) => LitSet::Int(FxSet::default()),
            Some(KeyKind::Float) => LitSet::Float(FxSet::default()),
            Some(KeyKind::I128) => LitSet::I128(FxSet::default()),
            Some(KeyKind::U128) => LitSet::U128(FxSet::default()),
            Some(KeyKind::Bytes) => LitSet::Bytes(BytesSet::default()),
        };
        for v in &vals {
            match (&mut set, v) {
                (LitSet::Bool(s), Val::Bool(b)) => s[*b as usize] = true,
                (LitSet::Int(s), Val::I32(x)) => {
                    s.insert(*x as i64);
                }
                (LitSet::Int(s), Val::I64(x)) => {
                    s.insert(*x);
                }
                (LitSet::Float(s), Val::F32(x)) => {
                    s.insert(float_key(*x as f64));
                }
                (LitSet::Float(s), Val::F64(x)) => {
                    s.insert(float_key(*x));
                }
                (LitSet::I128(s), Val::I128(x)) => {
                    s.insert(*x);
                }
                (LitSet::U128(s), Val::U128(x)) => {
                    s.insert(*x);
                }
                (LitSet::Bytes(s), Val::Bytes(b)) => s.insert(b),
                _ => return Err(Error::invalid("set literals must share one type")),
            }
        }
        Ok(set)
    }

    /// Membership of every row for the common column types, straight from the Arrow buffers
    /// (`None`: use [`LitSet::contains`] per value). Null rows are not members.
    fn members(&self, col: &Column, n: usize) -> Option<BooleanBuffer> {
        fn bytes<O: arrow_array::OffsetSizeTrait>(
            s: &BytesSet,
            a: &arrow_array::GenericBinaryArray<O>,
            n: usize,
        ) -> BooleanBuffer {
            let offsets = a.value_offsets();
            let data = a.value_data();
            let found = BooleanBuffer::collect_bool(n, |i| {
                let (lo, hi) = (offsets[i].as_usize(), offsets[i + 1].as_usize());
                s.contains(&data[lo..hi])
            });
            and_valid(found, a.nulls())
        }
        Some(match (self, col) {
            (LitSet::Int(s), Column::I64(a)) => {
                let v = a.values();
                and_valid(
                    BooleanBuffer::collect_bool(n, |i| s.contains(&v[i])),
                    a.nulls(),
                )
            }
            (LitSet::Int(s), Column::I32(a)) => {
                let v = a.values();
                let found = BooleanBuffer::collect_bool(n, |i| s.contains(&(v[i] as i64)));
                and_valid(found, a.nulls())
            }
            (LitSet::Bytes(s), Column::Bytes(a)) => bytes(s, a, n),
            (LitSet::Bytes(s), Column::LargeBytes(a)) => bytes(s, a, n),
            _ => return None,
        })
    }

    #[inline]
    fn contains(&self, v: &Val<'_>) -> bool {
        match (self, v) {
            (LitSet::Bool(s), Val::Bool(b)) => s[*b as usize],
            (LitSet::Int(s), Val::I32(x)) => s.contains(&(*x as i64)),
            (LitSet::Int(s), Val::I64(x)) => s.contains(x),
            // a float column's values widen exactly, as its f32 literals did
            (LitSet::Float(s), Val::F32(x)) => !x.is_nan() && s.contains(&float_key(*x as f64)),
            (LitSet::Float(s), Val::F64(x)) => !x.is_nan() && s.contains(&float_key(*x)),
            (LitSet::I128(s), Val::I128(x)) => s.contains(x),
            (LitSet::U128(s), Val::U128(x)) => s.contains(x),
            (LitSet::Bytes(s), Val::Bytes(b)) => s.contains(b),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Float64Array, Int64Array, StringArray};

    use super::*;

    fn run(json: &str, cols: Vec<ArrayRef>) -> Vec<bool> {
        let schema = Schema::from_json(
            r#"{"type":"struct","fields":[
            {"id":1,"name":"id","required":false,"type":"long"},
            {"id":2,"name":"data","required":false,"type":"string"},
            {"id":3,"name":"f","required":false,"type":"double"}]}"#,
        )
        .unwrap();
        let e = Expr::from_json_str(json, &schema).unwrap();
        let f = RowFilter::new(&e, &schema).unwrap();
        let n = cols.first().map_or(0, |c| c.len());
        let by_id: HashMap<i32, ArrayRef> = f
            .field_ids()
            .iter()
            .zip(cols)
            .map(|(id, c)| (*id, c))
            .collect();
        let cols: Vec<ArrayRef> = f.field_ids().iter().map(|id| by_id[id].clone()).collect();
        f.eval(&cols, n).unwrap().iter().collect()
    }

    fn strings() -> ArrayRef {
        Arc::new(StringArray::from(vec![
            Some("a"),
            Some("b"),
            None,
            Some("c"),
            Some("a"),
            None,
        ]))
    }

    fn pred(op: &str, id: i32, value: &str) -> String {
        format!(r#"{{"type":"{op}","left":{{"type":"reference","id":{id}}},"right":{value}}}"#)
    }

    #[test]
    fn not_eq_keeps_nulls_and_not_partitions() {
        let ne = pred("not-eq", 2, r#""a""#);
        assert_eq!(
            run(&ne, vec![strings()]),
            [false, true, true, true, false, true]
        );
        let not_ne = format!(r#"{{"type":"not","child":{ne}}}"#);
        assert_eq!(
            run(&not_ne, vec![strings()]),
            [true, false, false, false, true, false]
        );
    }

    #[test]
    fn comparisons_on_null_and_nan() {
        let f: ArrayRef = Arc::new(Float64Array::from(vec![
            Some(1.0),
            Some(f64::NAN),
            None,
            Some(-0.0),
            Some(3.0),
        ]));
        assert_eq!(
            run(&pred("gt", 3, "0.5"), vec![f.clone()]),
            [true, false, false, false, true]
        );
        assert_eq!(
            run(&pred("lt", 3, "0.5"), vec![f.clone()]),
            [false, false, false, true, false]
        );
        // -0.0 = 0.0 in IEEE order
        assert_eq!(
            run(&pred("eq", 3, "0.0"), vec![f.clone()]),
            [false, false, false, true, false]
        );
        assert_eq!(
            run(&pred("not-eq", 3, "0.0"), vec![f.clone()]),
            [true, true, true, false, true]
        );
        let not_nan = r#"{"type":"not-nan","child":{"type":"reference","id":3}}"#;
        assert_eq!(
            run(not_nan, vec![f.clone()]),
            [true, false, true, true, true]
        );
        let in_set = r#"{"type":"in","child":{"type":"reference","id":3},"values":[0.0, 3.0]}"#;
        assert_eq!(
            run(in_set, vec![f.clone()]),
            [false, false, false, true, true]
        );
        let not_in = r#"{"type":"not-in","child":{"type":"reference","id":3},"values":[0.0, 3.0]}"#;
        assert_eq!(run(not_in, vec![f]), [true, true, true, false, false]);
    }

    #[test]
    fn long_chains_merge_into_sets() {
        let ids: ArrayRef = Arc::new(Int64Array::from_iter((0..1000).map(|i| {
            if i % 7 == 0 {
                None
            } else {
                Some(i)
            }
        })));
        // left-deep, as `e = Or(e, t)` in a loop builds it
        let chain = |kind: &str, op: &str| {
            let mut s = format!(r#"{{"type":"{kind}","left":"#).repeat(99_999);
            s += &pred(op, 1, "0");
            for k in 1..100_000 {
                s += &format!(r#","right":{}}}"#, pred(op, 1, &(k * 3).to_string()));
            }
            s
        };
        let got = run(&chain("or", "eq"), vec![ids.clone()]);
        let want: Vec<bool> = (0..1000).map(|i| i % 7 != 0 && i % 3 == 0).collect();
        assert_eq!(got, want);
        let got = run(&chain("and", "not-eq"), vec![ids]);
        let want: Vec<bool> = (0..1000).map(|i| i % 7 == 0 || i % 3 != 0).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn string_sets_of_every_length() {
        // lengths around the hash's 8-byte words, multi-byte UTF-8, the empty string
        let words = [
            "",
            "a",
            "abcdefg",
            "abcdefgh",
            "abcdefghi",
            "é🧊",
            "0123456789abcdef0",
        ];
        let mut rows: Vec<Option<String>> = words.iter().map(|w| Some(w.to_string())).collect();
        rows.extend(words.iter().map(|w| Some(format!("{w}x"))));
        rows.push(None);
        let col: ArrayRef = Arc::new(StringArray::from(rows.clone()));
        let members = [words[0], words[3], words[4], words[5], words[6]];
        let lits = members.iter().map(|w| format!("{w:?}")).collect::<Vec<_>>();
        let json = format!(
            r#"{{"type":"in","child":{{"type":"reference","id":2}},"values":[{}]}}"#,
            lits.join(",")
        );
        let want: Vec<bool> = rows
            .iter()
            .map(|r| r.as_deref().is_some_and(|r| members.contains(&r)))
            .collect();
        assert_eq!(run(&json, vec![col.clone()]), want);
        let not_in = json.replacen(r#""in""#, r#""not-in""#, 1);
        let negated: Vec<bool> = want.iter().map(|b| !b).collect();
        assert_eq!(run(&not_in, vec![col]), negated);
    }

    #[test]
    fn starts_with_and_negation() {
        let sw = pred("starts-with", 2, r#""a""#);
        assert_eq!(
            run(&sw, vec![strings()]),
            [true, false, false, false, true, false]
        );
        let nsw = pred("not-starts-with", 2, r#""a""#);
        assert_eq!(
            run(&nsw, vec![strings()]),
            [false, true, true, true, false, true]
        );
    }

    proptest::proptest! {
        /// The typed fast paths against the spec's rules written out per value: doubles with
        /// nulls, NaN and both zeros; longs with nulls; every comparison, IN and their NOTs.
        #[test]
        fn fast_paths_follow_the_spec(
            xs in proptest::collection::vec(proptest::option::of(proptest::sample::select(
                vec![-1.5, -0.0, 0.0, 0.5, 2.0, f64::NAN, f64::INFINITY])), 0..200),
            ls in proptest::collection::vec(proptest::option::of(-3i64..3), 0..200),
            op in proptest::sample::select(vec!["lt", "lt-eq", "gt", "gt-eq", "eq", "not-eq"]),
            c in proptest::sample::select(vec![-1.5, -0.0, 0.0, 0.5, 2.0]),
            k in -3i64..3,
            set in proptest::collection::vec(-3i64..3, 1..4),
        ) {
            let spec = |v: Option<f64>, c: f64| -> bool {
                match v {
                    None => op == "not-eq",
                    Some(v) if v.is_nan() => op == "not-eq",
                    Some(v) => match op {
                        "lt" => v < c,
                        "lt-eq" => v <= c,
                        "gt" => v > c,
                        "gt-eq" => v >= c,
                        "eq" => v == c,
                        _ => v != c,
                    },
                }
            };
            let fa: ArrayRef = Arc::new(Float64Array::from(xs.clone()));
            let got = run(&pred(op, 3, &format!("{c:?}")), vec![fa]);
            let want: Vec<bool> = xs.iter().map(|v| spec(*v, c)).collect();
            proptest::prop_assert_eq!(got, want);
            let la: ArrayRef = Arc::new(Int64Array::from(ls.clone()));
            let got = run(&pred(op, 1, &k.to_string()), vec![la.clone()]);
            let want: Vec<bool> =
                ls.iter().map(|v| spec(v.map(|v| v as f64), k as f64)).collect();
            proptest::prop_assert_eq!(got, want);
            let lits = set.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",");
            for (kind, negated) in [("in", false), ("not-in", true)] {
                let json = format!(
                    r#"{{"type":"{kind}","child":{{"type":"reference","id":1}},"values":[{lits}]}}"#
                );
                let got = run(&json, vec![la.clone()]);
                let want: Vec<bool> = ls
                    .iter()
                    .map(|v| v.is_some_and(|v| set.contains(&v)) != negated)
                    .collect();
                proptest::prop_assert_eq!(got, want);
            }
        }
    }
}
