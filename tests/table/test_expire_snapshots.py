"""Snapshot expiry: the spec's Snapshot Retention Policy (as the Java reference's RemoveSnapshots
applies it) for each knob, and the files left afterwards: every retained snapshot's manifest
list, manifests and data files present and readable, every file no snapshot reaches gone.

Expected snapshot sets are worked out by hand from each test's timeline (days ago), with half-day
margins so that the moment expiry runs cannot move a snapshot across a cutoff."""

from __future__ import annotations

import logging
import pathlib
import sys
import time

import pytest
import snapshot_history as h
from peers import peer_missing

from frazil.exceptions import InvalidArgumentError, ValidationError
from frazil.metadata import StatisticsFile
from frazil.table import Table
from frazil.table.update import SetStatisticsUpdate, update_table_metadata

DAY = h.DAY_MS


def ids(table: Table) -> set[int]:
    return {s.snapshot_id for s in table.metadata.snapshots}


def check_files(table: Table) -> None:
    """Everything left under the table is reachable, everything reachable is there and every
    snapshot reads in full."""
    assert h.all_files(table) == h.reachable_files(table)
    for s in table.metadata.snapshots:
        h.read_snapshot_rows(table, s)


@pytest.fixture
def now() -> int:
    return int(time.time() * 1000)


def linear(table: Table, now: int, days_ago: list[float]) -> list[int]:
    return [h.append(table, now - int(d * DAY)) for d in days_ago]


def test_default_policy_keeps_five_days_and_deletes_what_only_expired_snapshots_reach(
    tmp_path, now, caplog
) -> None:
    t = h.make_table(tmp_path)
    s = linear(t, now, [10, 9])
    first_file = next(iter(h.live_files(t, t.metadata.snapshot_by_id(s[0]))))
    s.append(h.delete_file(t, now - 8 * DAY, first_file))  # the oldest file leaves the table
    s += linear(t, now, [7, 6, 4.5, 3, 1])
    assert h.read_snapshot_rows(t, t.current_snapshot()) == 2 * 6
    with caplog.at_level(logging.INFO, logger="frazil.table.maintenance.expire_snapshots"):
        t.expire_snapshots().commit()
    assert ids(t) == set(s[-3:])  # younger than 5 days
    assert t.current_snapshot().snapshot_id == s[-1]
    check_files(t)
    # the deleted file and the expired snapshots' manifest lists are gone; the manifests that
    # the retained snapshots still list are not
    gone = set(t.io.deleted)
    assert first_file in gone
    assert {f"{t.location()}/metadata/snap-{i}.avro" for i in s[:-3]} <= gone
    assert h.read_snapshot_rows(t, t.current_snapshot()) == 2 * 6
    assert "deleted 1 data and delete files" in caplog.text
    # the snapshot log keeps only entries after the last expired snapshot
    assert [e.snapshot_id for e in t.history()] == s[-3:]


def test_expire_older_than_and_the_head_is_always_kept(tmp_path, now) -> None:
    t = h.make_table(tmp_path)
    s = linear(t, now, [10, 9, 8, 7, 6, 5, 4])
    t.expire_snapshots().expire_older_than(now - int(7.5 * DAY)).commit()
    assert ids(t) == set(s[3:])
    check_files(t)
    t.expire_snapshots().expire_older_than(now + DAY).commit()
    assert ids(t) == {s[-1]}  # min-snapshots-to-keep 1: main's head
    check_files(t)


def test_min_snapshots_to_keep_property_and_retain_last(tmp_path, now) -> None:
    t = h.make_table(tmp_path, {"history.expire.min-snapshots-to-keep": "4"})
    s = linear(t, now, [10, 9, 8, 7, 6, 5, 4, 3])
    t.expire_snapshots().expire_older_than(now).commit()
    assert ids(t) == set(s[-4:])
    t.expire_snapshots().expire_older_than(now).retain_last(2).commit()
    assert ids(t) == set(s[-2:])
    check_files(t)
    with pytest.raises(InvalidArgumentError):
        t.expire_snapshots().retain_last(0)


