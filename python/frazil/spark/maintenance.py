"""Maintenance with the file work spread over Spark executors, with the semantics of the
single-process versions (the driver decides, executors list and delete):

* :func:`remove_orphan_files`: the driver lists the location's top level, executors list each
  subdirectory (recursively, with the same age threshold and hidden-name rule), the driver
  computes reachability *after* the listing and the orphans
  (:func:`frazil.table.orphan_files.remove_orphan_files`), executors delete them;
* :func:`expire_snapshots`: the driver commits the expiry and decides which files only expired
  snapshots used (:mod:`frazil.table.update.expire_snapshots`), executors delete them.

Executors rebuild the table's FileIO from its properties (as the distributed writer does), so
they need frazil installed and access to the storage.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from frazil.spark.write import io_spec, quiet_pyspark_warnings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from frazil.table import Table

__all__ = ["expire_snapshots", "remove_orphan_files"]

log = logging.getLogger(__name__)


def _slices(spark: SparkSession, n: int) -> int:
    return max(1, min(n, spark.sparkContext.defaultParallelism * 4))


def distributed_delete(spark: SparkSession, table: Table) -> Callable[[list[str]], None]:
    """A bulk delete running on the executors with the table's FileIO."""
    props, location = io_spec(table)

    def delete(paths: list[str]) -> None:
        if not paths:
            return

        def run(part: Iterable[str]) -> None:
            from frazil.io import load_file_io

            load_file_io(props, location).delete_many(list(part))

        with quiet_pyspark_warnings():
            spark.sparkContext.parallelize(paths, _slices(spark, len(paths))).foreachPartition(run)
        log.info("deleted %d files on Spark executors", len(paths))

    return delete


def distributed_list(
    spark: SparkSession, table: Table
) -> Callable[[str, int, frozenset[str]], list[str]]:
    """A listing whose subdirectories are listed by the executors."""
    from frazil.table.orphan_files import list_older_than

    props, io_location = io_spec(table)

    def list_files(location: str, older_than_ms: int, partition_names: frozenset[str]) -> list[str]:
        dirs: list[str] = []
        files = list_older_than(
            table.io,
            location,
            older_than_ms,
            partition_names,
            recursive=False,
            directories=dirs,
        )
        if not dirs:
            return files

        def run(part: Iterable[str]) -> Iterator[str]:
            from frazil.io import load_file_io
            from frazil.table.orphan_files import list_older_than

            io = load_file_io(props, io_location)
            for d in part:
                yield from list_older_than(io, d, older_than_ms, partition_names)

        with quiet_pyspark_warnings():
            listed = (
                spark.sparkContext.parallelize(sorted(dirs), _slices(spark, len(dirs)))
                .mapPartitions(run)
                .collect()
            )
        return sorted([*files, *listed])

    return list_files


def remove_orphan_files(
    spark: SparkSession,
    table: Table,
    older_than: int | datetime | None = None,
    dry_run: bool = False,
    location: str | None = None,
    equal_schemes: Mapping[str, str] | None = None,
    equal_authorities: Mapping[str, str] | None = None,
    prefix_mismatch_mode: str = "error",
) -> list[str]:
    """:meth:`frazil.table.Table.remove_orphan_files` with listing and deleting on Spark's
    executors. Returns the orphan locations."""
    from frazil.table.orphan_files import remove_orphan_files as remove

    return remove(
        table,
        older_than,
        dry_run,
        location,
        equal_schemes,
        equal_authorities,
        prefix_mismatch_mode,
        list_files=distributed_list(spark, table),
        delete_files=distributed_delete(spark, table),
    )


def expire_snapshots(
    spark: SparkSession,
    table: Table,
    older_than: int | datetime | None = None,
    retain_last: int | None = None,
    snapshot_ids: Iterable[int] = (),
) -> list[int]:
    """Expires snapshots of ``table`` (``older_than``: epoch milliseconds or a datetime,
    default the table's ``history.expire.max-snapshot-age-ms``; ``retain_last``; explicit
    ``snapshot_ids``), deleting the files only they used on Spark's executors. Returns the
    expired snapshot ids."""
    before = {s.snapshot_id for s in table.metadata.snapshots}
    expire = table.expire_snapshots()
    if isinstance(older_than, datetime):
        expire.older_than(older_than)
    elif older_than is not None:
        expire.expire_older_than(older_than)
    if retain_last is not None:
        expire.retain_last(retain_last)
    expire.by_ids(snapshot_ids)
    expire.delete_with(distributed_delete(spark, table))
    expire.commit()
    table.refresh()
    return sorted(before - {s.snapshot_id for s in table.metadata.snapshots})
