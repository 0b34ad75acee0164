"""Row-level changes: ``overwrite`` by filter and ``delete`` by filter, copy-on-write or
merge-on-read, and the machinery :mod:`frazil.table.write.upsert` shares with them.

Every operation plans the files of the branch head that may hold affected rows (the native
planner: partition and metrics pruning, delete files attached) and then, per file:

* a file whose rows all match the filter (its residual is ``true``, or the strict metrics
  evaluator, :class:`frazil.expressions.metrics_evaluator.StrictMetricsEvaluator`, proves it
  from the file's bounds and null/NaN counts) is removed without being read, together with its
  deletion vector;
* otherwise its live rows are read (deletes applied) and the matching ones found with the
  filter's SQL semantics (a row is affected only where the filter is *true*; null keeps it);
* copy-on-write (``write.delete.mode`` / ``write.merge.mode`` = ``copy-on-write``, the default)
  rewrites the file without them; merge-on-read writes a deletion vector (v3: one
  ``deletion-vector-v1`` blob per data file in a Puffin file, merged with the file's existing
  DV and file-scoped position deletes, which are removed in the same commit) or a position
  delete file (v2: Parquet, ``file_path``/``pos`` with the reserved field ids, sorted, full
  metrics for both columns as Java's ``MetricsConfig.forPositionDelete``).

v3 row lineage (spec "Row Lineage"): rows moved by a rewrite keep ``_row_id`` and
``_last_updated_sequence_number``; rows an upsert modifies keep ``_row_id`` and get a null
``_last_updated_sequence_number`` (the commit's sequence number is inherited); new rows get
both null. The columns are written with their reserved field ids.

One snapshot per operation, through a row delta (``overwrite``/``delete``/``append`` as the
change warrants) planned on the table as it is when the commit is built (the transaction
refreshes a stale handle first) and validated on every retry: files removed must still be live
and have no new deletes, under serializable isolation (``write.<op>.isolation-level``, default
serializable) no concurrently added data file may match the filter, and no concurrent commit
may have added deletes for, or removed, a data file this commit adds deletes for. A plan that
fails those checks is not an error: :class:`RowLevelStep` deletes what it wrote and plans again
on the new head, so deletes and overwrites land under steady concurrent appends. Everything
written is deleted if the commit does not land.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from frazil.exceptions import ValidationError
from frazil.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    BooleanExpression,
    as_filter,
    bind,
)
from frazil.expressions.metrics_evaluator import StrictMetricsEvaluator
from frazil.manifest.content_file import (
    DataFile,
    DataFileContent,
    data_files_to_arrow,
    is_deletion_vector,
)
from frazil.manifest.deletes import DeletionVector
from frazil.metadata import MAIN_BRANCH, Operation, Snapshot, TableMetadata
from frazil.schema import Schema
from frazil.table.scan.filter import referenced_field_ids
from frazil.table.scan.read import (
    FILE_PATH_FIELD_ID,
    DeleteCache,
    prune_schema,
)
from frazil.table.step import TransactionStep
from frazil.table.update import TableUpdate
from frazil.table.update.snapshot import DELETED, RowDelta
from frazil.table.write.conform import as_table, conform
from frazil.table.write.delete_writer import DeleteWriter
from frazil.table.write.row_context import (
    COPY_ON_WRITE,
    POS,
    LineageWriter,
    RowContext,
    data_columns,
)
from frazil.table.write.writer import DataFileWriter, WrittenFilesStep

if TYPE_CHECKING:
    from frazil.table.scan import FileScanTask
    from frazil.table.transaction import Transaction

__all__ = ["RowLevelStep", "delete", "overwrite"]

logger = logging.getLogger(__name__)

DELETE_MODE = "write.delete.mode"
UPDATE_MODE = "write.update.mode"
MERGE_MODE = "write.merge.mode"
DELETE_ISOLATION = "write.delete.isolation-level"
MERGE_ISOLATION = "write.merge.isolation-level"
DELETE_GRANULARITY = "write.delete.granularity"


# ---------------------------------------------------------------------------------------------
# The snapshot producer and its transaction step


class _RowChange(RowDelta):
    """A row delta that names its operation as Java does and validates the data files it adds
    deletes for (they must still be live, with no delete added concurrently)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.referenced: set[str] = set()

    def _operation(self) -> str:
        adds_data = any(f.content == DataFileContent.DATA for f in self._added.values())
        changes = bool(
            self._delete_paths
            or any(f.content != DataFileContent.DATA for f in self._added.values())
        )
        if adds_data and changes:
            return Operation.OVERWRITE
        if adds_data:
            return Operation.APPEND
        return Operation.DELETE

    def _validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        super()._validate(base, parent)
        if not self.referenced or parent is None or parent.snapshot_id == self._validate_from:
            return
        name = self._table_name()
        for d in self._files_added_since(
            base, parent, 1, {Operation.OVERWRITE, Operation.DELETE, Operation.REPLACE}
        ):
            hit = d.referenced_data_file in self.referenced if d.referenced_data_file else None
            if hit or (hit is None and self._partition_touched(d)):
                raise ValidationError(
                    f"{name}: found new delete file {d.file_path} for a data file this commit "
                    "deletes rows from; retry the operation"
                )
        removed = self._files_removed_since(base, parent)
        gone = sorted(self.referenced & removed)
        if gone:
            raise ValidationError(
                f"{name}: data files this commit deletes rows from were removed concurrently: "
                f"{', '.join(gone[:10])}"
            )

    def _partition_touched(self, d: DataFile) -> bool:
        # A partition-scoped position delete file may name our files (its bounds may tell).
        if d.content != DataFileContent.POSITION_DELETES:
            return False
        lo = (d.lower_bounds or {}).get(FILE_PATH_FIELD_ID)
        hi = (d.upper_bounds or {}).get(FILE_PATH_FIELD_ID)
        for p in self.referenced:
            b = p.encode()
            if (lo is None or lo <= b) and (hi is None or b <= hi):
                return True
        return False

    def _files_removed_since(self, base: TableMetadata, parent: Snapshot | None) -> set[str]:
        operations = {Operation.OVERWRITE, Operation.DELETE, Operation.REPLACE}
        out: set[str] = set()
        for _, entries in self._entries_added_since(base, parent, 0, operations, DELETED):
            out.update(pc.struct_field(entries.column("data_file"), "file_path").to_pylist())
        return out


