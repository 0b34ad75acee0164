"""frazil.expressions.metrics_evaluator: the native inclusive and strict metrics evaluators over
Arrow ``data_file`` columns.

Expected answers are Java 1.10.2's, derived by hand from its documented rules
(``InclusiveEvalVisitor``/``InclusiveMetricsEvaluator``, ``StrictMetricsEvaluator``): "NaN
indicates unreliable bounds", "Cannot filter by nested column" (strict: rows might not match),
``IN_PREDICATE_LIMIT = 200``. tests/interop/test_metrics_evaluator_java.py asks Java itself.
"""

from __future__ import annotations

import json
import struct

import pyarrow as pa
import pytest

from frazil import manifest as fm
from frazil.exceptions import FrazilError
from frazil.expressions import parse
from frazil.expressions.metrics_evaluator import (
    InclusiveMetricsEvaluator,
    StrictMetricsEvaluator,
)
from frazil.manifest.content_file import DataFile, data_files_to_arrow, manifest_entries
from frazil.schema import Schema
from frazil.types import DoubleType, LongType, NestedField, StringType, StructType
from frazil.values import to_bytes

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "s", StringType()),
    NestedField(3, "x", DoubleType()),
    NestedField(4, "info", StructType(NestedField(5, "v", LongType()))),
)
NAN = struct.pack("<d", float("nan"))


def _d(v: float) -> bytes:
    return struct.pack("<d", v)


def _l(v: int) -> bytes:
    return to_bytes(v, LongType())


def _file(records: int = 10, **metrics: dict[int, int] | dict[int, bytes] | None) -> DataFile:
    return DataFile("f.parquet", "PARQUET", (), records, 1, **metrics)  # type: ignore[arg-type]


def incl(f: DataFile, e: str) -> bool:
    (out,) = InclusiveMetricsEvaluator(SCHEMA, e).eval(data_files_to_arrow([f], None, 2))
    return bool(out.as_py())


def strict(f: DataFile, e: str, sql_nulls: bool = False) -> bool:
    evaluator = StrictMetricsEvaluator(SCHEMA, e, sql_nulls=sql_nulls)
    (out,) = evaluator.eval(data_files_to_arrow([f], None, 2))
    return bool(out.as_py())


def test_nan_lower_bound_proves_nothing() -> None:
    # An ORC writer whose first value was NaN reports NaN bounds though other values exist.
    f = _file(
        value_counts={3: 10},
        null_value_counts={3: 0},
        nan_value_counts={3: 1},
        lower_bounds={3: NAN},
        upper_bounds={3: _d(5.0)},
    )
    # Inclusive lt/ltEq/eq/in: "NaN indicates unreliable bounds" -> rows might match (a plain
    # comparison with NaN would have pruned the file).
    assert incl(f, "x < 1.0") and incl(f, "x <= 1.0")
    assert incl(f, "x = 1.0") and incl(f, "x IN (1.0, 2.0)")
    assert not incl(f, "x > 5.0") and incl(f, "x >= 5.0")  # the upper bound still counts
    g = _file(
        value_counts={3: 10},
        null_value_counts={3: 0},
        nan_value_counts={3: 0},
        lower_bounds={3: NAN},
        upper_bounds={3: _d(5.0)},
    )
    # Strict gt/gtEq/notEq/notIn: a NaN lower bound proves nothing.
    assert not strict(g, "x > -1.0") and not strict(g, "x >= -1.0")
    assert not strict(g, "x != -1.0") and not strict(g, "x NOT IN (-1.0, -2.0)")
    # Java's notEq returns at the NaN lower bound before it looks at the upper bound
    assert not strict(g, "x != 6.0")
    assert strict(g, "x < 6.0")  # upper bound 5 < 6, no nulls, no NaN


def test_strict_trusts_no_metrics_of_nested_columns() -> None:
    # A value under a null parent is null without being counted in the leaf's null count.
    f = _file(
        value_counts={1: 10, 5: 10},
        null_value_counts={1: 0, 5: 0},
        nan_value_counts={},
        lower_bounds={1: _l(5), 5: _l(5)},
        upper_bounds={1: _l(9), 5: _l(9)},
    )
    for e in ("v >= 5", "v < 10", "v != 4", "v <= 9", "v IS NOT NULL", "v NOT IN (1)"):
        assert strict(f, e.replace("v", "id")), e  # the top-level twin is proven
        assert not strict(f, e.replace("v", "info.v")), e
    # inclusive evaluation uses nested metrics as any other
    assert not incl(f, "info.v > 9") and incl(f, "info.v = 7") and not incl(f, "info.v < 5")


