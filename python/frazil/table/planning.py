"""Native scan planning: which data files a scan reads, their delete files and residuals.

:func:`plan_files` reads the snapshot's manifest list, prunes manifests by their partition
summaries (native), reads the surviving manifests concurrently (``io.read_many``), then decodes
and plans them natively on several threads with the GIL released: entries are selected by
status, partition projection and column metrics, each gets its residual, and delete files are
attached per the spec's "Scan Planning" rules (deletion vectors by ``referenced_data_file``,
position deletes by partition or referenced file with data sequence number <= theirs, equality
deletes by partition or globally with data sequence number < theirs). Nothing is done per file
in Python: the result is columnar, for :mod:`frazil.table.scan` to turn into ``FileScanTask``
objects lazily.

Return shape, a :class:`PlannedFiles`:

``data``: ``list[ManifestTasks]``, one per data manifest that has selected entries, in manifest
list order. Each :class:`ManifestTasks` has

- ``manifest_path`` (str) and ``spec_id`` (int): the manifest and the partition spec that all
  of its entries were written with;
- ``entries``: a ``pyarrow.Table`` with one row per task (a live ``manifest_entry`` whose
  partition and metrics might match), in manifest order, shaped exactly like
  :func:`frazil.manifest.read_manifest`'s output (``status``, ``snapshot_id``,
  ``sequence_number``, ``file_sequence_number`` (inherited), ``data_file`` struct);
- ``residuals``: ``pyarrow.Int32Array``, one per row: index into ``PlannedFiles.residuals``;
- ``deletes``: ``pyarrow.ListArray`` of ``int32``, one list per row: the row's delete files as
  indices into ``PlannedFiles.delete_files`` (empty list: none).

``delete_groups``: ``list[ManifestTasks]`` of the delete manifests' selected entries (their
``residuals``/``deletes`` are empty); ``delete_files`` numbers those rows consecutively in that
order, and :meth:`PlannedFiles.delete_entry` maps a number to ``(group, row)``.
:meth:`PlannedFiles.delete_files` builds the :class:`~frazil.content_file.DataFile` objects
once (delete files are few).

``residuals``: ``list[BooleanExpression]``, bound to ``schema``, the distinct residuals.
``schema``: the schema the filter was bound to (the snapshot's, by default).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import _native
from frazil.content_file import DataFile, data_files_from_entries
from frazil.exceptions import FrazilError, UnsupportedError
from frazil.expressions import AlwaysTrue, BooleanExpression, from_json
from frazil.expressions.binding import bind
from frazil.expressions.json import to_json_text
from frazil.io import FileIO
from frazil.manifest import read_manifest_list
from frazil.metadata import Snapshot, TableMetadata
from frazil.schema import Schema

__all__ = ["ManifestTasks", "PlannedFiles", "plan_files", "planner_for"]

log = logging.getLogger(__name__)

_EMPTY_DELETES = pa.ListArray.from_arrays(pa.array([0], pa.int32()), pa.array([], pa.int32()))


@dataclass(frozen=True)
class ManifestTasks:
    """The selected entries of one manifest (see the module docstring)."""

    manifest_path: str
    spec_id: int
    entries: pa.Table
    residuals: pa.Int32Array
    deletes: pa.ListArray

    def __len__(self) -> int:
        return int(self.entries.num_rows)


@dataclass(frozen=True)
class PlannedFiles:
    """What :func:`plan_files` returns (see the module docstring)."""

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
        json.dumps(schema.to_json()), json.dumps(specs), to_json_text(bound_filter)
    )


def _inherit(row: dict[str, Any]) -> tuple[int | None, int | None, int | None]:
    return (row.get("added_snapshot_id"), row.get("sequence_number"), row.get("first_row_id"))


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
    """Plans a scan of ``snapshot`` (``None``: an empty table) with a row filter.

    ``bound_filter`` may be bound already (to ``schema``) or unbound (bound here with
    ``case_sensitive``). ``schema`` defaults to the snapshot's schema. ``threads`` bounds the
    native decoding/planning threads (default: all cores), one manifest per thread.

    ``include_column_stats=False`` (the Java reference's default for a scan, whose
    ``includeColumnStats()`` is opt-in) leaves the column stats maps (``column_sizes``,
    ``value_counts``, ``null_value_counts``, ``nan_value_counts``, ``distinct_counts``,
    ``lower_bounds``, ``upper_bounds``) out of the data entries, and, when neither the filter
    nor equality deletes need them, out of decoding: most of a manifest's bytes are stats.
    Delete files keep theirs.
    """
    schema = schema if schema is not None else _schema_for(metadata, snapshot)
    bound = bind(schema, bound_filter, case_sensitive)
    empty = PlannedFiles([], [], [], schema, [0])
    if snapshot is None:
        return empty
    if snapshot.manifest_list is None:
        raise UnsupportedError(
            f"snapshot {snapshot.snapshot_id} lists its manifests inline (v1 without a manifest "
            "list): not supported"
        )
    planner = planner_for(metadata, schema, bound)
    list_path = metadata.resolve(snapshot.manifest_list)
    manifest_list = read_manifest_list(io.read(list_path), path=list_path)
    if manifest_list.num_rows == 0:
        return empty
    batch = manifest_list.combine_chunks().to_batches()[0]
    keep = pa.array(planner.prune_manifests(batch))
    rows = pc.indices_nonzero(keep).to_pylist()
    log.debug("scan of %s: %d of %d manifests kept", list_path, len(rows), len(keep))
    if not rows:
        return empty
    kept = manifest_list.take(rows).to_pylist()
    paths = [metadata.resolve(m["manifest_path"]) for m in kept]
    datas = io.read_many(paths)
    try:
        planned = planner.plan_files(
            batch, rows, datas, [_inherit(m) for m in kept], threads, include_column_stats
        )
    except FrazilError as e:
        raise type(e)(f"planning a scan of {list_path}: {e}") from None

    by_row = dict(zip(rows, kept, strict=True))
    residuals = [from_json(json.loads(text), schema) for text in planned.residuals]
    data: list[ManifestTasks] = []
    delete_groups: list[ManifestTasks] = []
    for p in planned.manifests:
        m = by_row[p.row]
        table = pa.table(p.entries)
        if table.num_rows == 0:
            continue
        if p.content != 0:
            delete_groups.append(
                ManifestTasks(
                    m["manifest_path"],
                    m["partition_spec_id"],
                    table,
                    pa.array([], pa.int32()),
                    _EMPTY_DELETES,
                )
            )
            continue
        data.append(
            ManifestTasks(
                m["manifest_path"],
                m["partition_spec_id"],
                table,
                pa.array(p.residual_index),
                pa.array(p.deletes),
            )
        )
    starts = list(itertools.accumulate((len(g) for g in delete_groups), initial=0))
    return PlannedFiles(data, delete_groups, residuals, schema, starts)


def data_file_paths(planned: PlannedFiles) -> Sequence[str]:
    """Every task's data file path, in task order (for tests and diagnostics)."""
    return [
        p
        for m in planned.data
        for p in m.entries.column("data_file").combine_chunks().field("file_path").to_pylist()
    ]
