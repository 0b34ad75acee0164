"""Must show: the demo's table, read by the Java reference (Spark 3.5 with Iceberg 1.10.2),
returns the same rows as frazil's reader.

The demo runs (20k events) in the reference's own Spark session with the filesystem catalog, so
its warehouse is the layout Java's Hadoop catalog ``ref`` reads: v3, deletion vectors, an
evolved schema and partition spec, a tag. The default demo uses the SQL catalog; that table is
read by Java from its metadata file (``HadoopTables`` loads a ``*.metadata.json`` path as a
static table).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from peers import peer_missing

from frazil import demo

sys.path.insert(0, str(Path(__file__).resolve().parent))
import java_reference

pytestmark = [
    pytest.mark.interop,
    pytest.mark.spark,
    # PySpark leaves sockets of its py4j/collect plumbing to the garbage collector
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

ROWS = 20_000


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    warehouse = tmp_path_factory.mktemp("java-demo")
    from pyspark import SparkContext

    if SparkContext._jvm is not None:
        # Spark's JVM outlives its sessions: one started without the Iceberg jars cannot load
        # them later. Look the class up as Spark does (the context class loader holds
        # `spark.jars`; py4j's plain Class.forName only sees the JVM's own class path).
        try:
            SparkContext._jvm.org.apache.spark.util.Utils.classForName(
                "org.apache.iceberg.spark.SparkCatalog", True, False
            )
        except Exception:
            peer_missing("this process already runs a Spark JVM without the Iceberg runtime")
    try:
        session = java_reference.reference_session(str(warehouse))
    except java_reference.ReferenceUnavailable as e:
        peer_missing(str(e))
    yield session, warehouse
    session.stop()


def _run(spark, warehouse, catalog_type: str) -> tuple[demo.DemoOptions, demo.DemoSummary]:
    from rich.console import Console

    options = demo.DemoOptions(warehouse=str(warehouse), rows=ROWS, catalog_type=catalog_type)
    console = Console(file=io.StringIO(), width=200, color_system=None)
    return options, demo.run(options, console=console, spark=spark)


@pytest.fixture(scope="module")
def filesystem_run(spark):
    session, warehouse = spark
    return _run(session, warehouse, "filesystem")


def _frazil(session, options: demo.DemoOptions, **kwargs):
    import frazil.spark
    from frazil.catalog import load_catalog

    catalog = load_catalog("demo", type=options.catalog_type, warehouse=options.warehouse)
    return frazil.spark.read(session, options.identifier, catalog, **kwargs)


def _same_rows(left, right) -> None:
    columns = left.columns
    assert sorted(columns) == sorted(right.columns)
    right = right.select(*columns)
    assert [f.dataType for f in left.schema] == [f.dataType for f in right.schema]
    assert left.count() == right.count()
    assert left.exceptAll(right).count() == 0
    assert right.exceptAll(left).count() == 0


def test_java_reads_the_demo_table(spark, filesystem_run) -> None:
    session, _ = spark
    options, s = filesystem_run
    java = session.table(f"ref.{options.identifier}")
    ours = _frazil(session, options)
    assert java.count() == s.rows_read == s.rows_written - s.rows_deleted
    _same_rows(java, ours)


def test_java_sees_the_same_history(spark, filesystem_run) -> None:
    session, _ = spark
    options, s = filesystem_run
    name = f"ref.{options.identifier}"
    snapshots = session.sql(
        f"SELECT snapshot_id, operation FROM {name}.snapshots ORDER BY committed_at"
    ).collect()
    assert [(r.snapshot_id, r.operation) for r in snapshots] == [
        (x["snapshot_id"], x["operation"]) for x in s.snapshots
    ]
    # the deletion vectors, as Java lists them
    dvs = session.sql(
        f"SELECT file_path, record_count FROM {name}.delete_files WHERE file_format = 'PUFFIN'"
    ).collect()
    assert len(dvs) == sum(d.dvs for d in s.dv_files)
    assert sum(r.record_count for r in dvs) == s.rows_deleted
    # both partition specs have live files
    specs = session.sql(f"SELECT spec_id, count(*) AS n FROM {name}.data_files GROUP BY spec_id")
    assert {r.spec_id: r.n for r in specs.collect()} == s.data_files_by_spec


def test_java_time_travels_to_the_same_rows(spark, filesystem_run) -> None:
    session, _ = spark
    options, s = filesystem_run
    name = f"ref.{options.identifier}"
    tag = session.sql(f"SELECT * FROM {name} VERSION AS OF '{demo.TAG}'")
    _same_rows(tag, _frazil(session, options, ref=demo.TAG))
    first = s.batches[0].snapshot_id
    old = session.sql(f"SELECT * FROM {name} VERSION AS OF {first}")
    _same_rows(old, _frazil(session, options, snapshot_id=first))
    assert [tag.count(), old.count()] == [t.expected for t in s.time_travel]


def test_java_filters_give_the_same_rows(spark, filesystem_run) -> None:
    session, _ = spark
    options, s = filesystem_run
    java = session.table(f"ref.{options.identifier}")
    for p in s.pruning:
        _same_rows(java.filter(p.row_filter), _frazil(session, options, row_filter=p.row_filter))


def test_java_reads_the_sql_catalog_table_from_its_metadata_file(spark, tmp_path) -> None:
    """The default demo (SQL catalog): Java loads the final metadata file as a static table."""
    session, _ = spark
    options, s = _run(session, tmp_path / "sql-warehouse", "sql")
    assert s.metadata_location.endswith(".metadata.json")
    java = session.read.format("iceberg").load(s.metadata_location)
    assert java.count() == s.rows_read
    _same_rows(java, _frazil(session, options))
