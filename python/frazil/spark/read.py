"""Distributed reads: planned natively on the driver, read natively on the executors.

:func:`read` plans the scan on the driver (:meth:`frazil.table.scan.DataScan.plan_files_arrow`:
manifests and files pruned, delete files attached, residuals computed, the plan kept in Arrow),
then plans Spark partitions like Java's reader (:func:`partitions`): files over the split size
(``read.split.target-size``, default 128 MB) are split at row-group boundaries (their
``split_offsets``; a split reads the row groups that start inside it), small files are combined
up to the split size, each weighing at least ``read.split.open-file-cost``. The partitions
travel as one Arrow IPC file (one record batch of plan rows per partition, no Python object per
task) inside the function of a ``mapInArrow`` over ``spark.range``; each executor task reads
its batch's tasks with :func:`frazil.table.scan.read.read_task` (projection by field id, deletes and
the residual applied natively) and streams Arrow batches back to Spark. The rows are exactly
those of ``table.scan(...).to_arrow()`` with the same arguments.

Iceberg types in Spark (as the Java reference's Spark integration maps them): timestamptz is
``timestamp``, timestamp is ``timestamp_ntz``; nanosecond timestamps become microseconds (Spark
has no finer unit); uuid is a string (its canonical form), fixed a binary; time is refused, as
Spark has no time type; unknown is ``void``.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from frazil.exceptions import InvalidArgumentError, UnsupportedError
from frazil.expressions import AlwaysTrue
from frazil.manifest.content_file import FileFormat
from frazil.metadata import SnapshotRefType
from frazil.spark import parquet_scan
from frazil.spark._worker import prepare_worker
from frazil.spark.common import executor_io, io_spec, quiet_pyspark_warnings, resolve_catalog
from frazil.table.scan import table_partition_type
from frazil.table.scan.arrow_plan import ScanPlan
from frazil.table.scan.read import DEFAULT_BATCH_SIZE, DeleteCache, read_task

if TYPE_CHECKING:
    from frazil.table.scan.arrow_plan import ScanPlan

__all__ = ["arrow_to_spark_type", "read", "spark_arrow_schema", "to_spark_batch"]

log = logging.getLogger(__name__)

SPLIT_SIZE = "read.split.target-size"
DEFAULT_SPLIT_SIZE = 128 * 1024 * 1024  # the Java reference's defaults
OPEN_FILE_COST_PROP = "read.split.open-file-cost"
DEFAULT_OPEN_FILE_COST = 4 * 1024 * 1024
LOOKBACK_PROP = "read.split.planning-lookback"
_READERS = ("auto", "frazil", "spark")
DEFAULT_LOOKBACK = 10


# ---------------------------------------------------------------------------------------------
# types


def _is_uuid(t: pa.DataType) -> bool:
    return isinstance(t, pa.BaseExtensionType) and t.extension_name == "arrow.uuid"


def arrow_to_spark_type(t: pa.DataType, where: str = "column") -> Any:
    """The Spark type of a column of Arrow type ``t`` as frazil reads it."""
    from pyspark.sql import types as T

    if _is_uuid(t):
        return T.StringType()
    if isinstance(t, pa.BaseExtensionType):
        return arrow_to_spark_type(t.storage_type, where)
    if pa.types.is_boolean(t):
        return T.BooleanType()
    if pa.types.is_int8(t):
        return T.ByteType()
    if pa.types.is_int16(t):
        return T.ShortType()
    if pa.types.is_int32(t):
        return T.IntegerType()
    if pa.types.is_int64(t):
        return T.LongType()
    if pa.types.is_float32(t):
        return T.FloatType()
    if pa.types.is_float64(t):
        return T.DoubleType()
    if pa.types.is_decimal(t):
        return T.DecimalType(t.precision, t.scale)
    if pa.types.is_date32(t):
        return T.DateType()
    if pa.types.is_timestamp(t):
        return T.TimestampType() if t.tz is not None else T.TimestampNTZType()
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return T.StringType()
    if (
        pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_fixed_size_binary(t)
        or pa.types.is_binary_view(t)
    ):
        return T.BinaryType()
    if pa.types.is_null(t):
        return T.NullType()
    if pa.types.is_map(t):
        return T.MapType(
            arrow_to_spark_type(t.key_type, f"{where} key"),
            arrow_to_spark_type(t.item_type, f"{where} value"),
            t.item_field.nullable,
        )
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return T.ArrayType(
            arrow_to_spark_type(t.value_type, f"{where} element"), t.value_field.nullable
        )
    if pa.types.is_struct(t):
        return T.StructType(
            [
                T.StructField(f.name, arrow_to_spark_type(f.type, f"{where}.{f.name}"), f.nullable)
                for f in t
            ]
        )
    if pa.types.is_time(t):
        raise UnsupportedError(f"{where}: Spark has no type for Iceberg time values")
    raise UnsupportedError(f"{where}: no Spark type for Arrow type {t}")


def spark_schema(arrow_schema: pa.Schema) -> Any:
    from pyspark.sql import types as T

    return T.StructType(
        [
            T.StructField(f.name, arrow_to_spark_type(f.type, f.name), f.nullable)
            for f in arrow_schema
        ]
    )


def _spark_arrow_type(t: pa.DataType) -> pa.DataType:
    """The Arrow type Spark exchanges for a column of Arrow type ``t`` read by frazil."""
    if _is_uuid(t):
        return pa.string()
    if isinstance(t, pa.BaseExtensionType):
        return _spark_arrow_type(t.storage_type)
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return pa.binary()
    if pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz="UTC" if t.tz is not None else None)
    if pa.types.is_map(t):
        return pa.map_(
            pa.field(t.key_field.name, _spark_arrow_type(t.key_type), nullable=False),
            pa.field(t.item_field.name, _spark_arrow_type(t.item_type), t.item_field.nullable),
        )
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(
            pa.field("element", _spark_arrow_type(t.value_type), t.value_field.nullable)
        )
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _spark_arrow_type(f.type), f.nullable) for f in t])
    return t


def spark_arrow_schema(arrow_schema: pa.Schema) -> pa.Schema:
    """The Arrow schema of the batches handed to Spark (plain strings, binaries and lists,
    microsecond timestamps, uuids as strings; no field-id metadata)."""
    return pa.schema(
        [pa.field(f.name, _spark_arrow_type(f.type), f.nullable) for f in arrow_schema]
    )


_HEX = np.array([list(f"{i:02x}".encode()) for i in range(256)], dtype=np.uint8)
_DASHES = (4, 6, 8, 10)  # byte offsets before which the canonical form has a '-'


def _uuid_strings(arr: pa.Array) -> pa.Array:
    """Canonical uuid strings of an ``arrow.uuid`` (or fixed[16]) array, vectorized."""
    storage = arr.storage if isinstance(arr, pa.ExtensionArray) else arr
    n = len(storage)
    raw = np.frombuffer(storage.buffers()[1], dtype=np.uint8)
    raw = raw[storage.offset * 16 : (storage.offset + n) * 16].reshape(n, 16)
    hexed = _HEX[raw].reshape(n, 32)
    out = np.full((n, 36), ord("-"), dtype=np.uint8)
    src = 0
    dst = 0
    for end in (*_DASHES, 16):
        width = (end - src) * 2
        out[:, dst : dst + width] = hexed[:, src * 2 : src * 2 + width]
        dst += width + 1
        src = end
    fixed = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(36), n, [None, pa.py_buffer(out.tobytes())]
    )
    strings = fixed.cast(pa.binary()).cast(pa.string())
    if storage.null_count:
        strings = pc.if_else(storage.is_valid(), strings, pa.scalar(None, pa.string()))
    return strings


def _to_spark_array(arr: pa.Array, target: pa.DataType) -> pa.Array:
    t = arr.type
    if _is_uuid(t):
        return _uuid_strings(arr)
    if isinstance(t, pa.BaseExtensionType):
        return _to_spark_array(arr.storage, target)
    if pa.types.is_struct(t):
        children = [
            _to_spark_array(arr.field(i), target.field(i).type) for i in range(t.num_fields)
        ]
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if (pa.types.is_list(t) or pa.types.is_large_list(t)) and _needs_work(t.value_type):
        arr = arr.cast(pa.large_list(t.value_field)) if pa.types.is_list(t) else arr
        values = _to_spark_array(arr.values, target.value_type)
        offsets = arr.offsets.cast(pa.int32())
        if arr.null_count:
            return pa.ListArray.from_arrays(offsets, values, type=target, mask=arr.is_null())
        return pa.ListArray.from_arrays(offsets, values, type=target)
    if pa.types.is_map(t) and (_needs_work(t.key_type) or _needs_work(t.item_type)):
        keys = _to_spark_array(arr.keys, target.key_type)
        items = _to_spark_array(arr.items, target.item_type)
        return pa.MapArray.from_arrays(
            arr.offsets, keys, items, type=target, mask=arr.is_null() if arr.null_count else None
        )
    if t == target:
        return arr
    return arr.cast(target, safe=False) if pa.types.is_timestamp(t) else arr.cast(target)


def _needs_work(t: pa.DataType) -> bool:
    if _is_uuid(t):
        return True
    if pa.types.is_struct(t):
        return any(_needs_work(f.type) for f in t)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _needs_work(t.value_type)
    if pa.types.is_map(t):
        return _needs_work(t.key_type) or _needs_work(t.item_type)
    return False


def to_spark_batch(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """A batch of frazil's read schema in Spark's Arrow types (``target`` from
    :func:`spark_arrow_schema`)."""
    arrays = []
    for i, f in enumerate(target):
        column = batch.column(i)
        if isinstance(column, pa.ChunkedArray):  # pragma: no cover - batches hold arrays
            column = column.combine_chunks()
        arrays.append(_to_spark_array(column, f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=target)


# ---------------------------------------------------------------------------------------------
# executor side


def read_task_batches(
    context: dict[str, Any], tasks: bytes | pa.RecordBatch
) -> Iterator[pa.RecordBatch]:
    """Reads a partition's rows of the plan (:func:`encode_tasks`, or one batch of
    :func:`partitions`) with frazil's reader, in frazil's Arrow types."""
    io = executor_io(context["io_props"], context["io_location"])
    cache = DeleteCache(io, context["name_mapping"])
    plan = decode_tasks(context, tasks)
    for task in _split_tasks(plan):
        yield from read_task(
            task,
            io,
            plan.schema,
            context["projection"],
            metadata_columns=context["metadata_columns"],
            partition_type=context["partition_type"],
            name_mapping=context["name_mapping"],
            delete_cache=cache,
            batch_size=context["batch_size"],
        )


def read_tasks(context: dict[str, Any], tasks: bytes | pa.RecordBatch) -> Iterator[pa.RecordBatch]:
    """:func:`read_task_batches` in Spark's Arrow types."""
    target = context["spark_arrow_schema"]
    for batch in read_task_batches(context, tasks):
        yield to_spark_batch(batch, target)


