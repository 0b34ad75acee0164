"""Native scan planning (frazil.table.scan.plan): selected data files, delete files attached per
the spec's scope rules, and residuals, against PyIceberg's ``plan_files`` (a peer) on tables
that frazil's own commit path writes with real Parquet files, and against the spec's rules on
cases PyIceberg does not cover (global equality deletes, file-scoped position deletes, DVs)."""

from __future__ import annotations

import dataclasses
import struct
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.expressions import parser as pyi_parser
from pyiceberg.table import StaticTable
from snapshot_fakes import FakeCatalog, write_parquet, write_position_deletes

from frazil.exceptions import InvalidArgumentError
from frazil.expressions import AlwaysTrue, BooleanExpression, parse
from frazil.manifest.content_file import DataFile
from frazil.partitioning import PartitionField, PartitionSpec, parse_transform
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.scan.plan import PlannedFiles, plan_files
from frazil.table.update import new_table_metadata
from frazil.types import LongType, NestedField, StringType

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True), NestedField(2, "category", StringType(), False)
)


def _long(v: int) -> bytes:
    return struct.pack("<q", v)


def make_table(tmp_path: Any, partitioned: bool = True, version: int = 2) -> Table:
    spec = (
        PartitionSpec(PartitionField(2, 1000, parse_transform("identity"), "category"))
        if partitioned
        else PartitionSpec()
    )
    meta = new_table_metadata(
        SCHEMA, str(tmp_path / "t"), partition_spec=spec, format_version=version
    )
    return FakeCatalog().create("t", meta)


def data(tmp_path: Any, name: str, ids: list[int], category: str, partitioned: bool = True):
    f = write_parquet(
        str(tmp_path / "t" / "data" / f"{name}.parquet"),
        ids,
        category,
        partition=(category,) if partitioned else (),
    )
    enc = category.encode()
    return dataclasses.replace(
        f,
        lower_bounds={1: _long(min(ids)), 2: enc},
        upper_bounds={1: _long(max(ids)), 2: enc},
    )


def pos_deletes(
    tmp_path: Any, name: str, targets: list[tuple[DataFile, int]], partition: tuple[Any, ...]
) -> DataFile:
    f = write_position_deletes(
        str(tmp_path / "t" / "data" / f"{name}.parquet"),
        [(d.file_path, p) for d, p in targets],
    )
    paths = sorted(d.file_path for d, _ in targets)
    return dataclasses.replace(
        f,
        partition=partition,
        lower_bounds={2147483546: paths[0].encode()},
        upper_bounds={2147483546: paths[-1].encode()},
    )


def append(table: Table, *files: DataFile) -> None:
    with table.transaction() as tx, tx.update_snapshot().fast_append() as a:
        for f in files:
            a.append_data_file(f)


def add_deletes(table: Table, *files: DataFile) -> None:
    with table.transaction() as tx, tx.update_snapshot().row_delta() as rd:
        for f in files:
            rd.add_delete_file(f)


def plan(table: Table, expr: BooleanExpression | str | None = None) -> PlannedFiles:
    expr = AlwaysTrue() if expr is None else expr
    if isinstance(expr, str):
        expr = parse(expr)
    m = table.metadata
    return plan_files(table.io, m, m.current_snapshot(), expr, True, threads=2)


def task_set(p: PlannedFiles) -> set[tuple[str, frozenset[str]]]:
    deletes = [f.file_path for f in p.delete_files]
    out = set()
    for m in p.data:
        paths = m.entries.column("data_file").combine_chunks().field("file_path").to_pylist()
        for path, ds in zip(paths, m.deletes.to_pylist(), strict=True):
            out.add((path, frozenset(deletes[i] for i in ds)))
    return out


def peer_set(table: Table, expr: str | None) -> set[tuple[str, frozenset[str]]]:
    scan = StaticTable.from_metadata(table.metadata_location).scan(
        row_filter=pyi_parser.parse(expr) if expr else "True"
    )
    return {
        (t.file.file_path, frozenset(d.file_path for d in t.delete_files))
        for t in scan.plan_files()
    }


