"""Concurrent commits through Glue. moto ignores UpdateTable's VersionId, so the proxy in front of
it (aws_moto.GlueEmulator) EMULATES GLUE's optimistic lock: an update carrying a stale version is
answered with ConcurrentModificationException, the check and the update applied atomically.

- Rounds: every writer has read the same version when the updates are released together; Glue
  lets exactly one through, the others' CommitFailedError leaves nothing behind.
- With the retry loop: every append of every writer lands exactly once, in one linear history.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from aws_moto import GlueEmulator, client_props

from frazil.catalog import load_catalog
from frazil.catalog.glue import GlueCatalog
from frazil.exceptions import CommitFailedError

pytestmark = pytest.mark.slow

WRITERS = 4


@contextmanager
def _held_updates(emulator: GlueEmulator, parties: int) -> Iterator[threading.Barrier]:
    """Holds each UpdateTable until ``parties`` of them have arrived: all were built on the
    same version read."""
    barrier = threading.Barrier(parties, timeout=60)
    real = emulator.handle

    def handle(target: str, body: bytes, headers: dict[str, str]) -> Any:
        if target.endswith(".UpdateTable"):
            barrier.wait()
        return real(target, body, headers)

    emulator.handle = handle  # type: ignore[method-assign]
    try:
        yield barrier
    finally:
        emulator.handle = real  # type: ignore[method-assign]


def _writer_catalog(emulator: GlueEmulator, warehouse: str) -> GlueCatalog:
    cat = load_catalog("w", type="glue", warehouse=warehouse, **client_props("glue", emulator.url))
    assert isinstance(cat, GlueCatalog)
    return cat


def _batch(writer: int, n: int) -> pa.Table:
    return pa.table({"writer": pa.array([writer], pa.int32()), "n": pa.array([n], pa.int32())})


def test_one_winner_per_round(
    glue: GlueCatalog, glue_emulator: GlueEmulator, database: str
) -> None:
    name = f"{database}.rounds"
    glue.create_table(name, _batch(0, 0).schema, properties={"commit.retry.num-retries": "0"})
    catalogs = [
        _writer_catalog(glue_emulator, glue.properties["warehouse"]) for _ in range(WRITERS)
    ]
    rounds = 5
    winners = []
    for r in range(rounds):
        tables = [c.load_table(name) for c in catalogs]
        assert len({t.metadata_location for t in tables}) == 1
        outcomes: list[Any] = [None] * WRITERS
        conflicts_before = glue_emulator.conflicts

        def write(
            i: int, r: int = r, tables: list[Any] = tables, out: list[Any] = outcomes
        ) -> None:
            try:
                tables[i].append(_batch(i, r))
                out[i] = "won"
            except CommitFailedError as e:
                out[i] = e

        with _held_updates(glue_emulator, WRITERS):
            threads = [threading.Thread(target=write, args=(i,)) for i in range(WRITERS)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
        won = [i for i, o in enumerate(outcomes) if o == "won"]
        lost = [o for o in outcomes if isinstance(o, CommitFailedError)]
        assert len(won) == 1 and len(lost) == WRITERS - 1, outcomes
        assert glue_emulator.conflicts - conflicts_before == WRITERS - 1
        winners.append((won[0], r))
    table = glue.load_table(name)
    rows = table.scan().to_arrow()
    got = zip(rows.column("writer").to_pylist(), rows.column("n").to_pylist(), strict=True)
    assert sorted(got) == sorted(winners)
    # One metadata file per landed commit (the create's and each round's winner's): the losers'
    # files were deleted.
    assert (
        len(list(Path(table.metadata.location, "metadata").glob("*.metadata.json"))) == rounds + 1
    )


def test_no_lost_commit_with_retries(
    glue: GlueCatalog, glue_emulator: GlueEmulator, database: str
) -> None:
    name = f"{database}.retries"
    glue.create_table(
        name,
        _batch(0, 0).schema,
        properties={"commit.retry.min-wait-ms": "5", "commit.retry.max-wait-ms": "100"},
    )
    appends = 6
    errors: list[BaseException] = []
    conflicts_before = glue_emulator.conflicts

    def write(i: int) -> None:
        cat = _writer_catalog(glue_emulator, glue.properties["warehouse"])
        try:
            for n in range(appends):
                cat.load_table(name).append(_batch(i, n))
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors
    table = glue.load_table(name)
    rows = table.scan().to_arrow()
    got = sorted(zip(rows.column("writer").to_pylist(), rows.column("n").to_pylist(), strict=True))
    assert got == [(i, n) for i in range(WRITERS) for n in range(appends)]
    # One linear history: each snapshot's parent is the one before it.
    snapshots = sorted(table.metadata.snapshots, key=lambda s: s.sequence_number)
    assert len(snapshots) == WRITERS * appends
    for parent, child in itertools.pairwise(snapshots):
        assert child.parent_snapshot_id == parent.snapshot_id
    print(f"emulated Glue conflicts during the run: {glue_emulator.conflicts - conflicts_before}")
