"""Reading tables PyIceberg 0.12 wrote: frazil's ``to_arrow()`` equals PyIceberg's for the
current snapshot, older snapshots, a tag and a branch, with filters and selected fields, across
schema evolution (rename, added column, int -> long promotion) and partition evolution."""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from peers import import_peer

from frazil.table.static import StaticTable

pyiceberg = import_peer("pyiceberg")

from pyiceberg.catalog.sql import SqlCatalog  # noqa: E402
from pyiceberg.table import StaticTable as PyStaticTable  # noqa: E402
from pyiceberg.transforms import DayTransform  # noqa: E402
from pyiceberg.types import IntegerType, LongType  # noqa: E402

pytestmark = [pytest.mark.interop]

FILTERS = [
    "id > 3",
    "x > 2.0",
    "x IS NAN",
    "s = 'b'",
    "s != 'b'",
    "s IS NULL",
    "s IN ('a', 'c') OR id < 2",
    "s LIKE 'a%'",
    "NOT (id < 4)",
    "ts >= '2024-01-03T00:00:00+00:00'",
]


def _batch(ids: list[int]) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int32()),
            "x": [float("nan") if i == 5 else i * 1.5 for i in ids],
            "s": [None if i % 4 == 3 else "abc"[i % 3] for i in ids],
            "ts": [dt.datetime(2024, 1, 1 + i % 5, tzinfo=dt.timezone.utc) for i in ids],
            "st": [{"a": i, "b": f"b{i}"} for i in ids],
            "tags": [[f"t{i}"] * (i % 3) for i in ids],
        },
        schema=pa.schema(
            [
                pa.field("id", pa.int32(), nullable=False),
                ("x", pa.float64()),
                ("s", pa.string()),
                ("ts", pa.timestamp("us", tz="UTC")),
                ("st", pa.struct([("a", pa.int64()), ("b", pa.string())])),
                ("tags", pa.list_(pa.string())),
            ]
        ),
    )


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("pyiceberg-read")
    catalog = SqlCatalog("py", uri=f"sqlite:///{root}/cat.db", warehouse=f"file://{root}/wh")
    catalog.create_namespace("db")
    t = catalog.create_table("db.t", schema=_batch([0]).schema, properties={"format-version": "2"})
    with t.update_spec() as spec:
        spec.add_identity("s")
    t.append(_batch([0, 1, 2, 3]))
    first = t.current_snapshot().snapshot_id
    t.manage_snapshots().create_tag(first, "tag1").commit()
    with t.update_schema() as u:
        u.rename_column("s", "s2")
        u.add_column("added", IntegerType())
        u.update_column("id", LongType())
    with t.update_spec() as spec:
        spec.add_field("ts", DayTransform(), "d")
    t.append(_evolved(t, [4, 5, 6, 7]))
    second = t.current_snapshot().snapshot_id
    t.manage_snapshots().create_branch(second, "b1").commit()
    t.delete("id = 6")  # copy-on-write rewrite of one file
    t = catalog.load_table("db.t")
    return {"location": t.metadata_location, "first": first, "second": second}


def _evolved(t: Any, ids: list[int]) -> pa.Table:
    b = _batch(ids)
    schema = t.schema().as_arrow()
    cols = {
        "id": b.column("id").cast(pa.int64()),
        "x": b.column("x"),
        "s2": b.column("s"),
        "ts": b.column("ts"),
        "st": b.column("st"),
        "tags": b.column("tags"),
        "added": pa.array([7] * len(ids), pa.int32()),
    }
    return pa.table([cols[f.name] for f in schema], schema=schema)


def _norm(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_norm(x) for x in v]
    return v


def _rows(t: pa.Table) -> list[dict[str, Any]]:
    rows = [{k: _norm(v) for k, v in r.items()} for r in t.to_pylist()]
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def _same(ours: pa.Table, theirs: pa.Table) -> None:
    assert ours.column_names == theirs.column_names
    assert _rows(ours) == _rows(theirs)


@pytest.mark.parametrize("row_filter", [None, *FILTERS])
def test_current_snapshot_matches(tables: dict[str, Any], row_filter: str | None) -> None:
    ours = StaticTable.from_metadata(tables["location"])
    theirs = PyStaticTable.from_metadata(tables["location"])
    f = re.sub(r"\bs\b", "s2", row_filter) if row_filter else None
    if f is None:
        _same(ours.scan().to_arrow(), theirs.scan().to_arrow())
        return
    mine = ours.scan(row_filter=f).to_arrow()
    if " != " in f:
        # PyIceberg 0.12 drops nulls for != on a string column; frazil keeps them (null != 'b'
        # is true in the expressions spec; README, "Switching from PyIceberg"). The rows it
        # returns besides the nulls are PyIceberg's.
        column = f.split(" != ")[0].strip()
        nulls = pc.is_null(mine.column(column))
        assert pc.any(nulls).as_py()
        mine = mine.filter(pc.invert(nulls))
    _same(mine, theirs.scan(row_filter=f).to_arrow())


def test_time_travel_and_selection_match(tables: dict[str, Any]) -> None:
    ours = StaticTable.from_metadata(tables["location"])
    theirs = PyStaticTable.from_metadata(tables["location"])
    for sid in (tables["first"], tables["second"]):
        _same(ours.scan(snapshot_id=sid).to_arrow(), theirs.scan(snapshot_id=sid).to_arrow())
    _same(ours.scan().use_ref("tag1").to_arrow(), theirs.scan().use_ref("tag1").to_arrow())
    _same(ours.scan().use_ref("b1").to_arrow(), theirs.scan().use_ref("b1").to_arrow())
    sel = ("id", "st", "added")
    _same(
        ours.scan(selected_fields=sel, row_filter="id > 1").to_arrow(),
        theirs.scan(selected_fields=sel, row_filter="id > 1").to_arrow(),
    )
    assert ours.scan().count() == theirs.scan().count()
    assert ours.scan(limit=3).to_arrow().num_rows == 3
    assert ours.scan().to_pandas().shape[0] == ours.scan().count()
    reader = ours.scan().to_batches()
    assert sum(b.num_rows for b in reader) == ours.scan().count()


def test_planned_files_match(tables: dict[str, Any]) -> None:
    ours = StaticTable.from_metadata(tables["location"])
    theirs = PyStaticTable.from_metadata(tables["location"])
    mine = sorted(t.file.file_path for t in ours.scan().plan_files())
    assert mine == sorted(t.file.file_path for t in theirs.scan().plan_files())


def test_table_directory(tables: dict[str, Any]) -> None:
    directory = str(Path(tables["location"].removeprefix("file://")).parent.parent)
    assert StaticTable.from_metadata(directory).metadata_location.endswith(
        Path(tables["location"]).name
    )