def test_max_snapshot_age_property(tmp_path, now) -> None:
    t = h.make_table(tmp_path, {"history.expire.max-snapshot-age-ms": str(2 * DAY)})
    s = linear(t, now, [5, 4, 3, 2.5, 1.5, 0.5])
    t.expire_snapshots().commit()
    assert ids(t) == set(s[-2:])
    check_files(t)


def test_tags_keep_their_snapshot_only_and_age_out(tmp_path, now) -> None:
    t = h.make_table(tmp_path)
    s = linear(t, now, [10, 9, 8, 7, 1])
    with t.manage_snapshots() as ms:
        ms.create_tag(s[1], "release")  # no max age: kept forever
        ms.create_tag(s[2], "short", max_ref_age_ms=3 * DAY)  # 8 days old: removed
    t.expire_snapshots().commit()
    assert ids(t) == {s[1], s[4]}  # the tag keeps its snapshot, not the snapshot's ancestors
    assert set(t.refs()) == {"main", "release"}
    check_files(t)
    assert h.read_snapshot_rows(t, t.metadata.snapshot_by_name("release")) == 2 * 2


def test_max_ref_age_property_and_ref_override(tmp_path, now) -> None:
    t = h.make_table(tmp_path, {"history.expire.max-ref-age-ms": str(3 * DAY)})
    s = linear(t, now, [10, 9, 8, 1])
    with t.manage_snapshots() as ms:
        ms.create_branch(s[0], "old")  # 10 days > 3: removed with its snapshots
        ms.create_branch(s[1], "kept", max_ref_age_ms=30 * DAY)
        ms.create_tag(s[2], "tag")  # 8 days > 3: removed
        ms.create_tag(s[3], "young")
    t.expire_snapshots().commit()
    assert set(t.refs()) == {"main", "kept", "young"}
    assert ids(t) == {s[1], s[3]}
    check_files(t)


def test_branch_retention_overrides(tmp_path, now) -> None:
    t = h.make_table(tmp_path)
    base = linear(t, now, [20, 19])
    t.manage_snapshots().create_branch(base[1], "b", min_snapshots_to_keep=4).commit()
    b = [h.append(t, now - d * DAY, branch="b") for d in (18, 17, 16, 15, 14)]
    t.manage_snapshots().create_branch(base[1], "c", max_snapshot_age_ms=13 * DAY).commit()
    c = [h.append(t, now - d * DAY, branch="c") for d in (13.5, 12.5, 11.5)]
    m = linear(t, now, [10, 2])
    t.expire_snapshots().commit()
    # b: its 4 newest whatever their age; c: its snapshots younger than 13 days;
    # main: younger than 5 days, at least its head
    assert ids(t) == set(b[-4:]) | set(c[1:]) | {m[1]}
    check_files(t)
    # a branch's own max-snapshot-age-ms beats expire_older_than for its ancestors
    t.expire_snapshots().expire_older_than(now).commit()
    assert ids(t) == set(b[-4:]) | set(c[1:]) | {m[1]}


def test_unreferenced_snapshots_follow_the_default_cutoff(tmp_path, now) -> None:
    t = h.make_table(tmp_path)
    s = linear(t, now, [10, 3, 2])
    # main rolled back: s[1] and s[2] no longer belong to any ref
    t.manage_snapshots().rollback_to_snapshot(s[0]).commit()
    t.expire_snapshots().expire_older_than(now - int(2.5 * DAY)).commit()
    assert ids(t) == {s[0], s[2]}
    check_files(t)


def test_explicit_ids(tmp_path, now) -> None:
    t = h.make_table(tmp_path)
    s = linear(t, now, [10, 3, 2, 1])
    t.manage_snapshots().create_tag(s[2], "tag").commit()
    with pytest.raises(ValidationError, match="still referenced by 'tag'"):
        t.expire_snapshots().expire_snapshot_id(s[2]).commit()
    with pytest.raises(ValidationError, match="still referenced by 'main'"):
        t.expire_snapshots().by_ids([s[1], s[3]]).commit()
    with pytest.raises(ValidationError, match="does not exist"):
        t.expire_snapshots().by_id(12345)
    assert ids(t) == set(s)  # nothing committed
    # an explicit id goes even though the policy keeps it; the policy's expiries happen too
    t.expire_snapshots().expire_snapshot_id(s[1]).commit()
    assert ids(t) == {s[2], s[3]}
    check_files(t)


