"""The :class:`Catalog` base every catalog shares: identifiers and their rules, namespaces and
tables on top of a few storage hooks, views, and the commit of both through the one protocol of
:mod:`frazil.catalog.commit`. The package docstring (:mod:`frazil.catalog`) describes the
catalogs built on it.
"""

from __future__ import annotations

import abc
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from frazil import io as _io
from frazil.arrow_schema import schema_from_arrow
from frazil.catalog.commit import (
    CommitTableResponse,
    CommitViewResponse,
    CreateConflict,
    PreparedCommit,
    TableCommit,
    bool_property,
    metadata_suffix,
    next_metadata_location,
    publish,
)
from frazil.catalog.identifiers import (
    MAX_IDENTIFIER_PART_BYTES,
    Identifier,
    check_identifier,
    check_identifier_part,
    check_under,
    identifier_to_tuple,
    namespace_identifier,
    table_identifier,
)
from frazil.catalog.transaction import CatalogTransaction
from frazil.encryption.guard import check_encryption_request, check_key_id_unchanged
from frazil.exceptions import (
    CommitFailedError,
    InvalidArgumentError,
    NamespaceAlreadyExistsError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    ParseError,
    TableAlreadyExistsError,
    UnsupportedError,
    ValidationError,
    ViewAlreadyExistsError,
    io_error,
)
from frazil.io.paths import table_location_from_metadata
from frazil.metadata import TableMetadata
from frazil.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionSpec
from frazil.schema import Schema
from frazil.sorting import UNSORTED_SORT_ORDER, SortOrder
from frazil.table import Table
from frazil.table.transaction import Transaction
from frazil.table.update import (
    AssertCreate,
    TableRequirement,
    TableUpdate,
    new_table_metadata,
    update_table_metadata,
)
from frazil.view import View
from frazil.view.commit import commit_view, create_view_updates, read_view_metadata

if TYPE_CHECKING:
    import pyarrow as pa

    from frazil.io import FileIO
    from frazil.view.metadata import ViewRepresentation
    from frazil.view.updates import ViewRequirement, ViewUpdate

__all__ = [
    "DEFAULT_FORMAT_VERSION",
    "FORMAT_VERSION",
    "MAX_IDENTIFIER_PART_BYTES",
    "METADATA_DELETE_AFTER_COMMIT",
    "PY_CATALOG_IMPL",
    "TYPE",
    "URI",
    "WAREHOUSE",
    "Catalog",
    "Identifier",
    "PropertiesUpdateSummary",
]

logger = logging.getLogger(__name__)

# Catalog properties.
WAREHOUSE = "warehouse"
URI = "uri"
TYPE = "type"
PY_CATALOG_IMPL = "py-catalog-impl"

# Table properties (names and defaults of the Java reference's TableProperties).
FORMAT_VERSION = "format-version"
DEFAULT_FORMAT_VERSION = 2
METADATA_DELETE_AFTER_COMMIT = "write.metadata.delete-after-commit.enabled"
# Properties the catalog consumes at creation; they are not stored in the table's properties.
_RESERVED_CREATE_PROPERTIES = (FORMAT_VERSION,)


@dataclass(frozen=True)
class PropertiesUpdateSummary:
    removed: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


