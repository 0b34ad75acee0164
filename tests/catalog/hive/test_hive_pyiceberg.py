"""One metastore shared by frazil and PyIceberg 0.12's HiveCatalog: each creates, writes, evolves
and reads the other's tables, rows compared exactly."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from peers import import_peer

pytestmark = pytest.mark.interop


@pytest.fixture
def pyiceberg_catalog(metastore: Any) -> Any:
    import_peer("pyiceberg")
    from pyiceberg.catalog.hive import HiveCatalog as PyIcebergHiveCatalog

    return PyIcebergHiveCatalog("pyi", uri=metastore.uri, warehouse=metastore.warehouse)


def _sorted(t: pa.Table) -> list[dict[str, Any]]:
    return sorted(t.to_pylist(), key=lambda r: r["id"])


def test_pyiceberg_reads_evolves_and_writes_a_frazil_table(
    catalog: Any, pyiceberg_catalog: Any, db: str
) -> None:
    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    table = catalog.create_table(f"{db}.from_frazil", schema)
    table.append(pa.table({"id": [1, 2], "name": ["a", "b"]}, schema=schema))

    theirs = pyiceberg_catalog.load_table(f"{db}.from_frazil")
    assert theirs.metadata_location == catalog.load_table(f"{db}.from_frazil").metadata_location
    assert _sorted(theirs.scan().to_arrow()) == [
        {"id": 1, "name": "a"},
        {"id": 2, "name": "b"},
    ]
    from pyiceberg.types import DoubleType

    with theirs.update_schema() as update:
        update.add_column("score", DoubleType())
    theirs = pyiceberg_catalog.load_table(f"{db}.from_frazil")
    theirs.append(
        pa.table(
            {"id": [3], "name": ["c"], "score": [0.5]},
            schema=pa.schema([("id", pa.int64()), ("name", pa.string()), ("score", pa.float64())]),
        )
    )
    mine = catalog.load_table(f"{db}.from_frazil")
    assert _sorted(mine.scan().to_arrow()) == [
        {"id": 1, "name": "a", "score": None},
        {"id": 2, "name": "b", "score": None},
        {"id": 3, "name": "c", "score": 0.5},
    ]
    # frazil commits on top of PyIceberg's commit, PyIceberg reads it.
    mine.delete("id = 1")
    assert _sorted(pyiceberg_catalog.load_table(f"{db}.from_frazil").scan().to_arrow()) == [
        {"id": 2, "name": "b", "score": None},
        {"id": 3, "name": "c", "score": 0.5},
    ]
    assert [
        s.snapshot_id for s in pyiceberg_catalog.load_table(f"{db}.from_frazil").snapshots()
    ] == [s.snapshot_id for s in catalog.load_table(f"{db}.from_frazil").metadata.snapshots]


def test_frazil_reads_evolves_and_writes_a_pyiceberg_table(
    catalog: Any, pyiceberg_catalog: Any, db: str
) -> None:
    schema = pa.schema([("id", pa.int64()), ("city", pa.string())])
    theirs = pyiceberg_catalog.create_table(f"{db}.from_pyiceberg", schema=schema)
    theirs.append(pa.table({"id": [10, 20], "city": ["x", "y"]}, schema=schema))

    assert (f"{db}", "from_pyiceberg") in catalog.list_tables(db)
    mine = catalog.load_table(f"{db}.from_pyiceberg")
    assert _sorted(mine.scan().to_arrow()) == [
        {"id": 10, "city": "x"},
        {"id": 20, "city": "y"},
    ]
    from frazil.types import LongType

    with mine.update_schema() as update:
        update.add_column("pop", LongType())
    mine = catalog.load_table(f"{db}.from_pyiceberg")
    mine.append(
        pa.table(
            {"id": [30], "city": ["z"], "pop": [7]},
            schema=pa.schema([("id", pa.int64()), ("city", pa.string()), ("pop", pa.int64())]),
        )
    )
    again = pyiceberg_catalog.load_table(f"{db}.from_pyiceberg")
    assert _sorted(again.scan().to_arrow()) == [
        {"id": 10, "city": "x", "pop": None},
        {"id": 20, "city": "y", "pop": None},
        {"id": 30, "city": "z", "pop": 7},
    ]
    again.append(
        pa.table(
            {"id": [40], "city": ["w"], "pop": [8]},
            schema=pa.schema([("id", pa.int64()), ("city", pa.string()), ("pop", pa.int64())]),
        )
    )
    assert [
        r["id"] for r in _sorted(catalog.load_table(f"{db}.from_pyiceberg").scan().to_arrow())
    ] == [
        10,
        20,
        30,
        40,
    ]
    # The metastore's own record is the same either way.
    from frazil.catalog.hive._thrift.hive_metastore import ttypes

    with catalog._client("test") as client:
        tbl = client.get_table_req(
            ttypes.GetTableRequest(dbName=db, tblName="from_pyiceberg")
        ).table
    assert (
        tbl.parameters["metadata_location"] == again.metadata_location
        or tbl.parameters["previous_metadata_location"] == again.metadata_location
    )
