"""Table statistics: NDV theta sketches in Puffin files (``table.compute_statistics``).

Oracles: the ``datasketches`` package (Apache DataSketches) sketching the same values must give
the same bytes (strings hash as their UTF-8 bytes and longs as their 8 little-endian bytes in
both DataSketches' ``update`` and Iceberg's single-value serialization); exact distinct counts
from pyarrow; the Puffin footer read back by frazil's reader.
"""

from __future__ import annotations

import datetime as dt
import decimal
import sys
import uuid

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from frazil import _native
from frazil.catalog import load_catalog
from frazil.exceptions import DecodeError, FileMissingError, InvalidArgumentError
from frazil.manifest.puffin import Blob, read_puffin, write_puffin
from frazil.table import Table
from frazil.table.statistics import THETA_BLOB_TYPE, write_statistics_file

ds = pytest.importorskip("datasketches")

N = 6000


def _data(n: int = N) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "s": pa.array([None if i % 7 == 0 else f"v{i % 900}" for i in range(n)]),
            "i": pa.array([i % 77 for i in range(n)], pa.int32()),
            "d": pa.array([i % 50 / 4 for i in range(n)], pa.float64()),
            "dec": pa.array([decimal.Decimal(i % 33) / 100 for i in range(n)], pa.decimal128(9, 2)),
            "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(i % 40) for i in range(n)]),
            "ts": pa.array(
                [dt.datetime(2024, 1, 1) + dt.timedelta(minutes=i % 300) for i in range(n)],
                pa.timestamp("us"),
            ),
            "b": pa.array([i % 3 == 0 for i in range(n)]),
            "bin": pa.array([bytes([i % 256, 1]) for i in range(n)], pa.binary()),
            "u": pa.array([uuid.UUID(int=i % 123).bytes for i in range(n)], pa.binary(16)),
            "st": pa.array([{"a": i % 5, "z": "x"} if i % 11 else None for i in range(n)]),
            "tags": pa.array([["a", "b"]] * n),
            "empty": pa.array([None] * n, pa.string()),
        }
    )


@pytest.fixture
def table(tmp_path) -> Table:
    catalog = load_catalog(
        "stats", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh")
    )
    catalog.create_namespace("db")
    data = _data()
    t = catalog.create_table("db.t", schema=data.schema)
    t.append(data)
    return t


def _blobs(table: Table) -> dict[int, bytes]:
    f = table.metadata.statistics[-1]
    puffin = read_puffin(table.io.read(f.statistics_path), f.statistics_path)
    return {b.fields[0]: puffin.read_blob(b) for b in puffin.blobs}


def test_every_primitive_column_gets_an_exact_ndv_below_the_sketch_capacity(table) -> None:
    f = table.compute_statistics()
    data = _data()
    schema = table.schema()
    primitive = ["id", "s", "i", "d", "dec", "day", "ts", "b", "bin", "u", "empty"]
    assert [b.fields for b in f.blob_metadata] == [
        (schema.find_field(n).field_id,) for n in primitive
    ]
    expected = {
        schema.find_field(n).field_id: pc.count_distinct(data[n]).as_py() for n in primitive
    }
    ndv = table.read_ndv()
    assert ndv == expected
    assert {b.fields[0]: int(b.properties["ndv"]) for b in f.blob_metadata} == expected
    snapshot = table.current_snapshot()
    assert all(b.snapshot_id == snapshot.snapshot_id for b in f.blob_metadata)
    assert all(b.sequence_number == snapshot.sequence_number for b in f.blob_metadata)
    assert all(b.type == THETA_BLOB_TYPE for b in f.blob_metadata)
    # The metadata entry describes the file as written (sizes as the spec defines them).
    raw = table.io.read(f.statistics_path)
    assert f.file_size_in_bytes == len(raw)
    footer_payload = int.from_bytes(raw[-12:-8], "little")
    assert f.file_footer_size_in_bytes == footer_payload + 16
    assert raw[-f.file_footer_size_in_bytes :][:4] == b"PFA1"
    assert table.metadata.statistics == (f,)
    # The blobs are zstd-compressed as the reference writes them.
    puffin = read_puffin(raw)
    assert {b.compression_codec for b in puffin.blobs} == {"zstd"}


