"""The REST catalog client against a small fake server (``fake_server.py``): configuration,
auth, headers, retries, commits with unknown outcomes, pagination, errors, redaction, vended
credentials, SigV4, multi-table transactions, metrics and server-side planning."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pyarrow as pa
import pytest

from frazil import exceptions as exc
from frazil.catalog import load_catalog
from frazil.catalog.rest import RestCatalog
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.rest import wire
from frazil.schema import Schema
from frazil.transforms import parse
from frazil.types import LongType, NestedField, StringType

from .fake_server import FakeRest, Recorded

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "category", StringType(), required=False),
)
SPEC = PartitionSpec(PartitionField(2, 1000, parse("identity"), "category"))
SECRET = "s3cr3t-value-never-shown"
FAST = {"rest.retry.min-wait-ms": "1", "rest.retry.max-wait-ms": "5"}


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeRest]:
    server = FakeRest(tmp_path)
    yield server
    server.close()


def _catalog(fake: FakeRest, **props: str) -> RestCatalog:
    cat = load_catalog("t", type="rest", uri=fake.uri, **{**FAST, **props})
    assert isinstance(cat, RestCatalog)
    return cat


def _data(ids: list[int], cats: list[str]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "category": pa.array(cats, pa.string())})


def _rows(t: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in t.to_pylist())


# ---- configuration


def test_config_merge_defaults_client_overrides(fake: FakeRest) -> None:
    fake.defaults = {"a": "server-default", "b": "server-default", "header.X-From-Server": "1"}
    fake.overrides = {"b": "server-override", "prefix": "pfx"}
    cat = _catalog(fake, a="client", b="client", warehouse="wh1")
    assert cat.properties["a"] == "client"  # client beats defaults
    assert cat.properties["b"] == "server-override"  # overrides beat the client
    config = fake.seen("GET", "^/v1/config$")[0]
    assert config.query == {"warehouse": "wh1"}
    cat.create_namespace("db")
    post = fake.seen("POST", "namespaces")[0]
    assert post.path == "/v1/pfx/namespaces"
    assert post.headers["X-From-Server"] == "1"
    assert cat.list_namespaces() == [("db",)]


def test_header_properties_and_access_delegation(fake: FakeRest) -> None:
    cat = _catalog(fake, **{"header.X-Custom": "yes"})
    cat.list_namespaces()
    sent = fake.seen("GET", "namespaces")[0].headers
    assert sent["X-Custom"] == "yes"
    assert sent["X-Iceberg-Access-Delegation"] == "vended-credentials"
    cat2 = _catalog(fake, **{"header.X-Iceberg-Access-Delegation": "remote-signing"})
    cat2.list_namespaces()
    assert fake.seen("GET", "namespaces")[-1].headers["X-Iceberg-Access-Delegation"] == (
        "remote-signing"
    )


def test_optional_endpoints_only_when_advertised(fake: FakeRest) -> None:
    cat = _catalog(fake)  # no endpoints: the spec's defaults, without HEAD
    cat.create_namespace("db")
    assert cat.namespace_exists("db") and not cat.namespace_exists("nope")
    assert not fake.seen("HEAD")
    fake.endpoints = list(wire.ENDPOINTS)
    cat2 = _catalog(fake)
    assert cat2.namespace_exists("db") and not cat2.namespace_exists("nope")
    assert len(fake.seen("HEAD")) == 2
    cat.create_table("db.t", SCHEMA)
    fake.endpoints = None  # planning is not among the defaults
    server_planned = _catalog(fake, **{"rest.scan-planning": "server"}).load_table("db.t")
    with pytest.raises(exc.UnsupportedError, match="plan"):
        server_planned.scan()


# ---- auth


def test_oauth2_client_credentials_and_refresh_before_expiry(fake: FakeRest) -> None:
    fake.clients = {f"me:{SECRET}": 0.5}  # refreshed at 90% of its life
    cat = _catalog(fake, credential=f"me:{SECRET}", scope="catalog custom", audience="aud")
    token_posts = fake.seen("POST", "oauth/tokens")
    assert len(token_posts) == 1
    form = {
        k: unquote(v)
        for k, v in (kv.split("=", 1) for kv in token_posts[0].body.decode().split("&"))
    }
    assert form["grant_type"] == "client_credentials"
    assert form["client_id"] == "me" and form["audience"] == "aud"
    assert form["scope"].replace("+", " ") == "catalog custom"
    assert token_posts[0].headers["Content-Type"] == "application/x-www-form-urlencoded"
    import time

    time.sleep(0.5)
    cat.create_namespace("db")  # the old token expired: a new one was fetched first
    assert len(fake.seen("POST", "oauth/tokens")) == 2
    # The config request used the first token, the namespace request the second.
    assert fake.seen("GET", "config")[0].headers["Authorization"] == "Bearer tok-0"
    assert fake.seen("POST", "^/v1/namespaces$")[0].headers["Authorization"] == "Bearer tok-1"


def test_oauth2_refresh_on_401_then_retry_once(fake: FakeRest) -> None:
    fake.clients = {f"me:{SECRET}": 3600}
    cat = _catalog(fake, credential=f"me:{SECRET}")
    fake._tokens.clear()  # the server forgot (expired) every token
    cat.create_namespace("db")
    assert len(fake.seen("POST", "oauth/tokens")) == 2
    assert len(fake.seen("POST", "^/v1/namespaces$")) == 2  # the 401, then the retry


def test_static_token(fake: FakeRest) -> None:
    fake.static_tokens = {SECRET}
    cat = _catalog(fake, token=SECRET)
    cat.create_namespace("db")
    assert fake.seen("POST", "namespaces")[0].headers["Authorization"] == f"Bearer {SECRET}"
    with pytest.raises(exc.UnauthorizedError):
        _catalog(fake, token="wrong")


def test_credentials_never_shown(fake: FakeRest, caplog: pytest.LogCaptureFixture) -> None:
    fake.clients = {f"me:{SECRET}": 3600}
    caplog.set_level(logging.DEBUG)
    cat = _catalog(fake, credential=f"me:{SECRET}")
    texts = [repr(cat), repr(cat._http), repr(cat._http.auth), str(cat)]
    fake.fail("GET", "namespaces", 503, 503, 503, 503, 503, 503)
    with pytest.raises(exc.ServiceUnavailableError) as e:
        cat.list_namespaces()
    texts.append(str(e.value))
    with pytest.raises(exc.OAuthError) as e2:
        _catalog(fake, credential="me:wrong-" + SECRET)
    texts.append(str(e2.value))
    texts.append(caplog.text)
    for text in texts:
        assert SECRET not in text and "tok-" not in text


# ---- retries


def test_get_retried_on_503_and_429_with_retry_after(fake: FakeRest) -> None:
    cat = _catalog(fake)
    cat.create_namespace("db")
    fake.fail("GET", "namespaces", 503, (429, None, {"Retry-After": "0"}), 502)
    assert cat.list_namespaces() == [("db",)]
    assert len(fake.seen("GET", "^/v1/namespaces$")) == 4


def test_retries_give_up(fake: FakeRest) -> None:
    cat = _catalog(fake, **{"rest.max-retries": "2"})
    fake.fail("GET", "namespaces", 503, 503, 503, 503)
    with pytest.raises(exc.ServiceUnavailableError, match="injected"):
        cat.list_namespaces()
    assert len(fake.seen("GET", "^/v1/namespaces$")) == 3


@pytest.mark.parametrize("uri", ["http://", "http://[::1", "http://a b/"])
def test_malformed_uri_is_a_frazil_error(uri: str) -> None:
    # requests refuses these URLs before sending anything; the caller sees a frazil error
    # naming the request, not requests.exceptions.InvalidURL.
    with pytest.raises(exc.RESTError, match="GET /v1/config: the request failed"):
        load_catalog("bad", type="rest", uri=uri)


def test_plain_post_not_retried_on_503(fake: FakeRest) -> None:
    cat = _catalog(fake)
    fake.fail("POST", "namespaces", 503)
    with pytest.raises(exc.ServiceUnavailableError):
        cat.create_namespace("db")
    assert len(fake.seen("POST", "namespaces")) == 1


def _table(fake: FakeRest, **props: str) -> tuple[RestCatalog, Any]:
    cat = _catalog(fake, **props)
    cat.create_namespace_if_not_exists("db")
    t = cat.create_table("db.t", SCHEMA, partition_spec=SPEC)
    return cat, t


def _apply_then(status: int) -> Any:
    """A fault that commits for real and then answers ``status`` (the answer was lost)."""

    def fault(fake: FakeRest, rec: Recorded) -> Any:
        parts = [unquote(p) for p in rec.path.removeprefix("/v1/").split("/")]
        fake._route(rec, parts)
        return status, {"error": {"message": "gateway lost it", "type": "X", "code": status}}, {}

    return fault


def test_commit_5xx_that_landed_is_a_success(fake: FakeRest) -> None:
    cat, t = _table(fake)
    fake.fail("POST", "tables/t$", _apply_then(502))
    t.append(_data([1, 2], ["a", "b"]))
    assert len(fake.seen("POST", "tables/t$")) == 1  # not retried
    assert _rows(cat.load_table("db.t").scan().to_arrow()) == [(1, "a"), (2, "b")]
    assert len(t.snapshots()) == 1


def test_commit_5xx_that_did_not_land_is_unknown(fake: FakeRest) -> None:
    _, t = _table(fake)
    fake.fail("POST", "tables/t$", 500)
    with pytest.raises(exc.CommitStateUnknownError, match="injected"):
        t.append(_data([1], ["a"]))
    assert len(fake.seen("POST", "tables/t$")) == 1
    # Nothing was cleaned up: the written data file is still there.
    files = list(Path(t.location()).rglob("*.parquet"))
    assert files


def test_commit_409_retried_by_the_transaction(fake: FakeRest) -> None:
    cat, t = _table(fake)
    other = cat.load_table("db.t")
    other.append(_data([1], ["a"]))
    t.append(_data([2], ["b"]))  # stale handle: rebased, committed
    assert _rows(cat.load_table("db.t").scan().to_arrow()) == [(1, "a"), (2, "b")]
    fake.fail(
        "POST",
        "tables/t$",
        (409, {"error": {"message": "conflict", "type": "CommitFailedException", "code": 409}}, {}),
    )
    t.append(_data([3], ["c"]))
    assert len(cat.load_table("db.t").snapshots()) == 3


def test_idempotency_key_makes_commit_retry_safe(fake: FakeRest) -> None:
    fake.extra_config = {"idempotency-key-lifetime": "PT30M"}
    _, t = _table(fake)
    fake.fail("POST", "tables/t$", 503)
    t.append(_data([1], ["a"]))
    posts = fake.seen("POST", "tables/t$")
    assert len(posts) == 2
    keys = {p.headers["Idempotency-Key"] for p in posts}
    assert len(keys) == 1 and len(next(iter(keys))) == 36
    assert next(iter(keys))[14] == "7"  # a UUIDv7


# ---- operations, pagination, errors


def test_namespaces_and_tables_paginated(fake: FakeRest) -> None:
    cat = _catalog(fake, **{"rest.page-size": "2"})
    for ns in ("a", "b", "c", ("a", "x"), ("a", "y"), ("a", "z")):
        cat.create_namespace(ns, {"k": "v"})
    assert sorted(cat.list_namespaces()) == [("a",), ("b",), ("c",)]
    assert sorted(cat.list_namespaces("a")) == [("a", "x"), ("a", "y"), ("a", "z")]
    assert fake.seen("GET", "namespaces")[-1].query["parent"] == "a"
    nested = fake.seen("GET", "namespaces")
    assert any("pageToken" in r.query for r in nested)
    for i in range(5):
        cat.create_table(("a", "x", f"t{i}"), SCHEMA)
    assert sorted(cat.list_tables(("a", "x"))) == [("a", "x", f"t{i}") for i in range(5)]
    assert any(r.path == "/v1/namespaces/a%1Fx/tables" for r in fake.requests)
    assert cat.load_namespace_properties("b")["k"] == "v"
    summary = cat.update_namespace_properties("b", {"k", "gone"}, {"n": "1"})
    assert summary.removed == ["k"] and summary.updated == ["n"] and summary.missing == ["gone"]


def test_table_lifecycle_and_errors(fake: FakeRest) -> None:
    cat, t = _table(fake)
    t.append(_data([1], ["a"]))
    with pytest.raises(exc.TableAlreadyExistsError):
        cat.create_table("db.t", SCHEMA)
    with pytest.raises(exc.NoSuchTableError):
        cat.load_table("db.nope")
    with pytest.raises(exc.NoSuchNamespaceError):
        cat.list_tables("nope")
    with pytest.raises(exc.NamespaceNotEmptyError):
        cat.drop_namespace("db")
    assert cat.table_exists("db.t") and not cat.table_exists("db.nope")
    moved = cat.rename_table("db.t", "db.u")
    assert _rows(moved.scan().to_arrow()) == [(1, "a")]
    cat.drop_table("db.u")
    reg = cat.register_table("db.back", moved.metadata_location)
    assert _rows(reg.scan().to_arrow()) == [(1, "a")]
    cat.drop_table("db.back", purge=True)
    assert fake.seen("DELETE", "tables/back")[0].query == {"purgeRequested": "true"}
    err = exc.NoSuchTableError
    fake.fail(
        "GET",
        "tables/x",
        (
            404,
            {"error": {"message": "custom msg", "type": "NoSuchTableException", "code": 404}},
            {},
        ),
    )
    with pytest.raises(err, match="custom msg"):
        cat.load_table("db.x")


def test_snapshots_loading_mode(fake: FakeRest) -> None:
    cat, _ = _table(fake)
    cat.load_table("db.t", snapshots="refs")
    assert fake.seen("GET", "tables/t$")[-1].query == {"snapshots": "refs"}


# ---- staged create, multi-table transactions, metrics


def test_staged_create_sends_assert_create_and_the_metadata_updates(fake: FakeRest) -> None:
    cat = _catalog(fake)
    cat.create_namespace("db")
    fake.fail("POST", "tables$", _stage_ok)
    tx = cat.create_table_transaction("db.s", SCHEMA, partition_spec=SPEC)
    assert json.loads(fake.seen("POST", "tables$")[0].body)["stage-create"] is True
    tx.append(_data([1], ["a"]))
    fake.fail("POST", "tables/s$", (500, None, {}))
    with pytest.raises(exc.CommitStateUnknownError):
        tx.commit_transaction()
    sent = json.loads(fake.seen("POST", "tables/s$")[0].body)
    assert sent["requirements"] == [{"type": "assert-create"}]
    actions = [u["action"] for u in sent["updates"]]
    assert actions[:9] == [
        "assign-uuid", "upgrade-format-version", "add-schema", "set-current-schema",
        "add-spec", "set-default-spec", "add-sort-order", "set-default-sort-order",
        "set-location",
    ]  # fmt: skip
    assert "add-snapshot" in actions and "set-snapshot-ref" in actions


def _stage_ok(fake: FakeRest, rec: Recorded) -> Any:
    """Answers a staged create with fresh metadata and no location (the fake cannot stage)."""
    from frazil.table.update import new_table_metadata

    req = wire.CreateTableRequest.from_json(json.loads(rec.body))
    md = new_table_metadata(req.schema, str(fake.warehouse / "db" / req.name), req.partition_spec)
    return 200, wire.load_table_result(None, md), {}


def test_multi_table_transaction(fake: FakeRest) -> None:
    cat = _catalog(fake)
    cat.create_namespace("db")
    a = cat.create_table("db.a", SCHEMA)
    cat.create_table("db.b", SCHEMA)
    a.append(_data([1], ["x"]))
    with cat.transaction() as tx:
        tx.table("db.a").delete("id = 1")
        tx.table("db.b").append(_data([2], ["y"]))
    body = json.loads(fake.seen("POST", "transactions/commit")[0].body)
    assert [c["identifier"]["name"] for c in body["table-changes"]] == ["a", "b"]
    assert _rows(cat.load_table("db.a").scan().to_arrow()) == []
    assert _rows(cat.load_table("db.b").scan().to_arrow()) == [(2, "y")]
    # A conflict on one table: refreshed, rebased and retried as a whole.
    stale = cat.load_table("db.b")
    with cat.transaction() as tx:
        tx.table("db.a").append(_data([3], ["z"]))
        tx.table("db.b").append(_data([4], ["w"]))
        stale.append(_data([5], ["v"]))  # another writer commits first
    assert len(fake.seen("POST", "transactions/commit")) == 2  # rebased before the first try
    assert _rows(cat.load_table("db.b").scan().to_arrow()) == [(2, "y"), (4, "w"), (5, "v")]
    assert _rows(cat.load_table("db.a").scan().to_arrow()) == [(3, "z")]
    conflict = {"error": {"message": "lost", "type": "CommitFailedException", "code": 409}}
    fake.fail("POST", "transactions/commit", (409, conflict, {}))
    with cat.transaction() as tx:
        tx.table("db.a").append(_data([6], ["u"]))
        tx.table("db.b").append(_data([7], ["t"]))
    assert len(fake.seen("POST", "transactions/commit")) == 4  # the 409, then the retry
    assert _rows(cat.load_table("db.a").scan().to_arrow()) == [(3, "z"), (6, "u")]


def test_multi_table_transaction_fails_whole(fake: FakeRest) -> None:
    cat = _catalog(fake)
    cat.create_namespace("db")
    cat.create_table("db.a", SCHEMA)
    cat.create_table("db.b", SCHEMA)
    with pytest.raises(exc.ValidationError), cat.transaction() as tx:
        tx.table("db.a").append(_data([1], ["x"]))
        tx.table("db.b").append(_data([2], ["y"]))
        raise exc.ValidationError("user aborted")
    assert not fake.seen("POST", "transactions/commit")
    assert not cat.load_table("db.a").snapshots()


def test_metrics_only_when_advertised(fake: FakeRest) -> None:
    cat, t = _table(fake)
    report = {"report-type": "commit-report", "table-name": "db.t", "snapshot-id": 1,
              "sequence-number": 1, "operation": "append", "metrics": {}}  # fmt: skip
    cat.report_metrics(t, report)  # in the default endpoints
    assert len(fake.seen("POST", "metrics")) == 1
    fake.fail("POST", "metrics", 500)
    cat.report_metrics(t, report)  # a failure is swallowed
    fake.endpoints = [e for e in wire.DEFAULT_ENDPOINTS if "metrics" not in e]
    _catalog(fake).report_metrics(t, report)
    assert len(fake.seen("POST", "metrics")) == 2


# ---- vended credentials, SigV4


def test_vended_credentials_reach_the_table_io(fake: FakeRest) -> None:
    fake.vended = {"s3.access-key-id": "AKIAVENDED", "s3.endpoint": "http://vended:9000"}
    cat, t = _table(fake, **{"s3.region": "eu-west-1"})
    loaded = cat.load_table("db.t")
    for table in (t, loaded):
        assert table.io.properties["s3.access-key-id"] == "AKIAVENDED"
        assert table.io.properties["s3.endpoint"] == "http://vended:9000"
        assert table.io.properties["s3.region"] == "eu-west-1"
    # Table metadata still never configures storage.
    loaded.transaction().set_properties({"s3.endpoint": "http://evil"}).commit_transaction()
    assert cat.load_table("db.t").io.properties["s3.endpoint"] == "http://vended:9000"


def test_vended_credentials_refreshed_near_expiry(fake: FakeRest) -> None:
    fake.endpoints = list(wire.ENDPOINTS)
    fake.vended = {"s3.session-token": "old", "s3.session-token-expires-at-ms": "1000"}
    cat, _ = _table(fake)
    fake.vended = {"s3.session-token": "new", "s3.session-token-expires-at-ms": "99999999999999"}
    t = cat.load_table("db.t")  # the load's own config would do; make it expired again
    fake.vended = {"s3.session-token": "old", "s3.session-token-expires-at-ms": "1000"}
    t = cat.load_table("db.t")
    assert fake.seen("GET", "/credentials$")
    assert t.io.properties["s3.session-token"] == "old"  # the credentials answer (same dict)
    fake.vended = {"s3.session-token": "fresh"}
    cat.refresh_credentials(t)
    assert t.io.properties["s3.session-token"] == "fresh"


def test_sigv4_signs_requests(fake: FakeRest, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("botocore")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    fake.static_tokens = {"bearer-tok"}
    sigv4 = {
        "rest.sigv4-enabled": "true",
        "rest.signing-region": "us-west-2",
        "rest.signing-name": "glue",
    }
    cat = _catalog(fake, token="bearer-tok", **sigv4)
    cat.create_namespace("db")
    h = fake.seen("POST", "namespaces")[0].headers
    assert h["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/us-west-2/glue/aws4_request" in h["Authorization"]
    assert "X-Amz-Date" in h and "x-amz-content-sha256" in {k.lower() for k in h}
    assert h["Original-Authorization"] == "Bearer bearer-tok"


# ---- server-side planning


@pytest.mark.parametrize("async_planning", [False, True])
def test_server_side_planning_equals_client_side(fake: FakeRest, async_planning: bool) -> None:
    fake.endpoints = list(wire.ENDPOINTS)
    fake.async_planning = async_planning
    client, t = _table(fake, **{"write.delete.mode": "merge-on-read"})
    t.transaction().set_properties({"write.delete.mode": "merge-on-read",
                                    "format-version": "2"}).commit_transaction()  # fmt: skip
    t.append(_data([1, 2, 3], ["a", "a", "b"]))
    t.append(_data([4, 5], ["b", "c"]))
    t.delete("id = 2")
    server = _catalog(fake, **{"rest.scan-planning": "server"})
    st = server.load_table("db.t")
    ct = client.load_table("db.t")
    n_plan = len(fake.seen("POST", "/plan$"))
    for flt in ("true", "category = 'a'", "id > 3"):
        s_scan, c_scan = st.scan(row_filter=flt), ct.scan(row_filter=flt)
        s_files = sorted((x.file.file_path, len(x.delete_files)) for x in s_scan.plan_files())
        c_files = sorted((x.file.file_path, len(x.delete_files)) for x in c_scan.plan_files())
        assert s_files == c_files
        assert _rows(s_scan.to_arrow()) == _rows(c_scan.to_arrow())
        assert s_scan.count() == c_scan.count()
    assert len(fake.seen("POST", "/plan$")) > n_plan
    if async_planning:
        assert fake.seen("GET", "/plan/") and fake.seen("POST", "/tasks$")
    auto = _catalog(fake, **{"rest.scan-planning": "auto"}).load_table("db.t")
    assert _rows(auto.scan().to_arrow()) == _rows(ct.scan().to_arrow())


def _reports(fake: FakeRest, kind: str) -> list[dict[str, Any]]:
    bodies = [json.loads(r.body) for r in fake.seen("POST", "/metrics$")]
    return [b for b in bodies if b.get("report-type") == kind]


def _is_counter(m: Any) -> bool:
    return set(m) == {"unit", "value"} and m["unit"] in ("count", "bytes")


def test_scan_and_commit_reports_sent_in_the_background(fake: FakeRest) -> None:
    cat, t = _table(fake)
    t.append(_data([1, 2, 3], ["a", "b", "a"]))
    cat.flush_metrics()
    (commit,) = _reports(fake, "commit-report")
    snapshot = t.current_snapshot()
    assert commit["table-name"] == "db.t"
    assert commit["snapshot-id"] == snapshot.snapshot_id
    assert commit["sequence-number"] == snapshot.sequence_number
    assert commit["operation"] == "append"
    m = commit["metrics"]
    assert m["added-records"] == {"unit": "count", "value": 3}
    assert m["added-data-files"] == {"unit": "count", "value": 2}  # two partitions
    assert m["added-files-size-in-bytes"]["unit"] == "bytes"
    assert set(m["total-duration"]) == {"time-unit", "count", "total-duration"}
    assert all(_is_counter(v) for k, v in m.items() if k != "total-duration")

    scan = t.scan("id > 1").select("id")
    rows = scan.to_arrow()
    cat.flush_metrics()
    (report,) = _reports(fake, "scan-report")
    assert set(report) >= {
        "table-name", "snapshot-id", "filter", "schema-id", "projected-field-ids",
        "projected-field-names", "metrics",
    }  # fmt: skip
    assert report["snapshot-id"] == snapshot.snapshot_id
    assert report["filter"] == {"type": "gt", "term": "id", "value": 1}
    assert report["schema-id"] == t.schema().schema_id
    assert report["projected-field-ids"] == [1] and report["projected-field-names"] == ["id"]
    sm = report["metrics"]
    tasks = list(scan.plan_files())
    assert sm["result-data-files"] == {"unit": "count", "value": len(tasks)}
    assert sm["total-file-size-in-bytes"]["value"] == sum(x.file.file_size_in_bytes for x in tasks)
    assert sm["result-delete-files"]["value"] == 0
    assert sm["total-planning-duration"]["time-unit"] == "nanoseconds"
    assert rows.num_rows == 2
    # plan_files() above and plan_files_arrow() report too, the Arrow plan with the same counts.
    t.scan("id > 1").plan_files_arrow()
    cat.flush_metrics()
    reports = _reports(fake, "scan-report")
    assert len(reports) == 3
    assert reports[2]["metrics"]["result-data-files"] == sm["result-data-files"]
    assert reports[2]["metrics"]["total-file-size-in-bytes"] == sm["total-file-size-in-bytes"]


def test_reports_never_fail_or_hold_up_the_operation(fake: FakeRest) -> None:
    import threading

    cat, t = _table(fake)
    fake.fail("POST", "/metrics$", 500)
    t.append(_data([1], ["a"]))  # the report fails: the commit does not
    cat.flush_metrics()
    assert len(fake.seen("POST", "/metrics$")) == 1
    # A server that holds the report: the commit and the scan return before it is answered.
    release = threading.Event()

    def hold(fake: FakeRest, rec: Recorded) -> Any:
        release.wait(30)
        return 204, None, {}

    fake.fail("POST", "/metrics$", hold)
    t.append(_data([2], ["b"]))
    assert _rows(t.scan().to_arrow()) == [(1, "a"), (2, "b")]
    assert not release.is_set()
    release.set()
    cat.flush_metrics()
    assert len(_reports(fake, "commit-report")) == 2
    # No metrics endpoint advertised: nothing is sent.
    fake.endpoints = [e for e in wire.DEFAULT_ENDPOINTS if "metrics" not in e]
    before = len(fake.seen("POST", "/metrics$"))
    cat2 = _catalog(fake)
    t2 = cat2.load_table("db.t")
    t2.append(_data([3], ["c"]))
    t2.scan().to_arrow()
    cat2.flush_metrics()
    assert len(fake.seen("POST", "/metrics$")) == before
