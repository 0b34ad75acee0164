"""Row filters against the Java reference's ``org.apache.iceberg.expressions.Evaluator``
(Iceberg 1.10.2, through py4j), on a fixed corpus of rows (nulls, NaN, -0.0) and filters.

frazil follows the expressions spec (2-valued, null-safe predicates; see
``tests/table/test_filter_semantics.py``). Java's legacy ``Evaluator`` agrees with it for
``=``, ``!=``, ``IN``, ``NOT IN``, ``STARTS WITH``, the null and NaN tests and ``NOT`` of them,
and differs in three known ways, each checked here to be the only reason two answers differ:

1. Null first: Java compares with ``Comparators.nullsFirst()``, so ``null < 5`` and
   ``null <= 5`` are true. The spec: "``a < b`` and ``a > b`` are false when either operand is
   null"; "``a <= b`` is ``(a = b) OR (a < b)``".
2. NaN last: Java compares doubles with ``Double.compare``, so ``NaN > 1.5`` and
   ``NaN >= 1.5`` are true. The spec: "``a < b`` and ``a > b`` are false when either operand
   is NaN".
3. Signed zeros: ``Double.compare(-0.0, 0.0) < 0`` and Java's literal sets hash the bits, so
   ``-0.0 = 0.0`` and ``-0.0 IN (0.0)`` are false there. The spec: "``float`` and ``double``
   use IEEE 754 order for all non-NaN values" (where ``-0.0 = 0.0``).

A difference propagates through ``NOT`` and ``AND``/``OR``, so a pair of answers is accepted as
different only when Java's answer equals :func:`java_model`'s (the spec with exactly those three
rules changed) and frazil's equals the spec's.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from peers import java_reference_session

from frazil.catalog import load_catalog
from frazil.expressions import (
    And,
    BooleanExpression,
    BoundLiteralPredicate,
    BoundPredicate,
    BoundSetPredicate,
    Not,
    NotNull,
    Or,
    bind,
    parse,
    to_json,
)
from frazil.schema import Schema
from frazil.types import DoubleType, IntegerType, LongType, NestedField, StringType

sys.path.insert(0, str(Path(__file__).resolve().parent))

pytestmark = [
    pytest.mark.interop,
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "i", IntegerType()),
    NestedField(3, "d", DoubleType()),
    NestedField(4, "s", StringType()),
)
NAN = float("nan")
ROWS = [
    {"i": 1, "d": 1.5, "s": "a"},
    {"i": None, "d": NAN, "s": "b"},
    {"i": 5, "d": None, "s": None},
    {"i": -3, "d": -0.0, "s": "ab"},
    {"i": 7, "d": 0.0, "s": "é"},
    {"i": None, "d": 3.0, "s": None},
    {"i": 5, "d": NAN, "s": "a"},
]
FILTERS = [
    "s = 'a'",
    "s != 'a'",
    "s < 'b'",
    "s >= 'ab'",
    "s IN ('a', 'b')",
    "s NOT IN ('a', 'b')",
    "s LIKE 'a%'",
    "s NOT LIKE 'a%'",
    "s IS NULL",
    "s IS NOT NULL",
    "NOT s = 'a'",
    "NOT s != 'a'",
    "i = 5",
    "i != 5",
    "i < 5",
    "i <= 5",
    "i > 1",
    "i >= 1",
    "NOT i < 5",
    "NOT i >= 5",
    "i IN (1, 7)",
    "i NOT IN (1, 7)",
    "d = 1.5",
    "d != 1.5",
    "d > 1.0",
    "d >= 1.5",
    "d < 2.0",
    "d <= 0.0",
    "d = 0.0",
    "d IN (0.0, 3.0)",
    "d NOT IN (0.0, 3.0)",
    "d IS NAN",
    "d IS NOT NAN",
    "NOT d IS NAN",
    "NOT d > 1.0",
    "i > 1 AND s != 'a'",
    "i < 5 OR d IS NAN",
    "NOT (i = 5 OR s = 'a')",
    "NOT (i != 5 AND d IS NOT NAN)",
    "(i IS NULL OR s IN ('a', 'é')) AND NOT d < 1.0",
]


# ---------------------------------------------------------------------------------------------
# two models: the spec's, and the spec with Java's three differences


def _model(e: BooleanExpression, row: dict[str, Any], java: bool) -> bool:
    if isinstance(e, And):
        return _model(e.left, row, java) and _model(e.right, row, java)
    if isinstance(e, Or):
        return _model(e.left, row, java) or _model(e.right, row, java)
    if isinstance(e, Not):
        return not _model(e.child, row, java)
    assert isinstance(e, BoundPredicate)
    v = row[e.term.ref.field.name]
    op = e.op
    nan = isinstance(v, float) and math.isnan(v)
    if op == "is-null":
        return v is None
    if op == "not-null":
        return v is not None
    if op == "is-nan":
        return nan
    if op == "not-nan":
        return not nan
    if isinstance(e, BoundSetPredicate):
        lits = [lit.value for lit in e.literals]
        if java:  # a hash set of boxed values: -0.0 and 0.0 differ, NaN equals NaN
            found = v is not None and any(_java_cmp(v, c) == 0 for c in lits)
        else:
            found = v is not None and not nan and v in lits
        return found if op == "in" else not found
    assert isinstance(e, BoundLiteralPredicate)
    c = e.literal.value
    if op in ("starts-with", "not-starts-with"):
        found = v is not None and v.startswith(c)
        return found if op == "starts-with" else not found
    if java:
        # nullsFirst: null is below every value; Double.compare: NaN above, -0.0 below 0.0
        r = -1 if v is None else _java_cmp(v, c)
        if op in ("eq", "not-eq"):
            # Java's eq/notEq compare too, but null is never equal to a literal
            eq = v is not None and r == 0
            return eq if op == "eq" else not eq
    else:
        if v is None or nan:
            return op == "not-eq"
        a, b = (v.encode(), c.encode()) if isinstance(v, str) else (v, c)
        r = (a > b) - (a < b)
    return {
        "eq": r == 0,
        "not-eq": r != 0,
        "lt": r < 0,
        "lt-eq": r <= 0,
        "gt": r > 0,
        "gt-eq": r >= 0,
    }[op]


def _java_cmp(v: Any, c: Any) -> int:
    if isinstance(v, float):
        if math.isnan(v) or math.isnan(c):
            return (math.isnan(v) > math.isnan(c)) - (math.isnan(v) < math.isnan(c))
        if v == c == 0.0:
            sv, sc = math.copysign(1, v), math.copysign(1, c)
            return (sv > sc) - (sv < sc)
        return (v > c) - (v < c)
    if isinstance(v, str):
        # Java's CharSequence comparator orders by UTF-16 units: the same as code points here
        v, c = v.encode(), c.encode()
    return (v > c) - (v < c)


def spec_model(e: BooleanExpression, row: dict[str, Any]) -> bool:
    return _model(e, row, java=False)


def java_model(e: BooleanExpression, row: dict[str, Any]) -> bool:
    return _model(e, row, java=True)


# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def jvm(tmp_path_factory: Any) -> Any:
    spark = java_reference_session(tmp_path_factory.mktemp("warehouse"))
    yield spark._jvm
    spark.stop()


@pytest.fixture(scope="module")
def table(tmp_path_factory: Any) -> Any:
    tmp = tmp_path_factory.mktemp("filters")
    catalog = load_catalog("f", type="sql", uri=f"sqlite:///{tmp}/c.db", warehouse=f"file://{tmp}")
    catalog.create_namespace("db")
    t = catalog.create_table("db.t", SCHEMA)
    t.append(
        pa.table(
            {
                "id": pa.array(range(len(ROWS)), pa.int64()),
                "i": pa.array([r["i"] for r in ROWS], pa.int32()),
                "d": pa.array([r["d"] for r in ROWS], pa.float64()),
                "s": pa.array([r["s"] for r in ROWS], pa.string()),
            }
        )
    )
    return t


def _java_rows(jvm: Any, struct: Any) -> list[Any]:
    """``ROWS`` as Java records of ``struct`` (boxed Integer, Double, String)."""
    lang = jvm.java.lang
    out = []
    for r in ROWS:
        rec = jvm.org.apache.iceberg.data.GenericRecord.create(struct)
        if r["i"] is not None:
            rec.setField("i", lang.Integer.valueOf(r["i"]))
        if r["d"] is not None:
            # NaN and -0.0 are made in Java: py4j's float encoding does not carry them
            rec.setField("d", lang.Double.valueOf("NaN" if math.isnan(r["d"]) else repr(r["d"])))
        if r["s"] is not None:
            rec.setField("s", r["s"])
        out.append(rec)
    return out


def test_java_evaluator_agrees_where_the_spec_does(jvm: Any, table: Any) -> None:
    java_schema = jvm.org.apache.iceberg.SchemaParser.fromJson(json.dumps(SCHEMA.to_json()))
    struct = java_schema.asStruct()
    records = _java_rows(jvm, struct)
    parser = jvm.org.apache.iceberg.expressions.ExpressionParser
    rows = [{**r, "id": n} for n, r in enumerate(ROWS)]
    differences = 0
    for text in FILTERS:
        bound = bind(SCHEMA, parse(text))
        java_expr = parser.fromJson(json.dumps(to_json(bound, legacy=True)))
        evaluator = jvm.org.apache.iceberg.expressions.Evaluator(struct, java_expr, True)
        ours = sorted(table.scan(row_filter=parse(text)).to_arrow().column("id").to_pylist())
        negated = sorted(
            table.scan(row_filter=Not(parse(text))).to_arrow().column("id").to_pylist()
        )
        assert sorted(ours + negated) == list(range(len(ROWS))), text
        for n, (row, rec) in enumerate(zip(rows, records, strict=True)):
            java = bool(evaluator.eval(rec))
            frazil = n in ours
            assert frazil == spec_model(bound, row), (text, row)
            if java != frazil:
                differences += 1
                # only the three listed differences may explain it
                assert java == java_model(bound, row), (text, row, java, frazil)
            else:
                assert java == java_model(bound, row), (text, row, "model of Java is off")
    # the corpus does reach the known differences (null first, NaN last, signed zeros)
    assert differences > 0
    assert table.scan(row_filter=NotNull("id")).count() == len(ROWS)
