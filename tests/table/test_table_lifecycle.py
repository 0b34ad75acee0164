"""A table's life through the real catalogs (SQLite, PostgreSQL, filesystem): appends of existing
Parquet files, deletes racing appends, a rewrite whose inputs vanished, refs, and expiry that
keeps exactly what the retention policy keeps and deletes only unreachable files."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from frazil.catalog import load_catalog
from frazil.exceptions import ValidationError
from frazil.manifest import read_manifest_list, read_manifests
from frazil.schema import Schema
from frazil.types import LongType, NestedField

KINDS = ["sqlite", "postgresql", "filesystem"]


@pytest.fixture(params=KINDS)
def catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    warehouse = tmp_path / "wh"
    warehouse.mkdir()
    if request.param == "sqlite":
        props = {"type": "sql", "warehouse": str(warehouse)}
    elif request.param == "postgresql":
        props = {
            "type": "sql",
            "uri": request.getfixturevalue("postgres_url"),
            "warehouse": str(warehouse),
        }
    else:
        props = {"type": "filesystem", "warehouse": str(warehouse)}
    cat = load_catalog("life", **props)
    cat.create_namespace("db")
    yield cat
    close = getattr(cat, "close", None)
    if close is not None:
        close()


def _file(directory: Path, name: str, ids: list[int]) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.parquet"
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64())}), path)
    return str(path)


def _live_files(table: Any, snapshot: Any) -> list[str]:
    rows = read_manifest_list(table.io.read(snapshot.manifest_list)).to_pylist()
    datas = table.io.read_many([r["manifest_path"] for r in rows])
    out = []
    for entries in read_manifests(datas, rows, columns=["status", "data_file.file_path"]):
        statuses = entries.column("status").to_pylist()
        paths = entries.column("data_file").combine_chunks().field("file_path").to_pylist()
        out += [p for s, p in zip(statuses, paths, strict=True) if s != 2]
    return sorted(p.removeprefix("file:") for p in out)


def _all_files(root: Path) -> set[str]:
    return {str(Path(d) / f) for d, _, fs in os.walk(root) for f in fs}


def test_delete_racing_an_append_both_land(catalog: Any, tmp_path: Path) -> None:
    schema = Schema(NestedField(1, "id", LongType(), required=False))
    table = catalog.create_table("db.t", schema)
    a = _file(tmp_path / "in", "a", [1])
    b = _file(tmp_path / "in", "b", [2])
    table.add_files([a])
    other = catalog.load_table("db.t")

    # The delete is staged on the old base; the append lands first; the delete retries.
    tx = table.transaction()
    with tx.update_snapshot().delete() as delete:
        delete.delete_data_file(a)
    other.add_files([b])
    tx.commit_transaction()

    table.refresh()
    ops = [s.operation for s in table.snapshots()]
    assert ops == ["append", "append", "delete"]
    head = table.current_snapshot()
    assert head.parent_snapshot_id == table.snapshots()[1].snapshot_id
    assert _live_files(table, head) == [b]


def test_rewrite_of_deleted_files_fails_and_commits_nothing(catalog: Any, tmp_path: Path) -> None:
    schema = Schema(NestedField(1, "id", LongType(), required=False))
    table = catalog.create_table("db.t", schema)
    a = _file(tmp_path / "in", "a", [1])
    table.add_files([a])
    other = catalog.load_table("db.t")
    compacted = _file(tmp_path / "in", "compacted", [1])

    tx = table.transaction()
    from frazil.table.write.add_files import data_files_from_parquet

    (new_file,) = data_files_from_parquet(
        table.io, table.metadata, [compacted], check_duplicate_files=False
    )
    with tx.update_snapshot().replace() as rewrite:
        rewrite.delete_data_file(a)
        rewrite.append_data_file(new_file)
    with other.update_snapshot().delete() as delete:
        delete.delete_data_file(a)
    before = catalog.load_table("db.t").metadata_location
    metadata_files = _all_files(Path(table.location().removeprefix("file:")) / "metadata")

    with pytest.raises(ValidationError, match=r"missing|deleted|no longer"):
        tx.commit_transaction()
    after = catalog.load_table("db.t")
    assert after.metadata_location == before
    assert [s.operation for s in after.snapshots()] == ["append", "delete"]
    # the failed rewrite left none of its own files behind
    assert _all_files(Path(table.location().removeprefix("file:")) / "metadata") <= metadata_files


def test_expiry_keeps_what_the_policy_keeps(catalog: Any, tmp_path: Path) -> None:
    schema = Schema(NestedField(1, "id", LongType(), required=False))
    table = catalog.create_table("db.t", schema)
    files = [_file(tmp_path / "in", f"f{i}", [i]) for i in range(6)]
    for f in files[:3]:
        table.add_files([f])
    tagged = table.current_snapshot()
    with table.manage_snapshots() as ms:
        ms.create_tag(tagged.snapshot_id, "keep-me")
    with table.update_snapshot().delete() as delete:
        delete.delete_data_file(files[0])
        delete.delete_data_file(files[1])
    for f in files[3:]:
        table.add_files([f])
    history = [s.snapshot_id for s in table.snapshots()]
    assert len(history) == 7
    time.sleep(0.01)

    with table.expire_snapshots() as expire:
        expire.expire_older_than(int(time.time() * 1000)).retain_last(2)

    table.refresh()
    kept = [s.snapshot_id for s in table.snapshots()]
    # main's last two snapshots, and the tagged one
    assert kept == sorted([*history[-2:], tagged.snapshot_id], key=history.index)
    assert table.refs()["keep-me"].snapshot_id == tagged.snapshot_id
    for s in table.snapshots():
        for path in _live_files(table, s):
            assert os.path.exists(path), path
    # f0 and f1 are still reachable through the tag; nothing data-wise is unreachable here
    assert _live_files(table, tagged) == sorted(files[:3])
    assert _live_files(table, table.current_snapshot()) == sorted(files[2:])
    # expired manifest lists are gone
    root = Path(table.location().removeprefix("file:")) / "metadata"
    lists = {p for p in _all_files(root) if os.path.basename(p).startswith("snap-")}
    assert {p.removeprefix("file:") for p in (s.manifest_list for s in table.snapshots())} == lists

    # dropping the tag and expiring again removes the deleted data files themselves
    with table.manage_snapshots() as ms:
        ms.remove_tag("keep-me")
    with table.expire_snapshots() as expire:
        # The added files lie outside the table location: deleted only on request.
        expire.expire_older_than(int(time.time() * 1000) + 1).retain_last(1)
        expire.delete_outside_location()
    table.refresh()
    assert [s.snapshot_id for s in table.snapshots()] == [history[-1]]
    assert not os.path.exists(files[0]) and not os.path.exists(files[1])
    assert all(os.path.exists(f) for f in files[2:])


def test_scan_through_the_catalog_and_read_only_static_tables(catalog: Any, tmp_path: Path) -> None:
    from frazil.exceptions import UnsupportedError
    from frazil.table.static import StaticTable

    schema = Schema(NestedField(1, "id", LongType(), required=False))
    table = catalog.create_table("db.t", schema)
    table.append(pa.table({"id": pa.array([3, 1, 2], pa.int64())}))
    first = table.current_snapshot()
    table.append(pa.table({"id": pa.array([10], pa.int64())}))

    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3, 10]
    assert table.scan(row_filter="id >= 3").to_arrow().column("id").to_pylist() in (
        [3, 10],
        [10, 3],
    )
    assert table.scan(snapshot_id=first.snapshot_id).count() == 3
    assert table.snapshot_as_of_timestamp(first.timestamp_ms).snapshot_id == first.snapshot_id

    static = StaticTable.from_metadata(table.metadata_location)
    assert static.scan().count() == 4
    with pytest.raises(UnsupportedError, match="read-only"):
        static.update_schema()
    with pytest.raises(UnsupportedError, match="read-only"):
        static.transaction()
