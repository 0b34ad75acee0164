"""frazil as a PySpark 4.x Python data source: ``spark.read.format("frazil")`` and
``df.write.format("frazil")``.

::

    frazil.spark.register_data_source(spark)
    df = (
        spark.read.format("frazil")
        .option("catalog", "prod")                      # a configured catalog, or:
        .option("catalog.warehouse", "/data/warehouse")  # catalog properties, "catalog." + key
        .load("db.events")
    )
    df.write.format("frazil").option("catalog", "prod").mode("append").save("db.events")

Read options: ``snapshot-id``, ``as-of-timestamp`` (epoch milliseconds), ``branch``, ``tag``
(or ``ref``, either), ``filter`` (a frazil filter string), ``selected-fields`` (comma-separated;
metadata columns ``_file``, ``_pos``, ``_spec_id``, ``_partition``, ``_row_id``,
``_last_updated_sequence_number`` too), and Java's split options ``split-size``,
``file-open-cost``, ``lookback`` (default: the table's ``read.split.*`` properties). On PySpark
4.1+ Spark's filters are pushed down (``DataSourceReader.pushFilters``): those frazil can
translate prune manifests and files and are applied exactly by the reader; comparisons on float
and timestamp columns are also handed back for Spark to evaluate (Spark's coercions of their
literals are its own). PySpark's Python data source API has no column pruning: the reader reads
the columns of ``selected-fields`` (default all) and Spark drops what the query does not use.

Partitions are planned like Java's reader: files over the split size are split at row-group
boundaries (their ``split_offsets``), small files are combined up to the split size (each
weighing at least the open-file cost); each partition carries its rows of the Arrow plan, and
``read`` yields Arrow record batches (deletes and the residual applied natively).

Writes: ``mode("append")`` appends; ``mode("overwrite")`` replaces the table's rows, or with
``overwrite-filter`` (a frazil filter string) those matching it, or with
``overwrite-mode=dynamic`` (Java's option) the partitions the written rows fall in. Options
``branch`` and ``snapshot-property.<key>`` (Java's). Executors write with frazil's writer and
report the files in their commit messages; Spark calls ``commit`` once with the messages of the
successful attempts, so files of failed attempts are never committed; when a task needed a
retry, ``commit`` deletes the files of this write that were not committed in the directories
the committed files landed in (an attempt killed after writing); ``abort`` (a failed job)
deletes the reported files, and a task that raises deletes its own. Data files are named as
Java's Spark writes name them (``<partition id:05d>-<task attempt id>-<write id>-0-<n:05d>``).

Distribution: the Python data source API gives no way to ask Spark for a distribution or
ordering (Java's ``RequiresDistributionAndOrdering``), nor does it see Spark's
``spark.sql.sources.partitionOverwriteMode``. So ``write.distribution-mode`` is not applied:
each task writes the rows its partition holds, clustered by partition (then the table's sort
order) within the task by frazil's writer, so each data file holds one partition and rolls at
``write.target-file-size-bytes``, but a partition seen by several tasks gets a file from each.
Repartition the DataFrame by the partition columns first, or use :func:`frazil.spark.write`,
which applies the distribution mode.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    InputPartition,
    WriterCommitMessage,
)

from frazil import expressions as E
from frazil.exceptions import InvalidArgumentError
from frazil.expressions import And, parse
from frazil.spark._worker import prepare_worker
from frazil.spark.common import (
    catalog_from_options,
    executor_io,
    io_spec,
    read_args,
    refuse_master_keys,
    table_identifier,
)
from frazil.spark.read import (
    SplitOptions,
    encode_tasks,
    partitions,
    plan,
    read_tasks,
    scan_for,
    spark_schema,
)
from frazil.spark.streaming import FrazilStreamReader, FrazilStreamWriter
from frazil.spark.write import (
    commit_files,
    parse_overwrite_mode,
    prepare_commit,
    sweep,
    write_task_files,
)

__all__ = ["FrazilDataSource", "FrazilDataSourceNoPushdown", "register_data_source"]

log = logging.getLogger(__name__)


PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


def register_data_source(spark: Any, pushdown: bool | None = None) -> None:
    """Registers the ``frazil`` format with ``spark`` (PySpark 4.0+).

    Spark refuses a reader that implements ``pushFilters`` unless
    ``spark.sql.python.filterPushdown.enabled`` is true (PySpark 4.1+). ``pushdown=None``
    follows that setting, ``True`` turns it on for the session, ``False`` registers a reader
    without pushdown."""
    from pyspark.sql.datasource import DataSourceReader as _Reader

    supported = hasattr(_Reader, "pushFilters")
    if pushdown and supported:
        spark.conf.set(PUSHDOWN_CONF, "true")
    elif pushdown is None:
        pushdown = supported and spark.conf.get(PUSHDOWN_CONF, "false").lower() == "true"
    spark.dataSource.register(FrazilDataSource if pushdown else FrazilDataSourceNoPushdown)


class FrazilDataSource(DataSource):  # type: ignore[misc]  # untyped before Spark 4
    """The ``frazil`` format (see the module docstring)."""

    @classmethod
    def name(cls) -> str:
        return "frazil"

    def _table(self) -> Any:
        return catalog_from_options(self.options).load_table(table_identifier(self.options))

    def schema(self) -> Any:
        args = read_args(self.options)
        args["row_filter"] = None
        return spark_schema(scan_for(self._table(), **args).arrow_schema())

    def reader(self, schema: Any) -> DataSourceReader:
        return FrazilReader(dict(self.options))

    def writer(self, schema: Any, overwrite: bool) -> FrazilWriter:
        return FrazilWriter(dict(self.options), overwrite)

    # Structured Streaming: frazil.spark.streaming
    def streamWriter(self, schema: Any, overwrite: bool) -> Any:
        return FrazilStreamWriter(self.options, overwrite)

    def streamReader(self, schema: Any) -> Any:
        return FrazilStreamReader(self.options)


class FrazilDataSourceNoPushdown(FrazilDataSource):
    """The ``frazil`` format with a reader that does not push filters down."""

    def reader(self, schema: Any) -> DataSourceReader:
        return FrazilPlainReader(dict(self.options))


# ---------------------------------------------------------------------------------------------
# reads


_EXACT_TYPES = ("int", "long", "string", "date", "decimal", "boolean", "binary")


def translate_filter(f: Any, types: dict[str, str]) -> tuple[Any, bool] | None:
    """A Spark data source filter as a frazil expression, and whether frazil's result is exactly
    Spark's (else Spark evaluates it again); None when it cannot be translated."""
    import datetime as dt
    from decimal import Decimal

    from pyspark.sql import datasource as ds

    def name_of(attr: Any) -> str | None:
        parts = tuple(attr)
        if not parts or any("." in p for p in parts):
            return None
        return ".".join(parts)

    def plain(v: Any) -> bool:
        if isinstance(v, dt.datetime):
            return False  # Spark's timestamp literals and zones: left to Spark
        return isinstance(v, (bool, int, float, str, bytes, Decimal, dt.date))

    if isinstance(f, ds.Not):
        # Spark's filters are SQL's (3-valued); frazil's expressions are the spec's (2-valued):
        # SQL's NOT c is true where c is false, not where it is unknown (a null operand), so it
        # is the spec's NOT c AND x IS NOT NULL (the spec's "Boolean logic" section).
        inner = translate_filter(f.child, types)
        if inner is None:
            return None
        if isinstance(f.child, (ds.IsNull, ds.IsNotNull)):
            return E.Not(inner[0]), inner[1]
        child_name = name_of(getattr(f.child, "attribute", ()))
        if child_name is None:
            return None
        return E.And(E.Not(inner[0]), E.NotNull(child_name)), inner[1]
    name = name_of(getattr(f, "attribute", ()))
    if name is None:
        return None
    base_type = types.get(name, "").split("(")[0]
    exact = base_type in _EXACT_TYPES
    if isinstance(f, ds.IsNull):
        return E.IsNull(name), True
    if isinstance(f, ds.IsNotNull):
        return E.NotNull(name), True
    if isinstance(f, ds.In):
        values = tuple(f.value)
        if not values or not all(plain(v) and v is not None for v in values):
            return None
        return E.In(name, values), exact
    ops = {
        ds.EqualTo: E.EqualTo,
        ds.GreaterThan: E.GreaterThan,
        ds.GreaterThanOrEqual: E.GreaterThanOrEqual,
        ds.LessThan: E.LessThan,
        ds.LessThanOrEqual: E.LessThanOrEqual,
        ds.StringStartsWith: E.StartsWith,
    }
    make = ops.get(type(f))
    if make is None or f.value is None or not plain(f.value):
        return None
    if base_type in ("float", "double") and make in (E.GreaterThan, E.GreaterThanOrEqual):
        # Spark orders NaN above every number (the spec makes a comparison with NaN false):
        # keep NaN rows for Spark to judge, as this filter is not exact on floats
        return E.Or(make(name, f.value), E.IsNaN(name)), exact
    return make(name, f.value), exact


