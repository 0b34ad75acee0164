"""The native Parquet decoder (``frazil_parquet``, arrow-rs) against pyarrow's, the oracle: a
file's columns decode to the same Arrow types, field ids and values, over the codecs, page
versions, encodings and types writers use, over the real-world fixtures' files, and a damaged
file is a ``FrazilError`` naming it, never a crash."""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frazil.exceptions import FrazilError
from frazil.table.scan import read as read_module
from frazil.table.scan.handoff import large_schema
from frazil.table.scan.read import _ParquetData

LOCAL = pafs.LocalFileSystem()


def _field(name: str, t: pa.DataType, fid: int, nullable: bool = True) -> pa.Field:
    return pa.field(name, t, nullable, metadata={"PARQUET:field_id": str(fid)})


def _sample(n: int) -> pa.Table:
    """Every type a table column can have, with nulls, NaNs and empty values."""
    ints = [None if i % 7 == 0 else i * 37 - 500 for i in range(n)]
    floats = [float("nan") if i % 11 == 0 else (None if i % 5 == 0 else i / 3) for i in range(n)]
    strs = [None if i % 6 == 0 else ("" if i % 9 == 0 else f"v{i % 13}é") for i in range(n)]
    base = dt.datetime(2024, 1, 1)
    point = pa.struct([_field("x", pa.int32(), 101), _field("y", pa.large_string(), 102)])
    schema = pa.schema(
        [
            _field("id", pa.int64(), 1, nullable=False),
            _field("i32", pa.int32(), 2),
            _field("f32", pa.float32(), 3),
            _field("f64", pa.float64(), 4),
            _field("b", pa.bool_(), 5),
            _field("s", pa.large_string(), 6),
            _field("bin", pa.large_binary(), 7),
            _field("fixed", pa.binary(16), 8),
            _field("dec9", pa.decimal128(9, 2), 9),
            _field("dec38", pa.decimal128(38, 10), 10),
            _field("d", pa.date32(), 11),
            _field("t", pa.time64("us"), 12),
            _field("ts", pa.timestamp("us"), 13),
            _field("tstz", pa.timestamp("us", tz="UTC"), 14),
            _field("tsns", pa.timestamp("ns"), 15),
            _field("l", pa.large_list(_field("element", pa.int64(), 103)), 16),
            _field("p", point, 17),
            _field(
                "m",
                pa.map_(
                    _field("key", pa.large_string(), 104, False), _field("value", pa.int32(), 105)
                ),
                18,
            ),
        ]
    )
    cols = {
        "id": list(range(n)),
        "i32": ints,
        "f32": floats,
        "f64": floats,
        "b": [None if i % 4 == 0 else i % 3 == 0 for i in range(n)],
        "s": strs,
        "bin": [None if s is None else s.encode() for s in strs],
        "fixed": [None if i % 8 == 0 else i.to_bytes(16, "big") for i in range(n)],
        "dec9": [None if x is None else decimal.Decimal(x) / 100 for x in ints],
        "dec38": [None if x is None else decimal.Decimal(x) / 10**10 for x in ints],
        "d": [
            None if x is None else dt.date(2024, 1, 1) + dt.timedelta(days=i)
            for i, x in enumerate(ints)
        ],
        "t": [dt.time(i % 24, i % 60) for i in range(n)],
        "ts": [base + dt.timedelta(seconds=i) for i in range(n)],
        "tstz": [None if i % 3 == 0 else base + dt.timedelta(minutes=i) for i in range(n)],
        "tsns": [base + dt.timedelta(microseconds=i) for i in range(n)],
        "l": [None if i % 10 == 0 else list(range(i % 4)) for i in range(n)],
        "p": [None if i % 9 == 0 else {"x": i, "y": None if i % 2 else str(i)} for i in range(n)],
        "m": [None if i % 12 == 0 else [(f"k{j}", j) for j in range(i % 3)] for i in range(n)],
    }
    return pa.table(cols, schema=schema)


