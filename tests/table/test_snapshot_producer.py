"""The snapshot producer: manifests and manifest lists read back by fastavro against the spec's
schemas, tables read by PyIceberg (a peer implementation) with exactly the expected files and
rows, summaries per Appendix F as the Java reference computes them, and retries under
contention through a small in-memory catalog (``snapshot_fakes``)."""

from __future__ import annotations

import io
import json
import os
from typing import Any

import fastavro
import pytest
from pyiceberg.table import StaticTable
from snapshot_fakes import FakeCatalog, write_parquet, write_position_deletes

from frazil.exceptions import ValidationError
from frazil.manifest.content_file import DataFile
from frazil.partitioning import PartitionField, PartitionSpec, parse_transform
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.update import new_table_metadata
from frazil.types import LongType, NestedField, StringType

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True), NestedField(2, "category", StringType(), False)
)
FAST_RETRY = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "2"}

# Field ids of the spec's manifest_file and manifest_entry, per format version.
LIST_IDS = {
    1: [500, 501, 502, 503, 504, 505, 506, 512, 513, 514, 507, 519],
    2: [500, 501, 502, 517, 515, 516, 503, 504, 505, 506, 512, 513, 514, 507, 519],
    3: [500, 501, 502, 517, 515, 516, 503, 504, 505, 506, 512, 513, 514, 507, 519, 520],
}
ENTRY_IDS = {1: [0, 1, 2], 2: [0, 1, 3, 4, 2], 3: [0, 1, 3, 4, 2]}


def make_table(
    tmp_path: Any,
    version: int = 2,
    partitioned: bool = False,
    properties: dict[str, str] | None = None,
) -> tuple[FakeCatalog, Table]:
    spec = (
        PartitionSpec(PartitionField(2, 1000, parse_transform("identity"), "category"))
        if partitioned
        else PartitionSpec()
    )
    meta = new_table_metadata(
        SCHEMA,
        str(tmp_path / "t"),
        partition_spec=spec,
        format_version=version,
        properties={**FAST_RETRY, **(properties or {})},
    )
    catalog = FakeCatalog()
    return catalog, catalog.create("t", meta)


def data(tmp_path: Any, name: str, ids: list[int], category: str | None = None) -> DataFile:
    part = () if category is None else (category,)
    return write_parquet(
        str(tmp_path / "t" / "data" / f"{name}.parquet"), ids, category or "a", partition=part
    )


def append(table: Table, *files: DataFile, merge: bool = False) -> None:
    with table.transaction() as tx:
        op = tx.update_snapshot()
        with op.merge_append() if merge else op.fast_append() as a:
            for f in files:
                a.append_data_file(f)


def peer(table: Table) -> StaticTable:
    return StaticTable.from_metadata(table.metadata_location)


def peer_files(table: Table) -> list[str]:
    return sorted(os.path.basename(t.file.file_path) for t in peer(table).scan().plan_files())


def peer_ids(table: Table) -> list[int]:
    return sorted(peer(table).scan().to_arrow().column("id").to_pylist())


def avro(path: str) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, str]]:
    with open(path, "rb") as f:
        reader = fastavro.reader(io.BytesIO(f.read()))
        schema = json.loads(reader.metadata["avro.schema"])
        return schema, list(reader), dict(reader.metadata)


def ids(schema: dict[str, Any]) -> list[int]:
    return [f["field-id"] for f in schema["fields"]]


def manifest_list(table: Table, snapshot_id: int | None = None) -> list[dict[str, Any]]:
    snap = table.snapshot_by_id(snapshot_id) if snapshot_id else table.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    return avro(snap.manifest_list)[1]


def metadata_files(table: Table) -> set[str]:
    return set(os.listdir(os.path.join(table.location(), "metadata")))


# ---------------------------------------------------------------------------------------------
# appends, v1-v3


