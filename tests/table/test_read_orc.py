"""ORC data and delete files, written here by pyarrow's ORC writer (outside frazil) with the
``iceberg.id`` type attributes Java's ORC writer gives, or without ids; the expected rows are
the values written."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as orc
import pytest

from frazil.exceptions import FileReadError, UnsupportedError, ValidationError
from frazil.io.local import LocalFileIO
from frazil.manifest.content_file import DataFile, DataFileContent
from frazil.metadata.name_mapping import MappedField, NameMapping
from frazil.schema import Schema
from frazil.table.scan import FileScanTask
from frazil.table.scan.read import read_task
from frazil.types import (
    FixedType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    TimeType,
)

IO = LocalFileIO()
SCHEMA = Schema(
    NestedField(1, "id", LongType()),
    NestedField(2, "name", StringType()),  # renamed: the files say "data"
    NestedField(3, "tags", ListType(5, IntegerType())),
    NestedField(4, "added", IntegerType()),  # added after the files were written
)


def _f(name: str, t: pa.DataType, fid: int | None) -> pa.Field:
    return pa.field(name, t, metadata=None if fid is None else {"iceberg.id": str(fid)})


def _write(
    path: Path, table: pa.Table, content: DataFileContent | None = None, **kw: Any
) -> DataFile:
    orc.write_table(table, path, **kw)
    args: list[Any] = [str(path), "ORC", (), table.num_rows, path.stat().st_size]
    if content is not None:
        args.append(content)
    return DataFile(*args)


def _data(path: Path, ids: bool = True) -> DataFile:
    schema = pa.schema(
        [
            _f("id", pa.int64(), 1 if ids else None),
            _f("data", pa.string(), 2 if ids else None),
            _f("tags", pa.list_(_f("item", pa.int32(), 5 if ids else None)), 3 if ids else None),
        ]
    )
    rows = {
        "id": [0, 1, 2, 3, 4],
        "data": ["a", "b", None, "d", "e"],
        "tags": [[1], [], None, [2, 3], [4]],
    }
    return _write(path, pa.table(rows, schema))


def _read(task: FileScanTask, schema: Schema = SCHEMA, **kw: Any) -> pa.Table:
    batches = list(read_task(task, IO, schema, **kw))
    return pa.Table.from_batches(batches) if batches else pa.table({})


def test_columns_by_iceberg_id_with_projection_and_added_column(tmp_path: Path) -> None:
    f = _data(tmp_path / "d.orc")
    t = _read(FileScanTask(f), metadata_columns=("_pos",))
    assert t.column_names == ["id", "name", "tags", "added", "_pos"]
    assert t.column("name").to_pylist() == ["a", "b", None, "d", "e"]
    assert t.column("tags").to_pylist() == [[1], [], None, [2, 3], [4]]
    assert t.column("added").to_pylist() == [None] * 5
    assert t.column("_pos").to_pylist() == [0, 1, 2, 3, 4]
    projected = Schema(SCHEMA.fields[1], SCHEMA.fields[3])
    t = _read(FileScanTask(f), projected_schema=projected)
    assert t.column_names == ["name", "added"]
    assert t.column("name").to_pylist() == ["a", "b", None, "d", "e"]


def test_files_without_ids_by_name_mapping_or_table_names(tmp_path: Path) -> None:
    f = _data(tmp_path / "noids.orc", ids=False)
    mapping = NameMapping(
        [
            MappedField(("id",), 1),
            MappedField(("data", "name"), 2),
            MappedField(("tags",), 3, (MappedField(("element",), 5),)),
        ]
    )
    t = _read(FileScanTask(f), name_mapping=mapping)
    assert t.column("name").to_pylist() == ["a", "b", None, "d", "e"]
    assert t.column("tags").to_pylist() == [[1], [], None, [2, 3], [4]]
    # No mapping: the table's current names, as Java's ORC reader does ("data" is not "name").
    t = _read(FileScanTask(f))
    assert t.column("id").to_pylist() == [0, 1, 2, 3, 4]
    assert t.column("name").to_pylist() == [None] * 5
    assert t.column("tags").to_pylist() == [[1], [], None, [2, 3], [4]]


def test_position_and_equality_deletes(tmp_path: Path) -> None:
    f = _data(tmp_path / "d.orc")
    pos_schema = pa.schema(
        [_f("file_path", pa.string(), 2147483546), _f("pos", pa.int64(), 2147483545)]
    )
    pos = _write(
        tmp_path / "pos.orc",
        pa.table({"file_path": [f.file_path, "other.orc"], "pos": [1, 0]}, pos_schema),
        DataFileContent.POSITION_DELETES,
    )
    eq_table = pa.table({"data": ["d", None]}, pa.schema([_f("data", pa.string(), 2)]))
    eq = _write(tmp_path / "eq.orc", eq_table, DataFileContent.EQUALITY_DELETES)
    eq = DataFile(**{**eq.__dict__, "equality_ids": (2,), "extra": {}})
    t = _read(FileScanTask(f, [pos, eq]), metadata_columns=("_pos",))
    assert t.column("id").to_pylist() == [0, 4]  # 1 by position, 2 (null) and 3 ('d') by key
    assert t.column("_pos").to_pylist() == [0, 4]


def test_positions_count_across_stripes(tmp_path: Path) -> None:
    schema = pa.schema([_f("id", pa.int64(), 1)])
    t = pa.table({"id": pa.array(range(20_000), pa.int64())}, schema)
    f = _write(tmp_path / "big.orc", t, stripe_size=1024, batch_size=1024)
    assert orc.ORCFile(f.file_path).nstripes > 1
    got = _read(
        FileScanTask(f), Schema(SCHEMA.fields[0]), metadata_columns=("_pos",), batch_size=700
    )
    assert got.column("id").to_pylist() == list(range(20_000))
    assert got.column("_pos").to_pylist() == list(range(20_000))


def test_unreadable_orc_is_named_and_other_formats_refused(tmp_path: Path) -> None:
    f = _data(tmp_path / "d.orc")
    Path(f.file_path).write_bytes(b"not an orc file")
    with pytest.raises(FileReadError, match=r"data file .*d\.orc") as info:
        _read(FileScanTask(f))
    assert info.value.__cause__ is not None
    # (Avro data files are read now: tests/table/test_read_avro.py)
    other = DataFile(str(tmp_path / "x.puffin"), "PUFFIN", (), 1, 1)
    with pytest.raises(UnsupportedError, match=r"x\.puffin.*PUFFIN files are not supported"):
        _read(FileScanTask(other))


def test_a_type_the_schema_does_not_promote_is_refused(tmp_path: Path) -> None:
    schema = pa.schema([_f("id", pa.string(), 1)])
    f = _write(tmp_path / "s.orc", pa.table({"id": ["x"]}, schema))
    with pytest.raises(ValidationError, match=r"s\.orc, column 'id'"):
        _read(FileScanTask(f), Schema(SCHEMA.fields[0]))


def test_only_columns_the_file_lacks_and_iceberg_type_attributes(tmp_path: Path) -> None:
    f = _data(tmp_path / "d.orc")
    t = _read(
        FileScanTask(f), projected_schema=Schema(SCHEMA.fields[3]), metadata_columns=("_pos",)
    )
    assert t.column("added").to_pylist() == [None] * 5
    assert t.column("_pos").to_pylist() == [0, 1, 2, 3, 4]
    # Java's ORC writer stores time as a long of microseconds and fixed as binary, with
    # attributes saying so.
    schema = pa.schema(
        [
            pa.field("t", pa.int64(), metadata={"iceberg.id": "1", "iceberg.long-type": "TIME"}),
            pa.field(
                "x",
                pa.binary(),
                metadata={"iceberg.id": "2", "iceberg.binary-type": "FIXED", "iceberg.length": "2"},
            ),
        ]
    )
    g = _write(tmp_path / "t.orc", pa.table({"t": [1_000_000], "x": [b"ab"]}, schema))
    target = Schema(NestedField(1, "t", TimeType()), NestedField(2, "x", FixedType(2)))
    t = _read(FileScanTask(g), target)
    assert t.to_pylist() == [{"t": dt.time(0, 0, 1), "x": b"ab"}]
