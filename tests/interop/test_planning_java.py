"""Scan planning against the Java reference (Iceberg 1.10.2 in PySpark).

Spark writes tables partitioned by identity, bucket, truncate, day and hour, v2 tables with
position deletes (merge-on-read), a v3 table with deletion vectors and a table whose partition
spec evolved. For a set of filters, frazil's planned tasks (data file and attached delete files)
must equal ``table.newScan().filter(expr).planFiles()`` of the Java API, must include every file
that holds a row matching the filter (Spark's ``_file`` of the matching rows), and must equal
PyIceberg's ``plan_files()`` where PyIceberg reads the table.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from peers import java_reference_session

from frazil.expressions import parse, to_json
from frazil.io.local import LocalFileIO
from frazil.metadata import TableMetadata
from frazil.table.scan.plan import PlannedFiles, plan_files

sys.path.insert(0, str(Path(__file__).resolve().parent))

pytestmark = [
    pytest.mark.interop,
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

COLUMNS = "id bigint, cat string, ts timestamp, d double"
TABLES = {
    "pid": ("2", "PARTITIONED BY (cat)"),
    "pbucket": ("2", "PARTITIONED BY (bucket(4, id), truncate(2, cat))"),
    "pday": ("2", "PARTITIONED BY (days(ts))"),
    "phour": ("2", "PARTITIONED BY (hours(ts))"),
    "pdv": ("3", "PARTITIONED BY (cat)"),
    "pevo": ("2", "PARTITIONED BY (cat)"),
}

FILTERS = [
    "id < 5",
    "id >= 50",
    "id = 7",
    "cat = 'b'",
    "cat IN ('a', 'cc')",
    "NOT (cat = 'a')",
    "ts >= '2024-01-03T00:00:00+00:00'",
    "ts < '2024-01-02T05:00:00+00:00' AND id > 10",
    "d > 0.5",
    "cat IS NULL",
    "id > 1000 OR cat = 'cc'",
]


def _rows(batch: int) -> str:
    cats = ["a", "b", "cc", "bb"]
    vals = []
    for i in range(batch * 20, batch * 20 + 20):
        cat = "NULL" if i % 17 == 0 else f"'{cats[i % 4]}'"
        ts = f"TIMESTAMP '2024-01-0{1 + i % 4} {i % 3 * 4:02d}:00:00'"
        vals.append(f"({i}, {cat}, {ts}, {(i % 10) / 10})")
    return ", ".join(vals)


def _create(spark: Any) -> None:
    for name, (version, partitioning) in TABLES.items():
        t = f"ref.db.{name}"
        spark.sql(
            f"CREATE TABLE {t} ({COLUMNS}) USING iceberg {partitioning} TBLPROPERTIES "
            f"('format-version'='{version}', 'write.delete.mode'='merge-on-read', "
            "'write.update.mode'='merge-on-read')"
        )
        for b in range(3):
            spark.sql(f"INSERT INTO {t} VALUES {_rows(b)}")
        if name == "pevo":
            spark.sql(f"ALTER TABLE {t} ADD PARTITION FIELD days(ts)")
            spark.sql(f"ALTER TABLE {t} DROP PARTITION FIELD cat")
            spark.sql(f"INSERT INTO {t} VALUES {_rows(3)}")
        spark.sql(f"DELETE FROM {t} WHERE id IN (3, 22, 41)")
        spark.sql(f"INSERT INTO {t} VALUES {_rows(4)}")
        spark.sql(f"DELETE FROM {t} WHERE id = 85 OR id = 5")


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Any:
    warehouse = tmp_path_factory.mktemp("planning-wh")
    session = java_reference_session(warehouse, **{"spark.sql.catalog.ref.cache-enabled": "false"})
    try:
        _create(session)
        yield session
    finally:
        session.stop()


def _norm(path: str) -> str:
    return path.removeprefix("file://").removeprefix("file:")


def _java_table(spark: Any, name: str) -> Any:
    jvm = spark._jvm
    tables = jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration())
    return tables.load(f"{spark.conf.get('spark.sql.catalog.ref.warehouse')}/db/{name}")


def _java_tasks(spark: Any, name: str, expr: str) -> set[tuple[str, frozenset[str]]]:
    jvm = spark._jvm
    ice = jvm.org.apache.iceberg.expressions
    if expr == "d > 0.5":
        # the legacy JSON carries this double as a string, which Java's binder refuses
        filt = ice.Expressions.greaterThan("d", 0.5)
    else:
        filt = ice.ExpressionParser.fromJson(json.dumps(to_json(parse(expr), legacy=True)))
    tasks = _java_table(spark, name).newScan().filter(filt).planFiles()
    out = set()
    it = tasks.iterator()
    while it.hasNext():
        t = it.next()
        deletes = frozenset(_norm(d.location()) for d in t.deletes())
        out.add((_norm(t.file().location()), deletes))
    tasks.close()
    return out


def _metadata_location(spark: Any, name: str) -> str:
    ops = _java_table(spark, name).operations()
    return _norm(ops.current().metadataFileLocation())


def _frazil_plan(spark: Any, name: str, expr: str) -> PlannedFiles:
    io = LocalFileIO()
    location = _metadata_location(spark, name)
    meta = TableMetadata.from_json(io.read(location), location)
    return plan_files(io, meta, meta.current_snapshot(), parse(expr), True, threads=2)


def _task_set(p: PlannedFiles) -> set[tuple[str, frozenset[str]]]:
    deletes = [_norm(f.file_path) for f in p.delete_files]
    out = set()
    for m in p.data:
        paths = m.entries.column("data_file").combine_chunks().field("file_path").to_pylist()
        for path, ds in zip(paths, m.deletes.to_pylist(), strict=True):
            out.add((_norm(path), frozenset(deletes[i] for i in ds)))
    return out


@pytest.mark.parametrize("name", list(TABLES))
def test_tables_have_deletes(spark: Any, name: str) -> None:
    p = _frazil_plan(spark, name, "id >= 0")
    assert p.num_delete_files > 0
    if name == "pdv":
        assert {f.file_format for f in p.delete_files} == {"PUFFIN"}


@pytest.mark.parametrize("expr", FILTERS)
@pytest.mark.parametrize("name", list(TABLES))
def test_planned_tasks_equal_java(spark: Any, name: str, expr: str) -> None:
    ours = _task_set(_frazil_plan(spark, name, expr))
    assert ours == _java_tasks(spark, name, expr)
    matching = {
        _norm(r[0])
        for r in spark.sql(
            f"SELECT DISTINCT _file FROM ref.db.{name} WHERE {_spark_sql(expr)}"
        ).collect()
    }
    assert matching <= {path for path, _ in ours}


def _spark_sql(expr: str) -> str:
    return re.sub(r"'(\d{4}-\d\d-\d\d)T([\d:]+)\+00:00'", r"TIMESTAMP '\1 \2'", expr)


# Not "pdv": PyIceberg 0.12's DataFile has no referenced_data_file, so it scopes deletion
# vectors by partition and cannot attach them to their data file (Java and frazil agree on that
# table, see test_planned_tasks_equal_java). Left out rather than skipped, so that a normal run
# reports no skips; a table PyIceberg cannot read or plan fails the test.
@pytest.mark.parametrize("name", [name for name in TABLES if name != "pdv"])
def test_planned_tasks_equal_pyiceberg(spark: Any, name: str) -> None:
    from pyiceberg.expressions import parser as pyi_parser
    from pyiceberg.table import StaticTable

    table = StaticTable.from_metadata(_metadata_location(spark, name))
    for expr in FILTERS:
        if "ts" in expr:
            continue  # PyIceberg's parser reads timestamp strings differently
        theirs = {
            (_norm(t.file.file_path), frozenset(_norm(d.file_path) for d in t.delete_files))
            for t in table.scan(row_filter=pyi_parser.parse(expr)).plan_files()
        }
        assert _task_set(_frazil_plan(spark, name, expr)) == theirs, expr
