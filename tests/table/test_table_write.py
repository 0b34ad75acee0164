"""Appends: files partitioned by every transform (nulls and pre-epoch values included), rolled
at the target size, sorted by the default order, laid out per the location properties, with
metrics from their footers; files of a failed commit are deleted."""

from __future__ import annotations

import datetime as dt
import decimal
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from frazil import manifest as fm
from frazil.catalog import load_catalog
from frazil.exceptions import CommitFailedError, FrazilError
from frazil.manifest.content_file import DataFile, data_files_from_entries
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.sorting import NullOrder, SortDirection, SortField, SortOrder
from frazil.table import Table
from frazil.transforms import parse
from frazil.types import (
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
)
from frazil.values import from_bytes

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "ts", TimestampType()),
    NestedField(3, "d", DateType()),
    NestedField(4, "s", StringType()),
    NestedField(5, "n", IntegerType()),
    NestedField(6, "dec", DecimalType(9, 2)),
    NestedField(7, "x", DoubleType()),
)


def rows(n: int = 200) -> pa.Table:
    base = dt.datetime(1969, 12, 31, 20)
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "ts": pa.array(
                [None if i % 17 == 0 else base + dt.timedelta(minutes=37 * i) for i in range(n)],
                pa.timestamp("us"),
            ),
            "d": pa.array(
                [
                    None if i % 19 == 0 else dt.date(1969, 12, 25) + dt.timedelta(days=i // 9)
                    for i in range(n)
                ],
                pa.date32(),
            ),
            "s": pa.array([None if i % 13 == 0 else f"v{i % 23:02d}é" for i in range(n)]),
            "n": pa.array([None if i % 11 == 0 else i - 100 for i in range(n)], pa.int32()),
            "dec": pa.array(
                [None if i % 7 == 0 else decimal.Decimal(i - 50) / 4 for i in range(n)],
                pa.decimal128(9, 2),
            ),
            "x": pa.array([float("nan") if i % 5 == 0 else i / 3 for i in range(n)]),
        }
    )


@pytest.fixture
def catalog(tmp_path: Path) -> Any:
    cat = load_catalog("w", type="filesystem", warehouse=str(tmp_path))
    cat.create_namespace("db")
    return cat


def live_files(table: Table) -> list[DataFile]:
    snap = table.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    out = []
    for row in fm.read_manifest_list(table.io.read(snap.manifest_list)).to_pylist():
        entries = fm.read_manifest(table.io.read(row["manifest_path"]), row)
        out += [
            f
            for f in data_files_from_entries(entries, row["partition_spec_id"])
            if f.extra["status"] != 2
        ]
    return out


def read_all(files: list[DataFile]) -> pa.Table:
    return pa.concat_tables([pq.read_table(f.file_path.removeprefix("file://")) for f in files])


def same_rows(a: pa.Table, b: pa.Table) -> None:
    key = [("id", "ascending")]
    # repr: NaN equals itself there
    assert repr(a.sort_by(key).to_pylist()) == repr(
        b.select(a.column_names).sort_by(key).to_pylist()
    )


TRANSFORMS = [
    ("ts", "identity"),
    ("ts", "year"),
    ("ts", "month"),
    ("ts", "day"),
    ("ts", "hour"),
    ("d", "day"),
    ("d", "month"),
    ("s", "identity"),
    ("s", "truncate[2]"),
    ("s", "bucket[4]"),
    ("n", "truncate[10]"),
    ("n", "bucket[3]"),
    ("dec", "truncate[100]"),
    ("dec", "identity"),
    ("id", "void"),
]


