"""Branches and tags: ManageSnapshots' operations and errors (the Java reference's rules), the
updates and requirements they commit, retries, and PyIceberg's ManageSnapshots on the same table
for the operations it has."""

from __future__ import annotations

import time

import pytest
import snapshot_history as h
from peers import import_peer

from frazil.exceptions import InvalidArgumentError, ValidationError
from frazil.metadata import SnapshotRef
from frazil.table import Table
from frazil.table.transaction import requirements_for
from frazil.table.update import AssertRefSnapshotId, RemoveSnapshotRefUpdate, SetSnapshotRefUpdate
from frazil.table.update.manage_snapshots import ManageSnapshots

DAY = h.DAY_MS


@pytest.fixture
def table(tmp_path) -> Table:
    """main: a <- b <- c (days 5, 4, 3); branch ``dev`` at a with d on it (day 2)."""
    t = h.make_table(tmp_path)
    now = int(time.time() * 1000)
    for d in (5, 4, 3):
        h.append(t, now - d * DAY)
    t.manage_snapshots().create_branch(t.metadata.snapshots[0].snapshot_id, "dev").commit()
    h.append(t, now - 2 * DAY, branch="dev")
    return t


def sid(t: Table, n: int) -> int:
    return t.metadata.snapshots[n].snapshot_id


def test_tags(table) -> None:
    a, b, c = sid(table, 0), sid(table, 1), sid(table, 2)
    table.manage_snapshots().create_tag(b, "v1", max_ref_age_ms=DAY).commit()
    assert table.refs()["v1"] == SnapshotRef(b, "tag", max_ref_age_ms=DAY)
    table.manage_snapshots().replace_tag("v1", c).commit()
    assert table.refs()["v1"] == SnapshotRef(c, "tag", max_ref_age_ms=DAY)  # setting kept
    with pytest.raises(ValidationError, match="ref 'v1' already exists"):
        table.manage_snapshots().create_tag(a, "v1")
    with pytest.raises(ValidationError, match="unknown snapshot id 999"):
        table.manage_snapshots().create_tag(999, "v2")
    with pytest.raises(ValidationError, match="'dev' is a branch, not a tag"):
        table.manage_snapshots().remove_tag("dev")
    with pytest.raises(ValidationError, match="tag 'nope' does not exist"):
        table.manage_snapshots().replace_tag("nope", a)
    with pytest.raises(ValidationError, match="tags do not have min-snapshots-to-keep"):
        table.manage_snapshots().set_min_snapshots_to_keep("v1", 2)
    table.manage_snapshots().remove_tag("v1").commit()
    assert "v1" not in table.refs()


def test_branches(table) -> None:
    a, b, c, d = (sid(table, i) for i in range(4))
    table.manage_snapshots().create_branch(
        b, "x", max_ref_age_ms=10, max_snapshot_age_ms=20, min_snapshots_to_keep=3
    ).commit()
    assert table.refs()["x"] == SnapshotRef(b, "branch", 3, 20, 10)
    with table.manage_snapshots() as ms:
        ms.replace_branch("x", c).rename_branch("x", "y")
        ms.set_min_snapshots_to_keep("y", 5).set_max_snapshot_age_ms("y", 6)
        ms.set_max_ref_age_ms("y", 7)
    assert "x" not in table.refs()
    assert table.refs()["y"] == SnapshotRef(c, "branch", 5, 6, 7)
    table.manage_snapshots().replace_branch("y", "dev").commit()  # to another ref's snapshot
    assert table.refs()["y"].snapshot_id == d
    with pytest.raises(ValidationError, match="cannot remove the main branch"):
        table.manage_snapshots().remove_branch("main")
    with pytest.raises(ValidationError, match="cannot rename the main branch"):
        table.manage_snapshots().rename_branch("main", "trunk")
    with pytest.raises(ValidationError, match="ref 'dev' already exists"):
        table.manage_snapshots().rename_branch("y", "dev")
    with pytest.raises(ValidationError, match="branch 'z' does not exist"):
        table.manage_snapshots().remove_branch("z")
    with pytest.raises(ValidationError, match="must be positive"):
        table.manage_snapshots().set_min_snapshots_to_keep("y", 0)
    table.manage_snapshots().remove_branch("y").commit()
    assert set(table.refs()) == {"main", "dev"}
    assert table.current_snapshot().snapshot_id == c  # main untouched throughout
    assert a


