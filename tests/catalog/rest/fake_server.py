"""A small REST catalog server for the client's unit tests: stdlib ``http.server`` on loopback in
a thread, backed by frazil's SQLite catalog, with the knobs the tests need (advertised endpoints
and config, OAuth2 clients with token lifetimes, injected failures, vended credentials, planning
that answers ``submitted`` and hands out plan tasks). Every request is recorded (method, path,
query, headers, body) so that tests can check what the client sent.

It is not ``frazil serve``: it implements only what the tests exercise, and the oracle for
table contents is frazil's own SQL catalog underneath (tables are also checked against the Java
reference in ``tests/interop/test_rest_client_java.py``)."""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from frazil.catalog import Catalog
from frazil.catalog.sql import SqlCatalog
from frazil.expressions.json import from_json as expr_from_json
from frazil.rest import wire
from frazil.table.scan.tasks import content_file_to_json

Reply = tuple[int, Any, dict[str, str]]


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes


@dataclass
class FakeRest:
    warehouse: Path
    endpoints: list[str] | None = None
    defaults: dict[str, str] = field(default_factory=dict)
    overrides: dict[str, str] = field(default_factory=dict)
    extra_config: dict[str, Any] = field(default_factory=dict)
    # client_id:secret -> token lifetime (s); when set, every request needs a valid token.
    clients: dict[str, float] | None = None
    static_tokens: set[str] = field(default_factory=set)
    vended: dict[str, str] = field(default_factory=dict)
    page_size: int | None = None
    async_planning: bool = False
    # (method, path regex) -> replies to give before the real handler (status, body, headers),
    # or a callable run before the real handler; consumed in order.
    faults: list[tuple[str, str, Any]] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.catalog: Catalog = SqlCatalog(
            "fake", uri=f"sqlite:///{self.warehouse}/fake.db", warehouse=str(self.warehouse)
        )
        self._tokens: dict[str, float] = {}
        self._counter = itertools.count()
        self._plans: dict[str, list[Any]] = {}
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def _any(self) -> None:
                fake._serve(self)

            do_GET = do_POST = do_DELETE = do_HEAD = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.uri = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def fail(self, method: str, path: str, *replies: Any) -> None:
        for r in replies:
            self.faults.append((method, path, r))

    def seen(self, method: str, pattern: str = "") -> list[Recorded]:
        return [r for r in self.requests if r.method == method and re.search(pattern, r.path)]

    # ---- dispatch

    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        split = urlsplit(h.path)
        query = {k: v[0] for k, v in parse_qs(split.query).items()}
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        rec = Recorded(h.command, split.path, query, dict(h.headers.items()), body)
        with self._lock:
            self.requests.append(rec)
        try:
            status, payload, headers = self._reply(rec)
        except Exception as e:  # frazil errors become the spec's ErrorModel
            model = wire.error_model_for(e)
            status, payload, headers = model.code, model.to_json(), {}
        data = b"" if payload is None else json.dumps(payload).encode()
        h.send_response(status)
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(data)

    def _fault(self, rec: Recorded) -> Reply | None:
        with self._lock:
            hits = [
                i
                for i, (method, pattern, _) in enumerate(self.faults)
                if method == rec.method and re.search(pattern, rec.path)
            ]
            if not hits:
                return None
            reply = self.faults.pop(hits[0])[2]
        if callable(reply):
            out = reply(self, rec)
            return out if out is not None else None
        if isinstance(reply, tuple):
            return reply
        return reply, {"error": {"message": "injected", "type": "Injected", "code": reply}}, {}

    def _authorized(self, rec: Recorded) -> bool:
        if self.clients is None and not self.static_tokens:
            return True
        auth = rec.headers.get("Authorization", "")
        if auth.startswith("AWS4-HMAC-SHA256"):  # SigV4: the bearer travels beside it
            auth = rec.headers.get("Original-Authorization", "")
        token = auth.removeprefix("Bearer ")
        if token in self.static_tokens:
            return True
        expires = self._tokens.get(token)
        return expires is not None and expires > time.monotonic()

    def _reply(self, rec: Recorded) -> Reply:
        path = rec.path
        if path == "/v1/oauth/tokens":
            return self._token(rec)
        if not self._authorized(rec):
            msg = {"error": {"message": "not authorized", "type": "NotAuthorizedException"}}
            return 401, {**msg, "error": {**msg["error"], "code": 401}}, {}
        fault = self._fault(rec)
        if fault is not None:
            return fault
        if path == "/v1/config":
            out: dict[str, Any] = {"defaults": self.defaults, "overrides": self.overrides}
            if self.endpoints is not None:
                out["endpoints"] = self.endpoints
            return 200, {**out, **self.extra_config}, {}
        prefix = self.overrides.get("prefix") or self.defaults.get("prefix")
        rest = path.removeprefix("/v1/")
        if prefix and rest.startswith(prefix + "/"):
            rest = rest[len(prefix) + 1 :]
        parts = [unquote(p) for p in rest.split("/")]
        return self._route(rec, parts)

    def _token(self, rec: Recorded) -> Reply:
        form = {k: v[0] for k, v in parse_qs(rec.body.decode()).items()}
        key = f"{form.get('client_id')}:{form.get('client_secret')}"
        if self.clients is None or key not in self.clients:
            return 401, {"error": "invalid_client", "error_description": "unknown client"}, {}
        token = f"tok-{next(self._counter)}"
        life = self.clients[key]
        self._tokens[token] = time.monotonic() + life
        return 200, {"access_token": token, "token_type": "bearer", "expires_in": life}, {}

    # ---- routes

    def _route(self, rec: Recorded, p: list[str]) -> Reply:
        cat, m, q = self.catalog, rec.method, rec.query
        body = json.loads(rec.body) if rec.body else None
        if p == ["tables", "rename"]:
            src = wire.identifier_from_json(body["source"])
            dst = wire.identifier_from_json(body["destination"])
            cat.rename_table(src, dst)
            return 204, None, {}
        if p == ["views", "rename"]:
            req0 = wire.RenameTableRequest.from_json(body)
            cat.rename_view(req0.source, req0.destination)
            return 204, None, {}
        if p == ["transactions", "commit"]:
            request = wire.CommitTransactionRequest.from_json(body)
            for change in request.table_changes:
                table = cat.load_table(change.identifier)
                for r in change.requirements:
                    r.validate(table.metadata)
            for change in request.table_changes:
                table = cat.load_table(change.identifier)
                cat.commit_table(table, change.requirements, change.updates)
            return 204, None, {}
        assert p[0] == "namespaces", p
        if len(p) == 1:
            if m == "POST":
                cat.create_namespace(tuple(body["namespace"]), body.get("properties"))
                return 200, body, {}
            parent = wire.decode_namespace(q["parent"]) if "parent" in q else ()
            return (
                200,
                self._page([list(n) for n in cat.list_namespaces(parent)], q, "namespaces"),
                {},
            )
        ns = wire.decode_namespace(p[1])
        if len(p) == 2:
            if m == "DELETE":
                cat.drop_namespace(ns)
                return 204, None, {}
            props = cat.load_namespace_properties(ns)
            return (
                (204, None, {})
                if m == "HEAD"
                else (200, {"namespace": list(ns), "properties": props}, {})
            )
        if p[2] == "properties":
            s = cat.update_namespace_properties(ns, set(body["removals"]), body["updates"])
            return 200, {"removed": s.removed, "updated": s.updated, "missing": s.missing}, {}
        if p[2] == "register":
            t = cat.register_table((*ns, body["name"]), body["metadata-location"])
            return 200, self._load_result(t), {}
        if p[2] == "views":
            return self._views(rec, ns, p[3:], body)
        if len(p) == 3:
            if m == "POST":
                req = wire.CreateTableRequest.from_json(body)
                t = cat.create_table(
                    (*ns, req.name), req.schema, req.location, req.partition_spec,
                    req.write_order, req.properties,
                )  # fmt: skip
                return 200, self._load_result(t), {}
            ids = [wire.identifier_to_json(i) for i in cat.list_tables(ns)]
            return 200, self._page(ids, q, "identifiers"), {}
        ident = (*ns, p[3])
        if len(p) == 4:
            if m == "DELETE":
                cat.drop_table(ident, purge=q.get("purgeRequested") == "true")
                return 204, None, {}
            if m == "POST":
                req2 = wire.CommitTableRequest.from_json(body)
                r = cat.commit_table(cat.load_table(ident), req2.requirements, req2.updates)
                return 200, wire.commit_table_response(r.metadata_location, r.metadata), {}
            t = cat.load_table(ident)
            return (204, None, {}) if m == "HEAD" else (200, self._load_result(t), {})
        tail = p[4]
        if tail == "metrics":
            return 204, None, {}
        if tail == "credentials":
            return 200, {"storage-credentials": [{"prefix": "", "config": self.vended}]}, {}
        if tail == "plan" and len(p) == 5:
            return self._plan(ident, body)
        if tail == "plan":
            plan_id = p[5]
            tasks = self._plans[plan_id]
            half = (len(tasks) + 1) // 2
            self._plans[f"{plan_id}-0"], self._plans[f"{plan_id}-1"] = tasks[:half], tasks[half:]
            return 200, {"status": "completed", "plan-tasks": [f"{plan_id}-0", f"{plan_id}-1"]}, {}
        if tail == "tasks":
            return 200, self._scan_tasks(self._plans.pop(body["plan-task"])), {}
        raise AssertionError(f"no route for {rec.method} {rec.path}")

    def _views(self, rec: Recorded, ns: tuple[str, ...], rest: list[str], body: Any) -> Reply:
        cat, m = self.catalog, rec.method
        if not rest:
            if m == "GET":
                ids = [wire.identifier_to_json(i) for i in cat.list_views(ns)]
                return 200, self._page(ids, rec.query, "identifiers"), {}
            req = wire.CreateViewRequest.from_json(body)
            v = req.view_version
            view = cat.create_view(
                (*ns, req.name), req.schema, v.representations, v.default_namespace,
                v.default_catalog, req.properties, req.location, summary=v.summary,
            )  # fmt: skip
            return 200, wire.load_view_result(view.metadata_location, view.metadata), {}
        ident = (*ns, rest[0])
        if m == "DELETE":
            cat.drop_view(ident)
            return 204, None, {}
        if m == "HEAD":
            return (204 if cat.view_exists(ident) else 404), None, {}
        if m == "POST":
            req2 = wire.CommitViewRequest.from_json(body)
            r = cat.commit_view(ident, req2.requirements, req2.updates)
            return 200, wire.load_view_result(r.metadata_location, r.metadata), {}
        view = cat.load_view(ident)
        return 200, wire.load_view_result(view.metadata_location, view.metadata), {}

    def _page(self, items: list[Any], q: dict[str, str], key: str) -> dict[str, Any]:
        size = int(q.get("pageSize") or self.page_size or 0)
        start = int(q.get("pageToken") or 0)
        if not size:
            return {key: items}
        out: dict[str, Any] = {key: items[start : start + size]}
        if start + size < len(items):
            out["next-page-token"] = str(start + size)
        return out

    def _load_result(self, t: Any) -> dict[str, Any]:
        return wire.load_table_result(t.metadata_location, t.metadata, self.vended)

    def _plan(self, ident: tuple[str, ...], body: Any) -> Reply:
        req = wire.PlanTableScanRequest.from_json(body)
        table = self.catalog.load_table(ident)
        scan = table.scan(case_sensitive=req.case_sensitive, snapshot_id=req.snapshot_id)
        if req.filter is not None:
            scan = scan.filter(expr_from_json(req.filter))
        tasks = list(scan.plan_files())
        plan_id = f"plan-{next(self._counter)}"
        self._plans[plan_id] = [(t, table.metadata) for t in tasks]
        if self.async_planning:
            return 200, {"status": "submitted", "plan-id": plan_id}, {}
        return (
            200,
            {
                "status": "completed",
                "plan-id": plan_id,
                **self._scan_tasks(self._plans.pop(plan_id)),
            },
            {},
        )

    @staticmethod
    def _scan_tasks(tasks: list[Any]) -> dict[str, Any]:
        deletes: list[Any] = []
        index: dict[str, int] = {}
        out = []
        for task, md in tasks:
            spec = md.specs()[task.file.spec_id]
            schema = md.schema()
            refs = []
            for d in task.delete_files:
                if d.file_path not in index:
                    index[d.file_path] = len(deletes)
                    deletes.append(content_file_to_json(d, md.specs()[d.spec_id], schema))
                refs.append(index[d.file_path])
            out.append(
                {
                    "data-file": content_file_to_json(task.file, spec, schema),
                    "delete-file-references": refs,
                }
            )
        return {"file-scan-tasks": out, "delete-files": deletes}


def served(tmp: Path, **kwargs: Any) -> FakeRest:
    return FakeRest(tmp, **kwargs)


Handler = Callable[[FakeRest, Recorded], Reply | None]
