"""Table scans: which files a snapshot's rows live in (``plan_files``) and reading them to Arrow.

:class:`DataScan` has PyIceberg's shape::

    scan = scan(table, row_filter="id > 5", selected_fields=("id", "data"))
    scan.use_ref("audit").filter("data IS NOT NULL").to_arrow()

Snapshot selection: the current snapshot, ``snapshot_id=``, a branch or tag (``use_ref``), or
the snapshot current at a time (:func:`snapshot_as_of_timestamp`). A scan of a snapshot id or a
tag reads with that snapshot's schema; a branch or the current snapshot with the table's
(as the Java reference and Spark do).

Planning is native (:mod:`frazil.table.scan.plan`: manifests pruned by partition summaries,
files by partition values and column metrics, delete files attached, with the GIL released)
and stays columnar: :meth:`DataScan.plan_files` streams thin task views over the plan's Arrow
columns (:mod:`frazil.table.scan.tasks`), :meth:`DataScan.plan_files_arrow` gives the plan as Arrow
tables (:class:`~frazil.table.scan.arrow_plan.ScanPlan`), and ``count`` sums record counts in Arrow.
"""

from __future__ import annotations

import itertools
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil.arrow_schema import schema_to_arrow
from frazil.exceptions import InvalidArgumentError, ValidationError
from frazil.expressions import AlwaysTrue, And, BooleanExpression, bind, parse
from frazil.metadata import Snapshot, SnapshotRefType, TableMetadata
from frazil.schema import Schema
from frazil.table.metrics_report import ScanCounts
from frazil.table.scan import plan as planning
from frazil.table.scan.arrow_plan import ScanPlan
from frazil.table.scan.handoff import (
    small_batches,
    small_schema,
    to_duckdb,
    to_polars,
    to_polars_lazy,
    to_ray,
    use_large_types,
)
from frazil.table.scan.plan import ColumnStats, ManifestTasks, PlanContext
from frazil.table.scan.read import (
    DEFAULT_BATCH_SIZE,
    METADATA_COLUMNS,
    DeleteCache,
    decode_threads,
    metadata_field,
    prune_schema,
    read_task,
)
from frazil.table.scan.tasks import FileScanTask, content_file_from_json, content_file_to_json
from frazil.types import NestedField, StructType

if TYPE_CHECKING:
    import duckdb
    import pandas as pd
    import polars as pl

    from frazil.io import FileIO
    from frazil.table import Table

__all__ = [
    "DataScan",
    "FileScanTask",
    "ScanPlan",
    "content_file_from_json",
    "content_file_to_json",
    "scan",
    "snapshot_as_of_timestamp",
    "table_partition_type",
]

log = logging.getLogger(__name__)

#: Rows per batch ``to_arrow`` reads (``batch-size`` overrides it).
TO_ARROW_BATCH_SIZE = 1 << 20

#: DataScan option: whether planned data files keep their column stats maps.
STATS_OPTION = "include-column-stats"

ALWAYS_TRUE = AlwaysTrue()

# ---------------------------------------------------------------------------------------------
# snapshot selection and planning


# Plans a scan elsewhere (a REST server): the scan in, its file scan tasks out.
Planner = Callable[["DataScan"], Iterable[FileScanTask]]
# Told what a scan's plan held once planning finished (a catalog's metrics report): the scan,
# its counts, and the nanoseconds planning took.
ScanReporter = Callable[["DataScan", "ScanCounts", int], None]


def snapshot_as_of_timestamp(
    metadata: TableMetadata, timestamp_ms: int, inclusive: bool = True
) -> Snapshot | None:
    """The snapshot that was current on ``main`` at ``timestamp_ms`` (from the snapshot log,
    as Spark's ``TIMESTAMP AS OF``); ``None`` if the table had none then."""
    found = None
    for entry in metadata.snapshot_log:
        if entry.timestamp_ms < timestamp_ms or (inclusive and entry.timestamp_ms == timestamp_ms):
            found = entry.snapshot_id
    return None if found is None else metadata.snapshot_by_id(found)


