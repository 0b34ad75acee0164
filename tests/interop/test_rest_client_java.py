"""frazil's REST catalog client against a Java REST server: ``java/FrazilRestServer.java`` routes
the JDK's HTTP server to the reference's ``CatalogHandlers`` over a HadoopCatalog. frazil creates
namespaces and a partitioned table, writes, evolves the schema, deletes rows (merge-on-read),
creates a branch and a tag, writes to the branch, stages a create-and-write, commits two tables
in one multi-table transaction and reads it all back; then the Java reference's own catalog
(Spark with a HadoopCatalog on the same warehouse, no REST involved) sees the same tables, refs
and rows."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from peers import java_reference_session, peer_missing

from frazil.catalog import load_catalog
from frazil.catalog.rest import RestCatalog
from frazil.exceptions import NoSuchTableError, TableAlreadyExistsError
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.transforms import parse
from frazil.types import DoubleType, LongType, NestedField, StringType

pytestmark = [
    pytest.mark.interop,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

SERVER_SOURCE = Path(__file__).resolve().parent / "java" / "FrazilRestServer.java"
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "category", StringType(), required=False),
    NestedField(3, "v", DoubleType(), required=False),
)
SPEC = PartitionSpec(PartitionField(2, 1000, parse("identity"), "category"))


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("rest-java-wh")


@pytest.fixture(scope="module")
def java_server(warehouse: Path) -> Iterator[str]:
    import java_reference

    try:
        cp = java_reference.program_classpath()
        classes = java_reference.compile_java(SERVER_SOURCE, cp)
        java = java_reference._java_tool("java")
    except java_reference.ReferenceUnavailable as e:
        peer_missing(f"the Java reference is unavailable: {e}")
    proc = subprocess.Popen(
        [
            java,
            "-Xmx512m",
            "-cp",
            os.pathsep.join([str(classes), *cp]),
            "FrazilRestServer",
            str(warehouse),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("PORT "), f"the Java REST server did not start: {line!r}"
        yield f"http://127.0.0.1:{int(line.split()[1])}"
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def catalog(java_server: str) -> Iterator[RestCatalog]:
    cat = load_catalog("java_rest", type="rest", uri=java_server, **{"rest.page-size": "1"})
    assert isinstance(cat, RestCatalog)
    yield cat
    cat.close()


def _rows(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in table.to_pylist())


def _data(ids: list[int], categories: list[str], extra: list[str] | None = None) -> pa.Table:
    cols: dict[str, Any] = {
        "id": pa.array(ids, pa.int64()),
        "category": pa.array(categories, pa.string()),
        "v": pa.array([i / 2 for i in ids], pa.float64()),
    }
    if extra is not None:
        cols["extra"] = pa.array(extra, pa.string())
    return pa.table(cols)


@pytest.fixture(scope="module")
def written(catalog: RestCatalog) -> dict[str, Any]:
    """Everything frazil does through the Java server; what it read back, for Java to match."""
    catalog.create_namespace("db")
    catalog.create_namespace(("db", "inner"))
    catalog.create_namespace("other")
    assert sorted(catalog.list_namespaces()) == [("db",), ("other",)]  # two pages of one
    assert catalog.list_namespaces("db") == [("db", "inner")]
    assert catalog.namespace_exists("db") and not catalog.namespace_exists("nope")

    t = catalog.create_table(
        "db.events",
        SCHEMA,
        partition_spec=SPEC,
        properties={"format-version": "2", "write.delete.mode": "merge-on-read"},
    )
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table("db.events", SCHEMA)
    t.append(_data([1, 2, 3, 4], ["a", "a", "b", "b"]))
    with t.update_schema() as update:
        update.add_column("extra", StringType())
    t.append(_data([5, 6], ["a", "c"], ["x", "y"]))
    t.delete("id = 2")
    t.manage_snapshots().create_tag(t.current_snapshot().snapshot_id, "t1").commit()
    t.manage_snapshots().create_branch(t.current_snapshot().snapshot_id, "dev").commit()
    t.append(_data([7], ["b"], ["z"]), branch="dev")

    # A staged create: the table appears with its first rows in one commit.
    with catalog.create_table_transaction("db.staged", SCHEMA, partition_spec=SPEC) as tx:
        tx.append(_data([10, 11], ["a", "b"]))
    # One multi-table transaction over both tables.
    with catalog.transaction() as mtx:
        mtx.table("db.events").append(_data([8], ["c"], ["w"]))
        mtx.table("db.staged").append(_data([12], ["c"]))

    assert sorted(catalog.list_tables("db")) == [("db", "events"), ("db", "staged")]
    assert catalog.table_exists("db.events") and not catalog.table_exists("db.nope")
    catalog.create_table("db.scratch", SCHEMA)
    catalog.drop_table("db.scratch", purge=True)
    with pytest.raises(NoSuchTableError):
        catalog.load_table("db.scratch")

    events = catalog.load_table("db.events")
    staged = catalog.load_table("db.staged")
    return {
        "main": _rows(events.scan().to_arrow()),
        "dev": _rows(events.scan().use_ref("dev").to_arrow()),
        "t1": _rows(events.scan().use_ref("t1").to_arrow()),
        "staged": _rows(staged.scan().to_arrow()),
        "snapshots": sorted(s.snapshot_id for s in events.snapshots()),
        "staged_snapshots": len(staged.snapshots()),
    }


def test_frazil_reads_its_own_writes_through_java(written: dict[str, Any]) -> None:
    main = [
        (1, "a", 0.5, None),
        (3, "b", 1.5, None),
        (4, "b", 2.0, None),
        (5, "a", 2.5, "x"),
        (6, "c", 3.0, "y"),
        (8, "c", 4.0, "w"),
    ]
    assert written["main"] == main
    assert written["dev"] == sorted([r for r in main if r[0] != 8] + [(7, "b", 3.5, "z")])
    # The tag points at main before the multi-table transaction.
    assert written["t1"] == [r for r in main if r[0] != 8]
    assert written["staged"] == [(10, "a", 5.0), (11, "b", 5.5), (12, "c", 6.0)]
    # The staged create landed as one snapshot, the transaction as a second.
    assert written["staged_snapshots"] == 2


@pytest.fixture(scope="module")
def spark(warehouse: Path, written: dict[str, Any]) -> Any:
    session = java_reference_session(warehouse, **{"spark.sql.catalog.ref.cache-enabled": "false"})
    yield session
    session.stop()


def test_java_catalog_sees_the_same_tables(spark: Any, written: dict[str, Any]) -> None:
    def rows(sql: str) -> list[tuple[Any, ...]]:
        return sorted(tuple(r) for r in spark.sql(sql).collect())

    tables = {r.tableName for r in spark.sql("SHOW TABLES IN ref.db").collect()}
    assert tables == {"events", "staged"}
    assert rows("SELECT id, category, v, extra FROM ref.db.events") == written["main"]
    assert (
        rows("SELECT id, category, v, extra FROM ref.db.events VERSION AS OF 'dev'")
        == (written["dev"])
    )
    assert (
        rows("SELECT id, category, v, extra FROM ref.db.events VERSION AS OF 't1'")
        == (written["t1"])
    )
    assert rows("SELECT id, category, v FROM ref.db.staged") == written["staged"]
    refs = {(r.name, r.type) for r in spark.sql("SELECT * FROM ref.db.events.refs").collect()}
    assert refs == {("main", "BRANCH"), ("dev", "BRANCH"), ("t1", "TAG")}
    snaps = sorted(
        r.snapshot_id for r in spark.sql("SELECT * FROM ref.db.events.snapshots").collect()
    )
    assert snaps == written["snapshots"]
    # The delete was merge-on-read: a position delete file is live in main.
    deletes = spark.sql("SELECT * FROM ref.db.events.delete_files").collect()
    assert len(deletes) == 1 and deletes[0].content == 1