@pytest.mark.parametrize(("column", "transform"), TRANSFORMS)
def test_partitioned_append_every_transform(catalog: Any, column: str, transform: str) -> None:
    source = SCHEMA.find_field(column).field_id
    spec = PartitionSpec(PartitionField(source, 1000, parse(transform), f"{column}_p"))
    table = catalog.create_table(("db", "t"), SCHEMA, partition_spec=spec)
    data = rows()
    table.append(data)
    files = live_files(table)
    same_rows(data, read_all(files))
    assert sum(f.record_count for f in files) == data.num_rows
    t = parse(transform)
    seen = set()
    for f in files:
        content = pq.read_table(f.file_path.removeprefix("file://"))
        values = t.apply(content.column(column).combine_chunks())
        distinct = pc.unique(values).to_pylist()
        assert len(distinct) == 1, f.file_path  # one partition per file
        (value,) = f.partition
        if transform == "void":
            assert value is None
        seen.add(value if not isinstance(value, float) else repr(value))
        # the path names the partition
        assert f"/{column}_p=" in f.file_path
        assert f.file_path.startswith(table.location().rstrip("/") + "/data/")
    assert len(seen) == len(files)


@pytest.mark.parametrize("clustered", [True, False])
def test_partition_files_hold_their_rows_in_input_order(catalog: Any, clustered: bool) -> None:
    """Input already grouped by partition (each partition one run, e.g. time-ordered rows by
    day) is cut without a sort; shuffled input is grouped. Either way every file holds exactly
    its partition's rows, in input order (grouped here with pyarrow, independently)."""
    spec = PartitionSpec(
        PartitionField(4, 1000, parse("identity"), "s_p"),
        PartitionField(5, 1001, parse("truncate[50]"), "n_p"),
    )
    table = catalog.create_table(("db", "t"), SCHEMA, partition_spec=spec)
    data = rows(900)
    # truncate[50] of an int: v - v mod 50, the modulo taken non-negative (Python's %)
    n_p = pa.array([None if v is None else v - v % 50 for v in data.column("n").to_pylist()])
    data = data.append_column("_s", data.column("s")).append_column("_n", n_p)
    if clustered:
        # runs in descending order of s (nulls last), n ascending within: not the order of
        # the partitions' codes (first seen), so routing must reorder the runs
        data = data.sort_by([("_s", "descending"), ("_n", "ascending")])
    expected: dict[tuple[Any, Any], list[int]] = {}
    for i, s_val, n_val in zip(
        data.column("id").to_pylist(),
        data.column("_s").to_pylist(),
        data.column("_n").to_pylist(),
        strict=True,
    ):
        expected.setdefault((s_val, n_val), []).append(i)
    table.append(data.drop_columns(["_s", "_n"]))
    files = live_files(table)
    got = {}
    for f in files:
        ids = pq.read_table(f.file_path.removeprefix("file://"), columns=["id"]).column("id")
        got[tuple(f.partition)] = ids.to_pylist()
    assert got == expected


@pytest.mark.parametrize("streamed", [False, True])
def test_few_valued_strings_keep_their_values_and_bounds(
    catalog: Any, monkeypatch: pytest.MonkeyPatch, streamed: bool
) -> None:
    """A string column of few distinct values is written from dictionary arrays when rows
    are grouped by partition: each file still reads back plain strings, the same values, and
    bounds from the values the file holds (not the whole input's dictionary); a stream's
    chunks each bring their own dictionary."""
    import frazil.table.write.writer as write

    # files of partition "k0" hold k00..k09, of "k1" only k10: bounds differ per file
    spec = PartitionSpec(PartitionField(4, 1000, parse("truncate[2]"), "s_p"))
    table = catalog.create_table(("db", "t"), SCHEMA, partition_spec=spec)
    n = 6000
    data = rows(n).set_column(
        3, "s", pa.array([None if i % 29 == 0 else f"k{(i * 7) % 11:02d}" for i in range(n)])
    )
    if streamed:
        monkeypatch.setattr(write, "_CHUNK_BYTES", 60_000)
        table.append(pa.RecordBatchReader.from_batches(data.schema, data.to_batches(500)))
    else:
        table.append(data)
    files = live_files(table)
    same_rows(data, read_all(files))
    for f in files:
        content = pq.read_table(f.file_path.removeprefix("file://"))
        s = content.column("s")
        assert pa.types.is_string(s.type) or pa.types.is_large_string(s.type)
        assert f.null_value_counts[4] == s.null_count
        if s.null_count == len(s):  # the null partition: no bounds
            assert 4 not in (f.lower_bounds or {})
            continue
        low, high = pc.min_max(s).values()
        assert from_bytes(f.lower_bounds[4], StringType()) == low.as_py()
        assert from_bytes(f.upper_bounds[4], StringType()) == high.as_py()
        assert f.value_counts[4] == len(s)


