"""Table metadata JSON (spec Appendix C, Appendix E): every version read with its defaults, written
with its own fields, malformed input refused with the field named."""

from __future__ import annotations

import copy
import gzip
import json
import tracemalloc
import uuid
import zlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import frazil.metadata as metadata_module
from frazil.exceptions import FrazilError, ParseError, UnsupportedError
from frazil.metadata import (
    BlobMetadata,
    EncryptedKey,
    PartitionStatisticsFile,
    Snapshot,
    SnapshotRef,
    StatisticsFile,
    TableMetadata,
    resolve_path,
)
from frazil.metadata import gunzip as _gunzip
from frazil.partitioning import UnknownTransform
from frazil.schema import Schema
from frazil.table.update import (
    AddSnapshotUpdate,
    SetSnapshotRefUpdate,
    new_table_metadata,
    update_table_metadata,
)
from frazil.table.update.schema import UpdateSchema
from frazil.types import IntegerType, LongType, NestedField, StringType

UUID = "9c12d441-03fe-4693-9a96-a0705ddf69c1"


def v1_minimal() -> dict[str, Any]:
    """Only what v1 requires: the deprecated single schema and partition field list."""
    return {
        "format-version": 1,
        "location": "s3://b/wh/t",
        "last-updated-ms": 1602638573874,
        "last-column-id": 3,
        "schema": {
            "type": "struct",
            "fields": [
                {"id": 1, "name": "x", "required": True, "type": "long"},
                {"id": 2, "name": "y", "required": True, "type": "long", "doc": "comment"},
                {"id": 3, "name": "z", "required": True, "type": "long"},
            ],
        },
        "partition-spec": [{"name": "x", "transform": "identity", "source-id": 1}],
        "properties": {},
        "current-snapshot-id": 3051729675574597004,
        "snapshots": [
            {
                "snapshot-id": 3051729675574597004,
                "timestamp-ms": 1515100955770,
                "summary": {"operation": "append"},
                "manifest-list": "s3://b/wh/t/metadata/snap-1.avro",
            },
            {
                "snapshot-id": 3051729675574597005,
                "timestamp-ms": 1515100955771,
                "manifests": ["s3://b/wh/t/metadata/m1.avro"],
            },
        ],
    }


def v2_full() -> dict[str, Any]:
    return {
        "format-version": 2,
        "table-uuid": UUID,
        "location": "s3://bucket/test/location",
        "last-sequence-number": 34,
        "last-updated-ms": 1602638573590,
        "last-column-id": 3,
        "current-schema-id": 1,
        "schemas": [
            {
                "type": "struct",
                "schema-id": 0,
                "fields": [{"id": 1, "name": "x", "required": True, "type": "long"}],
            },
            {
                "type": "struct",
                "schema-id": 1,
                "identifier-field-ids": [1, 2],
                "fields": [
                    {"id": 1, "name": "x", "required": True, "type": "long"},
                    {"id": 2, "name": "y", "required": True, "type": "long", "doc": "comment"},
                    {"id": 3, "name": "z", "required": True, "type": "long"},
                ],
            },
        ],
        "default-spec-id": 0,
        "partition-specs": [
            {
                "spec-id": 0,
                "fields": [
                    {"name": "x", "transform": "identity", "source-id": 1, "field-id": 1000}
                ],
            }
        ],
        "last-partition-id": 1000,
        "default-sort-order-id": 3,
        "sort-orders": [
            {
                "order-id": 3,
                "fields": [
                    {
                        "transform": "identity",
                        "source-id": 2,
                        "direction": "asc",
                        "null-order": "nulls-first",
                    },
                    {
                        "transform": "bucket[4]",
                        "source-id": 3,
                        "direction": "desc",
                        "null-order": "nulls-last",
                    },
                ],
            }
        ],
        "properties": {"read.split.target.size": "134217728"},
        "current-snapshot-id": 3055729675574597004,
        "refs": {
            "main": {"snapshot-id": 3055729675574597004, "type": "branch"},
            "test": {"snapshot-id": 3051729675574597004, "type": "tag", "max-ref-age-ms": 10},
        },
        "snapshots": [
            {
                "snapshot-id": 3051729675574597004,
                "sequence-number": 0,
                "timestamp-ms": 1515100955770,
                "summary": {"operation": "append"},
                "manifest-list": "s3://a/b/1.avro",
            },
            {
                "snapshot-id": 3055729675574597004,
                "parent-snapshot-id": 3051729675574597004,
                "sequence-number": 1,
                "timestamp-ms": 1555100955770,
                "summary": {"operation": "append"},
                "manifest-list": "s3://a/b/2.avro",
                "schema-id": 1,
            },
        ],
        "statistics": [
            {
                "snapshot-id": 3055729675574597004,
                "statistics-path": "s3://a/b/stats.puffin",
                "file-size-in-bytes": 413,
                "file-footer-size-in-bytes": 42,
                "blob-metadata": [
                    {
                        "type": "ndv",
                        "snapshot-id": 3055729675574597004,
                        "sequence-number": 1,
                        "fields": [1],
                    }
                ],
            }
        ],
        "partition-statistics": [
            {
                "snapshot-id": 3055729675574597004,
                "statistics-path": "s3://a/b/partition-stats.parquet",
                "file-size-in-bytes": 43,
            }
        ],
        "snapshot-log": [
            {"snapshot-id": 3051729675574597004, "timestamp-ms": 1515100955770},
            {"snapshot-id": 3055729675574597004, "timestamp-ms": 1555100955770},
        ],
        "metadata-log": [{"metadata-file": "s3://bucket/.../v1.json", "timestamp-ms": 1515100}],
    }


