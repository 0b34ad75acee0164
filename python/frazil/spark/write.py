"""Distributed writes: Spark executors write the Parquet files, the driver commits them once.

:func:`write` is the path of a DataFrame into a frazil table:

1. On the driver, the table is loaded and its metadata serialized (JSON) for the executors,
   with the FileIO's properties (each executor rebuilds the FileIO with
   :func:`frazil.io.load_file_io`).
2. ``write.distribution-mode`` (Java's default: ``range`` for a sorted table, ``hash`` for a
   partitioned one, else ``none``): ``hash`` repartitions the rows by their partition values
   so each task writes few partitions, ``range`` range-partitions by them and then the sort
   order, ``none`` keeps Spark's partitioning. The shuffle keys are JVM expressions where
   Spark has an equivalent (identity, years/months/days/hours, integer and string truncate:
   no Python round trip); ``bucket`` (and decimal truncate) keys go through frazil's Arrow
   UDFs, as Spark must know a row's key before the shuffle.
3. Each task streams its Arrow batches (``mapInArrow``) through frazil's
   :class:`~frazil.table.write.writer.DataFileWriter`, which computes the partition values
   with the native kernels in that same Arrow pass (no other UDF), sorts the rows by partition
   and sort order (so each file holds one partition, as Java's clustered writer expects), rolls
   files at ``write.target-file-size-bytes``, and names them as Java's Spark writes do
   (``<partition id:05d>-<task attempt id>-<write id>-0-<n:05d>.parquet``, Java's
   ``OutputFileFactory`` with a batch write's epoch 0); it returns one row per data file: its
   description as the spec's content-file JSON (:func:`frazil.table.scan.content_file_to_json`).
4. The driver collects those rows and commits them in ONE transaction (a merge or fast append,
   or an overwrite), which retries on conflicts by itself.

Failed and speculative task attempts: only rows of the successful attempt of each partition
reach the driver (Spark keeps one result per partition), so only those files are committed.
Files of other attempts are removed three ways: a task that raises deletes what it wrote
before failing (the writer's ``abort``); file names hold the write id and the task attempt id,
so that, when any partition needed more than one attempt (or speculation is on), the driver
lists the directories the committed files landed in (a retry of a partition writes the same
partition values, so the same directories) and deletes files of this write that were not
committed, which also catches attempts killed without a chance to clean up; and when the Spark
job or the commit fails, the files reported by the successful tasks (a Spark accumulator, which
counts successful attempts only) are deleted. With the object-storage layout
(``write.object-storage.enabled``) file directories are hashed, so the directory sweep is not
possible: killed attempts may leave orphan files, which orphan-file removal collects.

Overwrites: ``overwrite_mode="dynamic"`` replaces the partitions the new files belong to (Java's
``ReplacePartitions``: every live data and delete file with the same spec and partition tuple,
whatever the transform; an empty write commits nothing). A static ``mode="overwrite"`` without
a filter replaces every live file of the branch; with ``overwrite_filter`` it deletes the files
whose live rows all match the filter (a file whose partition proves it, or whose rows were read
and all match), keeps the files none of whose rows match, and, as the Java reference's
``overwriteByRowFilter``, refuses files where only some rows match, unless the transaction
offers row-level deletes (``Transaction.delete``), which is then used for the whole filter.
Concurrent commits that add files whose partition may match the filter fail the overwrite
(serializable isolation).
"""

from __future__ import annotations

import json
import logging
import posixpath
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, overload

import pyarrow as pa

from frazil.arrow_schema import schema_to_arrow
from frazil.exceptions import InvalidArgumentError, UnsupportedError
from frazil.expressions import AlwaysFalse, AlwaysTrue, bind, from_json
from frazil.io import property_bool
from frazil.manifest.content_file import DataFileContent
from frazil.metadata import TableMetadata
from frazil.partitioning import UnknownTransform, is_void
from frazil.schema import Schema
from frazil.sorting import NullOrder, SortDirection
from frazil.spark import functions as fs
from frazil.spark.common import executor_io, io_spec, quiet_pyspark_warnings, resolve_catalog
from frazil.table.scan import DataScan, content_file_from_json, content_file_to_json
from frazil.table.scan.filter import RowFilter
from frazil.table.scan.plan import planner_for
from frazil.table.scan.read import read_task
from frazil.table.write.locations import OBJECT_STORE_ENABLED
from frazil.table.write.writer import MANIFEST_MERGE_ENABLED, DataFileWriter

