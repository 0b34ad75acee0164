"""Schema evolution (spec "Schema Evolution", "Default values", "Identifier Field IDs").

``UpdateSchema`` collects changes to a table's current schema, checks each against the spec's
rules as it is made (a refused change raises at once with the reason), and produces the new schema
and the updates and requirements that commit it. Names follow PyIceberg::

    with UpdateSchema(metadata) as update:
        update.add_column("count", LongType())
        update.rename_column("data", "payload")
    updates, requirements = update.updates_and_requirements()
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from frazil import values
from frazil.arrow_schema import schema_from_arrow
from frazil.exceptions import FrazilError, ValidationError
from frazil.metadata import TableMetadata
from frazil.schema import Schema, validate_identifier_fields
from frazil.table.update import (
    AddSchemaUpdate,
    AssertCurrentSchemaId,
    PendingUpdate,
    SetCurrentSchemaUpdate,
    TableRequirement,
    TableUpdate,
)
from frazil.table.update.updates import LAST_ADDED, OnCommit
from frazil.types import (
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    GeographyType,
    GeometryType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    UnknownType,
    VariantType,
    as_type,
)

__all__ = ["UpdateSchema", "promotion_allowed"]

_ROOT = -1
_V3_TYPES = (
    TimestampNanoType,
    TimestamptzNanoType,
    UnknownType,
    VariantType,
    GeometryType,
    GeographyType,
)
_NULL_DEFAULT_ONLY = (UnknownType, VariantType, GeometryType, GeographyType)
# Transforms whose value is the same for a date and for the timestamp promoted from it.
_DATE_PROMOTION_SAFE = {"year", "month", "day", "void"}

Path = str | tuple[str, ...]


def promotion_allowed(source: IcebergType, target: IcebergType, format_version: int) -> bool:
    """The spec's valid primitive type promotions (spec "Schema Evolution")."""
    if source == target:
        return True
    if isinstance(source, IntegerType):
        return isinstance(target, LongType)
    if isinstance(source, FloatType):
        return isinstance(target, DoubleType)
    if isinstance(source, DecimalType):
        return (
            isinstance(target, DecimalType)
            and target.scale == source.scale
            and target.precision > source.precision
        )
    if format_version >= 3:
        if isinstance(source, UnknownType):
            return True
        if isinstance(source, DateType):
            return isinstance(target, (TimestampType, TimestampNanoType))
    return False


@dataclass
class _Move:
    field_id: int
    kind: str  # "first", "before", "after"
    other_id: int | None = None


