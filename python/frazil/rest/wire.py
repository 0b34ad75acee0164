"""What crosses the wire of the REST catalog protocol (``rest-catalog-open-api.yaml``), in one
place for both sides: the client (:mod:`frazil.catalog.rest`) and the server
(:mod:`frazil.server.app`).

- paths: the endpoint ids of ``CatalogConfig.endpoints`` and the encoding of namespaces
  (levels joined by the ``namespace-separator``, ``0x1F`` by default, then percent-encoded) and
  of table and view names in paths;
- bodies: parse and build the request and response objects frazil sends or serves; the table
  metadata, updates and requirements inside them are the ones every catalog commits through
  (:mod:`frazil.metadata`, :mod:`frazil.table.update`), so nothing is translated twice;
- errors: :class:`ErrorModel` both ways: :func:`error_model_for` turns a
  :mod:`frazil.exceptions` error into the status and ``type`` the Java reference's handlers
  expect, and :func:`error_from_response` turns a server's answer back into the frazil class,
  keeping the server's message.

Parsers raise :class:`~frazil.exceptions.ParseError` naming the field (``updates[2].action``).
"""

# Long module: one module holds every wire shape, so the client and the server import them
# from one place.

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

import numpy as np

from frazil import exceptions as exc
from frazil._json import Fields, check_list, check_str
from frazil.io.paths import table_location_from_metadata
from frazil.metadata import TableMetadata
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.sorting import SortOrder
from frazil.table.update import (
    AddPartitionSpecUpdate,
    AddSchemaUpdate,
    AddSortOrderUpdate,
    AssignUUIDUpdate,
    SetCurrentSchemaUpdate,
    SetDefaultSortOrderUpdate,
    SetDefaultSpecUpdate,
    SetLocationUpdate,
    SetPropertiesUpdate,
    UpgradeFormatVersionUpdate,
    requirement_from_json,
    update_from_json,
)
from frazil.view.metadata import ViewMetadata, ViewVersion
from frazil.view.updates import view_requirement_from_json, view_update_from_json

__all__ = [
    "ACCESS_DELEGATION_HEADER",
    "DEFAULT_ENDPOINTS",
    "ENDPOINTS",
    "NAMESPACE_SEPARATOR",
    "CatalogConfig",
    "CommitTableRequest",
    "CommitTransactionRequest",
    "CommitViewRequest",
    "CreateNamespaceRequest",
    "CreateTableRequest",
    "CreateViewRequest",
    "ErrorModel",
    "FetchScanTasksRequest",
    "ListNamespacesResponse",
    "ListTablesResponse",
    "LoadTableResult",
    "LoadViewResult",
    "OAuthTokenResponse",
    "PlanTableScanRequest",
    "RegisterTableRequest",
    "RenameTableRequest",
    "UpdateNamespacePropertiesRequest",
    "UpdateNamespacePropertiesResponse",
    "commit_table_response",
    "create_table_updates",
    "decode_namespace",
    "encode_name",
    "encode_namespace",
    "error_from_response",
    "error_model_for",
    "identifier_from_json",
    "identifier_to_json",
    "load_table_result",
    "load_view_result",
    "namespace_from_json",
    "parse_json_body",
]

NAMESPACE_SEPARATOR = "\x1f"

# The request header asking for vended credentials (``vended-credentials``) or remote signing.
ACCESS_DELEGATION_HEADER = "X-Iceberg-Access-Delegation"

# Every endpoint id the spec defines (``CatalogConfig.endpoints``); the server advertises the ones
# it serves, the client checks before calling an optional one.
ENDPOINTS = (
    "GET /v1/{prefix}/namespaces",
    "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "HEAD /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "POST /v1/{prefix}/tables/rename",
    "POST /v1/{prefix}/transactions/commit",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks",
    "GET /v1/{prefix}/namespaces/{namespace}/views",
    "POST /v1/{prefix}/namespaces/{namespace}/views",
    "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/views/rename",
)

# What a client assumes when the server's config has no ``endpoints`` (the spec's list).
DEFAULT_ENDPOINTS = frozenset(
    (
        "GET /v1/{prefix}/namespaces",
        "POST /v1/{prefix}/namespaces",
        "GET /v1/{prefix}/namespaces/{namespace}",
        "DELETE /v1/{prefix}/namespaces/{namespace}",
        "POST /v1/{prefix}/namespaces/{namespace}/properties",
        "GET /v1/{prefix}/namespaces/{namespace}/tables",
        "POST /v1/{prefix}/namespaces/{namespace}/tables",
        "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
        "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
        "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
        "POST /v1/{prefix}/namespaces/{namespace}/register",
        "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
        "POST /v1/{prefix}/tables/rename",
        "POST /v1/{prefix}/transactions/commit",
    )
)