@pytest.mark.parametrize("version", [1, 2, 3])
def test_append_files_read_back_with_the_spec_schemas(tmp_path: Any, version: int) -> None:
    _, t = make_table(tmp_path, version)
    a, b = data(tmp_path, "a", [1, 2, 3]), data(tmp_path, "b", [4, 5])
    append(t, a)
    first = t.current_snapshot()
    append(t, b)
    snap = t.current_snapshot()
    assert snap.parent_snapshot_id == first.snapshot_id
    assert t.metadata.refs["main"].snapshot_id == snap.snapshot_id

    schema, rows, meta = avro(snap.manifest_list)
    assert ids(schema) == LIST_IDS[version]
    assert meta["avro.codec"] == "deflate"  # write.avro.compression-codec gzip
    assert meta["snapshot-id"] == str(snap.snapshot_id)
    assert meta["parent-snapshot-id"] == str(first.snapshot_id)
    assert meta["format-version"] == str(version)
    assert os.path.basename(snap.manifest_list).startswith(f"snap-{snap.snapshot_id}-1-")
    # fast append: the new manifest first, the parent's kept as it was
    assert [r["added_snapshot_id"] for r in rows] == [snap.snapshot_id, first.snapshot_id]
    assert [r["added_files_count"] for r in rows] == [1, 1]
    assert [r["added_rows_count"] for r in rows] == [2, 3]
    if version >= 2:
        assert snap.sequence_number == 2 and t.metadata.last_sequence_number == 2
        assert meta["sequence-number"] == "2"
        assert [r["sequence_number"] for r in rows] == [2, 1]
        assert [r["min_sequence_number"] for r in rows] == [2, 1]
        assert [r["content"] for r in rows] == [0, 0]

    mschema, entries, mmeta = avro(rows[0]["manifest_path"])
    assert ids(mschema) == ENTRY_IDS[version]
    assert mmeta["format-version"] == str(version)
    assert json.loads(mmeta["schema"]) == t.schema().to_json()
    assert json.loads(mmeta["partition-spec"]) == []
    (entry,) = entries
    assert entry["status"] == 1  # ADDED
    assert entry["snapshot_id"] == snap.snapshot_id
    assert entry["data_file"]["file_path"] == b.file_path
    assert entry["data_file"]["record_count"] == 2
    if version >= 2:
        assert mmeta["content"] == "data"
        # left null so that a retry can reuse the manifest (inherited from the list)
        assert entry["sequence_number"] is None and entry["file_sequence_number"] is None

    if version >= 3:
        # spec "Row Lineage": first-row-id = next-row-id, next-row-id += rows assigned
        assert (first.first_row_id, first.added_rows) == (0, 3)
        assert (snap.first_row_id, snap.added_rows) == (3, 2)
        assert t.metadata.next_row_id == 5
        assert meta["first-row-id"] == "3"
        assert [r["first_row_id"] for r in rows] == [3, 0]
        assert entry["data_file"]["first_row_id"] is None  # inherited

    summary = dict(snap.summary)
    assert summary == {
        "operation": "append",
        "added-data-files": "1",
        "added-records": "2",
        "added-files-size": str(b.file_size_in_bytes),
        "changed-partition-count": "1",
        "manifests-created": "1",
        "manifests-kept": "1",
        "manifests-replaced": "0",
        "total-records": "5",
        "total-files-size": str(a.file_size_in_bytes + b.file_size_in_bytes),
        "total-data-files": "2",
        "total-delete-files": "0",
        "total-position-deletes": "0",
        "total-equality-deletes": "0",
    }
    assert peer_files(t) == ["a.parquet", "b.parquet"]
    assert peer_ids(t) == [1, 2, 3, 4, 5]


