"""Bound row filters as ``pyarrow.compute`` expressions, with the semantics Spark SQL gives them.

A residual filter is applied to rows read from data files (after deletes). The result must be
the rows Spark returns for the same ``WHERE`` clause:

- SQL three-valued logic: a comparison with null is null (unknown); ``NOT`` of unknown stays
  unknown; ``AND``/``OR`` are Kleene's; a row is kept only where the filter is true. So
  ``x != 5``, ``x NOT IN (...)`` and ``x NOT LIKE 'a%'`` never keep a null ``x``.
- ``IS NULL`` / ``IS NOT NULL`` test nulls only (a NaN is not null); ``IS NaN`` is false for
  null and ``IS NOT NaN`` true for null (Iceberg's and Spark's ``isnan``).
- NaN compares as the Java reference's row evaluator (``Double.compare``) and Spark do:
  greater than every other value, so ``x > 1.0`` keeps NaN rows while ``x < 1.0`` and
  ``x = 1.0`` do not. (The expressions spec says ``>`` is false for NaN; Java's metrics
  pruning follows the spec, its row filtering and Spark do not, and Spark's results are the
  reference here. Files holding only NaN are pruned by the planner as Java prunes them.)

Field references are resolved by field id against the schema of the batches the expression is
applied to (the projected table schema), so a bound expression survives renames.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from frazil.arrow_schema import type_to_arrow
from frazil.exceptions import UnsupportedError, ValidationError
from frazil.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    BoundPredicate,
    BoundReference,
    BoundSetPredicate,
    BoundUnaryPredicate,
    Literal,
    Not,
    Or,
)
from frazil.schema import Schema
from frazil.types import DoubleType, FloatType, StructType, UUIDType

__all__ = ["expression_to_arrow", "field_path", "referenced_field_ids"]

_NULL_BOOL = pc.scalar(pa.scalar(None, pa.bool_()))


def field_path(schema: Schema, field_id: int) -> tuple[str, ...]:
    """The names leading to a field of ``schema`` through structs (Arrow's nested field ref)."""

    def walk(t: StructType, prefix: tuple[str, ...]) -> tuple[str, ...] | None:
        for f in t.fields:
            if f.field_id == field_id:
                return (*prefix, f.name)
            if isinstance(f.field_type, StructType):
                found = walk(f.field_type, (*prefix, f.name))
                if found is not None:
                    return found
        return None

    path = walk(schema.as_struct(), ())
    if path is None:
        if field_id in schema.field_ids:
            raise UnsupportedError(
                f"filters on fields inside lists or maps (field id {field_id}) are not supported"
            )
        raise ValidationError(f"the filter references field id {field_id}, not in the schema")
    return path


def referenced_field_ids(expr: BooleanExpression) -> set[int]:
    """The ids of every field a bound expression references."""
    out: set[int] = set()

    def walk(e: BooleanExpression) -> None:
        if isinstance(e, (And, Or)):
            walk(e.left)
            walk(e.right)
        elif isinstance(e, Not):
            walk(e.child)
        elif isinstance(e, BoundPredicate):
            out.add(e.term.ref.field_id)
        elif not isinstance(e, (AlwaysTrue, AlwaysFalse)):
            raise ValidationError(f"expected a bound expression, got {e!r}")

    walk(expr)
    return out


def _scalar(lit: Literal) -> pa.Scalar:
    arrow_type = type_to_arrow(lit.type)
    if isinstance(lit.type, UUIDType):
        return pa.scalar(lit.value.bytes, pa.binary(16))
    return pa.scalar(lit.value, arrow_type)


def _term(schema: Schema, ref: BoundReference) -> pc.Expression:
    expr = pc.field(*field_path(schema, ref.field_id))
    if isinstance(ref.type, UUIDType):
        # compute kernels do not dispatch on the uuid extension type: compare its storage
        expr = expr.cast(pa.binary(16))
    return expr


def _null_if_null(x: pc.Expression, result: pc.Expression) -> pc.Expression:
    """``result`` where ``x`` is valid, else unknown (SQL's IN on a null operand)."""
    return pc.Expression._call("if_else", [pc.is_valid(x), result, _NULL_BOOL])


def _predicate(schema: Schema, e: BoundPredicate) -> pc.Expression:
    term = e.term
    if not isinstance(term, BoundReference):
        raise UnsupportedError(f"filters on transforms ({term}) cannot be applied to rows")
    x = _term(schema, term)
    op = e.op
    floating = isinstance(term.type, (FloatType, DoubleType))
    if isinstance(e, BoundUnaryPredicate):
        if op == "is-null":
            return pc.is_null(x)
        if op == "not-null":
            return pc.is_valid(x)
        if op == "is-nan":
            return pc.coalesce(pc.is_nan(x), pc.scalar(False)) if floating else pc.scalar(False)
        if op == "not-nan":
            return (
                pc.coalesce(pc.invert(pc.is_nan(x)), pc.scalar(True))
                if floating
                else pc.scalar(True)
            )
        raise UnsupportedError(f"unknown predicate {op}")
    if isinstance(e, BoundSetPredicate):
        values = pa.array([_scalar(lit).as_py() for lit in e.literals], _scalar(e.literals[0]).type)
        member = _null_if_null(x, pc.is_in(x, value_set=values))
        return member if op == "in" else pc.invert(member)
    value = _scalar(e.literal)  # type: ignore[attr-defined]
    if op == "lt":
        return pc.less(x, value)
    if op == "lt-eq":
        return pc.less_equal(x, value)
    if op in ("gt", "gt-eq"):
        cmp = pc.greater(x, value) if op == "gt" else pc.greater_equal(x, value)
        return pc.or_kleene(cmp, pc.is_nan(x)) if floating else cmp
    if op == "eq":
        return pc.equal(x, value)
    if op == "not-eq":
        return pc.not_equal(x, value)
    if op == "starts-with":
        return pc.starts_with(x, pattern=value.as_py())
    if op == "not-starts-with":
        return pc.invert(pc.starts_with(x, pattern=value.as_py()))
    raise UnsupportedError(f"unknown predicate {op}")


def expression_to_arrow(expr: BooleanExpression, schema: Schema) -> pc.Expression:
    """A ``pyarrow.compute.Expression`` that is true exactly for the rows ``expr`` keeps.

    ``expr`` must be bound (to ``schema`` or to a schema with the same field ids); field
    references are built from ``schema``'s names for those ids.
    """
    if isinstance(expr, AlwaysTrue):
        return pc.scalar(True)
    if isinstance(expr, AlwaysFalse):
        return pc.scalar(False)
    if isinstance(expr, And):
        return pc.and_kleene(
            expression_to_arrow(expr.left, schema), expression_to_arrow(expr.right, schema)
        )
    if isinstance(expr, Or):
        return pc.or_kleene(
            expression_to_arrow(expr.left, schema), expression_to_arrow(expr.right, schema)
        )
    if isinstance(expr, Not):
        return pc.invert(expression_to_arrow(expr.child, schema))
    if isinstance(expr, BoundPredicate):
        return _predicate(schema, expr)
    raise ValidationError(f"expected a bound expression, got {expr!r}")
