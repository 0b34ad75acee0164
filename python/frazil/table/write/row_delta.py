"""Row-level changes: ``overwrite`` by filter and ``delete`` by filter, copy-on-write or
merge-on-read, and the machinery :mod:`frazil.table.write.upsert` shares with them.

Every operation plans the files of the branch head that may hold affected rows (the native
planner: partition and metrics pruning, delete files attached) and then, per file:

* a file whose rows all match the filter (its residual is ``true``, or the strict metrics
  evaluator proves it from the file's bounds and null/NaN counts, as Java's
  ``StrictMetricsEvaluator``) is removed without being read, together with its deletion vector;
* otherwise its live rows are read (deletes applied) and the matching ones found with the
  filter's SQL semantics (a row is affected only where the filter is *true*; null keeps it);
* copy-on-write (``write.delete.mode`` / ``write.merge.mode`` = ``copy-on-write``, the default)
  rewrites the file without them; merge-on-read writes a deletion vector (v3: one
  ``deletion-vector-v1`` blob per data file in a Puffin file, merged with the file's existing
  DV and file-scoped position deletes, which are removed in the same commit) or a position
  delete file (v2: Parquet, ``file_path``/``pos`` with the reserved field ids, sorted, full
  metrics for both columns as Java's ``MetricsConfig.forPositionDelete``).

v3 row lineage (spec "Row Lineage"): rows moved by a rewrite keep ``_row_id`` and
``_last_updated_sequence_number``; rows an upsert modifies keep ``_row_id`` and get a null
``_last_updated_sequence_number`` (the commit's sequence number is inherited); new rows get
both null. The columns are written with their reserved field ids.

One snapshot per operation, through a row delta (``overwrite``/``delete``/``append`` as the
change warrants) that validates on every attempt: files removed must still be live and have
no new deletes, under serializable isolation (``write.<op>.isolation-level``, default
serializable) no concurrently added data file may match the filter, and no concurrent commit
may have added deletes for, or removed, a data file this commit adds deletes for. Everything
written is deleted if the commit does not land.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from frazil import values
from frazil.arrow_schema import FIELD_ID_KEY, schema_to_arrow
from frazil.content_file import DataFile, DataFileContent, FileFormat
from frazil.deletes import DeletionVector, write_deletion_vectors
from frazil.exceptions import InvalidArgumentError, ValidationError
from frazil.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    BoundEqualTo,
    BoundGreaterThan,
    BoundGreaterThanOrEqual,
    BoundIn,
    BoundIsNaN,
    BoundIsNull,
    BoundLessThan,
    BoundLessThanOrEqual,
    BoundNotEqualTo,
    BoundNotIn,
    BoundNotNaN,
    BoundNotNull,
    BoundPredicate,
    BoundReference,
    BoundStartsWith,
    Or,
    bind,
    parse,
)
from frazil.metadata import Operation, Snapshot, TableMetadata
from frazil.schema import Schema
from frazil.table.arrow_filter import expression_to_arrow, referenced_field_ids
from frazil.table.read import (
    FILE_PATH_FIELD_ID,
    LAST_UPDATED_FIELD_ID,
    POS_FIELD_ID,
    ROW_ID_FIELD_ID,
    DeleteCache,
    _read_range,
    prune_schema,
    read_task,
)
from frazil.table.update.snapshot import DELETED, RowDelta
from frazil.table.write.conform import as_table, conform
from frazil.table.write.locations import location_provider, partition_to_path
from frazil.table.write.metrics import MetricsConfig, parquet_metrics, parse_metrics_mode
from frazil.table.write.writer import DataFileWriter, WrittenFilesStep
from frazil.types import DoubleType, FloatType, LongType, NestedField, PrimitiveType, StringType

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.table.scan import FileScanTask
    from frazil.table.transaction import Transaction

__all__ = ["delete", "overwrite"]

logger = logging.getLogger(__name__)

COPY_ON_WRITE = "copy-on-write"
MERGE_ON_READ = "merge-on-read"
DELETE_MODE = "write.delete.mode"
UPDATE_MODE = "write.update.mode"
MERGE_MODE = "write.merge.mode"
DELETE_ISOLATION = "write.delete.isolation-level"
MERGE_ISOLATION = "write.merge.isolation-level"
DELETE_GRANULARITY = "write.delete.granularity"
ROW_ID = "_row_id"
LAST_UPDATED = "_last_updated_sequence_number"
_LINEAGE = ((ROW_ID, ROW_ID_FIELD_ID), (LAST_UPDATED, LAST_UPDATED_FIELD_ID))
_POS = "_pos"


# ---------------------------------------------------------------------------------------------
# Metrics evaluation over one file's bounds (strict: every row matches; inclusive: some may)


def _is_float(t: Any) -> bool:
    return isinstance(t, (FloatType, DoubleType))


class _FileMetrics:
    def __init__(self, f: DataFile) -> None:
        self.f = f

    def counts(self, fid: int) -> tuple[int | None, int | None, int | None]:
        f = self.f
        return (
            (f.value_counts or {}).get(fid),
            (f.null_value_counts or {}).get(fid),
            (f.nan_value_counts or {}).get(fid),
        )

    def bounds(self, fid: int, t: PrimitiveType) -> tuple[Any, Any]:
        lo = (self.f.lower_bounds or {}).get(fid)
        hi = (self.f.upper_bounds or {}).get(fid)
        try:
            return (
                None if lo is None else values.from_bytes(lo, t),
                None if hi is None else values.from_bytes(hi, t),
            )
        except Exception:  # an unreadable bound proves nothing
            return None, None


def rows_must_match(expr: BooleanExpression, f: DataFile) -> bool:
    """Whether every row of ``f`` makes the bound ``expr`` *true* (SQL semantics: a null
    comparison is not true), from the file's metrics alone; ``False`` when unprovable."""
    if f.record_count == 0:
        return True
    return _strict(expr, _FileMetrics(f))


