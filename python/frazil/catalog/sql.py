"""The SQL catalog: table pointers and namespace properties in a database, through SQLAlchemy.

The tables are those of the Java JDBC catalog and PyIceberg's ``SqlCatalog``, so all three can
share one database (rows are scoped by ``catalog_name``):

- ``iceberg_tables(catalog_name, table_namespace, table_name, metadata_location,
  previous_metadata_location[, iceberg_type])``, primary key the first three. Tables and
  views share it, as in the Java JDBC catalog's V1 schema: ``iceberg_type`` is ``'TABLE'`` (or
  NULL, for rows written before the column existed) for a table and ``'VIEW'`` for a view. A
  database with the V0 schema (no ``iceberg_type``) holds tables only; with the catalog
  property ``jdbc.schema-version=V1`` the catalog adds the column when it opens (as Java does),
  and then holds views too.
- ``iceberg_namespace_properties(catalog_name, namespace, property_key, property_value)``,
  primary key the first three.

Namespaces are stored as their dotted names; creating one writes an ``exists = 'true'`` row, and
a namespace also exists while a table or a child namespace is in it. A commit is the
check-and-put ``UPDATE iceberg_tables SET metadata_location = :new, previous_metadata_location =
:old WHERE ... AND metadata_location = :old``; no row updated means another commit won.

SQLite (the embedded default, ``sqlite:///<warehouse>/catalog.db`` when only a local ``warehouse``
is given, the same file ``frazil serve --warehouse`` opens; a warehouse that holds only
``frazil_catalog.db``, the name before 0.x, keeps using it) runs in WAL mode with a busy timeout
(``sqlite.busy-timeout-ms``, default 30 s) on every connection, and write transactions take the
write lock up front (``BEGIN IMMEDIATE``), so parallel writers in threads and processes wait for
each other instead of failing with "database is locked". Reads go through a second, read-only
connection (``mode=ro``; on storage where even the WAL index cannot be created, ``immutable=1``), so
loading a table works on read-only storage and never takes or waits for the write lock; opening the
catalog writes only when its tables do not exist yet. The embedded default is created by the first
write (creating a namespace or a table): loading or listing in a warehouse that holds no catalog
database raises :class:`~frazil.exceptions.NoSuchWarehouseError` naming the path, so a mistyped
warehouse is an error rather than an empty catalog.

PostgreSQL works through psycopg 3 (``postgresql+psycopg://...``). Every session sets
``lock_timeout`` (``postgresql.lock-timeout-ms``, default 10 s), ``statement_timeout``
(``postgresql.statement-timeout-ms``, default 60 s) and ``idle_in_transaction_session_timeout``
(``postgresql.idle-in-transaction-timeout-ms``, default 60 s), so a lock another session holds
cannot block a load or a commit forever (a pointer swap that times out is a lost race, retried).

Database errors surface as :class:`~frazil.exceptions.CatalogError` naming the catalog and the
cause (:class:`~frazil.exceptions.CatalogBusyError` for timeouts, locks and dropped connections,
which may pass); the SQLAlchemy error is the ``__cause__``.
"""

# Long module: every statement of the catalog's two tables, for tables and views alike, in one
# place.

from __future__ import annotations

import logging
import os
import sqlite3
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from sqlalchemy import (
    Column,
    Connection,
    Engine,
    MetaData,
    String,
    Table,
    create_engine,
    delete,
    event,
    insert,
    inspect,
    or_,
    select,
    union,
    update,
)
from sqlalchemy.engine import URL
from sqlalchemy.exc import (
    DBAPIError,
    IntegrityError,
    OperationalError,
    ProgrammingError,
    SQLAlchemyError,
)
from sqlalchemy.pool import NullPool

from frazil.catalog.base import (
    URI,
    WAREHOUSE,
    Catalog,
    Identifier,
    PropertiesUpdateSummary,
)
from frazil.catalog.commit import CommitTableResponse, CreateConflict, PreparedCommit, TableCommit
from frazil.catalog.purge import purge_table_files
from frazil.exceptions import (
    CatalogBusyError,
    CatalogError,
    CommitFailedError,
    CommitStateUnknownError,
    InvalidArgumentError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    NoSuchWarehouseError,
    TableAlreadyExistsError,
    UnsupportedError,
    ViewAlreadyExistsError,
)
from frazil.io import local_path

if TYPE_CHECKING:
    from collections.abc import Sequence

    from frazil.io import FileIO
    from frazil.metadata import TableMetadata
    from frazil.table import Table as FrazilTable
    from frazil.view import View

__all__ = ["SqlCatalog"]

logger = logging.getLogger(__name__)

