"""add_files: DataFiles from Parquet footers against PyIceberg's ``add_files`` on the same
files (a PyIceberg SqlCatalog on SQLite; its data files read back through its own API), plus
schema, partition and duplicate checks."""

from __future__ import annotations

import datetime as dt
import decimal
import struct
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from peers import import_peer

from frazil.exceptions import ValidationError
from frazil.manifest.content_file import DataFile
from frazil.metadata import TableMetadata
from frazil.table.write.add_files import data_files_from_parquet

import_peer("pyiceberg")
from pyiceberg.catalog.sql import SqlCatalog  # noqa: E402
from pyiceberg.partitioning import PartitionField as PField  # noqa: E402
from pyiceberg.partitioning import PartitionSpec as PSpec  # noqa: E402
from pyiceberg.transforms import (  # noqa: E402
    BucketTransform,
    DayTransform,
    IdentityTransform,
    TruncateTransform,
)

EPOCH = dt.date(1970, 1, 1)
COMPARED = (
    "record_count",
    "file_size_in_bytes",
    "column_sizes",
    "value_counts",
    "null_value_counts",
    "lower_bounds",
    "upper_bounds",
    "split_offsets",
    "partition",
)


class LocalIO:
    """The part of FileIO add_files uses, for local paths."""

    def filesystem(self, location: str) -> tuple[pafs.FileSystem, str]:
        return pafs.LocalFileSystem(), location.removeprefix("file://")

    def read(self, location: str) -> bytes:
        return Path(location.removeprefix("file://")).read_bytes()

    def read_many(self, locations: list[str]) -> list[bytes]:
        return [self.read(x) for x in locations]


@pytest.fixture
def catalog(tmp_path: Path) -> SqlCatalog:
    cat = SqlCatalog("peer", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}")
    cat.create_namespace("ns")
    return cat


def frazil_metadata(table: Any) -> TableMetadata:
    return TableMetadata.from_json(
        Path(table.metadata_location.removeprefix("file://")).read_bytes()
    )


def peer_files(table: Any) -> dict[str, dict[str, Any]]:
    out = {}
    for task in table.scan().plan_files():
        f = task.file
        row = {k: getattr(f, k) for k in COMPARED if k != "partition"}
        row["split_offsets"] = None if f.split_offsets is None else tuple(f.split_offsets)
        row["partition"] = tuple(f.partition)
        out[f.file_path] = row
    return out


def compare(ours: list[DataFile], theirs: dict[str, dict[str, Any]]) -> None:
    assert sorted(theirs) == sorted(f.file_path for f in ours)
    for f in ours:
        for key in COMPARED:
            mine = getattr(f, key)
            if key == "partition":  # PyIceberg keeps day partition values as day ordinals
                mine = tuple((v - EPOCH).days if isinstance(v, dt.date) else v for v in mine)
            assert mine == theirs[f.file_path][key], (f.file_path, key)


def mixed_table() -> pa.Table:
    return pa.table(
        {
            # long strings are truncated to 16 code points: multi-byte UTF-8, and a value whose
            # prefix is all U+10FFFF has no upper bound
            "s": pa.array(["b" * 20, "añ€😀" * 10, None, "\U0010ffff" * 17, "z"]),
            "b": pa.array([b"\xff" * 20, b"\x00ab", None, b"x", b"\xfe" + b"\x01" * 20]),
            "d": pa.array(
                [decimal.Decimal("1.23"), decimal.Decimal("-4.56"), None, None, None],
                pa.decimal128(9, 2),
            ),
            "d2": pa.array(
                [decimal.Decimal("1.23"), None, None, decimal.Decimal("-99999.99"), None],
                pa.decimal128(20, 2),
            ),
            "dt": pa.array([dt.date(2020, 1, 1), dt.date(1960, 5, 5), None, None, None]),
            "ts": pa.array([1, -2, None, 5, 7], pa.timestamp("us")),
            "tz": pa.array([1, -2, None, 5, 7], pa.timestamp("us", "UTC")),
            "i": pa.array([1, -2, None, 5, 7], pa.int32()),
            "l": pa.array([1, -(2**40), None, 5, 7], pa.int64()),
            "f": pa.array([1.5, -0.0, None, 0.0, 2.0], pa.float32()),
            "g": pa.array([1.5, -1e300, None, 0.0, 2.0], pa.float64()),
            "n": pa.array([None] * 5, pa.int32()),
            "bo": pa.array([True, False, None, True, True]),
            "tm": pa.array([1, 2, None, 3, 86_399_999_999], pa.time64("us")),
            "u": pa.array([uuid.UUID(int=i).bytes for i in (5, 1, 3, 2**128 - 1, 0)], pa.uuid()),
        }
    )


