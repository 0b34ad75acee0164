"""Row-level deletes applied natively: deletion vectors (spec "Deletion Vectors"), position
delete files (spec "Position Delete Files") and equality delete files (spec "Equality Delete
Files").

A :class:`DeletionVector` is the set of deleted row positions of one data file, held natively
as a 64-bit roaring bitmap. It is read from and written to ``deletion-vector-v1`` Puffin blobs
(length, magic and CRC-32 verified on read), built from positions or from the rows of
position delete files, merged with another (a writer merges new deletes into the file's
existing DV), and applied to a row range as an Arrow keep-mask or keep-indices.

    >>> import pyarrow as pa
    >>> from frazil.manifest.deletes import DeletionVector
    >>> dv = DeletionVector.from_positions(pa.array([1, 3], pa.int64()))
    >>> dv.keep_mask(0, 5).to_pylist()
    [True, False, True, False, True]
    >>> DeletionVector.from_puffin_blob(dv.to_puffin_blob()) == dv
    True

An :class:`EqualityDeleteSet` holds the keys of equality delete files (their delete columns, in
``equality_ids`` order), hashed once; a batch's key columns are probed for its keep-mask. A
null key matches a null value; NaN matches NaN and -0.0 does not match 0.0, as in the Java
reference; the Arrow layouts of one Iceberg type match each other (a column promoted from int to
long, float to double or to a wider decimal still matches its older keys).

    >>> from frazil.manifest.deletes import EqualityDeleteSet
    >>> keys = EqualityDeleteSet(pa.table({"id": pa.array([3, None], pa.int32())}))
    >>> keys.keep_mask([pa.array([1, 3, None], pa.int64())]).to_pylist()
    [True, False, False]
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import pyarrow as pa

from frazil import _native
from frazil.exceptions import DecodeError, InvalidArgumentError
from frazil.manifest.puffin import Blob, PuffinFile, _write, read_puffin

__all__ = [
    "DV_BLOB_TYPE",
    "ROW_POSITION_FIELD_ID",
    "DeletionVector",
    "EqualityDeleteSet",
    "WrittenDeletionVector",
    "position_deletes_by_file",
    "read_deletion_vectors",
    "write_deletion_vectors",
]

logger = logging.getLogger(__name__)

DV_BLOB_TYPE = "deletion-vector-v1"
#: Field id of the ``_pos`` metadata column; DV blobs list it in ``fields``.
ROW_POSITION_FIELD_ID = 2147483645
REFERENCED_DATA_FILE = "referenced-data-file"
CARDINALITY = "cardinality"

_Batch = TypeVar("_Batch", pa.RecordBatch, pa.Table)


def _arrow_positions(positions: Any) -> Any:
    if hasattr(positions, "__arrow_c_array__") or hasattr(positions, "__arrow_c_stream__"):
        return positions
    return pa.array(positions, pa.int64())


class DeletionVector:
    """The deleted row positions (0 <= pos < 2^63) of one data file."""

    __slots__ = ("_dv",)

    def __init__(self, native: _native.DeletionVector | None = None) -> None:
        self._dv = native if native is not None else _native.DeletionVector()

    @classmethod
    def from_positions(cls, positions: Any) -> DeletionVector:
        """From positions: an integer Arrow array or chunked array (int64, uint64, int32,
        uint32; no nulls, none negative), or any iterable of ints. Order and duplicates do
        not matter."""
        return cls(_native.DeletionVector.from_positions(_arrow_positions(positions)))

    @classmethod
    def from_puffin_blob(
        cls,
        data: bytes,
        offset: int = 0,
        length: int | None = None,
        location: str = "<memory>",
        referenced_data_file: str | None = None,
        record_count: int | None = None,
    ) -> DeletionVector:
        """Decodes the ``deletion-vector-v1`` blob at ``[offset, offset + length)`` of ``data``:
        a whole Puffin file located by a DV's ``content_offset`` and ``content_size_in_bytes``,
        or (the defaults) just the blob. Raises :class:`DecodeError` naming ``location`` and
        the problem (length, magic, CRC-32, roaring layout, or, given the referenced data
        file's ``record_count``, a position not below it)."""
        context = f"in {location} at offset {offset}"
        if length is not None:
            context += f" with length {length}"
        if referenced_data_file is not None:
            context += f" for data file {referenced_data_file}"
        return cls(_native.DeletionVector.deserialize(data, offset, length, context, record_count))

    def to_puffin_blob(self) -> bytes:
        """The ``deletion-vector-v1`` blob bytes (not a whole Puffin file)."""
        return self._dv.serialize()

    def to_blob(self, referenced_data_file: str) -> Blob:
        """A Puffin blob for this DV, with the metadata the spec requires: ``fields`` is
        ``_pos``, snapshot id and sequence number -1, ``referenced-data-file`` and
        ``cardinality`` properties, no compression."""
        return Blob(
            DV_BLOB_TYPE,
            self.to_puffin_blob(),
            fields=(ROW_POSITION_FIELD_ID,),
            properties={
                REFERENCED_DATA_FILE: referenced_data_file,
                CARDINALITY: str(self.cardinality),
            },
        )

    @property
    def cardinality(self) -> int:
        """The number of deleted positions."""
        return self._dv.cardinality

    def __len__(self) -> int:
        return self._dv.cardinality

    def __bool__(self) -> bool:
        return self._dv.cardinality > 0

    def __contains__(self, pos: object) -> bool:
        return isinstance(pos, int) and 0 <= pos < 2**64 and self._dv.contains(pos)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DeletionVector) and self._dv == other._dv

    __hash__ = None  # type: ignore[assignment]

    def __or__(self, other: DeletionVector) -> DeletionVector:
        return self.union(other)

    def __repr__(self) -> str:
        return f"DeletionVector(cardinality={self.cardinality}, min={self.min}, max={self.max})"

    @property
    def min(self) -> int | None:
        return self._dv.min

    @property
    def max(self) -> int | None:
        return self._dv.max

    def positions(self, record_count: int | None = None) -> pa.Int64Array:
        """Every deleted position, ascending (Int64, the type of ``_pos``). With the data
        file's ``record_count``, a position not below it raises :class:`DecodeError`; without
        it, more than 2^28 positions raise :class:`InvalidArgumentError` (a few kilobytes of
        run containers can hold billions)."""
        return pa.array(self._dv.positions(record_count))

    def keep_mask(self, start: int, length: int) -> pa.BooleanArray:
        """For the rows at positions ``[start, start + length)`` of the data file: True where
        the row survives (``pyarrow.compute.filter`` takes it as is)."""
        return pa.array(self._dv.keep_mask(start, length))

    def keep_indices(self, start: int, length: int) -> pa.Int64Array:
        """The batch-relative indices (0-based) of the surviving rows of
        ``[start, start + length)``, ascending (``take`` takes them as is)."""
        return pa.array(self._dv.keep_indices(start, length))

    def deleted_count(self, start: int, length: int) -> int:
        """How many rows of ``[start, start + length)`` are deleted."""
        return self._dv.deleted_count(start, length)

    def filter(self, batch: _Batch, start: int = 0) -> _Batch:
        """``batch`` (rows ``start``, ``start + 1``, ... of the data file) without its deleted
        rows; the batch itself when none of its rows is deleted."""
        if self._dv.deleted_count(start, batch.num_rows) == 0:
            return batch
        return batch.filter(self.keep_mask(start, batch.num_rows))

    def union(self, *others: DeletionVector) -> DeletionVector:
        """A new DV holding the positions of this one and of ``others``."""
        dv = self._dv
        for other in others:
            dv = dv.union(other._dv)
        return DeletionVector(dv)


