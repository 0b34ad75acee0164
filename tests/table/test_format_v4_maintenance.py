"""This wave's table operations on format v4 tables, whose metadata, manifest lists and
manifests hold paths relative to the table location: each must resolve them, never treat a
reachable file as an orphan, and give the same answer as on the v3 twin of the same table.

The oracle is the v3 twin (same commits, absolute paths), whose results the v3 tests check
against the Java reference.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from frazil.catalog import load_catalog
from frazil.expressions import EqualTo

# a threshold in the future lists every file, so only reachability decides
LATER = dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1)


def _table(tmp: Path, version: str) -> Any:
    cat = load_catalog(
        "c", type="sql", uri=f"sqlite:///{tmp}/c{version}.db", warehouse=f"{tmp}/wh{version}"
    )
    cat.create_namespace("db")
    t = cat.create_table(
        "db.t",
        pa.schema([pa.field("id", pa.int64(), nullable=False), ("s", pa.string())]),
        properties={"format-version": version, "write.delete.mode": "merge-on-read"},
    )
    t.update_spec().add_identity("s").commit()
    for start in (0, 100, 200):
        ids = list(range(start, start + 100))
        t.append(pa.table({"id": ids, "s": [f"v{i % 7}" for i in ids]}))
    t.delete(EqualTo("id", 150))
    return t


@pytest.fixture(params=["3", "4"])
def table(request: Any, tmp_path: Path) -> Any:
    return _table(tmp_path, request.param)


def test_no_reachable_file_is_an_orphan(table: Any) -> None:
    stats = table.compute_statistics()
    table.compute_partition_statistics()
    table.rewrite_manifests()
    orphans = table.remove_orphan_files(older_than=LATER, dry_run=True)
    assert orphans == []
    table.remove_orphan_files(older_than=LATER)
    table.refresh()
    assert table.scan().count() == 299
    # the statistics of the snapshot before the rewrite are still there and readable
    assert table.read_ndv(snapshot_id=stats.snapshot_id) == {1: 299, 2: 7}


def test_planted_orphan_found(table: Any) -> None:
    loc = table.metadata.location.removeprefix("file://")
    planted = Path(loc) / "data" / "planted.parquet"
    planted.write_bytes(b"x")
    orphans = table.remove_orphan_files(older_than=LATER, dry_run=True)
    assert [o.removeprefix("file://") for o in orphans] == [str(planted)]


def test_changelog_and_incremental(table: Any) -> None:
    snaps = [s.snapshot_id for s in table.snapshots()]
    inc = table.incremental_append_scan(snaps[0], snaps[2]).to_arrow()
    assert sorted(inc.column("id").to_pylist()) == list(range(100, 300))
    rows = table.changelog_scan(snaps[0], snaps[2]).to_arrow()
    assert sorted(rows.column("id").to_pylist()) == list(range(100, 300))
    assert set(rows.column("_change_type").to_pylist()) == {"INSERT"}


def test_rewrite_manifests_keeps_rows(table: Any) -> None:
    before = table.scan().to_arrow().sort_by("id")
    table.rewrite_manifests()
    after = table.scan().to_arrow().sort_by("id")
    assert after.equals(before)
    assert pc.sum(pc.equal(after.column("id"), 150)).as_py() == 0
