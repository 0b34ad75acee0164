"""Tables with many snapshots of chosen timestamps, for the ref and expiry tests.

A small in-memory catalog keeps the table pointer and writes every version in the Java Hadoop
catalog's layout (``<warehouse>/db/t/metadata/v<N>.metadata.json`` and ``version-hint.text``), so
the Java reference can open the same table. File names are
derived from snapshot ids (``data/<id>.parquet``, ``metadata/snap-<id>.avro``,
``metadata/<id>-m<n>.avro``), so two tables built alike can be compared file by file. Snapshots
are fast appends of one small Parquet file
(a new manifest plus the parent's manifests) or deletes of one file (its manifest rewritten with
the file's entry ``DELETED``), written with frazil's manifest writers.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import frazil.manifest as fm
from frazil.catalog import CommitTableResponse
from frazil.exceptions import CommitFailedError
from frazil.metadata import MAIN_BRANCH, Snapshot, SnapshotRef, TableMetadata
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.step import StaticStep
from frazil.table.update import (
    AddSnapshotUpdate,
    SetSnapshotRefUpdate,
    new_table_metadata,
    update_table_metadata,
)
from frazil.types import LongType, NestedField

try:
    from frazil.io.local import LocalFileIO as _BaseIO
except ImportError:  # pragma: no cover - FileIO not there yet
    _BaseIO = None  # type: ignore[assignment,misc]

DAY_MS = 24 * 60 * 60 * 1000
ADDED, EXISTING, DELETED = 1, 0, 2

SCHEMA = Schema(NestedField(1, "id", LongType(), required=True))
_DATA_FILE = pa.struct(
    [
        pa.field("content", pa.int32(), nullable=False),
        pa.field("file_path", pa.string(), nullable=False),
        pa.field("file_format", pa.string(), nullable=False),
        pa.field("partition", pa.struct([]), nullable=False),
        pa.field("record_count", pa.int64(), nullable=False),
        pa.field("file_size_in_bytes", pa.int64(), nullable=False),
    ]
)
_ENTRIES = pa.schema(
    [
        pa.field("status", pa.int32(), nullable=False),
        pa.field("snapshot_id", pa.int64()),
        pa.field("sequence_number", pa.int64()),
        pa.field("file_sequence_number", pa.int64()),
        pa.field("data_file", _DATA_FILE, nullable=False),
    ]
)


class RecordingIO(_BaseIO):  # type: ignore[misc,valid-type]
    """Local files, remembering every location deleted."""

    def __init__(self) -> None:
        super().__init__({})
        self.deleted: list[str] = []

    def delete(self, location: str) -> None:
        self.deleted.append(location)
        super().delete(location)


class MemoryCatalog:
    """The table pointer in memory; commits check requirements against the current metadata and
    apply the updates to it, as every frazil catalog does. ``before_commit`` (called once, then
    cleared) can commit a concurrent change and make this commit fail, to exercise retries."""

    def __init__(self, table_location: str, io: RecordingIO) -> None:
        self.location = table_location
        self.io = io
        self.metadata: TableMetadata | None = None
        self.metadata_location: str | None = None
        self.version = 0
        self.commits = 0
        self.before_commit: Callable[[], None] | None = None

    def _write(self, metadata: TableMetadata) -> str:
        self.version += 1
        path = f"{self.location}/metadata/v{self.version}.metadata.json"
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(metadata.to_json())
        with open(f"{self.location}/metadata/version-hint.text", "w") as f:
            f.write(str(self.version))
        self.metadata, self.metadata_location = metadata, path
        return path

    def load_table(self, identifier: Any) -> Table:
        assert self.metadata is not None
        return Table(("db", "t"), self.metadata, self.metadata_location, self.io, self)  # type: ignore[arg-type]

    def commit_table(self, table: Table, requirements: Any, updates: Any) -> CommitTableResponse:
        hook, self.before_commit = self.before_commit, None
        if hook is not None:
            hook()
            raise CommitFailedError("simulated: another writer committed first")
        assert self.metadata is not None
        new = update_table_metadata(self.metadata, updates, requirements, self.metadata_location)
        self.commits += 1
        return CommitTableResponse(new, self._write(new))


def make_table(
    warehouse: str,
    properties: dict[str, str] | None = None,
    format_version: int = 2,
    created_ms: int | None = None,
) -> Table:
    """A new table; ``created_ms`` back-dates it before its first snapshot, so that the metadata
    log stays sorted (the Java reference refuses it otherwise)."""
    location = os.path.join(str(warehouse), "db", "t")
    io = RecordingIO()
    catalog = MemoryCatalog(location, io)
    m = new_table_metadata(SCHEMA, location, properties=properties, format_version=format_version)
    if created_ms is not None:
        m = m.replace(last_updated_ms=created_ms)
    catalog._write(m)
    return catalog.load_table(("db", "t"))


# --------------------------------------------------------------------------------------------
# snapshots


def _manifest_list_schema() -> pa.Schema:
    row = {
        "manifest_path": "x",
        "manifest_length": 1,
        "partition_spec_id": 0,
        "content": 0,
        "sequence_number": 1,
        "min_sequence_number": 1,
        "added_snapshot_id": 1,
        "added_files_count": 0,
        "existing_files_count": 0,
        "deleted_files_count": 0,
        "added_rows_count": 0,
        "existing_rows_count": 0,
        "deleted_rows_count": 0,
        "partitions": [],
        "key_metadata": None,
        "first_row_id": None,
    }
    data = fm.write_manifest_list(
        pa.Table.from_pylist([row]), format_version=2, snapshot_id=1, sequence_number=1
    )
    return fm.read_manifest_list(data).schema


_ML_SCHEMA = _manifest_list_schema()


def _write(io: RecordingIO, path: str, data: bytes) -> None:
    io.write(path, data)


def manifest_rows(table: Table, snapshot: Snapshot | None) -> list[dict[str, Any]]:
    if snapshot is None or snapshot.manifest_list is None:
        return []
    return fm.read_manifest_list(table.io.read(snapshot.manifest_list)).to_pylist()


def live_files(table: Table, snapshot: Snapshot) -> dict[str, int]:
    """Live data file path -> record count, read from the snapshot's manifests."""
    out: dict[str, int] = {}
    for row in manifest_rows(table, snapshot):
        entries = fm.read_manifest(table.io.read(row["manifest_path"]), row).to_pylist()
        for e in entries:
            if e["status"] != DELETED:
                out[e["data_file"]["file_path"]] = e["data_file"]["record_count"]
    return out


