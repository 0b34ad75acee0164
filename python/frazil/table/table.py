"""The table handle: :class:`Table`, a catalog's view of one table's current metadata with the
ways to read and change it, and :class:`MaintenanceTable` (``table.maintenance``). Both are
exported from :mod:`frazil.table`; they live here so that :mod:`frazil.table.static` can
subclass :class:`Table` without importing the package that exports it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from frazil.encryption.guard import catalog_properties, table_file_io
from frazil.expressions import AlwaysTrue
from frazil.metadata import (
    PartitionStatisticsFile,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    StatisticsFile,
    TableMetadata,
)
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.sorting import SortOrder
from frazil.table.transaction import Transaction

# Table's methods import the subsystem they hand over to (scan, inspect, maintenance, statistics)
# on first use: ``import frazil.table`` stays light, and none of those modules imports this one.
if TYPE_CHECKING:
    import polars as pl

    from frazil.catalog import Catalog, Identifier
    from frazil.expressions import BooleanExpression
    from frazil.io import FileIO
    from frazil.metadata.name_mapping import NameMapping
    from frazil.table.inspect import InspectTable
    from frazil.table.maintenance.expire_snapshots import ExpireSnapshots
    from frazil.table.maintenance.rewrite_data_files import RewriteDataFilesResult
    from frazil.table.maintenance.rewrite_manifests import RewriteManifestsResult
    from frazil.table.maintenance.rewrite_position_deletes import RewritePositionDeletesResult
    from frazil.table.scan import DataScan
    from frazil.table.scan.changelog import ChangelogScan
    from frazil.table.scan.incremental import IncrementalAppendScan
    from frazil.table.statistics import UpdateStatistics
    from frazil.table.update.manage_snapshots import ManageSnapshots
    from frazil.table.update.schema import UpdateSchema
    from frazil.table.update.snapshot import UpdateSnapshot
    from frazil.table.update.sort_order import ReplaceSortOrder, UpdateSortOrder
    from frazil.table.update.spec import UpdateSpec
    from frazil.table.write.conform import ArrowData
    from frazil.table.write.upsert import UpsertResult

__all__ = ["MaintenanceTable", "Table"]


class MaintenanceTable:
    """``table.maintenance``: PyIceberg's home for maintenance actions."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def expire_snapshots(self) -> ExpireSnapshots:
        """Snapshot expiry (``older_than(dt)``, ``by_id(id)``, ``by_ids(ids)``, then
        ``commit()``), the same step as :meth:`Table.expire_snapshots`."""
        return self._table.expire_snapshots()


