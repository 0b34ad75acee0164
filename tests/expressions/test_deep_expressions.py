"""Expressions of thousands of terms: ``And(*terms)``/``Or(*terms)`` and string filters build
balanced trees; trees built by hand thousands of levels deep (left-deep, right-deep) work in
every operation of the package and through the native planner (``Table.scan(...).plan_files()``),
which balances them; what cannot be balanced fails with a clear error past the documented limit.

The oracle for planned files is the set of files whose id range holds a wanted id, computed here
from the data written; for the tree shapes, the depth of a balanced tree (ceil(log2(n)))."""

from __future__ import annotations

import math
import pickle
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from frazil.catalog import load_catalog
from frazil.exceptions import FrazilError, InvalidArgumentError
from frazil.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    EqualTo,
    GreaterThanOrEqual,
    LessThan,
    Not,
    NotEqualTo,
    Or,
    bind,
    fold,
    from_json,
    parse,
    to_json,
)
from frazil.expressions.json import to_json_text
from frazil.schema import Schema
from frazil.types import LongType, NestedField
from frazil.values import from_bytes

N = 10_000
SCHEMA = Schema(NestedField(1, "id", LongType(), True), NestedField(2, "x", LongType(), False))


def depth(e: BooleanExpression) -> int:
    return fold(e, lambda _: 0, lambda _, kids: 1 + max(kids))


def leaves(e: BooleanExpression) -> list[BooleanExpression]:
    return fold(e, lambda p: [p], lambda _, kids: [p for k in kids for p in k])


def left_deep(cls: Any, terms: list[BooleanExpression]) -> BooleanExpression:
    out = terms[0]
    for t in terms[1:]:
        out = cls(out, t)
    return out


def right_deep(cls: Any, terms: list[BooleanExpression]) -> BooleanExpression:
    out = terms[-1]
    for t in reversed(terms[:-1]):
        out = cls(t, out)
    return out


def eqs(n: int = N) -> list[BooleanExpression]:
    return [EqualTo("id", i) for i in range(n)]


# -- n-ary And/Or


@pytest.mark.parametrize("cls", [And, Or])
@pytest.mark.parametrize("n", [2, 3, 7, 1000, N])
def test_n_ary_is_balanced_and_ordered(cls: Any, n: int) -> None:
    terms = eqs(n)
    e = cls(*terms)
    assert isinstance(e, cls)
    assert depth(e) == math.ceil(math.log2(n))
    assert leaves(e) == terms


def test_n_ary_matches_pyiceberg_shape() -> None:
    pyi = pytest.importorskip("pyiceberg.expressions")
    terms = [f"id = {i}" for i in range(11)]
    ours = str(Or(*[parse(t) for t in terms]))
    theirs = pyi.Or(*[pyi.EqualTo("id", i) for i in range(11)])

    def shape(e: Any) -> Any:  # PyIceberg's tree as nested tuples of ids
        return (shape(e.left), shape(e.right)) if isinstance(e, pyi.Or) else e.literal.value

    def our_shape(e: Any) -> Any:
        return (our_shape(e.left), our_shape(e.right)) if isinstance(e, Or) else e.literal.value

    assert our_shape(Or(*[parse(t) for t in terms])) == shape(theirs)
    assert "id = 10" in ours


def test_n_ary_edge_cases() -> None:
    a, b = EqualTo("id", 1), EqualTo("id", 2)
    assert And() == AlwaysTrue() and Or() == AlwaysFalse()
    assert And(a) is a and Or(a) is a
    assert And(a, AlwaysTrue(), b) == And(a, b)
    assert Or(a, AlwaysFalse(), b, AlwaysFalse()) == Or(a, b)
    assert And(a, b, AlwaysFalse()) == AlwaysFalse()
    assert Or(a, AlwaysTrue(), b) == AlwaysTrue()
    # the two-argument forms are as before
    assert And(a, AlwaysTrue()) is a and Or(AlwaysFalse(), b) is b
    assert And(left=a, right=b) == And(a, b) and Not(child=a) == Not(a)
    assert eval(repr(And(a, b, a)), vars(__import__("frazil.expressions").expressions)) == And(
        a, b, a
    )
    with pytest.raises(InvalidArgumentError):
        And(a, left=a, right=b)
    with pytest.raises(InvalidArgumentError):
        Not()
    with pytest.raises(InvalidArgumentError):
        Or(a, "id = 1")  # type: ignore[arg-type]


# -- string filters


def test_long_string_filters_are_balanced() -> None:
    text = " OR ".join(f"id = {i}" for i in range(N))
    e = parse(text)
    assert isinstance(e, Or) and depth(e) == math.ceil(math.log2(N))
    assert leaves(e) == eqs()
    conj = parse(" AND ".join(f"id != {i}" for i in range(N)))
    assert isinstance(conj, And) and depth(conj) == math.ceil(math.log2(N))
    # AND binds tighter than OR: each disjunct is its own balanced conjunction
    mixed = parse(" OR ".join(f"(id > {i} AND id < {i + 5} AND x = {i})" for i in range(100)))
    assert isinstance(mixed, Or) and depth(mixed) == math.ceil(math.log2(100)) + 2


