"""Native scan planning: which data files a scan reads, their delete files and residuals.

:func:`plan_manifests` reads the snapshot's manifest list, prunes manifests by their partition
summaries (native), reads and plans the delete manifests first (the scan's delete files,
indexed natively), then reads and plans the data manifests in runs of
:data:`PLAN_RUN_MANIFESTS`, in a pipeline: one run is read while the one before it is decoded and
planned on several threads with the GIL released, while the caller iterates the tasks of the
run before that: entries are selected by status, partition
projection and column metrics, each gets its residual, and delete files are attached per the
spec's "Scan Planning" rules (deletion vectors by ``referenced_data_file``, position deletes by
partition or referenced file with data sequence number <= theirs, equality deletes by
partition or globally with data sequence number < theirs). It yields one
:class:`ManifestTasks` per data manifest with selected entries, as soon as its run is
planned: nothing is done per file in Python, and memory holds two runs of manifest bytes.

A :class:`ManifestTasks` holds, for one manifest:

- ``manifest_path`` (str) and ``spec_id`` (int): the manifest and the partition spec that all
  of its entries were written with;
- ``entries``: a ``pyarrow.Table`` with one row per task (a live ``manifest_entry`` whose
  partition and metrics might match), in manifest order, shaped like
  :func:`frazil.manifest.read_manifest`'s output (``status``, ``snapshot_id``,
  ``sequence_number``, ``file_sequence_number`` (inherited), ``data_file`` struct), with the
  column stats maps only when the plan includes them (see :class:`ColumnStats`);
- ``positions``: ``pyarrow.Int64Array``, each row's position among the manifest's entries;
- ``residuals``: ``pyarrow.Int32Array``, one per row: index into the plan's residuals;
- ``deletes``: ``pyarrow.ListArray`` of ``int32``, one list per row: the row's delete files as
  indices into the plan's delete files (empty list: none);
- ``plan``: the :class:`PlanContext` they share (schema, specs, delete files, residuals).

Its rows are read as :class:`~frazil.table.scan.tasks.PlannedFileScanTask` views (``tasks()``),
each column turned into Python values once per manifest, on first use.

:func:`plan_files` plans the whole scan into a :class:`PlannedFiles`.
"""

from __future__ import annotations

import bisect
import enum
import functools
import itertools
import json
import logging
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import _native
from frazil.exceptions import FrazilError, io_error
from frazil.expressions import AlwaysTrue, BooleanExpression, from_json
from frazil.expressions.binding import bind
from frazil.expressions.json import to_json_text
from frazil.io import FileIO, location_scheme
from frazil.manifest import inline_manifest_list, list_entry, read_manifest, read_manifest_list
from frazil.manifest.content_file import DataFile, data_files_from_entries
from frazil.metadata import Snapshot, TableMetadata
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.table.scan.tasks import PlannedFileScanTask

__all__ = [
    "PLAN_RUN_BYTES",
    "PLAN_RUN_MANIFESTS",
    "ColumnStats",
    "ManifestTasks",
    "PlanContext",
    "PlannedFiles",
    "data_file_values",
    "plan_files",
    "plan_manifests",
    "planner_for",
    "read_files",
    "snapshot_manifests",
]

log = logging.getLogger(__name__)

#: Data manifests read and planned per native call: the first tasks come out after one run,
#: and memory holds one run's manifest bytes (plus the next run's, read meanwhile).
PLAN_RUN_MANIFESTS = 16
#: ... and at least this many bytes of them: a run of small manifests (one per commit, as
#: PyIceberg's appends leave them) costs a pipeline step of its own per run, more than
#: planning a few KB takes (120 one-entry manifests: 15 ms in runs of 16, 11 ms in one).
PLAN_RUN_BYTES = 4 << 20

_EMPTY_DELETES = pa.ListArray.from_arrays(pa.array([0], pa.int32()), pa.array([], pa.int32()))
_ENTRY_COLUMNS = ("status", "snapshot_id", "sequence_number", "file_sequence_number")
# The data_file fields that hold column stats (their maps come from the stats source).
_STATS = frozenset(_native.COLUMN_STATS)
_MAPS = _STATS
_LISTS = frozenset(("split_offsets", "equality_ids"))


