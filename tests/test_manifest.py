"""Manifest lists and manifests: frazil's decoder against fastavro's generic decoding plus the
spec's inheritance (tests/manifest_expected.py), on files fastavro writes with the schemas the
spec prescribes; frazil's encoder read back by fastavro; bad input."""

from __future__ import annotations

import io
import json
import random
import struct
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from manifest_expected import diff, expected_manifest, expected_manifest_list, raw_rows

from frazil import manifest as fm
from frazil.exceptions import DecodeError, FrazilError, InvalidArgumentError, UnsupportedError

CODECS = ["null", "deflate", "snappy", "zstandard"]


def opt(t: Any) -> list[Any]:
    return ["null", t]


def fld(name: str, t: Any, fid: int, optional: bool = False) -> dict[str, Any]:
    f: dict[str, Any] = {"name": name, "type": opt(t) if optional else t, "field-id": fid}
    if optional:
        f["default"] = None
    return f


def amap(name: str, fid: int, kid: int, vid: int, value: str) -> dict[str, Any]:
    items = {
        "type": "record",
        "name": f"k{kid}_v{vid}",
        "fields": [fld("key", "int", kid), fld("value", value, vid)],
    }
    return fld(name, {"type": "array", "logicalType": "map", "items": items}, fid, True)


PARTITION = {
    "type": "record",
    "name": "r102",
    "fields": [
        fld("day", {"type": "int", "logicalType": "date"}, 1000, True),
        fld("cat", "string", 1001, True),
        fld("b", "int", 1002, True),
        fld(
            "ts",
            {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": True},
            1003,
            True,
        ),
        fld(
            "dec",
            {
                "type": "fixed",
                "name": "d1004",
                "size": 5,
                "logicalType": "decimal",
                "precision": 10,
                "scale": 2,
            },
            1004,
            True,
        ),
        fld("f", "double", 1005, True),
        fld("u", {"type": "fixed", "name": "u1006", "size": 16, "logicalType": "uuid"}, 1006, True),
    ],
}


def data_file_schema(version: int) -> dict[str, Any]:
    fields = []
    if version >= 2:
        fields.append(fld("content", "int", 134))
    fields += [
        fld("file_path", "string", 100),
        fld("file_format", "string", 101),
        fld("partition", PARTITION, 102),
        fld("record_count", "long", 103),
        fld("file_size_in_bytes", "long", 104),
    ]
    if version == 1:
        fields.append(fld("block_size_in_bytes", "long", 105))
    fields += [
        amap("column_sizes", 108, 117, 118, "long"),
        amap("value_counts", 109, 119, 120, "long"),
        amap("null_value_counts", 110, 121, 122, "long"),
        amap("nan_value_counts", 137, 138, 139, "long"),
        amap("lower_bounds", 125, 126, 127, "bytes"),
        amap("upper_bounds", 128, 129, 130, "bytes"),
        fld("key_metadata", "bytes", 131, True),
        fld("split_offsets", {"type": "array", "items": "long", "element-id": 133}, 132, True),
    ]
    if version >= 2:
        fields.append(
            fld("equality_ids", {"type": "array", "items": "int", "element-id": 136}, 135, True)
        )
    fields.append(fld("sort_order_id", "int", 140, True))
    if version >= 3:
        fields.append(fld("first_row_id", "long", 142, True))
    if version >= 2:
        fields.append(fld("referenced_data_file", "string", 143, True))
    if version >= 3:
        fields.append(fld("content_offset", "long", 144, True))
        fields.append(fld("content_size_in_bytes", "long", 145, True))
    return {"type": "record", "name": "r2", "fields": fields}


def manifest_entry_schema(version: int) -> dict[str, Any]:
    fields = [fld("status", "int", 0), fld("snapshot_id", "long", 1, version >= 2)]
    if version >= 2:
        fields += [
            fld("sequence_number", "long", 3, True),
            fld("file_sequence_number", "long", 4, True),
        ]
    fields.append(fld("data_file", data_file_schema(version), 2))
    return {"type": "record", "name": "manifest_entry", "fields": fields}


def random_entries(rng: random.Random, version: int, n: int) -> list[dict[str, Any]]:
    def maybe(v: Any) -> Any:
        return None if rng.random() < 0.2 else v

    def kv(value: Any) -> Any:
        return maybe(
            [{"key": k, "value": value()} for k in rng.sample(range(1, 50), rng.randint(0, 8))]
        )

    out = []
    for i in range(n):
        content = rng.choice([0, 0, 0, 1, 2]) if version >= 2 else 0
        df: dict[str, Any] = {
            "content": content,
            "file_path": f"s3://bucket/data/ü-{i}-{rng.random()}.parquet",
            "file_format": "PARQUET",
            "partition": {
                "day": maybe(rng.randint(-30000, 30000)),
                "cat": maybe(rng.choice(["a", "", "🧊", "long" * 20])),
                "b": maybe(rng.randint(-(2**31), 2**31 - 1)),
                "ts": maybe(rng.randint(-(6 * 10**16), 2 * 10**17)),
                "dec": maybe(
                    rng.randint(-(10**10) + 1, 10**10 - 1).to_bytes(5, "big", signed=True)
                ),
                "f": maybe(rng.choice([0.0, -0.0, float("nan"), float("inf"), rng.random()])),
                "u": maybe(rng.randbytes(16)),
            },
            "record_count": rng.randint(0, 10**6),
            "file_size_in_bytes": rng.randint(0, 10**9),
            "block_size_in_bytes": 64 << 20,
            "column_sizes": kv(lambda: rng.randint(0, 2**40)),
            "value_counts": kv(lambda: rng.randint(0, 2**40)),
            "null_value_counts": kv(lambda: rng.randint(0, 2**40)),
            "nan_value_counts": kv(lambda: rng.randint(0, 2**40)),
            "lower_bounds": kv(lambda: rng.randbytes(rng.randint(0, 16))),
            "upper_bounds": kv(lambda: rng.randbytes(rng.randint(0, 16))),
            "key_metadata": maybe(rng.randbytes(4)),
            "split_offsets": maybe(sorted(rng.randint(0, 10**9) for _ in range(rng.randint(0, 4)))),
            "equality_ids": [1, 2] if content == 2 else None,
            "sort_order_id": maybe(rng.randint(0, 3)),
            "first_row_id": rng.choice([None, rng.randint(0, 10**9)]) if content == 0 else None,
            "referenced_data_file": maybe("s3://bucket/data/x.parquet") if content == 1 else None,
            "content_offset": maybe(rng.randint(0, 10**6)) if content == 1 else None,
            "content_size_in_bytes": maybe(rng.randint(0, 10**6)) if content == 1 else None,
        }
        status = rng.choice([0, 1, 1, 2])
        seq = None if (status == 1 and rng.random() < 0.7) else rng.randint(0, 100)
        out.append(
            {
                "status": status,
                "snapshot_id": rng.randint(0, 2**62)
                if version == 1
                else maybe(rng.randint(0, 2**62)),
                "sequence_number": seq,
                "file_sequence_number": seq,
                "data_file": df,
            }
        )
    return out


def avro_bytes(
    schema: dict[str, Any],
    records: list[dict[str, Any]],
    codec: str = "null",
    metadata: dict[str, str] | None = None,
    sync_interval: int = 16000,
) -> bytes:
    buf = io.BytesIO()
    fastavro.writer(
        buf,
        fastavro.parse_schema(schema),
        records,
        codec=codec,
        metadata=metadata or {},
        sync_interval=sync_interval,
    )
    return buf.getvalue()


def manifest_bytes(version: int, n: int, codec: str = "null", seed: int = 0) -> bytes:
    entries = random_entries(random.Random(seed), version, n)
    meta = {
        "schema": "{}",
        "partition-spec": "[]",
        "format-version": str(version),
        "content": "data",
    }
    return avro_bytes(manifest_entry_schema(version), entries, codec, meta, sync_interval=2000)


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("codec", CODECS)
def test_manifests_decode_like_fastavro(version: int, codec: str) -> None:
    data = manifest_bytes(version, 300, codec, seed=version)
    table = fm.read_manifest(data)
    assert table.num_rows == 300
    assert not diff(raw_rows(table), expected_manifest(data))
    assert table.schema.metadata[b"format-version"] == str(version).encode()


@pytest.mark.parametrize("version", [1, 2, 3])
def test_inheritance(version: int) -> None:
    data = manifest_bytes(version, 200, seed=10 + version)
    for mf in [
        {"added_snapshot_id": 77, "sequence_number": 5, "first_row_id": 1000},
        {"added_snapshot_id": 78, "sequence_number": 0, "first_row_id": None},
        {"added_snapshot_id": None, "sequence_number": None, "first_row_id": 0},
    ]:
        table = fm.read_manifest(data, mf)
        mismatches = diff(raw_rows(table), expected_manifest(data, mf))
        assert not mismatches, mismatches[:10]


def test_first_row_id_rule_by_hand() -> None:
    # record counts 10, 20 (assigned 5), 30, delete file 40, 50: nulls get 100, 110, 140
    entries = []
    for i, (count, content, first) in enumerate(
        [(10, 0, None), (20, 0, 5), (30, 0, None), (40, 1, None), (50, 0, None)]
    ):
        e = random_entries(random.Random(i), 3, 1)[0]
        e["data_file"].update(record_count=count, content=content, first_row_id=first)
        entries.append(e)
    data = avro_bytes(manifest_entry_schema(3), entries)
    got = fm.read_manifest(
        data, {"added_snapshot_id": 1, "sequence_number": 2, "first_row_id": 100}
    )
    ids = got.column("data_file").combine_chunks().field("first_row_id").to_pylist()
    assert ids == [100, 5, 110, None, 140]


def test_v1_manifest_list_defaults_and_old_names() -> None:
    summary = {
        "type": "record",
        "name": "r508",
        "fields": [
            fld("contains_null", "boolean", 509),
            fld("lower_bound", "bytes", 510, True),
            fld("upper_bound", "bytes", 511, True),
        ],
    }
    schema = {
        "type": "record",
        "name": "manifest_file",
        "fields": [
            fld("manifest_path", "string", 500),
            fld("manifest_length", "long", 501),
            fld("partition_spec_id", "int", 502),
            fld("added_snapshot_id", "long", 503, True),
            fld("added_data_files_count", "int", 504, True),
            fld("existing_data_files_count", "int", 505, True),
            fld("deleted_data_files_count", "int", 506, True),
            fld("partitions", {"type": "array", "items": summary, "element-id": 508}, 507, True),
            fld("added_rows_count", "long", 512, True),
            fld("existing_rows_count", "long", 513, True),
            fld("deleted_rows_count", "long", 514, True),
        ],
    }
    records = [
        {
            "manifest_path": f"m{i}.avro",
            "manifest_length": i,
            "partition_spec_id": 0,
            "added_snapshot_id": i,
            "added_data_files_count": None if i % 2 else i,
            "existing_data_files_count": 1,
            "deleted_data_files_count": 0,
            "partitions": [{"contains_null": True, "lower_bound": b"\x01", "upper_bound": None}],
            "added_rows_count": 3,
            "existing_rows_count": 4,
            "deleted_rows_count": 5,
        }
        for i in range(20)
    ]
    data = avro_bytes(schema, records, "deflate")
    table = fm.read_manifest_list(data)
    assert not diff(table.to_pylist(), expected_manifest_list(data))
    assert table.column("sequence_number").to_pylist() == [0] * 20
    assert table.column("content").to_pylist() == [0] * 20


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("codec", CODECS)
def test_written_manifests_read_back_by_fastavro(version: int, codec: str) -> None:
    source = manifest_bytes(version, 150, seed=20 + version)
    table = fm.read_manifest(source)
    data = fm.write_manifest(
        table,
        format_version=version,
        schema="{}",
        partition_spec="[]",
        schema_id=0,
        partition_spec_id=0,
        codec=codec,
    )
    reader = fastavro.reader(io.BytesIO(data))
    assert reader.metadata["avro.codec"] == codec
    assert reader.metadata["format-version"] == str(version)
    written = json.loads(reader.metadata["avro.schema"])

    # the schema the spec prescribes for this version: same field ids, in order
    def ids(schema: dict[str, Any]) -> list[int]:
        return [f["field-id"] for f in schema["fields"]]

    assert ids(written) == ids(manifest_entry_schema(version))
    df = next(f for f in written["fields"] if f["field-id"] == 2)["type"]
    assert ids(df) == ids(data_file_schema(version))
    assert ids(next(f for f in df["fields"] if f["field-id"] == 102)["type"]) == ids(PARTITION)
    # fastavro reads what frazil wrote as what frazil read
    expected = expected_manifest(source)
    if version == 1:  # v1 snapshot ids are required, every sequence number reads as null
        pass
    assert not diff(raw_rows(table), expected_manifest(data))
    assert not diff(raw_rows(fm.read_manifest(data)), expected)


def test_manifest_list_round_trip_and_summaries() -> None:
    source = manifest_bytes(2, 100, seed=3)
    entries = fm.read_manifest(source)
    summary = fm.summarize_manifest(entries)
    statuses = entries.column("status").to_pylist()
    counts = [df["record_count"] for df in entries.column("data_file").to_pylist()]
    assert summary["added_files_count"] == statuses.count(1)
    assert summary["deleted_rows_count"] == sum(
        c for s, c in zip(statuses, counts, strict=True) if s == 2
    )
    parts = [df["partition"] for df in entries.column("data_file").to_pylist()]
    f = [p["f"] for p in parts]
    fs = summary["partitions"][5]
    assert fs["contains_null"] == (None in f)
    assert fs["contains_nan"] == any(x is not None and x != x for x in f)
    finite = [x for x in f if x is not None and x == x]
    lo = struct.unpack("<d", fs["lower_bound"])[0]
    assert lo == min(finite)
    if lo == 0 and any(struct.pack("<d", x) == struct.pack("<d", -0.0) for x in finite):
        assert struct.pack("<d", lo) == struct.pack("<d", -0.0)
    cats = [p["cat"] for p in parts if p["cat"] is not None]
    assert summary["partitions"][1]["lower_bound"] == min(c.encode() for c in cats)
    assert summary["partitions"][1]["upper_bound"] == max(c.encode() for c in cats)

    rows = [
        {
            "manifest_path": f"s3://b/m{i}.avro",
            "manifest_length": 10 + i,
            "partition_spec_id": 0,
            "content": i % 2,
            "sequence_number": i,
            "min_sequence_number": 0,
            "added_snapshot_id": 5,
            **{k: v for k, v in summary.items() if k != "min_sequence_number"},
            "key_metadata": None,
            "first_row_id": None if i % 2 else i * 1000,
        }
        for i in range(5)
    ]
    schema = fm.read_manifest_list(
        fm.write_manifest_list(
            pa.Table.from_pylist(rows[:0] or rows),
            format_version=3,
            snapshot_id=5,
            sequence_number=4,
        )
    ).schema
    for version in (1, 2, 3):
        data = fm.write_manifest_list(
            pa.Table.from_pylist(rows, schema=schema),
            format_version=version,
            snapshot_id=5,
            sequence_number=4,
            first_row_id=0,
            codec="snappy",
        )
        back = fm.read_manifest_list(data)
        assert not diff(back.to_pylist(), expected_manifest_list(data))
        expected = [dict(r) for r in rows]
        for r in expected:
            if version == 1:
                r.update(content=0, sequence_number=0, min_sequence_number=0)
            if version < 3:
                r["first_row_id"] = None
        assert not diff(back.to_pylist(), expected)


def test_projection_skips_columns() -> None:
    data = manifest_bytes(2, 50, "deflate")
    full = fm.read_manifest(data)
    few = fm.read_manifest(data, columns=["data_file.file_path", "data_file.partition"])
    df = few.column("data_file").type
    names = {df.field(i).name for i in range(df.num_fields)}
    assert names == {"file_path", "partition", "content", "record_count", "first_row_id"}
    assert few.column("data_file").combine_chunks().field("file_path") == full.column(
        "data_file"
    ).combine_chunks().field("file_path")


def test_read_many_in_parallel() -> None:
    datas = [manifest_bytes(2, 50, "deflate", seed=s) for s in range(6)]
    mfs = [{"added_snapshot_id": s, "sequence_number": s, "first_row_id": None} for s in range(6)]
    tables = fm.read_manifests(datas, mfs, threads=2)
    for data, mf, table in zip(datas, mfs, tables, strict=True):
        assert not diff(raw_rows(table), expected_manifest(data, mf))
    with pytest.raises(DecodeError, match="manifest 1"):
        fm.read_manifests([datas[0], b"garbage"], threads=2)


def test_field_ids_on_columns() -> None:
    table = fm.read_manifest(manifest_bytes(3, 3))
    assert table.schema.field("status").metadata[b"PARQUET:field_id"] == b"0"
    df = table.schema.field("data_file").type
    assert df.field("lower_bounds").metadata[b"PARQUET:field_id"] == b"125"
    assert df.field("partition").type.field("u").metadata[b"PARQUET:field_id"] == b"1006"


# ---------------------------------------------------------------------------------------------
# bad input


def test_bad_input_raises_clear_errors() -> None:
    good = manifest_bytes(2, 40, "deflate")
    cases = {
        "empty": b"",
        "magic": b"Obj\x02" + good[4:],
        "truncated header": good[:30],
    }
    for name, data in cases.items():
        with pytest.raises(DecodeError):
            fm.read_manifest(data, path=f"case-{name}.avro")
    with pytest.raises(DecodeError, match="wrong magic"):
        fm.read_manifest(b"PAR1" + good[4:])
    with pytest.raises(DecodeError, match=r"^m\.avro: "):
        fm.read_manifest(good[:-5], path="m.avro")
    # a sync marker flipped
    bad_sync = bytearray(good)
    bad_sync[-1] ^= 0xFF
    with pytest.raises(DecodeError, match="sync marker"):
        fm.read_manifest(bytes(bad_sync))


def test_every_truncation_is_an_error_not_a_crash() -> None:
    data = manifest_bytes(2, 20, "null")
    for n in range(0, len(data) - 1, 7):
        with pytest.raises(FrazilError):
            fm.read_manifest(data[:n])


def test_hostile_lengths_and_codecs() -> None:
    def container(meta: dict[bytes, bytes], body: bytes, sync: bytes = b"S" * 16) -> bytes:
        def zz(v: int) -> bytes:
            z = (v << 1) ^ (v >> 63)
            out = bytearray()
            while z >= 0x80:
                out.append((z & 0x7F) | 0x80)
                z >>= 7
            out.append(z)
            return bytes(out)

        head = b"Obj\x01" + zz(len(meta))
        for k, v in meta.items():
            head += zz(len(k)) + k + zz(len(v)) + v
        return head + zz(0) + sync + body

    schema = json.dumps(manifest_entry_schema(2)).encode()
    zz_big = b"\xfe\xff\xff\xff\xff\xff\xff\xff\x7f"  # a huge positive long
    for body, match in [
        (b"\x02" + zz_big, "truncated|block"),  # block of 2^62 bytes
        (zz_big + b"\x02\x00" + b"S" * 16, "claims|block"),  # 2^62 records in one byte
        (b"\x02\x02\x00" + b"X" * 16, "sync marker"),
    ]:
        with pytest.raises(DecodeError, match=match):
            fm.read_manifest(container({b"avro.schema": schema, b"avro.codec": b"null"}, body))
    with pytest.raises(DecodeError):  # a header map claiming 2^62 entries
        fm.read_manifest(b"Obj\x01" + zz_big + b"\x00")
    with pytest.raises(UnsupportedError, match="bzip2"):
        fm.read_manifest(container({b"avro.schema": schema, b"avro.codec": b"bzip2"}, b""))
    with pytest.raises(DecodeError, match=r"avro\.schema"):
        fm.read_manifest(container({b"avro.schema": b"{nope"}, b""))
    with pytest.raises(DecodeError, match="UTF-8"):
        fm.read_manifest(container({b"avro.schema": b"\xff\xfe"}, b""))


def test_invalid_utf8_string_value() -> None:
    entries = random_entries(random.Random(1), 2, 1)
    entries[0]["data_file"]["file_path"] = "PATH-MARKER"
    data = bytearray(avro_bytes(manifest_entry_schema(2), entries))
    i = data.index(b"PATH-MARKER")
    data[i] = 0xFF
    with pytest.raises(DecodeError, match="UTF-8"):
        fm.read_manifest(bytes(data))


def test_schemas_that_do_not_match_the_spec() -> None:
    schema = manifest_entry_schema(2)
    missing = json.loads(json.dumps(schema))
    missing["fields"] = [f for f in missing["fields"] if f["field-id"] != 0]
    data = avro_bytes(
        missing,
        [
            {k: v for k, v in e.items() if k != "status"}
            for e in random_entries(random.Random(0), 2, 2)
        ],
    )
    with pytest.raises(DecodeError, match="status"):
        fm.read_manifest(data)
    wrong = json.loads(json.dumps(schema))
    wrong["fields"][0]["type"] = "string"
    entries = random_entries(random.Random(0), 2, 2)
    for e in entries:
        e["status"] = "1"
    with pytest.raises(DecodeError, match="status"):
        fm.read_manifest(avro_bytes(wrong, entries))
    with pytest.raises(DecodeError):
        fm.read_manifest_list(manifest_bytes(2, 2))


def test_writer_rejects_bad_arguments() -> None:
    table = fm.read_manifest(manifest_bytes(2, 3))
    with pytest.raises(InvalidArgumentError, match="schema-id"):
        fm.write_manifest(table, format_version=2, schema="{}", partition_spec="[]")
    with pytest.raises(UnsupportedError):
        fm.write_manifest(
            table,
            format_version=5,
            schema="{}",
            partition_spec="[]",
            schema_id=0,
            partition_spec_id=0,
        )
    with pytest.raises(UnsupportedError):
        fm.write_manifest(
            table,
            format_version=2,
            schema="{}",
            partition_spec="[]",
            schema_id=0,
            partition_spec_id=0,
            codec="lz4",
        )
    no_ids = table.drop_columns(["status"])
    with pytest.raises(InvalidArgumentError, match="status"):
        fm.write_manifest(
            no_ids,
            format_version=2,
            schema="{}",
            partition_spec="[]",
            schema_id=0,
            partition_spec_id=0,
        )


# --------------------------------------------------------------------------------------------
# Manifests PyIceberg 0.12 writes: one Avro block per manifest entry


def _pyiceberg_manifests(root: Any, codec: str, commits: int, per: int) -> list[tuple[bytes, Any]]:
    """A table written by PyIceberg's public commit path (fast appends of data files with
    bounds and counts on 5 columns, two of them strings; partitioned by ``day(ts)`` and
    ``identity(category)``) with its manifests in ``codec``: each manifest's bytes and its row of
    the manifest list, as fastavro reads it."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import DayTransform, IdentityTransform
    from pyiceberg.typedef import Record
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestampType

    cat = SqlCatalog("t", uri=f"sqlite:///{root}/c.db", warehouse=f"file://{root}/w")
    cat.create_namespace("db")
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "ts", TimestampType(), required=True),
        NestedField(3, "category", StringType(), required=False),
        NestedField(4, "amount", DoubleType(), required=False),
        NestedField(5, "country", StringType(), required=False),
    )
    spec = PartitionSpec(
        PartitionField(source_id=2, field_id=1000, transform=DayTransform(), name="ts_day"),
        PartitionField(source_id=3, field_id=1001, transform=IdentityTransform(), name="cat"),
    )
    table = cat.create_table(
        "db.t",
        schema=schema,
        partition_spec=spec,
        properties={"format-version": "2", "write.avro.compression-codec": codec},
    )
    rng = random.Random(codec)
    words = ["books", "games", "music", "sports", "ü-umlaut", ""]
    for c in range(commits):
        files = []
        for f in range(per):
            day = 19723 + rng.randrange(5)
            rows = rng.randint(1, 50_000)
            lo = rng.randint(-(2**40), 2**40)
            cats = sorted(rng.sample(words, 2))
            files.append(
                DataFile.from_args(
                    _table_format_version=2,
                    content=DataFileContent.DATA,
                    file_path=f"file://{root}/w/db/t/{c}-{f}-{'x' * rng.randrange(80)}.parquet",
                    file_format=FileFormat.PARQUET,
                    partition=Record(day, None if f % 7 == 0 else cats[0]),
                    record_count=rows,
                    file_size_in_bytes=rows * 40 + 7,
                    column_sizes={i: rows * i for i in range(1, 6)},
                    value_counts={i: rows for i in range(1, 6)},
                    null_value_counts={i: rows // (i + 1) for i in range(3, 6)},
                    nan_value_counts={4: rng.randrange(3)},
                    lower_bounds={
                        1: struct.pack("<q", lo),
                        2: struct.pack("<q", day * 86_400_000_000),
                        3: cats[0].encode(),
                        4: struct.pack("<d", rng.uniform(-1, 1)),
                    },
                    upper_bounds={
                        1: struct.pack("<q", lo + rows),
                        2: struct.pack("<q", (day + 1) * 86_400_000_000 - 1),
                        3: cats[1].encode(),
                        5: b"US",
                    },
                    split_offsets=[4, 4 + rows] if f % 3 else None,
                    sort_order_id=0,
                    spec_id=0,
                )
            )
        with table.transaction() as tx, tx.update_snapshot().fast_append() as fa:
            for df in files:
                fa.append_data_file(df)
    snapshot = table.current_snapshot()
    assert snapshot is not None
    with open(snapshot.manifest_list.removeprefix("file://"), "rb") as f:
        listed = expected_manifest_list(f.read())
    out = []
    for m in listed:
        with open(m["manifest_path"].removeprefix("file://"), "rb") as f:
            out.append((f.read(), m))
    return out


@pytest.mark.parametrize("codec", ["gzip", "zstd", "snappy", "null"])
def test_pyiceberg_written_manifests_decode_like_fastavro(tmp_path: Any, codec: str) -> None:
    """PyIceberg 0.12 writes one Avro block per manifest entry (the layout of most tables in the
    wild): every entry of a sample of its manifests decodes as fastavro reads it, with
    inheritance from the manifest list, whole and with the stats maps left out."""
    manifests = _pyiceberg_manifests(tmp_path, codec, commits=3, per=150)
    assert len(manifests) == 3
    avro_codec = {"gzip": "deflate", "zstd": "zstandard"}.get(codec, codec)
    for data, listed in manifests:
        blocks = list(fastavro.block_reader(io.BytesIO(data)))
        entries = sum(b.num_records for b in blocks)
        assert entries == 150 and len(blocks) == entries, "not PyIceberg's block-per-entry layout"
        assert blocks[0].codec == avro_codec
        table = fm.read_manifest(data, listed)
        mismatches = diff(raw_rows(table), expected_manifest(data, listed))
        assert not mismatches, mismatches[:10]
        plain = fm.read_manifest(data, listed, columns=["data_file.file_path"])
        assert plain.column("data_file").combine_chunks().field("file_path").to_pylist() == [
            r["data_file"]["file_path"] for r in expected_manifest(data)
        ]
    # damaged: any cut of a block-per-entry file is an error, never a short read
    data, listed = manifests[0]
    for cut in range(len(data) - 1, len(data) - 2000, -97):
        with pytest.raises(FrazilError):
            fm.read_manifest(data[:cut], listed)
