"""The AWS Glue catalog (see :mod:`frazil.catalog.glue` for the layout and properties)."""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from frazil.catalog.aws import aws_client, aws_error, error_code, is_aws_error
from frazil.catalog.base import WAREHOUSE, Catalog, Identifier, PropertiesUpdateSummary
from frazil.catalog.commit import bool_property
from frazil.catalog.glue.columns import glue_columns
from frazil.catalog.purge import purge_table_files
from frazil.exceptions import (
    CatalogError,
    CommitFailedError,
    FrazilError,
    InvalidArgumentError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
    UnsupportedError,
    io_error,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from frazil.catalog.commit import CommitTableResponse
    from frazil.io import FileIO
    from frazil.metadata import TableMetadata
    from frazil.partitioning import PartitionSpec
    from frazil.schema import Schema
    from frazil.sorting import SortOrder
    from frazil.table import Table
    from frazil.table.update import TableRequirement, TableUpdate

__all__ = ["GlueCatalog"]

logger = logging.getLogger(__name__)

# Catalog properties (PyIceberg's names).
GLUE_ID = "glue.id"
GLUE_ENDPOINT = "glue.endpoint"
GLUE_SKIP_ARCHIVE = "glue.skip-archive"
GLUE_MAX_RETRIES = "glue.max-retries"
GLUE_RETRY_MODE = "glue.retry-mode"

# What Java and PyIceberg store on a Glue table.
EXTERNAL_TABLE = "EXTERNAL_TABLE"
TABLE_TYPE = "table_type"
ICEBERG = "ICEBERG"
METADATA_LOCATION = "metadata_location"
PREVIOUS_METADATA_LOCATION = "previous_metadata_location"
LOCATION = "location"
DESCRIPTION = "Description"
# A Glue database federated with S3 Tables (its tables' storage is managed by S3 Tables).
S3_TABLES_CONNECTION = "aws:s3tables"

# Whether the commit being published writes to S3 Tables storage, which refuses the listing
# an existence check may make: the metadata file (a fresh name) is then written unchecked.
_UNCHECKED_WRITE: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "frazil_glue_unchecked_write", default=False
)


def _is_iceberg(glue_table: Mapping[str, Any]) -> bool:
    params = glue_table.get("Parameters") or {}
    return str(params.get(TABLE_TYPE, "")).upper() == ICEBERG


