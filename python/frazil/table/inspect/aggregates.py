"""The ``partitions`` and ``position_deletes`` metadata tables (see :mod:`frazil.table.inspect`).

``partitions`` aggregates a snapshot's live files per partition tuple with Arrow's group-by, as
Java's ``PartitionsTable`` counts them: data files add to ``record_count``, ``file_count`` and
``total_data_file_size_in_bytes``; position delete files and deletion vectors to the
``position_delete_*`` counts; equality delete files to the ``equality_delete_*`` counts; the
newest snapshot that added a file is the partition's ``last_updated_*``; ``spec_id`` is the
spec of the partition's last file in manifest order (Java's; PyIceberg takes the first).

``position_deletes`` reads the position delete files (Parquet, ORC) and deletion vectors
(Puffin) of a snapshot: one row per deleted position.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from frazil.arrow_schema import field_id_of, type_to_arrow
from frazil.encryption.table_io import data_filesystem, parquet_decryption
from frazil.expressions import AlwaysTrue, BooleanExpression, parse
from frazil.manifest.content_file import is_deletion_vector_of
from frazil.manifest.deletes import DeletionVector
from frazil.metadata import Snapshot
from frazil.table.inspect.entries import (
    manifest_entries,
    manifest_list,
    partition_column,
    partition_struct,
)
from frazil.table.scan.plan import plan_files
from frazil.table.scan.projection import open_file, reading
from frazil.table.scan.read import read_range

if TYPE_CHECKING:
    from frazil.table import Table
    from frazil.table.inspect import InspectTable

__all__ = ["partitions_table", "position_deletes_table"]

_FILE_PATH_ID, _POS_ID, _ROW_ID = 2147483546, 2147483545, 2147483544
_COUNTS = pa.schema(
    [
        pa.field("record_count", pa.int64(), nullable=False),
        pa.field("file_count", pa.int32(), nullable=False),
        pa.field("total_data_file_size_in_bytes", pa.int64(), nullable=False),
        pa.field("position_delete_record_count", pa.int64(), nullable=False),
        pa.field("position_delete_file_count", pa.int32(), nullable=False),
        pa.field("equality_delete_record_count", pa.int64(), nullable=False),
        pa.field("equality_delete_file_count", pa.int32(), nullable=False),
        pa.field("last_updated_at", pa.timestamp("ms"), nullable=True),
        pa.field("last_updated_snapshot_id", pa.int64(), nullable=True),
    ]
)


def _live_files(
    tbl: Table, snapshot: Snapshot, row_filter: BooleanExpression, case_sensitive: bool
) -> Iterator[tuple[int, pa.Table]]:
    """(spec id, live entries) per manifest; with a row filter, the planner's selection."""
    if isinstance(row_filter, AlwaysTrue):
        columns = [
            "status",
            "snapshot_id",
            "data_file.content",
            "data_file.partition",
            "data_file.record_count",
            "data_file.file_size_in_bytes",
        ]
        manifests = manifest_list(tbl.io, tbl.metadata, snapshot)
        for row, entries in manifest_entries(tbl.io, tbl.metadata, manifests, columns):
            yield row["partition_spec_id"], entries.filter(pc.not_equal(entries["status"], 2))
        return
    planned = plan_files(
        tbl.io, tbl.metadata, snapshot, row_filter, case_sensitive, include_column_stats=False
    )
    for group in (*planned.delete_groups, *planned.data):
        yield group.spec_id, group.entries


def partitions_table(
    tbl: Table,
    snapshot: Snapshot,
    row_filter: str | BooleanExpression,
    case_sensitive: bool,
) -> pa.Table:
    metadata = tbl.metadata
    if isinstance(row_filter, str):
        row_filter = parse(row_filter)
    part_type = type_to_arrow(partition_struct(metadata))
    partitioned = part_type.num_fields > 0
    # Snapshots ranked by commit time: the newest snapshot of a group is its highest rank.
    snaps = sorted(metadata.snapshots, key=lambda s: s.timestamp_ms)
    snap_ids = pa.array([s.snapshot_id for s in snaps], pa.int64())
    pieces = []
    for spec_id, entries in _live_files(tbl, snapshot, row_filter, case_sensitive):
        if entries.num_rows == 0:
            continue
        df = entries.column("data_file").combine_chunks()
        content = df.field("content")
        rc = df.field("record_count")
        zero64 = pa.scalar(0, pa.int64())
        cols = {}
        for name, kind in (("data", 0), ("pos", 1), ("eq", 2)):
            is_kind = pc.equal(content, kind)
            cols[f"{name}_records"] = pc.if_else(is_kind, rc, zero64)
            cols[f"{name}_files"] = is_kind.cast(pa.int32())
        cols["data_size"] = pc.if_else(pc.equal(content, 0), df.field("file_size_in_bytes"), zero64)
        cols["rank"] = pc.index_in(entries.column("snapshot_id"), value_set=snap_ids)
        cols["spec_id"] = pa.array([spec_id] * entries.num_rows, pa.int32())
        if partitioned:
            p = partition_column(df, part_type)
            for i in range(part_type.num_fields):
                cols[f"p{i}"] = p.field(i)
        pieces.append(pa.table(cols))
    keys = [f"p{i}" for i in range(part_type.num_fields)]
    schema = _COUNTS
    if partitioned:
        schema = pa.schema(
            [
                pa.field("partition", part_type, False),
                pa.field("spec_id", pa.int32(), False),
                *_COUNTS,
            ]
        )
    if not pieces:
        return schema.empty_table()
    t = pa.concat_tables(pieces)
    sums = [(c, "sum") for c in t.column_names if c.endswith(("_records", "_files", "_size"))]
    agg = t.group_by(keys, use_threads=False).aggregate(
        [*sums, ("rank", "max"), ("spec_id", "last")]
    )
    rank = agg.column("rank_max")
    ts = pa.array([s.timestamp_ms for s in snaps], pa.int64()).cast(pa.timestamp("ms"))
    out = {
        "record_count": agg["data_records_sum"],
        "file_count": agg["data_files_sum"],
        "total_data_file_size_in_bytes": agg["data_size_sum"],
        "position_delete_record_count": agg["pos_records_sum"],
        "position_delete_file_count": agg["pos_files_sum"],
        "equality_delete_record_count": agg["eq_records_sum"],
        "equality_delete_file_count": agg["eq_files_sum"],
        "last_updated_at": pc.take(ts, rank),
        "last_updated_snapshot_id": pc.take(snap_ids, rank),
    }
    arrays = [out[f.name].cast(f.type) for f in _COUNTS]
    if partitioned:
        parts = pa.StructArray.from_arrays(
            [agg[k].combine_chunks() for k in keys], fields=list(part_type)
        )
        arrays = [parts, agg["spec_id_last"], *arrays]
    return pa.Table.from_arrays(arrays, schema=schema)