def test_deep_nesting_in_string_filters() -> None:
    nested = "(" * N + "id = 1" + ")" * N
    assert parse(nested) == EqualTo("id", 1)
    assert parse("NOT " * (N + 1) + "id = 1") == Not(EqualTo("id", 1))
    assert parse("NOT " * N + "(id = 1)") == EqualTo("id", 1)
    # right-nested parentheses: a OR (b OR (c ...)) keeps the shape written
    text = "id = 0"
    for i in range(1, 2000):
        text = f"id = {i} OR ({text})"
    e = parse(text)
    assert depth(e) == 1999 and len(leaves(e)) == 2000
    assert parse(str(e)) == e
    with pytest.raises(FrazilError, match="expected '\\)'"):
        parse("(" * 50 + "id = 1" + ")" * 49)
    with pytest.raises(FrazilError, match="expected AND, OR or the end"):
        parse("(id = 1))")


# -- hand-built deep trees through every operation of the package


@pytest.fixture(params=["left", "right"])
def deep(request: Any) -> BooleanExpression:
    build = left_deep if request.param == "left" else right_deep
    return build(Or, [And(EqualTo("id", i), NotEqualTo("x", i)) for i in range(N)])


def test_deep_tree_basics(deep: BooleanExpression) -> None:
    assert depth(deep) == N
    assert deep != Or(*[And(EqualTo("id", i), NotEqualTo("x", i)) for i in range(N)])
    twin = pickle.loads(pickle.dumps(deep))
    assert twin == deep and hash(twin) == hash(deep)
    assert str(deep).count(" OR ") == N - 1
    assert parse(str(deep)) == deep
    assert repr(deep).startswith("Or(left=")
    neg = ~deep
    assert isinstance(neg, And) and depth(neg) == N
    assert ~neg == deep


def test_deep_tree_bind_and_json(deep: BooleanExpression) -> None:
    bound = bind(SCHEMA, deep)
    assert depth(bound) == N
    assert from_json(to_json(deep)) == deep
    assert from_json(to_json(bound), SCHEMA) == bound
    assert from_json(to_json(deep, legacy=True)) == deep
    text = to_json_text(bound)
    assert text.count('"type":"or"') == N - 1
    # the same text as json.dumps writes, where json.dumps can (a shallow tree)
    import json

    small = bind(SCHEMA, And(EqualTo("id", 1), Or(LessThan("x", 3), Not(EqualTo("x", 7)))))
    assert json.loads(to_json_text(small)) == to_json(small)


def test_deep_json_errors_name_the_place() -> None:
    obj: Any = {"type": "eq", "term": "id"}  # no value
    for _ in range(3000):
        obj = {"type": "not", "child": {"type": "and", "left": True, "right": obj}}
    with pytest.raises(FrazilError, match=r"at \$(\.child\.right){3000}: eq needs 'value'"):
        from_json(obj)


# -- through the native planner


@pytest.fixture
def table(tmp_path: Path) -> Any:
    cat = load_catalog("deep", type="filesystem", warehouse=str(tmp_path))
    cat.create_namespace("db")
    t = cat.create_table("db.t", SCHEMA)
    # 20 files of 1,000 ids each: file k holds ids [1000k, 1000k + 999]
    for k in range(20):
        ids = pa.array(range(1000 * k, 1000 * (k + 1)), pa.int64())
        t.append(pa.table({"id": ids, "x": pa.array([k] * 1000, pa.int64())}))
    return t


