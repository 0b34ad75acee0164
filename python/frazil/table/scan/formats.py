"""Data and delete files in the formats other than Parquet, presented to
:mod:`frazil.table.scan.read` as it sees a Parquet file, and Parquet data files decoded
natively (:class:`NativeParquet`).

:class:`NativeParquet` decodes a Parquet file with arrow-rs' decoder (Rust ``frazil_parquet``,
about a third less CPU than pyarrow's on the same column chunks): it reads the file's footer
from its tail and then only the byte ranges of the column chunks a read needs, and hands those
bytes to the decoder, which runs with the GIL released and decodes a row group's columns on
several threads. :mod:`frazil.table.scan.read` uses it where its Arrow schema for the columns
read equals pyarrow's (types and field ids), and pyarrow otherwise.

Avro data and delete files are read natively (:mod:`frazil._native`'s ``avro_data_*``, Rust
``frazil_manifest::avro::data``).

:class:`AvroFile` presents the file as :mod:`frazil.table.scan.read` sees a Parquet file: the
file's schema as Arrow, field ids (``field-id``, ``element-id``, ``key-id``, ``value-id``) as
``PARQUET:field_id``, list elements named ``element``, maps' ``key``/``value``; matching columns
to the table schema by id (projection, evolution, name mapping) happens there, as for Parquet.

The file is read into memory whole (Avro files carry no index to seek by); a split reads only
its blocks, and a row's position (``_pos``) is its ordinal in the file.

ORC data and delete files are read with pyarrow's ORC reader.

Iceberg's ORC writer (Java's) stores each column's field id in the ORC type attribute
``iceberg.id``, which pyarrow exposes as Arrow field metadata; :class:`OrcFile` presents the
file as :mod:`frazil.table.scan.read` sees a Parquet file: field ids as ``PARQUET:field_id``, list
elements named ``element`` (pyarrow names them ``item``; name mappings say ``element``), and the
Iceberg types ORC has no type for restored from their attributes (``iceberg.long-type`` TIME:
an ORC long of microseconds; ``iceberg.binary-type`` FIXED / UUID: an ORC binary).

Rows are read stripe by stripe; a row's position (``_pos``) is its ordinal in the file.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.orc as orc

from frazil import _native
from frazil.arrow_schema import FIELD_ID_KEY
from frazil.exceptions import DecodeError, FrazilError, UnsupportedError, ValidationError

log = logging.getLogger(__name__)

__all__ = ["AvroFile", "NativeParquet", "OrcFile"]


class NativeParquet:
    """One unencrypted Parquet file opened for native decoding (``source``: a pyarrow input
    file, kept open by the caller while this reads); ``want``: the Arrow schema to decode its
    columns to where the decoder can (``schema_arrow`` says what it decodes to)."""

    #: bytes read from the end of the file at first: most footers fit, so one read serves
    TAIL = 64 * 1024

    def __init__(self, source: Any, location: str, want: pa.Schema | None = None) -> None:
        self._source = source
        self.location = location
        self.size = int(source.size())
        n = min(self.TAIL, self.size)
        with self._naming():
            tail = source.read_at(n, self.size - n)
            need = _native.ParquetFooter.footer_length(tail)
            if need > n:
                if need > self.size:
                    raise DecodeError(
                        f"Parquet footer of {need} bytes is longer than the file "
                        f"({self.size} bytes)"
                    )
                tail = source.read_at(need, self.size - need)
            self.footer = _native.ParquetFooter(tail, self.size, want)
        self.schema_arrow = pa.schema(self.footer.schema())
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def _naming(self) -> Iterator[None]:
        """The decoder's errors name the file."""
        try:
            yield
        except FrazilError as e:
            raise DecodeError(f"Parquet file {self.location}: {e}") from e

    def row_group(
        self,
        row_group: int,
        columns: Sequence[int],
        batch_size: int,
        threads: int,
        keep: pa.BooleanArray | None = None,
    ) -> pa.RecordBatchReader:
        """Row group ``row_group``'s rows, the top-level ``columns`` (indices) only; with
        ``keep`` (a flag per row of the row group), only the rows it keeps."""
        with self._naming():
            parts = self._read(row_group, columns)
            export = self.footer.decode(row_group, list(columns), parts, batch_size, threads, keep)
        return pa.RecordBatchReader.from_stream(export)

    def row_group_where(
        self,
        row_group: int,
        columns: Sequence[int],
        batch_size: int,
        threads: int,
        keep: pa.BooleanArray | None,
        row_filter: Any,
        inputs: Sequence[int],
        walk: str = "auto",
    ) -> pa.RecordBatchReader | None:
        """:meth:`row_group`'s rows that ``row_filter`` (a native ``RowFilter``) holds for
        (None: none): its columns (``inputs``: the column holding each of its field ids) are
        read and decoded first, the others read and decoded for the rows it keeps only (see
        ``frazil-parquet``'s ``late``)."""
        with self._naming():
            first = self._read(row_group, sorted(set(inputs)))
            kept, rows, left = self.footer.filter_rows(
                row_group, list(columns), first, threads, keep, row_filter, list(inputs)
            )
            if not rows:
                return None
            rest = self._read(row_group, left) if left else []
            export = self.footer.decode_kept(kept, rest, batch_size, threads, walk)
        return pa.RecordBatchReader.from_stream(export)

    def _read(self, row_group: int, columns: Sequence[int]) -> list[tuple[int, pa.Array]]:
        return self._read_ranges(self.footer.byte_ranges(row_group, list(columns)))

    def _read_ranges(self, ranges: Sequence[tuple[int, int]]) -> list[tuple[int, pa.Array]]:
        """The bytes of ``ranges`` as uint8 arrays the decoder shares without a copy: read
        into pyarrow's memory pool, which reuses its pages (fresh ``bytes`` objects of a
        column chunk's size cost a page fault per 4 KB, more than the read itself)."""
        out = []
        with self._lock:  # seek + read
            for offset, length in ranges:
                self._source.seek(offset)
                buf = self._source.read_buffer(length)
                if len(buf) != length:
                    raise DecodeError(
                        f"{length} bytes at offset {offset} are beyond the end of the file"
                    )
                out.append((offset, pa.Array.from_buffers(pa.uint8(), length, [None, buf])))
        return out

    def page_keep(self, row_group: int, row_filter: Any) -> pa.BooleanArray | None:
        """Per row of row group ``row_group``, whether ``row_filter`` (a native
        ``RowFilter``) may hold for it by the file's page index; None where the file has no
        page index for the filter's columns or no page can be skipped. The index only saves
        work: a damaged one is logged and the row group read whole, as readers that ignore
        page indexes read it."""
        try:
            with self._naming():
                ranges = self.footer.page_index_ranges(row_group, row_filter)
                if not ranges:
                    return None
                keep = self.footer.page_keep(row_group, row_filter, self._read_ranges(ranges))
        except DecodeError as e:
            log.warning("ignoring the page index of row group %d: %s", row_group, e)
            return None
        return None if keep is None else pa.array(keep)