# ---- paths


def encode_namespace(namespace: Sequence[str], separator: str = NAMESPACE_SEPARATOR) -> str:
    """The ``{namespace}`` path parameter: levels joined by ``separator``, percent-encoded
    (``("a", "b")`` -> ``a%1Fb``). A level holding the separator cannot be encoded."""
    for level in namespace:
        if separator in level:
            raise exc.InvalidArgumentError(
                f"namespace {tuple(namespace)!r}: level {level!r} holds the namespace separator "
                f"{separator!r}"
            )
    return quote(separator.join(namespace), safe="")


def decode_namespace(encoded: str, separator: str = NAMESPACE_SEPARATOR) -> tuple[str, ...]:
    """Inverse of :func:`encode_namespace` (also for a path the framework already unquoted)."""
    text = unquote(encoded)
    return tuple(text.split(separator)) if text else ()


def encode_name(name: str) -> str:
    """A table or view name as a path segment."""
    return quote(name, safe="")


# ---- identifiers


def identifier_to_json(identifier: Sequence[str]) -> dict[str, Any]:
    """``("db", "events")`` -> ``{"namespace": ["db"], "name": "events"}``."""
    return {"namespace": list(identifier[:-1]), "name": identifier[-1]}


def identifier_from_json(obj: Any, path: str = "identifier") -> tuple[str, ...]:
    f = Fields(obj, path)
    namespace = [
        check_str(v, f"{f.at('namespace')}[{i}]") for i, v in enumerate(f.list("namespace"))
    ]
    return (*namespace, f.str("name"))


def namespace_from_json(obj: Any, path: str = "namespace") -> tuple[str, ...]:
    return tuple(check_str(v, f"{path}[{i}]") for i, v in enumerate(check_list(obj, path)))


#: the deepest nesting of arrays and objects a body may have: far above any Iceberg payload,
#: and far enough below the interpreter's recursion limit that parsing never nears it (a
#: finalizer or logging call run at the bottom of a parse that deep fails in turn)
MAX_JSON_DEPTH = 500
# the bytes that decide nesting: quotes, backslashes (escaping quotes) and brackets
_STRUCTURAL = np.zeros(256, dtype=bool)
_STRUCTURAL[list(b'"\\[]{}')] = True