@pytest.fixture
def deleted_table(tmp_path: Any) -> tuple[Table, dict[str, DataFile]]:
    """Seq 1: a1 (a, 0..9), b1 (b, 10..19); seq 2: a position delete in partition a for a1;
    seq 3: a2 (a, 20..29), c1 (c, 100..200); seq 4: a file-scoped delete for c1."""
    t = make_table(tmp_path)
    a1 = data(tmp_path, "a1", list(range(10)), "a")
    b1 = data(tmp_path, "b1", list(range(10, 20)), "b")
    append(t, a1, b1)
    d1 = pos_deletes(tmp_path, "d1", [(a1, 0), (a1, 3)], ("a",))
    add_deletes(t, d1)
    a2 = data(tmp_path, "a2", list(range(20, 30)), "a")
    c1 = data(tmp_path, "c1", list(range(100, 201)), "c")
    append(t, a2, c1)
    d2 = dataclasses.replace(
        pos_deletes(tmp_path, "d2", [(c1, 5)], ("c",)), referenced_data_file=c1.file_path
    )
    add_deletes(t, d2)
    return t, {"a1": a1, "b1": b1, "a2": a2, "c1": c1, "d1": d1, "d2": d2}


FILTERS = [
    None,
    "id < 5",
    "id >= 20",
    "category = 'b'",
    "category = 'a' AND id > 25",
    "id > 150 OR category = 'b'",
    "id = 1000",
    "category IN ('a', 'c')",
    "NOT (category = 'a')",
    "category IS NULL",
]


@pytest.mark.parametrize("expr", FILTERS)
def test_tasks_and_deletes_equal_pyiceberg(deleted_table: Any, expr: str | None) -> None:
    t, _ = deleted_table
    ours = task_set(plan(t, expr or AlwaysTrue()))
    assert ours == peer_set(t, expr)


def test_position_delete_scope(deleted_table: Any) -> None:
    t, f = deleted_table
    got = {path: ds for path, ds in task_set(plan(t))}
    # partition delete at seq 2 applies to a1 (seq 1), not a2 (seq 3) nor b1 (other partition)
    assert got[f["a1"].file_path] == {f["d1"].file_path}
    assert got[f["a2"].file_path] == frozenset()
    assert got[f["b1"].file_path] == frozenset()
    assert got[f["c1"].file_path] == {f["d2"].file_path}


def test_residuals_and_shapes(deleted_table: Any) -> None:
    t, _ = deleted_table
    p = plan(t, "category = 'a' AND id > 25")
    assert [len(m) for m in p.data] == [1]
    (m,) = p.data
    assert m.spec_id == 0
    assert m.entries.column_names == [
        "status",
        "snapshot_id",
        "sequence_number",
        "file_sequence_number",
        "data_file",
    ]
    assert m.entries.column("sequence_number").to_pylist() == [3]
    # identity partition a: the category predicate is decided, the id one stays
    assert str(p.residuals[m.residuals[0].as_py()]) == "id > 25"
    assert m.deletes.to_pylist() == [[]]


def test_delete_file_pruned_by_its_metrics(tmp_path: Any) -> None:
    t = make_table(tmp_path, partitioned=False)
    a = data(tmp_path, "a", list(range(10)), "x", partitioned=False)
    append(t, a)
    d = pos_deletes(tmp_path, "d", [(a, 1)], ())
    # a position delete file whose deleted rows (the `row` column's metrics) have id 1 only
    d = dataclasses.replace(
        d,
        lower_bounds={**d.lower_bounds, 1: _long(1)},
        upper_bounds={**d.upper_bounds, 1: _long(1)},
    )
    add_deletes(t, d)
    assert task_set(plan(t, "id = 1")) == {(a.file_path, frozenset({d.file_path}))}
    assert task_set(plan(t, "id = 2")) == {(a.file_path, frozenset())}