def _delete_key(path: str, offset: int | None) -> str:
    return f"{path}#{'' if offset is None else offset}"


class RowLevelStep(TransactionStep):
    """A change computed from the table's rows (delete, overwrite or upsert by filter), planned
    against the base it is applied to and planned again when that plan no longer holds.

    ``plan`` reads the branch head of the base it is given and writes the change's files,
    returning the step that commits them (``None`` when nothing changes). On a retry against a
    newer head the existing plan is kept if it still validates there (its files are live, no
    delete was added for them, and under serializable isolation no data file added since can
    match its filter), as the Java reference's producers keep theirs; otherwise everything it
    wrote is deleted and it is planned again on the new head. A plan made on a snapshot staged
    by an earlier step of the same transaction cannot be validated that way (that snapshot
    keeps its id on every attempt), so it is redone whenever the transaction's base moves. The
    branch is declared read, so a plan that changed nothing still fails the commit, and is
    redone, when the branch moved."""

    def __init__(
        self,
        transaction: Transaction,
        plan: Callable[[TableMetadata], TransactionStep | None],
        branch: str | None,
    ) -> None:
        self._transaction = transaction
        self._plan = plan
        self._branch = branch or MAIN_BRANCH
        self._inner: TransactionStep | None = None
        self._planned = False
        self._planned_head: int | None = None
        self._planned_base: TableMetadata | None = None
        self._head_committed = False

    def refs_read(self) -> Collection[str]:
        return (self._branch,)

    def _head(self, base: TableMetadata) -> int | None:
        ref = base.refs.get(self._branch)
        return None if ref is None else ref.snapshot_id

    def _replan(self, base: TableMetadata, attempt: int) -> list[TableUpdate]:
        self._inner = None
        head = self._head(base)
        committed = self._transaction.base_metadata
        self._inner = self._plan(base)
        self._planned = True
        self._planned_head = head
        self._planned_base = committed
        self._head_committed = head is None or committed.snapshot_by_id(head) is not None
        return [] if self._inner is None else self._inner.apply(base, attempt)

    def apply(self, base: TableMetadata, attempt: int) -> list[TableUpdate]:
        if not self._planned:
            return self._replan(base, attempt)
        head = self._head(base)
        same_base = self._planned_base is self._transaction.base_metadata
        if head == self._planned_head and (same_base or self._head_committed):
            return [] if self._inner is None else self._inner.apply(base, attempt)
        if self._inner is not None and self._head_committed:
            try:
                return self._inner.apply(base, attempt)
            except ValidationError as e:
                # The inner step deleted what it wrote before raising.
                logger.info("%s; planning the change again on snapshot %s", e, head)
        elif self._inner is not None:
            self._inner.on_abort()
        return self._replan(base, attempt)

    def on_commit(self, committed: TableMetadata) -> None:
        if self._inner is not None:
            self._inner.on_commit(committed)

    def on_abort(self) -> None:
        if self._inner is not None:
            self._inner.on_abort()