if TYPE_CHECKING:
    from pyspark.accumulators import AccumulatorParam

    from frazil.metadata import Snapshot, TableMetadata
    from frazil.table import Table

__all__ = ["commit_files", "prepare_commit", "resolve_catalog", "write"]

log = logging.getLogger(__name__)

DISTRIBUTION_MODE = "write.distribution-mode"
_RESULT_SCHEMA = "file string, partition int, attempt int, task_attempt_id long"


# ---------------------------------------------------------------------------------------------
# driver helpers


_DAY_MICROS = 86_400_000_000
_HOUR_MICROS = 3_600_000_000


def _cluster_key(col: Any, spark_type: Any, transform: str) -> Any:
    """A Spark Column equal for two rows when ``transform`` gives them the same value, and
    ordered as the transform's values: the key Spark shuffles (hash) or range-partitions by.

    Only the clustering depends on it (the writer computes partition values itself), so where
    Spark has the function natively (identity, dates and timestamps, integer and string
    truncation) the key is a JVM expression: no Python round trip before the shuffle. Bucket
    and decimal truncation use frazil's Arrow UDFs."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if transform == "identity":
        return col
    if transform.startswith("bucket["):
        return fs.bucket(int(transform[7:-1]), col)
    if transform.startswith("truncate["):
        width = int(transform[9:-1])
        if isinstance(spark_type, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
            # in long arithmetic; an overflow (values near the long minimum) gives a null key
            # rather than an ANSI error: the clustering merges them, the values stay exact
            value = col.cast("long")
            start = F.pmod(value, F.lit(width).cast("long"))
            return F.try_subtract(value, start)
        if isinstance(spark_type, (T.StringType, T.BinaryType)):
            return F.substring(col, 1, width)  # code points of strings, bytes of binaries
        return fs.truncate(width, col)
    if transform not in ("year", "month", "day", "hour"):
        raise UnsupportedError(f"cannot cluster by partition transform {transform}")
    ntz = getattr(T, "TimestampNTZType", None)
    if isinstance(spark_type, T.DateType):
        day = col
    elif ntz is not None and isinstance(spark_type, ntz):
        # no time zone: the wall clock is the value
        if transform == "hour":
            return F.struct(F.to_date(col), F.hour(col))
        day = F.to_date(col)
    elif isinstance(spark_type, T.TimestampType):
        # UTC instants: epoch micros, never the session time zone; the start of the hour or
        # day in long arithmetic, so every row of a partition gets the very same key
        micros = F.unix_micros(col)
        if transform == "hour":
            return micros - F.pmod(micros, F.lit(_HOUR_MICROS))
        day_start = micros - F.pmod(micros, F.lit(_DAY_MICROS))
        if transform == "day":
            return day_start
        day = F.date_from_unix_date((day_start / F.lit(_DAY_MICROS)).cast("int"))
    else:
        return getattr(fs, transform + "s")(col)
    if transform == "day":
        return day
    return F.trunc(day, "year" if transform == "year" else "month")


def _column_of(df: Any, name: str) -> tuple[Any, Any]:
    """The Spark Column of a (possibly nested) schema name and its Spark type."""
    from pyspark.sql import functions as F

    try:
        col = df[name]
    except Exception:  # nested names and case differences: let Spark resolve
        col = F.col(name)
    return col, df.select(col).schema.fields[0].dataType


_BUCKET_KEY = "__frazil_bucket_key"


def _partition_keys(df: Any, metadata: TableMetadata) -> tuple[Any, list[Any], list[str]]:
    """Cluster keys of the default spec's partition values (see :func:`_cluster_key`): the
    DataFrame with the key columns computed in steps (the JVM bucket keys of integer-like
    columns, :func:`frazil.spark.functions._with_bucket_key`), the keys, and the names of
    those added columns."""
    from pyspark.sql import functions as F

    schema = metadata.schema()
    keys: list[Any] = []
    added: list[str] = []
    for pf in metadata.spec().fields:
        if is_void(pf.transform):
            continue
        name = schema.find_column_name(pf.source_id)
        if name is None:
            continue
        col, spark_type = _column_of(df, name)
        transform = str(pf.transform)
        if transform.startswith("bucket[") and fs._hashes_as_long(spark_type):
            key = f"{_BUCKET_KEY}{len(added)}"
            df = fs._with_bucket_key(df, int(transform[7:-1]), col, spark_type, key)
            keys.append(F.col(key))
            added.append(key)
        else:
            keys.append(_cluster_key(col, spark_type, transform))
    return df, keys, added


def _sort_keys(df: Any, metadata: TableMetadata) -> list[Any]:
    """The table's sort order as Spark sort Columns (directions and null orders as declared)."""
    schema = metadata.schema()
    keys = []
    for sf in metadata.sort_order().fields:
        name = schema.find_column_name(sf.source_id)
        if name is None or isinstance(sf.transform, UnknownTransform):
            continue
        col, spark_type = _column_of(df, name)
        key = _cluster_key(col, spark_type, str(sf.transform))
        first = sf.null_order == NullOrder.NULLS_FIRST
        if sf.direction == SortDirection.ASC:
            keys.append(key.asc_nulls_first() if first else key.asc_nulls_last())
        else:
            keys.append(key.desc_nulls_first() if first else key.desc_nulls_last())
    return keys


