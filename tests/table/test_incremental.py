"""Incremental append scans on frazil-written tables: the rows each append added (known from
what the test wrote), ranges checked as the Java reference checks them, an empty and a v1
table, filters, projections, counts and argument forms (tests/interop/test_incremental_java.py
compares with the Java reference and PyIceberg)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from frazil.catalog import load_catalog
from frazil.exceptions import InvalidArgumentError, UnsupportedError, ValidationError
from frazil.table.scan.incremental import IncrementalAppendScan


def _rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    cats = pa.array([f"c{i % 3}" for i in ids], pa.string())
    return pa.table({"id": pa.array(ids, pa.int64()), "cat": cats})


@pytest.fixture
def table(tmp_path: Path):
    cat = load_catalog("inc", warehouse=str(tmp_path))
    cat.create_namespace("db")
    t = cat.create_table("db.t", _rows(0, 0).schema)
    t.append(_rows(0, 10))  # s0
    t.append(_rows(10, 10))  # s1
    t.delete("id < 3")  # s2: overwrite or delete
    t.append(_rows(20, 5))  # s3
    t.overwrite(_rows(100, 4), "id >= 20")  # s4: overwrite (adds 100..103, not an append)
    t.append(_rows(30, 5))  # s5
    return t


def _ids(scan: IncrementalAppendScan) -> list[int]:
    return sorted(scan.to_arrow()["id"].to_pylist())


def test_ranges(table) -> None:
    s = [x.snapshot_id for x in table.snapshots()]
    ops = [x.operation for x in table.snapshots()]
    assert ops[0::5] == ["append", "append"] and ops[4] == "overwrite"
    assert _ids(table.incremental_append_scan()) == [*range(25), *range(30, 35)]
    assert _ids(table.incremental_append_scan(s[0])) == [*range(10, 25), *range(30, 35)]
    assert _ids(table.incremental_append_scan(s[1], s[3])) == list(range(20, 25))
    inclusive = table.incremental_append_scan(from_snapshot_id_inclusive=s[1], to_snapshot_id=s[3])
    assert _ids(inclusive) == list(range(10, 25))
    assert _ids(table.incremental_append_scan(s[3], s[4])) == []  # the overwrite is no append
    assert _ids(table.incremental_append_scan(to_snapshot_id_inclusive=s[0])) == list(range(10))
    assert table.incremental_append_scan(s[0]).count() == 20
    # Java's checks: an exclusive start must be a parent of an ancestor of the end
    with pytest.raises(ValidationError, match="not a parent ancestor"):
        table.incremental_append_scan(s[3], s[3]).plan_files_arrow()
    with pytest.raises(ValidationError, match="not a parent ancestor"):
        table.incremental_append_scan(s[4], s[1]).to_arrow()
    with pytest.raises(ValidationError, match="not an ancestor"):
        table.incremental_append_scan(from_snapshot_id_inclusive=s[4], to_snapshot_id=s[1]).count()
    with pytest.raises(ValidationError, match="not a snapshot"):
        table.incremental_append_scan(to_snapshot_id=12345).to_arrow()
    with pytest.raises(InvalidArgumentError):
        table.incremental_append_scan(s[0], from_snapshot_id_exclusive=s[1])
    with pytest.raises(UnsupportedError):
        table.incremental_append_scan().as_of_timestamp(0)


def test_builders_filter_and_select(table) -> None:
    s = [x.snapshot_id for x in table.snapshots()]
    scan = (
        table.incremental_append_scan()
        .from_snapshot_id_exclusive(s[0])
        .to_snapshot_id_inclusive(s[3])
        .filter("cat = 'c1'")
        .select("id")
    )
    out = scan.to_arrow()
    assert out.column_names == ["id"]
    assert sorted(out["id"].to_pylist()) == [i for i in range(10, 25) if i % 3 == 1]
    tasks = list(scan.plan_files())
    assert {t.file.extra["snapshot_id"] for t in tasks} <= {s[1], s[3]}
    assert all(not t.delete_files for t in tasks)
    plan = scan.plan_files_arrow()
    assert set(plan.tasks.column("status").to_pylist()) == {1}
    assert sorted(scan.to_batches().read_all()["id"].to_pylist()) == sorted(out["id"].to_pylist())


def test_empty_table_and_v1(tmp_path: Path) -> None:
    cat = load_catalog("inc", warehouse=str(tmp_path))
    cat.create_namespace("db")
    t = cat.create_table("db.v1", _rows(0, 0).schema, properties={"format-version": "1"})
    assert _ids(t.incremental_append_scan()) == []
    with pytest.raises(ValidationError):
        t.incremental_append_scan(1).to_arrow()
    t.append(_rows(0, 3))
    t.append(_rows(3, 3))
    first = t.snapshots()[0].snapshot_id
    assert _ids(t.incremental_append_scan(first)) == [3, 4, 5]
