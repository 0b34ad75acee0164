"""Partition statistics files (spec "Partition Statistics"): per partition tuple and spec, the
counts of a snapshot's data and delete files, in a Parquet file registered with
``set-partition-statistics``.

Computed as the Java reference's ``PartitionStatsHandler.computeAndWriteStatsFile`` does:

- without an earlier file on the snapshot's ancestry, from every entry of every manifest of the
  snapshot: live entries add to their partition's counts, deleted ones only to its
  ``last_updated_*``;
- otherwise incrementally: the earlier file's rows, plus the manifests each snapshot after it
  added (entries added count in, deleted ones count out, existing ones were already counted);
  an unreadable earlier file falls back to the full computation. Files are Parquet, or Avro
  when that is the table's default file format (as the reference writes them).

Rows are keyed by (``spec_id``, ``partition``) with the partition in the table-wide partition
type, position delete records of deletion vectors count in ``position_delete_record_count`` and
the vectors in ``dv_count`` (v3), ``last_updated_*`` is the newest snapshot that touched the
partition, and rows are sorted by partition (nulls first). The work is Arrow group-bys over the
decoded manifests; no Python object per file.
"""

from __future__ import annotations

import io
import logging
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from frazil.arrow_schema import FIELD_ID_KEY, type_to_arrow
from frazil.encryption import table_io as encryption
from frazil.exceptions import InvalidArgumentError, io_error
from frazil.manifest.content_file import deletion_vector_mask
from frazil.metadata import PartitionStatisticsFile, Snapshot, TableMetadata
from frazil.table.inspect.entries import (
    manifest_entries,
    manifest_list,
    partition_column,
    partition_struct,
)
from frazil.table.scan.formats import AvroFile
from frazil.table.scan.projection import reading
from frazil.table.statistics import metadata_file_location
from frazil.table.write.formats import AvroWriter

if TYPE_CHECKING:
    from frazil.table import Table

__all__ = [
    "compute_partition_statistics",
    "partition_statistics_schema",
    "read_partition_statistics",
    "read_statistics_rows",
]

logger = logging.getLogger(__name__)

_ADDED, _DELETED = 1, 2
_DATA, _POSITION_DELETES, _EQUALITY_DELETES = 0, 1, 2
# (column, field id, type) after partition (1) and spec_id (2), per the spec's table.
_COUNTS: list[tuple[str, int, pa.DataType]] = [
    ("data_record_count", 3, pa.int64()),
    ("data_file_count", 4, pa.int32()),
    ("total_data_file_size_in_bytes", 5, pa.int64()),
    ("position_delete_record_count", 6, pa.int64()),
    ("position_delete_file_count", 7, pa.int32()),
    ("equality_delete_record_count", 8, pa.int64()),
    ("equality_delete_file_count", 9, pa.int32()),
]
_DV_COUNT = ("dv_count", 13, pa.int32())
_SUMMED = [name for name, _, _ in _COUNTS] + ["dv_count"]


def _field(name: str, field_id: int, t: pa.DataType, nullable: bool) -> pa.Field:
    return pa.field(name, t, nullable, metadata={FIELD_ID_KEY: str(field_id).encode()})


def _partition_type(metadata: TableMetadata) -> pa.StructType:
    t = type_to_arrow(partition_struct(metadata), large_types=False)
    assert isinstance(t, pa.StructType)
    return t


def partition_statistics_schema(metadata: TableMetadata) -> pa.Schema:
    """The spec's schema of a partition statistics file for this table's format version (in
    v3 the delete counts are required and ``dv_count`` is added)."""
    v3 = metadata.format_version >= 3
    counts = [_field(n, i, t, not v3 and i >= 6) for n, i, t in _COUNTS]
    fields = [
        _field("partition", 1, _partition_type(metadata), False),
        _field("spec_id", 2, pa.int32(), False),
        *counts,
        _field("total_record_count", 10, pa.int64(), True),
        _field("last_updated_at", 11, pa.int64(), True),
        _field("last_updated_snapshot_id", 12, pa.int64(), True),
    ]
    if v3:
        fields.append(_field(*_DV_COUNT, False))
    return pa.schema(fields)


