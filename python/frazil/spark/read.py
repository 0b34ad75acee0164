"""Distributed reads: planned natively on the driver, read natively on the executors.

:func:`read` plans the scan on the driver (:meth:`frazil.table.scan.DataScan.plan_files_arrow`:
manifests and files pruned, delete files attached, residuals computed, the plan kept in Arrow),
packs the tasks into Spark partitions by size in Arrow, ships each partition's rows of the plan
to the executors as Arrow IPC bytes (one row of a DataFrame per partition; no Python object per
task on the driver), and reads each task there with :func:`frazil.table.read.read_task`
(projection by field id,
deletes and the residual applied natively), streaming Arrow batches back to Spark through
``mapInArrow``. The rows are exactly those of ``table.scan(...).to_arrow()`` with the same
arguments.

Iceberg types in Spark (as the Java reference's Spark integration maps them): timestamptz is
``timestamp``, timestamp is ``timestamp_ntz``; nanosecond timestamps become microseconds (Spark
has no finer unit); uuid is a string (its canonical form), fixed a binary; time is refused, as
Spark has no time type; unknown is ``void``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from frazil.exceptions import UnsupportedError

if TYPE_CHECKING:
    from frazil.table.scan_plan import ScanPlan

__all__ = ["arrow_to_spark_type", "read", "spark_arrow_schema", "to_spark_batch"]

log = logging.getLogger(__name__)

SPLIT_SIZE = "read.split.target-size"
DEFAULT_SPLIT_SIZE = 128 * 1024 * 1024  # the Java reference's default
OPEN_FILE_COST = 4 * 1024 * 1024  # read.split.open-file-cost's default


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


def read_task_batches(context: dict[str, Any], tasks: bytes) -> Iterator[pa.RecordBatch]:
    """Reads a partition's rows of the plan (:func:`encode_tasks`) with frazil's reader, in
    frazil's Arrow types."""
    from frazil.io import load_file_io
    from frazil.table.read import DeleteCache, read_task

    io = load_file_io(context["io_props"], context["io_location"])
    cache = DeleteCache(io, context["name_mapping"])
    plan = decode_tasks(context, tasks)
    for task in plan.file_scan_tasks():
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


def read_tasks(context: dict[str, Any], tasks: bytes) -> Iterator[pa.RecordBatch]:
    """:func:`read_task_batches` in Spark's Arrow types."""
    target = context["spark_arrow_schema"]
    for batch in read_task_batches(context, tasks):
        yield to_spark_batch(batch, target)


def encode_tasks(plan: ScanPlan, rows: np.ndarray) -> bytes:
    """The rows ``rows`` of a plan's tasks as Arrow IPC stream bytes."""
    part = plan.tasks.take(pa.array(rows, pa.int64()))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, part.schema) as writer:
        writer.write_table(part)
    return bytes(sink.getvalue())


def decode_tasks(context: dict[str, Any], tasks: bytes) -> ScanPlan:
    """A partition's plan: its tasks (:func:`encode_tasks`) with the plan's delete files,
    schema and specs from ``context``."""
    from frazil.table.scan_plan import ScanPlan

    part = pa.ipc.open_stream(pa.py_buffer(tasks)).read_all()
    return ScanPlan(part, context["delete_files"], context["schema"], context["specs"])


def _read_partition(context: dict[str, Any], batches: Iterator[pa.RecordBatch]) -> Any:
    for b in batches:
        for tasks in b.column(0).to_pylist():
            yield from read_tasks(context, tasks)


# ---------------------------------------------------------------------------------------------
# driver side


def scan_for(
    table: Any,
    row_filter: Any = None,
    snapshot_id: int | None = None,
    ref: str | None = None,
    selected_fields: Sequence[str] | None = None,
    case_sensitive: bool = True,
) -> Any:
    """The :class:`~frazil.table.scan.DataScan` a Spark read of these arguments runs."""
    from frazil.expressions import AlwaysTrue

    fields = ("*",) if selected_fields is None else tuple(selected_fields)
    scan = table.scan(
        row_filter=AlwaysTrue() if row_filter is None else row_filter,
        selected_fields=fields,
        case_sensitive=case_sensitive,
        snapshot_id=snapshot_id,
    )
    return scan if ref is None else scan.use_ref(ref)