def test_sketches_equal_datasketches_for_strings_and_longs(table) -> None:
    table.compute_statistics(columns=["s", "id"])
    blobs = _blobs(table)
    data = _data()
    strings = ds.update_theta_sketch()
    for v in data["s"].to_pylist():
        if v is not None:
            strings.update(v)
    longs = ds.update_theta_sketch()
    for v in data["id"].to_pylist():
        longs.update(v)
    schema = table.schema()
    assert blobs[schema.find_field("s").field_id] == strings.compact(True).serialize()
    assert blobs[schema.find_field("id").field_id] == longs.compact(True).serialize()


@pytest.mark.parametrize("n", [0, 1, 2, 7680, 7681, 100_000])
def test_native_sketch_is_byte_identical_to_datasketches_in_every_mode(n) -> None:
    values = pa.chunked_array([pa.array([f"k{i}" for i in range(n)] + ["", None])])
    sketch = _native.ThetaSketch()
    sketch.update(values, '"string"')
    ref = ds.update_theta_sketch()
    for i in range(n):
        ref.update(f"k{i}")
    if n == 0:
        # DataSketches C++ writes the seed hash into an empty sketch, Java (and the Rust crate)
        # zeros; the bytes equal Java's (interop/test_statistics_java.py), and C++ reads them.
        assert sketch.to_bytes() == b"\x01\x03\x03\x00\x00\x1e\x00\x00"
        assert ds.compact_theta_sketch.deserialize(sketch.to_bytes()).is_empty()
    else:
        assert sketch.to_bytes() == ref.compact(True).serialize()
    assert sketch.estimate() == ref.get_estimate()


@pytest.mark.parametrize("n", [0, 3000, 9000, 50_000])
def test_native_union_is_byte_identical_to_datasketches_union(n) -> None:
    parts = [[f"k{i}" for i in range(n) if i % 3 == r] for r in range(3)]
    union = _native.ThetaUnion()
    ref = ds.theta_union()
    for part in parts:
        sketch = _native.ThetaSketch()
        sketch.update(pa.array(part, pa.string()), '"string"')
        union.update(sketch.to_bytes())
        oracle = ds.update_theta_sketch()
        for v in part:
            oracle.update(v)
        ref.update(oracle.compact(True))
    result = ref.get_result()
    if n:
        assert union.to_bytes() == result.serialize()
    else:  # the empty sketch in Java's form (see the sketch test above)
        assert ds.compact_theta_sketch.deserialize(union.to_bytes()).is_empty()
    assert union.estimate() == result.get_estimate()
    assert _native.ThetaSketch.estimate_of(union.to_bytes()) == result.get_estimate()
    with pytest.raises(DecodeError):
        union.update(b"not a sketch")


