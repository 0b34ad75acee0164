"""The Java reference (Hadoop catalog over the warehouse frazil's filesystem catalog writes)
reads exactly the rows frazil reads after every kind of frazil write, and its own scans prune
with frazil's metrics: the files it plans for a filter are live files and hold every match."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from peers import java_reference_session
from test_row_delta_peers import CASES, COLUMNS, SCENARIOS, frazil_rows

from frazil.catalog import load_catalog

# py4j's sockets close late
pytestmark = [
    pytest.mark.interop,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("rd-java")


@pytest.fixture(scope="module")
def spark(warehouse: Path) -> Any:
    session = java_reference_session(
        warehouse,
        **{
            "spark.sql.catalog.ref.cache-enabled": "false",
            "spark.sql.session.timeZone": "UTC",
        },
    )
    yield session
    session.stop()


@pytest.fixture(scope="module")
def tables(warehouse: Path) -> dict[tuple[str, int], Any]:
    cat = load_catalog("fs", type="filesystem", warehouse=str(warehouse))
    cat.create_namespace_if_not_exists("db")
    return {(n, v): SCENARIOS[n](cat, f"{n}_v{v}", v) for n, v in CASES}


def _local(path: str) -> str:
    return path.removeprefix("file://").removeprefix("file:")


def _planned(spark: Any, name: str, expression: Any) -> dict[str, list[str]]:
    jvm = spark._jvm
    catalog = jvm.org.apache.iceberg.hadoop.HadoopCatalog(
        spark._jsc.hadoopConfiguration(), spark.conf.get("spark.sql.catalog.ref.warehouse")
    )
    table = catalog.loadTable(jvm.org.apache.iceberg.catalog.TableIdentifier.parse(f"db.{name}"))
    it = table.newScan().filter(expression).planFiles().iterator()
    out: dict[str, list[str]] = {}
    while it.hasNext():
        task = it.next()
        out[_local(str(task.file().location()))] = [
            _local(str(d.location())) for d in task.deletes()
        ]
    return out


@pytest.mark.parametrize(("scenario", "version"), CASES)
def test_java_reads_the_same_rows(
    spark: Any, tables: dict[tuple[str, int], Any], scenario: str, version: int
) -> None:
    t = tables[(scenario, version)]
    name = f"{scenario}_v{version}"
    got = spark.sql(f"SELECT {', '.join(COLUMNS)} FROM ref.db.{name} ORDER BY id").collect()
    assert [tuple(r) for r in got] == frazil_rows(t)

    # Java's planning over frazil's metrics: a subset of frazil's live files, and every file
    # holding a matching row (as frazil reads it, deletes applied) is planned.
    E = spark._jvm.org.apache.iceberg.expressions.Expressions
    live = {_local(task.file.file_path) for task in t.scan().plan_files()}
    for java_filter, frazil_filter in (
        (E.lessThan("id", 20), "id < 20"),
        (E.greaterThan("id", 100), "id > 100"),
        (E.equal("s", "s3"), "s = 's3'"),
        (E.isNull("x"), "x IS NULL"),
        (E.equal("p", 2), "p = 2"),
    ):
        planned = _planned(spark, name, java_filter)
        assert set(planned) <= live
        needed = {
            _local(r["_file"])
            for r in t.scan(row_filter=frazil_filter, selected_fields=("id", "_file"))
            .to_arrow()
            .to_pylist()
        }
        assert needed <= set(planned), frazil_filter