def test_snapshot_properties_and_branch(tmp_path: Any) -> None:
    _, t = make_table(tmp_path)
    append(t, data(tmp_path, "a", [1]))
    main = t.current_snapshot()
    with t.transaction() as tx:
        with tx.update_snapshot({"app": "x"}, branch="audit").fast_append() as a:
            a.append_data_file(data(tmp_path, "b", [2]))
    audit = t.snapshot_by_name("audit")
    assert t.current_snapshot() == main  # main untouched
    # a new branch starts without a parent (as Java's producers create one), totals from 0
    assert audit.parent_snapshot_id is None and audit.summary["app"] == "x"
    assert audit.summary["total-data-files"] == "1"
    assert audit.sequence_number == 2
    assert t.metadata.refs["audit"].snapshot_ref_type == "branch"


def test_fast_append_never_merges_and_merge_append_does(tmp_path: Any) -> None:
    _, t = make_table(tmp_path, properties={"commit.manifest.min-count-to-merge": "3"})
    for i in range(3):
        append(t, data(tmp_path, f"f{i}", [i]))
    assert len(manifest_list(t)) == 3
    append(t, data(tmp_path, "f3", [3]), merge=True)
    snap = t.current_snapshot()
    (row,) = manifest_list(t)  # 4 manifests >= min count: one merged manifest
    assert row["added_snapshot_id"] == snap.snapshot_id
    assert (row["added_files_count"], row["existing_files_count"]) == (1, 3)
    assert row["sequence_number"] == 4 and row["min_sequence_number"] == 1
    _, entries, _ = avro(row["manifest_path"])
    by_path = {os.path.basename(e["data_file"]["file_path"]): e for e in entries}
    assert by_path["f3.parquet"]["status"] == 1 and by_path["f3.parquet"]["sequence_number"] is None
    for i in range(3):  # EXISTING, with the original snapshot and explicit sequence numbers
        e = by_path[f"f{i}.parquet"]
        assert e["status"] == 0 and e["sequence_number"] == i + 1
        assert e["file_sequence_number"] == i + 1
        assert e["snapshot_id"] == t.snapshots()[i].snapshot_id
    assert snap.summary["manifests-replaced"] == "3"
    assert snap.summary["manifests-created"] == "1"
    assert peer_ids(t) == [0, 1, 2, 3]

    # below the minimum count the new manifest is not merged
    append(t, data(tmp_path, "f4", [4]), merge=True)
    assert len(manifest_list(t)) == 2


def test_merge_disabled(tmp_path: Any) -> None:
    _, t = make_table(
        tmp_path,
        properties={
            "commit.manifest.min-count-to-merge": "2",
            "commit.manifest-merge.enabled": "false",
        },
    )
    for i in range(3):
        append(t, data(tmp_path, f"f{i}", [i]), merge=True)
    assert len(manifest_list(t)) == 3


# ---------------------------------------------------------------------------------------------
# overwrite, delete, replace, row delta


