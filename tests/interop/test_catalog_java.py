"""Tables frazil creates and commits through its filesystem catalog load in the Java reference's
Hadoop catalog (Iceberg 1.10.2 in Spark 3.5) with the same snapshots, schemas, specs, refs and
data files, and Java's own commits on top of them load back in frazil."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from peers import java_reference_session

from frazil.catalog import load_catalog
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.transforms import parse
from frazil.types import LongType, NestedField, StringType, TimestampType

pytestmark = [
    pytest.mark.interop,
    # py4j leaves its sockets to the garbage collector
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "category", StringType(), required=False),
    NestedField(3, "ts", TimestampType(), required=False),
)


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("catalog-wh")


@pytest.fixture(scope="module")
def spark(warehouse: Path) -> Any:
    session = java_reference_session(warehouse, **{"spark.sql.catalog.ref.cache-enabled": "false"})
    yield session
    session.stop()


def _parquet(path: Path, ids: list[int], category: str, day: dt.date) -> str:
    ts = [dt.datetime.combine(day, dt.time(h % 24, 30)) for h in range(len(ids))]
    table = pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "category": pa.array([category] * len(ids)),
            "ts": pa.array(ts, pa.timestamp("us")),
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return str(path)


def _java_table(spark: Any, name: str) -> Any:
    """The table as Java's own HadoopCatalog loads it from the warehouse (no caching)."""
    jvm = spark._jvm
    catalog = jvm.org.apache.iceberg.hadoop.HadoopCatalog(
        spark._jsc.hadoopConfiguration(), spark.conf.get("spark.sql.catalog.ref.warehouse")
    )
    return catalog.loadTable(jvm.org.apache.iceberg.catalog.TableIdentifier.parse(f"db.{name}"))


def _java_files(spark: Any, name: str, ref: str | None = None) -> list[str]:
    suffix = f" VERSION AS OF '{ref}'" if ref else ""
    rows = spark.sql(f"SELECT file_path FROM ref.db.{name}.files{suffix}").collect()
    return sorted(r[0].removeprefix("file:") for r in rows)


def _frazil_files(table: Any, snapshot: Any) -> list[str]:
    from frazil.manifest import read_manifest_list, read_manifests

    rows = read_manifest_list(table.io.read(snapshot.manifest_list)).to_pylist()
    datas = table.io.read_many([r["manifest_path"] for r in rows])
    out = []
    for entries in read_manifests(datas, rows, columns=["status", "data_file.file_path"]):
        for status, f in zip(
            entries.column("status").to_pylist(),
            entries.column("data_file").to_pylist(),
            strict=True,
        ):
            if status != 2:
                out.append(f["file_path"].removeprefix("file:"))
    return sorted(out)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_java_reads_a_table_frazil_committed(spark: Any, warehouse: Path, version: int) -> None:
    catalog = load_catalog("fs", type="filesystem", warehouse=str(warehouse))
    catalog.create_namespace_if_not_exists("db")
    name = f"fz{version}"
    table = catalog.create_table(
        f"db.{name}",
        SCHEMA,
        partition_spec=PartitionSpec(PartitionField(3, 1000, parse("day"), "ts_day")),
        properties={"format-version": str(version)},
    )
    data = warehouse / "incoming" / name
    day1, day2 = dt.date(2024, 5, 1), dt.date(2024, 5, 2)
    f1 = _parquet(data / "a.parquet", [1, 2, 3], "x", day1)
    f2 = _parquet(data / "b.parquet", [4, 5], "y", day2)
    f3 = _parquet(data / "c.parquet", [6], "x", day2)

    table.add_files([f1, f2])
    first = table.current_snapshot()
    assert first is not None
    table.add_files([f3])
    with table.manage_snapshots() as ms:
        ms.create_tag(first.snapshot_id, "first")
    with table.update_snapshot().delete() as delete:
        delete.delete_data_file(f2)
    with table.transaction() as tx:
        tx.set_properties(owner="frazil")
        with tx.update_schema() as update:
            update.add_column("note", StringType())

    # Java sees the same history, refs, schema, spec and files.
    jt = _java_table(spark, name)
    assert int(jt.currentSnapshot().snapshotId()) == table.current_snapshot().snapshot_id
    java_snapshots = {
        int(s.snapshotId()): (
            None if s.parentId() is None else int(s.parentId()),
            str(s.operation()),
            int(s.sequenceNumber()),
        )
        for s in jt.snapshots()
    }
    assert java_snapshots == {
        s.snapshot_id: (s.parent_snapshot_id, s.operation, s.sequence_number)
        for s in table.snapshots()
    }
    assert [c.name() for c in jt.schema().columns()] == ["id", "category", "ts", "note"]
    assert str(jt.properties().get("owner")) == "frazil"
    assert int(jt.refs().get("first").snapshotId()) == first.snapshot_id
    assert _java_files(spark, name) == _frazil_files(table, table.current_snapshot())
    assert _java_files(spark, name) == sorted([f1, f3])
    assert _java_files(spark, name, "first") == sorted([f1, f2])

    rows = spark.sql(f"SELECT id, category, note FROM ref.db.{name} ORDER BY id").collect()
    assert [tuple(r) for r in rows] == [(i, "x", None) for i in (1, 2, 3, 6)]
    old = spark.sql(f"SELECT id FROM ref.db.{name} VERSION AS OF 'first' ORDER BY id").collect()
    assert [r[0] for r in old] == [1, 2, 3, 4, 5]

    # Java commits on top of frazil's version, and frazil follows.
    spark.sql(
        f"INSERT INTO ref.db.{name} VALUES (7, 'z', TIMESTAMP '2024-05-03 01:00:00', 'java')"
    ).collect()
    head = table.current_snapshot().snapshot_id
    table.refresh()
    java_head = table.current_snapshot()
    assert java_head.parent_snapshot_id == head
    assert java_head.operation == "append"
    if version >= 3:
        assert table.metadata.next_row_id == java_head.first_row_id + java_head.added_rows
    assert len(_frazil_files(table, java_head)) == 3