def json_too_deep(body: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``body`` nests arrays and objects more than ``limit`` deep (brackets inside
    strings not counted); checked without recursion, in numpy passes over its quotes,
    backslashes and brackets."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    a = np.frombuffer(body, dtype=np.uint8)
    pos = np.flatnonzero(_STRUCTURAL[a])
    c = a[pos]
    k = np.arange(len(c))
    # the backslashes right before each byte: a quote after an odd run of them is escaped
    follows_backslash = np.zeros(len(c), dtype=bool)
    follows_backslash[1:] = (c[:-1] == ord("\\")) & (pos[:-1] + 1 == pos[1:])
    run = k - np.maximum.accumulate(np.where(follows_backslash, 0, k))
    quote = (c == ord('"')) & (run % 2 == 0)
    in_string = (np.cumsum(quote) % 2).astype(bool)
    step = ((c == ord("[")) | (c == ord("{"))).astype(np.int64)
    step -= ((c == ord("]")) | (c == ord("}"))).astype(np.int64)
    step[in_string | quote] = 0
    return int(np.cumsum(step).max(initial=0)) > limit


def parse_json_body(body: bytes | str, what: str) -> Any:
    """A request or response body as JSON; :class:`ParseError` naming ``what`` otherwise
    (also where it nests deeper than :data:`MAX_JSON_DEPTH`)."""
    raw = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
    if json_too_deep(raw):
        raise exc.ParseError(f"{what}: invalid JSON: nested more than {MAX_JSON_DEPTH} deep")
    try:
        return json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise exc.ParseError(f"{what}: invalid JSON: {e}") from None


# ---- bodies


@dataclass(frozen=True)
class CreateTableRequest:
    """``CreateTableRequest``: the schema, spec and sort order stay their frazil objects."""

    name: str
    schema: Any  # frazil.schema.Schema
    location: str | None = None
    partition_spec: Any = None  # frazil.partitioning.PartitionSpec | None
    write_order: Any = None  # frazil.sorting.SortOrder | None
    stage_create: bool = False
    properties: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.location is not None:
            out["location"] = self.location
        out["schema"] = self.schema.to_json()
        if self.partition_spec is not None:
            out["partition-spec"] = self.partition_spec.to_json()
        if self.write_order is not None:
            out["write-order"] = self.write_order.to_json()
        out["stage-create"] = self.stage_create
        out["properties"] = dict(self.properties)
        return out

    @classmethod
    def from_json(cls, obj: Any, path: str = "CreateTableRequest") -> CreateTableRequest:
        f = Fields(obj, path)
        name = f.str("name")
        schema = Schema.from_json(f.raw("schema"), f.at("schema"), default_schema_id=0)
        spec = (
            PartitionSpec.from_json(f.raw("partition-spec"), f.at("partition-spec"))
            if f.has("partition-spec")
            else None
        )
        order = (
            SortOrder.from_json(f.raw("write-order"), f.at("write-order"))
            if f.has("write-order")
            else None
        )
        stage = f.bool("stage-create") if f.has("stage-create") else False
        return cls(
            name=name,
            schema=schema,
            location=f.opt_str("location"),
            partition_spec=spec,
            write_order=order,
            stage_create=stage,
            properties=f.opt_str_map("properties"),
        )


def load_table_result(
    metadata_location: str | None,
    metadata: Any,
    config: Mapping[str, str] | None = None,
    storage_credentials: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """``LoadTableResult`` (also ``CreateTableResponse``); ``metadata_location`` is ``None``
    for a staged create."""
    out: dict[str, Any] = {}
    if metadata_location is not None:
        out["metadata-location"] = metadata_location
    out["metadata"] = metadata.to_dict()
    out["config"] = dict(config or {})
    if storage_credentials:
        out["storage-credentials"] = [dict(c) for c in storage_credentials]
    return out


@dataclass(frozen=True)
class LoadTableResult:
    """A parsed ``LoadTableResult``: ``metadata_location`` is ``None`` for a staged create;
    ``config`` and ``storage_credentials`` (``(prefix, config)`` pairs) configure the table's
    FileIO (vended credentials: the catalog server is trusted, table metadata is not)."""

    metadata_location: str | None
    metadata: Any  # frazil.metadata.TableMetadata
    config: dict[str, str] = field(default_factory=dict)
    storage_credentials: tuple[tuple[str, dict[str, str]], ...] = ()

    @classmethod
    def from_json(cls, obj: Any, path: str = "LoadTableResult") -> LoadTableResult:
        f = Fields(obj, path)
        creds = []
        for i, c in enumerate(f.opt_list("storage-credentials") or []):
            cf = Fields(c, f"{f.at('storage-credentials')}[{i}]")
            creds.append((cf.str("prefix"), cf.opt_str_map("config")))
        metadata_location = f.opt_str("metadata-location")
        # v4 metadata may omit its location: then the table lies where its metadata file does
        inferred = table_location_from_metadata(metadata_location) if metadata_location else None
        return cls(
            metadata_location,
            TableMetadata.from_dict(f.raw("metadata"), location=inferred),
            f.opt_str_map("config"),
            tuple(creds),
        )

    def to_json(self) -> dict[str, Any]:
        return load_table_result(
            self.metadata_location,
            self.metadata,
            self.config,
            [{"prefix": p, "config": c} for p, c in self.storage_credentials],
        )

    def io_properties(self, location: str | None = None) -> dict[str, str]:
        """``config`` with the storage credential of the longest prefix of ``location``
        (the table location by default) on top."""
        location = location if location is not None else self.metadata.location
        out = dict(self.config)
        best = max(
            (c for c in self.storage_credentials if location.startswith(c[0])),
            key=lambda c: len(c[0]),
            default=None,
        )
        if best is not None:
            out.update(best[1])
        return out


def create_table_updates(metadata: Any) -> list[Any]:
    """The updates that build ``metadata`` (a staged table's, from ``stage-create``) from empty
    metadata, as a staged create's commit sends them ahead of the transaction's own updates
    (with an ``assert-create`` requirement); the Java reference's ``CatalogHandlers`` applies
    them to ``TableMetadata.buildFromEmpty()``."""
    out: list[Any] = []
    if metadata.table_uuid is not None:
        out.append(AssignUUIDUpdate(metadata.table_uuid))
    out.append(UpgradeFormatVersionUpdate(metadata.format_version))
    out.append(AddSchemaUpdate(metadata.schema(), metadata.last_column_id))
    out.append(SetCurrentSchemaUpdate(-1))
    out.append(AddPartitionSpecUpdate(metadata.spec()))
    out.append(SetDefaultSpecUpdate(-1))
    out.append(AddSortOrderUpdate(metadata.sort_order()))
    out.append(SetDefaultSortOrderUpdate(-1))
    out.append(SetLocationUpdate(metadata.location))
    if metadata.properties:
        out.append(SetPropertiesUpdate(dict(metadata.properties)))
    return out


def _commit_to_json(
    identifier: tuple[str, ...] | None, requirements: list[Any], updates: list[Any]
) -> dict[str, Any]:
    """The body of a ``CommitTableRequest`` or ``CommitViewRequest``."""
    out: dict[str, Any] = {}
    if identifier is not None:
        out["identifier"] = identifier_to_json(identifier)
    out["requirements"] = [r.to_json() for r in requirements]
    out["updates"] = [u.to_json() for u in updates]
    return out


def _commit_from_json(
    f: Fields,
    read_requirement: Callable[[Any, str], Any],
    read_update: Callable[[Any, str], Any],
) -> tuple[tuple[str, ...] | None, list[Any], list[Any]]:
    """The identifier, requirements and updates of a table or view commit request."""
    ident = (
        identifier_from_json(f.raw("identifier"), f.at("identifier"))
        if f.has("identifier")
        else None
    )
    reqs = [
        read_requirement(r, f"{f.at('requirements')}[{i}]")
        for i, r in enumerate(f.opt_list("requirements") or [])
    ]
    updates = [read_update(u, f"{f.at('updates')}[{i}]") for i, u in enumerate(f.list("updates"))]
    return ident, reqs, updates


@dataclass(frozen=True)
class CommitTableRequest:
    """``CommitTableRequest``: requirements and updates as frazil's own objects."""

    identifier: tuple[str, ...] | None
    requirements: list[Any]  # TableRequirement
    updates: list[Any]  # TableUpdate

    def to_json(self) -> dict[str, Any]:
        return _commit_to_json(self.identifier, self.requirements, self.updates)

    @classmethod
    def from_json(cls, obj: Any, path: str = "CommitTableRequest") -> CommitTableRequest:
        return cls(*_commit_from_json(Fields(obj, path), requirement_from_json, update_from_json))


def commit_table_response(metadata_location: str, metadata: Any) -> dict[str, Any]:
    """``CommitTableResponse``."""
    return {"metadata-location": metadata_location, "metadata": metadata.to_dict()}


@dataclass(frozen=True)
class CommitTransactionRequest:
    """``CommitTransactionRequest``: every table change names its table."""

    table_changes: list[CommitTableRequest]

    def to_json(self) -> dict[str, Any]:
        return {"table-changes": [c.to_json() for c in self.table_changes]}

    @classmethod
    def from_json(
        cls, obj: Any, path: str = "CommitTransactionRequest"
    ) -> CommitTransactionRequest:
        f = Fields(obj, path)
        at = f.at("table-changes")
        changes = [
            CommitTableRequest.from_json(c, f"{at}[{i}]")
            for i, c in enumerate(f.list("table-changes"))
        ]
        for i, c in enumerate(changes):
            if c.identifier is None:
                raise exc.ParseError(f"{at}[{i}].identifier: required field is missing")
        return cls(changes)


@dataclass(frozen=True)
class CatalogConfig:
    """``CatalogConfig`` (``GET /v1/config``): ``defaults`` are overridden by the client's own
    properties, which ``overrides`` override; ``endpoints`` the server serves."""

    defaults: dict[str, str] = field(default_factory=dict)
    overrides: dict[str, str] = field(default_factory=dict)
    endpoints: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"defaults": dict(self.defaults), "overrides": dict(self.overrides)}
        if self.endpoints is not None:
            out["endpoints"] = list(self.endpoints)
        return out

    @classmethod
    def from_json(cls, obj: Any, path: str = "CatalogConfig") -> CatalogConfig:
        f = Fields(obj, path)
        endpoints = f.opt_list("endpoints")
        return cls(
            f.opt_str_map("defaults"),
            f.opt_str_map("overrides"),
            None
            if endpoints is None
            else tuple(check_str(e, f"{f.at('endpoints')}[{i}]") for i, e in enumerate(endpoints)),
        )


@dataclass(frozen=True)
class CreateNamespaceRequest:
    namespace: tuple[str, ...]
    properties: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"namespace": list(self.namespace), "properties": dict(self.properties)}

    @classmethod
    def from_json(cls, obj: Any, path: str = "CreateNamespaceRequest") -> CreateNamespaceRequest:
        f = Fields(obj, path)
        ns = namespace_from_json(f.raw("namespace"), f.at("namespace"))
        return cls(ns, f.opt_str_map("properties"))


