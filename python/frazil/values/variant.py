"""``variant`` columns (spec v3 "Semi-structured Types"; Parquet's Variant encoding v1), the
twin of Rust ``frazil_values::variant``, which encodes and decodes the bytes.

- In Arrow a variant column is ``struct<metadata: binary not null, value: binary not null>``
  (the unshredded Parquet layout; the spec gives the two fields no field ids).
- :func:`from_json` and :func:`to_json` turn JSON text into variant columns and back (see the
  Rust module for how types JSON lacks print: dates, timestamps, uuids, binary).
- Reading Parquet: a VARIANT group is read as is; a shredded one (DuckDB writes them: a
  ``typed_value`` primitive, object or array beside ``value``) is unshredded natively, per
  Parquet's VariantShredding (typed object fields merged with a partially shredded object).
- Writing Parquet: the column is a group of the two binaries annotated with the VARIANT
  logical type; pyarrow 26 cannot annotate a group, so :class:`VariantFooterSink` adds the
  annotation to the footer as the file is closed (natively, ``frazil_values::parquet_variant``).
- No bounds are kept for variant columns (the spec's variant bounds are optional).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import _native
from frazil.exceptions import FrazilError, ValidationError
from frazil.types import ListType, MapType, StructType, VariantType

__all__ = [
    "VARIANT_ARROW_TYPE",
    "VariantFooterSink",
    "from_json",
    "read_column",
    "to_json",
    "variant_field_ids",
]

VARIANT_ARROW_TYPE = pa.struct(
    [pa.field("metadata", pa.binary(), nullable=False), pa.field("value", pa.binary(), False)]
)


def _array(values: Any) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks()
    return values if isinstance(values, pa.Array) else pa.array(values)


def from_json(json_text: Any) -> pa.StructArray:
    """A variant column from JSON text (a string array, or a list of strings / ``None``)."""
    arr = _array(json_text)
    if pa.types.is_null(arr.type):
        arr = arr.cast(pa.string())
    return pa.array(_native.variant_from_json(arr))


def to_json(values: Any) -> pa.StringArray:
    """The JSON text of a variant column (``struct<metadata, value>``), null where it is."""
    arr = _array(values)
    if isinstance(arr.type, pa.BaseExtensionType):
        arr = arr.storage
    return pa.array(_native.variant_to_json(arr))


def read_column(arr: pa.Array, where: str) -> pa.Array:
    """A variant column of a data file as :data:`VARIANT_ARROW_TYPE` (see the module docs)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if isinstance(arr.type, pa.BaseExtensionType):
        arr = arr.storage
    if arr.type == VARIANT_ARROW_TYPE:
        return arr
    if not pa.types.is_struct(arr.type):
        raise ValidationError(f"{where}: a variant column must be a group, found {arr.type}")
    names = {arr.type.field(i).name for i in range(arr.type.num_fields)}
    if "metadata" not in names or not ({"value", "typed_value"} & names):
        raise ValidationError(f"{where}: a variant group needs metadata and value fields")
    metadata = arr.field("metadata").cast(pa.binary())
    if "typed_value" in names:
        try:
            value = pa.array(_native.variant_unshred(arr))
        except FrazilError as e:
            raise type(e)(f"{where}: {e}") from None
    else:
        value = arr.field("value").cast(pa.binary())
    valid = arr.is_valid()
    if value.null_count:
        # A row with neither value nor typed_value is a missing (SQL null) variant.
        valid = pc.and_(valid, value.is_valid())
        value = value.fill_null(b"\x00")
    mask = pc.invert(valid) if not pc.all(valid).as_py() else None
    return pa.StructArray.from_arrays(
        [metadata.fill_null(b"\x01\x00\x00"), value],
        fields=list(VARIANT_ARROW_TYPE),
        mask=mask,
    )


class VariantFooterSink:
    """An output stream for pyarrow's Parquet writer that annotates variant groups: it passes
    data through, holds back what the writer writes when closing (the footer), and writes
    the footer with the VARIANT logical type on the groups of ``field_ids`` (natively; pyarrow
    26 cannot annotate a group). Call :meth:`hold` before closing the writer, :meth:`finish`
    after."""

    def __init__(self, sink: Any, field_ids: list[int]) -> None:
        self._sink = sink
        self._ids = field_ids
        self._pos = 0
        self._held: bytearray | None = None
        self.closed = False

    def write(self, data: Any) -> int:
        n = len(memoryview(data))
        if self._held is not None:
            self._held += data
        else:
            self._sink.write(data)
        self._pos += n
        return n

    def tell(self) -> int:
        return self._pos

    def flush(self) -> None:
        if self._held is None and hasattr(self._sink, "flush"):
            self._sink.flush()

    def writable(self) -> bool:
        return True

    def hold(self) -> None:
        self._held = bytearray()

    def finish(self) -> None:
        tail = bytes(self._held or b"")
        self._held = None
        n = int.from_bytes(tail[-8:-4], "little") if len(tail) >= 8 else -1
        if tail[-4:] != b"PAR1" or not 0 <= n <= len(tail) - 8:
            raise ValidationError("the Parquet writer's footer is not where it was expected")
        footer = tail[len(tail) - 8 - n : -8]
        patched = _native.parquet_annotate_variants(footer, self._ids)
        self._sink.write(tail[: len(tail) - 8 - n])
        self._sink.write(patched + len(patched).to_bytes(4, "little") + b"PAR1")
        self._pos += len(patched) - n

    def close(self) -> None:
        # pyarrow may close its stream while the footer is held: the real close comes later.
        if self._held is None and not self.closed:
            self.closed = True
            self._sink.close()


def variant_field_ids(fields: Any) -> list[int]:
    """The field ids of every variant field (their Parquet groups get the VARIANT type)."""
    out: list[int] = []

    def visit(fid: int, t: Any) -> None:
        if isinstance(t, VariantType):
            out.append(fid)
        elif isinstance(t, StructType):
            for f in t.fields:
                visit(f.field_id, f.field_type)
        elif isinstance(t, ListType):
            visit(t.element_id, t.element_type)
        elif isinstance(t, MapType):
            visit(t.value_id, t.value_type)

    for f in fields:
        visit(f.field_id, f.field_type)
    return out