def test_overwrite_by_path_and_by_predicate(tmp_path: Any) -> None:
    _, t = make_table(tmp_path, partitioned=True)
    a1, a2 = data(tmp_path, "a1", [1, 2], "a"), data(tmp_path, "a2", [3], "a")
    b1 = data(tmp_path, "b1", [10], "b")
    append(t, a1, a2, b1)
    base = t.current_snapshot()

    c1 = data(tmp_path, "c1", [20, 21], "c")
    with t.transaction() as tx, tx.update_snapshot().overwrite() as o:
        o.delete_data_file(b1.file_path)
        o.append_data_file(c1)
    snap = t.current_snapshot()
    assert snap.operation == "overwrite"
    assert peer_files(t) == ["a1.parquet", "a2.parquet", "c1.parquet"]
    rows = manifest_list(t)
    assert len(rows) == 2
    _, rewritten = rows
    assert rewritten["added_snapshot_id"] == snap.snapshot_id
    assert (rewritten["existing_files_count"], rewritten["deleted_files_count"]) == (2, 1)
    assert rewritten["sequence_number"] == 2 and rewritten["min_sequence_number"] == 1
    _, entries, _ = avro(rewritten["manifest_path"])
    e = {os.path.basename(x["data_file"]["file_path"]): x for x in entries}
    assert e["b1.parquet"]["status"] == 2
    assert e["b1.parquet"]["snapshot_id"] == snap.snapshot_id
    assert e["b1.parquet"]["sequence_number"] == 1  # explicit, the original value
    assert e["a1.parquet"]["status"] == 0 and e["a1.parquet"]["snapshot_id"] == base.snapshot_id
    assert e["a1.parquet"]["sequence_number"] == 1
    # partition summaries of the rewritten manifest cover its entries
    assert rewritten["partitions"][0]["lower_bound"] == b"a"
    assert rewritten["partitions"][0]["upper_bound"] == b"b"
    s = snap.summary
    assert (s["added-data-files"], s["deleted-data-files"]) == ("1", "1")
    assert (s["added-records"], s["deleted-records"]) == ("2", "1")
    assert s["changed-partition-count"] == "2"
    assert (s["total-data-files"], s["total-records"]) == ("3", "5")
    assert s["removed-files-size"] == str(b1.file_size_in_bytes)

    # by a predicate over the partition tuple: whole files of partition "a"
    with t.transaction() as tx, tx.update_snapshot().overwrite() as o:
        o.delete_files(lambda f: f.partition == ("a",))
    snap = t.current_snapshot()
    assert snap.operation == "delete"
    assert snap.summary["deleted-data-files"] == "2"
    assert snap.summary["total-data-files"] == "1"
    assert peer_files(t) == ["c1.parquet"]
    assert peer_ids(t) == [20, 21]
    # the earlier DELETED entry of b1 was dropped from the rewritten manifest
    paths = []
    for r in manifest_list(t):
        paths += [x["data_file"]["file_path"] for x in avro(r["manifest_path"])[1]]
    assert b1.file_path not in paths


def test_delete_files_and_missing_file(tmp_path: Any) -> None:
    _, t = make_table(tmp_path)
    a, b = data(tmp_path, "a", [1]), data(tmp_path, "b", [2])
    append(t, a, b)
    before = metadata_files(t)
    with pytest.raises(ValidationError, match=r"missing required files to delete: .*nope"):
        with t.transaction() as tx, tx.update_snapshot().delete() as d:
            d.delete_data_file(a)
            d.delete_data_file(str(tmp_path / "nope.parquet"))
    assert metadata_files(t) == before  # nothing of its own left behind
    assert t.refresh().current_snapshot().operation == "append"

    with t.transaction() as tx, tx.update_snapshot().delete() as d:
        d.delete_data_file(a)
    assert t.current_snapshot().operation == "delete"
    assert peer_files(t) == ["b.parquet"]
    # a manifest whose files are all gone is dropped by the next merging commit
    with t.transaction() as tx, tx.update_snapshot().delete() as d:
        d.delete_data_file(b)
    assert peer_files(t) == []
    assert t.current_snapshot().summary["total-data-files"] == "0"


def test_replace(tmp_path: Any) -> None:
    _, t = make_table(tmp_path)
    a, b = data(tmp_path, "a", [1, 2]), data(tmp_path, "b", [3])
    append(t, a)
    append(t, b)
    c = data(tmp_path, "c", [1, 2, 3])
    with t.transaction() as tx, tx.update_snapshot().replace() as r:
        r.delete_data_file(a)
        r.delete_data_file(b)
        r.append_data_file(c)
    snap = t.current_snapshot()
    assert snap.operation == "replace"
    assert (snap.summary["total-records"], snap.summary["total-data-files"]) == ("3", "1")
    assert peer_files(t) == ["c.parquet"]
    assert peer_ids(t) == [1, 2, 3]