def test_unpartitioned_metrics_match_pyiceberg(catalog: SqlCatalog, tmp_path: Path) -> None:
    data = mixed_table()
    table = catalog.create_table("ns.t", schema=data.schema)
    paths = []
    for k in range(3):
        p = str(tmp_path / f"f{k}.parquet")
        # several row groups: bounds are the min of mins and the max of maxes
        pq.write_table(data.slice(k, 5 - k), p, row_group_size=2)
        paths.append(p)
    table.add_files(paths)
    ours = data_files_from_parquet(LocalIO(), frazil_metadata(table), paths, False)
    compare(ours, peer_files(table))
    assert all(f.partition == () and f.spec_id == 0 for f in ours)
    assert all(f.file_format == "PARQUET" for f in ours)
    s = frazil_metadata(table).schema()
    sid = s.find_field("s").field_id
    # the maximum's first 16 code points are all U+10FFFF: nothing to increment, no bound
    assert sid not in ours[0].upper_bounds
    assert ours[0].lower_bounds[sid] == ("añ€😀" * 10)[:16].encode()


def test_partition_values_match_pyiceberg(catalog: SqlCatalog, tmp_path: Path) -> None:
    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("ts", pa.timestamp("us", "UTC")),
            ("name", pa.string()),
            ("amount", pa.decimal128(12, 2)),
        ]
    )
    table = catalog.create_table("ns.p", schema=schema)
    ice = table.schema()
    spec = PSpec(
        PField(ice.find_field("ts").field_id, 1000, DayTransform(), "ts_day"),
        PField(ice.find_field("name").field_id, 1001, TruncateTransform(3), "name_trunc"),
        PField(ice.find_field("amount").field_id, 1002, IdentityTransform(), "amount"),
        PField(ice.find_field("id").field_id, 1003, TruncateTransform(10), "id_trunc"),
    )
    with table.update_spec() as up:
        for f in spec.fields:
            up.add_field(ice.find_column_name(f.source_id), f.transform, f.name)
    paths = []
    for k, day in enumerate((1, 2, 40)):
        base = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(days=day - 1)
        rows = pa.table(
            {
                "id": pa.array([10 * k + 1, 10 * k + 9], pa.int64()),
                "ts": pa.array([base, base + dt.timedelta(hours=23)], schema.field("ts").type),
                "name": ["abcdef", "abcxyz"],
                "amount": pa.array([decimal.Decimal("3.50")] * 2, pa.decimal128(12, 2)),
            },
            schema=schema,
        )
        p = str(tmp_path / f"p{k}.parquet")
        pq.write_table(rows, p)
        paths.append(p)
    table = catalog.load_table("ns.p")
    table.add_files(paths)
    ours = data_files_from_parquet(LocalIO(), frazil_metadata(table), paths, False)
    compare(ours, peer_files(table))
    assert ours[0].partition == (dt.date(2024, 1, 1), "abc", decimal.Decimal("3.50"), 0)
    assert ours[2].partition[0] == dt.date(2024, 2, 9)


def test_file_spanning_partitions_is_refused(catalog: SqlCatalog, tmp_path: Path) -> None:
    schema = pa.schema([("id", pa.int64()), ("cat", pa.string())])
    table = catalog.create_table("ns.s", schema=schema)
    with table.update_spec() as up:
        up.add_identity("cat")
        up.add_field("id", BucketTransform(4), "id_bucket")
    meta = frazil_metadata(catalog.load_table("ns.s"))
    io = LocalIO()

    def write(name: str, rows: dict[str, list[Any]]) -> str:
        p = str(tmp_path / name)
        pq.write_table(pa.table(rows, schema=schema), p)
        return p

    spans = write("a.parquet", {"id": [1, 1], "cat": ["x", "y"]})
    with pytest.raises(ValidationError, match=r"a\.parquet.*several partitions.*cat"):
        data_files_from_parquet(io, meta, [spans])
    # bucket does not preserve order: one id value is fine, a range is not
    same = write("b.parquet", {"id": [7, 7], "cat": ["x", "x"]})
    (f,) = data_files_from_parquet(io, meta, [same])
    assert f.partition == ("x", BucketTransform(4).transform(table.schema().find_type("id"))(7))
    ranged = write("c.parquet", {"id": [7, 8], "cat": ["x", "x"]})
    with pytest.raises(ValidationError, match=r"several partitions.*id_bucket"):
        data_files_from_parquet(io, meta, [ranged])
    # nulls and values in one file are two partitions; only nulls is the null partition
    mixed = write("d.parquet", {"id": [7, 7], "cat": ["x", None]})
    with pytest.raises(ValidationError, match="both nulls and values"):
        data_files_from_parquet(io, meta, [mixed])
    nulls = write("e.parquet", {"id": [7, 7], "cat": [None, None]})
    assert data_files_from_parquet(io, meta, [nulls])[0].partition[0] is None


