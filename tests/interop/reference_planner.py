"""A plain scan planner written from the spec's "Scan Planning" rules, kept as a test oracle for
the native planner (``frazil.table.scan.plan``): every live data file of a snapshot, no
pruning (the residual is the whole filter), with the delete files the spec attaches to it.

Position deletes apply to data files of the same partition (or the referenced data file) with
a data sequence number <= theirs, narrowed by their ``file_path`` bounds as Java's delete index
does; a deletion vector supersedes position delete files for its data file; equality deletes
apply to data files of the same partition (or every file, when unpartitioned) with a data
sequence number < theirs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from frazil.exceptions import ValidationError
from frazil.expressions import BooleanExpression
from frazil.io import FileIO
from frazil.manifest import read_manifest_list, read_manifests
from frazil.manifest.content_file import (
    DataFile,
    DataFileContent,
    FileFormat,
    data_files_from_entries,
)
from frazil.metadata import Snapshot, TableMetadata
from frazil.schema import Schema
from frazil.table.scan import FileScanTask
from frazil.table.scan.read import FILE_PATH_FIELD_ID

__all__ = ["reference_plan"]


def _partition_equal(partitions: pa.StructArray, value: tuple[Any, ...]) -> np.ndarray:
    """Null-safe equality of each row's partition tuple with ``value`` (vectorized)."""
    n = len(partitions)
    out = np.ones(n, dtype=bool)
    for i, v in enumerate(value):
        col = partitions.field(i)
        if v is None:
            out &= col.is_null().to_numpy(zero_copy_only=False)
        else:
            eq = pc.equal(col, pa.scalar(v, col.type))
            out &= pc.fill_null(eq, False).to_numpy(zero_copy_only=False)
    return out


def _in_path_bounds(paths: pa.Array, d: DataFile) -> np.ndarray:
    """Data files within a position delete file's ``file_path`` bounds (as Java's delete
    index narrows a v2 position delete file to the data files it can reference)."""
    lower = (d.lower_bounds or {}).get(FILE_PATH_FIELD_ID)
    upper = (d.upper_bounds or {}).get(FILE_PATH_FIELD_ID)
    out = np.ones(len(paths), dtype=bool)
    if lower is not None:
        low = lower.decode("utf-8", "replace")
        out &= pc.greater_equal(paths, low).to_numpy(zero_copy_only=False)
    if upper is not None:
        up = upper.decode("utf-8", "replace")
        out &= pc.less_equal(paths, up).to_numpy(zero_copy_only=False)
    return out


def reference_plan(
    io: FileIO,
    metadata: TableMetadata,
    snapshot: Snapshot | None,
    bound_filter: BooleanExpression,
    schema: Schema,
) -> list[FileScanTask]:
    """Every live data file of ``snapshot`` with the delete files the spec attaches to it; no
    pruning (the residual is the whole filter)."""
    if snapshot is None:
        return []
    if snapshot.manifest_list is None:
        raise ValidationError(f"snapshot {snapshot.snapshot_id} has no manifest list")
    list_path = metadata.resolve(snapshot.manifest_list)
    manifests = read_manifest_list(io.read(list_path), path=list_path).to_pylist()
    datas = io.read_many([metadata.resolve(m["manifest_path"]) for m in manifests])
    tables = read_manifests(datas, manifests)
    specs = metadata.specs()

    data_groups: list[tuple[int, pa.Table]] = []
    deletes: list[DataFile] = []
    for m, t in zip(manifests, tables, strict=True):
        live = t.filter(pc.not_equal(t.column("status"), 2))
        if live.num_rows == 0:
            continue
        spec_id = m["partition_spec_id"]
        if m.get("content", 0) == 0:
            data_groups.append((spec_id, live))
        else:
            deletes.extend(data_files_from_entries(live, spec_id))

    tasks: list[FileScanTask] = []
    for spec_id, live in data_groups:
        df = live.column("data_file").combine_chunks()
        n = len(df)
        paths = df.field("file_path")
        seqs = live.column("sequence_number").to_numpy(zero_copy_only=False)
        partitions = df.field("partition")
        attached: list[list[int]] = [[] for _ in range(n)]
        has_dv = np.zeros(n, dtype=bool)
        for k, d in enumerate(deletes):
            dseq = d.extra.get("sequence_number") or 0
            if d.content == DataFileContent.POSITION_DELETES:
                mask = seqs <= dseq
                if d.referenced_data_file is not None:
                    mask &= pc.equal(paths, d.referenced_data_file).to_numpy(zero_copy_only=False)
                else:
                    mask &= _in_path_bounds(paths, d)
                if (d.file_format or "").upper() == FileFormat.PUFFIN:
                    has_dv |= mask
                elif d.spec_id != spec_id:
                    continue
                else:
                    mask &= _partition_equal(partitions, d.partition)
            else:
                mask = seqs < dseq
                dspec = specs.get(d.spec_id)
                if dspec is not None and not dspec.is_unpartitioned():
                    if d.spec_id != spec_id:
                        continue
                    mask &= _partition_equal(partitions, d.partition)
            for i in np.flatnonzero(mask).tolist():
                attached[i].append(k)
        files = data_files_from_entries(live, spec_id)
        spec = specs.get(spec_id)
        for i, f in enumerate(files):
            ds = [deletes[k] for k in attached[i]]
            if has_dv[i]:  # a DV supersedes position delete files for its data file
                ds = [
                    d
                    for d in ds
                    if d.content != DataFileContent.POSITION_DELETES
                    or (d.file_format or "").upper() == FileFormat.PUFFIN
                ]
            tasks.append(FileScanTask(f, ds, bound_filter, schema, spec))
    return tasks
