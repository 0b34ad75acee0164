"""Table metadata against the Java reference (Iceberg 1.10.2 in PySpark).

Spark SQL and the Java API write v1, v2 and v3 tables with evolved schemas (nested types, v3
types and defaults), evolved partition specs, sort orders, branches, tags, position deletes and
deletion vectors. Every ``vN.metadata.json`` they wrote must parse and serialize back to the same
JSON; frazil's serialization, written as the next ``vN.metadata.json`` of the Hadoop table, must
load in Java with the same schemas, specs, sort orders, snapshots and refs, and read the same
rows; metadata that frazil evolves must be usable by Spark for writes and reads.
"""

from __future__ import annotations

import glob
import gzip
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from peers import java_reference_session

from frazil.metadata import MetadataLogEntry, TableMetadata
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.sorting import SortField, SortOrder
from frazil.table.update import (
    AssertRefSnapshotId,
    AssertTableUUID,
    RemoveSnapshotRefUpdate,
    SetSnapshotRefUpdate,
    UpgradeFormatVersionUpdate,
    new_table_metadata,
    update_table_metadata,
)
from frazil.table.update.schema import UpdateSchema
from frazil.table.update.sort_order import ReplaceSortOrder
from frazil.table.update.spec import UpdateSpec
from frazil.transforms import parse
from frazil.types import LongType, NestedField, StringType, StructType, TimestampType

sys.path.insert(0, str(Path(__file__).resolve().parent))

pytestmark = [
    pytest.mark.interop,
    pytest.mark.spark,
    # py4j leaves its sockets to the garbage collector
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

TABLES = ["t1", "t2", "t3", "t3types", "tgz"]


def _sql(spark: Any, text: str) -> list[Any]:
    return spark.sql(text).collect()


def _create_tables(spark: Any) -> None:
    for v in (1, 2, 3):
        t = f"ref.db.t{v}"
        _sql(
            spark,
            f"CREATE TABLE {t} (id bigint, data string, ts timestamp, "
            "s struct<a: int, b: string>, tags array<string>, m map<string, double>) "
            "USING iceberg PARTITIONED BY (bucket(4, id)) "
            f"TBLPROPERTIES ('format-version'='{v}', 'write.delete.mode'='merge-on-read')",
        )
        _sql(
            spark,
            f"INSERT INTO {t} VALUES (1, 'a', TIMESTAMP '2024-01-01 00:00:00', "
            "named_struct('a', 1, 'b', 'x'), array('p'), map('k', 1.0)), "
            "(2, 'b', TIMESTAMP '2024-02-01 00:00:00', null, null, null)",
        )
        _sql(spark, f"ALTER TABLE {t} ADD COLUMN extra int")
        _sql(spark, f"ALTER TABLE {t} ALTER COLUMN extra TYPE bigint")
        _sql(spark, f"ALTER TABLE {t} ADD COLUMN s.c float")
        _sql(spark, f"ALTER TABLE {t} RENAME COLUMN data TO payload")
        _sql(spark, f"ALTER TABLE {t} ADD PARTITION FIELD days(ts)")
        _sql(spark, f"ALTER TABLE {t} DROP PARTITION FIELD bucket(4, id)")
        _sql(spark, f"ALTER TABLE {t} WRITE ORDERED BY id DESC NULLS LAST, payload")
        _sql(
            spark,
            f"INSERT INTO {t} VALUES (3, 'c', TIMESTAMP '2024-03-01 00:00:00', null, null, "
            "null, 5)",
        )
        _sql(
            spark,
            f"ALTER TABLE {t} CREATE BRANCH b1 RETAIN 7 DAYS WITH SNAPSHOT RETENTION 3 SNAPSHOTS",
        )
        _sql(spark, f"ALTER TABLE {t} CREATE TAG tag1 RETAIN 30 DAYS")
        if v >= 2:
            # merge-on-read: a position delete file in v2, a deletion vector in v3
            _sql(spark, f"DELETE FROM {t} WHERE id = 1")

    # gzip-compressed metadata files (vN.gz.metadata.json)
    _sql(
        spark,
        "CREATE TABLE ref.db.tgz (id bigint, data string) USING iceberg PARTITIONED BY (data) "
        "TBLPROPERTIES ('format-version'='2', 'write.metadata.compression-codec'='gzip')",
    )
    _sql(spark, "INSERT INTO ref.db.tgz VALUES (1, 'a'), (2, 'b')")
    _sql(spark, "ALTER TABLE ref.db.tgz CREATE TAG tag1")

    # v3 types and defaults exist only through the Java API in Iceberg 1.10.
    _sql(
        spark,
        "CREATE TABLE ref.db.t3types (id bigint) USING iceberg "
        "TBLPROPERTIES ('format-version'='3')",
    )
    _sql(spark, "INSERT INTO ref.db.t3types VALUES (1), (2)")
    jvm = spark._jvm
    table = _java_table(spark, "t3types")
    types = jvm.org.apache.iceberg.types.Types
    literal = jvm.org.apache.iceberg.expressions.Literal
    edge = jvm.org.apache.iceberg.types.EdgeAlgorithm
    (
        table.updateSchema()
        .addColumn("d_int", types.IntegerType.get(), "with a default", literal.of(5))
        .addRequiredColumn("req", types.StringType.get(), "required", literal.of("x"))
        .addColumn("tsn", types.TimestampNanoType.withoutZone())
        .addColumn("tsnz", types.TimestampNanoType.withZone())
        .addColumn("var", types.VariantType.get())
        .addColumn("unk", types.UnknownType.get())
        .addColumn("geo", types.GeometryType.crs84())
        .addColumn("geog", types.GeographyType.of("srid:4326", edge.KARNEY))
        .commit()
    )


def _java_table(spark: Any, name: str) -> Any:
    """A fresh load from the files (no catalog cache), so each call sees the newest version."""
    jvm = spark._jvm
    tables = jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration())
    return tables.load(f"{spark.conf.get('spark.sql.catalog.ref.warehouse')}/db/{name}")


