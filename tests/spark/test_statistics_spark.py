"""NDV statistics on Spark (``frazil.spark.compute_statistics``): sketches computed per Spark
partition on the executors and unioned on the driver equal the one-machine computation (the
same bytes below the sketch's capacity, the same hashes below theta above it), and exact counts
from pyarrow."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import frazil.spark
from frazil.catalog import load_catalog
from frazil.manifest.puffin import read_puffin

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

ds = pytest.importorskip("datasketches")


def _data(start: int, stop: int) -> pa.Table:
    ids = list(range(start, stop))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "cat": pa.array([f"c{i % 700}" for i in ids]),
            "n": pa.array([None if i % 5 == 0 else i % 300 for i in ids], pa.int32()),
        }
    )


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("stats-spark")
    c = load_catalog("s", type="sql", uri=f"sqlite:///{path}/c.db", warehouse=str(path / "wh"))
    c.create_namespace("db")
    return c


def _blobs(table: Any, path: str) -> dict[int, bytes]:
    puffin = read_puffin(table.io.read(path), path)
    return {b.fields[0]: puffin.read_blob(b) for b in puffin.blobs}


def test_spark_sketches_equal_the_local_ones(spark: Any, catalog: Any) -> None:
    t = catalog.create_table("db.t", schema=_data(0, 1).schema)
    for start in range(0, 20_000, 4_000):  # five data files: several Spark partitions
        t.append(_data(start, start + 4_000))
    local = t.compute_statistics()
    local_blobs = _blobs(t, local.statistics_path)
    distributed = frazil.spark.compute_statistics(spark, t)
    t = t.refresh()
    assert t.metadata.statistics == (distributed,)
    blobs = _blobs(t, distributed.statistics_path)
    data = t.scan().to_arrow()
    ndv = t.read_ndv()
    for name in ("cat", "n"):  # below the capacity: exact, and the same bytes
        fid = t.schema().find_field(name).field_id
        assert blobs[fid] == local_blobs[fid]
        assert ndv[fid] == pc.count_distinct(data[name]).as_py()
    fid = t.schema().find_field("id").field_id
    mine, theirs = (ds.compact_theta_sketch.deserialize(b[fid]) for b in (blobs, local_blobs))
    theta = min(mine.theta64, theirs.theta64)
    assert {h for h in mine if h < theta} == {h for h in theirs if h < theta}
    assert abs(ndv[fid] - 20_000) < 0.0625 * 20_000
    assert [b.properties["ndv"] for b in distributed.blob_metadata] == [
        str(int(ds.compact_theta_sketch.deserialize(blobs[b.fields[0]]).get_estimate()))
        for b in distributed.blob_metadata
    ]


def test_spark_statistics_of_a_snapshot_without_rows(spark: Any, catalog: Any) -> None:
    t = catalog.create_table("db.empty", schema=_data(0, 1).schema)
    t.append(_data(0, 10))
    t.delete("id >= 0")
    f = frazil.spark.compute_statistics(spark, t.refresh(), columns=["cat"])
    assert [b.properties["ndv"] for b in f.blob_metadata] == ["0"]
    assert t.refresh().read_ndv() == {t.schema().find_field("cat").field_id: 0}
