"""The columnar plan: ``plan_files()`` task views, ``plan_files_arrow()`` and ``count()``.

The oracle for the views is the plain objects built from the same planned Arrow entries by
:func:`frazil.manifest.content_file.data_files_from_entries` (the conversion the views replaced):
each
view must equal, print, pickle and serialize as its plain object. The Arrow plan is checked
against the views, and ``count()`` against the rows read.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from frazil.catalog import load_catalog
from frazil.io.local import LocalFileIO
from frazil.manifest.content_file import DataFile, data_files_from_entries
from frazil.partitioning import PartitionField, PartitionSpec, parse_transform
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.scan import plan as planning
from frazil.table.scan.arrow_plan import ScanPlan
from frazil.table.scan.tasks import FileScanTask, PlannedDataFile, PlannedFileScanTask
from frazil.types import LongType, NestedField, StringType

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "s", StringType()),
    NestedField(3, "p", LongType()),
)


def rows(ids: list[int], p: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "s": pa.array([f"s{i}" for i in ids]),
            "p": pa.array([p] * len(ids), pa.int64()),
        }
    )


@pytest.fixture
def table(tmp_path: Path) -> Table:
    """Five appends (five data manifests) over two specs, with position deletes."""
    cat = load_catalog("w", type="filesystem", warehouse=str(tmp_path))
    cat.create_namespace("db")
    t = cat.create_table(
        "db.t",
        SCHEMA,
        partition_spec=PartitionSpec(PartitionField(3, 1000, parse_transform("identity"), "p")),
        properties={
            "format-version": "2",
            "write.delete.mode": "merge-on-read",
            "commit.manifest-merge.enabled": "false",
        },
    )
    t.append(rows(list(range(0, 10)), 0))
    t.append(rows(list(range(10, 20)), 1))
    t.append(rows(list(range(20, 30)), 2))
    t.update_spec().add_field("s", parse_transform("truncate[1]"), "s_trunc").commit()
    t = cat.load_table("db.t")
    t.append(rows(list(range(30, 40)), 3))
    t.append(rows(list(range(40, 50)), 4))
    t.delete("id = 3 OR id = 45")
    return cat.load_table("db.t")


def plain_tasks(t: Table, row_filter: str = "true", stats: bool = True) -> list[FileScanTask]:
    """The oracle: plain objects from the planned entries, as before the views."""
    scan = t.scan(row_filter=row_filter)
    planned = planning.plan_files(
        t.io,
        t.metadata,
        scan.snapshot(),
        scan._bound_filter(),
        schema=scan.table_schema(),
        include_column_stats=stats,
    )
    deletes = planned.delete_files
    specs = t.metadata.specs()
    out = []
    for g in planned.data:
        files = data_files_from_entries(g.entries, g.spec_id)
        for f, r, ds in zip(files, g.residuals.to_pylist(), g.deletes.to_pylist(), strict=True):
            out.append(
                FileScanTask(
                    f,
                    [deletes[k] for k in ds],
                    planned.residuals[r],
                    planned.schema,
                    specs[g.spec_id],
                )
            )
    return out


@pytest.mark.parametrize("row_filter", ["true", "id >= 25", "p = 1 OR id = 45"])
def test_views_behave_like_the_plain_objects(table: Table, row_filter: str) -> None:
    views = list(table.scan(row_filter=row_filter).plan_files())
    plain = plain_tasks(table, row_filter)
    assert len(views) == len(plain) > 0
    assert any(v.delete_files for v in views) or row_filter == "id >= 25"
    for v, p in zip(views, plain, strict=True):
        assert isinstance(v, PlannedFileScanTask) and isinstance(v, FileScanTask)
        assert isinstance(v.file, PlannedDataFile) and isinstance(v.file, DataFile)
        assert v == p and p == v
        assert v.file == p.file and p.file == v.file
        assert repr(v) == repr(p)
        assert repr(v.file) == repr(p.file)
        assert v.to_json() == p.to_json()
        assert v.file.extra == p.file.extra
        assert v.partition == p.partition and v.spec_id == p.spec_id
        assert (v.file.file_path, v.file.record_count) == (p.file.file_path, p.file.record_count)
        back = pickle.loads(pickle.dumps(v))
        assert type(back) is FileScanTask and back == p and back.file.extra == p.file.extra
        assert type(pickle.loads(pickle.dumps(v.file))) is DataFile
        assert FileScanTask.from_json(v.to_json()) == FileScanTask.from_json(p.to_json())


def test_views_replace_and_copy_as_plain_objects(table: Table) -> None:
    import copy
    import dataclasses

    task = next(iter(table.scan().plan_files()))
    moved = dataclasses.replace(task.file, file_path="elsewhere.parquet")
    assert type(moved) is DataFile and moved.file_path == "elsewhere.parquet"
    assert dataclasses.replace(moved, file_path=task.file.file_path) == task.file
    split = dataclasses.replace(task, start=4, length=10)
    assert type(split) is FileScanTask and (split.start, split.length) == (4, 10)
    assert split.file == task.file and split.delete_files == task.delete_files
    assert type(copy.copy(task)) is FileScanTask and copy.copy(task) == task
    assert type(copy.deepcopy(task.file)) is DataFile and copy.deepcopy(task.file) == task.file


def test_views_are_read_only(table: Table) -> None:
    task = next(iter(table.scan().plan_files()))
    with pytest.raises(AttributeError):
        task.start = 5  # type: ignore[misc]  # a property without a setter
    with pytest.raises(AttributeError):
        task.file.file_path = "elsewhere"  # type: ignore[misc]


def test_column_stats_decoded_on_access_or_as_asked(table: Table) -> None:
    scan = table.scan()
    with_stats = {t.file.file_path: t.file for t in scan.include_column_stats(True).plan_files()}
    on_access = {t.file.file_path: t.file for t in scan.plan_files()}
    without = {t.file.file_path: t.file for t in scan.include_column_stats(False).plan_files()}
    assert with_stats.keys() == on_access.keys() == without.keys()
    for path, f in with_stats.items():
        assert f.lower_bounds and f.value_counts
        assert on_access[path].lower_bounds == f.lower_bounds
        assert on_access[path].upper_bounds == f.upper_bounds
        assert on_access[path].null_value_counts == f.null_value_counts
        assert on_access[path] == f
        assert without[path].lower_bounds is None and without[path].value_counts is None


class CountingIO(LocalFileIO):
    def __init__(self) -> None:
        super().__init__()
        self.reads: list[str] = []

    def read(self, location: str) -> bytes:
        self.reads.append(location)
        return super().read(location)


def test_plan_files_streams_runs_of_manifests(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(planning, "PLAN_RUN_MANIFESTS", 1)
    monkeypatch.setattr(planning, "PLAN_RUN_BYTES", 0)
    io = CountingIO()
    scan = table.scan()
    scan.io = io
    manifests = [
        m
        for m in planning.read_manifest_list(
            table.io.read(table.metadata.resolve(scan.snapshot().manifest_list))  # type: ignore[union-attr,arg-type]
        ).to_pylist()
        if m["content"] == 0
    ]
    assert len(manifests) == 5
    it = iter(scan.plan_files())
    first = next(it)
    names = {m["manifest_path"].rsplit("/", 1)[-1] for m in manifests}
    read_data_manifests = [p for p in io.reads if p.rsplit("/", 1)[-1] in names]
    # the run being iterated, the one planned meanwhile and the one read ahead, not all five
    assert 1 <= len(read_data_manifests) <= 3
    rest = list(it)
    assert [first, *rest] == plain_tasks(table)
    # reading streams the same way: the first batch comes before the last manifest is read
    io.reads.clear()
    reader = scan.to_batches()
    batch = reader.read_next_batch()
    assert batch.num_rows > 0
    assert 1 <= len([p for p in io.reads if p.rsplit("/", 1)[-1] in names]) <= 3
    assert sum(b.num_rows for b in reader) + batch.num_rows == scan.count()


def test_runs_hold_enough_manifests_and_bytes() -> None:
    """A run closes once it has both the manifests and the bytes asked for: small manifests
    (one per commit) share one run, large ones keep runs of the count."""
    rows = list(range(10))
    assert planning._runs(rows, [5] * 10, 4, 0) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert planning._runs(rows, [5] * 10, 4, 1000) == [rows]
    assert planning._runs(rows, [5] * 10, 2, 15) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    big = [100] * 10
    assert planning._runs(rows, big, 4, 150) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert planning._runs([], [], 4, 150) == []


def test_small_manifests_plan_in_one_run(table: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default runs: this table's five small data manifests are read and planned in one
    native call, and the plan is the same as in runs of one."""
    calls = []
    real = planning._read_run

    def counting(io: Any, paths: Any) -> Any:
        calls.append(len(paths))
        return real(io, paths)

    monkeypatch.setattr(planning, "_read_run", counting)
    tasks = list(table.scan().plan_files())
    assert calls == [5]
    monkeypatch.setattr(planning, "PLAN_RUN_MANIFESTS", 1)
    monkeypatch.setattr(planning, "PLAN_RUN_BYTES", 0)
    calls.clear()
    assert list(table.scan().plan_files()) == tasks
    assert calls == [1] * 5