def test_row_delta_with_position_deletes(tmp_path: Any) -> None:
    _, t = make_table(tmp_path)
    a = data(tmp_path, "a", [10, 11, 12, 13])
    append(t, a)
    pos = write_position_deletes(
        str(tmp_path / "t" / "data" / "a-deletes.parquet"), [(a.file_path, 1), (a.file_path, 3)]
    )
    n = data(tmp_path, "n", [14])
    with t.transaction() as tx, tx.update_snapshot().row_delta() as rd:
        rd.add_delete_file(pos)
        rd.append_data_file(n)
    snap = t.current_snapshot()
    assert snap.operation == "overwrite"
    rows = manifest_list(t)
    assert [r["content"] for r in rows] == [0, 0, 1]  # data manifests, then delete manifests
    _, entries, meta = avro(rows[2]["manifest_path"])
    assert meta["content"] == "deletes" and entries[0]["data_file"]["content"] == 1
    s = snap.summary
    assert (s["added-delete-files"], s["added-position-delete-files"]) == ("1", "1")
    assert (s["added-position-deletes"], s["total-position-deletes"]) == ("2", "2")
    assert s["total-delete-files"] == "1"
    assert peer_ids(t) == [10, 12, 14]

    # a delete-only row delta is a "delete"
    pos2 = write_position_deletes(
        str(tmp_path / "t" / "data" / "a-deletes2.parquet"), [(a.file_path, 0)]
    )
    with t.transaction() as tx, tx.update_snapshot().row_delta() as rd:
        rd.add_delete_file(pos2)
    assert t.current_snapshot().operation == "delete"
    assert peer_ids(t) == [12, 14]


# ---------------------------------------------------------------------------------------------
# retries and conflicts


def other_writer(catalog: FakeCatalog, fn: Any) -> None:
    """Runs ``fn(table)`` as another writer just before the next commit reaches the catalog."""
    catalog.before_commit = lambda: fn(catalog.load_table(("t",)))


@pytest.mark.parametrize("version", [2, 3])
def test_retry_reuses_manifests_and_cleans_up(tmp_path: Any, version: int) -> None:
    catalog, t = make_table(tmp_path, version)
    append(t, data(tmp_path, "a", [1, 2]))
    first = t.current_snapshot()
    other_writer(catalog, lambda other: append(other, data(tmp_path, "b", [3, 4, 5])))

    with t.transaction() as tx:
        a = tx.update_snapshot().fast_append()
        with a:
            a.append_data_file(data(tmp_path, "c", [6]))
        staged = tx.table_metadata.snapshot_by_id(a.snapshot_id)
        (new_manifest,) = [
            r["manifest_path"] for r in avro(staged.manifest_list)[1] if r["sequence_number"] == 2
        ]
        superseded = staged.manifest_list
    assert catalog.failed_commits == 1

    snap = t.current_snapshot()
    assert snap.snapshot_id == a.snapshot_id  # same id across attempts
    other = t.snapshot_by_id(snap.parent_snapshot_id)
    assert other.parent_snapshot_id == first.snapshot_id
    assert snap.sequence_number == 3 and other.sequence_number == 2
    assert os.path.basename(snap.manifest_list).startswith(f"snap-{snap.snapshot_id}-2-")
    rows = manifest_list(t)
    assert rows[0]["manifest_path"] == new_manifest  # written once, reused
    assert rows[0]["sequence_number"] == 3
    assert not os.path.exists(superseded)
    mine = [n for n in metadata_files(t) if n.startswith(f"snap-{snap.snapshot_id}")]
    assert mine == [os.path.basename(snap.manifest_list)]
    if version >= 3:
        # reassigned from the refreshed next-row-id: 2 (a) + 3 (b)
        assert (snap.first_row_id, snap.added_rows) == (5, 1)
        assert rows[0]["first_row_id"] == 5 and t.metadata.next_row_id == 6
    assert peer_ids(t) == [1, 2, 3, 4, 5, 6]


def test_delete_racing_append_both_land(tmp_path: Any) -> None:
    catalog, t = make_table(tmp_path)
    a = data(tmp_path, "a", [1])
    append(t, a)
    other_writer(catalog, lambda other: append(other, data(tmp_path, "b", [2])))
    with t.transaction() as tx, tx.update_snapshot().delete() as d:
        d.delete_data_file(a)
    assert catalog.failed_commits == 1
    assert [s.operation for s in t.snapshots()] == ["append", "append", "delete"]
    assert peer_files(t) == ["b.parquet"]


