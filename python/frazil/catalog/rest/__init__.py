"""The REST catalog client: ``load_catalog(name, type="rest", uri=..., ...)``.

Configuration uses PyIceberg's property names: ``uri``, ``warehouse``, ``prefix``,
``credential`` / ``token`` / ``scope`` / ``oauth2-server-uri`` / ``audience`` / ``resource``
(:mod:`~frazil.catalog.rest.auth`), ``header.<Name>``, ``ssl.*``, ``rest.sigv4-enabled`` ... and
``rest.*`` timeouts and retries (:mod:`~frazil.catalog.rest.http`). At start the client asks
``GET /v1/config?warehouse=...``; the server's ``defaults`` sit under the client's properties and
its ``overrides`` over them (the spec's order), and its ``endpoints`` say which optional routes
may be called (the spec's default list otherwise).

Tables commit by sending what frazil's :class:`~frazil.table.transaction.Transaction` builds,
requirements and updates, as a ``CommitTableRequest``; a 409 is a
:class:`~frazil.exceptions.CommitFailedError` and the transaction's retry loop refreshes and
retries as with every catalog. A 5xx or a timeout on a commit has an unknown outcome: the
client reloads the table and returns success if the change is there (the snapshots it adds are,
or a created table has its UUID), else raises
:class:`~frazil.exceptions.CommitStateUnknownError` (nothing is cleaned up). When the server
advertises ``idempotency-key-lifetime``, mutations carry an ``Idempotency-Key`` and are retried
with it, which makes repeating a commit safe.

Vended credentials: the ``config`` and ``storage-credentials`` of a load-table response
configure that table's FileIO on top of the catalog's properties; table metadata properties
still never choose the FileIO, its endpoints or credentials. ``rest.scan-planning``
(``client``, ``server`` or ``auto``) chooses who plans scans (:mod:`~frazil.catalog.rest.planning`).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from frazil import exceptions as exc
from frazil import io as _io
from frazil.arrow_schema import schema_from_arrow
from frazil.catalog.base import (
    URI,
    WAREHOUSE,
    Catalog,
    Identifier,
    PropertiesUpdateSummary,
)
from frazil.catalog.commit import CommitTableResponse, CommitViewResponse, TableCommit
from frazil.catalog.rest.http import RestHttp
from frazil.catalog.rest.planning import ServerPlanner
from frazil.rest import wire
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.metrics_report import commit_report, scan_report
from frazil.table.transaction import Transaction
from frazil.table.update import AddSnapshotUpdate, AssertCreate
from frazil.view import View
from frazil.view.commit import first_view_version

if TYPE_CHECKING:
    import pyarrow as pa
    import requests

    from frazil.io import FileIO
    from frazil.metadata import TableMetadata
    from frazil.partitioning import PartitionSpec
    from frazil.sorting import SortOrder
    from frazil.table.metrics_report import ScanCounts
    from frazil.table.scan import DataScan, ScanReporter
    from frazil.table.update import TableRequirement, TableUpdate
    from frazil.view.metadata import ViewRepresentation
    from frazil.view.updates import ViewRequirement, ViewUpdate

__all__ = ["RestCatalog"]

logger = logging.getLogger(__name__)

PREFIX = "prefix"
NAMESPACE_SEPARATOR_PROP = "namespace-separator"
SNAPSHOT_LOADING_MODE = "snapshot-loading-mode"
PAGE_SIZE = "rest.page-size"
SCAN_PLANNING = "rest.scan-planning"
IDEMPOTENCY_LIFETIME = "idempotency-key-lifetime"
EXPIRES_AT_MS = "s3.session-token-expires-at-ms"
# Refresh vended credentials this close to their expiry.
CREDENTIAL_REFRESH_MARGIN_MS = 5 * 60 * 1000

_NS = "/v1/{prefix}/namespaces/{namespace}"
_TABLE = _NS + "/tables/{table}"
_VIEW = _NS + "/views/{view}"
_METRICS_ENDPOINT = "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics"
_VIEW_ENDPOINT = "GET /v1/{prefix}/namespaces/{namespace}/views/{view}"


class RestCatalog(Catalog):
    """A catalog behind the Iceberg REST protocol."""

    _paths_from_identifiers = False  # the server owns storage paths

    def __init__(self, name: str, **properties: str) -> None:
        super().__init__(name, **properties)
        uri = self.properties.get(URI)
        if not uri:
            raise exc.InvalidArgumentError(f"catalog {name!r}: type rest needs a 'uri'")
        self._http = RestHttp(uri, self.properties)
        self._reports: ThreadPoolExecutor | None = None
        self._reports_lock = threading.Lock()
        self._fetch_config()

    def __repr__(self) -> str:
        return f"RestCatalog({self.name!r}, {self._http.base_uri!r})"

    # ---- configuration

    def _fetch_config(self) -> None:
        params = {}
        warehouse = self.properties.get(WAREHOUSE)
        if warehouse:
            params["warehouse"] = warehouse
        body = self._http.request("GET", "/v1/config", about="config", params=params).json()
        if not isinstance(body, dict):
            raise exc.RESTError("GET /v1/config: expected a JSON object")
        defaults = _str_map(body.get("defaults"))
        overrides = _str_map(body.get("overrides"))
        # Spec: defaults < client properties < overrides.
        self.properties = {**defaults, **self.properties, **overrides}
        endpoints = body.get("endpoints")
        self._endpoints = (
            frozenset(e for e in endpoints if isinstance(e, str))
            if isinstance(endpoints, list)
            else wire.DEFAULT_ENDPOINTS
        )
        self._idempotency = IDEMPOTENCY_LIFETIME in body or IDEMPOTENCY_LIFETIME in overrides
        new_uri = self.properties.get(URI, "").rstrip("/")
        if new_uri and new_uri != self._http.base_uri:
            self._http.base_uri = new_uri
        self._http.configure(self.properties)
        self._prefix = self.properties.get(PREFIX, "").strip("/")
        sep = self.properties.get(NAMESPACE_SEPARATOR_PROP)
        self._separator = unquote(sep) if sep else wire.NAMESPACE_SEPARATOR

    def supports(self, endpoint: str) -> bool:
        """Whether the server serves ``endpoint`` (an id of :data:`frazil.rest.wire.ENDPOINTS`)."""
        return endpoint in self._endpoints

    def _require(self, endpoint: str) -> None:
        if endpoint not in self._endpoints:
            raise exc.UnsupportedError(f"the REST server does not support {endpoint}")

    # ---- paths and requests

    def _path(self, template: str, **parts: str) -> str:
        path = template.replace("{prefix}", quote(self._prefix, safe="/") if self._prefix else "")
        path = path.replace("/v1//", "/v1/")
        for key, value in parts.items():
            path = path.replace("{" + key + "}", value)
        return path

    def _ns(self, namespace: Identifier) -> str:
        return wire.encode_namespace(namespace, self._separator)

    def _table_path(self, ident: Identifier, suffix: str = "") -> str:
        return self._path(
            _TABLE + suffix, namespace=self._ns(ident[:-1]), table=wire.encode_name(ident[-1])
        )

    def _mutation_headers(self) -> dict[str, str]:
        return {"Idempotency-Key": _uuid7()} if self._idempotency else {}

    def _call(
        self,
        method: str,
        path: str,
        about: str,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        *,
        commit: bool = False,
    ) -> requests.Response:
        headers = self._mutation_headers() if method in ("POST", "DELETE") else {}
        return self._http.request(
            method, path, about=about, body=body, params=params, headers=headers, commit=commit
        )

    def _paged(self, path: str, key: str, about: str, params: dict[str, str]) -> Iterator[Any]:
        page_size = self.properties.get(PAGE_SIZE)
        if page_size:
            params["pageSize"] = page_size
        seen: set[str] = set()
        while True:
            body = self._call("GET", path, about, params=params).json()
            yield from body.get(key) or []
            token = body.get("next-page-token")
            if not token or token in seen:
                return
            seen.add(token)
            params = {**params, "pageToken": token}

    # ---- namespaces

    def create_namespace(
        self, namespace: str | Identifier, properties: Mapping[str, str] | None = None
    ) -> None:
        ns = self._namespace_identifier(namespace)
        body = {"namespace": list(ns), "properties": dict(properties or {})}
        self._call("POST", self._path("/v1/{prefix}/namespaces"), "namespace", body)

    def drop_namespace(self, namespace: str | Identifier) -> None:
        ns = self._namespace_identifier(namespace)
        self._call("DELETE", self._path(_NS, namespace=self._ns(ns)), "namespace")

    def list_namespaces(self, namespace: str | Identifier = ()) -> list[Identifier]:
        ns = self._namespace_identifier(namespace, allow_root=True)
        params = {"parent": self._ns(ns)} if ns else {}
        items = self._paged(
            self._path("/v1/{prefix}/namespaces"), "namespaces", "namespace", params
        )
        return [tuple(n) for n in items]

    def load_namespace_properties(self, namespace: str | Identifier) -> dict[str, str]:
        ns = self._namespace_identifier(namespace)
        body = self._call("GET", self._path(_NS, namespace=self._ns(ns)), "namespace").json()
        return _str_map(body.get("properties"))

    def update_namespace_properties(
        self,
        namespace: str | Identifier,
        removals: set[str] | None = None,
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdateSummary:
        ns = self._namespace_identifier(namespace)
        body = {"removals": sorted(removals or ()), "updates": dict(updates or {})}
        path = self._path(_NS + "/properties", namespace=self._ns(ns))
        out = self._call("POST", path, "namespace", body).json()
        return PropertiesUpdateSummary(
            removed=list(out.get("removed") or []),
            updated=list(out.get("updated") or []),
            missing=list(out.get("missing") or []),
        )

    def namespace_exists(self, namespace: str | Identifier) -> bool:
        ns = self._namespace_identifier(namespace)
        method = "HEAD" if self.supports("HEAD /v1/{prefix}/namespaces/{namespace}") else "GET"
        try:
            self._call(method, self._path(_NS, namespace=self._ns(ns)), "namespace")
        except exc.NoSuchNamespaceError:
            return False
        return True

    # ---- tables: reads

    def list_tables(self, namespace: str | Identifier) -> list[Identifier]:
        ns = self._namespace_identifier(namespace)
        path = self._path(_NS + "/tables", namespace=self._ns(ns))
        return [
            wire.identifier_from_json(i, f"identifiers[{n}]")
            for n, i in enumerate(self._paged(path, "identifiers", "namespace", {}))
        ]

    def _load(self, ident: Identifier, snapshots: str | None = None) -> wire.LoadTableResult:
        mode = snapshots or self.properties.get(SNAPSHOT_LOADING_MODE)
        params = {"snapshots": mode.lower()} if mode else None
        body = self._call("GET", self._table_path(ident), "table", params=params).json()
        return wire.LoadTableResult.from_json(body)

    def load_table(self, identifier: str | Identifier, *, snapshots: str | None = None) -> Table:
        """The table at its current metadata; ``snapshots="refs"`` asks the server for only
        the snapshots branches and tags point to (``all`` is the default)."""
        ident = self._existing_table_identifier(identifier)
        result = self._load(ident, snapshots)
        if result.metadata_location is None:
            raise exc.RESTError(f"GET {'.'.join(ident)}: the response has no metadata-location")
        return self._table(ident, result)

    def _table(self, ident: Identifier, result: wire.LoadTableResult) -> Table:
        io = self._vended_io(ident, result)
        return Table(ident, result.metadata, result.metadata_location, io, self)

    def _vended_io(self, ident: Identifier, result: wire.LoadTableResult) -> FileIO:
        """The table's FileIO: catalog properties, then the server's vended ``config`` and
        storage credentials (trusted), then only the tunables of table metadata."""
        vended = result.io_properties()
        expires = vended.get(EXPIRES_AT_MS)
        if expires is not None and self.supports(
            "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"
        ):
            try:
                due = int(expires) - CREDENTIAL_REFRESH_MARGIN_MS <= time.time() * 1000
            except ValueError:
                due = False
            if due:
                vended.update(self._load_credentials(ident, result.metadata.location))
        props = _io.table_file_io_properties(
            {**self.properties, **vended}, result.metadata.properties
        )
        return _io.load_file_io(props, result.metadata.location)

    def _load_credentials(self, ident: Identifier, location: str) -> dict[str, str]:
        body = self._call("GET", self._table_path(ident, "/credentials"), "table").json()
        creds = [
            (c.get("prefix", ""), _str_map(c.get("config")))
            for c in body.get("storage-credentials") or []
            if isinstance(c, dict)
        ]
        best = max(
            (c for c in creds if location.startswith(c[0])), key=lambda c: len(c[0]), default=None
        )
        return best[1] if best else {}

    def refresh_credentials(self, table: Table) -> None:
        """Replaces ``table.io`` with one built on freshly vended credentials
        (``GET .../credentials`` when the server offers it, else a reload of the table)."""
        ident = table.identifier
        if self.supports("GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"):
            vended = self._load_credentials(ident, table.location())
            props = _io.table_file_io_properties(
                {**self.properties, **vended}, table.metadata.properties
            )
            table.io = _io.load_file_io(props, table.metadata.location)
        else:
            table.io = self.load_table(ident).io

    def table_exists(self, identifier: str | Identifier) -> bool:
        try:
            ident = self._existing_table_identifier(identifier)
        except exc.NoSuchTableError:
            return False
        head = self.supports("HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}")
        try:
            self._call("HEAD" if head else "GET", self._table_path(ident), "table")
        except exc.NoSuchTableError:
            return False
        return True

    def _current_metadata_location(self, identifier: str | Identifier) -> str | None:
        return self._load(self._existing_table_identifier(identifier)).metadata_location

    # ---- tables: changes

    def create_table(
        self,
        identifier: str | Identifier,
        schema: Schema | pa.Schema,
        location: str | None = None,
        partition_spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> Table:
        ident = self._table_identifier(identifier)
        result = self._create(
            ident, schema, location, partition_spec, sort_order, properties, False
        )
        return self._table(ident, result)

    def create_table_transaction(
        self,
        identifier: str | Identifier,
        schema: Schema | pa.Schema,
        location: str | None = None,
        partition_spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> Transaction:
        """A staged create (``stage-create``): the server returns the new table's metadata
        without creating it; the commit sends ``assert-create`` with the updates that build it
        and the transaction's own, so the table appears with its first data in one commit."""
        ident = self._table_identifier(identifier)
        result = self._create(ident, schema, location, partition_spec, sort_order, properties, True)
        io = self._vended_io(ident, result)
        return Transaction(Table(ident, result.metadata, None, io, self), create=True)

    def _create(
        self,
        ident: Identifier,
        schema: Schema | pa.Schema,
        location: str | None,
        partition_spec: PartitionSpec | None,
        sort_order: SortOrder | None,
        properties: Mapping[str, str] | None,
        stage: bool,
    ) -> wire.LoadTableResult:
        if not isinstance(schema, Schema):
            schema = schema_from_arrow(schema)
        request = wire.CreateTableRequest(
            name=ident[-1],
            schema=schema,
            location=location,
            partition_spec=partition_spec,
            write_order=sort_order,
            stage_create=stage,
            properties={k: str(v) for k, v in (properties or {}).items()},
        )
        path = self._path(_NS + "/tables", namespace=self._ns(ident[:-1]))
        body = self._call("POST", path, "table", request.to_json()).json()
        return wire.LoadTableResult.from_json(body)

    def register_table(self, identifier: str | Identifier, metadata_location: str) -> Table:
        ident = self._table_identifier(identifier)
        path = self._path(_NS + "/register", namespace=self._ns(ident[:-1]))
        body = {"name": ident[-1], "metadata-location": metadata_location}
        result = wire.LoadTableResult.from_json(self._call("POST", path, "table", body).json())
        return self._table(ident, result)

    def drop_table(
        self,
        identifier: str | Identifier,
        purge: bool = False,
        *,
        delete_outside_location: bool = False,
    ) -> None:
        """Drops the table; ``purge`` asks the server to delete its files (``purgeRequested``),
        which the server does by its own rules."""
        ident = self._existing_table_identifier(identifier)
        params = {"purgeRequested": "true"} if purge else None
        self._call("DELETE", self._table_path(ident), "table", params=params)

    def rename_table(
        self, from_identifier: str | Identifier, to_identifier: str | Identifier
    ) -> Table:
        source = self._existing_table_identifier(from_identifier)
        dest = self._table_identifier(to_identifier)
        body = {
            "source": wire.identifier_to_json(source),
            "destination": wire.identifier_to_json(dest),
        }
        self._call("POST", self._path("/v1/{prefix}/tables/rename"), "table", body)
        return self.load_table(dest)

    # ---- commits

    def commit_table(
        self,
        table: Table,
        requirements: Sequence[TableRequirement],
        updates: Sequence[TableUpdate],
    ) -> CommitTableResponse:
        ident = table.identifier
        creating = any(isinstance(r, AssertCreate) for r in requirements)
        sent = list(updates)
        if creating:
            sent = wire.create_table_updates(table.metadata) + sent
        request = wire.CommitTableRequest(ident, list(requirements), sent)
        started = time.perf_counter_ns()
        try:
            response = self._call(
                "POST", self._table_path(ident), "table", request.to_json(), commit=True
            )
        except exc.CommitStateUnknownError as e:
            landed = self._commit_landed_after(table, updates, creating)
            if landed is None:
                raise
            logger.warning("commit to %s: %s; a reload shows it landed", ".".join(ident), e)
            return landed
        result = wire.LoadTableResult.from_json(response.json())
        if result.metadata_location is None:
            raise exc.RESTError(f"commit to {'.'.join(ident)}: no metadata-location in the answer")
        out = CommitTableResponse(result.metadata, result.metadata_location)
        try:
            self._report_commit(table, updates, out, time.perf_counter_ns() - started)
        except Exception as e:  # a report never fails the commit
            logger.debug("reporting the commit to %s failed: %s", ".".join(ident), e)
        return out

    def _commit_landed_after(
        self, table: Table, updates: Sequence[TableUpdate], creating: bool
    ) -> CommitTableResponse | None:
        """The status check after a commit with an unknown outcome: the table's current state
        if it shows the commit landed, ``None`` when that cannot be told (never "it did not
        land": a slow server may still apply it)."""
        try:
            result = self._load(table.identifier)
        except exc.FrazilError:
            return None
        if result.metadata_location is None:
            return None
        current = result.metadata
        if creating:
            ok = current.table_uuid == table.metadata.table_uuid
        else:
            added = [u.snapshot.snapshot_id for u in updates if isinstance(u, AddSnapshotUpdate)]
            ok = bool(added) and all(current.snapshot_by_id(s) is not None for s in added)
        return CommitTableResponse(current, result.metadata_location) if ok else None

    def commit_tables(self, commits: Sequence[TableCommit]) -> list[CommitTableResponse]:
        """``POST /v1/{prefix}/transactions/commit``: all tables' changes land or none do. The
        server answers 204, so each table is reloaded for its new metadata."""
        self._require("POST /v1/{prefix}/transactions/commit")
        changes = []
        for c in commits:
            if any(isinstance(r, AssertCreate) for r in c.requirements):
                raise exc.UnsupportedError(
                    "a multi-table transaction cannot create a table (commit the staged create "
                    "on its own)"
                )
            changes.append(
                wire.CommitTableRequest(c.table.identifier, list(c.requirements), list(c.updates))
            )
        request = wire.CommitTransactionRequest(changes)
        path = self._path("/v1/{prefix}/transactions/commit")
        try:
            self._call("POST", path, "table", request.to_json(), commit=True)
        except exc.CommitStateUnknownError:
            responses = [self._commit_landed_after(c.table, c.updates, False) for c in commits]
            if any(r is None for r in responses):
                raise
            return [r for r in responses if r is not None]
        out = []
        for c in commits:
            result = self._load(c.table.identifier)
            assert result.metadata_location is not None
            out.append(CommitTableResponse(result.metadata, result.metadata_location))
        return out

    # ---- views

    def supports_views(self) -> bool:
        """Whether the server serves views: the view endpoints are not in the spec's default
        list, so only a server that advertises them has them."""
        return _VIEW_ENDPOINT in self._endpoints

    def _view_path(self, ident: Identifier) -> str:
        return self._path(_VIEW, namespace=self._ns(ident[:-1]), view=wire.encode_name(ident[-1]))

    def _view(self, ident: Identifier, result: wire.LoadViewResult) -> View:
        return View(ident, result.metadata, result.metadata_location, self)

    def list_views(self, namespace: str | Identifier) -> list[Identifier]:
        self._require("GET /v1/{prefix}/namespaces/{namespace}/views")
        ns = self._namespace_identifier(namespace)
        path = self._path(_NS + "/views", namespace=self._ns(ns))
        return [
            wire.identifier_from_json(i, f"identifiers[{n}]")
            for n, i in enumerate(self._paged(path, "identifiers", "namespace", {}))
        ]

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
        """``POST .../views`` with a ``CreateViewRequest``: the server assigns the view's UUID
        and location (unless ``location`` is given) and writes its first metadata."""
        self._require("POST /v1/{prefix}/namespaces/{namespace}/views")
        ident = self._view_identifier(identifier)
        fresh, version = first_view_version(
            ident, schema, sql, default_namespace, default_catalog, dialect=dialect, summary=summary
        )
        request = wire.CreateViewRequest(
            name=ident[-1],
            schema=fresh,
            view_version=version,
            properties={k: str(v) for k, v in (properties or {}).items()},
            location=location,
        )
        path = self._path(_NS + "/views", namespace=self._ns(ident[:-1]))
        body = self._call("POST", path, "view", request.to_json()).json()
        return self._view(ident, wire.LoadViewResult.from_json(body))

    def load_view(self, identifier: str | Identifier) -> View:
        self._require(_VIEW_ENDPOINT)
        ident = self._view_identifier(identifier, strict=False)
        body = self._call("GET", self._view_path(ident), "view").json()
        return self._view(ident, wire.LoadViewResult.from_json(body))

    def view_exists(self, identifier: str | Identifier) -> bool:
        if not self.supports_views():
            return False
        try:
            ident = self._view_identifier(identifier, strict=False)
        except exc.NoSuchViewError:
            return False
        head = self.supports("HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}")
        try:
            self._call("HEAD" if head else "GET", self._view_path(ident), "view")
        except exc.NoSuchViewError:
            return False
        return True

    def _is_view(self, ident: Identifier) -> bool:
        return self.view_exists(ident)

    def drop_view(self, identifier: str | Identifier) -> None:
        self._require("DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}")
        ident = self._view_identifier(identifier, strict=False)
        self._call("DELETE", self._view_path(ident), "view")

    def rename_view(
        self, from_identifier: str | Identifier, to_identifier: str | Identifier
    ) -> View:
        self._require("POST /v1/{prefix}/views/rename")
        source = self._view_identifier(from_identifier, strict=False)
        dest = self._view_identifier(to_identifier)
        body = wire.RenameTableRequest(source, dest).to_json()
        self._call("POST", self._path("/v1/{prefix}/views/rename"), "view", body)
        return self.load_view(dest)

    def commit_view(
        self,
        view: View | str | Identifier,
        requirements: Sequence[ViewRequirement],
        updates: Sequence[ViewUpdate],
    ) -> CommitViewResponse:
        """``POST .../views/{view}`` with a ``CommitViewRequest``. A 409 is a
        :class:`~frazil.exceptions.CommitFailedError` (the view's retry loop refreshes and
        retries); a 5xx or timeout is :class:`~frazil.exceptions.CommitStateUnknownError`."""
        self._require("POST /v1/{prefix}/namespaces/{namespace}/views/{view}")
        ident = self._view_identifier(
            view.identifier if isinstance(view, View) else view, strict=False
        )
        request = wire.CommitViewRequest(ident, list(requirements), list(updates))
        response = self._call(
            "POST", self._view_path(ident), "view", request.to_json(), commit=True
        )
        result = wire.LoadViewResult.from_json(response.json())
        return CommitViewResponse(result.metadata, result.metadata_location)

    # ---- metrics

    def report_metrics(self, table: Table, report: Mapping[str, Any]) -> None:
        """Posts a ``ScanReport`` or ``CommitReport`` (a ``ReportMetricsRequest``) when the
        server accepts metrics; best-effort: a failure is logged at debug, never raised."""
        if not self.supports(_METRICS_ENDPOINT):
            return
        try:
            self._http.request(
                "POST",
                self._table_path(table.identifier, "/metrics"),
                about="table",
                body=dict(report),
                retry=False,
            )
        except Exception as e:
            logger.debug("reporting metrics of %s failed: %s", table.full_name(), e)

    def _report_later(self, table: Table, report: Mapping[str, Any] | None) -> None:
        """Sends ``report`` on the catalog's one background thread, off the caller's path."""
        if report is None or not self.supports(_METRICS_ENDPOINT):
            return
        with self._reports_lock:
            if self._reports is None:
                self._reports = ThreadPoolExecutor(1, thread_name_prefix="frazil-rest-metrics")
            reports = self._reports
        try:
            reports.submit(self.report_metrics, table, report)
        except RuntimeError:  # closed
            logger.debug("catalog closed: metrics of %s not reported", table.full_name())

    def flush_metrics(self) -> None:
        """Waits until the reports sent so far are delivered (or have failed)."""
        with self._reports_lock:
            reports = self._reports
        if reports is not None:
            reports.submit(lambda: None).result()

    def _scan_reporter(self, table: Table) -> ScanReporter | None:
        """What ``table.scan()`` reports planning to: a ``ScanReport`` once a plan is
        complete, when the server takes metrics."""
        if not self.supports(_METRICS_ENDPOINT):
            return None

        def report(scan: DataScan, counts: ScanCounts, planning_ns: int) -> None:
            try:
                body = scan_report(table.full_name(), scan, counts, planning_ns)
            except Exception as e:  # a report never fails the scan
                logger.debug("building the scan report of %s failed: %s", table.full_name(), e)
                return
            self._report_later(table, body)

        return report

    def _report_commit(
        self,
        table: Table,
        updates: Sequence[TableUpdate],
        response: CommitTableResponse,
        duration_ns: int,
    ) -> None:
        if not self.supports(_METRICS_ENDPOINT):
            return
        added = [u.snapshot.snapshot_id for u in updates if isinstance(u, AddSnapshotUpdate)]
        for snapshot_id in added:
            snapshot = response.metadata.snapshot_by_id(snapshot_id)
            if snapshot is not None:
                self._report_later(table, commit_report(table.full_name(), snapshot, duration_ns))

    # ---- scan planning

    def _scan_planner(self, table: Table) -> Any:
        """The planner ``table.scan()`` uses: ``None`` plans on the client."""
        mode = self.properties.get(SCAN_PLANNING, "client").strip().lower()
        endpoint = "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan"
        if mode not in ("client", "server", "auto"):
            raise exc.InvalidArgumentError(
                f"{SCAN_PLANNING}={mode!r}: expected 'client', 'server' or 'auto'"
            )
        if mode == "client" or (mode == "auto" and not self.supports(endpoint)):
            return None
        if mode == "server":
            self._require(endpoint)

        return ServerPlanner(self, table.identifier)

    def _plan_request(
        self, ident: Identifier, method: str, suffix: str, about: str, body: Any = None
    ) -> Any:
        return self._http.request(
            method, self._table_path(ident, suffix), about=about, body=body, retry=method != "POST"
        ).json()

    def _plan_request_bytes(
        self, ident: Identifier, method: str, suffix: str, about: str, body: Any = None
    ) -> bytes:
        """A planning request's response body, unparsed (pages are read natively)."""
        return self._http.request(
            method, self._table_path(ident, suffix), about=about, body=body, retry=method != "POST"
        ).content

    # ---- hooks of the pointer-swap protocol (unused: the server commits)

    def _default_table_location(self, identifier: Identifier) -> str:
        raise exc.UnsupportedError("a REST catalog's server chooses table locations")

    def _load_pointer(self, identifier: Identifier) -> str | None:
        try:
            return self._load(identifier).metadata_location
        except exc.NoSuchTableError:
            return None

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
        raise exc.UnsupportedError("a REST catalog commits through the server")

    def close(self) -> None:
        with self._reports_lock:
            reports, self._reports = self._reports, None
        if reports is not None:
            reports.shutdown(wait=True)  # reports in flight are bounded by the HTTP timeouts
        self._http.close()


def _str_map(obj: Any) -> dict[str, str]:
    if not isinstance(obj, dict):
        return {}
    return {str(k): str(v) for k, v in obj.items() if v is not None}


def _uuid7() -> str:
    """A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then random bits."""
    ms = int(time.time() * 1000) & ((1 << 48) - 1)
    rand = uuid.uuid4().int
    value = (
        (ms << 80)
        | (0x7 << 76)
        | ((rand >> 64) & 0xFFF) << 64
        | (0b10 << 62)
        | (rand & ((1 << 62) - 1))
    )
    return str(uuid.UUID(int=value))
