"""Sort orders (spec "Sorting"; JSON in Appendix C). Order id 0 is the unsorted order."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any

from frazil._json import Fields
from frazil.exceptions import InvalidArgumentError, ParseError, UnsupportedError
from frazil.partitioning import (
    AnyTransform,
    UnknownTransform,
    _source_ids,
    can_transform,
    parse_transform,
    user_transform,
)
from frazil.schema import Schema
from frazil.transforms import IdentityTransform, Transform

__all__ = [
    "UNSORTED_SORT_ORDER",
    "UNSORTED_SORT_ORDER_ID",
    "NullOrder",
    "SortDirection",
    "SortField",
    "SortOrder",
    "validate_sort_order",
]

UNSORTED_SORT_ORDER_ID = 0
IDENTITY: Transform = IdentityTransform()
INITIAL_SORT_ORDER_ID = 1


class SortDirection(Enum):
    ASC = "asc"
    DESC = "desc"

    def __str__(self) -> str:
        return self.value


class NullOrder(Enum):
    NULLS_FIRST = "nulls-first"
    NULLS_LAST = "nulls-last"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class SortField:
    """One sort key. ``null_order`` defaults as the reference does: nulls first when ascending,
    last when descending."""

    source_id: int
    transform: AnyTransform = IDENTITY
    direction: SortDirection = SortDirection.ASC
    null_order: NullOrder | None = None
    source_ids: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not self.source_ids:
            object.__setattr__(self, "source_ids", (self.source_id,))
        object.__setattr__(
            self, "transform", user_transform(self.transform, f"sort field {self.source_id}")
        )
        if self.null_order is None:
            object.__setattr__(
                self,
                "null_order",
                NullOrder.NULLS_FIRST
                if self.direction == SortDirection.ASC
                else NullOrder.NULLS_LAST,
            )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"transform": str(self.transform)}
        if len(self.source_ids) > 1:
            out["source-ids"] = list(self.source_ids)
        else:
            out["source-id"] = self.source_id
        out["direction"] = str(self.direction)
        out["null-order"] = str(self.null_order)
        return out

    @classmethod
    def from_json(cls, obj: Any, path: str) -> SortField:
        f = Fields(obj, path)
        transform = parse_transform(f.raw("transform"), f.at("transform"))
        source_ids = _source_ids(f)
        direction = _enum(SortDirection, f.str("direction"), f.at("direction"))
        null_order = _enum(NullOrder, f.str("null-order"), f.at("null-order"))
        return cls(source_ids[0], transform, direction, null_order, tuple(source_ids))


def _enum(cls: Any, text: str, at: str) -> Any:
    try:
        return cls(text.lower())
    except ValueError:
        allowed = ", ".join(repr(m.value) for m in cls)
        raise ParseError(f"{at}: {text!r} is not one of {allowed}") from None


class SortOrder:
    def __init__(self, *fields: SortField, order_id: int = INITIAL_SORT_ORDER_ID) -> None:
        self.fields: tuple[SortField, ...] = tuple(fields)
        # An order without fields is always the unsorted order, id 0.
        self.order_id: int = order_id if fields else UNSORTED_SORT_ORDER_ID

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, SortOrder)
            and self.order_id == other.order_id
            and self.fields == other.fields
        )

    def __hash__(self) -> int:
        return hash((self.order_id, self.fields))

    def __repr__(self) -> str:
        return f"SortOrder({', '.join(map(repr, self.fields))}, order_id={self.order_id})"

    def __iter__(self) -> Iterator[SortField]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def is_unsorted(self) -> bool:
        return not self.fields

    def same_order(self, other: SortOrder) -> bool:
        return self.fields == other.fields

    def to_json(self) -> dict[str, Any]:
        return {"order-id": self.order_id, "fields": [f.to_json() for f in self.fields]}

    @classmethod
    def from_json(cls, obj: Any, path: str = "sort-order") -> SortOrder:
        f = Fields(obj, path)
        order_id = f.int32("order-id")
        items = f.list("fields")
        fields = [
            SortField.from_json(item, f"{f.at('fields')}[{i}]") for i, item in enumerate(items)
        ]
        if order_id == UNSORTED_SORT_ORDER_ID and fields:
            raise ParseError(f"{f.at('order-id')}: order id 0 is reserved for the unsorted order")
        if order_id != UNSORTED_SORT_ORDER_ID and not fields:
            raise ParseError(f"{f.at('fields')}: a sort order with id {order_id} has no fields")
        order = cls(*fields, order_id=order_id)
        return order


UNSORTED_SORT_ORDER = SortOrder(order_id=UNSORTED_SORT_ORDER_ID)


def validate_sort_order(order: SortOrder, schema: Schema) -> None:
    """A sort order a writer adds: known transforms, existing primitive source columns the
    transform accepts."""
    for f in order.fields:
        if isinstance(f.transform, UnknownTransform):
            raise UnsupportedError(f"sort field uses unknown transform {f.transform}")
        for source_id in f.source_ids:
            if source_id not in schema.field_ids:
                raise InvalidArgumentError(
                    f"sort field: source column id {source_id} is not in the schema"
                )
            source = schema.find_field(source_id)
            if not source.field_type.is_primitive:
                raise InvalidArgumentError(
                    f"sort field: source column {source.name!r} is not a primitive"
                )
            if not can_transform(f.transform, source.field_type):
                raise InvalidArgumentError(
                    f"sort field: transform {f.transform} cannot be applied to "
                    f"{source.field_type} column {source.name!r}"
                )