def data_file_values(arr: pa.Array, name: str) -> list[Any]:
    """The Python values of data_file field ``name`` as :class:`DataFile` holds them (stats
    maps as dicts, lists as tuples), for the task views of a plan, local or fetched."""
    values = arr.to_pylist()
    if name in _MAPS:
        return [None if v is None else dict(v) for v in values]
    if name in _LISTS:
        return [None if v is None else tuple(v) for v in values]
    return values  # type: ignore[no-any-return]


class ColumnStats(enum.Enum):
    """Whether planned data files carry their column stats maps (``lower_bounds``, ...)."""

    #: decoded while planning, kept in the entries
    INCLUDED = "included"
    #: not kept; decoded from the manifest when a task's data file is asked for them
    ON_ACCESS = "on-access"
    #: left out: ``None``, as the Java reference's scans without ``includeColumnStats()``
    EXCLUDED = "excluded"


@dataclass
class PlanContext:
    """What the planned manifests of one scan share."""

    io: FileIO
    metadata: TableMetadata
    schema: Schema
    specs: dict[int, PartitionSpec]
    stats: ColumnStats
    delete_groups: list[ManifestTasks] = field(default_factory=list)
    residuals: list[BooleanExpression] = field(default_factory=list)
    _residual_ids: dict[str, int] = field(default_factory=dict, repr=False)
    #: the bound filter and the planner's JSON of it: a residual equal to the whole filter is
    #: this object, not a parse of its JSON (a filter of 100k terms parses for seconds)
    filter: BooleanExpression = field(default_factory=AlwaysTrue)
    filter_text: str | None = None

    @functools.cached_property
    def delete_files(self) -> list[DataFile]:
        """Every selected delete file, numbered as the ``deletes`` indices number them."""
        out: list[DataFile] = []
        for g in self.delete_groups:
            out.extend(data_files_from_entries(g.entries, g.spec_id))
        return out

    def number_residuals(self, texts: Sequence[str], local: pa.Int32Array) -> pa.Int32Array:
        """Renumbers a native call's residual indices (``local`` into ``texts``, JSON) into
        this plan's :attr:`residuals`, parsing each distinct residual once."""
        remap = []
        for text in texts:
            k = self._residual_ids.get(text)
            if k is None:
                k = self._residual_ids[text] = len(self.residuals)
                if text == self.filter_text:
                    self.residuals.append(self.filter)
                else:
                    self.residuals.append(from_json(json.loads(text), self.schema))
            remap.append(k)
        if remap == list(range(len(remap))):
            return local
        return pc.take(pa.array(remap, pa.int32()), local)


