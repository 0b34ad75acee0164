"""Structured Streaming with the ``frazil`` data source (PySpark 4.x): a sink and a source.

::

    (df.writeStream.format("frazil").option("catalog", "prod")
       .option("checkpointLocation", "/cp/events").start("db.events"))
    spark.readStream.format("frazil").option("catalog", "prod").load("db.events")

Options are the batch source's (``catalog``, ``catalog.<key>``, ``branch``,
``snapshot-property.<key>``, ``filter``, ``selected-fields``; see
:mod:`frazil.spark.datasource`).

The sink (:class:`FrazilStreamWriter`): executors write each micro-batch's data files, the
driver commits them in one snapshot per micro-batch (an append; an overwrite of the whole
table in ``complete`` output mode), whose summary carries the query's id and the batch id
(``spark.sql.streaming.queryId``, ``spark.sql.streaming.epochId``, as the Java reference's
streaming writes). The query id is Spark's (persisted in the checkpoint's ``metadata`` file,
so it survives restarts; the ``checkpointLocation`` option must be given). Exactly once across
restarts: when Spark replays a batch whose commit landed before the query died (its own commit
log did not record it), the sink finds a snapshot of this query with that batch id or a later
one among the ancestors of the branch head, skips the commit and deletes the replay's files.

The source (:class:`FrazilStreamReader`): offsets are positions in the table's history, as the
Java reference's ``StreamingOffset``: ``{"version": 1, "snapshot_id": s, "position": p,
"scan_all_files": b}``, meaning every file before position ``p`` of snapshot ``s`` (of the
data files it added, in plan order; of all its files with ``scan_all_files``) and every earlier
snapshot was read. The stream starts at the oldest ancestor of the current snapshot, reading
all of its live rows (deletes applied), then reads the data files each later ``append``
snapshot added (:mod:`frazil.table.scan.incremental`). ``replace`` snapshots (compactions) are
skipped; ``delete`` and ``overwrite`` snapshots stop the stream with an error unless
``streaming-skip-delete-snapshots`` / ``streaming-skip-overwrite-snapshots`` is true (their
removed rows are not retracted). ``stream-from-timestamp`` (epoch ms) starts at the oldest
ancestor committed at or after that time, reading only what snapshots added.
``streaming-max-files-per-micro-batch`` and ``streaming-max-rows-per-micro-batch`` limit a
micro-batch (at least one file each); with ``Trigger.AvailableNow`` the stream ends at the
snapshot current when the query started.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from pyspark.sql.datasource import (
    DataSourceStreamReader,
    DataSourceStreamWriter,
    InputPartition,
    WriterCommitMessage,
)

from frazil.exceptions import FrazilError, InvalidArgumentError, ValidationError
from frazil.expressions import AlwaysTrue
from frazil.io import load_file_io
from frazil.schema import Schema
from frazil.spark.common import (
    catalog_from_options,
    executor_io,
    io_spec,
    read_args,
    table_identifier,
)
from frazil.spark.read import (
    SplitOptions,
    encode_groups,
    group_tasks,
    read_tasks,
    spark_arrow_schema,
    task_sizes,
)
from frazil.spark.write import commit_files, write_task_files
from frazil.table.scan import DataScan, table_partition_type
from frazil.table.scan.incremental import IncrementalAppendScan
from frazil.table.scan.read import DEFAULT_BATCH_SIZE
from frazil.table.update.manage_snapshots import ancestors_of

try:  # PySpark 4.1+
    from pyspark.sql.datasource import DataSourceStreamArrowWriter as _StreamWriterBase
except ImportError:  # pragma: no cover - PySpark 4.0
    _StreamWriterBase = DataSourceStreamWriter

try:  # PySpark 4.2+
    from pyspark.sql.streaming.datasource import (  # type: ignore[import-not-found,unused-ignore]
        SupportsTriggerAvailableNow as _AvailableNow,
    )
except ImportError:  # pragma: no cover - older PySpark 4

    class _AvailableNow:  # type: ignore[no-redef]
        pass


if TYPE_CHECKING:
    from frazil.metadata import Snapshot
    from frazil.table import Table
    from frazil.table.scan.arrow_plan import ScanPlan

__all__ = [
    "EPOCH_ID_PROPERTY",
    "QUERY_ID_PROPERTY",
    "FrazilStreamReader",
    "FrazilStreamWriter",
    "last_committed_batch",
]

log = logging.getLogger(__name__)

#: Snapshot summary keys of a streaming commit (the Java reference's names).
QUERY_ID_PROPERTY = "spark.sql.streaming.queryId"
EPOCH_ID_PROPERTY = "spark.sql.streaming.epochId"

SKIP_DELETES = "streaming-skip-delete-snapshots"
SKIP_OVERWRITES = "streaming-skip-overwrite-snapshots"
FROM_TIMESTAMP = "stream-from-timestamp"
MAX_FILES = "streaming-max-files-per-micro-batch"
MAX_ROWS = "streaming-max-rows-per-micro-batch"


def _load(options: Mapping[str, str]) -> Table:
    return catalog_from_options(options).load_table(table_identifier(options))


def _flag(options: Mapping[str, str], key: str) -> bool:
    value = str(options.get(key) or "false").strip().lower()
    if value not in ("true", "false"):
        raise InvalidArgumentError(f"option {key} must be true or false, got {value!r}")
    return value == "true"


def _positive(options: Mapping[str, str], key: str) -> int | None:
    value = options.get(key)
    if value is None or value == "":
        return None
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n <= 0:
        raise InvalidArgumentError(f"option {key} must be a positive integer, got {value!r}")
    return n


# ---------------------------------------------------------------------------------------------
# the sink


def last_committed_batch(table: Table, query_id: str, branch: str | None = None) -> int | None:
    """The batch id of the newest snapshot that streaming query ``query_id`` committed among the
    ancestors of the branch head (default ``main``), or ``None``."""
    md = table.metadata
    head = md.snapshot_by_name(branch) if branch else md.current_snapshot()
    snapshots = {s.snapshot_id: s for s in md.snapshots}
    for s in ancestors_of(None if head is None else head.snapshot_id, snapshots):
        summary = s.summary or {}
        if summary.get(QUERY_ID_PROPERTY) == query_id:
            epoch = summary.get(EPOCH_ID_PROPERTY)
            try:
                return int(epoch) if epoch is not None else None
            except ValueError:
                raise ValidationError(
                    f"{table.full_name()}: snapshot {s.snapshot_id} has a malformed "
                    f"{EPOCH_ID_PROPERTY} {epoch!r}"
                ) from None
    return None


def query_id(options: Mapping[str, str]) -> str:
    """The streaming query's id: Spark's, from the checkpoint's ``metadata`` file."""
    # Spark hands options over lower-cased
    location = next((v for k, v in options.items() if k.lower() == "checkpointlocation"), None)
    if not location:
        raise InvalidArgumentError(
            "the frazil streaming sink needs the checkpointLocation option: the query id it "
            "holds identifies the batches already committed"
        )
    path = location.rstrip("/") + "/metadata"
    try:
        text = load_file_io({}, location).read(path)
        qid = json.loads(text)["id"]
    except (OSError, ValueError, KeyError, TypeError, FrazilError) as e:
        raise ValidationError(f"cannot read the streaming query id from {path}: {e}") from e
    return str(qid)