@dataclass(frozen=True)
class UpdateNamespacePropertiesRequest:
    removals: list[str] = field(default_factory=list)
    updates: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"removals": list(self.removals), "updates": dict(self.updates)}

    @classmethod
    def from_json(
        cls, obj: Any, path: str = "UpdateNamespacePropertiesRequest"
    ) -> UpdateNamespacePropertiesRequest:
        f = Fields(obj, path)
        at = f.at("removals")
        removals = [check_str(v, f"{at}[{i}]") for i, v in enumerate(f.opt_list("removals") or [])]
        return cls(removals, f.opt_str_map("updates"))


@dataclass(frozen=True)
class UpdateNamespacePropertiesResponse:
    updated: list[str]
    removed: list[str]
    missing: list[str] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"updated": list(self.updated), "removed": list(self.removed)}
        if self.missing is not None:
            out["missing"] = list(self.missing)
        return out

    @classmethod
    def from_json(
        cls, obj: Any, path: str = "UpdateNamespacePropertiesResponse"
    ) -> UpdateNamespacePropertiesResponse:
        f = Fields(obj, path)

        def strs(key: str) -> list[str]:
            return [check_str(v, f"{f.at(key)}[{i}]") for i, v in enumerate(f.opt_list(key) or [])]

        return cls(strs("updated"), strs("removed"), strs("missing") if f.has("missing") else None)


