"""Transactions: changes staged against a base metadata and committed atomically, with retries.

A transaction is a list of *steps*. A step turns a base metadata into table updates; a schema
change is a fixed list of updates with the requirements it was built against, a snapshot
producer (append, overwrite, delete, rewrite) computes its snapshot from the base each time, and
a row-level change (delete, overwrite or upsert by filter) re-plans when the rows it read have
changed. Staging a step applies it at once, so ``transaction.table_metadata`` shows every staged
change.

Commit sends the updates with requirements derived from the base (as the REST protocol and the
Java reference derive them: the table UUID, and for every changed ref, schema, spec or sort
order the base's value; for every branch a step read, its head). Before the first attempt the
transaction checks the catalog's pointer and, when another writer committed since the base was
loaded, re-runs its steps on the current metadata (as Java's ``BaseTransaction`` does), so a
stale handle costs one reload, not a failed attempt. When another writer wins the race the
catalog raises :class:`CommitFailedError`; the transaction then waits (:class:`RetryPolicy`),
reloads the table and re-runs every step against the new base. Each step re-validates there (an
append always applies; a delete checks its files are still live, and a delete by filter plans
again when its plan no longer holds; a schema change checks its requirements) and reuses what it
already wrote (manifests keep inheriting sequence numbers), so usually only the manifest list
and the metadata file are written again. A step that no longer applies raises, and nothing is
committed.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING

from frazil.encryption.guard import catalog_properties, check_encryption_request
from frazil.encryption.table_io import new_key_entries
from frazil.exceptions import CommitFailedError, CommitStateUnknownError, ValidationError
from frazil.metadata import EncryptedKey, PartitionStatisticsFile, StatisticsFile, TableMetadata
from frazil.metadata.name_mapping import DEFAULT_NAME_MAPPING_PROPERTY, create_mapping_from_schema
from frazil.table.step import StaticStep, TransactionStep
from frazil.table.update import (
    AddEncryptionKeyUpdate,
    AddPartitionSpecUpdate,
    AddSchemaUpdate,
    AssertCreate,
    AssertCurrentSchemaId,
    AssertDefaultSortOrderId,
    AssertDefaultSpecId,
    AssertLastAssignedFieldId,
    AssertLastAssignedPartitionId,
    AssertRefSnapshotId,
    AssertTableUUID,
    MetadataBuilder,
    RemovePartitionSpecsUpdate,
    RemovePartitionStatisticsUpdate,
    RemovePropertiesUpdate,
    RemoveSchemasUpdate,
    RemoveSnapshotRefUpdate,
    RemoveSnapshotsUpdate,
    RemoveStatisticsUpdate,
    SetCurrentSchemaUpdate,
    SetDefaultSortOrderUpdate,
    SetDefaultSpecUpdate,
    SetLocationUpdate,
    SetPartitionStatisticsUpdate,
    SetPropertiesUpdate,
    SetSnapshotRefUpdate,
    SetStatisticsUpdate,
    TableRequirement,
    TableUpdate,
    UpgradeFormatVersionUpdate,
)

# The operations below import their module (writes, schema and spec updates, maintenance) on
# first use: ``import frazil.table`` stays light, and none of those modules imports this one.
if TYPE_CHECKING:
    from frazil.expressions import BooleanExpression
    from frazil.table import Table
    from frazil.table.maintenance.expire_snapshots import ExpireSnapshots
    from frazil.table.statistics import UpdateStatistics
    from frazil.table.update.manage_snapshots import ManageSnapshots
    from frazil.table.update.schema import UpdateSchema
    from frazil.table.update.snapshot import UpdateSnapshot
    from frazil.table.update.sort_order import ReplaceSortOrder, UpdateSortOrder
    from frazil.table.update.spec import UpdateSpec
    from frazil.table.write.conform import ArrowData
    from frazil.table.write.upsert import UpsertResult

__all__ = ["RetryPolicy", "Transaction", "requirements_for"]

logger = logging.getLogger(__name__)


def requirements_for(
    base: TableMetadata | None,
    updates: Iterable[TableUpdate],
    refs_read: Iterable[str] = (),
) -> list[TableRequirement]:
    """The requirements a commit of ``updates`` on ``base`` needs (the REST protocol's rules):
    the table UUID, and the base's value of every ref, schema, spec and sort order changed, and
    of every branch in ``refs_read`` (branches the changes were computed from)."""
    if base is None:
        return [AssertCreate()]
    out: list[TableRequirement] = []
    if base.table_uuid is not None:
        out.append(AssertTableUUID(base.table_uuid))
    seen: set[str | tuple[str, str]] = set()

    def once(key: str | tuple[str, str], make: Callable[[], TableRequirement]) -> None:
        if key not in seen:
            seen.add(key)
            out.append(make())

    for u in updates:
        if isinstance(u, AddSchemaUpdate):
            once("field-id", lambda: AssertLastAssignedFieldId(base.last_column_id))
        elif isinstance(u, (SetCurrentSchemaUpdate, RemoveSchemasUpdate)):
            once("schema", lambda: AssertCurrentSchemaId(base.current_schema_id))
        elif isinstance(u, AddPartitionSpecUpdate):
            once("partition-id", lambda: AssertLastAssignedPartitionId(base.last_partition_id))
        elif isinstance(u, (SetDefaultSpecUpdate, RemovePartitionSpecsUpdate)):
            once("spec", lambda: AssertDefaultSpecId(base.default_spec_id))
        elif isinstance(u, SetDefaultSortOrderUpdate):
            once("order", lambda: AssertDefaultSortOrderId(base.default_sort_order_id))
        elif isinstance(u, RemoveSnapshotsUpdate):
            # Removing a snapshot also drops refs that point at it (as Java's builder does), so
            # a ref moved onto it concurrently must fail the commit rather than vanish.
            for name, ref in base.refs.items():
                once(("ref", name), partial(AssertRefSnapshotId, name, ref.snapshot_id))
        elif isinstance(u, (SetSnapshotRefUpdate, RemoveSnapshotRefUpdate)):
            name = u.ref_name
            current = base.refs.get(name)
            snapshot_id = None if current is None else current.snapshot_id
            once(("ref", name), partial(AssertRefSnapshotId, name, snapshot_id))
    for name in refs_read:
        current = base.refs.get(name)
        snapshot_id = None if current is None else current.snapshot_id
        once(("ref", name), partial(AssertRefSnapshotId, name, snapshot_id))
    return out


NUM_RETRIES = "commit.retry.num-retries"
MIN_WAIT_MS = "commit.retry.min-wait-ms"
MAX_WAIT_MS = "commit.retry.max-wait-ms"
TOTAL_TIMEOUT_MS = "commit.retry.total-timeout-ms"


@dataclass(frozen=True)
class RetryPolicy:
    """When a commit that lost the race is tried again: the ``commit.retry.*`` table properties.

    The property names are the Java reference's, and so are the minimum wait (100 ms) and the
    total timeout (30 minutes); two defaults are not. Java gives up after 4 retries, which fails
    appends as soon as a handful of writers share a table, although an append cannot conflict
    and every retry of one can land: frazil bounds retries by ``total_timeout_ms`` and bounds
    the count only when ``commit.retry.num-retries`` is set. That is safe because a retry
    happens only after every step re-validated against the new head: a real conflict (a file
    to delete is gone, a schema changed under a schema change) raises at once and is never
    retried, and a delete or upsert by filter re-plans on the new head instead of failing. And
    the wait is capped at 5 s, not 60 s: losing the race says another writer committed, not
    that the catalog is overloaded, so a writer that lost several times in a row should not
    sleep for a minute while the table is idle.

    Waits double from ``min_wait_ms`` up to ``max_wait_ms`` with "equal jitter" (a uniform
    draw between half the step and the step), so that writers that collided spread out."""

    num_retries: int | None = None
    min_wait_ms: int = 100
    max_wait_ms: int = 5_000
    total_timeout_ms: int = 1_800_000

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> RetryPolicy:
        def get(key: str, default: int | None) -> int | None:
            try:
                return max(0, int(props[key]))
            except (KeyError, ValueError):
                return default

        d = cls()
        return cls(
            get(NUM_RETRIES, None),
            get(MIN_WAIT_MS, d.min_wait_ms) or 0,
            get(MAX_WAIT_MS, d.max_wait_ms) or 0,
            get(TOTAL_TIMEOUT_MS, d.total_timeout_ms) or 0,
        )

    def wait_seconds(self, attempt: int) -> float:
        """Backoff before retry ``attempt`` (1-based): doubling from the minimum, capped, with
        jitter so that writers that collided do not collide again in lockstep."""
        delay = min(self.max_wait_ms, self.min_wait_ms * 2 ** min(attempt - 1, 30))
        return random.uniform(delay / 2, delay) / 1000.0

    def gives_up(self, attempt: int, started: float, now: float) -> bool:
        """Whether retry ``attempt`` (1-based) is past the count or the time budget."""
        if self.num_retries is not None and attempt > self.num_retries:
            return True
        return (now - started) * 1000.0 >= self.total_timeout_ms

    def describe(self) -> str:
        count = "" if self.num_retries is None else f" of {self.num_retries}"
        return f"{count} (within {self.total_timeout_ms / 1000:.0f} s)"


class Transaction:
    """Changes to one table, committed together. Use as a context manager (commits on a clean
    exit) or call :meth:`commit_transaction`."""

    def __init__(self, table: Table, autocommit: bool = False, *, create: bool = False) -> None:
        self._table = table
        self._autocommit = autocommit
        self._create = create
        self._steps: list[TransactionStep] = []
        self._reset(table.metadata)
        self._committed = False

    # ---- state

    def _reset(self, base: TableMetadata) -> None:
        self._base = base
        self._base_location = self._table.metadata_location
        self._builder = MetadataBuilder(base)
        self._updates: list[TableUpdate] = []

    @property
    def table_metadata(self) -> TableMetadata:
        """The base metadata with every staged change applied."""
        return self._builder.current

    @property
    def table(self) -> Table:
        return self._table

    @property
    def base_metadata(self) -> TableMetadata:
        """The catalog's metadata this transaction builds on (replaced when it retries)."""
        return self._base

    def stage(self, step: TransactionStep) -> None:
        """Applies a step to the current staged metadata and keeps it for commit (and retries)."""
        if self._committed:
            raise ValidationError("this transaction has already been committed")
        updates = step.apply(self.table_metadata, 0)
        for u in updates:
            self._builder.apply(u)
        self._steps.append(step)
        self._updates.extend(updates)
        if self._autocommit:
            self.commit_transaction()

    def _stage_static(
        self, updates: list[TableUpdate], requirements: list[TableRequirement]
    ) -> None:
        self.stage(StaticStep(updates, requirements))

    # ---- changes (PyIceberg's names)

    def set_properties(
        self, properties: Mapping[str, str] | None = None, **kwargs: str
    ) -> Transaction:
        updates = {**(properties or {}), **kwargs}
        if updates:
            self._stage_static([SetPropertiesUpdate({k: str(v) for k, v in updates.items()})], [])
        return self

    def remove_properties(self, *removals: str) -> Transaction:
        if removals:
            self._stage_static([RemovePropertiesUpdate(tuple(removals))], [])
        return self

    def update_location(self, location: str) -> Transaction:
        self._stage_static([SetLocationUpdate(location)], [])
        return self

    def upgrade_table_version(self, format_version: int) -> Transaction:
        if format_version != self.table_metadata.format_version:
            self._stage_static([UpgradeFormatVersionUpdate(format_version)], [])
        return self

    def set_statistics(self, statistics_file: StatisticsFile) -> Transaction:
        """Registers a table statistics file (``set-statistics``), replacing its snapshot's.
        An encrypted table's file names its wrapped key (``key-id``): the ``encryption-keys``
        entries it needs are added with it."""
        known = (k.key_id for k in self.table_metadata.encryption_keys)
        keys: list[TableUpdate] = [
            AddEncryptionKeyUpdate(EncryptedKey(**vars(k)))
            for k in new_key_entries(self._table.io, statistics_file.key_id, known)
        ]
        self._stage_static([*keys, SetStatisticsUpdate(statistics_file)], [])
        return self

    def update_statistics(self) -> UpdateStatistics:
        """PyIceberg's builder of ``set-statistics`` / ``remove-statistics`` updates."""
        from frazil.table.statistics import UpdateStatistics

        return UpdateStatistics(self)

    def remove_statistics(self, snapshot_id: int) -> Transaction:
        self._stage_static([RemoveStatisticsUpdate(snapshot_id)], [])
        return self

    def set_partition_statistics(self, statistics_file: PartitionStatisticsFile) -> Transaction:
        """Registers a partition statistics file (``set-partition-statistics``)."""
        self._stage_static([SetPartitionStatisticsUpdate(statistics_file)], [])
        return self

    def remove_partition_statistics(self, snapshot_id: int) -> Transaction:
        self._stage_static([RemovePartitionStatisticsUpdate(snapshot_id)], [])
        return self

    def update_schema(
        self, allow_incompatible_changes: bool = False, case_sensitive: bool = True
    ) -> UpdateSchema:
        from frazil.table.update.schema import UpdateSchema

        return UpdateSchema(
            self.table_metadata,
            allow_incompatible_changes=allow_incompatible_changes,
            case_sensitive=case_sensitive,
            on_commit=self._stage_static,
        )

    def update_spec(self, case_sensitive: bool = True) -> UpdateSpec:
        from frazil.table.update.spec import UpdateSpec

        return UpdateSpec(
            self.table_metadata, case_sensitive=case_sensitive, on_commit=self._stage_static
        )

    def replace_sort_order(self, case_sensitive: bool = True) -> ReplaceSortOrder:
        from frazil.table.update.sort_order import ReplaceSortOrder

        return ReplaceSortOrder(
            self.table_metadata, case_sensitive=case_sensitive, on_commit=self._stage_static
        )

    def update_sort_order(self, case_sensitive: bool = True) -> UpdateSortOrder:
        """PyIceberg's sort-order builder (its defaults: nulls last unless told otherwise)."""
        from frazil.table.update.sort_order import UpdateSortOrder

        return UpdateSortOrder(
            self.table_metadata, case_sensitive=case_sensitive, on_commit=self._stage_static
        )

    def update_snapshot(
        self, snapshot_properties: Mapping[str, str] | None = None, branch: str | None = None
    ) -> UpdateSnapshot:
        from frazil.table.update.snapshot import UpdateSnapshot

        return UpdateSnapshot(self, snapshot_properties=snapshot_properties, branch=branch)

    def manage_snapshots(self) -> ManageSnapshots:
        from frazil.table.update.manage_snapshots import ManageSnapshots

        return ManageSnapshots(self)

    def expire_snapshots(self) -> ExpireSnapshots:
        from frazil.table.maintenance.expire_snapshots import ExpireSnapshots

        return ExpireSnapshots(self)

    def append(
        self,
        df: ArrowData,
        snapshot_properties: Mapping[str, str] | None = None,
        branch: str | None = None,
    ) -> Transaction:
        """Writes Arrow data (a table, batches or a stream) as data files of the table and
        appends them in one snapshot (:mod:`frazil.table.write.writer`)."""
        from frazil.table.write.writer import append

        append(self, df, snapshot_properties, branch)
        return self

    def add_files(
        self,
        file_paths: Sequence[str],
        snapshot_properties: Mapping[str, str] | None = None,
        branch: str | None = None,
        check_duplicate_files: bool = True,
    ) -> Transaction:
        """Appends existing Parquet files (footers read for metrics and partition values)."""
        from frazil.table.write.add_files import data_files_from_parquet

        # Files without field ids are read through the name mapping; pin it now (as PyIceberg
        # does) so that a later rename does not lose their columns.
        if DEFAULT_NAME_MAPPING_PROPERTY not in self.table_metadata.properties:
            mapping = create_mapping_from_schema(self.table_metadata.schema())
            self.set_properties({DEFAULT_NAME_MAPPING_PROPERTY: mapping.to_json()})
        files = data_files_from_parquet(
            self._table.io,
            self.table_metadata,
            file_paths,
            check_duplicate_files=check_duplicate_files,
        )
        with self.update_snapshot(snapshot_properties, branch).fast_append() as append:
            for f in files:
                append.append_data_file(f)
        return self

    def overwrite(
        self,
        df: ArrowData,
        overwrite_filter: str | BooleanExpression | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
        case_sensitive: bool = True,
        branch: str | None = None,
    ) -> Transaction:
        """Deletes the rows matching ``overwrite_filter`` (default: all) and appends ``df``, in
        one snapshot (:mod:`frazil.table.write.row_delta`)."""
        from frazil.table.write.row_delta import overwrite

        self._refresh_before_reading()

        overwrite(self, df, overwrite_filter, snapshot_properties, case_sensitive, branch)
        return self

    def dynamic_partition_overwrite(
        self,
        df: ArrowData,
        snapshot_properties: Mapping[str, str] | None = None,
        branch: str | None = None,
    ) -> Transaction:
        """Replaces the partitions ``df``'s rows fall in with ``df``, in one ``overwrite``
        snapshot (:mod:`frazil.table.write.dynamic_overwrite`)."""
        from frazil.table.write.dynamic_overwrite import dynamic_partition_overwrite

        self._refresh_before_reading()
        dynamic_partition_overwrite(self, df, snapshot_properties, branch)
        return self

    def delete(
        self,
        delete_filter: str | BooleanExpression,
        snapshot_properties: Mapping[str, str] | None = None,
        case_sensitive: bool = True,
        branch: str | None = None,
    ) -> Transaction:
        """Deletes the rows for which ``delete_filter`` is true, per ``write.delete.mode``."""
        from frazil.table.write.row_delta import delete

        self._refresh_before_reading()

        delete(self, delete_filter, snapshot_properties, case_sensitive, branch)
        return self

    def upsert(
        self,
        df: ArrowData,
        join_cols: Sequence[str] | None = None,
        when_matched_update_all: bool = True,
        when_not_matched_insert_all: bool = True,
        case_sensitive: bool = True,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> UpsertResult:
        """Updates matching rows and inserts new ones, in one snapshot; returns an
        ``UpsertResult``."""
        from frazil.table.write.upsert import upsert

        self._refresh_before_reading()

        return upsert(
            self,
            df,
            join_cols,
            when_matched_update_all,
            when_not_matched_insert_all,
            case_sensitive,
            branch,
            snapshot_properties,
        )

    # ---- commit

    def __enter__(self) -> Transaction:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.commit_transaction()
        elif not self._committed:
            self._abort()

    def _abort(self) -> None:
        for step in self._steps:
            try:
                step.on_abort()
            except Exception:  # cleanup is best effort: orphans are harmless, masking is not
                logger.warning("cleaning up after a failed commit failed", exc_info=True)

    def _rebase(self, base: TableMetadata, attempt: int) -> None:
        self._reset(base)
        for step in self._steps:
            updates = step.apply(self.table_metadata, attempt)
            for u in updates:
                self._builder.apply(u)
            self._updates.extend(updates)

    def _refresh(self, attempt: int) -> None:
        """Moves the base to the table's current metadata if another writer committed since,
        re-running the staged steps there. The catalog's pointer is checked first where the
        catalog can read it cheaply; otherwise the table is reloaded."""
        if self._create:
            return
        table = self._table
        locate = getattr(table.catalog, "_current_metadata_location", None)
        if locate is not None and locate(table.identifier) == self._base_location:
            return
        table.refresh()
        if table.metadata_location != self._base_location:
            if attempt == 0 and self._steps:
                logger.info(
                    "commit to %s rebased: another writer committed since it was read; the "
                    "staged changes are applied again on %s",
                    table.full_name(),
                    table.metadata_location,
                )
            self._rebase(table.metadata, attempt)

    def _refresh_before_reading(self) -> None:
        """A change computed from the table's rows (delete, overwrite or upsert by filter) reads
        the table as it is now, not as the handle last saw it (nothing is staged yet to redo)."""
        if not self._steps and not self._committed:
            self._refresh(0)

    def commit_transaction(self) -> Table:
        """Commits every staged step, retrying on conflicts; returns the refreshed table."""
        table = self._table
        if self._committed:
            return table
        if not self._steps and not self._create:
            self._committed = True
            return table
        # Asking for encryption without a KMS that can provide it is refused before anything
        # is written (frazil.encryption.guard).
        check_encryption_request(
            catalog_properties(table.catalog), self.table_metadata, table.full_name()
        )
        policy = RetryPolicy.from_properties(self.table_metadata.properties)
        started = time.monotonic()
        attempt = 0
        try:
            # Java's BaseTransaction does the same before its first attempt: a handle loaded
            # before another writer's commit would otherwise fail once (and back off) for sure.
            self._refresh(attempt)
        except BaseException:
            self._abort()
            raise
        while True:
            refs_read = {name for step in self._steps for name in step.refs_read()}
            requirements = requirements_for(
                None if self._create else self._base, self._updates, refs_read
            )
            try:
                response = table.catalog.commit_table(table, requirements, self._updates)
                break
            except CommitFailedError as e:
                attempt += 1
                if self._create or policy.gives_up(attempt, started, time.monotonic()):
                    self._abort()
                    raise
                wait = policy.wait_seconds(attempt)
                logger.info(
                    "commit to %s failed (%s); retry %d%s in %.2f s",
                    table.full_name(),
                    e,
                    attempt,
                    policy.describe(),
                    wait,
                )
                time.sleep(wait)
                try:
                    table.refresh()
                    self._rebase(table.metadata, attempt)
                except BaseException:
                    self._abort()
                    raise
            except CommitStateUnknownError:
                # The new metadata may be current: deleting its files could corrupt the table.
                raise
            except BaseException:
                self._abort()
                raise
        self._committed = True
        table._set_metadata(response.metadata, response.metadata_location)
        for step in self._steps:
            try:
                step.on_commit(response.metadata)
            except Exception:
                logger.warning("post-commit cleanup of %s failed", table.full_name(), exc_info=True)
        return table