def planned_files(table: Any, row_filter: Any) -> set[int]:
    """The file numbers (ids // 1000 of the file's lower bound) the scan plans."""
    tasks = table.scan(row_filter=row_filter).plan_files()
    return {from_bytes(t.file.lower_bounds[1], LongType()) // 1000 for t in tasks}


@pytest.mark.parametrize("shape", ["left", "right", "balanced"])
def test_plan_files_with_deep_filters(table: Any, shape: str) -> None:
    wanted = [1500 + 7 * i for i in range(N // 5)] + [17_003 + i for i in range(N - N // 5)]
    wanted = [w for w in wanted if w < 20_000]
    terms: list[BooleanExpression] = [EqualTo("id", w) for w in wanted]
    build = {"left": left_deep, "right": right_deep, "balanced": lambda c, t: c(*t)}[shape]
    row_filter = build(Or, terms)
    expected = {w // 1000 for w in wanted}  # the files whose id range holds a wanted id
    assert planned_files(table, row_filter) == expected
    # a deep conjunction of ranges: only file 3 overlaps [3000, 3999] and not the excluded ids
    ands = [GreaterThanOrEqual("id", 3000), LessThan("id", 4000)]
    ands += [NotEqualTo("id", 50_000 + i) for i in range(N)]
    assert planned_files(table, left_deep(And, ands)) == {3}
    assert planned_files(table, right_deep(And, ands)) == {3}


def test_plan_files_deep_not_nests_and_limit(table: Any) -> None:
    # NOT NOT ... cancels: 10,001 NOTs of "id < 2000" are "id >= 2000"
    assert planned_files(table, "NOT " * (N + 1) + "(id < 2000)") == set(range(2, 20))
    # alternating NOT/OR cannot be balanced: fine within the limit (500 levels) ...
    e: BooleanExpression = EqualTo("id", 5)
    for i in range(120):  # each step adds Not and Or: 240 levels
        e = Not(Or(e, EqualTo("id", 1_000_000 + i)))
    # no row has an id >= 1,000,000, so an even number of steps is "id = 5": file 0 only
    assert planned_files(table, e) == {0}
    # ... and a clear error past it
    for i in range(300):
        e = Not(Or(e, EqualTo("id", 2_000_000 + i)))
    with pytest.raises(InvalidArgumentError, match="more than 500 levels"):
        table.scan(row_filter=e).plan_files()


def test_composite_key_upsert_of_a_thousand_rows(tmp_path: Path) -> None:
    """The bug that motivated balancing: the key filter of a composite-key upsert is an ``Or``
    of one ``And`` per source row, and 1,000 rows raised RecursionError."""
    from frazil.types import StringType

    cat = load_catalog("u", type="filesystem", warehouse=str(tmp_path))
    cat.create_namespace("db")
    schema = Schema(
        NestedField(1, "a", LongType(), True),
        NestedField(2, "b", StringType(), True),
        NestedField(3, "v", LongType(), False),
    )
    t = cat.create_table("db.t", schema)
    n = 1000

    def rows(keys: range, v: int) -> pa.Table:
        return pa.table(
            {
                "a": pa.array(keys, pa.int64()),
                "b": pa.array([str(i % 7) for i in keys]),
                "v": pa.array([v] * len(keys), pa.int64()),
            }
        )

    t.append(rows(range(n), 0))
    result = t.upsert(rows(range(500, 500 + n), 1), join_cols=["a", "b"])
    # expected: a plain dict merge keyed by (a, b)
    expected = {(a, str(a % 7)): 0 for a in range(n)}
    expected.update({(a, str(a % 7)): 1 for a in range(500, 500 + n)})
    got = {(r["a"], r["b"]): r["v"] for r in t.scan().to_arrow().to_pylist()}
    assert got == expected
    assert (result.rows_updated, result.rows_inserted) == (500, 500)


# -- the native reader at its boundary: JSON text nobody balanced


def _planner(filter_json: str) -> Any:
    import json

    from frazil import _native

    specs = [{"spec-id": 0, "fields": [{"source-id": 1, "field-id": 1000, "name": "id_p",
                                         "transform": "identity"}]}]  # fmt: skip
    return _native.ScanPlanner(json.dumps(SCHEMA.to_json()), json.dumps(specs), filter_json)


def _lt(v: int) -> str:
    return f'{{"type":"lt","left":{{"type":"reference","id":1}},"right":{v}}}'


def test_native_reader_deep_text() -> None:
    import json

    # 20,001 NOTs of id < 5 are id >= 5, projected onto the identity partition
    e = _planner('{"type":"not","child":' * 20_001 + _lt(5) + "}" * 20_001)
    projected = json.loads(e.partition_filter_json(0))
    assert projected["type"] == "gt-eq" and projected["right"]["value"] == 5
    # a left-deep chain of 50,000 predicates is read, balanced (16 levels) and projected
    text = '{"type":"or","left":' * 49_999 + _lt(0)
    text += "".join(f',"right":{_lt(i)}}}' for i in range(1, 50_000))
    projected = json.loads(_planner(text).partition_filter_json(0))
    partition_schema = Schema(NestedField(1000, "id_p", LongType(), False))
    assert depth(from_json(projected, partition_schema)) == 16  # ceil(log2(50,000))


def test_native_reader_limits() -> None:
    with pytest.raises(InvalidArgumentError, match="at most 200000 are read"):
        _planner("[" * 200_001 + "]" * 200_001)
    with pytest.raises(FrazilError, match="not a predicate"):
        _planner("[" * 150_000 + "]" * 150_000)
    alternating = "".join(
        f'{{"type":"{"and" if i % 2 else "or"}","left":{_lt(i)},"right":' for i in range(501)
    )
    with pytest.raises(InvalidArgumentError, match="more than 500 levels"):
        _planner(alternating + _lt(0) + "}" * 501)