def v3_full() -> dict[str, Any]:
    m = v2_full()
    m["format-version"] = 3
    m["next-row-id"] = 100
    m["snapshots"][1].update({"first-row-id": 0, "added-rows": 100, "key-id": "k1"})
    m["encryption-keys"] = [
        {"key-id": "k1", "encrypted-key-metadata": "aWNlYmVyZwo=", "encrypted-by-id": "kms"}
    ]
    m["schemas"][1]["fields"].append(
        {
            "id": 4,
            "name": "d",
            "required": False,
            "type": "timestamp_ns",
            "initial-default": "2024-01-01T00:00:00.000000001",
            "write-default": "2024-01-01T00:00:00.000000001",
        }
    )
    m["last-column-id"] = 4
    # v3: multi-argument transforms write only source-ids
    m["partition-specs"][0]["fields"].append(
        {"name": "xy", "transform": "zorder", "source-ids": [1, 2], "field-id": 1001}
    )
    m["last-partition-id"] = 1001
    return m


def parse(obj: dict[str, Any]) -> TableMetadata:
    return TableMetadata.from_json(json.dumps(obj))


# ---- reading each version


def test_v1_reads_with_the_spec_defaults() -> None:
    m = parse(v1_minimal())
    assert m.format_version == 1 and m.table_uuid is None
    assert m.last_sequence_number == 0
    assert [s.sequence_number for s in m.snapshots] == [0, 0]
    assert m.schemas[0].schema_id == 0 and m.current_schema_id == 0
    assert m.spec().fields[0].field_id == 1000 and m.last_partition_id == 1000
    assert m.sort_order().is_unsorted() and m.default_sort_order_id == 0
    assert m.refs["main"] == SnapshotRef(3051729675574597004, "branch")
    assert m.snapshots[1].manifests == ("s3://b/wh/t/metadata/m1.avro",)
    assert m.snapshots[1].summary is None
    assert m.schema().find_field("y").doc == "comment"


def test_v1_with_both_schema_forms_and_no_current_id_uses_the_deprecated_schema() -> None:
    obj = v1_minimal()
    obj["schema"]["schema-id"] = 1
    obj["schemas"] = [{**obj["schema"], "schema-id": 0}, obj["schema"]]
    assert parse(obj).current_schema_id == 1


