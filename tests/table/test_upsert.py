"""``Table.upsert`` on composite keys (2 and 3 columns: long, string, date), v2 and v3,
copy-on-write and merge-on-read, judged by DuckDB SQL over the table before and the source
(what the table must hold, how many rows are updated and inserted), and by PyIceberg 0.12 running
the same upsert on an identical table.

Null keys: a source row with a null join column is refused (PyIceberg 0.12 refuses it too, with a
``TypeError``); a table row with a null key never matches (SQL equality)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from frazil.catalog import load_catalog
from frazil.exceptions import InvalidArgumentError, ValidationError
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.write.upsert import UpsertResult
from frazil.types import DateType, DoubleType, LongType, NestedField, StringType

KEYS3 = ["k1", "k2", "k3"]
KEYS2 = ["k1", "k2"]
COLUMNS = ["k1", "k2", "k3", "v", "s"]
SCHEMA = Schema(
    NestedField(1, "k1", LongType()),
    NestedField(2, "k2", StringType()),
    NestedField(3, "k3", DateType()),
    NestedField(4, "v", DoubleType()),
    NestedField(5, "s", StringType()),
)
ARROW = pa.schema(
    [
        ("k1", pa.int64()),
        ("k2", pa.string()),
        ("k3", pa.date32()),
        ("v", pa.float64()),
        ("s", pa.string()),
    ]
)
MODES = ["copy-on-write", "merge-on-read"]
VERSIONS = [2, 3]
DAY0 = dt.date(2020, 1, 1).toordinal() - dt.date(1970, 1, 1).toordinal()


def keyed(ids: np.ndarray, v: np.ndarray, s_null_every: int = 7) -> pa.Table:
    """Rows whose keys are a function of ``ids`` (unique per id): k1 = id // 4, k2 = 'r' + id % 4,
    k3 = 2020-01-01 + id % 3 days (so (k1, k2) and (k1, k2, k3) are both unique)."""
    s = pc.binary_join_element_wise("s", pc.cast(pa.array(ids % 11), pa.string()), "")
    s = pc.if_else(pa.array(ids % s_null_every == 0), pa.nulls(len(ids), pa.string()), s)
    return pa.table(
        [
            pa.array(ids // 4, pa.int64()),
            pc.binary_join_element_wise("r", pc.cast(pa.array(ids % 4), pa.string()), ""),
            pa.array((DAY0 + ids % 3).astype(np.int32)).cast(pa.date32()),
            pa.array(v),
            s,
        ],
        schema=ARROW,
    )


@pytest.fixture
def catalog(tmp_path: Path) -> Any:
    cat = load_catalog("w", type="filesystem", warehouse=str(tmp_path))
    cat.create_namespace("db")
    return cat


def make(catalog: Any, version: int, mode: str, data: pa.Table, chunks: int = 3) -> Table:
    t = catalog.create_table(
        "db.t",
        SCHEMA,
        properties={"format-version": str(version), "write.merge.mode": mode},
    )
    step = -(-data.num_rows // chunks)
    for lo in range(0, data.num_rows, step):
        t.append(data.slice(lo, step))
    return t


def scan(t: Table, *extra: str) -> pa.Table:
    return t.scan(selected_fields=("*", *extra)).to_arrow()


def by_key(table: pa.Table) -> pa.Table:
    table = table.select(COLUMNS).cast(ARROW).combine_chunks()
    return table.sort_by([(c, "ascending") for c in KEYS3]).combine_chunks()


def oracle(
    before: pa.Table, source: pa.Table, keys: list[str], update: bool = True, insert: bool = True
) -> tuple[pa.Table, UpsertResult]:
    """The table after the upsert and the counts, by DuckDB SQL (an oracle other than frazil)."""
    con = duckdb.connect()
    con.register("t", before)
    con.register("src", source)
    on = " AND ".join(f"t.{k} = src.{k}" for k in keys)
    others = [c for c in source.column_names if c not in keys]
    differs = " OR ".join(f"t.{c} IS DISTINCT FROM src.{c}" for c in others) or "false"
    matched = f"EXISTS (SELECT 1 FROM t WHERE {on})"
    updated_keys = f"SELECT src.* FROM src JOIN t ON {on} WHERE {differs}"
    n_updated = con.execute(f"SELECT count(*) FROM ({updated_keys})").fetchone()[0]
    n_inserted = con.execute(f"SELECT count(*) FROM src WHERE NOT {matched}").fetchone()[0]
    parts = []
    if update:
        parts.append(
            f"SELECT t.* FROM t WHERE NOT EXISTS (SELECT 1 FROM ({updated_keys}) src WHERE {on})"
        )
        parts.append(updated_keys)
    else:
        parts.append("SELECT * FROM t")
    if insert:
        parts.append(f"SELECT * FROM src WHERE NOT {matched}")
    cols = ", ".join(COLUMNS)
    sql = " UNION ALL ".join(f"SELECT {cols} FROM ({p})" for p in parts)
    after = con.execute(sql).to_arrow_table().cast(ARROW)
    return by_key(after), UpsertResult(
        rows_updated=n_updated if update else 0, rows_inserted=n_inserted if insert else 0
    )


def source_for(data: pa.Table, n: int, seed: int) -> pa.Table:
    """``n`` source rows: 40% changed existing rows, 20% unchanged existing rows (and one with
    only ``s`` changed from null), 40% new keys."""
    rng = np.random.default_rng(seed)
    total = data.num_rows
    picked = rng.choice(total, n - 2 * n // 5, replace=False)
    existing = data.take(pa.array(picked))
    n_changed = 2 * n // 5
    v = existing.column("v").to_numpy()
    v = np.where(np.arange(len(v)) < n_changed, v + 1.0, v)
    existing = existing.set_column(3, "v", pa.array(v))
    fresh = keyed(np.arange(total, total + 2 * n // 5), rng.random(2 * n // 5))
    return pa.concat_tables([existing, fresh])


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("keys", [KEYS2, KEYS3], ids=["2-keys", "3-keys"])
def test_composite_keys_10k(catalog: Any, version: int, mode: str, keys: list[str]) -> None:
    rng = np.random.default_rng(1)
    data = keyed(np.arange(30_000), rng.random(30_000))
    t = make(catalog, version, mode, data)
    source = source_for(data, 10_000, seed=2)
    expected, counts = oracle(scan(t), source, keys)
    extra = ("_row_id", "_last_updated_sequence_number") if version == 3 else ()
    before = scan(t, *extra)
    res = t.upsert(source, join_cols=keys)
    assert res == counts
    assert res.rows_updated == 4_000 and res.rows_inserted == 4_000
    got = scan(t, *extra)
    assert by_key(got).equals(expected)
    snaps = len(t.snapshots())
    # the same source again changes nothing and commits nothing
    assert t.upsert(source, join_cols=keys) == UpsertResult(0, 0)
    assert len(t.snapshots()) == snaps
    if version == 3:
        _check_lineage(before, got, source, keys, t.current_snapshot().sequence_number)


def _check_lineage(
    before: pa.Table, after: pa.Table, source: pa.Table, keys: list[str], seq: int
) -> None:
    """Updated rows keep their _row_id and take the commit's sequence number; untouched rows
    keep both; inserted rows get new, unique ids."""
    old = {tuple(r[k] for k in keys): r for r in before.to_pylist()}
    src = {tuple(r[k] for k in keys): r for r in source.to_pylist()}
    old_ids = {o["_row_id"] for o in old.values()}
    ids = set()
    for r in after.to_pylist():
        key = tuple(r[k] for k in keys)
        ids.add(r["_row_id"])
        if key not in old:
            assert r["_row_id"] not in old_ids
            assert r["_last_updated_sequence_number"] == seq
            continue
        o = old[key]
        assert r["_row_id"] == o["_row_id"]
        changed = key in src and any(src[key][c] != o[c] for c in source.column_names)
        want = seq if changed else o["_last_updated_sequence_number"]
        assert r["_last_updated_sequence_number"] == want
    assert len(ids) == after.num_rows
    assert None not in ids


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("mode", MODES)
def test_updates_only_inserts_only_and_nothing_changed(
    catalog: Any, version: int, mode: str
) -> None:
    rng = np.random.default_rng(3)
    data = keyed(np.arange(5_000), rng.random(5_000))
    t = make(catalog, version, mode, data)
    source = source_for(data, 2_000, seed=4)

    expected, counts = oracle(scan(t), source, KEYS3, insert=False)
    assert t.upsert(source, join_cols=KEYS3, when_not_matched_insert_all=False) == counts
    assert counts == UpsertResult(800, 0)
    assert by_key(scan(t)).equals(expected)

    fresh = keyed(np.arange(9_000, 9_500), rng.random(500))
    expected, counts = oracle(scan(t), pa.concat_tables([source, fresh]), KEYS3, update=False)
    res = t.upsert(pa.concat_tables([source, fresh]), KEYS3, when_matched_update_all=False)
    assert res == counts == UpsertResult(0, 1_300)
    assert by_key(scan(t)).equals(expected)

    snaps = len(t.snapshots())
    unchanged = scan(t).take(pa.array(rng.choice(6_300, 1_000, replace=False)))
    assert t.upsert(unchanged, join_cols=KEYS3) == UpsertResult(0, 0)
    assert len(t.snapshots()) == snaps
    assert by_key(scan(t)).equals(expected)


def test_a_thousand_composite_keys(catalog: Any) -> None:
    """The bug of issue 18: 1,000 source rows on two key columns raised RecursionError."""
    data = keyed(np.arange(2_000), np.zeros(2_000))
    t = make(catalog, 2, "merge-on-read", data)
    source = keyed(np.arange(1_500, 2_500), np.ones(1_000))
    expected, counts = oracle(scan(t), source, KEYS2)
    assert t.upsert(source, join_cols=KEYS2) == counts == UpsertResult(500, 500)
    assert by_key(scan(t)).equals(expected)


@pytest.mark.slow  # 30-50 s: a million keys into a million rows
@pytest.mark.parametrize(("version", "mode"), [(3, "merge-on-read"), (2, "copy-on-write")])
def test_a_million_composite_keys(catalog: Any, version: int, mode: str) -> None:
    rng = np.random.default_rng(5)
    data = keyed(np.arange(2_000_000), rng.random(2_000_000))
    t = make(catalog, version, mode, data, chunks=4)
    source = source_for(data, 1_000_000, seed=6)
    expected, counts = oracle(scan(t), source, KEYS3)
    assert t.upsert(source, join_cols=KEYS3) == counts == UpsertResult(400_000, 400_000)
    assert by_key(scan(t)).equals(expected)


@pytest.mark.parametrize("version", VERSIONS)
def test_empty_table_inserts_everything(catalog: Any, version: int) -> None:
    t = catalog.create_table("db.t", SCHEMA, properties={"format-version": str(version)})
    source = keyed(np.arange(1_000), np.ones(1_000))
    assert t.upsert(source, join_cols=KEYS3) == UpsertResult(0, 1_000)
    assert by_key(scan(t)).equals(by_key(source))
    assert t.upsert(source.slice(0, 0), join_cols=KEYS3) == UpsertResult(0, 0)


def test_null_keys(catalog: Any) -> None:
    data = pa.table(
        {
            "k1": pa.array([1, 1, None, 2], pa.int64()),
            "k2": ["a", None, "b", "c"],
            "k3": pa.array([DAY0] * 4, pa.int32()).cast(pa.date32()),
            "v": [1.0, 2.0, 3.0, 4.0],
            "s": ["x", "y", "z", "w"],
        },
        schema=ARROW,
    )
    t = make(catalog, 3, "merge-on-read", data, chunks=1)
    snaps = len(t.snapshots())
    with_null = data.slice(0, 2).set_column(3, "v", pa.array([9.0, 9.0]))
    with pytest.raises(InvalidArgumentError, match=r"join columns \['k2'\] hold nulls"):
        t.upsert(with_null, join_cols=KEYS2)
    assert len(t.snapshots()) == snaps
    # A table row with a null key matches nothing: (1, 'b') and (None-keyed rows) stay apart.
    source = pa.table(
        {
            "k1": pa.array([1, 3], pa.int64()),
            "k2": ["a", "b"],
            "k3": pa.array([DAY0, DAY0], pa.int32()).cast(pa.date32()),
            "v": [10.0, 30.0],
            "s": ["x", "new"],
        },
        schema=ARROW,
    )
    expected, counts = oracle(scan(t), source, KEYS2)
    assert t.upsert(source, join_cols=KEYS2) == counts == UpsertResult(1, 1)
    assert by_key(scan(t)).equals(expected)
    assert scan(t).num_rows == 5


def test_duplicate_target_keys_refused(catalog: Any) -> None:
    data = keyed(np.array([0, 1, 2]), np.zeros(3))
    t = make(catalog, 2, "merge-on-read", pa.concat_tables([data, data.slice(1, 1)]), chunks=2)
    source = data.slice(1, 1).set_column(3, "v", pa.array([5.0]))
    with pytest.raises(ValidationError, match="Target table has duplicate rows"):
        t.upsert(source, join_cols=KEYS3)
    # Inserting only does not look at duplicates in the table (as PyIceberg).
    assert t.upsert(source, KEYS3, when_matched_update_all=False) == UpsertResult(0, 0)


@pytest.mark.interop
def test_same_upsert_as_pyiceberg(tmp_path: Path) -> None:
    """PyIceberg 0.12 and frazil run one composite-key upsert on identical tables of one SQL
    catalog; both tables then hold the same rows (read by either library)."""
    sql = pytest.importorskip("pyiceberg.catalog.sql")
    uri = f"sqlite:///{tmp_path}/catalog.db"
    warehouse = tmp_path / "wh"
    warehouse.mkdir()
    fz = load_catalog("shared", type="sql", uri=uri, warehouse=str(warehouse))
    fz.create_namespace("db")
    py = sql.SqlCatalog("shared", uri=uri, warehouse=f"file://{warehouse}")
    rng = np.random.default_rng(7)
    data = keyed(np.arange(3_000), rng.random(3_000))
    for name in ("f", "p"):
        t = fz.create_table(f"db.{name}", SCHEMA, properties={"format-version": "2"})
        t.append(data.slice(0, 1_500))
        t.append(data.slice(1_500))
    source = source_for(data, 400, seed=8)
    ours = fz.load_table("db.f").upsert(source, join_cols=KEYS3)
    theirs = py.load_table("db.p").upsert(source, join_cols=KEYS3)
    assert (ours.rows_updated, ours.rows_inserted) == (
        theirs.rows_updated,
        theirs.rows_inserted,
    )
    assert (ours.rows_updated, ours.rows_inserted) == (160, 160)
    ours_rows = by_key(scan(fz.load_table("db.f")))
    assert ours_rows.equals(by_key(scan(fz.load_table("db.p"))))
    assert ours_rows.equals(by_key(py.load_table("db.f").scan().to_arrow().cast(ARROW)))
    assert ours_rows.equals(by_key(py.load_table("db.p").scan().to_arrow().cast(ARROW)))


def _equal(x: Any, y: Any) -> bool:
    """Python equality of two values as Arrow hands them out, with NaN equal to NaN."""
    if isinstance(x, float) and isinstance(y, float):
        return x == y or (x != x and y != y)
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_equal(x[k], y[k]) for k in x)
    if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
        return len(x) == len(y) and all(_equal(p, q) for p, q in zip(x, y, strict=True))
    return bool(x == y)


def test_nested_values_compare_member_by_member() -> None:
    """A matched row is updated when a nested value differs anywhere (null-safe, NaN equals
    NaN): Arrow's comparison against Python's, on random structs, lists and maps."""
    from frazil.table.write.upsert import _differs

    rng = np.random.default_rng(9)

    def value(kind: str) -> Any:
        if rng.random() < 0.2:
            return None
        if kind == "struct":
            return {"x": value("int"), "y": value("list")}
        if kind == "list":
            return [value("float") for _ in range(rng.integers(0, 4))]
        if kind == "map":
            return [(str(rng.integers(0, 3)), value("int")) for _ in range(rng.integers(0, 3))]
        if kind == "int":
            return int(rng.integers(0, 3))
        return float(rng.choice([0.0, 1.0, np.nan]))

    types = {
        "struct": pa.struct([("x", pa.int64()), ("y", pa.list_(pa.float64()))]),
        "list": pa.list_(pa.float64()),
        "map": pa.map_(pa.string(), pa.int64()),
    }
    for kind, t in types.items():
        xs = [value(kind) for _ in range(2_000)]
        ys = [x if rng.random() < 0.5 else value(kind) for x in xs]
        a, b = pa.array(xs, t), pa.array(ys, t)
        want = [not _equal(x, y) for x, y in zip(a.to_pylist(), b.to_pylist(), strict=True)]
        chunked = pa.chunked_array([a.slice(0, 700), a.slice(700)])
        assert _differs(chunked, b).tolist() == want, kind


def test_upsert_with_nested_columns(catalog: Any) -> None:
    from frazil.types import ListType, MapType, StructType

    schema = Schema(
        NestedField(1, "id", LongType()),
        NestedField(2, "st", StructType(NestedField(3, "x", LongType()))),
        NestedField(4, "ls", ListType(5, DoubleType())),
        NestedField(6, "mp", MapType(7, StringType(), 8, LongType())),
    )
    t = catalog.create_table("db.n", schema, properties={"format-version": "3"})
    arrow = t.scan().to_arrow().schema
    before = [
        {"id": 1, "st": {"x": 1}, "ls": [1.0, float("nan")], "mp": [("a", 1)]},
        {"id": 2, "st": {"x": 2}, "ls": [2.0], "mp": [("b", 2)]},
        {"id": 3, "st": None, "ls": None, "mp": []},
    ]
    t.append(pa.Table.from_pylist(before, arrow))
    source = [
        {"id": 1, "st": {"x": 1}, "ls": [1.0, float("nan")], "mp": [("a", 1)]},  # unchanged
        {"id": 2, "st": {"x": 2}, "ls": [2.0, 3.0], "mp": [("b", 2)]},  # list changed
        {"id": 3, "st": None, "ls": None, "mp": [("c", 3)]},  # map changed
        {"id": 4, "st": {"x": None}, "ls": [], "mp": None},  # new
    ]
    res = t.upsert(pa.Table.from_pylist(source, arrow), join_cols=["id"])
    assert res == UpsertResult(rows_updated=2, rows_inserted=1)
    got = sorted(t.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert all(_equal(g, s) for g, s in zip(got, source, strict=True))
    assert len(got) == 4
