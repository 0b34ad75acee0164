"""Late materialization in the native Parquet read: a row group's filter columns are decoded
first and its other columns only for the rows the filter keeps. Whatever the path (off, or the
kept rows walked as arrow-rs chooses, always as a bit mask, always as runs to skip), a read
returns the same rows, equal to pyarrow's filter of the written rows; with deletes, renamed and
promoted columns, batches smaller than row groups, and ``_pos`` read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from frazil.expressions import And, EqualTo, In, IsNull, LessThan, Not, NotNull, Or
from frazil.expressions.base import BooleanExpression
from frazil.schema import Schema
from frazil.table.scan import filter as late_module
from frazil.table.scan import read as read_module
from frazil.types import DoubleType, IntegerType, LongType, NestedField, StringType

ROWS = 30_000
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "user_id", LongType(), required=False),
    NestedField(3, "name", StringType(), required=False),
    NestedField(4, "amount", DoubleType(), required=False),
    NestedField(5, "qty", IntegerType(), required=False),
)


def _rows(seed: int, start: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    user = rng.integers(0, 5_000, ROWS)
    return pa.table(
        {
            "id": pa.array(np.arange(start, start + ROWS, dtype=np.int64)),
            "user_id": pa.array(user, mask=rng.random(ROWS) < 0.02),
            "name": pa.array([None if u % 31 == 0 else f"n{u}" for u in user]),
            "amount": pa.array(rng.random(ROWS) * 100),
            "qty": pa.array(rng.integers(0, 10, ROWS).astype(np.int32)),
        }
    )


def _write(path: Path, rows: pa.Table) -> None:
    fields = [
        pa.field(f.name, t, metadata={b"PARQUET:field_id": str(f.field_id).encode()})
        for f, t in zip(
            SCHEMA.fields,
            [pa.int64(), pa.int64(), pa.string(), pa.float64(), pa.int32()],
            strict=True,
        )
    ]
    pq.write_table(rows.cast(pa.schema(fields)), path, row_group_size=ROWS // 3)


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, pa.Table]:
    from frazil.catalog import load_catalog

    root = tmp_path_factory.mktemp("late")
    cat = load_catalog("late", type="sql", uri=f"sqlite:///{root}/c.db", warehouse=f"{root}/wh")
    cat.create_namespace("db")
    t = cat.create_table("db.t", SCHEMA, properties={"format-version": "2"})
    written = []
    for k in range(2):
        rows = _rows(k, k * ROWS)
        _write(root / f"f{k}.parquet", rows)
        written.append(rows)
    t.add_files([str(root / f"f{k}.parquet") for k in range(2)])
    return cat.load_table("db.t"), pa.concat_tables(written)


FILTERS: list[tuple[BooleanExpression, pc.Expression]] = [
    (EqualTo("user_id", 4242), pc.field("user_id") == 4242),
    (In("user_id", {1, 2, 3, 4999}), pc.field("user_id").isin([1, 2, 3, 4999])),
    (IsNull("user_id"), pc.field("user_id").is_null()),
    (
        And(EqualTo("name", "n77"), LessThan("amount", 50.0)),
        (pc.field("name") == "n77") & (pc.field("amount") < 50.0),
    ),
    (
        Or(EqualTo("id", 17), EqualTo("id", ROWS + 17)),
        (pc.field("id") == 17) | (pc.field("id") == ROWS + 17),
    ),
    # keeps most rows: the two-phase read decodes everything
    (NotNull("user_id"), pc.field("user_id").is_valid()),
    # 2-valued NOT: true where user_id is null
    (
        Not(LessThan("user_id", 4990)),
        pc.field("user_id").is_null() | (pc.field("user_id") >= 4990),
    ),
    (EqualTo("qty", 3), pc.field("qty") == 3),
]


def _ids(t: Any, f: BooleanExpression, **kw: Any) -> list[int]:
    return sorted(t.scan(row_filter=f, **kw).to_arrow().column("id").to_pylist())


@pytest.mark.parametrize(("ours", "theirs"), FILTERS, ids=[str(f) for f, _ in FILTERS])
@pytest.mark.parametrize("mode", ["off", "auto", "mask", "runs"])
def test_same_rows_every_path(
    table: tuple[Any, pa.Table],
    ours: BooleanExpression,
    theirs: pc.Expression,
    mode: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    t, written = table
    if mode == "off":
        monkeypatch.setattr(late_module.LateFilter, "of", staticmethod(lambda *a: None))
    else:
        monkeypatch.setattr(read_module, "LATE_WALK", mode)
    want = sorted(written.filter(theirs).column("id").to_pylist())
    got = t.scan(row_filter=ours, options={"batch-size": "1000"}).to_arrow()
    assert sorted(got.column("id").to_pylist()) == want
    # every column of the rows, not only the ids
    by_id = written.filter(theirs).sort_by("id")
    got = got.sort_by("id")
    for name in by_id.column_names:
        assert got.column(name).to_pylist() == by_id.column(name).to_pylist(), name


def test_the_late_path_is_taken(
    table: tuple[Any, pa.Table], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A selective filter on a long column goes through the two-step decode."""
    t, _ = table
    calls: list[int] = []
    original = read_module.NativeParquet.row_group_where

    def spy(self: Any, *args: Any) -> Any:
        calls.append(args[0])
        return original(self, *args)

    monkeypatch.setattr(read_module.NativeParquet, "row_group_where", spy)
    assert _ids(t, EqualTo("user_id", 4242))
    assert calls


