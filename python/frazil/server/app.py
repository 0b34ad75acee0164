"""The REST catalog server (``frazil serve``): a Starlette app over any frazil catalog.

:func:`create_app` returns an ASGI app serving ``rest-catalog-open-api.yaml``'s config,
namespace, table, register, rename, commit, multi-table transaction, metrics, scan-planning and
(when the catalog holds views) view endpoints, and the OAuth2 token endpoint
(:mod:`frazil.server.auth`). Every request body is parsed by :mod:`frazil.rest.wire` into frazil's
own objects, and every change goes through the catalog's one commit path
(:meth:`~frazil.catalog.Catalog.commit_table`, :meth:`~frazil.catalog.Catalog.commit_tables`,
:meth:`~frazil.catalog.Catalog.commit_view`), so a commit checks its requirements and lands
whole or not at all.

Hardening: request bodies are bounded (413), identifiers are checked by the catalog's rules
before anything is read (400), table and metadata locations a request chooses must lie under the
warehouse unless ``allow_external_locations``, every error is the spec's ``ErrorModel`` (a bug
is a logged, generic 500, never a traceback to the client), and one log line per request names
method, path, status and time, never headers or bodies.

Catalog calls block, so handlers run in Starlette's thread pool; uvicorn waits for requests in
flight (commits included) when it shuts down.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from frazil import exceptions as exc
from frazil.catalog import METADATA_PATH, WAREHOUSE, Catalog, TableCommit
from frazil.rest import wire
from frazil.server.auth import AuthConfig, TokenStore
from frazil.server.planning import PlanStore
from frazil.table import Table
from frazil.table.update import (
    AssertCreate,
    SetLocationUpdate,
    SetPropertiesUpdate,
    empty_table_metadata,
    update_table_metadata,
)

if TYPE_CHECKING:
    from frazil.metadata import TableMetadata
    from frazil.table import Table

__all__ = ["DEFAULT_MAX_BODY_BYTES", "create_app"]

logger = logging.getLogger("frazil.server.app")

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
MAX_PAGE_SIZE = 10_000
_SEP = wire.NAMESPACE_SEPARATOR

_Handler = Callable[["_Call"], Response]


class _TooLarge(Exception):
    pass


@dataclass(frozen=True)
class _Call:
    """What a handler sees of a request: already authenticated, body read (bounded)."""

    method: str
    params: Mapping[str, str]
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: bytes

    def json(self, what: str) -> Any:
        return wire.parse_json_body(self.body, what) if self.body else None


def _error(e: BaseException) -> JSONResponse:
    model = wire.error_model_for(e)
    return JSONResponse(model.to_json(), status_code=model.code)


def _empty(status: int = 204) -> Response:
    return Response(status_code=status)


def _parse(what: str, fn: Callable[[], Any]) -> Any:
    """Runs a request parser; anything it raises that is not already a frazil error (a parser
    tripping over a hostile shape) is a 400 naming ``what``, not a 500."""
    try:
        return fn()
    except exc.FrazilError:
        raise
    except RecursionError:
        raise exc.ParseError(f"{what}: the JSON nests too deeply") from None
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError) as e:
        raise exc.ParseError(f"{what}: malformed request ({type(e).__name__})") from None


class _Server:
    def __init__(
        self,
        catalog: Catalog,
        tokens: TokenStore | None,
        vended_credentials: Mapping[str, str] | None,
        max_body_bytes: int,
        allow_external_locations: bool,
        plans: PlanStore,
    ) -> None:
        self.catalog = catalog
        self.tokens = tokens
        self.vended = dict(vended_credentials or {})
        self.max_body_bytes = max_body_bytes
        self.allow_external = allow_external_locations
        self.plans = plans
        self.multi_table = type(catalog).commit_tables is not Catalog.commit_tables
        self.views = catalog.supports_views()

    # ---- plumbing

    def endpoints(self) -> list[str]:
        skip: set[str] = set() if self.multi_table else {"POST /v1/{prefix}/transactions/commit"}
        return [
            e
            for e in wire.ENDPOINTS
            if (self.views or "/views" not in e) and "/credentials" not in e and e not in skip
        ]

    def route(self, handler: _Handler, *, public: bool = False) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            try:
                if not public and self.tokens is not None:
                    self.tokens.check_header(request.headers.get("authorization"))
                body = await self._body(request)
                call = _Call(
                    request.method,
                    dict(request.path_params),
                    dict(request.query_params),
                    request.headers,
                    body,
                )
                return await run_in_threadpool(handler, call)
            except _TooLarge:
                model = wire.ErrorModel(
                    f"request body larger than {self.max_body_bytes} bytes",
                    "BadRequestException",
                    413,
                )
                return JSONResponse(model.to_json(), status_code=413)
            except exc.FrazilError as e:
                return _error(e)
            except RecursionError:
                return _error(exc.ParseError("the request nests too deeply"))
            except Exception:
                logger.exception("%s %s failed", request.method, request.url.path)
                return _error(RuntimeError())

        return endpoint

    async def _body(self, request: Request) -> bytes:
        if request.method in ("GET", "HEAD", "DELETE"):
            return b""
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body_bytes):
            raise _TooLarge()
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.max_body_bytes:
                raise _TooLarge()
            chunks.append(chunk)
        return b"".join(chunks)

    # ---- identifiers and locations

    def namespace(self, text: str) -> tuple[str, ...]:
        ns = tuple(text.split(_SEP)) if text else ()
        return Catalog.check_namespace(ns)

    def identifier(self, namespace: Sequence[str], name: str) -> tuple[str, ...]:
        ident = Catalog.check_identifier((*namespace, name))
        if not namespace:
            raise exc.InvalidArgumentError(f"invalid table identifier {name!r}: no namespace")
        return ident

    def table_ident(self, call: _Call) -> tuple[str, ...]:
        return self.identifier(self.namespace(call.params["namespace"]), call.params["table"])

    def check_location(self, location: str | None, what: str) -> None:
        if location is None or self.allow_external:
            return
        warehouse = self.catalog.properties.get(WAREHOUSE)
        if warehouse is None:
            raise exc.InvalidArgumentError(
                f"{what}: the server has no warehouse, so it accepts no chosen locations"
            )
        Catalog.check_under(warehouse, location, what)

    # ---- config and auth

    def config(self, call: _Call) -> Response:
        cfg = wire.CatalogConfig({}, {}, tuple(self.endpoints()))
        return JSONResponse(cfg.to_json())

    def oauth_tokens(self, call: _Call) -> Response:
        if self.tokens is None:
            return JSONResponse(
                {"error": "invalid_request", "error_description": "authentication is off"},
                status_code=400,
            )
        try:
            answer = self.tokens.token_request(call.body, call.headers.get("authorization"))
        except exc.OAuthError as e:
            return JSONResponse(
                {"error": "invalid_client", "error_description": str(e)}, status_code=401
            )
        except exc.UnauthorizedError as e:
            return JSONResponse(
                {"error": "invalid_grant", "error_description": str(e)}, status_code=400
            )
        except exc.InvalidArgumentError as e:
            return JSONResponse(
                {"error": "invalid_request", "error_description": str(e)}, status_code=400
            )
        return JSONResponse(answer, headers={"Cache-Control": "no-store"})

    # ---- namespaces

    def namespaces(self, call: _Call) -> Response:
        if call.method == "GET":
            parent_text = call.query.get("parent", "")
            parent = self.namespace(parent_text) if parent_text else ()
            found = self.catalog.list_namespaces(parent)
            page, token = _page(found, call.query)
            return JSONResponse(wire.ListNamespacesResponse(page, token).to_json())
        req = _parse(
            "CreateNamespaceRequest",
            lambda: wire.CreateNamespaceRequest.from_json(call.json("CreateNamespaceRequest")),
        )
        ns = Catalog.check_namespace(req.namespace)
        if "location" in req.properties:
            self.check_location(req.properties["location"], f"location of namespace {ns}")
        self.catalog.create_namespace(ns, req.properties)
        props = self.catalog.load_namespace_properties(ns)
        return JSONResponse({"namespace": list(ns), "properties": props})

    def namespace_item(self, call: _Call) -> Response:
        ns = self.namespace(call.params["namespace"])
        if call.method == "HEAD":
            return _empty(204 if self.catalog.namespace_exists(ns) else 404)
        if call.method == "DELETE":
            self.catalog.drop_namespace(ns)
            return _empty()
        props = self.catalog.load_namespace_properties(ns)
        return JSONResponse({"namespace": list(ns), "properties": props})

    def namespace_properties(self, call: _Call) -> Response:
        ns = self.namespace(call.params["namespace"])
        req = _parse(
            "UpdateNamespacePropertiesRequest",
            lambda: wire.UpdateNamespacePropertiesRequest.from_json(
                call.json("UpdateNamespacePropertiesRequest")
            ),
        )
        if "location" in req.updates:
            self.check_location(req.updates["location"], f"location of namespace {ns}")
        summary = self.catalog.update_namespace_properties(ns, set(req.removals), req.updates)
        answer = wire.UpdateNamespacePropertiesResponse(
            summary.updated, summary.removed, summary.missing
        )
        return JSONResponse(answer.to_json())

    # ---- tables

    def tables(self, call: _Call) -> Response:
        ns = self.namespace(call.params["namespace"])
        if call.method == "GET":
            page, token = _page(self.catalog.list_tables(ns), call.query)
            return JSONResponse(wire.ListTablesResponse(page, token).to_json())
        req = _parse(
            "CreateTableRequest",
            lambda: wire.CreateTableRequest.from_json(call.json("CreateTableRequest")),
        )
        ident = self.identifier(ns, req.name)
        self.check_location(req.location, f"location of table {'.'.join(ident)}")
        if req.stage_create:
            if not self.catalog.namespace_exists(ns):
                raise exc.NoSuchNamespaceError(
                    f"cannot create table {'.'.join(ident)}: namespace {'.'.join(ns)} does not "
                    "exist"
                )
            if self.catalog.table_exists(ident):
                raise exc.TableAlreadyExistsError(f"table {'.'.join(ident)} already exists")
            metadata = self.catalog.new_table_metadata(
                ident,
                req.schema,
                req.location,
                req.partition_spec,
                req.write_order,
                req.properties,
            )
            self.check_location(metadata.location, f"location of table {'.'.join(ident)}")
            return JSONResponse(self._load_result(call, None, metadata))
        table = self.catalog.create_table(
            ident, req.schema, req.location, req.partition_spec, req.write_order, req.properties
        )
        return JSONResponse(self._load_result(call, table.metadata_location, table.metadata))

    def table_item(self, call: _Call) -> Response:
        ident = self.table_ident(call)
        if call.method == "HEAD":
            return _empty(204 if self.catalog.table_exists(ident) else 404)
        if call.method == "DELETE":
            purge = call.query.get("purgeRequested", "false").lower() == "true"
            self.catalog.drop_table(ident, purge=purge)
            return _empty()
        if call.method == "POST":
            req = _parse(
                "CommitTableRequest",
                lambda: wire.CommitTableRequest.from_json(call.json("CommitTableRequest")),
            )
            if req.identifier is not None and tuple(req.identifier) != ident:
                raise exc.BadRequestError(
                    f"the request's identifier {'.'.join(req.identifier)} is not the table of "
                    f"the path, {'.'.join(ident)}"
                )
            target = self._commit_target(ident, req)
            response = self.catalog.commit_table(target, req.requirements, req.updates)
            return JSONResponse(
                wire.commit_table_response(response.metadata_location, response.metadata)
            )
        snapshots = call.query.get("snapshots", "all")
        if snapshots not in ("all", "refs"):
            raise exc.InvalidArgumentError(f"snapshots must be 'all' or 'refs', not {snapshots!r}")
        table = self.catalog.load_table(ident)
        metadata = table.metadata
        if snapshots == "refs":
            kept = {r.snapshot_id for r in metadata.refs.values()}
            metadata = metadata.replace(
                snapshots=tuple(s for s in metadata.snapshots if s.snapshot_id in kept)
            )
        return JSONResponse(self._load_result(call, table.metadata_location, metadata))

    def _load_result(
        self, call: _Call, location: str | None, metadata: TableMetadata
    ) -> dict[str, Any]:
        config: dict[str, str] = {}
        delegation = call.headers.get(wire.ACCESS_DELEGATION_HEADER.lower(), "")
        if self.vended and "vended-credentials" in {d.strip() for d in delegation.split(",")}:
            config.update(self.vended)
        return wire.load_table_result(location, metadata, config)

    def _commit_target(self, ident: tuple[str, ...], req: wire.CommitTableRequest) -> Table:
        """The table a commit applies to: the current one, or for a create (``assert-create``)
        an empty base the request's updates build the whole table from."""
        name = ".".join(ident)
        for u in req.updates:
            if isinstance(u, SetLocationUpdate):
                self.check_location(u.location, f"location of table {name}")
            if isinstance(u, SetPropertiesUpdate) and METADATA_PATH in u.updates:
                self.check_location(u.updates[METADATA_PATH], f"{METADATA_PATH} of table {name}")
        if not any(isinstance(r, AssertCreate) for r in req.requirements):
            return self.catalog.load_table(ident)
        if not self.catalog.namespace_exists(ident[:-1]):
            raise exc.NoSuchNamespaceError(
                f"cannot create table {name}: namespace {'.'.join(ident[:-1])} does not exist"
            )
        empty = empty_table_metadata()
        # Built once here to refuse an incomplete table before the catalog writes anything.
        built = update_table_metadata(empty, req.updates)
        if not built.location:
            raise exc.ValidationError(f"cannot create table {name}: no set-location update")
        self.check_location(built.location, f"location of table {name}")
        return Table(ident, empty, None, self.catalog.io, self.catalog)

    def register(self, call: _Call) -> Response:
        ns = self.namespace(call.params["namespace"])
        req = _parse(
            "RegisterTableRequest",
            lambda: wire.RegisterTableRequest.from_json(call.json("RegisterTableRequest")),
        )
        ident = self.identifier(ns, req.name)
        if req.overwrite:
            raise exc.UnsupportedError("register with overwrite is not supported")
        self.check_location(req.metadata_location, f"metadata location of {'.'.join(ident)}")
        table = self.catalog.register_table(ident, req.metadata_location)
        return JSONResponse(self._load_result(call, table.metadata_location, table.metadata))

    def rename(self, call: _Call) -> Response:
        req = _parse(
            "RenameTableRequest",
            lambda: wire.RenameTableRequest.from_json(call.json("RenameTableRequest")),
        )
        src = self.identifier(req.source[:-1], req.source[-1])
        dst = self.identifier(req.destination[:-1], req.destination[-1])
        self.catalog.rename_table(src, dst)
        return _empty()

    def metrics(self, call: _Call) -> Response:
        self.table_ident(call)
        report = call.json("ReportMetricsRequest")
        if not isinstance(report, dict):
            raise exc.ParseError("ReportMetricsRequest: expected a JSON object")
        return _empty()

    def transactions(self, call: _Call) -> Response:
        req = _parse(
            "CommitTransactionRequest",
            lambda: wire.CommitTransactionRequest.from_json(call.json("CommitTransactionRequest")),
        )
        commits = []
        for change in req.table_changes:
            assert change.identifier is not None  # checked by the parser
            ident = self.identifier(change.identifier[:-1], change.identifier[-1])
            target = self._commit_target(ident, change)
            commits.append(TableCommit(target, change.requirements, change.updates))
        if not commits:
            raise exc.BadRequestError("CommitTransactionRequest: no table changes")
        self.catalog.commit_tables(commits)
        return _empty()

    # ---- views

    def view_ident(self, call: _Call) -> tuple[str, ...]:
        return self.identifier(self.namespace(call.params["namespace"]), call.params["view"])

    def list_or_create_view(self, call: _Call) -> Response:
        ns = self.namespace(call.params["namespace"])
        if call.method == "GET":
            page, token = _page(self.catalog.list_views(ns), call.query)
            return JSONResponse(wire.ListTablesResponse(page, token).to_json())
        req = _parse(
            "CreateViewRequest",
            lambda: wire.CreateViewRequest.from_json(call.json("CreateViewRequest")),
        )
        ident = self.identifier(ns, req.name)
        self.check_location(req.location, f"location of view {'.'.join(ident)}")
        version = req.view_version
        view = self.catalog.create_view(
            ident,
            req.schema,
            version.representations,
            version.default_namespace,
            version.default_catalog,
            req.properties,
            req.location,
            summary=version.summary,
        )
        assert view.metadata_location is not None  # a created view has its metadata file
        return JSONResponse(wire.load_view_result(view.metadata_location, view.metadata))

    def view_item(self, call: _Call) -> Response:
        ident = self.view_ident(call)
        if call.method == "HEAD":
            return _empty(204 if self.catalog.view_exists(ident) else 404)
        if call.method == "DELETE":
            self.catalog.drop_view(ident)
            return _empty()
        if call.method == "POST":
            return self._replace_view(call, ident)
        view = self.catalog.load_view(ident)
        assert view.metadata_location is not None  # a loaded view has its metadata file
        return JSONResponse(wire.load_view_result(view.metadata_location, view.metadata))

    def _replace_view(self, call: _Call, ident: tuple[str, ...]) -> Response:
        req = _parse(
            "CommitViewRequest",
            lambda: wire.CommitViewRequest.from_json(call.json("CommitViewRequest")),
        )
        name = ".".join(ident)
        if req.identifier is not None and tuple(req.identifier) != ident:
            raise exc.BadRequestError(
                f"the request's identifier {'.'.join(req.identifier)} is not the view of the "
                f"path, {name}"
            )
        for u in req.updates:
            if isinstance(u, SetLocationUpdate):
                self.check_location(u.location, f"location of view {name}")
        response = self.catalog.commit_view(ident, req.requirements, req.updates)
        return JSONResponse(wire.load_view_result(response.metadata_location, response.metadata))

    def rename_view(self, call: _Call) -> Response:
        req = _parse(
            "RenameTableRequest",
            lambda: wire.RenameTableRequest.from_json(call.json("RenameTableRequest")),
        )
        src = self.identifier(req.source[:-1], req.source[-1])
        dst = self.identifier(req.destination[:-1], req.destination[-1])
        self.catalog.rename_view(src, dst)
        return _empty()

    # ---- scan planning

    def plan(self, call: _Call) -> Response:
        ident = self.table_ident(call)
        req = _parse(
            "PlanTableScanRequest",
            lambda: wire.PlanTableScanRequest.from_json(call.json("PlanTableScanRequest") or {}),
        )
        table = self.catalog.load_table(ident)
        return _json_bytes(self.plans.plan_body(table, req))

    def plan_item(self, call: _Call) -> Response:
        ident = self.table_ident(call)
        plan_id = call.params["plan_id"]
        if call.method == "DELETE":
            self.plans.cancel(ident, plan_id)
            return _empty()
        return _json_bytes(self.plans.fetch_body(ident, plan_id))

    def plan_tasks(self, call: _Call) -> Response:
        ident = self.table_ident(call)
        req = _parse(
            "FetchScanTasksRequest",
            lambda: wire.FetchScanTasksRequest.from_json(call.json("FetchScanTasksRequest")),
        )
        return _json_bytes(self.plans.tasks_body(ident, req.plan_task))


