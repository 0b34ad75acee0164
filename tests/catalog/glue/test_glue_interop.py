"""frazil and PyIceberg 0.12's GlueCatalog share one Glue (moto, server mode): each reads the
other's tables with exact rows, and a table one creates the other commits to. Also an S3 Tables
database (federation emulated in front of moto, see aws_moto.GlueEmulator)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from aws_moto import GlueEmulator, client_props
from peers import import_peer

from frazil.catalog.glue import GlueCatalog

pytestmark = pytest.mark.interop

ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": pa.array(["a", "b", "c"])})
MORE = pa.table({"id": pa.array([4, 5], pa.int64()), "name": pa.array(["d", None])})


def _pyiceberg(glue_emulator: GlueEmulator, warehouse: Path) -> Any:
    import_peer("pyiceberg")
    from pyiceberg.catalog.glue import GlueCatalog as PyIcebergGlue

    return PyIcebergGlue(
        "peer", **client_props("glue", glue_emulator.url), warehouse=str(warehouse)
    )


def _rows(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(
        zip(table.column("id").to_pylist(), table.column("name").to_pylist(), strict=True)
    )


def test_pyiceberg_reads_frazil_tables(
    glue: GlueCatalog, glue_emulator: GlueEmulator, database: str, warehouse: Path
) -> None:
    t = glue.create_table(f"{database}.from_frazil", ROWS.schema)
    t.append(ROWS)
    t.append(MORE)
    peer = _pyiceberg(glue_emulator, warehouse)
    assert (database, "from_frazil") in peer.list_tables(database)
    got = peer.load_table(f"{database}.from_frazil")
    assert got.metadata_location == glue.load_table(f"{database}.from_frazil").metadata_location
    assert _rows(got.scan().to_arrow()) == _rows(pa.concat_tables([ROWS, MORE]))
    # PyIceberg commits to frazil's table (its Glue commit: UpdateTable with the VersionId).
    got.append(
        pa.table({"id": pa.array([6], pa.int64()), "name": pa.array(["f"], pa.large_string())})
    )
    back = glue.load_table(f"{database}.from_frazil").scan().to_arrow()
    assert _rows(back) == [*_rows(pa.concat_tables([ROWS, MORE])), (6, "f")]


def test_frazil_reads_pyiceberg_tables(
    glue: GlueCatalog, glue_emulator: GlueEmulator, database: str, warehouse: Path
) -> None:
    peer = _pyiceberg(glue_emulator, warehouse)
    pt = peer.create_table(f"{database}.from_pyiceberg", schema=ROWS.schema)
    pt.append(ROWS)
    assert glue.list_tables(database) == [(database, "from_pyiceberg")]
    t = glue.load_table(f"{database}.from_pyiceberg")
    assert t.metadata_location == peer.load_table(f"{database}.from_pyiceberg").metadata_location
    assert _rows(t.scan().to_arrow()) == _rows(ROWS)
    t.append(MORE)
    again = peer.load_table(f"{database}.from_pyiceberg")
    assert _rows(again.scan().to_arrow()) == _rows(pa.concat_tables([ROWS, MORE]))
    raw = glue.glue.get_table(DatabaseName=database, Name="from_pyiceberg")["Table"]
    assert raw["Parameters"]["previous_metadata_location"] == pt.metadata_location
    # Namespaces and their properties read the same both ways.
    glue.create_namespace(f"{database}_p", {"location": str(warehouse / "p"), "k": "v"})
    assert peer.load_namespace_properties(f"{database}_p") == glue.load_namespace_properties(
        f"{database}_p"
    )


def test_s3_tables_database_both_ways(
    glue: GlueCatalog, glue_emulator: GlueEmulator, warehouse: Path
) -> None:
    glue_emulator.s3tables.add("s3t_interop")
    glue.create_namespace("s3t_interop")
    peer = _pyiceberg(glue_emulator, warehouse)
    ft = glue.create_table("s3t_interop.f", ROWS.schema)
    ft.append(ROWS)
    assert _rows(peer.load_table("s3t_interop.f").scan().to_arrow()) == _rows(ROWS)
    pt = peer.create_table("s3t_interop.p", schema=ROWS.schema)
    assert pt.metadata.location.endswith("--table-s3")
    pt.append(ROWS)
    t = glue.load_table("s3t_interop.p")
    assert t.metadata.location == pt.metadata.location
    t.append(MORE)
    assert _rows(peer.load_table("s3t_interop.p").scan().to_arrow()) == _rows(
        pa.concat_tables([ROWS, MORE])
    )
