"""NDV statistics of big tables on Spark: theta sketches computed on the executors, merged on the
driver.

:func:`compute_statistics` plans the scan of the chosen columns on the driver (as
:func:`frazil.spark.read.read` does), and each Spark partition reads its tasks with frazil's
reader and sketches every column natively (:class:`frazil._native.ThetaSketch`) in a
``mapInArrow`` pass, returning one small compact sketch per column. The driver merges them with
DataSketches' theta union, writes the Puffin file and commits ``set-statistics``, exactly as
:meth:`frazil.table.Table.compute_statistics` does for one machine (below the sketch's
capacity the two give the same bytes).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from frazil import _native
from frazil.exceptions import InvalidArgumentError
from frazil.metadata import StatisticsFile
from frazil.spark.common import quiet_pyspark_warnings
from frazil.spark.read import (
    SplitOptions,
    encode_groups,
    group_tasks,
    plan,
    read_task_batches,
    task_sizes,
)
from frazil.table.statistics import (
    resolve_snapshot,
    sketch_batches,
    snapshot_schema,
    statistics_columns,
    write_statistics_file,
)

if TYPE_CHECKING:
    from frazil.table import Table

__all__ = ["compute_statistics"]


def _sketch_partition(
    context: dict[str, Any], columns: Sequence[Any], batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    for b in batches:
        for tasks in b.column(0).to_pylist():
            sketches = sketch_batches(read_task_batches(context, tasks), columns)
            yield pa.record_batch(
                {
                    "column": pa.array(range(len(sketches)), pa.int32()),
                    "sketch": pa.array([s.to_bytes() for s in sketches], pa.binary()),
                }
            )


def compute_statistics(
    spark: Any,
    table: Table,
    columns: Sequence[str] | None = None,
    snapshot_id: int | None = None,
) -> StatisticsFile:
    """:meth:`frazil.table.Table.compute_statistics` with the reading and sketching spread over
    Spark's executors (one sketch per column per Spark partition, unioned on the driver)."""
    snapshot = resolve_snapshot(table, snapshot_id)
    chosen = statistics_columns(snapshot_schema(table, snapshot), columns)
    if not chosen:
        raise InvalidArgumentError(f"table {table.full_name()} has no column to compute NDV of")
    names = tuple(dict.fromkeys(c.path[0] for c in chosen))
    scan_plan, context, _ = plan(table, snapshot_id=snapshot.snapshot_id, selected_fields=names)
    unions = [_native.ThetaUnion() for _ in chosen]
    if len(scan_plan):
        groups = group_tasks(
            task_sizes(scan_plan),
            SplitOptions.of(table).target,
            spark.sparkContext.defaultParallelism,
        )
        rows = [(tasks,) for tasks in encode_groups(scan_plan, groups)]
        from pyspark.sql.types import BinaryType, StructField, StructType

        tasks_df = spark.createDataFrame(
            spark.sparkContext.parallelize(rows, len(rows)),
            StructType([StructField("tasks", BinaryType(), False)]),
        )

        def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            return _sketch_partition(context, chosen, batches)

        with quiet_pyspark_warnings():
            partials = tasks_df.mapInArrow(run, "column int, sketch binary").collect()
        for row in partials:
            unions[row["column"]].update(bytes(row["sketch"]))
    f = write_statistics_file(
        table, snapshot, chosen, [u.to_bytes() for u in unions], [u.estimate() for u in unions]
    )
    table.transaction().set_statistics(f).commit_transaction()
    return f
