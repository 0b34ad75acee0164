"""Failures of the catalog's store and of the files a commit writes (issue 19): every one is a
``FrazilError`` naming the file or catalog and the cause (the original kept as ``__cause__``),
and a permanent one (disk full, read-only storage or database) is never retried as a lost race.

A read-only SQLite catalog still loads and reads tables; a reader never waits for a writer's
lock; PostgreSQL sessions time out on a held lock instead of waiting forever."""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sqlalchemy

from frazil.catalog import Catalog, load_catalog
from frazil.exceptions import (
    CatalogBusyError,
    CatalogError,
    CommitFailedError,
    FileMissingError,
    FrazilError,
    FrazilIOError,
    InvalidArgumentError,
    ParseError,
)
from frazil.schema import Schema
from frazil.table import Table
from frazil.types import LongType, NestedField

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))
READONLY_WORKER = Path(__file__).with_name("readonly_worker.py")


def one_row(i: int = 1) -> pa.Table:
    return pa.table({"id": pa.array([i], pa.int64())})


def new_table(catalog: Catalog, **props: str) -> Table:
    catalog.create_namespace("db")
    t = catalog.create_table("db.t", SCHEMA, properties=props)
    t.append(one_row())
    return t


def run_without_write_access(props: dict[str, Any], op: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, str(READONLY_WORKER), json.dumps(props), "db.t", op],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def read_only(path: Path) -> None:
    """No write access for others (root is the test's user: the worker drops to ``nobody``),
    nor, when not root, for the owner."""
    targets = [path, *path.rglob("*")]
    for p in targets:
        mode = p.stat().st_mode
        keep = stat.S_IMODE(mode) | stat.S_IROTH | (stat.S_IXOTH if p.is_dir() else 0)
        keep &= ~(stat.S_IWOTH | stat.S_IWGRP | (0 if os.geteuid() == 0 else stat.S_IWUSR))
        p.chmod(keep)


def writable(path: Path) -> None:
    for p in [path, *path.rglob("*")]:
        p.chmod(0o777 if p.is_dir() else 0o666)


@pytest.fixture
def warehouse() -> Iterator[Path]:
    # Not under pytest's private temp directory: the unprivileged worker must reach it.
    root = Path(tempfile.mkdtemp(prefix="frazil-failures-"))
    root.chmod(0o755)
    w = root / "warehouse"
    w.mkdir()
    yield w
    writable(w)
    shutil.rmtree(root, ignore_errors=True)


def test_read_only_sqlite_catalog_loads_and_reads(warehouse: Path) -> None:
    props = {"type": "sql", "warehouse": str(warehouse)}
    catalog = load_catalog("ro", **props)
    new_table(catalog)
    catalog.close()  # type: ignore[attr-defined]
    read_only(warehouse)
    assert run_without_write_access(props, "read")["rows"] == 1
    result = run_without_write_access(props, "append")
    assert "FrazilError" in result["mro"] and result["error"] != "CommitFailedError", result


def test_read_only_sqlite_database_fails_a_commit_at_once(warehouse: Path) -> None:
    props = {"type": "sql", "warehouse": str(warehouse)}
    catalog = load_catalog("ro", **props)
    new_table(catalog)
    catalog.close()  # type: ignore[attr-defined]
    read_only(warehouse)
    writable(warehouse / "db")  # the table's files may be written, not the catalog database
    result = run_without_write_access(props, "append")
    assert result["error"] == "CatalogError", result
    assert "readonly" in result["message"].replace("-", "") and "'ro'" in result["message"]
    assert result["cause"] == "OperationalError"


