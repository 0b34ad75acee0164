"""Table statistics (spec "Table Statistics"): Puffin files of ``apache-datasketches-theta-v1``
NDV sketches, one blob per column, registered in table metadata with ``set-statistics``.

The sketches are those the Java reference's ``compute_table_stats`` writes: each non-null value
is hashed in its binary single-value serialization (Appendix D) into a theta sketch of the
default seed and ``2^12`` nominal entries, stored as a compact sketch with the ``ndv`` property
(the estimate, truncated to an integer). Hashing and sketching run natively
(:class:`frazil._native.ThetaSketch`, the Apache DataSketches Rust crate), which also reads
sketches back and merges them (:class:`frazil._native.ThetaUnion`).

One difference from the reference: its Spark action receives UUIDs from Spark as strings and
sketches their text, where the Puffin spec (and frazil) sketch their 16-byte single-value form;
NDVs agree, but sketches of UUID columns from the two do not combine.

    table.compute_statistics()                 # every primitive column of the current snapshot
    table.compute_statistics(columns=["id"])
    table.read_ndv()                           # {field id: NDV} of the current snapshot
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from frazil import _native
from frazil.encryption import table_io as encryption
from frazil.exceptions import DecodeError, InvalidArgumentError, io_error
from frazil.manifest.puffin import Blob, read_puffin, write_puffin
from frazil.metadata import BlobMetadata as MetadataBlob
from frazil.metadata import Snapshot, StatisticsFile, TableMetadata
from frazil.schema import Schema
from frazil.table.update import RemoveStatisticsUpdate, SetStatisticsUpdate, TableUpdate
from frazil.table.update.snapshot_producer import WRITE_METADATA_PATH
from frazil.types import (
    GeographyType,
    GeometryType,
    NestedField,
    StructType,
    UnknownType,
    VariantType,
)

if TYPE_CHECKING:
    from frazil.table import Table
    from frazil.table.transaction import Transaction

__all__ = [
    "NDV_PROPERTY",
    "THETA_BLOB_TYPE",
    "ColumnSketch",
    "UpdateStatistics",
    "compute_statistics",
    "read_ndv",
    "statistics_columns",
    "theta_sketch_estimate",
]

THETA_BLOB_TYPE = "apache-datasketches-theta-v1"
#: The blob property holding the sketch's estimate (Java's ``NDVSketchUtil``).
NDV_PROPERTY = "ndv"


@dataclass(frozen=True)
class ColumnSketch:
    """A column to sketch: its field, and the names leading to it from the scan's rows."""

    field: NestedField
    path: tuple[str, ...]


def _sketchable(field: NestedField) -> bool:
    # Unknown (always null), variant, geometry and geography have no single-value form to hash.
    t = field.field_type
    return t.is_primitive and not isinstance(
        t, (UnknownType, VariantType, GeometryType, GeographyType)
    )


def statistics_columns(schema: Schema, columns: Sequence[str] | None) -> list[ColumnSketch]:
    """The columns to sketch: ``columns`` by name (fields of structs allowed, not of lists or
    maps), or every top-level primitive column as the Java reference's action chooses."""
    if columns is None:
        return [ColumnSketch(f, (f.name,)) for f in schema.fields if _sketchable(f)]
    out = []
    for name in columns:
        field = schema.find_field(name)
        if not _sketchable(field):
            raise InvalidArgumentError(
                f"column {name!r} is a {field.field_type}: NDV sketches are for primitive columns "
                "with a binary single-value serialization"
            )
        path = [field.name]
        parent = schema.parent_id(field.field_id)
        while parent is not None:
            pf = schema.find_field(parent)
            if not isinstance(pf.field_type, StructType):
                raise InvalidArgumentError(
                    f"column {name!r} is inside a list or map: NDV sketches are for columns "
                    "with one value per row"
                )
            path.append(pf.name)
            parent = schema.parent_id(pf.field_id)
        out.append(ColumnSketch(field, tuple(reversed(path))))
    return out


