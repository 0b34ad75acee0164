"""Snapshot expiry: the spec's "Snapshot Retention Policy", then deletion of the files only the
expired snapshots used.

Retention follows the Java reference's ``RemoveSnapshots``, with the table properties
``history.expire.min-snapshots-to-keep`` (1), ``history.expire.max-snapshot-age-ms`` (5 days)
and ``history.expire.max-ref-age-ms`` (forever), each overridable per ref:

1. refs other than ``main`` whose snapshot is older than their max-ref-age-ms (or missing) are
   removed;
2. every remaining ref's snapshot is retained, and each branch retains its ancestors while they
   are among its first min-snapshots-to-keep or not older than its cutoff (``now -
   max-snapshot-age-ms`` of the branch, else the default cutoff);
3. snapshots that are no branch's ancestor and no tag's snapshot are retained while not older
   than the default cutoff: ``expire_older_than(ts)``, else ``now`` minus the table's
   max-snapshot-age-ms;
4. everything else is expired, and so are the ids given to ``expire_snapshot_id`` / ``by_ids``
   (an error if one is the snapshot of a retained ref). As in Java, giving ids does not switch the
   policy off: the policy's expiries happen too.

Expiry is a :class:`TransactionStep`: ``apply`` recomputes the removals against each base the
transaction commits against. Once the commit landed, ``on_commit`` deletes, unless
``clean_expired_files(False)``: the expired snapshots' manifest lists, their manifests that no
retained snapshot lists, the data and delete files those manifests reference (entries of any
status) that are live in no retained snapshot's manifests, and the statistics files of the removed
snapshots. A file some retained snapshot still reaches is never deleted; when a retained
snapshot's manifest list or manifest cannot be read, nothing but files only expired metadata
names (manifest lists, statistics) is deleted. Only files under the table location are deleted
(others, such as ``add_files`` of another dataset's files, are kept and logged) unless
``delete_outside_location(True)``, as for ``drop_table(purge=True)``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pyarrow.compute as pc

from frazil.encryption.table_io import remember_snapshots
from frazil.exceptions import FrazilError, InvalidArgumentError, ValidationError
from frazil.io import under_location
from frazil.manifest import read_manifest_list, read_manifests
from frazil.metadata import MAIN_BRANCH, Snapshot, SnapshotRef, SnapshotRefType, TableMetadata
from frazil.table.step import TransactionStep
from frazil.table.update import RemoveSnapshotRefUpdate, RemoveSnapshotsUpdate, TableUpdate
from frazil.table.update.manage_snapshots import ancestors_of

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.metadata import PartitionStatisticsFile, StatisticsFile
    from frazil.table.transaction import Transaction

__all__ = [
    "GC_ENABLED",
    "MAX_REF_AGE_MS",
    "MAX_SNAPSHOT_AGE_MS",
    "MIN_SNAPSHOTS_TO_KEEP",
    "ExpireSnapshots",
    "RetentionPlan",
    "plan_retention",
]

logger = logging.getLogger(__name__)

MIN_SNAPSHOTS_TO_KEEP = "history.expire.min-snapshots-to-keep"
MIN_SNAPSHOTS_TO_KEEP_DEFAULT = 1
MAX_SNAPSHOT_AGE_MS = "history.expire.max-snapshot-age-ms"
MAX_SNAPSHOT_AGE_MS_DEFAULT = 5 * 24 * 60 * 60 * 1000
MAX_REF_AGE_MS = "history.expire.max-ref-age-ms"
MAX_REF_AGE_MS_DEFAULT = 2**63 - 1  # Java's Long.MAX_VALUE: refs never age out
GC_ENABLED = "gc.enabled"
DELETED = 2  # manifest entry status


def _int_prop(props: Mapping[str, str], key: str, default: int) -> int:
    text = props.get(key)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise ValidationError(f"table property {key}={text!r} is not an integer") from None


def _gc_enabled(props: Mapping[str, str]) -> bool:
    return props.get(GC_ENABLED, "true").strip().lower() != "false"


class RetentionPlan:
    """What one expiry does to one metadata: refs removed, snapshot ids removed and kept."""

    def __init__(
        self, removed_refs: list[str], removed_ids: set[int], retained_ids: set[int]
    ) -> None:
        self.removed_refs = removed_refs
        self.removed_ids = removed_ids
        self.retained_ids = retained_ids

    def updates(self) -> list[TableUpdate]:
        out: list[TableUpdate] = [RemoveSnapshotRefUpdate(name) for name in self.removed_refs]
        if self.removed_ids:
            out.append(RemoveSnapshotsUpdate(tuple(sorted(self.removed_ids))))
        return out


def plan_retention(
    base: TableMetadata,
    now_ms: int,
    *,
    expire_older_than_ms: int | None = None,
    retain_last: int | None = None,
    snapshot_ids: Iterable[int] = (),
    table_name: str = "table",
) -> RetentionPlan:
    """Applies the retention policy (module docstring) to ``base`` as of ``now_ms``."""
    props = base.properties
    default_cutoff = (
        expire_older_than_ms
        if expire_older_than_ms is not None
        else now_ms - _int_prop(props, MAX_SNAPSHOT_AGE_MS, MAX_SNAPSHOT_AGE_MS_DEFAULT)
    )
    default_min = (
        retain_last
        if retain_last is not None
        else _int_prop(props, MIN_SNAPSHOTS_TO_KEEP, MIN_SNAPSHOTS_TO_KEEP_DEFAULT)
    )
    default_max_ref_age = _int_prop(props, MAX_REF_AGE_MS, MAX_REF_AGE_MS_DEFAULT)
    snapshots = {s.snapshot_id: s for s in base.snapshots}

    kept_refs: dict[str, SnapshotRef] = {}
    removed_refs: list[str] = []
    for name, ref in base.refs.items():
        if name == MAIN_BRANCH:
            kept_refs[name] = ref
            continue
        snapshot = snapshots.get(ref.snapshot_id)
        if snapshot is None:
            logger.warning(
                "%s: removing ref %r: its snapshot %d does not exist",
                table_name,
                name,
                ref.snapshot_id,
            )
            removed_refs.append(name)
            continue
        max_age = ref.max_ref_age_ms if ref.max_ref_age_ms is not None else default_max_ref_age
        if now_ms - snapshot.timestamp_ms <= max_age:
            kept_refs[name] = ref
        else:
            removed_refs.append(name)

    refs_of: dict[int, list[str]] = {}
    for name, ref in kept_refs.items():
        refs_of.setdefault(ref.snapshot_id, []).append(name)
    explicit = set(snapshot_ids)
    for sid in sorted(explicit):
        if sid in refs_of:
            raise ValidationError(
                f"{table_name}: cannot expire snapshot {sid}: still referenced by "
                f"{', '.join(repr(n) for n in sorted(refs_of[sid]))}"
            )

    retained = set(refs_of)
    referenced: set[int] = set()  # reachable from some ref: branch ancestors and tag snapshots
    for ref in kept_refs.values():
        if ref.snapshot_ref_type != SnapshotRefType.BRANCH:
            referenced.add(ref.snapshot_id)
            continue
        cutoff = (
            now_ms - ref.max_snapshot_age_ms
            if ref.max_snapshot_age_ms is not None
            else default_cutoff
        )
        keep = ref.min_snapshots_to_keep if ref.min_snapshots_to_keep is not None else default_min
        kept = 0
        counting = True
        for s in ancestors_of(ref.snapshot_id, snapshots):
            referenced.add(s.snapshot_id)
            if counting and (kept < keep or s.timestamp_ms >= cutoff):
                retained.add(s.snapshot_id)
                kept += 1
            else:
                counting = False  # the first snapshot past both limits ends the branch's share
    for sid, s in snapshots.items():
        if sid not in referenced and s.timestamp_ms >= default_cutoff:
            retained.add(sid)

    removed = (set(snapshots) - retained) | (explicit & set(snapshots))
    return RetentionPlan(removed_refs, removed, set(snapshots) - removed)


class ExpireSnapshots(TransactionStep):
    """Expires snapshots (PyIceberg's and Java's names); commit with ``commit()`` or a clean exit
    of ``with table.expire_snapshots() as expire: ...``."""

    def __init__(self, transaction: Transaction) -> None:
        self._transaction = transaction
        if not _gc_enabled(transaction.table_metadata.properties):
            raise ValidationError(
                f"{transaction.table.full_name()}: cannot expire snapshots: gc.enabled is false "
                "(deleting files may corrupt other tables)"
            )
        # Fixed when the expiry is created, as in Java: retries judge ages from the same instant.
        self._now_ms = int(time.time() * 1000)
        self._older_than_ms: int | None = None
        self._retain_last: int | None = None
        self._ids: set[int] = set()
        self._clean = True
        self._outside = False
        self._delete_many: Callable[[list[str]], None] | None = None
        self._staged = False
        self._base: TableMetadata | None = None
        self._plan: RetentionPlan | None = None

    def _name(self) -> str:
        return self._transaction.table.full_name()

    # ---- configuration

    def expire_older_than(self, timestamp_ms: int) -> ExpireSnapshots:
        """Sets the default cutoff: snapshots older than this may expire (branches' own
        max-snapshot-age-ms still wins for their ancestors)."""
        if isinstance(timestamp_ms, bool) or not isinstance(timestamp_ms, int):
            raise InvalidArgumentError(f"timestamp_ms must be an int, got {timestamp_ms!r}")
        self._older_than_ms = timestamp_ms
        return self

    def older_than(self, dt: datetime) -> ExpireSnapshots:
        """PyIceberg's form of :meth:`expire_older_than`: a (timezone-aware) datetime."""
        return self.expire_older_than(int(dt.timestamp() * 1000))

    def expire_snapshot_id(self, snapshot_id: int) -> ExpireSnapshots:
        """Expires this snapshot too (it must not be the snapshot of a ref that stays)."""
        if self._transaction.table_metadata.snapshot_by_id(snapshot_id) is None:
            raise ValidationError(
                f"{self._name()}: cannot expire snapshot {snapshot_id}: it does not exist"
            )
        self._ids.add(snapshot_id)
        return self

    by_id = expire_snapshot_id

    def by_ids(self, snapshot_ids: Iterable[int]) -> ExpireSnapshots:
        for sid in snapshot_ids:
            self.expire_snapshot_id(sid)
        return self

    def retain_last(self, num_snapshots: int) -> ExpireSnapshots:
        """Keeps at least this many of each branch's newest snapshots (the default for branches
        without min-snapshots-to-keep of their own)."""
        if isinstance(num_snapshots, bool) or not isinstance(num_snapshots, int):
            raise InvalidArgumentError(f"num_snapshots must be an int, got {num_snapshots!r}")
        if num_snapshots < 1:
            raise InvalidArgumentError(
                f"number of snapshots to retain must be at least 1, got {num_snapshots}"
            )
        self._retain_last = num_snapshots
        return self

    def clean_expired_files(self, clean: bool = True) -> ExpireSnapshots:
        """Whether to delete the files that only expired snapshots reference (default yes)."""
        self._clean = bool(clean)
        return self

    def delete_outside_location(self, delete: bool = True) -> ExpireSnapshots:
        """Whether the cleanup may also delete files outside the table location (default no:
        they may belong to another table or dataset)."""
        self._outside = bool(delete)
        return self

    def delete_with(self, delete_many: Callable[[list[str]], None]) -> ExpireSnapshots:
        """Deletes the expired files with ``delete_many(locations)`` instead of the table
        FileIO's bulk delete (Java's ``deleteWith``), e.g. on Spark executors."""
        self._delete_many = delete_many
        return self

    # ---- the transaction step

    def plan(self, base: TableMetadata | None = None) -> RetentionPlan:
        """What committing now would do, without doing it."""
        return plan_retention(
            self._transaction.table_metadata if base is None else base,
            self._now_ms,
            expire_older_than_ms=self._older_than_ms,
            retain_last=self._retain_last,
            snapshot_ids=self._ids,
            table_name=self._name(),
        )

    def apply(self, base: TableMetadata, attempt: int) -> list[TableUpdate]:
        plan = self.plan(base)
        self._base, self._plan = base, plan
        return plan.updates()

    def commit(self) -> None:
        """Stages the expiry into the transaction (and commits when it is the table's autocommit
        transaction)."""
        if self._staged:
            return
        self._transaction.stage(self)
        self._staged = True

    def __enter__(self) -> ExpireSnapshots:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()

    def on_commit(self, committed: TableMetadata) -> None:
        if not self._clean or self._base is None:
            return
        _clean_expired_files(
            # an encrypted table's expired snapshots' manifest lists have keys only in the base
            remember_snapshots(self._transaction.table.io, self._base),
            self._base,
            committed,
            self._name(),
            self._outside,
            self._delete_many,
        )