# ---- per-entry contributions

_ZERO = pa.scalar(0, pa.int64())


def where(cond: pa.Array, value: pa.Array) -> pa.Array:
    return pc.if_else(cond, value, _ZERO)


def _contributions(
    table: Table,
    manifests: pa.Table,
    incremental: bool,
    part_type: pa.StructType,
    timestamps: dict[int, int],
) -> Iterator[pa.Table]:
    """One table per manifest: the key (spec id, partition fields) of every entry and what the
    entry adds to each count (negative for files an incremental computation removes), with the
    time and id of the snapshot that touched it (null when it does not count)."""
    columns = [
        "status",
        "snapshot_id",
        "data_file.content",
        "data_file.file_format",
        "data_file.partition",
        "data_file.record_count",
        "data_file.file_size_in_bytes",
    ]
    ts_keys = pa.array(list(timestamps), pa.int64())
    ts_values = pa.array(list(timestamps.values()), pa.int64())
    for row, entries in manifest_entries(table.io, table.metadata, manifests, columns):
        n = entries.num_rows
        if n == 0:
            continue
        df = entries.column("data_file").combine_chunks()
        status = entries.column("status").combine_chunks().cast(pa.int8())
        content = df.field("content").cast(pa.int8())
        if incremental:
            sign = pc.if_else(
                pc.equal(status, _ADDED), 1, pc.if_else(pc.equal(status, _DELETED), -1, 0)
            )
            # An existing entry was counted by the earlier file: it only names its partition.
            touches = pc.not_equal(status, 0)
        else:
            sign = pc.if_else(pc.equal(status, _DELETED), 0, 1)
            touches = pa.array([True] * n)
        sign = sign.cast(pa.int64())
        records = pc.multiply(df.field("record_count").cast(pa.int64()), sign)
        size = pc.multiply(df.field("file_size_in_bytes").cast(pa.int64()), sign)
        is_dv = deletion_vector_mask(content, df.field("file_format"))
        cols: dict[str, pa.Array] = {
            "spec_id": pa.array([row["partition_spec_id"]] * n, pa.int32()),
        }
        part = partition_column(df, part_type)
        for i in range(part_type.num_fields):
            cols[f"p{i}"] = part.field(i)

        is_data = pc.equal(content, _DATA)
        is_pos = pc.equal(content, _POSITION_DELETES)
        is_eq = pc.equal(content, _EQUALITY_DELETES)
        cols["data_record_count"] = where(is_data, records)
        cols["data_file_count"] = where(is_data, sign)
        cols["total_data_file_size_in_bytes"] = where(is_data, size)
        cols["position_delete_record_count"] = where(is_pos, records)
        cols["position_delete_file_count"] = where(pc.and_(is_pos, pc.invert(is_dv)), sign)
        cols["equality_delete_record_count"] = where(is_eq, records)
        cols["equality_delete_file_count"] = where(is_eq, sign)
        cols["dv_count"] = where(is_dv, sign)
        sid = entries.column("snapshot_id").combine_chunks().cast(pa.int64())
        # A snapshot expired since has no time: it does not update the partition.
        ts = pc.take(ts_values, pc.index_in(sid, value_set=ts_keys))
        touched = pc.and_(touches, pc.is_valid(ts))
        cols["last_updated_at"] = pc.if_else(touched, ts, pa.scalar(None, pa.int64()))
        cols["last_updated_snapshot_id"] = pc.if_else(touched, sid, pa.scalar(None, pa.int64()))
        yield pa.table(cols)


def read_statistics_rows(data: bytes, location: str) -> pa.Table:
    """The rows of a partition statistics file in either format the reference writes (the
    table's default file format, Parquet or Avro; it has no ORC writer for them), told by the
    file's extension. A file that does not decode is a ``FileReadError`` naming it."""

    with reading("partition statistics file", location):
        if location.lower().endswith(".avro"):
            avro = AvroFile(pa.BufferReader(data))
            return avro.read(avro.schema_arrow.names)
        return pq.read_table(io.BytesIO(data))


