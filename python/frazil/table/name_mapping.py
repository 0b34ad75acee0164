"""PyIceberg's import path for name mappings (``pyiceberg.table.name_mapping``); the
implementation is :mod:`frazil.metadata.name_mapping`."""

from frazil.metadata.name_mapping import (
    DEFAULT_NAME_MAPPING_PROPERTY,
    MappedField,
    NameMapping,
    create_mapping_from_schema,
    parse_mapping_from_json,
)

__all__ = [
    "DEFAULT_NAME_MAPPING_PROPERTY",
    "MappedField",
    "NameMapping",
    "create_mapping_from_schema",
    "parse_mapping_from_json",
]