class Catalog(abc.ABC):
    """A catalog of namespaces and tables.

    Identifiers are dotted strings (``"db.events"``) or tuples (``("db", "events")``); a table
    identifier is its namespace levels followed by the table name. Levels name directories and
    rows, so a level may not be empty, ``.`` or ``..``, nor hold ``/``, ``\\``, NUL or other
    control characters, nor exceed :data:`MAX_IDENTIFIER_PART_BYTES` (255) UTF-8 bytes: such an
    identifier is an :class:`InvalidArgumentError` before anything is read or written, and
    every location derived from one is checked to lie under the warehouse. (The SQL catalog
    still loads, commits to and drops a table another engine stored under such a name: it
    derives no path from the name there.) Subclasses implement storage of namespaces and table
    pointers; this class implements identifier parsing, table creation
    (with default locations), the ``*_if_not_exists`` and ``*_exists`` helpers, and the commit
    protocol (:meth:`commit_table`) on top of a few hooks: :meth:`_load_pointer` (the current
    metadata location), :meth:`_swap_pointer` (the atomic check-and-put) and
    :meth:`_read_pointer_fresh` (the re-check after a swap with an unknown outcome).

    Every error names the identifier it concerns: :class:`NoSuchNamespaceError`,
    :class:`NamespaceAlreadyExistsError`, :class:`NamespaceNotEmptyError`,
    :class:`NoSuchTableError`, :class:`TableAlreadyExistsError`, :class:`CommitFailedError`,
    :class:`CommitStateUnknownError` (all in :mod:`frazil.exceptions`).
    """

    # Whether the pointer swap itself writes the metadata file (the filesystem catalog's
    # create-if-absent of the next version), instead of swapping a pointer to a written file.
    _swap_writes_file = False

    def __init__(self, name: str, **properties: str) -> None:
        self.name = name
        self.properties = {k: str(v) for k, v in properties.items()}
        self._catalog_io: FileIO | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    @property
    def io(self) -> FileIO:
        """The FileIO for this catalog's warehouse and tables."""
        if self._catalog_io is None:
            self._catalog_io = _io.load_file_io(self.properties, self.properties.get(WAREHOUSE))
        return self._catalog_io

    def _table_io(self, metadata: TableMetadata | None, location: str | None) -> FileIO:
        """The FileIO of one table: the catalog's properties, tuned only by the table
        properties :func:`~frazil.io.table_file_io_properties` lets through (table metadata
        never picks the FileIO class, endpoints or credentials)."""
        table_props = metadata.properties if metadata is not None else None
        props = _io.table_file_io_properties(self.properties, table_props)
        return _io.load_file_io(props, location)

    # ---- identifiers (the rules: frazil.catalog.identifiers)

    @staticmethod
    def identifier_to_tuple(identifier: str | Identifier) -> Identifier:
        """``"a.b.c"`` -> ``("a", "b", "c")``; tuples (and lists) pass through."""
        return identifier_to_tuple(identifier)

    @staticmethod
    def namespace_from(identifier: str | Identifier) -> Identifier:
        """The namespace part of a table identifier."""
        return identifier_to_tuple(identifier)[:-1]

    @staticmethod
    def table_name_from(identifier: str | Identifier) -> str:
        return identifier_to_tuple(identifier)[-1]

    # Whether loading or dropping a table derives a storage path from its identifier (the
    # filesystem catalog); when not, a stored odd name (another engine's) may still be loaded.
    _paths_from_identifiers = True

    _check_identifier_part = staticmethod(check_identifier_part)
    _table_identifier = staticmethod(table_identifier)
    _namespace_identifier = staticmethod(namespace_identifier)
    _check_under = staticmethod(check_under)

    def _existing_table_identifier(self, identifier: str | Identifier) -> Identifier:
        """A table identifier to look up: checked fully where it derives a path."""
        return table_identifier(identifier, strict=self._paths_from_identifiers)

    @staticmethod
    def check_namespace(namespace: str | Identifier) -> Identifier:
        """``namespace`` as a tuple if every level passes the identifier rules (not empty, no
        ``.``/``..``, no path separators, NUL or control characters, not over-long), else
        :class:`InvalidArgumentError`. For servers and tools that take identifiers from outside
        before any catalog call."""
        return namespace_identifier(namespace)

    @staticmethod
    def check_identifier(identifier: str | Identifier) -> Identifier:
        """``identifier`` (a table's or view's) as a tuple if every part passes the rules of
        :meth:`check_namespace`, else :class:`InvalidArgumentError`."""
        return check_identifier(identifier)

    @staticmethod
    def check_under(root: str, location: str, what: str) -> str:
        """``location`` if it is ``root`` or lies under it once both are normalized, else
        :class:`InvalidArgumentError` naming ``what``."""
        return check_under(root, location, what)

    # ---- namespaces

    @abc.abstractmethod
    def create_namespace(
        self, namespace: str | Identifier, properties: Mapping[str, str] | None = None
    ) -> None: ...

    def create_namespace_if_not_exists(
        self, namespace: str | Identifier, properties: Mapping[str, str] | None = None
    ) -> None:
        try:
            self.create_namespace(namespace, properties)
        except NamespaceAlreadyExistsError:
            pass

    @abc.abstractmethod
    def drop_namespace(self, namespace: str | Identifier) -> None: ...

    @abc.abstractmethod
    def list_namespaces(self, namespace: str | Identifier = ()) -> list[Identifier]:
        """Top-level namespaces, or the children of ``namespace`` (full identifiers)."""

    @abc.abstractmethod
    def load_namespace_properties(self, namespace: str | Identifier) -> dict[str, str]: ...

    @abc.abstractmethod
    def update_namespace_properties(
        self,
        namespace: str | Identifier,
        removals: set[str] | None = None,
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdateSummary: ...

    @abc.abstractmethod
    def namespace_exists(self, namespace: str | Identifier) -> bool: ...

    # ---- tables

    @abc.abstractmethod
    def _default_table_location(self, identifier: Identifier) -> str:
        """Where a table goes when ``create_table`` is given no location."""

    def _check_create_location(self, identifier: Identifier, location: str) -> None:
        """Hook: refuse a table location the catalog cannot use."""
        return None

    def new_table_metadata(
        self,
        identifier: str | Identifier,
        schema: Schema | pa.Schema,
        location: str | None = None,
        partition_spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> TableMetadata:
        """The first metadata :meth:`create_table` would commit for these arguments, built and
        checked by this catalog's rules (identifier, location) but written nowhere: a staged
        create's answer."""
        ident = self.check_identifier(identifier)
        return self._new_table_metadata(
            ident, schema, location, partition_spec, sort_order, properties
        )

    def _new_table_metadata(
        self,
        identifier: Identifier,
        schema: Schema | pa.Schema,
        location: str | None,
        partition_spec: PartitionSpec | None,
        sort_order: SortOrder | None,
        properties: Mapping[str, str] | None,
    ) -> TableMetadata:

        if not isinstance(schema, Schema):
            # A pyarrow schema (anything else is refused there with a clear error).
            schema = schema_from_arrow(schema)
        props = {k: str(v) for k, v in (properties or {}).items()}
        try:
            format_version = int(props.get(FORMAT_VERSION, DEFAULT_FORMAT_VERSION))
        except ValueError:
            raise InvalidArgumentError(
                f"table {'.'.join(identifier)}: format-version {props[FORMAT_VERSION]!r} is not "
                "an integer"
            ) from None
        for key in _RESERVED_CREATE_PROPERTIES:
            props.pop(key, None)
        location = (location or self._default_table_location(identifier)).rstrip("/")
        self._check_create_location(identifier, location)
        return new_table_metadata(
            schema,
            location,
            partition_spec if partition_spec is not None else UNPARTITIONED_PARTITION_SPEC,
            sort_order if sort_order is not None else UNSORTED_SORT_ORDER,
            props,
            format_version=format_version,
        )

    def create_table_transaction(
        self,
        identifier: str | Identifier,
        schema: Schema | pa.Schema,
        location: str | None = None,
        partition_spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> Transaction:
        """A transaction that creates the table when it commits (nothing is written before);
        changes staged on it land in the table's first metadata file."""
        ident = self._table_identifier(identifier)
        namespace = ident[:-1]
        if not self.namespace_exists(namespace):
            raise NoSuchNamespaceError(
                f"cannot create table {'.'.join(ident)}: namespace {'.'.join(namespace)} does "
                "not exist"
            )
        if self.table_exists(ident):
            raise TableAlreadyExistsError(f"table {'.'.join(ident)} already exists")
        if self._is_view(ident):
            raise ViewAlreadyExistsError(
                f"cannot create table {'.'.join(ident)}: a view has that name"
            )
        metadata = self._new_table_metadata(
            ident, schema, location, partition_spec, sort_order, properties
        )
        table = Table(ident, metadata, None, self._table_io(metadata, metadata.location), self)
        return Transaction(table, create=True)

    def create_table(
        self,
        identifier: str | Identifier,
        schema: Schema | pa.Schema,
        location: str | None = None,
        partition_spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> Table:
        """Creates a table; ``schema`` is a :class:`frazil.schema.Schema` or a pyarrow schema.
        The format version comes from ``properties["format-version"]`` (default 2). Without a
        ``location`` the table goes to the namespace's ``location`` property, or
        ``<warehouse>/<namespace levels>/<table>`` (the Java JDBC and Hadoop catalogs' layout)."""
        return self.create_table_transaction(
            identifier, schema, location, partition_spec, sort_order, properties
        ).commit_transaction()

    def create_table_if_not_exists(
        self,
        identifier: str | Identifier,
        schema: Schema | pa.Schema,
        location: str | None = None,
        partition_spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> Table:
        try:
            return self.create_table(
                identifier, schema, location, partition_spec, sort_order, properties
            )
        except TableAlreadyExistsError:
            return self.load_table(identifier)

    def load_table(self, identifier: str | Identifier) -> Table:
        """The table at its current metadata. :class:`NoSuchTableError` if it does not exist."""
        ident = self._existing_table_identifier(identifier)
        location = self._load_pointer(ident)
        if location is None:
            raise NoSuchTableError(f"table {'.'.join(ident)} does not exist")
        metadata = self._read_metadata(location)
        return Table(ident, metadata, location, self._table_io(metadata, location), self)

    def _current_metadata_location(self, identifier: str | Identifier) -> str | None:
        """The table's current metadata location without reading the metadata (how a
        transaction finds out cheaply whether another writer committed since its base)."""
        return self._load_pointer(self._existing_table_identifier(identifier))

    def table_exists(self, identifier: str | Identifier) -> bool:
        try:
            ident = self._existing_table_identifier(identifier)
        except NoSuchTableError:
            return False
        return self._load_pointer(ident) is not None

    @abc.abstractmethod
    def register_table(self, identifier: str | Identifier, metadata_location: str) -> Table: ...

    @abc.abstractmethod
    def drop_table(
        self,
        identifier: str | Identifier,
        purge: bool = False,
        *,
        delete_outside_location: bool = False,
    ) -> None:
        """Removes the table from the catalog; ``purge`` also deletes the files its metadata
        reaches (data and delete files, manifests, manifest lists, statistics, metadata) that
        lie under the table location. Files outside it (``add_files`` of another dataset's
        files, say) are kept and logged unless ``delete_outside_location`` is true."""

    def purge_table(
        self, identifier: str | Identifier, *, delete_outside_location: bool = False
    ) -> None:
        self.drop_table(identifier, purge=True, delete_outside_location=delete_outside_location)

    @abc.abstractmethod
    def rename_table(
        self, from_identifier: str | Identifier, to_identifier: str | Identifier
    ) -> Table: ...

    @abc.abstractmethod
    def list_tables(self, namespace: str | Identifier) -> list[Identifier]: ...

    # ---- metadata files

    def _read_metadata(self, location: str) -> TableMetadata:
        try:
            data = self._table_io(None, location).read(location)
        except OSError as e:
            raise io_error(e, "reading table metadata", location) from e
        self._check_metadata_bytes(location, data)
        # v4 metadata may omit its location: the table lies where its metadata file does
        metadata = TableMetadata.from_json(
            data, location=table_location_from_metadata(location), file=location
        )
        if metadata.location is None:
            raise ParseError(
                f"table metadata {location}: format version {metadata.format_version} metadata "
                "without a location, and none can be inferred (the file is not in a "
                "'metadata' directory under the table location)"
            )
        return metadata

    def _check_metadata_bytes(self, location: str, data: bytes) -> None:
        """Hook: a catalog that holds a hash of its tables' metadata files checks it here (the
        Hive catalog's ``metadata_hash`` of encrypted tables)."""
        return None

    @staticmethod
    def _metadata_suffix(metadata: TableMetadata) -> tuple[str, bool]:
        return metadata_suffix(metadata.properties, "none")

    def _new_metadata_location(
        self, identifier: Identifier, metadata: TableMetadata, current_location: str | None
    ) -> str:
        """``<metadata dir>/<NNNNN>-<uuid>.metadata.json``, the version one more than the
        current file's (as the Java reference numbers them; 0 for a new table)."""
        return next_metadata_location(
            metadata.properties, metadata.location, current_location, "none"
        )

    # ---- commit hooks

    @abc.abstractmethod
    def _load_pointer(self, identifier: Identifier) -> str | None:
        """The table's current metadata location, ``None`` if the table does not exist."""

    @abc.abstractmethod
    def _swap_pointer(
        self,
        identifier: Identifier,
        current_location: str | None,
        new_location: str,
        data: bytes,
        io: FileIO,
        new: TableMetadata,
        base: TableMetadata | None,
    ) -> bool:
        """Atomically moves the pointer from ``current_location`` (``None``: create it) to
        ``new_location``, whose file holds ``data``, the metadata ``new`` (committed over
        ``base``, ``None`` for a create: catalogs that store table state beside the pointer,
        as Hive and Glue do, take it from these). ``False`` when another commit got there first
        (nothing changed); any exception means the outcome is unknown."""

    def _read_pointer_fresh(self, identifier: Identifier) -> str | None:
        """The current pointer, read without reusing anything the failed swap used (a new
        connection). Raises when it cannot be read."""
        return self._load_pointer(identifier)

    def _commit_landed(
        self, identifier: Identifier, new_location: str, data: bytes, io: FileIO
    ) -> bool:
        """Whether ``new_location`` is now the table's current metadata."""
        return self._read_pointer_fresh(identifier) == new_location

    def _write_metadata_file(self, io: FileIO, location: str, data: bytes) -> None:
        # Never replace: a metadata file name is used once.
        try:
            io.write(location, data, overwrite=False)
        except FileExistsError:
            raise
        except OSError as e:
            raise io_error(e, "writing table metadata", location) from e

    def _after_commit(self, identifier: Identifier, new_location: str, io: FileIO) -> None:
        """Hook: best-effort work after a commit landed (the filesystem catalog's hint)."""
        return None

    # ---- commit

    def commit_table(
        self,
        table: Table,
        requirements: Sequence[TableRequirement],
        updates: Sequence[TableUpdate],
    ) -> CommitTableResponse:
        """Commits ``updates`` atomically if ``requirements`` hold against the table's current
        metadata (freshly loaded, which may be newer than ``table.metadata``).

        Raises :class:`CommitFailedError` when a requirement fails or another commit won the
        pointer swap (nothing changed; the new metadata file is deleted), and
        :class:`CommitStateUnknownError` only when it cannot find out whether the swap landed.
        For a table being created (``AssertCreate`` among the requirements) the pointer is
        inserted instead, and ``table.metadata`` is the base the updates apply to."""
        prepared = self._prepare_commit(table, requirements, updates)
        if prepared.data is None:
            return CommitTableResponse(prepared.new, prepared.current_location)  # type: ignore[arg-type]
        self._publish(
            prepared.ident,
            prepared.current_location,
            prepared.new_location,
            prepared.data,
            prepared.io,
            prepared.new,
            prepared.current,
        )
        return self._finish_commit(prepared)

    def _prepare_commit(
        self,
        table: Table,
        requirements: Sequence[TableRequirement],
        updates: Sequence[TableUpdate],
    ) -> PreparedCommit:
        """Everything of a commit before the pointer swap: the current pointer and metadata,
        the requirements checked against it, the new metadata and its bytes (``data`` is
        ``None`` when the updates change nothing). Nothing is written."""
        ident = self._existing_table_identifier(table.identifier)
        name = ".".join(ident)
        creating = any(isinstance(r, AssertCreate) for r in requirements)
        current_location = self._load_pointer(ident)
        if current_location is None:
            current = None
        elif current_location == table.metadata_location:
            # A metadata file is written once and never changed: the caller's copy of it is
            # current (this saves a read and a parse on every commit of a fresh handle).
            current = table.metadata
        else:
            current = self._read_metadata(current_location)
        if creating and current is not None:
            raise CreateConflict(f"cannot create table {name}: it already exists")
        try:
            for r in requirements:
                r.validate(current)
        except CommitFailedError as e:
            raise CommitFailedError(f"commit to table {name} failed: {e}") from None
        if current is None and not creating:
            raise NoSuchTableError(f"cannot commit to table {name}: it does not exist")
        base = table.metadata if current is None else current
        try:
            new = update_table_metadata(
                base, updates, requirements=(), previous_metadata_location=current_location
            )
        except ValidationError as e:
            if current_location != table.metadata_location:
                # Built against a stale base: a refresh and retry may well apply.
                raise CommitFailedError(
                    f"commit to table {name} failed: the table changed concurrently ({e})"
                ) from None
            raise
        if current is not None and new is current:
            return PreparedCommit(ident, current_location, current, new, "", None, self.io)
        check_encryption_request(self.properties, new, name)
        check_key_id_unchanged(current, new, name)

        new_location = self._new_metadata_location(ident, new, current_location)
        _, compress = self._metadata_suffix(new)
        try:
            data = new.to_json_bytes(compress=compress)
        except UnicodeEncodeError as e:
            # A lone surrogate (from a str that was never valid UTF-8) in a name or property.
            bad = e.object[e.start : e.end] if isinstance(e.object, str) else ""
            raise InvalidArgumentError(
                f"cannot commit to table {name}: its metadata holds {bad!r}, which is not "
                f"valid Unicode (a lone surrogate), near {e.object[max(0, e.start - 30) : e.end]!r}"
            ) from e
        io = self._table_io(new, new_location)
        return PreparedCommit(ident, current_location, current, new, new_location, data, io)

    def _finish_commit(self, prepared: PreparedCommit) -> CommitTableResponse:
        """Best-effort work once a commit's pointer swap landed: the catalog's hook and the
        cleanup of metadata files that dropped out of the log."""
        ident, new, current = prepared.ident, prepared.new, prepared.current
        name = ".".join(ident)
        new_location, io = prepared.new_location, prepared.io
        logger.info("committed table %s: %s", name, new_location)
        self._after_commit(ident, new_location, io)
        if current is not None and bool_property(
            new.properties, METADATA_DELETE_AFTER_COMMIT, False
        ):
            kept = {new.resolve(e.metadata_file) for e in new.metadata_log}
            dropped = [
                p
                for p in (current.resolve(e.metadata_file) for e in current.metadata_log)
                if p not in kept
            ]
            # A metadata log may name any file; only the table's own are its to delete.
            dropped = _io.under_location(dropped, new.location, f"{name}: old metadata cleanup")
            if dropped:
                try:
                    io.delete_many(dropped)
                except Exception:  # orphans are harmless; the commit has landed
                    logger.warning("deleting old metadata of %s failed", name, exc_info=True)
        return CommitTableResponse(new, new_location)

    def commit_tables(self, commits: Sequence[TableCommit]) -> list[CommitTableResponse]:
        """Commits several tables' changes atomically: every table's requirements hold and all
        land, or nothing changes (:class:`CommitFailedError`). Catalogs that cannot swap several
        pointers at once raise :class:`~frazil.exceptions.UnsupportedError`."""
        raise UnsupportedError(f"catalog {self.name!r} cannot commit several tables atomically")

    def transaction(self) -> CatalogTransaction:
        """A transaction over several tables of this catalog, committed as one through
        :meth:`commit_tables` (:mod:`frazil.catalog.transaction`)::

            with catalog.transaction() as tx:
                tx.table("db.a").append(df)
                tx.table("db.b").delete("id = 3")
        """
        return CatalogTransaction(self)

    def _publish(
        self,
        ident: Identifier,
        current_location: str | None,
        new_location: str,
        data: bytes,
        io: FileIO,
        new: TableMetadata,
        base: TableMetadata | None,
    ) -> None:
        name = ".".join(ident)
        if not self._swap_writes_file:
            # A failure here leaves at most an unreferenced file: the pointer is unchanged.
            self._write_metadata_file(io, new_location, data)
        landed, cause = publish(
            f"table {name}",
            new_location,
            new.properties,
            swap=lambda: self._swap_pointer(
                ident, current_location, new_location, data, io, new, base
            ),
            landed=lambda: self._commit_landed(ident, new_location, data, io),
            discard=lambda: self._discard(io, new_location),
            settled=(CommitFailedError, NoSuchTableError, TableAlreadyExistsError),
        )
        if landed:
            return
        if cause is not None:
            raise CommitFailedError(
                f"commit to table {name} failed: the pointer swap failed ({cause}) and a re-read "
                "shows it did not land"
            ) from cause
        if current_location is None:
            raise CreateConflict(f"cannot create table {name}: it was created concurrently")
        raise CommitFailedError(
            f"commit to table {name} failed: another commit replaced {current_location} first"
        )

    def _discard(self, io: FileIO, location: str) -> None:
        if self._swap_writes_file:
            return  # the file at that name, if any, is another writer's
        try:
            io.delete(location)
        except Exception:
            logger.warning("could not delete unused metadata file %s", location, exc_info=True)

    # ---- views (the commit path and its rules: frazil.view.commit)
    #
    # A view's pointer lives where a table's does and shares its name space. A catalog that can
    # hold views returns True from ``supports_views`` and implements the view pointer hooks and
    # ``list_views``/``drop_view``/``rename_view``; by default they refuse (the filesystem
    # catalog, like Java's HadoopCatalog, has no views).

    def supports_views(self) -> bool:
        """Whether this catalog can hold views."""
        return False

    def _refuse_views(self) -> UnsupportedError:
        return UnsupportedError(f"catalog {self.name!r} ({type(self).__name__}) has no views")

    def _load_view_pointer(self, identifier: Identifier) -> str | None:
        """The view's current metadata location, ``None`` if no view has that name."""
        raise self._refuse_views()

    def _swap_view_pointer(
        self, identifier: Identifier, current_location: str | None, new_location: str
    ) -> bool:
        """Atomically moves the view pointer from ``current_location`` (``None``: insert it) to
        ``new_location``; ``False`` when another commit got there first (or the name is taken);
        an exception means the outcome is unknown."""
        raise self._refuse_views()

    def _read_view_pointer_fresh(self, identifier: Identifier) -> str | None:
        return self._load_view_pointer(identifier)

    def list_views(self, namespace: str | Identifier) -> list[Identifier]:
        raise self._refuse_views()

    def drop_view(self, identifier: str | Identifier) -> None:
        """Removes the view from the catalog (its metadata files are kept);
        :class:`NoSuchViewError` if there is none."""
        raise self._refuse_views()

    def rename_view(
        self, from_identifier: str | Identifier, to_identifier: str | Identifier
    ) -> View:
        raise self._refuse_views()

    def _view_identifier(self, identifier: str | Identifier, strict: bool = True) -> Identifier:
        if not self.supports_views():
            raise self._refuse_views()
        try:
            return self._table_identifier(identifier, strict=strict)
        except NoSuchTableError as e:
            raise NoSuchViewError(str(e).replace("table identifier", "view identifier")) from None

    def _is_view(self, ident: Identifier) -> bool:
        """Whether a view has that name (``False`` where the catalog has no views)."""
        return self.supports_views() and self._load_view_pointer(ident) is not None

    def view_exists(self, identifier: str | Identifier) -> bool:
        try:
            ident = self._view_identifier(identifier, strict=self._paths_from_identifiers)
        except NoSuchViewError:
            return False
        return self._load_view_pointer(ident) is not None

    def load_view(self, identifier: str | Identifier) -> View:
        """The view at its current metadata. :class:`NoSuchViewError` if there is none."""
        ident = self._view_identifier(identifier, strict=self._paths_from_identifiers)
        location = self._load_view_pointer(ident)
        if location is None:
            raise NoSuchViewError(f"view {'.'.join(ident)} does not exist")
        return View(ident, read_view_metadata(self, location), location, self)

    def create_view(
        self,
        identifier: str | Identifier,
        schema: Schema | pa.Schema,
        sql: str | ViewRepresentation | Sequence[ViewRepresentation],
        default_namespace: str | Identifier | None = None,
        default_catalog: str | None = None,
        properties: Mapping[str, str] | None = None,
        location: str | None = None,
        *,
        dialect: str = "spark",
        summary: Mapping[str, str] | None = None,
    ) -> View:
        """Creates a view whose first version is ``sql`` (a SELECT in ``dialect``, or
        representations) with result schema ``schema`` (frazil or pyarrow; field ids are
        assigned from 1). ``default_namespace`` (default: the view's namespace) and
        ``default_catalog`` (default: unset, i.e. this catalog) resolve the query's unqualified
        names. Without ``location`` the view goes where a table of that name would.
        :class:`TableAlreadyExistsError` if a table has the name, :class:`ViewAlreadyExistsError`
        if a view has it."""
        ident = self._view_identifier(identifier)
        updates = create_view_updates(
            self,
            ident,
            schema,
            sql,
            default_namespace,
            default_catalog,
            properties,
            location,
            dialect=dialect,
            summary=summary,
        )
        response = commit_view(self, ident, None, [], updates, create=True)
        return View(ident, response.metadata, response.metadata_location, self)

    def commit_view(
        self,
        view: View | str | Identifier,
        requirements: Sequence[ViewRequirement],
        updates: Sequence[ViewUpdate],
    ) -> CommitViewResponse:
        """Commits ``updates`` to an existing view atomically if ``requirements`` hold against
        its current metadata (freshly loaded): the one view commit path, as
        :meth:`commit_table` is for tables. :class:`NoSuchViewError` if there is no such view,
        :class:`CommitFailedError` when a requirement fails or another commit won the pointer
        swap, :class:`ValidationError` for updates that break the view spec's rules."""
        handle = view if isinstance(view, View) else None
        ident = self._view_identifier(
            view.identifier if isinstance(view, View) else view,
            strict=self._paths_from_identifiers,
        )
        return commit_view(self, ident, handle, requirements, updates, create=False)
