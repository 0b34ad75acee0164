"""``dynamic_partition_overwrite``: replace exactly the partitions (of the current spec) that
the new rows fall in, as PyIceberg's operation of that name does.

The partitions are the distinct partition tuples of the input; the rows of the table in those
partitions are deleted and the input appended, in one ``overwrite`` snapshot (PyIceberg commits a
delete snapshot then an append snapshot; the table's rows afterwards are the same). The delete is
a row filter on the source columns, so data files written under older partition specs are
handled row by row like any overwrite. As in PyIceberg, only identity partition fields are
accepted: a filter on transformed values (``bucket``, ``day`` ...) is not expressible as a row
filter the planner evaluates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import pyarrow as pa

from frazil.exceptions import ValidationError
from frazil.expressions import AlwaysFalse, And, BooleanExpression, EqualTo, In, IsNull, Or
from frazil.partitioning import is_void
from frazil.table.write.conform import ArrowData, as_table
from frazil.table.write.row_delta import overwrite
from frazil.table.write.writer import _column

if TYPE_CHECKING:
    from frazil.table.transaction import Transaction

__all__ = ["dynamic_partition_overwrite", "partition_filter"]


def partition_filter(transaction: Transaction, df: pa.Table) -> BooleanExpression:
    """The row filter selecting the current spec's partitions that ``df``'s rows fall in."""
    metadata = transaction.table_metadata
    spec, schema = metadata.spec(), metadata.schema()
    name = transaction.table.full_name()
    fields = [f for f in spec.fields if not is_void(f.transform)]
    if not fields:
        raise ValidationError(f"{name}: cannot apply dynamic overwrite on an unpartitioned table")
    for f in fields:
        if str(f.transform) != "identity":
            raise ValidationError(
                f"{name}: dynamic partition overwrite needs identity partition fields; "
                f"{f.name!r} is {f.transform} (use overwrite with a row filter instead)"
            )
    columns = [schema.find_column_name(f.source_id) or "" for f in fields]
    keys = pa.table({str(i): _column(df, c) for i, c in enumerate(columns)})
    distinct = keys.group_by(keys.column_names).aggregate([]).to_pylist()
    if len(columns) == 1:
        values = [row["0"] for row in distinct]
        present = [v for v in values if v is not None]
        out: BooleanExpression = In(columns[0], present) if present else AlwaysFalse()
        if len(present) < len(values):
            out = Or(out, IsNull(columns[0]))
        return out
    out = AlwaysFalse()
    for row in distinct:
        term: BooleanExpression | None = None
        for i, c in enumerate(columns):
            v = row[str(i)]
            pred: BooleanExpression = IsNull(c) if v is None else EqualTo(c, v)
            term = pred if term is None else And(term, pred)
        assert term is not None
        out = term if isinstance(out, AlwaysFalse) else Or(out, term)
    return out


def dynamic_partition_overwrite(
    transaction: Transaction,
    df: ArrowData,
    snapshot_properties: Mapping[str, str] | None,
    branch: str | None,
) -> None:
    table = as_table(df)
    if table.num_rows == 0:
        return  # nothing to replace, as PyIceberg
    overwrite(
        transaction, table, partition_filter(transaction, table), snapshot_properties, True, branch
    )