def distribution_mode(metadata: TableMetadata) -> str:
    """``write.distribution-mode``, defaulting as Java's ``SparkWriteConf``: ``range`` for a
    sorted table, ``hash`` for a partitioned one, else ``none``."""
    if not metadata.sort_order().is_unsorted():
        default = "range"
    elif any(not is_void(f.transform) for f in metadata.spec().fields):
        default = "hash"
    else:
        default = "none"
    mode = metadata.properties.get(DISTRIBUTION_MODE, default).strip().lower()
    if mode not in ("none", "hash", "range"):
        raise InvalidArgumentError(f"{DISTRIBUTION_MODE}={mode!r}: expected none, hash or range")
    return mode


def _cluster(df: Any, metadata: TableMetadata) -> Any:
    """The DataFrame distributed as the table asks (Java's distribution modes): ``hash``
    shuffles by the partition values, ``range`` range-partitions by them then the sort order,
    ``none`` keeps Spark's partitioning. Within a task, the writer sorts by partition and sort
    order itself (in Arrow), so no Spark sort is asked for."""
    mode = distribution_mode(metadata)
    if mode == "none":
        return df
    keyed, keys, added = _partition_keys(df, metadata)
    if mode == "range":
        keys = keys + _sort_keys(df, metadata)
        out = keyed.repartitionByRange(*keys) if keys else keyed
    else:
        out = keyed.repartition(*keys) if keys else keyed
    return out.drop(*added) if added else out


# ---------------------------------------------------------------------------------------------
# executor side


def _list_param() -> AccumulatorParam[list[str]]:
    from pyspark.accumulators import AccumulatorParam

    class _Paths(AccumulatorParam[list[str]]):
        def zero(self, value: list[str]) -> list[str]:
            return []

        def addInPlace(self, a: list[str], b: list[str]) -> list[str]:
            a.extend(b)
            return a

    return _Paths()