def test_rewrite_of_concurrently_deleted_files_fails_cleanly(tmp_path: Any) -> None:
    catalog, t = make_table(tmp_path)
    a, b = data(tmp_path, "a", [1]), data(tmp_path, "b", [2])
    append(t, a, b)

    def delete_a(other: Table) -> None:
        with other.transaction() as tx, tx.update_snapshot().delete() as d:
            d.delete_data_file(a)

    other_writer(catalog, delete_a)
    before = metadata_files(t)
    with pytest.raises(ValidationError, match=r"rewrite.*missing required files.*a\.parquet"):
        with t.transaction() as tx, tx.update_snapshot().replace() as r:
            r.delete_data_file(a)
            r.delete_data_file(b)
            r.append_data_file(data(tmp_path, "ab", [1, 2]))
    t.refresh()
    assert [s.operation for s in t.snapshots()] == ["append", "delete"]
    # only the other writer's files were added
    added = metadata_files(t) - before
    delete_snap = t.current_snapshot()
    assert all(
        n.endswith(".metadata.json")
        or n == os.path.basename(delete_snap.manifest_list)
        or n in {os.path.basename(r["manifest_path"]) for r in manifest_list(t)}
        for n in added
    ), added
    assert peer_files(t) == ["b.parquet"]


def test_conflict_detection_under_serializable_isolation(tmp_path: Any) -> None:
    catalog, t = make_table(tmp_path, partitioned=True)
    a = data(tmp_path, "a", [1], "a")
    append(t, a)

    def overwrite_a(level: str, name: str) -> None:
        with t.transaction() as tx, tx.update_snapshot().overwrite() as o:
            o.isolation_level(level)
            o.conflict_detection(lambda f: f.partition == ("a",))
            o.delete_files(lambda f: f.partition == ("a",))
            o.append_data_file(data(tmp_path, name, [100], "a"))

    # a concurrent append elsewhere does not conflict
    other_writer(catalog, lambda other: append(other, data(tmp_path, "b", [2], "b")))
    overwrite_a("serializable", "a-serializable")
    assert peer_files(t) == ["a-serializable.parquet", "b.parquet"]

    # one into the partition being overwritten does
    other_writer(catalog, lambda other: append(other, data(tmp_path, "a2", [3], "a")))
    with pytest.raises(ValidationError, match=r"conflicting files.*a2\.parquet"):
        overwrite_a("serializable", "a-again")
    t.refresh()
    assert peer_files(t) == ["a-serializable.parquet", "a2.parquet", "b.parquet"]

    # snapshot isolation lets it through (and the overwrite sees and deletes a2 as well)
    other_writer(catalog, lambda other: append(other, data(tmp_path, "a3", [4], "a")))
    overwrite_a("snapshot", "a-snapshot")
    assert peer_files(t) == ["a-snapshot.parquet", "b.parquet"]


def test_new_delete_file_against_a_deleted_file_conflicts(tmp_path: Any) -> None:
    catalog, t = make_table(tmp_path)
    a = data(tmp_path, "a", [1, 2])
    append(t, a)
    pos = write_position_deletes(str(tmp_path / "t" / "data" / "d.parquet"), [(a.file_path, 0)])

    def add_deletes(other: Table) -> None:
        with other.transaction() as tx, tx.update_snapshot().row_delta() as rd:
            rd.add_delete_file(pos)

    other_writer(catalog, add_deletes)
    with pytest.raises(ValidationError, match=r"new delete file .*d\.parquet"):
        with t.transaction() as tx, tx.update_snapshot().replace() as r:
            r.delete_data_file(a)
            r.append_data_file(data(tmp_path, "b", [1, 2]))
    assert peer_ids(t.refresh()) == [2]


