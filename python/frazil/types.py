"""Iceberg data types (spec "Schemas and Data Types"; JSON forms of Appendix C).

Names follow PyIceberg (``LongType``, ``DecimalType(9, 2)``, ``NestedField``...). Primitive type
strings are parsed by the native core, so Python and Rust agree on every spelling.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from frazil import _native
from frazil.exceptions import InvalidArgumentError, ParseError

__all__ = [
    "BinaryType",
    "BooleanType",
    "DateType",
    "DecimalType",
    "DoubleType",
    "FixedType",
    "FloatType",
    "GeographyType",
    "GeometryType",
    "IcebergType",
    "IntegerType",
    "ListType",
    "LongType",
    "MapType",
    "NestedField",
    "PrimitiveType",
    "StringType",
    "StructType",
    "TimeType",
    "TimestampNanoType",
    "TimestampType",
    "TimestamptzNanoType",
    "TimestamptzType",
    "UUIDType",
    "UnknownType",
    "VariantType",
    "as_type",
    "parse_type",
    "type_from_json",
]


class IcebergType:
    """Base of all Iceberg types."""

    @property
    def is_primitive(self) -> bool:
        return isinstance(self, PrimitiveType)

    def to_json(self) -> Any:
        """The Appendix C JSON form: a string for a primitive, an object otherwise."""
        raise NotImplementedError

    def json_text(self) -> str:
        return json.dumps(self.to_json(), separators=(",", ":"))


@dataclass(frozen=True)
class PrimitiveType(IcebergType):
    spec_name: ClassVar[str] = ""

    def __str__(self) -> str:
        return self.spec_name

    def to_json(self) -> str:
        return str(self)


@dataclass(frozen=True)
class UnknownType(PrimitiveType):
    spec_name = "unknown"


@dataclass(frozen=True)
class BooleanType(PrimitiveType):
    spec_name = "boolean"


@dataclass(frozen=True)
class IntegerType(PrimitiveType):
    spec_name = "int"


@dataclass(frozen=True)
class LongType(PrimitiveType):
    spec_name = "long"


@dataclass(frozen=True)
class FloatType(PrimitiveType):
    spec_name = "float"


@dataclass(frozen=True)
class DoubleType(PrimitiveType):
    spec_name = "double"


@dataclass(frozen=True)
class DecimalType(PrimitiveType):
    precision: int
    scale: int

    def __str__(self) -> str:
        return f"decimal({self.precision},{self.scale})"

    def to_json(self) -> str:
        # The spec's grammar allows either; the Java reference writes a space after the comma.
        return f"decimal({self.precision}, {self.scale})"


@dataclass(frozen=True)
class DateType(PrimitiveType):
    spec_name = "date"


@dataclass(frozen=True)
class TimeType(PrimitiveType):
    spec_name = "time"


@dataclass(frozen=True)
class TimestampType(PrimitiveType):
    spec_name = "timestamp"


@dataclass(frozen=True)
class TimestamptzType(PrimitiveType):
    spec_name = "timestamptz"


@dataclass(frozen=True)
class TimestampNanoType(PrimitiveType):
    spec_name = "timestamp_ns"


@dataclass(frozen=True)
class TimestamptzNanoType(PrimitiveType):
    spec_name = "timestamptz_ns"


@dataclass(frozen=True)
class StringType(PrimitiveType):
    spec_name = "string"


@dataclass(frozen=True)
class UUIDType(PrimitiveType):
    spec_name = "uuid"


@dataclass(frozen=True)
class FixedType(PrimitiveType):
    length: int

    def __str__(self) -> str:
        return f"fixed[{self.length}]"


@dataclass(frozen=True)
class BinaryType(PrimitiveType):
    spec_name = "binary"


@dataclass(frozen=True)
class VariantType(PrimitiveType):
    """v3 semi-structured type; the spec says it is neither primitive nor nested, but its JSON
    form is a plain string, so it sits with the primitives here."""

    spec_name = "variant"


DEFAULT_CRS = "OGC:CRS84"


@dataclass(frozen=True)
class GeometryType(PrimitiveType):
    """v3 ``geometry(C)``; ``crs=None`` is the spec's default ``OGC:CRS84``."""

    crs: str | None = None

    def __str__(self) -> str:
        return "geometry" if self.crs is None else f"geometry({self.crs})"


@dataclass(frozen=True)
class GeographyType(PrimitiveType):
    """v3 ``geography(C, A)``; ``None`` means the defaults ``OGC:CRS84`` / ``spherical``."""

    crs: str | None = None
    algorithm: str | None = None

    def __str__(self) -> str:
        if self.algorithm is not None:
            return f"geography({self.crs or DEFAULT_CRS}, {self.algorithm})"
        return "geography" if self.crs is None else f"geography({self.crs})"


