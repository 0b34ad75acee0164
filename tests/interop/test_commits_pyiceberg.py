"""frazil's SQL catalog and PyIceberg's SqlCatalog share one database: tables and commits made by
either are loaded by the other with the same snapshots, schemas, specs and data files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from frazil.catalog import load_catalog
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.transforms import parse
from frazil.types import LongType, NestedField, StringType

pytestmark = pytest.mark.interop

CATALOG = "shared"


def _catalogs(tmp_path: Path) -> tuple[Any, Any]:
    from pyiceberg.catalog.sql import SqlCatalog

    warehouse = tmp_path / "wh"
    warehouse.mkdir()
    uri = f"sqlite:///{tmp_path}/catalog.db"
    frazil_catalog = load_catalog(CATALOG, type="sql", uri=uri, warehouse=str(warehouse))
    frazil_catalog.create_namespace("db")
    py_catalog = SqlCatalog(CATALOG, uri=uri, warehouse=f"file://{warehouse}")
    return frazil_catalog, py_catalog


def _files(path: Path, rows: dict[str, list[Any]]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        pa.table({"id": pa.array(rows["id"], pa.int64()), "category": rows["category"]}), path
    )
    return str(path)


def _py_files(py_table: Any) -> list[str]:
    return sorted(t.file.file_path.removeprefix("file:") for t in py_table.scan().plan_files())


@pytest.mark.parametrize("version", [1, 2, 3])
def test_pyiceberg_loads_what_frazil_commits(tmp_path: Path, version: int) -> None:
    fz, py = _catalogs(tmp_path)
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "category", StringType(), required=False),
    )
    table = fz.create_table(
        "db.t",
        schema,
        partition_spec=PartitionSpec(PartitionField(2, 1000, parse("identity"), "category")),
        properties={"format-version": str(version)},
    )
    a = _files(tmp_path / "in" / "a.parquet", {"id": [1, 2], "category": ["x", "x"]})
    b = _files(tmp_path / "in" / "b.parquet", {"id": [3], "category": ["y"]})
    table.add_files([a])
    table.add_files([b])
    with table.update_schema() as update:
        update.add_column("extra", LongType())

    pt = py.load_table("db.t")
    assert pt.metadata_location == table.metadata_location
    assert [s.snapshot_id for s in pt.snapshots()] == [s.snapshot_id for s in table.snapshots()]
    assert [
        (s.parent_snapshot_id, s.sequence_number, s.summary.operation.value) for s in pt.snapshots()
    ] == [(s.parent_snapshot_id, s.sequence_number, s.operation) for s in table.snapshots()]
    assert [f.name for f in pt.schema().fields] == ["id", "category", "extra"]
    assert pt.spec().fields[0].name == "category"
    assert _py_files(pt) == sorted([a, b])
    rows = pt.scan().to_arrow().sort_by("id")
    assert rows.column("id").to_pylist() == [1, 2, 3]
    assert rows.column("extra").to_pylist() == [None, None, None]
    if version >= 3:
        assert pt.metadata.next_row_id == table.metadata.next_row_id == 3


def test_frazil_commits_on_top_of_pyiceberg(tmp_path: Path) -> None:
    fz, py = _catalogs(tmp_path)
    import pyarrow as pa

    pt = py.create_table(
        "db.p", pa.schema([pa.field("id", pa.int64()), pa.field("category", pa.string())])
    )
    pt.append(pa.table({"id": pa.array([1], pa.int64()), "category": ["x"]}))
    table = fz.load_table("db.p")
    assert table.current_snapshot().snapshot_id == pt.current_snapshot().snapshot_id
    b = _files(tmp_path / "in" / "b.parquet", {"id": [2], "category": ["y"]})
    table.add_files([b])
    pt = py.load_table("db.p")
    assert pt.current_snapshot().parent_snapshot_id == table.snapshots()[0].snapshot_id
    assert pt.scan().to_arrow().sort_by("id").column("id").to_pylist() == [1, 2]
    # and PyIceberg appends again on top of frazil's snapshot
    pt.append(pa.table({"id": pa.array([3], pa.int64()), "category": ["z"]}))
    table.refresh()
    assert len(table.snapshots()) == 3
    assert table.current_snapshot().parent_snapshot_id == table.snapshots()[1].snapshot_id


def test_frazil_reads_every_manifest_field_pyiceberg_writes(tmp_path: Path) -> None:
    """PyIceberg 0.12 writes some spec ints as Avro longs (equality_ids); frazil reads them."""
    from frazil.manifest import read_manifest, read_manifest_list

    _, py = _catalogs(tmp_path)
    pt = py.create_table("db.m", pa.schema([pa.field("id", pa.int64())]))
    pt.append(pa.table({"id": pa.array([5, 7], pa.int64())}))
    table = load_catalog(CATALOG, type="sql", uri=f"sqlite:///{tmp_path}/catalog.db").load_table(
        "db.m"
    )
    snapshot = table.current_snapshot()
    rows = read_manifest_list(table.io.read(snapshot.manifest_list)).to_pylist()
    entries = read_manifest(table.io.read(rows[0]["manifest_path"]), rows[0]).to_pylist()
    (py_file,) = [t.file for t in pt.scan().plan_files()]
    (entry,) = entries
    data_file = entry["data_file"]
    assert data_file["file_path"] == py_file.file_path
    assert data_file["record_count"] == py_file.record_count == 2
    assert dict(data_file["value_counts"]) == py_file.value_counts
    assert dict(data_file["lower_bounds"]) == py_file.lower_bounds
    assert entry["sequence_number"] == snapshot.sequence_number