@dataclass(eq=False)
class ManifestTasks:
    """The selected entries of one manifest (see the module docstring)."""

    manifest_path: str
    spec_id: int
    entries: pa.Table
    residuals: pa.Int32Array
    deletes: pa.ListArray
    positions: pa.Int64Array
    plan: PlanContext
    #: the manifest's row of its manifest list (for inheritance when stats are decoded later)
    manifest_file: dict[str, Any] = field(default_factory=dict, repr=False)
    _cache: dict[str, list[Any]] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return int(self.entries.num_rows)

    def tasks(self) -> Iterator[PlannedFileScanTask]:
        """A view per row, in order."""
        return PlannedFileScanTask.views(self, range(len(self)))

    def tasks_at(self, rows: Sequence[int]) -> list[PlannedFileScanTask]:
        """Views of the rows ``rows``."""
        return list(PlannedFileScanTask.views(self, rows))

    # ---- the columns views read (frazil.table.scan.tasks.TaskColumns)

    @functools.cached_property
    def _data_file(self) -> pa.StructArray:
        col = self.entries.column("data_file")
        arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        return arr

    @functools.cached_property
    def _stats_source(self) -> pa.StructArray | None:
        """The ``data_file`` struct that holds the stats maps, decoding them if needed."""
        if self.plan.stats is ColumnStats.INCLUDED:
            return self._data_file
        if self.plan.stats is ColumnStats.EXCLUDED:
            return None
        path = self.plan.metadata.resolve(self.manifest_path)
        data = read_files(self.plan.io, [path], "manifest")[0]
        entries = read_manifest(
            data, self.manifest_file, path=path, location=self.plan.metadata.paths_location
        )
        col = entries.column("data_file").take(self.positions)
        log.debug("decoded the column stats of %d tasks of %s", len(self), path)
        return col.combine_chunks()

    def column(self, name: str) -> list[Any]:
        values = self._cache.get(name)
        if values is None:
            values = self._cache[name] = self._column(name)
        return values

    def _column(self, name: str) -> list[Any]:
        n = len(self)
        if name in _ENTRY_COLUMNS:
            if name not in self.entries.column_names:
                return [None] * n
            return self.entries.column(name).to_pylist()  # type: ignore[no-any-return]
        source = self._stats_source if name in _STATS else self._data_file
        if source is None or source.type.get_field_index(name) < 0:
            return [0] * n if name == "content" else [None] * n
        arr = source.field(name)
        if name == "partition":
            k = arr.type.num_fields
            if k == 0:
                return [()] * n
            return list(zip(*(arr.field(i).to_pylist() for i in range(k)), strict=True))
        return data_file_values(arr, name)

    def extra(self, row: int) -> dict[str, Any]:
        return {k: self.column(k)[row] for k in _ENTRY_COLUMNS}

    @functools.cached_property
    def _task_deletes(self) -> list[list[int]]:
        return self.deletes.to_pylist()  # type: ignore[no-any-return]

    @functools.cached_property
    def _task_residuals(self) -> list[int]:
        return self.residuals.to_pylist()  # type: ignore[no-any-return]

    def task_parts(
        self, row: int
    ) -> tuple[list[DataFile], BooleanExpression, Schema | None, PartitionSpec | None]:
        plan = self.plan
        deletes = self._task_deletes[row]
        files = plan.delete_files
        return (
            [files[k] for k in deletes] if deletes else [],
            plan.residuals[self._task_residuals[row]],
            plan.schema,
            plan.specs.get(self.spec_id),
        )


@dataclass(frozen=True)
class PlannedFiles:
    """A whole planned scan: :func:`plan_files`'s result (see the module docstring)."""

    data: list[ManifestTasks]
    delete_groups: list[ManifestTasks]
    residuals: list[BooleanExpression]
    schema: Schema
    _delete_starts: list[int] = field(repr=False)

    @property
    def num_tasks(self) -> int:
        return sum(len(m) for m in self.data)

    @property
    def num_delete_files(self) -> int:
        return self._delete_starts[-1]

    def delete_entry(self, index: int) -> tuple[ManifestTasks, int]:
        """The delete group and row of delete file number ``index``."""
        if not 0 <= index < self.num_delete_files:
            raise IndexError(f"delete file {index} out of {self.num_delete_files}")
        g = bisect.bisect_right(self._delete_starts, index) - 1
        return self.delete_groups[g], index - self._delete_starts[g]

    @functools.cached_property
    def delete_files(self) -> list[DataFile]:
        """Every selected delete file, numbered as the ``deletes`` indices number them."""
        out: list[DataFile] = []
        for g in self.delete_groups:
            out.extend(data_files_from_entries(g.entries, g.spec_id))
        return out

    def tasks(self) -> Iterator[PlannedFileScanTask]:
        return itertools.chain.from_iterable(m.tasks() for m in self.data)


def _schema_for(metadata: TableMetadata, snapshot: Snapshot | None) -> Schema:
    if snapshot is not None and snapshot.schema_id is not None:
        s = metadata.schema_by_id(snapshot.schema_id)
        if s is not None:
            return s
    return metadata.schema()


