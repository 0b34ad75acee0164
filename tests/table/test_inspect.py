"""``Table.inspect``: PyIceberg's metadata tables from frazil-written tables.

The oracles: values computed here from what the test wrote (row counts, bounds, partition
counts), and PyIceberg's ``inspect`` on the same metadata (same schemas, same values) for the
tables it supports. The Java reference's tables are compared in
tests/interop/test_inspect_java.py.
"""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from frazil.catalog import load_catalog
from frazil.exceptions import InvalidArgumentError
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.transforms import parse as parse_transform
from frazil.types import (
    DateType,
    DecimalType,
    DoubleType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "category", StringType()),
    NestedField(3, "ts", TimestamptzType()),
    NestedField(4, "price", DecimalType(9, 2)),
    NestedField(5, "score", DoubleType()),
    NestedField(6, "day", DateType()),
    NestedField(7, "loc", StructType(NestedField(8, "lat", DoubleType()))),
)
UTC = dt.timezone.utc


def _rows(ids: range, category: str) -> pa.Table:
    n = len(ids)
    return pa.table(
        {
            "id": pa.array(list(ids), pa.int64()),
            "category": [category] * n,
            "ts": pa.array(
                [dt.datetime(2024, 1, 1, tzinfo=UTC) + dt.timedelta(hours=i) for i in ids],
                pa.timestamp("us", tz="UTC"),
            ),
            "price": pa.array([decimal.Decimal(i) / 4 for i in ids], pa.decimal128(9, 2)),
            "score": pa.array([float("nan") if i % 4 == 0 else i * 0.5 for i in ids]),
            "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in ids]),
            "loc": pa.array([{"lat": i * 0.1} for i in ids]),
        }
    )


def _catalog(tmp_path: Path) -> Any:
    return load_catalog("c", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path))


@pytest.fixture
def table(tmp_path: Path) -> Any:
    catalog = _catalog(tmp_path)
    catalog.create_namespace("db")
    spec = PartitionSpec(PartitionField(2, 1000, parse_transform("identity"), "category"))
    t = catalog.create_table("db.t", SCHEMA, partition_spec=spec)
    t.append(_rows(range(0, 10), "a"))
    t.append(_rows(range(10, 15), "b"))
    t.delete("id < 3")  # rewrites the file of partition a
    return t


def test_files_values_are_what_was_written(table: Any) -> None:
    files = table.inspect.files()
    assert files.num_rows == 2
    rows = {r["partition"]["category"]: r for r in files.to_pylist()}
    a, b = rows["a"], rows["b"]
    assert a["record_count"] == 7 and b["record_count"] == 5
    rm = a["readable_metrics"]
    assert rm["id"]["lower_bound"] == 3 and rm["id"]["upper_bound"] == 9
    assert rm["category"]["lower_bound"] == "a"
    assert rm["ts"]["lower_bound"] == dt.datetime(2024, 1, 1, 3, tzinfo=UTC)
    assert rm["price"]["upper_bound"] == decimal.Decimal("2.25")
    assert rm["score"]["nan_value_count"] == 2  # ids 4 and 8
    assert rm["day"]["upper_bound"] == dt.date(2024, 1, 10)
    assert rm["loc.lat"]["value_count"] == 7  # nested columns by their dotted names (Java's)
    assert rm["id"]["value_count"] == 7 and rm["id"]["null_value_count"] == 0
    assert set(files.column("file_format").to_pylist()) == {"PARQUET"}
    assert table.inspect.data_files().num_rows == 2
    assert table.inspect.delete_files().num_rows == 0


def test_entries_keep_deleted_entries_and_inherit(table: Any) -> None:
    entries = table.inspect.entries()
    status = entries.column("status").to_pylist()
    # b's file (its manifest kept), a's rewrite added; a's old file deleted
    assert sorted(status) == [1, 1, 2]
    current = table.current_snapshot()
    added = [r for r in entries.to_pylist() if r["status"] == 1]
    assert added[0]["snapshot_id"] == current.snapshot_id
    assert added[0]["sequence_number"] == current.sequence_number


