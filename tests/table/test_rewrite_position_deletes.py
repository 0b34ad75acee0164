"""``rewrite_position_deletes`` on a table upgraded from v2: each data file with position
deletes ends up with exactly one deletion vector holding the union of its deleted positions
(read independently from the old Parquet delete files and DVs with pyarrow/the Puffin reader),
the old files are gone from the snapshot, the rows read are unchanged, v2 tables are refused,
and a concurrent delete against a rewritten file fails the commit."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from row_data import rows

from frazil import manifest as fm
from frazil.catalog import load_catalog
from frazil.exceptions import UnsupportedError, ValidationError
from frazil.manifest.content_file import DataFile, FileFormat, data_files_from_entries
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.maintenance.rewrite_position_deletes import stage_rewrite_position_deletes
from frazil.table.scan.read import read_dv
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


def make(catalog: Any) -> Table:
    t = catalog.create_table(
        "db.t",
        SCHEMA,
        partition_spec=PartitionSpec(PartitionField(4, 1000, parse_transform("identity"), "p")),
        properties={"format-version": "2", "write.delete.mode": "merge-on-read"},
    )
    t.append(rows(0, 60))
    t.append(rows(60, 120))
    t.delete("id < 10")
    t.delete("id >= 50 AND id < 70")  # a second position delete file for some data files
    return t


def live_deletes(t: Table) -> list[DataFile]:
    snap = t.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    out = []
    for row in fm.read_manifest_list(t.io.read(snap.manifest_list)).to_pylist():
        if row["content"] != 1:
            continue
        entries = fm.read_manifest(t.io.read(row["manifest_path"]), row)
        for f in data_files_from_entries(entries, row["partition_spec_id"]):
            if f.extra["status"] != 2:
                out.append(f)
    return out


def deleted_positions(t: Table, files: list[DataFile]) -> dict[str, set[int]]:
    """Positions by data file, read with pyarrow (Parquet) and the Puffin reader (DVs)."""
    out: dict[str, set[int]] = defaultdict(set)
    for f in files:
        if f.file_format == FileFormat.PUFFIN:
            assert f.referenced_data_file is not None
            out[f.referenced_data_file] |= set(read_dv(t.io, f).positions().to_pylist())
        else:
            for r in pq.read_table(f.file_path).to_pylist():
                out[r["file_path"]].add(r["pos"])
    return dict(out)


def read(t: Table) -> list[dict[str, Any]]:
    return t.scan().to_arrow().sort_by("id").to_pylist()


def test_position_deletes_become_one_dv_per_file(catalog: Any) -> None:
    t = make(catalog)
    with pytest.raises(UnsupportedError, match="format version 3"):
        t.rewrite_position_deletes()
    t.transaction().upgrade_table_version(3).commit_transaction()
    t.delete("id = 100")  # v3: a DV (merging that file's older position deletes)
    before_rows = read(t)
    before = live_deletes(t)
    assert any(f.file_format != FileFormat.PUFFIN for f in before)
    expected = deleted_positions(t, before)
    head = t.current_snapshot()
    assert head is not None

    result = t.rewrite_position_deletes()
    after = live_deletes(t)
    assert all(f.file_format == FileFormat.PUFFIN for f in after)
    per_file = defaultdict(list)
    for f in after:
        per_file[f.referenced_data_file].append(f)
    assert all(len(v) == 1 for v in per_file.values())
    assert set(per_file) == set(expected)
    assert deleted_positions(t, after) == expected
    assert read(t) == before_rows
    snap = t.current_snapshot()
    assert snap is not None and snap.summary is not None
    assert snap.summary["operation"] == "replace" and snap.parent_snapshot_id == head.snapshot_id
    assert snap.summary["total-records"] == head.summary["total-records"]  # type: ignore[index]
    assert result.snapshot_id == snap.snapshot_id
    # DVs of files without v2 position deletes stay as they were
    key = lambda f: (f.file_path, f.content_offset)  # noqa: E731
    kept = {key(f) for f in before} & {key(f) for f in after}
    assert result.added_delete_files_count == len(after) - len(kept)
    assert result.rewritten_delete_files_count == len(before) - len(kept)
    # nothing left to do
    assert t.rewrite_position_deletes().snapshot_id is None
    assert read(catalog.load_table("db.t")) == before_rows


def test_concurrent_delete_on_a_rewritten_file_fails(catalog: Any) -> None:
    t = make(catalog)
    t.transaction().upgrade_table_version(3).commit_transaction()
    tx = t.transaction()
    stage_rewrite_position_deletes(tx)
    catalog.load_table("db.t").delete("id = 20")  # a DV for a file the rewrite also covers
    with pytest.raises(ValidationError, match="found new delete file"):
        tx.commit_transaction()
    # nothing the failed rewrite wrote is left in the table, and it reads as before
    t = catalog.load_table("db.t")
    assert [r["id"] for r in read(t)][:3] == [10, 11, 12]
    assert 20 not in {r["id"] for r in read(t)}