def planner_for(
    metadata: TableMetadata, schema: Schema, bound_filter: BooleanExpression
) -> _native.ScanPlanner:
    """The native planner for a filter bound to ``schema`` and the table's specs."""
    specs = [s.to_json() for s in metadata.specs().values()]
    return _native.ScanPlanner(
        json.dumps(schema.to_json()),
        json.dumps(specs),
        to_json_text(bound_filter),
        metadata.paths_location,
    )


def _table(entries: Any) -> pa.Table:
    return pa.table(entries)


def read_files(io: FileIO, paths: Sequence[str], what: str) -> list[bytes]:
    """The files' bytes, read concurrently; a failure is a
    :class:`~frazil.exceptions.FrazilIOError` naming the file (``FileMissingError`` when it is
    missing)."""
    return _read(io, paths, what, None)


def _read(io: FileIO, paths: Sequence[str], what: str, workers: int | None) -> list[bytes]:
    try:
        if workers is None:
            return io.read_many(paths)
        return io.read_many(paths, max_workers=workers)
    except OSError as e:
        where = getattr(e, "filename", None)
        where = where if isinstance(where, str) else (paths[0] if len(paths) == 1 else None)
        raise io_error(e, f"reading {what}", where or f"one of {len(paths)} {what}s") from e


def _read_run(io: FileIO, paths: Sequence[str]) -> list[bytes]:
    """A run's data manifests for the planning pipeline (:func:`read_files`). Local files are
    read one after another on the pipeline's long-lived reader thread: from the page cache a
    read is a copy, no faster on more threads of a busy machine, and one thread's allocator
    arena stays warm, where a fresh pool of threads per run faulted in new pages for every
    run's bytes (a 1M-file plan: half of its page faults, some 4% of its CPU). Other schemes are
    read concurrently."""
    local = all(location_scheme(p) in ("", "file") for p in paths)
    return _read(io, paths, "manifest", 1 if local else None)


def snapshot_manifests(
    io: FileIO, metadata: TableMetadata, snapshot: Snapshot
) -> tuple[str, pa.Table]:
    """The snapshot's manifest list (its location, for messages, and its rows), read from
    ``manifest-list`` or built from a v1 snapshot's inline ``manifests``."""
    if snapshot.manifest_list is not None:
        list_path = metadata.resolve(snapshot.manifest_list)
        listed = read_files(io, [list_path], "manifest list")[0]
        return list_path, read_manifest_list(
            listed, path=list_path, location=metadata.paths_location, summary=snapshot.summary
        )
    list_path = f"the manifests of snapshot {snapshot.snapshot_id}"
    inline = list(snapshot.manifests or ())
    datas = read_files(io, [metadata.resolve(p) for p in inline], "manifest")
    return list_path, inline_manifest_list(
        list(zip(inline, datas, strict=True)), snapshot_id=snapshot.snapshot_id
    )