def write_task_files(
    meta_json: str,
    io_props: Mapping[str, str],
    io_location: str | None,
    write_id: str,
    batches: Iterator[pa.RecordBatch],
    *,
    hook: Callable[[list[Any]], None] | None = None,
) -> TaskFiles:
    """Writes one Spark task's rows as data files of the table. On any error the files are
    deleted before re-raising."""
    try:
        from pyspark import TaskContext

        ctx = TaskContext.get()
    except ImportError:  # pragma: no cover - outside Spark
        ctx = None
    partition = ctx.partitionId() if ctx is not None else 0
    attempt = ctx.attemptNumber() if ctx is not None else 0
    task_attempt_id = ctx.taskAttemptId() if ctx is not None else 0
    first = next(batches, None)
    if first is None:
        return TaskFiles([], [], partition, attempt, task_attempt_id)

    def chain() -> Iterator[pa.RecordBatch]:
        yield first
        yield from batches

    metadata = TableMetadata.from_json(meta_json)
    io = executor_io(io_props, io_location)
    # Java's Spark writes name files <partition id:05d>-<task attempt id>-<query id>-<epoch>-
    # <n:05d> (OutputFileFactory with operation id "<query id>-<epoch>", epoch 0 in a batch
    # write), so files of different attempts of one partition never collide and the write id
    # finds this write's files (the sweep of failed attempts)
    writer = DataFileWriter(
        io,
        metadata,
        operation_id=f"{write_id}-0",
        partition_id=partition,
        task_id=task_attempt_id,
    )
    # One file per partition at a time, as Java's tasks write: Spark runs a task per core
    # already; the task's encoding still overlaps its reading of Spark's batches.
    writer.concurrent_files = 1
    files = writer.write(chain())
    try:
        if hook is not None:
            hook(files)
    except BaseException:
        writer.abort()
        raise
    schema, specs = metadata.schema(), metadata.specs()
    texts = [json.dumps(content_file_to_json(f, specs[f.spec_id], schema)) for f in files]
    return TaskFiles(files, texts, partition, attempt, task_attempt_id)


@dataclass
class TaskFiles:
    """What one Spark task wrote: the data files, the same as content-file JSON (what the
    driver commits), and the task's partition id, attempt number and task attempt id."""

    files: list[Any]
    texts: list[str]
    partition: int
    attempt: int
    task_attempt_id: int

    @property
    def paths(self) -> list[str]:
        return [f.file_path for f in self.files]


def _write_partition(
    meta_json: str,
    io_props: Mapping[str, str],
    io_location: str | None,
    write_id: str,
    hook: Callable[[list[Any]], None] | None,
    accumulator: Any,
    batches: Iterator[pa.RecordBatch],
) -> Iterator[pa.RecordBatch]:
    written = write_task_files(meta_json, io_props, io_location, write_id, batches, hook=hook)
    if not written.files:
        return
    if accumulator is not None:
        accumulator.add(written.paths)
    n = len(written.texts)
    yield pa.RecordBatch.from_arrays(
        [
            pa.array(written.texts, pa.string()),
            pa.array([written.partition] * n, pa.int32()),
            pa.array([written.attempt] * n, pa.int32()),
            pa.array([written.task_attempt_id] * n, pa.int64()),
        ],
        names=["file", "partition", "attempt", "task_attempt_id"],
    )


# ---------------------------------------------------------------------------------------------
# overwrite planning


def _overwrite_plan(
    table: Table, branch: str | None, overwrite_filter: Any
) -> tuple[list[str], bool, Any]:
    """(paths of files to delete whole, whether some file matches only partly, bound filter)."""
    md = table.metadata
    scan = DataScan(md, table.io, row_filter=overwrite_filter)
    if branch is not None and branch in md.refs:
        scan = scan.use_ref(branch)
    elif branch is not None:  # a new branch starts empty
        return [], False, AlwaysTrue()
    if scan.snapshot() is None:
        return [], False, AlwaysTrue()
    schema = scan.table_schema()
    bound = bind(schema, scan.row_filter, scan.case_sensitive)
    if isinstance(bound, AlwaysFalse):
        return [], False, bound
    whole: list[str] = []
    partial = False
    mapping = md.name_mapping()

    for task in scan.plan_files():
        if isinstance(task.residual, AlwaysTrue):
            whole.append(task.file.file_path)
            continue
        if isinstance(task.residual, AlwaysFalse):
            continue

        def count(residual: Any, task: Any = task) -> int:
            batches = read_task(
                task,
                table.io,
                schema,
                Schema(),
                metadata_columns=["_pos"],
                name_mapping=mapping,
                residual=residual,
            )
            return sum(b.num_rows for b in batches)

        matching = count(task.residual)
        if matching == 0:
            continue
        if matching == count(AlwaysTrue()):
            whole.append(task.file.file_path)
        else:
            partial = True
    return whole, partial, bound


