"""Avro data and delete files, read natively (:mod:`frazil._native`'s ``avro_data_*``, Rust
``frazil_manifest::avro::data``) for :mod:`frazil.table.read`.

:class:`AvroFile` presents the file as :mod:`frazil.table.read` sees a Parquet file: the
file's schema as Arrow, field ids (``field-id``, ``element-id``, ``key-id``, ``value-id``) as
``PARQUET:field_id``, list elements named ``element``, maps' ``key``/``value``; matching columns
to the table schema by id (projection, evolution, name mapping) happens there, as for Parquet.

The file is read into memory whole (Avro files carry no index to seek by); a split reads only
its blocks, and a row's position (``_pos``) is its ordinal in the file.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from frazil import _native
from frazil.exceptions import ValidationError

__all__ = ["AvroFile"]


class AvroFile:
    """One Avro data file opened for reading (``source``: a pyarrow input file);
    ``record_count``, from the file's manifest entry, bounds the records the file may hold."""

    def __init__(self, source: Any, record_count: int | None = None) -> None:
        self._data: bytes = source.read()
        self._max = record_count
        self.schema_arrow = pa.schema(_native.avro_data_schema(self._data))

    def _indices(self, columns: Sequence[str]) -> list[int]:
        names = self.schema_arrow.names
        missing = [c for c in columns if c not in names]
        if missing:
            raise ValidationError(f"columns {missing} are not in the file")
        return sorted({names.index(c) for c in columns})

    def _read(
        self, columns: Sequence[str], split: tuple[int, int] | None, batch_rows: int
    ) -> tuple[list[int], pa.Schema, list[pa.RecordBatch]]:
        firsts, export = _native.avro_data_read(
            self._data, self._indices(columns), split, batch_rows, self._max
        )
        reader = pa.RecordBatchReader.from_stream(export)
        batches = [b.select(list(columns)) for b in reader]
        schema = pa.schema([self.schema_arrow.field(c) for c in columns])
        return firsts, schema, batches

    def read(self, columns: Sequence[str]) -> pa.Table:
        """The whole file's ``columns`` (top-level names), in that order."""
        _, schema, batches = self._read(columns, None, 0)
        return pa.Table.from_batches(batches, schema)

    def batches(
        self,
        columns: Sequence[str],
        batch_size: int,
        start: int | None = None,
        length: int | None = None,
        split_offsets: Sequence[int] | None = None,
    ) -> Iterator[tuple[int, pa.RecordBatch]]:
        """(position of its first row in the file, batch) of the blocks a split covers (those
        whose preceding sync marker lies in it, as Java's reader chooses them)."""
        del split_offsets  # Avro splits go by sync markers, not offsets
        split = None if start is None or length is None else (start, length)
        firsts, _, batches = self._read(columns, split, batch_size)
        yield from zip(firsts, batches, strict=True)
