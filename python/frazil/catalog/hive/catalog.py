"""The Hive Metastore catalog: namespaces are Hive databases, tables and views are metastore
tables pointing at their current metadata file (:mod:`frazil.catalog.hive.tables`), and a
commit moves that pointer under the metastore's exclusive table lock
(:mod:`frazil.catalog.hive.lock`), on the one commit path of :class:`~frazil.catalog.Catalog`.
"""

# Long module: every metastore call of the catalog (databases, tables, views, commits) in one
# place, each with its error mapping.

from __future__ import annotations

import getpass
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from frazil.catalog.base import WAREHOUSE, Catalog, Identifier, PropertiesUpdateSummary
from frazil.catalog.commit import bool_property
from frazil.catalog.hive.client import HiveConnector
from frazil.catalog.hive.lock import LOCK_ENABLED, TableLock, lock_settings, release_lock
from frazil.catalog.hive.tables import (
    DO_NOT_UPDATE_STATS,
    ICEBERG,
    ICEBERG_VIEW,
    METADATA_HASH,
    METADATA_LOCATION,
    PREVIOUS_METADATA_LOCATION,
    TABLE_TYPE,
    metadata_hash,
    new_hms_table,
    set_table_parameters,
    storage_descriptor,
)
from frazil.catalog.purge import purge_table_files
from frazil.exceptions import (
    CatalogError,
    FrazilError,
    InvalidArgumentError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    TableAlreadyExistsError,
    ValidationError,
    ViewAlreadyExistsError,
)

if TYPE_CHECKING:
    from frazil.catalog.hive._thrift.hive_metastore import ttypes
    from frazil.catalog.hive._thrift.hive_metastore.ThriftHiveMetastore import Client
    from frazil.io import FileIO
    from frazil.metadata import TableMetadata
    from frazil.table import Table
    from frazil.view import View

__all__ = ["HiveCatalog"]

logger = logging.getLogger(__name__)

LOCATION = "location"
COMMENT = "comment"
# Java HiveCatalog's database owner properties.
DB_OWNER = "hive.metastore.database.owner"
DB_OWNER_TYPE = "hive.metastore.database.owner-type"
_LIST_CHUNK = 100


def _ttypes() -> Any:
    from frazil.catalog.hive._thrift.hive_metastore import ttypes

    return ttypes


def _env_context() -> ttypes.EnvironmentContext:
    return _ttypes().EnvironmentContext(properties={DO_NOT_UPDATE_STATS: "true"})


def _kind(tbl: ttypes.Table | None) -> str | None:
    """``ICEBERG``, ``ICEBERG-VIEW`` or ``None`` (no table, or not Iceberg's)."""
    if tbl is None:
        return None
    kind = str((tbl.parameters or {}).get(TABLE_TYPE, "")).upper()
    return kind if kind in (ICEBERG, ICEBERG_VIEW) else None