def _strict(e: BooleanExpression, m: _FileMetrics) -> bool:
    if isinstance(e, AlwaysTrue):
        return True
    if isinstance(e, AlwaysFalse):
        return False
    if isinstance(e, And):
        return _strict(e.left, m) and _strict(e.right, m)
    if isinstance(e, Or):
        return _strict(e.left, m) or _strict(e.right, m)
    if not isinstance(e, BoundPredicate) or not isinstance(e.term, BoundReference):
        return False  # Not, transforms: not proven
    fid = e.term.field_id
    t = e.term.type
    n, nulls, nans = m.counts(fid)
    if isinstance(e, BoundIsNull):
        return n is not None and nulls is not None and nulls == n
    no_nulls = nulls == 0
    no_nans = not _is_float(t) or nans == 0
    if isinstance(e, BoundNotNull):
        return no_nulls
    if isinstance(e, BoundIsNaN):
        return _is_float(t) and n is not None and nans is not None and nans == n
    if isinstance(e, BoundNotNaN):
        return no_nulls and no_nans
    if not (no_nulls and no_nans and isinstance(t, PrimitiveType)):
        return False
    lo, hi = m.bounds(fid, t)
    try:
        if isinstance(e, BoundLessThan):
            return hi is not None and hi < e.literal.value
        if isinstance(e, BoundLessThanOrEqual):
            return hi is not None and hi <= e.literal.value
        if isinstance(e, BoundGreaterThan):
            return lo is not None and lo > e.literal.value
        if isinstance(e, BoundGreaterThanOrEqual):
            return lo is not None and lo >= e.literal.value
        if isinstance(e, BoundEqualTo):
            return lo is not None and lo == hi == e.literal.value
        if isinstance(e, BoundNotEqualTo):
            v = e.literal.value
            return lo is not None and hi is not None and (v < lo or v > hi)
        if isinstance(e, BoundIn):
            return lo is not None and lo == hi and lo in e.values
        if isinstance(e, BoundNotIn):
            return lo is not None and hi is not None and all(v < lo or v > hi for v in e.values)
        if isinstance(e, BoundStartsWith) and isinstance(t, StringType):
            p = e.literal.value
            return lo is not None and hi is not None and lo.startswith(p) and hi.startswith(p)
    except TypeError:
        return False
    return False


