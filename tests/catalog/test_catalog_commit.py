"""The commit protocol: check-and-put under races, fault injection around the pointer swap, and
SQLite under parallel writers (threads and processes)."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from catalog_helpers import parallel_commit_worker

from frazil.catalog import Catalog, load_catalog
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.exceptions import CommitFailedError, CommitStateUnknownError, ValidationError
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.update import (
    AddSchemaUpdate,
    RemoveSchemasUpdate,
    SetCurrentSchemaUpdate,
    SetPropertiesUpdate,
)
from frazil.types import NestedField, StringType

# Status re-checks without the reference's one-second waits.
FAST_CHECK = {"commit.status-check.min-wait-ms": "1", "commit.status-check.max-wait-ms": "5"}


def metadata_files(table: Table) -> set[str]:
    return {str(p) for p in (Path(table.location()) / "metadata").glob("*.metadata.json")}


def new_table(catalog: Catalog, schema: Schema, **props: str) -> Table:
    catalog.create_namespace_if_not_exists("db")
    return catalog.create_table("db.t", schema, properties={**FAST_CHECK, **props})


def set_props(catalog: Catalog, table: Table, **props: str) -> Any:
    """One commit of ``props`` straight through ``commit_table`` (no transaction retry)."""
    return catalog.commit_table(table, [], [SetPropertiesUpdate(props)])


def patch_swap(
    monkeypatch: pytest.MonkeyPatch,
    catalog: Catalog,
    wrapper: Callable[[Callable[..., bool], tuple[Any, ...]], bool],
) -> None:
    original = catalog._swap_pointer
    monkeypatch.setattr(catalog, "_swap_pointer", lambda *args: wrapper(original, args))


# ---- check-and-put


def test_second_writer_loses_the_race(
    catalog: Catalog, schema: Schema, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two Table objects of one table: the first commit lands between the second's read and its
    swap; the second fails and leaves no metadata file behind."""
    first = new_table(catalog, schema)
    second = catalog.load_table("db.t")
    before = metadata_files(first)
    raced = []

    def racing_swap(original: Callable[..., bool], args: tuple[Any, ...]) -> bool:
        if not raced:
            raced.append(True)
            response = set_props(catalog, first, winner="first")  # swaps with the same hook
            first._set_metadata(response.metadata, response.metadata_location)
        return original(*args)

    patch_swap(monkeypatch, catalog, racing_swap)
    with pytest.raises(CommitFailedError, match=r"db\.t"):
        set_props(catalog, second, winner="second")
    current = catalog.load_table("db.t")
    assert current.metadata_location == first.metadata_location
    assert current.properties["winner"] == "first"
    assert metadata_files(current) == before | {first.metadata_location}