def plan_manifests(
    io: FileIO,
    metadata: TableMetadata,
    snapshot: Snapshot | None,
    bound_filter: BooleanExpression = AlwaysTrue(),  # noqa: B008 (immutable)
    case_sensitive: bool = True,
    threads: int | None = None,
    *,
    schema: Schema | None = None,
    stats: ColumnStats = ColumnStats.INCLUDED,
    run_manifests: int | None = None,
    manifests: pa.Table | None = None,
) -> tuple[PlanContext, Iterator[ManifestTasks]]:
    """Plans a scan of ``snapshot`` (``None``: an empty table) with a row filter: the plan's
    context, its delete files planned, and an iterator over the planned data manifests in
    manifest list order, which reads and plans each run of them as it is reached.

    ``bound_filter`` may be bound already (to ``schema``) or unbound (bound here with
    ``case_sensitive``). ``schema`` defaults to the snapshot's schema. ``threads`` bounds the
    native decoding/planning threads (default: all cores). ``run_manifests`` data manifests
    are read and planned at a time (default :data:`PLAN_RUN_MANIFESTS`).

    ``stats`` (:class:`ColumnStats`): whether the column stats maps (``column_sizes``,
    ``value_counts``, ``null_value_counts``, ``nan_value_counts``, ``distinct_counts``,
    ``lower_bounds``, ``upper_bounds``) stay in the data entries; when they don't, only the
    stats the filter and equality deletes need are decoded: most of a manifest's bytes are
    stats. Delete files keep theirs.

    ``manifests``: rows of manifest lists (:func:`frazil.manifest.read_manifest_list`'s shape)
    to plan instead of ``snapshot``'s manifest list (an incremental scan's manifests, gathered
    from several snapshots); ``snapshot`` then only names the plan in messages.
    """
    schema = schema if schema is not None else _schema_for(metadata, snapshot)
    bound = bind(schema, bound_filter, case_sensitive)
    plan = PlanContext(io, metadata, schema, metadata.specs(), stats)
    if snapshot is None:
        return plan, iter(())
    planner = planner_for(metadata, schema, bound)
    plan.filter, plan.filter_text = bound, planner.filter_json()
    if manifests is not None:
        list_path = f"the manifests selected up to snapshot {snapshot.snapshot_id}"
        manifest_list = manifests
    else:
        list_path, manifest_list = snapshot_manifests(io, metadata, snapshot)
    if manifest_list.num_rows == 0:
        return plan, iter(())
    batch = manifest_list.combine_chunks().to_batches()[0]
    keep = pa.array(planner.prune_manifests(batch))
    rows = pc.indices_nonzero(keep).to_pylist()
    log.debug("scan of %s: %d of %d manifests kept", list_path, len(rows), len(keep))
    if not rows:
        return plan, iter(())
    listed = manifest_list.take(rows).to_pylist()
    by_row = dict(zip(rows, listed, strict=True))
    is_delete = [bool(m.get("content")) for m in listed]
    delete_rows = [r for r, d in zip(rows, is_delete, strict=True) if d]
    data_rows = [r for r, d in zip(rows, is_delete, strict=True) if not d]
    include_stats = stats is ColumnStats.INCLUDED

    def paths(run: Sequence[int]) -> list[str]:
        return [metadata.resolve(by_row[r]["manifest_path"]) for r in run]

    def relabel(e: FrazilError) -> FrazilError:
        return type(e)(f"planning a scan of {list_path}: {e}")

    if delete_rows:
        datas = read_files(io, paths(delete_rows), "manifest")
        try:
            delete_plan = planner.plan_deletes(
                batch, delete_rows, datas, [list_entry(by_row[r]) for r in delete_rows], threads
            )
        except FrazilError as e:
            raise relabel(e) from None
        del datas
        for p in delete_plan.manifests:
            m = by_row[p.row]
            entries = _table(p.entries)
            if entries.num_rows:
                plan.delete_groups.append(
                    ManifestTasks(
                        m["manifest_path"],
                        m["partition_spec_id"],
                        entries,
                        pa.array([], pa.int32()),
                        _EMPTY_DELETES,
                        pa.array([], pa.int64()),
                        plan,
                        m,
                    )
                )
    else:
        delete_plan = planner.plan_deletes(batch, [], [], [], threads)

    runs = _runs(
        data_rows,
        [by_row[r].get("manifest_length") or 0 for r in data_rows],
        max(1, run_manifests or PLAN_RUN_MANIFESTS),
        PLAN_RUN_BYTES if run_manifests is None else 0,
    )
    return plan, _plan_runs(
        planner, delete_plan, plan, batch, runs, by_row, paths, relabel, threads, include_stats
    )


def _runs(rows: list[int], sizes: list[int], count: int, size: int) -> list[list[int]]:
    """``rows`` cut into runs of at least ``count`` manifests and ``size`` bytes (the last
    run may have fewer)."""
    runs: list[list[int]] = []
    run: list[int] = []
    held = 0
    for row, n in zip(rows, sizes, strict=True):
        run.append(row)
        held += n
        if len(run) >= count and held >= size:
            runs.append(run)
            run, held = [], 0
    if run:
        runs.append(run)
    return runs