def test_snapshot_id_time_travel(table: Any) -> None:
    first = table.snapshots()[0].snapshot_id
    assert table.inspect.files(snapshot_id=first).num_rows == 1
    assert table.inspect.files(snapshot_id=first).column("record_count").to_pylist() == [10]
    assert table.inspect.manifests(snapshot_id=first).num_rows == 1
    assert table.inspect.partitions(snapshot_id=first).num_rows == 1
    with pytest.raises(InvalidArgumentError, match="Cannot find snapshot"):
        table.inspect.files(snapshot_id=12345)


def test_partitions_counts_and_last_update(table: Any) -> None:
    parts = {r["partition"]["category"]: r for r in table.inspect.partitions().to_pylist()}
    snaps = table.snapshots()
    assert parts["a"]["record_count"] == 7 and parts["a"]["file_count"] == 1
    assert parts["b"]["record_count"] == 5
    assert parts["a"]["last_updated_snapshot_id"] == snaps[2].snapshot_id
    assert parts["b"]["last_updated_snapshot_id"] == snaps[1].snapshot_id
    assert parts["b"]["last_updated_at"] == dt.datetime.fromtimestamp(
        snaps[1].timestamp_ms / 1000, UTC
    ).replace(tzinfo=None)
    filtered = table.inspect.partitions(row_filter="category = 'b'")
    assert filtered.column("partition").to_pylist() == [{"category": "b"}]


def test_history_refs_snapshots_metadata_log(table: Any) -> None:
    snaps = table.inspect.snapshots()
    assert snaps.column("operation").to_pylist() == ["append", "append", "overwrite"]
    assert table.inspect.history().column("is_current_ancestor").to_pylist() == [True] * 3
    refs = table.inspect.refs().to_pylist()
    assert [(r["name"], r["type"]) for r in refs] == [("main", "BRANCH")]
    log = table.inspect.metadata_log_entries()
    assert log.column("file").to_pylist()[-1] == table.metadata_location
    assert table.inspect.all_manifests().num_rows >= 3
    assert table.inspect.all_files().num_rows == 3  # both versions of a's file, and b's


def test_empty_table(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    catalog.create_namespace("db")
    t = catalog.create_table("db.e", SCHEMA)
    for name in ("snapshots", "history", "manifests", "all_manifests", "files", "entries"):
        assert getattr(t.inspect, name)().num_rows == 0, name
    assert t.inspect.position_deletes().num_rows == 0
    with pytest.raises(InvalidArgumentError):
        t.inspect.partitions()


@pytest.mark.parametrize(
    "name",
    [
        "snapshots",
        "history",
        "refs",
        "metadata_log_entries",
        "manifests",
        "all_manifests",
        "files",
        "data_files",
        "all_files",
        "entries",
        "partitions",
    ],
)
def test_equals_pyiceberg(table: Any, name: str) -> None:
    pytest.importorskip("pyiceberg")
    from pyiceberg.table import StaticTable

    theirs = getattr(StaticTable.from_metadata(table.metadata_location).inspect, name)()
    ours = getattr(table.inspect, name)()
    if name == "all_files":  # PyIceberg's order is its set of manifests'
        ours = ours.sort_by("file_path")
        theirs = theirs.sort_by("file_path")
    if "readable_metrics" in ours.column_names:
        # PyIceberg lists top-level columns only ("loc" with null bounds), frazil (as Java)
        # the primitive leaves ("loc.lat"); the others are equal.
        keep = [c for c in ours.schema.field("readable_metrics").type.names if c != "loc.lat"]
        assert theirs.schema.field("readable_metrics").type.names == [*keep, "loc"]
        rm_ours = ours.column("readable_metrics").combine_chunks()
        rm_theirs = theirs.column("readable_metrics").combine_chunks()
        for c in keep:
            assert rm_ours.field(c).to_pylist() == rm_theirs.field(c).to_pylist(), c
        ours = ours.drop_columns(["readable_metrics"])
        theirs = theirs.drop_columns(["readable_metrics"])
    assert ours.schema == theirs.schema
    assert ours.to_pylist() == theirs.to_pylist()