def _might_match(metadata: TableMetadata, bound: Any) -> Callable[[Any], bool]:
    """A predicate over data files: may the file hold rows matching ``bound`` (by its partition
    values and the filter's inclusive projection)? True when unsure."""
    if isinstance(bound, AlwaysTrue):
        return lambda f: True
    schema = metadata.schema()
    try:
        planner = planner_for(metadata, schema, bound)
    except Exception:
        log.debug("no partition projection for %s", bound, exc_info=True)
        return lambda f: True
    specs = metadata.specs()

    def check(f: Any) -> bool:
        try:
            spec = specs[f.spec_id]
            pschema = Schema(*spec.partition_type(schema).fields)
            expr = from_json(json.loads(planner.partition_filter_json(f.spec_id)), pschema)
            if isinstance(expr, AlwaysTrue):
                return True
            arrow_schema = schema_to_arrow(pschema)
            row = pa.Table.from_pylist(
                [dict(zip(arrow_schema.names, f.partition, strict=True))], schema=arrow_schema
            )
            return bool(RowFilter(expr, pschema).filter_table(row).num_rows > 0)
        except Exception:
            log.debug("conflict check of %s: assuming a match", f.file_path, exc_info=True)
            return True

    return check


# ---------------------------------------------------------------------------------------------
# cleanup


def sweep(table: Table, write_id: str, committed: set[str]) -> int:
    """Deletes files of this write (named with ``write_id``) that were not committed, in the
    directories the committed files landed in. Returns how many were deleted."""
    if table.properties.get(OBJECT_STORE_ENABLED, "false").strip().lower() == "true":
        log.info("object-storage layout: files of failed attempts are left for orphan removal")
        return 0
    io = table.io
    dirs = {posixpath.dirname(p) for p in committed}
    deleted = 0
    for d in sorted(dirs):
        try:
            listed = io.list_prefix(d)
        except Exception:
            log.warning("could not list %s to remove files of failed attempts", d, exc_info=True)
            continue
        for path in listed:
            if posixpath.dirname(path) != d or write_id not in posixpath.basename(path):
                continue
            if path not in committed:
                io.delete(path)
                deleted += 1
    if deleted:
        log.info("deleted %d files of failed or speculative task attempts", deleted)
    return deleted


def _delete_quietly(table: Table, paths: list[str]) -> None:
    for p in paths:
        try:
            table.io.delete(p)
        except Exception:
            log.warning("could not delete %s", p, exc_info=True)


# ---------------------------------------------------------------------------------------------
# the write


@overload
def write(
    df: Any,
    identifier: str | tuple[str, ...],
    catalog: Any,
    mode: str = "append",
    overwrite_filter: Any = None,
    snapshot_properties: Mapping[str, str] | None = None,
    branch: str | None = None,
    overwrite_mode: Literal["static"] = "static",
    *,
    _executor_hook: Callable[[list[Any]], None] | None = None,
) -> Snapshot: ...


@overload
def write(
    df: Any,
    identifier: str | tuple[str, ...],
    catalog: Any,
    mode: str = "append",
    overwrite_filter: Any = None,
    snapshot_properties: Mapping[str, str] | None = None,
    branch: str | None = None,
    overwrite_mode: str = "static",
    *,
    _executor_hook: Callable[[list[Any]], None] | None = None,
) -> Snapshot | None: ...


