"""Table scans: which files a snapshot's rows live in (``plan_files``) and reading them to Arrow.

:class:`DataScan` has PyIceberg's shape::

    scan = scan(table, row_filter="id > 5", selected_fields=("id", "data"))
    scan.use_ref("audit").filter("data IS NOT NULL").to_arrow()

Snapshot selection: the current snapshot, ``snapshot_id=``, a branch or tag (``use_ref``), or
the snapshot current at a time (:func:`snapshot_as_of_timestamp`). A scan of a snapshot id or a
tag reads with that snapshot's schema; a branch or the current snapshot with the table's
(as the Java reference and Spark do).

Planning is native (:mod:`frazil.table.planning`: manifests pruned by partition summaries,
files by partition values and column metrics, delete files attached, with the GIL released).
Tasks are
:class:`FileScanTask` objects that serialize to the JSON the Java reference's
``ScanTaskParser`` writes (since Iceberg 1.11: lower-case ``content``/``file-format`` and
partition tuples as arrays, the REST catalog's form); :meth:`FileScanTask.from_json` also reads
the 1.10 form (upper-case enums, partition objects keyed by field id).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from frazil import values
from frazil.arrow_schema import schema_to_arrow
from frazil.content_file import DataFile, DataFileContent, data_files_from_entries
from frazil.exceptions import InvalidArgumentError, ParseError, ValidationError
from frazil.expressions import AlwaysTrue, And, BooleanExpression, bind, from_json, parse, to_json
from frazil.metadata import Snapshot, SnapshotRefType, TableMetadata
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.table.read import (
    DEFAULT_BATCH_SIZE,
    METADATA_COLUMNS,
    DeleteCache,
    metadata_field,
    prune_schema,
    read_task,
)
from frazil.types import BinaryType, IntegerType, LongType, MapType, NestedField, StructType

if TYPE_CHECKING:
    import pandas as pd

    from frazil.io import FileIO
    from frazil.table import Table

__all__ = [
    "DataScan",
    "FileScanTask",
    "scan",
    "snapshot_as_of_timestamp",
    "table_partition_type",
]

log = logging.getLogger(__name__)

#: Rows per batch ``to_arrow`` reads (``batch-size`` overrides it).
TO_ARROW_BATCH_SIZE = 1 << 20

#: DataScan option: whether planned data files keep their column stats maps.
STATS_OPTION = "include-column-stats"

ALWAYS_TRUE = AlwaysTrue()

_CONTENT_NAMES = {
    DataFileContent.DATA: "data",
    DataFileContent.POSITION_DELETES: "position-deletes",
    DataFileContent.EQUALITY_DELETES: "equality-deletes",
}
_CONTENT_BY_NAME = {
    **{v: k for k, v in _CONTENT_NAMES.items()},
    "DATA": DataFileContent.DATA,
    "POSITION_DELETES": DataFileContent.POSITION_DELETES,
    "EQUALITY_DELETES": DataFileContent.EQUALITY_DELETES,
}
_COUNT_MAP = MapType(1, IntegerType(), 2, LongType())
_BOUND_MAP = MapType(1, IntegerType(), 2, BinaryType())
_COUNTS = ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts")
_BOUNDS = ("lower_bounds", "upper_bounds")


# ---------------------------------------------------------------------------------------------
# tasks


def _kebab(name: str) -> str:
    return name.replace("_", "-")


def _partition_json(f: DataFile, spec: PartitionSpec, schema: Schema) -> list[Any]:
    ptype = spec.partition_type(schema)
    if len(f.partition) != len(ptype.fields):
        raise ValidationError(
            f"{f.file_path}: partition {f.partition!r} does not fit spec {spec.spec_id}"
        )
    return [
        None if v is None else values.to_json(v, pf.field_type)
        for v, pf in zip(f.partition, ptype.fields, strict=True)
    ]


def _upper_hex(m: dict[str, list[Any]]) -> dict[str, list[Any]]:
    # Java and the REST spec write binary values as upper-case hex
    return {"keys": m["keys"], "values": [v.upper() for v in m["values"]]}


def content_file_to_json(f: DataFile, spec: PartitionSpec, schema: Schema) -> dict[str, Any]:
    """A data or delete file as the JSON of Java's ``ContentFileParser`` (REST ``ContentFile``):
    partition values, bounds and key metadata in the JSON single-value form."""
    out: dict[str, Any] = {
        "spec-id": f.spec_id,
        "content": _CONTENT_NAMES[f.content],
        "file-path": f.file_path,
        "file-format": f.file_format.lower(),
        "partition": _partition_json(f, spec, schema),
        "file-size-in-bytes": f.file_size_in_bytes,
        "record-count": f.record_count,
    }
    for name in _COUNTS:
        m = getattr(f, name)
        if m is not None:
            out[_kebab(name)] = values.to_json(m, _COUNT_MAP)
    for name in _BOUNDS:
        m = getattr(f, name)
        if m is not None:
            out[_kebab(name)] = _upper_hex(values.to_json(m, _BOUND_MAP))
    if f.key_metadata is not None:
        out["key-metadata"] = values.to_json(f.key_metadata, BinaryType()).upper()
    if f.split_offsets is not None:
        out["split-offsets"] = list(f.split_offsets)
    if f.equality_ids is not None:
        out["equality-ids"] = list(f.equality_ids)
    if f.sort_order_id is not None:
        out["sort-order-id"] = f.sort_order_id
    if f.first_row_id is not None:
        out["first-row-id"] = f.first_row_id
        seq = f.extra.get("sequence_number")
        if f.content == DataFileContent.DATA and seq is not None:
            out["data-sequence-number"] = seq
    if f.content != DataFileContent.DATA:
        if f.referenced_data_file is not None:
            out["referenced-data-file"] = f.referenced_data_file
        if f.content_offset is not None:
            out["content-offset"] = f.content_offset
        if f.content_size_in_bytes is not None:
            out["content-size-in-bytes"] = f.content_size_in_bytes
    return out


def _need(obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...], at: str) -> Any:
    if key not in obj:
        raise ParseError(f"{at}: missing {key!r}")
    v = obj[key]
    if not isinstance(v, kind) or (isinstance(v, bool) and kind is not bool):
        raise ParseError(f"{at}.{key}: unexpected value {v!r}")
    return v


def content_file_from_json(
    obj: Any, specs: Mapping[int, PartitionSpec], schema: Schema, at: str = "content-file"
) -> DataFile:
    """Reads :func:`content_file_to_json`'s form and Java 1.10's (upper-case enums, partition
    objects keyed by partition field id)."""
    if not isinstance(obj, dict):
        raise ParseError(f"{at}: expected an object, got {obj!r}")
    spec_id = _need(obj, "spec-id", int, at)
    spec = specs.get(spec_id)
    if spec is None:
        raise ParseError(f"{at}: unknown partition spec id {spec_id}")
    content_name = _need(obj, "content", str, at)
    if content_name not in _CONTENT_BY_NAME:
        raise ParseError(f"{at}.content: unknown content {content_name!r}")
    ptype = spec.partition_type(schema)
    raw = obj.get("partition", [])
    if isinstance(raw, dict):  # Java 1.10: by partition field id, nulls omitted
        raw = [raw.get(str(f.field_id)) for f in ptype.fields]
    if not isinstance(raw, list) or len(raw) != len(ptype.fields):
        raise ParseError(f"{at}.partition: expected {len(ptype.fields)} values, got {raw!r}")
    partition = tuple(
        None if v is None else values.from_json(v, f.field_type)
        for v, f in zip(raw, ptype.fields, strict=True)
    )
    kwargs: dict[str, Any] = {}
    for name in _COUNTS + _BOUNDS:
        if _kebab(name) in obj:
            kwargs[name] = values.from_json(
                obj[_kebab(name)], _COUNT_MAP if name in _COUNTS else _BOUND_MAP
            )
    if "key-metadata" in obj:
        kwargs["key_metadata"] = values.from_json(obj["key-metadata"], BinaryType())
    for key, conv in (("split-offsets", tuple), ("equality-ids", tuple)):
        if key in obj:
            kwargs[key.replace("-", "_")] = conv(obj[key])
    for key in (
        "sort-order-id",
        "first-row-id",
        "referenced-data-file",
        "content-offset",
        "content-size-in-bytes",
    ):
        if key in obj:
            kwargs[key.replace("-", "_")] = obj[key]
    f = DataFile(
        file_path=_need(obj, "file-path", str, at),
        file_format=_need(obj, "file-format", str, at).upper(),
        partition=partition,
        record_count=_need(obj, "record-count", int, at),
        file_size_in_bytes=_need(obj, "file-size-in-bytes", int, at),
        content=_CONTENT_BY_NAME[content_name],
        spec_id=spec_id,
        **kwargs,
    )
    if "data-sequence-number" in obj:
        f.extra["sequence_number"] = obj["data-sequence-number"]
    return f


@dataclass
class FileScanTask:
    """One data file to read (whole, or the split ``start``/``length`` of it), the delete files
    that apply to it, and the residual filter its rows must still pass.

    ``schema`` and ``spec`` are the table schema the residual is bound to and the data file's
    partition spec (needed for JSON and for partition constants).
    """

    file: DataFile
    delete_files: list[DataFile] = field(default_factory=list)
    residual: BooleanExpression = ALWAYS_TRUE
    schema: Schema | None = None
    spec: PartitionSpec | None = None
    start: int | None = None
    length: int | None = None

    @property
    def data_file(self) -> DataFile:
        return self.file

    @property
    def spec_id(self) -> int:
        return self.file.spec_id

    @property
    def partition(self) -> tuple[Any, ...]:
        return self.file.partition

    def to_json(self) -> dict[str, Any]:
        """The task as Java's ``ScanTaskParser.toJson`` writes a file scan task."""
        if self.schema is None or self.spec is None:
            raise InvalidArgumentError("a task needs its schema and spec to be written as JSON")
        out: dict[str, Any] = {
            "task-type": "file-scan-task",
            "schema": self.schema.to_json(),
            "spec": self.spec.to_json(),
            "data-file": content_file_to_json(self.file, self.spec, self.schema),
            "start": 0 if self.start is None else self.start,
            "length": self.file.file_size_in_bytes if self.length is None else self.length,
            "delete-files": [
                content_file_to_json(d, self.spec, self.schema) for d in self.delete_files
            ],
            "residual-filter": to_json(self.residual, legacy=True),
        }
        return out

    @classmethod
    def from_json(cls, obj: Any, case_sensitive: bool = True) -> FileScanTask:
        """Reads :meth:`to_json`'s form (and Java 1.10's); the residual is bound to the task's
        schema."""
        if not isinstance(obj, dict):
            raise ParseError(f"file scan task: expected an object, got {obj!r}")
        task_type = obj.get("task-type", "file-scan-task")
        if task_type != "file-scan-task":
            raise ParseError(f"file scan task: unsupported task-type {task_type!r}")
        schema = Schema.from_json(_need(obj, "schema", dict, "file scan task"))
        spec = PartitionSpec.from_json(_need(obj, "spec", dict, "file scan task"))
        specs = {spec.spec_id: spec}
        data = content_file_from_json(
            _need(obj, "data-file", dict, "file scan task"), specs, schema, "data-file"
        )
        deletes = [
            content_file_from_json(d, specs, schema, f"delete-files[{i}]")
            for i, d in enumerate(obj.get("delete-files") or [])
        ]
        residual: BooleanExpression = ALWAYS_TRUE
        if "residual-filter" in obj:
            residual = bind(schema, from_json(obj["residual-filter"]), case_sensitive)
        start = obj.get("start")
        length = obj.get("length")
        whole = start in (None, 0) and length in (None, data.file_size_in_bytes)
        return cls(
            data,
            deletes,
            residual,
            schema,
            spec,
            None if whole else start,
            None if whole else length,
        )


