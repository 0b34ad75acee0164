"""Scan-planning pages written and read natively (:mod:`frazil.rest.plan_wire`), checked
against the content-file JSON of :func:`frazil.table.scan.tasks.content_file_to_json` (the
per-file Python writer, an independent implementation of the same form) on a table
partitioned by a value of every common type, with column stats and position deletes."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pytest

from frazil.catalog import load_catalog
from frazil.exceptions import ParseError
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.rest.plan_wire import PageLayout, read_page, wire_residual, write_page
from frazil.schema import Schema
from frazil.table.scan import ScanPlan, table_partition_type
from frazil.table.scan.tasks import content_file_from_json, content_file_to_json
from frazil.transforms import parse
from frazil.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
    UUIDType,
)

COLUMNS = [
    (1, "i", IntegerType(), pa.int32()),
    (2, "l", LongType(), pa.int64()),
    (3, "s", StringType(), pa.string()),
    (4, "d", DateType(), pa.date32()),
    (5, "ts", TimestampType(), pa.timestamp("us")),
    (6, "tz", TimestamptzType(), pa.timestamp("us", "UTC")),
    (7, "b", BooleanType(), pa.bool_()),
    (8, "dec", DecimalType(9, 2), pa.decimal128(9, 2)),
    (9, "bin", BinaryType(), pa.binary()),
    (10, "u", UUIDType(), pa.uuid()),
    (11, "x", DoubleType(), pa.float64()),
]
SCHEMA = Schema(*(NestedField(fid, n, t, required=False) for fid, n, t, _ in COLUMNS))
SPEC = PartitionSpec(
    PartitionField(1, 1000, parse("identity"), "i"),
    PartitionField(2, 1001, parse("bucket[4]"), "l_bucket"),
    PartitionField(3, 1002, parse("truncate[2]"), "s_trunc"),
    PartitionField(4, 1003, parse("identity"), "d"),
    PartitionField(5, 1004, parse("hour"), "ts_hour"),
    PartitionField(6, 1005, parse("day"), "tz_day"),
    PartitionField(7, 1006, parse("identity"), "b"),
    PartitionField(8, 1007, parse("identity"), "dec"),
    PartitionField(9, 1008, parse("identity"), "bin"),
    PartitionField(10, 1009, parse("identity"), "u"),
)


def _rows(n: int) -> pa.Table:
    base = dt.datetime(2024, 3, 1, 5, 30)
    data: dict[str, list[Any]] = {
        "i": [k % 2 if k % 5 else None for k in range(n)],
        "l": [k % 2 * 1_000_003 for k in range(n)],
        "s": [f'é{k % 4}"x' for k in range(n)],
        "d": [dt.date(2024, 1, 1) + dt.timedelta(days=k % 2) for k in range(n)],
        "ts": [base + dt.timedelta(hours=k % 2) for k in range(n)],
        "tz": [base.replace(tzinfo=dt.timezone.utc) for _ in range(n)],
        "b": [k % 2 == 0 for k in range(n)],
        "dec": [decimal.Decimal(k % 2) / 4 for k in range(n)],
        "bin": [bytes([k % 2, 255]) for k in range(n)],
        "u": [uuid.UUID(int=k % 2).bytes for k in range(n)],
        "x": [k / 3 for k in range(n)],
    }
    return pa.table({name: pa.array(data[name], at) for _, name, _, at in COLUMNS})


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> ScanPlan:
    tmp: Path = tmp_path_factory.mktemp("plan-wire")
    cat = load_catalog("w", type="sql", uri=f"sqlite:///{tmp}/c.db", warehouse=f"file://{tmp}/wh")
    cat.create_namespace("db")
    t = cat.create_table(
        "db.t",
        SCHEMA,
        partition_spec=SPEC,
        properties={"format-version": "2", "write.delete.mode": "merge-on-read"},
    )
    for k in range(3):
        t.append(_rows(12 + k))
    t.delete("x = 1.0")
    # an evolved spec: tasks of two specs in one plan
    t.update_spec().remove_field("l_bucket").commit()
    t.append(_rows(5))
    scan = t.scan(row_filter="x > 0.5").include_column_stats(True)
    out = scan.plan_files_arrow()
    assert len(out.delete_files) > 0 and len({*out.tasks.column("spec_id").to_pylist()}) == 2
    return out


def _expected(plan: ScanPlan, start: int, size: int) -> dict[str, Any]:
    """The page as the per-file Python writer gives it."""
    tasks = plan.tasks.slice(start, size)
    refs = tasks.column("delete_file_references").to_pylist()
    rows = sorted({r for row in refs for r in row})
    local = {g: i for i, g in enumerate(rows)}
    deletes = plan.data_files(plan.delete_files.take(rows)) if rows else []
    out = []
    for f, row, text in zip(
        plan.data_files(tasks), refs, tasks.column("residual").to_pylist(), strict=True
    ):
        task: dict[str, Any] = {"data-file": content_file_to_json(f, plan.specs[f.spec_id], SCHEMA)}
        if row:
            task["delete-file-references"] = [local[r] for r in row]
        task["residual-filter"] = json.loads(wire_residual(text, plan.schema))
        out.append(task)
    return {
        "file-scan-tasks": out,
        "delete-files": [content_file_to_json(d, plan.specs[d.spec_id], SCHEMA) for d in deletes],
    }


def _layout(plan: ScanPlan) -> PageLayout:
    return PageLayout.of(plan.tasks.schema.field("partition").type, plan.specs, plan.schema)


@pytest.mark.parametrize("size", [1, 7, 1000])
def test_pages_equal_the_per_file_writer(plan: ScanPlan, size: int) -> None:
    layout = _layout(plan)
    for start in range(0, len(plan), size):
        body = write_page(plan, start, size, layout)
        expected = _expected(plan, start, size)
        assert json.loads(body) == expected
        # the bytes Starlette's JSONResponse renders
        assert body == json.dumps(expected, ensure_ascii=False, separators=(",", ":")).encode()


def test_pages_read_back_to_the_plan(plan: ScanPlan) -> None:
    layout = _layout(plan)
    md_specs = plan.specs
    empty = ScanPlan.from_tasks([], plan.schema, md_specs, _partition_type(plan), stats=True)
    body = write_page(plan, 0, len(plan), layout)
    tasks, deletes, more = read_page(body, layout, empty, lambda t: t or "true")
    assert more == []
    assert tasks.schema == empty.tasks.schema and deletes.schema == empty.delete_files.schema
    # every file read back equals what the per-file reader makes of the same JSON
    obj = json.loads(body)
    back = ScanPlan(tasks, deletes, plan.schema, md_specs)
    for f, t in zip(back.data_files(tasks), obj["file-scan-tasks"], strict=True):
        want = content_file_from_json(t["data-file"], md_specs, SCHEMA)
        assert f.partition == want.partition
        for name in ("file_path", "record_count", "lower_bounds", "upper_bounds", "value_counts",
                     "null_value_counts", "split_offsets", "file_format", "spec_id"):  # fmt: skip
            assert getattr(f, name) == getattr(want, name), name
    for f, d in zip(back.data_files(deletes), obj["delete-files"], strict=True):
        want = content_file_from_json(d, md_specs, SCHEMA)
        assert (f.file_path, f.content, f.partition) == (
            want.file_path,
            want.content,
            want.partition,
        )
    assert tasks.column("delete_file_references").to_pylist() == [
        t.get("delete-file-references", []) for t in obj["file-scan-tasks"]
    ]


def _partition_type(plan: ScanPlan) -> Any:
    # table_partition_type reads only the specs of the metadata
    md = SimpleNamespace(partition_specs=list(plan.specs.values()))
    return table_partition_type(md, plan.schema)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "body",
    [
        b"{",
        b"[]",
        b'{"file-scan-tasks":[{"data-file":{"spec-id":99}}]}',
        b'{"file-scan-tasks":[{"data-file":{"spec-id":0,"content":"data","file-path":"p",'
        b'"file-format":"parquet","partition":[1],"file-size-in-bytes":1,"record-count":1}}]}',
        b'{"file-scan-tasks":[],"delete-files":[{"spec-id":0,"content":"nope"}]}',
        b'{"file-scan-tasks":[{"data-file":{"spec-id":1,"content":"data","file-path":"p",'
        b'"file-format":"parquet","partition":[1,"a","2024-01-01",1,1,true,"1.00","00",'
        b'"00000000-0000-0000-0000-000000000000"],"file-size-in-bytes":1,"record-count":1},'
        b'"delete-file-references":[3]}]}',
    ],
)
def test_malformed_pages_are_parse_errors(plan: ScanPlan, body: bytes) -> None:
    empty = ScanPlan.from_tasks([], plan.schema, plan.specs, _partition_type(plan))
    with pytest.raises(ParseError):
        read_page(body, _layout(plan), empty, lambda t: t or "true")
