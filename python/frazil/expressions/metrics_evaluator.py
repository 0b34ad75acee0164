"""Row filters evaluated against data files' column metrics (value, null and NaN counts, lower
and upper bounds), as the Java reference's ``InclusiveMetricsEvaluator`` ("rows might match")
and ``StrictMetricsEvaluator`` ("all rows must match") do.

The rules live once, natively (``frazil-scan``'s ``metrics_evaluator``, which the scan planner
uses too); these classes bind a filter and hand Arrow ``data_file`` columns to it, one boolean
per file. They follow Java 1.10: a NaN lower bound proves nothing (ORC writers report NaN
bounds for columns that hold other values), strict evaluation trusts no metrics of nested
columns (a value under a null parent is not counted as null), and an ``IN`` with more than 200
values is not checked against bounds by the inclusive evaluator. Where frazil is stricter than
Java, it is in the safe direction: the strict evaluator assumes a float column without a NaN
count may hold NaN, and unreadable bounds are no bounds.

>>> import pyarrow as pa
>>> from frazil.manifest.content_file import DataFile, data_files_to_arrow
>>> from frazil.schema import Schema
>>> from frazil.types import LongType, NestedField
>>> from frazil.values import to_bytes
>>> schema = Schema(NestedField(1, "id", LongType(), True))
>>> f = DataFile("f.parquet", "PARQUET", (), 10, 100, value_counts={1: 10},
...              null_value_counts={1: 0}, lower_bounds={1: to_bytes(5, LongType())},
...              upper_bounds={1: to_bytes(9, LongType())})
>>> files = data_files_to_arrow([f], None, 2)
>>> StrictMetricsEvaluator(schema, "id >= 5").eval(files).to_pylist()
[True]
>>> InclusiveMetricsEvaluator(schema, "id > 9").eval(files).to_pylist()
[False]
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from frazil import _native
from frazil.expressions.base import BooleanExpression
from frazil.expressions.binding import bind
from frazil.expressions.json import to_json_text
from frazil.expressions.parser import parse
from frazil.schema import Schema

__all__ = ["InclusiveMetricsEvaluator", "StrictMetricsEvaluator"]


class _MetricsEvaluator:
    def __init__(
        self,
        schema: Schema,
        expr: BooleanExpression | str,
        case_sensitive: bool,
        strict: bool,
        sql_nulls: bool = False,
    ) -> None:
        bound = bind(schema, parse(expr) if isinstance(expr, str) else expr, case_sensitive)
        self.schema = schema
        self.expr = bound
        self._native = _native.MetricsEvaluator(
            json.dumps(schema.to_json()), to_json_text(bound), strict, sql_nulls
        )

    def eval(self, data_files: Any) -> pa.BooleanArray:
        """One boolean per file of ``data_files``: a ``data_file`` struct array (or a chunked
        array of them), or manifest entries with a ``data_file`` column (a record batch or a
        table, as :func:`frazil.manifest.read_manifest` returns them)."""
        if isinstance(data_files, pa.Table):
            chunks = data_files.to_batches()
        elif isinstance(data_files, pa.ChunkedArray):
            chunks = data_files.chunks
        else:
            return pa.array(self._native.eval(data_files))
        if not chunks:
            return pa.array([], pa.bool_())
        return pa.concat_arrays([pa.array(self._native.eval(c)) for c in chunks])


class InclusiveMetricsEvaluator(_MetricsEvaluator):
    """Whether a file's rows *might* make the filter true: ``False`` only when the metrics prove
    that no row can (Java's ``InclusiveMetricsEvaluator``)."""

    def __init__(
        self, schema: Schema, expr: BooleanExpression | str, case_sensitive: bool = True
    ) -> None:
        super().__init__(schema, expr, case_sensitive, strict=False)


class StrictMetricsEvaluator(_MetricsEvaluator):
    """Whether *every* row of a file makes the filter true: ``True`` only when the metrics prove
    it (Java's ``StrictMetricsEvaluator``).

    Iceberg's negated predicates (``!=``, ``NOT IN``, ``NOT STARTS WITH``, ``NOT NaN``) hold for
    null, as the expressions spec and Java say, and frazil's row filters and deletes agree.
    ``sql_nulls=True`` evaluates under SQL's semantics instead, where a comparison with null is
    not true (a file proven to match them has no nulls in the column), for a caller that
    applies SQL's meaning to the rows.
    """

    def __init__(
        self,
        schema: Schema,
        expr: BooleanExpression | str,
        case_sensitive: bool = True,
        sql_nulls: bool = False,
    ) -> None:
        super().__init__(schema, expr, case_sensitive, strict=True, sql_nulls=sql_nulls)
