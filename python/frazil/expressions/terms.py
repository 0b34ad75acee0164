"""Terms of expressions: a field by name (:class:`Reference`) or by id (:class:`BoundReference`),
and partition transforms of one (``bucket(16, id)``, ``day(ts)``).

Names follow PyIceberg's ``pyiceberg.expressions``; ``str`` is the row-filter syntax of
:mod:`frazil.expressions.parser`.
"""

from __future__ import annotations

import re
from typing import Any

from frazil.exceptions import InvalidArgumentError
from frazil.transforms import Transform
from frazil.types import IcebergType, NestedField

__all__ = [
    "BoundReference",
    "BoundTerm",
    "BoundTransform",
    "Reference",
    "Term",
    "UnboundTerm",
    "UnboundTransform",
]


class _Immutable:
    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _set(self, **fields: Any) -> None:
        for k, v in fields.items():
            object.__setattr__(self, k, v)

    def __setstate__(self, state: Any) -> None:  # unpickling slotted objects
        slots = state[1] if isinstance(state, tuple) else state
        self._set(**(slots or {}))


# ---------------------------------------------------------------------------------------------
# terms

_PLAIN_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_KEYWORDS = {"and", "or", "not", "is", "in", "null", "nan", "like", "between", "true", "false"}


def _quote_name(name: str) -> str:
    """A dotted field name in the row-filter syntax, each part quoted only when it must be."""
    parts = []
    for part in name.split("."):
        if _PLAIN_IDENT.fullmatch(part) and part.lower() not in _KEYWORDS:
            parts.append(part)
        else:
            parts.append("`" + part.replace("`", "``") + "`")
    return ".".join(parts)


class Term(_Immutable):
    """A value expression: a field reference or a transform of one."""

    __slots__ = ()


class UnboundTerm(Term):
    __slots__ = ()


class BoundTerm(Term):
    __slots__ = ()

    @property
    def type(self) -> IcebergType:
        raise NotImplementedError

    @property
    def ref(self) -> BoundReference:
        raise NotImplementedError


class Reference(UnboundTerm):
    """A field by name (``"a.b"`` for a nested field), resolved when bound to a schema."""

    __slots__ = ("name",)
    name: str

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise InvalidArgumentError(f"a reference needs a non-empty field name, got {name!r}")
        self._set(name=name)

    @property
    def ref(self) -> Reference:
        return self

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Reference) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("ref", self.name))

    def __repr__(self) -> str:
        return f"Reference(name={self.name!r})"

    def __str__(self) -> str:
        return _quote_name(self.name)


class BoundReference(BoundTerm):
    """A field of a schema, by id; ``name`` is its full name in the schema it was bound to."""

    __slots__ = ("field", "name")
    field: NestedField
    name: str

    def __init__(self, field: NestedField, name: str | None = None) -> None:
        if not isinstance(field, NestedField):
            raise InvalidArgumentError(f"a bound reference needs a NestedField, got {field!r}")
        self._set(field=field, name=name if name is not None else field.name)

    @property
    def field_id(self) -> int:
        return self.field.field_id

    @property
    def type(self) -> IcebergType:
        return self.field.field_type

    @property
    def ref(self) -> BoundReference:
        return self

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, BoundReference)
            and other.field.field_id == self.field.field_id
            and other.field.field_type == self.field.field_type
        )

    def __hash__(self) -> int:
        return hash(("bound-ref", self.field.field_id))

    def __repr__(self) -> str:
        return f"BoundReference(field={self.field!r}, name={self.name!r})"

    def __str__(self) -> str:
        return _quote_name(self.name)


def _transform_of(transform: Transform | str) -> Transform:
    if isinstance(transform, Transform):
        return transform
    if isinstance(transform, str):
        return Transform(transform)
    raise InvalidArgumentError(f"expected a Transform or transform string, got {transform!r}")


def _transform_call(transform: Transform, arg: str) -> str:
    """``bucket(16, id)`` / ``day(ts)``: the function-call spelling of the expressions spec."""
    spec = str(transform)
    if "[" in spec:
        name, param = spec[:-1].split("[")
        return f"{name}({param}, {arg})"
    return f"{spec}({arg})"


class UnboundTransform(UnboundTerm):
    """A partition transform applied to a named field, e.g. ``bucket(16, id)``."""

    __slots__ = ("ref", "transform")
    transform: Transform
    ref: Reference

    def __init__(self, transform: Transform | str, ref: Reference | str) -> None:
        t = _transform_of(transform)
        if str(t) == "void":
            raise InvalidArgumentError("void is not a function of the expressions spec")
        self._set(transform=t, ref=Reference(ref) if isinstance(ref, str) else ref)
        if not isinstance(self.ref, Reference):
            raise InvalidArgumentError(f"a transform term applies to a Reference, got {ref!r}")

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, UnboundTransform)
            and other.transform == self.transform
            and other.ref == self.ref
        )

    def __hash__(self) -> int:
        return hash(("transform", str(self.transform), self.ref))

    def __repr__(self) -> str:
        return f"UnboundTransform(transform={str(self.transform)!r}, ref={self.ref!r})"

    def __str__(self) -> str:
        return _transform_call(self.transform, str(self.ref))


class BoundTransform(BoundTerm):
    __slots__ = ("_type", "ref", "transform")
    transform: Transform
    ref: BoundReference
    _type: IcebergType

    def __init__(self, transform: Transform | str, ref: BoundReference) -> None:
        t = _transform_of(transform)
        if not isinstance(ref, BoundReference):
            raise InvalidArgumentError(f"a bound transform applies to a BoundReference: {ref!r}")
        if not t.can_transform(ref.type):
            raise InvalidArgumentError(f"transform {t} cannot be applied to {ref.type} {ref.name}")
        self._set(transform=t, ref=ref, _type=t.result_type(ref.type))

    @property
    def type(self) -> IcebergType:
        return self._type

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, BoundTransform)
            and other.transform == self.transform
            and other.ref == self.ref
        )

    def __hash__(self) -> int:
        return hash(("bound-transform", str(self.transform), self.ref))

    def __repr__(self) -> str:
        return f"BoundTransform(transform={str(self.transform)!r}, ref={self.ref!r})"

    def __str__(self) -> str:
        return _transform_call(self.transform, str(self.ref))


def _unbound_term(term: Any) -> UnboundTerm:
    if isinstance(term, str):
        return Reference(term)
    if isinstance(term, UnboundTerm):
        return term
    raise InvalidArgumentError(
        f"expected a column name, Reference or UnboundTransform, got {term!r}"
    )


def _bound_term(term: Any) -> BoundTerm:
    if isinstance(term, BoundTerm):
        return term
    raise InvalidArgumentError(f"expected a BoundReference or BoundTransform, got {term!r}")