def _plan_runs(
    planner: _native.ScanPlanner,
    delete_plan: _native.DeletePlan,
    plan: PlanContext,
    batch: pa.RecordBatch,
    runs: list[list[int]],
    by_row: dict[int, dict[str, Any]],
    paths: Callable[[Sequence[int]], list[str]],
    relabel: Callable[[FrazilError], FrazilError],
    threads: int | None,
    include_stats: bool,
) -> Iterator[ManifestTasks]:
    if not runs:
        return
    io = plan.io

    def plan_run(run: list[int], reading: Future[list[bytes]]) -> _native.PlannedScan:
        datas = reading.result()
        try:
            return planner.plan_data(
                delete_plan,
                batch,
                run,
                datas,
                [list_entry(by_row[r]) for r in run],
                threads,
                include_stats,
            )
        except FrazilError as e:
            raise relabel(e) from None

    # A pipeline of three: the manifests of run k+2 are read while run k+1 is decoded and planned
    # natively (the GIL released) while the caller iterates the tasks of run k, so that a
    # consumer's per-task Python overlaps the native work instead of following it.
    with (
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="frazil-plan-io") as reader,
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="frazil-plan") as worker,
    ):
        reads = [reader.submit(_read_run, io, paths(run)) for run in runs[:2]]
        pending = worker.submit(plan_run, runs[0], reads[0])
        try:
            for k in range(len(runs)):
                planned = pending.result()
                if k + 2 < len(runs):
                    reads.append(reader.submit(_read_run, io, paths(runs[k + 2])))
                if k + 1 < len(runs):
                    pending = worker.submit(plan_run, runs[k + 1], reads[k + 1])
                reads[k] = _DONE  # its bytes are no longer held
                yield from _run_tasks(planned, plan, by_row)
        finally:
            # a consumer that stops early does not wait for runs it will never see
            for f in reads:
                f.cancel()
            pending.cancel()


_DONE: Future[list[bytes]] = Future()
_DONE.set_result([])


def _run_tasks(
    planned: _native.PlannedScan, plan: PlanContext, by_row: dict[int, dict[str, Any]]
) -> Iterator[ManifestTasks]:
    for p in planned.manifests:
        if len(p.entries) == 0:
            # most manifests of a selective scan: no Arrow import for them
            continue
        entries = _table(p.entries)
        m = by_row[p.row]
        yield ManifestTasks(
            m["manifest_path"],
            m["partition_spec_id"],
            entries,
            plan.number_residuals(planned.residuals, pa.array(p.residual_index)),
            pa.array(p.deletes),
            pa.array(p.positions),
            plan,
            m,
        )


def plan_files(
    io: FileIO,
    metadata: TableMetadata,
    snapshot: Snapshot | None,
    bound_filter: BooleanExpression = AlwaysTrue(),  # noqa: B008 (immutable)
    case_sensitive: bool = True,
    threads: int | None = None,
    *,
    schema: Schema | None = None,
    include_column_stats: bool = True,
) -> PlannedFiles:
    """The whole plan of a scan (see :func:`plan_manifests`); ``include_column_stats=False``
    (the Java reference's default for a scan, whose ``includeColumnStats()`` is opt-in) leaves
    the column stats maps out of the data entries."""
    schema = schema if schema is not None else _schema_for(metadata, snapshot)
    stats = ColumnStats.INCLUDED if include_column_stats else ColumnStats.EXCLUDED
    plan, groups = plan_manifests(
        io,
        metadata,
        snapshot,
        bound_filter,
        case_sensitive,
        threads,
        schema=schema,
        stats=stats,
        run_manifests=1 << 30,
    )
    data = list(groups)
    starts = list(itertools.accumulate((len(g) for g in plan.delete_groups), initial=0))
    return PlannedFiles(data, plan.delete_groups, plan.residuals, schema, starts)


def data_file_paths(planned: PlannedFiles) -> Sequence[str]:
    """Every task's data file path, in task order (for tests and diagnostics)."""
    return [p for m in planned.data for p in m.column("file_path")]