class UpdateSchema(PendingUpdate):
    """Changes to the current schema of ``metadata``; see the module docstring."""

    def __init__(
        self,
        metadata: TableMetadata,
        allow_incompatible_changes: bool = False,
        case_sensitive: bool = True,
        on_commit: OnCommit | None = None,
    ) -> None:
        self._metadata = metadata
        self._schema = metadata.schema()
        self._format_version = metadata.format_version
        self._allow_incompatible = allow_incompatible_changes
        self._case_sensitive = case_sensitive
        self._on_commit = on_commit
        self._last_column_id = metadata.highest_assigned_id
        self._deletes: set[int] = set()
        self._updates: dict[int, NestedField] = {}
        self._adds: dict[int, list[NestedField]] = {}
        self._added_names: dict[str, int] = {}
        self._added_fields: dict[int, NestedField] = {}
        self._moves: dict[int, list[_Move]] = {}
        self._identifier_ids: list[int] = list(self._schema.identifier_field_ids)

    # ---- lookups

    def _name(self, path: Path) -> str:
        if isinstance(path, str):
            return path
        if isinstance(path, tuple) and all(isinstance(p, str) for p in path) and path:
            return ".".join(path)
        raise ValidationError(f"a column path must be a str or a tuple of str, got {path!r}")

    def _find(self, path: Path) -> NestedField:
        """A field of the current schema or one added in this change, by its full name."""
        name = self._name(path)
        key = name if self._case_sensitive else name.lower()
        added = {
            (n if self._case_sensitive else n.lower()): i for n, i in self._added_names.items()
        }
        if key in added:
            return self._added_fields[added[key]]
        try:
            return self._schema.find_field(name, self._case_sensitive)
        except FrazilError:
            raise ValidationError(f"cannot find column {name!r}") from None

    def _parent_id(self, field_id: int) -> int:
        if field_id in self._added_fields:
            for parent, fields in self._adds.items():
                if any(f.field_id == field_id for f in fields):
                    return parent
        schema_parent = self._schema.parent_id(field_id)
        return _ROOT if schema_parent is None else schema_parent

    def _struct_id_for(self, field: NestedField) -> int:
        """Where fields are added under ``field``: the struct itself, or a list's element struct
        or a map's value struct."""
        t = self._current_type(field)
        if isinstance(t, StructType):
            return field.field_id
        if isinstance(t, ListType) and isinstance(t.element_type, StructType):
            return t.element_id
        if isinstance(t, MapType) and isinstance(t.value_type, StructType):
            return t.value_id
        raise ValidationError(f"cannot add a column to {field.name!r}: it is not a struct")

    def _current_type(self, field: NestedField) -> IcebergType:
        return self._updates.get(field.field_id, field).field_type

    def _sibling_names(self, parent_id: int) -> dict[str, int]:
        """Names in a struct after the changes so far (deletes, renames, additions)."""
        if parent_id == _ROOT:
            fields: Sequence[NestedField] = self._schema.fields
        elif parent_id not in self._schema.field_ids:
            t = self._added_type(parent_id)
            fields = t.fields if isinstance(t, StructType) else ()
        else:
            t = self._schema.find_type(parent_id)
            fields = t.fields if isinstance(t, StructType) else ()
        out = {}
        for f in fields:
            if f.field_id in self._deletes:
                continue
            out[self._updates.get(f.field_id, f).name] = f.field_id
        for f in self._adds.get(parent_id, []):
            out[f.name] = f.field_id
        return out

    def _added_type(self, field_id: int) -> IcebergType | None:
        """The type of a field added in this change, or nested inside one."""
        stack: list[tuple[int, IcebergType]] = [
            (f.field_id, f.field_type) for f in self._added_fields.values()
        ]
        while stack:
            i, t = stack.pop()
            if i == field_id:
                return t
            if isinstance(t, StructType):
                stack.extend((f.field_id, f.field_type) for f in t.fields)
            elif isinstance(t, ListType):
                stack.append((t.element_id, t.element_type))
            elif isinstance(t, MapType):
                stack.extend(((t.key_id, t.key_type), (t.value_id, t.value_type)))
        return None

    def _next_id(self) -> int:
        self._last_column_id += 1
        return self._last_column_id

    # ---- changes

    def add_column(
        self,
        path: Path,
        field_type: IcebergType | str,
        doc: str | None = None,
        required: bool = False,
        default_value: Any = None,
    ) -> UpdateSchema:
        """Adds a column; ``path`` is a name, or a tuple of names for a nested column. A
        required column needs ``default_value`` (v3) unless incompatible changes are allowed."""
        if isinstance(path, str):
            if "." in path:
                raise ValidationError(
                    f"cannot add column with ambiguous name {path!r}; pass a tuple of names "
                    "for a nested column"
                )
            path = (path,)
        name = self._name(path)
        parts = path
        if not parts[-1]:
            raise ValidationError("a column name must not be empty")
        parent_id = _ROOT
        if len(parts) > 1:
            parent = self._find(parts[:-1])
            if parent.field_id in self._deletes:
                raise ValidationError(f"cannot add column {name!r}: its parent is deleted")
            parent_id = self._struct_id_for(parent)
        if parts[-1] in self._sibling_names(parent_id):
            raise ValidationError(f"cannot add column {name!r}: the name already exists")
        t = as_type(field_type)
        self._check_type_version(t, name)
        initial_default = write_default = None
        if default_value is not None:
            if self._format_version < 3:
                raise ValidationError(
                    f"cannot add column {name!r} with a default: defaults need format "
                    f"version 3, the table has {self._format_version}"
                )
            initial_default = write_default = self._default_json(default_value, t, name)
        if required and initial_default is None and not self._allow_incompatible:
            raise ValidationError(
                f"incompatible change: cannot add required column {name!r} without a default "
                "value (existing rows would have no value)"
            )
        new_id = self._next_id()
        field = NestedField(
            new_id, parts[-1], self._fresh_ids(t), required, doc, initial_default, write_default
        )
        self._adds.setdefault(parent_id, []).append(field)
        self._added_fields[new_id] = field
        self._added_names[name] = new_id
        return self

    def _check_type_version(self, t: IcebergType, name: str) -> None:
        if self._format_version >= 3:
            return
        stack = [t]
        while stack:
            x = stack.pop()
            if isinstance(x, _V3_TYPES):
                raise ValidationError(
                    f"column {name!r}: type {x} needs format version 3, the table has "
                    f"{self._format_version}"
                )
            if isinstance(x, StructType):
                stack.extend(f.field_type for f in x.fields)
            elif isinstance(x, ListType):
                stack.append(x.element_type)
            elif isinstance(x, MapType):
                stack.extend((x.key_type, x.value_type))

    def _default_json(self, value: Any, t: IcebergType, name: str) -> Any:
        if isinstance(t, _NULL_DEFAULT_ONLY):
            raise ValidationError(f"column {name!r}: a {t} column must default to null")
        if isinstance(t, StructType):
            # Spec: a struct default is null or an empty struct; sub-fields carry their own.
            if value not in ({}, ()):
                raise ValidationError(
                    f"column {name!r}: a struct default must be empty ({{}}); set defaults on "
                    "its fields"
                )
            return {}
        if not isinstance(t, PrimitiveType):
            raise ValidationError(f"column {name!r}: a {type(t).__name__} cannot have a default")
        try:
            return values.to_json(value, t)
        except FrazilError as e:
            raise ValidationError(f"column {name!r}: invalid default {value!r}: {e}") from None

    def _fresh_ids(self, t: IcebergType) -> IcebergType:
        """New ids for the nested fields of an added type (a struct's fields first, then their
        children, as the reference assigns them)."""
        if isinstance(t, StructType):
            ids = [self._next_id() for _ in t.fields]
            return StructType(
                *(
                    replace(f, field_id=i, field_type=self._fresh_ids(f.field_type))
                    for i, f in zip(ids, t.fields, strict=True)
                )
            )
        if isinstance(t, ListType):
            element_id = self._next_id()
            return ListType(element_id, self._fresh_ids(t.element_type), t.element_required)
        if isinstance(t, MapType):
            key_id, value_id = self._next_id(), self._next_id()
            return MapType(
                key_id,
                self._fresh_ids(t.key_type),
                value_id,
                self._fresh_ids(t.value_type),
                t.value_required,
            )
        return t

    def delete_column(self, path: Path) -> UpdateSchema:
        field = self._find(path)
        name = self._name(path)
        if field.field_id in self._added_fields:
            raise ValidationError(f"cannot delete column {name!r}: it is added in this change")
        if field.field_id in self._updates:
            raise ValidationError(f"cannot delete column {name!r}: it has updates in this change")
        if field.field_id in self._identifier_ids:
            raise ValidationError(
                f"cannot delete identifier field {name!r}; remove it from the identifier "
                "fields first"
            )
        if any(
            field.field_id in (mv.field_id, mv.other_id)
            for moves in self._moves.values()
            for mv in moves
        ):
            raise ValidationError(f"cannot delete column {name!r}: it is moved in this change")
        for spec_field in self._metadata.spec().fields:
            if str(spec_field.transform) != "void" and self._uses(spec_field.source_ids, field):
                raise ValidationError(
                    f"cannot delete column {name!r}: partition field {spec_field.name!r} of the "
                    "current partition spec uses it; remove the partition field first"
                )
        for sort_field in self._metadata.sort_order().fields:
            if self._uses(sort_field.source_ids, field):
                raise ValidationError(
                    f"cannot delete column {name!r}: the default sort order uses it"
                )
        self._deletes.add(field.field_id)
        return self

    def _uses(self, source_ids: Sequence[int], field: NestedField) -> bool:
        """Whether a source column is ``field`` or nested inside it."""
        for source_id in source_ids:
            i: int | None = source_id
            while i is not None:
                if i == field.field_id:
                    return True
                i = self._schema.parent_id(i)
        return False

    def rename_column(self, path: Path, new_name: str) -> UpdateSchema:
        field = self._find(path)
        name = self._name(path)
        if not isinstance(new_name, str) or not new_name:
            raise ValidationError(f"cannot rename {name!r}: the new name must be a non-empty str")
        if field.field_id in self._deletes:
            raise ValidationError(f"cannot rename {name!r}: it is deleted in this change")
        parent_type = self._parent_type(field.field_id)
        if isinstance(parent_type, (ListType, MapType)):
            raise ValidationError(
                f"cannot rename {name!r}: list elements and map keys and values have fixed names"
            )
        siblings = self._sibling_names(self._parent_id(field.field_id))
        if new_name in siblings and siblings[new_name] != field.field_id:
            raise ValidationError(f"cannot rename {name!r} to {new_name!r}: the name exists")
        self._change(field, name=new_name)
        return self

    def _change(self, field: NestedField, **changes: Any) -> None:
        if field.field_id in self._added_fields:
            updated = replace(self._added_fields[field.field_id], **changes)
            self._added_fields[field.field_id] = updated
            parent = self._parent_id(field.field_id)
            self._adds[parent] = [
                updated if f.field_id == field.field_id else f for f in self._adds[parent]
            ]
            if "name" in changes:
                old = next(n for n, i in self._added_names.items() if i == field.field_id)
                del self._added_names[old]
                prefix = old.rsplit(".", 1)[0] + "." if "." in old else ""
                self._added_names[prefix + changes["name"]] = field.field_id
            return
        self._updates[field.field_id] = replace(self._updates.get(field.field_id, field), **changes)

    def update_column(
        self,
        path: Path,
        field_type: IcebergType | str | None = None,
        required: bool | None = None,
        doc: str | None = None,
    ) -> UpdateSchema:
        """Promotes a primitive type, changes nullability or the doc of a column."""
        field = self._find(path)
        name = self._name(path)
        if field.field_id in self._deletes:
            raise ValidationError(f"cannot update {name!r}: it is deleted in this change")
        if field_type is not None:
            target = as_type(field_type)
            current = self._current_type(field)
            if not isinstance(current, PrimitiveType) or not isinstance(target, PrimitiveType):
                raise ValidationError(
                    f"cannot change the type of {name!r} from {_show(current)} to "
                    f"{_show(target)}: only primitive types can be promoted"
                )
            if self._is_map_key(field):
                raise ValidationError(f"cannot update map key {name!r}")
            if not promotion_allowed(current, target, self._format_version):
                raise ValidationError(
                    f"cannot change column {name!r} from {current} to {target}: not a valid "
                    f"type promotion in format version {self._format_version}"
                )
            if isinstance(current, DateType) and current != target:
                self._check_date_promotion(field, name)
            if current != target:
                self._change(field, field_type=target)
        if required is not None:
            current_required = self._updates.get(field.field_id, field).required
            if required and not current_required and not self._allow_incompatible:
                raise ValidationError(
                    f"incompatible change: cannot make optional column {name!r} required "
                    "(existing rows may hold nulls)"
                )
            if required != current_required:
                self._change(field, required=required)
        if doc is not None:
            self._change(field, doc=doc)
        return self

    def _parent_type(self, field_id: int) -> IcebergType | None:
        if field_id not in self._schema.field_ids:
            return None
        parent = self._schema.parent_id(field_id)
        return None if parent is None else self._schema.find_type(parent)

    def _is_map_key(self, field: NestedField) -> bool:
        t = self._parent_type(field.field_id)
        return isinstance(t, MapType) and t.key_id == field.field_id

    def _check_date_promotion(self, field: NestedField, name: str) -> None:
        # Spec: no promotion of a partition source when the transform's value would change.
        for spec in self._metadata.partition_specs:
            for pf in spec.fields:
                if (
                    field.field_id in pf.source_ids
                    and str(pf.transform) not in _DATE_PROMOTION_SAFE
                ):
                    raise ValidationError(
                        f"cannot promote {name!r} from date to timestamp: partition field "
                        f"{pf.name!r} ({pf.transform}) would produce different values"
                    )

    def make_column_optional(self, path: Path) -> UpdateSchema:
        return self.update_column(path, required=False)

    def update_column_default(self, path: Path, default_value: Any) -> UpdateSchema:
        """Sets the ``write-default`` (v3); the ``initial-default`` never changes."""
        field = self._find(path)
        name = self._name(path)
        if self._format_version < 3:
            raise ValidationError(
                f"cannot set a default on {name!r}: defaults need format version 3, the table "
                f"has {self._format_version}"
            )
        t = self._current_type(field)
        if default_value is None and self._updates.get(field.field_id, field).required:
            raise ValidationError(
                f"cannot remove the write default of required column {name!r}: writers that "
                "omit it would have no value"
            )
        json_default = None if default_value is None else self._default_json(default_value, t, name)
        self._change(field, write_default=json_default)
        return self

    def set_identifier_fields(self, *paths: Path) -> UpdateSchema:
        ids = []
        for path in paths:
            field = self._find(path)
            if field.field_id in self._deletes:
                raise ValidationError(
                    f"cannot use deleted column {self._name(path)!r} as an identifier field"
                )
            ids.append(field.field_id)
        self._identifier_ids = ids
        return self

    def move_first(self, path: Path) -> UpdateSchema:
        field = self._find(path)
        self._moves.setdefault(self._parent_id(field.field_id), []).append(
            _Move(field.field_id, "first")
        )
        return self

    def move_before(self, path: Path, before_path: Path) -> UpdateSchema:
        return self._move_relative(path, before_path, "before")

    def move_after(self, path: Path, after_path: Path) -> UpdateSchema:
        return self._move_relative(path, after_path, "after")

    def _move_relative(self, path: Path, other_path: Path, kind: str) -> UpdateSchema:
        field = self._find(path)
        other = self._find(other_path)
        name = self._name(path)
        if field.field_id == other.field_id:
            raise ValidationError(f"cannot move {name!r} {kind} itself")
        parent = self._parent_id(field.field_id)
        if parent != self._parent_id(other.field_id):
            raise ValidationError(
                f"cannot move {name!r} {kind} {self._name(other_path)!r}: they are in different "
                "structs"
            )
        for f in (field, other):
            if f.field_id in self._deletes:
                raise ValidationError(f"cannot move around deleted column {f.name!r}")
        self._moves.setdefault(parent, []).append(_Move(field.field_id, kind, other.field_id))
        return self

    def union_by_name(self, new_schema: Schema | pa.Schema) -> UpdateSchema:
        """Merges ``new_schema`` (an Iceberg schema or, as PyIceberg allows, an Arrow schema) in
        by column name: missing columns are added (optional unless incompatible changes are
        allowed), types are widened where the spec allows it and kept where the current type is
        already wider, required columns become optional when the new schema has them optional,
        docs are taken over. Nothing is deleted."""
        if not isinstance(new_schema, Schema):
            if not isinstance(new_schema, pa.Schema):
                raise ValidationError(
                    f"union_by_name takes a Schema or a pyarrow.Schema, got {type(new_schema)}"
                )
            # Matched by name only, so the ids the conversion gives do not matter.
            new_schema = schema_from_arrow(new_schema)
        self._union_struct(new_schema.as_struct(), ())
        return self

    def _union_struct(self, struct: StructType, prefix: tuple[str, ...]) -> None:
        for f in struct.fields:
            path = (*prefix, f.name)
            try:
                existing = self._find(path)
            except ValidationError:
                # add_column gives the new type fresh ids of this table
                self.add_column(path, f.field_type, f.doc, f.required and self._allow_incompatible)
                continue
            self._union_field(existing, f, path)

    def _union_field(
        self,
        existing: NestedField,
        new: NestedField,
        path: tuple[str, ...],
        in_collection: bool = False,
    ) -> None:
        current = self._current_type(existing)
        target = new.field_type
        if isinstance(current, PrimitiveType) and isinstance(target, PrimitiveType):
            if current != target and not promotion_allowed(target, current, self._format_version):
                self.update_column(path, field_type=target)
        elif isinstance(current, StructType) and isinstance(target, StructType):
            self._union_struct(target, path)
        elif isinstance(current, ListType) and isinstance(target, ListType):
            element = NestedField(0, "element", target.element_type, target.element_required)
            self._union_field(self._find((*path, "element")), element, (*path, "element"), True)
        elif isinstance(current, MapType) and isinstance(target, MapType):
            value = NestedField(0, "value", target.value_type, target.value_required)
            self._union_field(self._find((*path, "value")), value, (*path, "value"), True)
        else:
            raise ValidationError(
                f"cannot merge column {'.'.join(path)!r}: {_show(current)} and {_show(target)} "
                "are different kinds of type"
            )
        if not new.required and self._updates.get(existing.field_id, existing).required:
            self.update_column(path, required=False)
        if not in_collection and new.doc is not None and new.doc != existing.doc:
            self.update_column(path, doc=new.doc)

    # ---- results

    def apply(self) -> Schema:
        """The new schema (with the id it will get when committed)."""
        struct = self._apply_struct(self._schema.as_struct(), _ROOT)
        candidate = Schema(*struct.fields, identifier_field_ids=self._identifier_ids)
        try:
            validate_identifier_fields(candidate)
        except FrazilError as e:
            raise ValidationError(str(e)) from None
        existing = next((s for s in self._metadata.schemas if s.same_columns(candidate)), None)
        schema_id = (
            existing.schema_id
            if existing is not None
            else max(s.schema_id for s in self._metadata.schemas) + 1
        )
        return Schema(
            *struct.fields, schema_id=schema_id, identifier_field_ids=self._identifier_ids
        )

    def _apply_struct(self, struct: StructType, parent_id: int) -> StructType:
        fields = []
        for f in struct.fields:
            if f.field_id in self._deletes:
                continue
            updated = self._updates.get(f.field_id, f)
            fields.append(
                replace(updated, field_type=self._apply_type(updated.field_type, f.field_id))
            )
        for added in self._adds.get(parent_id, []):
            fields.append(
                replace(added, field_type=self._apply_type(added.field_type, added.field_id))
            )
        for move in self._moves.get(parent_id, []):
            fields = _apply_move(fields, move)
        return StructType(*fields)

    def _apply_type(self, t: IcebergType, field_id: int) -> IcebergType:
        if isinstance(t, StructType):
            return self._apply_struct(t, field_id)
        if isinstance(t, ListType):
            element = self._updates.get(t.element_id)
            element_type = element.field_type if element else t.element_type
            required = element.required if element else t.element_required
            return ListType(t.element_id, self._apply_type(element_type, t.element_id), required)
        if isinstance(t, MapType):
            value = self._updates.get(t.value_id)
            value_type = value.field_type if value else t.value_type
            required = value.required if value else t.value_required
            return MapType(
                t.key_id,
                self._apply_type(t.key_type, t.key_id),
                t.value_id,
                self._apply_type(value_type, t.value_id),
                required,
            )
        return t

    def updates_and_requirements(self) -> tuple[list[TableUpdate], list[TableRequirement]]:
        """``add-schema`` + ``set-current-schema`` (-1: the added one), guarded by
        ``assert-current-schema-id``; nothing when the schema does not change."""
        new = self.apply()
        if new.same_columns(self._schema):
            return [], []
        return (
            [
                AddSchemaUpdate(new, max(self._last_column_id, self._metadata.last_column_id)),
                SetCurrentSchemaUpdate(LAST_ADDED),
            ],
            [AssertCurrentSchemaId(self._schema.schema_id)],
        )


def _apply_move(fields: list[NestedField], move: _Move) -> list[NestedField]:
    moving = next((f for f in fields if f.field_id == move.field_id), None)
    if moving is None:
        return fields
    rest = [f for f in fields if f.field_id != move.field_id]
    if move.kind == "first":
        return [moving, *rest]
    index = next(i for i, f in enumerate(rest) if f.field_id == move.other_id)
    if move.kind == "after":
        index += 1
    return [*rest[:index], moving, *rest[index:]]


def _show(t: IcebergType) -> str:
    return str(t) if isinstance(t, PrimitiveType) else type(t).__name__.removesuffix("Type").lower()