# ---------------------------------------------------------------------------------------------
# snapshot selection and planning


def snapshot_as_of_timestamp(
    metadata: TableMetadata, timestamp_ms: int, inclusive: bool = True
) -> Snapshot | None:
    """The snapshot that was current on ``main`` at ``timestamp_ms`` (from the snapshot log,
    as Spark's ``TIMESTAMP AS OF``); ``None`` if the table had none then."""
    found = None
    for entry in metadata.snapshot_log:
        if entry.timestamp_ms < timestamp_ms or (inclusive and entry.timestamp_ms == timestamp_ms):
            found = entry.snapshot_id
    return None if found is None else metadata.snapshot_by_id(found)


def table_partition_type(metadata: TableMetadata, schema: Schema | None = None) -> StructType:
    """The struct of ``_partition``: every partition field of every spec whose source column is
    in the schema, by field id, with its newest name (Java's ``Partitioning.partitionType``)."""
    schema = schema if schema is not None else metadata.schema()
    fields: dict[int, NestedField] = {}
    void: set[int] = set()
    for spec in sorted(metadata.partition_specs, key=lambda s: -s.spec_id):
        ptype = spec.partition_type(schema)
        for pf, nf in zip(spec.fields, ptype.fields, strict=True):
            if pf.source_id not in schema.field_ids:
                continue
            is_void = str(pf.transform) == "void"
            if pf.field_id not in fields:
                fields[pf.field_id] = NestedField(nf.field_id, nf.name, nf.field_type, False)
                if is_void:
                    void.add(pf.field_id)
            elif pf.field_id in void and not is_void:
                old = fields[pf.field_id]
                fields[pf.field_id] = NestedField(old.field_id, old.name, nf.field_type, False)
                void.discard(pf.field_id)
    return StructType(*(fields[i] for i in sorted(fields)))