# --------------------------------------------------------------------------------------------
# file cleanup


def _manifest_paths(
    io: FileIO, metadata: TableMetadata, snapshots: Sequence[Snapshot], missing_ok: bool
) -> dict[str, dict[str, Any] | None]:
    """The locations of the manifests the snapshots list, each with its manifest list row
    (``None`` for a v1 snapshot's inline manifests), which reading it is checked against."""
    summaries = {metadata.resolve(s.manifest_list): s.summary for s in snapshots if s.manifest_list}
    lists = sorted(summaries)
    paths: dict[str, dict[str, Any] | None] = {}
    for s in snapshots:  # v1 snapshots may list their manifests inline
        if s.manifest_list is None and s.manifests:
            paths.update((metadata.resolve(m), None) for m in s.manifests)
    for location, data in zip(lists, io.read_many(lists, missing_ok=missing_ok), strict=True):
        if data is None:
            logger.info("manifest list %s is already gone", location)
            continue
        rows = read_manifest_list(
            data, path=location, location=metadata.paths_location, summary=summaries[location]
        )
        for row in rows.to_pylist():
            paths[metadata.resolve(row["manifest_path"])] = row
    return paths


def _content_file_paths(
    io: FileIO,
    metadata: TableMetadata,
    manifests: Mapping[str, dict[str, Any] | None],
    *,
    live_only: bool,
    missing_ok: bool,
) -> set[str]:
    """The data/delete file paths the manifests (locations with their manifest list rows)
    reference: in entries of any status, or only in live ones (added or existing; a deleted
    entry's file is not part of its snapshot). A manifest that is not what its row promises
    (cut short) raises: a retained file missed here would be deleted."""
    locations = sorted(manifests)
    read = io.read_many(locations, missing_ok=missing_ok)
    found = [(loc, d) for loc, d in zip(locations, read, strict=True) if d is not None]
    out: set[str] = set()
    for table in read_manifests(
        [d for _, d in found],
        [manifests[loc] for loc, _ in found],
        columns=["status", "data_file.file_path"],
        location=metadata.paths_location,
        paths=[loc for loc, _ in found],
    ):
        paths = table.column("data_file").combine_chunks().field("file_path")
        if live_only:
            paths = paths.filter(pc.not_equal(table.column("status").combine_chunks(), DELETED))
        out.update(metadata.resolve(p) for p in paths.to_pylist())
    return out