def test_explicit_id_of_a_ref_that_ages_out(tmp_path, now) -> None:
    t = h.make_table(tmp_path)
    s = linear(t, now, [10, 1])
    t.manage_snapshots().create_tag(s[0], "t", max_ref_age_ms=DAY).commit()
    t.expire_snapshots().expire_snapshot_id(s[0]).commit()
    assert ids(t) == {s[1]} and "t" not in t.refs()


def test_gc_disabled(tmp_path) -> None:
    t = h.make_table(tmp_path, {"gc.enabled": "false"})
    with pytest.raises(ValidationError, match=r"gc\.enabled"):
        t.expire_snapshots()


def test_clean_expired_files_false_deletes_nothing(tmp_path, now) -> None:
    t = h.make_table(tmp_path)
    s = linear(t, now, [10, 9])
    h.delete_file(t, now - 8 * DAY, next(iter(h.live_files(t, t.current_snapshot()))))
    before = h.all_files(t)
    t.expire_snapshots().expire_older_than(now).clean_expired_files(False).commit()
    assert len(ids(t)) == 1 and s[0] not in ids(t)
    assert h.all_files(t) == before and t.io.deleted == []


def test_statistics_files_of_expired_snapshots_are_deleted(tmp_path, now) -> None:
    t = h.make_table(tmp_path)
    s = linear(t, now, [10, 1])
    paths = {}
    updates = []
    for sid in s:
        paths[sid] = f"{t.location()}/metadata/{sid}.stats"
        t.io.write(paths[sid], b"puffin")
        updates.append(SetStatisticsUpdate(StatisticsFile(sid, paths[sid], 6, 0)))
    c = t.catalog
    c._write(update_table_metadata(c.metadata, updates))
    t.refresh()
    t.expire_snapshots().commit()
    assert ids(t) == {s[1]}
    assert not t.io.exists(paths[s[0]]) and t.io.exists(paths[s[1]])
    assert [f.snapshot_id for f in t.metadata.statistics] == [s[1]]


def test_retry_recomputes_against_the_new_base(tmp_path, now) -> None:
    t = h.make_table(tmp_path, {"commit.retry.min-wait-ms": "1"})
    s = linear(t, now, [10, 9, 1])
    other = t.catalog.load_table(t.identifier)

    def concurrent() -> None:  # another writer tags an old snapshot first
        other.manage_snapshots().create_tag(s[0], "late").commit()

    t.catalog.before_commit = concurrent
    t.expire_snapshots().commit()
    assert ids(t) == {s[0], s[2]} and "late" in t.refs()
    check_files(t)


def test_expiry_in_a_transaction_with_ref_changes(tmp_path, now) -> None:
    t = h.make_table(tmp_path)
    s = linear(t, now, [10, 9, 1])
    t.manage_snapshots().create_tag(s[0], "t").commit()
    with t.transaction() as tx:
        tx.manage_snapshots().remove_tag("t").commit()
        tx.expire_snapshots().commit()  # sees the tag gone
    assert ids(t) == {s[2]}
    check_files(t)


def test_many_snapshots_on_several_branches(tmp_path, now) -> None:
    """40 snapshots over 40 days on main and two branches, deletes among them; after expiry with
    per-branch settings exactly the policy's snapshots remain and every file is accounted for."""
    t = h.make_table(tmp_path, {"history.expire.min-snapshots-to-keep": "3"})
    main: list[int] = []
    x: list[int] = []
    y: list[int] = []
    day = 40.0
    for i in range(40):
        day -= 1
        ts = now - int(day * DAY)
        if i == 10:
            t.manage_snapshots().create_branch(main[-1], "x", min_snapshots_to_keep=6).commit()
        if i == 20:
            t.manage_snapshots().create_branch(main[-1], "y", max_snapshot_age_ms=15 * DAY).commit()
        if i % 7 == 6:  # delete the oldest live file on main
            files = sorted(h.live_files(t, t.current_snapshot()))
            main.append(h.delete_file(t, ts, files[0]))
        elif i > 10 and i % 3 == 0:
            x.append(h.append(t, ts, branch="x"))
        elif i > 20 and i % 3 == 1:
            y.append(h.append(t, ts, branch="y"))
        else:
            main.append(h.append(t, ts))
    rows = {sid: h.read_snapshot_rows(t, t.metadata.snapshot_by_id(sid)) for sid in ids(t)}
    ages = {s.snapshot_id: (now - s.timestamp_ms) / DAY for s in t.metadata.snapshots}
    t.expire_snapshots().expire_older_than(now - 10 * DAY).commit()
    expected = (
        {sid for sid in main if ages[sid] <= 10}  # at the cutoff itself: kept
        | set(main[-3:])  # 3 newest at least
        | set(x[-6:])  # x: its 6 newest (only 4 are younger than 10 days)
        | {sid for sid in y if ages[sid] < 15}
    )
    assert ids(t) == expected
    check_files(t)
    for sid in ids(t):  # retained snapshots read exactly as before
        assert h.read_snapshot_rows(t, t.metadata.snapshot_by_id(sid)) == rows[sid]


