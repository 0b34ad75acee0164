"""Equality delete files applied on read (``frazil.table.scan.read``, natively through
``frazil.manifest.deletes.EqualityDeleteSet``) on evolved columns, with the expected rows written
out by
hand from the spec's "Equality Delete Files" and "Column Projection" rules: delete columns are
matched by field id (a renamed column still matches), promoted columns (int -> long,
float -> double, decimal(5, 2) -> decimal(10, 2)) match keys written before the promotion, and
a column added after a data file was written reads as its initial default, or null.
"""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from frazil.exceptions import UnsupportedError, ValidationError
from frazil.io.local import LocalFileIO
from frazil.manifest.content_file import DataFile, DataFileContent
from frazil.manifest.deletes import DeletionVector, write_deletion_vectors
from frazil.schema import Schema
from frazil.table.scan import FileScanTask
from frazil.table.scan.read import DeleteCache, read_task
from frazil.types import (
    BinaryType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

IO = LocalFileIO()
D = decimal.Decimal
UTC = dt.timezone.utc


def _f(name: str, t: pa.DataType, fid: int) -> pa.Field:
    return pa.field(name, t, True, {b"PARQUET:field_id": str(fid).encode()})


# Written under the first schema: id int, f float, dec decimal(5, 2), name string.
OLD_FILE = pa.schema(
    [
        _f("id", pa.int32(), 1),
        _f("f", pa.float32(), 2),
        _f("dec", pa.decimal128(5, 2), 3),
        _f("name", pa.string(), 4),
    ]
)
OLD_ROWS = {
    "id": [1, 2, 3, 4, None, 6],
    "f": [0.5, float("nan"), -0.0, 0.0, None, 2.5],
    "dec": [D("1.10"), D("-3.25"), None, D("1.10"), D("0.00"), None],
    "name": ["a", "b", None, "a", "c", "é"],
}
# The table now: id long, f double, dec decimal(10, 2), name renamed to label, and two columns
# added since: extra (initial-default 7) and note (no default: null in older files).
TABLE = Schema(
    NestedField(1, "id", LongType()),
    NestedField(2, "f", DoubleType()),
    NestedField(3, "dec", DecimalType(10, 2)),
    NestedField(4, "label", StringType()),
    NestedField(5, "extra", IntegerType(), initial_default=7),
    NestedField(6, "note", StringType()),
    schema_id=3,
)


def _write(path: Path, table: pa.Table) -> str:
    pq.write_table(table, path)
    return str(path)


@pytest.fixture
def old_file(tmp_path: Path) -> DataFile:
    path = _write(tmp_path / "old.parquet", pa.table(OLD_ROWS, schema=OLD_FILE))
    return DataFile(path, "PARQUET", (), 6, Path(path).stat().st_size)


@pytest.fixture
def new_file(tmp_path: Path) -> DataFile:
    schema = pa.schema(
        [
            _f("id", pa.int64(), 1),
            _f("f", pa.float64(), 2),
            _f("dec", pa.decimal128(10, 2), 3),
            _f("label", pa.large_string(), 4),
            _f("extra", pa.int32(), 5),
            _f("note", pa.string(), 6),
        ]
    )
    rows = {
        "id": [10, 11, 12],
        "f": [0.5, 1.0, float("nan")],
        "dec": [D("1.10"), D("99999999.99"), None],
        "label": ["a", "z", None],
        "extra": [7, 8, None],
        "note": [None, "n", "m"],
    }
    path = _write(tmp_path / "new.parquet", pa.table(rows, schema=schema))
    return DataFile(path, "PARQUET", (), 3, Path(path).stat().st_size)


def _eq(
    tmp_path: Path, name: str, columns: dict[str, tuple[pa.DataType, int, list[Any]]]
) -> DataFile:
    schema = pa.schema([_f(n, t, fid) for n, (t, fid, _) in columns.items()])
    table = pa.table({n: v for n, (_, _, v) in columns.items()}, schema=schema)
    path = _write(tmp_path / f"{name}.parquet", table)
    ids = tuple(fid for _, fid, _ in columns.values())
    return DataFile(
        path,
        "PARQUET",
        (),
        table.num_rows,
        Path(path).stat().st_size,
        DataFileContent.EQUALITY_DELETES,
        equality_ids=ids,
    )


def _ids(data: DataFile, *deletes: DataFile, cache: DeleteCache | None = None) -> list[Any]:
    task = FileScanTask(data, list(deletes))
    batches = list(read_task(task, IO, TABLE, delete_cache=cache))
    return [i for b in batches for i in b.column("id").to_pylist()]


def test_promoted_keys_match_rows_read_wider(
    tmp_path: Path, old_file: DataFile, new_file: DataFile
) -> None:
    # keys written while id was an int, read against rows of both files as longs
    by_id = _eq(tmp_path, "id", {"id": (pa.int32(), 1, [2, None, 11, 99])})
    assert _ids(old_file, by_id) == [1, 3, 4, 6]
    assert _ids(new_file, by_id) == [10, 12]
    # float keys against double rows: NaN matches NaN, -0.0 only -0.0 (Java's Double.compare)
    by_f = _eq(tmp_path, "f", {"f": (pa.float32(), 2, [float("nan"), -0.0, 0.5])})
    assert _ids(old_file, by_f) == [4, None, 6]
    assert _ids(new_file, by_f) == [11]
    # decimal(5, 2) keys against decimal(10, 2) rows
    by_dec = _eq(tmp_path, "dec", {"dec": (pa.decimal128(5, 2), 3, [D("1.10"), None])})
    assert _ids(old_file, by_dec) == [2, None]
    assert _ids(new_file, by_dec) == [11]


def test_renamed_and_multi_column_keys(tmp_path: Path, old_file: DataFile) -> None:
    # written when field 4 was called "name", as a large string; (id, name) pairs, null-safe
    pairs = _eq(
        tmp_path,
        "pairs",
        {
            "id": (pa.int64(), 1, [1, 3, 4, None, 6]),
            "name": (pa.large_string(), 4, ["a", None, "b", "c", "e"]),
        },
    )
    assert _ids(old_file, pairs) == [2, 4, 6]


def test_columns_added_later_read_as_default_or_null(
    tmp_path: Path, old_file: DataFile, new_file: DataFile
) -> None:
    # old rows read extra = 7 (its initial default) and note = null
    extra = _eq(tmp_path, "extra", {"extra": (pa.int32(), 5, [7])})
    assert _ids(old_file, extra) == []
    assert _ids(new_file, extra) == [11, 12]
    note = _eq(tmp_path, "note", {"note": (pa.string(), 6, [None])})
    assert _ids(old_file, note) == []
    assert _ids(new_file, note) == [11, 12]
    # (id, note) = (3, null) and (10, null)
    both = _eq(
        tmp_path,
        "both",
        {"id": (pa.int64(), 1, [3, 10, 11]), "note": (pa.string(), 6, [None, None, None])},
    )
    assert _ids(old_file, both) == [1, 2, 4, None, 6]
    assert _ids(new_file, both) == [11, 12]


def test_delete_files_combine_with_each_other_and_with_position_deletes(
    tmp_path: Path, old_file: DataFile
) -> None:
    one = _eq(tmp_path, "one", {"id": (pa.int64(), 1, [1])})
    two = _eq(tmp_path, "two", {"id": (pa.int32(), 1, [2])})
    names = _eq(tmp_path, "names", {"name": (pa.string(), 4, ["é"])})
    data, (written,) = write_deletion_vectors(
        {old_file.file_path: DeletionVector.from_positions([2, 3])}
    )
    (tmp_path / "dv.puffin").write_bytes(data)
    dv = DataFile(
        str(tmp_path / "dv.puffin"),
        "PUFFIN",
        (),
        written.record_count,
        len(data),
        DataFileContent.POSITION_DELETES,
        referenced_data_file=written.referenced_data_file,
        content_offset=written.content_offset,
        content_size_in_bytes=written.content_size_in_bytes,
    )
    assert _ids(old_file, one, two, names, dv) == [None]


def test_key_sets_are_built_once_per_scan(tmp_path: Path, old_file: DataFile) -> None:
    eq = _eq(tmp_path, "eq", {"id": (pa.int64(), 1, [1, 2])})
    cache = DeleteCache(IO)
    assert _ids(old_file, eq, cache=cache) == [3, 4, None, 6]
    keys = cache.equality_set([eq], (1,), TABLE)
    assert len(keys) == 2
    Path(eq.file_path).unlink()  # read once: the cache answers from now on
    assert _ids(old_file, eq, cache=cache) == [3, 4, None, 6]
    assert cache.equality_set([eq], (1,), TABLE) is keys


def test_uuid_keys(tmp_path: Path) -> None:
    import uuid

    a, b = uuid.UUID(int=1), uuid.UUID(int=2)
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "u", UUIDType()))
    data = pa.table(
        {"id": [1, 2, 3], "u": pa.array([a.bytes, b.bytes, None], pa.binary(16))},
        schema=pa.schema([_f("id", pa.int64(), 1), _f("u", pa.binary(16), 2)]),
    )
    path = _write(tmp_path / "u.parquet", data)
    f = DataFile(path, "PARQUET", (), 3, Path(path).stat().st_size)
    eq = _eq(tmp_path, "eq", {"u": (pa.binary(16), 2, [b.bytes, None])})
    rows = pa.Table.from_batches(list(read_task(FileScanTask(f, [eq]), IO, schema)))
    assert rows.column("id").to_pylist() == [1]


