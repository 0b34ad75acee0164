"""Row filters mean what the expressions spec says, in every path (issue 26).

``../shared/reference/expressions-spec.md`` ("Tests", "Comparisons", "Boolean logic"): every
predicate is true or false, never null; ``null != 'a'`` is true, ``x NOT IN (1, 2)`` is true for
null, ``IS NOT NaN`` is true for null, ``NaN != 1.5`` is true, a comparison with NaN or null is
otherwise false, ``-0.0 = 0.0`` (IEEE order), and ``NOT e`` is true exactly where ``e`` is
false.

Hypothesis draws tables (nulls, NaN, -0.0; a column added later without a default, one added
with an initial default; several files in several partitions) and expression trees over every
predicate with ``Not`` and nesting, and checks through the public API that:

- ``scan(e)`` and ``scan(Not(e))`` partition the rows exactly, in ``to_arrow``, ``count``,
  ``to_batches`` and the Arrow plan's tasks read one by one;
- the rows equal :func:`spec_eval`, an evaluator written here from the spec's tables (not
  frazil's code);
- ``delete(e)`` (copy-on-write and merge-on-read) leaves exactly ``scan(Not(e))``.
"""

from __future__ import annotations

import math
import struct
import uuid
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frazil.catalog import load_catalog
from frazil.expressions import (
    And,
    BooleanExpression,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNaN,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    NotEqualTo,
    NotIn,
    NotNaN,
    NotNull,
    NotStartsWith,
    Or,
    StartsWith,
)
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.transforms import IdentityTransform
from frazil.types import (
    BooleanType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
)

# ---------------------------------------------------------------------------------------------
# the oracle: the spec's tables, on Python values


