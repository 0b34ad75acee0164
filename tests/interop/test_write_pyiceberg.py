"""PyIceberg reads what frazil appends (one SQLite catalog database shared by both), and
frazil's data files carry the same field ids, partition values and metrics bounds as the files
PyIceberg's own ``append`` writes for the same rows."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from peers import import_peer

from frazil.catalog import load_catalog
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.transforms import parse
from frazil.types import (
    DateType,
    DecimalType,
    DoubleType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
)

import_peer("pyiceberg")

pytestmark = pytest.mark.interop

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "ts", TimestampType()),
    NestedField(3, "d", DateType()),
    NestedField(4, "s", StringType()),
    NestedField(5, "dec", DecimalType(9, 2)),
    NestedField(6, "x", DoubleType()),
    NestedField(7, "st", StructType(NestedField(8, "a", LongType()))),
)
SPECS = {
    "unpartitioned": PartitionSpec(),
    "day_bucket": PartitionSpec(
        PartitionField(2, 1000, parse("day"), "ts_day"),
        PartitionField(1, 1001, parse("bucket[4]"), "id_bucket"),
    ),
    "identity_truncate": PartitionSpec(
        PartitionField(3, 1000, parse("identity"), "d"),
        PartitionField(4, 1001, parse("truncate[2]"), "s_trunc"),
    ),
}


def data(n: int = 300) -> pa.Table:
    base = dt.datetime(1969, 12, 30, 7)
    table = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "ts": pa.array(
                [None if i % 17 == 0 else base + dt.timedelta(minutes=53 * i) for i in range(n)],
                pa.timestamp("us"),
            ),
            "d": pa.array(
                [
                    None if i % 19 == 0 else dt.date(1969, 12, 28) + dt.timedelta(days=i // 40)
                    for i in range(n)
                ],
                pa.date32(),
            ),
            "s": pa.array(
                [
                    None if i % 13 == 0 else f"{'abc'[i % 3]}{i % 7}-long-string-value-{i}"
                    for i in range(n)
                ]
            ),
            "dec": pa.array(
                [None if i % 7 == 0 else decimal.Decimal(i - 50) / 4 for i in range(n)],
                pa.decimal128(9, 2),
            ),
            "x": pa.array([None if i % 9 == 0 else i / 3 - 20 for i in range(n)]),
            "st": pa.array(
                [None if i % 10 == 0 else {"a": i * 2} for i in range(n)],
                pa.struct([("a", pa.int64())]),
            ),
        }
    )
    # PyIceberg wants required columns non-nullable in Arrow (frazil only wants no nulls).
    return table.cast(table.schema.set(0, pa.field("id", pa.int64(), nullable=False)))


def _catalogs(tmp_path: Path) -> tuple[Any, Any]:
    from pyiceberg.catalog.sql import SqlCatalog

    warehouse = tmp_path / "wh"
    warehouse.mkdir()
    uri = f"sqlite:///{tmp_path}/catalog.db"
    fz = load_catalog("shared", type="sql", uri=uri, warehouse=str(warehouse))
    fz.create_namespace("db")
    py = SqlCatalog("shared", uri=uri, warehouse=f"file://{warehouse}")
    return fz, py


def _py_files(py_table: Any) -> dict[Any, Any]:
    """PyIceberg's view of the live data files, keyed by partition values."""
    out: dict[Any, list[Any]] = {}
    for task in py_table.scan().plan_files():
        f = task.file
        out.setdefault(tuple(f.partition), []).append(f)
    return out


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("spec_name", list(SPECS))
def test_pyiceberg_reads_and_agrees(tmp_path: Path, spec_name: str, version: int) -> None:
    fz, py = _catalogs(tmp_path)
    spec = SPECS[spec_name]
    props = {"format-version": str(version)}
    ours = fz.create_table("db.ours", SCHEMA, partition_spec=spec, properties=props)
    fz.create_table("db.theirs", SCHEMA, partition_spec=spec, properties=props)
    rows = data()
    ours.append(rows)
    ours.append(rows.slice(0, 30))

    # PyIceberg reads exactly the rows frazil wrote.
    pt = py.load_table("db.ours")
    got = pt.scan().to_arrow().sort_by([("id", "ascending")])
    want = pa.concat_tables([rows, rows.slice(0, 30)]).sort_by([("id", "ascending")])
    assert repr(got.to_pylist()) == repr(want.to_pylist())
    # and a filtered scan through frazil's metrics and partitions
    filtered = pt.scan(row_filter="id >= 250").to_arrow()
    assert sorted(filtered.column("id").to_pylist()) == list(range(250, 300))

    if version >= 3:
        return  # PyIceberg 0.12 cannot write v3 manifests to compare with
    # PyIceberg's own append of the same rows: same partitions, field ids and bounds.
    py.load_table("db.theirs").append(rows)
    ours_files = _py_files(py.load_table("db.ours"))
    theirs_files = _py_files(py.load_table("db.theirs"))
    assert set(ours_files) == set(theirs_files)
    for key, files in theirs_files.items():
        (theirs_file,) = files
        mine = [f for f in ours_files[key] if f.record_count != 0]
        first = max(mine, key=lambda f: f.record_count)
        assert first.record_count == theirs_file.record_count
        assert first.null_value_counts == theirs_file.null_value_counts
        assert first.value_counts == theirs_file.value_counts
        # PyIceberg 0.12 keeps no bounds for struct fields; frazil keeps them, as Java does.
        assert _top(first.lower_bounds) == theirs_file.lower_bounds
        assert _top(first.upper_bounds) == theirs_file.upper_bounds
        assert (
            first.lower_bounds.get(8) is not None
            or first.null_value_counts[8] == first.record_count
        )
        a = pq.read_schema(first.file_path.removeprefix("file://"))
        b = pq.read_schema(theirs_file.file_path.removeprefix("file://"))
        assert _ids(a) == _ids(b)


def _top(bounds: dict[int, bytes]) -> dict[int, bytes]:
    return {k: v for k, v in bounds.items() if k != 8}


def _ids(schema: pa.Schema) -> list[tuple[str, bytes | None]]:
    out = []

    def walk(f: pa.Field, prefix: str) -> None:
        out.append((prefix + f.name, (f.metadata or {}).get(b"PARQUET:field_id")))
        t = f.type
        if isinstance(t, pa.StructType):
            for i in range(t.num_fields):
                walk(t.field(i), f"{prefix}{f.name}.")

    for f in schema:
        walk(f, "")
    return out