@pytest.mark.parametrize("version", [1, 2])
def test_last_column_id_below_the_highest_field_id_is_kept_and_new_ids_go_above_both(
    version: int,
) -> None:
    # Hive and Impala wrote such tables; Java, PyIceberg and DuckDB read them, and Java writes
    # the value back as read (TableMetadataParser keeps lastColumnId).
    obj = v1_minimal() if version == 1 else v2_full()
    m = parse({**obj, "last-column-id": 1})
    assert m.last_column_id == 1
    assert m.highest_assigned_id == max(s.highest_field_id for s in m.schemas) >= 2
    added = UpdateSchema(m).add_column("n", IntegerType()).apply()
    assert added.find_field("n").field_id == m.highest_assigned_id + 1
    assert json.loads(m.to_json())["last-column-id"] == 1
    assert TableMetadata.from_json(m.to_json_bytes()) == m


def test_last_column_id_above_the_highest_field_id_is_kept_and_new_ids_go_above_it() -> None:
    # iceberg-rust's TableMetadataV1Valid/V2Valid fixtures: last-column-id beyond every field id
    m = parse({**v2_full(), "last-column-id": 10})
    assert json.loads(m.to_json())["last-column-id"] == 10
    added = UpdateSchema(m).add_column("n", IntegerType()).apply()
    assert added.find_field("n").field_id == 11


def test_v1_schema_without_its_struct_type_is_refused() -> None:
    # As the reference (TableMetadataV1MissingSchemaType.json in its tests).
    obj = v1_minimal()
    del obj["schema"]["type"]
    with pytest.raises(ParseError, match=r"schema.type: required field is missing"):
        parse(obj)


def test_v1_is_written_with_its_deprecated_fields_and_without_v2_fields() -> None:
    m = parse(v1_minimal())
    out = m.to_dict()
    assert out["schema"] == m.schema().to_json()
    assert out["partition-spec"] == [
        {"name": "x", "transform": "identity", "source-id": 1, "field-id": 1000}
    ]
    assert "last-sequence-number" not in out
    assert all("sequence-number" not in s for s in out["snapshots"])
    assert out["snapshots"][1]["manifests"] == ["s3://b/wh/t/metadata/m1.avro"]
    assert parse(out) == m


def test_v2_round_trips_exactly() -> None:
    original = v2_full()
    m = parse(original)
    assert m.table_uuid == uuid.UUID(UUID)
    assert m.schema().identifier_field_ids == (1, 2)
    assert m.sort_order().fields[1].transform.result_type(LongType()) == IntegerType()
    assert m.refs["test"].max_ref_age_ms == 10
    assert m.statistics[0].blob_metadata[0].fields == (1,)
    assert m.partition_statistics[0].file_size_in_bytes == 43
    assert m.current_snapshot() is not None and m.current_snapshot().schema_id == 1
    out = m.to_dict()
    assert "schema" not in out and "partition-spec" not in out
    # the same JSON, key order aside
    assert out == {**original, "current-snapshot-id": original["current-snapshot-id"]}


def test_v3_fields_and_unknown_multi_argument_transform() -> None:
    m = parse(v3_full())
    assert m.next_row_id == 100
    s = m.snapshots[1]
    assert (s.first_row_id, s.added_rows, s.key_id) == (0, 100, "k1")
    assert m.encryption_keys[0] == EncryptedKey("k1", "aWNlYmVyZwo=", "kms")
    xy = m.spec().fields[1]
    assert isinstance(xy.transform, UnknownTransform) and xy.source_ids == (1, 2)
    assert m.schema().find_field("d").initial_default == "2024-01-01T00:00:00.000000001"
    out = m.to_dict()
    assert out["partition-specs"][0]["fields"][1] == {
        "name": "xy",
        "transform": "zorder",
        "source-ids": [1, 2],
        "field-id": 1001,
    }
    assert out == v3_full()


def test_v3_fields_are_not_written_for_v2() -> None:
    m = parse(v3_full()).replace(format_version=2)
    out = m.to_dict()
    assert "next-row-id" not in out and "encryption-keys" not in out
    assert "first-row-id" not in out["snapshots"][1]


