"""Data and delete files that cannot be read as the table says: a clear FrazilError naming the
file (and the column, for a type that does not match), the reader's own error as its cause.

The files are written here by pyarrow, outside frazil, with the field ids a writer would give.
"""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from frazil.exceptions import FileReadError, ValidationError
from frazil.io.local import LocalFileIO
from frazil.manifest.content_file import DataFile, DataFileContent
from frazil.schema import Schema
from frazil.table.scan import FileScanTask
from frazil.table.scan.read import read_task
from frazil.types import (
    BinaryType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    UnknownType,
)

IO = LocalFileIO()
D = decimal.Decimal
TABLE = Schema(NestedField(1, "id", LongType()), NestedField(2, "s", StringType()))


def _f(name: str, t: pa.DataType, fid: int, nullable: bool = True) -> pa.Field:
    return pa.field(name, t, nullable, {b"PARQUET:field_id": str(fid).encode()})


def _data_file(
    path: Path, table: pa.Table, content: DataFileContent | None = None, **kw: Any
) -> DataFile:
    pq.write_table(table, path)
    args: list[Any] = [str(path), "PARQUET", (), table.num_rows, path.stat().st_size]
    if content is not None:
        args.append(content)
    return DataFile(*args, **kw)


def _read(task: FileScanTask, schema: Schema = TABLE) -> pa.Table:
    return pa.Table.from_batches(list(read_task(task, IO, schema)))


@pytest.fixture
def good(tmp_path: Path) -> DataFile:
    schema = pa.schema([_f("id", pa.int64(), 1), _f("s", pa.string(), 2)])
    return _data_file(tmp_path / "good.parquet", pa.table({"id": [1, 2], "s": ["a", "b"]}, schema))


