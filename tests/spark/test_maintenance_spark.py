"""frazil.spark.maintenance: orphan removal and snapshot expiry with listing and deleting on
Spark executors find and delete exactly what the single-process versions do (the oracle for
orphans is the test's own list of planted files; for expiry, that no file is left which no
metadata reaches, and every file the remaining snapshots need is kept)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from frazil.catalog import load_catalog
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.spark import expire_snapshots, remove_orphan_files
from frazil.table import Table
from frazil.table.maintenance.orphan_files import reachable_files
from frazil.transforms import parse
from frazil.types import LongType, NestedField, StringType

pytestmark = [
    pytest.mark.spark,
    # py4j and PySpark's result sockets are closed by the garbage collector
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "s", StringType()),
    NestedField(3, "p", LongType()),
)
DAY_S = 24 * 3600


def _rows(lo: int, hi: int) -> pa.Table:
    ids = list(range(lo, hi))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "s": [f"s{i}" for i in ids],
            "p": pa.array([i % 3 for i in ids], pa.int64()),
        }
    )


def _table(tmp_path: Path, name: str) -> Table:
    cat = load_catalog("w", type="filesystem", warehouse=str(tmp_path / "wh"))
    cat.create_namespace_if_not_exists("db")
    t = cat.create_table(
        f"db.{name}",
        SCHEMA,
        partition_spec=PartitionSpec(PartitionField(3, 1000, parse("identity"), "p")),
        properties={"format-version": "2", "write.delete.mode": "copy-on-write"},
    )
    for i in range(4):
        t.append(_rows(i * 10, (i + 1) * 10))
    t.delete("id < 15")
    return t


def _files(root: str) -> set[str]:
    return {os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs}


def _age(root: str, days: float = 4) -> None:
    then = time.time() - days * DAY_S
    for path in _files(root):
        os.utime(path, (then, then))


def _plant(path: str) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    Path(path).write_bytes(b"orphan")
    then = time.time() - 5 * DAY_S
    os.utime(path, (then, then))
    return path


def test_remove_orphan_files_on_executors(spark: Any, tmp_path: Path) -> None:
    t = _table(tmp_path, "orphans")
    loc = t.location()
    _age(loc)
    planted = {
        _plant(f"{loc}/data/p=1/stray.parquet"),
        _plant(f"{loc}/data/p=9/deeper/x.parquet"),
        _plant(f"{loc}/metadata/stray-m0.avro"),
        _plant(f"{loc}/top-level.bin"),
    }
    _plant(f"{loc}/data/.hidden.crc")
    recent = f"{loc}/data/p=1/recent.parquet"
    Path(recent).write_bytes(b"x")
    rows = t.scan().to_arrow().sort_by("id")

    single = t.remove_orphan_files(dry_run=True)
    assert set(single) == planted
    assert remove_orphan_files(spark, t, dry_run=True) == single
    assert all(os.path.exists(p) for p in planted)
    assert remove_orphan_files(spark, t) == single
    assert not any(os.path.exists(p) for p in planted)
    assert os.path.exists(recent) and os.path.exists(f"{loc}/data/.hidden.crc")
    assert t.scan().to_arrow().sort_by("id") == rows


def test_expire_snapshots_deletes_on_executors(spark: Any, tmp_path: Path) -> None:
    t = _table(tmp_path, "expiry")
    loc = t.location()
    rows = t.scan().to_arrow().sort_by("id")
    before = _files(loc)
    head = t.current_snapshot()
    assert head is not None
    expired = expire_snapshots(spark, t, older_than=int(time.time() * 1000) + 1)
    assert len(expired) == 4 and head.snapshot_id not in expired
    after = _files(loc)
    assert after - before == {f"{loc}/metadata/v7.metadata.json"}  # the expiry's metadata
    assert len(before - after) > 4  # manifest lists, manifests and data files
    # nothing left that no metadata reaches (the single-process expiry's guarantee) ...
    future = int(time.time() * 1000) + DAY_S * 1000
    assert t.remove_orphan_files(older_than=future, dry_run=True) == []
    # ... and everything reachable is there
    assert reachable_files(t.io, t.metadata, t.metadata_location) - {
        f"{loc}/metadata/version-hint.text"
    } <= after | {f"{loc}/metadata/version-hint.text"}
    assert t.scan().to_arrow().sort_by("id") == rows


def _small_files(tmp_path: Path, name: str, version: int) -> Table:
    cat = load_catalog("w", type="filesystem", warehouse=str(tmp_path / "wh"))
    cat.create_namespace_if_not_exists("db")
    t = cat.create_table(
        f"db.{name}",
        SCHEMA,
        partition_spec=PartitionSpec(PartitionField(3, 1000, parse("identity"), "p")),
        properties={"format-version": str(version), "write.delete.mode": "merge-on-read"},
    )
    for i in range(6):
        t.append(_rows(i * 10, (i + 1) * 10))
    t.delete("id IN (0, 7, 14, 21, 28, 35, 42, 49, 56)")  # DVs (v3) / position deletes (v2)
    return t


def _lineage(t: Table, version: int) -> list[dict[str, Any]]:
    extra = ("_row_id", "_last_updated_sequence_number") if version >= 3 else ()
    return t.scan(selected_fields=("*", *extra)).to_arrow().sort_by("id").to_pylist()


@pytest.mark.parametrize("version", [2, 3])
def test_rewrite_data_files_on_executors(spark: Any, tmp_path: Path, version: int) -> None:
    from frazil.spark import rewrite_data_files

    ours = _small_files(tmp_path, f"spark_v{version}", version)
    twin = _small_files(tmp_path, f"single_v{version}", version)
    before = _lineage(ours, version)
    assert _lineage(twin, version) == before  # the same table, written twice
    single = twin.rewrite_data_files()
    result = rewrite_data_files(spark, ours)
    assert single.snapshot_id is not None and result.snapshot_id is not None
    # the same decisions as the single-process compaction on the same table
    assert (
        result.rewritten_data_files_count,
        result.added_data_files_count,
        result.rewritten_bytes_count,
        result.removed_delete_files_count,
    ) == (
        single.rewritten_data_files_count,
        single.added_data_files_count,
        single.rewritten_bytes_count,
        single.removed_delete_files_count,
    )
    ours.refresh()
    head = ours.current_snapshot()
    assert head is not None and head.summary is not None
    assert head.summary["operation"] == "replace"
    assert _lineage(ours, version) == before  # rows and (v3) row lineage kept
    assert len(ours.inspect.data_files()) == len(twin.inspect.data_files()) == 3


def test_rewrite_data_files_partial_progress(spark: Any, tmp_path: Path) -> None:
    from frazil.exceptions import InvalidArgumentError
    from frazil.spark import rewrite_data_files

    t = _small_files(tmp_path, "partial", 3)
    before = _lineage(t, 3)
    head = t.current_snapshot()
    assert head is not None
    with pytest.raises(InvalidArgumentError, match="sort order"):
        rewrite_data_files(spark, t, strategy="sort")
    result = rewrite_data_files(
        spark, t, partial_progress_enabled=True, partial_progress_max_commits=2
    )
    t.refresh()
    new = [s for s in t.snapshots() if s.timestamp_ms >= head.timestamp_ms]
    commits = [s for s in new if (s.summary or {}).get("operation") == "replace"]
    assert len(commits) == 2  # three partition groups in two commits
    assert result.snapshot_id == commits[-1].snapshot_id
    assert result.rewritten_data_files_count == 18
    assert _lineage(t, 3) == before
    assert rewrite_data_files(spark, t).snapshot_id is None  # nothing left to do