def _java_view(spark: Any, name: str) -> dict[str, Any]:
    """Everything the issue requires to survive a round trip, as the reference serializes it."""
    jvm = spark._jvm
    ice = jvm.org.apache.iceberg
    t = _java_table(spark, name)
    return {
        "schemas": {int(k): ice.SchemaParser.toJson(v) for k, v in t.schemas().items()},
        "current-schema": t.schema().schemaId(),
        "specs": {int(k): ice.PartitionSpecParser.toJson(v) for k, v in t.specs().items()},
        "default-spec": t.spec().specId(),
        "orders": {int(k): ice.SortOrderParser.toJson(v) for k, v in t.sortOrders().items()},
        "default-order": t.sortOrder().orderId(),
        "snapshots": sorted(ice.SnapshotParser.toJson(s) for s in t.snapshots()),
        "refs": {str(k): ice.SnapshotRefParser.toJson(v) for k, v in t.refs().items()},
        "properties": dict(t.properties().items()),
        "uuid": str(t.uuid()),
        "format-version": t.operations().current().formatVersion(),
        "next-row-id": t.operations().current().nextRowId(),
        "last-sequence-number": t.operations().current().lastSequenceNumber(),
    }


def _rows(spark: Any, name: str, version: str | None = None) -> list[tuple[Any, ...]]:
    travel = f" VERSION AS OF '{version}'" if version else ""
    rows = _sql(spark, f"SELECT * FROM ref.db.{name}{travel} ORDER BY id")
    return [tuple(r) for r in rows]


def _metadata_dir(warehouse: Path, name: str) -> Path:
    return warehouse / "db" / name / "metadata"


def _versions(metadata_dir: Path) -> list[Path]:
    files = glob.glob(str(metadata_dir / "v*.metadata.json"))
    return sorted((Path(f) for f in files), key=lambda p: int(re.findall(r"\d+", p.name)[0]))


def _write_next(metadata_dir: Path, metadata: TableMetadata) -> Path:
    """Commits like the Hadoop catalog: the next vN.metadata.json, then version-hint.text."""
    n = int(re.findall(r"\d+", _versions(metadata_dir)[-1].name)[0]) + 1
    compress = metadata.properties.get("write.metadata.compression-codec") == "gzip"
    path = metadata_dir / (f"v{n}.gz.metadata.json" if compress else f"v{n}.metadata.json")
    with open(path, "xb") as f:  # never replace a version
        f.write(metadata.to_json_bytes(compress=compress))
    (metadata_dir / "version-hint.text").write_text(str(n))
    return path


