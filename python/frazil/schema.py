"""Schemas (spec "Schemas and Data Types"; JSON in Appendix C).

A :class:`Schema` is the top-level struct of a table plus its ``schema-id`` and
``identifier-field-ids``. Parsing names the path of any malformed field and refuses duplicate field
ids; defaults stay in their JSON single-value form (Appendix D) on :class:`NestedField`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cached_property
from typing import TYPE_CHECKING, Any

from frazil import values
from frazil._json import Fields, check_list, check_str
from frazil.exceptions import FrazilError, InvalidArgumentError, ParseError
from frazil.types import (
    DecimalType,
    DoubleType,
    FloatType,
    GeographyType,
    GeometryType,
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
    UnknownType,
    VariantType,
    parse_type,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "INITIAL_SCHEMA_ID",
    "Schema",
    "assign_fresh_schema_ids",
    "type_from_json_at",
    "validate_identifier_fields",
]

INITIAL_SCHEMA_ID = 0
# Field ids above this are reserved for metadata columns (spec "Reserved Field IDs").
MAX_FIELD_ID = 2**31 - 1 - 200

# Types whose defaults the spec requires to be null (spec "Default values").
_NULL_DEFAULT_ONLY = (UnknownType, VariantType, GeometryType, GeographyType)


def type_from_json_at(obj: Any, path: str) -> IcebergType:
    """Parses the Appendix C JSON form of a type, naming ``path`` in any error."""
    if isinstance(obj, str):
        try:
            return parse_type(obj)
        except FrazilError as e:
            raise ParseError(f"{path}: {e}") from None
    f = Fields(obj, path)
    kind = f.str("type")
    if kind == "struct":
        items = f.list("fields")
        return StructType(
            *(field_from_json(item, f"{f.at('fields')}[{i}]") for i, item in enumerate(items))
        )
    if kind == "list":
        return ListType(
            element_id=f.int32("element-id"),
            element_type=type_from_json_at(f.raw("element"), f.at("element"))
            if f.has("element")
            else _missing(f, "element"),
            element_required=f.bool("element-required"),
        )
    if kind == "map":
        return MapType(
            key_id=f.int32("key-id"),
            key_type=type_from_json_at(f.raw("key"), f.at("key"))
            if f.has("key")
            else _missing(f, "key"),
            value_id=f.int32("value-id"),
            value_type=type_from_json_at(f.raw("value"), f.at("value"))
            if f.has("value")
            else _missing(f, "value"),
            value_required=f.bool("value-required"),
        )
    raise ParseError(f"{f.at('type')}: unknown nested type {kind!r}")


def _missing(f: Fields, key: str) -> Any:
    raise ParseError(f"{f.at(key)}: required field is missing")


def field_from_json(obj: Any, path: str) -> NestedField:
    f = Fields(obj, path)
    field_id = f.int32("id")
    name = f.str("name")
    required = f.bool("required")
    if not f.has("type"):
        _missing(f, "type")
    field_type = type_from_json_at(f.raw("type"), f.at("type"))
    doc = f.opt_str("doc")
    initial_default = f.raw("initial-default")
    write_default = f.raw("write-default")
    for key, default in (("initial-default", initial_default), ("write-default", write_default)):
        if default is not None:
            _check_default(default, field_type, f.at(key))
    return NestedField(
        field_id=field_id,
        name=name,
        field_type=field_type,
        required=required,
        doc=doc,
        initial_default=initial_default,
        write_default=write_default,
    )


def _check_default(default: Any, field_type: IcebergType, at: str) -> None:
    if isinstance(field_type, _NULL_DEFAULT_ONLY):
        raise ParseError(f"{at}: a {field_type} column must default to null")
    if isinstance(field_type, StructType):
        # A struct's default is either null or an empty struct; sub-field defaults live on the
        # sub-fields (spec "Default values").
        if default != {}:
            raise ParseError(f"{at}: a struct default must be null or {{}}, got {default!r}")
        return
    if isinstance(field_type, PrimitiveType):
        try:
            values.from_json(default, field_type)
        except FrazilError as e:
            raise ParseError(f"{at}: {e}") from None


class Schema:
    """A table schema: top-level fields, ``schema_id`` and ``identifier_field_ids``."""

    def __init__(
        self,
        *fields: NestedField,
        schema_id: int = INITIAL_SCHEMA_ID,
        identifier_field_ids: Iterable[int] = (),
    ) -> None:
        self.fields: tuple[NestedField, ...] = tuple(fields)
        self.schema_id: int = schema_id
        self.identifier_field_ids: tuple[int, ...] = tuple(identifier_field_ids)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Schema)
            and self.fields == other.fields
            and self.schema_id == other.schema_id
            and set(self.identifier_field_ids) == set(other.identifier_field_ids)
        )

    def __hash__(self) -> int:
        # Defaults may be dicts (a struct's `{}`), so hash what is always hashable.
        return hash((self.schema_id, tuple(f.field_id for f in self.fields)))

    def __repr__(self) -> str:
        return (
            f"Schema({', '.join(map(repr, self.fields))}, schema_id={self.schema_id}, "
            f"identifier_field_ids={list(self.identifier_field_ids)})"
        )

    def __str__(self) -> str:
        """The tree as PyIceberg prints it: ``table {`` then one ``id: name: required type``
        line per top-level column (nested types inline), then ``}``."""
        return "table {\n" + "".join(f"  {field_str(f)}\n" for f in self.fields) + "}"

    def __len__(self) -> int:
        return len(self.fields)

    def __iter__(self) -> Iterator[NestedField]:
        return iter(self.fields)

    def as_arrow(self) -> pa.Schema:
        """The Arrow schema frazil reads this schema as (large types, field ids in the fields'
        ``PARQUET:field_id`` metadata), as PyIceberg's ``Schema.as_arrow``."""
        # Deferred: importing this module must not load pyarrow.
        from frazil.arrow_types import schema_to_arrow

        return schema_to_arrow(self)

    def same_columns(self, other: Schema) -> bool:
        """Equal apart from ``schema_id`` (how the builder finds an existing schema to reuse)."""
        return self.fields == other.fields and set(self.identifier_field_ids) == set(
            other.identifier_field_ids
        )

    def as_struct(self) -> StructType:
        return StructType(*self.fields)

    # ---- JSON

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "struct",
            "schema-id": self.schema_id,
        }
        if self.identifier_field_ids:
            out["identifier-field-ids"] = list(self.identifier_field_ids)
        out["fields"] = [f.to_json() for f in self.fields]
        return out

    @classmethod
    def from_json(
        cls, obj: Any, path: str = "schema", default_schema_id: int | None = None
    ) -> Schema:
        """Parses a schema object; v1's ``schema`` may lack ``schema-id``, which then reads as
        ``default_schema_id``."""
        f = Fields(obj, path)
        if not f.has("type"):  # the reference refuses a schema without its "type": "struct"
            _missing(f, "type")
        if f.raw("type") != "struct":
            raise ParseError(f"{f.at('type')}: a schema must be a struct, got {f.raw('type')!r}")
        if default_schema_id is None or f.has("schema-id"):
            schema_id = f.int32("schema-id")
        else:
            schema_id = default_schema_id
        identifier_field_ids: list[int] = f.opt_int32_list("identifier-field-ids") or []
        items = f.list("fields")
        fields = [field_from_json(item, f"{f.at('fields')}[{i}]") for i, item in enumerate(items)]
        schema = cls(*fields, schema_id=schema_id, identifier_field_ids=identifier_field_ids)
        seen: set[int] = set()
        for field_id in schema._all_ids():
            if field_id in seen:
                raise ParseError(f"{path}: duplicate field id {field_id}")
            seen.add(field_id)
        for i in identifier_field_ids:
            if i not in seen:
                raise ParseError(f"{f.at('identifier-field-ids')}: unknown field id {i}")
        return schema

    # ---- indexes

    def _all_ids(self) -> Iterator[int]:
        for _, field_id, _ in _walk(self.as_struct(), (), None):
            yield field_id

    @cached_property
    def _index(self) -> tuple[dict[int, NestedField], dict[str, int], dict[int, int]]:
        by_id: dict[int, NestedField] = {}
        by_name: dict[str, int] = {}
        parents: dict[int, int] = {}
        for names, field_id, parent in _walk(self.as_struct(), (), None):
            by_id[field_id] = _field_of(self, names, field_id)
            by_name[".".join(names)] = field_id
            if parent is not None:
                parents[field_id] = parent
        return by_id, by_name, parents

    @cached_property
    def _lower_names(self) -> dict[str, int]:
        return {name.lower(): i for name, i in self._index[1].items()}

    @property
    def field_ids(self) -> set[int]:
        return set(self._index[0])

    @property
    def highest_field_id(self) -> int:
        return max(self._index[0], default=0)

    def find_field(self, name_or_id: str | int, case_sensitive: bool = True) -> NestedField:
        """A field by id or by its full dotted name (``"a.b"``, ``"tags.element"``)."""
        by_id, by_name, _ = self._index
        if isinstance(name_or_id, int) and not isinstance(name_or_id, bool):
            if name_or_id not in by_id:
                raise InvalidArgumentError(f"no field with id {name_or_id}")
            return by_id[name_or_id]
        if not isinstance(name_or_id, str):
            raise InvalidArgumentError(f"expected a field name or id, got {name_or_id!r}")
        field_id = (
            by_name.get(name_or_id) if case_sensitive else self._lower_names.get(name_or_id.lower())
        )
        if field_id is None:
            raise InvalidArgumentError(f"no field named {name_or_id!r}")
        return by_id[field_id]

    def find_type(self, name_or_id: str | int, case_sensitive: bool = True) -> IcebergType:
        return self.find_field(name_or_id, case_sensitive).field_type

    def find_column_name(self, field_id: int) -> str | None:
        for name, i in self._index[1].items():
            if i == field_id:
                return name
        return None

    def parent_id(self, field_id: int) -> int | None:
        """The id of the struct, list or map field directly containing ``field_id``."""
        return self._index[2].get(field_id)

    def column_names(self) -> list[str]:
        return list(self._index[1])


