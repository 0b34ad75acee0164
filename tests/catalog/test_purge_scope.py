"""Purge and expiry delete only under the table location (issue 19): files a table's metadata
names outside it (an ``add_files`` Parquet file, statistics and partition statistics files, a
metadata-log entry) are kept unless the caller opts in."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from catalog_helpers import commit_snapshot

from frazil.catalog import Catalog
from frazil.io import is_under_location
from frazil.metadata import MetadataLogEntry, PartitionStatisticsFile, StatisticsFile
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.transaction import requirements_for
from frazil.table.update import (
    SetPartitionStatisticsUpdate,
    SetStatisticsUpdate,
    TableUpdate,
)

# ---- the helper


@pytest.mark.parametrize(
    ("location", "table_location", "expected"),
    [
        ("/w/t/data/a.parquet", "/w/t", True),
        ("/w/t/data/a.parquet", "/w/t/", True),
        ("/w/t//data/./a.parquet", "/w/t", True),
        ("/w/t/a/../b.parquet", "/w/t", True),
        ("/w/t-evil/x.parquet", "/w/t", False),  # a string prefix, not a directory prefix
        ("/w/tt", "/w/t", False),
        ("/w/t/../other/x.parquet", "/w/t", False),
        ("/w/t/../t-evil/x", "/w/t", False),
        ("/w/t/../../../../x", "/w/t", False),  # above the root
        ("/w/t", "/w/t", False),  # the directory itself is no file in it
        ("/w/t/", "/w/t", False),
        ("/w/x", "/w/t/..", True),  # the table location is normalized too
        ("/w/t/x", "/", True),
        ("w/t/x", "/w/t", False),  # a relative path is not under an absolute one
        ("file:///w/t/x", "/w/t", True),  # the local forms are one
        ("file:/w/t/x", "file:///w/t/", True),
        ("/w/t/x", "file://localhost/w/t", True),
        ("file://otherhost/w/t/x", "/w/t", False),
        ("s3://b/t/data/x.parquet", "s3://b/t", True),
        ("s3a://b/t/data/x.parquet", "s3://b/t/", True),  # s3a/s3n name the same objects
        ("S3://b/t/x", "s3://b/t", True),  # schemes are case-insensitive
        ("s3://b/t-evil/x", "s3://b/t", False),
        ("s3://b/t/../u/x", "s3://b/t", False),
        ("s3://other/t/x", "s3://b/t", False),  # another bucket
        ("s3://b/t/x", "/b/t", False),  # s3:// vs local
        ("/b/t/x", "s3://b/t", False),
        ("gs://b/t/x", "s3://b/t", False),
        ("s3://b/x", "s3://b", True),
        ("gs://b/t/x", "gs://b/t", True),
    ],
)
def test_is_under_location(location: str, table_location: str, expected: bool) -> None:
    assert is_under_location(location, table_location) is expected


# ---- drop_table(purge=True)


def _commit(table: Table, updates: list[TableUpdate]) -> None:
    m = table.metadata
    response = table.catalog.commit_table(table, requirements_for(m, updates), updates)
    table._set_metadata(response.metadata, response.metadata_location)


def _files_under(directory: str) -> list[str]:
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(directory) for f in fs)


def _table_with_outside_files(catalog: Catalog, schema: Schema, tmp_path: Path) -> list[Path]:
    """``db.t`` with an add_files Parquet file, a statistics file and a partition statistics
    file outside its location (besides its own data and metadata); returns the outside files."""
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", schema)
    arrow_schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string())])
    table.append(pa.table({"id": [1], "name": ["a"]}, schema=arrow_schema))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    parquet = outside / "shared.parquet"
    pq.write_table(pa.table({"id": [2], "name": ["b"]}, schema=arrow_schema), parquet)
    table.add_files([str(parquet)])
    sid = table.metadata.current_snapshot_id
    assert sid is not None
    stats, part_stats = outside / "stats.puffin", outside / "partition-stats.parquet"
    stats.write_bytes(b"puffin")
    part_stats.write_bytes(b"parquet")
    _commit(
        table,
        [
            SetStatisticsUpdate(StatisticsFile(sid, str(stats), 6, 0)),
            SetPartitionStatisticsUpdate(PartitionStatisticsFile(sid, str(part_stats), 7)),
        ],
    )
    assert len(table.scan().to_arrow()) == 2
    return [parquet, stats, part_stats]


@pytest.mark.parametrize("opt_in", [False, True])
def test_purge_keeps_files_outside_the_location(
    catalog: Catalog,
    schema: Schema,
    tmp_path: Path,
    opt_in: bool,
    caplog: pytest.LogCaptureFixture,
) -> None:
    outside = _table_with_outside_files(catalog, schema, tmp_path)
    location = catalog.load_table("db.t").location()
    assert _files_under(location)
    with caplog.at_level(logging.WARNING, logger="frazil"):
        catalog.drop_table("db.t", purge=True, delete_outside_location=opt_in)
    assert not catalog.table_exists("db.t")
    assert _files_under(location) == []
    assert [p.exists() for p in outside] == [not opt_in] * 3
    warnings = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    if not opt_in:
        for p in outside:
            assert str(p) in warnings
    else:
        assert "outside the table location" not in warnings


def test_purge_keeps_a_metadata_log_entry_outside(
    sql_catalog: Catalog, schema: Schema, tmp_path: Path
) -> None:
    """A metadata file listed in the metadata log (here of a registered, crafted metadata) but
    lying outside the location survives the purge; the table's own metadata files do not."""
    catalog = sql_catalog
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", schema)
    commit_snapshot(table, [f"{table.location()}/data/a.parquet"])
    victim = tmp_path / "victim.metadata.json"
    victim.write_bytes(b"{}")
    m = table.metadata
    assert table.metadata_location is not None
    log = (*m.metadata_log, MetadataLogEntry(table.metadata_location, 2))
    crafted = m.replace(metadata_log=(*log, MetadataLogEntry(str(victim), 3)))
    crafted_location = f"{table.location()}/metadata/crafted.metadata.json"
    table.io.write(crafted_location, crafted.to_json_bytes())
    catalog.drop_table("db.t")
    catalog.register_table("db.t", crafted_location)
    assert _files_under(table.location())
    catalog.drop_table("db.t", purge=True)
    assert victim.exists()
    assert _files_under(table.location()) == []

    table.io.write(crafted_location, crafted.to_json_bytes())  # the purge deleted it
    catalog.register_table("db.t", crafted_location)
    catalog.purge_table("db.t", delete_outside_location=True)
    assert not victim.exists()