def _column(batch: pa.RecordBatch, path: tuple[str, ...]) -> pa.Array:
    array = batch.column(path[0])
    for name in path[1:]:
        # flatten() folds the struct's own nulls into its children's.
        struct_type = array.type
        array = array.flatten()[struct_type.get_field_index(name)]
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    return array


def sketch_batches(
    batches: Iterable[pa.RecordBatch], columns: Sequence[ColumnSketch]
) -> list[_native.ThetaSketch]:
    """One theta sketch per column over every batch."""
    sketches = [_native.ThetaSketch() for _ in columns]
    type_texts = [c.field.field_type.json_text() for c in columns]
    for batch in batches:
        for sketch, column, type_text in zip(sketches, columns, type_texts, strict=True):
            sketch.update(_column(batch, column.path), type_text)
    return sketches


def resolve_snapshot(table: Table, snapshot_id: int | None) -> Snapshot:
    """The snapshot of ``snapshot_id`` (default: the current one), or an error naming the table."""
    if snapshot_id is None:
        snapshot = table.metadata.current_snapshot()
        if snapshot is None:
            raise InvalidArgumentError(f"table {table.full_name()} has no snapshot to compute on")
        return snapshot
    snapshot = table.metadata.snapshot_by_id(snapshot_id)
    if snapshot is None:
        raise InvalidArgumentError(f"table {table.full_name()} has no snapshot {snapshot_id}")
    return snapshot


def snapshot_schema(table: Table, snapshot: Snapshot) -> Schema:
    if snapshot.schema_id is not None:
        schema = table.metadata.schema_by_id(snapshot.schema_id)
        if schema is not None:
            return schema
    return table.schema()


def metadata_file_location(metadata: TableMetadata, name: str) -> str:
    """Where a new file of the table's metadata directory goes (``write.metadata.path``, else
    ``<location>/metadata``), as the reference places statistics files."""
    root = metadata.properties.get(WRITE_METADATA_PATH) or (
        f"{(metadata.location or '').rstrip('/')}/metadata"
    )
    return f"{root.rstrip('/')}/{name}"


def statistics_location(table: Table, snapshot_id: int) -> str:
    """Where a new statistics file of a snapshot goes (Java's name:
    ``<snapshot id>-<uuid>.stats``)."""
    return metadata_file_location(table.metadata, f"{snapshot_id}-{uuid.uuid4()}.stats")


def write_statistics_file(
    table: Table,
    snapshot: Snapshot,
    columns: Sequence[ColumnSketch],
    sketches: Sequence[bytes],
    estimates: Sequence[float],
) -> StatisticsFile:
    """Writes the Puffin file of ``sketches`` (compact sketch bytes, one per column) and returns
    its metadata entry."""
    blobs = [
        Blob(
            THETA_BLOB_TYPE,
            data,
            fields=(column.field.field_id,),
            snapshot_id=snapshot.snapshot_id,
            sequence_number=snapshot.sequence_number,
            compression_codec="zstd",
            properties={NDV_PROPERTY: str(int(estimate))},
        )
        for column, data, estimate in zip(columns, sketches, estimates, strict=True)
    ]
    data = write_puffin(blobs)
    footer = read_puffin(data)
    location = statistics_location(table, snapshot.snapshot_id)
    # An encrypted table's is an AES-GCM stream, its wrapped key named by key_id; the size is
    # the stored one and the footer size the plaintext one, as Java's PuffinWriter reports them.
    size, key_id = encryption.write_statistics_file(table.io, location, data)
    # The footer is the magic, the payload, its length, the flags and the magic again.
    payload_size = int.from_bytes(data[-12:-8], "little")
    return StatisticsFile(
        snapshot_id=snapshot.snapshot_id,
        statistics_path=location,
        file_size_in_bytes=size,
        key_id=key_id,
        file_footer_size_in_bytes=payload_size + 4 + 4 + 4 + 4,
        blob_metadata=tuple(
            MetadataBlob(
                type=b.type,
                snapshot_id=b.snapshot_id,
                sequence_number=b.sequence_number,
                fields=tuple(b.fields),
                properties=dict(b.properties),
            )
            for b in footer.blobs
        ),
    )