def test_estimates_above_capacity_are_close(tmp_path) -> None:
    catalog = load_catalog(
        "big", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh")
    )
    catalog.create_namespace("db")
    n = 60_000
    data = pa.table(
        {"id": pa.array(range(n), pa.int32()), "x": pa.array([i % 9000 for i in range(n)])}
    )
    t = catalog.create_table("db.big", schema=data.schema)
    t.append(data.slice(0, n // 2))
    t.append(data.slice(n // 2))
    t.compute_statistics()
    ndv = t.read_ndv()
    # 4096 retained hashes at least: relative standard error under 1/sqrt(4096) = 1.6%; 4 sigma.
    assert abs(ndv[1] - n) < 0.0625 * n
    assert abs(ndv[2] - 9000) < 0.0625 * 9000


def test_columns_and_snapshot_choice(table) -> None:
    first = table.current_snapshot().snapshot_id
    table.append(_data(10).set_column(0, "id", pa.array(range(10_000, 10_010), pa.int64())))
    f = table.compute_statistics(columns=["st.a", "i"], snapshot_id=first)
    schema = table.schema()
    st_a = schema.find_field("st.a").field_id
    assert [b.fields for b in f.blob_metadata] == [(st_a,), (schema.find_field("i").field_id,)]
    assert table.read_ndv(first) == {st_a: 5, schema.find_field("i").field_id: 77}
    assert table.read_ndv() == {}  # the current snapshot has none
    table.compute_statistics(columns=["id"])
    assert table.read_ndv()[schema.find_field("id").field_id] == N + 10
    assert len(table.metadata.statistics) == 2
    # Recomputing replaces the snapshot's entry.
    table.compute_statistics(columns=["i"])
    assert len(table.metadata.statistics) == 2
    assert table.read_ndv() == {schema.find_field("i").field_id: 77}
    with pytest.raises(InvalidArgumentError, match="tags"):
        table.compute_statistics(columns=["tags"])
    with pytest.raises(InvalidArgumentError, match="nope"):
        table.compute_statistics(columns=["nope"])
    with pytest.raises(InvalidArgumentError, match=r"db\.t has no snapshot 42"):
        table.compute_statistics(snapshot_id=42)


def test_table_without_snapshot(tmp_path) -> None:
    catalog = load_catalog(
        "e", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh")
    )
    catalog.create_namespace("db")
    t = catalog.create_table("db.e", schema=pa.schema([("a", pa.int64())]))
    with pytest.raises(InvalidArgumentError, match=r"db\.e has no snapshot"):
        t.compute_statistics()


def test_corrupt_sketch_is_a_decode_error_naming_the_file(table) -> None:
    snapshot = table.current_snapshot()
    good = table.compute_statistics(columns=["i"])
    field_id = table.schema().find_field("i").field_id
    for bad in (b"\x02\x03\x03\x00\x00\x1a\xcc\x93\xff\xff\xff\x7f", b"not a sketch at all"):
        f = write_statistics_file(table, snapshot, [_column(table, "i")], [bad], [1.0])
        table.transaction().set_statistics(f).commit_transaction()
        with pytest.raises(DecodeError) as e:
            table.read_ndv()
        assert f.statistics_path in str(e.value)
        assert f"field {field_id}" in str(e.value)
    table.transaction().set_statistics(good).commit_transaction()
    assert table.read_ndv() == {field_id: 77}


def test_missing_statistics_file_is_a_frazil_error_naming_it(table) -> None:
    import os

    f = table.compute_statistics(columns=["i"])
    os.remove(f.statistics_path.removeprefix("file:"))
    with pytest.raises(FileMissingError) as e:
        table.read_ndv()
    assert f.statistics_path.removeprefix("file:") in str(e.value)
    assert isinstance(e.value.__cause__, FileNotFoundError)


def _column(table: Table, name: str):  # type: ignore[no-untyped-def]
    from frazil.table.statistics import statistics_columns

    return statistics_columns(table.schema(), [name])[0]


def test_reading_needs_no_datasketches_package(table, monkeypatch) -> None:
    # Sketching, reading and merging all run in the native DataSketches crate; the Python
    # package is only these tests' oracle.
    monkeypatch.setitem(sys.modules, "datasketches", None)
    table.compute_statistics(columns=["i"])
    assert table.read_ndv() == {table.schema().find_field("i").field_id: 77}


def test_other_blob_types_are_skipped(table) -> None:
    snapshot = table.current_snapshot()
    f = table.compute_statistics(columns=["i"])
    data = table.io.read(f.statistics_path)
    puffin = read_puffin(data)
    blobs = [
        Blob("something-else", b"xyz", fields=(1,), snapshot_id=snapshot.snapshot_id),
        Blob(
            THETA_BLOB_TYPE,
            puffin.read_blob(0),
            fields=puffin.blobs[0].fields,
            snapshot_id=snapshot.snapshot_id,
            sequence_number=snapshot.sequence_number,
        ),
    ]
    table.io.write(f.statistics_path, write_puffin(blobs), overwrite=True)
    assert table.read_ndv() == {puffin.blobs[0].fields[0]: 77}


def test_expire_removes_statistics_files_of_expired_snapshots(table) -> None:
    old = table.compute_statistics(columns=["i"])
    table.append(_data(5))
    new = table.compute_statistics(columns=["i"])
    assert table.io.exists(old.statistics_path)
    table.expire_snapshots().expire_snapshot_id(old.snapshot_id).commit()
    assert [f.statistics_path for f in table.metadata.statistics] == [new.statistics_path]
    assert not table.io.exists(old.statistics_path)
    assert table.io.exists(new.statistics_path)


def test_types_without_a_single_value_form_are_not_sketched() -> None:
    from frazil.schema import Schema
    from frazil.table.statistics import statistics_columns
    from frazil.types import LongType, NestedField, UnknownType, VariantType

    schema = Schema(
        NestedField(1, "a", LongType()),
        NestedField(2, "u", UnknownType()),
        NestedField(3, "v", VariantType()),
    )
    assert [c.field.name for c in statistics_columns(schema, None)] == ["a"]
    for name in ("u", "v"):
        with pytest.raises(InvalidArgumentError, match="single-value serialization"):
            statistics_columns(schema, [name])


def test_files_go_to_write_metadata_path(table, tmp_path) -> None:
    elsewhere = tmp_path / "meta-elsewhere"
    table.transaction().set_properties({"write.metadata.path": str(elsewhere)}).commit_transaction()
    f = table.compute_statistics(columns=["i"])
    assert f.statistics_path.startswith(f"{elsewhere}/{f.snapshot_id}-")
    assert f.statistics_path.endswith(".stats")
    assert table.read_ndv() == {table.schema().find_field("i").field_id: 77}


@pytest.mark.interop
def test_pyiceberg_reads_the_statistics_entry_and_its_builder_names_work(table) -> None:
    pytest.importorskip("pyiceberg")
    from pyiceberg.table import StaticTable

    f = table.compute_statistics(columns=["i", "s"])
    theirs = StaticTable.from_metadata(table.metadata_location).metadata.statistics
    assert len(theirs) == 1
    assert theirs[0].snapshot_id == f.snapshot_id
    assert theirs[0].statistics_path == f.statistics_path
    assert theirs[0].file_size_in_bytes == f.file_size_in_bytes
    assert theirs[0].file_footer_size_in_bytes == f.file_footer_size_in_bytes
    assert [(b.type, b.fields, b.properties) for b in theirs[0].blob_metadata] == [
        (b.type, list(b.fields), dict(b.properties)) for b in f.blob_metadata
    ]
    # PyIceberg's builder names
    with table.update_statistics() as update:
        update.remove_statistics(f.snapshot_id)
    assert table.metadata.statistics == ()
    with table.update_statistics() as update:
        update.set_statistics(f)
    assert table.metadata.statistics == (f,)


def test_uuid_values_hash_as_their_16_bytes() -> None:
    # Appendix D: a UUID is its 16 bytes in big-endian order, i.e. Python's UUID.bytes; the
    # same bytes as a fixed[16] value (whose sketches the Java interop test checks).
    values = [uuid.UUID(int=i * 7919).bytes for i in range(500)]
    as_uuid, as_fixed = _native.ThetaSketch(), _native.ThetaSketch()
    as_uuid.update(pa.array(values, pa.uuid()), '"uuid"')
    as_fixed.update(pa.array(values, pa.binary(16)), '"fixed[16]"')
    assert as_uuid.to_bytes() == as_fixed.to_bytes()
    assert as_uuid.estimate() == 500
    with pytest.raises(InvalidArgumentError, match="Iceberg type long"):
        _native.ThetaSketch().update(pa.array(["x"]), '"long"')