SQLITE_BUSY_TIMEOUT_MS = "sqlite.busy-timeout-ms"
DEFAULT_SQLITE_BUSY_TIMEOUT_MS = 30_000
PG_TIMEOUTS = {  # property: (PostgreSQL setting, default ms)
    "postgresql.lock-timeout-ms": ("lock_timeout", 10_000),
    "postgresql.statement-timeout-ms": ("statement_timeout", 60_000),
    "postgresql.idle-in-transaction-timeout-ms": ("idle_in_transaction_session_timeout", 60_000),
}
# SQLSTATE classes and codes of errors that pass on their own: connection exceptions (08),
# transaction rollbacks (40: serialization failure, deadlock), lock not available (55P03),
# query canceled (57014, statement_timeout), admin shutdown (57P01-57P03), too many connections.
_BUSY_SQLSTATE_PREFIXES = ("08", "40", "55P03", "57014", "57P0", "53300")
_BUSY_SQLITE_MESSAGES = ("database is locked", "database table is locked", "busy")
DEFAULT_SQLITE_FILE = "catalog.db"
# The embedded default's name before it became the one `frazil serve` used too.
LEGACY_SQLITE_FILE = "frazil_catalog.db"
NAMESPACE_EXISTS_PROPERTY = "exists"
NAMESPACE_LOCATION_PROPERTY = "location"
TABLE_TYPE = "TABLE"
VIEW_TYPE = "VIEW"
# The Java JDBC catalog's property: "V1" adds the iceberg_type column to a V0 database.
SCHEMA_VERSION = "jdbc.schema-version"

_schema = MetaData()
ICEBERG_TABLES = Table(
    "iceberg_tables",
    _schema,
    Column("catalog_name", String(255), primary_key=True, nullable=False),
    Column("table_namespace", String(255), primary_key=True, nullable=False),
    Column("table_name", String(255), primary_key=True, nullable=False),
    Column("metadata_location", String(1000), nullable=True),
    Column("previous_metadata_location", String(1000), nullable=True),
    Column("iceberg_type", String(5), nullable=True),
)
NAMESPACE_PROPERTIES = Table(
    "iceberg_namespace_properties",
    _schema,
    Column("catalog_name", String(255), primary_key=True, nullable=False),
    Column("namespace", String(255), primary_key=True, nullable=False),
    Column("property_key", String(255), primary_key=True, nullable=False),
    Column("property_value", String(1000), nullable=True),
)
_T = ICEBERG_TABLES.c
_N = NAMESPACE_PROPERTIES.c


def _local_path(location: str) -> str | None:
    """The local path of a warehouse location (plain path or ``file:`` URI), else ``None``."""
    try:
        return local_path(location)
    except UnsupportedError:
        return None


def default_sqlite_file(warehouse_path: str) -> str:
    """The embedded SQLite catalog's file in a local warehouse directory: ``catalog.db``, or
    ``frazil_catalog.db`` (the library's name before 0.x) when only that one exists."""
    current = os.path.join(warehouse_path, DEFAULT_SQLITE_FILE)
    legacy = os.path.join(warehouse_path, LEGACY_SQLITE_FILE)
    if os.path.exists(legacy):
        if not os.path.exists(current):
            return legacy
        logger.warning(
            "warehouse %s holds two catalog databases: %s is used, %s (its old name) is not",
            warehouse_path,
            DEFAULT_SQLITE_FILE,
            LEGACY_SQLITE_FILE,
        )
    return current


def _dispose(engines: list[Engine]) -> None:
    for engine in engines:
        engine.dispose()


def _is_busy(e: SQLAlchemyError) -> bool:
    """Whether a database error may pass on its own (see ``_BUSY_SQLSTATE_PREFIXES``)."""
    if isinstance(e, DBAPIError) and e.connection_invalidated:
        return True
    orig = getattr(e, "orig", None)
    state = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    if state:
        return str(state).startswith(_BUSY_SQLSTATE_PREFIXES)
    text = str(orig if orig is not None else e).lower()
    return any(m in text for m in _BUSY_SQLITE_MESSAGES)


def _like_prefix(namespace: str) -> str:
    """A LIKE pattern for the children of ``namespace`` (``!`` escapes the wildcards)."""
    return namespace.replace("!", "!!").replace("_", "!_").replace("%", "!%") + ".%"


