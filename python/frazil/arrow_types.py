"""Iceberg types as Arrow types: the Iceberg -> Arrow half of :mod:`frazil.arrow_schema` (the
mapping table is there), which needs only :mod:`frazil.types`, so that
:meth:`frazil.schema.Schema.as_arrow` can use it without the Arrow -> Iceberg half, which builds
schemas, importing :mod:`frazil.schema` back."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from frazil.exceptions import UnsupportedError
from frazil.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
    VariantType,
)
from frazil.values.variant import VARIANT_ARROW_TYPE

if TYPE_CHECKING:
    from frazil.schema import Schema

__all__ = ["DOC_KEY", "FIELD_ID_KEY", "schema_to_arrow", "type_to_arrow"]

FIELD_ID_KEY = b"PARQUET:field_id"
DOC_KEY = b"doc"

_PRIMITIVES: dict[type, pa.DataType] = {
    BooleanType: pa.bool_(),
    IntegerType: pa.int32(),
    LongType: pa.int64(),
    FloatType: pa.float32(),
    DoubleType: pa.float64(),
    DateType: pa.date32(),
    TimeType: pa.time64("us"),
    TimestampType: pa.timestamp("us"),
    TimestamptzType: pa.timestamp("us", tz="UTC"),
    TimestampNanoType: pa.timestamp("ns"),
    TimestamptzNanoType: pa.timestamp("ns", tz="UTC"),
    UUIDType: pa.uuid(),
    UnknownType: pa.null(),
}


def _meta(field_id: int, doc: str | None = None) -> dict[bytes, bytes]:
    out = {FIELD_ID_KEY: str(field_id).encode()}
    if doc is not None:
        out[DOC_KEY] = doc.encode()
    return out


def type_to_arrow(t: IcebergType, *, large_types: bool = True) -> pa.DataType:
    """The Arrow type of an Iceberg type (see the module docstring for the mapping)."""
    if isinstance(t, StructType):
        return pa.struct([_field_to_arrow(f, large_types) for f in t.fields])
    if isinstance(t, ListType):
        element = pa.field(
            "element",
            type_to_arrow(t.element_type, large_types=large_types),
            nullable=not t.element_required,
            metadata=_meta(t.element_id),
        )
        return pa.large_list(element) if large_types else pa.list_(element)
    if isinstance(t, MapType):
        key = pa.field(
            "key",
            type_to_arrow(t.key_type, large_types=large_types),
            nullable=False,
            metadata=_meta(t.key_id),
        )
        value = pa.field(
            "value",
            type_to_arrow(t.value_type, large_types=large_types),
            nullable=not t.value_required,
            metadata=_meta(t.value_id),
        )
        return pa.map_(key, value)
    if isinstance(t, DecimalType):
        return pa.decimal128(t.precision, t.scale)
    if isinstance(t, FixedType):
        return pa.binary(t.length)
    if isinstance(t, StringType):
        return pa.large_string() if large_types else pa.string()
    if isinstance(t, (BinaryType, GeometryType, GeographyType)):
        return pa.large_binary() if large_types else pa.binary()
    if isinstance(t, VariantType):
        return VARIANT_ARROW_TYPE
    arrow = _PRIMITIVES.get(type(t))
    if arrow is None:
        raise UnsupportedError(f"Iceberg type {t} has no Arrow type in frazil")
    return arrow


def _field_to_arrow(f: NestedField, large_types: bool) -> pa.Field:
    return pa.field(
        f.name,
        type_to_arrow(f.field_type, large_types=large_types),
        nullable=not f.required,
        metadata=_meta(f.field_id, f.doc),
    )


def schema_to_arrow(schema: Schema | StructType, *, large_types: bool = True) -> pa.Schema:
    """The Arrow schema of an Iceberg schema, field ids as ``PARQUET:field_id`` metadata."""
    fields = schema.fields
    return pa.schema([_field_to_arrow(f, large_types) for f in fields])