def test_partition_path_human_strings(catalog: Any) -> None:
    spec = PartitionSpec(
        PartitionField(2, 1000, parse("hour"), "h"),
        PartitionField(3, 1001, parse("day"), "dd"),
        PartitionField(4, 1002, parse("identity"), "s"),
    )
    table = catalog.create_table(("db", "t"), SCHEMA, partition_spec=spec)
    data = pa.table(
        {
            "id": pa.array([1, 2], pa.int64()),
            "ts": pa.array([dt.datetime(1969, 12, 31, 23, 30), None], pa.timestamp("us")),
            "d": pa.array([dt.date(1900, 1, 1), None], pa.date32()),
            "s": ["a b/é", None],
        }
    )
    table.append(data)
    paths = sorted(f.file_path.split("/data/")[1].rsplit("/", 1)[0] for f in live_files(table))
    assert paths == ["h=1969-12-31-23/dd=1900-01-01/s=a+b%2F%C3%A9", "h=null/dd=null/s=null"]


def test_multiple_files_per_partition_at_small_target(catalog: Any) -> None:
    spec = PartitionSpec(PartitionField(1, 1000, parse("bucket[2]"), "b"))
    table = catalog.create_table(
        ("db", "t"),
        SCHEMA,
        partition_spec=spec,
        properties={
            "write.target-file-size-bytes": "4000",
            "write.parquet.compression-codec": "gzip",
        },
    )
    data = rows(3000)
    table.append(data)
    files = live_files(table)
    per_partition: dict[Any, int] = {}
    for f in files:
        per_partition[f.partition] = per_partition.get(f.partition, 0) + 1
        meta = pq.read_metadata(f.file_path.removeprefix("file://"))
        assert meta.row_group(0).column(0).compression == "GZIP"
        assert f.split_offsets and f.split_offsets[0] == 4
    assert all(n > 1 for n in per_partition.values())
    same_rows(data, read_all(files))
    # names are unique and Java-shaped: 00000-0-<uuid>-<count>.parquet
    names = [os.path.basename(f.file_path) for f in files]
    assert len(set(names)) == len(names)
    assert all(n.startswith("00000-0-") and n.endswith(".parquet") for n in names)


def test_metrics_from_footer(catalog: Any) -> None:
    table = catalog.create_table(("db", "t"), SCHEMA)
    data = rows(100)
    table.append(data)
    (f,) = live_files(table)
    assert f.record_count == 100
    assert f.value_counts[1] == 100 and f.null_value_counts[4] == 8
    assert from_bytes(f.lower_bounds[1], LongType()) == 0
    assert from_bytes(f.upper_bounds[1], LongType()) == 99
    assert from_bytes(f.lower_bounds[2], TimestampType()) == dt.datetime(1969, 12, 31, 20, 37)
    assert f.nan_value_counts == {7: 20}
    assert f.sort_order_id == 0


def test_sorted_by_default_order(catalog: Any) -> None:
    order = SortOrder(
        SortField(5, parse("identity"), SortDirection.DESC, NullOrder.NULLS_FIRST),
        SortField(4, parse("truncate[1]"), SortDirection.ASC, NullOrder.NULLS_LAST),
        order_id=1,
    )
    table = catalog.create_table(("db", "t"), SCHEMA, sort_order=order)
    table.append(rows(120))
    (f,) = live_files(table)
    content = pq.read_table(f.file_path.removeprefix("file://"))
    n = content.column("n").to_pylist()
    nulls = sum(v is None for v in n)
    assert all(v is None for v in n[:nulls])
    rest = n[nulls:]
    assert rest == sorted(rest, reverse=True)
    assert f.sort_order_id == 1