def type_str(t: IcebergType) -> str:
    """A type as PyIceberg prints it (``list<string>``, ``map<string, long>``,
    ``struct<1: a: required int>``, ``decimal(10, 2)``)."""
    if isinstance(t, StructType):
        return f"struct<{', '.join(field_str(f) for f in t.fields)}>"
    if isinstance(t, ListType):
        return f"list<{type_str(t.element_type)}>"
    if isinstance(t, MapType):
        return f"map<{type_str(t.key_type)}, {type_str(t.value_type)}>"
    if isinstance(t, DecimalType):
        return f"decimal({t.precision}, {t.scale})"
    return str(t)


def field_str(f: NestedField) -> str:
    """``id: name: required|optional type`` plus `` (doc)`` when documented."""
    text = f"{f.field_id}: {f.name}: {'required' if f.required else 'optional'} "
    text += type_str(f.field_type)
    return f"{text} ({f.doc})" if f.doc else text


def _walk(
    t: IcebergType, prefix: tuple[str, ...], parent: int | None
) -> Iterator[tuple[tuple[str, ...], int, int | None]]:
    """Every nested field as (full name parts, id, parent id), parents before children."""
    if isinstance(t, StructType):
        for f in t.fields:
            names = (*prefix, f.name)
            yield names, f.field_id, parent
            yield from _walk(f.field_type, names, f.field_id)
    elif isinstance(t, ListType):
        names = (*prefix, "element")
        yield names, t.element_id, parent
        yield from _walk(t.element_type, names, t.element_id)
    elif isinstance(t, MapType):
        yield (*prefix, "key"), t.key_id, parent
        yield from _walk(t.key_type, (*prefix, "key"), t.key_id)
        yield (*prefix, "value"), t.value_id, parent
        yield from _walk(t.value_type, (*prefix, "value"), t.value_id)