def _json_bytes(body: bytes) -> Response:
    """A JSON body serialized already (scan-planning pages, written natively)."""
    return Response(body, media_type="application/json")


def _page(items: list[tuple[str, ...]], query: Mapping[str, str]) -> tuple[list[Any], str | None]:
    """One page of sorted ``items`` after ``pageToken`` (the last identifier of the previous
    page, base64 of its JSON), at most ``pageSize`` long; and the next page's token."""
    token = query.get("pageToken")
    size_text = query.get("pageSize")
    items = sorted(items)
    if token:
        try:
            after = json.loads(base64.urlsafe_b64decode(token.encode("ascii")))
            if not isinstance(after, list) or not all(isinstance(p, str) for p in after):
                raise ValueError
        except (ValueError, UnicodeError, binascii.Error, RecursionError):
            raise exc.BadRequestError("invalid pageToken") from None
        items = [i for i in items if i > tuple(after)]
    if size_text is None:
        return items, None
    if not size_text.isdigit() or not 1 <= int(size_text) <= MAX_PAGE_SIZE:
        raise exc.BadRequestError(f"pageSize must be an integer from 1 to {MAX_PAGE_SIZE}")
    size = int(size_text)
    if len(items) <= size:
        return items, None
    page = items[:size]
    next_token = base64.urlsafe_b64encode(json.dumps(list(page[-1])).encode()).decode("ascii")
    return page, next_token


