"""Concurrent writers through ``frazil serve``: 8 processes (frazil's REST client, PyIceberg's
``RestCatalog`` and the Java reference's ``RESTCatalog``) append 25 snapshots each to one table,
on the SQLite catalog and on PostgreSQL. The outcome must be one linear history of 200 snapshots
holding every row exactly once, as read by frazil and by PyIceberg (the oracle)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import java_reference
import pytest
from peers import import_peer, peer_missing
from rest_server_process import ServerProcess

pytestmark = [pytest.mark.interop, pytest.mark.slow]
import_peer("pyiceberg.catalog.rest")

HERE = Path(__file__).resolve().parent
WRITERS = HERE / "rest_writers.py"
APPENDER_SOURCE = HERE / "java" / "RestAppender.java"
JDK_REST_CATALOG = HERE / "java" / "JdkRestCatalog.java"
APPENDS = 25
# (client, how many processes): 8 writers in all.
MIX = (("frazil", 3), ("pyiceberg", 3), ("java", 2))
RETRY_PROPERTIES = {
    # Every client reads these (Java's and PyIceberg's commit retries; frazil's time bound).
    "commit.retry.num-retries": "1000",
    "commit.retry.min-wait-ms": "10",
    "commit.retry.max-wait-ms": "500",
    "commit.retry.total-timeout-ms": "600000",
}


@pytest.fixture(scope="module")
def java_appender() -> list[str]:
    try:
        classes = java_reference.compile_java(
            APPENDER_SOURCE, java_reference.program_classpath(), [JDK_REST_CATALOG]
        )
        java = java_reference._java_tool("java")
    except java_reference.ReferenceUnavailable as e:
        peer_missing(f"the Java reference is unavailable: {e}")
    cp = os.pathsep.join([str(classes), *java_reference.program_classpath()])
    return [java, "-Xmx512m", "-cp", cp, "RestAppender"]


def _pyiceberg_props(uri: str, credential: str) -> dict[str, str]:
    # The token endpoint named explicitly: PyIceberg warns (an error here) when it guesses it.
    return {"uri": uri, "credential": credential, "oauth2-server-uri": f"{uri}/v1/oauth/tokens"}


def _create_table(uri: str, credential: str) -> None:
    import pyarrow as pa
    from pyiceberg.catalog.rest import RestCatalog

    catalog = RestCatalog("setup", **_pyiceberg_props(uri, credential))
    catalog.create_namespace("race")
    schema = pa.schema(
        [
            pa.field("writer", pa.int32(), nullable=True),
            pa.field("seq", pa.int32(), nullable=True),
            pa.field("payload", pa.string(), nullable=True),
        ]
    )
    catalog.create_table("race.events", schema, properties=RETRY_PROPERTIES)


def _run_writers(uri: str, credential: str, java_cmd: list[str]) -> None:
    procs: list[tuple[str, subprocess.Popen[str]]] = []
    writer = 0
    env = dict(os.environ)
    for client, n in MIX:
        for _ in range(n):
            if client == "java":
                cmd = [*java_cmd, uri, credential, "race", "events", str(writer), str(APPENDS)]
            else:
                cmd = [
                    sys.executable,
                    str(WRITERS),
                    client,
                    uri,
                    credential,
                    "race",
                    "events",
                    str(writer),
                    str(APPENDS),
                ]
            procs.append(
                (
                    f"{client} writer {writer}",
                    subprocess.Popen(
                        cmd,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        text=True,
                        env=env,
                    ),
                )
            )
            writer += 1
    failures = []
    for label, proc in procs:
        out, err = proc.communicate(timeout=900)
        done = out.count("COMMITTED")
        if proc.returncode != 0 or done != APPENDS:
            failures.append(f"{label}: exit {proc.returncode}, {done} commits\n{err[-3000:]}")
    assert not failures, "\n\n".join(failures)


def _check_history_and_rows(uri: str, credential: str) -> None:
    from pyiceberg.catalog.rest import RestCatalog

    from frazil.catalog import load_catalog

    expected = Counter((w, s) for w in range(sum(n for _, n in MIX)) for s in range(APPENDS))

    table = load_catalog("check", type="rest", uri=uri, credential=credential).load_table(
        "race.events"
    )
    snapshots = {s.snapshot_id: s for s in table.metadata.snapshots}
    assert len(snapshots) == len(expected)
    # One linear history: the parent chain from the current snapshot visits every snapshot.
    chain = []
    current = table.metadata.current_snapshot_id
    while current is not None:
        chain.append(current)
        current = snapshots[current].parent_snapshot_id
    assert len(chain) == len(expected) == len(set(chain))
    assert {snapshots[s].operation for s in chain} == {"append"}

    rows = table.scan().to_arrow()
    got = Counter(zip(rows["writer"].to_pylist(), rows["seq"].to_pylist(), strict=True))
    assert got == expected

    # The oracle: PyIceberg reads the same rows through the same server.
    peer = RestCatalog("peer", **_pyiceberg_props(uri, credential)).load_table("race.events")
    peer_rows = peer.scan().to_arrow()
    peer_got = Counter(
        zip(peer_rows["writer"].to_pylist(), peer_rows["seq"].to_pylist(), strict=True)
    )
    assert peer_got == expected
    assert len(peer.metadata.snapshots) == len(expected)


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_mixed_clients_append_through_frazil_serve(
    store: str, tmp_path: Path, java_appender: list[str], request: pytest.FixtureRequest
) -> None:
    catalog_uri = None
    if store == "postgresql":
        catalog_uri = request.getfixturevalue("postgres_url")
    with ServerProcess(tmp_path / "warehouse", catalog_uri=catalog_uri) as server:
        _create_table(server.uri, server.credential)
        _run_writers(server.uri, server.credential, java_appender)
        _check_history_and_rows(server.uri, server.credential)
