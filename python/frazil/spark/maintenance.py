"""Maintenance with the file work spread over Spark executors, with the semantics of the
single-process versions (the driver decides, executors list and delete):

* :func:`remove_orphan_files`: the driver lists the location's top level, executors list each
  subdirectory (recursively, with the same age threshold and hidden-name rule), the driver
  computes reachability *after* the listing and the orphans
  (:func:`frazil.table.maintenance.orphan_files.remove_orphan_files`), executors delete them;
* :func:`expire_snapshots`: the driver commits the expiry and decides which files only expired
  snapshots used (:mod:`frazil.table.maintenance.expire_snapshots`), executors delete them;
* :func:`rewrite_data_files`: the driver plans the file groups as the single-process compaction
  does (:mod:`frazil.table.maintenance.rewrite_data_files`), each group is read (deletes applied,
  v3 lineage kept) and written again by one Spark task through that module's
  ``read_group_rows`` and ``group_writer``, and the driver commits ``replace`` snapshots: one
  for all groups, or with ``partial_progress_enabled`` up to ``partial_progress_max_commits``,
  each as soon as its groups are written (Java's partial progress), so a failure later keeps
  the groups already committed. Strategy ``sort`` writes each group in the table's sort order
  (the ``binpack`` writer also sorts by it, as frazil's writer always does; ``sort`` refuses an
  unsorted table, as Java's sort strategy without a sort order).

Executors rebuild the table's FileIO from its properties (as the distributed writer does), so
they need frazil installed and access to the storage.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from frazil.exceptions import InvalidArgumentError
from frazil.spark.common import io_spec, quiet_pyspark_warnings
from frazil.table.maintenance.orphan_files import list_older_than
from frazil.table.maintenance.orphan_files import remove_orphan_files as remove
from frazil.table.maintenance.rewrite_data_files import (
    MAX_FILE_GROUP_SIZE_BYTES,
    RewriteDataFilesResult,
    plan_rewrite_data_files,
    stage_replace,
)
from frazil.table.scan.read import DeleteCache
from frazil.table.scan.tasks import content_file_from_json

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from frazil.table import Table
    from frazil.table.maintenance.rewrite_data_files import RewriteDataFilesResult

__all__ = ["expire_snapshots", "remove_orphan_files", "rewrite_data_files"]

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
            # Runs on an executor, shipped by value (cloudpickle): it imports what it uses there.
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
            # Runs on an executor, shipped by value (cloudpickle): it imports what it uses there.
            from frazil.spark.common import executor_io
            from frazil.table.maintenance.orphan_files import list_older_than

            io = executor_io(props, io_location)
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


# ---------------------------------------------------------------------------------------------
# compaction


def _rewrite_groups(
    md_json: str,
    props: dict[str, str],
    io_location: str | None,
    write_max: int,
) -> Callable[[Iterable[tuple[int, list[str]]]], Iterator[tuple[int, str]]]:
    """The executor side: (group index, task JSONs) -> (group index, data file JSON) rows."""

    def run(part: Iterable[tuple[int, list[str]]]) -> Iterator[tuple[int, str]]:
        # Runs on an executor, shipped by value (cloudpickle): it imports what it uses there.
        # The group is read and written by the table's own compaction code.
        import json

        from frazil.metadata import TableMetadata
        from frazil.spark.common import executor_io
        from frazil.table.maintenance.rewrite_data_files import group_writer, read_group_rows
        from frazil.table.scan.read import DeleteCache
        from frazil.table.scan.tasks import FileScanTask, content_file_to_json

        md = TableMetadata.from_json(md_json)
        io = executor_io(props, io_location)
        schema = md.schema()
        cache = DeleteCache(io, md.name_mapping())
        for index, task_jsons in part:
            writer = group_writer(io, md, write_max)
            try:
                group = [FileScanTask.from_json(json.loads(text)) for text in task_jsons]
                rows = read_group_rows(io, md, group, cache)
                files = writer.write(rows) if rows is not None else []
            except BaseException:
                writer.abort()
                raise
            for f in files:
                spec = md.spec_by_id(f.spec_id)
                assert spec is not None
                yield index, json.dumps(content_file_to_json(f, spec, schema))

    return run


def rewrite_data_files(
    spark: SparkSession,
    table: Table,
    target_file_size_bytes: int | None = None,
    row_filter: Any = None,
    min_input_files: int = 2,
    branch: str | None = None,
    *,
    strategy: str = "binpack",
    max_file_group_size_bytes: int | None = None,
    partial_progress_enabled: bool = False,
    partial_progress_max_commits: int = 10,
    snapshot_properties: Mapping[str, str] | None = None,
) -> RewriteDataFilesResult:
    """:meth:`frazil.table.Table.rewrite_data_files` with each file group rewritten by a Spark
    task (see the module documentation). Returns the counts of all commits; ``snapshot_id`` is
    the last one's."""
    import json

    if strategy not in ("binpack", "sort"):
        raise InvalidArgumentError(f"strategy must be 'binpack' or 'sort', got {strategy!r}")
    if partial_progress_max_commits < 1:
        raise InvalidArgumentError(
            f"partial_progress_max_commits must be >= 1, got {partial_progress_max_commits}"
        )
    name = table.full_name()
    if strategy == "sort" and table.metadata.sort_order().is_unsorted():
        raise InvalidArgumentError(
            f"{name}: cannot sort data without a sort order (the table is unsorted)"
        )
    plan_tx = table.transaction()
    plan = plan_rewrite_data_files(
        plan_tx,
        target_file_size_bytes,
        row_filter,
        min_input_files,
        branch,
        max_file_group_size_bytes=max_file_group_size_bytes or MAX_FILE_GROUP_SIZE_BYTES,
    )
    groups = plan.groups
    if not groups:
        log.info("rewrite_data_files on %s: no file group needs rewriting", name)
        return RewriteDataFilesResult()
    md = plan.ctx.metadata
    props, io_location = io_spec(table)
    run = _rewrite_groups(md.to_json(), props, io_location, plan.sizes.write_max)
    commits = partial_progress_max_commits if partial_progress_enabled else 1
    per_commit = -(-len(groups) // commits)
    chunks = [
        list(range(i, min(i + per_commit, len(groups)))) for i in range(0, len(groups), per_commit)
    ]
    payload = {i: [json.dumps(t.to_json()) for t in g] for i, g in enumerate(groups)}
    specs = md.specs()
    schema = md.schema()
    cache = DeleteCache(table.io, md.name_mapping())
    totals = [0, 0, 0, 0]
    snapshot_id = None
    for chunk in chunks:
        with quiet_pyspark_warnings():
            rows = (
                spark.sparkContext.parallelize(
                    [(i, payload[i]) for i in chunk], _slices(spark, len(chunk))
                )
                .mapPartitions(run)
                .collect()
            )
        added = [content_file_from_json(json.loads(text), specs, schema) for _, text in rows]
        rewritten = [t for i in chunk for t in groups[i]]
        try:
            tx = table.transaction()
            producer, dropped = stage_replace(
                tx, plan.ctx, rewritten, added, cache, branch, snapshot_properties
            )
            tx.stage(producer)
            tx.commit_transaction()
        except BaseException:
            table.io.delete_many([f.file_path for f in added])
            raise
        snapshot_id = producer.snapshot_id
        totals[0] += len(rewritten)
        totals[1] += len(added)
        totals[2] += sum(t.file.file_size_in_bytes for t in rewritten)
        totals[3] += dropped
        log.info(
            "rewrite_data_files on %s: committed %d groups (%d files into %d)",
            name,
            len(chunk),
            len(rewritten),
            len(added),
        )
    return RewriteDataFilesResult(
        rewritten_data_files_count=totals[0],
        added_data_files_count=totals[1],
        rewritten_bytes_count=totals[2],
        removed_delete_files_count=totals[3],
        snapshot_id=snapshot_id,
    )