def test_plan_files_arrow(table: Table) -> None:
    scan = table.scan(row_filter="p = 1 OR id >= 30")
    plan = scan.plan_files_arrow()
    views = list(scan.plan_files())
    assert isinstance(plan, ScanPlan) and len(plan) == len(views) > 0
    t = plan.tasks
    assert t.column("file_path").to_pylist() == [v.file.file_path for v in views]
    assert t.column("record_count").to_pylist() == [v.file.record_count for v in views]
    assert t.column("spec_id").to_pylist() == [v.spec_id for v in views]
    assert t.column("sequence_number").to_pylist() == [
        v.file.extra["sequence_number"] for v in views
    ]
    # partitions in the table's partition type: s_trunc is null for files of the first spec
    parts = t.column("partition").to_pylist()
    for part, v in zip(parts, views, strict=True):
        if v.spec_id == 0:
            assert part == {"p": v.partition[0], "s_trunc": None}
        else:
            assert part == {"p": v.partition[0], "s_trunc": v.partition[1]}
    deletes = plan.delete_files.column("file_path").to_pylist()
    refs = t.column("delete_file_references").to_pylist()
    assert [[deletes[k] for k in r] for r in refs] == [
        [d.file_path for d in v.delete_files] for v in views
    ]
    assert any(refs)
    assert [plan.residuals[0].__class__] and len(plan.residuals) >= 1
    assert "lower_bounds" not in t.column_names
    assert "lower_bounds" in scan.include_column_stats(True).plan_files_arrow().tasks.column_names
    # rows back into plain tasks (what a Spark executor does), and pickled as Arrow
    assert plan.file_scan_tasks() == plain_tasks(table, "p = 1 OR id >= 30", stats=False)
    with_stats = scan.include_column_stats(True).plan_files_arrow()
    assert with_stats.file_scan_tasks() == plain_tasks(table, "p = 1 OR id >= 30")
    again = pickle.loads(pickle.dumps(plan))
    assert again.tasks.equals(plan.tasks) and again.file_scan_tasks() == plan.file_scan_tasks()


