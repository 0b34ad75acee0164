"""Expressions as JSON (expressions spec, Appendix B), current and deprecated forms.

Written by :func:`to_json` (the current form unless ``legacy=True``)::

    true / false
    {"type": "and" | "or", "left": P, "right": P}
    {"type": "not", "child": P}
    {"type": "is-null" | "not-null" | "is-nan" | "not-nan", "child": TERM}
    {"type": "lt" | "lt-eq" | "gt" | "gt-eq" | "eq" | "not-eq" | "starts-with" |
              "not-starts-with", "left": TERM, "right": LITERAL}
    {"type": "in" | "not-in", "child": TERM, "values": LITERALS}

    TERM:     {"type": "reference", "name": "a.b"}                  (unbound)
              {"type": "reference", "id": 7}                        (bound)
              {"type": "apply",
               "function": {"catalog": "iceberg_functions", "identifier": ["bucket"]},
               "arguments": [16, TERM]}       (bucket/truncate: the int parameter first;
                                               identity/year/month/day/hour: the term only)
    LITERAL:  bound:   {"type": "literal", "value": V, "data-type": T}
              unbound: a plain JSON value for long, double, string and boolean literals,
                       {"type": "literal", "value": V, "data-type": T} for other types
    LITERALS: bound:   {"type": "literals", "values": [V...], "data-type": T}
              unbound: [LITERAL...]

``V`` is the spec's JSON single value of type ``T`` (:func:`frazil.values.to_json`), ``T`` the
type's JSON form (``"int"``, ``"decimal(9,2)"``, ...). A bound literal's type is its term's type
(a transform's result type for an ``apply`` term).

The deprecated (REST, Java ``ExpressionParser``) form, written with ``legacy=True``, names the
term with ``"term"`` (a field name, or ``{"type": "transform", "transform": "bucket[16]",
"term": name}``) and the literal with ``"value"``/``"values"`` as plain JSON single values; bound
expressions write their field names and values of the field's type, as Java does.

:func:`from_json` reads both forms and their variants: ``{"type": "true"}``, ``"true"``,
``{"type": "literal", "value": true}``, ``{"type": "reference", "term": name}``, a literal on
the left of a comparison (the operator is flipped), every function-reference spelling.
"""

from __future__ import annotations

import collections
import json
from typing import Any

from frazil import values
from frazil.exceptions import FrazilError, ParseError, UnsupportedError, ValidationError
from frazil.expressions.base import AlwaysFalse, AlwaysTrue, And, BooleanExpression, Not, Or, fold
from frazil.expressions.literals import Literal
from frazil.expressions.predicates import (
    BOUND_BY_OP,
    FLIPPED_OP,
    UNBOUND_BY_OP,
    BoundLiteralPredicate,
    BoundPredicate,
    BoundSetPredicate,
    LiteralPredicate,
    SetPredicate,
    UnaryPredicate,
)
from frazil.expressions.terms import (
    BoundReference,
    BoundTerm,
    BoundTransform,
    Reference,
    Term,
    UnboundTransform,
)
from frazil.schema import Schema
from frazil.transforms import Transform
from frazil.types import BooleanType, DoubleType, LongType, StringType, type_from_json

__all__ = ["from_json", "to_json", "to_json_text"]

ICEBERG_FUNCTIONS = "iceberg_functions"
_UNARY = ("is-null", "not-null", "is-nan", "not-nan")
_COMPARISON = ("lt", "lt-eq", "gt", "gt-eq", "eq", "not-eq", "starts-with", "not-starts-with")
_SET = ("in", "not-in")
_PARAMETERIZED = ("bucket", "truncate")
_FUNCTIONS = ("identity", "year", "month", "day", "hour", *_PARAMETERIZED)


# ---------------------------------------------------------------------------------------------
# writing


def to_json(expr: BooleanExpression, legacy: bool = False) -> Any:
    """The JSON object (``json.dumps``-able) of an expression; ``legacy=True`` writes the
    deprecated term-based form that REST servers before the expressions spec (and Java's
    ``ExpressionParser`` up to 1.10) read. Any depth (``json.dumps`` itself stops near 1,000
    levels: use :func:`to_json_text` for text)."""
    _check(expr)

    def node(e: BooleanExpression, kids: list[Any]) -> Any:
        if isinstance(e, Not):
            return {"type": "not", "child": kids[0]}
        return {"type": "and" if isinstance(e, And) else "or", "left": kids[0], "right": kids[1]}

    return fold(expr, lambda e: _write(e, legacy), node)