class EqualityDeleteSet:
    """The keys of equality delete files that share their equality field ids."""

    __slots__ = ("_set",)

    def __init__(self, keys: pa.Table | pa.RecordBatchReader) -> None:
        """From the delete rows' key columns (a table, or anything with ``__arrow_c_stream__``),
        one per equality field id, in order; the rows of several files may be concatenated."""
        self._set = _native.EqualityDeleteSet.from_keys(keys)

    def __len__(self) -> int:
        """The number of distinct keys."""
        return len(self._set)

    def __repr__(self) -> str:
        return f"EqualityDeleteSet(keys={len(self)})"

    def keep_mask(
        self, columns: Sequence[pa.Array], keep: pa.BooleanArray | None = None
    ) -> pa.BooleanArray:
        """True for the rows of a batch whose key (``columns``, in the set's order) is not in
        the set; False wherever ``keep`` (the batch's position-delete keep-mask) is False."""
        mask: pa.BooleanArray = pa.array(self._set.keep_mask(list(columns), keep))
        return mask


def position_deletes_by_file(rows: Any, data_file: str | None = None) -> dict[str, DeletionVector]:
    """The rows of position delete files (a pyarrow Table, RecordBatch or reader with
    ``file_path`` and ``pos`` columns; ``row`` and other columns are ignored) merged into one
    DV per data file. With ``data_file``, only that file's positions are kept."""
    if isinstance(rows, pa.RecordBatch):
        rows = pa.Table.from_batches([rows])
    if isinstance(rows, pa.Table):
        keep = [c for c in ("file_path", "pos") if c in rows.column_names]
        rows = rows.select(keep)
        # The native side reads strings; position delete files may be dictionary-encoded.
        i = rows.column_names.index("file_path") if "file_path" in keep else -1
        if i >= 0 and pa.types.is_dictionary(rows.schema.field(i).type):
            rows = rows.set_column(i, "file_path", rows.column(i).cast(pa.string()))
    groups = _native.deletes_group_positions(rows, data_file)
    return {path: DeletionVector(dv) for path, dv in groups}