def _split_tasks(plan: ScanPlan) -> list[Any]:
    tasks = plan.file_scan_tasks()
    names = plan.tasks.column_names
    if "split_start" not in names:
        return tasks
    starts = plan.tasks.column("split_start").to_pylist()
    lengths = plan.tasks.column("split_length").to_pylist()
    return [
        t if s is None else dataclasses.replace(t, start=s, length=n)
        for t, s, n in zip(tasks, starts, lengths, strict=True)
    ]


def encode_tasks(plan: ScanPlan, rows: np.ndarray | pa.RecordBatch) -> bytes:
    """The rows ``rows`` of a plan's tasks (or a batch of :func:`partitions`) as Arrow IPC
    stream bytes."""
    if isinstance(rows, pa.RecordBatch):
        part: pa.Table | pa.RecordBatch = rows
    else:
        part = plan.tasks.take(pa.array(rows, pa.int64()))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, part.schema) as writer:
        writer.write(part)
    return bytes(sink.getvalue())


def encode_groups(plan: ScanPlan, groups: Sequence[np.ndarray]) -> list[bytes]:
    """:func:`encode_tasks` of each group of task rows (a Spark partition's), taken from the
    plan's tasks in one chunk: a take over its chunks, one per planned manifest, concatenates
    them all at every call."""
    whole = plan.combined()
    return [encode_tasks(whole, rows) for rows in groups]