@dataclass(frozen=True)
class ListNamespacesResponse:
    namespaces: list[tuple[str, ...]]
    next_page_token: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"namespaces": [list(ns) for ns in self.namespaces]}
        if self.next_page_token is not None:
            out["next-page-token"] = self.next_page_token
        return out

    @classmethod
    def from_json(cls, obj: Any, path: str = "ListNamespacesResponse") -> ListNamespacesResponse:
        f = Fields(obj, path)
        at = f.at("namespaces")
        namespaces = [
            namespace_from_json(ns, f"{at}[{i}]")
            for i, ns in enumerate(f.opt_list("namespaces") or [])
        ]
        return cls(namespaces, f.opt_str("next-page-token"))


@dataclass(frozen=True)
class ListTablesResponse:
    """``ListTablesResponse`` (also the views list)."""

    identifiers: list[tuple[str, ...]]
    next_page_token: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"identifiers": [identifier_to_json(i) for i in self.identifiers]}
        if self.next_page_token is not None:
            out["next-page-token"] = self.next_page_token
        return out

    @classmethod
    def from_json(cls, obj: Any, path: str = "ListTablesResponse") -> ListTablesResponse:
        f = Fields(obj, path)
        at = f.at("identifiers")
        idents = [
            identifier_from_json(i, f"{at}[{k}]")
            for k, i in enumerate(f.opt_list("identifiers") or [])
        ]
        return cls(idents, f.opt_str("next-page-token"))


@dataclass(frozen=True)
class RegisterTableRequest:
    name: str
    metadata_location: str
    overwrite: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "metadata-location": self.metadata_location}
        if self.overwrite:
            out["overwrite"] = True
        return out

    @classmethod
    def from_json(cls, obj: Any, path: str = "RegisterTableRequest") -> RegisterTableRequest:
        f = Fields(obj, path)
        overwrite = f.bool("overwrite") if f.has("overwrite") else False
        return cls(f.str("name"), f.str("metadata-location"), overwrite)


@dataclass(frozen=True)
class RenameTableRequest:
    """``RenameTableRequest`` (also for views)."""

    source: tuple[str, ...]
    destination: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "source": identifier_to_json(self.source),
            "destination": identifier_to_json(self.destination),
        }

    @classmethod
    def from_json(cls, obj: Any, path: str = "RenameTableRequest") -> RenameTableRequest:
        f = Fields(obj, path)
        return cls(
            identifier_from_json(f.raw("source"), f.at("source")),
            identifier_from_json(f.raw("destination"), f.at("destination")),
        )