def rows_might_match(expr: BooleanExpression, f: DataFile) -> bool:
    """Whether some row of ``f`` may make the bound ``expr`` true (inclusive metrics);
    ``True`` when the metrics cannot rule it out."""
    if f.record_count == 0:
        return False
    return _inclusive(expr, _FileMetrics(f))


def _inclusive(e: BooleanExpression, m: _FileMetrics) -> bool:
    if isinstance(e, AlwaysTrue):
        return True
    if isinstance(e, AlwaysFalse):
        return False
    if isinstance(e, And):
        return _inclusive(e.left, m) and _inclusive(e.right, m)
    if isinstance(e, Or):
        return _inclusive(e.left, m) or _inclusive(e.right, m)
    if not isinstance(e, BoundPredicate) or not isinstance(e.term, BoundReference):
        return True
    fid = e.term.field_id
    t = e.term.type
    n, nulls, nans = m.counts(fid)
    all_null = n is not None and nulls is not None and nulls == n
    if isinstance(e, BoundIsNull):
        return nulls != 0
    if isinstance(e, BoundNotNull):
        return not all_null
    if isinstance(e, BoundIsNaN):
        return _is_float(t) and nans != 0
    if isinstance(e, (BoundNotNaN, BoundNotEqualTo, BoundNotIn)):
        return True
    if all_null:
        return False
    if not isinstance(t, PrimitiveType):
        return True
    lo, hi = m.bounds(fid, t)
    try:
        if isinstance(e, BoundLessThan):
            return lo is None or lo < e.literal.value
        if isinstance(e, BoundLessThanOrEqual):
            return lo is None or lo <= e.literal.value
        if isinstance(e, BoundGreaterThan):
            return hi is None or hi > e.literal.value
        if isinstance(e, BoundGreaterThanOrEqual):
            return hi is None or hi >= e.literal.value
        if isinstance(e, BoundEqualTo):
            v = e.literal.value
            return not ((lo is not None and v < lo) or (hi is not None and v > hi))
        if isinstance(e, BoundIn):
            return any(
                not ((lo is not None and v < lo) or (hi is not None and v > hi)) for v in e.values
            )
    except TypeError:
        return True
    return True


# ---------------------------------------------------------------------------------------------
# Writers


def _lineage_field(name: str, fid: int) -> pa.Field:
    return pa.field(name, pa.int64(), True, metadata={FIELD_ID_KEY: str(fid).encode()})


class _LineageWriter(DataFileWriter):
    """A data file writer that also stores ``_row_id`` and ``_last_updated_sequence_number``
    (reserved field ids) when the input has them; other input goes through unchanged."""

    def _write(self, data: Any) -> list[DataFile]:
        if not isinstance(data, pa.Table) or not any(n in data.column_names for n, _ in _LINEAGE):
            return super()._write(data)
        lineage = [(n, fid) for n, fid in _LINEAGE if n in data.column_names]
        body = data.drop_columns([n for n, _ in lineage])
        conformed = conform(body.schema, self.schema, downcast_ns_timestamp_to_us=self.downcast)
        extra = [_lineage_field(n, fid) for n, fid in lineage]
        self.arrow_schema = pa.schema([*conformed.arrow_schema, *extra])
        self.nan_columns = self._float_columns()
        converted = [conformed.convert(b) for b in body.to_batches()]
        table = pa.Table.from_batches(converted, conformed.arrow_schema)
        for f, (n, _) in zip(extra, lineage, strict=True):
            table = table.append_column(f, data.column(n).cast(pa.int64()))
        self._write_chunk(table)
        self._finish_all(list(self._open.values()))
        self._open.clear()
        return list(self._done)