def _plan_native(
    io: FileIO,
    metadata: TableMetadata,
    snapshot: Snapshot | None,
    bound_filter: BooleanExpression,
    schema: Schema,
    include_column_stats: bool = True,
) -> list[FileScanTask]:
    """Tasks from the native planner."""
    from frazil.table import planning

    planned = planning.plan_files(
        io,
        metadata,
        snapshot,
        bound_filter,
        schema=schema,
        include_column_stats=include_column_stats,
    )
    specs = metadata.specs()
    delete_files = planned.delete_files
    tasks = []
    for group in planned.data:
        files = data_files_from_entries(group.entries, group.spec_id)
        residuals = group.residuals.to_pylist()
        deletes = group.deletes.to_pylist()
        spec = specs.get(group.spec_id)
        for f, r, ds in zip(files, residuals, deletes, strict=True):
            tasks.append(
                FileScanTask(f, [delete_files[k] for k in ds], planned.residuals[r], schema, spec)
            )
    return tasks


# ---------------------------------------------------------------------------------------------
# the scan


def _as_filter(row_filter: str | BooleanExpression) -> BooleanExpression:
    if isinstance(row_filter, str):
        return parse(row_filter)
    if not isinstance(row_filter, BooleanExpression):
        raise InvalidArgumentError(f"expected a row filter string or expression: {row_filter!r}")
    return row_filter