def decode_tasks(context: dict[str, Any], tasks: bytes | pa.RecordBatch) -> ScanPlan:
    """A partition's plan: its tasks (:func:`encode_tasks`) with the plan's delete files,
    schema and specs from ``context``."""
    if isinstance(tasks, pa.RecordBatch):
        part = pa.Table.from_batches([tasks])
    else:
        part = pa.ipc.open_stream(pa.py_buffer(tasks)).read_all()
    return ScanPlan(part, context["delete_files"], context["schema"], context["specs"])


def encode_partitions(batches: Sequence[pa.RecordBatch]) -> bytes:
    """All partitions' rows of the plan as one Arrow IPC file, one record batch each, which
    an executor opens without copying and reads only its own batch of."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, batches[0].schema) as writer:
        for b in batches:
            writer.write_batch(b)
    return bytes(sink.getvalue())


def _read_partitions(
    context: dict[str, Any], plan_ipc: bytes, ids: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    prepare_worker()
    reader = pa.ipc.open_file(pa.py_buffer(plan_ipc))
    for b in ids:
        for k in b.column(0).to_pylist():
            yield from read_tasks(context, reader.get_batch(k))


# ---------------------------------------------------------------------------------------------
# driver side


def scan_for(
    table: Any,
    row_filter: Any = None,
    snapshot_id: int | None = None,
    ref: str | None = None,
    selected_fields: Sequence[str] | None = None,
    case_sensitive: bool = True,
    *,
    as_of_timestamp: int | None = None,
    branch: str | None = None,
    tag: str | None = None,
) -> Any:
    """The :class:`~frazil.table.scan.DataScan` a Spark read of these arguments runs.

    At most one of ``snapshot_id``, ``as_of_timestamp`` (epoch milliseconds), ``ref`` (a branch
    or tag), ``branch`` and ``tag`` picks the snapshot, as Java's Spark read options."""
    chosen = {
        k: v
        for k, v in (
            ("snapshot-id", snapshot_id),
            ("as-of-timestamp", as_of_timestamp),
            ("ref", ref),
            ("branch", branch),
            ("tag", tag),
        )
        if v is not None
    }
    if len(chosen) > 1:
        raise InvalidArgumentError(
            f"{table.full_name()}: choose one of {', '.join(chosen)} to time-travel"
        )
    for kind, name in (("branch", branch), ("tag", tag)):
        if name is None:
            continue
        found = table.metadata.refs.get(name)
        want = SnapshotRefType.BRANCH if kind == "branch" else SnapshotRefType.TAG
        if found is None or found.snapshot_ref_type != want:
            raise InvalidArgumentError(f"{table.full_name()}: no {kind} named {name!r}")
        ref = name
    fields = ("*",) if selected_fields is None else tuple(selected_fields)
    scan = table.scan(
        row_filter=AlwaysTrue() if row_filter is None else row_filter,
        selected_fields=fields,
        case_sensitive=case_sensitive,
        snapshot_id=snapshot_id,
    )
    if as_of_timestamp is not None:
        scan = scan.as_of_timestamp(as_of_timestamp)
    return scan if ref is None else scan.use_ref(ref)


