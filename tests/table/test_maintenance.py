"""Compaction (``rewrite_data_files``): the rows read are unchanged, small files are bin-packed
per partition, deletes are applied and the delete files that applied only to rewritten files are
removed, v3 row lineage is kept, concurrent deletes on the inputs fail the commit, and nothing
written stays when the commit does not land."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from row_data import rows

from frazil import manifest as fm
from frazil.catalog import load_catalog
from frazil.exceptions import CommitFailedError, InvalidArgumentError, ValidationError
from frazil.manifest.content_file import (
    DataFile,
    DataFileContent,
    FileFormat,
    data_files_from_entries,
)
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.maintenance.rewrite_data_files import (
    RewriteDataFilesResult,
    rewrite_data_files,
    stage_rewrite_data_files,
)
from frazil.table.scan.read import FILE_PATH_FIELD_ID, POS_FIELD_ID
from frazil.transforms import parse as parse_transform
from frazil.types import DoubleType, LongType, NestedField, StringType

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "s", StringType()),
    NestedField(3, "x", DoubleType()),
    NestedField(4, "p", LongType()),
)
LINEAGE = ("_row_id", "_last_updated_sequence_number")


@pytest.fixture
def catalog(tmp_path: Path) -> Any:
    cat = load_catalog("w", type="filesystem", warehouse=str(tmp_path))
    cat.create_namespace("db")
    return cat


def make(
    catalog: Any, version: int = 3, partitioned: bool = True, appends: int = 4, **props: str
) -> Table:
    spec = (
        PartitionSpec(PartitionField(4, 1000, parse_transform("identity"), "p"))
        if partitioned
        else PartitionSpec()
    )
    t = catalog.create_table(
        "db.t",
        SCHEMA,
        partition_spec=spec,
        properties={
            "format-version": str(version),
            "write.delete.mode": "merge-on-read",
            **props,
        },
    )
    for i in range(appends):
        t.append(rows(i * 30, (i + 1) * 30))
    return t


def read(t: Table, *extra: str) -> list[dict[str, Any]]:
    return t.scan(selected_fields=("*", *extra)).to_arrow().sort_by("id").to_pylist()


def live(t: Table, content: int | None = None) -> list[DataFile]:
    snap = t.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    out = []
    for row in fm.read_manifest_list(t.io.read(snap.manifest_list)).to_pylist():
        entries = fm.read_manifest(t.io.read(row["manifest_path"]), row)
        for f in data_files_from_entries(entries, row["partition_spec_id"]):
            if f.extra["status"] != 2 and (content is None or f.content == content):
                out.append(f)
    return out


def test_small_files_compacted_per_partition_with_lineage_and_dvs(catalog: Any) -> None:
    t = make(catalog, 3)
    t.delete("id IN (1, 4, 31, 95)")
    before = read(t, *LINEAGE)
    assert len(live(t, DataFileContent.DATA)) == 12  # 4 appends x 3 partitions
    assert live(t, DataFileContent.POSITION_DELETES)
    snapshots = len(t.snapshots())
    result = t.rewrite_data_files()
    assert isinstance(result, RewriteDataFilesResult)
    assert result.rewritten_data_files_count == 12
    assert result.added_data_files_count == 3
    # one DV per file with a deleted row (ids 1 and 4 share a file)
    assert result.removed_delete_files_count == 3
    assert result.snapshot_id == t.current_snapshot().snapshot_id
    assert len(t.snapshots()) == snapshots + 1
    summary = t.current_snapshot().summary
    assert summary["operation"] == "replace"
    assert summary["deleted-data-files"] == "12" and summary["added-data-files"] == "3"
    # same rows, same ids and sequence numbers (v3 lineage copied into the new files)
    assert read(t, *LINEAGE) == before
    data = live(t, DataFileContent.DATA)
    assert sorted(f.partition for f in data) == [(0,), (1,), (2,)]
    assert live(t, DataFileContent.POSITION_DELETES) == []
    schema = pq.read_schema(data[0].file_path)
    assert schema.field("_row_id").metadata[b"PARQUET:field_id"] == b"2147483540"
    assert schema.field("_last_updated_sequence_number").metadata[b"PARQUET:field_id"] == (
        b"2147483539"
    )
    # nothing left to do: no new snapshot
    assert t.rewrite_data_files() == RewriteDataFilesResult()
    assert len(t.snapshots()) == snapshots + 1
    # the table keeps working: new rows get fresh ids past the rewritten ones
    t.append(rows(500, 503))
    ids = [r["_row_id"] for r in read(t, *LINEAGE)]
    assert len(set(ids)) == len(ids)


def test_v2_position_deletes_removed_with_their_files(catalog: Any) -> None:
    t = make(catalog, 2, partitioned=False)
    t.delete("id IN (2, 33)")
    before = read(t)
    assert len(live(t, DataFileContent.POSITION_DELETES)) == 2
    result = rewrite_data_files(t)
    assert result.rewritten_data_files_count == 4 and result.added_data_files_count == 1
    assert result.removed_delete_files_count == 2
    assert read(t) == before
    assert live(t, DataFileContent.POSITION_DELETES) == []


def test_min_input_files(catalog: Any) -> None:
    t = make(catalog, 3, appends=1)  # one file per partition
    snapshots = len(t.snapshots())
    assert t.rewrite_data_files() == RewriteDataFilesResult()
    assert len(t.snapshots()) == snapshots
    t2 = catalog.load_table("db.t")
    t2.append(rows(30, 60))
    # two files per partition: below min_input_files=3, unless the group has enough content
    assert rewrite_data_files(t2, min_input_files=3) == RewriteDataFilesResult()
    with pytest.raises(InvalidArgumentError):
        rewrite_data_files(t2, min_input_files=0)


def test_delete_ratio_rewrites_a_lone_file(catalog: Any) -> None:
    t = make(catalog, 3, partitioned=False, appends=1)
    t.delete("id < 3")  # 10% deleted: not enough alone
    assert t.rewrite_data_files() == RewriteDataFilesResult()
    t.delete("id < 12")  # 40%
    before = read(t, *LINEAGE)
    result = t.rewrite_data_files()
    assert result.rewritten_data_files_count == 1 and result.removed_delete_files_count == 1
    assert read(t, *LINEAGE) == before
    (f,) = live(t)
    assert f.record_count == 18


def test_target_size_splits_and_filter_limits(catalog: Any) -> None:
    t = make(catalog, 3, partitioned=True, appends=6)
    before = read(t, *LINEAGE)
    # only partition p = 1 is compacted
    result = t.rewrite_data_files(row_filter="p = 1")
    assert result.rewritten_data_files_count == 6 and result.added_data_files_count == 1
    by_partition: dict[Any, int] = {}
    for f in live(t):
        by_partition[f.partition] = by_partition.get(f.partition, 0) + 1
    assert by_partition == {(0,): 6, (1,): 1, (2,): 6}
    assert read(t, *LINEAGE) == before
    # a tiny target: every file is "too large", the output rolls into several files
    big = max(f.file_size_in_bytes for f in live(t))
    result = rewrite_data_files(t, target_file_size_bytes=big // 4, row_filter="p = 1")
    assert result.rewritten_data_files_count == 1 and result.added_data_files_count > 1
    assert read(t, *LINEAGE) == before
    with pytest.raises(InvalidArgumentError):
        rewrite_data_files(t, target_file_size_bytes=0)


def test_partition_scoped_position_deletes(catalog: Any, tmp_path: Path) -> None:
    """A v2 position delete file naming several files goes only when all of them are rewritten
    (here it also names a file outside the rewrite, so it stays and still applies)."""
    t = make(catalog, 2, partitioned=True, appends=2)
    files = sorted(live(t), key=lambda f: (f.partition, f.file_path))
    p0 = [f for f in files if f.partition == (0,)]
    p1 = [f for f in files if f.partition == (1,)]

    def delete_file(name: str, paths: list[str], partition: tuple[Any, ...]) -> DataFile:
        arrow = pa.schema(
            [
                pa.field("file_path", pa.string(), False, {"PARQUET:field_id": "2147483546"}),
                pa.field("pos", pa.int64(), False, {"PARQUET:field_id": "2147483545"}),
            ]
        )
        loc = str(tmp_path / name)
        data = pa.table([sorted(paths), [0] * len(paths)], schema=arrow)
        pq.write_table(data, loc)
        lo, hi = min(paths).encode(), max(paths).encode()
        return DataFile(
            loc,
            FileFormat.PARQUET,
            partition,
            len(paths),
            Path(loc).stat().st_size,
            content=DataFileContent.POSITION_DELETES,
            spec_id=0,
            lower_bounds={FILE_PATH_FIELD_ID: lo, POS_FIELD_ID: (0).to_bytes(8, "little")},
            upper_bounds={FILE_PATH_FIELD_ID: hi, POS_FIELD_ID: (0).to_bytes(8, "little")},
        )

    # one naming only p0's files, one naming p1's files and (oddly) one of p0's
    only_p0 = delete_file("d0.parquet", [f.file_path for f in p0], (0,))
    mixed = delete_file("d1.parquet", [p1[0].file_path, p1[1].file_path], (1,))
    with t.transaction() as tx:
        up = tx.update_snapshot().row_delta()
        up.add_delete_file(only_p0)
        up.add_delete_file(mixed)
        up.commit()
    before = read(t)
    assert len(before) == 60 - 4
    result = rewrite_data_files(t, row_filter="p = 0")
    assert result.rewritten_data_files_count == 2 and result.removed_delete_files_count == 1
    assert read(t) == before
    assert [d.file_path for d in live(t, DataFileContent.POSITION_DELETES)] == [mixed.file_path]
    # now p1's files go too, and with them the other delete file
    result = rewrite_data_files(t)
    assert result.removed_delete_files_count == 1
    assert read(t) == before and live(t, DataFileContent.POSITION_DELETES) == []


def test_concurrent_delete_on_an_input_fails_and_cleans_up(catalog: Any, tmp_path: Path) -> None:
    t = make(catalog, 3)
    files_before = {p for p in tmp_path.rglob("*.parquet")}
    tx = t.transaction()
    result = stage_rewrite_data_files(tx)
    assert result.added_data_files_count == 3
    assert len({p for p in tmp_path.rglob("*.parquet")}) == len(files_before) + 3
    catalog.load_table("db.t").delete("id = 7")  # a DV for one of the inputs
    with pytest.raises(ValidationError, match="new delete file"):
        tx.commit_transaction()
    assert {p for p in tmp_path.rglob("*.parquet")} == files_before
    t.refresh()
    assert 7 not in [r["id"] for r in read(t)]
    # a concurrent append does not conflict with a rewrite
    tx = t.transaction()
    stage_rewrite_data_files(tx)
    catalog.load_table("db.t").append(rows(900, 901))
    tx.commit_transaction()
    t.refresh()
    assert [r["id"] for r in read(t)] == [i for i in [*range(120), 900] if i != 7]


def test_failed_commit_leaves_no_files(catalog: Any, tmp_path: Path) -> None:
    t = make(catalog, 3)
    t.transaction().set_properties({"commit.retry.num-retries": "0"}).commit_transaction()
    files_before = {p for p in tmp_path.rglob("*") if p.is_file()}

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise CommitFailedError("nope")

    catalog.commit_table = fail
    with pytest.raises(CommitFailedError):
        t.rewrite_data_files()
    assert {p for p in tmp_path.rglob("*") if p.is_file()} == files_before


def test_empty_table_and_all_rows_deleted(catalog: Any) -> None:
    t = make(catalog, 3, appends=0)
    assert t.rewrite_data_files() == RewriteDataFilesResult()
    t.append(rows(0, 30))
    t.append(rows(30, 60))
    t.delete("p = 1 AND id > 20")  # some of p = 1 stays
    t.delete("p = 1")  # partition p = 1 emptied through DVs? (identity: dropped whole)
    before = read(t, *LINEAGE)
    t.rewrite_data_files()
    assert read(t, *LINEAGE) == before


def test_compacts_a_branch_only(catalog: Any) -> None:
    t = make(catalog, 3)
    main_files = {f.file_path for f in live(t)}
    t.manage_snapshots().create_branch(t.current_snapshot().snapshot_id, "b").commit()
    t.append(rows(200, 230), branch="b")
    on_branch = t.scan().use_ref("b").to_arrow().sort_by("id")
    result = t.rewrite_data_files(branch="b")
    assert result.rewritten_data_files_count == 15  # 4 + 1 appends x 3 partitions
    assert {f.file_path for f in live(t)} == main_files  # main untouched
    assert t.scan().use_ref("b").to_arrow().sort_by("id") == on_branch
    head = t.snapshot_by_name("b")
    assert head is not None and head.summary["operation"] == "replace"