def _read_file(table: Table, location: str) -> pa.Table:
    """The rows of the partition statistics file at ``location``; I/O failures are frazil
    errors naming it (``FileMissingError`` when it is gone)."""
    try:
        # No key field exists for these files: an encrypted table's (Java's) are plaintext.
        data = encryption.read_statistics_file(table.io, location, None, None)
    except OSError as e:
        raise io_error(e, "reading the partition statistics file", location) from e
    return read_statistics_rows(data, location)


def _previous_rows(table: Table, f: PartitionStatisticsFile, part_type: pa.StructType) -> pa.Table:
    """An earlier file's rows as contributions (partition coerced by field id to the current
    partition type)."""
    t = _read_file(table, table.metadata.resolve(f.statistics_path))
    part = t.column("partition").combine_chunks()
    by_id = {}
    for i in range(part.type.num_fields):
        pf = part.type.field(i)
        if pf.metadata and FIELD_ID_KEY in pf.metadata:
            by_id[int(pf.metadata[FIELD_ID_KEY])] = part.field(i)
    cols: dict[str, pa.Array] = {"spec_id": t.column("spec_id").combine_chunks().cast(pa.int32())}
    for i in range(part_type.num_fields):
        pf = part_type.field(i)
        col = by_id.get(int(pf.metadata[FIELD_ID_KEY]))
        cols[f"p{i}"] = pa.nulls(t.num_rows, pf.type) if col is None else col.cast(pf.type)
    for name in _SUMMED:
        if name in t.column_names:
            cols[name] = pc.fill_null(t.column(name).combine_chunks().cast(pa.int64()), 0)
        else:
            cols[name] = pa.array([0] * t.num_rows, pa.int64())
    for name in ("last_updated_at", "last_updated_snapshot_id"):
        cols[name] = t.column(name).combine_chunks().cast(pa.int64())
    return pa.table(cols)


def _sort(t: pa.Table, keys: list[tuple[str, str]], nulls: str) -> pa.Table:
    """A stable sort with ``nulls`` placement (per key since pyarrow 25, per sort before)."""
    if int(pa.__version__.split(".")[0]) >= 25:
        return t.sort_by([(name, order, nulls) for name, order in keys])
    return t.sort_by(keys, null_placement=nulls)


def _aggregate(pieces: list[pa.Table], part_type: pa.StructType, schema: pa.Schema) -> pa.Table:
    keys = ["spec_id", *(f"p{i}" for i in range(part_type.num_fields))]
    t = pa.concat_tables(pieces, promote_options="permissive")
    # Newest touch first, so that "first" picks the newest snapshot per key (the reference
    # keeps the first of equal times, as a stable sort does).
    t = _sort(t, [("last_updated_at", "descending")], "at_end")
    agg = t.group_by(keys, use_threads=False).aggregate(
        [
            *((name, "sum") for name in _SUMMED),
            ("last_updated_at", "first"),
            ("last_updated_snapshot_id", "first"),
        ]
    )
    sort_keys = [(f"p{i}", "ascending") for i in range(part_type.num_fields)]
    agg = _sort(agg, sort_keys, "at_start") if sort_keys else agg
    parts = pa.StructArray.from_arrays(
        [agg[f"p{i}"].combine_chunks() for i in range(part_type.num_fields)],
        fields=list(part_type),
    )
    columns: dict[str, pa.Array] = {"partition": parts, "spec_id": agg["spec_id"]}
    for name in _SUMMED:
        columns[name] = agg[f"{name}_sum"]
    columns["total_record_count"] = pa.nulls(agg.num_rows, pa.int64())
    columns["last_updated_at"] = agg["last_updated_at_first"]
    columns["last_updated_snapshot_id"] = agg["last_updated_snapshot_id_first"]
    return pa.Table.from_arrays([columns[f.name].cast(f.type) for f in schema], schema=schema)


# ---- orchestration


def _ancestors(metadata: TableMetadata, snapshot: Snapshot) -> Iterator[Snapshot]:
    current: Snapshot | None = snapshot
    while current is not None:
        yield current
        parent = current.parent_snapshot_id
        current = None if parent is None else metadata.snapshot_by_id(parent)