def test_delete_columns_outside_the_schema_are_refused(tmp_path: Path, old_file: DataFile) -> None:
    eq = _eq(tmp_path, "eq", {"id": (pa.int64(), 99, [1])})
    with pytest.raises(UnsupportedError, match="not a top-level column"):
        _ids(old_file, eq)


@pytest.mark.parametrize(
    ("iceberg_type", "arrow_type", "rows"),
    [
        (DateType(), pa.date32(), [dt.date(2024, 1, 1), dt.date(1969, 12, 31), None]),
        (TimeType(), pa.time64("us"), [dt.time(1, 2, 3), dt.time(0, 0), None]),
        (
            TimestampType(),
            pa.timestamp("us"),
            [dt.datetime(2024, 1, 1, 1), dt.datetime(1969, 12, 31, 23, 59), None],
        ),
        (
            TimestamptzType(),
            pa.timestamp("us", "UTC"),
            [
                dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc),
                dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc),
                None,
            ],
        ),
        (DecimalType(9, 2), pa.decimal128(9, 2), [D("1.10"), D("-2.00"), None]),
        (FixedType(3), pa.binary(3), [b"abc", b"\x00\xff\x01", None]),
        (BinaryType(), pa.binary(), [b"abc", b"", None]),
        (UUIDType(), pa.binary(16), [uuid.UUID(int=1).bytes, uuid.UUID(int=2**127).bytes, None]),
    ],
)
def test_equality_deletes_on_each_key_type(
    tmp_path: Path, iceberg_type: Any, arrow_type: pa.DataType, rows: list[Any]
) -> None:
    table = Schema(NestedField(1, "id", LongType()), NestedField(2, "k", iceberg_type))
    file_schema = pa.schema([_f("id", pa.int64(), 1), _f("k", arrow_type, 2)])
    path = _write(
        tmp_path / "data.parquet",
        pa.table({"id": [1, 2, 3], "k": pa.array(rows, arrow_type)}, schema=file_schema),
    )
    data = DataFile(path, "PARQUET", (), 3, Path(path).stat().st_size)
    # deletes the first and the null key, written by pyarrow as a writer would
    deletes = _eq(tmp_path, "k", {"k": (arrow_type, 2, [rows[0], None])})
    task = FileScanTask(data, [deletes])
    got = [i for b in read_task(task, IO, table) for i in b.column("id").to_pylist()]
    assert got == [2]


def test_a_date_key_stored_as_int64_is_refused_naming_the_file(tmp_path: Path) -> None:
    # pyarrow's cast used to fail here with "Unsupported cast from int64 to date32", unnamed
    table = Schema(NestedField(1, "id", LongType()), NestedField(2, "k", DateType()))
    file_schema = pa.schema([_f("id", pa.int64(), 1), _f("k", pa.date32(), 2)])
    path = _write(
        tmp_path / "data.parquet",
        pa.table({"id": [1], "k": pa.array([dt.date(2024, 1, 1)])}, schema=file_schema),
    )
    data = DataFile(path, "PARQUET", (), 1, Path(path).stat().st_size)
    deletes = _eq(tmp_path, "days", {"k": (pa.int64(), 2, [19723])})
    with pytest.raises(ValidationError, match=r"days\.parquet, column 'k'.*int64.*date"):
        list(read_task(FileScanTask(data, [deletes]), IO, table))