def dv_files(
    path: str, dvs: dict[str, list[int]], partition: tuple[Any, ...] = ()
) -> list[DataFile]:
    """Deletion vectors of these data files in one Puffin file at ``path``."""
    import pyarrow as pa

    from frazil.manifest.deletes import DeletionVector, write_deletion_vectors

    blob, written = write_deletion_vectors(
        {p: DeletionVector.from_positions(pa.array(v, pa.int64())) for p, v in dvs.items()}
    )
    with open(path, "wb") as f:
        f.write(blob)
    return [
        DataFile(
            file_path=path,
            file_format="PUFFIN",
            partition=partition,
            record_count=w.record_count,
            file_size_in_bytes=len(blob),
            content=1,
            referenced_data_file=w.referenced_data_file,
            content_offset=w.content_offset,
            content_size_in_bytes=w.content_size_in_bytes,
        )
        for w in written
    ]


def test_replacing_one_of_two_deletion_vectors_in_a_puffin_file(tmp_path: Any) -> None:
    """DVs share Puffin files, so removing one is by file and offset: the other stays live."""

    _, t = make_table(tmp_path, version=3)
    a = data(tmp_path, "a", [10, 11, 12])
    b = data(tmp_path, "b", [20, 21, 22])
    append(t, a, b)

    shared = dv_files(
        str(tmp_path / "t" / "data" / "dvs-1.puffin"), {a.file_path: [0], b.file_path: [1]}
    )
    with t.transaction() as tx, tx.update_snapshot().row_delta() as rd:
        for f in shared:
            rd.add_delete_file(f)
    assert sorted(peer_ids(t)) == [11, 12, 20, 22]

    # a's DV is merged with a new deletion and replaced; b's DV in the same file stays
    (merged,) = dv_files(str(tmp_path / "t" / "data" / "dvs-2.puffin"), {a.file_path: [0, 2]})
    old_a = next(f for f in shared if f.referenced_data_file == a.file_path)
    with t.transaction() as tx, tx.update_snapshot().row_delta() as rd:
        rd.delete_delete_file(old_a)
        rd.add_delete_file(merged)
    live = []
    for row in manifest_list(t):
        if row["content"] == 1:
            _, entries, _ = avro(row["manifest_path"])
            live += [
                (e["data_file"]["file_path"], e["data_file"]["content_offset"])
                for e in entries
                if e["status"] != 2
            ]
    old_b = next(f for f in shared if f.referenced_data_file == b.file_path)
    assert sorted(live) == sorted(
        [(old_b.file_path, old_b.content_offset), (merged.file_path, merged.content_offset)]
    )
    s = t.current_snapshot().summary
    assert (s["added-delete-files"], s["removed-delete-files"]) == ("1", "1")

    # removing a DV that is no longer live is a validation error naming its offset
    with pytest.raises(ValidationError, match="offset"):
        with t.transaction() as tx, tx.update_snapshot().row_delta() as rd:
            rd.delete_delete_file(old_a)


def live_delete_files(table: Table) -> list[tuple[str, int | None, str | None]]:
    """(Puffin or delete file, blob offset, referenced data file) of the live delete entries,
    read by fastavro."""
    live = []
    for row in manifest_list(table):
        if row["content"] == 1:
            _, entries, _ = avro(row["manifest_path"])
            live += [
                (
                    os.path.basename(e["data_file"]["file_path"]),
                    e["data_file"].get("content_offset"),
                    os.path.basename(e["data_file"].get("referenced_data_file") or ""),
                )
                for e in entries
                if e["status"] != 2
            ]
    return sorted(live)


