"""Maintenance against the Java reference (Iceberg 1.10.2 through Spark, a Hadoop catalog over
the warehouse frazil's filesystem catalog writes):

* the orphan files Java's ``remove_orphan_files`` procedure finds (dry run) are frazil's;
* after frazil's ``rewrite_manifests`` Java reads the same rows and entries (sequence numbers,
  row ids, file sequence numbers) as before;
* Java's changelog (the ``changes`` metadata table, an ``IncrementalChangelogScan``) equals
  frazil's ``changelog_scan`` rows, and both refuse ranges with delete files.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from peers import java_reference_session

from frazil.catalog import load_catalog
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.table import Table
from frazil.transforms import parse as parse_transform
from frazil.types import LongType, NestedField, StringType

pytestmark = [
    pytest.mark.interop,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "s", StringType()),
    NestedField(3, "p", LongType()),
)
DAY_S = 24 * 3600


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("maint-java")


@pytest.fixture(scope="module")
def spark(warehouse: Path) -> Any:
    session = java_reference_session(warehouse, **{"spark.sql.catalog.ref.cache-enabled": "false"})
    yield session
    session.stop()


@pytest.fixture(scope="module")
def catalog(warehouse: Path) -> Any:
    cat = load_catalog("fs", type="filesystem", warehouse=str(warehouse))
    cat.create_namespace_if_not_exists("db")
    return cat


def _rows(lo: int, hi: int) -> Any:
    import pyarrow as pa

    ids = list(range(lo, hi))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "s": [f"s{i}" for i in ids],
            "p": pa.array([i % 3 for i in ids], pa.int64()),
        }
    )


def _make(catalog: Any, name: str, version: int, **props: str) -> Table:
    return catalog.create_table(
        f"db.{name}",
        SCHEMA,
        partition_spec=PartitionSpec(PartitionField(3, 1000, parse_transform("identity"), "p")),
        properties={"format-version": str(version), "write.delete.mode": "merge-on-read", **props},
    )


def _local(path: str) -> str:
    return path.removeprefix("file://").removeprefix("file:")


def _age(root: str, days: float) -> None:
    then = time.time() - days * DAY_S
    for d, _, files in os.walk(root):
        for f in files:
            os.utime(os.path.join(d, f), (then, then))


# --------------------------------------------------------------------------------------------
# orphan files


@pytest.mark.parametrize("version", [2, 3])
def test_orphan_files_match_java(spark: Any, catalog: Any, version: int) -> None:
    name = f"orphans_v{version}"
    t = _make(catalog, name, version)
    for i in range(3):
        t.append(_rows(i * 20, (i + 1) * 20))
    t.delete("id < 5")
    t.delete("p = 0")  # whole files: only DELETED entries name them once their snapshots expire
    t.expire_snapshots().expire_older_than(int(time.time() * 1000) + 1).clean_expired_files(
        False
    ).commit()
    loc = t.location()
    # statistics files the metadata names are reachable (Java's statisticsFilesLocations)
    from frazil.metadata import PartitionStatisticsFile, StatisticsFile
    from frazil.table.update.updates import SetPartitionStatisticsUpdate, SetStatisticsUpdate

    head = t.current_snapshot()
    assert head is not None
    stats, pstats = f"{loc}/metadata/stats-1.puffin", f"{loc}/metadata/partition-stats-1.parquet"
    Path(stats).write_bytes(b"x")
    Path(pstats).write_bytes(b"x")
    with t.transaction() as tx:
        tx._stage_static(
            [
                SetStatisticsUpdate(StatisticsFile(head.snapshot_id, stats, 1, 0)),
                SetPartitionStatisticsUpdate(PartitionStatisticsFile(head.snapshot_id, pstats, 1)),
            ],
            [],
        )
    for rel in ("data/p=0/stray.parquet", "metadata/stray-m0.avro", "junk/x.bin"):
        os.makedirs(os.path.dirname(f"{loc}/{rel}"), exist_ok=True)
        Path(f"{loc}/{rel}").write_bytes(b"x")
    _age(loc, 4)
    Path(f"{loc}/data/p=1/recent.parquet").write_bytes(b"x")  # new: kept by both

    cutoff = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(time.time() - 3 * DAY_S))
    java = spark.sql(
        f"CALL ref.system.remove_orphan_files(table => 'db.{name}', "
        f"older_than => TIMESTAMP '{cutoff}', dry_run => true)"
    ).collect()
    java_orphans = sorted(_local(r[0]) for r in java)
    t = catalog.load_table(f"db.{name}")
    ours = t.remove_orphan_files(dry_run=True)
    assert ours == java_orphans
    assert f"{loc}/junk/x.bin" in ours and f"{loc}/data/p=0/stray.parquet" in ours
    assert any("snap-" in p for p in ours)  # the expired snapshots' manifest lists
    assert any("/data/p=0/" in p for p in ours)  # the deleted files
    assert stats not in ours and pstats not in ours

    # after frazil deletes them, Java reads the table and finds nothing more
    before = sorted(tuple(r) for r in spark.sql(f"SELECT * FROM ref.db.{name}").collect())
    assert t.remove_orphan_files() == ours
    after = sorted(tuple(r) for r in spark.sql(f"SELECT * FROM ref.db.{name}").collect())
    assert after == before and len(after) == 55 - 18
    again = spark.sql(
        f"CALL ref.system.remove_orphan_files(table => 'db.{name}', "
        f"older_than => TIMESTAMP '{cutoff}', dry_run => true)"
    ).collect()
    assert again == []


# --------------------------------------------------------------------------------------------
# rewrite manifests


def _java_state(spark: Any, name: str, version: int) -> tuple[list[Any], list[Any]]:
    lineage = ", _row_id, _last_updated_sequence_number" if version >= 3 else ""
    rows = spark.sql(f"SELECT id, s, p{lineage} FROM ref.db.{name} ORDER BY id").collect()
    entries = spark.sql(
        "SELECT data_file.file_path, data_file.content, snapshot_id, sequence_number, "
        f"file_sequence_number FROM ref.db.{name}.entries WHERE status < 2"
    ).collect()
    return [tuple(r) for r in rows], sorted(tuple(r) for r in entries)


@pytest.mark.parametrize("version", [2, 3])
def test_java_reads_rewritten_manifests(spark: Any, catalog: Any, version: int) -> None:
    name = f"rewrite_manifests_v{version}"
    t = _make(catalog, name, version)
    for i in range(6):
        t.append(_rows(i * 20, (i + 1) * 20))
    t.delete("id < 7")
    t.delete("id > 115")
    rows_before, entries_before = _java_state(spark, name, version)
    data_manifests = spark.sql(
        f"SELECT count(*) FROM ref.db.{name}.manifests WHERE content = 0"
    ).collect()[0][0]
    assert data_manifests == 6

    result = t.rewrite_manifests(target_size_bytes=1)  # one manifest per entry at most
    assert len(result.rewritten_manifests) == 8  # six data manifests, two delete manifests
    rows_after, entries_after = _java_state(spark, name, version)
    assert rows_after == rows_before
    assert entries_after == entries_before
    head = spark.sql(
        f"SELECT operation, summary['manifests-replaced'] FROM ref.db.{name}.snapshots "
        "ORDER BY committed_at DESC LIMIT 1"
    ).collect()[0]
    assert head[0] == "replace"


@pytest.mark.parametrize("version", [2, 3])
def test_frazil_reads_java_rewritten_manifests(spark: Any, catalog: Any, version: int) -> None:
    name = f"java_rewrites_v{version}"
    twin = _make(catalog, f"frazil_rewrites_v{version}", version)
    t = _make(catalog, name, version)
    for table in (t, twin):
        for i in range(4):
            table.append(_rows(i * 20, (i + 1) * 20))
        table.delete("id < 7")
    before = t.scan().to_arrow().sort_by("id")
    java = spark.sql(f"CALL ref.system.rewrite_manifests('db.{name}')").collect()
    t = catalog.load_table(f"db.{name}")
    snap = t.current_snapshot()
    assert snap is not None and snap.summary is not None
    assert snap.summary["operation"] == "replace"
    assert t.scan().to_arrow().sort_by("id") == before
    # frazil's rewrite of the same table makes the same manifests and summary as Java's
    # (Java's Spark action hands core finished manifests: it counts no entries processed)
    ours = twin.rewrite_manifests()
    assert [tuple(r) for r in java] == [(len(ours.rewritten_manifests), len(ours.added_manifests))]
    mine = twin.current_snapshot()
    assert mine is not None and mine.summary is not None
    skip = {"entries-processed", "total-files-size", "engine-version", "app-id", "engine-name"}
    skip.add("iceberg-version")
    assert {k: v for k, v in mine.summary.items() if k not in skip} == {
        k: v for k, v in snap.summary.items() if k not in skip
    }
    # and frazil can rewrite Java's manifests again, Java reading the result
    rows_before, entries_before = _java_state(spark, name, version)
    t.rewrite_manifests(target_size_bytes=1)
    assert _java_state(spark, name, version) == (rows_before, entries_before)


# --------------------------------------------------------------------------------------------
# changelog


def _java_table(spark: Any, name: str) -> Any:
    jvm = spark._jvm
    catalog = jvm.org.apache.iceberg.hadoop.HadoopCatalog(
        spark._jsc.hadoopConfiguration(), spark.conf.get("spark.sql.catalog.ref.warehouse")
    )
    return catalog.loadTable(jvm.org.apache.iceberg.catalog.TableIdentifier.parse(f"db.{name}"))


def _java_tasks(spark: Any, name: str, start: int | None, end: int | None) -> list[Any]:
    scan = _java_table(spark, name).newIncrementalChangelogScan()
    if start is not None:
        scan = scan.fromSnapshotExclusive(start)
    if end is not None:
        scan = scan.toSnapshot(end)
    it = scan.planFiles().iterator()
    out = []
    while it.hasNext():
        task = it.next()
        out.append(
            (
                str(task.operation().toString()),
                int(task.changeOrdinal()),
                int(task.commitSnapshotId()),
                _local(str(task.file().location())),
            )
        )
    return sorted(out)


def _java_changes(spark: Any, name: str, start: int | None, end: int | None) -> list[Any]:
    reader = spark.read.format("iceberg")
    if start is not None:
        reader = reader.option("start-snapshot-id", str(start))
    if end is not None:
        reader = reader.option("end-snapshot-id", str(end))
    df = reader.load(f"ref.db.{name}.changes")
    cols = ["id", "s", "p", "_change_type", "_change_ordinal", "_commit_snapshot_id"]
    return sorted(tuple(r) for r in df.select(*cols).collect())


@pytest.mark.parametrize("version", [1, 2, 3])
def test_changelog_matches_java(spark: Any, catalog: Any, version: int) -> None:
    name = f"changelog_v{version}"
    t = _make(catalog, name, version, **{"write.delete.mode": "copy-on-write"})
    t.append(_rows(0, 20))
    t.append(_rows(20, 40))
    t.delete("id < 5")
    t.overwrite(_rows(100, 104), "p = 2")
    t.rewrite_data_files(min_input_files=1)
    t.append(_rows(200, 203))
    snaps = [s.snapshot_id for s in t.snapshots()]
    ranges = [(None, None), (snaps[0], None), (snaps[1], snaps[3]), (None, snaps[2])]
    for start, end in ranges:
        scan = t.changelog_scan(start, end)
        ours = sorted(
            (task.operation, task.change_ordinal, task.commit_snapshot_id, task.file.file_path)
            for task in scan.plan_files()
        )
        assert ours == _java_tasks(spark, name, start, end)
        rows = scan.to_arrow().select(
            ["id", "s", "p", "_change_type", "_change_ordinal", "_commit_snapshot_id"]
        )
        assert sorted(tuple(r.values()) for r in rows.to_pylist()) == _java_changes(
            spark, name, start, end
        )
    # a row filter: Spark filters the same changes
    start, end = snaps[0], None
    rows = t.changelog_scan(start, end, row_filter="p = 1 AND id > 10").to_arrow()
    ours_filtered = sorted(
        tuple(r.values())
        for r in rows.select(
            ["id", "s", "p", "_change_type", "_change_ordinal", "_commit_snapshot_id"]
        ).to_pylist()
    )
    java_filtered = [r for r in _java_changes(spark, name, start, end) if r[2] == 1 and r[0] > 10]
    assert ours_filtered == java_filtered and java_filtered


def test_changelog_refuses_delete_files_like_java(spark: Any, catalog: Any) -> None:
    from frazil.exceptions import UnsupportedError

    name = "changelog_mor"
    t = _make(catalog, name, 2)
    t.append(_rows(0, 20))
    t.delete("id < 5")
    # PySpark converts Java's UnsupportedOperationException into its own exception class
    with pytest.raises(Exception, match="Delete files are currently not supported"):
        _java_tasks(spark, name, None, None)
    with pytest.raises(UnsupportedError, match="delete files are currently not supported"):
        t.changelog_scan().plan_files()


# --------------------------------------------------------------------------------------------
# position deletes into deletion vectors


def _java_planned_deletes(spark: Any, name: str) -> dict[str, list[tuple[str, str]]]:
    it = _java_table(spark, name).newScan().planFiles().iterator()
    out = {}
    while it.hasNext():
        task = it.next()
        out[_local(str(task.file().location()))] = sorted(
            (_local(str(d.location())), str(d.format().toString())) for d in task.deletes()
        )
    return out


@pytest.mark.parametrize("granularity", ["partition", "file"])
def test_java_reads_rewritten_position_deletes(spark: Any, catalog: Any, granularity: str) -> None:
    name = f"pos_to_dv_{granularity}"
    spark.sql(
        f"CREATE TABLE ref.db.{name} (id bigint, s string, p bigint) USING iceberg "
        "PARTITIONED BY (p) TBLPROPERTIES ('format-version'='2', "
        "'write.delete.mode'='merge-on-read', "
        f"'write.delete.granularity'='{granularity}')"
    )
    for lo in (0, 30):
        spark.sql(
            f"INSERT INTO ref.db.{name} SELECT id, concat('s', id), id % 3 "
            f"FROM range({lo}, {lo + 30}) ORDER BY id"
        )
    spark.sql(f"DELETE FROM ref.db.{name} WHERE id < 8")
    spark.sql(f"DELETE FROM ref.db.{name} WHERE id BETWEEN 25 AND 40")
    before = sorted(tuple(r) for r in spark.sql(f"SELECT * FROM ref.db.{name}").collect())
    old = _java_planned_deletes(spark, name)
    assert any(old.values())
    if granularity == "partition":  # (file-scoped ones Java merges into one per data file)
        assert any(len(d) > 1 for d in old.values())  # two position delete files for one file

    t = catalog.load_table(f"db.{name}")
    t.transaction().upgrade_table_version(3).commit_transaction()
    t.rewrite_position_deletes()

    after = sorted(tuple(r) for r in spark.sql(f"SELECT * FROM ref.db.{name}").collect())
    assert after == before and len(after) == 60 - 8 - 16
    planned = _java_planned_deletes(spark, name)
    assert {p for p, d in planned.items() if d} == {p for p, d in old.items() if d}
    for deletes in planned.values():
        assert len(deletes) <= 1 and all(fmt == "PUFFIN" for _, fmt in deletes)
    # and Java's own row-level writes keep working on top (its DVs merge with frazil's)
    spark.sql(f"DELETE FROM ref.db.{name} WHERE id = 9")
    assert len(spark.sql(f"SELECT * FROM ref.db.{name}").collect()) == len(after) - 1
    t = catalog.load_table(f"db.{name}")
    assert t.scan().to_arrow().num_rows == len(after) - 1
