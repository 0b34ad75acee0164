"""Rows shared by the row-level tests (tests/table/test_row_delta.py, test_maintenance.py): ids
with nulls in ``s`` and ``x`` and three values of the partition column ``p``."""

from __future__ import annotations

import pyarrow as pa


def rows(lo: int, hi: int) -> pa.Table:
    ids = list(range(lo, hi))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "s": [None if i % 5 == 0 else f"s{i % 7}" for i in ids],
            "x": [None if i % 6 == 0 else i / 2 for i in ids],
            "p": pa.array([i % 3 for i in ids], pa.int64()),
        }
    )