def test_fast_forward(table) -> None:
    a, c, d = sid(table, 0), sid(table, 2), sid(table, 3)
    table.manage_snapshots().create_branch(a, "ff").commit()
    table.manage_snapshots().fast_forward("ff", "main").commit()
    assert table.refs()["ff"].snapshot_id == c
    with pytest.raises(ValidationError, match=r"'ff' .* is not an ancestor of 'dev'"):
        table.manage_snapshots().fast_forward("ff", "dev")  # dev forked at a, not c
    table.manage_snapshots().replace_branch("ff", "dev").commit()  # replace need not descend
    assert table.refs()["ff"].snapshot_id == d


def test_set_current_snapshot_and_rollbacks(table) -> None:
    a, b, c, d = (sid(table, i) for i in range(4))
    table.manage_snapshots().set_min_snapshots_to_keep("main", 2).commit()
    table.manage_snapshots().rollback_to_snapshot(b).commit()
    assert table.current_snapshot().snapshot_id == b
    assert table.refs()["main"] == SnapshotRef(b, "branch", min_snapshots_to_keep=2)
    with pytest.raises(ValidationError, match="not an ancestor of the current snapshot"):
        table.manage_snapshots().rollback_to_snapshot(c)  # c is a descendant now
    with pytest.raises(ValidationError, match="not an ancestor"):
        table.manage_snapshots().rollback_to_snapshot(d)
    with pytest.raises(ValidationError, match="unknown snapshot id"):
        table.manage_snapshots().rollback_to_snapshot(999)
    table.manage_snapshots().set_current_snapshot(c).commit()  # any snapshot
    assert table.current_snapshot().snapshot_id == c
    table.manage_snapshots().set_current_snapshot(ref_name="dev").commit()
    assert table.current_snapshot().snapshot_id == d
    table.manage_snapshots().set_current_snapshot(c).commit()
    ts_b = table.snapshot_by_id(b).timestamp_ms
    table.manage_snapshots().rollback_to_timestamp(ts_b + 1).commit()
    assert table.current_snapshot().snapshot_id == b
    table.manage_snapshots().set_current_snapshot(c).commit()
    table.manage_snapshots().rollback_to_timestamp(ts_b).commit()  # strictly older
    assert table.current_snapshot().snapshot_id == a
    with pytest.raises(ValidationError, match=r"no ancestor .* older than"):
        table.manage_snapshots().rollback_to_timestamp(table.snapshot_by_id(a).timestamp_ms)
    with pytest.raises(InvalidArgumentError):
        table.manage_snapshots().set_current_snapshot()
    with pytest.raises(InvalidArgumentError):
        table.manage_snapshots().set_current_snapshot(a, "dev")
    with pytest.raises(ValidationError, match="ref 'nope' does not exist"):
        table.manage_snapshots().set_current_snapshot(ref_name="nope")
    # main's log follows every change of main
    assert [e.snapshot_id for e in table.history()][-3:] == [b, c, a]


def test_updates_and_requirements(table) -> None:
    a, b = sid(table, 0), sid(table, 1)
    tx = table.transaction()
    ms = tx.manage_snapshots().create_tag(a, "t").rename_branch("dev", "dev2")
    updates = ms.apply(table.metadata, 0)
    assert RemoveSnapshotRefUpdate("dev") in updates
    assert SetSnapshotRefUpdate("t", a, "tag") in updates
    dev = table.refs()["dev"].snapshot_id
    assert SetSnapshotRefUpdate("dev2", dev, "branch") in updates
    reqs = requirements_for(table.metadata, updates)
    assert {r for r in reqs if isinstance(r, AssertRefSnapshotId)} == {
        AssertRefSnapshotId("t", None),
        AssertRefSnapshotId("dev", dev),
        AssertRefSnapshotId("dev2", None),
    }
    # nothing recorded, nothing staged; chained calls record in order within one step
    before = table.catalog.commits
    table.manage_snapshots().commit()
    assert table.catalog.commits == before
    ms2 = table.manage_snapshots().create_tag(b, "u").remove_tag("u")
    ms2.commit()
    assert "u" not in table.refs()
    assert isinstance(ms2, ManageSnapshots)


