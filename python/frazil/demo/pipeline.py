"""The demo pipeline's steps (see :mod:`frazil.demo`): the table, the generated events, the
concurrent Spark writes, deletes, evolution, pruned scans, time travel and the final read."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import frazil.spark
from frazil.catalog import load_catalog
from frazil.exceptions import FrazilError
from frazil.expressions import AlwaysTrue, bind, parse
from frazil.manifest import read_manifest_list
from frazil.manifest.content_file import is_deletion_vector
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.table.scan.plan import planner_for
from frazil.transforms import parse as parse_transform
from frazil.types import DecimalType, LongType, NestedField, StringType, TimestamptzType

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from rich.console import Console

    from frazil.catalog import Catalog
    from frazil.metadata import Snapshot
    from frazil.partitioning import PartitionSpec
    from frazil.schema import Schema
    from frazil.table import Table

__all__ = ["DemoError", "DemoOptions", "DemoSummary", "check_java", "run"]

log = logging.getLogger(__name__)

DAY_US = 86_400_000_000
START_US = 1_709_251_200_000_000  # 2024-03-01T00:00:00Z
DAYS = 14
DEFAULT_ROWS = 3_000_000
QUICK_ROWS = 40_000

# The commits, in time order: (label, first day, last day (exclusive), concurrent group).
# Rows are split in proportion to the days each covers. Batches 3 and 4 are written at once.
BATCHES: tuple[tuple[str, float, float, int | None], ...] = (
    ("batch 1", 0.0, 3.5, None),
    ("batch 2", 3.5, 7.0, None),
    ("batch 3", 7.0, 10.0, 1),
    ("batch 4", 10.0, 13.0, 1),
)
# Written after the schema and spec evolve: the newest day, with the new column, partitioned
# by hour and by 4 user buckets (so the hourly files are not tiny).
EVOLVED_BATCH = ("batch 5 (evolved)", 13.0, 14.0)
DELETE_FILTER = "event_type = 'refund' AND country IN ('US', 'GB')"
TAG = "before-delete"

EVENT_TYPES = (("view", 0.55), ("click", 0.80), ("add_to_cart", 0.90), ("purchase", 0.97))
COUNTRIES = ("US", "DE", "GB", "FR", "IN", "BR", "JP", "NO", "CA", "ES", "NL", "KR")
DEVICES = ("ios", "android", "web")
CHANNELS = ("organic", "ads", "email", "social")


class DemoError(FrazilError):
    """The demo cannot run here (Java or PySpark missing) or a check failed."""


@dataclass
class DemoOptions:
    warehouse: str = "warehouse"
    rows: int = DEFAULT_ROWS
    catalog_type: str = "sql"  # or "filesystem" (the Java Hadoop catalog's layout)
    namespace: str = "demo"
    table: str = "events"
    seed: int = 7
    master: str = "local[2]"

    @property
    def identifier(self) -> str:
        return f"{self.namespace}.{self.table}"


@dataclass
class BatchResult:
    label: str
    rows: int
    snapshot_id: int
    seconds: float
    data_files: int
    retries: int  # commit attempts after the first (from the manifest list's name)


@dataclass
class PruneResult:
    description: str
    row_filter: str
    manifests_total: int
    manifests_kept: int
    files_total: int
    files_planned: int
    deletes_attached: int
    rows: int
    plan_ms: float

    @property
    def manifests_pruned(self) -> int:
        return self.manifests_total - self.manifests_kept

    @property
    def files_pruned(self) -> int:
        return self.files_total - self.files_planned


@dataclass
class TimeTravel:
    label: str
    snapshot_id: int
    expected: int
    read: int


@dataclass
class DvFile:
    path: str
    dvs: int
    rows: int
    size: int


@dataclass
class DemoSummary:
    identifier: str
    catalog_type: str
    warehouse: str
    metadata_location: str
    table_location: str
    batches: list[BatchResult] = field(default_factory=list)
    rows_written: int = 0
    rows_matching_delete: int = 0
    rows_deleted: int = 0  # the delete snapshot's added-position-deletes
    rows_read: int = 0  # frazil.spark.read, on the executors
    rows_read_local: int = 0  # frazil's own scan in this process
    retries_logged: int = 0
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    dv_files: list[DvFile] = field(default_factory=list)
    data_files_by_spec: dict[int, int] = field(default_factory=dict)  # live files, at the end
    data_bytes: int = 0
    pruning: list[PruneResult] = field(default_factory=list)
    time_travel: list[TimeTravel] = field(default_factory=list)
    by_event_type: list[tuple[str, int, str]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    spark_version: str = ""
    schema_columns: list[str] = field(default_factory=list)
    spec: str = ""

    @property
    def operations(self) -> list[str]:
        return [s["operation"] for s in self.snapshots]

    @property
    def consistent(self) -> bool:
        return (
            self.rows_written - self.rows_deleted == self.rows_read == self.rows_read_local
            and self.rows_deleted == self.rows_matching_delete
            and all(t.expected == t.read for t in self.time_travel)
        )


# --------------------------------------------------------------------------------------------
# the environment


def check_java() -> str:
    """The ``java -version`` banner's first line; :class:`DemoError` saying what to install
    when there is no working Java (Spark runs on the JVM)."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    how = (
        "Spark runs on the JVM: install Java 17 (PySpark 3.5 also runs on 8 and 11), e.g. "
        "`sudo apt-get install openjdk-17-jre-headless` (Debian/Ubuntu), `brew install openjdk@17` "
        "(macOS) or from https://adoptium.net, then put `java` on PATH or set JAVA_HOME."
    )
    if not java or not os.access(java, os.X_OK):
        where = f"JAVA_HOME={home} has no bin/java" if home else "`java` is not on PATH"
        raise DemoError(f"the demo needs Java, and {where}. {how}")
    try:
        out = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError) as e:
        raise DemoError(f"`{java} -version` failed ({e}). {how}") from None
    banner = (out.stderr or out.stdout).strip().splitlines()
    if out.returncode != 0 or not banner:
        raise DemoError(f"`{java} -version` failed (exit {out.returncode}). {how}")
    return banner[0]


