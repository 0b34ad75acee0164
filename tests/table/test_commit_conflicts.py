"""Row-level changes against a table that moved: a handle loaded before another writer's commit
(stale), and a commit that loses the race while it is being built (in the commit window).

A delete, overwrite or upsert by filter is evaluated against the table as it is when the commit
is built (the handle is refreshed first), and a retry re-validates its plan against the new head
and plans it again when it no longer holds, as the Java reference's snapshot producers do. The
expected rows are computed here from the rows written, not by frazil's filter evaluation."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from row_data import rows

from frazil.catalog import Catalog, load_catalog
from frazil.exceptions import CommitFailedError
from frazil.manifest import read_manifest, read_manifest_list
from frazil.manifest.content_file import DataFileContent, data_files_from_entries
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.transaction import RetryPolicy
from frazil.types import DoubleType, LongType, NestedField, StringType

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "s", StringType()),
    NestedField(3, "x", DoubleType()),
    NestedField(4, "p", LongType()),
    identifier_field_ids=[1],
)
MODES = ["copy-on-write", "merge-on-read"]
KINDS = ["sqlite", "filesystem"]


def open_catalog(kind: str, warehouse: Path) -> Catalog:
    return load_catalog(
        "c", type="sql" if kind == "sqlite" else "filesystem", warehouse=str(warehouse)
    )


@pytest.fixture(params=KINDS)
def warehouse(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, Path]:
    kind = str(request.param)
    open_catalog(kind, tmp_path).create_namespace("db")
    return kind, tmp_path


def make(warehouse: tuple[str, Path], version: int = 3, mode: str = "merge-on-read") -> Table:
    kind, path = warehouse
    t = open_catalog(kind, path).create_table(
        "db.t",
        SCHEMA,
        properties={
            "format-version": str(version),
            "write.delete.mode": mode,
            "write.merge.mode": mode,
        },
    )
    t.append(rows(0, 10))
    return t


def other_writer(warehouse: tuple[str, Path]) -> Table:
    """The same table through a catalog of its own (another process, as far as frazil knows)."""
    return open_catalog(*warehouse).load_table("db.t")


def ids(t: Table) -> list[int]:
    return sorted(t.refresh().scan().to_arrow().column("id").to_pylist())


def commit_window(t: Table, action: Callable[[], None]) -> None:
    """Runs ``action`` (another writer's commit) when ``t``'s next commit reaches the catalog,
    after its plan was built: that commit then loses the race and must retry."""
    catalog = t.catalog
    real = catalog.commit_table
    state = {"done": False}

    def commit_table(*args: Any, **kwargs: Any) -> Any:
        if not state["done"]:
            state["done"] = True
            action()
        return real(*args, **kwargs)

    catalog.commit_table = commit_table  # type: ignore[method-assign]


def live_files(t: Table) -> list[Any]:
    snap = t.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    out = []
    for row in read_manifest_list(t.io.read(snap.manifest_list)).to_pylist():
        entries = read_manifest(t.io.read(row["manifest_path"]), row)
        out += [
            f
            for f in data_files_from_entries(entries, row["partition_spec_id"])
            if f.extra["status"] != 2
        ]
    return out


# ---- stale handles


@pytest.mark.parametrize("mode", MODES)
def test_stale_handle_delete_sees_rows_appended_meanwhile(
    warehouse: tuple[str, Path], mode: str
) -> None:
    t = make(warehouse, mode=mode)
    other_writer(warehouse).append(rows(10, 20))
    t.delete("id = 12")  # the row exists only in the other writer's snapshot
    assert ids(t) == [i for i in range(20) if i != 12]


@pytest.mark.parametrize("mode", MODES)
def test_stale_handle_overwrite_sees_rows_appended_meanwhile(
    warehouse: tuple[str, Path], mode: str
) -> None:
    t = make(warehouse, mode=mode)
    other_writer(warehouse).append(rows(10, 20))
    t.overwrite(rows(100, 101), overwrite_filter="id >= 15")
    assert ids(t) == [*range(15), 100]


@pytest.mark.parametrize("mode", MODES)
def test_stale_handle_upsert_updates_a_key_appended_meanwhile(
    warehouse: tuple[str, Path], mode: str
) -> None:
    t = make(warehouse, mode=mode)
    other_writer(warehouse).append(rows(10, 20))
    source = pa.table({"id": pa.array([12, 50], pa.int64()), "s": ["new", "new"]})
    result = t.upsert(source)
    assert (result.rows_updated, result.rows_inserted) == (1, 1)
    got = t.refresh().scan().to_arrow().sort_by("id").to_pylist()
    assert [r["id"] for r in got] == [*range(20), 50]  # no duplicate key 12
    assert [r["s"] for r in got if r["id"] in (12, 50)] == ["new", "new"]


def test_stale_transaction_delete_is_planned_on_the_current_table(
    warehouse: tuple[str, Path],
) -> None:
    t = make(warehouse)
    other_writer(warehouse).append(rows(10, 20))
    with t.transaction() as tx:
        tx.delete("id = 12")
    assert ids(t) == [i for i in range(20) if i != 12]


# ---- losing the race while the commit is built


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("mode", MODES)
def test_delete_that_matched_nothing_is_planned_again_after_losing_the_race(
    warehouse: tuple[str, Path], version: int, mode: str
) -> None:
    t = make(warehouse, version, mode)
    commit_window(t, lambda: other_writer(warehouse).append(rows(10, 20)))
    t.delete("id = 12")
    assert ids(t) == [i for i in range(20) if i != 12]


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("mode", MODES)
def test_delete_is_planned_again_when_a_matching_row_lands_first(
    warehouse: tuple[str, Path], version: int, mode: str
) -> None:
    t = make(warehouse, version, mode)
    commit_window(t, lambda: other_writer(warehouse).append(rows(5, 6)))  # a second id 5
    t.delete("id = 5")
    assert ids(t) == [i for i in range(10) if i != 5]


@pytest.mark.parametrize("mode", MODES)
def test_delete_keeps_its_plan_when_the_concurrent_append_cannot_match(
    warehouse: tuple[str, Path], mode: str
) -> None:
    t = make(warehouse, mode=mode)
    commit_window(t, lambda: other_writer(warehouse).append(rows(100, 110)))
    t.delete("id = 3")
    assert ids(t) == [*(i for i in range(10) if i != 3), *range(100, 110)]
    # one snapshot per commit: the other writer's append, then the delete on top of it
    history = [s.operation for s in t.snapshots()]
    assert history[:2] == ["append", "append"] and len(history) == 3


@pytest.mark.parametrize("mode", MODES)
def test_deletes_of_one_file_racing_both_land(warehouse: tuple[str, Path], mode: str) -> None:
    t = make(warehouse, mode=mode)
    commit_window(t, lambda: other_writer(warehouse).delete("id = 3"))
    t.delete("id = 4")
    assert ids(t) == [i for i in range(10) if i not in (3, 4)]
    if mode == "merge-on-read":
        (dv,) = [f for f in live_files(t) if f.content == DataFileContent.POSITION_DELETES]
        assert dv.record_count == 2  # one DV with both rows, never two for one file


@pytest.mark.parametrize("version", [2, 3])
def test_delete_racing_a_removal_of_its_file_leaves_no_dangling_delete(
    warehouse: tuple[str, Path], version: int
) -> None:
    # A DV or position delete for a data file another writer removed meanwhile would delete
    # nothing and hide the removal: the plan must be redone against the new head.
    t = make(warehouse, version)
    commit_window(t, lambda: other_writer(warehouse).delete("id >= 0"))
    t.delete("id = 4")
    assert ids(t) == []
    assert [f.content for f in live_files(t)] == []


@pytest.mark.parametrize("mode", MODES)
def test_upsert_racing_an_insert_of_the_same_key_updates_it(
    warehouse: tuple[str, Path], mode: str
) -> None:
    t = make(warehouse, mode=mode)
    commit_window(t, lambda: other_writer(warehouse).append(rows(12, 13)))
    result = t.upsert(pa.table({"id": pa.array([12], pa.int64()), "s": ["mine"]}))
    assert (result.rows_updated, result.rows_inserted) == (1, 0)
    got = t.refresh().scan(row_filter="id = 12").to_arrow().to_pylist()
    assert [(r["id"], r["s"]) for r in got] == [(12, "mine")]


def test_snapshot_isolation_keeps_its_plan_and_the_concurrent_row(
    warehouse: tuple[str, Path],
) -> None:
    t = make(warehouse)
    t.transaction().set_properties(
        {"write.delete.isolation-level": "snapshot"}
    ).commit_transaction()
    commit_window(t, lambda: other_writer(warehouse).append(rows(7, 8)))
    t.delete("id = 7")
    assert ids(t).count(7) == 1  # the new one: snapshot isolation allows it through


# ---- the retry policy


def failing_commits(t: Table, n: int) -> list[float]:
    """Makes the next ``n`` commits of ``t`` lose the race (as if another writer won each time,
    without changing the table); returns the times of every attempt."""
    catalog = t.catalog
    real = catalog.commit_table
    attempts: list[float] = []

    def commit_table(*args: Any, **kwargs: Any) -> Any:
        attempts.append(time.monotonic())
        if len(attempts) <= n:
            raise CommitFailedError("simulated: another writer committed first")
        return real(*args, **kwargs)

    catalog.commit_table = commit_table  # type: ignore[method-assign]
    return attempts


def test_default_policy_is_bounded_by_time_not_by_a_small_count(
    warehouse: tuple[str, Path],
) -> None:
    t = make(warehouse)
    # The Java reference gives up after 4 retries; an append cannot conflict, so it goes on.
    assert RetryPolicy.from_properties({}).num_retries is None
    t.transaction().set_properties({"commit.retry.max-wait-ms": "2"}).commit_transaction()
    attempts = failing_commits(t, 12)
    t.append(rows(10, 11))
    assert len(attempts) == 13
    assert ids(t) == list(range(11))


def test_an_explicit_retry_count_is_honoured(warehouse: tuple[str, Path]) -> None:
    t = make(warehouse)
    t.transaction().set_properties(
        {"commit.retry.num-retries": "2", "commit.retry.max-wait-ms": "2"}
    ).commit_transaction()
    attempts = failing_commits(t, 100)
    with pytest.raises(CommitFailedError):
        t.append(rows(10, 11))
    assert len(attempts) == 3  # the first try and two retries
    assert ids(t) == list(range(10))


def test_the_total_timeout_bounds_retries(warehouse: tuple[str, Path]) -> None:
    t = make(warehouse)
    t.transaction().set_properties(
        {
            "commit.retry.min-wait-ms": "20",
            "commit.retry.max-wait-ms": "20",
            "commit.retry.total-timeout-ms": "150",
        }
    ).commit_transaction()
    attempts = failing_commits(t, 10_000)
    with pytest.raises(CommitFailedError):
        t.append(rows(10, 11))
    # waits of 10-20 ms within 150 ms: a handful of attempts, never thousands
    assert 3 <= len(attempts) <= 16
    assert attempts[-1] - attempts[0] < 1.0


def test_backoff_doubles_with_jitter_up_to_the_cap() -> None:
    policy = RetryPolicy(min_wait_ms=100, max_wait_ms=1000)
    for attempt, step in [(1, 0.1), (2, 0.2), (3, 0.4), (4, 0.8), (5, 1.0), (40, 1.0)]:
        waits = [policy.wait_seconds(attempt) for _ in range(200)]
        assert all(step / 2 <= w <= step for w in waits)
        assert len(set(waits)) > 100  # jittered, not a fixed delay
