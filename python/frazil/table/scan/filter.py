"""Bound row filters applied to Arrow batches, with the expressions spec's semantics.

The rows a filter keeps are those where it is *true*, and every predicate is true or false
(``../reference/expressions-spec.md``, "Tests", "Comparisons", "Boolean logic"): ``e`` and
``Not(e)`` partition the rows. So, on a column ``s`` holding ``'a', 'b', null``:

- ``s = 'a'``, ``s < 'b'``, ``s IN ('a')`` and ``s STARTS WITH 'a'`` are false for null;
  ``s != 'a'``, ``s NOT IN ('a')`` and ``s NOT STARTS WITH 'a'`` are their negations, so true
  for null; ``Not(s = 'a')`` keeps ``'b'`` and null.
- A comparison with NaN is false (``x > 1.0`` and ``x = 1.0`` drop NaN, ``x != 1.0`` keeps
  it); ``IS NaN`` is false and ``IS NOT NaN`` true for null; ``-0.0 = 0.0``.

The Java reference's row ``Evaluator`` differs on ordered comparisons: it sorts null first
(``null < 5`` is true there) and NaN last (``NaN > 1.0`` is true). SQL engines differ too
(``s != 'a'`` is unknown for null in SQL); frazil's string filters mean the spec's
expressions as written (see :mod:`frazil.expressions.parser`).

The evaluation is native (``frazil-scan``'s ``row_filter``, one compiled filter per residual):
no recursion per term, chains of ``=`` under OR and of ``!=`` under AND become one hash-set
probe, so filters of 100k terms run in linear time. Field references are resolved by field id
against the schema of the batches (the projected table schema), so a bound expression survives
renames.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import _native
from frazil.arrow_schema import type_to_arrow
from frazil.exceptions import UnsupportedError, ValidationError
from frazil.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    BoundPredicate,
    BoundReference,
    Not,
    Or,
)
from frazil.expressions.json import to_json_text
from frazil.expressions.predicates import (
    BoundEqualTo,
    BoundGreaterThan,
    BoundGreaterThanOrEqual,
    BoundLessThan,
    BoundLessThanOrEqual,
)
from frazil.schema import Schema
from frazil.table.scan.handoff import large_field
from frazil.types import StructType

__all__ = [
    "LATE_WALK",
    "LateFilter",
    "RowFilter",
    "field_path",
    "pruning_expression",
    "referenced_field_ids",
]


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
    return {p.term.ref.field_id for p in referenced_predicates(expr)}


class RowFilter:
    """A bound filter compiled once and applied to batches of rows in ``schema``'s shape.

    >>> from frazil.expressions import NotEqualTo, bind
    >>> from frazil.schema import Schema
    >>> from frazil.types import NestedField, StringType
    >>> schema = Schema(NestedField(1, "s", StringType()))
    >>> f = RowFilter(bind(schema, NotEqualTo("s", "a")), schema)
    >>> f.mask(pa.record_batch({"s": ["a", "b", None]})).to_pylist()
    [False, True, True]
    """

    __slots__ = ("_native", "_paths", "expr")

    def __init__(self, expr: BooleanExpression, schema: Schema) -> None:
        for e in referenced_predicates(expr):
            if not isinstance(e.term, BoundReference):
                raise UnsupportedError(
                    f"filters on transforms ({e.term}) cannot be applied to rows"
                )
        self.expr = expr
        self._native = _native.RowFilter(json.dumps(schema.to_json()), to_json_text(expr))
        self._paths = [field_path(schema, fid) for fid in self._native.field_ids()]

    @property
    def native(self) -> _native.RowFilter:
        """The compiled filter (for the native Parquet decoder's page index pruning)."""
        return self._native

    def mask(self, batch: pa.RecordBatch) -> pa.BooleanArray:
        """Per row of ``batch``, whether the filter is true for it (never null)."""
        columns = [_column(batch, path) for path in self._paths]
        return pa.array(self._native.mask(columns, batch.num_rows))

    def filter(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """The rows of ``batch`` the filter keeps."""
        if isinstance(self.expr, AlwaysTrue):
            return batch
        return batch.filter(self.mask(batch))

    def filter_table(self, table: pa.Table) -> pa.Table:
        """The rows of ``table`` the filter keeps, batch by batch."""
        if isinstance(self.expr, AlwaysTrue):
            return table
        batches = [self.filter(b) for b in table.to_batches()]
        return pa.Table.from_batches(batches, schema=table.schema)


def _column(batch: pa.RecordBatch, path: tuple[str, ...]) -> pa.Array:
    col = batch.column(path[0])
    if len(path) > 1:
        # struct_field folds each parent struct's nulls into the child
        col = pc.struct_field(col, list(path[1:]))
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if isinstance(col.type, pa.BaseExtensionType):
        col = col.storage
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    return col


def referenced_predicates(expr: BooleanExpression) -> list[BoundPredicate]:
    """The predicates of a bound expression, without recursion."""
    out: list[BoundPredicate] = []
    todo = [expr]
    while todo:
        e = todo.pop()
        if isinstance(e, (And, Or)):
            todo.extend((e.left, e.right))
        elif isinstance(e, Not):
            todo.append(e.child)
        elif isinstance(e, BoundPredicate):
            out.append(e)
        elif not isinstance(e, (AlwaysTrue, AlwaysFalse)):
            raise ValidationError(f"expected a bound expression, got {e!r}")
    return out


# Comparisons whose rows Parquet row-group statistics can rule out: every one is false for null
# and for NaN (the spec's semantics), so a row group whose non-null, non-NaN values all fail it
# holds no row it keeps, whatever its nulls and NaNs.
_PRUNABLE: dict[type, Any] = {
    BoundLessThan: lambda f, v: f < v,
    BoundLessThanOrEqual: lambda f, v: f <= v,
    BoundGreaterThan: lambda f, v: f > v,
    BoundGreaterThanOrEqual: lambda f, v: f >= v,
    BoundEqualTo: lambda f, v: f == v,
}


def _prunable_type(t: pa.DataType) -> bool:
    # Strings and binaries are left out: other writers' statistics may be truncated or use
    # signed byte order; nanosecond timestamps' literals are not datetimes.
    p = pa.types
    return bool(
        p.is_integer(t)
        or p.is_floating(t)
        or p.is_date32(t)
        or (p.is_timestamp(t) and t.unit == "us")
    )


# The most predicates a filter may have for row-group pruning (see pruning_expression).
PRUNING_TERMS = 64


def _terms_exceed(expr: BooleanExpression, limit: int) -> bool:
    """Whether ``expr`` has more than ``limit`` nodes, counted without recursion (a filter of
    100,000 left-deep terms must not exhaust Python's stack either)."""
    stack = [expr]
    seen = 0
    while stack:
        e = stack.pop()
        seen += 1
        if seen > limit:
            return True
        if isinstance(e, (And, Or)):
            stack.append(e.left)
            stack.append(e.right)
        elif isinstance(e, Not):
            stack.append(e.child)
    return False


def pruning_expression(
    expr: BooleanExpression, fields: dict[int, pa.Field]
) -> pc.Expression | None:
    """A pyarrow expression true for every row ``expr`` keeps, over the file columns ``fields``
    (table field id -> the file's top-level field of the table's type), for pruning row
    groups by their statistics only (rows are still filtered by :class:`RowFilter`); ``None``
    when nothing can be pruned. Conservative: a term it cannot translate counts as true, and a
    ``Not`` as a whole does too. Filters of more than :data:`PRUNING_TERMS` terms are not
    translated: Arrow evaluates expressions recursively in C++, and a 10,000-term OR nested
    that deep overflows its stack (a crash, not an error), while pruning by so many terms buys
    little over the native row filter."""
    if _terms_exceed(expr, PRUNING_TERMS):
        return None
    true = pc.scalar(True)

    def walk(e: BooleanExpression) -> pc.Expression:
        if isinstance(e, And):
            return walk(e.left) & walk(e.right)
        if isinstance(e, Or):
            return walk(e.left) | walk(e.right)
        if isinstance(e, AlwaysFalse):
            return pc.scalar(False)
        op = _PRUNABLE.get(type(e))
        if op is None or not isinstance(e, BoundPredicate):
            return true
        term = e.term
        f = fields.get(term.ref.field_id) if isinstance(term, BoundReference) else None
        if f is None or not _prunable_type(f.type):
            return true
        try:
            value = pa.scalar(e.literal.value, f.type)  # type: ignore[attr-defined]
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            return true
        return op(pc.field(f.name), value)

    out = walk(expr)
    return None if out.equals(true) else out


# ---------------------------------------------------------------------------------------------
# late materialization: the residual on a Parquet row group's filter columns alone, so that its
# other columns are decoded only for the rows it keeps (read.py's native decode)


#: how the native decoder walks the rows the filter keeps in the other columns: "auto" lets
#: arrow-rs choose (a bit mask where they are scattered, runs to skip where they are not);
#: tests force "mask" or "runs"
LATE_WALK = "auto"


class LateFilter:
    """A row filter evaluated on a row group's filter columns alone, before its other columns
    are decoded (natively, in one call: ``frazil-parquet``'s ``late``): taken where every
    column the filter reads is a top-level file column holding the table column's own type
    (so the decoded columns are the filter's input as they are)."""

    __slots__ = ("_names", "native")

    def __init__(self, native: Any, names: list[str]) -> None:
        self.native = native
        self._names = names  # per field id the native filter reads: the file column holding it

    @staticmethod
    def of(
        row_filter: RowFilter,
        schema: Schema,
        fields: Sequence[pa.Field],
        by_id: Mapping[int | None, int],
    ) -> LateFilter | None:
        top = {f.field_id: f for f in schema.fields}
        names = []
        for fid in row_filter.native.field_ids():
            column = top.get(fid)
            if column is None or fid not in by_id:
                return None
            stored = fields[by_id[fid]]
            # the native decoder's types are the large ones, as the table's Arrow types
            if large_field(stored).type != type_to_arrow(column.field_type):
                return None
            names.append(stored.name)
        return LateFilter(row_filter.native, names) if names else None

    def inputs(self, columns: Sequence[str], indices: Sequence[int]) -> list[int] | None:
        """Per column the filter reads, its decoder index among ``indices`` (those of
        ``columns``); None where the read has no column besides the filter's."""
        at = dict(zip(columns, indices, strict=True))
        if any(n not in at for n in self._names) or len(set(self._names)) >= len(at):
            return None
        return [at[n] for n in self._names]
