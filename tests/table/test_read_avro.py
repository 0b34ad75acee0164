"""Avro data and delete files read natively: files written here by fastavro (outside frazil)
with Iceberg's Avro schema conventions (``field-id``, ``element-id``, ``key-id``/``value-id``,
``["null", T]`` optionals, logical types), or without ids; the expected rows are the values
written. Files frazil writes are read by fastavro too."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from frazil.catalog import load_catalog
from frazil.exceptions import DecodeError, FileReadError, UnsupportedError
from frazil.io.local import LocalFileIO
from frazil.manifest.content_file import DataFile, DataFileContent
from frazil.metadata.name_mapping import MappedField, NameMapping
from frazil.schema import Schema
from frazil.table.scan import FileScanTask
from frazil.table.scan.read import read_task
from frazil.types import (
    DateType,
    DecimalType,
    FixedType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

fastavro = pytest.importorskip("fastavro")

IO = LocalFileIO()


def _opt(t: Any) -> list[Any]:
    return ["null", t]


FILE_SCHEMA = {
    "type": "record",
    "name": "table",
    "fields": [
        {"name": "id", "type": "int", "field-id": 1},  # promoted to long by the table
        {"name": "data", "type": _opt("string"), "default": None, "field-id": 2},  # renamed
        {
            "name": "tags",
            "type": _opt({"type": "array", "items": "int", "element-id": 5}),
            "field-id": 3,
        },
        {
            "name": "st",
            "type": _opt(
                {
                    "type": "record",
                    "name": "r6",
                    "fields": [
                        {"name": "a", "type": _opt("long"), "field-id": 7},
                        {
                            "name": "d",
                            "type": {"type": "int", "logicalType": "date"},
                            "field-id": 8,
                        },
                    ],
                }
            ),
            "field-id": 6,
        },
        {
            "name": "m",
            "type": _opt({"type": "map", "values": _opt("long"), "key-id": 10, "value-id": 11}),
            "field-id": 9,
        },
        {
            "name": "mi",
            "type": {
                "type": "array",
                "logicalType": "map",
                "items": {
                    "type": "record",
                    "name": "k13_v14",
                    "fields": [
                        {"name": "key", "type": "int", "field-id": 13},
                        {"name": "value", "type": "string", "field-id": 14},
                    ],
                },
            },
            "field-id": 12,
        },
        {
            "name": "dec",
            "type": _opt(
                {
                    "type": "fixed",
                    "name": "decimal_9_2",
                    "size": 4,
                    "logicalType": "decimal",
                    "precision": 9,
                    "scale": 2,
                }
            ),
            "field-id": 15,
        },
        {
            "name": "u",
            "type": {"type": "fixed", "name": "uuid_fixed", "size": 16, "logicalType": "uuid"},
            "field-id": 16,
        },
        {"name": "fx", "type": {"type": "fixed", "name": "fixed_3", "size": 3}, "field-id": 17},
        {"name": "t", "type": {"type": "long", "logicalType": "time-micros"}, "field-id": 18},
        {
            "name": "tz",
            "type": {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": True},
            "field-id": 19,
        },
        {
            "name": "tn",
            "type": {"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": False},
            "field-id": 20,
        },
    ],
}

TABLE = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "name", StringType()),
    NestedField(3, "tags", ListType(5, IntegerType())),
    NestedField(
        6, "st", StructType(NestedField(7, "a", LongType()), NestedField(8, "d", DateType(), True))
    ),
    NestedField(9, "m", MapType(10, StringType(), 11, LongType(), value_required=False)),
    NestedField(12, "mi", MapType(13, IntegerType(), 14, StringType())),
    NestedField(15, "dec", DecimalType(12, 2)),  # widened
    NestedField(16, "u", UUIDType(), True),
    NestedField(17, "fx", FixedType(3), True),
    NestedField(18, "t", TimeType(), True),
    NestedField(19, "tz", TimestamptzType(), True),
    NestedField(20, "tn", TimestampNanoType(), True),
    NestedField(21, "added", IntegerType(), initial_default=42),
)

EPOCH = dt.datetime(1970, 1, 1)


def _records(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        out.append(
            {
                "id": i,
                "data": None if i % 3 == 2 else f"v{i}",
                "tags": None if i % 4 == 3 else list(range(i % 3)),
                "st": None if i % 5 == 4 else {"a": i * 10 if i % 2 else None, "d": 19000 + i},
                "m": None if i % 6 == 5 else {f"k{i}": i, "z": None},
                "mi": [{"key": i, "value": f"w{i}"}],
                "dec": None if i % 7 == 6 else (i * 125 - 300).to_bytes(4, "big", signed=True),
                "u": uuid.UUID(int=i * 7919).bytes,
                "fx": bytes([i % 256, 1, 2]),
                "t": i * 1_000_001,
                "tz": i * 3_600_000_000,
                "tn": i * 1_000_000_007,
            }
        )
    return out


def _expected(r: dict[str, Any]) -> dict[str, Any]:
    i = r["id"]
    return {
        "id": i,
        "name": r["data"],
        "tags": r["tags"],
        "st": None
        if r["st"] is None
        else {"a": r["st"]["a"], "d": dt.date(1970, 1, 1) + dt.timedelta(days=19000 + i)},
        "m": None if r["m"] is None else [(f"k{i}", i), ("z", None)],
        "mi": [(i, f"w{i}")],
        "dec": None if r["dec"] is None else decimal.Decimal(i * 125 - 300) / 100,
        "u": uuid.UUID(int=i * 7919),
        "fx": bytes([i % 256, 1, 2]),
        "t": (EPOCH + dt.timedelta(microseconds=i * 1_000_001)).time(),
        "tz": dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(hours=i),
        "tn": i * 1_000_000_007,
        "added": 42,
    }


def _write(
    path: Path,
    schema: dict[str, Any],
    records: list[dict[str, Any]],
    content: DataFileContent | None = None,
    **kw: Any,
) -> DataFile:
    with path.open("wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), records, **kw)
    args: list[Any] = [str(path), "AVRO", (), len(records), path.stat().st_size]
    if content is not None:
        args.append(content)
    return DataFile(*args)


def _read(task: FileScanTask, schema: Schema = TABLE, **kw: Any) -> pa.Table:
    batches = list(read_task(task, IO, schema, **kw))
    return pa.Table.from_batches(batches) if batches else pa.table({})


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy", "zstandard"])
def test_every_iceberg_avro_type_by_id_with_evolution(tmp_path: Path, codec: str) -> None:
    records = _records(50)
    f = _write(tmp_path / "d.avro", FILE_SCHEMA, records, codec=codec, sync_interval=300)
    t = _read(FileScanTask(f), metadata_columns=("_pos",), batch_size=7)
    rows = t.to_pylist()
    assert [r.pop("_pos") for r in rows] == list(range(50))
    tn = t.column("tn").cast(pa.int64()).to_pylist()
    for r, n in zip(rows, tn, strict=True):
        r["tn"] = n
    assert rows == [_expected(r) for r in records]


def test_projection_filter_and_splits(tmp_path: Path) -> None:
    records = _records(40)
    f = _write(tmp_path / "d.avro", FILE_SCHEMA, records, sync_interval=200)
    projected = Schema(TABLE.find_field(2), TABLE.find_field(6))
    t = _read(FileScanTask(f, residual=None), projected_schema=projected)
    assert t.column_names == ["name", "st"]
    assert t.column("name").to_pylist() == [r["data"] for r in records]
    # Splits by byte ranges: together they read every row once, with its position.
    size = f.file_size_in_bytes
    parts = [(0, size // 3), (size // 3, size // 3), (2 * (size // 3), size)]
    got: list[int] = []
    for start, length in parts:
        task = FileScanTask(f, start=start, length=length)
        for b in read_task(task, IO, Schema(TABLE.find_field(1)), metadata_columns=("_pos",)):
            got += b.column("_pos").to_pylist()
    assert got == list(range(40))


def test_files_without_ids_by_name_mapping_or_table_names(tmp_path: Path) -> None:
    schema = {
        "type": "record",
        "name": "t",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "data", "type": _opt("string")},
            {"name": "tags", "type": _opt({"type": "array", "items": "int"})},
        ],
    }
    records = [{"id": i, "data": f"v{i}", "tags": [i]} for i in range(3)]
    f = _write(tmp_path / "noids.avro", schema, records)
    table = Schema(*(TABLE.find_field(i) for i in (1, 2, 3)))
    mapping = NameMapping(
        [
            MappedField(("id",), 1),
            MappedField(("data", "name"), 2),
            MappedField(("tags",), 3, (MappedField(("element",), 5),)),
        ]
    )
    t = _read(FileScanTask(f), table, name_mapping=mapping)
    assert t.to_pylist() == [{"id": i, "name": f"v{i}", "tags": [i]} for i in range(3)]
    # No mapping: the table's current names, as Java's Avro reader does.
    t = _read(FileScanTask(f), table)
    assert t.column("id").to_pylist() == [0, 1, 2]
    assert t.column("name").to_pylist() == [None] * 3


def test_position_and_equality_delete_files(tmp_path: Path) -> None:
    records = _records(10)
    f = _write(tmp_path / "d.avro", FILE_SCHEMA, records)
    pos_schema = {
        "type": "record",
        "name": "pos",
        "fields": [
            {"name": "file_path", "type": "string", "field-id": 2147483546},
            {"name": "pos", "type": "long", "field-id": 2147483545},
        ],
    }
    pos = _write(
        tmp_path / "pos.avro",
        pos_schema,
        [{"file_path": f.file_path, "pos": 1}, {"file_path": "other", "pos": 0}],
        DataFileContent.POSITION_DELETES,
    )
    eq_schema = {
        "type": "record",
        "name": "eq",
        "fields": [{"name": "data", "type": _opt("string"), "field-id": 2}],
    }
    eq = _write(
        tmp_path / "eq.avro",
        eq_schema,
        [{"data": "v3"}, {"data": None}],
        DataFileContent.EQUALITY_DELETES,
    )
    eq = DataFile(**{**eq.__dict__, "equality_ids": (2,), "extra": {}})
    t = _read(
        FileScanTask(f, [pos, eq]),
        projected_schema=Schema(TABLE.find_field(1)),
        metadata_columns=("_pos",),
    )
    # 1 by position; 3 ('v3') and 2, 5, 8 (null) by key
    assert t.column("id").to_pylist() == [0, 4, 6, 7, 9]
    assert t.column("_pos").to_pylist() == [0, 4, 6, 7, 9]


def test_bad_files_are_frazil_errors_naming_the_file(tmp_path: Path) -> None:
    f = _write(tmp_path / "d.avro", FILE_SCHEMA, _records(20))
    data = Path(f.file_path).read_bytes()
    Path(f.file_path).write_bytes(data[: len(data) - 40])
    with pytest.raises(DecodeError):
        _read(FileScanTask(f))
    Path(f.file_path).write_bytes(b"not avro")
    with pytest.raises((DecodeError, FileReadError), match=r"d\.avro|Avro"):
        _read(FileScanTask(f))
    # More records than the manifest entry says: refused.
    g = _write(tmp_path / "g.avro", FILE_SCHEMA, _records(20))
    g = DataFile(**{**g.__dict__, "record_count": 5})
    with pytest.raises(DecodeError, match="claim 20 records"):
        _read(FileScanTask(g))
    # A union Iceberg never writes.
    schema = {
        "type": "record",
        "name": "t",
        "fields": [{"name": "x", "type": ["int", "string"], "field-id": 1}],
    }
    h = _write(tmp_path / "h.avro", schema, [{"x": 1}])
    with pytest.raises(UnsupportedError, match="unions"):
        _read(FileScanTask(h), Schema(NestedField(1, "x", IntegerType())))


def test_frazil_written_avro_reads_in_fastavro(tmp_path: Path) -> None:
    catalog = load_catalog("w", type="filesystem", warehouse=str(tmp_path))
    catalog.create_namespace("db")
    schema = Schema(*(f for f in TABLE.fields if f.field_id not in (20, 21)))
    table = catalog.create_table(("db", "t"), schema, properties={"write.format.default": "avro"})
    records = _records(30)
    expected = [_expected(r) for r in records]
    for r in expected:
        del r["tn"], r["added"]
    arrow = pa.Table.from_pylist(expected, schema=_arrow(table.schema()))
    table.append(arrow)
    table = catalog.load_table(("db", "t"))
    assert table.scan().to_arrow().to_pylist() == arrow.to_pylist()
    (task,) = table.scan().plan_files()
    with open(task.file.file_path.removeprefix("file://"), "rb") as fh:
        reader = fastavro.reader(fh)
        rows = list(reader)
        writer_schema = reader.writer_schema
    ids = {f["name"]: f["field-id"] for f in writer_schema["fields"]}
    assert ids == {f.name: f.field_id for f in table.schema().fields}
    assert [r["id"] for r in rows] == list(range(30))
    assert [r["name"] for r in rows] == [r["data"] for r in records]
    assert [r["dec"] for r in rows] == [e["dec"] for e in expected]
    assert [r["u"] for r in rows] == [str(e["u"]) for e in expected] or [
        uuid.UUID(bytes=r["u"]) if isinstance(r["u"], bytes) else uuid.UUID(str(r["u"]))
        for r in rows
    ] == [e["u"] for e in expected]
    assert [r["st"] for r in rows] == [e["st"] for e in expected]
    f = task.file
    assert f.record_count == 30 and f.value_counts is not None and f.value_counts[1] == 30
    assert f.null_value_counts is not None and f.null_value_counts[2] == 10


def _arrow(schema: Schema) -> pa.Schema:
    from frazil.arrow_schema import schema_to_arrow

    return schema_to_arrow(schema)


_ = io