def _write_manifest(
    table: Table, entries: list[dict[str, Any]], sid: int, n: int = 0
) -> tuple[str, bytes]:
    m = table.metadata
    data = fm.write_manifest(
        pa.Table.from_pylist(entries, schema=_ENTRIES),
        format_version=m.format_version,
        schema=json.dumps(m.schema().to_json()),
        partition_spec="[]",
        schema_id=m.current_schema_id,
        partition_spec_id=m.default_spec_id,
    )
    path = f"{table.location()}/metadata/{sid}-m{n}.avro"
    _write(table.io, path, data)
    return path, data


def _commit_snapshot(
    table: Table,
    sid: int,
    ts_ms: int,
    branch: str,
    parent: Snapshot | None,
    manifests: list[dict[str, Any]],
    operation: str,
) -> int:
    m = table.metadata
    seq = m.last_sequence_number + 1
    for row in manifests:
        if row["sequence_number"] is None:
            row["sequence_number"] = row["min_sequence_number"] = seq
    ml_path = f"{table.location()}/metadata/snap-{sid}.avro"
    _write(
        table.io,
        ml_path,
        fm.write_manifest_list(
            pa.Table.from_pylist(manifests, schema=_ML_SCHEMA),
            format_version=m.format_version,
            snapshot_id=sid,
            parent_snapshot_id=None if parent is None else parent.snapshot_id,
            sequence_number=seq,
        ),
    )
    snapshot = Snapshot(
        snapshot_id=sid,
        timestamp_ms=ts_ms,
        parent_snapshot_id=None if parent is None else parent.snapshot_id,
        sequence_number=seq,
        manifest_list=ml_path,
        summary={"operation": operation},
        schema_id=m.current_schema_id,
    )
    old = m.refs.get(branch) or SnapshotRef(sid)
    updates = [
        AddSnapshotUpdate(snapshot),
        SetSnapshotRefUpdate(
            branch,
            sid,
            old.snapshot_ref_type,
            old.min_snapshots_to_keep,
            old.max_snapshot_age_ms,
            old.max_ref_age_ms,
        ),
    ]
    with table.transaction() as tx:
        tx.stage(StaticStep(updates, []))
    return sid


def _next_id(table: Table) -> int:
    return max((s.snapshot_id for s in table.metadata.snapshots), default=1000) + 1


