"""What a manifest list or manifest must decode to, computed without frazil.

fastavro decodes the file generically (with the logical types stripped from the writer schema,
so values stay in their raw Avro form); the records are then renamed by field id to the spec's
column names, given the spec's v1 read defaults, and, when a manifest list entry is given, the
spec's inheritance rules are applied ("Sequence Number Inheritance", "First Row ID Inheritance").
Frazil's pyarrow tables are brought to the same raw form by :func:`raw_rows`.
"""

from __future__ import annotations

import copy
import datetime as dt
import decimal
import io
import json
import struct
import uuid
from typing import Any

import fastavro
import fastavro._read as _fastavro_read
import pyarrow as pa
import pyarrow.compute as pc

# The spec's field ids and names (spec "Manifests" and "Manifest Lists").
MANIFEST_FILE = {
    500: "manifest_path",
    501: "manifest_length",
    502: "partition_spec_id",
    517: "content",
    515: "sequence_number",
    516: "min_sequence_number",
    503: "added_snapshot_id",
    504: "added_files_count",
    505: "existing_files_count",
    506: "deleted_files_count",
    512: "added_rows_count",
    513: "existing_rows_count",
    514: "deleted_rows_count",
    507: "partitions",
    519: "key_metadata",
    520: "first_row_id",
}
FIELD_SUMMARY = {509: "contains_null", 518: "contains_nan", 510: "lower_bound", 511: "upper_bound"}
MANIFEST_ENTRY = {0: "status", 1: "snapshot_id", 3: "sequence_number", 4: "file_sequence_number"}
DATA_FILE = {
    134: "content",
    100: "file_path",
    101: "file_format",
    102: "partition",
    103: "record_count",
    104: "file_size_in_bytes",
    108: "column_sizes",
    109: "value_counts",
    110: "null_value_counts",
    137: "nan_value_counts",
    111: "distinct_counts",
    125: "lower_bounds",
    128: "upper_bounds",
    131: "key_metadata",
    132: "split_offsets",
    135: "equality_ids",
    140: "sort_order_id",
    142: "first_row_id",
    143: "referenced_data_file",
    144: "content_offset",
    145: "content_size_in_bytes",
}
MAPS = {"column_sizes", "value_counts", "null_value_counts", "nan_value_counts"}
MAPS |= {"distinct_counts", "lower_bounds", "upper_bounds"}
V1_DEFAULTS = {"content": 0, "sequence_number": 0, "min_sequence_number": 0}


def fastavro_raw(data: bytes) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, bytes]]:
    """(writer schema JSON, records in raw Avro form, file metadata).

    fastavro applies the writer's logical types whatever the reader schema says, so its logical
    readers are switched off while decoding (dates, timestamps and decimals then stay ints and
    bytes, as the spec's single values are defined).
    """
    saved = dict(_fastavro_read.LOGICAL_READERS)
    _fastavro_read.LOGICAL_READERS.clear()
    try:
        reader = fastavro.reader(io.BytesIO(data))
        writer = json.loads(reader.metadata["avro.schema"])
        return writer, list(reader), dict(reader.metadata)
    finally:
        _fastavro_read.LOGICAL_READERS.update(saved)


def _field(schema: Any) -> Any:
    """The non-null branch of an optional schema."""
    if isinstance(schema, list):
        (inner,) = [s for s in schema if s != "null"]
        return inner
    return schema


def _by_id(record: dict[str, Any], fields: list[dict[str, Any]], names: dict[int, str]):
    out = {}
    for f in fields:
        name = names.get(f.get("field-id"))
        if name is not None:
            out[name] = (record.get(f["name"]), _field(f["type"]))
    return out


def _map(value: Any) -> Any:
    if value is None:
        return None
    return [(kv["key"], kv["value"]) for kv in value]


def expected_manifest_list(data: bytes) -> list[dict[str, Any]]:
    writer, records, _ = fastavro_raw(data)
    rows = []
    for rec in records:
        fields = _by_id(rec, writer["fields"], MANIFEST_FILE)
        row = {name: None for name in MANIFEST_FILE.values()}
        row.update(V1_DEFAULTS)
        for name, (value, schema) in fields.items():
            if name == "partitions" and value is not None:
                item = _field(schema["items"])
                value = [
                    {n: v for n, (v, _) in _by_id(s, item["fields"], FIELD_SUMMARY).items()}
                    for s in value
                ]
                for s in value:
                    for n in FIELD_SUMMARY.values():
                        s.setdefault(n, None)
            row[name] = value
        rows.append(row)
    return rows