def test_v4_location_is_optional_and_paths_resolve_against_it() -> None:
    obj = v3_full()
    obj["format-version"] = 4
    del obj["location"]
    obj["snapshots"][0]["manifest-list"] = "metadata/snap-1.avro"
    m = TableMetadata.from_json(json.dumps(obj), location="s3://bucket/t")
    assert m.location == "s3://bucket/t"
    assert m.resolve(m.snapshots[0].manifest_list or "") == "s3://bucket/t/metadata/snap-1.avro"
    assert m.resolve("s3://other/x.avro") == "s3://other/x.avro"
    assert parse(obj).location is None
    # spec examples: joined with one separator, nothing normalized
    assert resolve_path("data/0.parquet", "s3://bucket/db/table/") == (
        "s3://bucket/db/table//data/0.parquet"
    )
    assert resolve_path("/data/0.parquet", "s3://bucket/db/table") == (
        "s3://bucket/db/table//data/0.parquet"
    )
    obj["location"] = "relative/place"
    with pytest.raises(ParseError, match=r"location: .* must be an absolute path"):
        parse(obj)


def test_paths_before_v4_are_absolute_even_without_a_scheme() -> None:
    obj = v2_full()
    obj["location"] = "/tmp/wh/t"
    obj["snapshots"][0]["manifest-list"] = "/tmp/wh/t/metadata/snap-1.avro"
    m = parse(obj)
    assert m.resolve(m.snapshots[0].manifest_list or "") == "/tmp/wh/t/metadata/snap-1.avro"


def test_gzip_metadata_is_detected() -> None:
    m = parse(v2_full())
    data = gzip.compress(json.dumps(v2_full()).encode())
    assert TableMetadata.from_json(data) == m
    assert TableMetadata.from_json(m.to_json_bytes(compress=True)) == m
    with pytest.raises(ParseError, match="gzip"):
        TableMetadata.from_json(data[:20])


def _gzip_bomb(inflated: int) -> bytes:
    """Gzip of a JSON string of ``inflated`` spaces: about a thousandth of that size."""
    c = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [c.compress(b'{"format-version": 2, "x": "')]
    block = b" " * (1 << 20)
    parts += [c.compress(block) for _ in range(inflated >> 20)]
    return b"".join([*parts, c.flush()])