def test_retry_rechecks_against_the_new_base(table) -> None:
    a, b, c = sid(table, 0), sid(table, 1), sid(table, 2)
    other = table.catalog.load_table(table.identifier)
    table.transaction().set_properties({"commit.retry.min-wait-ms": "1"}).commit_transaction()

    # an unrelated concurrent change: the step is replayed and lands
    table.catalog.before_commit = lambda: other.manage_snapshots().create_tag(a, "other").commit()
    table.manage_snapshots().create_tag(b, "mine").commit()
    assert {"other", "mine"} <= set(table.refs())

    # the branch being replaced moved meanwhile: a clear error, nothing committed
    other.refresh()
    table.catalog.before_commit = lambda: other.manage_snapshots().replace_branch("dev", b).commit()
    with pytest.raises(ValidationError, match="ref 'dev' changed concurrently"):
        table.manage_snapshots().replace_branch("dev", c).commit()
    table.refresh()
    assert table.refs()["dev"].snapshot_id == b

    # a rollback whose target stopped being an ancestor of main meanwhile
    other.refresh()
    table.catalog.before_commit = lambda: other.manage_snapshots().set_current_snapshot(a).commit()
    with pytest.raises(ValidationError, match="not an ancestor"):
        table.manage_snapshots().rollback_to_snapshot(b).commit()
    table.refresh()
    assert table.current_snapshot().snapshot_id == a


# --------------------------------------------------------------------------------------------
# PyIceberg on the same table


def _pyiceberg_table(table: Table, tmp_path):
    sql = import_peer("pyiceberg.catalog.sql")
    catalog = sql.SqlCatalog(
        "peer", uri=f"sqlite:///{tmp_path}/peer.db", warehouse=f"file://{tmp_path}/peer"
    )
    catalog.create_namespace("db")
    return catalog.register_table(("db", "t"), table.metadata_location)


def _refs(refs) -> dict:
    return {
        name: (
            r.snapshot_id,
            str(getattr(r.snapshot_ref_type, "value", r.snapshot_ref_type)),
            r.min_snapshots_to_keep,
            r.max_snapshot_age_ms,
            r.max_ref_age_ms,
        )
        for name, r in refs.items()
    }


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_same_refs_as_pyiceberg(table, tmp_path) -> None:
    peer = _pyiceberg_table(table, tmp_path)
    a, b, c, d = (sid(table, i) for i in range(4))
    steps = [
        lambda ms: ms.create_tag(b, "v1", max_ref_age_ms=DAY),
        lambda ms: ms.create_branch(a, "x", DAY, 2 * DAY, 3),
        lambda ms: ms.remove_tag("v1"),
        lambda ms: ms.rollback_to_snapshot(b),
        lambda ms: ms.set_current_snapshot(d),
        lambda ms: ms.set_current_snapshot(ref_name="x"),
        lambda ms: ms.set_current_snapshot(c),
        lambda ms: ms.rollback_to_timestamp(table.snapshot_by_id(b).timestamp_ms),
        lambda ms: ms.remove_branch("x"),
    ]
    for step in steps:
        step(table.manage_snapshots()).commit()
        step(peer.manage_snapshots()).commit()
        assert _refs(table.refs()) == _refs(peer.metadata.refs)
        assert table.current_snapshot().snapshot_id == peer.current_snapshot().snapshot_id
    # the errors PyIceberg raises up front, frazil raises too (both ValueErrors)
    failing = [
        lambda ms: ms.rollback_to_snapshot(999),
        lambda ms: ms.rollback_to_snapshot(d),  # not an ancestor of main
        lambda ms: ms.rollback_to_timestamp(0),
        lambda ms: ms.set_current_snapshot(),
        lambda ms: ms.set_current_snapshot(a, "main"),
        lambda ms: ms.set_current_snapshot(ref_name="nope"),
        lambda ms: ms.set_current_snapshot(999),
    ]
    for step in failing:
        with pytest.raises(ValueError):
            step(peer.manage_snapshots())
        with pytest.raises(ValueError):
            step(table.manage_snapshots())