class GlueCatalog(Catalog):
    """Iceberg tables in the AWS Glue Data Catalog, as Java's ``GlueCatalog`` and PyIceberg's
    store them (see :mod:`frazil.catalog.glue`)."""

    # A table is found by its Glue entry: a stored odd name (another engine's) can be loaded,
    # committed to and dropped; only creating derives a path from the identifier.
    _paths_from_identifiers = False

    def __init__(self, name: str, **properties: str) -> None:
        super().__init__(name, **properties)
        self.glue = aws_client(
            "glue",
            self.properties,
            endpoint_key=GLUE_ENDPOINT,
            max_retries_key=GLUE_MAX_RETRIES,
            retry_mode_key=GLUE_RETRY_MODE,
            default_max_retries=10,
        )
        self._catalog_id = self.properties.get(GLUE_ID) or None
        self._skip_archive = bool_property(self.properties, GLUE_SKIP_ARCHIVE, True)
        self._what = f"Glue catalog {name!r}"
        self._s3tables: dict[str, bool] = {}

    # ---- calls

    def _call(
        self, op: str, doing: str, on: Mapping[str, FrazilError] | None = None, **kwargs: Any
    ) -> Any:
        """``glue.<op>(**kwargs)`` (with ``CatalogId`` when ``glue.id`` is set); an AWS error
        whose code is in ``on`` raises that error, any other its :func:`aws_error`."""
        if self._catalog_id:
            kwargs.setdefault("CatalogId", self._catalog_id)
        try:
            return getattr(self.glue, op)(**kwargs)
        except Exception as e:
            if not is_aws_error(e):
                raise
            code = error_code(e)
            if on is not None and code is not None and code in on:
                raise on[code] from e
            raise aws_error(e, self._what, doing) from e

    def _pages(
        self,
        op: str,
        key: str,
        doing: str,
        on: Mapping[str, FrazilError] | None = None,
        **kwargs: Any,
    ) -> Iterator[dict[str, Any]]:
        token: str | None = None
        while True:
            page = self._call(op, doing, on, **kwargs, **({"NextToken": token} if token else {}))
            yield from page.get(key, [])
            token = page.get("NextToken")
            if not token:
                return

    # ---- identifiers

    def _database(self, namespace: str | Identifier, missing: bool = False) -> str:
        """The Glue database of a namespace: one level (Glue has no nesting)."""
        ns = self._namespace_identifier(namespace)
        if len(ns) != 1:
            if missing:
                raise NoSuchNamespaceError(
                    f"namespace {'.'.join(ns)} does not exist: Glue databases have one level"
                )
            raise InvalidArgumentError(
                f"invalid namespace {'.'.join(ns)!r}: Glue databases have one level"
            )
        return ns[0]

    def _table_ident(self, identifier: str | Identifier, strict: bool) -> Identifier:
        ident = self._table_identifier(identifier, strict=strict)
        if len(ident) != 2:
            raise NoSuchTableError(
                f"invalid table identifier {'.'.join(ident)!r}: expected <database>.<table> "
                "(Glue databases have one level)"
            )
        return ident

    def _existing_table_identifier(self, identifier: str | Identifier) -> Identifier:
        return self._table_ident(identifier, strict=False)

    # ---- namespaces

    def _get_database(self, database: str) -> dict[str, Any] | None:
        try:
            response = self._call(
                "get_database",
                f"reading database {database}",
                on={"EntityNotFoundException": _Missing()},
                Name=database,
            )
        except _Missing:
            return None
        db: dict[str, Any] = response["Database"]
        return db

    def namespace_exists(self, namespace: str | Identifier) -> bool:
        ns = self._namespace_identifier(namespace, allow_root=True)
        if not ns:
            return True
        return len(ns) == 1 and self._get_database(ns[0]) is not None

    def create_namespace(
        self, namespace: str | Identifier, properties: Mapping[str, str] | None = None
    ) -> None:
        database = self._database(namespace)
        self._call(
            "create_database",
            f"creating database {database}",
            on={
                "AlreadyExistsException": NamespaceAlreadyExistsError(
                    f"namespace {database} already exists"
                )
            },
            DatabaseInput=_database_input(database, properties or {}),
        )

    def drop_namespace(self, namespace: str | Identifier) -> None:
        database = self._database(namespace, missing=True)
        gone = NoSuchNamespaceError(f"cannot drop namespace {database}: it does not exist")
        page = self._call(
            "get_tables",
            f"listing tables of {database}",
            on={"EntityNotFoundException": gone},
            DatabaseName=database,
            MaxResults=1,
        )
        tables = page.get("TableList", [])
        if tables:
            kind = "Iceberg " if _is_iceberg(tables[0]) else "non-Iceberg "
            raise NamespaceNotEmptyError(
                f"cannot drop namespace {database}: it still holds tables, e.g. the {kind}"
                f"table {database}.{tables[0].get('Name')}"
            )
        self._call(
            "delete_database",
            f"dropping database {database}",
            on={"EntityNotFoundException": gone},
            Name=database,
        )

    def list_namespaces(self, namespace: str | Identifier = ()) -> list[Identifier]:
        parent = self._namespace_identifier(namespace, allow_root=True)
        if parent:
            # Glue databases have no children.
            if not self.namespace_exists(parent):
                raise NoSuchNamespaceError(
                    f"cannot list namespaces: namespace {'.'.join(parent)} does not exist"
                )
            return []
        return sorted(
            (str(db["Name"]),) for db in self._pages("get_databases", "DatabaseList", "listing")
        )

    def load_namespace_properties(self, namespace: str | Identifier) -> dict[str, str]:
        """The database's ``Parameters``, with ``location`` (its ``LocationUri``) and
        ``Description`` as PyIceberg reports them."""
        database = self._database(namespace, missing=True)
        db = self._get_database(database)
        if db is None:
            raise NoSuchNamespaceError(f"namespace {database} does not exist")
        return _database_properties(db)

    def update_namespace_properties(
        self,
        namespace: str | Identifier,
        removals: set[str] | None = None,
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdateSummary:
        database = self._database(namespace, missing=True)
        removals = set(removals or ())
        updates = {k: str(v) for k, v in (updates or {}).items()}
        overlap = removals & set(updates)
        if overlap:
            raise InvalidArgumentError(
                f"namespace {database}: properties both removed and updated: {sorted(overlap)}"
            )
        current = self.load_namespace_properties(database)
        removed = sorted(removals & set(current))
        missing = sorted(removals - set(current))
        new = {k: v for k, v in current.items() if k not in removals}
        new.update(updates)
        self._call(
            "update_database",
            f"updating database {database}",
            on={"EntityNotFoundException": NoSuchNamespaceError(f"namespace {database} is gone")},
            Name=database,
            DatabaseInput=_database_input(database, new),
        )
        return PropertiesUpdateSummary(removed=removed, updated=sorted(updates), missing=missing)

    def _is_s3tables_database(self, database: str) -> bool:
        """Whether the database is federated with S3 Tables (remembered per catalog: a
        database's federation is fixed when it is created)."""
        known = self._s3tables.get(database)
        if known is None:
            db = self._get_database(database) or {}
            federated = db.get("FederatedDatabase") or {}
            known = S3_TABLES_CONNECTION in (
                federated.get("ConnectionType"),
                federated.get("ConnectionName"),
            )
            if db:
                self._s3tables[database] = known
        return known

    # ---- tables

    def _default_table_location(self, identifier: Identifier) -> str:
        database, table = identifier
        if self._is_s3tables_database(database):
            raise UnsupportedError(
                f"table {database}.{table}: S3 Tables assigns the location when the table is "
                "created; use create_table (a create transaction cannot know it in advance)"
            )
        db = self._get_database(database) or {}
        root = db.get("LocationUri")
        if root:
            root = str(root).rstrip("/")
            location = f"{root}/{table}"
        else:
            warehouse = self.properties.get(WAREHOUSE)
            if not warehouse:
                raise InvalidArgumentError(
                    f"{self._what} has no 'warehouse' and database {database} no location: "
                    "give the table a location"
                )
            root = warehouse.rstrip("/")
            # The Hive layout Java's and PyIceberg's Glue catalogs use.
            location = f"{root}/{database}.db/{table}"
        return self._check_under(root, location, f"default location of {database}.{table}")

    def _get_table(self, database: str, table: str) -> dict[str, Any] | None:
        try:
            response = self._call(
                "get_table",
                f"reading table {database}.{table}",
                on={"EntityNotFoundException": _Missing()},
                DatabaseName=database,
                Name=table,
            )
        except _Missing:
            return None
        glue_table: dict[str, Any] = response["Table"]
        return glue_table

    def _load_pointer(self, identifier: Identifier) -> str | None:
        glue_table = self._get_table(*identifier)
        if glue_table is None or not _is_iceberg(glue_table):
            return None
        location = (glue_table.get("Parameters") or {}).get(METADATA_LOCATION)
        return str(location) if location else None

    def load_table(self, identifier: str | Identifier) -> Table:
        ident = self._existing_table_identifier(identifier)
        glue_table = self._get_table(*ident)
        if glue_table is not None and not _is_iceberg(glue_table):
            kind = (glue_table.get("Parameters") or {}).get(TABLE_TYPE) or "no table_type"
            raise NoSuchTableError(
                f"table {'.'.join(ident)} is not an Iceberg table (Glue table with {kind})"
            )
        return super().load_table(ident)

    def create_table(
        self,
        identifier: str | Identifier,
        schema: Schema | pa.Schema,
        location: str | None = None,
        partition_spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> Table:
        """Creates a table (see :meth:`Catalog.create_table`). In a database federated with S3
        Tables, S3 Tables picks the location: an empty Glue table is created first, its
        managed location read back, and the first metadata written there (the empty table is
        deleted again if that fails)."""
        ident = self._table_ident(identifier, strict=True)
        database, name = ident
        if not self._is_s3tables_database(database):
            return super().create_table(
                ident, schema, location, partition_spec, sort_order, properties
            )
        if location is not None:
            raise InvalidArgumentError(
                f"cannot create table {database}.{name} at {location}: S3 Tables manages the "
                "location of its tables"
            )
        self._call(
            "create_table",
            f"creating table {database}.{name}",
            on={
                "AlreadyExistsException": TableAlreadyExistsError(
                    f"table {database}.{name} already exists"
                ),
                "EntityNotFoundException": NoSuchNamespaceError(
                    f"cannot create table {database}.{name}: namespace {database} does not exist"
                ),
            },
            DatabaseName=database,
            TableInput={"Name": name, "Parameters": {"format": ICEBERG}},
        )
        try:
            glue_table = self._get_table(database, name) or {}
            managed = (glue_table.get("StorageDescriptor") or {}).get("Location")
            if not managed:
                raise CatalogError(
                    f"{self._what}: S3 Tables assigned no location to {database}.{name}"
                )
            return super().create_table(
                ident, schema, str(managed).rstrip("/"), partition_spec, sort_order, properties
            )
        except BaseException:
            try:
                self._call(
                    "delete_table",
                    f"removing the unfinished table {database}.{name}",
                    DatabaseName=database,
                    Name=name,
                )
            except Exception:
                logger.warning(
                    "could not remove the unfinished S3 Tables table %s.%s", database, name
                )
            raise

    def commit_table(
        self,
        table: Table,
        requirements: Sequence[TableRequirement],
        updates: Sequence[TableUpdate],
    ) -> CommitTableResponse:
        database = self._existing_table_identifier(table.identifier)[0]
        token = _UNCHECKED_WRITE.set(self._is_s3tables_database(database))
        try:
            return super().commit_table(table, requirements, updates)
        finally:
            _UNCHECKED_WRITE.reset(token)

    def _write_metadata_file(self, io: FileIO, location: str, data: bytes) -> None:
        if not _UNCHECKED_WRITE.get():
            super()._write_metadata_file(io, location, data)
            return
        try:
            io.write(location, data, overwrite=True)
        except OSError as e:
            raise io_error(e, "writing table metadata", location) from e

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
        try:
            super()._publish(ident, current_location, new_location, data, io, new, base)
        except CommitFailedError as e:
            # The database went away under a create: say so, rather than "retry".
            if isinstance(e.__cause__, NoSuchNamespaceError):
                raise e.__cause__ from None
            raise

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
        database, name = identifier
        glue_table = self._get_table(database, name)
        if current_location is None and (glue_table is None or not _is_s3tables_stub(glue_table)):
            if glue_table is not None:
                return self._name_taken(glue_table, database, name)
            return self._create_glue_table(database, name, new, new_location)
        if glue_table is None:
            raise NoSuchTableError(f"cannot commit to table {database}.{name}: it was dropped")
        params = glue_table.get("Parameters") or {}
        if current_location is not None and params.get(METADATA_LOCATION) != current_location:
            return False  # another commit moved the pointer since it was read
        table_input = _table_input(name, new, new_location, current_location, glue_table)
        try:
            self._call(
                "update_table",
                f"updating table {database}.{name}",
                on={
                    "ConcurrentModificationException": _Lost(),
                    "EntityNotFoundException": NoSuchTableError(
                        f"cannot commit to table {database}.{name}: it was dropped"
                    ),
                },
                DatabaseName=database,
                TableInput=table_input,
                SkipArchive=self._skip_archive,
                # Glue's optimistic lock: the update applies only to the version read above.
                VersionId=str(glue_table["VersionId"]),
            )
        except _Lost:
            return False
        return True

    def _name_taken(self, glue_table: Mapping[str, Any], database: str, name: str) -> bool:
        if not _is_iceberg(glue_table):
            raise TableAlreadyExistsError(
                f"cannot create table {database}.{name}: a non-Iceberg Glue table has that name"
            )
        return False

    def _create_glue_table(
        self, database: str, name: str, metadata: TableMetadata, new_location: str
    ) -> bool:
        try:
            self._call(
                "create_table",
                f"creating table {database}.{name}",
                on={
                    "AlreadyExistsException": _Lost(),
                    "EntityNotFoundException": NoSuchNamespaceError(
                        f"cannot create table {database}.{name}: namespace {database} does "
                        "not exist"
                    ),
                },
                DatabaseName=database,
                TableInput=_table_input(name, metadata, new_location, None, None),
            )
        except _Lost:
            glue_table = self._get_table(database, name)
            if glue_table is not None:
                self._name_taken(glue_table, database, name)
            return False
        return True

    def register_table(self, identifier: str | Identifier, metadata_location: str) -> Table:
        """Adds a table whose metadata file already exists (read first, to check it)."""
        ident = self._table_ident(identifier, strict=True)
        database, name = ident
        metadata = self._read_metadata(metadata_location)
        self._call(
            "create_table",
            f"registering table {database}.{name}",
            on={
                "AlreadyExistsException": TableAlreadyExistsError(
                    f"table {database}.{name} already exists"
                ),
                "EntityNotFoundException": NoSuchNamespaceError(
                    f"cannot register table {database}.{name}: namespace {database} does not exist"
                ),
            },
            DatabaseName=database,
            TableInput=_table_input(name, metadata, metadata_location, None, None),
        )
        return self.load_table(ident)

    def drop_table(
        self,
        identifier: str | Identifier,
        purge: bool = False,
        *,
        delete_outside_location: bool = False,
    ) -> None:
        """Removes the Iceberg table from Glue (a non-Iceberg Glue table is refused, as
        :class:`NoSuchTableError`); ``purge`` also deletes its files (see
        :meth:`Catalog.drop_table`)."""
        ident = self._existing_table_identifier(identifier)
        database, name = ident
        glue_table = self._get_table(database, name)
        if glue_table is None or not _is_iceberg(glue_table):
            what = "it does not exist" if glue_table is None else "it is not an Iceberg table"
            raise NoSuchTableError(f"cannot drop table {database}.{name}: {what}")
        table = self.load_table(ident) if purge else None
        self._call(
            "delete_table",
            f"dropping table {database}.{name}",
            on={
                "EntityNotFoundException": NoSuchTableError(
                    f"cannot drop table {database}.{name}: it does not exist"
                )
            },
            DatabaseName=database,
            Name=name,
        )
        logger.info(
            "dropped table %s.%s%s", database, name, " (purging its files)" if purge else ""
        )
        if table is not None:
            purge_table_files(
                table.io,
                table.metadata,
                table.metadata_location,
                delete_outside_location=delete_outside_location,
            )

    def rename_table(
        self, from_identifier: str | Identifier, to_identifier: str | Identifier
    ) -> Table:
        """Glue has no rename: the entry is copied to the new name, then the old one deleted
        (the copy is removed again if that fails). The table's files stay where they are."""
        src = self._existing_table_identifier(from_identifier)
        dst = self._table_ident(to_identifier, strict=True)
        src_name, dst_name = ".".join(src), ".".join(dst)
        glue_table = self._get_table(*src)
        if glue_table is None or not _is_iceberg(glue_table):
            what = "it does not exist" if glue_table is None else "it is not an Iceberg table"
            raise NoSuchTableError(f"cannot rename table {src_name}: {what}")
        table_input: dict[str, Any] = {"Name": dst[1]}
        for key in ("TableType", "Owner", "Description", "Parameters", "StorageDescriptor"):
            if glue_table.get(key) is not None:
                table_input[key] = glue_table[key]
        self._call(
            "create_table",
            f"renaming table {src_name} to {dst_name}",
            on={
                "AlreadyExistsException": TableAlreadyExistsError(
                    f"cannot rename table {src_name}: table {dst_name} already exists"
                ),
                "EntityNotFoundException": NoSuchNamespaceError(
                    f"cannot rename table {src_name} to {dst_name}: namespace {dst[0]} does "
                    "not exist"
                ),
            },
            DatabaseName=dst[0],
            TableInput=table_input,
        )
        try:
            self._call(
                "delete_table", f"renaming table {src_name}", DatabaseName=src[0], Name=src[1]
            )
        except Exception:
            try:
                self._call(
                    "delete_table",
                    f"undoing rename to {dst_name}",
                    DatabaseName=dst[0],
                    Name=dst[1],
                )
            except Exception:
                logger.error("rename of %s: could not remove the copy %s", src_name, dst_name)
            raise
        return self.load_table(dst)

    def list_tables(self, namespace: str | Identifier) -> list[Identifier]:
        database = self._database(namespace, missing=True)
        tables = self._pages(
            "get_tables",
            "TableList",
            f"listing tables of {database}",
            on={
                "EntityNotFoundException": NoSuchNamespaceError(
                    f"cannot list tables: namespace {database} does not exist"
                )
            },
            DatabaseName=database,
        )
        return sorted((database, str(t["Name"])) for t in tables if _is_iceberg(t))


class _Missing(FrazilError):
    """Internal: an AWS "not found" answer, handled where it is raised."""


class _Lost(FrazilError):
    """Internal: a lost race (ConcurrentModificationException, AlreadyExistsException)."""


def _is_s3tables_stub(glue_table: Mapping[str, Any]) -> bool:
    """The empty entry :meth:`GlueCatalog.create_table` makes in an S3 Tables database before
    its first metadata exists."""
    params = glue_table.get("Parameters") or {}
    return METADATA_LOCATION not in params and str(params.get("format", "")).upper() == ICEBERG


def _database_input(database: str, properties: Mapping[str, str]) -> dict[str, Any]:
    db: dict[str, Any] = {"Name": database}
    params: dict[str, str] = {}
    for key, value in properties.items():
        if key == DESCRIPTION:
            db["Description"] = str(value)
        elif key == LOCATION:
            db["LocationUri"] = str(value)
        else:
            params[key] = str(value)
    db["Parameters"] = params
    return db


def _database_properties(db: Mapping[str, Any]) -> dict[str, str]:
    props = {str(k): str(v) for k, v in (db.get("Parameters") or {}).items()}
    if db.get("LocationUri"):
        props[LOCATION] = str(db["LocationUri"])
    if db.get("Description"):
        props[DESCRIPTION] = str(db["Description"])
    return props


def _table_input(
    name: str,
    metadata: TableMetadata,
    metadata_location: str,
    previous_location: str | None,
    glue_table: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The ``TableInput`` Java and PyIceberg write: an ``EXTERNAL_TABLE`` whose parameters name
    the metadata files (keeping parameters other tools set), the table properties among them,
    and the columns of :func:`glue_columns`."""
    params: dict[str, str] = dict((glue_table or {}).get("Parameters") or {})
    params.pop("format", None)  # the S3 Tables stub's marker
    params.update({k: str(v) for k, v in metadata.properties.items()})
    params[TABLE_TYPE] = ICEBERG
    params[METADATA_LOCATION] = metadata_location
    if previous_location:
        params[PREVIOUS_METADATA_LOCATION] = previous_location
    table_input: dict[str, Any] = {
        "Name": name,
        "TableType": EXTERNAL_TABLE,
        "Parameters": params,
        "StorageDescriptor": {"Columns": glue_columns(metadata), "Location": metadata.location},
    }
    description = metadata.properties.get(DESCRIPTION) or (glue_table or {}).get("Description")
    if description:
        table_input["Description"] = str(description)
    owner = (glue_table or {}).get("Owner")
    if owner:
        table_input["Owner"] = owner
    return table_input