_POSITION_DELETE_SCHEMA = Schema(
    NestedField(FILE_PATH_FIELD_ID, "file_path", StringType(), required=True),
    NestedField(POS_FIELD_ID, "pos", LongType(), required=True),
)
_POSITION_DELETE_ARROW = pa.schema(
    [
        pa.field("file_path", pa.string(), False, {FIELD_ID_KEY: str(FILE_PATH_FIELD_ID).encode()}),
        pa.field("pos", pa.int64(), False, {FIELD_ID_KEY: str(POS_FIELD_ID).encode()}),
    ]
)
# Java keeps full metrics for both columns of position delete files (forPositionDelete).
_POSITION_DELETE_METRICS = MetricsConfig(parse_metrics_mode("full"))


class _DeleteWriter:
    """Writes deletion vectors (one Puffin file per operation) and v2 position delete files;
    remembers what it wrote for cleanup."""

    def __init__(self, io: FileIO, metadata: TableMetadata, operation_id: uuid.UUID) -> None:
        self.io = io
        self.metadata = metadata
        self.operation_id = operation_id
        self.locations = location_provider(metadata.location or "", metadata.properties)
        self.written: list[str] = []
        self._count = 0

    def _name(self, ext: str) -> str:
        self._count += 1
        return f"00000-0-{self.operation_id}-{self._count:05d}-deletes.{ext}"

    def _open(self, location: str) -> Any:
        fs, path = self.io.filesystem(location)
        self.written.append(location)
        if fs.type_name == "local":
            parent = path.rsplit("/", 1)[0]
            if parent and parent != path:
                fs.create_dir(parent, recursive=True)
        return fs.open_output_stream(path)

    def write_dvs(self, dvs: list[tuple[DataFile, DeletionVector]]) -> list[DataFile]:
        if not dvs:
            return []
        data, placed = write_deletion_vectors([(f.file_path, dv) for f, dv in dvs])
        location = self.locations.new_data_location(self._name("puffin"))
        with self._open(location) as out:
            out.write(data)
        return [
            DataFile(
                file_path=location,
                file_format=FileFormat.PUFFIN,
                partition=tuple(f.partition),
                record_count=w.record_count,
                file_size_in_bytes=len(data),
                content=DataFileContent.POSITION_DELETES,
                spec_id=f.spec_id,
                referenced_data_file=f.file_path,
                content_offset=w.content_offset,
                content_size_in_bytes=w.content_size_in_bytes,
            )
            for (f, _), w in zip(dvs, placed, strict=True)
        ]

    def write_position_deletes(self, f: DataFile, positions: np.ndarray) -> DataFile:
        """A file-scoped position delete file for ``f`` (sorted positions)."""
        spec = self.metadata.spec_by_id(f.spec_id)
        path = ""
        if spec is not None and spec.fields:
            path = partition_to_path(spec, self.metadata.schema(), f.partition)
        location = self.locations.new_data_location(self._name("parquet"), path or None)
        positions = np.sort(positions)
        table = pa.table(
            [pa.repeat(pa.scalar(f.file_path, pa.string()), len(positions)), pa.array(positions)],
            schema=_POSITION_DELETE_ARROW,
        )
        codec = self.metadata.properties.get("write.parquet.compression-codec", "zstd").lower()
        codec = {"uncompressed": "none", "lz4_raw": "lz4"}.get(codec, codec)
        sink = self._open(location)
        writer = pq.ParquetWriter(sink, _POSITION_DELETE_ARROW, compression=codec)
        writer.write_table(table)
        writer.close()
        size = sink.tell()
        sink.close()
        metrics = parquet_metrics(
            writer.writer.metadata, _POSITION_DELETE_SCHEMA, config=_POSITION_DELETE_METRICS
        )
        return DataFile(
            file_path=location,
            file_format=FileFormat.PARQUET,
            partition=tuple(f.partition),
            file_size_in_bytes=size,
            content=DataFileContent.POSITION_DELETES,
            spec_id=f.spec_id,
            referenced_data_file=f.file_path,
            **metrics.data_file_fields(),
        )

    def abort(self) -> None:
        for location in self.written:
            try:
                self.io.delete(location)
            except Exception:
                logger.warning("could not delete %s", location, exc_info=True)
        self.written.clear()


