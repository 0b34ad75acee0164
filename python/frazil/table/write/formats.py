"""The file formats data files are written in (``write.format.default``: parquet, orc, avro):
the ORC and Avro writers behind :class:`frazil.table.write.writer.DataFileWriter`'s rolling
files (Parquet is written there directly, its footer giving the metrics).

- ORC through pyarrow's ORC writer, with the type attributes Java's ORC writer gives
  (``iceberg.id``; ``iceberg.required`` for required fields; ``iceberg.long-type`` TIME for a
  time, an ORC long of microseconds; ``iceberg.binary-type`` UUID / FIXED and
  ``iceberg.length`` for the types ORC has no type for), as :mod:`frazil.table.scan.formats` reads
  them.
- Avro natively (Rust ``frazil_manifest::avro::data::write``): the Avro schema of the table
  schema with field ids, ``write.avro.compression-codec`` (gzip, Java's default: deflate).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import pyarrow.orc as orc

from frazil import _native
from frazil.arrow_schema import FIELD_ID_KEY
from frazil.exceptions import InvalidArgumentError
from frazil.manifest.content_file import FileFormat

__all__ = ["AvroWriter", "OrcWriter", "file_format"]

_FORMATS = {"parquet": FileFormat.PARQUET, "orc": FileFormat.ORC, "avro": FileFormat.AVRO}
_AVRO_CODECS = {
    "gzip": "deflate",
    "deflate": "deflate",
    "zstd": "zstandard",
    "snappy": "snappy",
    "uncompressed": "null",
    "none": "null",
}


def file_format(properties: Mapping[str, str]) -> str:
    """The format ``write.format.default`` names (default Parquet)."""
    name = properties.get("write.format.default", "parquet").strip().lower()
    if name not in _FORMATS:
        raise InvalidArgumentError(
            f"write.format.default={name!r} is not a data file format (parquet, orc, avro)"
        )
    return _FORMATS[name]


def _orc_field(f: pa.Field) -> pa.Field:
    meta: dict[bytes, bytes] = {}
    fid = (f.metadata or {}).get(FIELD_ID_KEY)
    if fid is not None:
        meta[b"iceberg.id"] = fid
    if not f.nullable:
        meta[b"iceberg.required"] = b"true"
    t = f.type
    if isinstance(t, pa.BaseExtensionType):  # uuid
        t = pa.binary()
        meta[b"iceberg.binary-type"] = b"UUID"
    elif pa.types.is_fixed_size_binary(t):
        meta[b"iceberg.binary-type"] = b"FIXED"
        meta[b"iceberg.length"] = str(t.byte_width).encode()
        t = pa.binary()
    elif pa.types.is_time(t):
        meta[b"iceberg.long-type"] = b"TIME"
        t = pa.int64()
    elif pa.types.is_struct(t):
        t = pa.struct([_orc_field(c) for c in t])
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        t = pa.list_(_orc_field(t.value_field))
    elif pa.types.is_map(t):
        t = pa.map_(_orc_field(t.key_field), _orc_field(t.item_field))
    return pa.field(f.name, t, f.nullable, meta or None)


def _storage(a: Any) -> Any:
    """Arrays with extension types (uuid) as their storage, recursively, for a cast."""
    if isinstance(a, pa.ChunkedArray):
        return pa.chunked_array([_storage(c) for c in a.chunks], _storage_type(a.type))
    if isinstance(a, pa.ExtensionArray):
        return a.storage
    return a.cast(_storage_type(a.type)) if _storage_type(a.type) != a.type else a


def _storage_type(t: pa.DataType) -> pa.DataType:
    if isinstance(t, pa.BaseExtensionType):
        return t.storage_type
    if pa.types.is_struct(t):
        return pa.struct([c.with_type(_storage_type(c.type)) for c in t])
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(_storage_type(t.value_type)))
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_storage_type(t.value_type)))
    if pa.types.is_map(t):
        return pa.map_(
            t.key_field.with_type(_storage_type(t.key_type)),
            t.item_field.with_type(_storage_type(t.item_type)),
        )
    return t


class OrcWriter:
    """An ORC data file of ``schema`` (the table's Arrow schema) written to ``sink``."""

    def __init__(self, sink: Any, schema: pa.Schema, properties: Mapping[str, str]) -> None:
        self.schema = pa.schema([_orc_field(f) for f in schema])
        codec = properties.get("write.orc.compression-codec", "zlib").strip().lower()
        self._writer = orc.ORCWriter(sink, compression=codec)

    def write_table(self, table: pa.Table) -> None:
        columns = [_storage(c) for c in table.columns]
        self._writer.write(pa.Table.from_arrays(columns, schema=self.schema))

    def close(self) -> None:
        self._writer.close()


class AvroWriter:
    """An Avro data file of ``schema`` (the table's Arrow schema) written to ``sink``, block
    by block as they fill."""

    def __init__(self, sink: Any, schema: pa.Schema, properties: Mapping[str, str]) -> None:
        name = properties.get("write.avro.compression-codec", "gzip").strip().lower()
        if name not in _AVRO_CODECS:
            raise InvalidArgumentError(
                f"write.avro.compression-codec={name!r} is not an Avro codec "
                f"({', '.join(sorted(_AVRO_CODECS))})"
            )
        self._sink = sink
        template = pa.RecordBatch.from_pylist([], schema)
        self._writer = _native.AvroDataWriter(template, _AVRO_CODECS[name])

    def write_table(self, table: pa.Table) -> None:
        for batch in table.to_batches():
            self._writer.write(batch)
        self._sink.write(self._writer.take_written())

    def close(self) -> None:
        self._sink.write(self._writer.finish())