def _field_of(schema: Schema, names: tuple[str, ...], field_id: int) -> NestedField:
    """The NestedField at a path; list elements and map keys/values get a synthetic one."""
    t: IcebergType = schema.as_struct()
    found: NestedField | None = None
    for name in names:
        if isinstance(t, StructType):
            found = next(f for f in t.fields if f.name == name)
        elif isinstance(t, ListType):
            found = NestedField(t.element_id, "element", t.element_type, t.element_required)
        elif isinstance(t, MapType):
            if name == "key":
                found = NestedField(t.key_id, "key", t.key_type, True)
            else:
                found = NestedField(t.value_id, "value", t.value_type, t.value_required)
        assert found is not None
        t = found.field_type
    assert found is not None and found.field_id == field_id
    return found


def assign_fresh_schema_ids(
    schema: Schema, next_id: int = 1, schema_id: int = INITIAL_SCHEMA_ID
) -> tuple[Schema, int]:
    """Renumbers every field from ``next_id`` the way the reference does (a struct's own fields
    first, then each field's children), returning the new schema and the last id assigned.
    Identifier fields follow their fields."""
    counter = [next_id - 1]
    old_to_new: dict[int, int] = {}

    def fresh(old: int) -> int:
        counter[0] += 1
        old_to_new[old] = counter[0]
        return counter[0]

    def visit(t: IcebergType) -> IcebergType:
        if isinstance(t, StructType):
            ids = [fresh(f.field_id) for f in t.fields]
            return StructType(
                *(
                    NestedField(
                        new_id,
                        f.name,
                        visit(f.field_type),
                        f.required,
                        f.doc,
                        f.initial_default,
                        f.write_default,
                    )
                    for new_id, f in zip(ids, t.fields, strict=True)
                )
            )
        if isinstance(t, ListType):
            element_id = fresh(t.element_id)
            return ListType(element_id, visit(t.element_type), t.element_required)
        if isinstance(t, MapType):
            key_id = fresh(t.key_id)
            value_id = fresh(t.value_id)
            return MapType(
                key_id, visit(t.key_type), value_id, visit(t.value_type), t.value_required
            )
        return t

    struct = visit(schema.as_struct())
    assert isinstance(struct, StructType)
    identifiers = [old_to_new[i] for i in schema.identifier_field_ids if i in old_to_new]
    return (
        Schema(*struct.fields, schema_id=schema_id, identifier_field_ids=identifiers),
        counter[0],
    )