def plan(
    table: Any,
    row_filter: Any = None,
    snapshot_id: int | None = None,
    ref: str | None = None,
    selected_fields: Sequence[str] | None = None,
    case_sensitive: bool = True,
    **time_travel: Any,
) -> tuple[ScanPlan, dict[str, Any], pa.Schema]:
    """Plans a scan on the driver: (the Arrow plan, what executors need, read schema)."""
    scan = scan_for(
        table, row_filter, snapshot_id, ref, selected_fields, case_sensitive, **time_travel
    )
    arrow_schema = scan.arrow_schema()
    # Executors evaluate residuals on rows: tasks travel without column stats.
    scan_plan = scan.include_column_stats(False).plan_files_arrow()
    io_props, io_location = io_spec(table)
    schema = scan.table_schema()
    context = {
        "io_props": io_props,
        "io_location": io_location,
        "projection": scan.projection(),
        "metadata_columns": scan._metadata_columns(),
        "partition_type": table_partition_type(table.metadata, schema),
        "name_mapping": table.metadata.name_mapping(),
        "case_sensitive": case_sensitive,
        "batch_size": DEFAULT_BATCH_SIZE,
        "spark_arrow_schema": spark_arrow_schema(arrow_schema),
        "delete_files": scan_plan.delete_files,
        "schema": scan_plan.schema,
        "specs": scan_plan.specs,
    }
    return scan_plan, context, arrow_schema


# ---------------------------------------------------------------------------------------------
# split planning (Java's TableScanUtil.splitFiles + planTasks)


