"""frazil on Spark (PySpark 3.5 and 4.x): partition transforms as Spark functions.

:mod:`frazil.spark.functions` has the Column functions; :func:`register` makes them callable
from SQL::

    frazil.spark.register(spark)
    spark.sql("SELECT frazil_bucket(16, id), frazil_days(ts), frazil_truncate(4, name) FROM t")

``frazil_bucket`` and ``frazil_truncate`` take their count or width as a constant first
argument, like Java's ``system.bucket`` and ``system.truncate``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from frazil.spark.functions import register
from frazil.spark.maintenance import expire_snapshots, remove_orphan_files, rewrite_data_files
from frazil.spark.read import read
from frazil.spark.statistics import compute_statistics as _compute_statistics
from frazil.spark.write import write

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pyspark.sql import SparkSession

    from frazil.metadata import StatisticsFile
    from frazil.table import Table

__all__ = [
    "compute_statistics",
    "expire_snapshots",
    "read",
    "register",
    "register_data_source",
    "remove_orphan_files",
    "rewrite_data_files",
    "write",
]


def compute_statistics(
    spark: SparkSession,
    table: Table,
    columns: Sequence[str] | None = None,
    snapshot_id: int | None = None,
) -> StatisticsFile:
    """NDV sketches of a table's columns computed on Spark's executors and merged on the
    driver; see :mod:`frazil.spark.statistics`."""
    return _compute_statistics(spark, table, columns, snapshot_id)


def register_data_source(spark: SparkSession, pushdown: bool | None = None) -> None:
    """Registers the ``frazil`` Python data source with ``spark`` (PySpark 4.0+):
    ``spark.read.format("frazil")`` and ``df.write.format("frazil")`` (see
    :func:`frazil.spark.datasource.register_data_source` for ``pushdown``)."""
    # Imported here: the data source needs PySpark 4, the rest of frazil.spark runs on 3.5 too.
    from frazil.spark.datasource import register_data_source as _register

    _register(spark, pushdown)