# ---------------------------------------------------------------------------------------------
# The snapshot producer and its transaction step


class _RowChange(RowDelta):
    """A row delta that names its operation as Java does and validates the data files it adds
    deletes for (they must still be live, with no delete added concurrently)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.referenced: set[str] = set()

    def _operation(self) -> str:
        adds_data = any(f.content == DataFileContent.DATA for f in self._added.values())
        changes = bool(
            self._delete_paths
            or any(f.content != DataFileContent.DATA for f in self._added.values())
        )
        if adds_data and changes:
            return Operation.OVERWRITE
        if adds_data:
            return Operation.APPEND
        return Operation.DELETE

    def _validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        super()._validate(base, parent)
        if not self.referenced or parent is None or parent.snapshot_id == self._validate_from:
            return
        name = self._table_name()
        for d in self._files_added_since(
            base, parent, 1, {Operation.OVERWRITE, Operation.DELETE, Operation.REPLACE}
        ):
            hit = d.referenced_data_file in self.referenced if d.referenced_data_file else None
            if hit or (hit is None and self._partition_touched(d)):
                raise ValidationError(
                    f"{name}: found new delete file {d.file_path} for a data file this commit "
                    "deletes rows from; retry the operation"
                )
        removed = self._files_removed_since(base, parent)
        gone = sorted(self.referenced & removed)
        if gone:
            raise ValidationError(
                f"{name}: data files this commit deletes rows from were removed concurrently: "
                f"{', '.join(gone[:10])}"
            )

    def _partition_touched(self, d: DataFile) -> bool:
        # A partition-scoped position delete file may name our files (its bounds may tell).
        if d.content != DataFileContent.POSITION_DELETES:
            return False
        lo = (d.lower_bounds or {}).get(FILE_PATH_FIELD_ID)
        hi = (d.upper_bounds or {}).get(FILE_PATH_FIELD_ID)
        for p in self.referenced:
            b = p.encode()
            if (lo is None or lo <= b) and (hi is None or b <= hi):
                return True
        return False

    def _files_removed_since(self, base: TableMetadata, parent: Snapshot | None) -> set[str]:
        out: set[str] = set()
        for snap in self._snapshots_since(base, parent):
            if snap.operation not in (Operation.OVERWRITE, Operation.DELETE, Operation.REPLACE):
                continue
            rows = [
                r
                for r in self._manifest_rows(snap)
                if not r["content"] and r["added_snapshot_id"] == snap.snapshot_id
            ]
            for entries in self._entries(rows):
                mask = pc.and_(
                    pc.equal(entries.column("status"), DELETED),
                    pc.equal(entries.column("snapshot_id"), snap.snapshot_id),
                )
                paths = pc.struct_field(entries.column("data_file"), "file_path")
                out.update(pc.filter(paths, mask).to_pylist())
        return out


def _delete_key(path: str, offset: int | None) -> str:
    return f"{path}#{'' if offset is None else offset}"


# ---------------------------------------------------------------------------------------------
# Planning and reading the affected files


def _mode(metadata: TableMetadata, key: str) -> str:
    mode = metadata.properties.get(key, COPY_ON_WRITE).strip().lower()
    if mode not in (COPY_ON_WRITE, MERGE_ON_READ):
        raise InvalidArgumentError(
            f"table property {key}={mode!r} must be {COPY_ON_WRITE!r} or {MERGE_ON_READ!r}"
        )
    return mode


def _as_filter(f: str | BooleanExpression | None) -> BooleanExpression:
    if f is None:
        return AlwaysTrue()
    if isinstance(f, str):
        return parse(f)
    if not isinstance(f, BooleanExpression):
        raise InvalidArgumentError(f"expected a filter string or expression, got {f!r}")
    return f


def _is_dv(d: DataFile) -> bool:
    return (
        d.content == DataFileContent.POSITION_DELETES
        and (d.file_format or "").upper() == FileFormat.PUFFIN
    )


@dataclass
class _Context:
    transaction: Transaction
    metadata: TableMetadata
    branch: str | None
    snapshot: Snapshot | None
    schema: Schema
    v3: bool
    mode: str
    isolation: str
    operation_id: uuid.UUID = field(default_factory=uuid.uuid4)

    @property
    def io(self) -> FileIO:
        return self.transaction.table.io

    @classmethod
    def make(
        cls, transaction: Transaction, branch: str | None, mode_key: str, isolation_key: str
    ) -> _Context:
        md = transaction.table_metadata
        if md.format_version < 2 and _mode(md, mode_key) == MERGE_ON_READ:
            mode = COPY_ON_WRITE  # v1 has no delete files
        else:
            mode = _mode(md, mode_key)
        ref = md.refs.get(branch or "main")
        snapshot = md.snapshot_by_id(ref.snapshot_id) if ref is not None else None
        isolation = md.properties.get(isolation_key, "serializable").strip().lower()
        return cls(
            transaction, md, branch, snapshot, md.schema(), md.format_version >= 3, mode, isolation
        )

    def tasks(self, bound: BooleanExpression) -> list[FileScanTask]:
        if self.snapshot is None or isinstance(bound, AlwaysFalse):
            return []
        from frazil.table.scan import DataScan

        branch = self.branch or "main"
        scan = DataScan(
            self.metadata,
            self.io,
            row_filter=bound,
            snapshot_id=self.snapshot.snapshot_id,
            ref=branch if branch in self.metadata.refs else None,
        )
        return list(scan.plan_files())

    def read(
        self,
        task: FileScanTask,
        cache: DeleteCache,
        projected: Schema | None = None,
        meta: Sequence[str] | None = None,
    ) -> pa.Table:
        """The live rows of the task's file in file order with ``meta`` (default: ``_pos``,
        and on v3 lineage unless ``projected`` narrows the columns: merge-on-read only needs
        the filter's columns)."""
        if meta is None:
            meta = [_POS, ROW_ID, LAST_UPDATED] if self.v3 and projected is None else [_POS]
        schema = projected if projected is not None else self.schema
        batches = list(
            read_task(
                task,
                self.io,
                self.schema,
                schema,
                metadata_columns=meta,
                name_mapping=self.metadata.name_mapping(),
                residual=AlwaysTrue(),
                delete_cache=cache,
            )
        )
        if batches:
            return pa.Table.from_batches(batches)
        fields = list(schema_to_arrow(schema)) + [pa.field(n, pa.int64()) for n in meta]
        return pa.schema(fields).empty_table()

    def existing_positions(self, task: FileScanTask, cache: DeleteCache) -> np.ndarray:
        """Positions already deleted from the task's file by its DV or position deletes."""
        parts = []
        for d in task.delete_files:
            if _is_dv(d):
                assert d.content_offset is not None and d.content_size_in_bytes is not None
                blob = _read_range(self.io, d.file_path, d.content_offset, d.content_size_in_bytes)
                parts.append(
                    DeletionVector.from_puffin_blob(
                        blob, 0, d.content_size_in_bytes, d.file_path, d.referenced_data_file
                    )
                    .positions()
                    .to_numpy()
                )
            elif d.content == DataFileContent.POSITION_DELETES:
                parts.append(cache.positions(d, task.file.file_path))
        if not parts:
            return np.empty(0, np.int64)
        return np.concatenate(parts)