@dataclass(frozen=True)
class SplitOptions:
    """How tasks become Spark partitions: ``target`` bytes per partition, each task weighing
    at least ``open_file_cost`` per file it opens, bins packed with ``lookback`` open bins."""

    target: int = DEFAULT_SPLIT_SIZE
    open_file_cost: int = DEFAULT_OPEN_FILE_COST
    lookback: int = DEFAULT_LOOKBACK

    @classmethod
    def of(cls, table: Any, options: Mapping[str, str] | None = None) -> SplitOptions:
        """From the read options (Java's ``split-size``, ``file-open-cost``, ``lookback``, or
        the property names), else the table's ``read.split.*`` properties, else defaults."""
        opts = {k.lower(): v for k, v in (options or {}).items() if v is not None}
        props = table.properties

        def get(option: str, prop: str, default: int) -> int:
            raw = opts.get(option, opts.get(prop, props.get(prop)))
            if raw is None or str(raw).strip() == "":
                return default
            try:
                value = int(str(raw).strip())
            except ValueError:
                raise InvalidArgumentError(f"{option} / {prop}: not an integer: {raw!r}") from None
            if value <= 0:
                raise InvalidArgumentError(f"{option} / {prop}: must be positive, got {value}")
            return value

        return cls(
            get("split-size", SPLIT_SIZE, DEFAULT_SPLIT_SIZE),
            get("file-open-cost", OPEN_FILE_COST_PROP, DEFAULT_OPEN_FILE_COST),
            get("lookback", LOOKBACK_PROP, DEFAULT_LOOKBACK),
        )


def _delete_sizes(plan: ScanPlan) -> tuple[np.ndarray, np.ndarray]:
    """Per task: bytes of its delete files, and how many it has (in Arrow/NumPy)."""
    n = len(plan)
    refs = plan.tasks.column("delete_file_references").combine_chunks()
    counts = pc.list_value_length(refs).to_numpy(zero_copy_only=False).astype(np.int64)
    flat = pc.list_flatten(refs)
    if not len(flat):
        return np.zeros(n, np.int64), counts
    deletes = plan.delete_files.column("file_size_in_bytes").to_numpy()
    parents = pc.list_parent_indices(refs).to_numpy()
    sizes = np.bincount(parents, weights=deletes[flat.to_numpy()], minlength=n).astype(np.int64)
    return sizes, counts


def task_sizes(plan: ScanPlan) -> np.ndarray:
    """Each task's bytes to read: its data file and its delete files (in Arrow)."""
    sizes = plan.tasks.column("file_size_in_bytes").to_numpy().astype(np.int64)
    return np.asarray(sizes + _delete_sizes(plan)[0], dtype=np.int64)


def _split_bounds(size: int, offsets: Sequence[int] | None, target: int, fmt: str) -> list[int]:
    """Byte boundaries of one file's splits: 0, ..., ``size``. With valid ``split_offsets``
    (row group or stripe starts) consecutive row groups are combined up to ``target``, like
    Java's offsets-aware split; a Parquet file without them is cut every ``target`` bytes
    (a split reads the row groups starting inside it, so every row group is read once).
    The first split starts at 0, not at the first offset, so no row group is ever lost."""
    valid = (
        offsets is not None
        and len(offsets) > 0
        and offsets[0] >= 0
        and offsets[-1] < size
        and all(a < b for a, b in itertools.pairwise(offsets))
    )
    if valid:
        assert offsets is not None
        bounds = [0]
        edges = [*offsets[1:], size]
        begin = 0
        for i, end in enumerate(edges):
            nxt = edges[i + 1] if i + 1 < len(edges) else None
            # close the split before a row group that would overfill it
            if nxt is None or nxt - begin > target:
                bounds.append(end)
                begin = end
        return bounds
    if fmt != FileFormat.PARQUET:
        return [0, size]  # ORC splits need stripe offsets; Avro files are read whole
    return [*range(0, size, target), size]