def _clean_expired_files(
    io: FileIO,
    base: TableMetadata,
    committed: TableMetadata,
    table_name: str,
    delete_outside_location: bool,
    delete_many: Callable[[list[str]], None] | None = None,
) -> None:
    kept_ids = {s.snapshot_id for s in committed.snapshots}
    expired = [s for s in base.snapshots if s.snapshot_id not in kept_ids]
    if not expired:
        return
    expired_ids = {s.snapshot_id for s in expired}
    retained = list(committed.snapshots)
    retained_lists = {committed.resolve(s.manifest_list) for s in retained if s.manifest_list}
    lists_to_delete = sorted(
        {base.resolve(s.manifest_list) for s in expired if s.manifest_list} - retained_lists
    )
    kept_stats = {committed.resolve(f.statistics_path) for f in committed.statistics} | {
        committed.resolve(f.statistics_path) for f in committed.partition_statistics
    }
    stats_files: tuple[StatisticsFile | PartitionStatisticsFile, ...] = (
        *base.statistics,
        *base.partition_statistics,
    )
    stats_to_delete = sorted(
        {
            base.resolve(f.statistics_path)
            for f in stats_files
            if f.snapshot_id in expired_ids and base.resolve(f.statistics_path) not in kept_stats
        }
    )

    files_to_delete: list[str] = []
    manifests_to_delete: list[str] = []
    try:
        expired_manifests = _manifest_paths(io, base, expired, missing_ok=True)
        retained_manifests = _manifest_paths(io, committed, retained, missing_ok=False)
        manifests_to_delete = sorted(expired_manifests.keys() - retained_manifests.keys())
        candidates = _content_file_paths(
            io,
            base,
            {m: expired_manifests[m] for m in manifests_to_delete},
            live_only=False,
            missing_ok=True,
        )
        if candidates:
            candidates -= _content_file_paths(
                io, committed, retained_manifests, live_only=True, missing_ok=False
            )
        files_to_delete = sorted(candidates)
    except (FrazilError, OSError) as e:
        # Without the retained snapshots' complete file set no manifest or data file is
        # provably unreachable; keep them all (orphans are harmless, a lost file is not).
        logger.warning(
            "%s: expiry keeps the expired snapshots' manifests and data files: %s",
            table_name,
            e,
        )
        files_to_delete, manifests_to_delete = [], []

    if not delete_outside_location:
        context = f"{table_name}: expiry"
        files_to_delete, manifests_to_delete, lists_to_delete, stats_to_delete = (
            under_location(doomed, committed.location, context)
            for doomed in (files_to_delete, manifests_to_delete, lists_to_delete, stats_to_delete)
        )
    delete = delete_many if delete_many is not None else io.delete_many
    # Data first, metadata last: an interrupted cleanup leaves only unreferenced files behind.
    for doomed in (files_to_delete, manifests_to_delete, lists_to_delete, stats_to_delete):
        if doomed:
            delete(doomed)
    logger.info(
        "%s: expired %d snapshots; deleted %d data and delete files, %d manifests, "
        "%d manifest lists, %d statistics files",
        table_name,
        len(expired),
        len(files_to_delete),
        len(manifests_to_delete),
        len(lists_to_delete),
        len(stats_to_delete),
    )