class Table:
    """One table of a catalog at its last known metadata version (``refresh()`` reloads it)."""

    def __init__(
        self,
        identifier: Identifier,
        metadata: TableMetadata,
        metadata_location: str | None,
        io: FileIO,
        catalog: Catalog,
    ) -> None:
        self._identifier = tuple(identifier)
        self.metadata = metadata
        self.metadata_location = metadata_location
        self._io = io
        self.catalog = catalog
        self._guarded: tuple[TableMetadata, FileIO] | None = None

    def __repr__(self) -> str:
        return f"Table({self.full_name()!r}, {self.metadata_location!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Table)
            and self._identifier == other._identifier
            and self.metadata_location == other.metadata_location
            and self.metadata == other.metadata
        )

    __hash__ = None  # type: ignore[assignment]

    @property
    def io(self) -> FileIO:
        """The table's FileIO. For an encrypted table whose files frazil cannot decrypt or
        encrypt, a guard that refuses every file but the metadata JSON with an
        :class:`~frazil.exceptions.EncryptionError` naming the key ids
        (:func:`frazil.encryption.guard_table_io`)."""
        metadata = self.metadata
        if self._guarded is None or self._guarded[0] is not metadata:
            io = table_file_io(
                self._io,
                metadata,
                catalog_properties(self.catalog),
                self.full_name(),
                _list_decoder(metadata),
            )
            self._guarded = (metadata, io)
        return self._guarded[1]

    @io.setter
    def io(self, io: FileIO) -> None:
        self._io = io
        self._guarded = None

    def _set_metadata(self, metadata: TableMetadata, metadata_location: str | None) -> None:
        self.metadata = metadata
        self.metadata_location = metadata_location

    # ---- identity and lookups

    @property
    def identifier(self) -> Identifier:
        return self._identifier

    def name(self) -> Identifier:
        """The identifier tuple, e.g. ``("db", "events")`` (as PyIceberg's ``Table.name()``)."""
        return self._identifier

    def full_name(self) -> str:
        """The identifier as one dotted string, e.g. ``"db.events"`` (for messages and logs)."""
        return ".".join(self._identifier)

    @property
    def last_sequence_number(self) -> int:
        return self.metadata.last_sequence_number

    def name_mapping(self) -> NameMapping | None:
        """The table's ``schema.name-mapping.default`` property, parsed (``None`` if unset)."""
        return self.metadata.name_mapping()

    @property
    def format_version(self) -> int:
        return self.metadata.format_version

    @property
    def properties(self) -> Mapping[str, str]:
        return self.metadata.properties

    def location(self) -> str:
        return self.metadata.location or ""

    def schema(self) -> Schema:
        return self.metadata.schema()

    def schemas(self) -> dict[int, Schema]:
        return {s.schema_id: s for s in self.metadata.schemas}

    def spec(self) -> PartitionSpec:
        return self.metadata.spec()

    def specs(self) -> dict[int, PartitionSpec]:
        return self.metadata.specs()

    def sort_order(self) -> SortOrder:
        return self.metadata.sort_order()

    def sort_orders(self) -> dict[int, SortOrder]:
        return {o.order_id: o for o in self.metadata.sort_orders}

    def current_snapshot(self) -> Snapshot | None:
        return self.metadata.current_snapshot()

    def snapshots(self) -> list[Snapshot]:
        return list(self.metadata.snapshots)

    def snapshot_by_id(self, snapshot_id: int) -> Snapshot | None:
        return self.metadata.snapshot_by_id(snapshot_id)

    def snapshot_by_name(self, name: str) -> Snapshot | None:
        """The snapshot a branch or tag points to."""
        return self.metadata.snapshot_by_name(name)

    def refs(self) -> dict[str, SnapshotRef]:
        return dict(self.metadata.refs)

    def history(self) -> list[SnapshotLogEntry]:
        """The snapshot log: when each snapshot became current on ``main``."""
        return list(self.metadata.snapshot_log)

    # ---- catalog round trips

    def refresh(self) -> Table:
        """Reloads the current metadata from the catalog, in place."""
        fresh = self.catalog.load_table(self._identifier)
        self._set_metadata(fresh.metadata, fresh.metadata_location)
        return self

    def transaction(self) -> Transaction:
        return self._transaction(autocommit=False)

    def _transaction(self, autocommit: bool) -> Transaction:
        """Every change starts here (a read-only table refuses it here)."""
        return Transaction(self, autocommit=autocommit)

    def update_schema(
        self, allow_incompatible_changes: bool = False, case_sensitive: bool = True
    ) -> UpdateSchema:
        return self._transaction(autocommit=True).update_schema(
            allow_incompatible_changes=allow_incompatible_changes, case_sensitive=case_sensitive
        )

    def update_spec(self, case_sensitive: bool = True) -> UpdateSpec:
        return self._transaction(autocommit=True).update_spec(case_sensitive=case_sensitive)

    def replace_sort_order(self, case_sensitive: bool = True) -> ReplaceSortOrder:
        return self._transaction(autocommit=True).replace_sort_order(case_sensitive=case_sensitive)

    def update_sort_order(self, case_sensitive: bool = True) -> UpdateSortOrder:
        """PyIceberg's sort-order builder: ``asc``/``desc`` calls build the new order from
        scratch, nulls last unless told otherwise (PyIceberg's defaults)."""
        return self._transaction(autocommit=True).update_sort_order(case_sensitive=case_sensitive)

    def update_snapshot(
        self, snapshot_properties: Mapping[str, str] | None = None, branch: str | None = None
    ) -> UpdateSnapshot:
        return self._transaction(autocommit=True).update_snapshot(snapshot_properties, branch)

    def manage_snapshots(self) -> ManageSnapshots:
        return self._transaction(autocommit=True).manage_snapshots()

    def expire_snapshots(self) -> ExpireSnapshots:
        return self._transaction(autocommit=True).expire_snapshots()

    def compute_statistics(
        self, columns: Sequence[str] | None = None, snapshot_id: int | None = None
    ) -> StatisticsFile:
        """Writes and commits NDV theta sketches of ``columns`` (default: every primitive
        column) of a snapshot (default: current); see :mod:`frazil.table.statistics`."""
        from frazil.table.statistics import compute_statistics

        return compute_statistics(self, columns, snapshot_id)

    def update_statistics(self) -> UpdateStatistics:
        """PyIceberg's ``set_statistics`` / ``remove_statistics`` builder (commits on
        ``commit()`` or leaving a ``with`` block)."""
        return self._transaction(autocommit=True).update_statistics()

    def read_ndv(self, snapshot_id: int | None = None) -> dict[int, int]:
        """NDV per field id from a snapshot's statistics file (``{}`` when it has none)."""
        from frazil.table.statistics import read_ndv

        return read_ndv(self, snapshot_id)

    def compute_partition_statistics(
        self, snapshot_id: int | None = None
    ) -> PartitionStatisticsFile | None:
        """Writes and commits the partition statistics file of a snapshot (default: current),
        incrementally from an earlier one; see :mod:`frazil.table.partition_statistics`."""
        from frazil.table.partition_statistics import compute_partition_statistics

        return compute_partition_statistics(self, snapshot_id)

    @property
    def maintenance(self) -> MaintenanceTable:
        return MaintenanceTable(self)

    # ---- reads

    @property
    def inspect(self) -> InspectTable:
        """The metadata tables (``snapshots``, ``files``, ``partitions``, ...) as Arrow."""
        from frazil.table.inspect import InspectTable

        return InspectTable(self)

    def scan(
        self,
        row_filter: str | BooleanExpression | None = None,
        selected_fields: tuple[str, ...] = ("*",),
        case_sensitive: bool = True,
        snapshot_id: int | None = None,
        options: Mapping[str, str] | None = None,
        limit: int | None = None,
    ) -> DataScan:
        """A scan of the table (PyIceberg's arguments); ``row_filter`` is an expression or a
        filter string such as ``"id > 5 AND day < '2024-01-02'"``."""
        from frazil.table.scan import scan

        return scan(
            self,
            AlwaysTrue() if row_filter is None else row_filter,
            selected_fields,
            case_sensitive,
            snapshot_id,
            options,
            limit,
        )

    def incremental_append_scan(
        self,
        from_snapshot_id: int | None = None,
        to_snapshot_id: int | None = None,
        *,
        from_snapshot_id_exclusive: int | None = None,
        from_snapshot_id_inclusive: int | None = None,
        to_snapshot_id_inclusive: int | None = None,
        row_filter: str | BooleanExpression | None = None,
        selected_fields: tuple[str, ...] = ("*",),
        case_sensitive: bool = True,
        options: Mapping[str, str] | None = None,
        limit: int | None = None,
    ) -> IncrementalAppendScan:
        """The rows ``append`` snapshots added after ``from_snapshot_id`` (exclusive; default:
        the whole lineage) up to ``to_snapshot_id`` (default: current), with PyIceberg's
        keywords too. See :mod:`frazil.table.scan.incremental`."""
        from frazil.table.scan.incremental import incremental_append_scan

        return incremental_append_scan(
            self,
            from_snapshot_id,
            to_snapshot_id,
            from_snapshot_id_exclusive=from_snapshot_id_exclusive,
            from_snapshot_id_inclusive=from_snapshot_id_inclusive,
            to_snapshot_id_inclusive=to_snapshot_id_inclusive,
            row_filter=AlwaysTrue() if row_filter is None else row_filter,
            selected_fields=selected_fields,
            case_sensitive=case_sensitive,
            options=options,
            limit=limit,
        )

    def to_polars(self) -> pl.LazyFrame:
        """A Polars LazyFrame over a scan of the current snapshot (columns and row limits are
        pushed into the scan; see :meth:`DataScan.to_polars_lazy`)."""
        return self.scan().to_polars_lazy()

    def snapshot_as_of_timestamp(
        self, timestamp_ms: int, inclusive: bool = True
    ) -> Snapshot | None:
        """The snapshot that was current on ``main`` at ``timestamp_ms``."""
        from frazil.table.scan import snapshot_as_of_timestamp

        return snapshot_as_of_timestamp(self.metadata, timestamp_ms, inclusive)

    # ---- writes

    def append(
        self,
        df: ArrowData,
        snapshot_properties: Mapping[str, str] | None = None,
        branch: str | None = None,
    ) -> None:
        """Writes Arrow data as data files and appends them to the table, in one snapshot."""
        with self.transaction() as tx:
            tx.append(df, snapshot_properties, branch)

    def add_files(
        self,
        file_paths: Sequence[str],
        snapshot_properties: Mapping[str, str] | None = None,
        branch: str | None = None,
        check_duplicate_files: bool = True,
    ) -> None:
        """Appends existing Parquet files to the table, in one snapshot."""
        with self.transaction() as tx:
            tx.add_files(file_paths, snapshot_properties, branch, check_duplicate_files)

    def overwrite(
        self,
        df: ArrowData,
        overwrite_filter: str | BooleanExpression | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
        case_sensitive: bool = True,
        branch: str | None = None,
    ) -> None:
        """Deletes the rows matching ``overwrite_filter`` (default: all) and appends ``df``, in
        one snapshot."""
        with self.transaction() as tx:
            tx.overwrite(df, overwrite_filter, snapshot_properties, case_sensitive, branch)

    def dynamic_partition_overwrite(
        self,
        df: ArrowData,
        snapshot_properties: Mapping[str, str] | None = None,
        branch: str | None = None,
    ) -> None:
        """Replaces exactly the partitions (of the current spec; identity fields only) that
        ``df``'s rows fall in with ``df``, in one ``overwrite`` snapshot."""
        with self.transaction() as tx:
            tx.dynamic_partition_overwrite(df, snapshot_properties, branch)

    def delete(
        self,
        delete_filter: str | BooleanExpression,
        snapshot_properties: Mapping[str, str] | None = None,
        case_sensitive: bool = True,
        branch: str | None = None,
    ) -> None:
        """Deletes the rows for which ``delete_filter`` is true, in one snapshot."""
        with self.transaction() as tx:
            tx.delete(delete_filter, snapshot_properties, case_sensitive, branch)

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
        """Updates rows matching ``df`` on ``join_cols`` and inserts the others (PyIceberg's
        ``upsert``), in one snapshot."""
        with self.transaction() as tx:
            return tx.upsert(
                df,
                join_cols,
                when_matched_update_all,
                when_not_matched_insert_all,
                case_sensitive,
                branch,
                snapshot_properties,
            )

    def rewrite_data_files(
        self,
        target_file_size_bytes: int | None = None,
        row_filter: str | BooleanExpression | None = None,
        min_input_files: int = 2,
        branch: str | None = None,
    ) -> RewriteDataFilesResult:
        """Compacts small data files (deletes applied, row lineage kept) in one ``replace``
        snapshot (see :mod:`frazil.table.maintenance.rewrite_data_files`)."""
        from frazil.table.maintenance.rewrite_data_files import rewrite_data_files

        return rewrite_data_files(self, target_file_size_bytes, row_filter, min_input_files, branch)

    # ---- maintenance (frazil.table.maintenance.orphan_files, rewrite_manifests, changelog)

    def remove_orphan_files(
        self,
        older_than: int | datetime | None = None,
        dry_run: bool = False,
        location: str | None = None,
        equal_schemes: Mapping[str, str] | None = None,
        equal_authorities: Mapping[str, str] | None = None,
        prefix_mismatch_mode: str = "error",
    ) -> list[str]:
        """Deletes (unless ``dry_run``) files under the table location that no metadata reaches
        and older than ``older_than`` (default three days ago); returns them (see
        :mod:`frazil.table.maintenance.orphan_files`)."""
        from frazil.table.maintenance.orphan_files import remove_orphan_files

        return remove_orphan_files(
            self,
            older_than,
            dry_run,
            location,
            equal_schemes,
            equal_authorities,
            prefix_mismatch_mode,
        )

    def rewrite_manifests(
        self,
        spec_id: int | None = None,
        rewrite_if: Callable[[Mapping[str, Any]], bool] | None = None,
        target_size_bytes: int | None = None,
        branch: str | None = None,
    ) -> RewriteManifestsResult:
        """Rewrites the manifests clustered by partition, in target-size manifests, in one
        ``replace`` snapshot (see :mod:`frazil.table.maintenance.rewrite_manifests`)."""
        from frazil.table.maintenance.rewrite_manifests import rewrite_manifests

        return rewrite_manifests(self, spec_id, rewrite_if, target_size_bytes, branch)

    def changelog_scan(
        self,
        from_snapshot_id: int | None = None,
        to_snapshot_id: int | None = None,
        row_filter: str | BooleanExpression | None = None,
        selected_fields: tuple[str, ...] = ("*",),
        case_sensitive: bool = True,
    ) -> ChangelogScan:
        """The rows inserted and deleted after ``from_snapshot_id`` (exclusive) up to
        ``to_snapshot_id`` (see :mod:`frazil.table.scan.changelog`)."""
        from frazil.table.scan.changelog import changelog_scan

        return changelog_scan(
            self, from_snapshot_id, to_snapshot_id, row_filter, selected_fields, case_sensitive
        )

    def rewrite_position_deletes(self, branch: str | None = None) -> RewritePositionDeletesResult:
        """On a v3 table, replaces the v2 position delete files with one deletion vector per
        data file, in one ``replace`` snapshot (see
        :mod:`frazil.table.maintenance.rewrite_position_deletes`)."""
        from frazil.table.maintenance.rewrite_position_deletes import rewrite_position_deletes

        return rewrite_position_deletes(self, branch)


def _list_decoder(metadata: TableMetadata) -> Callable[[bytes, str], list[tuple[str, Any]]]:
    """The manifests (resolved locations) and key metadata a decrypted manifest list names: how
    an encrypted table's FileIO learns the keys of the manifests it will read."""

    def decode(data: bytes, path: str) -> list[tuple[str, Any]]:
        from frazil.manifest import read_manifest_list

        rows = read_manifest_list(data, path=path, location=metadata.paths_location)
        paths = rows.column("manifest_path").to_pylist()
        keys = rows.column("key_metadata").to_pylist()
        return [(metadata.resolve(p), k) for p, k in zip(paths, keys, strict=True)]

    return decode