def plan_splits(plan: ScanPlan, target: int) -> pa.Table:
    """The plan's tasks with files larger than ``target`` split (Parquet at row-group
    boundaries, ORC at stripes): columns ``task`` (row of ``plan.tasks``), ``start`` and
    ``length`` (null: the whole file) and ``size`` (bytes to read, delete files included)."""
    tasks = plan.tasks
    n = len(plan)
    file_sizes = tasks.column("file_size_in_bytes").to_numpy().astype(np.int64)
    delete_sizes, _ = _delete_sizes(plan)
    big = np.flatnonzero(file_sizes > target)
    rows = np.arange(n, dtype=np.int64)
    if not len(big):
        return pa.table(
            {
                "task": rows,
                "start": pa.nulls(n, pa.int64()),
                "length": pa.nulls(n, pa.int64()),
                "size": file_sizes + delete_sizes,
            }
        )
    # only files over the target (few, each large) are looked at one by one
    formats = tasks.column("file_format").take(pa.array(big)).to_pylist()
    offsets = tasks.column("split_offsets").take(pa.array(big)).to_pylist()
    pieces: dict[int, list[int]] = {}
    for i, fmt, offs in zip(big.tolist(), formats, offsets, strict=True):
        cuts = _split_bounds(int(file_sizes[i]), offs, target, (fmt or "").upper())
        if len(cuts) > 2:
            pieces[i] = cuts
    task_col: list[np.ndarray] = []
    start_col: list[np.ndarray] = []
    length_col: list[np.ndarray] = []
    whole: list[np.ndarray] = []
    prev = 0
    for i in sorted(pieces):
        bounds = np.asarray(pieces[i], dtype=np.int64)
        task_col += [rows[prev:i], np.full(len(bounds) - 1, i, np.int64)]
        start_col += [np.full(i - prev, -1, np.int64), bounds[:-1]]
        length_col += [np.full(i - prev, -1, np.int64), np.diff(bounds)]
        whole += [np.ones(i - prev, bool), np.zeros(len(bounds) - 1, bool)]
        prev = i + 1
    task_col.append(rows[prev:])
    start_col.append(np.full(n - prev, -1, np.int64))
    length_col.append(np.full(n - prev, -1, np.int64))
    whole.append(np.ones(n - prev, bool))
    task = np.concatenate(task_col)
    start = np.concatenate(start_col)
    length = np.concatenate(length_col)
    is_whole = np.concatenate(whole)
    size = np.where(is_whole, file_sizes[task], length) + delete_sizes[task]
    return pa.table(
        {
            "task": task,
            "start": pa.array(start, mask=is_whole),
            "length": pa.array(length, mask=is_whole),
            "size": size,
        }
    )