class FrazilPlainReader(DataSourceReader):  # type: ignore[misc]  # untyped before Spark 4
    def __init__(self, options: dict[str, str]) -> None:
        refuse_master_keys(options)  # this reader is pickled to the executors
        self.options = options
        self.pushed: list[Any] = []

    def partitions(self) -> list[InputPartition]:
        return _partitions(self)

    def read(self, partition: InputPartition) -> Iterator[Any]:
        prepare_worker()
        if partition.value is None:
            return  # Spark's one placeholder partition when a scan plans none (an empty table)
        # the reader that planned is not the one that reads: partitions carry what reads need
        tasks, context = partition.value
        yield from read_tasks(context, tasks)


class FrazilReader(FrazilPlainReader):
    def pushFilters(self, filters: list[Any]) -> Iterator[Any]:
        table = catalog_from_options(self.options).load_table(table_identifier(self.options))
        types = {
            table.schema().find_column_name(fid) or "": str(f.field_type)
            for fid, f in _all_fields(table.schema())
        }
        for f in filters:
            try:
                translated = translate_filter(f, types)
            except Exception:
                log.debug("cannot push %s", f, exc_info=True)
                translated = None
            if translated is None:
                yield f
                continue
            expr, exact = translated
            self.pushed.append(expr)
            if not exact:
                yield f


