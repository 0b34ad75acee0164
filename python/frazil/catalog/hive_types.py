"""Iceberg types as Hive type names: the column types the Hive Metastore's storage descriptors
list, and Glue's, which use Hive's names too (Java's ``HiveSchemaUtil`` and
``IcebergToGlueConverter``, PyIceberg's ``HiveCatalog`` and ``GlueCatalog``).

The two catalogs agree on every type Hive has a name for (``bigint`` for long, ``string`` for
time and uuid, ``binary`` for fixed, ``decimal(p,s)``, ``array<..>``, ``map<..>``,
``struct<..>``) and differ only where it has none, which each passes in: the timestamp with a
zone, variant, geometry, geography and unknown."""

from __future__ import annotations

from collections.abc import Callable, Mapping

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
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimeType,
    UUIDType,
)

__all__ = ["hive_type_name"]

_PRIMITIVES: dict[type[IcebergType], str] = {
    BooleanType: "boolean",
    IntegerType: "int",
    LongType: "bigint",
    FloatType: "float",
    DoubleType: "double",
    DateType: "date",
    TimeType: "string",
    TimestampType: "timestamp",
    TimestampNanoType: "timestamp",
    StringType: "string",
    UUIDType: "string",
    BinaryType: "binary",
    FixedType: "binary",
}


def hive_type_name(
    t: IcebergType,
    names: Mapping[type[IcebergType], str],
    other: Callable[[IcebergType], str],
) -> str:
    """The Hive type name of ``t``: ``names`` for the types the catalog names its own way,
    ``other`` for any type neither table names, nested types spelled out recursively."""
    if isinstance(t, DecimalType):
        return f"decimal({t.precision},{t.scale})"
    if isinstance(t, StructType):
        inner = ",".join(f"{f.name}:{hive_type_name(f.field_type, names, other)}" for f in t.fields)
        return f"struct<{inner}>"
    if isinstance(t, ListType):
        return f"array<{hive_type_name(t.element_type, names, other)}>"
    if isinstance(t, MapType):
        key = hive_type_name(t.key_type, names, other)
        return f"map<{key},{hive_type_name(t.value_type, names, other)}>"
    name = names.get(type(t)) or _PRIMITIVES.get(type(t))
    return name if name is not None else other(t)