class SqlCatalog(Catalog):
    """A catalog in a SQL database (see the module docstring). Properties: ``uri`` (an
    SQLAlchemy URL), ``warehouse`` (where new tables go), ``sqlite.busy-timeout-ms``,
    ``pool-pre-ping`` (``"true"`` to test pooled connections before use)."""

    # A table is found by its row, so a stored odd name (another engine's) can still be loaded,
    # committed to and dropped; only creating derives a path from the identifier.
    _paths_from_identifiers = False

    # The embedded default's file while it does not exist: created by the first write, and
    # named by the error a read raises meanwhile.
    _missing_database: str | None = None

    def __init__(self, name: str, **properties: str) -> None:
        super().__init__(name, **properties)
        uri = self.properties.get(URI)
        if not uri:
            warehouse = self.properties.get(WAREHOUSE)
            path = None if warehouse is None else _local_path(warehouse)
            if path is None:
                raise InvalidArgumentError(
                    f"SQL catalog {name!r}: set 'uri' (an SQLAlchemy URL), or a local "
                    f"'warehouse' for the embedded SQLite default (got warehouse={warehouse!r})"
                )
            db_file = default_sqlite_file(os.path.abspath(path))
            if not os.path.exists(db_file):
                self._missing_database = db_file
            uri = f"sqlite:///{db_file}"
            self.properties[URI] = uri
        self.uri = uri
        self.engine = self._make_engine(pooled=True)
        self._reader = self._make_reader()
        # Pooled connections are closed when the catalog is collected, not left to the
        # driver's destructor (which warns about connections deleted while open).
        self._finalizer = weakref.finalize(
            self,
            _dispose,
            [self.engine] + ([self._reader] if self._reader is not self.engine else []),
        )
        self._recheck_engine: Engine | None = None
        if self._missing_database is not None:
            self._has_type_column = True  # the tables it will create have iceberg_type
            return
        with self._errors("opening"):
            self._init_tables()

    def _database_absent(self) -> bool:
        """Whether the embedded default's file still does not exist (opened if another process
        created it meanwhile)."""
        path = self._missing_database
        if path is None:
            return False
        if not os.path.exists(path):
            return True
        with self._errors("opening"):
            self._init_tables()
        self._missing_database = None
        return False

    def _require_database(self) -> None:
        if self._database_absent():
            warehouse = os.path.dirname(self._missing_database or "")
            where = "does not exist" if not os.path.isdir(warehouse) else "holds no catalog"
            raise NoSuchWarehouseError(
                f"SQL catalog {self.name!r}: no catalog database at {self._missing_database} "
                f"(the warehouse {warehouse} {where}); check the path, or create a namespace "
                "to start a new catalog there"
            )

    def _create_database(self) -> None:
        if self._database_absent():
            os.makedirs(os.path.dirname(self._missing_database or ""), exist_ok=True)
            with self._errors("creating the catalog database"):
                self._init_tables()
            self._missing_database = None

    # ---- engine and connections

    @property
    def _is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    def _make_engine(self, pooled: bool, read_only: bool = False) -> Engine:
        kwargs: dict[str, Any] = {}
        if not pooled:
            kwargs["poolclass"] = NullPool
        if self.properties.get("pool-pre-ping", "false").lower() == "true":
            kwargs["pool_pre_ping"] = True
        url: str | URL = self.uri
        if read_only:
            url = self._sqlite_read_only_url(immutable=False) or self.uri
        if url and str(url).startswith("postgresql"):
            options = " ".join(
                f"-c {setting}={self._int_property(key, default)}"
                for key, (setting, default) in PG_TIMEOUTS.items()
            )
            kwargs["connect_args"] = {"options": options}
        engine = create_engine(url, **kwargs)
        if engine.dialect.name == "sqlite":
            self._configure_sqlite(engine, read_only)
        return engine

    def _int_property(self, key: str, default: int) -> int:
        value = self.properties.get(key)
        try:
            return default if value is None else int(value)
        except ValueError:
            raise InvalidArgumentError(
                f"catalog property {key}={value!r} is not an integer"
            ) from None

    def _sqlite_path(self) -> str | None:
        """The file of a file-backed SQLite catalog (``None`` in memory or for a URI filename)."""
        url = self.engine.url
        db = url.database
        if (
            url.get_backend_name() != "sqlite"
            or not db
            or db == ":memory:"
            or db.startswith("file:")
        ):
            return None
        return os.path.abspath(db)

    def _sqlite_read_only_url(self, immutable: bool) -> URL | None:
        path = self._sqlite_path()
        if path is None:
            return None
        query = {"mode": "ro", "uri": "true", **({"immutable": "1"} if immutable else {})}
        return URL.create("sqlite", database=f"file:{quote(path)}", query=query)

    def _make_reader(self) -> Engine:
        """The engine reads go through: a read-only connection to a SQLite file (it needs no
        write access and never takes the write lock), else the pooled engine."""
        if self._sqlite_path() is None or not os.path.exists(self._sqlite_path() or ""):
            return self.engine
        path = self._sqlite_path() or ""
        reader = self._make_engine(pooled=True, read_only=True)
        try:
            with reader.connect() as conn:
                conn.exec_driver_sql("SELECT count(*) FROM sqlite_master").scalar()
        except OperationalError:
            if os.access(os.path.dirname(path), os.W_OK):
                raise
            # A WAL database in a directory where its "-shm" index cannot be created opens
            # only as immutable (no one can be writing it there without that index).
            reader.dispose()
            url = self._sqlite_read_only_url(immutable=True)
            assert url is not None
            reader = create_engine(url)
            self._configure_sqlite(reader, read_only=True)
        return reader

    def _configure_sqlite(self, engine: Engine, read_only: bool) -> None:
        timeout_ms = self._int_property(SQLITE_BUSY_TIMEOUT_MS, DEFAULT_SQLITE_BUSY_TIMEOUT_MS)

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection: Any, _record: Any) -> None:
            # frazil issues BEGIN itself (below): pysqlite's implicit BEGIN is deferred,
            # and a deferred reader that later writes can deadlock with another writer.
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            try:
                cursor.execute(f"PRAGMA busy_timeout = {int(timeout_ms)}")
                if not read_only:
                    mode = cursor.execute("PRAGMA journal_mode").fetchone()
                    if not mode or str(mode[0]).lower() != "wal":
                        try:
                            cursor.execute("PRAGMA journal_mode = WAL")
                        except sqlite3.OperationalError as e:  # read-only, or busy: keep its mode
                            logger.info("SQLite catalog stays in %s mode: %s", mode, e)
            finally:
                cursor.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Connection) -> None:
            write = conn.get_execution_options().get("frazil_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """Database errors (not integrity errors, which callers handle) as catalog errors."""
        try:
            yield
        except IntegrityError:
            raise
        except SQLAlchemyError as e:
            orig = getattr(e, "orig", None)
            cls = CatalogBusyError if _is_busy(e) else CatalogError
            raise cls(
                f"SQL catalog {self.name!r} ({self.engine.url.render_as_string()}): {doing} "
                f"failed: {orig if orig is not None else e}"
            ) from e

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        """A write transaction (on SQLite holding the write lock from its start)."""
        self._create_database()
        with self._errors("writing"), self.engine.connect() as conn:
            conn.execution_options(frazil_write=True)
            with conn.begin():
                yield conn

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        self._require_database()
        with self._errors("reading"), self._reader.connect() as conn, conn.begin():
            yield conn

    # ---- the database for frazil's own side tables (frazil serve's scan plans)

    @contextmanager
    def write_transaction(self) -> Iterator[Connection]:
        """A write transaction on the catalog's database, for a frazil component that keeps
        its own table there (:meth:`create_side_table`). Database errors are
        :class:`~frazil.exceptions.CatalogError` (integrity errors pass through)."""
        with self._write() as conn:
            yield conn

    @contextmanager
    def read_transaction(self) -> Iterator[Connection]:
        """A read transaction on the catalog's database (see :meth:`write_transaction`)."""
        with self._read() as conn:
            yield conn

    def create_side_table(self, table: Table) -> None:
        """Creates ``table`` in the catalog's database unless it exists; safe when several
        processes create it at the same moment (the loser finds it created)."""
        try:
            with self._write() as conn:
                table.create(conn, checkfirst=True)
        except (CatalogError, IntegrityError) as e:
            # PostgreSQL: a concurrent CREATE TABLE fails with a duplicate (an integrity or
            # programming error) rather than waiting; fine if the table exists now.
            if not inspect(self.engine).has_table(table.name):
                if isinstance(e, CatalogError):
                    raise
                raise CatalogError(
                    f"SQL catalog {self.name!r}: creating table {table.name} failed: {e.orig}"
                ) from e

    def _init_tables(self) -> None:
        # Read first: a catalog that exists is opened without writing (read-only storage) and
        # without waiting for another process's write lock.
        if not inspect(self._reader).has_table(NAMESPACE_PROPERTIES.name) or not inspect(
            self._reader
        ).has_table(ICEBERG_TABLES.name):
            try:
                with self.engine.connect() as conn:
                    conn.execution_options(frazil_write=True)
                    with conn.begin():
                        _schema.create_all(conn, checkfirst=True)
            except (OperationalError, ProgrammingError, IntegrityError):
                # Another process created them at the same moment; fine if they exist now.
                if not inspect(self.engine).has_table(ICEBERG_TABLES.name):
                    raise
            if self._reader is self.engine:
                self._reader = self._make_reader()
                self._finalizer.detach()
                engines = [self.engine] + (
                    [self._reader] if self._reader is not self.engine else []
                )
                self._finalizer = weakref.finalize(self, _dispose, engines)
        columns = {c["name"] for c in inspect(self._reader).get_columns(ICEBERG_TABLES.name)}
        self._has_type_column = "iceberg_type" in columns
        if not self._has_type_column:
            self._migrate_to_v1()

    def _migrate_to_v1(self) -> None:
        """Adds ``iceberg_type`` to a V0 database when ``jdbc.schema-version=V1`` (the Java
        JDBC catalog's migration); existing rows stay NULL, which reads as a table."""
        if self.properties.get(SCHEMA_VERSION, "V0").strip().upper() != "V1":
            logger.info(
                "SQL catalog %r has no views (a V0 database): set %s=V1 to add them",
                self.name,
                SCHEMA_VERSION,
            )
            return
        try:
            with self.engine.connect() as conn:
                conn.execution_options(frazil_write=True)
                with conn.begin():
                    conn.exec_driver_sql(
                        "ALTER TABLE iceberg_tables ADD COLUMN iceberg_type VARCHAR(5)"
                    )
        except (OperationalError, ProgrammingError):
            # Another process added it at the same moment; fine if it is there now.
            columns = {c["name"] for c in inspect(self.engine).get_columns(ICEBERG_TABLES.name)}
            if "iceberg_type" not in columns:
                raise
        logger.info("SQL catalog %r: added iceberg_type (views are supported now)", self.name)
        self._has_type_column = True

    def close(self) -> None:
        """Releases the database connections (also done when the catalog is collected)."""
        self._finalizer()
        if self._recheck_engine is not None:
            self._recheck_engine.dispose()

    def __enter__(self) -> SqlCatalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- helpers

    def _table_filter(self) -> list[Any]:
        if not self._has_type_column:
            return []
        return [or_(_T.iceberg_type == TABLE_TYPE, _T.iceberg_type.is_(None))]

    def _table_key(self, ident: Identifier) -> list[Any]:
        return [
            _T.catalog_name == self.name,
            _T.table_namespace == ".".join(ident[:-1]),
            _T.table_name == ident[-1],
        ]

    def _table_row(self, ident: Identifier, metadata_location: str) -> dict[str, Any]:
        row = {
            "catalog_name": self.name,
            "table_namespace": ".".join(ident[:-1]),
            "table_name": ident[-1],
            "metadata_location": metadata_location,
            "previous_metadata_location": None,
        }
        if self._has_type_column:
            row["iceberg_type"] = TABLE_TYPE
        return row

    def _require_namespace(self, ns: Identifier, doing: str) -> None:
        if not self.namespace_exists(ns):
            raise NoSuchNamespaceError(f"{doing}: namespace {'.'.join(ns)} does not exist")

    # ---- namespaces

    def namespace_exists(self, namespace: str | Identifier) -> bool:
        ns = self._namespace_identifier(namespace, allow_root=True)
        if not ns:
            return True
        if self._database_absent():
            return False
        name = ".".join(ns)
        tables = select(_T.table_namespace).where(
            _T.catalog_name == self.name,
            or_(_T.table_namespace == name, _T.table_namespace.like(_like_prefix(name), "!")),
        )
        props = select(_N.namespace).where(
            _N.catalog_name == self.name,
            or_(_N.namespace == name, _N.namespace.like(_like_prefix(name), "!")),
        )
        with self._read() as conn:
            return (
                conn.execute(tables.limit(1)).first() is not None
                or conn.execute(props.limit(1)).first() is not None
            )

    def create_namespace(
        self, namespace: str | Identifier, properties: Mapping[str, str] | None = None
    ) -> None:
        ns = self._namespace_identifier(namespace)
        name = ".".join(ns)
        if self.namespace_exists(ns):
            raise NamespaceAlreadyExistsError(f"namespace {name} already exists")
        props = {k: str(v) for k, v in (properties or {}).items()}
        props[NAMESPACE_EXISTS_PROPERTY] = "true"
        rows = [
            {"catalog_name": self.name, "namespace": name, "property_key": k, "property_value": v}
            for k, v in props.items()
        ]
        try:
            with self._write() as conn:
                conn.execute(insert(NAMESPACE_PROPERTIES), rows)
        except IntegrityError:
            raise NamespaceAlreadyExistsError(f"namespace {name} already exists") from None

    def drop_namespace(self, namespace: str | Identifier) -> None:
        ns = self._namespace_identifier(namespace)
        name = ".".join(ns)
        self._require_namespace(ns, f"cannot drop namespace {name}")
        tables = self.list_tables(ns)
        if tables:
            raise NamespaceNotEmptyError(
                f"cannot drop namespace {name}: it still holds {len(tables)} table(s), e.g. "
                f"{'.'.join(tables[0])}"
            )
        views = self.list_views(ns) if self.supports_views() else []
        if views:
            raise NamespaceNotEmptyError(
                f"cannot drop namespace {name}: it still holds {len(views)} view(s), e.g. "
                f"{'.'.join(views[0])}"
            )
        with self._write() as conn:
            conn.execute(
                delete(NAMESPACE_PROPERTIES).where(
                    _N.catalog_name == self.name, _N.namespace == name
                )
            )

    def list_namespaces(self, namespace: str | Identifier = ()) -> list[Identifier]:
        parent = self._namespace_identifier(namespace, allow_root=True)
        self._require_database()
        if parent:
            self._require_namespace(parent, "cannot list namespaces")
        stmt = union(
            select(_T.table_namespace.label("ns")).where(_T.catalog_name == self.name),
            select(_N.namespace.label("ns")).where(_N.catalog_name == self.name),
        )
        with self._read() as conn:
            names = conn.execute(stmt).scalars().all()
        depth = len(parent) + 1
        found = {
            tuple(n.split("."))[:depth]
            for n in names
            if n and len(n.split(".")) >= depth and tuple(n.split("."))[: depth - 1] == parent
        }
        return sorted(found)

    def load_namespace_properties(self, namespace: str | Identifier) -> dict[str, str]:
        """The namespace's properties, with ``location`` defaulted to where its tables go (as
        the Java JDBC catalog reports it); the reserved ``exists`` row is not shown."""
        ns = self._namespace_identifier(namespace)
        self._require_namespace(ns, "cannot load namespace properties")
        props = self._stored_namespace_properties(ns)
        props.pop(NAMESPACE_EXISTS_PROPERTY, None)
        if NAMESPACE_LOCATION_PROPERTY not in props and self.properties.get(WAREHOUSE):
            props[NAMESPACE_LOCATION_PROPERTY] = self._warehouse_path(ns)
        return props

    def _stored_namespace_properties(self, ns: Identifier) -> dict[str, str]:
        stmt = select(_N.property_key, _N.property_value).where(
            _N.catalog_name == self.name, _N.namespace == ".".join(ns)
        )
        with self._read() as conn:
            return {k: v for k, v in conn.execute(stmt).all()}

    def update_namespace_properties(
        self,
        namespace: str | Identifier,
        removals: set[str] | None = None,
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdateSummary:
        ns = self._namespace_identifier(namespace)
        name = ".".join(ns)
        removals = set(removals or ())
        updates = {k: str(v) for k, v in (updates or {}).items()}
        overlap = removals & set(updates)
        if overlap:
            raise InvalidArgumentError(
                f"namespace {name}: properties both removed and updated: {sorted(overlap)}"
            )
        if NAMESPACE_EXISTS_PROPERTY in removals or NAMESPACE_EXISTS_PROPERTY in updates:
            raise InvalidArgumentError(
                f"namespace {name}: {NAMESPACE_EXISTS_PROPERTY!r} is reserved by the catalog"
            )
        self._require_namespace(ns, f"cannot update properties of namespace {name}")
        key = [_N.catalog_name == self.name, _N.namespace == name]
        with self._write() as conn:
            existing = set(conn.execute(select(_N.property_key).where(*key)).scalars().all())
            removed = sorted(removals & existing)
            missing = sorted(removals - existing)
            if removed:
                conn.execute(delete(NAMESPACE_PROPERTIES).where(*key, _N.property_key.in_(removed)))
            for k, v in updates.items():
                if k in existing:
                    conn.execute(
                        update(NAMESPACE_PROPERTIES)
                        .where(*key, _N.property_key == k)
                        .values(property_value=v)
                    )
                else:
                    conn.execute(
                        insert(NAMESPACE_PROPERTIES).values(
                            catalog_name=self.name, namespace=name, property_key=k, property_value=v
                        )
                    )
        return PropertiesUpdateSummary(removed=removed, updated=sorted(updates), missing=missing)

    # ---- tables

    def _warehouse_path(self, ns: Identifier) -> str:
        warehouse = self.properties.get(WAREHOUSE)
        if not warehouse:
            raise InvalidArgumentError(
                f"catalog {self.name!r} has no 'warehouse': give the table a location"
            )
        path = "/".join([warehouse.rstrip("/"), *ns])
        return self._check_under(warehouse, path, f"location of namespace {'.'.join(ns)}")

    def _default_table_location(self, identifier: Identifier) -> str:
        ns, table = identifier[:-1], identifier[-1]
        location = self._stored_namespace_properties(ns).get(NAMESPACE_LOCATION_PROPERTY)
        root = location or self._warehouse_path(ns)
        return self._check_under(
            root, f"{root.rstrip('/')}/{table}", f"default location of {'.'.join(identifier)}"
        )

    def load_table(self, identifier: str | Identifier) -> FrazilTable:
        self._require_database()  # the error names the missing database, not just the table
        return super().load_table(identifier)

    def _load_pointer(self, identifier: Identifier) -> str | None:
        if self._database_absent():
            return None
        return self._select_pointer(self._reader, identifier)

    def _select_pointer(self, engine: Engine, identifier: Identifier) -> str | None:
        stmt = select(_T.metadata_location).where(
            *self._table_key(identifier), *self._table_filter()
        )
        with (
            self._errors(f"reading the pointer of {'.'.join(identifier)}"),
            engine.connect() as conn,
        ):
            return conn.execute(stmt).scalar_one_or_none()

    def _read_pointer_fresh(self, identifier: Identifier) -> str | None:
        # A new connection, not one from the pool the failed swap may have broken.
        if self._recheck_engine is None:
            self._recheck_engine = self._make_engine(
                pooled=False, read_only=self._reader is not self.engine
            )
        return self._select_pointer(self._recheck_engine, identifier)

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
        if current_location is None:
            try:
                with self._write() as conn:
                    conn.execute(
                        insert(ICEBERG_TABLES).values(self._table_row(identifier, new_location))
                    )
            except IntegrityError:
                return False
            return True
        with self._write() as conn:
            result = conn.execute(
                update(ICEBERG_TABLES)
                .where(*self._table_key(identifier), _T.metadata_location == current_location)
                .values(metadata_location=new_location, previous_metadata_location=current_location)
            )
            return result.rowcount == 1

    def commit_tables(self, commits: Sequence[TableCommit]) -> list[CommitTableResponse]:
        """Commits several tables at once: every new metadata file is written first, then one
        database transaction does every check-and-put (and re-asserts the pointer of a table
        whose updates change nothing, so its requirements still hold when the rest lands). On
        any failure the transaction rolls back and the written files are deleted."""
        idents = [self._existing_table_identifier(c.table.identifier) for c in commits]
        if len(set(idents)) != len(idents):
            raise InvalidArgumentError("a multi-table commit names the same table twice")
        prepared = [self._prepare_commit(c.table, c.requirements, c.updates) for c in commits]
        written: list[PreparedCommit] = []
        try:
            for p in prepared:
                if p.data is not None:
                    self._write_metadata_file(p.io, p.new_location, p.data)
                    written.append(p)
            self._swap_pointers(prepared)
        except (CommitFailedError, NoSuchTableError, TableAlreadyExistsError, InvalidArgumentError):
            self._discard_all(written)
            raise
        except Exception as e:
            if not written:
                raise
            # The transaction's outcome is open (a dropped connection at COMMIT): it landed
            # whole or not at all, so one table's pointer tells.
            first = written[0]
            try:
                landed = self._read_pointer_fresh(first.ident) == first.new_location
            except Exception as check:
                raise CommitStateUnknownError(
                    f"multi-table commit of {len(commits)} tables: the transaction failed ({e}) "
                    f"and the pointers cannot be read ({check}); it may or may not have landed"
                ) from e
            if not landed:
                self._discard_all(written)
                raise
        return [
            self._finish_commit(p)
            if p.data is not None
            else CommitTableResponse(p.new, p.current_location)  # type: ignore[arg-type]
            for p in prepared
        ]

    def _swap_pointers(self, prepared: Sequence[PreparedCommit]) -> None:
        """Every pointer move of a multi-table commit in one transaction."""
        with self._write() as conn:
            for p in prepared:
                name = ".".join(p.ident)
                if p.current_location is None:
                    try:
                        conn.execute(
                            insert(ICEBERG_TABLES).values(self._table_row(p.ident, p.new_location))
                        )
                    except IntegrityError:  # the whole transaction rolls back
                        raise CreateConflict(
                            f"cannot create table {name}: it was created concurrently"
                        ) from None
                    continue
                # A table whose updates change nothing keeps its row, re-asserted (and locked).
                changed = p.data is not None
                result = conn.execute(
                    update(ICEBERG_TABLES)
                    .where(*self._table_key(p.ident), _T.metadata_location == p.current_location)
                    .values(
                        metadata_location=p.new_location if changed else p.current_location,
                        previous_metadata_location=(
                            p.current_location if changed else _T.previous_metadata_location
                        ),
                    )
                )
                if result.rowcount != 1:
                    raise CommitFailedError(
                        f"commit to table {name} failed: another commit replaced "
                        f"{p.current_location} first"
                    )

    def _discard_all(self, written: Sequence[PreparedCommit]) -> None:
        for p in written:
            try:
                p.io.delete(p.new_location)
            except Exception:
                logger.warning("could not delete unused metadata file %s", p.new_location)

    def register_table(self, identifier: str | Identifier, metadata_location: str) -> FrazilTable:
        """Adds a table whose metadata file already exists (read first, to check it)."""
        ident = self._table_identifier(identifier)
        name = ".".join(ident)
        self._require_namespace(ident[:-1], f"cannot register table {name}")
        self._read_metadata(metadata_location)
        try:
            with self._write() as conn:
                conn.execute(
                    insert(ICEBERG_TABLES).values(self._table_row(ident, metadata_location))
                )
        except IntegrityError:
            raise TableAlreadyExistsError(f"table {name} already exists") from None
        return self.load_table(ident)

    def drop_table(
        self,
        identifier: str | Identifier,
        purge: bool = False,
        *,
        delete_outside_location: bool = False,
    ) -> None:
        ident = self._existing_table_identifier(identifier)
        name = ".".join(ident)
        table = self.load_table(ident) if purge else None
        with self._write() as conn:
            result = conn.execute(
                delete(ICEBERG_TABLES).where(*self._table_key(ident), *self._table_filter())
            )
        if result.rowcount == 0:
            raise NoSuchTableError(f"cannot drop table {name}: it does not exist")
        logger.info("dropped table %s%s", name, " (purging its files)" if purge else "")
        if table is not None:
            purge_table_files(
                table.io,
                table.metadata,
                table.metadata_location,
                delete_outside_location=delete_outside_location,
            )

    def rename_table(
        self, from_identifier: str | Identifier, to_identifier: str | Identifier
    ) -> FrazilTable:
        src = self._existing_table_identifier(from_identifier)
        dst = self._table_identifier(to_identifier)
        src_name, dst_name = ".".join(src), ".".join(dst)
        self._require_namespace(dst[:-1], f"cannot rename table {src_name} to {dst_name}")
        if self.table_exists(dst):
            raise TableAlreadyExistsError(
                f"cannot rename table {src_name}: table {dst_name} already exists"
            )
        if self._is_view(dst):
            raise ViewAlreadyExistsError(
                f"cannot rename table {src_name}: view {dst_name} already exists"
            )
        try:
            with self._write() as conn:
                result = conn.execute(
                    update(ICEBERG_TABLES)
                    .where(*self._table_key(src), *self._table_filter())
                    .values(table_namespace=".".join(dst[:-1]), table_name=dst[-1])
                )
        except IntegrityError:
            raise TableAlreadyExistsError(
                f"cannot rename table {src_name}: table {dst_name} already exists"
            ) from None
        if result.rowcount == 0:
            raise NoSuchTableError(f"cannot rename table {src_name}: it does not exist")
        return self.load_table(dst)

    def list_catalog_names(self) -> list[str]:
        """The names of the catalogs whose tables or namespaces this database holds (rows are
        scoped by catalog name: another name over the same database sees none of them)."""
        if self._database_absent():
            return []
        stmt = union(select(_T.catalog_name.label("name")), select(_N.catalog_name.label("name")))
        with self._read() as conn:
            return sorted(n for n in conn.execute(stmt).scalars().all() if n is not None)

    def list_tables(self, namespace: str | Identifier) -> list[Identifier]:
        ns = self._namespace_identifier(namespace)
        self._require_database()
        self._require_namespace(ns, "cannot list tables")
        stmt = select(_T.table_name).where(
            _T.catalog_name == self.name, _T.table_namespace == ".".join(ns), *self._table_filter()
        )
        with self._read() as conn:
            return sorted((*ns, t) for t in conn.execute(stmt).scalars().all())

    # ---- views (rows with iceberg_type = 'VIEW')

    def supports_views(self) -> bool:
        return self._has_type_column

    def _view_filter(self) -> Any:
        return _T.iceberg_type == VIEW_TYPE

    def _select_view_pointer(self, engine: Engine, identifier: Identifier) -> str | None:
        stmt = select(_T.metadata_location).where(*self._table_key(identifier), self._view_filter())
        with (
            self._errors(f"reading the pointer of view {'.'.join(identifier)}"),
            engine.connect() as conn,
        ):
            return conn.execute(stmt).scalar_one_or_none()

    def _load_view_pointer(self, identifier: Identifier) -> str | None:
        if not self._has_type_column:
            raise self._refuse_views()
        if self._database_absent():
            return None
        return self._select_view_pointer(self._reader, identifier)

    def _read_view_pointer_fresh(self, identifier: Identifier) -> str | None:
        if self._recheck_engine is None:
            self._recheck_engine = self._make_engine(
                pooled=False, read_only=self._reader is not self.engine
            )
        return self._select_view_pointer(self._recheck_engine, identifier)

    def _swap_view_pointer(
        self, identifier: Identifier, current_location: str | None, new_location: str
    ) -> bool:
        if current_location is None:
            row = {**self._table_row(identifier, new_location), "iceberg_type": VIEW_TYPE}
            try:
                with self._write() as conn:
                    conn.execute(insert(ICEBERG_TABLES).values(row))
            except IntegrityError:
                return False  # a table or view took the name first
            return True
        with self._write() as conn:
            result = conn.execute(
                update(ICEBERG_TABLES)
                .where(
                    *self._table_key(identifier),
                    _T.metadata_location == current_location,
                    self._view_filter(),
                )
                .values(metadata_location=new_location, previous_metadata_location=current_location)
            )
            return result.rowcount == 1

    def list_views(self, namespace: str | Identifier) -> list[Identifier]:
        if not self._has_type_column:
            raise self._refuse_views()
        ns = self._namespace_identifier(namespace)
        self._require_database()
        self._require_namespace(ns, "cannot list views")
        stmt = select(_T.table_name).where(
            _T.catalog_name == self.name, _T.table_namespace == ".".join(ns), self._view_filter()
        )
        with self._read() as conn:
            return sorted((*ns, v) for v in conn.execute(stmt).scalars().all())

    def drop_view(self, identifier: str | Identifier) -> None:
        ident = self._view_identifier(identifier, strict=False)
        with self._write() as conn:
            result = conn.execute(
                delete(ICEBERG_TABLES).where(*self._table_key(ident), self._view_filter())
            )
        if result.rowcount == 0:
            raise NoSuchViewError(f"cannot drop view {'.'.join(ident)}: it does not exist")
        logger.info("dropped view %s", ".".join(ident))

    def rename_view(
        self, from_identifier: str | Identifier, to_identifier: str | Identifier
    ) -> View:
        src = self._view_identifier(from_identifier, strict=False)
        dst = self._view_identifier(to_identifier)
        src_name, dst_name = ".".join(src), ".".join(dst)
        if src == dst:
            return self.load_view(src)
        self._require_namespace(dst[:-1], f"cannot rename view {src_name} to {dst_name}")
        if not self.view_exists(src):
            raise NoSuchViewError(f"cannot rename view {src_name}: it does not exist")
        if self.table_exists(dst):
            raise TableAlreadyExistsError(
                f"cannot rename view {src_name}: table {dst_name} already exists"
            )
        if self.view_exists(dst):
            raise ViewAlreadyExistsError(
                f"cannot rename view {src_name}: view {dst_name} already exists"
            )
        try:
            with self._write() as conn:
                result = conn.execute(
                    update(ICEBERG_TABLES)
                    .where(*self._table_key(src), self._view_filter())
                    .values(table_namespace=".".join(dst[:-1]), table_name=dst[-1])
                )
        except IntegrityError:
            raise ViewAlreadyExistsError(
                f"cannot rename view {src_name}: {dst_name} already exists"
            ) from None
        if result.rowcount == 0:
            raise NoSuchViewError(f"cannot rename view {src_name}: it does not exist")
        return self.load_view(dst)
