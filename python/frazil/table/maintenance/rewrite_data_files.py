"""Table maintenance: compaction of data files (``rewrite_data_files``).

Compaction follows the Java reference's bin-pack rewrite (``RewriteDataFiles`` with its
``BinPackRewriteFilePlanner``) in spirit:

* the branch head is planned (``row_filter`` selects the files that may hold matching rows; a
  file is always rewritten whole);
* a file is a candidate when it is smaller than 75% of the target size, larger than 180% of it,
  or when file-scoped deletes (deletion vectors, position delete files naming it) remove at least
  30% of its rows;
* candidates are grouped per partition (files of older specs together, as Java does, since their
  rows may belong to several partitions of the current spec) and bin-packed by size into groups
  of at most ``max_file_group_size_bytes``; a group is rewritten when it has at least
  ``min_input_files`` files (and more than one), holds more than the target size in more than one
  file, holds more than the maximum size, or has a file with too many deletes;
* each group's live rows (deletes applied) are written again with the table's writer (current
  spec and sort order, files rolled at the target size plus half the distance to the maximum, as
  Java's ``writeMaxFileSize``); v3 rows keep ``_row_id`` and ``_last_updated_sequence_number``,
  written under their reserved field ids (the copy-on-write path of
  :mod:`frazil.table.write.row_delta`);
* one ``replace`` snapshot removes the rewritten files and the delete files that applied only to
  them (their deletion vectors; position delete files whose every ``file_path`` was rewritten);
  equality deletes stay, since they may apply to other files and never to the new ones (which
  get the commit's newer sequence number).

The commit validates from the planned snapshot: the rewritten files and removed delete files must
still be live, and no delete file may have been added for a rewritten file since (the rows would
come back). Files written are deleted when the commit does not land.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil.exceptions import InvalidArgumentError
from frazil.expressions import as_filter, bind
from frazil.manifest.content_file import DataFile, DataFileContent, is_deletion_vector
from frazil.table.scan.plan import ColumnStats
from frazil.table.scan.read import FILE_PATH_FIELD_ID, DeleteCache
from frazil.table.write.row_context import (
    LineageWriter,
    RowContext,
    data_columns,
    read_live_rows,
)
from frazil.table.write.row_delta import DELETE_ISOLATION, DELETE_MODE
from frazil.table.write.writer import WriteSettings, WrittenFilesStep

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.metadata import TableMetadata
    from frazil.table import Table
    from frazil.table.scan import DataScan, FileScanTask
    from frazil.table.transaction import Transaction


__all__ = [
    "RewriteDataFilesResult",
    "RewritePlan",
    "group_writer",
    "plan_rewrite_data_files",
    "read_group",
    "read_group_rows",
    "rewrite_data_files",
    "stage_replace",
    "stage_rewrite_data_files",
]

logger = logging.getLogger(__name__)

TARGET_FILE_SIZE = "write.target-file-size-bytes"
MIN_FILE_SIZE_RATIO = 0.75
MAX_FILE_SIZE_RATIO = 1.80
DELETE_RATIO_THRESHOLD = 0.3
MAX_FILE_GROUP_SIZE_BYTES = 100 * 1024 * 1024 * 1024


@dataclass(frozen=True)
class RewriteDataFilesResult:
    """What a compaction changed (the Java reference's ``RewriteDataFiles.Result`` counts)."""

    rewritten_data_files_count: int = 0
    added_data_files_count: int = 0
    rewritten_bytes_count: int = 0
    removed_delete_files_count: int = 0
    snapshot_id: int | None = None


@dataclass(frozen=True)
class _Sizes:
    target: int
    min: int
    max: int

    @classmethod
    def of(cls, target: int) -> _Sizes:
        if target <= 0:
            raise InvalidArgumentError(f"target_file_size_bytes must be > 0, got {target}")
        return cls(target, int(target * MIN_FILE_SIZE_RATIO), int(target * MAX_FILE_SIZE_RATIO))

    @property
    def write_max(self) -> int:
        # Rolling a little past the target avoids a tiny remainder file (Java's writeMaxFileSize).
        return int(self.target + (self.max - self.target) * 0.5)


def _deleted_ratio(task: FileScanTask) -> float:
    """Rows known deleted by file-scoped deletes, as a fraction of the file's rows."""
    f = task.file
    if not task.delete_files or not f.record_count:
        return 0.0
    known = sum(
        d.record_count
        for d in task.delete_files
        if d.content == DataFileContent.POSITION_DELETES
        and (is_deletion_vector(d) or d.referenced_data_file == f.file_path)
    )
    return min(known, f.record_count) / f.record_count


def _candidates(scan: DataScan, sizes: _Sizes) -> list[FileScanTask]:
    """The tasks whose file is outside the size range or has deletes (a rewrite candidate if
    they delete enough of it), chosen per planned manifest in Arrow: only those become task
    objects, whatever the table's size."""
    _, groups = scan._plan(ColumnStats.ON_ACCESS)  # removed files keep their stats
    out: list[FileScanTask] = []
    for g in groups:
        size = g.entries.column("data_file").combine_chunks().field("file_size_in_bytes")
        off = pc.or_(pc.less(size, sizes.min), pc.greater(size, sizes.max))
        maybe = pc.or_(off, pc.greater(pc.list_value_length(g.deletes), 0))
        rows = pc.indices_nonzero(maybe).to_pylist()
        out.extend(g.tasks_at(rows))
    return out


def _groups(
    tasks: list[FileScanTask],
    sizes: _Sizes,
    min_input_files: int,
    current_spec_id: int,
    max_group_bytes: int,
) -> list[list[FileScanTask]]:
    """The groups of files to rewrite, per partition, bin-packed by size."""
    by_partition: dict[Any, list[FileScanTask]] = {}
    for task in tasks:
        f = task.file
        size = f.file_size_in_bytes
        deletes_heavy = _deleted_ratio(task) >= DELETE_RATIO_THRESHOLD
        if not (size < sizes.min or size > sizes.max or deletes_heavy):
            continue
        key = (f.spec_id, tuple(f.partition)) if f.spec_id == current_spec_id else None
        by_partition.setdefault(key, []).append(task)
    out: list[list[FileScanTask]] = []
    for candidates in by_partition.values():
        # First fit, largest first: few groups, each under the group cap.
        candidates.sort(key=lambda t: t.file.file_size_in_bytes, reverse=True)
        bins: list[tuple[int, list[FileScanTask]]] = []
        for task in candidates:
            size = task.file.file_size_in_bytes
            for i, (total, members) in enumerate(bins):
                if total + size <= max_group_bytes:
                    members.append(task)
                    bins[i] = (total + size, members)
                    break
            else:
                bins.append((size, [task]))
        for total, members in bins:
            n = len(members)
            if (
                (n > 1 and n >= min_input_files)
                or (n > 1 and total > sizes.target)
                or total > sizes.max
                or any(_deleted_ratio(t) >= DELETE_RATIO_THRESHOLD for t in members)
            ):
                out.append(members)
    return out


def _delete_key(d: DataFile) -> tuple[str, int | None]:
    return (d.file_path, d.content_offset)


def _applies_only_to(d: DataFile, rewritten: set[str], cache: DeleteCache) -> bool:
    """Whether a position delete file (or DV) names only rewritten data files."""
    if is_deletion_vector(d) or d.referenced_data_file is not None:
        return d.referenced_data_file in rewritten
    lo = (d.lower_bounds or {}).get(FILE_PATH_FIELD_ID)
    hi = (d.upper_bounds or {}).get(FILE_PATH_FIELD_ID)
    if lo is not None and lo == hi:
        return lo.decode() in rewritten
    paths = pc.unique(cache._read_position_file(d).column("file_path")).to_pylist()
    return all(p in rewritten for p in paths)


@dataclass
class RewritePlan:
    """The file groups a compaction rewrites, planned on one snapshot of a branch."""

    ctx: RowContext
    sizes: _Sizes
    groups: list[list[FileScanTask]]


def plan_rewrite_data_files(
    transaction: Transaction,
    target_file_size_bytes: int | None = None,
    row_filter: Any = None,
    min_input_files: int = 2,
    branch: str | None = None,
    *,
    max_file_group_size_bytes: int = MAX_FILE_GROUP_SIZE_BYTES,
    case_sensitive: bool = True,
) -> RewritePlan:
    """The groups of files to rewrite (see the module documentation)."""
    if min_input_files <= 0:
        raise InvalidArgumentError(f"min_input_files must be > 0, got {min_input_files}")
    if max_file_group_size_bytes <= 0:
        raise InvalidArgumentError(
            f"max_file_group_size_bytes must be > 0, got {max_file_group_size_bytes}"
        )
    ctx = RowContext.make(
        transaction, transaction.table_metadata, branch, DELETE_MODE, DELETE_ISOLATION
    )
    md = ctx.metadata
    if target_file_size_bytes is None:
        target_file_size_bytes = WriteSettings.from_properties(md.properties).target_file_bytes
    sizes = _Sizes.of(int(target_file_size_bytes))
    bound = bind(ctx.schema, as_filter(row_filter), case_sensitive)
    scan = ctx.scan(bound)
    tasks = [] if scan is None else _candidates(scan, sizes)
    groups = _groups(tasks, sizes, min_input_files, md.default_spec_id, max_file_group_size_bytes)
    return RewritePlan(ctx, sizes, groups)


def read_group(ctx: RowContext, group: list[FileScanTask], cache: DeleteCache) -> pa.Table | None:
    """A group's live rows (deletes applied; v3 lineage kept), ``None`` when none are left."""
    return read_group_rows(ctx.io, ctx.metadata, group, cache)


def read_group_rows(
    io: FileIO, metadata: TableMetadata, group: list[FileScanTask], cache: DeleteCache
) -> pa.Table | None:
    """:func:`read_group` from a FileIO and metadata alone: Spark's executors rewrite their
    groups through it, with no transaction at hand."""
    parts = [read_live_rows(io, metadata, task, cache) for task in group]
    parts = [data_columns(p) for p in parts if p.num_rows]
    return pa.concat_tables(parts) if parts else None


def group_writer(io: FileIO, metadata: TableMetadata, write_max: int) -> LineageWriter:
    """The writer of rewritten groups: v3 lineage kept, files rolled at ``write_max``."""
    writer = LineageWriter(io, metadata, operation_id=uuid.uuid4())
    writer.settings = dataclasses.replace(writer.settings, target_file_bytes=write_max)
    return writer


def stage_replace(
    transaction: Transaction,
    ctx: RowContext,
    rewritten: list[FileScanTask],
    added: list[DataFile],
    cache: DeleteCache,
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
) -> tuple[Any, int]:
    """A ``replace`` producer (not staged) removing the rewritten files and the position
    deletes that applied only to them, adding ``added``, validated from the planned snapshot;
    and how many delete files it removes."""
    rewritten_paths = {t.file.file_path for t in rewritten}
    dropped: dict[tuple[str, int | None], DataFile] = {}
    for task in rewritten:
        for d in task.delete_files:
            if d.content != DataFileContent.POSITION_DELETES or _delete_key(d) in dropped:
                continue
            if _applies_only_to(d, rewritten_paths, cache):
                dropped[_delete_key(d)] = d
    producer = transaction.update_snapshot(snapshot_properties, branch).replace()
    for task in rewritten:
        producer.delete_data_file(task.file)
    for d in dropped.values():
        producer.delete_delete_file(d)
    for f in added:
        producer.append_data_file(f)
    if ctx.snapshot is not None:
        producer.validate_from_snapshot(ctx.snapshot.snapshot_id)
    return producer, len(dropped)


def stage_rewrite_data_files(
    transaction: Transaction,
    target_file_size_bytes: int | None = None,
    row_filter: Any = None,
    min_input_files: int = 2,
    branch: str | None = None,
    *,
    max_file_group_size_bytes: int = MAX_FILE_GROUP_SIZE_BYTES,
    case_sensitive: bool = True,
    snapshot_properties: Mapping[str, str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RewriteDataFilesResult:
    """Plans the compaction, writes the new files and stages one ``replace`` snapshot in
    ``transaction`` (nothing is staged when no group needs rewriting). ``progress(done, total)``
    is called with the count of file groups rewritten, once planned and after each group."""
    plan = plan_rewrite_data_files(
        transaction,
        target_file_size_bytes,
        row_filter,
        min_input_files,
        branch,
        max_file_group_size_bytes=max_file_group_size_bytes,
        case_sensitive=case_sensitive,
    )
    ctx, sizes, groups = plan.ctx, plan.sizes, plan.groups
    md = ctx.metadata
    name = transaction.table.full_name()
    if not groups:
        logger.info("rewrite_data_files on %s: no file group needs rewriting", name)
        return RewriteDataFilesResult()

    writer = group_writer(ctx.io, md, sizes.write_max)
    cache = DeleteCache(ctx.io, md.name_mapping())
    added: dict[str, DataFile] = {}
    rewritten: list[FileScanTask] = []
    if progress is not None:
        progress(0, len(groups))
    try:
        for done, group in enumerate(groups, 1):
            rows = read_group(ctx, group, cache)
            if rows is not None:
                # The writer keeps every file it wrote: its answer includes earlier groups'.
                for f in writer.write(rows):
                    added[f.file_path] = f
            rewritten.extend(group)
            if progress is not None:
                progress(done, len(groups))
        producer, dropped = stage_replace(
            transaction,
            ctx,
            rewritten,
            list(added.values()),
            cache,
            branch,
            snapshot_properties,
        )
    except BaseException:
        writer.abort()
        raise
    transaction.stage(WrittenFilesStep(producer, writer))
    logger.info(
        "rewrite_data_files on %s: %d files in %d groups into %d files, %d delete files removed",
        name,
        len(rewritten),
        len(groups),
        len(added),
        dropped,
    )
    return RewriteDataFilesResult(
        rewritten_data_files_count=len(rewritten),
        added_data_files_count=len(added),
        rewritten_bytes_count=sum(t.file.file_size_in_bytes for t in rewritten),
        removed_delete_files_count=dropped,
        snapshot_id=producer.snapshot_id,
    )


def rewrite_data_files(
    table: Table,
    target_file_size_bytes: int | None = None,
    row_filter: Any = None,
    min_input_files: int = 2,
    branch: str | None = None,
    *,
    max_file_group_size_bytes: int = MAX_FILE_GROUP_SIZE_BYTES,
    case_sensitive: bool = True,
    snapshot_properties: Mapping[str, str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RewriteDataFilesResult:
    """Compacts small data files of ``table`` (see the module documentation) in one ``replace``
    snapshot, committed before returning; ``target_file_size_bytes`` defaults to the table's
    ``write.target-file-size-bytes``; ``progress`` as for :func:`stage_rewrite_data_files`."""
    with table.transaction() as tx:
        return stage_rewrite_data_files(
            tx,
            target_file_size_bytes,
            row_filter,
            min_input_files,
            branch,
            max_file_group_size_bytes=max_file_group_size_bytes,
            case_sensitive=case_sensitive,
            snapshot_properties=snapshot_properties,
            progress=progress,
        )
