"""A snapshot's manifests and their decoded entries, and the table-wide ``partition`` struct:
what the per-file metadata tables (:mod:`frazil.table.inspect`, and ``partitions`` and
``position_deletes`` in :mod:`frazil.table.inspect.aggregates`) are built from."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from frazil.arrow_schema import FIELD_ID_KEY
from frazil.manifest import read_manifests
from frazil.metadata import Snapshot, TableMetadata
from frazil.table.scan.plan import read_files, snapshot_manifests
from frazil.types import NestedField, StructType, UnknownType

if TYPE_CHECKING:
    from frazil.io import FileIO

__all__ = [
    "RUN_MANIFESTS",
    "manifest_entries",
    "manifest_list",
    "partition_column",
    "partition_struct",
]

#: Manifests decoded per native call (and read ahead while the previous run decodes).
RUN_MANIFESTS = 16


def manifest_list(io: FileIO, metadata: TableMetadata, snapshot: Snapshot) -> pa.Table:
    """The snapshot's manifest list rows (from ``manifest-list`` or a v1 snapshot's inline
    ``manifests``)."""
    return snapshot_manifests(io, metadata, snapshot)[1]


def manifest_entries(
    io: FileIO,
    metadata: TableMetadata,
    manifests: pa.Table,
    columns: Sequence[str] | None = None,
) -> Iterator[tuple[dict[str, Any], pa.Table]]:
    """Each manifest of ``manifests`` (manifest list rows) with its decoded entries,
    inheritance applied, read and decoded in runs of :data:`RUN_MANIFESTS`."""
    rows = manifests.to_pylist()
    if not rows:
        return
    m = metadata
    runs = [rows[i : i + RUN_MANIFESTS] for i in range(0, len(rows), RUN_MANIFESTS)]

    def read(run: list[dict[str, Any]]) -> list[bytes]:
        return read_files(io, [m.resolve(r["manifest_path"]) for r in run], "manifest")

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="frazil-inspect-io") as ex:
        pending = ex.submit(read, runs[0])
        for k, run in enumerate(runs):
            datas = pending.result()
            if k + 1 < len(runs):
                pending = ex.submit(read, runs[k + 1])
            tables = read_manifests(datas, run, columns=columns, location=m.paths_location)
            del datas
            yield from zip(run, tables, strict=True)


def partition_column(data_file: pa.StructArray, target: pa.StructType) -> pa.Array:
    """A manifest's partition tuples as the table-wide partition struct (by field id)."""
    source = data_file.field("partition")
    by_id: dict[int, pa.Array] = {}
    for i in range(source.type.num_fields):
        f = source.type.field(i)
        if f.metadata and FIELD_ID_KEY in f.metadata:
            by_id[int(f.metadata[FIELD_ID_KEY])] = source.field(i)
    children = []
    for i in range(target.num_fields):
        f = target.field(i)
        col = by_id.get(int(f.metadata[FIELD_ID_KEY])) if f.metadata else None
        if col is None or pa.types.is_null(col.type):
            children.append(pa.nulls(len(data_file), f.type))
        else:
            children.append(col.cast(f.type))
    if not children:
        return pa.array([{}] * len(data_file), pa.struct([]))
    return pa.StructArray.from_arrays(children, fields=list(target))


def _schema_type(metadata: TableMetadata, source_id: int) -> Any:
    """A column's type in the current schema, else in the newest schema that has it."""
    for s in (metadata.schema(), *reversed(metadata.schemas)):
        if source_id in s.field_ids:
            return s.find_type(source_id)
    return None


def partition_struct(metadata: TableMetadata, spec_ids: Sequence[int] | None = None) -> StructType:
    """Every partition field of the table's specs (or of ``spec_ids``), by field id, optional:
    the ``partition`` column of the metadata tables (PyIceberg's ``specs_struct``, Java's
    ``Partitioning.partitionType``)."""
    specs = metadata.specs()
    chosen = specs.values() if spec_ids is None else [specs[i] for i in spec_ids if i in specs]
    fields = {f.field_id: f for spec in chosen for f in spec.fields}
    out = []
    for field_id in sorted(fields):
        f = fields[field_id]
        source = _schema_type(metadata, f.source_id)
        result = UnknownType() if source is None else f.transform.result_type(source)
        out.append(NestedField(field_id, f.name, result, False))
    return StructType(*out)