@dataclass
class StreamCommitMessage(WriterCommitMessage):  # type: ignore[misc]  # untyped before Spark 4
    files: list[str]  # content-file JSON
    paths: list[str]


class FrazilStreamWriter(_StreamWriterBase):  # type: ignore[misc]  # untyped before Spark 4
    """Writes each micro-batch's rows on the executors and commits them once (module docstring)."""

    def __init__(self, options: Mapping[str, str], overwrite: bool) -> None:
        self.options = dict(options)
        self.overwrite = overwrite
        table = _load(self.options)
        self.metadata_json = table.metadata.to_json()
        self.io_props, self.io_location = io_spec(table)
        self.write_id = str(uuid.uuid4())

    def write(self, iterator: Iterator[Any]) -> StreamCommitMessage:
        written = write_task_files(
            self.metadata_json, self.io_props, self.io_location, self.write_id, iterator
        )
        return StreamCommitMessage(written.texts, written.paths)

    def commit(self, messages: list[Any], batchId: int) -> None:
        table = _load(self.options)
        qid = query_id(self.options)
        branch = self.options.get("branch") or None
        last = last_committed_batch(table, qid, branch)
        if last is not None and batchId <= last:
            log.info(
                "%s: batch %d of query %s was committed already (last: %d): skipped",
                table.full_name(), batchId, qid, last,
            )  # fmt: skip
            self._delete(messages)
            return
        props = {
            k[len("snapshot-property.") :]: v
            for k, v in self.options.items()
            if k.lower().startswith("snapshot-property.")
        }
        props[QUERY_ID_PROPERTY] = qid
        props[EPOCH_ID_PROPERTY] = str(batchId)
        texts = [t for m in messages if m is not None for t in m.files]
        commit_files(
            table,
            texts,
            mode="overwrite" if self.overwrite else "append",
            snapshot_properties=props,
            branch=branch,
        )

    def abort(self, messages: list[Any], batchId: int) -> None:
        self._delete(messages)

    def _delete(self, messages: list[Any]) -> None:
        io = executor_io(self.io_props, self.io_location)
        for m in messages:
            for p in getattr(m, "paths", None) or []:
                try:
                    io.delete(p)
                except Exception:
                    log.warning("could not delete %s", p, exc_info=True)