def test_a_corrupt_data_file_is_named(tmp_path: Path, good: DataFile) -> None:
    data = Path(good.file_path).read_bytes()
    Path(good.file_path).write_bytes(data[: len(data) // 2] + b"\0" * 8 + data[-8:])
    with pytest.raises(FileReadError, match=r"data file .*good\.parquet") as info:
        _read(FileScanTask(good, []))
    assert info.value.__cause__ is not None


def test_a_file_that_is_not_parquet_is_named(tmp_path: Path, good: DataFile) -> None:
    Path(good.file_path).write_bytes(b"not a parquet file at all")
    with pytest.raises(FileReadError, match=r"good\.parquet") as info:
        _read(FileScanTask(good, []))
    assert info.value.__cause__ is not None


def test_a_missing_data_file_is_named(tmp_path: Path, good: DataFile) -> None:
    Path(good.file_path).unlink()
    with pytest.raises(FileReadError, match=r"good\.parquet") as info:
        _read(FileScanTask(good, []))
    assert isinstance(info.value.__cause__, OSError)


def test_a_corrupt_delete_file_is_named(tmp_path: Path, good: DataFile) -> None:
    eq = _data_file(
        tmp_path / "eq.parquet",
        pa.table({"id": [1]}, pa.schema([_f("id", pa.int64(), 1)])),
        DataFileContent.EQUALITY_DELETES,
        equality_ids=(1,),
    )
    pos_schema = pa.schema(
        [_f("file_path", pa.string(), 2147483546, False), _f("pos", pa.int64(), 2147483545, False)]
    )
    pos = _data_file(
        tmp_path / "pos.parquet",
        pa.table({"file_path": [good.file_path], "pos": [0]}, pos_schema),
        DataFileContent.POSITION_DELETES,
    )
    assert _read(FileScanTask(good, [eq])).column("id").to_pylist() == [2]
    assert _read(FileScanTask(good, [pos])).column("id").to_pylist() == [2]
    for d in (eq, pos):
        Path(d.file_path).write_bytes(b"PAR1 garbage")
        name = Path(d.file_path).name
        with pytest.raises(FileReadError, match=rf"delete file .*{name}") as info:
            _read(FileScanTask(good, [d]))
        assert info.value.__cause__ is not None


# ---- column types that do not match the table's ------------------------------------------------


def _one_column(
    tmp_path: Path, t: pa.DataType, values: list[Any], nullable: bool = True
) -> DataFile:
    schema = pa.schema([_f("c", t, 1, nullable)])
    return _data_file(tmp_path / "c.parquet", pa.table({"c": pa.array(values, t)}, schema))


@pytest.mark.parametrize(
    ("file_type", "values", "table_type"),
    [
        (pa.string(), ["1", "2"], LongType()),  # digits would cast
        (pa.float64(), [1.0, 2.0], LongType()),  # whole doubles would cast
        (pa.int64(), [1, 2], StringType()),
        (pa.int64(), [1, 2], IntegerType()),  # narrowing
        (pa.float64(), [1.5], FloatType()),
        (pa.int64(), [1, 2], DoubleType()),
        (pa.decimal128(5, 2), [D("1.10")], DecimalType(10, 3)),  # scale differs
        (pa.decimal128(10, 2), [D("1.10")], DecimalType(9, 2)),  # precision narrows
        (pa.int32(), [1], DateType()),
        (pa.timestamp("us"), [0], DateType()),
        (pa.string(), ["a"], BinaryType()),
        (pa.bool_(), [True], IntegerType()),
    ],
)
def test_a_column_of_another_type_is_refused(
    tmp_path: Path, file_type: pa.DataType, values: list[Any], table_type: Any
) -> None:
    f = _one_column(tmp_path, file_type, values)
    with pytest.raises(ValidationError, match=r"c\.parquet.*column 'c'"):
        _read(FileScanTask(f, []), Schema(NestedField(1, "c", table_type)))


@pytest.mark.parametrize(
    ("file_type", "values", "table_type", "expected"),
    [
        (pa.int32(), [1, None], LongType(), [1, None]),
        (pa.float32(), [0.5], DoubleType(), [0.5]),
        (pa.decimal128(5, 2), [D("1.10")], DecimalType(10, 2), [D("1.10")]),
        (pa.date32(), [1], TimestampType(), [dt.datetime(1970, 1, 2)]),
        (pa.date32(), [1], TimestampNanoType(), [dt.datetime(1970, 1, 2)]),
        # Parquet strings written without the UTF8 annotation (Hive, Impala) read as strings.
        (pa.binary(), [b"a"], StringType(), ["a"]),
        (pa.int64(), [5], UnknownType(), [None]),
    ],
)
def test_the_spec_promotions_are_read(
    tmp_path: Path, file_type: pa.DataType, values: list[Any], table_type: Any, expected: list[Any]
) -> None:
    f = _one_column(tmp_path, file_type, values)
    got = _read(FileScanTask(f, []), Schema(NestedField(1, "c", table_type)))
    assert got.column("c").to_pylist() == expected


def test_a_required_column_holding_nulls_is_refused(tmp_path: Path) -> None:
    f = _one_column(tmp_path, pa.int64(), [1, None])
    with pytest.raises(ValidationError, match=r"c\.parquet.*column 'c'.*null"):
        _read(FileScanTask(f, []), Schema(NestedField(1, "c", LongType(), required=True)))


def test_a_required_struct_child_may_be_null_where_its_struct_is(tmp_path: Path) -> None:
    child = _f("x", pa.int64(), 2)
    t = pa.struct([child])
    values = [{"x": 1}, None]
    f = _one_column(tmp_path, t, values)
    table = Schema(NestedField(1, "c", StructType(NestedField(2, "x", LongType(), required=True))))
    assert _read(FileScanTask(f, []), table).column("c").to_pylist() == values
    bad = _one_column(tmp_path, t, [{"x": None}, None])
    with pytest.raises(ValidationError, match=r"column 'x'.*null"):
        _read(FileScanTask(bad, []), table)