class AvroFile:
    """One Avro data file opened for reading (``source``: a pyarrow input file);
    ``record_count``, from the file's manifest entry, bounds the records the file may hold;
    ``decryption``: a ``frazil.encryption.table_io.StreamDecryption`` for an encrypted file."""

    def __init__(
        self, source: Any, record_count: int | None = None, decryption: Any = None
    ) -> None:
        self._data: bytes = source.read()
        if decryption is not None:  # an encrypted table's: one AES-GCM stream
            self._data = decryption.decrypt(self._data)
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


_ID = b"iceberg.id"
_LONG_TYPE = b"iceberg.long-type"
_BINARY_TYPE = b"iceberg.binary-type"
_LENGTH = b"iceberg.length"


def _field(f: pa.Field) -> pa.Field:
    """``f`` with its field id under ``PARQUET:field_id`` and its Iceberg type restored."""
    meta = dict(f.metadata or {})
    t = _type(f.type)
    if meta.get(_LONG_TYPE) == b"TIME" and pa.types.is_int64(t):
        t = pa.time64("us")
    binary = meta.get(_BINARY_TYPE)
    if binary == b"UUID" and pa.types.is_binary(t):
        t = pa.binary(16)
    elif binary == b"FIXED" and pa.types.is_binary(t) and _LENGTH in meta:
        t = pa.binary(int(meta[_LENGTH]))
    if _ID in meta:
        meta[FIELD_ID_KEY] = meta[_ID]
    return pa.field(f.name, t, f.nullable, meta or None)