def append(
    table: Table, ts_ms: int, branch: str = MAIN_BRANCH, rows: int = 2, fork: int | None = None
) -> int:
    """A fast append of one new Parquet file of ``rows`` rows on ``branch``; a branch that does
    not exist yet is created on the way, from snapshot ``fork``."""
    sid = _next_id(table)
    parent = table.metadata.snapshot_by_name(branch)
    if parent is None and fork is not None:
        parent = table.metadata.snapshot_by_id(fork)
    path = f"{table.location()}/data/{sid}.parquet"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    ids = pa.array(range(sid * 100, sid * 100 + rows), pa.int64())
    schema = pa.schema([pa.field("id", pa.int64(), False, {b"PARQUET:field_id": b"1"})])
    pq.write_table(pa.table([ids], schema=schema), path)
    entry = {
        "status": ADDED,
        "snapshot_id": sid,
        "sequence_number": None,
        "file_sequence_number": None,
        "data_file": {
            "content": 0,
            "file_path": path,
            "file_format": "PARQUET",
            "partition": {},
            "record_count": rows,
            "file_size_in_bytes": os.path.getsize(path),
        },
    }
    mpath, mdata = _write_manifest(table, [entry], sid)
    new_row = {
        "manifest_path": mpath,
        "manifest_length": len(mdata),
        "partition_spec_id": 0,
        "content": 0,
        "sequence_number": None,
        "min_sequence_number": None,
        "added_snapshot_id": sid,
        **{
            k: v
            for k, v in fm.summarize_manifest(fm.read_manifest(mdata)).items()
            if k != "min_sequence_number"
        },
        "key_metadata": None,
        "first_row_id": None,
    }
    return _commit_snapshot(
        table, sid, ts_ms, branch, parent, [new_row, *manifest_rows(table, parent)], "append"
    )


def delete_file(table: Table, ts_ms: int, path: str, branch: str = MAIN_BRANCH) -> int:
    """A snapshot on ``branch`` deleting one data file: the manifest that holds it is rewritten
    with its entry ``DELETED`` and the others ``EXISTING``."""
    sid = _next_id(table)
    parent = table.metadata.snapshot_by_name(branch)
    rows = manifest_rows(table, parent)
    out = []
    for row in rows:
        entries = fm.read_manifest(table.io.read(row["manifest_path"]), row).to_pylist()
        if not any(e["data_file"]["file_path"] == path and e["status"] != DELETED for e in entries):
            out.append(row)
            continue
        new_entries = []
        for e in entries:
            if e["status"] == DELETED:
                continue
            keep = e["data_file"]["file_path"] != path
            df = {k: e["data_file"][k] for k in _DATA_FILE.names}
            new_entries.append(
                {
                    "status": EXISTING if keep else DELETED,
                    "snapshot_id": e["snapshot_id"] if keep else sid,
                    "sequence_number": e["sequence_number"],
                    "file_sequence_number": e["file_sequence_number"],
                    "data_file": df,
                }
            )
        mpath, mdata = _write_manifest(table, new_entries, sid, len(out))
        summary = fm.summarize_manifest(fm.read_manifest(mdata))
        out.append(
            {
                "manifest_path": mpath,
                "manifest_length": len(mdata),
                "partition_spec_id": 0,
                "content": 0,
                "sequence_number": None,
                "min_sequence_number": min(e["sequence_number"] for e in new_entries),
                "added_snapshot_id": sid,
                **{k: v for k, v in summary.items() if k != "min_sequence_number"},
                "key_metadata": None,
                "first_row_id": None,
            }
        )
    return _commit_snapshot(table, sid, ts_ms, branch, parent, out, "delete")


def all_files(table: Table) -> set[str]:
    root = table.location()
    return {
        os.path.join(d, f)
        for d, _, files in os.walk(root)
        for f in files
        if not f.endswith((".metadata.json", "version-hint.text"))
    }


def reachable_files(table: Table) -> set[str]:
    """Manifest lists, manifests and live data files of every snapshot of the table."""
    out: set[str] = set()
    for s in table.metadata.snapshots:
        assert s.manifest_list is not None
        out.add(s.manifest_list)
        out.update(r["manifest_path"] for r in manifest_rows(table, s))
        out.update(live_files(table, s))
    return out


def read_snapshot_rows(table: Table, snapshot: Snapshot) -> int:
    """Reads every live data file of the snapshot in full; the total row count."""
    total = 0
    for path, count in live_files(table, snapshot).items():
        n = pq.read_table(path).num_rows
        assert n == count, path
        total += n
    return total
