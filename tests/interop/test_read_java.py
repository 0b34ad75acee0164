"""Reading tables written by the Java reference (Iceberg 1.10.2 in PySpark) into Arrow.

Spark writes a v1 table of every Spark-writable primitive type and nested types whose schema
and partition spec evolve (rename, added column, int -> long and float -> double promotion,
partition field dropped and added), with a branch, a tag and older snapshots; a v2 table with
position deletes (merge-on-read) and, through the Java API, a global equality delete file on a
column renamed afterwards (with a null key); a v3 table with deletion vectors and row lineage.
``StaticTable.from_metadata(...).scan(...).to_arrow()`` must equal Spark's ``SELECT`` for the
current snapshot, a branch, a tag, older snapshots and with filters; tasks serialize to the JSON
of Java's ``ScanTaskParser``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import sys
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from peers import java_reference_session

from frazil.exceptions import ValidationError
from frazil.table.scan import FileScanTask
from frazil.table.static import StaticTable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference_planner import reference_plan

pytestmark = [
    pytest.mark.interop,
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

TYPES = (
    "id bigint, b boolean, i int, f float, d double, dec decimal(10, 2), dt date, "
    "ts timestamp, tsn timestamp_ntz, s string, bin binary, "
    "st struct<x: int, y: string>, arr array<struct<p: int, q: string>>, m map<string, int>"
)


def _row(i: int, evolved: bool = False) -> str:
    s = "NULL" if i % 4 == 3 else f"'s{i % 3}'"
    d = 'double("NaN")' if i == 5 else f"{i}.25"
    z = ", 'z', 'zz'" if evolved else ""
    added = ", 7" if evolved else ""
    return (
        f"({i}, {str(i % 2 == 0).lower()}, {i * 10}, {i}.5, {d}, {i}.10, "
        f"DATE '2024-01-0{1 + i % 3}', TIMESTAMP '2024-01-0{1 + i % 3} 0{i % 10}:00:00', "
        f"TIMESTAMP_NTZ '2023-12-31 10:00:00', {s}, X'0{i % 10}FF', "
        f"named_struct('x', {i}, 'y', 'y{i}'{z}), array(named_struct('p', {i}, 'q', 'q')), "
        f"map('k{i}', {i}){added})"
    )


def _sql(spark: Any, text: str) -> list[Any]:
    return spark.sql(text).collect()


def _create(spark: Any, warehouse: Path) -> dict[str, Any]:
    info: dict[str, Any] = {}
    # v1: every type, evolved schema and spec, branch, tag, older snapshots
    _sql(
        spark,
        f"CREATE TABLE ref.db.t1 ({TYPES}) USING iceberg PARTITIONED BY (s, days(ts)) "
        "TBLPROPERTIES ('format-version'='1')",
    )
    _sql(spark, "INSERT INTO ref.db.t1 VALUES " + ", ".join(_row(i) for i in range(6)))
    info["t1_first"] = _snapshot_id(spark, "t1")
    _sql(spark, "ALTER TABLE ref.db.t1 CREATE TAG tag1")
    _sql(spark, "ALTER TABLE ref.db.t1 RENAME COLUMN s TO s_renamed")
    _sql(spark, "ALTER TABLE ref.db.t1 ALTER COLUMN i TYPE bigint")
    _sql(spark, "ALTER TABLE ref.db.t1 ALTER COLUMN f TYPE double")
    _sql(spark, "ALTER TABLE ref.db.t1 ADD COLUMN added int")
    _sql(spark, "ALTER TABLE ref.db.t1 ADD COLUMN st.z string")
    _sql(spark, "ALTER TABLE ref.db.t1 DROP PARTITION FIELD days(ts)")
    _sql(spark, "ALTER TABLE ref.db.t1 ADD PARTITION FIELD bucket(3, id)")
    _sql(spark, "ALTER TABLE ref.db.t1 CREATE BRANCH b1")
    _sql(spark, "INSERT INTO ref.db.t1 VALUES " + ", ".join(_row(i, True) for i in range(6, 10)))
    info["t1_second"] = _snapshot_id(spark, "t1")
    _sql(spark, "INSERT INTO ref.db.t1.branch_b1 VALUES " + _row(100, True))

    # v2: position deletes, then a global equality delete through the Java API
    _sql(
        spark,
        "CREATE TABLE ref.db.t2 (id bigint, data string, cat string) USING iceberg "
        "PARTITIONED BY (cat) TBLPROPERTIES ('format-version'='2', "
        "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')",
    )
    _sql(
        spark,
        "INSERT INTO ref.db.t2 VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, NULL, 'y'), "
        "(4, 'd', 'y'), (5, 'b', 'y'), (6, 'f', 'x')",
    )
    _sql(spark, "DELETE FROM ref.db.t2 WHERE id = 1")
    _sql(spark, "UPDATE ref.db.t2 SET data = 'dd' WHERE id = 4")
    info["t2_before_eq"] = _snapshot_id(spark, "t2")
    _add_equality_delete(spark, warehouse / "db" / "t2", [["b"], [None]])
    _sql(spark, "ALTER TABLE ref.db.t2 RENAME COLUMN data TO payload")
    _sql(spark, "INSERT INTO ref.db.t2 VALUES (7, 'b', 'x')")  # after the delete: kept

    # v3: deletion vectors and row lineage
    _sql(
        spark,
        "CREATE TABLE ref.db.t3 (id bigint, data string) USING iceberg PARTITIONED BY "
        "(bucket(2, id)) TBLPROPERTIES ('format-version'='3', "
        "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')",
    )
    _sql(spark, "INSERT INTO ref.db.t3 SELECT id, concat('v', id) FROM range(0, 50)")
    _sql(spark, "INSERT INTO ref.db.t3 SELECT id, concat('w', id) FROM range(50, 80)")
    _sql(spark, "DELETE FROM ref.db.t3 WHERE id % 7 = 0")
    _sql(spark, "UPDATE ref.db.t3 SET data = 'updated' WHERE id % 10 = 3")
    _sql(spark, "DELETE FROM ref.db.t3 WHERE id = 11")
    return info


def _snapshot_id(spark: Any, name: str) -> int:
    return int(
        _sql(
            spark,
            f"SELECT snapshot_id FROM ref.db.{name}.snapshots ORDER BY committed_at DESC LIMIT 1",
        )[0][0]
    )


def _java_table(spark: Any, location: Path) -> Any:
    tables = spark._jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration())
    return tables.load(str(location))


def _add_equality_delete(spark: Any, location: Path, keys: list[list[Any]]) -> None:
    """An unpartitioned-spec equality delete on ``data`` is partition-scoped, so write one per
    partition of ``cat`` the way Flink would (the table is partitioned)."""
    jvm = spark._jvm
    ice = jvm.org.apache.iceberg
    table = _java_table(spark, location)
    field_id = table.schema().findField("data").fieldId()
    delta = table.newRowDelta()
    for cat in ("x", "y"):
        path = location / "data" / f"eq-{cat}.parquet"
        arrow = pa.table(
            {"data": pa.array([k[0] for k in keys], pa.string())},
            schema=pa.schema(
                [pa.field("data", pa.string(), metadata={b"PARQUET:field_id": str(field_id)})]
            ),
        )
        pq.write_table(arrow, path)
        ids = spark.sparkContext._gateway.new_array(jvm.int, 1)
        ids[0] = field_id
        delete = (
            ice.FileMetadata.deleteFileBuilder(table.spec())
            .ofEqualityDeletes(ids)
            .withPath(str(path))
            .withFormat(ice.FileFormat.PARQUET)
            .withFileSizeInBytes(path.stat().st_size)
            .withRecordCount(len(keys))
            .withPartitionPath(f"cat={cat}")
            .build()
        )
        delta = delta.addDeletes(delete)
    delta.commit()


@pytest.fixture(scope="module")
def java_tables(tmp_path_factory: pytest.TempPathFactory) -> Any:
    warehouse = tmp_path_factory.mktemp("read-wh")
    spark = java_reference_session(warehouse, **{"spark.sql.catalog.ref.cache-enabled": "false"})
    try:
        info = _create(spark, warehouse)
        yield spark, warehouse, info
    finally:
        spark.stop()


# --------------------------------------------------------------------------------------------
# comparing rows


def _norm(v: Any) -> Any:
    if isinstance(v, float):
        return "NaN" if math.isnan(v) else v
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
            return ("tz", v.isoformat())
        return v.isoformat()
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    if isinstance(v, list):
        if v and all(isinstance(x, tuple) and len(x) == 2 for x in v):
            return {k: _norm(x) for k, x in v}  # Arrow maps read as lists of pairs
        return [_norm(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, decimal.Decimal):
        return v
    return v


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    rows = [{k: _norm(v) for k, v in r.items()} for r in table.to_pylist()]
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def _spark_arrow(spark: Any, sql: str) -> pa.Table:
    df = spark.sql(sql)
    batches = df._collect_as_arrow()
    if not batches:
        return pa.Table.from_pylist([])
    return pa.Table.from_batches(batches)


def _assert_same(ours: pa.Table, spark: Any, sql: str) -> None:
    theirs = _spark_arrow(spark, sql)
    assert ours.column_names == theirs.column_names or theirs.num_rows == 0
    assert ours.num_rows == theirs.num_rows, sql
    assert _rows(ours) == _rows(theirs), sql


def _static(warehouse: Path, name: str) -> StaticTable:
    return StaticTable.from_metadata(str(warehouse / "db" / name))


# --------------------------------------------------------------------------------------------
# tests


def test_v1_every_type_evolved_current_snapshot(java_tables: Any) -> None:
    spark, warehouse, _ = java_tables
    table = _static(warehouse, "t1")
    ours = table.scan().to_arrow()
    assert ours.schema.field("i").type == pa.int64() and ours.schema.field("f").type == pa.float64()
    _assert_same(ours, spark, "SELECT * FROM ref.db.t1")


@pytest.mark.parametrize(
    "row_filter",
    [
        "id > 3",
        "d > 2.0",
        "d IS NAN",
        "s_renamed = 's1'",
        "s_renamed != 's1'",
        "s_renamed IS NULL",
        "NOT (s_renamed = 's1')",
        "s_renamed IN ('s0', 's2') OR added = 7",
        "s_renamed NOT IN ('s0')",
        "s_renamed LIKE 's%'",
        "st.x >= 4 AND dt < '2024-01-03'",
        "ts >= '2024-01-02T00:00:00+00:00'",
        "dec > 3.5",
        "added IS NOT NULL",
    ],
)
def test_v1_filters_match_spark(java_tables: Any, row_filter: str) -> None:
    spark, warehouse, _ = java_tables
    table = _static(warehouse, "t1")
    ours = table.scan(row_filter=row_filter).to_arrow()
    where = row_filter.replace("IS NAN", "= double('NaN')").replace("'s%'", "'s%'")
    if "ts >=" in row_filter:
        where = "ts >= TIMESTAMP '2024-01-02 00:00:00'"
    if "dt <" in row_filter:
        where = "st.x >= 4 AND dt < DATE '2024-01-03'"
    if "IS NAN" in row_filter:
        where = "isnan(d)"
    # frazil's filters are the expressions spec's (2-valued): written in Spark's SQL as the
    # spec's "Boolean logic" section says (null-safe !=; NaN is not greater than 2.0)
    where = {
        "d > 2.0": "d > 2.0 AND NOT isnan(d)",
        "s_renamed != 's1'": "NOT (s_renamed <=> 's1')",
        "NOT (s_renamed = 's1')": "NOT (s_renamed <=> 's1')",
        "s_renamed NOT IN ('s0')": "NOT coalesce(s_renamed IN ('s0'), false)",
    }.get(row_filter, where)
    _assert_same(ours, spark, f"SELECT * FROM ref.db.t1 WHERE {where}")


def test_v1_selected_fields_and_metadata_columns(java_tables: Any) -> None:
    spark, warehouse, _ = java_tables
    table = _static(warehouse, "t1")
    ours = table.scan(
        selected_fields=("id", "st.y", "s_renamed", "_file", "_pos", "_spec_id", "_partition")
    ).to_arrow()
    assert ours.column_names == ["id", "s_renamed", "st", "_file", "_pos", "_spec_id", "_partition"]
    _assert_same(
        ours,
        spark,
        "SELECT id, s_renamed, named_struct('y', st.y) AS st, _file, _pos, _spec_id, _partition "
        "FROM ref.db.t1",
    )


def test_v1_time_travel_branch_tag_and_as_of(java_tables: Any) -> None:
    spark, warehouse, info = java_tables
    table = _static(warehouse, "t1")
    first, second = info["t1_first"], info["t1_second"]
    # a snapshot id and a tag read with their own (older) schema, as Spark does
    _assert_same(
        table.scan(snapshot_id=first).to_arrow(),
        spark,
        f"SELECT * FROM ref.db.t1 VERSION AS OF {first}",
    )
    _assert_same(
        table.scan().use_ref("tag1").to_arrow(),
        spark,
        "SELECT * FROM ref.db.t1 VERSION AS OF 'tag1'",
    )
    _assert_same(
        table.scan().use_ref("b1").to_arrow(), spark, "SELECT * FROM ref.db.t1 VERSION AS OF 'b1'"
    )
    _assert_same(
        table.scan(snapshot_id=second, row_filter="id >= 5").to_arrow(),
        spark,
        f"SELECT * FROM ref.db.t1 VERSION AS OF {second} WHERE id >= 5",
    )
    ts = table.snapshot_by_id(first).timestamp_ms
    when = dt.datetime.fromtimestamp(ts / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
    _assert_same(
        table.scan().as_of_timestamp(ts).to_arrow(),
        spark,
        f"SELECT * FROM ref.db.t1 TIMESTAMP AS OF '{when}'",
    )


def test_v2_position_and_equality_deletes(java_tables: Any) -> None:
    spark, warehouse, info = java_tables
    table = _static(warehouse, "t2")
    tasks = list(table.scan().plan_files())
    kinds = {d.content for t in tasks for d in t.delete_files}
    assert kinds == {1, 2}, "expected position and equality delete files"
    ours = table.scan().to_arrow()
    _assert_same(ours, spark, "SELECT * FROM ref.db.t2")
    # the equality delete removed 'b' and null but not the later insert of 'b'
    assert sorted(r["id"] for r in ours.to_pylist()) == [4, 6, 7]
    _assert_same(
        table.scan(row_filter="payload != 'dd'", selected_fields=("id", "_pos")).to_arrow(),
        spark,
        "SELECT id, _pos FROM ref.db.t2 WHERE payload != 'dd'",
    )
    before = info["t2_before_eq"]
    _assert_same(
        table.scan(snapshot_id=before).to_arrow(),
        spark,
        f"SELECT * FROM ref.db.t2 VERSION AS OF {before}",
    )
    assert table.scan().count() == 3
    # counts from metadata when nothing forces a read
    assert table.scan(snapshot_id=_first_snapshot(table)).count() == 6


def _first_snapshot(table: StaticTable) -> int:
    return min(table.snapshots(), key=lambda s: s.sequence_number).snapshot_id


def test_v3_deletion_vectors_and_row_lineage(java_tables: Any) -> None:
    spark, warehouse, _ = java_tables
    table = _static(warehouse, "t3")
    tasks = list(table.scan().plan_files())
    assert any(d.file_format == "PUFFIN" for t in tasks for d in t.delete_files)
    ours = table.scan().to_arrow()
    _assert_same(ours, spark, "SELECT * FROM ref.db.t3")
    _assert_same(
        table.scan(row_filter="id > 40", selected_fields=("id", "_pos", "_file")).to_arrow(),
        spark,
        "SELECT id, _pos, _file FROM ref.db.t3 WHERE id > 40",
    )
    lineage = table.scan(
        selected_fields=("id", "data", "_row_id", "_last_updated_sequence_number")
    ).to_arrow()
    try:
        _assert_same(
            lineage,
            spark,
            "SELECT id, data, _row_id, _last_updated_sequence_number FROM ref.db.t3",
        )
    except Exception as e:  # Spark 3.5's Iceberg 1.10 may not expose the lineage columns
        if "_row_id" not in str(e):
            raise
        pytest.skip(f"Spark cannot select row lineage columns here: {e}")
    ids = lineage.column("_row_id").to_pylist()
    assert None not in ids and len(set(ids)) == len(ids)


def test_task_json_matches_java_scan_task_parser(java_tables: Any) -> None:
    spark, warehouse, _ = java_tables
    ice = spark._jvm.org.apache.iceberg
    for name in ("t2", "t3"):
        table = _static(warehouse, name)
        ours = {t.file.file_path: t for t in table.scan().plan_files()}
        jtable = _java_table(spark, warehouse / "db" / name)
        it = jtable.newScan().includeColumnStats().planFiles().iterator()
        seen = 0
        while it.hasNext():
            jtask = it.next()
            theirs = json.loads(ice.ScanTaskParser.toJson(jtask))
            task = ours[theirs["data-file"]["file-path"]]
            mine = task.to_json()
            # Iceberg 1.10 wrote upper-case enums and partitions keyed by field id; 1.11 and
            # the REST spec use the form frazil writes. Read theirs, and compare field by field.
            back = FileScanTask.from_json(theirs)
            assert back.file == task.file
            assert sorted(d.file_path for d in back.delete_files) == sorted(
                d.file_path for d in task.delete_files
            )
            assert (
                back.to_json()["data-file"]
                == {k: v for k, v in mine["data-file"].items() if k != "data-sequence-number"}
                or back.to_json()["data-file"] == mine["data-file"]
            )
            for key in ("task-type", "schema", "spec", "start", "length", "residual-filter"):
                assert mine[key] == theirs[key], key
            pairs = zip(
                sorted(mine["delete-files"], key=lambda d: d["file-path"]),
                sorted(theirs["delete-files"], key=lambda d: d["file-path"]),
                strict=True,
            )
            for ours_f, theirs_f in [(mine["data-file"], theirs["data-file"]), *pairs]:
                same = set(ours_f) - {"content", "file-format", "partition", "data-sequence-number"}
                assert {k: ours_f[k] for k in same} == {k: theirs_f.get(k) for k in same}
                assert ours_f["content"].replace("-", "_").upper() == theirs_f["content"]
                assert ours_f["file-format"].upper() == theirs_f["file-format"]
            # and the task read back reads the same rows
            assert FileScanTask.from_json(json.loads(json.dumps(mine))).to_json() == mine
            seen += 1
        assert seen == len(ours)


def test_bad_input_errors(java_tables: Any, tmp_path: Path) -> None:
    _, warehouse, _ = java_tables
    table = _static(warehouse, "t3")
    with pytest.raises(ValidationError, match="no_such_column"):
        table.scan(row_filter="no_such_column > 1").to_arrow()
    task = next(t for t in table.scan().plan_files() if t.delete_files)
    dv = next(d for d in task.delete_files if d.file_format == "PUFFIN")
    # a deletion vector naming another data file
    other = FileScanTask.from_json(task.to_json())
    wrong = dict(other.to_json())
    wrong["delete-files"] = [dict(d) for d in wrong["delete-files"]]
    for d in wrong["delete-files"]:
        d["referenced-data-file"] = "file:/nowhere/unknown.parquet"
    with pytest.raises(ValidationError, match=r"unknown\.parquet"):
        list(table.scan()._batches([FileScanTask.from_json(wrong)]))
    # a corrupted deletion vector: one flipped byte inside the blob
    from frazil.exceptions import DecodeError

    src = Path(dv.file_path.removeprefix("file:"))
    data = bytearray(src.read_bytes())
    data[dv.content_offset + 12] ^= 0xFF
    bad = tmp_path / "bad.puffin"
    bad.write_bytes(bytes(data))
    corrupted = task.to_json()
    for d in corrupted["delete-files"]:
        if d["file-format"] == "puffin":
            d["file-path"] = str(bad)
    with pytest.raises(DecodeError, match=r"bad\.puffin"):
        list(table.scan()._batches([FileScanTask.from_json(corrupted)]))


@pytest.mark.parametrize(
    ("name", "row_filter"),
    [("t1", "id > 3"), ("t1", "s_renamed = 's1'"), ("t2", None), ("t3", "id > 40")],
)
def test_reference_planner_reads_the_same_rows(
    java_tables: Any, name: str, row_filter: str | None
) -> None:
    """The plain reference planner (no pruning, tests/interop/reference_planner.py) reads what
    Spark reads, and attaches to every data file the native planner selects the same delete
    files."""
    spark, warehouse, _ = java_tables
    table = _static(warehouse, name)
    scan = table.scan(row_filter=row_filter or "true")
    tasks = reference_plan(
        scan.io, scan.table_metadata, scan.snapshot(), scan._bound_filter(), scan.table_schema()
    )
    plain = pa.Table.from_batches(list(scan._batches(tasks)), schema=scan.arrow_schema())
    where = f" WHERE {row_filter}" if row_filter else ""
    _assert_same(plain, spark, f"SELECT * FROM ref.db.{name}{where}")

    def deletes(ts: Iterable[FileScanTask]) -> dict[str, list[str]]:
        return {t.file.file_path: sorted(d.file_path for d in t.delete_files) for t in ts}

    reference, native = deletes(tasks), deletes(scan.plan_files())
    assert native.keys() <= reference.keys()
    assert native == {path: reference[path] for path in native}


def test_parquet_without_field_ids_nor_name_mapping_reads_by_position(
    java_tables: Any, tmp_path: Path
) -> None:
    """A Parquet file written without field ids, in a table without a name mapping (as Hive
    migrations leave them): Java reads its top-level columns by position
    (ParquetSchemaUtil.addFallbackIds) and so does frazil, after a rename and an added column.
    (A map with struct values differs: Java reads the values as null, frazil as structs of
    nulls.)"""
    from frazil.catalog import load_catalog
    from frazil.metadata.name_mapping import DEFAULT_NAME_MAPPING_PROPERTY
    from frazil.types import StringType

    spark, _, _ = java_tables
    plain = pa.table(
        {
            "a": pa.array([1, 2, None], pa.int32()),
            "b": ["p", None, "r"],
            "st": pa.array(
                [{"x": 1, "y": "s"}, None, {"x": None, "y": "t"}],
                pa.struct([("x", pa.int32()), ("y", pa.string())]),
            ),
            "tags": [["t", "u"], [], None],
            "structs": [[{"x": 1}], None, []],
            "m": pa.array([[("k", 1)], None, []], pa.map_(pa.string(), pa.int32())),
        }
    )
    path = tmp_path / "noids.parquet"
    pq.write_table(plain, path)
    assert all(f.metadata is None for f in pq.read_schema(path))  # no PARQUET:field_id
    catalog = load_catalog(
        "noids", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path)
    )
    catalog.create_namespace("db")
    table = catalog.create_table("db.noids", plain.schema)
    table.add_files([str(path)])
    with table.transaction() as tx:  # add_files pins a name mapping: take it away
        tx.remove_properties(DEFAULT_NAME_MAPPING_PROPERTY)
    with table.update_schema() as update:
        update.rename_column("b", "renamed")
        update.add_column("added", StringType())
    table = catalog.load_table("db.noids")
    assert table.name_mapping() is None
    ours = table.scan().to_arrow()
    df = spark.read.format("iceberg").load(table.metadata_location)
    theirs = pa.Table.from_batches(df._collect_as_arrow())
    names = ["a", "renamed", "st", "tags", "structs", "m", "added"]
    assert ours.column_names == theirs.column_names == names
    assert _rows(ours) == _rows(theirs)
    assert ours.column("renamed").to_pylist() == ["p", None, "r"]
    assert ours.column("tags").to_pylist() == [["t", "u"], [], None]
    # the nested fields have no ids: Java reads a struct, and a list of structs, as null
    for name in ("st", "structs", "added"):
        assert ours.column(name).null_count == 3, name