class DataScan:
    """A scan of one snapshot of a table (immutable: the builder methods return new scans)."""

    def __init__(
        self,
        table_metadata: TableMetadata,
        io: FileIO,
        row_filter: str | BooleanExpression = ALWAYS_TRUE,
        selected_fields: tuple[str, ...] = ("*",),
        case_sensitive: bool = True,
        snapshot_id: int | None = None,
        options: Mapping[str, str] | None = None,
        limit: int | None = None,
        *,
        ref: str | None = None,
    ) -> None:
        self.table_metadata = table_metadata
        self.io = io
        self.row_filter = _as_filter(row_filter)
        self.selected_fields = tuple(selected_fields)
        self.case_sensitive = case_sensitive
        self.snapshot_id = snapshot_id
        self.options = dict(options or {})
        self.limit = limit
        self._ref = ref
        if snapshot_id is not None and table_metadata.snapshot_by_id(snapshot_id) is None:
            raise ValidationError(f"snapshot {snapshot_id} is not a snapshot of the table")
        if limit is not None and limit < 0:
            raise InvalidArgumentError(f"limit must not be negative, got {limit}")

    def _update(self, **changes: Any) -> DataScan:
        args: dict[str, Any] = {
            "row_filter": self.row_filter,
            "selected_fields": self.selected_fields,
            "case_sensitive": self.case_sensitive,
            "snapshot_id": self.snapshot_id,
            "options": self.options,
            "limit": self.limit,
            "ref": self._ref,
        }
        args.update(changes)
        return DataScan(self.table_metadata, self.io, **args)

    # ---- builders

    def filter(self, expr: str | BooleanExpression) -> DataScan:
        return self._update(row_filter=And(self.row_filter, _as_filter(expr)))

    def select(self, *field_names: str) -> DataScan:
        if "*" in self.selected_fields:
            return self._update(selected_fields=field_names)
        kept = tuple(n for n in self.selected_fields if n in field_names)
        return self._update(selected_fields=kept)

    def with_case_sensitive(self, case_sensitive: bool = True) -> DataScan:
        return self._update(case_sensitive=case_sensitive)

    def use_ref(self, name: str) -> DataScan:
        """Scans the snapshot a branch or tag points to."""
        if self.snapshot_id is not None:
            raise ValidationError(f"cannot use ref {name!r}: snapshot {self.snapshot_id} is set")
        ref = self.table_metadata.refs.get(name)
        if ref is None:
            raise ValidationError(f"no branch or tag named {name!r}")
        return self._update(snapshot_id=ref.snapshot_id, ref=name)

    def as_of_timestamp(self, timestamp_ms: int) -> DataScan:
        """Scans the snapshot that was current at ``timestamp_ms`` (epoch milliseconds)."""
        snapshot = snapshot_as_of_timestamp(self.table_metadata, timestamp_ms)
        if snapshot is None:
            raise ValidationError(f"the table has no snapshot at or before {timestamp_ms} ms")
        return self._update(snapshot_id=snapshot.snapshot_id, ref=None)

    # ---- what is scanned

    def snapshot(self) -> Snapshot | None:
        if self.snapshot_id is not None:
            return self.table_metadata.snapshot_by_id(self.snapshot_id)
        return self.table_metadata.current_snapshot()

    def table_schema(self) -> Schema:
        """The schema rows are read with: a snapshot id's or tag's own schema, else current."""
        md = self.table_metadata
        by_time_travel = self.snapshot_id is not None and (
            self._ref is None or md.refs[self._ref].snapshot_ref_type == SnapshotRefType.TAG
        )
        snapshot = self.snapshot()
        if by_time_travel and snapshot is not None and snapshot.schema_id is not None:
            s = md.schema_by_id(snapshot.schema_id)
            if s is not None:
                return s
        return md.schema()

    def _metadata_columns(self) -> list[str]:
        return [n for n in self.selected_fields if n in METADATA_COLUMNS]

    def projection(self) -> Schema:
        """The selected table columns (metadata columns excluded)."""
        schema = self.table_schema()
        names = [n for n in self.selected_fields if n not in METADATA_COLUMNS]
        if "*" in names:
            return schema
        ids: set[int] = set()
        for n in names:
            try:
                ids.add(schema.find_field(n, self.case_sensitive).field_id)
            except InvalidArgumentError:
                raise ValidationError(f"cannot select {n!r}: no such column in the table") from None
        pruned = prune_schema(schema, ids)
        # keep the selection's order for top-level columns, as PyIceberg does not reorder
        return pruned

    def _bound_filter(self) -> BooleanExpression:
        try:
            return bind(self.table_schema(), self.row_filter, self.case_sensitive)
        except InvalidArgumentError as e:
            raise ValidationError(f"cannot apply filter {self.row_filter}: {e}") from None

    def include_column_stats(self, include: bool = True) -> DataScan:
        """Whether planned tasks' data files carry their column stats maps (``lower_bounds``,
        ``value_counts``, ...): the ``include-column-stats`` option, on by default for
        :meth:`plan_files` (as PyIceberg's tasks carry them; the Java reference's scans leave
        them out unless asked). Leaving them out skips decoding most of a manifest's bytes
        when the filter does not need them."""
        return self._update(options={**self.options, STATS_OPTION: str(include).lower()})

    def _stats_option(self) -> bool | None:
        value = self.options.get(STATS_OPTION)
        if value is None:
            return None
        text = str(value).strip().lower()
        if text not in ("true", "false"):
            raise InvalidArgumentError(f"{STATS_OPTION} must be true or false, got {value!r}")
        return text == "true"

    def plan_files(self) -> Iterable[FileScanTask]:
        """The tasks of this scan: data files whose rows may match, with their deletes."""
        stats = self._stats_option()
        return self._plan_files(True if stats is None else stats)

    def _plan_files(self, include_column_stats: bool) -> list[FileScanTask]:
        bound = self._bound_filter()
        schema = self.table_schema()
        snapshot = self.snapshot()
        return _plan_native(
            self.io, self.table_metadata, snapshot, bound, schema, include_column_stats
        )

    def _tasks_to_read(self) -> list[FileScanTask]:
        """Tasks for this scan's own reads: the reader needs no column stats (the residual is
        evaluated on the rows), so they are not decoded unless the option asks for them."""
        return self._plan_files(bool(self._stats_option()))

    # ---- reading

    def arrow_schema(self) -> pa.Schema:
        schema = schema_to_arrow(self.projection())
        ptype = table_partition_type(self.table_metadata, self.table_schema())
        meta = [metadata_field(n, ptype) for n in self._metadata_columns()]
        return pa.schema(list(schema) + list(schema_to_arrow(Schema(*meta))))

    def _task_reader(
        self, default_batch_size: int = DEFAULT_BATCH_SIZE
    ) -> Callable[[FileScanTask], Iterator[pa.RecordBatch]]:
        schema = self.table_schema()
        projected = self.projection()
        ptype = table_partition_type(self.table_metadata, schema)
        mapping = self.table_metadata.name_mapping()
        cache = DeleteCache(self.io, mapping)
        meta = self._metadata_columns()
        batch_size = int(self.options.get("batch-size", default_batch_size))

        def read(task: FileScanTask) -> Iterator[pa.RecordBatch]:
            return read_task(
                task,
                self.io,
                schema,
                projected,
                metadata_columns=meta,
                partition_type=ptype,
                name_mapping=mapping,
                delete_cache=cache,
                batch_size=batch_size,
            )

        return read

    def _batches(self, tasks: Iterable[FileScanTask] | None = None) -> Iterator[pa.RecordBatch]:
        tasks = self._tasks_to_read() if tasks is None else tasks
        read = self._task_reader()
        remaining = self.limit
        for task in tasks:
            if remaining is not None and remaining <= 0:
                return
            for batch in read(task):
                if remaining is not None:
                    if batch.num_rows >= remaining:
                        yield batch.slice(0, remaining)
                        remaining = 0
                        return
                    remaining -= batch.num_rows
                yield batch

    def to_batches(self) -> pa.RecordBatchReader:
        """A streaming reader over the scan's rows (one task after another)."""
        return pa.RecordBatchReader.from_batches(self.arrow_schema(), self._batches())

    def to_arrow(self) -> pa.Table:
        """Every row at once. Without a limit, tasks are read concurrently (pyarrow decodes
        with the GIL released), in task order."""
        if self.limit is not None:
            return pa.Table.from_batches(list(self._batches()), schema=self.arrow_schema())
        tasks = self._tasks_to_read()
        # Everything is materialized anyway: batches of up to a row group's size, not a
        # streaming reader's (fewer, larger decodes: about 10% less time).
        read = self._task_reader(TO_ARROW_BATCH_SIZE)
        workers = int(self.options.get("read-threads", min(8, os.cpu_count() or 1)))
        if workers <= 1 or len(tasks) <= 1:
            batches = [b for t in tasks for b in read(t)]
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                parts = list(pool.map(lambda t: list(read(t)), tasks))
            batches = [b for part in parts for b in part]
        return pa.Table.from_batches(batches, schema=self.arrow_schema())

    def to_pandas(self, **kwargs: Any) -> pd.DataFrame:
        return self.to_arrow().to_pandas(**kwargs)

    def count(self) -> int:
        """The number of rows; from file record counts when no task has deletes or a residual,
        else by reading."""
        tasks = self._tasks_to_read()
        total = 0
        to_read = []
        for t in tasks:
            if not t.delete_files and isinstance(t.residual, AlwaysTrue) and t.start is None:
                total += t.file.record_count
            else:
                to_read.append(t)
        if to_read:
            counter = self._update(selected_fields=("_pos",), limit=None)
            total += sum(b.num_rows for b in counter._batches(to_read))
        if self.limit is not None:
            total = min(total, self.limit)
        return total


def scan(
    table: Table,
    row_filter: str | BooleanExpression = ALWAYS_TRUE,
    selected_fields: tuple[str, ...] = ("*",),
    case_sensitive: bool = True,
    snapshot_id: int | None = None,
    options: Mapping[str, str] | None = None,
    limit: int | None = None,
) -> DataScan:
    """A :class:`DataScan` of a :class:`~frazil.table.Table` (``Table.scan`` delegates here)."""
    return DataScan(
        table.metadata,
        table.io,
        row_filter=row_filter,
        selected_fields=selected_fields,
        case_sensitive=case_sensitive,
        snapshot_id=snapshot_id,
        options=options,
        limit=limit,
    )