# ---------------------------------------------------------------------------------------------
# the source


START = {"version": 1, "snapshot_id": -1, "position": -1, "scan_all_files": False}


@dataclass(frozen=True)
class _Offset:
    snapshot_id: int
    position: int
    scan_all_files: bool

    @classmethod
    def of(cls, value: Mapping[str, Any] | None) -> _Offset:
        value = value or START
        try:
            return cls(
                int(value["snapshot_id"]), int(value["position"]), bool(value["scan_all_files"])
            )
        except (KeyError, TypeError, ValueError):
            raise ValidationError(f"malformed frazil streaming offset: {value!r}") from None

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "snapshot_id": self.snapshot_id,
            "position": self.position,
            "scan_all_files": self.scan_all_files,
        }

    @property
    def is_start(self) -> bool:
        return self.snapshot_id == -1


@dataclass
class _SnapshotFiles:
    """The files a snapshot contributes to the stream, as an Arrow plan, and what reads need."""

    plan: ScanPlan | None
    context: dict[str, Any]
    record_counts: np.ndarray

    def __len__(self) -> int:
        return len(self.record_counts)


class FrazilStreamReader(DataSourceStreamReader, _AvailableNow):  # type: ignore[misc]
    """Reads what the table's snapshots append, micro-batch by micro-batch (module docstring)."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self.options = dict(options)
        self.skip_deletes = _flag(self.options, SKIP_DELETES)
        self.skip_overwrites = _flag(self.options, SKIP_OVERWRITES)
        self.max_files = _positive(self.options, MAX_FILES)
        self.max_rows = _positive(self.options, MAX_ROWS)
        ts = self.options.get(FROM_TIMESTAMP)
        try:
            self.from_timestamp = int(ts) if ts not in (None, "") else None
        except ValueError:
            raise InvalidArgumentError(
                f"option {FROM_TIMESTAMP} must be epoch milliseconds, got {ts!r}"
            ) from None
        table = _load(self.options)
        # The stream's rows keep the schema it started with (Spark fixed it then).
        self._schema = table.metadata.schema()
        self._files: dict[tuple[int, bool], _SnapshotFiles] = {}
        self._last: _Offset | None = None
        # Trigger.AvailableNow: the snapshot current when the query started (-1: none)
        self._target: int | None = None

    # ---- offsets

    def _table(self) -> Table:
        return _load(self.options)

    def prepareForTriggerAvailableNow(self) -> None:
        current = self._table().current_snapshot()
        self._target = -1 if current is None else current.snapshot_id

    def _head(self, table: Table) -> Snapshot | None:
        """The newest snapshot the stream reads: the current one, or AvailableNow's target."""
        if self._target is None:
            return table.current_snapshot()
        return table.metadata.snapshot_by_id(self._target) if self._target != -1 else None

    def _starting_offset(self, table: Table) -> _Offset:
        current = self._head(table)
        if current is None:
            return _Offset.of(START)
        snapshots = {s.snapshot_id: s for s in table.metadata.snapshots}
        lineage = list(ancestors_of(current.snapshot_id, snapshots))
        if self.from_timestamp is None:
            return _Offset(lineage[-1].snapshot_id, 0, True)
        after = [s for s in lineage if s.timestamp_ms >= self.from_timestamp]
        if not after:
            return _Offset.of(START)
        return _Offset(after[-1].snapshot_id, 0, False)

    def initialOffset(self) -> dict[str, Any]:
        return self._starting_offset(self._table()).to_json()

    def getDefaultReadLimit(self) -> Any:
        from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxFiles, ReadMaxRows

        if self.max_files is not None:
            return ReadMaxFiles(self.max_files)
        if self.max_rows is not None:
            return ReadMaxRows(self.max_rows)
        return ReadAllAvailable()

    def _limits(self, limit: Any) -> tuple[int | None, int | None]:
        if limit is None:
            return None, None
        files = getattr(limit, "max_files", None)
        rows = getattr(limit, "max_rows", None)
        return files, rows

    def _lineage(self, table: Table, start: int) -> list[Snapshot]:
        """The snapshots from ``start`` (first) to the current one, oldest first."""
        md = table.metadata
        current = self._head(table)
        snapshots = {s.snapshot_id: s for s in md.snapshots}
        out = []
        for s in ancestors_of(None if current is None else current.snapshot_id, snapshots):
            out.append(s)
            if s.snapshot_id == start:
                return out[::-1]
        raise ValidationError(
            f"{table.full_name()}: the stream's snapshot {start} is no longer an ancestor of the "
            "current snapshot (expired, or the table was rolled back)"
        )

    def _processed(self, snapshot: Snapshot, scan_all: bool) -> bool:
        """Whether the stream reads a snapshot's files; an error for changes it cannot read."""
        if scan_all:
            return True
        op = snapshot.operation
        if op == "append":
            return True
        if op == "replace":
            return False
        if op == "delete":
            if self.skip_deletes:
                return False
            raise ValidationError(
                f"cannot process delete snapshot {snapshot.snapshot_id}: to ignore deletes, "
                f"set {SKIP_DELETES}=true"
            )
        if op == "overwrite":
            if self.skip_overwrites:
                return False
            raise ValidationError(
                f"cannot process overwrite snapshot {snapshot.snapshot_id}: to ignore "
                f"overwrites, set {SKIP_OVERWRITES}=true"
            )
        raise ValidationError(
            f"cannot process snapshot {snapshot.snapshot_id}: unknown operation {op!r}"
        )

    def _counts(self, table: Table, snapshot: Snapshot, scan_all: bool) -> _SnapshotFiles:
        key = (snapshot.snapshot_id, scan_all)
        found = self._files.get(key)
        if found is None:
            found = self._files[key] = self._plan(table, snapshot, scan_all)
        return found

    def _plan(self, table: Table, snapshot: Snapshot, scan_all: bool) -> _SnapshotFiles:
        if not self._processed(snapshot, scan_all):
            return _SnapshotFiles(None, {}, np.zeros(0, np.int64))
        scan = _stream_scan(table, self.options, self._schema, snapshot, scan_all)
        # Executors evaluate residuals on rows: tasks travel without column stats.
        plan = scan.include_column_stats(False).plan_files_arrow()
        counts = plan.tasks.column("record_count").to_numpy().astype(np.int64)
        return _SnapshotFiles(plan, _context(table, scan, plan), counts)

    def latestOffset(
        self, start: dict[str, Any] | None = None, limit: Any = None
    ) -> dict[str, Any]:
        table = self._table()
        begin = _Offset.of(start) if start is not None else (self._last or _Offset.of(START))
        if begin.is_start:
            begin = self._starting_offset(table)
            if begin.is_start:
                return START
        max_files, max_rows = self._limits(limit)
        files = rows = 0
        lineage = self._lineage(table, begin.snapshot_id)
        position, scan_all = begin.position, begin.scan_all_files
        at = lineage[0]
        for k, snapshot in enumerate(lineage):
            if k > 0:
                position, scan_all = 0, False
            at = snapshot
            counts = self._counts(table, snapshot, scan_all).record_counts
            available = len(counts) - position
            take = available
            if max_files is not None:
                take = min(take, max_files - files)
            if max_rows is not None and take > 0:
                cum = np.cumsum(counts[position : position + take])
                take = int(np.searchsorted(cum, max_rows - rows, side="right"))
            if take <= 0 and files == 0 and available > 0:
                take = 1  # a micro-batch reads at least one file
            take = max(take, 0)
            position += take
            files += take
            rows += int(counts[position - take : position].sum())
            if take < available:
                break
        end = _Offset(at.snapshot_id, position, scan_all)
        self._last = end
        return end.to_json()

    def reportLatestOffset(self) -> dict[str, Any] | None:
        current = self._table().current_snapshot()
        return None if current is None else {"snapshot_id": current.snapshot_id}

    # ---- micro-batches

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        table = self._table()
        first, last = _Offset.of(start), _Offset.of(end)
        if last.is_start:
            return []
        if first.is_start:
            first = self._starting_offset(table)
        lineage = self._lineage(table, first.snapshot_id)
        ids = [s.snapshot_id for s in lineage]
        if last.snapshot_id not in ids:
            raise ValidationError(
                f"{table.full_name()}: end offset snapshot {last.snapshot_id} does not follow "
                f"snapshot {first.snapshot_id}"
            )
        lineage = lineage[: ids.index(last.snapshot_id) + 1]
        parallelism = int(self.options.get("parallelism") or os.cpu_count() or 1)
        out = []
        for k, snapshot in enumerate(lineage):
            scan_all = first.scan_all_files if k == 0 else False
            files = self._counts(table, snapshot, scan_all)
            lo = first.position if k == 0 else 0
            hi = last.position if k == len(lineage) - 1 else len(files)
            if files.plan is None or hi <= lo:
                continue
            rows = np.arange(lo, hi)
            sizes = task_sizes(files.plan)[rows]
            groups = group_tasks(sizes, SplitOptions.of(table).target, parallelism)
            for tasks in encode_groups(files.plan, [rows[g] for g in groups]):
                out.append(InputPartition((tasks, files.context)))
        log.info("%s: micro-batch %s..%s: %d partitions", table.full_name(), start, end, len(out))
        return out

    def read(self, partition: InputPartition) -> Iterator[Any]:
        tasks, context = partition.value
        yield from read_tasks(context, tasks)

    def commit(self, end: dict[str, Any]) -> None:
        done = _Offset.of(end)
        self._files = {k: v for k, v in self._files.items() if k[0] == done.snapshot_id}

    def stop(self) -> None:
        self._files.clear()