def _pairs(batches: Iterator[tuple[int | None, pa.RecordBatch, bool]]) -> list:
    """(position, batch) of ``_ParquetData.batches``' triples (no late filter here)."""
    return [(p, b) for p, b, _ in batches]


def _both(path: str, columns: list[str]) -> tuple[list[tuple[int, pa.RecordBatch]], list | None]:
    """(native batches or None where it declined, pyarrow's batches) of every row group."""
    with contextlib.ExitStack() as stack:
        data = _ParquetData(LOCAL, path, None, stack)
        native = (
            _pairs(data.batches(columns, 1000, None, None))
            if data._native_indices(columns) is not None
            else None
        )
        data._native = None  # the same object read by pyarrow
        theirs = _pairs(data.batches(columns, 1000, None, None))
    return theirs, native


def _nan_safe(t: pa.Table) -> pa.Table:
    """NaNs (never equal to themselves) as a sentinel, so ``equals`` compares them."""
    for i, f in enumerate(t.schema):
        if pa.types.is_floating(f.type):
            col = t.column(i)
            sentinel = pa.scalar(-12345.5, f.type)
            t = t.set_column(i, f, pc.if_else(pc.is_nan(col), sentinel, col))
    return t


def _same(theirs: list[tuple[int, pa.RecordBatch]], ours: list[tuple[int, pa.RecordBatch]]) -> None:
    assert [p for p, _ in ours] == [p for p, _ in theirs] or (
        pa.Table.from_batches([b for _, b in ours]).num_rows
        == pa.Table.from_batches([b for _, b in theirs]).num_rows
    )
    a = pa.Table.from_batches([b for _, b in theirs])
    # the native decoder hands strings, binaries and lists in the large types frazil's reads
    # produce; pyarrow's may be the small ones
    a = _nan_safe(a.cast(large_schema(a.schema)))
    b = _nan_safe(pa.Table.from_batches([b for _, b in ours]))
    # a map's entries are named after the column by pyarrow, not by arrow-rs; nothing reads
    # that name: compare the maps' values
    for i, f in enumerate(a.schema):
        if pa.types.is_map(f.type):
            assert b.column(i).to_pylist() == a.column(i).to_pylist()
            a, b = a.remove_column(i), b.remove_column(i)
            break
    assert a.schema.equals(b.schema, check_metadata=True)
    assert b.equals(a), "native decode differs from pyarrow's"
    # positions: each batch starts where the rows before it end
    pos = [p for p, _ in ours]
    sizes = [x.num_rows for _, x in ours]
    assert all(pos[i] + sizes[i] <= pos[i + 1] for i in range(len(pos) - 1))


@pytest.mark.parametrize("compression", ["none", "snappy", "gzip", "zstd", "lz4", "brotli"])
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"use_dictionary": False, "data_page_version": "2.0"},
        {"row_group_size": 700, "data_page_size": 256, "write_statistics": False},
    ],
    ids=["default", "plain-v2", "small-groups-pages"],
)
def test_native_decode_equals_pyarrow(tmp_path: Path, compression: str, options: dict) -> None:
    table = _sample(2500)
    path = str(tmp_path / "f.parquet")
    pq.write_table(table, path, compression=compression, **options)
    theirs, native = _both(path, table.column_names)
    assert native is not None, "the native decoder declined a file of the standard types"
    _same(theirs, native)
    # a projection decodes only its columns (the ranges read cover them alone)
    theirs, native = _both(path, ["id", "s", "p"])
    assert native is not None
    _same(theirs, native)


def test_files_without_a_stored_arrow_schema(tmp_path: Path) -> None:
    """Java's and Spark's files carry no ARROW:schema: strings and lists take the large types
    frazil reads them as."""
    table = _sample(300)
    path = str(tmp_path / "f.parquet")
    pq.write_table(table, path, store_schema=False)
    theirs, native = _both(path, table.column_names)
    assert native is not None
    _same(theirs, native)


