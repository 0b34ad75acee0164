"""Pages skipped by a Parquet file's page index (the ``ColumnIndex`` and ``OffsetIndex`` Java
writes by default, pyarrow on request): a filtered scan returns the same rows with and without
it, over every kind of predicate, nulls and NaN, and skips the pages its bounds rule out."""

from __future__ import annotations

import contextlib
import datetime as dt
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from frazil.expressions import (
    And,
    EqualTo,
    GreaterThanOrEqual,
    In,
    IsNaN,
    IsNull,
    LessThan,
    Not,
    NotEqualTo,
    NotIn,
    NotNull,
    NotStartsWith,
    Or,
    StartsWith,
    bind,
)
from frazil.expressions.base import BooleanExpression
from frazil.schema import Schema
from frazil.table.scan import formats
from frazil.table.scan.filter import RowFilter
from frazil.types import (
    BooleanType,
    DateType,
    DoubleType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    UUIDType,
)

ROWS = 20_000
BASE = dt.datetime(2024, 1, 1)
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "s", StringType(), required=False),
    NestedField(3, "n", LongType(), required=False),
    NestedField(4, "ts", TimestampType(), required=False),
    NestedField(5, "d", DateType(), required=False),
    NestedField(6, "f", DoubleType(), required=False),
    NestedField(7, "b", BooleanType(), required=False),
    NestedField(8, "u", UUIDType(), required=False),
    # written as an int, read as a long (type promotion): 4-byte page bounds
    NestedField(9, "small", LongType(), required=False),
)


def _field(name: str, t: pa.DataType, fid: int) -> pa.Field:
    return pa.field(name, t, True, metadata={"PARQUET:field_id": str(fid)})