# ---------------------------------------------------------------------------------------------
# Planning and reading the affected files


@dataclass
class _Change:
    """What one operation stages: files removed, rewritten rows, new deletes per file."""

    ctx: RowContext
    removed: dict[str, FileScanTask] = field(default_factory=dict)
    rewritten: list[pa.Table] = field(default_factory=list)
    positions: dict[str, tuple[FileScanTask, np.ndarray]] = field(default_factory=dict)

    def remove_file(self, task: FileScanTask) -> None:
        self.removed[task.file.file_path] = task

    def delete_positions(self, task: FileScanTask, pos: np.ndarray, live_rows: int) -> None:
        """Deletes rows of a file: copy-on-write rewrites are the caller's; here merge-on-read
        positions, or the whole file when no live row remains."""
        if len(pos) == 0:
            return
        if len(pos) >= live_rows:
            self.remove_file(task)
            return
        self.positions[task.file.file_path] = (task, pos)

    def build(
        self,
        new_data: Sequence[pa.Table],
        snapshot_properties: Mapping[str, str] | None,
        conflict: BooleanExpression | None,
    ) -> WrittenFilesStep | None:
        """Writes the change's files; returns the step that commits them (``None``: no change)."""
        ctx = self.ctx
        tx = ctx.transaction
        if not self.removed and not self.positions and not any(t.num_rows for t in new_data):
            return None
        writers: list[DataFileWriter] = []
        deletes = DeleteWriter(ctx.io, ctx.metadata, ctx.operation_id)
        producer = _RowChange(tx, snapshot_properties, ctx.branch)
        try:
            for table in [*_concat(self.rewritten), *new_data]:
                if table.num_rows == 0:
                    continue
                w = LineageWriter(ctx.io, ctx.metadata, operation_id=uuid.uuid4())
                writers.append(w)
                for f in w.write(table):
                    producer.append_data_file(f)
            # a removed data file's DV goes with it in the producer (the spec's rule)
            for task in self.removed.values():
                producer.delete_data_file(task.file)
            self._stage_positions(producer, deletes)
            if conflict is not None and ctx.isolation == "serializable":
                producer.conflict_detection(conflict, ctx.schema)
            producer.isolation_level(ctx.isolation)
            if ctx.snapshot is not None:
                producer.validate_from_snapshot(ctx.snapshot.snapshot_id)
        except BaseException:
            for writer in writers:
                writer.abort()
            deletes.abort()
            raise
        return WrittenFilesStep(producer, *writers, deletes)

    def _stage_positions(self, producer: _RowChange, deletes: DeleteWriter) -> None:
        ctx = self.ctx
        if not self.positions:
            return
        dropped: set[str] = set()
        cache = DeleteCache(ctx.io, ctx.metadata.name_mapping())
        dvs: list[tuple[DataFile, DeletionVector]] = []
        for path, (task, pos) in self.positions.items():
            producer.referenced.add(path)
            if ctx.v3:
                old = ctx.existing_positions(task, cache)
                dvs.append((task.file, DeletionVector.from_positions(np.concatenate([old, pos]))))
                # The new DV replaces the file's DV and its file-scoped position deletes.
                for d in task.delete_files:
                    if d.content != DataFileContent.POSITION_DELETES:
                        continue
                    key = _delete_key(d.file_path, d.content_offset)
                    targets = is_deletion_vector(d) or d.referenced_data_file == path
                    if targets and key not in dropped:
                        dropped.add(key)
                        producer.delete_delete_file(d)
            else:
                producer.add_delete_file(deletes.write_position_deletes(task.file, pos))
        for d in deletes.write_dvs(dvs):
            producer.add_delete_file(d)


def _matched_positions(
    rows: pa.Table, bound: BooleanExpression, schema: Schema, cache: DeleteCache
) -> np.ndarray:
    """``_pos`` of the rows the filter makes true (the spec's 2-valued semantics)."""
    if not isinstance(bound, AlwaysTrue):
        rows = cache.row_filter(bound, schema).filter_table(rows)
    positions: np.ndarray = rows.column(POS).to_numpy()
    return positions


def _without(rows: pa.Table, pos: np.ndarray) -> pa.Table:
    if len(pos) == 0:
        return rows
    keep = pc.invert(pc.is_in(rows.column(POS), value_set=pa.array(pos, pa.int64())))
    return rows.filter(keep)