def _eq_delete(tmp_path: Any, name: str, lo: int, hi: int, partition: tuple[Any, ...]) -> DataFile:
    path = str(tmp_path / "t" / "data" / f"{name}.parquet")
    f = write_parquet(path, [lo, hi], "z", partition=partition)
    return dataclasses.replace(
        f,
        content=2,
        equality_ids=(1,),
        lower_bounds={1: _long(lo), 2: b"z"},
        upper_bounds={1: _long(hi), 2: b"z"},
    )


def test_equality_deletes_global_and_by_range(tmp_path: Any) -> None:
    t = make_table(tmp_path, partitioned=False)
    a = data(tmp_path, "a", list(range(10)), "x", partitioned=False)
    b = data(tmp_path, "b", list(range(50, 60)), "y", partitioned=False)
    append(t, a)
    e1 = _eq_delete(tmp_path, "e1", 3, 4, ())  # seq 2: overlaps a only
    add_deletes(t, e1)
    append(t, b)  # seq 3: after e1, so e1 never applies to b
    e2 = _eq_delete(tmp_path, "e2", 55, 58, ())  # seq 4: overlaps b only
    e3 = _eq_delete(tmp_path, "e3", 0, 100, ())  # seq 4: overlaps both
    add_deletes(t, e2, e3)
    got = dict(task_set(plan(t)))
    assert got[a.file_path] == {e1.file_path, e3.file_path}
    assert got[b.file_path] == {e2.file_path, e3.file_path}
    # a filter on a non-equality column never prunes equality deletes (e* hold category 'z')
    got = dict(task_set(plan(t, "category = 'x'")))
    assert got == {a.file_path: frozenset({e1.file_path, e3.file_path})}
    # ... one on the equality column does: id = 3 only needs deletes that may hold 3
    got = dict(task_set(plan(t, "id = 3")))
    assert got == {a.file_path: frozenset({e1.file_path, e3.file_path})}
    # (PyIceberg 0.12 refuses equality deletes, so there is no peer to compare with here)


def test_equality_deletes_in_partitions(tmp_path: Any) -> None:
    t = make_table(tmp_path)
    a = data(tmp_path, "a", list(range(10)), "a")
    b = data(tmp_path, "b", list(range(10)), "b")
    append(t, a, b)
    e = _eq_delete(tmp_path, "e", 0, 9, ("a",))
    add_deletes(t, e)
    got = dict(task_set(plan(t)))
    assert got == {a.file_path: frozenset({e.file_path}), b.file_path: frozenset()}


def test_deletion_vectors(tmp_path: Any) -> None:
    t = make_table(tmp_path, version=3)
    a = data(tmp_path, "a", list(range(10)), "a")
    b = data(tmp_path, "b", list(range(10, 20)), "a")
    append(t, a, b)
    old = pos_deletes(tmp_path, "old", [(a, 1), (b, 1)], ("a",))
    dv_path = str(tmp_path / "t" / "data" / "dv.puffin")
    dv = DataFile(
        file_path=dv_path,
        file_format="PUFFIN",
        partition=("a",),
        record_count=2,
        file_size_in_bytes=100,
        content=1,
        referenced_data_file=a.file_path,
        content_offset=4,
        content_size_in_bytes=40,
    )
    # v3 tables take no new position delete files; the manifest is written by hand below
    _add_delete_manifest(t, [old, dv])
    got = dict(task_set(plan(t)))
    # a has a DV: the partition-scoped position delete is ignored for it
    assert got == {a.file_path: frozenset({dv_path}), b.file_path: frozenset({old.file_path})}