@pytest.mark.parametrize("row_filter", ["true", "id >= 25", "p = 1 OR id = 45", "s = 's7'"])
def test_count_matches_the_rows_read(table: Table, row_filter: str) -> None:
    scan = table.scan(row_filter=row_filter)
    assert scan.count() == scan.to_arrow().num_rows
    assert table.scan(row_filter=row_filter, limit=3).count() == min(3, scan.to_arrow().num_rows)


def test_empty_table_plans_nothing(tmp_path: Path) -> None:
    cat = load_catalog("w", type="filesystem", warehouse=str(tmp_path))
    cat.create_namespace("db")
    t = cat.create_table("db.e", SCHEMA)
    assert list(t.scan().plan_files()) == []
    plan = t.scan().plan_files_arrow()
    assert len(plan) == 0 and plan.file_scan_tasks() == []
    assert t.scan().count() == 0


def test_a_missing_manifest_list_or_manifest_is_a_named_error(table: Table) -> None:
    import os

    from frazil.exceptions import FileMissingError

    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.manifest_list is not None
    manifests = planning.read_manifest_list(table.io.read(snapshot.manifest_list))
    victim = manifests.column("manifest_path")[0].as_py()
    os.remove(victim)
    with pytest.raises(FileMissingError, match="reading manifest") as e:
        list(table.scan().plan_files())
    assert victim in str(e.value) and isinstance(e.value.__cause__, FileNotFoundError)
    os.remove(snapshot.manifest_list)
    with pytest.raises(FileMissingError, match="manifest list") as e:
        table.scan().count()
    assert snapshot.manifest_list in str(e.value)