class _AccessLog:
    """One log line per request: method, path, status, milliseconds (nothing else)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            logger.info(
                "%s %s %d %.1fms",
                scope.get("method"),
                scope.get("path"),
                status,
                (time.perf_counter() - started) * 1000,
            )


def create_app(
    catalog: Catalog,
    *,
    auth: AuthConfig | None = None,
    no_auth: bool = False,
    vended_credentials: Mapping[str, str] | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    allow_external_locations: bool = False,
    plan_page_size: int = 1_000,
    max_plans: int = 256,
) -> Starlette:
    """The REST catalog app over ``catalog``. Give ``auth`` (the clients allowed to get tokens)
    or ask for ``no_auth=True`` explicitly. ``vended_credentials`` go into the ``config`` of a
    load-table response when the client asks for ``vended-credentials``; ``plan_page_size`` is
    the number of tasks per plan task of server-side planning."""
    if auth is None and not no_auth:
        raise exc.InvalidArgumentError("create_app: give auth=AuthConfig(...) or no_auth=True")
    if auth is not None and no_auth:
        raise exc.InvalidArgumentError("create_app: auth and no_auth=True exclude each other")
    server = _Server(
        catalog,
        TokenStore(auth) if auth is not None else None,
        vended_credentials,
        max_body_bytes,
        allow_external_locations,
        PlanStore.for_catalog(catalog, page_size=plan_page_size, max_plans=max_plans),
    )
    r = server.route
    ns = "/v1/namespaces/{namespace}"
    tbl = ns + "/tables/{table}"
    routes = [
        Route("/v1/config", r(server.config), methods=["GET"]),
        Route("/v1/oauth/tokens", r(server.oauth_tokens, public=True), methods=["POST"]),
        Route("/v1/namespaces", r(server.namespaces), methods=["GET", "POST"]),
        Route(ns, r(server.namespace_item), methods=["GET", "HEAD", "DELETE"]),
        Route(ns + "/properties", r(server.namespace_properties), methods=["POST"]),
        Route(ns + "/tables", r(server.tables), methods=["GET", "POST"]),
        Route(ns + "/register", r(server.register), methods=["POST"]),
        Route(tbl, r(server.table_item), methods=["GET", "HEAD", "POST", "DELETE"]),
        Route(tbl + "/metrics", r(server.metrics), methods=["POST"]),
        Route(tbl + "/plan", r(server.plan), methods=["POST"]),
        Route(tbl + "/plan/{plan_id}", r(server.plan_item), methods=["GET", "DELETE"]),
        Route(tbl + "/tasks", r(server.plan_tasks), methods=["POST"]),
        Route("/v1/tables/rename", r(server.rename), methods=["POST"]),
    ]
    if server.multi_table:
        routes.append(Route("/v1/transactions/commit", r(server.transactions), methods=["POST"]))
    if server.views:
        view = ns + "/views/{view}"
        routes += [
            Route(ns + "/views", r(server.list_or_create_view), methods=["GET", "POST"]),
            Route(view, r(server.view_item), methods=["GET", "HEAD", "POST", "DELETE"]),
            Route("/v1/views/rename", r(server.rename_view), methods=["POST"]),
        ]

    async def not_found(request: Request, e: Exception) -> Response:
        status = getattr(e, "status_code", 404)
        kind = "NotFoundException" if status == 404 else "BadRequestException"
        text = f"no endpoint {request.method} {request.url.path}"
        return JSONResponse(wire.ErrorModel(text, kind, status).to_json(), status_code=status)

    async def server_error(request: Request, e: Exception) -> Response:
        logger.error("%s %s failed: %s", request.method, request.url.path, type(e).__name__)
        return _error(RuntimeError())

    handlers: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
        404: not_found,
        405: not_found,
        Exception: server_error,
    }
    app = Starlette(routes=routes, exception_handlers=handlers)
    app.add_middleware(_AccessLog)
    app.state.frazil = server
    return app