def validate_identifier_fields(schema: Schema) -> None:
    """Spec "Identifier Field IDs": required primitives, not float/double, not inside a map or
    list, and not inside an optional struct."""
    for field_id in schema.identifier_field_ids:
        if field_id not in schema.field_ids:
            raise InvalidArgumentError(f"identifier field id {field_id} is not in the schema")
        field = schema.find_field(field_id)
        name = schema.find_column_name(field_id)
        if not isinstance(field.field_type, PrimitiveType):
            raise InvalidArgumentError(f"identifier field {name!r} must be a primitive")
        if isinstance(field.field_type, (FloatType, DoubleType)):
            raise InvalidArgumentError(
                f"identifier field {name!r} cannot be a {field.field_type} (float or double)"
            )
        if not field.required:
            raise InvalidArgumentError(f"identifier field {name!r} must be required")
        parent = schema.parent_id(field_id)
        while parent is not None:
            p = schema.find_field(parent)
            if isinstance(p.field_type, (ListType, MapType)):
                raise InvalidArgumentError(
                    f"identifier field {name!r} cannot be nested in a list or map"
                )
            if not p.required:
                raise InvalidArgumentError(
                    f"identifier field {name!r} cannot be nested in an optional struct"
                )
            parent = schema.parent_id(parent)


def check_str_list(value: Any, at: str) -> list[str]:
    return [check_str(v, f"{at}[{i}]") for i, v in enumerate(check_list(value, at))]