def test_real_world_files() -> None:
    """Every Parquet file of the external fixtures: where the native decoder accepts the
    columns it decodes them as pyarrow does."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "external"))
    from fixtures_root import require_fixtures

    root = require_fixtures()
    used = 0
    files = sorted(root.rglob("*.parquet"))
    for f in files:
        try:
            names = pq.read_schema(f).names
            theirs, native = _both(str(f), list(dict.fromkeys(names)))
        except (OSError, pa.ArrowException, FrazilError):
            continue  # pyarrow cannot read it either, or it is not Parquet
        if native is not None:
            used += 1
            _same(theirs, native)
    assert used >= len(files) // 2, f"native decoder used for only {used} of {len(files)} files"


def _damaged(tmp_path: Path, at: float, byte: int) -> str:
    path = tmp_path / "f.parquet"
    pq.write_table(_sample(3000), path, compression="zstd")
    data = bytearray(path.read_bytes())
    i = int(len(data) * at) % len(data)
    data[i] ^= byte
    path.write_bytes(bytes(data))
    return str(path)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(at=st.floats(0.0, 0.999), byte=st.integers(1, 255))
def test_damaged_file_is_an_error_or_pyarrow_equal(tmp_path: Path, at: float, byte: int) -> None:
    """A flipped byte anywhere: the decoder raises a FrazilError naming the file, or (a byte the
    format does not check) decodes what pyarrow decodes; it never crashes."""
    path = _damaged(tmp_path, at, byte)
    try:
        with contextlib.ExitStack() as stack:
            data = _ParquetData(LOCAL, path, None, stack)
            cols = data.schema_arrow.names
            if data._native_indices(cols) is None:
                return
            ours = _pairs(data.batches(cols, 1000, None, None))
    except FrazilError as e:
        assert path in str(e)
        return
    except (OSError, pa.ArrowException):
        return  # pyarrow's own footer read refused it first
    with contextlib.ExitStack() as stack:
        data = _ParquetData(LOCAL, path, None, stack)
        data._native = None
        try:
            theirs = _pairs(data.batches(cols, 1000, None, None))
        except (OSError, pa.ArrowException):
            return  # pyarrow notices what the native decoder let through: both see damage
    a = pa.Table.from_batches([b for _, b in theirs])
    b = pa.Table.from_batches([b for _, b in ours])
    assert a.num_rows == b.num_rows


def test_truncated_file_names_it(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    pq.write_table(_sample(3000), path)
    full = path.read_bytes()
    with contextlib.ExitStack() as stack:
        data = _ParquetData(LOCAL, str(path), None, stack)
        cols = data.schema_arrow.names
        assert data._native is not None
        # the file shrinks after its footer was read: the column chunks are no longer there
        path.write_bytes(full[: len(full) // 3])
        with pytest.raises((FrazilError, OSError)) as e:
            _pairs(data.batches(cols, 1000, None, None))
        if isinstance(e.value, FrazilError):
            assert str(path) in str(e.value)


def test_switch_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """FRAZIL_NATIVE_PARQUET=0 (read once at import) reads every file with pyarrow."""
    path = tmp_path / "f.parquet"
    pq.write_table(_sample(10), path)
    monkeypatch.setattr(read_module, "_NATIVE_PARQUET", False)
    with contextlib.ExitStack() as stack:
        assert _ParquetData(LOCAL, str(path), None, stack)._native is None


@pytest.mark.parametrize(
    "deleted",
    [
        [i for i in range(2500) if i % 17 == 3],  # scattered: decoded, then filtered out
        list(range(300, 2100)),  # one long run: skipped by the decoder
        list(range(2500)),  # every row
        [0, 2499],
    ],
    ids=["scattered", "run", "all", "ends"],
)
def test_native_decode_drops_deleted_rows(tmp_path: Path, deleted: list[int]) -> None:
    """Rows a deletion vector names are not decoded; the rest equal pyarrow's rows with the
    deleted positions removed (numpy's mask the oracle)."""
    from frazil.manifest.deletes import DeletionVector

    table = _sample(2500)
    path = str(tmp_path / "f.parquet")
    pq.write_table(table, path, row_group_size=700, data_page_size=256)
    dv = DeletionVector.from_positions(deleted)
    columns = ["id", "s", "l", "p", "m"]
    with contextlib.ExitStack() as stack:
        data = _ParquetData(LOCAL, path, None, stack)
        assert data._native_indices(columns) is not None
        ours = _pairs(data.batches(columns, 300, None, None, None, dv))
    # a row group with deletes has no consecutive positions (None); one without keeps them
    for p, b in ours:
        if p is not None:
            assert b.column("id").to_pylist() == list(range(p, p + b.num_rows))
    assert any(p is None for p, _ in ours) or len(deleted) == 2500
    assert all(0 < b.num_rows <= 300 for _, b in ours)
    keep = pa.array([i not in set(deleted) for i in range(2500)])
    want = table.select(columns).filter(keep)
    got = (
        pa.Table.from_batches([b for _, b in ours], schema=ours[0][1].schema)
        if ours
        else want.slice(0, 0)
    )
    assert got.num_rows == want.num_rows
    assert got.column("id").to_pylist() == want.column("id").to_pylist()
    assert got.column("s").to_pylist() == want.column("s").to_pylist()
    assert got.column("l").to_pylist() == want.column("l").to_pylist()
    assert got.column("p").to_pylist() == want.column("p").to_pylist()
    assert got.column("m").to_pylist() == want.column("m").to_pylist()


@pytest.mark.parametrize("version", [2, 3])
def test_table_deletes_with_and_without_positions(tmp_path: Path, version: int) -> None:
    """A table with position deletes (v2) or deletion vectors (v3) reads the same live rows
    whether the decoder drops the deleted rows (no positional column read) or the read does
    (``_pos`` read): pyarrow's filter of the written rows is the oracle, and ``_pos`` is each
    row's position in its file."""
    from frazil.catalog import load_catalog

    cat = load_catalog("w", type="filesystem", warehouse=str(tmp_path))
    cat.create_namespace("db")
    rows = pa.table(
        {
            "id": pa.array(range(20_000), pa.int64()),
            "s": pa.array([f"s{i % 97}" for i in range(20_000)], pa.large_string()),
        }
    )
    t = cat.create_table(
        "db.t",
        rows.schema,
        properties={
            "format-version": str(version),
            "write.delete.mode": "merge-on-read",
            "write.parquet.row-group-limit": "3000",
        },
    )
    t.append(rows)
    t.append(rows.set_column(0, "id", pc.add(rows.column("id"), 20_000)))
    t.delete(
        "id IN (2, 9, 16, 23, 30, 1234, 19999, 20000) OR (id >= 5000 AND id < 9000) OR id = 39999"
    )
    all_ids = list(range(40_000))
    live = [
        i
        for i in all_ids
        if not (i in (2, 9, 16, 23, 30, 1234, 19999, 20000) or 5000 <= i < 9000 or i == 39999)
    ]
    t = cat.load_table("db.t")
    got = t.scan().to_arrow()
    assert sorted(got.column("id").to_pylist()) == live
    assert got.column("s").to_pylist() == [
        f"s{(i % 20_000) % 97}" for i in got.column("id").to_pylist()
    ]
    with_pos = t.scan(selected_fields=("id", "_file", "_pos")).to_arrow()
    assert sorted(with_pos.column("id").to_pylist()) == live
    # ``_pos``: the row's position in its file, as pyarrow reads the file
    files = {
        f: pq.read_table(f.removeprefix("file://").removeprefix("file:"), columns=["id"])
        .column("id")
        .to_pylist()
        for f in set(with_pos.column("_file").to_pylist())
    }
    for i, f, pos in zip(
        *(with_pos.column(c).to_pylist() for c in ("id", "_file", "_pos")), strict=True
    ):
        assert files[f][pos] == i
