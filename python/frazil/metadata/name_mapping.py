"""Name mapping (spec "Column Projection"; JSON in Appendix C "Name Mapping Serialization").

The table property ``schema.name-mapping.default`` holds a JSON list of field mappings that give
field ids to columns of data files written without them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from frazil._json import Fields, check_list, check_str, check_unicode
from frazil.exceptions import ParseError
from frazil.schema import Schema
from frazil.types import IcebergType, ListType, MapType, StructType

__all__ = [
    "DEFAULT_NAME_MAPPING_PROPERTY",
    "MappedField",
    "NameMapping",
    "create_mapping_from_schema",
    "parse_mapping_from_json",
]

DEFAULT_NAME_MAPPING_PROPERTY = "schema.name-mapping.default"


@dataclass(frozen=True)
class MappedField:
    names: tuple[str, ...]
    field_id: int | None = None
    fields: tuple[MappedField, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.field_id is not None:
            out["field-id"] = self.field_id
        out["names"] = list(self.names)
        if self.fields:
            out["fields"] = [f.to_json() for f in self.fields]
        return out

    @classmethod
    def from_json(cls, obj: Any, path: str) -> MappedField:
        f = Fields(obj, path)
        names_at = f.at("names")
        names = tuple(
            check_str(n, f"{names_at}[{i}]")
            for i, n in enumerate(check_list(f.raw("names"), names_at))
        )
        children: list[Any] = f.opt_list("fields") or []
        return cls(
            names=names,
            field_id=f.opt_int32("field-id"),
            fields=tuple(
                MappedField.from_json(c, f"{f.at('fields')}[{i}]") for i, c in enumerate(children)
            ),
        )


class NameMapping:
    """The top-level list of field mappings."""

    def __init__(self, fields: tuple[MappedField, ...] | list[MappedField]) -> None:
        self.fields: tuple[MappedField, ...] = tuple(fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NameMapping) and self.fields == other.fields

    def __hash__(self) -> int:
        return hash(self.fields)

    def __repr__(self) -> str:
        return f"NameMapping({list(self.fields)!r})"

    def __iter__(self) -> Iterator[MappedField]:
        return iter(self.fields)

    def to_json(self) -> str:
        return json.dumps([f.to_json() for f in self.fields], separators=(",", ":"))

    def find(self, *path: str) -> MappedField | None:
        """The mapping of a column by its name in a data file (one name per nesting level)."""
        level: tuple[MappedField, ...] = self.fields
        found: MappedField | None = None
        for name in path:
            found = next((m for m in level if name in m.names), None)
            if found is None:
                return None
            level = found.fields
        return found


def parse_mapping_from_json(text: str) -> NameMapping:
    try:
        obj = json.loads(text)
        check_unicode(text, obj, DEFAULT_NAME_MAPPING_PROPERTY)
    except (json.JSONDecodeError, TypeError, RecursionError) as e:
        raise ParseError(f"{DEFAULT_NAME_MAPPING_PROPERTY}: invalid JSON: {e}") from None
    items = check_list(obj, DEFAULT_NAME_MAPPING_PROPERTY)
    return NameMapping(
        [MappedField.from_json(item, f"name-mapping[{i}]") for i, item in enumerate(items)]
    )


def create_mapping_from_schema(schema: Schema) -> NameMapping:
    """The mapping a schema implies: each field mapped by its current name."""

    def children(t: IcebergType) -> tuple[MappedField, ...]:
        if isinstance(t, StructType):
            return tuple(
                MappedField((f.name,), f.field_id, children(f.field_type)) for f in t.fields
            )
        if isinstance(t, ListType):
            return (MappedField(("element",), t.element_id, children(t.element_type)),)
        if isinstance(t, MapType):
            return (
                MappedField(("key",), t.key_id, children(t.key_type)),
                MappedField(("value",), t.value_id, children(t.value_type)),
            )
        return ()

    return NameMapping(children(schema.as_struct()))