def _rows() -> pa.Table:
    """Sorted columns (prunable pages), a column of runs of nulls (all-null pages), an
    unsorted float with NaNs and a boolean."""
    ids = list(range(ROWS))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "s": pa.array([None if i % 97 == 0 else f"k{i:05d}" for i in ids]),
            # nulls in runs: rows 4000-7999 are all null
            "n": pa.array([None if 4000 <= i < 8000 else i // 10 for i in ids], pa.int64()),
            "ts": pa.array([BASE + dt.timedelta(minutes=i) for i in ids], pa.timestamp("us")),
            "d": pa.array([(BASE + dt.timedelta(days=i // 1000)).date() for i in ids]),
            "f": pa.array([float("nan") if i % 13 == 0 else ((i * 7919) % 1000) / 10 for i in ids]),
            "b": pa.array([i >= ROWS // 2 for i in ids]),
            "u": pa.array([uuid.UUID(int=i).bytes for i in ids], pa.binary(16)),
            "small": pa.array([i // 3 for i in ids], pa.int32()),
        }
    )


def _file_schema() -> pa.Schema:
    types = {
        "id": pa.int64(),
        "s": pa.string(),
        "n": pa.int64(),
        "ts": pa.timestamp("us"),
        "d": pa.date32(),
        "f": pa.float64(),
        "b": pa.bool_(),
        "u": pa.binary(16),
        "small": pa.int32(),
    }
    return pa.schema([_field(f.name, types[f.name], f.field_id) for f in SCHEMA.fields])


def _write(path: Path, page_index: bool) -> None:
    pq.write_table(
        _rows().cast(_file_schema()),
        path,
        write_page_index=page_index,
        use_dictionary=False,
        data_page_size=2048,
        max_rows_per_page=1000,
        row_group_size=ROWS // 2,
    )


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from frazil.catalog import load_catalog

    root = tmp_path_factory.mktemp("page-index")
    cat = load_catalog("pages", type="sql", uri=f"sqlite:///{root}/c.db", warehouse=f"{root}/wh")
    cat.create_namespace("db")
    t = cat.create_table("db.t", SCHEMA)
    path = root / "with-index.parquet"
    _write(path, page_index=True)
    t.add_files([str(path)])
    return cat.load_table("db.t")


FILTERS: list[BooleanExpression] = [
    And(GreaterThanOrEqual("id", 5000), LessThan("id", 5100)),
    Or(LessThan("id", 10), GreaterThanOrEqual("id", ROWS - 10)),
    EqualTo("id", 12345),
    Not(LessThan("id", ROWS - 50)),
    In("id", {3, 9000, 19999}),
    NotIn("id", {1, 2, 3}),
    NotEqualTo("id", 7),
    IsNull("n"),
    NotNull("n"),
    Not(IsNull("n")),
    LessThan("n", 100),
    # true for the null rows (2-valued NOT): the all-null pages must be read
    Not(LessThan("n", 1000)),
    And(IsNull("n"), LessThan("id", 5000)),
    EqualTo("s", "k10001"),
    StartsWith("s", "k123"),
    NotStartsWith("s", "k1"),
    IsNull("s"),
    And(GreaterThanOrEqual("ts", "2024-01-05T00:00:00"), LessThan("ts", "2024-01-05T06:00:00")),
    EqualTo("d", "2024-01-08"),
    LessThan("f", 1.0),
    IsNaN("f"),
    Not(LessThan("f", 50.0)),
    EqualTo("b", True),
    EqualTo("u", uuid.UUID(int=777)),
    And(GreaterThanOrEqual("small", 100), LessThan("small", 110)),
    Or(EqualTo("s", "k00042"), And(IsNull("n"), EqualTo("id", 4242))),
]


def _read(t: Any, row_filter: BooleanExpression, **kwargs: Any) -> pa.Table:
    out = t.scan(row_filter=row_filter, **kwargs).to_arrow()
    return out.sort_by("id") if "id" in out.column_names else out


@pytest.mark.parametrize("row_filter", FILTERS, ids=[str(f) for f in FILTERS])
def test_same_rows_with_and_without_the_page_index(
    table: Any, row_filter: BooleanExpression, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page index only skips rows the filter rejects: the rows equal those of the same
    read with it ignored, where every row is decoded and filtered."""
    pruned = _read(table, row_filter)
    with monkeypatch.context() as m:
        m.setattr(formats.NativeParquet, "page_keep", lambda self, rg, f: None)
        full = _read(table, row_filter)
    assert pruned.schema == full.schema
    assert _values(pruned) == _values(full), row_filter
    assert pruned.column("id").to_pylist() == _oracle(row_filter), row_filter


def _internal(v: Any) -> Any:
    """A row value as the bound literals hold it (datetimes and dates as they are)."""
    if isinstance(v, bytes):
        return uuid.UUID(bytes=v)
    return v


def _holds(e: Any, row: dict[str, Any]) -> bool:
    """The expressions spec's 2-valued semantics, row by row, in plain Python: a comparison
    with null is false, and NOT of it true."""
    kind = type(e).__name__
    if kind == "And":
        return _holds(e.left, row) and _holds(e.right, row)
    if kind == "Or":
        return _holds(e.left, row) or _holds(e.right, row)
    if kind == "Not":
        return not _holds(e.child, row)
    v = row[e.term.name]
    if kind == "BoundIsNull":
        return v is None
    if kind == "BoundNotNull":
        return v is not None
    if kind == "BoundIsNaN":
        return v is not None and v != v
    if kind in ("BoundIn", "BoundNotIn"):
        found = v is not None and v in {_internal(lit.value) for lit in e.literals}
        return found if kind == "BoundIn" else not found
    x = _internal(e.literal.value)
    if kind == "BoundNotEqualTo":
        return v is None or v != x
    if kind == "BoundNotStartsWith":
        return v is None or not v.startswith(x)
    if v is None:
        return False
    ops = {
        "BoundLessThan": lambda: v < x,
        "BoundGreaterThanOrEqual": lambda: v >= x,
        "BoundEqualTo": lambda: v == x,
        "BoundStartsWith": lambda: v.startswith(x),
    }
    return bool(ops[kind]())


def _oracle(row_filter: BooleanExpression) -> list[int]:
    """The ids of the written rows the filter holds for."""
    bound = bind(SCHEMA, row_filter)
    rows = [{k: _internal(v) for k, v in r.items()} for r in _rows().to_pylist()]
    return [r["id"] for r in rows if _holds(bound, r)]


def _values(t: pa.Table) -> list[list[Any]]:
    """Columns as Python values, NaN as a string (NaN != NaN)."""
    return [[("NaN" if v != v else v) for v in t.column(c).to_pylist()] for c in t.column_names]


def test_sorted_ranges_against_pyarrow(table: Any) -> None:
    """An oracle that is not frazil's: pyarrow's filter of the written rows."""
    rows = _rows()
    got = _read(table, And(GreaterThanOrEqual("id", 5000), LessThan("id", 5100)))
    want = rows.filter((pc.field("id") >= 5000) & (pc.field("id") < 5100))
    assert got.column("id").to_pylist() == want.column("id").to_pylist()
    assert got.column("s").to_pylist() == want.column("s").to_pylist()
    got = _read(table, IsNull("n"))
    assert got.column("id").to_pylist() == list(range(4000, 8000))


def _page_keep(path: Path, row_group: int, expr: BooleanExpression) -> pa.BooleanArray | None:
    with contextlib.ExitStack() as stack:
        source = stack.enter_context(pafs.LocalFileSystem().open_input_file(str(path)))
        native = formats.NativeParquet(source, str(path))
        return native.page_keep(row_group, RowFilter(bind(SCHEMA, expr), SCHEMA).native)


def test_pages_ruled_out_are_skipped(tmp_path: Path) -> None:
    """A narrow range of a sorted column keeps a page or two of its row group; a filter on an
    unsorted float (no page bounds are used for floats) or one no page rules out keeps all."""
    path = tmp_path / "f.parquet"
    _write(path, page_index=True)
    keep = _page_keep(path, 0, And(GreaterThanOrEqual("id", 5000), LessThan("id", 5100)))
    assert keep is not None and len(keep) == ROWS // 2
    kept = [i for i, k in enumerate(keep.to_pylist()) if k]
    assert kept[0] <= 5000 and kept[-1] >= 5099
    # pages of at most 1,000 rows: two at most
    assert len(kept) <= 2000, len(kept)
    # the other row group holds no such id: no row kept
    keep = _page_keep(path, 1, And(GreaterThanOrEqual("id", 5000), LessThan("id", 5100)))
    assert keep is not None and keep.true_count == 0
    # IS NULL: the pages with nulls (rows 4000-7999); NOT NULL: all but the all-null pages
    keep = _page_keep(path, 0, IsNull("n"))
    assert keep is not None
    assert [i for i, k in enumerate(keep.to_pylist()) if k] == list(range(4000, 8000))
    keep = _page_keep(path, 0, NotNull("n"))
    assert keep is not None
    assert [i for i, k in enumerate(keep.to_pylist()) if not k] == list(range(4000, 8000))
    assert _page_keep(path, 0, LessThan("f", 1.0)) is None
    assert _page_keep(path, 0, GreaterThanOrEqual("id", 0)) is None
    # a file without a page index
    bare = tmp_path / "bare.parquet"
    _write(bare, page_index=False)
    assert _page_keep(bare, 0, EqualTo("id", 5)) is None


def test_positions_read_without_page_skipping(table: Any) -> None:
    """``_pos`` needs every row's position: the read then decodes whole row groups and the
    positions are the rows' own (id = position in this file)."""
    got = table.scan(
        row_filter=And(GreaterThanOrEqual("id", 5000), LessThan("id", 5010)),
        selected_fields=("id", "_pos"),
    ).to_arrow()
    assert sorted(got.column("id").to_pylist()) == list(range(5000, 5010))
    assert got.column("id").to_pylist() == got.column("_pos").to_pylist()


def test_damaged_page_index_is_ignored_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Bytes of a page index overwritten: the index only saves work, so the row group is read
    whole (the rows are right) and a warning names the file; never a crash."""
    import logging

    from frazil.catalog import load_catalog

    path = tmp_path / "f.parquet"
    _write(path, page_index=True)
    with contextlib.ExitStack() as stack:
        source = stack.enter_context(pafs.LocalFileSystem().open_input_file(str(path)))
        native = formats.NativeParquet(source, str(path))
        f = RowFilter(bind(SCHEMA, EqualTo("id", 5)), SCHEMA).native
        ranges = native.footer.page_index_ranges(0, f)
    assert ranges
    data = bytearray(path.read_bytes())
    offset, length = ranges[0]
    data[offset : offset + length] = b"\xff" * length
    path.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="frazil.table.scan.formats"):
        assert _page_keep(path, 0, EqualTo("id", 5)) is None
    assert "f.parquet" in caplog.text and "page index" in caplog.text
    cat = load_catalog(
        "damaged", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"{tmp_path}/wh"
    )
    cat.create_namespace("db")
    t = cat.create_table("db.t", SCHEMA)
    t.add_files([str(path)])
    got = cat.load_table("db.t").scan(row_filter=EqualTo("id", 5)).to_arrow()
    assert got.column("id").to_pylist() == [5]
