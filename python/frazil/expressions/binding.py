"""Binding expressions to a schema: names become field ids, literals take the column's type.

Follows Java's ``Binder``/``UnboundPredicate.bind`` (Iceberg 1.10): ``IS NULL`` on a column that
can never be null (required, and every enclosing struct required) is false; ``IS NaN`` on a
non-floating-point column is an error; starts-with needs a string term; a literal beyond the
column type's range folds the comparison to true or false; ``IN`` drops such values and becomes
``=`` when one value is left. Where Java refuses a literal that lies between two values of the
column type (``int_col < 1.5``, ``dec_col(9,2) = 1.234``, nanoseconds on a microsecond column),
the comparison is rewritten exactly instead (``int_col <= 1``, false, ...): the spec asks for
type promotion, never an unsafe cast.
"""

from __future__ import annotations

import collections
import logging
from typing import Any

from frazil.exceptions import FrazilError, ValidationError
from frazil.expressions.base import AlwaysFalse, AlwaysTrue, And, BooleanExpression, Not, Or, fold
from frazil.expressions.literals import ABOVE_MAX, BELOW_MIN, Between, Literal, convert
from frazil.expressions.predicates import (
    BOUND_BY_OP,
    BoundPredicate,
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
from frazil.types import (
    DoubleType,
    FloatType,
    ListType,
    MapType,
    PrimitiveType,
    StringType,
    UnknownType,
)

__all__ = ["bind", "bind_term"]

log = logging.getLogger(__name__)


# Large filters bound lately, by the identity of the filter and schema (both kept alive beside
# the result): a delete or overwrite binds its filter once per step (plan, conflict check,
# retry), and 100k terms take a second each time.
_BOUND: collections.OrderedDict[tuple[int, int, bool], tuple[Any, Any, BooleanExpression]] = (
    collections.OrderedDict()
)
_BOUND_KEPT = 8
_BOUND_MIN_TERMS = 1000


def bind(schema: Schema, expr: BooleanExpression, case_sensitive: bool = True) -> BooleanExpression:
    """Binds every predicate of ``expr`` to ``schema``; already bound predicates are kept (they
    must refer to fields of ``schema``)."""
    if not isinstance(expr, BooleanExpression):
        raise ValidationError(f"expected a BooleanExpression, got {expr!r}")
    if expr._unbound < _BOUND_MIN_TERMS:
        return _bind(schema, expr, case_sensitive)
    key = (id(expr), id(schema), case_sensitive)
    hit = _BOUND.get(key)
    if hit is not None and hit[0] is expr and hit[1] is schema:
        return hit[2]
    bound = _bind(schema, expr, case_sensitive)
    _BOUND[key] = (expr, schema, bound)
    while len(_BOUND) > _BOUND_KEPT:
        _BOUND.popitem(last=False)
    return bound


def _bind(schema: Schema, expr: BooleanExpression, cs: bool) -> BooleanExpression:
    if expr._unbound == 0 and isinstance(expr, (And, Or, Not)):
        # bound already (a scan's filter bound again by its planner): check, don't rebuild
        ids = schema.field_ids
        todo: list[BooleanExpression] = [expr]
        while todo:
            e = todo.pop()
            if isinstance(e, (And, Or, Not)):
                todo.extend(e.children())
            elif isinstance(e, BoundPredicate) and e.ref.field_id not in ids:
                raise ValidationError(
                    f"bound predicate {e} refers to field id {e.ref.field_id}, not in the schema"
                )
        return expr

    def leaf(e: BooleanExpression) -> BooleanExpression:
        if isinstance(e, (AlwaysTrue, AlwaysFalse)):
            return e
        if isinstance(e, BoundPredicate):
            if e.ref.field_id not in schema.field_ids:
                raise ValidationError(
                    f"bound predicate {e} refers to field id {e.ref.field_id}, not in the schema"
                )
            return e
        if isinstance(e, UnaryPredicate):
            return _bind_unary(schema, e, bind_term(schema, e.term, cs))
        if isinstance(e, LiteralPredicate):
            return _bind_literal(e, bind_term(schema, e.term, cs))
        if isinstance(e, SetPredicate):
            return _bind_set(e, bind_term(schema, e.term, cs))
        raise ValidationError(f"cannot bind {e!r}")

    def node(e: BooleanExpression, bound: list[BooleanExpression]) -> BooleanExpression:
        if all(b is c for b, c in zip(bound, e.children(), strict=True)):
            return e  # already bound below here: no new tree (a filter bound twice)
        if isinstance(e, Not):
            return Not(bound[0])
        if isinstance(e, And):
            return And(bound[0], bound[1])
        if isinstance(e, Or):
            return Or(bound[0], bound[1])
        raise ValidationError(f"cannot bind {e!r}")  # pragma: no cover

    # Iterative: a filter built by hand may nest thousands of levels.
    return fold(expr, leaf, node)


def bind_term(schema: Schema, term: Term, case_sensitive: bool = True) -> BoundTerm:
    """Resolves a field name (or a transform of one) in ``schema``."""
    if isinstance(term, BoundTerm):
        return term
    if isinstance(term, UnboundTransform):
        ref = bind_term(schema, term.ref, case_sensitive)
        assert isinstance(ref, BoundReference)
        try:
            return BoundTransform(term.transform, ref)
        except FrazilError as e:
            raise ValidationError(f"cannot bind {term}: {e}") from None
    if not isinstance(term, Reference):
        raise ValidationError(f"cannot bind term {term!r}")
    try:
        field = schema.find_field(term.name, case_sensitive)
    except FrazilError:
        names = ", ".join(schema.column_names())
        how = "" if case_sensitive else " (case-insensitive)"
        raise ValidationError(
            f"cannot find field {term.name!r}{how} in the schema; its fields are: {names}"
        ) from None
    parent = schema.parent_id(field.field_id)
    while parent is not None:
        if isinstance(schema.find_field(parent).field_type, (ListType, MapType)):
            raise ValidationError(f"cannot filter on {term.name!r}: it is inside a list or map")
        parent = schema.parent_id(parent)
    name = schema.find_column_name(field.field_id) or term.name
    return BoundReference(field, name)


def _can_be_null(schema: Schema, term: BoundTerm) -> bool:
    field_id = term.ref.field_id
    while field_id is not None:
        if not schema.find_field(field_id).required:
            return True
        field_id = schema.parent_id(field_id)  # type: ignore[assignment]
    return False


def _bind_unary(schema: Schema, e: UnaryPredicate, term: BoundTerm) -> BooleanExpression:
    op = e.op
    if op in ("is-null", "not-null"):
        if not _can_be_null(schema, term):
            return AlwaysFalse() if op == "is-null" else AlwaysTrue()
        if isinstance(term.type, UnknownType):
            return AlwaysTrue() if op == "is-null" else AlwaysFalse()
    elif not isinstance(term.type, (FloatType, DoubleType)):
        what = "IsNaN" if op == "is-nan" else "NotNaN"
        raise ValidationError(
            f"{what} cannot be used with a non-floating-point column: {term} is {term.type}"
        )
    return BOUND_BY_OP[op](term)  # type: ignore[call-arg]


def _convert(e: Any, lit: Literal, term: BoundTerm) -> Any:
    if not isinstance(term.type, PrimitiveType) or isinstance(term.type, UnknownType):
        kind = term.type.to_json()
        kind = kind if isinstance(kind, str) else kind["type"]
        raise ValidationError(f"{e}: cannot compare {kind} column {term} with a literal")
    try:
        return convert(lit, term.type)
    except FrazilError as err:
        raise ValidationError(
            f"{e}: invalid literal for {term.type} column {term}: {err}"
        ) from None


def _bind_literal(e: LiteralPredicate, term: BoundTerm) -> BooleanExpression:
    op = e.op
    if op in ("starts-with", "not-starts-with") and not isinstance(term.type, StringType):
        raise ValidationError(f"{e}: starts-with needs a string term, but {term} is {term.type}")
    out = _convert(e, e.literal, term)
    if out is ABOVE_MAX:
        return AlwaysTrue() if op in ("lt", "lt-eq", "not-eq") else AlwaysFalse()
    if out is BELOW_MIN:
        return AlwaysTrue() if op in ("gt", "gt-eq", "not-eq") else AlwaysFalse()
    if isinstance(out, Between):
        # No column value equals the literal; order comparisons move to the nearest values.
        if op == "eq":
            return AlwaysFalse()
        if op == "not-eq":
            return AlwaysTrue()
        if op in ("lt", "lt-eq"):
            return AlwaysFalse() if out.below is None else BOUND_BY_OP["lt-eq"](term, out.below)  # type: ignore[call-arg]
        return AlwaysFalse() if out.above is None else BOUND_BY_OP["gt-eq"](term, out.above)  # type: ignore[call-arg]
    return BOUND_BY_OP[op](term, out)  # type: ignore[call-arg]


def _bind_set(e: SetPredicate, term: BoundTerm) -> BooleanExpression:
    converted = []
    for lit in e.literals:
        out = _convert(e, lit, term)
        # Values no column value can equal cannot change IN or NOT IN.
        if isinstance(out, Literal):
            converted.append(out)
    return BOUND_BY_OP[e.op](term, converted)  # type: ignore[call-arg]
