"""Partition statistics files (``table.compute_partition_statistics``).

Oracles: row counts from the appended data itself, file counts and sizes from the data files on
disk (grouped by their partition directory), and the full computation for the incremental one.
The Java reference's rows are compared in tests/interop/test_statistics_java.py.
"""

from __future__ import annotations

import logging
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from frazil.catalog import load_catalog
from frazil.exceptions import FileMissingError, FileReadError, InvalidArgumentError
from frazil.table import Table, partition_statistics
from frazil.table.partition_statistics import read_partition_statistics


def _data(start: int, stop: int) -> pa.Table:
    ids = list(range(start, stop))
    return pa.table({"id": pa.array(ids, pa.int64()), "cat": pa.array([f"c{i % 3}" for i in ids])})


@pytest.fixture
def catalog(tmp_path):  # type: ignore[no-untyped-def]
    c = load_catalog(
        "ps", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh")
    )
    c.create_namespace("db")
    return c


@pytest.fixture
def table(catalog) -> Table:
    t = catalog.create_table("db.t", schema=_data(0, 1).schema)
    t.update_spec().add_identity("cat").commit()
    return t


def _rows(t: Table) -> list[dict]:
    rows = read_partition_statistics(t)
    assert rows is not None
    return rows.to_pylist()


def _files_on_disk(t: Table) -> dict[str, tuple[int, int]]:
    """Partition value -> (file count, total bytes) of the live data files, from the disk."""
    out: dict[str, tuple[int, int]] = {}
    for path in t.inspect.data_files()["file_path"].to_pylist():
        part = next(p.split("=", 1)[1] for p in path.split("/") if p.startswith("cat="))
        n, size = out.get(part, (0, 0))
        out[part] = (n + 1, size + os.path.getsize(path))
    return out


@pytest.mark.parametrize("version", [1, 2, 3])
def test_full_computation_counts_the_data(catalog, version) -> None:
    table = catalog.create_table(
        "db.t", schema=_data(0, 1).schema, properties={"format-version": str(version)}
    )
    table.update_spec().add_identity("cat").commit()
    assert table.format_version == version
    table.append(_data(0, 30))
    table.append(_data(30, 50))
    f = table.compute_partition_statistics()
    snapshot = table.current_snapshot()
    assert f is not None and f.snapshot_id == snapshot.snapshot_id
    assert table.metadata.partition_statistics == (f,)
    assert f.file_size_in_bytes == os.path.getsize(f.statistics_path)
    assert os.path.basename(f.statistics_path).startswith(f"partition-stats-{f.snapshot_id}-")
    rows = _rows(table)
    on_disk = _files_on_disk(table)
    data = _data(0, 50).group_by("cat").aggregate([("id", "count")]).to_pylist()
    expected_counts = {r["cat"]: r["id_count"] for r in data}
    assert [r["partition"] for r in rows] == [{"cat": c} for c in ("c0", "c1", "c2")]
    for r in rows:
        cat = r["partition"]["cat"]
        assert r["data_record_count"] == expected_counts[cat]
        assert (r["data_file_count"], r["total_data_file_size_in_bytes"]) == on_disk[cat]
        assert r["spec_id"] == table.spec().spec_id
        assert r["position_delete_record_count"] == r["position_delete_file_count"] == 0
        assert r["last_updated_snapshot_id"] == snapshot.snapshot_id
        assert r["last_updated_at"] == snapshot.timestamp_ms
        assert r["total_record_count"] is None
        assert ("dv_count" in r) == (version >= 3)
    # In v3 the delete counts are required columns (the spec's v3 schema).
    schema = pq.read_schema(f.statistics_path)
    assert schema.field("position_delete_record_count").nullable == (version < 3)
    # Computing again for the same snapshot returns the registered file.
    assert table.compute_partition_statistics() == f
    assert len(table.metadata.partition_statistics) == 1