def test_gzip_bomb_is_refused_before_it_is_inflated(monkeypatch: pytest.MonkeyPatch) -> None:
    bomb = _gzip_bomb(256 << 20)
    assert len(bomb) < 300_000
    monkeypatch.setattr(metadata_module, "MAX_METADATA_BYTES", 8 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(ParseError, match="inflates past 8388608 bytes"):
            TableMetadata.from_json(bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The cap plus one inflate chunk and the bytearray's growth slack, never the 256 MiB.
    assert peak < 24 << 20, peak


def test_gzip_expansion_is_bounded_by_the_input_size() -> None:
    with pytest.raises(ParseError, match="inflates past 2097152 bytes"):
        _gunzip(_gzip_bomb(8 << 20), limit=2 << 20)
    # every member of a multi-member file is read
    two = gzip.compress(b'{"a": ') + gzip.compress(b"1}")
    assert bytes(_gunzip(two)) == b'{"a": 1}'


@pytest.mark.parametrize("version", [5, 99])
def test_newer_format_versions_are_refused(version: int) -> None:
    obj = v3_full()
    obj["format-version"] = version
    with pytest.raises(UnsupportedError, match=f"format version {version} is newer"):
        parse(obj)


# ---- malformed input: the error names the field


def _break(obj: dict[str, Any], path: list[Any], value: Any = ...) -> dict[str, Any]:
    broken = copy.deepcopy(obj)
    target = broken
    for key in path[:-1]:
        target = target[key]
    if value is ...:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return broken


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (["format-version"], ..., "format-version: required field is missing"),
        (["format-version"], "2", "format-version: expected a 32-bit integer, got a string"),
        (["format-version"], 0, "format-version: 0 is not a valid"),
        (["table-uuid"], ..., "table-uuid: required field is missing"),
        (["table-uuid"], "nope", "table-uuid: 'nope' is not a UUID"),
        (["location"], 5, "location: expected a string, got an integer"),
        (["last-sequence-number"], ..., "last-sequence-number: required"),
        (["last-updated-ms"], 1.5, "last-updated-ms: expected a 64-bit integer, got a number"),
        (["last-column-id"], 2**31, "last-column-id: 2147483648 is out of range"),
        (["schemas"], {}, "schemas: expected a JSON list, got an object"),
        (["schemas"], [], "schemas: must not be empty"),
        (["schemas", 1, "fields", 1, "id"], 1, r"schemas\[1\]: duplicate field id 1"),
        (["schemas", 1, "fields", 1, "name"], ..., r"schemas\[1\].fields\[1\].name: required"),
        (["schemas", 1, "fields", 1, "required"], "yes", r"fields\[1\].required: expected a b"),
        (["schemas", 1, "fields", 1, "type"], "integer", r"fields\[1\].type: unknown type"),
        (
            ["schemas", 1, "fields", 1, "type"],
            {"type": "list", "element-id": 9, "element": "int"},
            r"fields\[1\].type.element-required: required field is missing",
        ),
        (["schemas", 1, "schema-id"], 0, "schemas: duplicate schema-id 0"),
        (["schemas", 1, "identifier-field-ids"], [7], "identifier-field-ids: unknown field id 7"),
        (["current-schema-id"], 7, "current-schema-id: no schema with id 7"),
        (
            ["partition-specs", 0, "fields", 0, "transform"],
            "bucket[0]",
            r"fields\[0\].transform: bucket count",
        ),
        (["partition-specs", 0, "fields", 0, "source-id"], ..., "source-id: required field"),
        (["default-spec-id"], 3, "default-spec-id: no partition spec with id 3"),
        (["sort-orders", 0, "fields", 0, "direction"], "up", "direction: 'up' is not one of"),
        (["sort-orders", 0, "order-id"], 0, "order id 0 is reserved"),
        (["default-sort-order-id"], 9, "default-sort-order-id: no sort order with id 9"),
        (["properties"], {"a": 1}, "properties.a: expected a string, got an integer"),
        (["snapshots", 1, "snapshot-id"], 3051729675574597004, "snapshots: duplicate snapshot-id"),
        (["snapshots", 1, "manifest-list"], ..., r"snapshots\[1\].manifest-list: required"),
        (["snapshots", 1, "summary", "operation"], ..., "summary.operation: required"),
        (["current-snapshot-id"], 12, "current-snapshot-id: no snapshot with id 12"),
        (["refs", "test", "snapshot-id"], 5, "refs.test.snapshot-id: no snapshot with id 5"),
        (["refs", "test", "type"], "label", "refs.test.type: expected 'branch' or 'tag'"),
        (["refs", "test", "min-snapshots-to-keep"], 2, "a tag cannot set min-snapshots"),
        (["refs", "main", "snapshot-id"], 3051729675574597004, "differs from the main branch"),
        (["snapshot-log", 0], [], r"snapshot-log\[0\]: expected a JSON object, got a list"),
        (["metadata-log", 0, "metadata-file"], ..., "metadata-file: required"),
        (
            ["statistics", 0, "blob-metadata", 0, "fields"],
            ...,
            r"blob-metadata\[0\].fields: required",
        ),
    ],
)
def test_malformed_metadata_names_the_field(path: list[Any], value: Any, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse(_break(v2_full(), path, value))


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (["next-row-id"], ..., "next-row-id: required field is missing"),
        (["schemas", 1, "fields", 3, "initial-default"], "x", "initial-default: "),
        (
            ["schemas", 1, "fields", 3, "type"],
            "variant",
            "initial-default: a variant column must default to null",
        ),
        (["encryption-keys", 0, "encrypted-key-metadata"], ..., "encrypted-key-metadata: req"),
        (["partition-specs", 0, "fields", 1, "source-ids"], [], "source-ids: must not be empty"),
    ],
)
def test_malformed_v3_metadata_names_the_field(path: list[Any], value: Any, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse(_break(v3_full(), path, value))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{", "invalid JSON"),
        ("[]", "expected a JSON object, got a list"),
        (b"\xff\xfe", "not UTF-8"),
        ("[" * 100_000 + "]" * 100_000, "invalid JSON|too deep"),
    ],
)
def test_not_metadata_at_all(data: str | bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        TableMetadata.from_json(data)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (["schemas", 1, "fields", 1, "doc"], "bad \ud800 doc", r"schemas\[1\]\.fields\[1\]\.doc"),
        (["schemas", 0, "fields", 0, "name"], "\udc00", r"schemas\[0\]\.fields\[0\]\.name"),
        (["properties"], {"k": "v\ud83d"}, r"properties\.k"),
        (["properties"], {"\ud800k": "v"}, r"properties: key '\\ud800k'"),
    ],
    ids=["doc", "field name", "property value", "property key"],
)
def test_a_lone_surrogate_is_a_parse_error_naming_the_field(
    path: list[Any], value: Any, message: str
) -> None:
    # json.dumps writes the lone surrogate as its escape, as such a file holds it.
    text = json.dumps(_break(v2_full(), path, value))
    assert "\\ud" in text or "\\udc" in text
    for data in (text, text.encode()):
        with pytest.raises(ParseError, match=message + ": holds a lone surrogate") as e:
            TableMetadata.from_json(data)
        assert isinstance(e.value.__cause__, UnicodeEncodeError)
    with pytest.raises(ParseError, match=f"^table metadata /t/v1.metadata.json: {message}"):
        TableMetadata.from_json(text, file="/t/v1.metadata.json")


