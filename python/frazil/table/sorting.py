"""PyIceberg's import path for sort orders (``pyiceberg.table.sorting``); the implementation is
:mod:`frazil.sorting`."""

from frazil.sorting import (
    UNSORTED_SORT_ORDER,
    UNSORTED_SORT_ORDER_ID,
    NullOrder,
    SortDirection,
    SortField,
    SortOrder,
)

__all__ = [
    "UNSORTED_SORT_ORDER",
    "UNSORTED_SORT_ORDER_ID",
    "NullOrder",
    "SortDirection",
    "SortField",
    "SortOrder",
]
