"""What crosses the wire of the REST catalog protocol (``rest-catalog-open-api.yaml``), in one
place for both sides: the client (:mod:`frazil.catalog.rest`) and the server
(:mod:`frazil.rest.server`).

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

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

from frazil import exceptions as exc
from frazil._json_fields import Fields, check_list, check_str

__all__ = [
    "DEFAULT_ENDPOINTS",
    "ENDPOINTS",
    "NAMESPACE_SEPARATOR",
    "CommitTableRequest",
    "CommitTransactionRequest",
    "CreateTableRequest",
    "LoadTableResult",
    "ErrorModel",
    "decode_namespace",
    "encode_name",
    "encode_namespace",
    "error_from_response",
    "error_model_for",
    "identifier_from_json",
    "identifier_to_json",
    "create_table_updates",
    "load_table_result",
    "parse_json_body",
]

NAMESPACE_SEPARATOR = "\x1f"

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


def parse_json_body(body: bytes | str, what: str) -> Any:
    """A request or response body as JSON; :class:`ParseError` naming ``what`` otherwise."""
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
        from frazil.partitioning import PartitionSpec
        from frazil.schema import Schema
        from frazil.sorting import SortOrder

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
        from frazil.metadata import TableMetadata

        f = Fields(obj, path)
        creds = []
        for i, c in enumerate(f.opt_list("storage-credentials") or []):
            cf = Fields(c, f"{f.at('storage-credentials')}[{i}]")
            creds.append((cf.str("prefix"), cf.opt_str_map("config")))
        return cls(
            f.opt_str("metadata-location"),
            TableMetadata.from_dict(f.raw("metadata")),
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
    )

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


@dataclass(frozen=True)
class CommitTableRequest:
    """``CommitTableRequest``: requirements and updates as frazil's own objects."""

    identifier: tuple[str, ...] | None
    requirements: list[Any]  # TableRequirement
    updates: list[Any]  # TableUpdate

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.identifier is not None:
            out["identifier"] = identifier_to_json(self.identifier)
        out["requirements"] = [r.to_json() for r in self.requirements]
        out["updates"] = [u.to_json() for u in self.updates]
        return out

    @classmethod
    def from_json(cls, obj: Any, path: str = "CommitTableRequest") -> CommitTableRequest:
        from frazil.table.update import requirement_from_json, update_from_json

        f = Fields(obj, path)
        ident = (
            identifier_from_json(f.raw("identifier"), f.at("identifier"))
            if f.has("identifier")
            else None
        )
        reqs = [
            requirement_from_json(r, f"{f.at('requirements')}[{i}]")
            for i, r in enumerate(f.opt_list("requirements") or [])
        ]
        updates = [
            update_from_json(u, f"{f.at('updates')}[{i}]") for i, u in enumerate(f.list("updates"))
        ]
        return cls(ident, reqs, updates)


@dataclass(frozen=True)
class CommitTransactionRequest:
    """``CommitTransactionRequest``: one :class:`CommitTableRequest` (with its identifier) per
    table, applied all or nothing."""

    table_changes: list[CommitTableRequest]

    def to_json(self) -> dict[str, Any]:
        return {"table-changes": [c.to_json() for c in self.table_changes]}

    @classmethod
    def from_json(cls, obj: Any, path: str = "CommitTransactionRequest") -> CommitTransactionRequest:
        f = Fields(obj, path)
        changes = [
            CommitTableRequest.from_json(c, f"{f.at('table-changes')}[{i}]")
            for i, c in enumerate(f.list("table-changes"))
        ]
        for i, c in enumerate(changes):
            if c.identifier is None:
                raise exc.ParseError(f"{f.at('table-changes')}[{i}].identifier: required")
        return cls(changes)


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