def _all_rows_match(
    ctx: RowContext, files: Sequence[DataFile], residuals: Sequence[BooleanExpression]
) -> list[bool]:
    """Per file, whether every row makes its residual true (the spec's semantics, as the rows
    read are matched): the residual is ``true``, or the strict metrics evaluator proves it from the
    file's metrics (one Arrow batch of the files, each distinct residual evaluated natively
    over its own files)."""
    out = [isinstance(r, AlwaysTrue) for r in residuals]
    by_residual: dict[int, list[int]] = {}
    for i, r in enumerate(residuals):
        if not isinstance(r, (AlwaysTrue, AlwaysFalse)):
            # The planner hands every task of one residual the same object.
            by_residual.setdefault(id(r), []).append(i)
    if not by_residual:
        return out
    todo = [i for group in by_residual.values() for i in group]
    batch = data_files_to_arrow([files[i] for i in todo], None, ctx.metadata.format_version)
    start = 0
    for group in by_residual.values():
        rows = batch.slice(start, len(group))
        start += len(group)
        evaluator = StrictMetricsEvaluator(ctx.schema, residuals[group[0]])
        proven = evaluator.eval(rows)
        for i, must in zip(group, proven.to_pylist(), strict=True):
            out[i] = bool(must)
    return out


def _delete_rows(change: _Change, bound: BooleanExpression) -> int:
    """Stages the removal of every row ``bound`` makes true; returns how many rows."""
    ctx = change.ctx
    cache = DeleteCache(ctx.io, ctx.metadata.name_mapping())
    deleted = 0
    tasks = ctx.tasks(bound)
    residuals = [t.residual if t.residual is not None else bound for t in tasks]
    proven = _all_rows_match(ctx, [t.file for t in tasks], residuals)
    for task, residual, all_match in zip(tasks, residuals, proven, strict=True):
        if isinstance(residual, AlwaysFalse):
            continue
        if all_match:
            change.remove_file(task)
            deleted += task.file.record_count
            continue
        # Merge-on-read only writes positions: read the filter's columns, not whole rows.
        projected = (
            prune_schema(ctx.schema, referenced_field_ids(residual))
            if ctx.mode != COPY_ON_WRITE
            else None
        )
        rows = ctx.read(task, cache, projected)
        pos = _matched_positions(rows, residual, ctx.schema, cache)
        if len(pos) == 0:
            continue
        deleted += len(pos)
        if ctx.mode == COPY_ON_WRITE:
            kept = _without(rows, pos)
            change.remove_file(task)
            if kept.num_rows:
                change.rewritten.append(data_columns(kept))
        else:
            change.delete_positions(task, pos, rows.num_rows)
    return deleted


# ---------------------------------------------------------------------------------------------
# The operations


def delete(
    transaction: Transaction,
    delete_filter: str | BooleanExpression,
    snapshot_properties: Mapping[str, str] | None = None,
    case_sensitive: bool = True,
    branch: str | None = None,
) -> None:
    """Stages the deletion of the rows for which ``delete_filter`` is true (planned on the
    staged metadata, and again on a retry whose head invalidates the plan)."""
    expr = as_filter(delete_filter)

    def plan(base: TableMetadata) -> TransactionStep | None:
        ctx = RowContext.make(transaction, base, branch, DELETE_MODE, DELETE_ISOLATION)
        bound = bind(ctx.schema, expr, case_sensitive)
        change = _Change(ctx)
        if _delete_rows(change, bound) == 0:
            logger.info("delete from %s matched no rows", transaction.table.full_name())
        return change.build([], snapshot_properties, bound)

    transaction.stage(RowLevelStep(transaction, plan, branch))


def overwrite(
    transaction: Transaction,
    df: Any,
    overwrite_filter: str | BooleanExpression | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
    case_sensitive: bool = True,
    branch: str | None = None,
) -> None:
    """Stages the deletion of the rows matching ``overwrite_filter`` (default: all) and the
    append of ``df``, as one snapshot (planned again like :func:`delete`'s)."""
    expr = as_filter(overwrite_filter)
    data = df if isinstance(df, pa.Table) else pa.table(df) if isinstance(df, dict) else df
    if isinstance(data, pa.Table):
        # Checked before anything is read or written.
        conform(data.schema, transaction.table_metadata.schema())
    data = as_table(data)  # read once: a re-plan writes it again

    def plan(base: TableMetadata) -> TransactionStep | None:
        ctx = RowContext.make(transaction, base, branch, DELETE_MODE, DELETE_ISOLATION)
        bound = bind(ctx.schema, expr, case_sensitive)
        change = _Change(ctx)
        _delete_rows(change, bound)
        return change.build([data], snapshot_properties, bound)

    transaction.stage(RowLevelStep(transaction, plan, branch))


def _concat(tables: Iterable[pa.Table]) -> list[pa.Table]:
    tables = [t for t in tables if t.num_rows]
    if not tables:
        return []
    return [pa.concat_tables(tables, promote_options="permissive")]
