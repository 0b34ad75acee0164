"""Reading file scan tasks into Arrow (``frazil.table.scan.read``), the residual filter's semantics
(``frazil.table.scan.filter``) and task JSON (``frazil.table.scan``), on files written here
with pyarrow. Expected rows are written out by hand from the spec's rules ("Column Projection",
"Row Lineage", "Scan Planning", "Delete Formats") and SQL's three-valued logic."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from frazil.exceptions import DecodeError, UnsupportedError, ValidationError
from frazil.expressions import AlwaysTrue, bind, parse
from frazil.io.local import LocalFileIO
from frazil.manifest.content_file import DataFile, DataFileContent
from frazil.manifest.deletes import DeletionVector
from frazil.metadata.name_mapping import create_mapping_from_schema
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.table.scan import FileScanTask
from frazil.table.scan.filter import RowFilter
from frazil.table.scan.read import DeleteCache, read_task
from frazil.transforms import parse as transform
from frazil.types import (
    BooleanType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
)

IO = LocalFileIO()


def _f(name: str, t: pa.DataType, fid: int, nullable: bool = True) -> pa.Field:
    return pa.field(name, t, nullable, {b"PARQUET:field_id": str(fid).encode()})


# The file as written under the first schema: id int, data string, f float, dec(5,2), dt date,
# st struct<a int>, tags list<string>, props map<string, int>.
FILE_SCHEMA = pa.schema(
    [
        _f("id", pa.int32(), 1, False),
        _f("data", pa.string(), 2),
        _f("f", pa.float32(), 3),
        _f("dec", pa.decimal128(5, 2), 4),
        _f("dt", pa.date32(), 5),
        _f("st", pa.struct([_f("a", pa.int32(), 7)]), 6),
        _f("tags", pa.list_(_f("element", pa.string(), 9)), 8),
        _f(
            "props",
            pa.map_(_f("key", pa.string(), 11, False), _f("value", pa.int32(), 12)),
            10,
        ),
    ]
)
ROWS = {
    "id": [0, 1, 2, 3, 4, 5],
    "data": ["a", None, "c", "ab", "b", "a"],
    "f": [1.5, float("nan"), None, -2.0, 3.0, 0.0],
    "dec": [decimal.Decimal("1.10"), None, decimal.Decimal("-3.25"), None, None, None],
    "dt": [dt.date(2024, 1, 1 + i) for i in range(6)],
    "st": [{"a": 1}, None, {"a": None}, {"a": 4}, {"a": 5}, {"a": 6}],
    "tags": [["x"], None, [], ["y", "z"], None, ["w"]],
    "props": [[("k", 1)], None, [], [("q", 2)], None, None],
}

# The table schema now: renamed data -> payload, id int -> long, f float -> double,
# dec(5,2) -> dec(9,2), dt date -> timestamp (v3), st gained b (default 'dflt'), a new column
# `added` (initial-default 42), tags/props unchanged, and identity-partitioned `cat` that the
# file lacks.
TABLE_SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "payload", StringType()),
    NestedField(3, "f", DoubleType()),
    NestedField(4, "dec", DecimalType(9, 2)),
    NestedField(5, "dt", TimestampType()),
    NestedField(
        6,
        "st",
        StructType(
            NestedField(7, "a", IntegerType()),
            NestedField(13, "b", StringType(), initial_default="dflt"),
        ),
    ),
    NestedField(8, "tags", ListType(9, StringType(), element_required=False)),
    NestedField(10, "props", MapType(11, StringType(), 12, IntegerType(), value_required=False)),
    NestedField(14, "added", IntegerType(), initial_default=42),
    NestedField(15, "cat", StringType()),
    schema_id=1,
)
SPEC = PartitionSpec(PartitionField(15, 1000, transform("identity"), "cat"), spec_id=0)


def _write(path: Path, table: pa.Table, **kwargs: Any) -> str:
    pq.write_table(table, path, **kwargs)
    return str(path)


@pytest.fixture
def data_file(tmp_path: Path) -> DataFile:
    path = _write(tmp_path / "data.parquet", pa.table(ROWS, schema=FILE_SCHEMA))
    f = DataFile(path, "PARQUET", ("x",), 6, Path(path).stat().st_size, spec_id=0)
    f.extra["sequence_number"] = 7
    return f


def _read(task: FileScanTask, schema: Schema = TABLE_SCHEMA, **kwargs: Any) -> pa.Table:
    batches = list(read_task(task, IO, schema, **kwargs))
    if not batches:
        return pa.table({})
    return pa.Table.from_batches(batches)


def test_projection_by_id_with_evolution(data_file: DataFile) -> None:
    t = _read(FileScanTask(data_file, spec=SPEC))
    assert t.schema.names == [f.name for f in TABLE_SCHEMA.fields]
    assert t.schema.field("id").type == pa.int64()
    assert t.schema.field("dec").type == pa.decimal128(9, 2)
    assert t.schema.field("dt").type == pa.timestamp("us")
    rows = t.to_pylist()
    assert [r["payload"] for r in rows] == ROWS["data"]
    assert rows[0]["dt"] == dt.datetime(2024, 1, 1)
    assert rows[0]["st"] == {"a": 1, "b": "dflt"} and rows[1]["st"] is None
    assert rows[2]["st"] == {"a": None, "b": "dflt"}
    assert {r["added"] for r in rows} == {42}
    assert {r["cat"] for r in rows} == {"x"}  # identity partition value, not in the file
    assert rows[3]["tags"] == ["y", "z"] and rows[1]["tags"] is None
    assert rows[3]["props"] == [("q", 2)]
    assert math.isnan(rows[1]["f"]) and rows[0]["f"] == 1.5


def test_name_mapping_for_files_without_ids(tmp_path: Path) -> None:
    plain = pa.table({"id": pa.array([1, 2], pa.int32()), "data": ["p", "q"]})
    path = _write(tmp_path / "noids.parquet", plain)
    f = DataFile(path, "PARQUET", ("x",), 2, 1, spec_id=0)
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "payload", StringType()))
    # The mapping names "data" id 3: the table's "payload" (id 2) is not in the file.
    mapping = create_mapping_from_schema(
        Schema(NestedField(1, "id", LongType()), NestedField(3, "data", StringType()))
    )
    t = _read(FileScanTask(f), schema, name_mapping=mapping)
    assert t.to_pylist() == [{"id": 1, "payload": None}, {"id": 2, "payload": None}]
    mapping = create_mapping_from_schema(
        Schema(NestedField(1, "id", LongType()), NestedField(2, "data", StringType()))
    )
    t = _read(FileScanTask(f), schema, name_mapping=mapping)
    assert t.to_pylist() == [{"id": 1, "payload": "p"}, {"id": 2, "payload": "q"}]


def test_files_without_ids_nor_mapping_read_by_position(tmp_path: Path) -> None:
    # Java's ParquetSchemaUtil.addFallbackIds: top-level columns get ids 1..n in file order
    # (names do not matter); nested fields get none, so Java reads a struct (and a list of
    # structs, a map keyed by structs) as null; lists and maps of primitives read.
    plain = pa.table(
        {
            "a": pa.array([1, 2], pa.int32()),
            "b": ["p", "q"],
            "st": [{"x": 1}, None],
            "tags": [["t"], None],
            "structs": [[{"x": 1}], []],
            "m": pa.array([[("k", 1)], None], pa.map_(pa.string(), pa.int32())),
        }
    )
    path = _write(tmp_path / "noids.parquet", plain)
    f = DataFile(path, "PARQUET", ("x",), 2, 1, spec_id=0)
    schema = Schema(
        NestedField(2, "renamed", StringType()),
        NestedField(1, "id", LongType()),
        NestedField(3, "st", StructType(NestedField(8, "x", IntegerType()))),
        NestedField(4, "tags", ListType(9, StringType())),
        NestedField(5, "structs", ListType(10, StructType(NestedField(11, "x", IntegerType())))),
        NestedField(6, "m", MapType(12, StringType(), 13, IntegerType())),
        NestedField(7, "added", StringType()),
    )
    t = _read(FileScanTask(f), schema)
    assert t.to_pylist() == [
        {
            "renamed": "p",
            "id": 1,
            "st": None,
            "tags": ["t"],
            "structs": None,
            "m": [("k", 1)],
            "added": None,
        },
        {
            "renamed": "q",
            "id": 2,
            "st": None,
            "tags": None,
            "structs": None,
            "m": None,
            "added": None,
        },
    ]
    # One id anywhere in the file (here a nested one) turns the fallback off, as in Java.
    nested_id = pa.schema(
        [
            pa.field("a", pa.int32()),
            pa.field("st", pa.struct([_f("x", pa.int32(), 5)])),
        ]
    )
    path = _write(
        tmp_path / "nested-id.parquet",
        pa.table({"a": pa.array([1], pa.int32()), "st": [{"x": 9}]}, schema=nested_id),
    )
    f = DataFile(path, "PARQUET", ("x",), 1, 1, spec_id=0)
    t = _read(FileScanTask(f), Schema(NestedField(1, "a", IntegerType()), *schema.fields[2:3]))
    assert t.to_pylist() == [{"a": None, "st": None}]


def test_name_mapping_reaches_into_structs_lists_and_maps(tmp_path: Path) -> None:
    # A file without field ids (as Hive and DuckDB's column_mapping fixture write them): the
    # mapping's nested ids must reach the struct's children, also inside a list and a map.
    plain = pa.table(
        {
            "profile": [{"email": "a@x", "ok": True}, None],
            "hist": [[{"email": "h", "ok": False}], []],
            "attrs": pa.array(
                [[("k", {"email": "m", "ok": True})], None],
                pa.map_(pa.string(), pa.struct([("email", pa.string()), ("ok", pa.bool_())])),
            ),
        }
    )
    path = _write(tmp_path / "nested-noids.parquet", plain)
    f = DataFile(path, "PARQUET", ("x",), 2, 1, spec_id=0)

    def person(a: int, b: int) -> StructType:
        return StructType(
            NestedField(a, "email", StringType()), NestedField(b, "ok", BooleanType())
        )

    schema = Schema(
        NestedField(1, "profile", person(4, 5)),
        NestedField(2, "hist", ListType(6, person(7, 8))),
        NestedField(3, "attrs", MapType(9, StringType(), 10, person(11, 12))),
    )
    t = _read(FileScanTask(f), schema, name_mapping=create_mapping_from_schema(schema))
    assert t.to_pylist() == [
        {
            "profile": {"email": "a@x", "ok": True},
            "hist": [{"email": "h", "ok": False}],
            "attrs": [("k", {"email": "m", "ok": True})],
        },
        {"profile": None, "hist": [], "attrs": None},
    ]


def test_metadata_columns_and_lineage_inheritance(tmp_path: Path) -> None:
    rows = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "_row_id": pa.array([None, 500, None], pa.int64()),
            "_last_updated_sequence_number": pa.array([None, 3, None], pa.int64()),
        },
        schema=pa.schema(
            [
                _f("id", pa.int64(), 1),
                _f("_row_id", pa.int64(), 2147483540),
                _f("_last_updated_sequence_number", pa.int64(), 2147483539),
            ]
        ),
    )
    path = _write(tmp_path / "lineage.parquet", rows)
    f = DataFile(path, "PARQUET", (), 3, 1, spec_id=0, first_row_id=100)
    f.extra["sequence_number"] = 9
    schema = Schema(NestedField(1, "id", LongType()))
    cols = ("_file", "_pos", "_spec_id", "_row_id", "_last_updated_sequence_number")
    t = _read(FileScanTask(f, spec=PartitionSpec()), schema, metadata_columns=cols)
    assert t.column("_pos").to_pylist() == [0, 1, 2]
    assert t.column("_file").to_pylist() == [path] * 3
    assert t.column("_spec_id").to_pylist() == [0] * 3
    # null in the file: first_row_id + _pos and the file's data sequence number
    assert t.column("_row_id").to_pylist() == [100, 500, 102]
    assert t.column("_last_updated_sequence_number").to_pylist() == [9, 3, 9]


def test_position_deletes_and_dv_supersedes(tmp_path: Path, data_file: DataFile) -> None:
    pos_schema = pa.schema(
        [_f("file_path", pa.string(), 2147483546, False), _f("pos", pa.int64(), 2147483545, False)]
    )
    other = str(tmp_path / "other.parquet")
    deletes = pa.table(
        {"file_path": [data_file.file_path, other, data_file.file_path], "pos": [4, 0, 1]},
        schema=pos_schema,
    )
    pos_path = _write(tmp_path / "pos.parquet", deletes)
    pos = DataFile(pos_path, "PARQUET", ("x",), 3, 1, DataFileContent.POSITION_DELETES)
    t = _read(FileScanTask(data_file, [pos], spec=SPEC), metadata_columns=("_pos",))
    assert t.column("_pos").to_pylist() == [0, 2, 3, 5]

    blob = DeletionVector.from_positions([0, 5]).to_puffin_blob()
    puffin = tmp_path / "dv.puffin"
    puffin.write_bytes(b"PFA1" + blob)
    dv = DataFile(
        str(puffin),
        "PUFFIN",
        ("x",),
        2,
        len(blob) + 4,
        DataFileContent.POSITION_DELETES,
        referenced_data_file=data_file.file_path,
        content_offset=4,
        content_size_in_bytes=len(blob),
    )
    t = _read(FileScanTask(data_file, [pos, dv], spec=SPEC), metadata_columns=("_pos",))
    assert t.column("_pos").to_pylist() == [1, 2, 3, 4]  # the DV alone applies

    corrupt = bytearray(puffin.read_bytes())
    corrupt[-6] ^= 0x01
    bad = tmp_path / "bad.puffin"
    bad.write_bytes(bytes(corrupt))
    bad_dv = DataFile(**{**dv.__dict__, "file_path": str(bad), "extra": {}})
    with pytest.raises(DecodeError, match=r"bad\.puffin"):
        _read(FileScanTask(data_file, [bad_dv], spec=SPEC))
    stray = DataFile(**{**dv.__dict__, "referenced_data_file": other, "extra": {}})
    with pytest.raises(ValidationError, match=r"other\.parquet"):
        _read(FileScanTask(data_file, [stray], spec=SPEC))
    beyond = DeletionVector.from_positions([6]).to_puffin_blob()
    puffin.write_bytes(b"PFA1" + beyond)
    past_end = DataFile(**{**dv.__dict__, "content_size_in_bytes": len(beyond), "extra": {}})
    with pytest.raises(ValidationError, match="beyond"):
        _read(FileScanTask(data_file, [past_end], spec=SPEC))


def test_equality_deletes_null_safe_on_renamed_columns(tmp_path: Path, data_file: DataFile) -> None:
    # written when the column was still called "data": matched by field id 2
    one = pa.table(
        {"data": pa.array(["a", None], pa.string())},
        schema=pa.schema([_f("data", pa.string(), 2)]),
    )
    eq1 = DataFile(
        _write(tmp_path / "eq1.parquet", one),
        "PARQUET",
        (),
        2,
        1,
        DataFileContent.EQUALITY_DELETES,
        equality_ids=(2,),
    )
    t = _read(FileScanTask(data_file, [eq1], spec=SPEC))
    assert t.column("id").to_pylist() == [2, 3, 4]  # 'a' twice and the null row deleted

    two = pa.table(
        {"id": pa.array([3, 1, 0], pa.int32()), "data": pa.array(["ab", None, "zz"])},
        schema=pa.schema([_f("id", pa.int32(), 1), _f("data", pa.string(), 2)]),
    )
    eq2 = DataFile(
        _write(tmp_path / "eq2.parquet", two),
        "PARQUET",
        (),
        3,
        1,
        DataFileContent.EQUALITY_DELETES,
        equality_ids=(1, 2),
    )
    t = _read(FileScanTask(data_file, [eq2], spec=SPEC))
    assert t.column("id").to_pylist() == [0, 2, 4, 5]  # (3,'ab') and (1,null) deleted


def test_residual_after_deletes_and_split_and_streaming(tmp_path: Path) -> None:
    n = 1000
    table = pa.table(
        {"id": pa.array(range(n), pa.int64())}, schema=pa.schema([_f("id", pa.int64(), 1)])
    )
    path = _write(tmp_path / "big.parquet", table, row_group_size=300)
    f = DataFile(path, "PARQUET", (), n, Path(path).stat().st_size)
    schema = Schema(NestedField(1, "id", LongType()))
    residual = bind(schema, parse("id >= 250 AND id < 700"))
    batches = list(
        read_task(
            FileScanTask(f, residual=residual),
            IO,
            schema,
            metadata_columns=("_pos",),
            batch_size=64,
        )
    )
    assert max(b.num_rows for b in batches) <= 64
    got = pa.Table.from_batches(batches)
    assert got.column("id").to_pylist() == list(range(250, 700))
    assert got.column("_pos").to_pylist() == list(range(250, 700))
    # a split covering only the second row group keeps file positions
    md = pq.ParquetFile(path).metadata.row_group(1).column(0)
    start = md.dictionary_page_offset or md.data_page_offset
    split = FileScanTask(f, start=start, length=1)
    got = _read(split, schema, metadata_columns=("_pos",))
    assert got.column("_pos").to_pylist() == list(range(300, 600))


def test_other_formats_are_refused(tmp_path: Path) -> None:
    # ORC and Avro are read now (tests/table/test_read_orc.py, test_read_avro.py).
    schema = Schema(NestedField(1, "id", LongType()))
    for fmt in ("PUFFIN",):
        f = DataFile(str(tmp_path / f"x.{fmt.lower()}"), fmt, (), 1, 1)
        with pytest.raises(UnsupportedError, match=rf"x\.{fmt.lower()}.*not supported yet"):
            _read(FileScanTask(f), schema)


# --------------------------------------------------------------------------------------------
# residual filter semantics (SQL three-valued logic, NaN as Java's row evaluator and Spark)

FILTER_SCHEMA = Schema(
    NestedField(1, "x", DoubleType()),
    NestedField(2, "s", StringType()),
    NestedField(3, "i", IntegerType()),
    NestedField(4, "r", FloatType()),
)
FILTER_ROWS = pa.record_batch(
    {
        "x": pa.array([1.0, float("nan"), None, 3.0], pa.float64()),
        "s": ["ab", None, "b", "a"],
        "i": pa.array([1, 2, None, 4], pa.int32()),
        "r": pa.array([0.5, None, 2.5, float("nan")], pa.float32()),
    }
)


@pytest.mark.parametrize(
    ("expr", "kept"),
    [
        # the expressions spec's 2-valued semantics: a comparison with null or NaN is false,
        # its negation (!=, NOT IN, NOT LIKE, NOT) true
        ("x > 2", [3]),  # NaN > 2 is false (Java's Evaluator and Spark say true)
        ("x >= 1", [0, 3]),
        ("x < 2", [0]),
        ("x = 1", [0]),
        ("x != 1", [1, 2, 3]),  # NaN != 1 and null != 1 are true
        ("NOT x < 2", [1, 2, 3]),  # NOT is true exactly where x < 2 is false
        ("x IS NULL", [2]),
        ("x IS NOT NULL", [0, 1, 3]),
        ("x IS NAN", [1]),
        ("x IS NOT NAN", [0, 2, 3]),
        ("s IN ('a', 'b')", [2, 3]),
        ("s NOT IN ('a', 'b')", [0, 1]),
        ("s LIKE 'a%'", [0, 3]),
        ("s NOT LIKE 'a%'", [1, 2]),
        ("i > 1 OR s = 'ab'", [0, 1, 3]),
        ("NOT (i > 1 OR s = 'ab')", [2]),
        ("NOT (i > 1 AND s = 'b')", [0, 1, 2, 3]),
        ("r > 1 AND i < 10", []),
    ],
)
def test_filter_semantics(expr: str, kept: list[int]) -> None:
    bound = bind(FILTER_SCHEMA, parse(expr))
    batch = FILTER_ROWS.append_column("row", pa.array(range(4)))
    assert RowFilter(bound, FILTER_SCHEMA).filter(batch).column("row").to_pylist() == kept


def test_filter_needs_bound_expression() -> None:
    with pytest.raises(ValidationError):
        RowFilter(parse("x > 1"), FILTER_SCHEMA)
    assert RowFilter(AlwaysTrue(), FILTER_SCHEMA).filter(FILTER_ROWS).num_rows == 4


# --------------------------------------------------------------------------------------------
# task JSON


def test_task_json_round_trip(data_file: DataFile) -> None:
    f = DataFile(
        **{
            **data_file.__dict__,
            "lower_bounds": {1: b"\x00\x00\x00\x00"},
            "upper_bounds": {1: b"\x05\x00\x00\x00"},
            "value_counts": {1: 6},
            "split_offsets": (4,),
            "first_row_id": 10,
            "extra": {"sequence_number": 7},
        }
    )
    eq = DataFile("/t/eq.parquet", "PARQUET", ("x",), 1, 10, 2, equality_ids=(2,))
    residual = bind(TABLE_SCHEMA, parse("id > 2"))
    task = FileScanTask(f, [eq], residual, TABLE_SCHEMA, SPEC)
    obj = task.to_json()
    assert obj["data-file"]["content"] == "data" and obj["data-file"]["file-format"] == "parquet"
    assert obj["data-file"]["partition"] == ["x"]
    assert obj["data-file"]["lower-bounds"] == {"keys": [1], "values": ["00000000"]}
    assert obj["data-file"]["data-sequence-number"] == 7
    assert obj["delete-files"][0]["content"] == "equality-deletes"
    assert obj["residual-filter"] == {"type": "gt", "term": "id", "value": 2}
    back = FileScanTask.from_json(json.loads(json.dumps(obj)))
    assert back.file == f and back.delete_files == [eq] and back.residual == residual
    assert back.file.extra["sequence_number"] == 7
    # Java 1.10's form: upper-case enums, partition keyed by field id
    old = json.loads(json.dumps(obj))
    old["data-file"].update(
        content="DATA", **{"file-format": "PARQUET", "partition": {"1000": "x"}}
    )
    assert FileScanTask.from_json(old).file == f


def test_delete_cache_reads_each_file_once(tmp_path: Path, data_file: DataFile) -> None:
    pos_schema = pa.schema(
        [_f("file_path", pa.string(), 2147483546, False), _f("pos", pa.int64(), 2147483545, False)]
    )
    path = _write(
        tmp_path / "p.parquet",
        pa.table({"file_path": [data_file.file_path], "pos": [2]}, schema=pos_schema),
    )
    pos = DataFile(path, "PARQUET", ("x",), 1, 1, DataFileContent.POSITION_DELETES)
    cache = DeleteCache(IO)
    assert cache.positions(pos, data_file.file_path).tolist() == [2]
    Path(path).unlink()
    assert cache.positions(pos, data_file.file_path).tolist() == [2]


def test_filters_on_and_around_uuid_columns(tmp_path: Any) -> None:
    """uuid is an Arrow extension type that compute kernels do not dispatch on: filters on it
    compare its storage, and filters that leave no rows keep the extension columns intact."""
    import uuid as uuid_mod

    from frazil.arrow_schema import schema_to_arrow
    from frazil.catalog import load_catalog
    from frazil.schema import Schema
    from frazil.types import LongType, NestedField, StructType, UUIDType

    catalog = load_catalog("u", type="sql", warehouse=str(tmp_path))
    catalog.create_namespace("db")
    schema = Schema(
        NestedField(1, "id", LongType()),
        NestedField(2, "u", UUIDType()),
        NestedField(3, "s", StructType(NestedField(4, "v", UUIDType()))),
    )
    table = catalog.create_table("db.t", schema)
    arrow = schema_to_arrow(table.schema())
    keys = [uuid_mod.UUID(int=i + 1) for i in range(3)]
    data = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "u": pa.array([k.bytes for k in keys[:2]] + [None], pa.binary(16)),
            "s": pa.array([{"v": k.bytes} for k in keys], pa.struct([("v", pa.binary(16))])),
        }
    )
    data = data.cast(arrow)
    table.append(data)

    def ids(f: str) -> list[int]:
        return sorted(table.scan(row_filter=f).to_arrow().column("id").to_pylist())

    assert ids(f"u = '{keys[1]}'") == [2]
    assert ids(f"u != '{keys[1]}'") == [1, 3]  # null != k is true (the spec's null-safe !=)
    assert ids("u IS NULL") == [3]
    assert ids(f"u IN ('{keys[0]}', '{keys[2]}')") == [1]
    assert ids(f"u = '{uuid_mod.UUID(int=99)}'") == []
    assert ids("id > 1 AND id < 2") == []
    empty = table.scan(row_filter="id > 1 AND id < 2").to_arrow()
    assert empty.schema == table.scan().to_arrow().schema


def _spec_keeps(expr: str, i: int, x: float | None) -> bool:
    """The test's filters by the spec's rules, written out: comparisons are false for null
    and NaN, ``!=`` is their negation."""
    nan = x is not None and math.isnan(x)
    real = x is not None and not nan
    return {
        "id >= 120 AND id < 180 OR id >= 420": 120 <= i < 180 or i >= 420,
        "x > 250.0": real and x > 250.0,  # type: ignore[operator]
        "x = 10.0 OR id = 499": (real and x == 10.0) or i == 499,
        "NOT (id < 300)": i >= 300,
        "x != 5.0": not (real and x == 5.0),
        "x < 0.0 OR x IS NULL": (real and x < 0.0) or x is None,  # type: ignore[operator]
    }[expr]


@pytest.mark.parametrize(
    ("expr", "groups"),
    [
        ("id >= 120 AND id < 180 OR id >= 420", [1, 4]),
        # group 1 holds NaN and null only: its statistics have no bounds, so it is read
        ("x > 250.0", [1, 2, 3, 4]),
        ("x = 10.0 OR id = 499", [0, 1, 4]),
        ("NOT (id < 300)", [0, 1, 2, 3, 4]),  # a Not is not translated
        ("x != 5.0", [0, 1, 2, 3, 4]),  # true for null and NaN: not translated
        ("x < 0.0 OR x IS NULL", [0, 1, 2, 3, 4]),  # IS NULL is not translated: all kept
    ],
)
def test_row_groups_pruned_by_statistics_keep_the_spec_rows(
    tmp_path: Path, expr: str, groups: list[int]
) -> None:
    import pyarrow.dataset as ds

    from frazil.table.scan.filter import pruning_expression

    ids = list(range(500))
    xs: list[float | None] = [float(i) for i in ids]
    for i in range(100, 200):  # group 1: NaN and null only
        xs[i] = math.nan if i % 2 else None
    xs[7] = math.nan
    schema = Schema(
        NestedField(1, "id", LongType(), required=True), NestedField(2, "x", DoubleType())
    )
    file_schema = pa.schema([_f("id", pa.int64(), 1, False), _f("x", pa.float64(), 2)])
    path = _write(
        tmp_path / "groups.parquet",
        pa.table({"id": ids, "x": xs}, schema=file_schema),
        row_group_size=100,
    )
    bound = bind(schema, parse(expr))
    prune = pruning_expression(bound, {1: file_schema.field(0), 2: file_schema.field(1)})
    fragment = ds.ParquetFileFormat().make_fragment(path, filesystem=pa.fs.LocalFileSystem())
    kept = (
        [rg.id for rg in fragment.subset(filter=prune).row_groups]
        if prune is not None
        else list(range(5))
    )
    assert kept == groups
    f = DataFile(path, "PARQUET", (), 500, Path(path).stat().st_size)
    got = _read(FileScanTask(f, residual=bound), schema, metadata_columns=("_pos",))
    want = [i for i in ids if _spec_keeps(expr, i, xs[i])]
    assert got.column("id").to_pylist() == want
    assert got.column("_pos").to_pylist() == want