def pack_splits(
    splits: pa.Table, files: np.ndarray, options: SplitOptions, parallelism: int = 1
) -> list[np.ndarray]:
    """Rows of ``splits`` packed into Spark partitions (Java's ``planTasks``): each weighs
    ``max(size, files * open_file_cost)`` (``files``: 1 + its delete files), and goes into
    the first of the last ``lookback`` open bins it fits in (up to the target), else into a new
    bin; a bin leaves the window when more than ``lookback`` are open. The target shrinks, if
    need be, so that the splits fill at least ``parallelism`` partitions (every core reads);
    Java's further shrinking towards 16 MB splits is not done: each Python task costs Spark
    about 0.1 CPU-second whatever it reads."""
    n = splits.num_rows
    if n == 0:
        return []
    sizes = splits.column("size").to_numpy()
    weights = np.maximum(sizes, files * options.open_file_cost)
    target = min(options.target, max(int(weights.sum()) // max(parallelism, 1), 1))
    done: list[list[int]] = []
    bins: list[tuple[list[int], list[int]]] = []  # (rows, [weight])
    lookback = max(options.lookback, 1)
    for i, w in enumerate(weights.tolist()):
        for rows, weight in bins:
            if weight[0] + w <= target:
                rows.append(i)
                weight[0] += w
                break
        else:
            bins.append(([i], [w]))
            if len(bins) > lookback:
                done.append(bins.pop(0)[0])
    done += [rows for rows, _ in bins]
    return [np.asarray(rows, np.int64) for rows in done]


def group_tasks(sizes: np.ndarray, target: int, parallelism: int) -> list[np.ndarray]:
    """Whole tasks (no splits) of ``sizes`` bytes packed as :func:`pack_splits` packs."""
    n = len(sizes)
    splits = pa.table({"size": np.asarray(sizes, np.int64), "task": np.arange(n)})
    return pack_splits(splits, np.ones(n, np.int64), SplitOptions(target), parallelism)


def partitions(plan: ScanPlan, options: SplitOptions, parallelism: int) -> list[pa.RecordBatch]:
    """The plan as Spark partitions: per partition, its rows of the plan's tasks with the
    ``split_start``/``split_length`` of each (a record batch to ship as Arrow)."""
    splits = plan_splits(plan, options.target)
    _, deletes = _delete_sizes(plan)
    files = 1 + deletes[splits.column("task").to_numpy()]
    tasks = plan.combined().tasks
    out = []
    for group in pack_splits(splits, files, options, parallelism):
        part = splits.take(pa.array(group))
        rows = tasks.take(part.column("task"))
        rows = rows.append_column("split_start", part.column("start"))
        rows = rows.append_column("split_length", part.column("length"))
        out.append(rows.combine_chunks().to_batches()[0])
    return out


def read(
    spark: Any,
    identifier: str | tuple[str, ...],
    catalog: Any,
    row_filter: Any = None,
    snapshot_id: int | None = None,
    ref: str | None = None,
    selected_fields: Sequence[str] | None = None,
    *,
    as_of_timestamp: int | None = None,
    branch: str | None = None,
    tag: str | None = None,
    options: Mapping[str, str] | None = None,
    reader: str = "auto",
) -> Any:
    """A Spark DataFrame of a table's rows: planned on the driver, read on the executors.

    ``row_filter`` is an expression or a filter string; ``snapshot_id``, ``as_of_timestamp``
    (epoch milliseconds), ``branch``, ``tag`` or ``ref`` (a branch or tag) time-travel;
    ``selected_fields`` picks columns (metadata columns such as ``_file``, ``_pos``,
    ``_row_id`` included). ``options`` are Java's split read options (``split-size``,
    ``file-open-cost``, ``lookback``; default: the table's ``read.split.*`` properties).
    ``catalog`` is a frazil Catalog, a catalog name or a dict of catalog properties.

    ``reader`` picks who reads the planned files. ``"auto"``: Spark's own Parquet reader, in
    the JVM, when the plan is whole Parquet files with nothing for Iceberg's rules to do (no
    deletes, no residual filter, no metadata columns, no name mapping or type promotion, no
    split options: see :mod:`frazil.spark.parquet_scan`; the read then sets the session's
    ``spark.sql.parquet.fieldId.read.enabled``), else frazil's reader in the Python workers;
    ``"frazil"``: always frazil's reader; ``"spark"``: Spark's reader, or
    :class:`~frazil.exceptions.InvalidArgumentError` saying why it cannot.

    With frazil's reader, the plan goes to the executors as one Arrow IPC buffer inside the
    read function (PySpark broadcasts a function over 1 MB); each Spark partition opens it
    without copying and reads its own record batch of tasks. The partitions come from
    ``spark.range``, so no Python stage runs before the read. Spark's reader makes every
    column nullable, as Spark's file sources do; frazil's keeps required columns required."""
    table = resolve_catalog(catalog).load_table(identifier)
    scan_plan, context, arrow_schema = plan(
        table,
        row_filter,
        snapshot_id,
        ref,
        selected_fields,
        as_of_timestamp=as_of_timestamp,
        branch=branch,
        tag=tag,
    )
    schema = spark_schema(arrow_schema)
    log.info("%s: %d file scan tasks", table.full_name(), len(scan_plan))
    if reader not in _READERS:
        raise InvalidArgumentError(f"reader must be one of {', '.join(_READERS)}, not {reader!r}")
    if not len(scan_plan):
        return spark.createDataFrame([], schema)
    split_options = SplitOptions.of(table, options)
    if reader != "frazil":
        if split_options != SplitOptions():
            why: str | None = "split options are set (Spark's reader splits by its own settings)"
        else:
            why = parquet_scan.refusal(
                spark,
                table.metadata,
                context["projection"],
                scan_plan.tasks,
                context["metadata_columns"],
            )
        if why is None:
            log.info("%s: read by Spark's Parquet reader", table.full_name())
            return parquet_scan.spark_parquet_frame(
                spark, scan_plan.tasks, context["projection"], schema, table.full_name()
            )
        if reader == "spark":
            raise InvalidArgumentError(
                f"{table.full_name()}: Spark's Parquet reader cannot read this scan: {why}"
            )
        log.info("%s: read by frazil in the Python workers: %s", table.full_name(), why)
    parts = partitions(scan_plan, split_options, spark.sparkContext.defaultParallelism)
    plan_ipc = encode_partitions(parts)

    def run(ids: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return _read_partitions(context, plan_ipc, ids)

    with quiet_pyspark_warnings():
        return spark.range(len(parts), numPartitions=len(parts)).mapInArrow(run, schema)
