"""Round trips with the Java reference on v3 tables, over one warehouse (frazil's filesystem
catalog and Java's Hadoop catalog share the ``version-hint.text`` layout):

* frazil writes a table (partitioned appends and a merge-on-read delete); Java appends to it,
  deletes from it merge-on-read (merging frazil's deletion vector) and compacts it
  (``rewrite_data_files``, then ``rewrite_position_delete_files``); after every Java step frazil
  reads exactly Spark's rows, row lineage included;
* Java writes a table (inserts, a merge-on-read delete writing DVs); frazil appends to it,
  deletes from it (merging Java's DV) and compacts it; after every frazil step Spark reads
  exactly frazil's rows, and Java's ``_row_id``/``_last_updated_sequence_number`` agree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from peers import java_reference_session
from test_row_delta_peers import COLUMNS, SCHEMA, SPEC, rows

from frazil.catalog import load_catalog

# py4j's sockets close late
pytestmark = [
    pytest.mark.interop,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

LINEAGE = ["_row_id", "_last_updated_sequence_number"]
MOR = {"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read"}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("roundtrip-java")


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


def spark_rows(spark: Any, name: str) -> list[tuple[Any, ...]]:
    cols = ", ".join([*COLUMNS, *LINEAGE])
    return [tuple(r) for r in spark.sql(f"SELECT {cols} FROM ref.db.{name} ORDER BY id").collect()]


def frazil_rows(t: Any) -> list[tuple[Any, ...]]:
    data = t.scan(selected_fields=(*COLUMNS, *LINEAGE)).to_arrow().sort_by("id")
    return [tuple(r[c] for c in [*COLUMNS, *LINEAGE]) for r in data.to_pylist()]


def lineage(rows_: list[tuple[Any, ...]]) -> dict[int, tuple[Any, Any]]:
    return {r[0]: (r[-2], r[-1]) for r in rows_}


def values(n: int, lo: int) -> str:
    """SQL VALUES for ``rows(lo, lo + n)``."""
    out = []
    for r in rows(lo, lo + n).to_pylist():
        s = "NULL" if r["s"] is None else f"'{r['s']}'"
        x = "NULL" if r["x"] is None else f"CAST({r['x']!r} AS DOUBLE)"
        out.append(f"({r['id']}, {s}, {x}, {r['p']}, DATE '{r['d'].isoformat()}')")
    return ", ".join(out)


def live_deletes(t: Any) -> list[Any]:
    return [d for task in t.scan().plan_files() for d in task.delete_files]


def file_with_dv(t: Any) -> tuple[Any, list[int], int]:
    """A data file with a deletion vector, two of its live ids and its deleted row count."""
    for task in t.scan().plan_files():
        if any(d.referenced_data_file == task.file.file_path for d in task.delete_files):
            live = t.scan(selected_fields=("id", "_file")).to_arrow().to_pylist()
            ids = sorted(r["id"] for r in live if r["_file"] == task.file.file_path)
            if len(ids) >= 2:
                return task.file, ids[:2], sum(d.record_count for d in task.delete_files)
    raise AssertionError("no data file with a DV and two live rows")


def test_java_appends_deletes_and_compacts_a_frazil_table(spark: Any, catalog: Any) -> None:
    t = catalog.create_table(
        "db.fz", SCHEMA, partition_spec=SPEC, properties={"format-version": "3", **MOR}
    )
    t.append(rows(0, 80))
    t.append(rows(80, 120))
    t.delete("id IN (3, 40, 41, 100)")
    first = frazil_rows(t)
    assert spark_rows(spark, "fz") == first

    spark.sql(f"INSERT INTO ref.db.fz VALUES {values(30, 200)}")
    t.refresh()
    got = frazil_rows(t)
    assert got == spark_rows(spark, "fz")
    assert len(got) == len(first) + 30
    assert lineage(got)[0] == lineage(first)[0]

    # Java deletes two more rows of a file frazil's DV covers: its DV replaces frazil's, merged
    target, ids, old = file_with_dv(t)
    spark.sql(f"DELETE FROM ref.db.fz WHERE id IN ({ids[0]}, {ids[1]}, 205) OR s = 's4'")
    assert t.refresh().current_snapshot().summary["operation"] == "delete"
    got = frazil_rows(t)
    assert got == spark_rows(spark, "fz")
    assert not {ids[0], ids[1], 205} & {r[0] for r in got}
    assert all(r[1] != "s4" for r in got)
    (dv,) = [d for d in live_deletes(t) if d.referenced_data_file == target.file_path]
    assert dv.record_count >= old + 2
    before_compaction = got

    spark.sql(
        "CALL ref.system.rewrite_data_files(table => 'db.fz', "
        "options => map('min-input-files', '2'))"
    ).collect()
    t.refresh()
    assert t.current_snapshot().summary["operation"] == "replace"
    got = frazil_rows(t)
    assert got == spark_rows(spark, "fz") == before_compaction  # lineage kept by Java too

    spark.sql(
        "CALL ref.system.rewrite_position_delete_files(table => 'db.fz', "
        "options => map('rewrite-all', 'true'))"
    ).collect()
    t.refresh()
    assert frazil_rows(t) == spark_rows(spark, "fz") == before_compaction


def test_frazil_appends_deletes_and_compacts_a_java_table(spark: Any, catalog: Any) -> None:
    spark.sql(
        "CREATE TABLE ref.db.jv (id BIGINT NOT NULL, s STRING, x DOUBLE, p BIGINT, d DATE) "
        "USING iceberg PARTITIONED BY (p, bucket(4, id)) TBLPROPERTIES ("
        "'format-version'='3', 'write.delete.mode'='merge-on-read', "
        "'write.update.mode'='merge-on-read')"
    )
    spark.sql(f"INSERT INTO ref.db.jv VALUES {values(60, 0)}")
    spark.sql(f"INSERT INTO ref.db.jv VALUES {values(60, 60)}")
    spark.sql("DELETE FROM ref.db.jv WHERE id IN (1, 2, 5, 70) OR x > 55")
    t = catalog.load_table("db.jv")
    assert all((d.file_format or "").upper() == "PUFFIN" for d in live_deletes(t))
    assert live_deletes(t)
    start = frazil_rows(t)
    assert start == spark_rows(spark, "jv")

    t.append(rows(300, 340))
    got = frazil_rows(t)
    assert got == spark_rows(spark, "jv")
    assert len(got) == len(start) + 40
    new_ids = [r[-2] for r in got if r[0] >= 300]
    assert None not in new_ids and not set(new_ids) & {r[-2] for r in start}

    # more rows of a file Java's DV covers: frazil merges its DV with Java's
    target, ids, old = file_with_dv(t)
    t.delete(f"id IN ({ids[0]}, {ids[1]}, 305) OR s = 's2'")
    got = frazil_rows(t)
    assert got == spark_rows(spark, "jv")
    assert not {1, 2, 5, 70, ids[0], ids[1], 305} & {r[0] for r in got}
    (dv,) = [d for d in live_deletes(t) if d.referenced_data_file == target.file_path]
    assert dv.record_count >= old + 2
    dvs = {(d.file_path, d.content_offset): d for d in live_deletes(t)}.values()
    assert len({d.referenced_data_file for d in dvs}) == len(dvs)  # one DV per data file
    before_compaction = got

    result = t.rewrite_data_files()
    assert result.rewritten_data_files_count > 0 and result.removed_delete_files_count > 0
    assert t.current_snapshot().summary["operation"] == "replace"
    got = frazil_rows(t)
    assert got == spark_rows(spark, "jv") == before_compaction
    assert live_deletes(t) == []
    # Java keeps appending with fresh ids after frazil's compaction
    spark.sql(f"INSERT INTO ref.db.jv VALUES {values(5, 500)}")
    t.refresh()
    got = frazil_rows(t)
    assert got == spark_rows(spark, "jv")
    ids = [r[-2] for r in got]
    assert len(set(ids)) == len(ids)