def test_late_rows_are_not_filtered_again(
    table: tuple[Any, pa.Table], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows of the two-step decode are those the same native filter already held for: the
    reader does not evaluate the filter on them a second time, and returns the same rows."""
    t, written = table
    masks: list[int] = []
    late: list[int] = []
    mask = late_module.RowFilter.mask
    where = read_module.NativeParquet.row_group_where

    def spy_mask(self: Any, batch: pa.RecordBatch) -> pa.BooleanArray:
        masks.append(batch.num_rows)
        return mask(self, batch)

    def spy_where(self: Any, *args: Any) -> Any:
        late.append(args[0])
        return where(self, *args)

    monkeypatch.setattr(late_module.RowFilter, "mask", spy_mask)
    monkeypatch.setattr(read_module.NativeParquet, "row_group_where", spy_where)
    got = _ids(t, EqualTo("user_id", 4242))
    want = written.filter(pc.field("user_id") == 4242).column("id").to_pylist()
    assert got == sorted(want)
    assert late and not masks
    # a read that cannot take the late path (``_pos`` needs the rows' positions) still filters
    pos = t.scan(row_filter=EqualTo("user_id", 4242), selected_fields=("id", "_pos")).to_arrow()
    assert sorted(pos.column("id").to_pylist()) == sorted(want)
    assert masks


def test_decode_threads_are_the_cores_left_to_each_file(
    table: tuple[Any, pa.Table], monkeypatch: pytest.MonkeyPatch
) -> None:
    """to_arrow reading two files at once decodes each file's columns on half the cores; one
    file at a time (a streaming read), on all of them; the rows are the same either way."""
    t, written = table
    monkeypatch.setattr(read_module, "_DECODE_THREADS", 4)
    assert [read_module.decode_threads(n) for n in (1, 2, 3, 4, 9)] == [4, 2, 1, 1, 1]
    seen: list[int] = []
    for name in ("row_group", "row_group_where"):
        original = getattr(read_module.NativeParquet, name)

        def spy(self: Any, *args: Any, _original: Any = original) -> Any:
            seen.append(args[3])  # (row group, columns, batch size, threads, ...)
            return _original(self, *args)

        monkeypatch.setattr(read_module.NativeParquet, name, spy)
    both = t.scan(options={"read-threads": "2"}).to_arrow()
    assert seen and set(seen) == {2}
    seen.clear()
    one = t.scan(row_filter=EqualTo("user_id", 4242)).to_batches().read_all()
    assert seen and set(seen) == {4}
    assert sorted(both.column("id").to_pylist()) == sorted(written.column("id").to_pylist())
    want = written.filter(pc.field("user_id") == 4242).column("id").to_pylist()
    assert sorted(one.column("id").to_pylist()) == sorted(want)


def test_with_deletes_positions_and_evolution(tmp_path: Path) -> None:
    """Position deletes applied in the decoder and late materialization together; ``_pos``
    read (no late path) gives the same rows with their positions; a renamed filter column and
    an int column promoted to long still filter right."""
    from frazil.catalog import load_catalog

    cat = load_catalog(
        "late2", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"{tmp_path}/wh"
    )
    cat.create_namespace("db")
    t = cat.create_table("db.t", SCHEMA, properties={"format-version": "2"})
    rows = _rows(5, 0)
    _write(tmp_path / "f.parquet", rows)
    t.add_files([str(tmp_path / "f.parquet")])
    t = cat.load_table("db.t")
    with t.transaction() as tx:
        tx.set_properties({"write.delete.mode": "merge-on-read"})
    t = cat.load_table("db.t")
    t.delete(LessThan("id", 100))
    t = cat.load_table("db.t")
    flt = In("user_id", {7, 8, 9})
    live = rows.filter(pc.field("id") >= 100)
    want = sorted(live.filter(pc.field("user_id").isin([7, 8, 9])).column("id").to_pylist())
    assert _ids(t, flt) == want
    with_pos = t.scan(row_filter=flt, selected_fields=("id", "_pos")).to_arrow()
    assert sorted(with_pos.column("id").to_pylist()) == want
    assert with_pos.column("id").to_pylist() == with_pos.column("_pos").to_pylist()
    # rename the filter column, promote qty int -> long
    with t.update_schema() as u:
        u.rename_column("user_id", "uid")
        u.update_column("qty", LongType())
    t = cat.load_table("db.t")
    assert _ids(t, In("uid", {7, 8, 9})) == want
    want_qty = sorted(live.filter(pc.field("qty") == 3).column("id").to_pylist())
    assert _ids(t, EqualTo("qty", 3)) == want_qty