@pytest.fixture(scope="module")
def spark_tables(tmp_path_factory: pytest.TempPathFactory) -> Any:
    warehouse = tmp_path_factory.mktemp("metadata-wh")
    spark = java_reference_session(warehouse, **{"spark.sql.catalog.ref.cache-enabled": "false"})
    try:
        _create_tables(spark)
        yield spark, warehouse
    finally:
        spark.stop()


def test_every_reference_metadata_file_round_trips(spark_tables: Any) -> None:
    _, warehouse = spark_tables
    checked = gzipped = 0
    for name in TABLES:
        for path in _versions(_metadata_dir(warehouse, name)):
            raw = path.read_bytes()
            metadata = TableMetadata.from_json(raw)
            if ".gz." in path.name:
                assert raw[:2] == b"\x1f\x8b"
                raw = gzip.decompress(raw)
                gzipped += 1
            original = json.loads(raw)
            written = metadata.to_dict()
            assert written == original, f"{name}/{path.name}: {_diff(original, written)}"
            # and the result parses to the same objects
            assert TableMetadata.from_json(metadata.to_json()) == metadata
            assert TableMetadata.from_json(metadata.to_json_bytes(compress=True)) == metadata
            checked += 1
    assert checked >= 40 and gzipped >= 3


def _diff(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def test_reference_tables_have_what_the_issue_asks_for(spark_tables: Any) -> None:
    _, warehouse = spark_tables
    t3 = TableMetadata.from_json(_versions(_metadata_dir(warehouse, "t3"))[-1].read_bytes())
    assert t3.format_version == 3 and t3.next_row_id is not None and t3.next_row_id > 0
    assert {"b1", "tag1", "main"} <= set(t3.refs)
    assert t3.refs["tag1"].snapshot_ref_type == "tag"
    assert t3.refs["b1"].min_snapshots_to_keep == 3
    assert any(s.summary and s.summary.get("added-dvs") == "1" for s in t3.snapshots)
    assert all(s.first_row_id is not None for s in t3.snapshots)
    assert len(t3.partition_specs) == 3 and len(t3.schemas) >= 5
    t1 = TableMetadata.from_json(_versions(_metadata_dir(warehouse, "t1"))[-1].read_bytes())
    # v1 partition evolution replaces a dropped field with void in place
    assert [str(f.transform) for f in t1.spec().fields] == ["void", "day"]
    types = TableMetadata.from_json(_versions(_metadata_dir(warehouse, "t3types"))[-1].read_bytes())
    schema = types.schema()
    assert schema.find_field("d_int").initial_default == 5
    assert schema.find_field("req").required and schema.find_field("req").write_default == "x"
    assert str(schema.find_type("geog")) == "geography(srid:4326, karney)"
    assert str(schema.find_type("var")) == "variant"


@pytest.mark.parametrize("name", TABLES)
def test_java_loads_frazil_written_metadata(spark_tables: Any, name: str) -> None:
    spark, warehouse = spark_tables
    metadata_dir = _metadata_dir(warehouse, name)
    before = _java_view(spark, name)
    # Spark 3.5 cannot read v3-only types, so that table is checked through the Java API only.
    readable = name != "t3types"
    rows = _rows(spark, name) if readable else None
    tag_rows = _rows(spark, name, "tag1") if "tag1" in before["refs"] else None
    latest = _versions(metadata_dir)[-1]
    metadata = TableMetadata.from_json(latest.read_bytes())
    # Re-serialized, with this file as the previous version, as a catalog commit would.
    rewritten = metadata.replace(
        metadata_log=(
            *metadata.metadata_log,
            MetadataLogEntry(str(latest), metadata.last_updated_ms),
        )
    )
    _write_next(metadata_dir, rewritten)
    after = _java_view(spark, name)
    assert after == before
    if readable:
        assert _rows(spark, name) == rows
    if tag_rows is not None:
        assert _rows(spark, name, "tag1") == tag_rows


@pytest.mark.parametrize("name", ["t1", "t2", "t3"])
def test_java_uses_metadata_evolved_by_frazil(spark_tables: Any, name: str) -> None:
    spark, warehouse = spark_tables
    metadata_dir = _metadata_dir(warehouse, name)
    latest = _versions(metadata_dir)[-1]
    base = TableMetadata.from_json(latest.read_bytes())

    schema_update = UpdateSchema(base)
    schema_update.add_column("note", StringType(), doc="added by frazil")
    schema_update.add_column(("s", "d"), LongType())
    schema_update.rename_column("payload", "body")
    schema_update.move_first("note")
    updates, requirements = schema_update.updates_and_requirements()
    evolved = update_table_metadata(base, updates, requirements, str(latest))

    spec_update = UpdateSpec(evolved)
    spec_update.add_field("id", "bucket[4]")
    spec_update.remove_field("ts_day")
    updates, requirements = spec_update.updates_and_requirements()
    evolved = update_table_metadata(evolved, updates, requirements)

    order = ReplaceSortOrder(evolved).asc("note").desc("id")
    updates, requirements = order.updates_and_requirements()
    evolved = update_table_metadata(evolved, updates, requirements)
    _write_next(metadata_dir, evolved)

    java = _java_table(spark, name)
    columns = [f.name() for f in java.schema().columns()]
    assert columns[0] == "note" and "body" in columns and "payload" not in columns
    assert java.schema().findField("s.d").fieldId() == evolved.last_column_id
    java_spec = [(f.name(), str(f.transform())) for f in java.spec().fields()]
    if name == "t1":
        # v1: removal voids in place, additions go at the end with a positional id
        assert java_spec == [
            ("id_bucket", "void"),
            ("ts_day", "void"),
            ("id_bucket_4", "bucket[4]"),
        ]
    else:
        # v2+: the field of the first spec is equivalent, so its id and name come back
        assert java_spec == [("id_bucket", "bucket[4]")]
        assert java.spec().fields()[0].fieldId() == 1000
    assert [f.sourceId() for f in java.sortOrder().fields()] == [
        evolved.schema().find_field("note").field_id,
        evolved.schema().find_field("id").field_id,
    ]
    # Spark writes through the evolved metadata and reads the result back.
    _sql(
        spark,
        f"INSERT INTO ref.db.{name} VALUES "
        "('hello', 40, 'z', TIMESTAMP '2024-04-01 00:00:00', null, null, null, 7)",
    )
    got = _sql(spark, f"SELECT note, body, extra FROM ref.db.{name} WHERE id = 40")
    assert [tuple(r) for r in got] == [("hello", "z", 7)]
    # and what Spark committed on top of frazil's version parses again
    after = TableMetadata.from_json(_versions(metadata_dir)[-1].read_bytes())
    assert after.schema() == evolved.schema()
    assert json.loads(after.to_json()) == json.loads(_versions(metadata_dir)[-1].read_text())


@pytest.mark.parametrize("version", [1, 2, 3])
def test_java_writes_and_reads_a_table_frazil_created(spark_tables: Any, version: int) -> None:
    spark, warehouse = spark_tables
    name = f"fz{version}"
    location = warehouse / "db" / name
    schema = Schema(
        NestedField(1, "id", LongType(), True),
        NestedField(2, "ts", TimestampType()),
        NestedField(3, "s", StructType(NestedField(4, "a", StringType()))),
        identifier_field_ids=[1],
    )
    metadata = new_table_metadata(
        schema,
        f"file:{location}",
        PartitionSpec(PartitionField(2, 1000, parse("day"), "ts_day")),
        SortOrder(SortField(1)),
        {"owner": "frazil"},
        format_version=version,
    )
    (location / "metadata").mkdir(parents=True)
    (location / "metadata" / "v1.metadata.json").write_bytes(metadata.to_json_bytes())
    (location / "metadata" / "version-hint.text").write_text("1")

    view = _java_view(spark, name)
    assert view["format-version"] == version and view["uuid"] == str(metadata.table_uuid)
    assert json.loads(view["schemas"][0])["identifier-field-ids"] == [1]
    assert json.loads(view["specs"][0])["fields"][0]["transform"] == "day"
    _sql(
        spark,
        f"INSERT INTO ref.db.{name} VALUES (2, TIMESTAMP '2024-05-01 10:00:00', "
        "named_struct('a', 'x')), (1, TIMESTAMP '2024-05-02 10:00:00', null)",
    )
    assert [r[0] for r in _rows(spark, name)] == [1, 2]
    after = TableMetadata.from_json(_versions(location / "metadata")[-1].read_bytes())
    assert after.table_uuid == metadata.table_uuid and len(after.snapshots) == 1
    if version >= 3:
        assert after.next_row_id == 2 and after.snapshots[0].first_row_id == 0


def _update_examples() -> Any:
    """The update and requirement examples of tests/table/test_updates.py."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "table" / "test_updates.py"
    spec = importlib.util.spec_from_file_location("_frazil_update_examples", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_java_reads_the_rest_json_of_every_update_and_requirement(spark_tables: Any) -> None:
    spark, _ = spark_tables
    ice = spark._jvm.org.apache.iceberg
    examples = _update_examples()
    for update in examples.ALL_UPDATES:
        text = json.dumps(update.to_json())
        back = ice.MetadataUpdateParser.toJson(ice.MetadataUpdateParser.fromJson(text))
        expected = update.to_json()
        if update.action == "add-schema":
            # the reference reads the deprecated last-column-id as the schema's highest id
            expected["last-column-id"] = update.schema_.highest_field_id
        assert json.loads(back) == expected, update.action
    for requirement in examples.ALL_REQUIREMENTS:
        text = json.dumps(requirement.to_json())
        back = ice.UpdateRequirementParser.toJson(ice.UpdateRequirementParser.fromJson(text))
        assert json.loads(back) == requirement.to_json(), requirement.type


def test_java_follows_refs_changed_by_frazil(spark_tables: Any) -> None:
    spark, warehouse = spark_tables
    name = "tgz"
    metadata_dir = _metadata_dir(warehouse, name)
    latest = _versions(metadata_dir)[-1]
    base = TableMetadata.from_json(latest.read_bytes())
    first = base.snapshots[0].snapshot_id
    _sql(spark, f"INSERT INTO ref.db.{name} VALUES (3, 'c')")
    base = TableMetadata.from_json(_versions(metadata_dir)[-1].read_bytes())
    assert base.current_snapshot_id != first
    rolled_back = update_table_metadata(
        base,
        [
            SetSnapshotRefUpdate("main", first),  # roll main back
            SetSnapshotRefUpdate("audit", base.current_snapshot_id or 0, "branch", 2),
            RemoveSnapshotRefUpdate("tag1"),
        ],
        [AssertRefSnapshotId("main", base.current_snapshot_id)],
        str(_versions(metadata_dir)[-1]),
    )
    _write_next(metadata_dir, rolled_back)
    java = _java_table(spark, name)
    assert java.currentSnapshot().snapshotId() == first
    assert sorted(str(k) for k in java.refs().keySet()) == ["audit", "main"]
    assert java.refs()["audit"].minSnapshotsToKeep() == 2
    assert [r[0] for r in _rows(spark, name)] == [1, 2]
    assert [r[0] for r in _rows(spark, name, "audit")] == [1, 2, 3]
    history = [e.snapshotId() for e in java.history()]
    assert history[-1] == first


def test_java_writes_to_a_table_frazil_upgraded_to_v3(spark_tables: Any) -> None:
    spark, warehouse = spark_tables
    name = "t2"
    metadata_dir = _metadata_dir(warehouse, name)
    latest = _versions(metadata_dir)[-1]
    base = TableMetadata.from_json(latest.read_bytes())
    assert base.format_version == 2
    upgraded = update_table_metadata(
        base, [UpgradeFormatVersionUpdate(3)], [AssertTableUUID(base.table_uuid)], str(latest)
    )
    assert upgraded.next_row_id == 0
    _write_next(metadata_dir, upgraded)
    before = {s.snapshot_id for s in upgraded.snapshots}
    _sql(spark, f"DELETE FROM ref.db.{name} WHERE id = 2")  # a v3 writer: deletion vectors now
    after = TableMetadata.from_json(_versions(metadata_dir)[-1].read_bytes())
    assert after.format_version == 3
    new = [s for s in after.snapshots if s.snapshot_id not in before]
    assert len(new) == 1 and new[0].first_row_id == 0
    assert after.next_row_id == new[0].added_rows
    assert all(s.first_row_id is None for s in after.snapshots if s.snapshot_id in before)
    assert new[0].summary is not None and new[0].summary.get("added-dvs") == "1"
    assert 2 not in [r[0] for r in _rows(spark, name)]