def start_spark(master: str = "local[2]", app: str = "frazil-demo") -> SparkSession:
    """A local SparkSession whose Python workers run this interpreter (where frazil is)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise DemoError(
            "the demo needs PySpark: pip install 'pyspark==3.5.9' pandas (or pyspark 4.x)"
        ) from None
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if master.startswith("local"):
        # a local run needs no network address (and Spark warns when it guesses one)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (
        SparkSession.builder.master(master)
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        .config("spark.executor.extraJavaOptions", "-Duser.timezone=UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


# --------------------------------------------------------------------------------------------
# the data


def table_schema() -> Schema:
    """The events table: every column optional except the event id (Spark's expressions are
    nullable, and a nullable column may not be written into a required one)."""
    return Schema(
        NestedField(1, "event_id", LongType(), required=True),
        NestedField(2, "user_id", LongType()),
        NestedField(3, "ts", TimestamptzType()),
        NestedField(4, "event_type", StringType()),
        NestedField(5, "amount", DecimalType(10, 2)),
        NestedField(6, "country", StringType()),
        NestedField(7, "device", StringType(), doc="null when the client sent none"),
    )


def partition_spec() -> PartitionSpec:
    return PartitionSpec(
        PartitionField(3, 1000, parse_transform("day"), "ts_day"),
        PartitionField(2, 1001, parse_transform("bucket[16]"), "user_bucket"),
    )


def events(spark: SparkSession, first_id: int, rows: int, day_from: float, day_to: float,
           seed: int, *, channel: bool = False, partitions: int = 4) -> DataFrame:  # fmt: skip
    """``rows`` events with ids from ``first_id``, timestamps uniform in [day_from, day_to) of
    March 2024. Every value is a hash of (id, seed, column), so the rows are the same for any
    number of partitions; Spark SQL expressions only, no Python per row."""

    def u(k: int) -> str:  # uniform in [0, 1)
        return f"(abs(xxhash64(id, {seed}, {k}) % 1000003) / 1000003.0)"

    def pick(values: Sequence[str], k: int, skew: float = 1.0) -> str:
        items = ", ".join(f"'{v}'" for v in values)
        index = f"cast(floor(pow({u(k)}, {skew}) * {len(values)}) AS int) + 1"
        return f"element_at(array({items}), {index})"

    kind = "CASE " + " ".join(f"WHEN {u(3)} < {upto} THEN '{name}'" for name, upto in EVENT_TYPES)
    kind += " ELSE 'refund' END"
    start = START_US + int(day_from * DAY_US)
    span = int((day_to - day_from) * DAY_US)
    columns = [
        "id AS event_id",
        # a few heavy users: the cube pulls ids towards 1
        f"cast(floor(pow({u(1)}, 3) * 200000) + 1 AS bigint) AS user_id",
        f"timestamp_micros({start} + cast({u(2)} * {span} AS bigint)) AS ts",
        f"{kind} AS event_type",
        f"CASE WHEN {u(3)} >= {EVENT_TYPES[-2][1]} "
        f"THEN cast(round(2 + pow({u(4)}, 2) * 498, 2) AS decimal(10, 2)) END AS amount",
        f"{pick(COUNTRIES, 5, 1.6)} AS country",
        f"CASE WHEN {u(6)} >= 0.12 THEN {pick(DEVICES, 7)} END AS device",
    ]
    if channel:
        columns.append(f"{pick(CHANNELS, 8, 1.3)} AS channel")
    return spark.range(first_id, first_id + rows, numPartitions=partitions).selectExpr(*columns)


def batch_rows(total: int) -> list[int]:
    """How many rows each commit writes (proportional to its days; the evolved batch last)."""
    spans = [b[2] - b[1] for b in BATCHES] + [EVOLVED_BATCH[2] - EVOLVED_BATCH[1]]
    rows = [int(total * s / DAYS) for s in spans]
    rows[-1] += total - sum(rows)
    return rows


# --------------------------------------------------------------------------------------------
# observing the run


class _RetryCounter(logging.Handler):
    """Counts the transaction log's records of a commit redone on a newer table for one table:
    "commit ... failed; retry" and "commit ... rebased" (another writer committed first)."""

    def __init__(self, table_name: str) -> None:
        super().__init__(logging.INFO)
        self.table_name = table_name
        self.count = 0
        self._lock2 = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        if msg.startswith(
            (f"commit to {self.table_name} failed", f"commit to {self.table_name} rebased")
        ):
            with self._lock2:
                self.count += 1


@contextlib.contextmanager
def _counting_retries(table_name: str) -> Iterator[_RetryCounter]:
    logger = logging.getLogger("frazil.table.transaction")
    counter = _RetryCounter(table_name)
    old_level = logger.level
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    logger.addHandler(counter)
    try:
        yield counter
    finally:
        logger.removeHandler(counter)
        logger.setLevel(old_level)


_ATTEMPT = re.compile(r"snap-\d+-(\d+)-[0-9a-f-]+\.avro$")


def commit_attempts(snapshot: Snapshot) -> int | None:
    """The attempt that committed a frazil snapshot (1 = first try): its manifest list is named
    ``snap-<snapshot id>-<attempt>-<commit uuid>.avro``."""
    m = _ATTEMPT.search(snapshot.manifest_list or "")
    return int(m.group(1)) if m else None


class _SparkTasks:
    """Feeds a progress bar from Spark's status tracker: tasks done over tasks of the stages
    that ran since it started (polled on a thread)."""

    def __init__(self, spark: SparkSession, update: Callable[[int, int], None]) -> None:
        self._tracker = spark.sparkContext.statusTracker()
        self._update = update
        self._seen: dict[int, tuple[int, int]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True, name="demo-progress")

    def _poll(self) -> None:
        while not self._stop.wait(0.25):
            try:
                for sid in self._tracker.getActiveStageIds():
                    info = self._tracker.getStageInfo(sid)
                    if info is not None:
                        self._seen[sid] = (info.numCompletedTasks, info.numTasks)
                done = sum(d for d, _ in self._seen.values())
                total = sum(t for _, t in self._seen.values())
                self._update(done, total)
            except Exception:  # the session may be stopping; progress is cosmetic
                log.debug("progress polling failed", exc_info=True)

    def __enter__(self) -> _SparkTasks:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=2)


# --------------------------------------------------------------------------------------------
# the pipeline


class _Steps:
    """Timings and a progress bar per step; prints one line when a step ends."""

    def __init__(self, console: Console, spark: SparkSession | None = None) -> None:
        self.console = console
        self.spark = spark
        self.timings: dict[str, float] = {}

    @contextlib.contextmanager
    def step(self, name: str, spark_tasks: bool = False) -> Iterator[dict[str, str]]:
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        note: dict[str, str] = {}
        columns = [SpinnerColumn(), TextColumn("{task.description}")]
        if spark_tasks:
            columns += [BarColumn(), TextColumn("{task.completed}/{task.total} Spark tasks")]
        columns.append(TimeElapsedColumn())
        t0 = time.perf_counter()
        with Progress(*columns, console=self.console, transient=True) as progress:
            task = progress.add_task(name, total=None)
            poller: Any = contextlib.nullcontext()
            if spark_tasks and self.spark is not None:

                def update(done: int, total: int) -> None:
                    progress.update(task, completed=done, total=max(total, 1))

                poller = _SparkTasks(self.spark, update)
            with poller:
                yield note
        seconds = time.perf_counter() - t0
        self.timings[name] = seconds
        extra = f": {note['result']}" if note.get("result") else ""
        self.console.print(f"[green]✓[/] {name}{extra} [dim]({seconds:.1f} s)[/]")


def _load_catalog(options: DemoOptions) -> tuple[Catalog, str]:
    warehouse = str(Path(options.warehouse).expanduser().resolve())
    Path(warehouse).mkdir(parents=True, exist_ok=True)
    kind = options.catalog_type.lower()
    if kind not in ("sql", "filesystem", "hadoop"):
        raise DemoError(f"unknown catalog type {options.catalog_type!r} (sql or filesystem)")
    return load_catalog("demo", type=kind, warehouse=warehouse), warehouse


def _spark_write(df: DataFrame, identifier: str, catalog: Catalog, label: str) -> Snapshot:
    return frazil.spark.write(
        df, identifier, catalog, mode="append", snapshot_properties={"demo.batch": label}
    )


def _snapshot_of(table: Table, label: str) -> Snapshot:
    for s in table.snapshots():
        if (s.summary or {}).get("demo.batch") == label:
            return s
    raise DemoError(f"no snapshot of {table.full_name()} has demo.batch={label!r}")


def _data_files(table: Table) -> int:
    return len(list(table.scan().plan_files()))


def _count_manifests(table: Table, row_filter: str | None) -> tuple[int, int]:
    """(manifests in the current snapshot's list, manifests a filter keeps by their partition
    summaries), as the native planner decides."""
    md = table.metadata
    snapshot = md.current_snapshot()
    if snapshot is None or snapshot.manifest_list is None:
        return 0, 0
    schema = md.schema()
    bound = bind(schema, AlwaysTrue() if row_filter is None else parse(row_filter), True)
    path = md.resolve(snapshot.manifest_list)
    manifests = read_manifest_list(table.io.read(path), path=path)
    if manifests.num_rows == 0:
        return 0, 0
    batch = manifests.combine_chunks().to_batches()[0]
    import pyarrow as pa
    import pyarrow.compute as pc

    keep = pa.array(planner_for(md, schema, bound).prune_manifests(batch))
    return manifests.num_rows, int(pc.sum(keep.cast(pa.int64())).as_py() or 0)


def _prune(
    spark: SparkSession, table: Table, catalog: Catalog, description: str, row_filter: str
) -> PruneResult:
    manifests_total, manifests_kept = _count_manifests(table, row_filter)
    all_tasks = list(table.scan().plan_files())
    t0 = time.perf_counter()
    tasks = list(table.scan(row_filter=row_filter).plan_files())
    plan_ms = (time.perf_counter() - t0) * 1e3
    rows = frazil.spark.read(
        spark, table.identifier, catalog, row_filter=row_filter, selected_fields=["event_id"]
    ).count()
    return PruneResult(
        description,
        row_filter,
        manifests_total,
        manifests_kept,
        len(all_tasks),
        len(tasks),
        sum(len(t.delete_files) for t in tasks),
        rows,
        plan_ms,
    )


def _dv_files(table: Table) -> list[DvFile]:
    by_path: dict[str, DvFile] = {}
    seen: set[tuple[str, int | None]] = set()
    for task in table.scan().plan_files():
        for d in task.delete_files:
            if not is_deletion_vector(d):
                continue
            key = (d.file_path, d.content_offset)
            if key in seen:
                continue
            seen.add(key)
            entry = by_path.setdefault(d.file_path, DvFile(d.file_path, 0, 0, d.file_size_in_bytes))
            entry.dvs += 1
            entry.rows += d.record_count
    return list(by_path.values())


def _snapshot_rows(table: Table) -> list[dict[str, Any]]:
    rows = []
    for s in table.snapshots():
        summary = dict(s.summary or {})
        rows.append(
            {
                "snapshot_id": s.snapshot_id,
                "parent_id": s.parent_snapshot_id,
                "sequence_number": s.sequence_number,
                "timestamp_ms": s.timestamp_ms,
                "operation": summary.get("operation", "?"),
                "label": summary.get("demo.batch", ""),
                "attempt": commit_attempts(s),
                "summary": summary,
            }
        )
    return rows


def run(
    options: DemoOptions, console: Console | None = None, spark: SparkSession | None = None
) -> DemoSummary:
    """Runs the pipeline (see the module docstring) and returns what happened. Starts a local
    SparkSession unless ``spark`` is given (which is then left running)."""
    from rich.console import Console

    console = console or Console()
    steps = _Steps(console)
    own_spark = spark is None
    if spark is None:
        with steps.step("checking Java") as note:
            note["result"] = check_java()
        with steps.step("starting Spark") as note:
            spark = start_spark(options.master)
            note["result"] = f"PySpark {spark.version}, {options.master}"
    steps.spark = spark
    try:
        return _pipeline(options, console, spark, steps)
    finally:
        if own_spark:
            spark.stop()


def _pipeline(
    options: DemoOptions, console: Console, spark: SparkSession, steps: _Steps
) -> DemoSummary:
    catalog, warehouse = _load_catalog(options)
    ident = options.identifier
    rows = batch_rows(options.rows)
    partitions = max(2, min(16, options.rows // 250_000))

    with steps.step("creating the table") as note:
        catalog.create_namespace_if_not_exists(options.namespace)
        if catalog.table_exists(ident):
            catalog.drop_table(ident, purge=True)
        table = catalog.create_table(
            ident,
            table_schema(),
            partition_spec=partition_spec(),
            properties={
                "format-version": "3",
                "write.delete.mode": "merge-on-read",
                "write.update.mode": "merge-on-read",
                "write.merge.mode": "merge-on-read",
            },
        )
        note["result"] = f"{ident} (v3) at {table.location()}, spec {_spec_text(table)}"

    summary = DemoSummary(
        ident, options.catalog_type, warehouse, "", table.location(), spark_version=spark.version
    )
    first_ids = [0]
    for n in rows:
        first_ids.append(first_ids[-1] + n)

    def frame(i: int) -> DataFrame:
        _, day_from, day_to = BATCHES[i][:3] if i < len(BATCHES) else EVOLVED_BATCH
        return events(
            spark,
            first_ids[i],
            rows[i],
            day_from,
            day_to,
            options.seed,
            channel=i == len(BATCHES),
            partitions=partitions,
        )

    with _counting_retries(table.full_name()) as retries:
        # sequential commits, then two at once from two driver threads
        for i, (label, _a, _b, group) in enumerate(BATCHES):
            if group is not None:
                continue
            with steps.step(f"writing {label}", spark_tasks=True) as note:
                t0 = time.perf_counter()
                _spark_write(frame(i), ident, catalog, label)
                note["result"] = f"{rows[i]:,} rows"
                summary.batches.append(
                    BatchResult(label, rows[i], 0, time.perf_counter() - t0, 0, 0)
                )
        concurrent = [i for i, b in enumerate(BATCHES) if b[3] is not None]
        labels = [BATCHES[i][0] for i in concurrent]
        with steps.step(f"writing {' and '.join(labels)} concurrently", spark_tasks=True) as note:
            errors: list[BaseException] = []
            seconds: dict[int, float] = {}

            def write_one(i: int) -> None:
                t0 = time.perf_counter()
                try:
                    _spark_write(frame(i), ident, catalog, BATCHES[i][0])
                except BaseException as e:  # reported on the main thread
                    errors.append(e)
                seconds[i] = time.perf_counter() - t0

            threads = [
                threading.Thread(target=write_one, args=(i,), name=f"demo-{BATCHES[i][0]}")
                for i in concurrent
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if errors:
                raise errors[0]
            for i in concurrent:
                summary.batches.append(BatchResult(BATCHES[i][0], rows[i], 0, seconds[i], 0, 0))
            note["result"] = (
                f"{sum(rows[i] for i in concurrent):,} rows; {retries.count} commit retr"
                f"{'y' if retries.count == 1 else 'ies'} (frazil.table.transaction log)"
            )
        table.refresh()
        before_delete = table.current_snapshot()
        assert before_delete is not None
        table.manage_snapshots().create_tag(before_delete.snapshot_id, TAG).commit()

        with steps.step("deleting rows (deletion vectors)") as note:
            summary.rows_matching_delete = table.scan(row_filter=DELETE_FILTER).count()
            table.delete(DELETE_FILTER)
            table.refresh()
            snap = table.current_snapshot()
            assert snap is not None
            s = snap.summary or {}
            summary.rows_deleted = int(s.get("added-position-deletes", 0))
            summary.dv_files = _dv_files(table)
            note["result"] = (
                f"{DELETE_FILTER}: {summary.rows_deleted:,} rows in "
                f"{sum(d.dvs for d in summary.dv_files):,} DVs, "
                f"{len(summary.dv_files)} Puffin file(s)"
            )

        with steps.step("evolving schema and partition spec") as note:
            with table.update_schema() as update:
                update.add_column("channel", StringType(), doc="marketing channel, from batch 5")
            table.refresh()
            with table.update_spec() as spec_update:
                spec_update.remove_field("ts_day")
                spec_update.remove_field("user_bucket")
                spec_update.add_field("ts", "hour", "ts_hour")
                spec_update.add_field("user_id", "bucket[4]", "user_bucket4")
            table.refresh()
            note["result"] = f"+ channel; spec {_spec_text(table)}"

        i = len(BATCHES)
        with steps.step(f"writing {EVOLVED_BATCH[0]}", spark_tasks=True) as note:
            t0 = time.perf_counter()
            _spark_write(frame(i), ident, catalog, EVOLVED_BATCH[0])
            summary.batches.append(
                BatchResult(EVOLVED_BATCH[0], rows[i], 0, time.perf_counter() - t0, 0, 0)
            )
            note["result"] = f"{rows[i]:,} rows, hourly partitions"
        summary.retries_logged = retries.count

    table.refresh()
    summary.rows_written = sum(rows)
    for b in summary.batches:
        committed = _snapshot_of(table, b.label)
        b.snapshot_id = committed.snapshot_id
        b.data_files = int((committed.summary or {}).get("added-data-files", 0))
        attempt = commit_attempts(committed)
        b.retries = (attempt - 1) if attempt else 0

    with steps.step("planning filtered scans") as note:
        day = f"ts >= '{_iso(START_US + 4 * DAY_US)}' AND ts < '{_iso(START_US + 5 * DAY_US)}'"
        hours = (
            f"ts >= '{_iso(START_US + 13 * DAY_US + 6 * 3_600_000_000)}' AND "
            f"ts < '{_iso(START_US + 13 * DAY_US + 12 * 3_600_000_000)}'"
        )
        filters = [
            ("one day (day partitions)", day),
            ("one user (bucket partitions)", "user_id = 4242"),
            ("six hours (hour partitions)", hours),
            ("one day and one user", f"{day} AND user_id = 4242"),
        ]
        summary.pruning = [_prune(spark, table, catalog, d, f) for d, f in filters]
        note["result"] = ", ".join(
            f"{p.files_planned}/{p.files_total} files" for p in summary.pruning
        )

    with steps.step("time travel") as note:
        ids = ["event_id"]  # counting needs one column
        tag_read = frazil.spark.read(spark, ident, catalog, ref=TAG, selected_fields=ids).count()
        first = summary.batches[0]
        first_read = frazil.spark.read(
            spark, ident, catalog, snapshot_id=first.snapshot_id, selected_fields=ids
        ).count()
        summary.time_travel = [
            TimeTravel(f"tag {TAG}", before_delete.snapshot_id, sum(rows[:-1]), tag_read),
            TimeTravel(f"snapshot of {first.label}", first.snapshot_id, first.rows, first_read),
        ]
        note["result"] = f"{tag_read:,} rows at {TAG}, {first_read:,} after {first.label}"

    with steps.step("reading the table (frazil.spark.read)", spark_tasks=True) as note:
        from pyspark.sql import functions as F

        grouped = (
            frazil.spark.read(spark, ident, catalog)
            .groupBy("event_type")
            .agg(F.count("*").alias("n"), F.sum("amount").alias("amount"))
            .orderBy(F.desc("n"))
            .collect()
        )
        summary.by_event_type = [
            (r["event_type"], int(r["n"]), "" if r["amount"] is None else f"{r['amount']:,}")
            for r in grouped
        ]
        summary.rows_read = sum(n for _, n, _ in summary.by_event_type)
        note["result"] = f"{summary.rows_read:,} rows"

    with steps.step("counting with frazil's own reader") as note:
        summary.rows_read_local = table.scan().count()
        for task in table.scan().plan_files():
            spec_id = task.file.spec_id
            summary.data_files_by_spec[spec_id] = summary.data_files_by_spec.get(spec_id, 0) + 1
            summary.data_bytes += task.file.file_size_in_bytes
        note["result"] = f"{summary.rows_read_local:,} rows"

    summary.snapshots = _snapshot_rows(table)
    summary.metadata_location = table.metadata_location or ""
    summary.schema_columns = [f.name for f in table.schema().fields]
    summary.spec = _spec_text(table)
    summary.timings = dict(steps.timings)
    return summary


def _iso(us: int) -> str:
    import datetime as dt

    t = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=us)
    return t.isoformat()


def _spec_text(table: Table) -> str:
    schema = table.schema()
    parts = []
    for f in table.spec().fields:
        source = schema.find_column_name(f.source_id)
        parts.append(f"{f.transform}({source}) AS {f.name}")
    return ", ".join(parts) or "unpartitioned"