@dataclass(frozen=True)
class NestedField:
    field_id: int
    name: str
    field_type: IcebergType
    required: bool = False
    doc: str | None = None
    # Defaults in their JSON single-value form (Appendix D).
    initial_default: Any = None
    write_default: Any = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.field_id,
            "name": self.name,
            "required": self.required,
            "type": self.field_type.to_json(),
        }
        if self.doc is not None:
            out["doc"] = self.doc
        if self.initial_default is not None:
            out["initial-default"] = self.initial_default
        if self.write_default is not None:
            out["write-default"] = self.write_default
        return out


@dataclass(frozen=True)
class StructType(IcebergType):
    fields: tuple[NestedField, ...] = field(default_factory=tuple)

    def __init__(self, *fields: NestedField) -> None:
        object.__setattr__(self, "fields", tuple(fields))

    def to_json(self) -> dict[str, Any]:
        return {"type": "struct", "fields": [f.to_json() for f in self.fields]}


@dataclass(frozen=True)
class ListType(IcebergType):
    element_id: int
    element_type: IcebergType
    element_required: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "list",
            "element-id": self.element_id,
            "element": self.element_type.to_json(),
            "element-required": self.element_required,
        }


@dataclass(frozen=True)
class MapType(IcebergType):
    key_id: int
    key_type: IcebergType
    value_id: int
    value_type: IcebergType
    value_required: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "map",
            "key-id": self.key_id,
            "key": self.key_type.to_json(),
            "value-id": self.value_id,
            "value": self.value_type.to_json(),
            "value-required": self.value_required,
        }


_SIMPLE: dict[str, PrimitiveType] = {
    cls.spec_name: cls()
    for cls in (
        UnknownType,
        BooleanType,
        IntegerType,
        LongType,
        FloatType,
        DoubleType,
        DateType,
        TimeType,
        TimestampType,
        TimestamptzType,
        TimestampNanoType,
        TimestamptzNanoType,
        StringType,
        UUIDType,
        BinaryType,
        VariantType,
    )
}
_DECIMAL = re.compile(r"decimal\((\d+),(-?\d+)\)")
_FIXED = re.compile(r"fixed\[(\d+)\]")
_GEOMETRY = re.compile(r"geometry(?:\((.+)\))?")
_GEOGRAPHY = re.compile(r"geography(?:\((.+?)(?:, (\w+))?\))?")


def parse_type(text: str) -> PrimitiveType:
    """Parses a primitive type string of Appendix C (``"decimal(9, 2)"``, ``"fixed[16]"``)."""
    if not isinstance(text, str):
        raise InvalidArgumentError(f"a type string must be a str, got {type(text).__name__}")
    canonical = _native.type_parse_primitive(text)
    if canonical in _SIMPLE:
        return _SIMPLE[canonical]
    if m := _DECIMAL.fullmatch(canonical):
        return DecimalType(int(m.group(1)), int(m.group(2)))
    if m := _FIXED.fullmatch(canonical):
        return FixedType(int(m.group(1)))
    # The native canonical form is "geography(C, A)" with exactly ", " before the algorithm.
    if m := _GEOMETRY.fullmatch(canonical):
        return GeometryType(m.group(1))
    if m := _GEOGRAPHY.fullmatch(canonical):
        return GeographyType(m.group(1), m.group(2))
    raise ParseError(f"unknown type string {text!r}")  # pragma: no cover - native parsed it


def type_from_json(obj: Any) -> IcebergType:
    """Builds a type from its Appendix C JSON form (already parsed from text)."""
    if isinstance(obj, str):
        return parse_type(obj)
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise ParseError(f"invalid type JSON: {obj!r}")
    try:
        kind = obj["type"]
        if kind == "struct":
            return StructType(
                *(
                    NestedField(
                        field_id=f["id"],
                        name=f["name"],
                        field_type=type_from_json(f["type"]),
                        required=f["required"],
                        doc=f.get("doc"),
                        initial_default=f.get("initial-default"),
                        write_default=f.get("write-default"),
                    )
                    for f in obj["fields"]
                )
            )
        if kind == "list":
            return ListType(
                obj["element-id"], type_from_json(obj["element"]), obj["element-required"]
            )
        if kind == "map":
            return MapType(
                obj["key-id"],
                type_from_json(obj["key"]),
                obj["value-id"],
                type_from_json(obj["value"]),
                obj["value-required"],
            )
    except (KeyError, TypeError) as e:
        raise ParseError(f"invalid {obj.get('type')} type JSON {obj!r}: missing {e}") from None
    raise ParseError(f"unknown nested type {obj['type']!r}")


def as_type(t: IcebergType | str) -> IcebergType:
    """Accepts a type object or a primitive type string."""
    if isinstance(t, IcebergType):
        return t
    if isinstance(t, str):
        return parse_type(t)
    raise InvalidArgumentError(f"expected an Iceberg type or type string, got {t!r}")