def write(
    df: Any,
    identifier: str | tuple[str, ...],
    catalog: Any,
    mode: str = "append",
    overwrite_filter: Any = None,
    snapshot_properties: Mapping[str, str] | None = None,
    branch: str | None = None,
    overwrite_mode: str = "static",
    *,
    _executor_hook: Callable[[list[Any]], None] | None = None,
) -> Snapshot | None:
    """Writes a Spark DataFrame into a table: Parquet files written by the executors, one commit
    on the driver. Returns the snapshot committed.

    ``mode`` is ``"append"`` or ``"overwrite"``; a static overwrite (``overwrite_mode``
    ``"static"``, the default) without ``overwrite_filter`` replaces the table's (or branch's)
    rows, with one (an expression or a filter string) the rows matching it (see the module
    docstring for which files qualify); a dynamic overwrite (``overwrite_mode="dynamic"``, Java's
    ``overwrite-mode=dynamic``) replaces the partitions the DataFrame's rows fall in, and
    commits nothing (returns ``None``) when the DataFrame is empty. ``catalog`` is a frazil
    Catalog, a catalog name or a dict of catalog properties.
    """

    mode = mode.lower()
    if mode not in ("append", "overwrite"):
        raise InvalidArgumentError(f"mode must be 'append' or 'overwrite', not {mode!r}")
    if overwrite_filter is not None and mode != "overwrite":
        raise InvalidArgumentError("overwrite_filter needs mode='overwrite'")
    dynamic = parse_overwrite_mode(overwrite_mode) == "dynamic"
    if dynamic and overwrite_filter is not None:
        raise InvalidArgumentError("a dynamic overwrite replaces partitions, not a filter")
    cat = resolve_catalog(catalog)
    table = cat.load_table(identifier)
    md = table.metadata

    prepared = prepare_commit(table, "append" if dynamic else mode, overwrite_filter, branch)

    spark = df.sparkSession
    sc = spark.sparkContext
    write_id = str(uuid.uuid4())
    io_props, io_location = io_spec(table)
    accumulator = sc.accumulator([], _list_param())
    fn = _bind(
        _write_partition,
        md.to_json(),
        io_props,
        io_location,
        write_id,
        _executor_hook,
        accumulator,
    )
    clustered = _cluster(df, md)
    rows: list[Any] = []
    try:
        with quiet_pyspark_warnings():
            rows = clustered.mapInArrow(fn, _RESULT_SCHEMA).collect()
    except BaseException:
        _delete_quietly(table, list(accumulator.value or []))
        raise

    texts = [r["file"] for r in rows]
    retried = any(r["attempt"] > 0 for r in rows) or (
        sc.getConf().get("spark.speculation", "false").lower() == "true"
    )
    reported = set(accumulator.value or [])
    log.info(
        "%s: %d data files written by %d tasks",
        table.full_name(),
        len(texts),
        len({r["partition"] for r in rows}),
    )
    # as Java's SparkWrite: the application in every summary, the caller's properties over it
    app_id = sc.applicationId
    props = {**({"spark.app.id": app_id} if app_id else {}), **(snapshot_properties or {})}
    try:
        snap = commit_files(
            table,
            texts,
            mode,
            overwrite_filter,
            props,
            branch,
            prepared,
            overwrite_mode,
        )
    except BaseException:
        _delete_quietly(table, sorted(reported))
        raise
    committed = {_file_path(t) for t in texts}
    if retried:
        sweep(table, write_id, committed)
    stray = reported - committed
    if stray:
        _delete_quietly(table, sorted(stray))
    return snap


def _file_path(text: str) -> str:
    return str(json.loads(text)["file-path"])


@dataclass
class PreparedCommit:
    """What an overwrite deletes, decided against the table before the files are written."""

    to_delete: list[str]
    row_level: bool
    bound: Any
    base_snapshot_id: int | None


def prepare_commit(
    table: Table, mode: str, overwrite_filter: Any = None, branch: str | None = None
) -> PreparedCommit:
    """Plans an overwrite's deletes (refusing a filter that splits files when the table has no
    row-level deletes); nothing for an append."""
    md = table.metadata
    base = md.snapshot_by_name(branch) if branch else md.current_snapshot()
    base_id = base.snapshot_id if base is not None else None
    if mode != "overwrite":
        return PreparedCommit([], False, AlwaysTrue(), base_id)
    filt: Any = AlwaysTrue() if overwrite_filter is None else overwrite_filter
    to_delete, partial, bound = _overwrite_plan(table, branch, filt)
    if partial and not hasattr(table.transaction(), "delete"):
        raise UnsupportedError(
            f"{table.full_name()}: cannot overwrite by {filt}: some data files hold rows both "
            "matching and not matching it, and only whole files can be deleted (use a filter "
            "on partition columns)"
        )
    return PreparedCommit(to_delete, partial, bound, base_id)