def expected_manifest(
    data: bytes, manifest_file: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The spec's entries for a manifest, with inheritance from ``manifest_file`` when given."""
    writer, records, _ = fastavro_raw(data)
    df_schema = next(_field(f["type"]) for f in writer["fields"] if f.get("field-id") == 2)
    rows = []
    for rec in records:
        row = {name: None for name in MANIFEST_ENTRY.values()}
        for name, (value, _) in _by_id(rec, writer["fields"], MANIFEST_ENTRY).items():
            row[name] = value
        df = {name: None for name in DATA_FILE.values()}
        df["content"] = 0
        raw_df = rec[next(f["name"] for f in writer["fields"] if f.get("field-id") == 2)]
        for name, (value, _) in _by_id(raw_df, df_schema["fields"], DATA_FILE).items():
            df[name] = _map(value) if name in MAPS else value
        if df["partition"] is None:
            df["partition"] = {}
        else:
            df["partition"] = {
                k: _from_logical(v)
                for k, v in _decimals_unscaled(df["partition"], df_schema).items()
            }
        row["data_file"] = df
        rows.append(row)
    if manifest_file is not None:
        rows = inherit(rows, manifest_file)
    return rows


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def _from_logical(v: Any) -> Any:
    """fastavro applies some logical types even under a reader schema without them."""
    if isinstance(v, dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=dt.timezone.utc)
        delta = v - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(v, dt.date):
        return (v - dt.date(1970, 1, 1)).days
    if isinstance(v, dt.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
    if isinstance(v, decimal.Decimal):
        return _raw_value(v)
    if isinstance(v, uuid.UUID):
        return v.bytes
    return v


def _decimals_unscaled(partition: dict[str, Any], df_schema: dict[str, Any]) -> dict[str, Any]:
    part_schema = next(_field(f["type"]) for f in df_schema["fields"] if f.get("field-id") == 102)
    out = dict(partition)
    for f in part_schema["fields"]:
        t = _field(f["type"])
        raw = out[f["name"]]
        if isinstance(t, dict) and t.get("logicalType") == "decimal" and isinstance(raw, bytes):
            out[f["name"]] = decimal_unscaled(out[f["name"]])
    return out


def inherit(rows: list[dict[str, Any]], manifest_file: dict[str, Any]) -> list[dict[str, Any]]:
    """The spec's inheritance, as Java applies it (v1 manifests: every null becomes 0)."""
    rows = copy.deepcopy(rows)
    seq = manifest_file["sequence_number"]
    next_row_id = manifest_file.get("first_row_id")
    for row in rows:
        if row["snapshot_id"] is None:
            row["snapshot_id"] = manifest_file["added_snapshot_id"]
        for key in ("sequence_number", "file_sequence_number"):
            if row[key] is None and (row["status"] == 1 or seq == 0):
                row[key] = seq
        df = row["data_file"]
        if next_row_id is not None and df["content"] == 0 and df["first_row_id"] is None:
            df["first_row_id"] = next_row_id
            next_row_id += df["record_count"]
    return rows


def _raw_array(array: pa.Array) -> pa.Array:
    t = array.type
    if isinstance(t, pa.ExtensionType):
        return _raw_array(array.storage)
    if pa.types.is_date32(t):
        return pc.cast(array, pa.int32())
    if pa.types.is_timestamp(t) or pa.types.is_time64(t):
        return pc.cast(array, pa.int64())
    if pa.types.is_struct(t):
        children = [_raw_array(array.field(i)) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(
            children, names=[t.field(i).name for i in range(t.num_fields)], mask=array.is_null()
        )
    return array


def _raw_value(v: Any) -> Any:
    if isinstance(v, decimal.Decimal):
        # the unscaled integer, exactly (Decimal arithmetic would round beyond 28 digits)
        sign, digits, _ = v.as_tuple()
        unscaled = int("".join(map(str, digits)) or "0")
        return -unscaled if sign else unscaled
    if isinstance(v, uuid.UUID):
        return v.bytes
    if isinstance(v, dict):
        return {k: _raw_value(x) for k, x in v.items()}
    if isinstance(v, (dt.date, dt.datetime)):
        raise AssertionError(f"unexpected logical value {v!r}")
    return v


def raw_rows(table: pa.Table) -> list[dict[str, Any]]:
    """A frazil table as rows in the raw Avro form of :func:`expected_manifest`."""
    if "data_file" in table.column_names:
        df = table.column("data_file").combine_chunks()
        i = df.type.get_field_index("partition")
        if i >= 0:
            part = df.field(i)
            fields = [df.type.field(j) for j in range(df.type.num_fields)]
            children = [df.field(j) for j in range(df.type.num_fields)]
            children[i] = _raw_array(part)
            df = pa.StructArray.from_arrays(
                children,
                fields=[f.with_type(c.type) for f, c in zip(fields, children, strict=True)],
            )
            table = table.set_column(table.column_names.index("data_file"), "data_file", df)
    rows = table.to_pylist()
    for row in rows:
        df = row.get("data_file")
        if df and df.get("partition") is not None:
            df["partition"] = _raw_value(df["partition"])
    return rows


def decimal_unscaled(raw: bytes) -> int:
    return int.from_bytes(raw, "big", signed=True)


def same(a: Any, b: Any) -> bool:
    """Equality in which NaN equals NaN (and -0.0 differs from 0.0, as bits do)."""
    if isinstance(a, float) and isinstance(b, float):
        return struct.pack("<d", a) == struct.pack("<d", b) or (a != a and b != b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def diff(actual: list[dict[str, Any]], expected: list[dict[str, Any]]) -> list[str]:
    """Human-readable differences between two lists of rows."""
    out = []
    if len(actual) != len(expected):
        out.append(f"{len(actual)} rows, expected {len(expected)}")
    for i, (a, e) in enumerate(zip(actual, expected, strict=False)):
        for k in sorted(set(a) | set(e)):
            av, ev = a.get(k), e.get(k)
            if isinstance(av, dict) and isinstance(ev, dict):
                for kk in sorted(set(av) | set(ev)):
                    if not same(av.get(kk), ev.get(kk)):
                        out.append(f"row {i} {k}.{kk}: {av.get(kk)!r} != {ev.get(kk)!r}")
            elif not same(av, ev):
                out.append(f"row {i} {k}: {av!r} != {ev!r}")
    return out