class _SnapshotScan(DataScan):
    """All live rows of one snapshot, read with the stream's schema (a scan of a snapshot id
    would read with the snapshot's own)."""

    stream_schema: Schema

    def table_schema(self) -> Schema:
        return self.stream_schema


def _stream_scan(
    table: Table, options: Mapping[str, str], schema: Schema, snapshot: Snapshot, scan_all: bool
) -> DataScan:
    """The scan of one snapshot's part of the stream: all its live files, or those it added."""
    args = read_args(options)
    fields = tuple(args["selected_fields"] or ("*",))
    row_filter = args["row_filter"] or AlwaysTrue()
    md = table.metadata
    if scan_all:
        scan = _SnapshotScan(md, table.io, row_filter, fields, snapshot_id=snapshot.snapshot_id)
        scan.stream_schema = schema
        return scan
    # from the parent, exclusive (without one, the lineage is the snapshot alone)
    return IncrementalAppendScan(
        md,
        table.io,
        row_filter,
        fields,
        from_snapshot_id=snapshot.parent_snapshot_id,
        to_snapshot_id=snapshot.snapshot_id,
    )


def _context(table: Table, scan: Any, plan: ScanPlan) -> dict[str, Any]:
    """What executors need to read a plan's tasks (as :func:`frazil.spark.read.plan`)."""
    io_props, io_location = io_spec(table)
    return {
        "io_props": io_props,
        "io_location": io_location,
        "projection": scan.projection(),
        "metadata_columns": scan._metadata_columns(),
        "partition_type": table_partition_type(table.metadata, scan.table_schema()),
        "name_mapping": table.metadata.name_mapping(),
        "case_sensitive": True,
        "batch_size": DEFAULT_BATCH_SIZE,
        "spark_arrow_schema": spark_arrow_schema(scan.arrow_schema()),
        "delete_files": plan.delete_files,
        "schema": plan.schema,
        "specs": plan.specs,
    }