def test_incremental_reads_only_new_manifests_and_equals_the_full_computation(
    table, monkeypatch
) -> None:
    table.append(_data(0, 30))
    first = table.compute_partition_statistics()
    assert first is not None
    table.append(_data(30, 40))
    table.delete("cat = 'c1'")
    table.append(_data(42, 43))  # c0 only
    table = table.refresh()
    after = [s.snapshot_id for s in table.metadata.snapshots[1:]]

    read: list[int] = []
    original = partition_statistics.manifest_entries

    def recording(io, metadata, manifests, columns=None):  # type: ignore[no-untyped-def]
        read.extend(manifests["added_snapshot_id"].to_pylist())
        return original(io, metadata, manifests, columns)

    monkeypatch.setattr(partition_statistics, "manifest_entries", recording)
    incremental = table.compute_partition_statistics()
    assert incremental is not None
    assert read and set(read) <= set(after)
    monkeypatch.undo()
    rows = _rows(table)

    table.transaction().remove_partition_statistics(first.snapshot_id).remove_partition_statistics(
        incremental.snapshot_id
    ).commit_transaction()
    full = table.compute_partition_statistics()
    assert full is not None and full.statistics_path != incremental.statistics_path
    assert _rows(table) == rows
    c1 = next(r for r in rows if r["partition"] == {"cat": "c1"})
    assert c1["data_record_count"] == c1["data_file_count"] == 0  # the partition was emptied
    assert c1["last_updated_snapshot_id"] == after[1]  # by the delete
    on_disk = _files_on_disk(table)
    for r in rows:
        if r["data_file_count"]:
            cat = r["partition"]["cat"]
            assert (r["data_file_count"], r["total_data_file_size_in_bytes"]) == on_disk[cat]


def test_unreadable_earlier_file_falls_back_to_the_full_computation(table, caplog) -> None:
    table.append(_data(0, 30))
    first = table.compute_partition_statistics()
    assert first is not None
    table.append(_data(30, 40))
    with open(first.statistics_path, "wb") as fh:
        fh.write(b"not parquet")
    with caplog.at_level(logging.WARNING, logger="frazil.table.partition_statistics"):
        table.compute_partition_statistics()
    assert first.statistics_path in caplog.text
    assert sum(r["data_record_count"] for r in _rows(table)) == 40


def test_unreadable_file_is_a_frazil_error_naming_it(table) -> None:
    table.append(_data(0, 30))
    f = table.compute_partition_statistics()
    assert f is not None
    with open(f.statistics_path, "wb") as fh:
        fh.write(b"not parquet")
    with pytest.raises(FileReadError, match="partition statistics file") as e:
        read_partition_statistics(table)
    assert f.statistics_path in str(e.value)
    os.remove(f.statistics_path)
    with pytest.raises(FileMissingError) as missing:
        read_partition_statistics(table)
    assert f.statistics_path in str(missing.value)


def test_unpartitioned_and_empty_tables(catalog, table) -> None:
    plain = catalog.create_table("db.plain", schema=_data(0, 1).schema)
    plain.append(_data(0, 3))
    with pytest.raises(InvalidArgumentError, match=r"db\.plain is not partitioned"):
        plain.compute_partition_statistics()
    assert table.compute_partition_statistics() is None  # no snapshot
    with pytest.raises(InvalidArgumentError, match=r"db\.t has no snapshot 7"):
        table.compute_partition_statistics(snapshot_id=7)


def test_expire_removes_partition_statistics_of_expired_snapshots(table) -> None:
    table.append(_data(0, 10))
    old = table.compute_partition_statistics()
    table.append(_data(10, 20))
    new = table.compute_partition_statistics()
    assert old is not None and new is not None
    table.expire_snapshots().expire_snapshot_id(old.snapshot_id).commit()
    assert table.metadata.partition_statistics == (new,)
    assert not os.path.exists(old.statistics_path)
    assert os.path.exists(new.statistics_path)


def test_avro_default_format_writes_avro_with_the_same_rows(catalog, caplog) -> None:
    tables = {}
    for fmt in ("parquet", "avro"):
        t = catalog.create_table(
            f"db.{fmt}", schema=_data(0, 1).schema, properties={"write.format.default": fmt}
        )
        t.update_spec().add_identity("cat").commit()
        t.append(_data(0, 30))
        f = t.compute_partition_statistics()
        assert f is not None and f.statistics_path.endswith(f".{fmt}")
        t.append(_data(30, 40))
        with caplog.at_level(logging.WARNING, logger="frazil.table.partition_statistics"):
            t.compute_partition_statistics()  # incremental, reading the first file
        assert "unreadable" not in caplog.text
        tables[fmt] = t

    def counts(t: Table) -> list[tuple]:
        return [(r["partition"], r["data_record_count"], r["data_file_count"]) for r in _rows(t)]

    assert counts(tables["avro"]) == counts(tables["parquet"])
    assert sum(r[1] for r in counts(tables["avro"])) == 40