def table_partition_type(metadata: TableMetadata, schema: Schema | None = None) -> StructType:
    """The struct of ``_partition``: every partition field of every spec whose source column is
    in the schema, by field id, with its newest name (Java's ``Partitioning.partitionType``)."""
    schema = schema if schema is not None else metadata.schema()
    fields: dict[int, NestedField] = {}
    void: set[int] = set()
    for spec in sorted(metadata.partition_specs, key=lambda s: -s.spec_id):
        ptype = spec.partition_type(schema)
        for pf, nf in zip(spec.fields, ptype.fields, strict=True):
            if pf.source_id not in schema.field_ids:
                continue
            is_void = str(pf.transform) == "void"
            if pf.field_id not in fields:
                fields[pf.field_id] = NestedField(nf.field_id, nf.name, nf.field_type, False)
                if is_void:
                    void.add(pf.field_id)
            elif pf.field_id in void and not is_void:
                old = fields[pf.field_id]
                fields[pf.field_id] = NestedField(old.field_id, old.name, nf.field_type, False)
                void.discard(pf.field_id)
    return StructType(*(fields[i] for i in sorted(fields)))


# ---------------------------------------------------------------------------------------------
# the scan


def _as_filter(row_filter: str | BooleanExpression) -> BooleanExpression:
    if isinstance(row_filter, str):
        return parse(row_filter)
    if not isinstance(row_filter, BooleanExpression):
        raise InvalidArgumentError(f"expected a row filter string or expression: {row_filter!r}")
    return row_filter


