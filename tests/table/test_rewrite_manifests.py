"""``rewrite_manifests``: the entries (snapshot ids, sequence numbers, v3 first row ids) and the
rows read are unchanged, manifests come out clustered by partition and sized by the target,
one ``replace`` snapshot with the totals kept, a concurrent replacement of the manifests fails
the commit, and there is nothing to do for a single small manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from row_data import rows

from frazil import manifest as fm
from frazil.catalog import load_catalog
from frazil.exceptions import ValidationError
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.maintenance.rewrite_manifests import stage_rewrite_manifests
from frazil.transforms import parse as parse_transform
from frazil.types import DoubleType, LongType, NestedField, StringType

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "s", StringType()),
    NestedField(3, "x", DoubleType()),
    NestedField(4, "p", LongType()),
)


@pytest.fixture
def catalog(tmp_path: Path) -> Any:
    cat = load_catalog("w", type="filesystem", warehouse=str(tmp_path))
    cat.create_namespace("db")
    return cat


def make(catalog: Any, version: int, appends: int = 8) -> Table:
    t = catalog.create_table(
        "db.t",
        SCHEMA,
        partition_spec=PartitionSpec(PartitionField(4, 1000, parse_transform("identity"), "p")),
        properties={"format-version": str(version), "write.delete.mode": "merge-on-read"},
    )
    for i in range(appends):
        t.append(rows(i * 30, (i + 1) * 30))  # three partitions per append
    t.delete("id < 20")
    return t


def entries(t: Table) -> dict[tuple[str, int | None], tuple[Any, ...]]:
    """Live entries by (file, DV offset): snapshot id, sequence numbers, first row id, from
    the manifests directly."""
    snap = t.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    out = {}
    for row in fm.read_manifest_list(t.io.read(snap.manifest_list)).to_pylist():
        for e in fm.read_manifest(t.io.read(row["manifest_path"]), row).to_pylist():
            if e["status"] == 2:
                continue
            f = e["data_file"]
            out[(f["file_path"], f.get("content_offset"))] = (
                e["snapshot_id"],
                e["sequence_number"],
                e["file_sequence_number"],
                f.get("first_row_id"),
                row["content"],
            )
    return out


def manifest_rows(t: Table) -> list[dict[str, Any]]:
    snap = t.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    return fm.read_manifest_list(t.io.read(snap.manifest_list)).to_pylist()


def read(t: Table) -> list[dict[str, Any]]:
    return t.scan(selected_fields=("*",)).to_arrow().sort_by("id").to_pylist()


@pytest.mark.parametrize("version", [1, 2, 3])
def test_entries_and_rows_are_kept(catalog: Any, version: int) -> None:
    t = make(catalog, version)
    before_entries, before_rows = entries(t), read(t)
    before_manifests = manifest_rows(t)
    head = t.current_snapshot()
    assert head is not None
    data_manifests = [m for m in before_manifests if m["content"] == 0]
    assert len(data_manifests) > 3
    total = sum(m["manifest_length"] for m in data_manifests)
    result = t.rewrite_manifests(target_size_bytes=total // 2 + 1)
    after_manifests = manifest_rows(t)
    snap = t.current_snapshot()
    assert snap is not None and snap.snapshot_id == result.snapshot_id
    assert snap.summary is not None and snap.summary["operation"] == "replace"
    assert snap.parent_snapshot_id == head.snapshot_id
    for key in ("total-records", "total-data-files", "total-delete-files"):
        assert snap.summary.get(key) == (head.summary or {}).get(key)
    # the lone delete manifest (v2, v3) is kept as it is
    delete_manifests = [m for m in before_manifests if m["content"] == 1]
    assert len(delete_manifests) == (0 if version == 1 else 1)
    assert set(result.rewritten_manifests) == {m["manifest_path"] for m in data_manifests}
    assert len([m for m in after_manifests if m["content"] == 0]) == 2
    assert sorted(m["manifest_path"] for m in after_manifests) == sorted(
        result.added_manifests + [m["manifest_path"] for m in delete_manifests]
    )
    added = [m for m in after_manifests if m["content"] == 0]
    assert all(m["added_snapshot_id"] == snap.snapshot_id for m in added)
    assert all(m["added_files_count"] == 0 for m in added)
    assert entries(t) == before_entries
    assert read(t) == before_rows
    # clustered: partition p of the first data manifest is below that of the second
    data = [m for m in after_manifests if m["content"] == 0]
    hi0 = data[0]["partitions"][0]["upper_bound"]
    lo1 = data[1]["partitions"][0]["lower_bound"]
    assert int.from_bytes(hi0, "little") <= int.from_bytes(lo1, "little")
    if version >= 2:
        assert snap.sequence_number == head.sequence_number + 1
    # a reload sees the same
    fresh = catalog.load_table("db.t")
    assert read(fresh) == before_rows and entries(fresh) == before_entries


def test_nothing_to_do_and_selection(catalog: Any) -> None:
    t = make(catalog, 2, appends=1)
    t = catalog.load_table("db.t")
    head = t.current_snapshot()
    # one data manifest and one delete manifest, each alone in its group: nothing to do
    result = t.rewrite_manifests()
    assert result.rewritten_manifests == [] and result.snapshot_id is None
    assert t.current_snapshot() == head
    t.append(rows(100, 110))
    t.append(rows(110, 120))
    n = len(manifest_rows(t))
    result = t.rewrite_manifests(rewrite_if=lambda m: m["content"] == 0)
    after = manifest_rows(t)
    assert len(result.rewritten_manifests) == 3 and len(result.added_manifests) == 1
    assert len(after) == n - 2
    assert t.rewrite_manifests(spec_id=7).snapshot_id is None


def test_concurrent_replacement_fails(catalog: Any) -> None:
    t = make(catalog, 2)
    other = catalog.load_table("db.t")
    tx = t.transaction()
    stage_rewrite_manifests(tx)
    other.rewrite_manifests()  # replaces the same manifests first
    with pytest.raises(ValidationError, match="no longer in branch"):
        tx.commit_transaction()
    # a concurrent append is kept
    t = catalog.load_table("db.t")
    tx = t.transaction()
    stage_rewrite_manifests(tx)
    catalog.load_table("db.t").append(rows(500, 510))
    tx.commit_transaction()
    t = catalog.load_table("db.t")
    assert [r["id"] for r in read(t)][-10:] == list(range(500, 510))