@dataclass(frozen=True)
class CreateViewRequest:
    """``CreateViewRequest``: the schema and first version stay their frazil objects."""

    name: str
    schema: Any  # frazil.schema.Schema
    view_version: Any  # frazil.view.metadata.ViewVersion
    properties: dict[str, str] = field(default_factory=dict)
    location: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.location is not None:
            out["location"] = self.location
        out["schema"] = self.schema.to_json()
        out["view-version"] = self.view_version.to_json()
        out["properties"] = dict(self.properties)
        return out

    @classmethod
    def from_json(cls, obj: Any, path: str = "CreateViewRequest") -> CreateViewRequest:
        f = Fields(obj, path)
        name = f.str("name")
        schema = Schema.from_json(f.raw("schema"), f.at("schema"), default_schema_id=0)
        version = ViewVersion.from_json(f.raw("view-version"), f.at("view-version"))
        return cls(name, schema, version, f.opt_str_map("properties"), f.opt_str("location"))


def load_view_result(
    metadata_location: str, metadata: Any, config: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """``LoadViewResult`` (the answer to create, load and replace)."""
    return {
        "metadata-location": metadata_location,
        "metadata": metadata.to_dict(),
        "config": dict(config or {}),
    }


@dataclass(frozen=True)
class LoadViewResult:
    metadata_location: str
    metadata: Any  # frazil.view.metadata.ViewMetadata
    config: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return load_view_result(self.metadata_location, self.metadata, self.config)

    @classmethod
    def from_json(cls, obj: Any, path: str = "LoadViewResult") -> LoadViewResult:
        f = Fields(obj, path)
        location = f.str("metadata-location")
        metadata = ViewMetadata.from_dict(f.raw("metadata"))
        return cls(location, metadata, f.opt_str_map("config"))


@dataclass(frozen=True)
class CommitViewRequest:
    """``CommitViewRequest``: view requirements and updates as frazil's own objects."""

    identifier: tuple[str, ...] | None
    requirements: list[Any]  # ViewRequirement
    updates: list[Any]  # ViewUpdate

    def to_json(self) -> dict[str, Any]:
        return _commit_to_json(self.identifier, self.requirements, self.updates)

    @classmethod
    def from_json(cls, obj: Any, path: str = "CommitViewRequest") -> CommitViewRequest:
        f = Fields(obj, path)
        return cls(*_commit_from_json(f, view_requirement_from_json, view_update_from_json))


@dataclass(frozen=True)
class PlanTableScanRequest:
    """``PlanTableScanRequest``; ``filter`` stays JSON (parse it with
    :func:`frazil.expressions.from_json`)."""

    snapshot_id: int | None = None
    select: list[str] | None = None
    filter: Any = None
    case_sensitive: bool = True
    use_snapshot_schema: bool = False
    start_snapshot_id: int | None = None
    end_snapshot_id: int | None = None
    min_rows_requested: int | None = None
    stats_fields: list[str] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in (
            ("snapshot-id", self.snapshot_id),
            ("select", self.select),
            ("filter", self.filter),
            ("start-snapshot-id", self.start_snapshot_id),
            ("end-snapshot-id", self.end_snapshot_id),
            ("min-rows-requested", self.min_rows_requested),
            ("stats-fields", self.stats_fields),
        ):
            if value is not None:
                out[key] = value
        out["case-sensitive"] = self.case_sensitive
        out["use-snapshot-schema"] = self.use_snapshot_schema
        return out

    @classmethod
    def from_json(cls, obj: Any, path: str = "PlanTableScanRequest") -> PlanTableScanRequest:
        f = Fields(obj, path)

        def names(key: str) -> list[str] | None:
            items = f.opt_list(key)
            if items is None:
                return None
            return [check_str(v, f"{f.at(key)}[{i}]") for i, v in enumerate(items)]

        return cls(
            snapshot_id=f.opt_long("snapshot-id"),
            select=names("select"),
            filter=f.raw("filter"),
            case_sensitive=f.bool("case-sensitive") if f.has("case-sensitive") else True,
            use_snapshot_schema=(
                f.bool("use-snapshot-schema") if f.has("use-snapshot-schema") else False
            ),
            start_snapshot_id=f.opt_long("start-snapshot-id"),
            end_snapshot_id=f.opt_long("end-snapshot-id"),
            min_rows_requested=f.opt_long("min-rows-requested"),
            stats_fields=names("stats-fields"),
        )


@dataclass(frozen=True)
class FetchScanTasksRequest:
    plan_task: str

    def to_json(self) -> dict[str, Any]:
        return {"plan-task": self.plan_task}

    @classmethod
    def from_json(cls, obj: Any, path: str = "FetchScanTasksRequest") -> FetchScanTasksRequest:
        return cls(Fields(obj, path).str("plan-task"))


@dataclass(frozen=True)
class OAuthTokenResponse:
    """``OAuthTokenResponse`` of ``POST /v1/oauth/tokens``; ``repr`` hides the token."""

    access_token: str = field(repr=False)
    token_type: str = "bearer"
    expires_in: int | None = None
    issued_token_type: str | None = "urn:ietf:params:oauth:token-type:access_token"
    refresh_token: str | None = field(default=None, repr=False)
    scope: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"access_token": self.access_token, "token_type": self.token_type}
        for key, value in (
            ("expires_in", self.expires_in),
            ("issued_token_type", self.issued_token_type),
            ("refresh_token", self.refresh_token),
            ("scope", self.scope),
        ):
            if value is not None:
                out[key] = value
        return out

    @classmethod
    def from_json(cls, obj: Any, path: str = "OAuthTokenResponse") -> OAuthTokenResponse:
        f = Fields(obj, path)
        return cls(
            f.str("access_token"),
            f.str("token_type"),
            f.opt_long("expires_in"),
            f.opt_str("issued_token_type"),
            f.opt_str("refresh_token"),
            f.opt_str("scope"),
        )