class DataScan:
    """A scan of one snapshot of a table (immutable: the builder methods return new scans)."""

    def __init__(
        self,
        table_metadata: TableMetadata,
        io: FileIO,
        row_filter: str | BooleanExpression = ALWAYS_TRUE,
        selected_fields: tuple[str, ...] = ("*",),
        case_sensitive: bool = True,
        snapshot_id: int | None = None,
        options: Mapping[str, str] | None = None,
        limit: int | None = None,
        *,
        ref: str | None = None,
        planner: Planner | None = None,
        reporter: ScanReporter | None = None,
    ) -> None:
        self.table_metadata = table_metadata
        self._planner = planner
        self._reporter = reporter
        self.io = io
        self.row_filter = _as_filter(row_filter)
        self.selected_fields = tuple(selected_fields)
        self.case_sensitive = case_sensitive
        self.snapshot_id = snapshot_id
        self.options = dict(options or {})
        self.limit = limit
        self._ref = ref
        if snapshot_id is not None and table_metadata.snapshot_by_id(snapshot_id) is None:
            raise ValidationError(f"snapshot {snapshot_id} is not a snapshot of the table")
        if limit is not None and limit < 0:
            raise InvalidArgumentError(f"limit must not be negative, got {limit}")

    def _update(self, **changes: Any) -> DataScan:
        args: dict[str, Any] = {
            "row_filter": self.row_filter,
            "selected_fields": self.selected_fields,
            "case_sensitive": self.case_sensitive,
            "snapshot_id": self.snapshot_id,
            "options": self.options,
            "limit": self.limit,
            "ref": self._ref,
            "planner": self._planner,
            "reporter": self._reporter,
        }
        args.update(changes)
        return DataScan(self.table_metadata, self.io, **args)

    # ---- builders

    def filter(self, expr: str | BooleanExpression) -> DataScan:
        return self._update(row_filter=And(self.row_filter, _as_filter(expr)))

    def select(self, *field_names: str) -> DataScan:
        if "*" in self.selected_fields:
            return self._update(selected_fields=field_names)
        kept = tuple(n for n in self.selected_fields if n in field_names)
        return self._update(selected_fields=kept)

    def with_case_sensitive(self, case_sensitive: bool = True) -> DataScan:
        return self._update(case_sensitive=case_sensitive)

    def use_ref(self, name: str) -> DataScan:
        """Scans the snapshot a branch or tag points to."""
        if self.snapshot_id is not None:
            raise ValidationError(f"cannot use ref {name!r}: snapshot {self.snapshot_id} is set")
        ref = self.table_metadata.refs.get(name)
        if ref is None:
            raise ValidationError(f"no branch or tag named {name!r}")
        return self._update(snapshot_id=ref.snapshot_id, ref=name)

    def as_of_timestamp(self, timestamp_ms: int) -> DataScan:
        """Scans the snapshot that was current at ``timestamp_ms`` (epoch milliseconds)."""
        snapshot = snapshot_as_of_timestamp(self.table_metadata, timestamp_ms)
        if snapshot is None:
            raise ValidationError(f"the table has no snapshot at or before {timestamp_ms} ms")
        return self._update(snapshot_id=snapshot.snapshot_id, ref=None)

    # ---- what is scanned

    def snapshot(self) -> Snapshot | None:
        if self.snapshot_id is not None:
            return self.table_metadata.snapshot_by_id(self.snapshot_id)
        return self.table_metadata.current_snapshot()

    def table_schema(self) -> Schema:
        """The schema rows are read with: a snapshot id's or tag's own schema, else current."""
        md = self.table_metadata
        by_time_travel = self.snapshot_id is not None and (
            self._ref is None or md.refs[self._ref].snapshot_ref_type == SnapshotRefType.TAG
        )
        snapshot = self.snapshot()
        if by_time_travel and snapshot is not None and snapshot.schema_id is not None:
            s = md.schema_by_id(snapshot.schema_id)
            if s is not None:
                return s
        return md.schema()

    def _metadata_columns(self) -> list[str]:
        return [n for n in self.selected_fields if n in METADATA_COLUMNS]

    def projection(self) -> Schema:
        """The selected table columns (metadata columns excluded)."""
        schema = self.table_schema()
        names = [n for n in self.selected_fields if n not in METADATA_COLUMNS]
        if "*" in names:
            return schema
        ids: set[int] = set()
        for n in names:
            try:
                ids.add(schema.find_field(n, self.case_sensitive).field_id)
            except InvalidArgumentError:
                raise ValidationError(f"cannot select {n!r}: no such column in the table") from None
        pruned = prune_schema(schema, ids)
        # keep the selection's order for top-level columns, as PyIceberg does not reorder
        return pruned

    def _bound_filter(self) -> BooleanExpression:
        try:
            return bind(self.table_schema(), self.row_filter, self.case_sensitive)
        except InvalidArgumentError as e:
            raise ValidationError(f"cannot apply filter {self.row_filter}: {e}") from None

    def include_column_stats(self, include: bool = True) -> DataScan:
        """Whether planned tasks' data files carry their column stats maps (``lower_bounds``,
        ``value_counts``, ...): the ``include-column-stats`` option, on by default for
        :meth:`plan_files` (as PyIceberg's tasks carry them; the Java reference's scans leave
        them out unless asked). Leaving them out skips decoding most of a manifest's bytes
        when the filter does not need them."""
        return self._update(options={**self.options, STATS_OPTION: str(include).lower()})

    def _stats_option(self) -> bool | None:
        value = self.options.get(STATS_OPTION)
        if value is None:
            return None
        text = str(value).strip().lower()
        if text not in ("true", "false"):
            raise InvalidArgumentError(f"{STATS_OPTION} must be true or false, got {value!r}")
        return text == "true"

    def _stats_mode(self, default: ColumnStats) -> ColumnStats:
        stats = self._stats_option()
        if stats is None:
            return default
        return ColumnStats.INCLUDED if stats else ColumnStats.EXCLUDED

    def _plan(self, stats: ColumnStats) -> tuple[PlanContext, Iterator[ManifestTasks]]:
        """The plan's context (delete files planned) and its data manifests, planned run by run
        as they are iterated."""
        return planning.plan_manifests(
            self.io,
            self.table_metadata,
            self.snapshot(),
            self._bound_filter(),
            schema=self.table_schema(),
            stats=stats,
        )

    def plan_files(self) -> Iterator[FileScanTask]:
        """The tasks of this scan: data files whose rows may match, with their deletes.

        Tasks stream out as manifests are planned (a run of them at a time) and are thin views
        of the plan's Arrow columns (:class:`~frazil.table.scan.tasks.PlannedFileScanTask`): each
        attribute is read when asked for. Their data files' column stats maps are decoded
        from the manifest when first asked for, unless :meth:`include_column_stats` decided
        (``True``: decoded while planning; ``False``: ``None``). A catalog that plans on its
        server (the REST catalog's ``rest.scan-planning``) supplies the tasks instead."""
        if self._planner is not None:
            return self._planned()
        _, groups = self._plan(self._stats_mode(ColumnStats.ON_ACCESS))
        return self._reported(itertools.chain.from_iterable(g.tasks() for g in groups))

    def _planned(self) -> Iterator[FileScanTask]:
        """The catalog planner's tasks, counted for the reporter. A planner that hands out its
        tasks page by page (``plan_pages``: each page's Arrow ``tasks`` and ``delete_files``
        with its task views) is counted a page at a time, not a task at a time."""
        pages = getattr(self._planner, "plan_pages", None)
        if pages is None or self._reporter is None:
            assert self._planner is not None
            return self._reported(iter(self._planner(self)))
        return self._count_pages_and_report(pages(self), self._reporter)

    def _count_pages_and_report(
        self,
        pages: Iterator[tuple[pa.Table, pa.Table, Iterator[FileScanTask]]],
        reporter: ScanReporter,
    ) -> Iterator[FileScanTask]:
        started = time.perf_counter_ns()
        counts = ScanCounts()
        for tasks, deletes, views in pages:
            counts.add_page(tasks, deletes)
            yield from views
        reporter(self, counts, time.perf_counter_ns() - started)

    def _reported(self, tasks: Iterator[FileScanTask]) -> Iterator[FileScanTask]:
        """``tasks``, counted for the reporter (if any), which hears once they run out. The
        time is the iteration's: a consumer reading between tasks adds its own."""
        if self._reporter is None:
            return tasks
        return self._count_and_report(tasks, self._reporter)

    def _count_and_report(
        self, tasks: Iterator[FileScanTask], reporter: ScanReporter
    ) -> Iterator[FileScanTask]:
        started = time.perf_counter_ns()
        counts = ScanCounts()
        for t in tasks:
            counts.add(t)
            yield t
        reporter(self, counts, time.perf_counter_ns() - started)

    def plan_files_arrow(self) -> ScanPlan:
        """The whole plan as Arrow (:class:`~frazil.table.scan.arrow_plan.ScanPlan`): one row per
        task in ``tasks`` with the data file's columns, its residual and the indices of its
        delete files in ``delete_files``; column stats maps only with
        :meth:`include_column_stats`. No Python object per task is built (except where a
        catalog plans on its server: its tasks are turned into the same tables, without the
        entries' status and snapshot id, which the REST protocol does not carry)."""
        started = time.perf_counter_ns()
        # A catalog's planner may give the plan as Arrow itself (the REST catalog's pages).
        plan_arrow = getattr(self._planner, "plan_arrow", None)
        if plan_arrow is not None:
            out: ScanPlan = plan_arrow(self)
        elif self._planner is not None:
            out = ScanPlan.from_tasks(
                list(self._planner(self)),
                self.table_schema(),
                self.table_metadata.specs(),
                table_partition_type(self.table_metadata, self.table_schema()),
                stats=self._stats_option() is True,
            )
        else:
            plan, groups = self._plan(self._stats_mode(ColumnStats.EXCLUDED))
            out = ScanPlan.from_groups(
                plan, list(groups), table_partition_type(self.table_metadata, plan.schema)
            )
        if self._reporter is not None:
            self._reporter(self, ScanCounts.from_plan(out), time.perf_counter_ns() - started)
        return out

    def plan_files_arrow_stream(self) -> tuple[ScanPlan, Iterator[pa.RecordBatch]]:
        """:meth:`plan_files_arrow` as it is planned: the plan without its tasks (its delete
        files and the tasks' schema), and the tasks' record batches in plan order, each
        planned as it is reached (a batch per planned manifest). The batches' ``residual``
        dictionaries may differ (each holds the residuals planned so far)."""
        if self._planner is not None:
            whole = self.plan_files_arrow()
            return whole.with_batches([]), iter(whole.tasks.to_batches())
        started = time.perf_counter_ns()
        plan, groups = self._plan(self._stats_mode(ColumnStats.EXCLUDED))
        head, batches = ScanPlan.streamed(
            plan, groups, table_partition_type(self.table_metadata, plan.schema)
        )
        if self._reporter is None:
            return head, batches
        return head, self._count_batches_and_report(head, batches, self._reporter, started)

    def _count_batches_and_report(
        self,
        head: ScanPlan,
        batches: Iterator[pa.RecordBatch],
        reporter: ScanReporter,
        started: int,
    ) -> Iterator[pa.RecordBatch]:
        counts = ScanCounts()
        for b in batches:
            counts.add_page(pa.Table.from_batches([b]), head.delete_files)
            yield b
        reporter(self, counts, time.perf_counter_ns() - started)

    def _tasks_to_read(self) -> Iterator[FileScanTask]:
        """Tasks for this scan's own reads, streaming: the reader needs no column stats (the
        residual is evaluated on the rows), so they are not decoded unless the option asks."""
        if self._planner is not None:
            return self._planned()
        _, groups = self._plan(self._stats_mode(ColumnStats.EXCLUDED))
        return self._reported(itertools.chain.from_iterable(g.tasks() for g in groups))

    # ---- reading

    def arrow_schema(self) -> pa.Schema:
        schema = schema_to_arrow(self.projection())
        ptype = table_partition_type(self.table_metadata, self.table_schema())
        meta = [metadata_field(n, ptype) for n in self._metadata_columns()]
        return pa.schema(list(schema) + list(schema_to_arrow(Schema(*meta))))

    def _task_reader(
        self, default_batch_size: int = DEFAULT_BATCH_SIZE, files_at_once: int = 1
    ) -> Callable[[FileScanTask], Iterator[pa.RecordBatch]]:
        """Reads one task; ``files_at_once``: how many tasks the caller reads concurrently
        (each decodes on its share of the cores)."""
        schema = self.table_schema()
        projected = self.projection()
        ptype = table_partition_type(self.table_metadata, schema)
        mapping = self.table_metadata.name_mapping()
        cache = DeleteCache(self.io, mapping)
        meta = self._metadata_columns()
        batch_size = int(self.options.get("batch-size", default_batch_size))
        threads = decode_threads(files_at_once)

        def read(task: FileScanTask) -> Iterator[pa.RecordBatch]:
            return read_task(
                task,
                self.io,
                schema,
                projected,
                metadata_columns=meta,
                partition_type=ptype,
                name_mapping=mapping,
                delete_cache=cache,
                batch_size=batch_size,
                decode_threads=threads,
            )

        return read

    def _batches(self, tasks: Iterable[FileScanTask] | None = None) -> Iterator[pa.RecordBatch]:
        tasks = self._tasks_to_read() if tasks is None else tasks
        read = self._task_reader()
        remaining = self.limit
        for task in tasks:
            if remaining is not None and remaining <= 0:
                return
            for batch in read(task):
                if remaining is not None:
                    if batch.num_rows >= remaining:
                        yield batch.slice(0, remaining)
                        remaining = 0
                        return
                    remaining -= batch.num_rows
                yield batch

    def _large_types(self) -> bool:
        return use_large_types(self.options, self.table_metadata.properties)

    def to_batches(self) -> pa.RecordBatchReader:
        """A streaming reader over the scan's rows (one task after another)."""
        reader = pa.RecordBatchReader.from_batches(self.arrow_schema(), self._batches())
        if self._large_types():
            return reader

        small = small_schema(reader.schema)
        return pa.RecordBatchReader.from_batches(small, small_batches(reader, small))

    def to_arrow_batch_reader(self) -> pa.RecordBatchReader:
        """PyIceberg's name for :meth:`to_batches`."""
        return self.to_batches()

    def to_arrow(self) -> pa.Table:
        """Every row at once. Without a limit, tasks are read concurrently (pyarrow decodes
        with the GIL released), in task order."""
        if self.limit is not None:
            return self._out(
                pa.Table.from_batches(list(self._batches()), schema=self.arrow_schema())
            )
        tasks = list(self._tasks_to_read())
        workers = int(self.options.get("read-threads", min(8, os.cpu_count() or 1)))
        # Everything is materialized anyway: batches of up to a row group's size, not a
        # streaming reader's (fewer, larger decodes: about 10% less time).
        read = self._task_reader(TO_ARROW_BATCH_SIZE, max(1, min(workers, len(tasks))))
        if workers <= 1 or len(tasks) <= 1:
            batches = [b for t in tasks for b in read(t)]
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                parts = list(pool.map(lambda t: list(read(t)), tasks))
            batches = [b for part in parts for b in part]
        return self._out(pa.Table.from_batches(batches, schema=self.arrow_schema()))

    def _out(self, table: pa.Table) -> pa.Table:
        if self._large_types():
            return table

        return table.cast(small_schema(table.schema))

    def to_pandas(self, **kwargs: Any) -> pd.DataFrame:
        return self.to_arrow().to_pandas(**kwargs)

    def to_duckdb(
        self, table_name: str, connection: duckdb.DuckDBPyConnection | None = None
    ) -> duckdb.DuckDBPyConnection:
        """The rows registered as ``table_name`` in ``connection`` (default: a new in-memory
        DuckDB), which is returned."""
        return to_duckdb(self, table_name, connection)

    def to_polars(self) -> pl.DataFrame:
        """The rows as a Polars DataFrame (eager, as PyIceberg's ``DataScan.to_polars``)."""
        return to_polars(self)

    def to_polars_lazy(self) -> pl.LazyFrame:
        """A Polars LazyFrame over this scan (``Table.to_polars()``)."""
        return to_polars_lazy(self)

    def to_ray(self) -> Any:
        """A Ray Dataset of the rows; needs Ray installed (a clear error otherwise)."""
        return to_ray(self)

    def count(self) -> int:
        """The number of rows: from the plan's record counts for tasks without deletes or a
        residual (in Arrow), by reading the others."""
        if self._planner is not None:
            return self._count_tasks(list(self._planner(self)))
        plan, groups = self._plan(self._stats_mode(ColumnStats.EXCLUDED))
        total = 0
        to_read: list[FileScanTask] = []
        for g in groups:
            exact = [isinstance(r, AlwaysTrue) for r in plan.residuals]
            whole = pc.and_(
                pc.equal(pc.list_value_length(g.deletes), 0),
                pc.take(pa.array(exact, pa.bool_()), g.residuals),
            )
            counts = g.entries.column("data_file").combine_chunks().field("record_count")
            total += pc.sum(pc.filter(counts, whole)).as_py() or 0
            if not pc.all(whole).as_py():
                to_read.extend(g.tasks_at(pc.indices_nonzero(pc.invert(whole)).to_pylist()))
            if self.limit is not None and total >= self.limit:
                return self.limit
        if to_read:
            counter = self._update(selected_fields=("_pos",), limit=None)
            total += sum(b.num_rows for b in counter._batches(to_read))
        if self.limit is not None:
            total = min(total, self.limit)
        return total

    def _count_tasks(self, tasks: list[FileScanTask]) -> int:
        """``count`` over tasks a catalog planned: record counts where nothing filters rows."""
        total = 0
        to_read = []
        for t in tasks:
            if not t.delete_files and isinstance(t.residual, AlwaysTrue) and t.start is None:
                total += t.file.record_count
            else:
                to_read.append(t)
        if to_read:
            counter = self._update(selected_fields=("_pos",), limit=None)
            total += sum(b.num_rows for b in counter._batches(to_read))
        return total if self.limit is None else min(total, self.limit)


def scan(
    table: Table,
    row_filter: str | BooleanExpression = ALWAYS_TRUE,
    selected_fields: tuple[str, ...] = ("*",),
    case_sensitive: bool = True,
    snapshot_id: int | None = None,
    options: Mapping[str, str] | None = None,
    limit: int | None = None,
) -> DataScan:
    """A :class:`DataScan` of a :class:`~frazil.table.Table` (``Table.scan`` delegates here).
    A catalog may plan scans itself: its ``_scan_planner(table)`` gives the planner (or
    ``None`` for planning here)."""
    # Looked up on the class: a stand-in catalog (StaticTable's) answers any attribute.
    planner_for = getattr(type(table.catalog), "_scan_planner", None)
    reporter_for = getattr(type(table.catalog), "_scan_reporter", None)
    return DataScan(
        table.metadata,
        table.io,
        row_filter=row_filter,
        selected_fields=selected_fields,
        case_sensitive=case_sensitive,
        snapshot_id=snapshot_id,
        options=options,
        limit=limit,
        planner=planner_for(table.catalog, table) if planner_for is not None else None,
        reporter=reporter_for(table.catalog, table) if reporter_for is not None else None,
    )