def test_many_chunks_write_what_one_chunk_writes(catalog: Any) -> None:
    """Rows of many Arrow chunks (as query engines hand them over; strings dictionary-encoded
    with a dictionary per chunk) are gathered into the same files, in the same order, as the
    same rows in one chunk: partitioned by bucket and sorted within each file."""
    spec = PartitionSpec(PartitionField(1, 1000, parse("bucket[4]"), "b"))
    order = SortOrder(
        SortField(5, parse("identity"), SortDirection.DESC, NullOrder.NULLS_FIRST), order_id=1
    )
    data = rows(3000)
    chunks = []
    for b in data.to_batches(max_chunksize=77):
        s = b.column(3).dictionary_encode()
        chunks.append(
            pa.RecordBatch.from_arrays(
                [*b.columns[:3], s, *b.columns[4:]], ["id", "ts", "d", "s", "n", "dec", "x"]
            )
        )
    chunked = pa.Table.from_batches(chunks)
    assert chunked.column("id").num_chunks > 30

    def files_of(name: str, content: pa.Table) -> dict[Any, list[dict[str, Any]]]:
        table = catalog.create_table(("db", name), SCHEMA, partition_spec=spec, sort_order=order)
        table.append(content)
        out = {}
        for f in live_files(table):
            got = pq.read_table(f.file_path.removeprefix("file://"))
            out[f.partition] = got.to_pylist()
        return out

    one = files_of("one", data)
    many = files_of("many", chunked)
    assert sorted(one) == sorted(many) and len(one) == 4
    for partition, got in one.items():
        assert repr(many[partition]) == repr(got)
    # the input's rows, each file in the declared order (n descending, nulls first)
    same_rows(data, pa.Table.from_pylist([r for got in many.values() for r in got]))
    for got in many.values():
        n = [r["n"] for r in got]
        nulls = sum(v is None for v in n)
        assert all(v is None for v in n[:nulls])
        assert n[nulls:] == sorted(n[nulls:], reverse=True)


def test_object_storage_layout(catalog: Any) -> None:
    spec = PartitionSpec(PartitionField(1, 1000, parse("bucket[2]"), "b"))
    table = catalog.create_table(
        ("db", "t"),
        SCHEMA,
        partition_spec=spec,
        properties={"write.object-storage.enabled": "true"},
    )
    table.append(rows(50))
    for f in live_files(table):
        rel = f.file_path.split("/data/")[1].split("/")
        assert [len(p) for p in rel[:4]] == [4, 4, 4, 8]
        assert set("".join(rel[:4])) <= {"0", "1"}
        assert rel[4].startswith("b=")
    same_rows(rows(50), read_all(live_files(table)))


