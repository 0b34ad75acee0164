"""v1 snapshots that list their manifests inline (``manifests`` instead of ``manifest-list``,
spec "Snapshots": optional in v1). The Java reference reads them (BaseSnapshot) and writes the
next snapshot with a manifest list; so does frazil.

The inline tables are made from frazil-written v1 tables by rewriting the metadata JSON with the
manifest paths read by fastavro from each manifest list, which is then deleted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest

from frazil.catalog import load_catalog
from frazil.expressions import EqualTo
from frazil.partitioning import PartitionField, PartitionSpec, parse_transform
from frazil.schema import Schema
from frazil.types import LongType, NestedField, StringType

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "category", StringType(), required=False),
)
SPEC = PartitionSpec(PartitionField(2, 1000, parse_transform("identity"), "category"))


def _inline(table_dir: Path) -> Path:
    """Rewrites the newest metadata file of ``table_dir`` as the next version, its snapshots
    listing their manifests inline; returns it. The manifest lists are deleted."""
    meta_dir = table_dir / "metadata"
    hint = int((meta_dir / "version-hint.text").read_text())
    meta = json.loads((meta_dir / f"v{hint}.metadata.json").read_text())
    for snap in meta["snapshots"]:
        list_path = snap.pop("manifest-list").removeprefix("file://")
        with open(list_path, "rb") as fo:
            snap["manifests"] = [r["manifest_path"] for r in fastavro.reader(fo)]  # type: ignore[index]
        Path(list_path).unlink()
    out = meta_dir / f"v{hint + 1}.metadata.json"
    out.write_text(json.dumps(meta))
    (meta_dir / "version-hint.text").write_text(str(hint + 1))
    return out


@pytest.fixture
def catalog(tmp_path: Path) -> Any:
    cat = load_catalog("w", type="filesystem", warehouse=str(tmp_path))
    cat.create_namespace("db")
    return cat


def _rows(t: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(zip(t.column("id").to_pylist(), t.column("category").to_pylist(), strict=True))


def test_read_and_write_a_table_with_inline_manifests(catalog: Any, tmp_path: Path) -> None:
    table = catalog.create_table(
        ("db", "t"), SCHEMA, partition_spec=SPEC, properties={"format-version": "1"}
    )
    a = pa.table({"id": pa.array([1, 2], pa.int64()), "category": ["alpha", "beta"]})
    b = pa.table({"id": pa.array([3], pa.int64()), "category": ["beta"]})
    table.append(a)
    table.append(b)
    first = table.metadata.snapshots[0].snapshot_id
    _inline(tmp_path / "db" / "t")

    table = catalog.load_table(("db", "t"))
    snap = table.current_snapshot()
    assert snap.manifest_list is None and snap.manifests
    expected = [(1, "alpha"), (2, "beta"), (3, "beta")]
    assert _rows(table.scan().to_arrow()) == expected
    assert table.scan().count() == 3
    assert _rows(table.scan(row_filter=EqualTo("category", "beta")).to_arrow()) == expected[1:]
    # an older inline snapshot (time travel)
    assert _rows(table.scan(snapshot_id=first).to_arrow()) == expected[:2]
    tasks = list(table.scan().plan_files())
    assert sorted(t.file.record_count for t in tasks) == [1, 1, 1]

    # The next snapshot has a manifest list naming the inline manifests too.
    table.append(pa.table({"id": pa.array([4], pa.int64()), "category": ["alpha"]}))
    new = table.current_snapshot()
    assert new.manifest_list is not None
    with open(new.manifest_list.removeprefix("file://"), "rb") as fo:
        listed = [r["manifest_path"] for r in fastavro.reader(fo)]  # type: ignore[index]
    assert set(snap.manifests) <= set(listed)
    assert _rows(catalog.load_table(("db", "t")).scan().to_arrow()) == sorted(
        [*expected, (4, "alpha")]
    )
