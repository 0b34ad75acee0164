"""Parquet footer metrics: truncation properties, metrics modes and the cases where the Java
reference's ParquetMetrics differs from PyIceberg (nested fields, missing statistics, modes)."""

from __future__ import annotations

import io
import struct

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from frazil.schema import Schema
from frazil.table.write.metrics import (
    MetricsConfig,
    parquet_metrics,
    parse_metrics_mode,
    truncate_binary_lower,
    truncate_binary_upper,
    truncate_string_lower,
    truncate_string_upper,
)
from frazil.types import (
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
)

texts = st.text(st.characters(codec="utf-8"), max_size=12)


@given(st.lists(texts, min_size=1, max_size=8), st.integers(1, 6))
def test_string_truncation_bounds_every_value(values: list[str], n: int) -> None:
    lower = truncate_string_lower(min(values), n)
    upper = truncate_string_upper(max(values), n)
    assert len(lower) <= n
    # UTF-8 byte order is code point order
    for v in values:
        assert lower.encode() <= v.encode()
        if upper is not None:
            assert len(upper) <= n and upper.encode() >= v.encode()
    if upper is None:
        assert all(ord(c) == 0x10FFFF for c in max(values)[:n])


@given(st.lists(st.binary(max_size=12), min_size=1, max_size=8), st.integers(1, 6))
def test_binary_truncation_bounds_every_value(values: list[bytes], n: int) -> None:
    lower = truncate_binary_lower(min(values), n)
    upper = truncate_binary_upper(max(values), n)
    assert len(lower) <= n and all(lower <= v for v in values)
    if upper is None:
        assert max(values)[:n] == b"\xff" * n
    else:
        assert len(upper) <= n and all(upper >= v for v in values)


def test_truncation_like_the_reference() -> None:
    # the last code point that can grow is incremented and what follows it dropped
    assert truncate_string_upper("ab\U0010ffffz", 3) == "ac"
    assert truncate_string_upper("a\ud7ffz", 2) == "a\ue000"  # surrogates are skipped
    assert truncate_string_upper("abc", 3) == "abc"
    assert truncate_binary_upper(b"\x01\xff\xff\x00", 3) == b"\x02"
    assert truncate_binary_upper(b"\xff\xff\x00", 2) is None


def test_modes() -> None:
    assert str(parse_metrics_mode(" Truncate(8) ")) == "truncate(8)"
    for bad in ("truncate(0)", "all", "truncate(x)"):
        with pytest.raises(ValueError):
            parse_metrics_mode(bad)
    schema = Schema(*(NestedField(i, f"c{i}", LongType()) for i in range(1, 103)))
    wide = MetricsConfig.from_properties({}, schema)
    assert str(wide.mode("c1")) == "truncate(16)" and str(wide.mode("c101")) == "none"
    cfg = MetricsConfig.from_properties(
        {
            "write.metadata.metrics.default": "counts",
            "write.metadata.metrics.column.c2": "full",
            "write.metadata.metrics.column.c3": "bogus",
        },
        schema,
    )
    assert [str(cfg.mode(c)) for c in ("c1", "c2", "c3")] == ["counts", "full", "counts"]


def footer(table: pa.Table, **kwargs: object) -> pq.FileMetaData:
    buf = io.BytesIO()
    pq.write_table(table, buf, **kwargs)  # type: ignore[arg-type]
    return pq.read_metadata(io.BytesIO(buf.getvalue()))


SCHEMA = Schema(
    NestedField(1, "id", LongType()),
    NestedField(2, "s", StringType()),
    NestedField(3, "st", StructType(NestedField(4, "x", IntegerType()))),
    NestedField(5, "l", ListType(6, DoubleType(), False)),
    NestedField(7, "t", TimestampType()),
)
DATA = pa.table(
    {
        "id": pa.array([3, 1, None], pa.int32()),
        "s": ["hello world, long", None, "a"],
        "st": [{"x": 5}, None, {"x": -1}],
        "l": [[1.0, 2.0], [], None],
        "t": pa.array([1, 2000, None], pa.timestamp("ms")),
    }
)


def test_reference_behaviour_on_nested_and_units() -> None:
    m = parquet_metrics(footer(DATA, row_group_size=2), SCHEMA)
    assert m.record_count == 3
    # struct children keep bounds; list elements get sizes but no counts or bounds
    assert m.value_counts == {1: 3, 2: 3, 4: 3, 7: 3}
    assert m.null_value_counts == {1: 1, 2: 1, 4: 1, 7: 1}
    assert set(m.column_sizes) == {1, 2, 4, 6, 7}
    assert m.lower_bounds[4] == struct.pack("<i", -1) and m.upper_bounds[4] == struct.pack("<i", 5)
    # an int file column of a long table column: 8-byte bounds
    assert m.lower_bounds[1] == struct.pack("<q", 1)
    # millisecond timestamps as microseconds
    assert m.upper_bounds[7] == struct.pack("<q", 2_000_000)
    assert m.lower_bounds[2] == b"a" and m.upper_bounds[2] == b"hello world, loo"
    assert list(m.split_offsets) == sorted(m.split_offsets) and len(m.split_offsets) == 2


def test_modes_and_missing_statistics() -> None:
    props = {
        "write.metadata.metrics.column.s": "truncate(2)",
        "write.metadata.metrics.column.id": "none",
        "write.metadata.metrics.column.t": "counts",
    }
    m = parquet_metrics(footer(DATA), SCHEMA, props)
    assert 1 not in m.column_sizes and 1 not in m.value_counts
    assert m.lower_bounds[2] == b"a" and m.upper_bounds[2] == b"hf"
    assert 7 in m.value_counts and 7 not in m.lower_bounds
    # no statistics: no counts and no bounds (the reference drops them all), sizes stay
    m = parquet_metrics(footer(DATA, write_statistics=["s"]), SCHEMA)
    assert set(m.value_counts) == {2} and set(m.lower_bounds) == {2}
    assert {1, 2, 4, 6, 7} == set(m.column_sizes)


def test_float_bounds_skip_nan_and_order_zeros() -> None:
    schema = Schema(NestedField(1, "f", DoubleType()))
    m = parquet_metrics(footer(pa.table({"f": [0.0, -0.0, float("nan")]})), schema)
    assert m.lower_bounds[1] == struct.pack("<d", -0.0)
    assert m.upper_bounds[1] == struct.pack("<d", 0.0)
    m = parquet_metrics(footer(pa.table({"f": [float("nan")] * 2})), schema)
    assert m.value_counts == {1: 2} and not m.lower_bounds
