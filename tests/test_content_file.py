"""DataFile records <-> the Arrow data_file struct and manifest_entry rows, round-tripped
through frazil.manifest.write_manifest / read_manifest (and fastavro for the partition
record's Avro types)."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import uuid

import fastavro
import pytest

from frazil import manifest as fm
from frazil.exceptions import InvalidArgumentError
from frazil.manifest.content_file import (
    DataFile,
    DataFileContent,
    ManifestEntryStatus,
    data_files_from_arrow,
    data_files_from_entries,
    manifest_entries,
    partition_arrow_type,
)
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.transforms import parse
from frazil.types import (
    DecimalType,
    LongType,
    NestedField,
    StringType,
    TimestamptzType,
    UUIDType,
)

SCHEMA = Schema(
    NestedField(1, "ts", TimestamptzType()),
    NestedField(2, "u", UUIDType()),
    NestedField(3, "d", DecimalType(10, 2)),
    NestedField(4, "s", StringType()),
    NestedField(5, "id", LongType()),
)
SPEC = PartitionSpec(
    PartitionField(1, 1000, parse("day"), "ts_day"),
    PartitionField(2, 1001, parse("identity"), "u"),
    PartitionField(3, 1002, parse("identity"), "d"),
    PartitionField(4, 1003, parse("truncate[2]"), "s_trunc"),
    PartitionField(1, 1004, parse("identity"), "ts"),
    PartitionField(5, 1005, parse("bucket[8]"), "id_bucket"),
    spec_id=3,
)


def files(version: int) -> list[DataFile]:
    full = DataFile(
        "s3://b/data/ü.parquet",
        "PARQUET",
        (
            dt.date(2020, 1, 2),
            uuid.UUID(int=7),
            decimal.Decimal("-1.25"),
            "ab",
            dt.datetime(2020, 1, 2, 3, tzinfo=dt.timezone.utc),
            5,
        ),
        10,
        1000,
        spec_id=3,
        column_sizes={1: 5, 2: 6},
        value_counts={1: 10},
        null_value_counts={1: 0},
        nan_value_counts={},
        lower_bounds={1: b"\x00" * 8, 4: b"a"},
        upper_bounds={4: b"b"},
        key_metadata=b"k",
        split_offsets=(4, 100),
        sort_order_id=0,
        first_row_id=100 if version >= 3 else None,
    )
    empty = DataFile("s3://b/data/n.parquet", "PARQUET", (None,) * 6, 0, 1, spec_id=3)
    out = [full, empty]
    if version >= 2:
        out.append(
            DataFile(
                "s3://b/data/eq.parquet",
                "PARQUET",
                (None,) * 6,
                3,
                30,
                content=DataFileContent.EQUALITY_DELETES,
                spec_id=3,
                equality_ids=(1, 5),
            )
        )
    return out


@pytest.mark.parametrize("version", [1, 2, 3])
def test_round_trip_through_manifests(version: int) -> None:
    ptype = partition_arrow_type(SPEC, SCHEMA)
    written = files(version)
    entries = manifest_entries(
        written, ManifestEntryStatus.ADDED, 42, None if version > 1 else 0, None, ptype, version
    )
    data = fm.write_manifest(
        entries,
        format_version=version,
        schema=json.dumps(SCHEMA.to_json()),
        partition_spec=json.dumps(SPEC.fields_to_json()),
        schema_id=0,
        partition_spec_id=3,
    )
    back = fm.read_manifest(
        data, {"added_snapshot_id": 42, "sequence_number": 9, "first_row_id": None}
    )
    assert data_files_from_arrow(back.column("data_file"), 3) == written
    with_entries = data_files_from_entries(back, 3)
    assert with_entries[0].extra["status"] == 1 and with_entries[0].extra["snapshot_id"] == 42
    if version > 1:
        assert with_entries[0].extra["sequence_number"] == 9
    # the partition record has the Avro types of the transforms' result types
    reader = fastavro.reader(io.BytesIO(data))
    avro = json.loads(reader.metadata["avro.schema"])
    df = next(f for f in avro["fields"] if f["name"] == "data_file")["type"]
    part = next(f for f in df["fields"] if f["name"] == "partition")["type"]
    types = {f["name"]: f["type"][1] for f in part["fields"]}
    assert types["ts_day"] == {"type": "int", "logicalType": "date"}
    assert types["u"]["logicalType"] == "uuid" and types["u"]["size"] == 16
    assert types["d"]["logicalType"] == "decimal" and types["d"]["scale"] == 2
    assert types["ts"]["logicalType"] == "timestamp-micros" and types["ts"]["adjust-to-utc"]
    assert types["id_bucket"] == "int"
    assert [f["field-id"] for f in part["fields"]] == [1000, 1001, 1002, 1003, 1004, 1005]


def test_unpartitioned_and_projected_reads() -> None:
    ptype = partition_arrow_type(PartitionSpec(), SCHEMA)
    f = DataFile("/x.parquet", "PARQUET", (), 1, 2)
    table = manifest_entries([f], 1, 1, None, None, ptype, 2)
    data = fm.write_manifest(
        table, format_version=2, schema="{}", partition_spec="[]", schema_id=0, partition_spec_id=0
    )
    assert data_files_from_arrow(fm.read_manifest(data).column("data_file"), 0) == [f]
    projected = fm.read_manifest(data, columns=["data_file.file_path"])
    (p,) = data_files_from_arrow(projected.column("data_file"), 0)
    assert p.file_path == "/x.parquet"


def test_bad_input() -> None:
    ptype = partition_arrow_type(SPEC, SCHEMA)
    with pytest.raises(InvalidArgumentError, match="6 fields"):
        manifest_entries([DataFile("/x", "PARQUET", (1,), 1, 1)], 1, 1, None, None, ptype, 2)
    with pytest.raises(InvalidArgumentError, match="v1 table has no delete files"):
        manifest_entries(files(2)[2:], 1, 1, None, None, ptype, 1)
    with pytest.raises(InvalidArgumentError, match="ts_day"):
        bad = DataFile("/x", "PARQUET", ("nope",) + (None,) * 5, 1, 1)
        manifest_entries([bad], 1, 1, None, None, ptype, 2)
    with pytest.raises(InvalidArgumentError, match="status"):
        manifest_entries(files(2), [1], 1, None, None, ptype, 2)
