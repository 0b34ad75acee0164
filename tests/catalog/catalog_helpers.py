"""Test helpers: a snapshot committed by hand (manifest, manifest list, AddSnapshot), so the
catalog tests do not depend on the snapshot producers."""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path

import pyarrow as pa
import pytest

from frazil.catalog import Catalog, load_catalog
from frazil.manifest import summarize_manifest, write_manifest, write_manifest_list
from frazil.manifest.content_file import DataFile, ManifestEntryStatus, manifest_entries
from frazil.metadata import MAIN_BRANCH, Snapshot, SnapshotRefType
from frazil.table import Table
from frazil.table.update import AddSnapshotUpdate, SetSnapshotRefUpdate


def commit_snapshot(table: Table, data_paths: list[str]) -> Snapshot:
    """Commits an append of ``data_paths`` (files of 1 row; need not exist) to ``main``."""
    m = table.metadata
    fv = m.format_version
    snapshot_id = random.getrandbits(62)
    seq = m.last_sequence_number + 1
    files = [DataFile(p, "PARQUET", (), 1, 10) for p in data_paths]
    entries = manifest_entries(
        files, ManifestEntryStatus.ADDED, snapshot_id, None, None, pa.struct([]), fv
    )
    manifest = write_manifest(
        entries,
        format_version=fv,
        schema=json.dumps(m.schema().to_json()),
        partition_spec="[]",
        schema_id=m.current_schema_id,
        partition_spec_id=m.default_spec_id,
    )
    meta_dir = f"{m.location}/metadata"
    manifest_path = f"{meta_dir}/{uuid.uuid4()}-m0.avro"
    table.io.write(manifest_path, manifest)
    summary = summarize_manifest(entries)
    row = {
        "manifest_path": manifest_path,
        "manifest_length": len(manifest),
        "partition_spec_id": m.default_spec_id,
        "content": 0,
        "sequence_number": seq,
        "min_sequence_number": seq,
        "added_snapshot_id": snapshot_id,
        **{k: v for k, v in summary.items() if k != "min_sequence_number"},
        "key_metadata": None,
        "first_row_id": None,
    }
    manifest_list = write_manifest_list(
        pa.Table.from_pylist([row]),
        format_version=fv,
        snapshot_id=snapshot_id,
        parent_snapshot_id=m.current_snapshot_id,
        sequence_number=seq,
    )
    list_path = f"{meta_dir}/snap-{snapshot_id}-1-{uuid.uuid4()}.avro"
    table.io.write(list_path, manifest_list)
    snapshot = Snapshot(
        snapshot_id=snapshot_id,
        timestamp_ms=max(m.last_updated_ms + 1, 0),
        parent_snapshot_id=m.current_snapshot_id,
        sequence_number=seq,
        manifest_list=list_path,
        summary={"operation": "append"},
        schema_id=m.current_schema_id,
    )
    updates = [
        AddSnapshotUpdate(snapshot),
        SetSnapshotRefUpdate(MAIN_BRANCH, snapshot_id, SnapshotRefType.BRANCH),
    ]
    from frazil.table.transaction import requirements_for

    response = table.catalog.commit_table(table, requirements_for(m, updates), updates)
    table._set_metadata(response.metadata, response.metadata_location)
    return snapshot


def parallel_commit_worker(props: dict[str, str], writer: int, commits: int) -> None:
    """Commits ``commits`` property changes to ``db.t`` through its own catalog (a thread's or a
    process's); every error propagates, "database is locked" included."""
    from frazil.catalog import load_catalog

    catalog = load_catalog("parallel", **props)
    try:
        table = catalog.load_table("db.t")
        for c in range(commits):
            table.transaction().set_properties({f"w{writer}-{c}": "1"}).commit_transaction()
    finally:
        close = getattr(catalog, "close", None)
        if close is not None:
            close()


def make_catalog(
    kind: str, warehouse: Path, request: pytest.FixtureRequest, **extra: str
) -> Catalog:
    """A catalog of ``kind`` over ``warehouse`` (PostgreSQL: a fresh database)."""
    if kind == "sqlite":
        return load_catalog("test", type="sql", warehouse=str(warehouse), **extra)
    if kind == "postgresql":
        url = request.getfixturevalue("postgres_url")
        return load_catalog("test", type="sql", uri=url, warehouse=str(warehouse), **extra)
    if kind == "filesystem":
        return load_catalog("test", type="filesystem", warehouse=str(warehouse), **extra)
    raise AssertionError(kind)