@dataclass
class _Change:
    """What one operation stages: files removed, rewritten rows, new deletes per file."""

    ctx: _Context
    removed: dict[str, FileScanTask] = field(default_factory=dict)
    rewritten: list[pa.Table] = field(default_factory=list)
    positions: dict[str, tuple[FileScanTask, np.ndarray]] = field(default_factory=dict)

    def remove_file(self, task: FileScanTask) -> None:
        self.removed[task.file.file_path] = task

    def delete_positions(self, task: FileScanTask, pos: np.ndarray, live_rows: int) -> None:
        """Deletes rows of a file: copy-on-write rewrites are the caller's; here merge-on-read
        positions, or the whole file when no live row remains."""
        if len(pos) == 0:
            return
        if len(pos) >= live_rows:
            self.remove_file(task)
            return
        self.positions[task.file.file_path] = (task, pos)

    def stage(
        self,
        new_data: Sequence[pa.Table],
        snapshot_properties: Mapping[str, str] | None,
        conflict: BooleanExpression | None,
    ) -> None:
        ctx = self.ctx
        tx = ctx.transaction
        if not self.removed and not self.positions and not any(t.num_rows for t in new_data):
            return
        writers: list[DataFileWriter] = []
        deletes = _DeleteWriter(ctx.io, ctx.metadata, ctx.operation_id)
        producer = _RowChange(tx, snapshot_properties, ctx.branch)
        try:
            for table in [*_concat(self.rewritten), *new_data]:
                if table.num_rows == 0:
                    continue
                w = _LineageWriter(ctx.io, ctx.metadata, operation_id=uuid.uuid4())
                writers.append(w)
                for f in w.write(table):
                    producer.append_data_file(f)
            dropped_deletes: set[str] = set()
            for task in self.removed.values():
                producer.delete_data_file(task.file)
                if ctx.v3:  # the spec: a removed data file's DV goes with it
                    for d in task.delete_files:
                        key = _delete_key(d.file_path, d.content_offset)
                        if _is_dv(d) and key not in dropped_deletes:
                            dropped_deletes.add(key)
                            producer.delete_delete_file(d)
            self._stage_positions(producer, deletes, dropped_deletes)
            if conflict is not None and ctx.isolation == "serializable":
                producer.conflict_detection(lambda f: rows_might_match(conflict, f))
            producer.isolation_level(ctx.isolation)
            if ctx.snapshot is not None:
                producer.validate_from_snapshot(ctx.snapshot.snapshot_id)
        except BaseException:
            for writer in writers:
                writer.abort()
            deletes.abort()
            raise
        tx.stage(WrittenFilesStep(producer, *writers, deletes))

    def _stage_positions(
        self, producer: _RowChange, deletes: _DeleteWriter, dropped: set[str]
    ) -> None:
        ctx = self.ctx
        if not self.positions:
            return
        cache = DeleteCache(ctx.io, ctx.metadata.name_mapping())
        dvs: list[tuple[DataFile, DeletionVector]] = []
        for path, (task, pos) in self.positions.items():
            producer.referenced.add(path)
            if ctx.v3:
                old = ctx.existing_positions(task, cache)
                dvs.append((task.file, DeletionVector.from_positions(np.concatenate([old, pos]))))
                # The new DV replaces the file's DV and its file-scoped position deletes.
                for d in task.delete_files:
                    if d.content != DataFileContent.POSITION_DELETES:
                        continue
                    key = _delete_key(d.file_path, d.content_offset)
                    if (_is_dv(d) or d.referenced_data_file == path) and key not in dropped:
                        dropped.add(key)
                        producer.delete_delete_file(d)
            else:
                producer.add_delete_file(deletes.write_position_deletes(task.file, pos))
        for d in deletes.write_dvs(dvs):
            producer.add_delete_file(d)