# The last few texts written, by the identity of their expression (kept alive beside it): a
# scan sends one filter to the planner and to the row filter, and 100k terms take a second.
_TEXTS: collections.OrderedDict[tuple[int, bool], tuple[BooleanExpression, str]] = (
    collections.OrderedDict()
)
_TEXTS_KEPT = 8


def to_json_text(expr: BooleanExpression, legacy: bool = False) -> str:
    """:func:`to_json` as compact JSON text, written without recursion so that a filter nested
    thousands of levels deep (a chain built by hand) can be sent to the native planner."""
    _check(expr)
    key = (id(expr), legacy)
    hit = _TEXTS.get(key)
    if hit is not None and hit[0] is expr:
        return hit[1]
    text = _to_json_text(expr, legacy)
    if len(text) > 4096:
        _TEXTS[key] = (expr, text)
        while len(_TEXTS) > _TEXTS_KEPT:
            _TEXTS.popitem(last=False)
    return text


def _to_json_text(expr: BooleanExpression, legacy: bool) -> str:
    out: list[str] = []
    todo: list[str | BooleanExpression] = [expr]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Not):
            todo.extend(("}", item.child, '{"type":"not","child":'))
        elif isinstance(item, (And, Or)):
            kind = "and" if isinstance(item, And) else "or"
            todo.extend(("}", item.right, ',"right":', item.left, f'{{"type":"{kind}","left":'))
        else:
            out.append(json.dumps(_write(item, legacy), separators=(",", ":")))
    return "".join(out)


def _check(expr: Any) -> None:
    if not isinstance(expr, BooleanExpression):
        raise ValidationError(f"expected a BooleanExpression, got {expr!r}")


def _write(e: BooleanExpression, legacy: bool) -> Any:
    """A constant or a predicate."""
    if isinstance(e, AlwaysTrue):
        return True
    if isinstance(e, AlwaysFalse):
        return False
    bound = isinstance(e, BoundPredicate)
    term = e.term  # type: ignore[attr-defined]
    op = e.op  # type: ignore[attr-defined]
    if legacy:
        out: dict[str, Any] = {"type": op, "term": _legacy_term(term)}
        if isinstance(e, (LiteralPredicate, BoundLiteralPredicate)):
            out["value"] = _plain_value(e.literal)
        elif isinstance(e, (SetPredicate, BoundSetPredicate)):
            out["values"] = [_plain_value(lit) for lit in e.literals]
        return out
    if isinstance(e, (UnaryPredicate,)) or op in _UNARY:
        return {"type": op, "child": _term(term)}
    if isinstance(e, (LiteralPredicate, BoundLiteralPredicate)):
        return {"type": op, "left": _term(term), "right": _literal(e.literal, bound)}
    assert isinstance(e, (SetPredicate, BoundSetPredicate))
    if bound:
        return {
            "type": op,
            "child": _term(term),
            "values": {
                "type": "literals",
                "values": [_plain_value(lit) for lit in e.literals],
                "data-type": term.type.to_json(),
            },
        }
    return {"type": op, "child": _term(term), "values": [_literal(v, False) for v in e.literals]}


def _plain_value(lit: Literal) -> Any:
    if isinstance(lit.type, (LongType, DoubleType, StringType, BooleanType)):
        return lit.value  # unbound longs may exceed 64 bits (folded away when bound)
    return values.to_json(lit.value, lit.type)


def _literal(lit: Literal, typed: bool) -> Any:
    if not typed and isinstance(lit.type, (LongType, DoubleType, StringType, BooleanType)):
        return lit.value
    return {"type": "literal", "value": _plain_value(lit), "data-type": lit.type.to_json()}


def _term(term: Term) -> dict[str, Any]:
    if isinstance(term, Reference):
        return {"type": "reference", "name": term.name}
    if isinstance(term, BoundReference):
        return {"type": "reference", "id": term.field_id}
    if isinstance(term, (UnboundTransform, BoundTransform)):
        spec = str(term.transform)
        name, _, param = spec.partition("[")
        args: list[Any] = [int(param[:-1])] if param else []
        args.append(_term(term.ref))
        return {
            "type": "apply",
            "function": {"catalog": ICEBERG_FUNCTIONS, "identifier": [name]},
            "arguments": args,
        }
    raise ValidationError(f"cannot write term {term!r}")  # pragma: no cover


