"""``changelog_scan``: per change ordinal, the inserted rows minus the deleted ones are exactly
what the snapshot added to the table and the reverse what it removed (computed from plain
scans of consecutive snapshots), replace snapshots contribute nothing, ranges are exclusive of
the start, and ranges with delete files or a start that is no ancestor are refused."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from row_data import rows

from frazil.catalog import load_catalog
from frazil.exceptions import UnsupportedError, ValidationError
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.table import Table
from frazil.transforms import parse as parse_transform
from frazil.types import DoubleType, LongType, NestedField, StringType

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "s", StringType()),
    NestedField(3, "x", DoubleType()),
    NestedField(4, "p", LongType()),
)
COLS = ("id", "s", "x", "p")


@pytest.fixture
def catalog(tmp_path: Path) -> Any:
    cat = load_catalog("w", type="filesystem", warehouse=str(tmp_path))
    cat.create_namespace("db")
    return cat


def make(catalog: Any, version: int = 2, mode: str = "copy-on-write") -> Table:
    return catalog.create_table(
        "db.t",
        SCHEMA,
        partition_spec=PartitionSpec(PartitionField(4, 1000, parse_transform("identity"), "p")),
        properties={"format-version": str(version), "write.delete.mode": mode},
    )


def rows_of(t: Table, snapshot_id: int | None) -> Counter[tuple[Any, ...]]:
    if snapshot_id is None:
        return Counter()
    got = t.scan(snapshot_id=snapshot_id).to_arrow().select(list(COLS)).to_pylist()
    return Counter(tuple(r[c] for c in COLS) for r in got)


def changes(t: Table, start: int | None = None, end: int | None = None) -> list[dict[str, Any]]:
    return t.changelog_scan(start, end).to_arrow().to_pylist()


@pytest.mark.parametrize("version", [1, 2, 3])
def test_net_changes_equal_snapshot_differences(catalog: Any, version: int) -> None:
    t = make(catalog, version)
    t.append(rows(0, 30))
    t.append(rows(30, 60))
    t.delete("id < 10")  # copy-on-write: files rewritten
    t.overwrite(rows(100, 110), "p = 1")
    t.rewrite_data_files(min_input_files=1)  # replace: no change
    t.append(rows(200, 205))
    snaps = [s for s in t.snapshots()]
    changed = [s for s in snaps if (s.summary or {}).get("operation") != "replace"]
    assert len(changed) == 5 and len(snaps) == 6

    got = changes(t)
    assert {r["_change_ordinal"] for r in got} == set(range(5))
    for ordinal, snap in enumerate(changed):
        mine = [r for r in got if r["_change_ordinal"] == ordinal]
        assert {r["_commit_snapshot_id"] for r in mine} == {snap.snapshot_id}
        ins = Counter(tuple(r[c] for c in COLS) for r in mine if r["_change_type"] == "INSERT")
        dels = Counter(tuple(r[c] for c in COLS) for r in mine if r["_change_type"] == "DELETE")
        before, after = rows_of(t, snap.parent_snapshot_id), rows_of(t, snap.snapshot_id)
        assert ins - dels == after - before
        assert dels - ins == before - after
    # and across the whole range the net effect is the table
    ins = Counter(tuple(r[c] for c in COLS) for r in got if r["_change_type"] == "INSERT")
    dels = Counter(tuple(r[c] for c in COLS) for r in got if r["_change_type"] == "DELETE")
    assert ins - dels == rows_of(t, snaps[-1].snapshot_id)

    # a range: after the second snapshot up to the fourth, ordinals from 0 again
    part = changes(t, changed[1].snapshot_id, changed[3].snapshot_id)
    assert {r["_commit_snapshot_id"] for r in part} == {
        changed[2].snapshot_id,
        changed[3].snapshot_id,
    }
    assert {r["_change_ordinal"] for r in part} == {0, 1}
    assert changes(t, snaps[-1].snapshot_id) == []
    scan = t.changelog_scan()
    planned = [(task.change_ordinal, task.operation) for task in scan.plan_files()]
    assert planned == sorted(planned, key=lambda p: (p[0], p[1] != "INSERT"))
    assert planned[:3] == [(0, "INSERT")] * 3  # one file per partition


def test_refusals(catalog: Any) -> None:
    t = make(catalog, 2, mode="merge-on-read")
    assert changes(t) == []  # no snapshot yet
    assert t.changelog_scan().to_arrow().column_names == [
        *COLS,
        *("_change_type", "_change_ordinal", "_commit_snapshot_id"),
    ]
    t.append(rows(0, 30))
    first = t.current_snapshot()
    assert first is not None
    t.append(rows(30, 60))
    second = t.current_snapshot()
    assert second is not None
    with pytest.raises(ValidationError, match="not a parent ancestor"):
        changes(t, second.snapshot_id, first.snapshot_id)
    with pytest.raises(ValidationError, match="cannot find"):
        changes(t, 12345)
    t.delete("id < 3")  # a deletion vector / position delete file
    with pytest.raises(UnsupportedError, match="delete files are currently not supported"):
        changes(t)
    # before the delete it is fine
    assert len(changes(t, None, second.snapshot_id)) == 60


def test_row_filter_and_selected_fields(catalog: Any) -> None:
    t = make(catalog, 2)
    t.append(rows(0, 30))
    t.delete("id < 10")
    t.append(rows(30, 40))
    every = changes(t)
    got = t.changelog_scan(row_filter="p = 1 AND id >= 5", selected_fields=("id",)).to_arrow()
    assert got.column_names == ["id", "_change_type", "_change_ordinal", "_commit_snapshot_id"]
    expected = sorted(
        (r["id"], r["_change_type"], r["_change_ordinal"])
        for r in every
        if r["p"] == 1 and r["id"] >= 5
    )
    assert (
        expected
        and sorted((r["id"], r["_change_type"], r["_change_ordinal"]) for r in got.to_pylist())
        == expected
    )
    with pytest.raises(ValidationError, match="no such columns"):
        t.changelog_scan(selected_fields=("nope",)).to_arrow()
