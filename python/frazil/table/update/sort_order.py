"""Replacing a table's default sort order (spec "Sorting").

``ReplaceSortOrder`` builds a whole new order, key by key, and produces ``add-sort-order`` +
``set-default-sort-order`` guarded by ``assert-default-sort-order-id``. An order equal to an
existing one reuses its id; an empty order is the unsorted order, id 0::

    with ReplaceSortOrder(metadata) as order:
        order.asc("id").desc("ts", "day", NullOrder.NULLS_FIRST)
"""

from __future__ import annotations

from frazil.exceptions import FrazilError, ValidationError
from frazil.metadata import TableMetadata
from frazil.partitioning import can_transform
from frazil.sorting import (
    UNSORTED_SORT_ORDER_ID,
    NullOrder,
    SortDirection,
    SortField,
    SortOrder,
    validate_sort_order,
)
from frazil.table.update import (
    AddSortOrderUpdate,
    AssertDefaultSortOrderId,
    PendingUpdate,
    SetDefaultSortOrderUpdate,
    TableRequirement,
    TableUpdate,
)
from frazil.table.update.updates import LAST_ADDED, OnCommit
from frazil.transforms import Transform, parse

__all__ = ["ReplaceSortOrder", "UpdateSortOrder"]


class ReplaceSortOrder(PendingUpdate):
    def __init__(
        self,
        metadata: TableMetadata,
        case_sensitive: bool = True,
        on_commit: OnCommit | None = None,
    ) -> None:
        self._metadata = metadata
        self._schema = metadata.schema()
        self._case_sensitive = case_sensitive
        self._on_commit = on_commit
        self._fields: list[SortField] = []

    def asc(
        self,
        source_column_name: str,
        transform: Transform | str = "identity",
        null_order: NullOrder = NullOrder.NULLS_FIRST,
    ) -> ReplaceSortOrder:
        return self._add(source_column_name, transform, SortDirection.ASC, null_order)

    def desc(
        self,
        source_column_name: str,
        transform: Transform | str = "identity",
        null_order: NullOrder = NullOrder.NULLS_LAST,
    ) -> ReplaceSortOrder:
        return self._add(source_column_name, transform, SortDirection.DESC, null_order)

    def _add(
        self,
        name: str,
        transform: Transform | str,
        direction: SortDirection,
        null_order: NullOrder,
    ) -> ReplaceSortOrder:
        try:
            source = self._schema.find_field(name, self._case_sensitive)
            t = transform if isinstance(transform, Transform) else parse(transform)
        except FrazilError as e:
            raise ValidationError(f"cannot sort by {name!r}: {e}") from None
        if not can_transform(t, source.field_type):
            raise ValidationError(f"cannot sort by {t}({name}): {source.field_type} column")
        if not isinstance(null_order, NullOrder):
            raise ValidationError(f"null_order must be a NullOrder, got {null_order!r}")
        field = SortField(source.field_id, t, direction, null_order)
        if any(f.source_id == field.source_id and f.transform == t for f in self._fields):
            raise ValidationError(f"cannot sort by {t}({name}) twice")
        self._fields.append(field)
        return self

    def apply(self) -> SortOrder:
        candidate = SortOrder(*self._fields)
        existing = next((o for o in self._metadata.sort_orders if o.same_order(candidate)), None)
        if existing is not None:
            return existing
        if not self._fields:
            return SortOrder(order_id=UNSORTED_SORT_ORDER_ID)
        new_id = max((o.order_id for o in self._metadata.sort_orders), default=0) + 1
        order = SortOrder(*self._fields, order_id=new_id)
        try:
            validate_sort_order(order, self._schema)
        except FrazilError as e:
            raise ValidationError(str(e)) from None
        return order

    def updates_and_requirements(self) -> tuple[list[TableUpdate], list[TableRequirement]]:
        new = self.apply()
        if new.order_id == self._metadata.default_sort_order_id:
            return [], []
        return (
            [AddSortOrderUpdate(new), SetDefaultSortOrderUpdate(LAST_ADDED)],
            [AssertDefaultSortOrderId(self._metadata.default_sort_order_id)],
        )


# PyIceberg's name for the same builder.
class UpdateSortOrder(ReplaceSortOrder):
    """PyIceberg's ``update_sort_order()``: the same builder with PyIceberg's defaults, nulls
    last for ``asc`` as for ``desc`` (:class:`ReplaceSortOrder` follows the Java reference:
    nulls first when ascending)."""

    def asc(
        self,
        source_column_name: str,
        transform: Transform | str = "identity",
        null_order: NullOrder = NullOrder.NULLS_LAST,
    ) -> ReplaceSortOrder:
        return self._add(source_column_name, transform, SortDirection.ASC, null_order)