def _partitions(reader: FrazilPlainReader) -> list[InputPartition]:
    """Plans the scan; each partition is a group of the Arrow plan's tasks and splits (IPC
    bytes), packed like Java's reader (:func:`frazil.spark.read.partitions`)."""
    options = reader.options
    table = catalog_from_options(options).load_table(table_identifier(options))
    args = read_args(options)
    filters = list(reader.pushed)
    if args["row_filter"] is not None:
        filters.append(parse(args["row_filter"]))
    args["row_filter"] = None
    if filters:
        args["row_filter"] = filters[0] if len(filters) == 1 else And(*filters)
    scan_plan, context, _ = plan(table, **args)
    log.info("%s: %d tasks, filter %s", table.full_name(), len(scan_plan), args["row_filter"])
    # the planning worker has no SparkContext: the machine's cores unless told
    parallelism = int(options.get("parallelism") or os.cpu_count() or 1)
    parts = partitions(scan_plan, SplitOptions.of(table, options), parallelism)
    return [InputPartition((encode_tasks(scan_plan, p), context)) for p in parts]


def _all_fields(schema: Any) -> Iterator[tuple[int, Any]]:
    def walk(fields: Any) -> Iterator[tuple[int, Any]]:
        for f in fields:
            yield f.field_id, f
            inner = getattr(f.field_type, "fields", None)
            if inner is not None and str(f.field_type).startswith("struct"):
                yield from walk(inner)

    yield from walk(schema.fields)


# ---------------------------------------------------------------------------------------------
# writes