def _f32(v: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", v))[0])


def _is_nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _key(v: Any) -> Any:
    # strings order by their UTF-8 bytes (unsigned byte-wise), not by code units
    return v.encode() if isinstance(v, str) else v


def _cmp(op: str, v: Any, c: Any) -> bool:
    """A comparison of a row value with a (non-null, non-NaN) literal."""
    if v is None or _is_nan(v):
        # "a < b and a > b are false when either operand is null"; NaN "behaves similarly";
        # a = b is false when only one operand is null or NaN; != is its negation
        return op == "!="
    a, b = _key(v), _key(c)
    return {
        "=": a == b,  # IEEE: -0.0 == 0.0
        "!=": a != b,
        "<": a < b,
        "<=": a <= b,
        ">": a > b,
        ">=": a >= b,
    }[op]


def spec_eval(e: Any, row: dict[str, Any]) -> bool:
    """The spec's value of expression ``e`` (the tuple form built by :func:`exprs`) on ``row``."""
    kind = e[0]
    if kind == "and":
        return spec_eval(e[1], row) and spec_eval(e[2], row)
    if kind == "or":
        return spec_eval(e[1], row) or spec_eval(e[2], row)
    if kind == "not":
        return not spec_eval(e[1], row)
    _, op, col, lit = e
    v = row[col]
    if op == "is-null":
        return v is None
    if op == "not-null":
        return v is not None
    if op == "is-nan":
        return _is_nan(v)
    if op == "not-nan":
        return not _is_nan(v)
    if op == "in":
        return any(_cmp("=", v, c) for c in lit)
    if op == "not-in":
        return not any(_cmp("=", v, c) for c in lit)
    if op == "starts-with":
        return v is not None and v.startswith(lit)
    if op == "not-starts-with":
        return not (v is not None and v.startswith(lit))
    return _cmp(op, v, lit)


_BUILD: dict[str, Callable[..., BooleanExpression]] = {
    "=": EqualTo,
    "!=": NotEqualTo,
    "<": LessThan,
    "<=": LessThanOrEqual,
    ">": GreaterThan,
    ">=": GreaterThanOrEqual,
    "in": In,
    "not-in": NotIn,
    "starts-with": StartsWith,
    "not-starts-with": NotStartsWith,
}


def to_frazil(e: Any) -> BooleanExpression:
    kind = e[0]
    if kind in ("and", "or"):
        return (And if kind == "and" else Or)(to_frazil(e[1]), to_frazil(e[2]))
    if kind == "not":
        return Not(to_frazil(e[1]))
    _, op, col, lit = e
    unary = {"is-null": IsNull, "not-null": NotNull, "is-nan": IsNaN, "not-nan": NotNaN}
    if op in unary:
        return unary[op](col)
    return _BUILD[op](col, lit)


# ---------------------------------------------------------------------------------------------
# strategies

# column -> (iceberg type, arrow type, value strategy, literal strategy)
_DOUBLES = st.sampled_from([-1.5, -0.0, 0.0, 0.5, 1.5, 2.0, float("inf"), float("-inf")])
_FLOATS = st.sampled_from([-1.5, -0.0, 0.0, 0.5, 1.5, 2.0])
_INTS = st.integers(-3, 3)
_STRS = st.sampled_from(["", "a", "ab", "b", "é", "z", "Z", "ü🧊"])
COLUMNS: dict[str, tuple[Any, pa.DataType, Any, Any]] = {
    "i": (IntegerType(), pa.int32(), _INTS, _INTS),
    "l": (LongType(), pa.int64(), _INTS, _INTS),
    "d": (
        DoubleType(),
        pa.float64(),
        st.one_of(_DOUBLES, st.just(float("nan"))),
        st.sampled_from([-1.5, -0.0, 0.0, 0.5, 2.0]),
    ),
    "f": (FloatType(), pa.float32(), st.one_of(_FLOATS, st.just(float("nan"))), _FLOATS),
    "s": (StringType(), pa.string(), _STRS, _STRS),
    "b": (BooleanType(), pa.bool_(), st.booleans(), st.booleans()),
}
# added after the first files: "a" without a default (old rows read null), "k" with an
# initial default of 7 (old rows read 7)
LATER = {
    "a": (LongType(), pa.int64(), _INTS, _INTS),
    "k": (IntegerType(), pa.int32(), _INTS, _INTS),
}
K_DEFAULT = 7
ALL = {**COLUMNS, **LATER}


def _row(draw: Any, cols: dict[str, Any]) -> dict[str, Any]:
    return {c: draw(st.one_of(st.none(), spec[2])) for c, spec in cols.items()}


@st.composite
def tables(draw: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows written before the columns were added, and rows written after."""
    before = draw(st.lists(st.builds(dict), min_size=1, max_size=12))
    before = [_row(draw, COLUMNS) for _ in before]
    after = draw(st.lists(st.builds(dict), min_size=0, max_size=8))
    after = [_row(draw, ALL) for _ in after]
    return before, after


@st.composite
def predicates(draw: Any) -> Any:
    col = draw(st.sampled_from(sorted(ALL)))
    ty = ALL[col][0]
    lit_st = ALL[col][3]
    ops = ["=", "!=", "<", "<=", ">", ">=", "in", "not-in", "is-null", "not-null"]
    if isinstance(ty, (FloatType, DoubleType)):
        ops += ["is-nan", "not-nan"]
    if isinstance(ty, StringType):
        ops += ["starts-with", "not-starts-with"]
    if isinstance(ty, BooleanType):
        ops = ["=", "!=", "in", "not-in", "is-null", "not-null"]
    op = draw(st.sampled_from(ops))
    if op in ("is-null", "not-null", "is-nan", "not-nan"):
        return ("pred", op, col, None)
    if op in ("in", "not-in"):
        return ("pred", op, col, draw(st.lists(lit_st, min_size=1, max_size=4)))
    if op in ("starts-with", "not-starts-with"):
        return ("pred", op, col, draw(st.sampled_from(["", "a", "é", "ü", "Z"])))
    return ("pred", op, col, draw(lit_st))


exprs = st.recursive(
    predicates(),
    lambda inner: st.one_of(
        st.tuples(st.just("and"), inner, inner),
        st.tuples(st.just("or"), inner, inner),
        st.tuples(st.just("not"), inner),
    ),
    max_leaves=6,
)


# ---------------------------------------------------------------------------------------------
# the table


def _arrow(rows: list[dict[str, Any]], cols: dict[str, Any]) -> pa.Table:
    arrays = {"id": pa.array([r["id"] for r in rows], pa.int64())}
    for c, spec in cols.items():
        arrays[c] = pa.array([r[c] for r in rows], spec[1])
    return pa.table(arrays)


def _expected_rows(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[dict]:
    rows = []
    for n, r in enumerate(before):
        rows.append({**r, "id": n, "a": None, "k": K_DEFAULT})
    for n, r in enumerate(after):
        rows.append({**r, "id": len(before) + n})
    for r in rows:
        r["f"] = None if r["f"] is None else _f32(r["f"])
    return rows


def make_table(tmp: Any, name: str, before: list, after: list, mode: str) -> Any:
    catalog = load_catalog(
        "filters", type="sql", uri=f"sqlite:///{tmp}/c.db", warehouse=f"file://{tmp}/wh"
    )
    try:
        catalog.create_namespace("db")
    except Exception:
        pass
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        *(NestedField(i + 2, c, spec[0]) for i, (c, spec) in enumerate(COLUMNS.items())),
    )
    # identity(s): partition values decide residuals (null partitions included)
    spec = PartitionSpec(PartitionField(6, 1000, IdentityTransform(), "s"))
    table = catalog.create_table(
        f"db.{name}",
        schema,
        partition_spec=spec,
        properties={
            "format-version": "3",
            "write.delete.mode": mode,
            "write.update.mode": mode,
        },
    )
    rows = _expected_rows(before, after)
    first = rows[: len(before)]
    # two appends before the schema change: several files, overlapping bounds
    half = len(first) // 2
    for part in (first[:half], first[half:]):
        if part:
            table.append(_arrow(part, COLUMNS))
    with table.update_schema() as u:
        u.add_column("a", LongType())
        u.add_column("k", IntegerType(), default_value=K_DEFAULT)
    table = catalog.load_table(f"db.{name}")
    if after:
        table.append(_arrow(rows[len(before) :], ALL))
    return table, rows


def _ids(table: Any, e: BooleanExpression) -> list[int]:
    return sorted(table.scan(row_filter=e).to_arrow().column("id").to_pylist())


_counter = iter(range(10**9))


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    data=tables(),
    es=st.lists(exprs, min_size=1, max_size=4),
    mode=st.sampled_from(["copy-on-write", "merge-on-read"]),
)
def test_filters_follow_the_spec(tmp_path: Any, data: Any, es: list[Any], mode: str) -> None:
    before, after = data
    table, rows = make_table(tmp_path, f"t{next(_counter)}", before, after, mode)
    all_ids = sorted(r["id"] for r in rows)
    assert _ids(table, And(NotNull("id"))) == all_ids
    for e in es:
        expr = to_frazil(e)
        want = sorted(r["id"] for r in rows if spec_eval(e, r))
        got = _ids(table, expr)
        negated = _ids(table, Not(expr))
        assert got == want, (e, rows)
        assert sorted(got + negated) == all_ids, e
        assert table.scan(row_filter=expr).count() == len(want), e
        batches = table.scan(row_filter=expr).to_batches()
        assert sorted(i for b in batches for i in b.column("id").to_pylist()) == want
    # delete(e) leaves exactly scan(Not(e))
    e = es[0]
    expr = to_frazil(e)
    keep = sorted(r["id"] for r in rows if not spec_eval(e, r))
    table.delete(expr)
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == keep, e


def test_issue_example(tmp_path: Any) -> None:
    """The issue's table: s = 'a', 'b', null, 'c', 'a', null."""
    catalog = load_catalog(
        "filters", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}"
    )
    catalog.create_namespace("db")
    data = pa.table({"id": pa.array(range(6), pa.int64()), "s": ["a", "b", None, "c", "a", None]})
    table = catalog.create_table("db.t", data.schema)
    table.append(data)
    assert _ids(table, NotEqualTo("s", "a")) == [1, 2, 3, 5]
    assert _ids(table, Not(NotEqualTo("s", "a"))) == [0, 4]
    assert _ids(table, Not(EqualTo("s", "a"))) == [1, 2, 3, 5]
    assert _ids(table, NotIn("s", ["a", "b"])) == [2, 3, 5]
    # the string filter language means the spec's expressions as written
    assert _ids(table, "s != 'a'") == [1, 2, 3, 5]  # type: ignore[arg-type]
    assert _ids(table, "NOT s = 'a'") == [1, 2, 3, 5]  # type: ignore[arg-type]
    assert _ids(table, "s != 'a' AND s IS NOT NULL") == [1, 3]  # type: ignore[arg-type]
    table.delete("s != 'a'")
    assert _ids(table, And(NotNull("id"))) == [0, 4]


@pytest.mark.parametrize("dtype", [pa.float32(), pa.float64()])
def test_nan_and_negative_zero(tmp_path: Any, dtype: pa.DataType) -> None:
    catalog = load_catalog(
        "filters", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}"
    )
    catalog.create_namespace("db")
    values = [1.5, float("nan"), None, -0.0, 0.0]
    data = pa.table({"id": pa.array(range(5), pa.int64()), "x": pa.array(values, dtype)})
    table = catalog.create_table("db.t", data.schema)
    table.append(data)
    assert _ids(table, NotEqualTo("x", 1.5)) == [1, 2, 3, 4]  # NaN != 1.5 is true
    assert _ids(table, GreaterThan("x", 1.0)) == [0]  # NaN > 1.0 is false
    assert _ids(table, EqualTo("x", 0.0)) == [3, 4]  # -0.0 = 0.0
    assert _ids(table, NotNaN("x")) == [0, 2, 3, 4]  # IS NOT NaN is true for null
    assert _ids(table, Not(LessThan("x", 1.0))) == [0, 1, 2]
    assert _ids(table, In("x", [-0.0, 1.5])) == [0, 3, 4]


def test_uuid_in_sets(tmp_path: Any) -> None:
    from frazil.types import UUIDType

    catalog = load_catalog(
        "filters", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}"
    )
    catalog.create_namespace("db")
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "u", UUIDType()))
    table = catalog.create_table("db.t", schema)
    keys = [uuid.UUID(int=i + 1) for i in range(3)]
    from frazil.arrow_schema import schema_to_arrow

    data = pa.table(
        {
            "id": pa.array([0, 1, 2, 3], pa.int64()),
            "u": pa.array([k.bytes for k in keys] + [None], pa.binary(16)),
        }
    ).cast(schema_to_arrow(table.schema()))
    table.append(data)
    assert _ids(table, NotIn("u", [str(keys[0]), str(keys[2])])) == [1, 3]
    assert _ids(table, Or(EqualTo("u", str(keys[0])), EqualTo("u", str(keys[1])))) == [0, 1]