def plan(
    table: Any,
    row_filter: Any = None,
    snapshot_id: int | None = None,
    ref: str | None = None,
    selected_fields: Sequence[str] | None = None,
    case_sensitive: bool = True,
) -> tuple[ScanPlan, dict[str, Any], pa.Schema]:
    """Plans a scan on the driver: (the Arrow plan, what executors need, read schema)."""
    from frazil.spark.write import io_spec
    from frazil.table.read import DEFAULT_BATCH_SIZE
    from frazil.table.scan import table_partition_type

    scan = scan_for(table, row_filter, snapshot_id, ref, selected_fields, case_sensitive)
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


def task_sizes(plan: ScanPlan) -> np.ndarray:
    """Each task's bytes to read: its data file and its delete files (in Arrow)."""
    tasks = plan.tasks
    sizes = tasks.column("file_size_in_bytes").to_numpy().astype(np.int64)
    refs = tasks.column("delete_file_references").combine_chunks()
    flat = pc.list_flatten(refs)
    if len(flat):
        deletes = plan.delete_files.column("file_size_in_bytes").to_numpy()
        parents = pc.list_parent_indices(refs).to_numpy()
        sizes = sizes + np.bincount(
            parents, weights=deletes[flat.to_numpy()], minlength=len(sizes)
        ).astype(np.int64)
    return np.asarray(sizes, dtype=np.int64)


def _split_size(table: Any) -> int:
    try:
        return max(int(table.properties.get(SPLIT_SIZE, DEFAULT_SPLIT_SIZE)), 1)
    except ValueError:
        return DEFAULT_SPLIT_SIZE


def group_tasks(sizes: np.ndarray, target: int, parallelism: int) -> list[np.ndarray]:
    """Task rows packed into Spark partitions of about ``target`` bytes (each task weighing
    at least the open-file cost, as Java's split planning), in plan order, and into at least
    ``parallelism`` partitions when there are that many tasks, so every core reads."""
    if len(sizes) == 0:
        return []
    weights = np.maximum(np.asarray(sizes, np.int64), OPEN_FILE_COST)
    per = min(target, max(int(weights.sum()) // max(parallelism, 1), 1))
    # greedy in plan order: a task opens a new partition when it would overfill the current
    starts = [0]
    weight = 0
    for i, w in enumerate(weights.tolist()):
        if i > starts[-1] and weight + w > per:
            starts.append(i)
            weight = 0
        weight += w
    bounds = [*starts, len(weights)]
    return [np.arange(bounds[k], bounds[k + 1]) for k in range(len(starts))]


def read(
    spark: Any,
    identifier: str | tuple[str, ...],
    catalog: Any,
    row_filter: Any = None,
    snapshot_id: int | None = None,
    ref: str | None = None,
    selected_fields: Sequence[str] | None = None,
) -> Any:
    """A Spark DataFrame of a table's rows: planned on the driver, read on the executors.

    ``row_filter`` is an expression or a filter string; ``snapshot_id`` or ``ref`` (a branch or
    tag) time-travel; ``selected_fields`` picks columns (metadata columns such as ``_file`` and
    ``_pos`` included). ``catalog`` is a frazil Catalog, a catalog name or a dict of catalog
    properties."""
    from frazil.spark.write import quiet_pyspark_warnings, resolve_catalog

    table = resolve_catalog(catalog).load_table(identifier)
    scan_plan, context, arrow_schema = plan(table, row_filter, snapshot_id, ref, selected_fields)
    schema = spark_schema(arrow_schema)
    log.info("%s: %d file scan tasks", table.full_name(), len(scan_plan))
    if not len(scan_plan):
        return spark.createDataFrame([], schema)
    groups = group_tasks(
        task_sizes(scan_plan), _split_size(table), spark.sparkContext.defaultParallelism
    )
    rows = [(encode_tasks(scan_plan, g),) for g in groups]
    rdd = spark.sparkContext.parallelize(rows, len(rows))
    from pyspark.sql.types import BinaryType, StructField, StructType

    tasks_df = spark.createDataFrame(rdd, StructType([StructField("tasks", BinaryType(), False)]))

    def run(batches: Iterator[pa.RecordBatch]) -> Any:
        return _read_partition(context, batches)

    with quiet_pyspark_warnings():
        return tasks_df.mapInArrow(run, schema)