# ---- errors


@dataclass(frozen=True)
class ErrorModel:
    """The spec's ``ErrorModel`` (inside ``IcebergErrorResponse``)."""

    message: str
    type: str
    code: int
    stack: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"message": self.message, "type": self.type, "code": self.code}
        if self.stack:
            error["stack"] = list(self.stack)
        return {"error": error}

    @classmethod
    def from_json(cls, obj: Any) -> ErrorModel | None:
        """The error of a response body, ``None`` when it is not an ``IcebergErrorResponse``."""
        if not isinstance(obj, dict) or not isinstance(obj.get("error"), dict):
            return None
        e = obj["error"]
        message, type_, code = e.get("message"), e.get("type"), e.get("code")
        if not isinstance(message, str) or not isinstance(type_, str):
            return None
        stack = e.get("stack")
        return cls(
            message,
            type_,
            code if isinstance(code, int) and not isinstance(code, bool) else 0,
            tuple(s for s in stack if isinstance(s, str)) if isinstance(stack, list) else (),
        )


# frazil class -> (HTTP status, the Java exception's simple name the reference's
# ErrorHandlers dispatch on). Most specific first: the first isinstance match wins.
_TO_WIRE: tuple[tuple[type[BaseException], int, str], ...] = (
    (exc.NoSuchNamespaceError, 404, "NoSuchNamespaceException"),
    (exc.NoSuchTableError, 404, "NoSuchTableException"),
    (exc.NoSuchViewError, 404, "NoSuchViewException"),
    (exc.NoSuchPlanIdError, 404, "NoSuchPlanIdException"),
    (exc.NoSuchPlanTaskError, 404, "NoSuchPlanTaskException"),
    (exc.NamespaceAlreadyExistsError, 409, "AlreadyExistsException"),
    (exc.TableAlreadyExistsError, 409, "AlreadyExistsException"),
    (exc.ViewAlreadyExistsError, 409, "AlreadyExistsException"),
    (exc.NamespaceNotEmptyError, 409, "NamespaceNotEmptyException"),
    (exc.CommitFailedError, 409, "CommitFailedException"),
    (exc.CommitStateUnknownError, 500, "CommitStateUnknownException"),
    (exc.AuthorizationExpiredError, 419, "AuthorizationExpiredException"),
    (exc.OAuthError, 401, "NotAuthorizedException"),
    (exc.UnauthorizedError, 401, "NotAuthorizedException"),
    (exc.ForbiddenError, 403, "ForbiddenException"),
    (exc.ServiceUnavailableError, 503, "ServiceUnavailableException"),
    (exc.CatalogBusyError, 503, "ServiceUnavailableException"),
    (exc.UnsupportedError, 406, "UnsupportedOperationException"),
    (exc.ValidationError, 400, "ValidationException"),
    (exc.BadRequestError, 400, "BadRequestException"),
    (exc.ParseError, 400, "BadRequestException"),
    (exc.DecodeError, 400, "BadRequestException"),
    (exc.InvalidArgumentError, 400, "IllegalArgumentException"),
)

