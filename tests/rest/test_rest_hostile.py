"""Hundreds of malformed, oversized and hostile requests over the OpenAPI shapes (wrong types,
unknown actions and requirement types, bad namespaces and traversal identifiers, bad tokens,
bodies over the limit), on table, namespace and view routes: the server never answers 500, every
error is an ``ErrorModel``, and no table, view or namespace changes."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_helpers import TestClient, auth_config, token_for

from frazil.catalog.sql import SqlCatalog
from frazil.server.app import create_app

MAX_BODY = 2048
STATUSES: dict[int, int] = {}

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=12),
)
json_value = st.recursive(
    json_leaf,
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4)
    ),
    max_leaves=12,
)
# Names the catalog refuses, plus the ones that exist (so a create is a conflict): a request
# that is valid would change something, and every request here must not.
BAD_NAMES = ["..", ".", "a/b", "a\\b", "x\x00y", "", "\x1f", "ok\u2028", "a" * 300]
hostile_name = st.sampled_from([*BAD_NAMES, "t", "db"])
namespace_name = st.sampled_from([*BAD_NAMES, "db"])  # "t" would be a new namespace
# Never a list of strings (which could name a new namespace) nor a string map (valid updates).
not_names = json_value.filter(
    lambda v: (
        not (isinstance(v, list) and v and all(isinstance(x, str) for x in v))
        and not (isinstance(v, dict) and all(isinstance(x, str) for x in v.values()))
    )
)
# Every commit also asserts a table uuid no table has: a well-formed one fails (409).
WRONG_UUID = {"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}
update_action = st.sampled_from(
    [
        "assign-uuid",
        "upgrade-format-version",
        "add-schema",
        "set-current-schema",
        "add-spec",
        "set-default-spec",
        "add-sort-order",
        "set-default-sort-order",
        "add-snapshot",
        "set-snapshot-ref",
        "remove-snapshots",
        "remove-snapshot-ref",
        "set-location",
        "set-properties",
        "remove-properties",
        "set-statistics",
        "no-such-action",
    ]
)
requirement_type = st.sampled_from(
    [
        "assert-create",
        "assert-table-uuid",
        "assert-ref-snapshot-id",
        "assert-current-schema-id",
        "assert-whatever",
    ]
)


def _update() -> Any:
    return st.builds(
        lambda action, extra: {"action": action, **extra},
        update_action,
        st.dictionaries(
            st.sampled_from(
                [
                    "uuid",
                    "format-version",
                    "schema",
                    "schema-id",
                    "spec",
                    "spec-id",
                    "location",
                    "updates",
                    "removals",
                    "snapshot",
                    "ref-name",
                    "snapshot-ids",
                    "type",
                ]
            ),
            json_value,
            max_size=4,
        ),
    )


def _requirement() -> Any:
    return st.builds(
        lambda t, extra: {"type": t, **extra},
        requirement_type,
        st.dictionaries(
            st.sampled_from(["uuid", "ref", "snapshot-id", "current-schema-id"]),
            json_value,
            max_size=3,
        ),
    )


commit_body = st.fixed_dictionaries(
    {
        "requirements": st.lists(_requirement(), max_size=3).map(lambda r: [*r, WRONG_UUID])
        | not_names
    },
    optional={
        "updates": st.lists(_update(), max_size=4) | not_names,
        "identifier": not_names,
    },
)
ident_json = st.fixed_dictionaries(
    {"namespace": st.lists(hostile_name, max_size=3) | not_names, "name": hostile_name | not_names}
)


# View commits assert a view uuid no view has, as table commits do.
WRONG_VIEW_UUID = {"type": "assert-view-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}
view_update_action = st.sampled_from(
    [
        "assign-uuid",
        "upgrade-format-version",
        "add-schema",
        "set-location",
        "set-properties",
        "remove-properties",
        "add-view-version",
        "set-current-view-version",
        "add-snapshot",
        "no-such-action",
    ]
)
view_update = st.builds(
    lambda action, extra: {"action": action, **extra},
    view_update_action,
    st.dictionaries(
        st.sampled_from(
            [
                "uuid",
                "format-version",
                "schema",
                "location",
                "updates",
                "removals",
                "view-version",
                "view-version-id",
            ]
        ),
        json_value,
        max_size=3,
    ),
)
view_commit_body = st.fixed_dictionaries(
    {
        "requirements": st.lists(
            st.fixed_dictionaries(
                {"type": st.sampled_from(["assert-view-uuid", "x"])}, optional={"uuid": json_value}
            ),
            max_size=2,
        ).map(lambda r: [*r, WRONG_VIEW_UUID])
        | not_names,
    },
    optional={"updates": st.lists(view_update, max_size=4) | not_names, "identifier": not_names},
)


def _view_request(draw: Any, base: str) -> tuple[str, str, Any]:
    # "v" exists: only reads of it and refused changes; never a drop of it
    view = draw(st.sampled_from(["v", "..", "missing", "x%00", "%2E%2E", "t"]))
    kind = draw(st.integers(0, 3))
    if kind == 0:
        body = draw(
            st.fixed_dictionaries(
                {"name": hostile_name | not_names | st.just("v"), "schema": json_value},
                optional={
                    "view-version": json_value,
                    "properties": json_value,
                    "location": st.sampled_from(["/etc", "file:///root", ""]) | json_value,
                },
            )
        )
        return "POST", f"{base}/views", body
    if kind == 1:
        return "POST", f"{base}/views/{view}", draw(view_commit_body)
    if kind == 2:
        body = {"source": draw(ident_json), "destination": draw(ident_json)}
        return "POST", "/v1/views/rename", body
    method = draw(st.sampled_from(["GET", "DELETE", "HEAD"]))
    if method == "DELETE" and view == "v":
        view = "missing"
    query = draw(st.sampled_from(["", "?pageSize=0", "?pageToken=%%", "?pageSize=x"]))
    return method, (f"{base}/views/{view}" if draw(st.booleans()) else f"{base}/views{query}"), None


@st.composite
def requests(draw: Any) -> tuple[str, str, Any, dict[str, str]]:
    ns = draw(st.sampled_from(["db", "db%1F..", "..", "%00", "a%2Fb", "db%1F", "nope"]))
    table = draw(st.sampled_from(["t", "..", "missing", "x%00", "%2E%2E"]))
    base = f"/v1/namespaces/{ns}"
    kind = draw(st.integers(0, 13))
    headers: dict[str, str] = {}
    if kind >= 12:
        return (*_view_request(draw, base), headers)
    if kind == 0:
        return "POST", f"{base}/tables/{table}", draw(commit_body), headers
    if kind == 1:
        body = draw(
            st.fixed_dictionaries(
                {"name": hostile_name | not_names, "schema": json_value},
                optional={
                    "location": st.sampled_from(["/etc", "/tmp/x", "file:///root", ""])
                    | json_value,
                    "partition-spec": json_value,
                    "write-order": json_value,
                    "stage-create": json_value,
                    "properties": json_value,
                },
            )
        )
        return "POST", f"{base}/tables", body, headers
    if kind == 2:
        body = {"namespace": draw(st.lists(namespace_name, min_size=1, max_size=3) | not_names)}
        if draw(st.booleans()):
            body["properties"] = draw(json_value)
        return "POST", "/v1/namespaces", body, headers
    if kind == 3:
        body = {"removals": draw(json_value), "updates": draw(not_names)}
        return "POST", f"{base}/properties", body, headers
    if kind == 4:
        body = {"source": draw(ident_json), "destination": draw(ident_json)}
        return "POST", "/v1/tables/rename", body, headers
    if kind == 5:
        body = {"table-changes": draw(st.lists(commit_body, max_size=3) | json_value)}
        return "POST", "/v1/transactions/commit", body, headers
    if kind == 6:
        body = {"name": draw(hostile_name), "metadata-location": draw(json_value)}
        return "POST", f"{base}/register", body, headers
    if kind == 7:
        body = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "filter": json_value,
                    "select": json_value,
                    "snapshot-id": json_value,
                    "case-sensitive": json_value,
                    "start-snapshot-id": json_value,
                },
            )
        )
        return "POST", f"{base}/tables/{table}/plan", body, headers
    if kind == 8:
        return "POST", f"{base}/tables/{table}/tasks", {"plan-task": draw(json_value)}, headers
    if kind == 9:
        method = draw(st.sampled_from(["GET", "DELETE", "HEAD"]))
        if method == "DELETE" and table == "t":
            table = "missing"  # dropping the table that exists is a valid request
        query = draw(
            st.sampled_from(
                [
                    "",
                    "?pageSize=-1",
                    "?pageToken=zz",
                    "?snapshots=some",
                    "?parent=..",
                    "?purgeRequested=maybe",
                ]
            )
        )
        return (
            method,
            f"{base}/tables/{table}{query}" if draw(st.booleans()) else base,
            None,
            headers,
        )
    if kind == 10:
        # raw bytes: not JSON, oversized, deeply nested
        raw = draw(
            st.sampled_from(
                [b"{", b"\xff\xfe", b"[" * 1500, b"x" * (MAX_BODY + 1), b'{"updates": 5}', b"null"]
            )
        )
        return "POST", f"{base}/tables/{table}", raw, headers
    headers["Authorization"] = draw(
        st.sampled_from(["Bearer ", "Bearer forged-token", "Basic abc", "bearer", "Token x"])
    )
    return "GET", "/v1/namespaces", None, headers


def _snapshot(catalog: SqlCatalog) -> Any:
    tables = {t: catalog.load_table(t).metadata_location for t in catalog.list_tables("db")}
    views = {v: catalog.load_view(v).metadata_location for v in catalog.list_views("db")}
    return catalog.list_namespaces(), tables, views, catalog.load_namespace_properties("db")


def test_hostile_requests_never_500_never_change_anything(tmp_path_factory: Any) -> None:
    catalog = SqlCatalog("hostile", warehouse=str(tmp_path_factory.mktemp("hostile")))
    catalog.create_namespace("db")
    t = catalog.create_table("db.t", pa.schema([("id", pa.int64())]))
    t.append(pa.table({"id": pa.array([1, 2], pa.int64())}))
    catalog.create_view("db.v", pa.schema([("id", pa.int64())]), "SELECT id FROM db.t")
    app = create_app(catalog, auth=auth_config(), max_body_bytes=MAX_BODY)
    before = _snapshot(catalog)
    with TestClient(app, raise_server_exceptions=True) as client:
        token = token_for(client)

        @settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
        @given(requests())
        def check(req: tuple[str, str, Any, dict[str, str]]) -> None:
            method, path, body, headers = req
            headers = {"Authorization": f"Bearer {token}", **headers}
            content = body if isinstance(body, bytes) else None
            if body is not None and content is None:
                content = json.dumps(body).encode()
            r = client.request(method, path, content=content, headers=headers)
            STATUSES[r.status_code] = STATUSES.get(r.status_code, 0) + 1
            assert r.status_code < 500, (method, path, body, r.text)
            if r.status_code >= 400 and method != "HEAD":
                error = r.json()["error"]
                assert isinstance(error["message"], str) and isinstance(error["type"], str)
                assert error["code"] == r.status_code
                assert "Traceback" not in r.text
            assert _snapshot(catalog) == before, (method, path, body)

        check()
    # the requests reached every kind of refusal, not just one
    assert {400, 401, 404} <= set(STATUSES), STATUSES
    catalog.close()


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.integers() | st.text(alphabet='[]{}"\\ ab', max_size=8),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
        max_leaves=30,
    ),
    st.integers(1, 6),
)
def test_json_depth_check_equals_the_parsed_depth(value: Any, limit: int) -> None:
    """The recursion-free nesting check agrees with the depth of the parsed value (Python's
    own ``json``, the oracle), brackets inside strings and escapes not counted."""
    from frazil.rest.wire import json_too_deep

    body = json.dumps(value).encode()
    assert json_too_deep(body, limit) == (_depth(value) > limit)


def test_deep_bodies_are_refused_before_parsing() -> None:
    from frazil.exceptions import ParseError
    from frazil.rest.wire import MAX_JSON_DEPTH, parse_json_body

    ok = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    value, depth = parse_json_body(ok, "body"), 1
    while value:
        value, depth = value[0], depth + 1
    assert depth == MAX_JSON_DEPTH
    for deep in ("[" * (MAX_JSON_DEPTH + 1), '{"a":' * 4000, "[" * 100_000):
        try:
            parse_json_body(deep.encode(), "body")
        except ParseError as e:
            assert "nested more than" in str(e)
        else:
            raise AssertionError("a body nested too deep was parsed")
    # brackets inside strings are not nesting
    assert parse_json_body(json.dumps(["[{" * 5000]), "body") == ["[{" * 5000]