def test_a_surrogate_pair_is_one_character() -> None:
    text = json.dumps(_break(v2_full(), ["properties"], {"k": "\U0001f600"}))
    assert "\\ud83d\\ude00" in text
    m = TableMetadata.from_json(text)
    assert m.properties["k"] == "\U0001f600"
    assert "\U0001f600".encode() in m.to_json_bytes()


def test_errors_name_the_file_when_given() -> None:
    with pytest.raises(ParseError, match=r"^table metadata /t/v1.metadata.json: invalid JSON"):
        TableMetadata.from_json("{", file="/t/v1.metadata.json")
    with pytest.raises(UnsupportedError, match=r"^table metadata /t/v9.metadata.json: format-v"):
        TableMetadata.from_json(json.dumps({"format-version": 9}), file="/t/v9.metadata.json")


def test_errors_are_frazil_errors_and_value_errors() -> None:
    with pytest.raises(ValueError):
        parse(_break(v2_full(), ["location"]))
    with pytest.raises(FrazilError):
        TableMetadata.from_json(123)  # type: ignore[arg-type]


# ---- object JSON forms


def test_snapshot_ref_statistics_and_key_json() -> None:
    ref = SnapshotRef(5, "branch", 3, 1000, 2000)
    assert ref.to_json() == {
        "snapshot-id": 5,
        "type": "branch",
        "min-snapshots-to-keep": 3,
        "max-snapshot-age-ms": 1000,
        "max-ref-age-ms": 2000,
    }
    assert SnapshotRef.from_json(ref.to_json(), "r") == ref
    stats = StatisticsFile(1, "p", 2, 3, (BlobMetadata("t", 1, 1, (1, 2), {"a": "b"}),), "km")
    assert StatisticsFile.from_json(stats.to_json(), "s") == stats
    ps = PartitionStatisticsFile(1, "p", 5)
    assert PartitionStatisticsFile.from_json(ps.to_json(), "p") == ps
    key = EncryptedKey("k", "bWV0YQ==", None, {"x": "y"})
    assert EncryptedKey.from_json(key.to_json(), "k") == key