def test_in_over_200_values_is_not_checked_against_bounds() -> None:
    f = _file(
        value_counts={1: 10},
        null_value_counts={1: 0},
        lower_bounds={1: _l(1000)},
        upper_bounds={1: _l(2000)},
    )
    few = ", ".join(str(v) for v in range(200))
    many = ", ".join(str(v) for v in range(201))
    assert not incl(f, f"id IN ({few})")  # 200 values: all below the lower bound
    assert incl(f, f"id IN ({many})")  # 201: Java's limit, rows might match
    # a file with only nulls still cannot match, whatever the set's size
    nulls = _file(value_counts={1: 10}, null_value_counts={1: 10})
    assert not incl(nulls, f"id IN ({many})")


def test_sql_null_semantics_for_negated_predicates() -> None:
    f = _file(
        value_counts={2: 10},
        null_value_counts={2: 2},
        lower_bounds={2: b"b"},
        upper_bounds={2: b"d"},
    )
    # Iceberg (and Java): a negated predicate holds for null, so every row matches.
    assert strict(f, "s != 'a'") and strict(f, "s NOT IN ('a', 'z')")
    assert strict(f, "NOT (s = 'a')")
    # SQL: null != 'a' is not true.
    for e in ("s != 'a'", "s NOT IN ('a', 'z')", "NOT (s = 'a')", "s NOT LIKE 'a%'"):
        assert not strict(f, e, sql_nulls=True), e
    # without nulls both agree
    g = _file(
        value_counts={2: 10},
        null_value_counts={2: 0},
        lower_bounds={2: b"b"},
        upper_bounds={2: b"d"},
    )
    assert strict(g, "s != 'a'", sql_nulls=True) and strict(g, "s != 'a'")


def test_empty_files_and_missing_metrics() -> None:
    empty = _file(0, value_counts={1: 0})
    assert not incl(empty, "id = 1") and strict(empty, "id = 1")
    bare = _file()  # no metrics at all
    assert incl(bare, "id = 1") and not strict(bare, "id = 1")


def test_arrow_shapes_and_manifest_entries() -> None:
    files = [
        _file(value_counts={1: 10}, null_value_counts={1: 0}, lower_bounds={1: _l(lo)},
              upper_bounds={1: _l(lo + 9)})
        for lo in (0, 10, 20)
    ]  # fmt: skip
    column = data_files_to_arrow(files, None, 2)
    evaluator = InclusiveMetricsEvaluator(SCHEMA, parse("id >= 12"))
    expected = [False, True, True]
    assert evaluator.eval(column).to_pylist() == expected
    assert evaluator.eval(pa.chunked_array([column.slice(0, 1), column.slice(1)])).to_pylist() == (
        expected
    )
    batch = pa.RecordBatch.from_struct_array(column)
    assert evaluator.eval(batch).to_pylist() == expected
    # manifest entries, as the decoder returns them (a data_file column)
    entries = manifest_entries(files, 1, 7, 1, 1, pa.struct([]), 2)
    written = fm.write_manifest(
        entries,
        format_version=2,
        schema=json.dumps(SCHEMA.to_json()),
        partition_spec="[]",
        schema_id=0,
        partition_spec_id=0,
    )
    decoded = fm.read_manifest(written)
    assert evaluator.eval(decoded).to_pylist() == expected
    assert evaluator.eval(decoded.slice(0, 0)).to_pylist() == []


def test_bad_input_is_a_clear_error() -> None:
    evaluator = StrictMetricsEvaluator(SCHEMA, "id > 1")
    with pytest.raises(FrazilError):
        evaluator.eval(pa.array([1, 2, 3]))
    bad = pa.StructArray.from_arrays([pa.array([1])], names=["lower_bounds"])
    with pytest.raises(FrazilError, match="lower_bounds"):
        evaluator.eval(bad)