def _matched_positions(rows: pa.Table, bound: BooleanExpression, schema: Schema) -> np.ndarray:
    """``_pos`` of the rows the filter makes true (null is not true)."""
    if isinstance(bound, AlwaysTrue):
        return rows.column(_POS).to_numpy()
    matched = rows.filter(expression_to_arrow(bound, schema))
    return matched.column(_POS).to_numpy()


def _without(rows: pa.Table, pos: np.ndarray) -> pa.Table:
    if len(pos) == 0:
        return rows
    keep = pc.invert(pc.is_in(rows.column(_POS), value_set=pa.array(pos, pa.int64())))
    return rows.filter(keep)


def _data_columns(rows: pa.Table, v3: bool) -> pa.Table:
    """The rows to write again: table columns and (v3) lineage, without ``_pos``."""
    return rows.drop_columns([_POS])


def _delete_rows(change: _Change, bound: BooleanExpression) -> int:
    """Stages the removal of every row ``bound`` makes true; returns how many rows."""
    ctx = change.ctx
    cache = DeleteCache(ctx.io, ctx.metadata.name_mapping())
    deleted = 0
    for task in ctx.tasks(bound):
        residual = task.residual if task.residual is not None else bound
        if isinstance(residual, AlwaysFalse):
            continue
        if isinstance(residual, AlwaysTrue) or rows_must_match(residual, task.file):
            change.remove_file(task)
            deleted += task.file.record_count
            continue
        # Merge-on-read only writes positions: read the filter's columns, not whole rows.
        projected = (
            prune_schema(ctx.schema, referenced_field_ids(residual))
            if ctx.mode != COPY_ON_WRITE
            else None
        )
        rows = ctx.read(task, cache, projected)
        pos = _matched_positions(rows, residual, ctx.schema)
        if len(pos) == 0:
            continue
        deleted += len(pos)
        if ctx.mode == COPY_ON_WRITE:
            kept = _without(rows, pos)
            change.remove_file(task)
            if kept.num_rows:
                change.rewritten.append(_data_columns(kept, ctx.v3))
        else:
            change.delete_positions(task, pos, rows.num_rows)
    return deleted