def test_statistics_key_fields_round_trip_in_javas_field_order() -> None:
    # key-id: Java's StatisticsFileParser of apache/iceberg PR #17417 writes it after
    # file-footer-size-in-bytes; key-metadata (the spec's) sits at the same place.
    obj = v3_full()
    obj["statistics"][0]["key-id"] = "k1"
    obj["statistics"].append({**obj["statistics"][0], "key-metadata": "AQ==", "snapshot-id": 1})
    del obj["statistics"][1]["key-id"]
    m = TableMetadata.from_json(json.dumps(obj))
    assert m.statistics[0].key_id == "k1" and m.statistics[0].key_metadata is None
    assert m.statistics[1].key_metadata == "AQ==" and m.statistics[1].key_id is None
    out = json.loads(m.to_json_bytes())
    head = ["snapshot-id", "statistics-path", "file-size-in-bytes", "file-footer-size-in-bytes"]
    assert list(out["statistics"][0]) == [*head, "key-id", "blob-metadata"]
    assert list(out["statistics"][1]) == [*head, "key-metadata", "blob-metadata"]
    assert TableMetadata.from_json(m.to_json_bytes()) == m


# ---- round-trip properties

_names = st.text(st.characters(categories=["L", "N"]), min_size=1, max_size=8)


@st.composite
def table_metadata(draw: st.DrawFn) -> TableMetadata:
    version = draw(st.integers(1, 3))
    names = draw(st.lists(_names, min_size=1, max_size=6, unique=True))
    types = st.sampled_from([IntegerType(), LongType(), StringType()])
    schema = Schema(
        *(NestedField(i + 1, n, draw(types), draw(st.booleans())) for i, n in enumerate(names))
    )
    m = new_table_metadata(
        schema,
        draw(st.sampled_from(["s3://b/t", "file:///tmp/t", "gs://x/y/z"])),
        properties=draw(st.dictionaries(_names, _names, max_size=3)),
        format_version=version,
    )
    snapshot_ids = draw(st.lists(st.integers(1, 2**63 - 1), max_size=4, unique=True))
    parent = None
    for i, sid in enumerate(snapshot_ids):
        snapshot = Snapshot(
            snapshot_id=sid,
            timestamp_ms=draw(st.integers(0, 2**41)),
            parent_snapshot_id=parent,
            sequence_number=i + 1 if version >= 2 else 0,
            manifest_list=f"s3://b/t/metadata/snap-{sid}.avro",
            summary={"operation": draw(st.sampled_from(["append", "overwrite", "delete"]))},
            schema_id=0,
            first_row_id=m.next_row_id if version >= 3 else None,
            added_rows=draw(st.integers(0, 1000)) if version >= 3 else None,
        )
        updates: list[Any] = [AddSnapshotUpdate(snapshot)]
        if draw(st.booleans()):
            updates.append(SetSnapshotRefUpdate("main", sid))
        if draw(st.booleans()):
            updates.append(SetSnapshotRefUpdate(f"tag{i}", sid, "tag", max_ref_age_ms=1000))
        m = update_table_metadata(m, updates, previous_metadata_location=f"s3://b/v{i}.json")
        parent = sid
    return m


@given(table_metadata())
def test_metadata_round_trips_through_json(m: TableMetadata) -> None:
    text = m.to_json()
    back = TableMetadata.from_json(text)
    assert back == m
    assert back.to_json() == text
    assert TableMetadata.from_json(m.to_json_bytes(compress=True)) == m


# ---- robustness: any damage gives a FrazilError, never another exception

_junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


@given(st.data(), st.sampled_from([v1_minimal, v2_full, v3_full]))
def test_damaged_metadata_fails_cleanly(data: st.DataObject, make: Any) -> None:
    obj = make()
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(obj)))
        parent = obj
        for key in path[:-1]:
            parent = parent[key]
        if data.draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = data.draw(_junk)
        if not _paths(obj):
            break
    try:
        m = parse(obj)
    except FrazilError:
        return
    # what was accepted writes back as read (a last-column-id below the highest field id too)
    assert TableMetadata.from_json(m.to_json()) == m


def test_v3_snapshot_with_first_row_id_needs_added_rows() -> None:
    # spec "Snapshots": both are required in v3; added-rows bounds the row ids assigned
    m = v3_full()
    del m["snapshots"][1]["added-rows"]
    with pytest.raises(ParseError, match=r"snapshots\[1\].*first-row-id needs added-rows"):
        TableMetadata.from_json(json.dumps(m))