def test_delete_after_commit_keeps_old_metadata_outside(
    sql_catalog: Catalog, schema: Schema, tmp_path: Path
) -> None:
    """write.metadata.delete-after-commit drops metadata-log entries past the limit; one
    outside the location is not deleted."""
    catalog = sql_catalog
    catalog.create_namespace("db")
    table = catalog.create_table(
        "db.t",
        schema,
        properties={
            "write.metadata.delete-after-commit.enabled": "true",
            "write.metadata.previous-versions-max": "1",
        },
    )
    victim = tmp_path / "victim.metadata.json"
    victim.write_bytes(b"{}")
    m = table.metadata
    crafted = m.replace(metadata_log=(MetadataLogEntry(str(victim), 1),))
    crafted_location = f"{table.location()}/metadata/crafted.metadata.json"
    table.io.write(crafted_location, crafted.to_json_bytes())
    catalog.drop_table("db.t")
    table = catalog.register_table("db.t", crafted_location)
    for i in range(3):
        table.transaction().set_properties(x=str(i)).commit_transaction()
    assert len(table.metadata.metadata_log) == 1
    assert not Path(crafted_location).exists()  # the table's own old metadata is deleted
    assert victim.exists()


# ---- expire_snapshots


@pytest.mark.parametrize("opt_in", [False, True])
def test_expiry_keeps_an_outside_data_file_of_an_expired_snapshot(
    sql_catalog: Catalog, schema: Schema, tmp_path: Path, opt_in: bool
) -> None:
    catalog = sql_catalog
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", schema)
    inside = Path(table.location()) / "data" / "in.parquet"
    inside.parent.mkdir(parents=True)
    outside = tmp_path / "shared.parquet"
    for p in (inside, outside):
        p.write_bytes(b"x")
    expired = commit_snapshot(table, [str(inside), str(outside)])
    commit_snapshot(table, [f"{table.location()}/data/later.parquet"])
    expire = table.expire_snapshots().expire_snapshot_id(expired.snapshot_id)
    if opt_in:
        expire.delete_outside_location()
    expire.commit()
    assert table.snapshot_by_id(expired.snapshot_id) is None
    assert not inside.exists()
    assert outside.exists() is not opt_in
    assert expired.manifest_list is not None and not Path(expired.manifest_list).exists()