def compute_statistics(
    table: Table, columns: Sequence[str] | None = None, snapshot_id: int | None = None
) -> StatisticsFile:
    """Sketches ``columns`` (default: every top-level primitive column) of a snapshot (default:
    the current one) from a scan of its rows, writes the Puffin file and commits it with
    ``set-statistics`` (replacing that snapshot's previous statistics file)."""
    snapshot = resolve_snapshot(table, snapshot_id)
    chosen = statistics_columns(snapshot_schema(table, snapshot), columns)
    if not chosen:
        raise InvalidArgumentError(f"table {table.full_name()} has no column to compute NDV of")
    names = tuple(dict.fromkeys(c.path[0] for c in chosen))
    reader = table.scan(selected_fields=names, snapshot_id=snapshot.snapshot_id).to_batches()
    sketches = sketch_batches(reader, chosen)
    statistics_file = write_statistics_file(
        table,
        snapshot,
        chosen,
        [s.to_bytes() for s in sketches],
        [s.estimate() for s in sketches],
    )
    table.transaction().set_statistics(statistics_file).commit_transaction()
    return statistics_file


def theta_sketch_estimate(data: bytes, location: str, what: str) -> float:
    """The estimate of a serialized theta sketch; a corrupt one raises
    :class:`~frazil.exceptions.DecodeError` naming ``location`` and ``what``."""
    try:
        return _native.ThetaSketch.estimate_of(data)
    except DecodeError as e:
        raise DecodeError(f"{location}: {what}: {e}") from None


def read_ndv(table: Table, snapshot_id: int | None = None) -> dict[int, int]:
    """The NDV per field id from the statistics file of a snapshot (default: the current one),
    read from each ``apache-datasketches-theta-v1`` blob's sketch (the estimate truncated, as
    the ``ndv`` property is written); ``{}`` when the snapshot has no statistics file."""
    snapshot = resolve_snapshot(table, snapshot_id)
    files = [f for f in table.metadata.statistics if f.snapshot_id == snapshot.snapshot_id]
    if not files:
        return {}
    f = files[-1]
    location = table.metadata.resolve(f.statistics_path)
    try:
        data = encryption.read_statistics_file(table.io, location, f.key_id, f.key_metadata)
    except OSError as e:
        raise io_error(e, "reading the statistics file", location) from e
    puffin = read_puffin(data, location)
    out: dict[int, int] = {}
    for i, blob in enumerate(puffin.blobs):
        if blob.type != THETA_BLOB_TYPE or len(blob.fields) != 1:
            continue
        what = f"blob {i} ({THETA_BLOB_TYPE} of field {blob.fields[0]})"
        out[blob.fields[0]] = int(theta_sketch_estimate(puffin.read_blob(blob), location, what))
    return out


class UpdateStatistics:
    """PyIceberg's statistics builder: ``set_statistics`` / ``remove_statistics`` staged into the
    transaction on ``commit()`` (or on leaving a ``with`` block)."""

    def __init__(self, transaction: Transaction) -> None:
        self._transaction = transaction
        self._updates: list[StatisticsFile | int] = []
        self._committed = False

    def set_statistics(self, statistics_file: StatisticsFile) -> UpdateStatistics:
        self._updates.append(statistics_file)
        return self

    def remove_statistics(self, snapshot_id: int) -> UpdateStatistics:
        self._updates.append(snapshot_id)
        return self

    def commit(self) -> None:
        if self._committed or not self._updates:
            return
        updates: list[TableUpdate] = [
            RemoveStatisticsUpdate(u) if isinstance(u, int) else SetStatisticsUpdate(u)
            for u in self._updates
        ]
        self._committed = True
        self._transaction._stage_static(updates, [])

    def __enter__(self) -> UpdateStatistics:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit()