def commit_files(
    table: Table,
    file_texts: list[str],
    mode: str = "append",
    overwrite_filter: Any = None,
    snapshot_properties: Mapping[str, str] | None = None,
    branch: str | None = None,
    prepared: PreparedCommit | None = None,
    overwrite_mode: str = "static",
) -> Snapshot | None:
    """Commits data files (content-file JSON) written for ``table`` in one transaction: an
    append (merge or fast, per ``commit.manifest-merge.enabled``) or an overwrite, static
    (everything, or what ``overwrite_filter`` selects) or dynamic (``overwrite_mode="dynamic"``:
    the partitions the files belong to). On failure the files are deleted. Returns the snapshot
    committed (``None`` for a dynamic overwrite that wrote no file: nothing is replaced)."""
    md = table.metadata
    files = [content_file_from_json(json.loads(t), md.specs(), md.schema()) for t in file_texts]
    dynamic = parse_overwrite_mode(overwrite_mode) == "dynamic" and mode == "overwrite"
    if dynamic and overwrite_filter is not None:
        raise InvalidArgumentError("a dynamic overwrite replaces partitions, not a filter")
    if dynamic and not files:
        # as Java's DynamicOverwrite: nothing written, no partition replaced, no snapshot
        log.info("%s: dynamic overwrite wrote nothing, nothing to commit", table.full_name())
        return None
    try:
        if prepared is None:
            base_mode = "append" if dynamic else mode
            prepared = prepare_commit(table, base_mode, overwrite_filter, branch)
        filt: Any = AlwaysTrue() if overwrite_filter is None else overwrite_filter
        with table.transaction() as tx:
            producer: Any
            if dynamic:
                producer = _replace_partitions(tx, files, snapshot_properties, branch, prepared)
            elif mode == "overwrite" and prepared.row_level:
                tx.delete(filt, snapshot_properties=snapshot_properties, branch=branch)
            if dynamic:
                pass
            elif mode == "overwrite" and not prepared.row_level and (prepared.to_delete or files):
                producer = tx.update_snapshot(snapshot_properties, branch).overwrite()
                for p in prepared.to_delete:
                    producer.delete_data_file(p)
                producer.validate_from_snapshot(prepared.base_snapshot_id)
                producer.conflict_detection(_might_match(md, prepared.bound))
            else:
                update = tx.update_snapshot(snapshot_properties, branch)
                merge = property_bool(md.properties, MANIFEST_MERGE_ENABLED)
                producer = update.merge_append() if merge is None or merge else update.fast_append()
            for f in files:
                if f.content == DataFileContent.DATA:
                    producer.append_data_file(f)
            tx.stage(producer)
    except BaseException:
        _delete_quietly(table, [f.file_path for f in files])
        raise
    # This producer's own snapshot: with concurrent writers sharing a Table object, the
    # branch head may already be another writer's.
    snap = table.metadata.snapshot_by_id(producer.snapshot_id)
    if snap is None:  # pragma: no cover - a commit always makes a snapshot
        raise InvalidArgumentError(f"{table.full_name()}: nothing was committed")
    return snap


def parse_overwrite_mode(value: str | None) -> str:
    """A write's overwrite mode: ``static`` (the default) or ``dynamic``."""
    mode = (value or "static").strip().lower()
    if mode not in ("static", "dynamic"):
        raise InvalidArgumentError(f"overwrite mode must be 'static' or 'dynamic', not {value!r}")
    return mode


def _replace_partitions(
    tx: Any,
    files: list[Any],
    snapshot_properties: Mapping[str, str] | None,
    branch: str | None,
    prepared: PreparedCommit,
) -> Any:
    """Java's ``ReplacePartitions``: the live data and delete files of the partitions (spec id
    and partition tuple) the new files belong to are removed, whatever transform made them; in an
    unpartitioned spec, every file of that spec. Serializable: a concurrent commit adding a file
    to one of those partitions fails this one."""
    replaced = {(f.spec_id, tuple(f.partition)) for f in files}

    def in_replaced(f: Any) -> bool:
        return (f.spec_id, tuple(f.partition)) in replaced

    props = {"replace-partitions": "true", **(snapshot_properties or {})}
    producer = tx.update_snapshot(props, branch).overwrite()
    producer.delete_partitions(in_replaced)
    producer.validate_from_snapshot(prepared.base_snapshot_id)
    producer.conflict_detection(in_replaced)
    return producer


def _bind(fn: Callable[..., Any], *args: Any) -> Callable[[Iterator[pa.RecordBatch]], Any]:
    def run(batches: Iterator[pa.RecordBatch]) -> Any:
        return fn(*args, batches)

    return run