def read_deletion_vectors(data: bytes, location: str = "<memory>") -> dict[str, DeletionVector]:
    """Every ``deletion-vector-v1`` blob of a whole Puffin file, by ``referenced-data-file``;
    each blob's ``cardinality`` property is checked against its content."""
    puffin = read_puffin(data, location)
    return {
        _referenced_data_file(puffin, i): _read_dv(puffin, i)
        for i, blob in enumerate(puffin.blobs)
        if blob.type == DV_BLOB_TYPE
    }


def _referenced_data_file(puffin: PuffinFile, i: int) -> str:
    path = puffin.blobs[i].properties.get(REFERENCED_DATA_FILE)
    if path is None:
        raise DecodeError(
            f"invalid deletion vector in {puffin.location}: blob {i} lacks the required "
            f"{REFERENCED_DATA_FILE!r} property"
        )
    return path


def _read_dv(puffin: PuffinFile, i: int) -> DeletionVector:
    blob = puffin.blobs[i]
    if blob.compression_codec is not None:
        raise DecodeError(
            f"invalid deletion vector in {puffin.location}: blob {i} is compressed with "
            f"{blob.compression_codec}, but deletion vectors must not be compressed"
        )
    ref = _referenced_data_file(puffin, i)
    dv = DeletionVector.from_puffin_blob(
        puffin.data, blob.offset, blob.length, puffin.location, ref
    )
    declared = blob.properties.get(CARDINALITY)
    if declared is not None and declared != str(dv.cardinality):
        raise DecodeError(
            f"invalid deletion vector in {puffin.location} for data file {ref}: the "
            f"cardinality property says {declared} but the vector holds {dv.cardinality}"
        )
    return dv


@dataclass(frozen=True)
class WrittenDeletionVector:
    """Where a DV landed in a Puffin file: what its delete file entry records
    (``referenced_data_file``, ``content_offset``, ``content_size_in_bytes``, and
    ``record_count``, the DV's cardinality)."""

    referenced_data_file: str
    content_offset: int
    content_size_in_bytes: int
    record_count: int


def write_deletion_vectors(
    dvs: Mapping[str, DeletionVector] | Iterable[tuple[str, DeletionVector]],
    properties: Mapping[str, str] | None = None,
) -> tuple[bytes, list[WrittenDeletionVector]]:
    """A Puffin file holding one DV per data file (at most one per file, as the spec requires
    for a snapshot), and where each landed. Its delete file entries have content position
    deletes, file format ``puffin``, the Puffin file's path and size, and these fields."""
    items = list(dvs.items()) if isinstance(dvs, Mapping) else list(dvs)
    seen: set[str] = set()
    for path, _ in items:
        if path in seen:
            raise InvalidArgumentError(
                f"two deletion vectors for data file {path}; merge them into one first"
            )
        seen.add(path)
    data, metas = _write((dv.to_blob(path) for path, dv in items), properties, False)
    written = [
        WrittenDeletionVector(path, m.offset, m.length, dv.cardinality)
        for (path, dv), m in zip(items, metas, strict=True)
    ]
    logger.debug("wrote %d deletion vectors in %d bytes", len(written), len(data))
    return data, written