def test_transaction_retries_after_losing(
    catalog: Catalog, schema: Schema, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = new_table(catalog, schema, **{"commit.retry.min-wait-ms": "1"})
    second = catalog.load_table("db.t")
    raced = []

    def racing_swap(original: Callable[..., bool], args: tuple[Any, ...]) -> bool:
        if not raced:
            raced.append(True)
            first.transaction().set_properties(a="1").commit_transaction()
        return original(*args)

    patch_swap(monkeypatch, catalog, racing_swap)
    second.transaction().set_properties(b="2").commit_transaction()
    current = catalog.load_table("db.t")
    assert current.properties["a"] == "1" and current.properties["b"] == "2"
    assert current.metadata_location == second.metadata_location
    # Exactly the two commits' files plus the creation's: the lost attempt's file is gone.
    assert len(metadata_files(current)) == 3
    assert len(current.metadata.metadata_log) == 2


def test_stale_base_validation_error_is_a_commit_failure(catalog: Catalog, schema: Schema) -> None:
    table = new_table(catalog, schema)
    wider = Schema(*schema.fields, NestedField(3, "c", StringType()), schema_id=1)
    updates = [AddSchemaUpdate(wider, 3), SetCurrentSchemaUpdate(1)]
    catalog.commit_table(table, [], updates)
    table.refresh()
    stale = catalog.load_table("db.t")
    catalog.commit_table(table, [], [SetCurrentSchemaUpdate(0)])
    # Valid on the stale base (schema 0 was not current there), invalid on the current one:
    # the caller's base was stale, so this is retryable, not a broken change.
    with pytest.raises(CommitFailedError, match=r"db\.t.*concurrently"):
        catalog.commit_table(stale, [], [RemoveSchemasUpdate((0,))])
    table.refresh()
    with pytest.raises(ValidationError, match="current schema"):
        catalog.commit_table(table, [], [RemoveSchemasUpdate((0,))])


def test_requirement_failure(catalog: Catalog, schema: Schema) -> None:
    import uuid

    from frazil.table.update import AssertTableUUID

    table = new_table(catalog, schema)
    before = metadata_files(table)
    with pytest.raises(CommitFailedError, match=r"db\.t.*uuid"):
        catalog.commit_table(table, [AssertTableUUID(uuid.uuid4())], [SetPropertiesUpdate({})])
    assert metadata_files(table) == before


def test_no_op_commit_writes_nothing(catalog: Catalog, schema: Schema) -> None:
    table = new_table(catalog, schema)
    before = metadata_files(table)
    response = catalog.commit_table(table, [], [])
    assert response.metadata_location == table.metadata_location
    assert metadata_files(table) == before


# ---- fault injection


def test_crash_after_metadata_written_before_swap(
    catalog: Catalog, schema: Schema, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process dies between writing the new metadata file and swapping the pointer: the
    table stays at its version and the file is an orphan."""
    table = new_table(catalog, schema)
    before_location = table.metadata_location
    before = metadata_files(table)
    written: list[str] = []
    original_write = catalog._write_metadata_file

    def write_then_crash(io: Any, location: str, data: bytes) -> None:
        original_write(io, location, data)
        written.append(location)
        if not isinstance(catalog, FileSystemCatalog):
            raise OSError("simulated crash before the swap")

    monkeypatch.setattr(catalog, "_write_metadata_file", write_then_crash)
    if isinstance(catalog, FileSystemCatalog):
        # Writing the version file *is* the swap there; crash right before it instead.
        def crash(original: Callable[..., bool], args: tuple[Any, ...]) -> bool:
            raise KeyboardInterrupt

        patch_swap(monkeypatch, catalog, crash)
        with pytest.raises(KeyboardInterrupt):
            table.transaction().set_properties(a="1").commit_transaction()
        assert catalog.load_table("db.t").metadata_location == before_location
        assert metadata_files(table) == before
        return
    with pytest.raises(OSError, match="simulated crash"):
        table.transaction().set_properties(a="1").commit_transaction()
    current = catalog.load_table("db.t")
    assert current.metadata_location == before_location
    assert "a" not in current.properties
    assert metadata_files(current) == before | set(written)  # one orphan, nothing lost
    # The table still commits afterwards.
    monkeypatch.undo()
    current.transaction().set_properties(b="2").commit_transaction()
    assert catalog.load_table("db.t").properties["b"] == "2"


def test_swap_fails_without_landing(
    catalog: Catalog, schema: Schema, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The swap raises before anything changed: the re-check sees the old pointer, so the
    commit failed (its file is deleted); a transaction then retries and lands once."""
    table = new_table(catalog, schema, **{"commit.retry.min-wait-ms": "1"})
    before = metadata_files(table)
    calls = []

    def fail_first(original: Callable[..., bool], args: tuple[Any, ...]) -> bool:
        calls.append(args[2])
        if len(calls) == 1:
            raise ConnectionError("connection reset before the update was sent")
        return original(*args)

    patch_swap(monkeypatch, catalog, fail_first)
    with pytest.raises(CommitFailedError, match=r"db\.t"):
        set_props(catalog, table, a="1")
    assert catalog.load_table("db.t").metadata_location == table.metadata_location
    assert metadata_files(table) == before
    table.transaction().set_properties(a="1").commit_transaction()
    assert len(calls) == 2
    current = catalog.load_table("db.t")
    assert current.properties["a"] == "1"
    assert len(current.metadata.metadata_log) == 1
    assert metadata_files(current) == before | {current.metadata_location}


def test_swap_raises_but_landed(
    catalog: Catalog, schema: Schema, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The swap lands and then the connection drops: reported as success, committed once."""
    table = new_table(catalog, schema)
    calls = []

    def land_then_fail(original: Callable[..., bool], args: tuple[Any, ...]) -> bool:
        calls.append(args[2])
        assert original(*args)
        raise ConnectionError("server closed the connection after the update")

    patch_swap(monkeypatch, catalog, land_then_fail)
    table.transaction().set_properties(a="1").commit_transaction()
    assert len(calls) == 1  # no second attempt: that would commit twice
    current = catalog.load_table("db.t")
    assert current.metadata_location == calls[0] == table.metadata_location
    assert current.properties["a"] == "1"
    assert len(current.metadata.metadata_log) == 1


def test_swap_raises_and_state_unreadable(
    catalog: Catalog, schema: Schema, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The swap's outcome is unknown and the pointer cannot be re-read: CommitStateUnknownError,
    and nothing is cleaned up (the new metadata may be current)."""
    table = new_table(catalog, schema)
    calls = []
    checks = []

    def land_then_fail(original: Callable[..., bool], args: tuple[Any, ...]) -> bool:
        calls.append(args[2])
        assert original(*args)
        raise ConnectionError("connection dropped")

    def unreadable(*args: Any) -> Any:
        checks.append(args)
        raise ConnectionError("database unreachable")

    patch_swap(monkeypatch, catalog, land_then_fail)
    if isinstance(catalog, FileSystemCatalog):
        monkeypatch.setattr(catalog, "_commit_landed", unreadable)
    else:
        monkeypatch.setattr(catalog, "_read_pointer_fresh", unreadable)
    with pytest.raises(CommitStateUnknownError, match=r"db\.t"):
        table.transaction().set_properties(a="1").commit_transaction()
    assert len(checks) == 4  # commit.status-check.num-retries (3) retries after the first try
    assert Path(calls[0]).exists()  # not deleted: it is in fact current
    monkeypatch.undo()
    assert catalog.load_table("db.t").metadata_location == calls[0]


def test_failed_commit_keeps_old_metadata(
    catalog: Catalog, schema: Schema, monkeypatch: pytest.MonkeyPatch
) -> None:
    """delete-after-commit only runs after a commit landed."""
    props = {
        "write.metadata.previous-versions-max": "1",
        "write.metadata.delete-after-commit.enabled": "true",
    }
    table = new_table(catalog, schema, **props)
    for i in range(2):
        table.transaction().set_properties(i=str(i)).commit_transaction()
    before = metadata_files(table)
    assert len(before) == 2  # current + one previous

    def lose(original: Callable[..., bool], args: tuple[Any, ...]) -> bool:
        return False

    patch_swap(monkeypatch, catalog, lose)
    with pytest.raises(CommitFailedError):
        set_props(catalog, table, x="y")
    assert metadata_files(table) == before


# ---- SQLite under parallel writers


def sqlite_table(tmp_path: Path, schema: Schema) -> tuple[dict[str, str], Table]:
    props = {"type": "sql", "warehouse": str(tmp_path / "wh"), "sqlite.busy-timeout-ms": "60000"}
    catalog = load_catalog("parallel", **props)
    catalog.create_namespace("db")
    table = catalog.create_table(
        "db.t",
        schema,
        properties={
            "commit.retry.num-retries": "1000",
            "commit.retry.min-wait-ms": "1",
            "commit.retry.max-wait-ms": "20",
        },
    )
    return props, table


def check_all_landed(table: Table, writers: int, commits: int) -> None:
    table.refresh()
    expected = {f"w{w}-{c}" for w in range(writers) for c in range(commits)}
    assert expected <= set(table.properties)
    assert len(table.metadata.metadata_log) == writers * commits


def test_sqlite_parallel_threads(tmp_path: Path, schema: Schema) -> None:
    props, table = sqlite_table(tmp_path, schema)
    errors: list[BaseException] = []

    def run(w: int) -> None:
        try:
            parallel_commit_worker(props, w, 5)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    check_all_landed(table, 6, 5)


def test_sqlite_parallel_processes(tmp_path: Path, schema: Schema) -> None:
    props, table = sqlite_table(tmp_path, schema)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        results = [pool.apply_async(parallel_commit_worker, (props, w, 8)) for w in range(4)]
        for r in results:
            r.get(timeout=300)  # re-raises a worker's error, e.g. "database is locked"
    check_all_landed(table, 4, 8)


def test_postgres_connection_killed_during_swap(
    request: pytest.FixtureRequest, tmp_path: Path, schema: Schema, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real dropped connection: the server terminates the backend after the UPDATE was sent
    and before its COMMIT. The re-check on a new connection finds the old pointer, so the commit
    failed cleanly; the transaction retries and lands exactly once."""
    import psycopg
    from sqlalchemy import event
    from sqlalchemy.engine import make_url

    url = request.getfixturevalue("postgres_url")
    catalog = load_catalog("pg", uri=url, warehouse=str(tmp_path / "wh"))
    table = new_table(catalog, schema, **{"commit.retry.min-wait-ms": "1"})
    before = metadata_files(table)
    in_swap: list[bool] = []
    killed: list[int] = []

    def flag_swap(original: Callable[..., bool], args: tuple[Any, ...]) -> bool:
        in_swap.append(True)
        try:
            return original(*args)
        finally:
            in_swap.pop()

    patch_swap(monkeypatch, catalog, flag_swap)

    @event.listens_for(catalog.engine, "commit")  # type: ignore[attr-defined]
    def kill_before_commit(conn: Any) -> None:
        if not in_swap or killed:
            return
        pid = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()
        u = make_url(url)
        with psycopg.connect(
            host=u.host, port=u.port, user=u.username, dbname=u.database, autocommit=True
        ) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        killed.append(pid)

    table.transaction().set_properties(a="1").commit_transaction()
    assert killed
    current = catalog.load_table("db.t")
    assert current.properties["a"] == "1"
    assert len(current.metadata.metadata_log) == 1  # landed once
    assert metadata_files(current) == before | {current.metadata_location}
    catalog.close()  # type: ignore[attr-defined]
