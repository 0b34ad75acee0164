"""A table's schemas as the Glue ``StorageDescriptor`` columns Java and PyIceberg write.

Each top-level field of the current schema is a column (``Parameters``: ``iceberg.field.id``,
``iceberg.field.optional``, ``iceberg.field.current=true``), then the fields of older schemas
whose names the current one no longer has (``iceberg.field.current=false``), so engines that read
Glue's columns (Athena, Redshift Spectrum) see the history as Java's ``IcebergToGlueConverter``
leaves it. Types are Hive's names: ``bigint`` for long, ``timestamp`` for both timestamps,
``string`` for time and uuid, ``binary`` for fixed, ``array<..>``, ``map<..>``, ``struct<..>``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from frazil.catalog.hive_types import hive_type_name
from frazil.types import (
    IcebergType,
    TimestamptzNanoType,
    TimestamptzType,
)

if TYPE_CHECKING:
    from frazil.metadata import TableMetadata

__all__ = ["ICEBERG_FIELD_CURRENT", "ICEBERG_FIELD_ID", "ICEBERG_FIELD_OPTIONAL", "glue_columns"]

ICEBERG_FIELD_ID = "iceberg.field.id"
ICEBERG_FIELD_OPTIONAL = "iceberg.field.optional"
ICEBERG_FIELD_CURRENT = "iceberg.field.current"

# Glue shows both timestamps as ``timestamp``; types Hive lacks (variant, geometry) keep their
# Iceberg name, as Java and PyIceberg do.
_NAMES: dict[type[IcebergType], str] = {
    TimestamptzType: "timestamp",
    TimestamptzNanoType: "timestamp",
}


def glue_type(t: IcebergType) -> str:
    """The Hive type string Glue shows for ``t``."""
    return hive_type_name(t, _NAMES, str)


def glue_columns(metadata: TableMetadata) -> list[dict[str, Any]]:
    """The ``StorageDescriptor.Columns`` for ``metadata`` (see the module docstring)."""
    columns: dict[str, dict[str, Any]] = {}
    current = metadata.schema()
    others = [s for s in metadata.schemas if s.schema_id != metadata.current_schema_id]
    for schema, is_current in [(current, True), *((s, False) for s in others)]:
        for f in schema.fields:
            if f.name in columns:
                continue
            column: dict[str, Any] = {
                "Name": f.name,
                "Type": glue_type(f.field_type),
                "Parameters": {
                    ICEBERG_FIELD_ID: str(f.field_id),
                    ICEBERG_FIELD_OPTIONAL: str(not f.required).lower(),
                    ICEBERG_FIELD_CURRENT: str(is_current).lower(),
                },
            }
            if f.doc:
                column["Comment"] = f.doc
            columns[f.name] = column
    return list(columns.values())