# Java exception name -> frazil class, for answers whose type the client knows.
_FROM_TYPE: dict[str, type[exc.FrazilError]] = {
    "NoSuchNamespaceException": exc.NoSuchNamespaceError,
    "NoSuchTableException": exc.NoSuchTableError,
    "NoSuchViewException": exc.NoSuchViewError,
    "NoSuchPlanIdException": exc.NoSuchPlanIdError,
    "NoSuchPlanTaskException": exc.NoSuchPlanTaskError,
    "NamespaceNotEmptyException": exc.NamespaceNotEmptyError,
    "CommitFailedException": exc.CommitFailedError,
    "CommitStateUnknownException": exc.CommitStateUnknownError,
    "NotAuthorizedException": exc.UnauthorizedError,
    "ForbiddenException": exc.ForbiddenError,
    "AuthorizationExpiredException": exc.AuthorizationExpiredError,
    "ServiceUnavailableException": exc.ServiceUnavailableError,
    "UnsupportedOperationException": exc.UnsupportedError,
    "NotImplementedException": exc.UnsupportedError,
    "ValidationException": exc.ValidationError,
    "BadRequestException": exc.BadRequestError,
    "IllegalArgumentException": exc.BadRequestError,
}

# Which "already exists" and "not found" a 409/404 without a known type means, by what the
# request was about (the reference's per-route ErrorHandlers do the same).
_ALREADY_EXISTS = {
    "namespace": exc.NamespaceAlreadyExistsError,
    "table": exc.TableAlreadyExistsError,
    "view": exc.ViewAlreadyExistsError,
}
_NOT_FOUND = {
    "namespace": exc.NoSuchNamespaceError,
    "table": exc.NoSuchTableError,
    "view": exc.NoSuchViewError,
    "plan": exc.NoSuchPlanIdError,
    "plan-task": exc.NoSuchPlanTaskError,
}


def error_model_for(error: BaseException) -> ErrorModel:
    """The status and ``ErrorModel`` a server answers for ``error``: the frazil message, never a
    traceback; anything not a frazil error is a 500 ``ServerError`` with a generic message."""
    for cls, code, type_ in _TO_WIRE:
        if isinstance(error, cls):
            return ErrorModel(str(error) or type_, type_, code)
    if isinstance(error, exc.FrazilIOError):
        return ErrorModel(str(error), "RESTException", 500)
    if isinstance(error, exc.FrazilError):
        return ErrorModel(str(error), "RESTException", 500)
    return ErrorModel("internal server error", "ServerError", 500)


def error_from_response(
    status: int,
    body: bytes | str | None,
    *,
    about: str,
    request: str,
    commit: bool = False,
) -> exc.FrazilError:
    """The frazil error for a failed response. ``about`` says what the request concerns
    (``"namespace"``, ``"table"``, ``"view"``, ``"plan"``, ``"plan-task"``, ``"auth"``,
    ``"config"``, ...), ``request`` names it in the message (``"POST .../tables/events"``), and
    ``commit`` marks a commit, whose 5xx outcome is unknown (the caller checks before raising
    :class:`CommitStateUnknownError` further). The server's own message is kept."""
    model = None
    if body:
        try:
            model = ErrorModel.from_json(json.loads(body))
        except (ValueError, RecursionError):
            model = None
    detail = model.message if model is not None else _snippet(body)
    message = f"{request}: {detail}" if detail else f"{request}: HTTP {status}"
    type_ = model.type if model is not None else ""

    cls: type[exc.FrazilError]
    if commit and (status >= 500 or type_ == "CommitStateUnknownException"):
        cls = exc.CommitStateUnknownError
    elif status == 409 and type_ == "AlreadyExistsException":
        cls = _ALREADY_EXISTS.get(about, exc.TableAlreadyExistsError)
    elif type_ in _FROM_TYPE and _FROM_TYPE[type_] is not exc.CommitStateUnknownError:
        cls = _FROM_TYPE[type_]
    elif status == 404:
        cls = _NOT_FOUND.get(about, exc.RESTError)
    elif status == 409:
        cls = exc.CommitFailedError if commit else _ALREADY_EXISTS.get(about, exc.RESTError)
    elif status == 400:
        cls = exc.BadRequestError
    elif status == 401:
        cls = exc.OAuthError if about == "auth" else exc.UnauthorizedError
    elif status == 403:
        cls = exc.ForbiddenError
    elif status == 406:
        cls = exc.UnsupportedError
    elif status == 419:
        cls = exc.AuthorizationExpiredError
    elif status == 503:
        cls = exc.ServiceUnavailableError
    elif status >= 500:
        cls = exc.ServerError
    else:
        cls = exc.RESTError
    return cls(message)


def _snippet(body: bytes | str | None, limit: int = 200) -> str:
    if not body:
        return ""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."
