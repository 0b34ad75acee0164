"""Java-written page indexes (Iceberg 1.10.2's Parquet writer, parquet-mr, writes a
``ColumnIndex`` and an ``OffsetIndex`` for every column by default): frazil skips the pages
they rule out, and a filtered read returns the rows Spark's own read of the table returns."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from peers import java_reference_session

from frazil.expressions import bind, parse
from frazil.table.scan import formats
from frazil.table.scan.filter import RowFilter
from frazil.table.static import StaticTable

pytestmark = [
    pytest.mark.interop,
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

ROWS = 20_000

# (frazil's filter, the same rows in Spark SQL: SQL's NOT of a comparison with null is null,
# where the expressions spec's is true, so those rows are asked for explicitly)
FILTERS = [
    ("id >= 5000 AND id < 5100", "id >= 5000 AND id < 5100"),
    ("id < 10 OR id >= 19990", "id < 10 OR id >= 19990"),
    ("id = 12345", "id = 12345"),
    ("id IN (3, 9000, 19999)", "id IN (3, 9000, 19999)"),
    ("n IS NULL", "n IS NULL"),
    ("n IS NOT NULL AND id < 4100", "n IS NOT NULL AND id < 4100"),
    ("n < 100", "n < 100"),
    ("NOT (n < 1000)", "NOT (n < 1000) OR n IS NULL"),
    ("s = 'k10001'", "s = 'k10001'"),
    ("s LIKE 'k123%'", "s LIKE 'k123%'"),
    (
        "ts >= '2024-01-05T00:00:00' AND ts < '2024-01-05T06:00:00'",
        "ts >= TIMESTAMP '2024-01-05 00:00:00' AND ts < TIMESTAMP '2024-01-05 06:00:00'",
    ),
    ("d = '2024-01-08'", "d = DATE '2024-01-08'"),
    ("f < 1.0", "f < 1.0"),
]


@pytest.fixture(scope="module")
def java_table(tmp_path_factory: pytest.TempPathFactory) -> Any:
    warehouse = tmp_path_factory.mktemp("page-index-wh")
    spark = java_reference_session(warehouse, **{"spark.sql.catalog.ref.cache-enabled": "false"})
    try:
        spark.sql(
            "CREATE TABLE ref.db.p (id bigint, s string, n bigint, ts timestamp_ntz, d date, "
            "f double) USING iceberg TBLPROPERTIES ('format-version'='2', "
            "'write.parquet.page-row-limit'='1000', 'write.parquet.dict-size-bytes'='1')"
        )
        spark.sql(
            "SELECT id, concat('k', lpad(cast(id AS string), 5, '0')) AS s, "
            "CASE WHEN id BETWEEN 4000 AND 7999 THEN NULL ELSE id DIV 10 END AS n, "
            "timestamp_ntz '2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, id, 0) AS ts, "
            "date_add(DATE '2024-01-01', cast(id DIV 1000 AS int)) AS d, "
            "cast((id * 7919) % 1000 AS double) / 10 AS f "
            f"FROM range({ROWS})"
        ).repartition(1).sortWithinPartitions("id").writeTo("ref.db.p").append()
        yield spark, warehouse / "db" / "p"
    finally:
        spark.stop()


def _data_file(location: Path) -> Path:
    (path,) = (location / "data").rglob("*.parquet")
    return path


def test_java_files_carry_a_page_index_frazil_reads(java_table: Any) -> None:
    """The file Java wrote has a column index and an offset index, and frazil's page bounds
    from them keep the pages of a narrow id range only."""
    _, location = java_table
    path = _data_file(location)
    column = pq.ParquetFile(path).metadata.row_group(0).column(0)
    assert column.has_column_index and column.has_offset_index
    table = StaticTable.from_metadata(str(location))
    schema = table.schema()
    with contextlib.ExitStack() as stack:
        source = stack.enter_context(pafs.LocalFileSystem().open_input_file(str(path)))
        native = formats.NativeParquet(source, str(path))
        f = RowFilter(bind(schema, parse("id >= 5000 AND id < 5100")), schema).native
        keep = native.page_keep(0, f)
    assert keep is not None
    kept = [i for i, k in enumerate(keep.to_pylist()) if k]
    assert kept[0] <= 5000 and kept[-1] >= 5099 and len(kept) <= 2000, (kept[0], len(kept))


@pytest.mark.parametrize(("ours", "sql"), FILTERS, ids=[f for f, _ in FILTERS])
def test_filtered_reads_match_spark(java_table: Any, ours: str, sql: str) -> None:
    spark, location = java_table
    table = StaticTable.from_metadata(str(location))
    got = table.scan(row_filter=ours).to_arrow()
    theirs = [r[0] for r in spark.sql(f"SELECT id FROM ref.db.p WHERE {sql} ORDER BY id").collect()]
    assert sorted(got.column("id").to_pylist()) == theirs
    # every column, not only the ids
    full = table.scan().to_arrow().sort_by("id")
    by_id = {i: k for k, i in enumerate(full.column("id").to_pylist())}
    got = got.sort_by("id")
    for name in got.column_names:
        want = [full.column(name)[by_id[i]].as_py() for i in got.column("id").to_pylist()]
        assert got.column(name).to_pylist() == want, name