def test_write_data_path(catalog: Any, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    table = catalog.create_table(
        ("db", "t"), SCHEMA, properties={"write.data.path": str(elsewhere)}
    )
    table.append(rows(10))
    (f,) = live_files(table)
    assert f.file_path.removeprefix("file://").startswith(str(elsewhere) + "/")


def test_streaming_input(catalog: Any) -> None:
    spec = PartitionSpec(PartitionField(3, 1000, parse("month"), "m"))
    table = catalog.create_table(("db", "t"), SCHEMA, partition_spec=spec)
    data = rows(500)
    table.append(pa.RecordBatchReader.from_batches(data.schema, data.to_batches(max_chunksize=64)))
    table.append(iter(data.slice(0, 10).to_batches()))
    files = live_files(table)
    assert sum(f.record_count for f in files) == 510


def test_merge_and_fast_append(catalog: Any) -> None:
    table = catalog.create_table(
        ("db", "t"), SCHEMA, properties={"commit.manifest-merge.enabled": "false"}
    )
    for _ in range(3):
        table.append(rows(5))
    assert table.current_snapshot().summary["manifests-kept"] == "2"  # type: ignore[union-attr]
    assert len(live_files(table)) == 3


def test_v3_append_assigns_row_ids(catalog: Any) -> None:
    table = catalog.create_table(("db", "t"), SCHEMA, properties={"format-version": "3"})
    table.append(rows(10))
    table.append(rows(5))
    assert table.metadata.next_row_id == 15
    for f in live_files(table):
        names = pq.read_schema(f.file_path.removeprefix("file://")).names
        assert "_row_id" not in names


def test_failed_commit_leaves_no_files(catalog: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = PartitionSpec(PartitionField(1, 1000, parse("bucket[4]"), "b"))
    table = catalog.create_table(
        ("db", "t"), SCHEMA, partition_spec=spec, properties={"commit.retry.num-retries": "0"}
    )

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise CommitFailedError("injected")

    monkeypatch.setattr(table.catalog, "commit_table", fail)
    with pytest.raises(CommitFailedError):
        table.append(rows(40))
    data_dir = Path(table.location().removeprefix("file://")) / "data"
    leftovers = [p for p in data_dir.rglob("*") if p.is_file()] if data_dir.exists() else []
    assert leftovers == []


def test_invalid_input_writes_nothing(catalog: Any) -> None:
    table = catalog.create_table(("db", "t"), SCHEMA)
    with pytest.raises(Exception, match="required column 'id' has 1 null value"):
        table.append(pa.table({"id": pa.array([1, None], pa.int64())}))
    data_dir = Path(table.location().removeprefix("file://")) / "data"
    assert not data_dir.exists() or not any(p.is_file() for p in data_dir.rglob("*"))
    assert table.current_snapshot() is None


def test_stream_memory_is_bounded(catalog: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import frazil.table.write.writer as write

    # A tiny chunk size: buffered rows are written out as row groups as the stream goes on.
    monkeypatch.setattr(write, "_CHUNK_BYTES", 20_000)
    monkeypatch.setattr(write, "_PENDING_BYTES", 10_000)
    spec = PartitionSpec(PartitionField(1, 1000, parse("bucket[3]"), "b"))
    table = catalog.create_table(("db", "t"), SCHEMA, partition_spec=spec)
    data = rows(3000)
    table.append(pa.RecordBatchReader.from_batches(data.schema, data.to_batches(max_chunksize=100)))
    files = live_files(table)
    assert len(files) == 3
    for f in files:
        assert pq.read_metadata(f.file_path.removeprefix("file://")).num_row_groups > 1
        assert len(f.split_offsets or ()) > 1
        assert f.sort_order_id == 0
    same_rows(data, read_all(files))


def test_error_mid_stream_deletes_written_files(
    catalog: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import frazil.table.write.writer as write

    monkeypatch.setattr(write, "_CHUNK_BYTES", 5_000)
    table = catalog.create_table(("db", "t"), SCHEMA)
    good = rows(2000)
    bad = good.slice(0, 2).set_column(0, "id", pa.array([1, None], pa.int64()))

    def batches() -> Any:
        yield from good.to_batches(max_chunksize=100)
        yield from bad.to_batches()

    with pytest.raises(Exception, match="required column 'id' has 1 null value"):
        table.append(iter(batches()))
    data_dir = Path(table.location().removeprefix("file://")) / "data"
    assert not data_dir.exists() or not any(p.is_file() for p in data_dir.rglob("*"))
    assert table.current_snapshot() is None


def _layout(table: Table) -> list[tuple[str, int, int]]:
    """(name without the operation id, rows, first id) of each file, in commit order."""
    out = []
    for f in live_files(table):
        name = os.path.basename(f.file_path)
        content = pq.read_table(f.file_path.removeprefix("file://"), columns=["id"])
        out.append((name.rsplit("-", 1)[1], f.record_count, content.column("id")[0].as_py()))
    return out


def test_large_partition_fills_files_concurrently_and_deterministically(
    catalog: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import frazil.table.write.writer as write

    monkeypatch.setattr(write, "_workers", lambda: 3)
    order = SortOrder(SortField(1, parse("identity"), SortDirection.DESC), order_id=1)
    props = {"write.parquet.row-group-limit": "500"}
    data = rows(4200)
    layouts = []
    for name in ("a", "b"):
        table = catalog.create_table(("db", name), SCHEMA, sort_order=order, properties=props)
        table.append(data)
        files = live_files(table)
        # 9 row groups (at most 500 rows) dealt in turns to 3 files, of equal size so that
        # the files' encoders finish together: 467 rows each, the last one 464
        assert [f.record_count for f in files] == [1401, 1401, 1398]
        for f in files:
            groups = pq.read_metadata(f.file_path.removeprefix("file://"))
            sizes = [groups.row_group(i).num_rows for i in range(groups.num_row_groups)]
            assert sizes in ([467, 467, 467], [467, 467, 464])
        for f in files:
            ids = pq.read_table(f.file_path.removeprefix("file://")).column("id").to_pylist()
            assert ids == sorted(ids, reverse=True)
            assert f.sort_order_id == 1
        same_rows(data, read_all(files))
        layouts.append(_layout(table))
    assert layouts[0] == layouts[1]


def test_encoder_error_deletes_written_files(catalog: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import frazil.table.write.writer as write

    monkeypatch.setattr(write, "_workers", lambda: 2)
    calls = []
    real = write._OpenFile.write

    def flaky(self: Any, table: pa.Table) -> None:
        calls.append(1)
        if len(calls) == 4:
            raise OSError(28, "No space left on device")
        real(self, table)

    monkeypatch.setattr(write._OpenFile, "write", flaky)
    table = catalog.create_table(
        ("db", "t"), SCHEMA, properties={"write.parquet.row-group-limit": "100"}
    )
    with pytest.raises(FrazilError, match="No space left on device"):
        table.append(rows(2000))
    data_dir = Path(table.location().removeprefix("file://")) / "data"
    assert not data_dir.exists() or not any(p.is_file() for p in data_dir.rglob("*"))
    assert table.current_snapshot() is None


def test_stale_append_retries_and_both_land(catalog: Any) -> None:
    first = catalog.create_table(("db", "t"), SCHEMA)
    stale = catalog.load_table(("db", "t"))
    first.append(rows(10))
    stale.append(rows(7))  # conflicts, refreshes and re-applies with the same data files
    table = catalog.load_table(("db", "t"))
    assert table.current_snapshot().summary["total-records"] == "17"  # type: ignore[union-attr]
    assert len(table.snapshots()) == 2
    data_dir = Path(table.location().removeprefix("file://")) / "data"
    on_disk = sorted(str(p) for p in data_dir.rglob("*.parquet"))
    assert on_disk == sorted(f.file_path.removeprefix("file://") for f in live_files(table))


def test_append_to_branch_and_v1(catalog: Any) -> None:
    table = catalog.create_table(("db", "t"), SCHEMA, properties={"format-version": "1"})
    table.append(rows(4))
    table.append(rows(3), branch="audit", snapshot_properties={"origin": "test"})
    assert table.current_snapshot().summary["total-records"] == "4"  # type: ignore[union-attr]
    audit = table.snapshot_by_name("audit")
    assert audit is not None and audit.summary["origin"] == "test"
    # A new branch starts without a parent (as Java's producers start it).
    assert audit.parent_snapshot_id is None and audit.summary["total-records"] == "3"
    table.append(rows(2), branch="audit")
    assert table.snapshot_by_name("audit").summary["total-records"] == "5"  # type: ignore[union-attr]


def test_empty_append_commits_an_empty_snapshot(catalog: Any) -> None:
    # PyIceberg's behaviour: a snapshot without files.
    table = catalog.create_table(("db", "t"), SCHEMA)
    table.append(rows(0))
    snap = table.current_snapshot()
    assert snap is not None and snap.summary.get("total-records") == "0"


@pytest.mark.parametrize(
    ("transform", "type_", "value", "text"),
    [
        (
            "identity",
            "timestamptz",
            dt.datetime(1969, 12, 31, 23, 0, 1, tzinfo=dt.timezone.utc),
            # Iceberg 1.10's form (ISO_LOCAL_DATE_TIME and +00:00); was "1969-12-31T23:00:01Z"
            "1969-12-31T23:00:01+00:00",
        ),
        # seconds always, as Iceberg 1.10 writes them; was "2024-05-01T10:30"
        ("identity", "timestamp", dt.datetime(2024, 5, 1, 10, 30), "2024-05-01T10:30:00"),
        (
            "identity",
            "timestamp",
            dt.datetime(2024, 5, 1, 10, 30, 0, 1000),
            "2024-05-01T10:30:00.001",
        ),
        ("identity", "time", dt.time(7, 5, 3, 120), "07:05:03.000120"),
        ("identity", "double", 1e7, "1.0E7"),
        ("identity", "double", -0.00125, "-0.00125"),
        ("identity", "float", 0.1, "0.1"),
        ("identity", "boolean", True, "true"),
        ("identity", "binary", b"\x00\xff", "AP8="),
        ("identity", "decimal(9, 2)", decimal.Decimal("-0.50"), "-0.50"),
        ("year", "int", -1, "1969"),
        ("month", "int", -1, "1969-12"),
        ("hour", "int", -1, "1969-12-31-23"),
        ("day", "date", dt.date(1900, 1, 1), "1900-01-01"),
        ("bucket[4]", "int", 3, "3"),
        ("identity", "string", None, "null"),
    ],
)
def test_human_strings(transform: str, type_: str, value: Any, text: str) -> None:
    from frazil.table.write.locations import human_string
    from frazil.types import as_type

    assert human_string(transform, as_type(type_), value) == text


def test_legacy_folder_storage_path() -> None:
    from frazil.table.write.locations import LocationProvider

    p = LocationProvider("s3://b/t/", {"write.folder-storage.path": "s3://legacy/"})
    assert p.new_data_location("f.parquet", "a=1") == "s3://legacy/a=1/f.parquet"
    assert (
        LocationProvider("s3://b/t/", {}).new_data_location("f.parquet")
        == "s3://b/t/data/f.parquet"
    )


@pytest.mark.parametrize(
    ("rows", "limit", "lanes"),
    [(10_000_000, 1_048_576, 2), (4200, 500, 3), (1001, 1000, 2), (7, 2, 4), (999_999, 1000, 8)],
)
def test_balanced_row_groups_fill_the_lanes_equally(rows: int, limit: int, lanes: int) -> None:
    from frazil.table.write.writer import _balanced_group_rows

    group = _balanced_group_rows(rows, limit, lanes)
    assert group is not None and group <= limit
    sizes = [min(group, rows - at) for at in range(0, rows, group)]
    assert len(sizes) % lanes == 0 or sizes[-1] < group
    per_lane = [sum(sizes[k::lanes]) for k in range(lanes)]
    assert sum(per_lane) == rows
    assert max(per_lane) - min(per_lane) <= max(group // 2, lanes)
    # never less even than dealing full groups of `limit` rows in turns (the writer before),
    # which left 10M rows on two lanes 5.24M/4.76M and 4200 on three 1500/1500/1200
    full = [min(limit, rows - at) for at in range(0, rows, limit)]
    full_lanes = [sum(full[k::lanes]) for k in range(lanes)]
    assert max(per_lane) - min(per_lane) <= max(full_lanes) - min(full_lanes)
    assert max(per_lane) - min(per_lane) < group
    assert _balanced_group_rows(limit, limit, lanes) is None
    assert _balanced_group_rows(rows, limit, 1) is None
