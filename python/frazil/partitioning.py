"""Partition specs (spec "Partitioning"; JSON in Appendix C).

Reading tolerates transforms this library does not know (the spec requires readers to ignore such
fields when filtering); they parse to :class:`UnknownTransform`, and writers refuse them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from frazil import _native
from frazil._json import Fields, check_int, check_unique
from frazil.exceptions import FrazilError, InvalidArgumentError, ParseError, UnsupportedError
from frazil.schema import Schema
from frazil.transforms import Transform, parse, typed
from frazil.types import (
    IcebergType,
    ListType,
    MapType,
    NestedField,
    StringType,
    StructType,
    UnknownType,
)

__all__ = [
    "PARTITION_FIELD_ID_START",
    "UNPARTITIONED_PARTITION_SPEC",
    "AnyTransform",
    "PartitionField",
    "PartitionSpec",
    "UnknownTransform",
    "parse_transform",
    "validate_spec",
]

# v1 ids were never written; the reference assigned them from 1000 in each spec.
PARTITION_FIELD_ID_START = 1000
INITIAL_SPEC_ID = 0


class UnknownTransform:
    """A transform named in metadata that this library does not implement; kept by name."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __str__(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"UnknownTransform({self._name!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnknownTransform) and other._name == self._name

    def __hash__(self) -> int:
        return hash(("unknown", self._name))

    @property
    def preserves_order(self) -> bool:
        return False

    def can_transform(self, source_type: IcebergType | str) -> bool:
        return False

    def result_type(self, source_type: IcebergType | str) -> IcebergType:
        # What the reference reports, so a partition type can still be built for reading.
        return StringType()


AnyTransform = Transform | UnknownTransform


def parse_transform(text: Any, at: str = "transform") -> AnyTransform:
    """Parses a transform as a metadata reader must: malformed parameters are errors, unknown
    names are kept as :class:`UnknownTransform`."""
    if isinstance(text, (Transform, UnknownTransform)):
        return text
    if not isinstance(text, str):
        raise ParseError(f"{at}: expected a transform string, got {text!r}")
    try:
        parsed = _native.transform_parse_lenient(text)
    except FrazilError as e:
        raise ParseError(f"{at}: {e}") from None
    if parsed.known:
        return typed(Transform(parsed.transform))
    return UnknownTransform(parsed.transform)


def user_transform(transform: Any, at: str) -> AnyTransform:
    """A transform a caller gives when building a field: a transform object, or a string parsed
    strictly now (``"bucket[16]"``), so a typo fails here and not at first use."""
    if isinstance(transform, (Transform, UnknownTransform)):
        return transform
    if isinstance(transform, str):
        try:
            return parse(transform)
        except FrazilError as e:
            raise InvalidArgumentError(f"{at}: invalid transform {transform!r}: {e}") from None
    raise InvalidArgumentError(
        f"{at}: expected a transform (e.g. BucketTransform(16) or 'bucket[16]'), got {transform!r}"
    )


def can_transform(transform: AnyTransform, source_type: IcebergType) -> bool:
    """The spec's transform table (checked natively, v3 types included)."""
    return transform.can_transform(source_type)


def is_void(transform: AnyTransform) -> bool:
    return str(transform) == "void"


@dataclass(frozen=True)
class PartitionField:
    """One field of a spec. ``source_ids`` has more than one id only for a multi-argument
    transform (v3); otherwise it is ``(source_id,)``."""

    source_id: int
    field_id: int
    transform: AnyTransform
    name: str
    source_ids: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not self.source_ids:
            object.__setattr__(self, "source_ids", (self.source_id,))
        object.__setattr__(
            self, "transform", user_transform(self.transform, f"partition field {self.name!r}")
        )

    def equivalent(self, other: PartitionField) -> bool:
        """Same source columns, transform and name (spec "Partitioning": equivalent fields)."""
        return (
            self.source_ids == other.source_ids
            and self.transform == other.transform
            and self.name == other.name
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "transform": str(self.transform)}
        # Single-argument transforms write only source-id, multi-argument ones only source-ids.
        if len(self.source_ids) > 1:
            out["source-ids"] = list(self.source_ids)
        else:
            out["source-id"] = self.source_id
        out["field-id"] = self.field_id
        return out

    @classmethod
    def from_json(cls, obj: Any, path: str, default_field_id: int | None) -> PartitionField:
        f = Fields(obj, path)
        source_ids = _source_ids(f)
        if default_field_id is not None and not f.has("field-id"):
            field_id = default_field_id
        else:
            field_id = f.int32("field-id")
        name = f.str("name")
        transform = parse_transform(f.raw("transform"), f.at("transform"))
        return cls(source_ids[0], field_id, transform, name, tuple(source_ids))


def _source_ids(f: Fields) -> list[int]:
    """``source-id`` and/or v3 ``source-ids``; at least one must be present."""
    ids = f.opt_int32_list("source-ids")
    single = f.opt_int32("source-id")
    if ids is not None:
        if not ids:
            raise ParseError(f"{f.at('source-ids')}: must not be empty")
        # Both may be present; they must then agree.
        if single is not None and single != ids[0]:
            raise ParseError(f"{f.path}: source-id {single} disagrees with source-ids {ids}")
        return ids
    if single is None:
        raise ParseError(f"{f.at('source-id')}: required field is missing")
    return [single]


class PartitionSpec:
    """A partition spec: ``spec_id`` and its fields, in order."""

    def __init__(self, *fields: PartitionField, spec_id: int = INITIAL_SPEC_ID) -> None:
        self.fields: tuple[PartitionField, ...] = tuple(fields)
        self.spec_id: int = spec_id

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, PartitionSpec)
            and self.spec_id == other.spec_id
            and self.fields == other.fields
        )

    def __hash__(self) -> int:
        return hash((self.spec_id, self.fields))

    def __repr__(self) -> str:
        return f"PartitionSpec({', '.join(map(repr, self.fields))}, spec_id={self.spec_id})"

    def __iter__(self) -> Iterator[PartitionField]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def is_unpartitioned(self) -> bool:
        return all(is_void(f.transform) for f in self.fields)

    @property
    def last_assigned_field_id(self) -> int:
        return max((f.field_id for f in self.fields), default=PARTITION_FIELD_ID_START - 1)

    def compatible_with(self, other: PartitionSpec) -> bool:
        """Equivalent fields in the same order (the spec's test for reusing an existing spec)."""
        return len(self.fields) == len(other.fields) and all(
            a.equivalent(b) for a, b in zip(self.fields, other.fields, strict=True)
        )

    def fields_by_source_id(self, source_id: int) -> list[PartitionField]:
        return [f for f in self.fields if source_id in f.source_ids]

    def partition_type(self, schema: Schema) -> StructType:
        """The struct of partition values (all optional), named and numbered by the spec; a
        field whose source column is not in ``schema`` has type ``unknown``."""
        out = []
        for f in self.fields:
            if f.source_id in schema.field_ids:
                result = f.transform.result_type(schema.find_type(f.source_id))
            else:
                # An old spec whose source column was dropped since: its values can only be
                # null to a reader of this schema.
                result = UnknownType()
            out.append(NestedField(f.field_id, f.name, result, False))
        return StructType(*out)

    def to_json(self) -> dict[str, Any]:
        return {"spec-id": self.spec_id, "fields": self.fields_to_json()}

    def fields_to_json(self) -> list[dict[str, Any]]:
        """The bare field list, as v1's deprecated ``partition-spec`` stores it."""
        return [f.to_json() for f in self.fields]

    @classmethod
    def from_json(cls, obj: Any, path: str = "partition-spec", v1: bool = False) -> PartitionSpec:
        f = Fields(obj, path)
        spec_id = f.int32("spec-id")
        return cls(*fields_from_json(f.list("fields"), f.at("fields"), v1), spec_id=spec_id)