def _legacy_term(term: Term) -> Any:
    if isinstance(term, (Reference, BoundReference)):
        return term.name
    if isinstance(term, (UnboundTransform, BoundTransform)):
        return {"type": "transform", "transform": str(term.transform), "term": term.ref.name}
    raise ValidationError(f"cannot write term {term!r}")  # pragma: no cover


# ---------------------------------------------------------------------------------------------
# reading


def from_json(obj: Any, schema: Schema | None = None) -> BooleanExpression:
    """Reads an expression from its parsed JSON (either form), at any depth. Named references
    give unbound predicates; id references give bound predicates and need the ``schema`` they
    refer to."""
    return _Reader(schema).read(obj)


class _Path:
    """Where in the JSON a value is (``$.left.right``), kept as links and joined only for an
    error message: a path string per node would be quadratic on deep input."""

    __slots__ = ("parent", "suffix")

    def __init__(self, parent: _Path | None, suffix: str) -> None:
        self.parent, self.suffix = parent, suffix

    def __add__(self, suffix: str) -> _Path:
        return _Path(self, suffix)

    def __str__(self) -> str:
        parts: list[str] = []
        p: _Path | None = self
        while p is not None:
            parts.append(p.suffix)
            p = p.parent
        return "".join(reversed(parts))


class _Reader:
    def __init__(self, schema: Schema | None) -> None:
        self.schema = schema

    def fail(self, at: _Path, why: str) -> ParseError:
        return ParseError(f"invalid expression JSON at {at}: {why}")

    def read(self, obj: Any) -> BooleanExpression:
        """Post-order over the JSON with a heap stack (no recursion)."""
        todo: list[tuple[Any, _Path, str | None]] = [(obj, _Path(None, "$"), None)]
        done: list[BooleanExpression] = []
        while todo:
            o, at, combine = todo.pop()
            if combine == "not":
                done.append(Not(done.pop()))
                continue
            if combine is not None:
                right = done.pop()
                left = done.pop()
                done.append(And(left, right) if combine == "and" else Or(left, right))
                continue
            kind = o.get("type") if isinstance(o, dict) else None
            kind = kind.lower() if isinstance(kind, str) else None
            if kind in ("and", "or"):
                left, right = self.field(o, "left", at), self.field(o, "right", at)
                todo += [(o, at, kind), (right, at + ".right", None), (left, at + ".left", None)]
            elif kind == "not":
                todo += [(o, at, kind), (self.field(o, "child", at), at + ".child", None)]
            else:
                done.append(self.predicate(o, at))
        return done[0]

    def predicate(self, obj: Any, at: _Path) -> BooleanExpression:
        """A constant or a predicate (``read`` takes and/or/not apart)."""
        if isinstance(obj, bool):
            return AlwaysTrue() if obj else AlwaysFalse()
        if obj in ("true", "false"):
            return AlwaysTrue() if obj == "true" else AlwaysFalse()
        if not isinstance(obj, dict):
            raise self.fail(at, f"expected a predicate object or true/false, got {obj!r}")
        kind = obj.get("type")
        if not isinstance(kind, str):
            raise self.fail(at, f"missing or non-string 'type' in {obj!r}")
        kind = kind.lower()
        if kind in ("true", "false"):
            return AlwaysTrue() if kind == "true" else AlwaysFalse()
        if kind == "literal":
            value = obj.get("value")
            if not isinstance(value, bool):
                raise self.fail(at, f"a literal predicate must be true or false, got {value!r}")
            return AlwaysTrue() if value else AlwaysFalse()
        if kind in _UNARY:
            self.no(obj, at, kind, "value", "values", "right", "left")
            term = self.operand(obj, at, "child")
            return self.make(kind, term, None, at)
        if kind in _COMPARISON:
            self.no(obj, at, kind, "values", "child")
            if "term" in obj:
                self.no(obj, at, kind, "left", "right")
                term = self.legacy_term(obj["term"], at + ".term")
                lit = self.literal(self.field(obj, "value", at), at + ".value")
                return self.make(kind, term, lit, at)
            self.no(obj, at, kind, "value")
            left, right = self.field(obj, "left", at), self.field(obj, "right", at)
            if self.is_term(left):
                term = self.term(left, at + ".left")
                return self.make(kind, term, self.literal(right, at + ".right"), at)
            if self.is_term(right) and kind in FLIPPED_OP:
                # ``5 < x`` is ``x > 5``
                term = self.term(right, at + ".right")
                lit = self.literal(left, at + ".left")
                return self.make(FLIPPED_OP[kind], term, lit, at)
            raise UnsupportedError(
                f"expression JSON at {at}: {kind} must compare a field (or a transform of one) "
                "with a literal; comparisons of two literals or two fields are not supported"
            )
        if kind in _SET:
            self.no(obj, at, kind, "value", "left", "right")
            term = self.operand(obj, at, "child")
            lits = self.literals(self.field(obj, "values", at), at + ".values")
            return self.make(kind, term, lits, at)
        raise self.fail(at, f"unknown expression type {obj['type']!r}")

    # -- helpers

    def field(self, obj: dict[str, Any], key: str, at: _Path) -> Any:
        if key not in obj:
            raise self.fail(at, f"{obj['type']} needs '{key}'")
        return obj[key]

    def no(self, obj: dict[str, Any], at: _Path, kind: str, *keys: str) -> None:
        for key in keys:
            if key in obj:
                raise self.fail(at, f"{kind} cannot have '{key}'")

    def operand(self, obj: dict[str, Any], at: _Path, key: str) -> Term:
        if "term" in obj:
            if key in obj:
                raise self.fail(at, f"both 'term' and '{key}'")
            return self.legacy_term(obj["term"], at + ".term")
        return self.term(self.field(obj, key, at), at + f".{key}")

    def make(self, kind: str, term: Term, lits: Any, at: _Path) -> BooleanExpression:
        try:
            if isinstance(term, BoundTerm):
                return self.make_bound(kind, term, lits, at)
            cls = UNBOUND_BY_OP[kind]
            return cls(term) if lits is None else cls(term, lits)  # type: ignore[call-arg]
        except ParseError:
            raise
        except FrazilError as e:
            raise self.fail(at, str(e)) from None

    def make_bound(self, kind: str, term: BoundTerm, lits: Any, at: _Path) -> BooleanExpression:
        cls = BOUND_BY_OP[kind]
        if lits is None:
            return cls(term)  # type: ignore[call-arg]
        many = lits if isinstance(lits, (list, tuple)) else [lits]
        typed = []
        for lit in many:
            if lit.type != term.type:
                # A bound term's literals carry its type; a plain value is read as that type.
                try:
                    lit = Literal(values.from_json(_plain_value(lit), term.type), term.type)
                except FrazilError as e:
                    raise self.fail(
                        at, f"literal {lit} is not a {term.type} value for {term}: {e}"
                    ) from None
            typed.append(lit)
        if isinstance(lits, (list, tuple)):
            return cls(term, typed)  # type: ignore[call-arg]
        return cls(term, typed[0])  # type: ignore[call-arg]

    def is_term(self, obj: Any) -> bool:
        return isinstance(obj, dict) and obj.get("type") in ("reference", "apply", "transform")

    def term(self, obj: Any, at: _Path) -> Term:
        if not isinstance(obj, dict):
            raise self.fail(at, f"expected a reference or apply object, got {obj!r}")
        kind = obj.get("type")
        if kind == "reference":
            if "id" in obj:
                return self.id_reference(obj["id"], at)
            if "name" in obj:
                return self.name(obj["name"], at)
            if "term" in obj:  # the deprecated reference form
                return self.name(obj["term"], at)
            raise self.fail(at, "a reference needs 'name' or 'id'")
        if kind == "apply":
            return self.apply(obj, at)
        if kind == "transform":
            return self.legacy_term(obj, at)
        raise self.fail(at, f"expected a reference or apply object, got {obj!r}")

    def name(self, name: Any, at: _Path) -> Reference:
        if not isinstance(name, str) or not name:
            raise self.fail(at, f"a field name must be a non-empty string, got {name!r}")
        return Reference(name)

    def id_reference(self, field_id: Any, at: _Path) -> BoundReference:
        if isinstance(field_id, bool) or not isinstance(field_id, int):
            raise self.fail(at, f"a field id must be an integer, got {field_id!r}")
        if self.schema is None:
            raise ValidationError(
                f"expression JSON at {at} refers to field id {field_id}: "
                "reading bound expressions needs the schema (from_json(obj, schema))"
            )
        try:
            field = self.schema.find_field(field_id)
        except FrazilError:
            raise ValidationError(
                f"expression JSON at {at} refers to field id {field_id}, "
                f"which is not in schema {self.schema.schema_id}"
            ) from None
        return BoundReference(field, self.schema.find_column_name(field_id))

    def apply(self, obj: dict[str, Any], at: _Path) -> Term:
        func = self.field(obj, "function", at)
        args = self.field(obj, "arguments", at)
        catalog, ident = None, func
        if isinstance(func, dict):
            catalog, ident = func.get("catalog"), func.get("identifier")
        if isinstance(ident, str):
            ident = [ident]
        if not (isinstance(ident, list) and ident and all(isinstance(p, str) for p in ident)):
            raise self.fail(at, f"invalid function reference {func!r}")
        if catalog not in (None, ICEBERG_FUNCTIONS) or len(ident) != 1:
            raise UnsupportedError(f"expression JSON at {at}: function {func!r} is not supported")
        name = ident[0].lower()
        if name not in _FUNCTIONS:
            raise UnsupportedError(f"expression JSON at {at}: unknown function {ident[0]!r}")
        if not isinstance(args, list):
            raise self.fail(at, f"'arguments' must be a list, got {args!r}")
        want = 2 if name in _PARAMETERIZED else 1
        if len(args) != want:
            raise self.fail(at, f"{name} takes {want} argument(s), got {len(args)}")
        spec = name
        if name in _PARAMETERIZED:
            param = args[0]
            if isinstance(param, dict) and param.get("type") == "literal":
                param = param.get("value")
            if isinstance(param, bool) or not isinstance(param, int):
                raise self.fail(at, f"{name}'s first argument must be an integer, got {param!r}")
            spec = f"{name}[{param}]"
        child = self.term(args[-1], at + f".arguments[{want - 1}]")
        try:
            if isinstance(child, BoundReference):
                return BoundTransform(Transform(spec), child)
            if isinstance(child, Reference):
                return UnboundTransform(spec, child)
        except FrazilError as e:
            raise self.fail(at, str(e)) from None
        raise UnsupportedError(f"expression JSON at {at}: nested function calls are not supported")

    def legacy_term(self, obj: Any, at: _Path) -> Term:
        if isinstance(obj, str):
            return self.name(obj, at)
        if isinstance(obj, dict):
            kind = obj.get("type")
            if kind == "reference":
                return self.term(obj, at)
            if kind == "transform":
                transform = obj.get("transform")
                if not isinstance(transform, str):
                    raise self.fail(at, f"a transform term needs a transform string: {obj!r}")
                child = self.legacy_term(self.field(obj, "term", at), at + ".term")
                try:
                    if isinstance(child, BoundReference):
                        return BoundTransform(transform, child)
                    if isinstance(child, Reference):
                        return UnboundTransform(transform, child)
                except FrazilError as e:
                    raise self.fail(at, str(e)) from None
                raise self.fail(at, "a transform applies to a field reference")
        raise self.fail(at, f"expected a field name or term object, got {obj!r}")

    def literal(self, obj: Any, at: _Path) -> Literal:
        data_type = None
        if isinstance(obj, dict):
            if obj.get("type") != "literal" or "value" not in obj:
                raise self.fail(at, f"expected a literal, got {obj!r}")
            if "data-type" in obj:
                data_type = obj["data-type"]
            obj = obj["value"]
        return self.value(obj, data_type, at)

    def value(self, obj: Any, data_type: Any, at: _Path) -> Literal:
        try:
            if data_type is not None:
                t = type_from_json(data_type)
                return Literal(values.from_json(obj, t), t)
            if isinstance(obj, (bool, int, float, str)):
                return Literal(obj)
        except FrazilError as e:
            raise self.fail(at, f"invalid literal {obj!r}: {e}") from None
        raise self.fail(at, f"expected a literal value, got {obj!r}")

    def literals(self, obj: Any, at: _Path) -> list[Literal]:
        if isinstance(obj, dict):
            if obj.get("type") != "literals":
                raise self.fail(at, f"expected a list of literals, got {obj!r}")
            items = self.field(obj, "values", at)
            if not isinstance(items, list):
                raise self.fail(at, f"'values' must be a list, got {items!r}")
            data_type = self.field(obj, "data-type", at)
            return [self.value(v, data_type, at + f".values[{i}]") for i, v in enumerate(items)]
        if not isinstance(obj, list):
            raise self.fail(at, f"expected a list of literals, got {obj!r}")
        return [self.literal(v, at + f"[{i}]") for i, v in enumerate(obj)]
