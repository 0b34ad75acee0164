"""Incremental append scans: the rows that ``append`` snapshots added between two snapshots.

::

    scan = table.incremental_append_scan(from_snapshot_id=a, to_snapshot_id=b)
    scan.filter("id > 5").select("id", "data").to_arrow()

The Java reference's ``IncrementalAppendScan`` semantics (and PyIceberg's
``incremental_append_scan``): the snapshots are the ancestors of the end snapshot (default: the
current one) after the start snapshot, exclusive (``from_snapshot_id_exclusive``; it may have
been expired, but it must be the parent of one of them) or inclusive
(``from_snapshot_id_inclusive``; it must be an ancestor of the end), or the whole lineage when no
start is given. Of those, only ``append`` snapshots count, and of their manifests only the data
files they ADDED: no delete files are applied (an append adds none, and deletes committed
later are another snapshot's change), files rewritten or deleted later are still returned.
Rows are read with the table's current schema.

Planning reuses :mod:`frazil.table.scan.plan`: the appended manifests are gathered from the
append snapshots' manifest lists and planned natively as one scan; entries are then kept by
status and snapshot id in Arrow. The scan is a :class:`~frazil.table.scan.DataScan`, so
``filter``, ``select``, ``plan_files``, ``plan_files_arrow``, ``to_arrow``, ``to_batches``,
``count`` and the DataFrame hand-offs work the same.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil.exceptions import InvalidArgumentError, UnsupportedError, ValidationError
from frazil.expressions import BooleanExpression
from frazil.metadata import Snapshot, TableMetadata
from frazil.table.scan import ALWAYS_TRUE, DataScan
from frazil.table.scan import plan as planning
from frazil.table.scan.plan import ColumnStats, ManifestTasks, PlanContext
from frazil.table.update.manage_snapshots import ancestors_of

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.table import Table

__all__ = ["IncrementalAppendScan", "append_snapshots_between", "incremental_append_scan"]

APPEND = "append"
_ADDED = 1


def _ancestors(metadata: TableMetadata, snapshot_id: int) -> Iterator[Snapshot]:
    return ancestors_of(snapshot_id, {s.snapshot_id: s for s in metadata.snapshots})


def snapshots_between(
    metadata: TableMetadata, from_exclusive: int | None, to_snapshot_id: int
) -> list[Snapshot]:
    """The ancestors of ``to_snapshot_id`` (itself first) down to, not including,
    ``from_exclusive`` (``None``: the whole lineage), newest first."""
    out = []
    for s in _ancestors(metadata, to_snapshot_id):
        if from_exclusive is not None and s.snapshot_id == from_exclusive:
            break
        out.append(s)
    return out


def append_snapshots_between(
    metadata: TableMetadata, from_exclusive: int | None, to_snapshot_id: int
) -> list[Snapshot]:
    """The ``append`` snapshots of :func:`snapshots_between`, oldest first."""
    between = snapshots_between(metadata, from_exclusive, to_snapshot_id)
    return [s for s in reversed(between) if s.operation == APPEND]


class IncrementalAppendScan(DataScan):
    """A scan of the data files ``append`` snapshots added in a range of snapshots (see the
    module docstring). Immutable: the builder methods return new scans."""

    def __init__(
        self,
        table_metadata: TableMetadata,
        io: FileIO,
        row_filter: str | BooleanExpression = ALWAYS_TRUE,
        selected_fields: tuple[str, ...] = ("*",),
        case_sensitive: bool = True,
        from_snapshot_id: int | None = None,
        from_snapshot_inclusive: bool = False,
        to_snapshot_id: int | None = None,
        options: Mapping[str, str] | None = None,
        limit: int | None = None,
    ) -> None:
        super().__init__(
            table_metadata,
            io,
            row_filter=row_filter,
            selected_fields=selected_fields,
            case_sensitive=case_sensitive,
            options=options,
            limit=limit,
        )
        self.from_snapshot_id = from_snapshot_id
        self.from_snapshot_inclusive = from_snapshot_inclusive
        self.to_snapshot_id = to_snapshot_id

    def _update(self, **changes: Any) -> IncrementalAppendScan:
        if changes.get("snapshot_id") is not None or changes.get("ref") is not None:
            raise UnsupportedError("an incremental scan's snapshots are set by its range")
        args: dict[str, Any] = {
            "row_filter": self.row_filter,
            "selected_fields": self.selected_fields,
            "case_sensitive": self.case_sensitive,
            "from_snapshot_id": self.from_snapshot_id,
            "from_snapshot_inclusive": self.from_snapshot_inclusive,
            "to_snapshot_id": self.to_snapshot_id,
            "options": self.options,
            "limit": self.limit,
        }
        args.update((k, v) for k, v in changes.items() if k not in ("snapshot_id", "ref"))
        return IncrementalAppendScan(self.table_metadata, self.io, **args)

    # ---- the range (PyIceberg's builder names)

    def from_snapshot_id_exclusive(self, from_snapshot_id: int) -> IncrementalAppendScan:
        """Starts after ``from_snapshot_id`` (Java's ``fromSnapshotExclusive``)."""
        return self._update(from_snapshot_id=from_snapshot_id, from_snapshot_inclusive=False)

    def from_snapshot_id_inclusive(self, from_snapshot_id: int) -> IncrementalAppendScan:
        """Starts at ``from_snapshot_id`` (Java's ``fromSnapshotInclusive``)."""
        return self._update(from_snapshot_id=from_snapshot_id, from_snapshot_inclusive=True)

    def to_snapshot_id_inclusive(self, to_snapshot_id: int) -> IncrementalAppendScan:
        """Ends at ``to_snapshot_id`` (Java's ``toSnapshot``; default: the current snapshot)."""
        return self._update(to_snapshot_id=to_snapshot_id)

    def use_ref(self, name: str) -> IncrementalAppendScan:
        """Ends at the snapshot a branch or tag points to (Java's ``useBranch``)."""
        ref = self.table_metadata.refs.get(name)
        if ref is None:
            raise ValidationError(f"no branch or tag named {name!r}")
        return self._update(to_snapshot_id=ref.snapshot_id)

    def as_of_timestamp(self, timestamp_ms: int) -> DataScan:
        raise UnsupportedError(
            "an incremental scan has no time travel: set its range with "
            "from_snapshot_id_exclusive / to_snapshot_id_inclusive"
        )

    def snapshot(self) -> Snapshot | None:
        """The end snapshot (``None`` for a table without snapshots and no range)."""
        md = self.table_metadata
        if self.to_snapshot_id is None:
            return md.current_snapshot()
        snapshot = md.snapshot_by_id(self.to_snapshot_id)
        if snapshot is None:
            raise ValidationError(
                f"end snapshot {self.to_snapshot_id} is not a snapshot of the table"
            )
        return snapshot

    def _range(self) -> tuple[int | None, Snapshot] | None:
        """(the start, exclusive, ``None`` for the whole lineage; the end), validated as the
        Java reference does; ``None`` when there is nothing to scan (an empty table)."""
        md = self.table_metadata
        end = self.snapshot()
        if end is None:
            if self.from_snapshot_id is None:
                return None
            raise ValidationError("the table has no current snapshot to end the scan at")
        start = self.from_snapshot_id
        if start is None:
            return None, end
        lineage = list(_ancestors(md, end.snapshot_id))
        if self.from_snapshot_inclusive:
            first = md.snapshot_by_id(start)
            if first is None or all(s.snapshot_id != start for s in lineage):
                raise ValidationError(
                    f"starting snapshot (inclusive) {start} is not an ancestor of end snapshot "
                    f"{end.snapshot_id}"
                )
            return first.parent_snapshot_id, end
        # an exclusive start may have been expired: it must be the parent of an ancestor
        if all(s.parent_snapshot_id != start for s in lineage):
            raise ValidationError(
                f"starting snapshot (exclusive) {start} is not a parent ancestor of end "
                f"snapshot {end.snapshot_id}"
            )
        return start, end

    def append_snapshots(self) -> list[Snapshot]:
        """The ``append`` snapshots whose added files the scan returns, oldest first."""
        bounds = self._range()
        if bounds is None:
            return []
        return append_snapshots_between(self.table_metadata, bounds[0], bounds[1].snapshot_id)

    def _plan(self, stats: ColumnStats) -> tuple[PlanContext, Iterator[ManifestTasks]]:
        md = self.table_metadata
        appends = self.append_snapshots()
        bound = self._bound_filter()
        schema = self.table_schema()
        if not appends:
            return planning.plan_manifests(self.io, md, None, bound, schema=schema, stats=stats)
        ids = pa.array([s.snapshot_id for s in appends], pa.int64())
        lists = [planning.snapshot_manifests(self.io, md, s)[1] for s in appends]
        listed = pa.concat_tables(lists, promote_options="permissive")
        keep = pc.and_(
            pc.equal(pc.fill_null(listed.column("content"), 0), 0),
            pc.is_in(listed.column("added_snapshot_id"), ids),
        )
        listed = listed.filter(keep)
        # a manifest is listed by every later snapshot's manifest list: plan it once
        paths = listed.column("manifest_path").to_pylist()
        seen: dict[str, int] = {}
        for i, p in enumerate(paths):
            seen.setdefault(p, i)
        if len(seen) != len(paths):
            listed = listed.take(pa.array(sorted(seen.values()), pa.int64()))
        plan, groups = planning.plan_manifests(
            self.io, md, appends[-1], bound, schema=schema, stats=stats, manifests=listed
        )
        return plan, _added_by(groups, ids)


def _added_by(groups: Iterator[ManifestTasks], ids: pa.Array) -> Iterator[ManifestTasks]:
    """Each group's entries ADDED by one of the snapshots ``ids`` (Java's manifest entry
    filter), in Arrow."""
    for g in groups:
        mask = pc.and_(
            pc.equal(g.entries.column("status"), _ADDED),
            pc.is_in(g.entries.column("snapshot_id"), ids),
        )
        mask = pc.fill_null(mask, False).combine_chunks()
        kept = pc.sum(mask).as_py() or 0
        if kept == len(g):
            yield g
        elif kept:
            yield ManifestTasks(
                g.manifest_path,
                g.spec_id,
                g.entries.filter(mask),
                g.residuals.filter(mask),
                g.deletes.filter(mask),
                g.positions.filter(mask),
                g.plan,
                g.manifest_file,
            )


def incremental_append_scan(
    table: Table,
    from_snapshot_id: int | None = None,
    to_snapshot_id: int | None = None,
    *,
    from_snapshot_id_exclusive: int | None = None,
    from_snapshot_id_inclusive: int | None = None,
    to_snapshot_id_inclusive: int | None = None,
    row_filter: str | BooleanExpression = ALWAYS_TRUE,
    selected_fields: tuple[str, ...] = ("*",),
    case_sensitive: bool = True,
    options: Mapping[str, str] | None = None,
    limit: int | None = None,
) -> IncrementalAppendScan:
    """An :class:`IncrementalAppendScan` of ``table`` (``Table.incremental_append_scan``).
    ``from_snapshot_id`` is exclusive, as PyIceberg's ``from_snapshot_id_exclusive``."""
    starts = [
        (v, inclusive)
        for v, inclusive in (
            (from_snapshot_id, False),
            (from_snapshot_id_exclusive, False),
            (from_snapshot_id_inclusive, True),
        )
        if v is not None
    ]
    if len(starts) > 1:
        raise InvalidArgumentError(
            "give one of from_snapshot_id, from_snapshot_id_exclusive, from_snapshot_id_inclusive"
        )
    if to_snapshot_id is not None and to_snapshot_id_inclusive is not None:
        raise InvalidArgumentError("give one of to_snapshot_id, to_snapshot_id_inclusive")
    start, inclusive = starts[0] if starts else (None, False)
    return IncrementalAppendScan(
        table.metadata,
        table.io,
        row_filter=row_filter,
        selected_fields=selected_fields,
        case_sensitive=case_sensitive,
        from_snapshot_id=start,
        from_snapshot_inclusive=inclusive,
        to_snapshot_id=to_snapshot_id if to_snapshot_id is not None else to_snapshot_id_inclusive,
        options=options,
        limit=limit,
    )