def test_name_mapped_files_without_ids(catalog: SqlCatalog, tmp_path: Path) -> None:
    # The table's name mapping gives the ids: a renamed column keeps matching by its old name.
    table = catalog.create_table("ns.m", schema=pa.schema([("a", pa.int64()), ("b", pa.string())]))
    table.add_files([_write(tmp_path / "first.parquet", {"a": [1], "b": ["x"]})])
    table = catalog.load_table("ns.m")
    with table.update_schema() as up:
        up.rename_column("b", "c")
    table = catalog.load_table("ns.m")
    meta = frazil_metadata(table)
    assert "schema.name-mapping.default" in meta.properties
    old_names = _write(tmp_path / "old.parquet", {"a": [5, 6], "b": ["p", "q"]})
    (f,) = data_files_from_parquet(LocalIO(), meta, [old_names])
    c_id = meta.schema().find_field("c").field_id
    assert f.lower_bounds[c_id] == b"p" and f.upper_bounds[c_id] == b"q"
    assert f.value_counts == {1: 2, c_id: 2}


def test_files_with_field_ids_and_schema_errors(catalog: SqlCatalog, tmp_path: Path) -> None:
    table = catalog.create_table(
        "ns.e",
        schema=pa.schema(
            [pa.field("a", pa.int64(), nullable=False), ("b", pa.string()), ("x", pa.float64())]
        ),
    )
    meta = frazil_metadata(table)
    io = LocalIO()

    def field(name: str, t: pa.DataType, fid: int, nullable: bool = True) -> pa.Field:
        return pa.field(name, t, nullable, metadata={b"PARQUET:field_id": str(fid).encode()})

    # ids win over names; int -> long and float -> double are promotions
    ids = pa.schema([field("zz", pa.int32(), 1, False), field("yy", pa.float32(), 3)])
    p = str(tmp_path / "ids.parquet")
    pq.write_table(pa.table({"zz": [3, 4], "yy": [0.5, 1.5]}, schema=ids), p)
    (f,) = data_files_from_parquet(io, meta, [p])
    assert f.lower_bounds[1] == (3).to_bytes(8, "little")
    # bounds in the table's types: 8-byte long and double
    assert f.upper_bounds[3] == struct.pack("<d", 1.5)
    with pytest.raises(ValidationError, match=r"bad\.parquet.*'b'.*long.*string"):
        data_files_from_parquet(
            io, meta, [_write(tmp_path / "bad.parquet", {"a": [1], "b": [2]}, nullable_a=False)]
        )
    with pytest.raises(ValidationError, match=r"required column 'a' is missing"):
        data_files_from_parquet(io, meta, [_write(tmp_path / "miss.parquet", {"b": ["x"]})])
    with pytest.raises(ValidationError, match=r"'a' is optional in the file"):
        data_files_from_parquet(io, meta, [_write(tmp_path / "opt.parquet", {"a": [1]})])
    with pytest.raises(ValidationError, match=r"extra\.parquet.*'q'"):
        data_files_from_parquet(
            io, meta, [_write(tmp_path / "extra.parquet", {"a": [1], "q": [1]}, nullable_a=False)]
        )
    with pytest.raises(ValidationError, match="unique"):
        data_files_from_parquet(io, meta, [p, p])


def test_duplicate_files_are_refused(catalog: SqlCatalog, tmp_path: Path) -> None:
    table = catalog.create_table("ns.d", schema=pa.schema([("a", pa.int64())]))
    paths = [_write(tmp_path / f"{i}.parquet", {"a": [i]}) for i in range(4)]
    table.add_files(paths[:2])
    meta = frazil_metadata(catalog.load_table("ns.d"))
    with pytest.raises(ValidationError, match=r"already referenced.*1\.parquet") as err:
        data_files_from_parquet(LocalIO(), meta, paths[1:])
    assert "2.parquet" not in str(err.value)
    files = data_files_from_parquet(LocalIO(), meta, paths[2:])
    assert [f.file_path for f in files] == paths[2:]
    assert data_files_from_parquet(LocalIO(), meta, paths[:1], check_duplicate_files=False)


def _write(path: Path, columns: dict[str, list[Any]], nullable_a: bool = True) -> str:
    table = pa.table(columns)
    if "a" in columns and not nullable_a:
        i = table.schema.get_field_index("a")
        table = table.cast(table.schema.set(i, table.schema.field(i).with_nullable(False)))
    pq.write_table(table, str(path))
    return str(path)
