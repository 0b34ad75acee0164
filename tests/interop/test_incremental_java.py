"""Incremental append scans against the Java reference (Iceberg 1.10.2 in PySpark) and PyIceberg.

Spark writes a table through appends, a merge-on-read delete and update, a compaction
(``replace``) and a branch. For every pair of its snapshots, frazil's
``incremental_append_scan`` plans the files of Java's
``newIncrementalAppendScan().fromSnapshotExclusive(a).toSnapshot(b).planFiles()`` (and of
``fromSnapshotInclusive``, of ``toSnapshot`` alone), or refuses the range where Java does; the
same for PyIceberg's ``incremental_append_scan``; and its rows equal Spark's incremental read
(``start-snapshot-id`` / ``end-snapshot-id``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from peers import java_reference_session

from frazil.exceptions import ValidationError
from frazil.io.local import LocalFileIO
from frazil.metadata import TableMetadata
from frazil.table.scan.incremental import IncrementalAppendScan

sys.path.insert(0, str(Path(__file__).resolve().parent))

pytestmark = [
    pytest.mark.interop,
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

TABLE = "ref.db.inc"


def _values(start: int, n: int = 10) -> str:
    cats = ["a", "b", "c"]
    return ", ".join(f"({i}, '{cats[i % 3]}')" for i in range(start, start + n))


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Any:
    warehouse = tmp_path_factory.mktemp("incremental-wh")
    session = java_reference_session(warehouse, **{"spark.sql.catalog.ref.cache-enabled": "false"})
    try:
        session.sql(
            f"CREATE TABLE {TABLE} (id bigint, cat string) USING iceberg PARTITIONED BY (cat) "
            "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', "
            "'write.update.mode'='merge-on-read')"
        )
        session.sql(f"INSERT INTO {TABLE} VALUES {_values(0)}")
        session.sql(f"INSERT INTO {TABLE} VALUES {_values(10)}")
        session.sql(f"DELETE FROM {TABLE} WHERE id IN (3, 12)")
        session.sql(f"INSERT INTO {TABLE} VALUES {_values(20)}")
        session.sql(f"UPDATE {TABLE} SET id = id + 1000 WHERE id = 21")
        session.sql("CALL ref.system.rewrite_data_files(table => 'db.inc', options => "
                    "map('min-input-files', '2'))")  # fmt: skip
        session.sql(f"INSERT INTO {TABLE} VALUES {_values(30)}")
        session.sql(f"ALTER TABLE {TABLE} CREATE BRANCH audit")
        session.sql(f"INSERT INTO {TABLE}.branch_audit VALUES {_values(40)}")
        session.sql(f"INSERT INTO {TABLE} VALUES {_values(50)}")
        yield session
    finally:
        session.stop()


def _norm(path: str) -> str:
    return path.removeprefix("file://").removeprefix("file:")


def _java_table(spark: Any) -> Any:
    tables = spark._jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration())
    return tables.load(f"{spark.conf.get('spark.sql.catalog.ref.warehouse')}/db/inc")


def _metadata(spark: Any) -> tuple[TableMetadata, str]:
    location = _norm(_java_table(spark).operations().current().metadataFileLocation())
    return TableMetadata.from_json(LocalFileIO().read(location), location), location


def _java_files(spark: Any, start: int | None, end: int | None, inclusive: bool) -> Any:
    """Java's planned files, or the exception's class name."""
    from py4j.protocol import Py4JJavaError

    scan = _java_table(spark).newIncrementalAppendScan()
    if start is not None:
        scan = scan.fromSnapshotInclusive(start) if inclusive else scan.fromSnapshotExclusive(start)
    if end is not None:
        scan = scan.toSnapshot(end)
    try:
        tasks = scan.planFiles()
        out = set()
        it = tasks.iterator()
        while it.hasNext():
            t = it.next()
            assert t.deletes().size() == 0
            out.add(_norm(t.file().location()))
        tasks.close()
        return out
    except Py4JJavaError as e:
        return e.java_exception.getClass().getSimpleName()
    except Exception as e:  # PySpark's conversion of the Java exception
        return type(e).__name__


def _frazil_scan(
    md: TableMetadata, start: int | None, end: int | None, inclusive: bool
) -> IncrementalAppendScan:
    return IncrementalAppendScan(
        md, LocalFileIO(), from_snapshot_id=start, from_snapshot_inclusive=inclusive,
        to_snapshot_id=end,
    )  # fmt: skip


def _frazil_files(md: TableMetadata, start: int | None, end: int | None, inclusive: bool) -> Any:
    try:
        plan = _frazil_scan(md, start, end, inclusive).plan_files_arrow()
    except ValidationError:
        return "IllegalArgumentException"
    assert plan.tasks.column("delete_file_references").to_pylist() == [[]] * len(plan)
    return {_norm(p) for p in plan.tasks.column("file_path").to_pylist()}


def test_table_has_every_operation(spark: Any) -> None:
    md, _ = _metadata(spark)
    ops = [s.operation for s in md.snapshots]
    assert {"append", "delete", "overwrite", "replace"} <= set(ops)
    assert md.refs["audit"].snapshot_id != md.current_snapshot().snapshot_id


@pytest.mark.parametrize("inclusive", [False, True])
def test_every_range_equals_java(spark: Any, inclusive: bool) -> None:
    md, _ = _metadata(spark)
    ids: list[int | None] = [None, *(s.snapshot_id for s in md.snapshots)]
    compared = refused = 0
    for start in ids:
        for end in ids:
            if start is None and inclusive:
                continue
            theirs = _java_files(spark, start, end, inclusive)
            ours = _frazil_files(md, start, end, inclusive)
            assert ours == theirs, (start, end, inclusive)
            if isinstance(theirs, str):
                refused += 1
            else:
                compared += 1
    assert compared > 20 and refused > 10


def test_pyiceberg_agrees(spark: Any) -> None:
    from pyiceberg.table import StaticTable

    md, location = _metadata(spark)
    table = StaticTable.from_metadata(location)
    ids = [s.snapshot_id for s in md.snapshots]
    checked = 0
    for start in ids:
        for end in ids:
            try:
                scan = table.incremental_append_scan(
                    from_snapshot_id_exclusive=start, to_snapshot_id_inclusive=end
                )
                theirs: Any = {_norm(t.file.file_path) for t in scan.plan_files()}
            except ValueError:
                theirs = "IllegalArgumentException"
            assert _frazil_files(md, start, end, False) == theirs, (start, end)
            checked += 1
    assert checked == len(ids) ** 2


def test_rows_equal_spark_incremental_read(spark: Any) -> None:
    md, _ = _metadata(spark)
    main = [s.snapshot_id for s in md.snapshots if s.snapshot_id != md.refs["audit"].snapshot_id]
    for start, end in [(main[0], main[-1]), (main[1], main[4]), (main[3], main[-1])]:
        df = (
            spark.read.format("iceberg")
            .option("start-snapshot-id", str(start))
            .option("end-snapshot-id", str(end))
            .load(TABLE)
        )
        theirs = sorted((r.id, r.cat) for r in df.collect())
        scan = _frazil_scan(md, start, end, False)
        table = scan.to_arrow()
        assert sorted(zip(table["id"].to_pylist(), table["cat"].to_pylist(), strict=True)) == theirs
        assert scan.count() == len(theirs)
        picked = scan.filter("cat = 'a'").select("id").to_arrow()
        assert sorted(picked["id"].to_pylist()) == sorted(i for i, c in theirs if c == "a")