# --------------------------------------------------------------------------------------------
# the Java reference


def _history(warehouse, now: int) -> Table:
    """The same table every time for the same ``now``: main with deletes, a branch with its own
    min-snapshots-to-keep, tags young and aged out. Refs are set after the snapshots so that the
    metadata log stays in time order (Java checks it)."""
    props = {"history.expire.max-ref-age-ms": str(6 * DAY)}
    t = h.make_table(warehouse, props, created_ms=now - 21 * DAY)
    fork = tag = 0
    for i, d in enumerate(range(20, 0, -1)):
        ts = now - d * DAY + DAY // 2
        if i == 5:
            fork = t.current_snapshot().snapshot_id
        if i == 12:
            tag = t.current_snapshot().snapshot_id
        if i % 5 == 4:
            files = sorted(h.live_files(t, t.current_snapshot()))
            h.delete_file(t, ts, files[0])
        elif i % 4 == 1 and i > 5:
            h.append(t, ts, branch="b", fork=fork)
        else:
            h.append(t, ts)
    with t.manage_snapshots() as ms:
        ms.set_min_snapshots_to_keep("b", 3).create_tag(fork, "old")
        ms.create_tag(tag, "kept", max_ref_age_ms=30 * DAY)
    return t


def _relative(t: Table) -> set[str]:
    root = t.location()
    return {p[len(root) :] for p in h.all_files(t)}


@pytest.mark.interop
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_same_retention_and_files_as_the_java_reference(tmp_path) -> None:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "interop"))
    import java_reference as jr

    try:
        jr.check_available()
    except jr.ReferenceUnavailable as e:
        peer_missing(str(e))
    now = int(time.time() * 1000)
    ours = _history(tmp_path / "ours", now)
    theirs = _history(tmp_path / "theirs", now)
    assert ids(ours) == ids(theirs) and _relative(ours) == _relative(theirs)
    cutoff = now - 8 * DAY
    ours.expire_snapshots().expire_older_than(cutoff).retain_last(2).commit()

    spark = jr.reference_session(tmp_path / "theirs")
    try:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(cutoff / 1000))
        stamp += f".{cutoff % 1000:03d}"
        spark.sql(
            "CALL ref.system.expire_snapshots(table => 'db.t', "
            f"older_than => TIMESTAMP '{stamp}', retain_last => 2)"
        ).collect()
        rows = spark.sql("SELECT snapshot_id FROM ref.db.t.snapshots").collect()
        java_ids = {r.snapshot_id for r in rows}
        java_refs = {r.name for r in spark.sql("SELECT name FROM ref.db.t.refs").collect()}
        java_count = spark.sql("SELECT count(*) AS n FROM ref.db.t").collect()[0].n
    finally:
        spark.stop()
    assert ids(ours) == java_ids
    assert set(ours.refs()) == java_refs
    assert h.read_snapshot_rows(ours, ours.current_snapshot()) == java_count
    # the same files deleted: compare what is left, relative to each table's root (Java's
    # metadata files differ in number and name, so only data, manifests and lists count)
    theirs_left = {
        p for p in _relative(theirs) if p.endswith((".parquet", ".avro")) and "/metadata/v" not in p
    }
    assert _relative(ours) == theirs_left
    check_files(ours)
