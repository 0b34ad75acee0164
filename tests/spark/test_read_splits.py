"""Split planning of Spark reads (frazil.spark.read, and the data source on 4.x through the same
planner): large Parquet files split at row-group boundaries (every row read once, ``_pos``
right, deletes applied), small files combined, Java's packing rules, and the time-travel options
(``as-of-timestamp``, ``branch``, ``tag``) and v3 metadata columns.

Oracles: pyarrow's own reading of the data files and their row-group offsets, and Java's split
rules worked by hand (``OffsetsAwareSplitScanTaskIterator``, ``BinPacking.PackingIterable``)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from frazil.catalog import load_catalog
from frazil.exceptions import InvalidArgumentError
from frazil.expressions import In
from frazil.schema import Schema
from frazil.spark.read import SplitOptions, _split_bounds, pack_splits
from frazil.types import LongType, NestedField, StringType

pytestmark = [
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]
spark_only = pytest.mark.spark

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "s", StringType()),
)
ROWS = 20_000
GROUP_ROWS = 2_000  # ten row groups in the big file


def data(n: int, offset: int = 0) -> pa.Table:
    ids = np.arange(offset, offset + n, dtype=np.int64)
    # strings that do not compress away, so row groups have some size
    return pa.table(
        {
            "id": pa.array(ids),
            "s": pa.array([f"value-{(i * 7919) % 100_003:06d}-{i}" for i in ids.tolist()]),
        }
    )


# ---------------------------------------------------------------------------------------------
# the rules, without Spark


def test_split_bounds_follow_offsets() -> None:
    # row groups start at 4, 100, 200, 300, 400 in a 500-byte file; target 150: Java combines
    # consecutive row groups while they fit: [4,200) [200,300)... here each pair is 100 bytes
    assert _split_bounds(500, [4, 100, 200, 300, 400], 150, "PARQUET") == [
        0,
        100,
        200,
        300,
        400,
        500,
    ]
    assert _split_bounds(500, [4, 100, 200, 300, 400], 250, "PARQUET") == [0, 200, 400, 500]
    assert _split_bounds(500, [4, 100, 200, 300, 400], 1000, "PARQUET") == [0, 500]
    # invalid offsets (unsorted, beyond the file): Parquet falls back to fixed-size splits
    assert _split_bounds(500, [4, 300, 200], 200, "PARQUET") == [0, 200, 400, 500]
    assert _split_bounds(500, [4, 900], 200, "PARQUET") == [0, 200, 400, 500]
    # ORC needs stripe offsets, Avro is read whole
    assert _split_bounds(500, None, 200, "ORC") == [0, 500]
    assert _split_bounds(500, [3, 250], 200, "ORC") == [0, 250, 500]
    assert _split_bounds(500, None, 200, "AVRO") == [0, 500]


def test_pack_splits_lookback_and_open_cost() -> None:
    def pack(sizes: list[int], target: int, cost: int, lookback: int) -> list[list[int]]:
        splits = pa.table({"size": pa.array(sizes, pa.int64())})
        files = np.ones(len(sizes), np.int64)
        groups = pack_splits(splits, files, SplitOptions(target, cost, lookback))
        return [g.tolist() for g in groups]

    # first fit among the open bins, in plan order
    assert pack([60, 60, 30, 50, 10], 100, 1, 10) == [[0, 2, 4], [1], [3]]
    # lookback 1: a bin closes as soon as a second one opens
    assert pack([60, 60, 30, 50, 10], 100, 1, 1) == [[0], [1, 2], [3, 4]]
    # every split weighs at least the open-file cost: ten 1-byte files, cost 30, target 100
    assert pack([1] * 10, 100, 30, 10) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    # at least `parallelism` partitions when there is enough to split
    splits = pa.table({"size": pa.array([10] * 8, pa.int64())})
    groups = pack_splits(splits, np.ones(8, np.int64), SplitOptions(1 << 30, 1, 10), 4)
    assert [len(g) for g in groups] == [2, 2, 2, 2]


def test_split_options() -> None:
    class T:
        properties: ClassVar[dict[str, str]] = {
            "read.split.target-size": "1000",
            "read.split.open-file-cost": "7",
        }

    assert SplitOptions.of(T()) == SplitOptions(1000, 7, 10)
    assert SplitOptions.of(T(), {"split-size": "50", "lookback": "3"}) == SplitOptions(50, 7, 3)
    with pytest.raises(InvalidArgumentError, match="split-size"):
        SplitOptions.of(T(), {"split-size": "big"})
    with pytest.raises(InvalidArgumentError, match="must be positive"):
        SplitOptions.of(T(), {"file-open-cost": "0"})


# ---------------------------------------------------------------------------------------------
# on Spark


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Any:
    cat = load_catalog("splits", warehouse=str(tmp_path_factory.mktemp("splits")))
    cat.create_namespace("db")
    return cat


@pytest.fixture(scope="module")
def big(catalog: Any) -> Any:
    """One data file of ten row groups, then a deletion vector over some of its rows."""
    t = catalog.create_table(
        "db.big",
        SCHEMA,
        properties={
            "format-version": "3",
            "write.parquet.row-group-limit": str(GROUP_ROWS),
            "write.delete.mode": "merge-on-read",
        },
    )
    # The writer spreads a large append's row groups over one file per core; this table needs
    # them in one file, so the append writes on one lane.
    from unittest import mock

    with mock.patch("frazil.table.write.writer._workers", return_value=1):
        t.append(data(ROWS))
    t.manage_snapshots().create_tag(t.current_snapshot().snapshot_id, "before").commit()
    t.manage_snapshots().create_branch(t.current_snapshot().snapshot_id, "audit").commit()
    t = catalog.load_table("db.big")
    t.delete(In("id", tuple(range(0, ROWS, 97))))
    return catalog.load_table("db.big")


def the_file(table: Any) -> Any:
    files = [t.file for t in table.scan().plan_files()]
    assert len(files) == 1
    return files[0]


def to_arrow(df: Any) -> pa.Table:
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "distutils Version classes", DeprecationWarning)
        if hasattr(df, "toArrow"):
            return df.toArrow()
        return pa.Table.from_batches(df._collect_as_arrow())


@spark_only
def test_large_file_splits_at_row_groups(spark: Any, catalog: Any, big: Any) -> None:
    import frazil.spark as fspark

    f = the_file(big)
    md = pq.ParquetFile(f.file_path).metadata
    assert md.num_row_groups == ROWS // GROUP_ROWS
    starts = []
    for i in range(md.num_row_groups):
        col = md.row_group(i).column(0)
        starts.append(min(col.data_page_offset, col.dictionary_page_offset or col.data_page_offset))
    assert list(f.split_offsets) == starts  # pyarrow's row-group starts

    # about three row groups per split
    size = (starts[3] - starts[0]) + 1
    df = fspark.read(spark, "db.big", catalog, options={"split-size": str(size)})
    assert df.rdd.getNumPartitions() >= 3
    got = to_arrow(df.select("id", "s"))
    raw = pq.read_table(f.file_path)
    keep = [i % 97 != 0 for i in raw["id"].to_pylist()]
    expected = raw.filter(pa.array(keep))
    assert sorted(got.to_pylist(), key=lambda r: r["id"]) == expected.to_pylist()

    # positions across splits: every live row once, at its place in the file
    df = fspark.read(
        spark, "db.big", catalog, selected_fields=["id", "_pos"], options={"split-size": str(size)}
    )
    pos = to_arrow(df).sort_by("id")
    assert pos["_pos"].to_pylist() == [i for i in range(ROWS) if i % 97 != 0]
    assert pos["id"].to_pylist() == pos["_pos"].to_pylist()

    # the default split size reads the ~1 MB file as one split
    assert fspark.read(spark, "db.big", catalog).rdd.getNumPartitions() == 1


@spark_only
def test_small_files_are_combined(spark: Any, catalog: Any) -> None:
    import frazil.spark as fspark

    t = catalog.create_table("db.small", SCHEMA)
    for k in range(12):
        t.append(data(50, k * 50))
    t = catalog.load_table("db.small")
    assert len(list(t.scan().plan_files())) == 12
    df = fspark.read(spark, "db.small", catalog)
    # twelve files of 4 MB open cost each fit in 128 MB: as few partitions as cores
    assert df.rdd.getNumPartitions() == spark.sparkContext.defaultParallelism
    assert sorted(to_arrow(df)["id"].to_pylist()) == list(range(600))
    # open cost 1 byte, split size 1 byte: one file per partition
    one = fspark.read(
        spark, "db.small", catalog, options={"split-size": "1", "file-open-cost": "1"}
    )
    assert one.rdd.getNumPartitions() == 12
    assert one.count() == 600


@spark_only
def test_time_travel_options_and_row_lineage(spark: Any, catalog: Any, big: Any) -> None:
    import frazil.spark as fspark

    first = big.snapshots()[0]
    as_of = fspark.read(spark, "db.big", catalog, as_of_timestamp=first.timestamp_ms)
    assert as_of.count() == ROWS  # before the delete
    assert fspark.read(spark, "db.big", catalog, tag="before").count() == ROWS
    assert fspark.read(spark, "db.big", catalog, branch="audit").count() == ROWS
    assert fspark.read(spark, "db.big", catalog).count() == ROWS - len(range(0, ROWS, 97))
    with pytest.raises(InvalidArgumentError, match="no tag named 'audit'"):
        fspark.read(spark, "db.big", catalog, tag="audit")
    with pytest.raises(InvalidArgumentError, match="no branch named 'before'"):
        fspark.read(spark, "db.big", catalog, branch="before")
    with pytest.raises(InvalidArgumentError, match="choose one of"):
        fspark.read(spark, "db.big", catalog, snapshot_id=first.snapshot_id, tag="before")

    # v3 row lineage: row ids are the file's first_row_id + position (inherited), as the local
    # reader gives them; the sequence number is the append's
    cols = ["id", "_row_id", "_last_updated_sequence_number", "_spec_id", "_file"]
    got = to_arrow(fspark.read(spark, "db.big", catalog, selected_fields=cols)).sort_by("id")
    f = the_file(big)
    first_row_id = f.first_row_id
    assert first_row_id is not None
    assert got["_row_id"].to_pylist() == [first_row_id + i for i in got["id"].to_pylist()]
    assert set(got["_last_updated_sequence_number"].to_pylist()) == {1}
    assert set(got["_file"].to_pylist()) == {f.file_path}
    assert set(got["_spec_id"].to_pylist()) == {0}