@pytest.mark.parametrize("how", ["path", "predicate", "overwrite", "replace"])
def test_removing_a_data_file_removes_its_deletion_vector(tmp_path: Any, how: str) -> None:
    """The spec: "When removing a data file, writers must also remove any deletion vector that
    applies to that data file from delete manifests" (however the data file is removed)."""
    _, t = make_table(tmp_path, version=3)
    a, b = data(tmp_path, "a", [10, 11, 12]), data(tmp_path, "b", [20, 21, 22])
    append(t, a, b)
    shared = dv_files(
        str(tmp_path / "t" / "data" / "dvs.puffin"), {a.file_path: [0], b.file_path: [1]}
    )
    with t.transaction() as tx, tx.update_snapshot().row_delta() as rd:
        for f in shared:
            rd.add_delete_file(f)
    assert len(live_delete_files(t)) == 2
    with t.transaction() as tx:
        update = tx.update_snapshot()
        op: Any = (
            update.replace()
            if how == "replace"
            else (update.overwrite() if how == "overwrite" else update.delete())
        )
        if how == "predicate":
            op.delete_files(lambda f: f.file_path == a.file_path)
        else:
            op.delete_data_file(a)
        if how in ("overwrite", "replace"):
            op.append_data_file(data(tmp_path, "c", [11, 12]))
        tx.stage(op)
    # b's DV, in the same Puffin file, stays; a's is gone with a
    assert [(p, ref) for p, _, ref in live_delete_files(t)] == [("dvs.puffin", "b.parquet")]
    s = t.current_snapshot().summary
    assert (s["removed-dvs"], s["removed-delete-files"], s["total-delete-files"]) == ("1", "1", "1")
    expected = [20, 22] + ([] if how in ("path", "predicate") else [11, 12])
    assert sorted(peer_ids(t)) == sorted(expected)


def test_removed_data_files_keep_v2_position_deletes(tmp_path: Any) -> None:
    """Only deletion vectors go with their data file (as Java's removeDanglingDeletesFor); a v2
    position delete file may name several data files and stays."""
    _, t = make_table(tmp_path, version=2)
    a, b = data(tmp_path, "a", [10, 11]), data(tmp_path, "b", [20, 21])
    append(t, a, b)
    pos = write_position_deletes(
        str(tmp_path / "t" / "data" / "pos.parquet"), [(a.file_path, 0), (b.file_path, 1)]
    )
    with t.transaction() as tx, tx.update_snapshot().row_delta() as rd:
        rd.add_delete_file(pos)
    with t.transaction() as tx, tx.update_snapshot().delete() as d:
        d.delete_data_file(a)
    assert [p for p, _, _ in live_delete_files(t)] == ["pos.parquet"]
    assert peer_ids(t) == [20]


@pytest.mark.parametrize("version", [2, 3])
def test_delete_partitions_drops_their_delete_files(tmp_path: Any, version: int) -> None:
    """Java's ReplacePartitions (``dropPartition``): a dropped partition's delete files go with
    its data files; other partitions' stay."""
    _, t = make_table(tmp_path, version=version, partitioned=True)
    a, b = data(tmp_path, "a", [1, 2, 3], "x"), data(tmp_path, "b", [4, 5, 6], "y")
    append(t, a, b)
    if version == 3:
        deletes = dv_files(
            str(tmp_path / "t" / "data" / "dv-x.puffin"), {a.file_path: [0]}, ("x",)
        ) + dv_files(str(tmp_path / "t" / "data" / "dv-y.puffin"), {b.file_path: [0]}, ("y",))
    else:
        deletes = [
            write_position_deletes(
                str(tmp_path / "t" / "data" / f"pos-{c}.parquet"), [(f, 0)], (c,)
            )
            for c, f in (("x", a.file_path), ("y", b.file_path))
        ]
    with t.transaction() as tx, tx.update_snapshot().row_delta() as rd:
        for d in deletes:
            rd.add_delete_file(d)
    assert sorted(peer_ids(t)) == [2, 3, 5, 6]
    with t.transaction() as tx, tx.update_snapshot().overwrite() as o:
        o.delete_partitions(lambda f: tuple(f.partition) == ("x",))
        o.append_data_file(data(tmp_path, "c", [7], "x"))
    live = [p for p, _, _ in live_delete_files(t)]
    assert live == ["dv-y.puffin" if version == 3 else "pos-y.parquet"]
    assert sorted(peer_ids(t)) == [5, 6, 7]
    assert t.current_snapshot().summary["removed-delete-files"] == "1"