def _type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_struct(t):
        return pa.struct([_field(c) for c in t])
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(_field(t.value_field).with_name("element"))
    if pa.types.is_map(t):
        return pa.map_(_field(t.key_field), _field(t.item_field))
    return t


class OrcFile:
    """One ORC file opened for reading (``source``: a pyarrow input file)."""

    def __init__(self, source: Any) -> None:
        self._file = orc.ORCFile(source)
        raw = self._file.schema
        self.schema_arrow = pa.schema([_field(f) for f in raw])
        # Only cast when a type differs; metadata alone needs no cast.
        self._cast = any(a.type != b.type for a, b in zip(raw, self.schema_arrow, strict=True))

    def _fix(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        if not self._cast:
            return batch
        fields = [self.schema_arrow.field(n) for n in batch.schema.names]
        return batch.cast(pa.schema(fields))

    def read(self, columns: Sequence[str]) -> pa.Table:
        """The whole file's ``columns`` (top-level names)."""
        t = self._file.read(columns=list(columns))
        return pa.Table.from_batches([self._fix(b) for b in t.to_batches()], self._fields(columns))

    def _fields(self, columns: Sequence[str]) -> pa.Schema:
        return pa.schema([self.schema_arrow.field(n) for n in columns])

    def _stripes(
        self, start: int | None, length: int | None, split_offsets: Sequence[int] | None
    ) -> list[int]:
        n = self._file.nstripes
        if start is None or length is None:
            return list(range(n))
        # A split names stripes by their offsets, which pyarrow does not expose: the data file's
        # split_offsets (Java writes the stripe offsets there) must list them.
        if split_offsets is None or len(split_offsets) != n:
            raise UnsupportedError(
                f"a split ({start}, {length}) of an ORC file with {n} stripes and split_offsets "
                f"{split_offsets}: the stripes it covers are unknown"
            )
        return [i for i, off in enumerate(split_offsets) if start <= off < start + length]

    def batches(
        self,
        columns: Sequence[str],
        batch_size: int,
        start: int | None = None,
        length: int | None = None,
        split_offsets: Sequence[int] | None = None,
    ) -> Iterator[tuple[int, pa.RecordBatch]]:
        """(position of its first row in the file, batch) of the stripes a split covers."""
        wanted = set(self._stripes(start, length, split_offsets))
        first_column = [self.schema_arrow.names[0]] if self.schema_arrow.names else []
        pos = 0
        for i in range(self._file.nstripes):
            if i not in wanted:
                # Positions count every row before: a skipped stripe's rows from one column.
                pos += self._file.read_stripe(i, columns=first_column).num_rows
                continue
            stripe = self._file.read_stripe(i, columns=list(columns))
            if not columns:  # pyarrow reads no rows without a column; count them from one
                n = self._file.read_stripe(i, columns=first_column).num_rows
                stripe = pa.record_batch({"_": pa.nulls(n)}).select([])
            stripe = self._fix(stripe)
            for offset in range(0, max(stripe.num_rows, 1), batch_size):
                b = stripe.slice(offset, batch_size)
                if b.num_rows:
                    yield pos + offset, b
            pos += stripe.num_rows