# ---------------------------------------------------------------------------------------------
# The operations


def delete(
    transaction: Transaction,
    delete_filter: str | BooleanExpression,
    snapshot_properties: Mapping[str, str] | None = None,
    case_sensitive: bool = True,
    branch: str | None = None,
) -> None:
    """Stages the deletion of the rows for which ``delete_filter`` is true."""
    ctx = _Context.make(transaction, branch, DELETE_MODE, DELETE_ISOLATION)
    bound = bind(ctx.schema, _as_filter(delete_filter), case_sensitive)
    change = _Change(ctx)
    n = _delete_rows(change, bound)
    if n == 0:
        logger.info("delete from %s matched no rows", transaction.table.name())
    change.stage([], snapshot_properties, bound)


def overwrite(
    transaction: Transaction,
    df: Any,
    overwrite_filter: str | BooleanExpression | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
    case_sensitive: bool = True,
    branch: str | None = None,
) -> None:
    """Stages the deletion of the rows matching ``overwrite_filter`` (default: all) and the
    append of ``df``, as one snapshot."""
    ctx = _Context.make(transaction, branch, DELETE_MODE, DELETE_ISOLATION)
    bound = bind(ctx.schema, _as_filter(overwrite_filter), case_sensitive)
    data = df if isinstance(df, pa.Table) else pa.table(df) if isinstance(df, dict) else df
    if isinstance(data, pa.Table):
        # Checked before anything is read or written.
        conform(data.schema, ctx.schema)
    change = _Change(ctx)
    _delete_rows(change, bound)
    change.stage([as_table(data)], snapshot_properties, bound)


def _concat(tables: Iterable[pa.Table]) -> list[pa.Table]:
    tables = [t for t in tables if t.num_rows]
    if not tables:
        return []
    return [pa.concat_tables(tables, promote_options="permissive")]