def _add_delete_manifest(table: Table, files: list[DataFile]) -> None:
    """Commits delete files without the producer's v3 checks: a row delta on a v2 copy of the
    metadata is not possible, so this writes the manifest and list directly."""
    import frazil.manifest as fm
    from frazil.manifest.content_file import manifest_entries, partition_arrow_type
    from frazil.table.update.snapshot import MANIFEST_FILE_SCHEMA

    m = table.metadata
    snap = m.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    seq = snap.sequence_number + 1
    ptype = partition_arrow_type(m.spec(), m.schema())
    entries = manifest_entries(files, 1, snap.snapshot_id, seq, seq, ptype, m.format_version)
    import json

    body = fm.write_manifest(
        entries,
        format_version=m.format_version,
        schema=json.dumps(m.schema().to_json()),
        partition_spec=json.dumps(m.spec().fields_to_json()),
        schema_id=m.current_schema_id,
        partition_spec_id=m.spec().spec_id,
        content="deletes",
    )
    path = snap.manifest_list + ".deletes.avro"
    table.io.write(path, body)
    rows = fm.read_manifest_list(table.io.read(snap.manifest_list)).to_pylist()
    s = fm.summarize_manifest(entries)
    rows.append(
        {
            **s,
            "manifest_path": path,
            "manifest_length": len(body),
            "partition_spec_id": m.spec().spec_id,
            "content": 1,
            "sequence_number": seq,
            "min_sequence_number": seq,
            "added_snapshot_id": snap.snapshot_id,
            "key_metadata": None,
            "first_row_id": None,
        }
    )
    data = fm.write_manifest_list(
        pa.Table.from_pylist(rows, schema=MANIFEST_FILE_SCHEMA),
        format_version=m.format_version,
        snapshot_id=snap.snapshot_id,
        sequence_number=seq,
        first_row_id=snap.first_row_id,
    )
    table.io.write(snap.manifest_list, data, overwrite=True)


def test_two_dvs_for_one_file_is_an_error(tmp_path: Any) -> None:
    t = make_table(tmp_path, version=3)
    a = data(tmp_path, "a", list(range(10)), "a")
    append(t, a)
    dvs = [
        DataFile(
            file_path=str(tmp_path / f"dv{i}.puffin"),
            file_format="PUFFIN",
            partition=("a",),
            record_count=1,
            file_size_in_bytes=100,
            content=1,
            referenced_data_file=a.file_path,
            content_offset=4,
            content_size_in_bytes=40,
        )
        for i in range(2)
    ]
    _add_delete_manifest(t, dvs)
    with pytest.raises(InvalidArgumentError, match="more than one deletion vector"):
        plan(t)


def test_empty_and_pruned(tmp_path: Any) -> None:
    t = make_table(tmp_path)
    assert plan(t).num_tasks == 0
    append(t, data(tmp_path, "a", [1, 2], "a"))
    assert plan(t, "category = 'q'").num_tasks == 0
    assert plan(t, "category = 'a'").num_tasks == 1


@pytest.mark.parametrize("expr", [None, "id < 5", "category = 'a' AND id > 25"])
def test_scan_include_column_stats_option(deleted_table: Any, expr: str | None) -> None:
    t, files = deleted_table
    scan = t.scan(row_filter=expr or AlwaysTrue())

    def by_path(tasks: Any) -> dict[str, Any]:
        return {task.file.file_path: task for task in tasks}

    with_stats = by_path(scan.plan_files())  # default: tasks carry stats, as PyIceberg's do
    without = by_path(scan.include_column_stats(False).plan_files())
    assert with_stats.keys() == without.keys() and with_stats
    for path, task in with_stats.items():
        original = next(f for f in files.values() if f.file_path == path)
        assert task.file.lower_bounds == original.lower_bounds
        assert task.file.upper_bounds == original.upper_bounds
        bare = without[path]
        assert not bare.file.lower_bounds and not bare.file.upper_bounds
        assert not bare.file.value_counts and not bare.file.null_value_counts
        # everything a reader needs is still there
        assert bare.file.record_count == task.file.record_count
        assert bare.file.partition == task.file.partition
        assert bare.residual == task.residual
        assert {d.file_path for d in bare.delete_files} == {d.file_path for d in task.delete_files}
    assert scan.include_column_stats(False).to_arrow().equals(scan.to_arrow())
    assert scan.options == {}  # builders return new scans
    with pytest.raises(InvalidArgumentError, match="include-column-stats"):
        t.scan(options={"include-column-stats": "maybe"}).plan_files()