def fields_from_json(items: list[Any], path: str, v1: bool) -> list[PartitionField]:
    fields = [
        PartitionField.from_json(item, f"{path}[{i}]", PARTITION_FIELD_ID_START + i if v1 else None)
        for i, item in enumerate(items)
    ]
    check_unique([f.field_id for f in fields], path, "partition field id")
    names = [f.name for f in fields]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise ParseError(f"{path}: duplicate partition field name {dup!r}")
    return fields


UNPARTITIONED_PARTITION_SPEC = PartitionSpec(spec_id=INITIAL_SPEC_ID)


def validate_spec(spec: PartitionSpec, schema: Schema) -> None:
    """Checks a spec a writer is about to add against the schema it applies to: known
    transforms only, source columns exist, are primitives outside lists and maps, and the
    transform accepts their type; names are unique and do not shadow other columns."""
    names: set[str] = set()
    for f in spec.fields:
        if isinstance(f.transform, UnknownTransform):
            raise UnsupportedError(
                f"partition field {f.name!r} uses unknown transform {f.transform}; "
                "writers must not add it"
            )
        if f.name in names:
            raise InvalidArgumentError(f"duplicate partition field name {f.name!r}")
        names.add(f.name)
        for source_id in f.source_ids:
            check_int(source_id, "source-id", 0, 2**31 - 1, "a field id")
            if source_id not in schema.field_ids:
                raise InvalidArgumentError(
                    f"partition field {f.name!r}: source column id {source_id} is not in the schema"
                )
            source = schema.find_field(source_id)
            _check_not_in_collection(schema, source_id, f.name)
            if not source.field_type.is_primitive:
                raise InvalidArgumentError(
                    f"partition field {f.name!r}: source column {source.name!r} is a "
                    f"{_kind(source.field_type)}, not a primitive"
                )
            if not can_transform(f.transform, source.field_type):
                raise InvalidArgumentError(
                    f"partition field {f.name!r}: transform {f.transform} cannot be applied to "
                    f"{source.field_type} column {source.name!r}"
                )
        # A partition name may equal a column name only for an identity of that very column,
        # else the two could not be told apart in filters.
        if f.name in schema.column_names():
            column = schema.find_field(f.name)
            if not (str(f.transform) in ("identity", "void") and column.field_id == f.source_id):
                raise InvalidArgumentError(
                    f"partition field name {f.name!r} conflicts with a schema column"
                )


def _check_not_in_collection(schema: Schema, field_id: int, name: str) -> None:
    parent = schema.parent_id(field_id)
    while parent is not None:
        if isinstance(schema.find_type(parent), (ListType, MapType)):
            raise InvalidArgumentError(
                f"partition field {name!r}: its source column is nested in a list or map"
            )
        parent = schema.parent_id(parent)


def _kind(t: IcebergType) -> str:
    return type(t).__name__.removesuffix("Type").lower()