class HiveCatalog(Catalog):
    """A catalog in a Hive Metastore, shared with Java's and PyIceberg's ``HiveCatalog``.

    Properties: ``uri`` (``thrift://host:port[,thrift://...]``, tried in order), ``warehouse``
    (where new databases and tables go when the database has no location), ``ugi``
    (``user:group1,group2``, sent with ``set_ugi``), ``hive.hive2-compatible``, the lock settings
    of :mod:`frazil.catalog.hive.lock`, ``engine.hive.lock-enabled`` (catalog default of Java's
    table property) and ``hive.metastore.client.socket.timeout`` (seconds). Namespaces have one
    level (a Hive database); the metastore stores names lower-cased.
    """

    def __init__(self, name: str, **properties: str) -> None:
        super().__init__(name, **properties)
        self._connector = HiveConnector(name, self.properties)
        self._locks = lock_settings(self.properties)
        # metadata location -> the metadata_hash the metastore holds for it (encrypted tables)
        self._metadata_hashes: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"HiveCatalog({self.name!r}, {self._connector.describe()!r})"

    @contextmanager
    def _client(self, doing: str) -> Iterator[Client]:
        with self._connector.client(doing) as client:
            yield client

    def release_lock(self, lock_id: int) -> None:
        """Releases a metastore lock left by a writer that is gone (a killed process): the id
        is named in the :class:`~frazil.catalog.hive.lock.HiveLockTimeoutError` of a commit
        that waited behind it. Only for a lock whose holder is certainly dead; otherwise wait
        for the metastore to time it out (``hive.txn.timeout`` after its last heartbeat)."""
        release_lock(self._connector, lock_id)

    # ---- identifiers

    def _database(self, namespace: str | Identifier) -> str:
        ns = self._namespace_identifier(namespace)
        if len(ns) != 1:
            raise NoSuchNamespaceError(
                f"namespace {'.'.join(ns)} does not exist: Hive namespaces (databases) have "
                "one level"
            )
        return ns[0]

    def _split(self, identifier: str | Identifier, what: str = "table") -> tuple[str, str]:
        ident = self._table_identifier(identifier)
        if len(ident) != 2:
            err = NoSuchViewError if what == "view" else NoSuchTableError
            raise err(
                f"{what} {'.'.join(ident)} does not exist: Hive {what}s are <database>.<name>"
            )
        return ident[0], ident[1]

    # ---- metastore reads

    def _hms_database(self, client: Client, db: str) -> ttypes.Database | None:
        try:
            return client.get_database(db)
        except _ttypes().NoSuchObjectException:
            return None

    def _hms_table(self, client: Client, db: str, name: str) -> ttypes.Table | None:
        t = _ttypes()
        try:
            return client.get_table_req(t.GetTableRequest(dbName=db, tblName=name)).table
        except t.NoSuchObjectException:
            return None

    def _get(self, db: str, name: str) -> ttypes.Table | None:
        with self._client(f"loading {db}.{name}") as client:
            return self._hms_table(client, db, name)

    # ---- namespaces

    def namespace_exists(self, namespace: str | Identifier) -> bool:
        ns = self._namespace_identifier(namespace, allow_root=True)
        if not ns:
            return True
        if len(ns) != 1:
            return False
        with self._client(f"loading database {ns[0]}") as client:
            return self._hms_database(client, ns[0]) is not None

    def create_namespace(
        self, namespace: str | Identifier, properties: Mapping[str, str] | None = None
    ) -> None:
        ns = self._namespace_identifier(namespace)
        if len(ns) != 1:
            raise InvalidArgumentError(
                f"cannot create namespace {'.'.join(ns)}: Hive namespaces (databases) have one "
                "level"
            )
        db = ns[0]
        props = {k: str(v) for k, v in (properties or {}).items()}
        t = _ttypes()
        location = props.pop(LOCATION, None)
        if location is None and self.properties.get(WAREHOUSE):
            location = f"{self.properties[WAREHOUSE].rstrip('/')}/{db}.db"
        owner_type = props.pop(DB_OWNER_TYPE, "USER").upper()
        if owner_type not in t.PrincipalType._NAMES_TO_VALUES:
            raise InvalidArgumentError(
                f"namespace {db}: {DB_OWNER_TYPE}={owner_type!r} is not USER, ROLE or GROUP"
            )
        database = t.Database(
            name=db,
            description=props.pop(COMMENT, None),
            locationUri=location,
            parameters=props,
            ownerName=props.pop(DB_OWNER, None) or _user(),
            ownerType=t.PrincipalType._NAMES_TO_VALUES[owner_type],
        )
        with self._client(f"creating database {db}") as client:
            try:
                client.create_database(database)
            except t.AlreadyExistsException:
                raise NamespaceAlreadyExistsError(f"namespace {db} already exists") from None
            except t.InvalidObjectException as e:
                raise InvalidArgumentError(f"cannot create namespace {db}: {e.message}") from None

    def drop_namespace(self, namespace: str | Identifier) -> None:
        db = self._database(namespace)
        t = _ttypes()
        with self._client(f"dropping database {db}") as client:
            # Checked first: Hive 2.3 answers a missing database with a NullPointerException.
            if self._hms_database(client, db) is None:
                raise NoSuchNamespaceError(f"cannot drop namespace {db}: it does not exist")
            try:
                client.drop_database(db, False, False)
            except t.NoSuchObjectException:
                raise NoSuchNamespaceError(
                    f"cannot drop namespace {db}: it does not exist"
                ) from None
            except t.InvalidOperationException as e:
                raise NamespaceNotEmptyError(f"cannot drop namespace {db}: {e.message}") from None

    def list_namespaces(self, namespace: str | Identifier = ()) -> list[Identifier]:
        ns = self._namespace_identifier(namespace, allow_root=True)
        if ns:
            if not self.namespace_exists(ns):
                raise NoSuchNamespaceError(f"cannot list namespaces: {'.'.join(ns)} does not exist")
            return []  # Hive databases hold no databases
        with self._client("listing databases") as client:
            return sorted((db,) for db in client.get_all_databases())

    def load_namespace_properties(self, namespace: str | Identifier) -> dict[str, str]:
        db = self._database(namespace)
        with self._client(f"loading database {db}") as client:
            database = self._hms_database(client, db)
        if database is None:
            raise NoSuchNamespaceError(f"namespace {db} does not exist")
        props = dict(database.parameters or {})
        if database.locationUri:
            props[LOCATION] = database.locationUri
        if database.description:
            props[COMMENT] = database.description
        if database.ownerName:
            props[DB_OWNER] = database.ownerName
        if database.ownerType is not None:
            props[DB_OWNER_TYPE] = _ttypes().PrincipalType._VALUES_TO_NAMES.get(
                database.ownerType, "USER"
            )
        return props

    def update_namespace_properties(
        self,
        namespace: str | Identifier,
        removals: set[str] | None = None,
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdateSummary:
        db = self._database(namespace)
        removals = set(removals or ())
        updates = {k: str(v) for k, v in (updates or {}).items()}
        overlap = removals & set(updates)
        if overlap:
            raise InvalidArgumentError(
                f"namespace {db}: properties both removed and updated: {sorted(overlap)}"
            )
        t = _ttypes()
        with self._client(f"updating database {db}") as client:
            database = self._hms_database(client, db)
            if database is None:
                raise NoSuchNamespaceError(
                    f"cannot update properties of namespace {db}: it does not exist"
                )
            params = dict(database.parameters or {})
            existing = set(params) | {
                k
                for k, v in ((LOCATION, database.locationUri), (COMMENT, database.description))
                if v
            }
            for key in removals:
                if key == COMMENT:
                    database.description = None
                elif key == LOCATION:
                    raise InvalidArgumentError(f"namespace {db}: its location cannot be removed")
                params.pop(key, None)
            for key, value in updates.items():
                if key == COMMENT:
                    database.description = value
                elif key == LOCATION:
                    database.locationUri = value
                elif key == DB_OWNER:
                    database.ownerName = value
                elif key == DB_OWNER_TYPE:
                    database.ownerType = t.PrincipalType._NAMES_TO_VALUES.get(value.upper())
                else:
                    params[key] = value
            database.parameters = params
            client.alter_database(db, database)
        return PropertiesUpdateSummary(
            removed=sorted(removals & existing),
            updated=sorted(updates),
            missing=sorted(removals - existing),
        )

    # ---- tables

    def _default_table_location(self, identifier: Identifier) -> str:
        db, name = identifier[0], identifier[-1]
        with self._client(f"loading database {db}") as client:
            database = self._hms_database(client, db)
        if database is None:
            raise NoSuchNamespaceError(f"namespace {db} does not exist")
        root = database.locationUri
        if not root:
            warehouse = self.properties.get(WAREHOUSE)
            if not warehouse:
                raise InvalidArgumentError(
                    f"catalog {self.name!r}: database {db} has no location and the catalog no "
                    "'warehouse': give the table a location"
                )
            root = f"{warehouse.rstrip('/')}/{db}.db"
        return self._check_under(
            root, f"{root.rstrip('/')}/{name}", f"default location of {db}.{name}"
        )

    def _load_pointer(self, identifier: Identifier) -> str | None:
        db, name = self._split(identifier)
        tbl = self._get(db, name)
        if _kind(tbl) != ICEBERG:
            return None
        assert tbl is not None
        params = tbl.parameters or {}
        location = params.get(METADATA_LOCATION)
        if location is not None and METADATA_HASH in params:
            self._metadata_hashes[location] = params[METADATA_HASH]
        return location

    def _check_metadata_bytes(self, location: str, data: bytes) -> None:
        """An encrypted table's metadata file must hash to the metastore's ``metadata_hash``
        (Java 1.11's check): its JSON is plaintext in storage, the metastore is trusted."""
        expected = self._metadata_hashes.get(location)
        if expected is not None and metadata_hash(data) != expected:
            raise ValidationError(
                f"table metadata {location}: its SHA-256 does not match the metadata_hash the "
                "Hive Metastore holds for this encrypted table (the file was changed or replaced "
                "outside the catalog); refusing to read it"
            )

    def _lock_enabled(self, metadata: TableMetadata) -> bool:
        if LOCK_ENABLED in metadata.properties:
            return bool_property(metadata.properties, LOCK_ENABLED, True)
        return bool_property(self.properties, LOCK_ENABLED, True)

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
        db, name = self._split(identifier)
        removed = set(base.properties) - set(new.properties) if base is not None else set()
        t = _ttypes()
        if current_location is None:
            tbl = new_hms_table(db, name, _user())
            set_table_parameters(tbl, new, new_location, None, removed, self.properties, data)
            with self._client(f"creating table {db}.{name}") as client:
                try:
                    client.create_table(tbl)
                except t.AlreadyExistsException:
                    return False
                except t.NoSuchObjectException:
                    raise NoSuchTableError(
                        f"cannot create table {db}.{name}: namespace {db} does not exist"
                    ) from None
            return True

        def alter(client: Client, tbl: ttypes.Table) -> None:
            set_table_parameters(
                tbl, new, new_location, current_location, removed, self.properties, data
            )
            client.alter_table_with_environment_context(db, name, tbl, _env_context())

        if not self._lock_enabled(new):
            return self._swap_without_lock(
                db, name, current_location, new, new_location, removed, data
            )
        return self._locked_swap(db, name, current_location, ICEBERG, alter)

    def _locked_swap(
        self,
        db: str,
        name: str,
        current_location: str,
        kind: str,
        alter: Any,
    ) -> bool:
        """Java's commit: the exclusive lock, the table reloaded under it (``False`` if its
        ``metadata_location`` moved), ``alter``, and the lock released on every path."""
        with TableLock(self._connector, self._locks, db, name) as client:
            try:
                tbl = self._hms_table(client, db, name)
                if _kind(tbl) != kind:
                    what = "table" if kind == ICEBERG else "view"
                    err = NoSuchTableError if kind == ICEBERG else NoSuchViewError
                    raise err(f"cannot commit to {what} {db}.{name}: it was dropped")
                assert tbl is not None
                if (tbl.parameters or {}).get(METADATA_LOCATION) != current_location:
                    return False
                alter(client, tbl)
                return True
            except FrazilError:
                raise
            except Exception as e:
                raise self._connector.error(e, f"committing to {db}.{name}") from e

    def _swap_without_lock(
        self,
        db: str,
        name: str,
        current_location: str,
        new: TableMetadata,
        new_location: str,
        removed: set[str],
        data: bytes,
    ) -> bool:
        """``engine.hive.lock-enabled=false``: Hive 4's ``alter_table_req`` with the expected
        ``metadata_location`` (the metastore's own check-and-put, HIVE-26882)."""
        t = _ttypes()
        with self._client(f"committing to {db}.{name}") as client:
            tbl = self._hms_table(client, db, name)
            if _kind(tbl) != ICEBERG:
                raise NoSuchTableError(f"cannot commit to table {db}.{name}: it was dropped")
            assert tbl is not None
            if (tbl.parameters or {}).get(METADATA_LOCATION) != current_location:
                return False
            set_table_parameters(
                tbl, new, new_location, current_location, removed, self.properties, data
            )
            request = t.AlterTableRequest(
                dbName=db,
                tableName=name,
                table=tbl,
                environmentContext=_env_context(),
                expectedParameterKey=METADATA_LOCATION,
                expectedParameterValue=current_location,
            )
            try:
                client.alter_table_req(request)
            except t.MetaException as e:
                if "has been modified" in str(e.message):
                    return False
                raise
            except Exception as e:
                from thrift.Thrift import TApplicationException

                if isinstance(e, TApplicationException) and e.type == e.UNKNOWN_METHOD:
                    raise CatalogError(
                        f"commit to table {db}.{name}: {LOCK_ENABLED}=false needs a Hive 4 "
                        "metastore (alter_table_req with an expected parameter); this metastore "
                        "does not have it: enable the lock"
                    ) from e
                raise
            return True

    def register_table(self, identifier: str | Identifier, metadata_location: str) -> Table:
        db, name = self._split(identifier)
        metadata = self._read_metadata(metadata_location)
        t = _ttypes()
        tbl = new_hms_table(db, name, _user())
        set_table_parameters(tbl, metadata, metadata_location, None, set(), self.properties)
        with self._client(f"registering table {db}.{name}") as client:
            if self._hms_database(client, db) is None:
                raise NoSuchNamespaceError(
                    f"cannot register table {db}.{name}: namespace {db} does not exist"
                )
            try:
                client.create_table(tbl)
            except t.AlreadyExistsException:
                raise TableAlreadyExistsError(f"table {db}.{name} already exists") from None
        return self.load_table((db, name))

    def drop_table(
        self,
        identifier: str | Identifier,
        purge: bool = False,
        *,
        delete_outside_location: bool = False,
    ) -> None:
        db, name = self._split(identifier)
        table = self.load_table((db, name)) if purge else None
        t = _ttypes()
        with self._client(f"dropping table {db}.{name}") as client:
            tbl = self._hms_table(client, db, name)
            if _kind(tbl) != ICEBERG:
                raise NoSuchTableError(
                    f"cannot drop table {db}.{name}: it does not exist"
                    + ("" if tbl is None else " as an Iceberg table")
                )
            try:
                client.drop_table(db, name, False)  # never the metastore's own data deletion
            except t.NoSuchObjectException:
                raise NoSuchTableError(
                    f"cannot drop table {db}.{name}: it does not exist"
                ) from None
        logger.info("dropped table %s.%s%s", db, name, " (purging its files)" if purge else "")
        if table is not None:
            purge_table_files(
                table.io,
                table.metadata,
                table.metadata_location,
                delete_outside_location=delete_outside_location,
            )

    def _rename(self, src: tuple[str, str], dst: tuple[str, str], kind: str) -> None:
        what = "table" if kind == ICEBERG else "view"
        missing = NoSuchTableError if kind == ICEBERG else NoSuchViewError
        t = _ttypes()
        with self._client(f"renaming {what} {'.'.join(src)}") as client:
            tbl = self._hms_table(client, *src)
            if _kind(tbl) != kind:
                raise missing(f"cannot rename {what} {'.'.join(src)}: it does not exist")
            assert tbl is not None
            if self._hms_database(client, dst[0]) is None:
                raise NoSuchNamespaceError(
                    f"cannot rename {what} {'.'.join(src)}: namespace {dst[0]} does not exist"
                )
            target = self._hms_table(client, *dst)
            if target is not None:
                err = (
                    ViewAlreadyExistsError
                    if _kind(target) == ICEBERG_VIEW
                    else TableAlreadyExistsError
                )
                raise err(f"cannot rename {what} {'.'.join(src)}: {'.'.join(dst)} already exists")
            tbl.dbName, tbl.tableName = dst
            try:
                client.alter_table_with_environment_context(src[0], src[1], tbl, _env_context())
            except t.InvalidOperationException as e:
                raise TableAlreadyExistsError(
                    f"cannot rename {what} {'.'.join(src)} to {'.'.join(dst)}: {e.message}"
                ) from None

    def rename_table(
        self, from_identifier: str | Identifier, to_identifier: str | Identifier
    ) -> Table:
        src, dst = self._split(from_identifier), self._split(to_identifier)
        self._rename(src, dst, ICEBERG)
        return self.load_table(dst)

    def _list(self, namespace: str | Identifier, kind: str) -> list[Identifier]:
        db = self._database(namespace)
        with self._client(f"listing tables of {db}") as client:
            if self._hms_database(client, db) is None:
                raise NoSuchNamespaceError(f"cannot list tables: namespace {db} does not exist")
            names = list(client.get_all_tables(db))
            found = []
            for i in range(0, len(names), _LIST_CHUNK):
                for tbl in client.get_table_objects_by_name(db, names[i : i + _LIST_CHUNK]):
                    if _kind(tbl) == kind:
                        found.append((db, tbl.tableName))
        return sorted(found)

    def list_tables(self, namespace: str | Identifier) -> list[Identifier]:
        return self._list(namespace, ICEBERG)

    # ---- views (Java's HiveViewOperations: VIRTUAL_VIEW, table_type=ICEBERG-VIEW)

    def supports_views(self) -> bool:
        return True

    def _load_view_pointer(self, identifier: Identifier) -> str | None:
        db, name = self._split(identifier, "view")
        tbl = self._get(db, name)
        if _kind(tbl) != ICEBERG_VIEW:
            return None
        assert tbl is not None
        return (tbl.parameters or {}).get(METADATA_LOCATION)

    def _view_hms_parameters(
        self, tbl: ttypes.Table, new_location: str, previous: str | None
    ) -> None:
        from frazil.view.commit import read_view_metadata

        metadata = read_view_metadata(self, new_location)
        params = dict(tbl.parameters or {})
        params.update(metadata.properties)
        params[TABLE_TYPE] = ICEBERG_VIEW
        params[METADATA_LOCATION] = new_location
        if previous:
            params[PREVIOUS_METADATA_LOCATION] = previous
        params["uuid"] = str(metadata.view_uuid)
        tbl.parameters = params
        hive2 = bool_property(self.properties, "hive.hive2-compatible", False)
        tbl.sd = storage_descriptor(metadata.schema(), metadata.location, hive2)
        sql = next(
            (r.sql for r in metadata.current_version().representations if hasattr(r, "sql")), None
        )
        tbl.viewOriginalText = tbl.viewExpandedText = sql

    def _swap_view_pointer(
        self, identifier: Identifier, current_location: str | None, new_location: str
    ) -> bool:
        db, name = self._split(identifier, "view")
        t = _ttypes()
        if current_location is None:
            tbl = new_hms_table(db, name, _user(), view=True)
            self._view_hms_parameters(tbl, new_location, None)
            with self._client(f"creating view {db}.{name}") as client:
                try:
                    client.create_table(tbl)
                except t.AlreadyExistsException:
                    return False
            return True

        def alter(client: Client, tbl: ttypes.Table) -> None:
            self._view_hms_parameters(tbl, new_location, current_location)
            client.alter_table_with_environment_context(db, name, tbl, _env_context())

        return self._locked_swap(db, name, current_location, ICEBERG_VIEW, alter)

    def list_views(self, namespace: str | Identifier) -> list[Identifier]:
        return self._list(namespace, ICEBERG_VIEW)

    def drop_view(self, identifier: str | Identifier) -> None:
        db, name = self._split(identifier, "view")
        t = _ttypes()
        with self._client(f"dropping view {db}.{name}") as client:
            if _kind(self._hms_table(client, db, name)) != ICEBERG_VIEW:
                raise NoSuchViewError(f"cannot drop view {db}.{name}: it does not exist")
            try:
                client.drop_table(db, name, False)
            except t.NoSuchObjectException:
                raise NoSuchViewError(f"cannot drop view {db}.{name}: it does not exist") from None
        logger.info("dropped view %s.%s", db, name)

    def rename_view(
        self, from_identifier: str | Identifier, to_identifier: str | Identifier
    ) -> View:
        src, dst = self._split(from_identifier, "view"), self._split(to_identifier, "view")
        if src != dst:
            self._rename(src, dst, ICEBERG_VIEW)
        return self.load_view(dst)


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no user name in the environment (some containers)
        return "frazil"