def _position_rows(tbl: Table, df: pa.StructArray, i: int) -> pa.Table:
    """``file_path``, ``pos`` and ``row`` of delete file ``i`` of ``df``."""
    io = tbl.io
    path = df.field("file_path")[i].as_py()
    fmt = (df.field("file_format")[i].as_py() or "").upper()
    row_type = type_to_arrow(tbl.metadata.schema().as_struct())
    if is_deletion_vector_of(df.field("content")[i].as_py(), fmt):
        offset = df.field("content_offset")[i].as_py()
        length = df.field("content_size_in_bytes")[i].as_py()
        target = df.field("referenced_data_file")[i].as_py()
        key_metadata = df.field("key_metadata")[i].as_py()
        with reading("deletion vector file", path):
            blob = read_range(io, path, offset, length, key_metadata)
        positions = DeletionVector.from_puffin_blob(blob, 0, length, path, target).positions()
        n = len(positions)
        return pa.table(
            {
                "file_path": pa.array([target] * n, pa.string()),
                "pos": positions,
                "row": pa.nulls(n, row_type),
            }
        )
    fs, local = data_filesystem(io, path)
    key_metadata = df.field("key_metadata")[i].as_py()
    with reading("position delete file", path), fs.open_input_file(local) as fh:
        f = open_file(fh, fmt, None, parquet_decryption(io, path, key_metadata, fmt))
        names = {field_id_of(x): x.name for x in f.schema_arrow}
        wanted = [names.get(_FILE_PATH_ID, "file_path"), names.get(_POS_ID, "pos")]
        row_name = names.get(_ROW_ID)
        t = f.read(columns=wanted + ([row_name] if row_name else []))
    n = t.num_rows
    row = pa.nulls(n, row_type)
    if row_name:
        try:
            row = t.column(2).combine_chunks().cast(row_type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass  # a row struct of an older schema: left out rather than misread
    return pa.table(
        {
            "file_path": t.column(0).cast(pa.string()),
            "pos": t.column(1).cast(pa.int64()),
            "row": row,
        }
    )


def position_deletes_table(inspect: InspectTable, snapshot: Snapshot | None) -> pa.Table:
    tbl = inspect.tbl
    metadata = tbl.metadata
    part_type = type_to_arrow(partition_struct(metadata))
    row_type = type_to_arrow(metadata.schema().as_struct())
    schema = pa.schema(
        [
            pa.field("file_path", pa.string(), False),
            pa.field("pos", pa.int64(), False),
            pa.field("row", row_type),
            pa.field("partition", part_type),
            pa.field("spec_id", pa.int32()),
            pa.field("delete_file_path", pa.string(), False),
        ]
    )
    v3 = metadata.format_version >= 3
    if v3:  # the DV's blob, as Java shows it (null for a position delete file)
        schema = schema.append(pa.field("content_offset", pa.int64()))
        schema = schema.append(pa.field("content_size_in_bytes", pa.int64()))
    if snapshot is None:
        return schema.empty_table()
    manifests = manifest_list(tbl.io, metadata, snapshot)
    manifests = manifests.filter(pc.equal(manifests["content"], 1))
    pieces = []
    for row, entries in manifest_entries(tbl.io, metadata, manifests):
        live = entries.filter(pc.not_equal(entries["status"], 2))
        df = live.column("data_file").combine_chunks()
        df = df.filter(pc.equal(df.field("content"), 1))
        partitions = partition_column(df, part_type)
        for i in range(len(df)):
            rows = _position_rows(tbl, df, i)
            n = rows.num_rows
            arrays = [
                rows["file_path"],
                rows["pos"],
                rows["row"],
                pa.repeat(partitions[i], n) if n else pa.nulls(0, part_type),
                pa.array([row["partition_spec_id"]] * n, pa.int32()),
                pa.array([df.field("file_path")[i].as_py()] * n, pa.string()),
            ]
            if v3:
                for name in ("content_offset", "content_size_in_bytes"):
                    arrays.append(pa.array([df.field(name)[i].as_py()] * n, pa.int64()))
            pieces.append(pa.Table.from_arrays(arrays, schema=schema))
    if not pieces:
        return schema.empty_table()
    return pa.concat_tables(pieces)