@dataclass
class FrazilCommitMessage(WriterCommitMessage):  # type: ignore[misc]  # untyped before Spark 4
    files: list[str]  # content-file JSON
    paths: list[str]
    attempt: int = 0  # the task attempt's number (0: its first)


SNAPSHOT_PROPERTY_PREFIX = "snapshot-property."


class FrazilWriter(DataSourceArrowWriter):  # type: ignore[misc]  # untyped before Spark 4
    """Writes with frazil's writer on the executors; one commit on the driver.

    Options: ``branch``; ``snapshot-property.<key>`` (Java's); for ``mode("overwrite")``,
    ``overwrite-mode`` ``static`` (default: the table's rows, or those matching
    ``overwrite-filter``, a frazil filter string) or ``dynamic`` (the partitions written).
    """

    def __init__(self, options: dict[str, str], overwrite: bool) -> None:
        self.options = options
        self.overwrite = overwrite
        self.overwrite_mode = parse_overwrite_mode(options.get("overwrite-mode"))
        self.overwrite_filter = options.get("overwrite-filter") or None
        if self.overwrite_filter is not None and not overwrite:
            raise InvalidArgumentError("the overwrite-filter option needs mode('overwrite')")
        if self.overwrite_filter is not None and self.overwrite_mode == "dynamic":
            raise InvalidArgumentError("a dynamic overwrite replaces partitions, not a filter")
        self.branch = options.get("branch") or None
        table = catalog_from_options(options).load_table(table_identifier(options))
        md = table.metadata
        base = md.snapshot_by_name(self.branch) if self.branch else md.current_snapshot()
        # the snapshot the write starts from: concurrent commits after it are validated
        self.base_snapshot_id = base.snapshot_id if base is not None else None
        self.metadata_json = md.to_json()
        self.io_props, self.io_location = io_spec(table)
        self.write_id = str(uuid.uuid4())

    def write(self, iterator: Iterator[Any]) -> FrazilCommitMessage:
        # The data source API cannot ask Spark for a distribution: a task gets whatever rows
        # its partition holds; the writer sorts them by partition (then sort order) in Arrow,
        # so each file still holds one partition.
        written = write_task_files(
            self.metadata_json, self.io_props, self.io_location, self.write_id, iterator
        )
        return FrazilCommitMessage(written.texts, written.paths, written.attempt)

    def commit(self, messages: list[Any]) -> None:
        table = catalog_from_options(self.options).load_table(table_identifier(self.options))
        texts = [t for m in messages if m is not None for t in m.files]
        props = {
            k[len(SNAPSHOT_PROPERTY_PREFIX) :]: v
            for k, v in self.options.items()
            if k.lower().startswith(SNAPSHOT_PROPERTY_PREFIX)
        }
        mode = "overwrite" if self.overwrite else "append"
        dynamic = self.overwrite and self.overwrite_mode == "dynamic"
        prepared = prepare_commit(
            table, "append" if dynamic else mode, self.overwrite_filter, self.branch
        )
        prepared.base_snapshot_id = self.base_snapshot_id
        snap = commit_files(
            table,
            texts,
            mode=mode,
            overwrite_filter=self.overwrite_filter,
            snapshot_properties=props or None,
            branch=self.branch,
            prepared=prepared,
            overwrite_mode=self.overwrite_mode,
        )
        # Spark hands over the messages of successful attempts only; a task that needed a
        # retry may have left the files of its failed attempt (killed after writing): they
        # carry this write's id, in the directories the committed files landed in
        if snap is not None and any(getattr(m, "attempt", 0) > 0 for m in messages if m):
            committed = {p for m in messages if m is not None for p in m.paths}
            sweep(table, self.write_id, committed)

    def abort(self, messages: list[Any]) -> None:
        io = executor_io(self.io_props, self.io_location)
        for m in messages:
            for p in getattr(m, "paths", None) or []:
                try:
                    io.delete(p)
                except Exception:
                    log.warning("could not delete %s", p, exc_info=True)
