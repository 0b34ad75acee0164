"""frazil's side of the PyIceberg-compatible names where PyIceberg is not the oracle: errors that
must be clear, and behaviour PyIceberg refuses."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from frazil.catalog import load_catalog
from frazil.exceptions import InvalidArgumentError, ValidationError
from frazil.metadata import Operation, Summary
from frazil.partitioning import PartitionField
from frazil.sorting import SortField
from frazil.transforms import BucketTransform, DayTransform, parse


def test_transform_string_fails_at_construction() -> None:
    assert PartitionField(1, 1000, "day", "d").transform == DayTransform()
    assert SortField(1, "bucket[8]").transform == BucketTransform(8)
    with pytest.raises(InvalidArgumentError, match="invalid transform 'dya'"):
        PartitionField(1, 1000, "dya", "d")
    with pytest.raises(InvalidArgumentError, match="bucket"):
        BucketTransform(num_buckets=0)
    assert repr(parse("truncate[3]")) == "TruncateTransform(width=3)"


def test_summary_is_a_mapping_with_operation() -> None:
    s = Summary({"operation": "append", "added-records": "3"})
    assert s.operation is Operation.APPEND and s.operation == "append"
    assert dict(s) == {"operation": "append", "added-records": "3"}
    assert s.additional_properties == {"added-records": "3"}
    assert "append" in {Operation.APPEND} and Operation.APPEND in {"append"}


def test_names_reads_and_dynamic_overwrite(tmp_path: Path) -> None:
    cat = load_catalog("t", type="in-memory", warehouse=str(tmp_path))
    cat.create_namespace("ns")
    df = pa.table({"id": [1, 2, 3, 4], "cat": ["a", "b", "b", None]})
    tbl = cat.create_table("ns.t", schema=df.schema)
    assert tbl.name() == ("ns", "t") and tbl.full_name() == "ns.t"
    with tbl.update_spec() as spec:
        spec.add_identity("cat")
    tbl.append(df)
    # partition evolution: a second field; rows under the old spec are replaced row by row
    with tbl.update_spec() as spec:
        spec.add_identity("id")
    tbl.dynamic_partition_overwrite(pa.table({"id": [2, 9], "cat": ["b", None]}))
    got = sorted(tbl.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert got == [
        {"id": 1, "cat": "a"},
        {"id": 2, "cat": "b"},
        {"id": 3, "cat": "b"},
        {"id": 4, "cat": None},  # partition (None, 4) is not in the new rows
        {"id": 9, "cat": None},
    ]
    snap = tbl.current_snapshot()
    assert snap is not None and snap.summary is not None
    assert snap.summary.operation == Operation.OVERWRITE  # type: ignore[attr-defined]
    with tbl.update_spec() as spec:
        spec.add_field("id", BucketTransform(4), "b")
    with pytest.raises(ValidationError, match="identity"):
        tbl.dynamic_partition_overwrite(df)
    try:
        import ray  # noqa: F401
    except ImportError:
        with pytest.raises(InvalidArgumentError, match="needs Ray"):
            tbl.scan().to_ray()
    lazy = tbl.to_polars()
    assert lazy.select("id").collect()["id"].sort().to_list() == [1, 2, 3, 4, 9]
    assert lazy.head(1).collect().height == 1
