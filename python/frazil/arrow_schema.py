"""Iceberg schemas and types as Arrow schemas and types, and back.

Iceberg to Arrow follows the mapping PyIceberg and the Java reference's Arrow module use:

===============================  =======================================================
boolean, int, long               ``bool``, ``int32``, ``int64``
float, double                    ``float32``, ``float64``
decimal(P, S)                    ``decimal128(P, S)``
date, time                       ``date32``, ``time64[us]``
timestamp, timestamptz           ``timestamp[us]``, ``timestamp[us, tz=UTC]``
timestamp_ns, timestamptz_ns     ``timestamp[ns]``, ``timestamp[ns, tz=UTC]``
string, binary                   ``large_string``, ``large_binary`` (``string``/``binary``
                                 with ``large_types=False``)
uuid                             pyarrow's ``arrow.uuid`` extension type (what
                                 :mod:`frazil.manifest` decodes uuid partition values to)
fixed[L]                         ``fixed_size_binary(L)``
unknown                          ``null``
geometry, geography              ``large_binary`` of WKB (``binary`` with
                                 ``large_types=False``); see :mod:`frazil.values.geo`
variant                          ``struct<metadata: binary, value: binary>``; see
                                 :mod:`frazil.values.variant`
list, map, struct                ``large_list`` (``list`` with ``large_types=False``),
                                 ``map``, ``struct``
===============================  =======================================================

Large offsets are the default, as in PyIceberg, so one column chunk of a big file never
overflows 32-bit offsets. Every field carries its Iceberg field id as ``PARQUET:field_id``
metadata (list elements, map keys and values included) and is nullable unless required.

Arrow to Iceberg (:func:`schema_from_arrow`) accepts both offset widths, views and dictionary
encoded columns, unsigned integers that fit (``uint8``/``uint16`` -> int, ``uint32`` -> long),
``float16`` -> float and timestamps of any unit (``s``/``ms``/``us`` -> microseconds,
``ns`` -> ``timestamp_ns``); any timezone means ``timestamptz``.

The Iceberg -> Arrow functions live in :mod:`frazil.arrow_types` (they need no schemas, so
:meth:`frazil.schema.Schema.as_arrow` uses them from there) and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from frazil.arrow_types import DOC_KEY, FIELD_ID_KEY, schema_to_arrow, type_to_arrow
from frazil.exceptions import InvalidArgumentError, UnsupportedError
from frazil.schema import Schema
from frazil.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
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
from frazil.values.geo import type_from_wkb_extension

if TYPE_CHECKING:
    from frazil.metadata.name_mapping import MappedField, NameMapping

__all__ = [
    "FIELD_ID_KEY",
    "field_id_of",
    "schema_from_arrow",
    "schema_to_arrow",
    "type_from_arrow",
    "type_to_arrow",
    "walk_fields",
]

# ---------------------------------------------------------------------------------------------
# Arrow -> Iceberg


def field_id_of(field: pa.Field) -> int | None:
    """The ``PARQUET:field_id`` of an Arrow field (``None`` if absent or negative)."""
    meta = field.metadata
    if not meta or FIELD_ID_KEY not in meta:
        return None
    try:
        value = int(meta[FIELD_ID_KEY])
    except ValueError:
        raise InvalidArgumentError(
            f"field {field.name!r}: PARQUET:field_id {meta[FIELD_ID_KEY]!r} is not an integer"
        ) from None
    return value if value >= 0 else None


def type_from_arrow(t: pa.DataType, path: str = "") -> IcebergType:
    """The Iceberg type of an Arrow primitive type; nested types need field ids, so convert
    them with :func:`schema_from_arrow`."""
    where = f"column {path!r}: " if path else ""
    if isinstance(t, pa.DictionaryType):
        return type_from_arrow(t.value_type, path)
    if isinstance(t, pa.BaseExtensionType):
        if t.extension_name == "arrow.uuid":
            return UUIDType()
        if t.extension_name == "geoarrow.wkb":
            return type_from_wkb_extension(t.__arrow_ext_serialize__())
        return type_from_arrow(t.storage_type, path)
    if pa.types.is_boolean(t):
        return BooleanType()
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t):
        return IntegerType()
    if pa.types.is_uint8(t) or pa.types.is_uint16(t):
        return IntegerType()
    if pa.types.is_int64(t) or pa.types.is_uint32(t):
        return LongType()
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return FloatType()
    if pa.types.is_float64(t):
        return DoubleType()
    if pa.types.is_decimal(t) and t.precision <= 38:
        return DecimalType(t.precision, t.scale)
    if pa.types.is_date32(t) or pa.types.is_date64(t):
        return DateType()
    if pa.types.is_time(t) and t.unit in ("s", "ms", "us"):
        return TimeType()
    if pa.types.is_timestamp(t):
        tz = t.tz is not None
        if t.unit == "ns":
            return TimestamptzNanoType() if tz else TimestampNanoType()
        return TimestamptzType() if tz else TimestampType()
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return StringType()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return BinaryType()
    if pa.types.is_fixed_size_binary(t):
        return FixedType(t.byte_width)
    if pa.types.is_null(t):
        return UnknownType()
    raise UnsupportedError(f"{where}Arrow type {t} has no Iceberg type")


def _children(t: pa.DataType) -> list[pa.Field]:
    if isinstance(t, pa.StructType):
        return [t.field(i) for i in range(t.num_fields)]
    if isinstance(t, (pa.ListType, pa.LargeListType, pa.FixedSizeListType, pa.ListViewType)):
        return [t.value_field]
    if isinstance(t, pa.LargeListViewType):
        return [t.value_field]
    if isinstance(t, pa.MapType):
        return [t.key_field, t.item_field]
    return []


def _is_list(t: pa.DataType) -> bool:
    return isinstance(
        t,
        (
            pa.ListType,
            pa.LargeListType,
            pa.FixedSizeListType,
            pa.ListViewType,
            pa.LargeListViewType,
        ),
    )


def is_variant_field(f: pa.Field) -> bool:
    """A file's variant column: a group with a field id of ``metadata`` (binary) and ``value``
    and/or ``typed_value`` children without field ids (Parquet's VARIANT layout; pyarrow's
    Arrow schema drops the group's VARIANT annotation, so the shape tells)."""
    t = f.type
    if isinstance(t, pa.BaseExtensionType):
        t = t.storage_type
    if field_id_of(f) is None or not isinstance(t, pa.StructType):
        return False
    kids = {c.name: c for c in _children(t)}
    meta = kids.get("metadata")
    return (
        meta is not None
        and (pa.types.is_binary(meta.type) or pa.types.is_large_binary(meta.type))
        and set(kids) <= {"metadata", "value", "typed_value"}
        and len(kids) >= 2
        and all(field_id_of(c) is None for c in kids.values())
    )


def walk_fields(fields: list[pa.Field]) -> Iterator[pa.Field]:
    """Every field of ``fields`` and, depth first, of their struct, list and map children
    (a variant's own fields are not walked)."""
    for f in fields:
        yield f
        if not is_variant_field(f):
            yield from walk_fields(_children(f.type))


class _Ids:
    """Where a converted field's id comes from: the file, a name mapping, or a counter."""

    def __init__(self, mode: str, mapping: NameMapping | None) -> None:
        self.mode = mode
        self.mapping = mapping
        self.next = 0

    def get(
        self, field: pa.Field, level: tuple[MappedField, ...] | None, path: str
    ) -> tuple[int, tuple[MappedField, ...] | None]:
        if self.mode == "metadata":
            fid = field_id_of(field)
            assert fid is not None
            return fid, None
        if self.mode == "mapping":
            found = next((m for m in level or () if field.name in m.names), None)
            if found is None or found.field_id is None:
                raise InvalidArgumentError(
                    f"column {path!r} is not in the name mapping, so it has no field id"
                )
            return found.field_id, found.fields
        self.next += 1
        return self.next, None


def schema_from_arrow(schema: pa.Schema, name_mapping: NameMapping | None = None) -> Schema:
    """An Iceberg schema for an Arrow schema.

    Field ids come from the fields' ``PARQUET:field_id`` metadata when every field (nested ones
    included) has one; else from ``name_mapping`` (every column must be mapped); else they are
    fresh, assigned in order (a struct's fields depth first), as a schema for a new table needs
    (the catalog reassigns them anyway). Non-nullable fields are required.
    """
    fields = list(schema)
    all_fields = list(walk_fields(fields))
    if all_fields and all(field_id_of(f) is not None for f in all_fields):
        ids = _Ids("metadata", None)
    elif name_mapping is not None:
        ids = _Ids("mapping", name_mapping)
    else:
        ids = _Ids("fresh", None)
    top = name_mapping.fields if name_mapping is not None else None
    return Schema(*_convert_fields(fields, ids, top, ""))


def _convert_fields(
    fields: list[pa.Field], ids: _Ids, level: tuple[MappedField, ...] | None, prefix: str
) -> list[NestedField]:
    # Fresh ids number a struct's own fields before their children, as the reference does.
    assigned = []
    for f in fields:
        path = f"{prefix}{f.name}"
        assigned.append((f, path, *ids.get(f, level, path)))
    out = []
    for f, path, fid, sub in assigned:
        doc = f.metadata.get(DOC_KEY).decode() if f.metadata and DOC_KEY in f.metadata else None
        t = VariantType() if is_variant_field(f) else _convert_type(f.type, ids, sub, path)
        out.append(NestedField(fid, f.name, t, not f.nullable, doc=doc))
    return out


def _convert_type(
    t: pa.DataType, ids: _Ids, level: tuple[MappedField, ...] | None, path: str
) -> IcebergType:
    if isinstance(t, pa.DictionaryType):
        return _convert_type(t.value_type, ids, level, path)
    if isinstance(t, pa.StructType):
        return StructType(*_convert_fields(_children(t), ids, level, f"{path}."))
    if _is_list(t):
        element = t.value_field
        element_view = pa.field("element", element.type, element.nullable, element.metadata)
        eid, sub = ids.get(element_view, level, f"{path}.element")
        return ListType(
            eid,
            _convert_type(element.type, ids, sub, f"{path}.element"),
            not element.nullable,
        )
    if isinstance(t, pa.MapType):
        key, value = t.key_field, t.item_field
        kid, ksub = ids.get(pa.field("key", key.type, False, key.metadata), level, f"{path}.key")
        vview = pa.field("value", value.type, value.nullable, value.metadata)
        vid, vsub = ids.get(vview, level, f"{path}.value")
        return MapType(
            kid,
            _convert_type(key.type, ids, ksub, f"{path}.key"),
            vid,
            _convert_type(value.type, ids, vsub, f"{path}.value"),
            not value.nullable,
        )
    return type_from_arrow(t, path)