def _statistics_location(metadata: TableMetadata, snapshot_id: int, extension: str) -> str:
    name = f"partition-stats-{snapshot_id}-{uuid.uuid4()}.{extension}"  # Java's name
    return metadata_file_location(metadata, name)


def _write_rows(rows: pa.Table, metadata: TableMetadata) -> tuple[bytes, str]:
    """The file's bytes and extension: Avro when the table's default file format is Avro, as
    the reference writes it, else Parquet (the reference has no ORC writer for these)."""
    buffer = io.BytesIO()
    if metadata.properties.get("write.format.default", "parquet").strip().lower() == "avro":
        writer = AvroWriter(buffer, rows.schema, metadata.properties)
        writer.write_table(rows)
        writer.close()
        return buffer.getvalue(), "avro"
    pq.write_table(rows, buffer)
    return buffer.getvalue(), "parquet"


def compute_partition_statistics(
    table: Table, snapshot_id: int | None = None
) -> PartitionStatisticsFile | None:
    """Computes (incrementally from the newest earlier file on the snapshot's ancestry when
    there is one), writes and commits the partition statistics of a snapshot (default: the
    current one). Returns the file, the snapshot's existing one if it has one already, or
    ``None`` when the table has no snapshot or the snapshot no files."""
    encryption.refuse_partition_statistics(table.io)
    metadata = table.metadata
    if not any(spec.fields for spec in metadata.specs().values()):
        raise InvalidArgumentError(
            f"table {table.full_name()} is not partitioned: partition statistics need a partition"
        )
    if snapshot_id is None:
        snapshot = metadata.current_snapshot()
        if snapshot is None:
            return None
    else:
        found = metadata.snapshot_by_id(snapshot_id)
        if found is None:
            raise InvalidArgumentError(f"table {table.full_name()} has no snapshot {snapshot_id}")
        snapshot = found
    existing = {f.snapshot_id: f for f in metadata.partition_statistics}
    previous: PartitionStatisticsFile | None = None
    between: list[Snapshot] = []
    for s in _ancestors(metadata, snapshot):
        if s.snapshot_id in existing:
            previous = existing[s.snapshot_id]
            break
        between.append(s)
    if previous is not None and previous.snapshot_id == snapshot.snapshot_id:
        return previous

    part_type = _partition_type(metadata)
    schema = partition_statistics_schema(metadata)
    timestamps = {s.snapshot_id: s.timestamp_ms for s in metadata.snapshots}
    pieces: list[pa.Table] = []
    if previous is not None:
        try:
            pieces.append(_previous_rows(table, previous, part_type))
        except Exception as e:  # the reference recomputes in full when the old file is bad
            logger.warning(
                "partition statistics file %s is unreadable (%s); computing in full",
                previous.statistics_path,
                e,
            )
            previous = None
    if previous is None:
        manifests = manifest_list(table.io, metadata, snapshot)
        pieces.extend(_contributions(table, manifests, False, part_type, timestamps))
    else:
        for s in between:
            listed = manifest_list(table.io, metadata, s)
            added = listed.filter(pc.equal(listed["added_snapshot_id"], s.snapshot_id))
            pieces.extend(_contributions(table, added, True, part_type, timestamps))
    if not pieces:
        return None
    rows = _aggregate(pieces, part_type, schema)
    if rows.num_rows == 0:
        return None
    data, extension = _write_rows(rows, metadata)
    location = _statistics_location(metadata, snapshot.snapshot_id, extension)
    table.io.write(location, data)
    result = PartitionStatisticsFile(
        snapshot_id=snapshot.snapshot_id,
        statistics_path=location,
        file_size_in_bytes=len(data),
    )
    table.transaction().set_partition_statistics(result).commit_transaction()
    return result


def read_partition_statistics(table: Table, snapshot_id: int | None = None) -> pa.Table | None:
    """The rows of a snapshot's partition statistics file (default: the current snapshot's),
    or ``None`` when it has none."""
    metadata = table.metadata
    if snapshot_id is None:
        current = metadata.current_snapshot()
        if current is None:
            return None
        snapshot_id = current.snapshot_id
    for f in metadata.partition_statistics:
        if f.snapshot_id == snapshot_id:
            return _read_file(table, metadata.resolve(f.statistics_path))
    return None