def test_reader_does_not_wait_for_a_writers_lock(warehouse: Path) -> None:
    props = {"type": "sql", "warehouse": str(warehouse)}
    new_table(load_catalog("lock", **props))
    holder = sqlite3.connect(warehouse / "catalog.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process in the middle of a commit
    try:
        # No waiting allowed: opening and loading must not need the write lock at all.
        catalog = load_catalog("lock", **props, **{"sqlite.busy-timeout-ms": "0"})
        t = catalog.load_table("db.t")
        assert t.scan().to_arrow().num_rows == 1
        with pytest.raises(CommitFailedError) as info:
            t.transaction().set_properties(
                {"commit.retry.total-timeout-ms": "0"}
            ).commit_transaction()
        assert isinstance(info.value.__cause__, CatalogBusyError)
        assert isinstance(info.value.__cause__.__cause__, sqlalchemy.exc.OperationalError)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_postgresql_held_lock_times_out(postgres_url: str, warehouse: Path) -> None:
    props = {"type": "sql", "uri": postgres_url, "warehouse": str(warehouse)}
    owner = load_catalog("pg", **props)
    new_table(owner)
    owner.close()  # type: ignore[attr-defined]
    catalog = load_catalog("pg", **props, **{"postgresql.lock-timeout-ms": "300"})
    engine = sqlalchemy.create_engine(postgres_url)
    holder = engine.connect()
    holder.exec_driver_sql("BEGIN")
    holder.exec_driver_sql("LOCK TABLE iceberg_tables IN ACCESS EXCLUSIVE MODE")
    outcome: list[BaseException | str] = []

    def load() -> None:
        try:
            catalog.load_table("db.t")
            outcome.append("loaded")
        except BaseException as e:
            outcome.append(e)

    try:
        worker = threading.Thread(target=load, daemon=True)
        worker.start()
        worker.join(timeout=120)
        assert not worker.is_alive(), "a load waited on a held lock"
    finally:
        holder.exec_driver_sql("ROLLBACK")
        holder.close()
        engine.dispose()
        catalog.close()  # type: ignore[attr-defined]
    (error,) = outcome
    assert isinstance(error, CatalogBusyError), error
    assert "lock" in str(error) and isinstance(error.__cause__, sqlalchemy.exc.OperationalError)


def fail_writes(monkeypatch: pytest.MonkeyPatch, t: Table, suffix: str, err: int) -> None:
    """Makes every write of a file ending with ``suffix`` fail with ``err`` (disk full, ...),
    through any FileIO of the table's kind (the catalog makes its own)."""
    cls = type(t.io)
    real = cls.write

    def write(self: Any, location: str, data: bytes, **kwargs: Any) -> None:
        if location.endswith(suffix):
            raise OSError(err, os.strerror(err), location)
        real(self, location, data, **kwargs)

    monkeypatch.setattr(cls, "write", write)


@pytest.mark.parametrize("kind", ["sql", "filesystem"])
@pytest.mark.parametrize("err", [errno.ENOSPC, errno.EROFS])
def test_metadata_write_failure_is_not_a_commit_conflict(
    warehouse: Path, kind: str, err: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = new_table(load_catalog("w", type=kind, warehouse=str(warehouse)))
    calls: list[int] = []
    real_commit = t.catalog.commit_table

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real_commit(*args, **kwargs)

    t.catalog.commit_table = counting  # type: ignore[method-assign]
    fail_writes(monkeypatch, t, ".metadata.json", err)
    with pytest.raises(FrazilIOError) as info:
        t.append(one_row(2))
    assert not isinstance(info.value, CommitFailedError)
    assert len(calls) == 1  # not retried
    assert ".metadata.json" in str(info.value) and os.strerror(err) in str(info.value)
    assert isinstance(info.value.__cause__, OSError) and info.value.errno == err
    assert t.catalog.load_table("db.t").scan().to_arrow().num_rows == 1


def test_disk_full_writing_a_manifest_names_the_file(
    warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = new_table(load_catalog("w", type="sql", warehouse=str(warehouse)))
    fail_writes(monkeypatch, t, ".avro", errno.ENOSPC)
    with pytest.raises(FrazilIOError) as info:
        t.append(one_row(2))
    assert ".avro" in str(info.value) and "No space left" in str(info.value)
    assert isinstance(info.value.__cause__, OSError)


def test_disk_full_writing_a_data_file_names_the_file(
    warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = new_table(load_catalog("w", type="sql", warehouse=str(warehouse)))

    def full(self: Any, *args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(pq.ParquetWriter, "write_table", full)
    with pytest.raises(FrazilIOError) as info:
        t.append(one_row(2))
    assert ".parquet" in str(info.value) and "No space left" in str(info.value)
    data = Path(t.location().removeprefix("file://")) / "data"
    assert len(list(data.glob("*.parquet"))) == 1  # the failed file was removed


def test_missing_manifest_list_names_the_file(warehouse: Path) -> None:
    t = new_table(load_catalog("w", type="sql", warehouse=str(warehouse)))
    snap = t.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    os.remove(snap.manifest_list.removeprefix("file://"))
    with pytest.raises(FileMissingError) as info:
        t.append(one_row(2))
    assert snap.manifest_list in str(info.value)
    assert isinstance(info.value, FileNotFoundError)  # still what OSError code expects
    assert isinstance(info.value.__cause__, FileNotFoundError)


def test_missing_metadata_file_names_the_file(warehouse: Path) -> None:
    t = new_table(load_catalog("w", type="sql", warehouse=str(warehouse)))
    assert t.metadata_location is not None
    os.remove(t.metadata_location.removeprefix("file://"))
    with pytest.raises(FileMissingError, match="metadata"):
        t.catalog.load_table("db.t")


def test_lone_surrogate_in_a_schema_is_refused(warehouse: Path) -> None:
    catalog = load_catalog("w", type="sql", warehouse=str(warehouse))
    catalog.create_namespace("db")
    bad = Schema(NestedField(1, "a\udc80", LongType(), required=False))
    with pytest.raises(InvalidArgumentError, match="surrogate") as info:
        catalog.create_table("db.t", bad)
    assert isinstance(info.value.__cause__, UnicodeEncodeError)
    assert isinstance(info.value, FrazilError)
    assert not catalog.table_exists("db.t")


def test_lone_surrogate_in_a_metadata_file_names_the_file_and_field(warehouse: Path) -> None:
    # Another writer's file with a "\ud800" escape: a ParseError from load_table and from
    # StaticTable, naming the file and the field, not a UnicodeEncodeError when written back.
    from frazil.table.static import StaticTable

    t = new_table(load_catalog("w", type="sql", warehouse=str(warehouse)))
    assert t.metadata_location is not None
    path = Path(t.metadata_location.removeprefix("file://"))
    obj = json.loads(path.read_bytes())
    obj["properties"]["owner"] = "x\ud800"
    obj["schemas"][0]["fields"][0]["doc"] = "fine \U0001f600"  # a pair: valid
    path.write_text(json.dumps(obj))  # ASCII: the surrogate as its escape
    loads = (lambda: t.catalog.load_table("db.t"), lambda: StaticTable.from_metadata(str(path)))
    for load in loads:
        with pytest.raises(ParseError) as info:
            load()
        message = str(info.value)
        assert str(path) in message and "properties.owner" in message, message
        assert "lone surrogate" in message
        assert isinstance(info.value.__cause__, ParseError)
        assert isinstance(info.value.__cause__.__cause__, UnicodeEncodeError)


def test_catalog_error_classes() -> None:
    assert issubclass(CatalogBusyError, CatalogError) and issubclass(CatalogError, FrazilError)
    assert issubclass(FrazilIOError, OSError) and issubclass(FileMissingError, FileNotFoundError)
