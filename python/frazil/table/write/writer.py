# Long module: DataFileWriter, its encoder, rolling files and their partition grouping are one unit.
"""Arrow data into Iceberg data files, and ``append``.

The path of a write: the input is checked and conformed to the table schema
(:mod:`frazil.table.write.conform`); each chunk of input rows gets its partition values from the
native transforms (Arrow arrays in and out) and one integer code per partition tuple; only
these keys (and the default sort order's) are sorted, with Arrow, and cut at the runs of the
partition values, so no Python runs per row. The rows themselves are not reordered up front:
each partition's run is a list of row indices, gathered (Arrow's take) one row group at a time
inside the encoder jobs, on every core; input already clustered by partition (time-ordered rows
by ``day(ts)``) is cut into zero-copy slices without a sort, and string columns of few distinct
values are dictionary encoded first (their indices are cheap to gather, and Parquet writes a
dictionary array without hashing it). Each partition's rows go to a rolling Parquet writer of
that partition, which buffers up to a row group, rolls files at
``write.target-file-size-bytes`` (estimated from the bytes written so far and the compression
seen) and, on close, turns the footer into the file's metrics
(:mod:`frazil.table.write.metrics`; NaN counts and geo boxes are counted from the rows as
each row group is written: one pass). Files land where the table's location provider says
(:mod:`frazil.table.write.locations`).

Every core encodes: each file's row groups and its close are jobs on a thread pool (one worker
per core; pyarrow encodes and compresses without the GIL), in order per file, files
concurrently. A partition with more than a row group of rows deals its row groups in turns to
as many open files as there are workers, so even an unpartitioned append is encoded in
parallel (each file still rolls at the target size). Where a file rolls is decided on the main
thread after that file's own queued row groups are written, so the files, their names and the
commit's order depend on the input alone. Streams (a ``RecordBatchReader``, any
``__arrow_c_stream__``, an iterable of batches) are read in chunks of 64 MB; rows buffered for
row groups and rows queued for the pool are capped (128 MB and 256 MB), so the peak memory of a
streamed append does not grow with its length.

A :class:`DataFileWriter` remembers every file it wrote, so that a failed write, or a commit
that does not land, deletes them (:meth:`DataFileWriter.abort`); :class:`WrittenFilesStep`
ties that to a transaction. Overwrites, deletes and upserts will reuse the writer with their
own snapshot producers.

Table properties (the Java reference's names and defaults):
``write.parquet.compression-codec`` (zstd), ``write.parquet.compression-level``,
``write.parquet.row-group-size-bytes`` (128 MB), ``write.parquet.row-group-limit`` (1,048,576
rows, PyIceberg's), ``write.parquet.page-size-bytes`` (1 MB), ``write.parquet.page-row-limit``
(20,000), ``write.parquet.dict-size-bytes`` (2 MB), ``write.target-file-size-bytes`` (512 MB),
``commit.manifest-merge.enabled`` (true: appends merge manifests, as Java's default).
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from frazil.encryption.table_io import (
    data_filesystem,
    data_key_metadata,
    encrypted_sink,
    parquet_encryption,
)
from frazil.exceptions import FrazilError, InvalidArgumentError, UnsupportedError, io_error
from frazil.io import property_bool
from frazil.manifest.content_file import DataFile, FileFormat, partition_arrow_type
from frazil.partitioning import UnknownTransform, is_void
from frazil.sorting import NullOrder, SortDirection
from frazil.table.scan.handoff import one_chunk
from frazil.table.step import TransactionStep
from frazil.table.write.conform import ArrowData, conform, input_batches
from frazil.table.write.formats import AvroWriter, OrcWriter, file_format
from frazil.table.write.locations import data_file_name, location_provider, partition_to_path
from frazil.table.write.metrics import ArrowMetrics, MetricsConfig, parquet_metrics
from frazil.types import (
    DoubleType,
    FloatType,
    GeographyType,
    ListType,
    MapType,
    StructType,
)
from frazil.values.geo import GeoBounds, is_geo, parquet_schema, with_geo_metrics, with_schema
from frazil.values.variant import VariantFooterSink, variant_field_ids

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.metadata import TableMetadata
    from frazil.partitioning import PartitionSpec
    from frazil.table.transaction import Transaction
    from frazil.table.update import TableUpdate

__all__ = ["DataFileWriter", "WriteSettings", "WrittenFilesStep", "append", "write_data_files"]

logger = logging.getLogger(__name__)

MANIFEST_MERGE_ENABLED = "commit.manifest-merge.enabled"
_CODECS = {
    "zstd": "zstd",
    "gzip": "gzip",
    "snappy": "snappy",
    "lz4": "lz4",
    "lz4_raw": "lz4",
    "brotli": "brotli",
    "uncompressed": "none",
    "none": "none",
}
# Streams are bounded in memory: input rows sorted and split at a time, rows buffered for the
# row groups of all open files together, rows handed to the encoder and not yet written.
_CHUNK_BYTES = 64 * 1024 * 1024
_PENDING_BYTES = 128 * 1024 * 1024
_QUEUED_BYTES = 256 * 1024 * 1024
_MAX_WORKERS = 8
# Dictionary encoding per column: decided from the first rows (at least _DICT_SAMPLE_MIN of
# them) by the share of distinct values in a sample.
_DICT_SAMPLE_ROWS = 16_384
_DICT_SAMPLE_MIN = 1_000
_PARALLEL_ROWS = 100_000
_DICT_MAX_DISTINCT = 0.5
# String columns with at most this share of distinct values in the sample are dictionary
# encoded before rows are grouped by partition: gathering their int32 indices is far cheaper
# than gathering the strings, and Parquet writes a dictionary array without hashing it.
_FEW_DISTINCT = 1 / 64


def delete_written(io: FileIO, written: list[str]) -> None:
    """Deletes the files a failed operation wrote (best effort) and forgets them."""
    for location in written:
        try:
            io.delete(location)
        except Exception:
            logger.warning("could not delete %s", location, exc_info=True)
    written.clear()


def _int_property(props: Mapping[str, str], key: str, default: int | None) -> int | None:
    value = props.get(key)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise InvalidArgumentError(f"table property {key}={value!r} is not an integer") from None


@dataclass(frozen=True)
class WriteSettings:
    """Parquet and file-size settings from table properties."""

    compression: str = "zstd"
    compression_level: int | None = None
    row_group_bytes: int = 128 * 1024 * 1024
    row_group_rows: int = 1_048_576
    page_bytes: int = 1024 * 1024
    page_rows: int = 20_000
    dict_bytes: int = 2 * 1024 * 1024
    target_file_bytes: int = 512 * 1024 * 1024

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> WriteSettings:
        codec = props.get("write.parquet.compression-codec", "zstd").strip().lower()
        if codec not in _CODECS:
            raise InvalidArgumentError(
                f"write.parquet.compression-codec={codec!r} is not a supported Parquet codec"
            )
        d = cls()

        def get(key: str, default: int) -> int:
            value = _int_property(props, key, default)
            assert value is not None
            if value <= 0:
                raise InvalidArgumentError(f"table property {key}={value} must be positive")
            return value

        return cls(
            compression=_CODECS[codec],
            compression_level=_int_property(props, "write.parquet.compression-level", None),
            row_group_bytes=get("write.parquet.row-group-size-bytes", d.row_group_bytes),
            row_group_rows=get("write.parquet.row-group-limit", d.row_group_rows),
            page_bytes=get("write.parquet.page-size-bytes", d.page_bytes),
            page_rows=get("write.parquet.page-row-limit", d.page_rows),
            dict_bytes=get("write.parquet.dict-size-bytes", d.dict_bytes),
            target_file_bytes=get("write.target-file-size-bytes", d.target_file_bytes),
        )


# ---------------------------------------------------------------------------------------------
# Encoding on a thread pool


class _Encoder:
    """Runs the writes of data files on a thread pool (pyarrow encodes and compresses without
    the GIL): each file's jobs (its row groups, then its close) run in order, one at a time,
    while different files run concurrently. Jobs hold their rows until written: a submit
    waits while more than ``max_bytes`` of rows are queued (bounded memory for streams).
    With one worker, jobs run at once on the calling thread."""

    def __init__(self, workers: int, max_bytes: int) -> None:
        self.pool = (
            ThreadPoolExecutor(max_workers=workers, thread_name_prefix="frazil-write")
            if workers > 1
            else None
        )
        self.max_bytes = max_bytes
        self.cond = threading.Condition()
        self.queued = 0  # bytes of rows in jobs not yet done
        self.active = 0  # files with jobs queued or running
        self.error: BaseException | None = None
        self.cancelled = False

    def submit(self, f: _OpenFile, job: Callable[[], None], nbytes: int) -> None:
        if self.pool is None:
            job()
            return
        with self.cond:
            while self.queued and self.queued + nbytes > self.max_bytes and self.error is None:
                self.cond.wait()
            if self.error is not None:
                raise self.error
            self.queued += nbytes
            f.jobs.append((job, nbytes))
            if f.running:
                return
            f.running = True
            self.active += 1
        self.pool.submit(self._drain, f)

    def _drain(self, f: _OpenFile) -> None:
        while True:
            with self.cond:
                if not f.jobs or self.error is not None or self.cancelled:
                    self.queued -= sum(n for _, n in f.jobs)
                    f.jobs.clear()
                    f.running = False
                    self.active -= 1
                    self.cond.notify_all()
                    return
                job, nbytes = f.jobs.popleft()
            try:
                job()
            except BaseException as e:
                with self.cond:
                    if self.error is None:
                        self.error = e
            finally:
                with self.cond:
                    self.queued -= nbytes
                    self.cond.notify_all()

    def wait(self, f: _OpenFile | None = None) -> None:
        """Waits until ``f``'s jobs (all jobs without ``f``) are done; raises a job's error."""
        if self.pool is None:
            return
        with self.cond:
            while f.running if f is not None else self.active:
                self.cond.wait()
            if self.error is not None:
                raise self.error

    def cancel(self) -> None:
        """Drops queued jobs and waits for the running ones (abort)."""
        if self.pool is None:
            return
        with self.cond:
            self.cancelled = True
            while self.active:
                self.cond.wait()

    def shutdown(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)


# ---------------------------------------------------------------------------------------------
# One partition's files


@dataclass
class _Key:
    spec_id: int
    values: tuple[Any, ...]
    path: str


class _OpenFile:
    """One data file being written. The main thread names and opens it (file names are
    numbered in input order); its row groups and its close run as encoder jobs."""

    def __init__(self, owner: DataFileWriter, key: _Key) -> None:
        self.owner = owner
        self.key = key
        self.location: str | None = None
        self.sink: Any = None
        self.writer: pq.ParquetWriter | OrcWriter | AvroWriter | None = None
        self.arrow_metrics: ArrowMetrics | None = None  # ORC and Avro: metrics from the rows
        self.rows = 0
        self.nan_counts: dict[int, int] = {}
        self.geo_bounds: dict[int, Any] = {}  # field id -> native GeoBounds of this file
        self.geo_counts: dict[int, tuple[int, int]] = {}  # field id -> (values, nulls)
        self.sent_mem = 0  # in-memory bytes of the row groups handed to the encoder
        self.flushed_mem = 0  # in-memory bytes of the row groups written
        self.size = 0  # file bytes after the last row group written
        self.sorted_runs = 0  # input chunks contributing rows: one means the file is sorted
        self.closed = False
        self.jobs: deque[tuple[Callable[[], None], int]] = deque()
        self.running = False

    def create(self, first: list[_Rows]) -> None:
        o = self.owner
        name = data_file_name(
            o.operation_id,
            o.next_file_count(),
            o.partition_id,
            o.task_id,
            extension=o.file_format.lower(),
        )
        self.location = o.locations.new_data_location(name, self.key.path or None)
        fs, path = data_filesystem(o.io, self.location)
        encryption = parquet_encryption(o.io, self.location, o.file_format, bool(o.variant_ids))
        o.written.append(self.location)
        if fs.type_name == "local":  # object stores have no directories to make
            parent = path.rsplit("/", 1)[0]
            if parent and parent != path:
                fs.create_dir(parent, recursive=True)
        self.sink = fs.open_output_stream(path)
        if o.file_format != FileFormat.PARQUET:
            # Avro on an encrypted table: an AES-GCM stream (ORC was refused above).
            self.sink = encrypted_sink(o.io, self.location, self.sink)
            cls = OrcWriter if o.file_format == FileFormat.ORC else AvroWriter
            self.writer = cls(self.sink, o.arrow_schema, o.properties)
            self.arrow_metrics = ArrowMetrics(o.schema, o.metrics_config)
            return
        s = o.settings
        if o.variant_ids:
            self.sink = VariantFooterSink(self.sink, o.variant_ids)
        self.writer = pq.ParquetWriter(
            self.sink,
            o.parquet_schema,
            compression=s.compression,
            compression_level=s.compression_level,
            data_page_size=s.page_bytes,
            max_rows_per_page=s.page_rows,
            dictionary_pagesize_limit=s.dict_bytes,
            use_dictionary=o.dictionary_columns(first),
            write_statistics=True,
            # A page index (column and offset indexes), as Java's writer puts in every file:
            # readers skip the pages a filter rules out (frazil's own read does, see
            # frazil_parquet::page_index); it costs a few KB per file and no measurable time.
            write_page_index=True,
            # No ARROW:schema: like Java's files, ours carry only Parquet's own schema (field
            # ids, logical types), and readers pick their Arrow types (frazil's: the large ones,
            # without a cast; a stored `string` would force one).
            store_schema=False,
            encryption_properties=encryption,
        )

    def write(self, table: pa.Table) -> None:
        """Writes one row group (an encoder job). NaN counts and geo boxes are taken here,
        from the rows in memory, in the same pass (Parquet statistics have neither)."""
        o = self.owner
        for fid, path in o.nan_columns:
            column = table.column(path[0])
            for name in path[1:]:
                column = pc.struct_field(column, name)
            n = pc.sum(pc.is_nan(column)).as_py() or 0
            self.nan_counts[fid] = self.nan_counts.get(fid, 0) + n
        for fid, path, geography in o.geo_columns:
            column = table.column(path[0])
            for name in path[1:]:
                column = pc.struct_field(column, name)
            if fid not in self.geo_bounds:
                self.geo_bounds[fid] = GeoBounds(geography)
            values, nulls = self.geo_counts.get(fid, (0, 0))
            self.geo_counts[fid] = (values + len(column), nulls + column.null_count)
            try:
                self.geo_bounds[fid].add(column)
            except FrazilError as e:
                raise type(e)(f"column {'.'.join(path)}: {e}") from None
        assert self.writer is not None
        if isinstance(self.writer, pq.ParquetWriter):
            if o.parquet_schema is not o.arrow_schema:  # geo columns
                table = with_schema(table, o.parquet_schema)
            self.writer.write_table(table, row_group_size=o.settings.row_group_rows)
        else:
            self.writer.write_table(table)
            assert self.arrow_metrics is not None
            self.arrow_metrics.add(table)
        self.rows += table.num_rows
        self.size = self.sink.tell()
        self.flushed_mem += table.nbytes

    def discard(self) -> None:
        """Closes the file, if open, without a data file (abort)."""
        if self.closed:
            return
        self.closed = True
        try:
            if self.writer is not None:
                self.writer.close()
        finally:
            if self.sink is not None:
                self.sink.close()

    def close(self) -> DataFile | None:
        """Closes the file and returns its data file (an encoder job)."""
        if self.writer is None:
            return None
        held = isinstance(self.sink, VariantFooterSink)
        if held:
            self.sink.hold()
        self.writer.close()
        if held:
            self.sink.finish()
        size = self.sink.tell()
        self.sink.close()
        self.closed = True
        return self.owner.data_file(self, size)


class _Rows:
    """Rows of an input chunk, gathered only when encoded: ``indices`` (into ``source``) pick
    them, or, without indices, they are a zero-copy slice of ``source``. The gather (Arrow's
    take, without the GIL) of each row group runs in its encoder job, so gathering is spread
    over the pool and overlaps encoding instead of being one pass over the whole chunk on the
    calling thread. ``row_bytes`` is the chunk's average row size: a gathered partition's
    bytes are estimated from it (deterministic, from the input alone)."""

    __slots__ = ("indices", "num_rows", "offset", "row_bytes", "source")

    def __init__(
        self,
        source: pa.Table,
        indices: pa.Array | None,
        offset: int,
        num_rows: int,
        row_bytes: float,
    ) -> None:
        self.source = source
        self.indices = indices
        self.offset = offset
        self.num_rows = num_rows
        self.row_bytes = row_bytes

    @property
    def nbytes(self) -> int:
        if self.indices is None:
            return int(self.source.slice(self.offset, self.num_rows).nbytes)
        return int(self.row_bytes * self.num_rows)

    def slice(self, offset: int, length: int | None = None) -> _Rows:
        rest = self.num_rows - offset
        n = rest if length is None else min(length, rest)
        return _Rows(self.source, self.indices, self.offset + offset, n, self.row_bytes)

    def table(self) -> pa.Table:
        if self.indices is None:
            return self.source.slice(self.offset, self.num_rows)
        order = self.indices.slice(self.offset, self.num_rows)
        # Column by column: a table's take concatenates first (and is slower).
        columns = [c.take(order) for c in self.source.columns]
        return pa.Table.from_arrays(columns, schema=self.source.schema)


def _gather(pieces: list[_Rows]) -> pa.Table:
    return pieces[0].table() if len(pieces) == 1 else pa.concat_tables(p.table() for p in pieces)


class _RollingFile:
    """The rows of one partition buffered for the next row group of its open file; rolls
    files at ``write.target-file-size-bytes``. A partition with more rows than a row group
    has several rolling files (one per encoder worker), written concurrently."""

    def __init__(self, owner: DataFileWriter, key: _Key) -> None:
        self.owner = owner
        self.key = key
        self.pending: list[_Rows] = []
        self.pending_rows = 0
        self.pending_bytes = 0
        self.file: _OpenFile | None = None
        self.last_chunk = -1

    def _measure(self) -> tuple[int, float]:
        """(bytes in the open file, file bytes per in-memory byte). Waits for the file's
        queued row groups, so that where files roll depends on the data alone."""
        f = self.file
        if f is None or not f.sent_mem:
            return 0, self.owner.ratio
        self.owner.encoder.wait(f)
        ratio = max(f.size / f.flushed_mem, 0.01)
        self.owner.ratio = ratio
        return f.size, ratio

    def add(self, rows: _Rows, group_rows: int | None = None) -> tuple[_Rows, bool]:
        """Takes ``rows`` until a row group is handed to the encoder or the file is full;
        returns the rows not taken and whether a row group was handed over. ``group_rows``
        (at most ``write.parquet.row-group-limit``, see ``_balanced_group_rows``) sizes the
        row groups instead of the limit."""
        s = self.owner.settings
        limit = group_rows or s.row_group_rows
        if self.file is None:
            self.file = _OpenFile(self.owner, self.key)
        if self.last_chunk != self.owner.chunk_seq:
            self.last_chunk = self.owner.chunk_seq
            self.file.sorted_runs += 1
        while rows.num_rows:
            per_row = max(rows.nbytes / rows.num_rows, 1.0)
            size, ratio = self._measure()
            room_file = s.target_file_bytes - size - self.pending_bytes * ratio
            fit_file = int(room_file / (per_row * ratio))
            fit_group = min(
                limit - self.pending_rows,
                int((s.row_group_bytes - self.pending_bytes) / per_row),
            )
            take = max(1, min(rows.num_rows, fit_file, fit_group))
            part = rows.slice(0, take)
            rows = rows.slice(take)
            self.pending.append(part)
            self.pending_rows += take
            self.pending_bytes += part.nbytes
            if take >= fit_file:
                # The file is full: close it; the rest of these rows start the next one.
                self.owner.finish(self)
                return rows, True
            if take >= fit_group:
                self.flush()
                return rows, True
        return rows, False

    def flush(self) -> None:
        """Hands the buffered rows to the encoder as a row group."""
        if not self.pending:
            return
        pieces, nbytes = self.pending, self.pending_bytes
        self.pending, self.pending_rows, self.pending_bytes = [], 0, 0
        f = self.file
        assert f is not None
        if f.writer is None:
            f.create(pieces)
        f.sent_mem += nbytes
        self.owner.encoder.submit(f, lambda: f.write(_gather(pieces)), nbytes)

    def finish(self) -> _OpenFile | None:
        """Hands over what is buffered and detaches the open file (to be closed); the next
        rows start a new file."""
        self.flush()
        f, self.file = self.file, None
        self.last_chunk = -1
        return f if f is not None and f.writer is not None else None


def _balanced_group_rows(rows: int, limit: int, lanes: int) -> int | None:
    """The row group size that deals ``rows`` (more than a row group of them) to ``lanes``
    files in equal turns: the fewest row groups of at most ``limit`` rows, rounded up to a
    multiple of the lanes, of equal size. Dealing full groups of ``limit`` rows leaves the last
    lane short (10M rows in groups of 1,048,576 on two lanes: 5.24M and 4.76M rows), and its
    core idle while the other lane encodes its extra rows. None where nothing is dealt."""
    if lanes < 2 or rows <= limit:
        return None
    groups = -(-rows // limit)
    groups = -(-groups // lanes) * lanes
    return -(-rows // groups)


class _Lanes:
    """The rolling files of one partition, filled in turns of a row group."""

    def __init__(self) -> None:
        self.files: list[_RollingFile] = []
        self.current = 0


# ---------------------------------------------------------------------------------------------
# The writer


class DataFileWriter:
    """Writes Arrow data as data files of a table's current schema and default spec (or a
    given spec), sorted by the default sort order; remembers what it wrote for cleanup."""

    def __init__(
        self,
        io: FileIO,
        metadata: TableMetadata,
        *,
        spec_id: int | None = None,
        operation_id: uuid.UUID | str | None = None,
        downcast_ns_timestamp_to_us: bool | None = None,
        partition_id: int = 0,
        task_id: int = 0,
    ) -> None:
        self.io = io
        self.metadata = metadata
        self.schema = metadata.schema()
        spec = metadata.spec() if spec_id is None else metadata.spec_by_id(spec_id)
        if spec is None:
            raise InvalidArgumentError(f"the table has no partition spec with id {spec_id}")
        self.spec: PartitionSpec = spec
        for f in self.spec.fields:
            if isinstance(f.transform, UnknownTransform):
                raise UnsupportedError(
                    f"cannot write with partition field {f.name!r}: unknown transform {f.transform}"
                )
        self.sort_order = metadata.sort_order()
        self.properties = metadata.properties
        self.settings = WriteSettings.from_properties(self.properties)
        self.file_format = file_format(self.properties)
        self.locations = location_provider(metadata.location or "", self.properties)
        self.operation_id = operation_id or uuid.uuid4()
        # Java's OutputFileFactory names: a Spark task passes its partition and attempt ids
        self.partition_id = partition_id
        self.task_id = task_id
        self.metrics_config = MetricsConfig.from_properties(
            self.properties, self.schema, self.sort_order
        )
        self.ptype = partition_arrow_type(self.spec, self.schema)
        self.downcast = downcast_ns_timestamp_to_us
        self.written: list[str] = []
        self.ratio = 0.5  # file bytes per Arrow byte before anything was measured
        self._file_count = 0
        self._open: dict[tuple[Any, ...], _Lanes] = {}
        self._done: list[DataFile] = []
        # Files handed to the encoder to close, in order: their data files, once closed.
        self._closing: list[tuple[_OpenFile, list[DataFile | None]]] = []
        self._encoder: _Encoder | None = None
        self.chunk_seq = 0  # input chunks sorted so far (a file of one chunk is sorted)
        # Files of one partition written concurrently (in turns of a row group) when it has
        # more than a row group of rows: a large append uses every core even unpartitioned.
        # A Spark task sets 1 (Spark runs a task per core already).
        self.concurrent_files = _workers()
        self.arrow_schema: pa.Schema = pa.schema([])
        self.nan_columns: list[tuple[int, list[str]]] = []
        # Geo columns get boxes and Parquet geo types, variant groups the VARIANT annotation.
        self.geo_columns = self._geo_columns()
        self.variant_ids = variant_field_ids(self.schema.fields)
        self._parquet_schemas: dict[tuple[pa.Schema, tuple[str, ...]], pa.Schema] = {}
        self._dictionary: bool | list[str] | None = None
        self._few: set[str] = set()  # sampled columns with few distinct values
        self._encoded: tuple[str, ...] | None = None  # written from dictionary arrays

    @property
    def parquet_schema(self) -> pa.Schema:
        """The Parquet writer's schema: :attr:`arrow_schema` with geo columns typed for
        Parquet's GEOMETRY / GEOGRAPHY and the columns the write dictionary encodes as
        dictionary arrays (subclasses may set :attr:`arrow_schema` themselves)."""
        key = (self.arrow_schema, self._encoded or ())
        out = self._parquet_schemas.get(key)
        if out is None:
            out = parquet_schema(self.arrow_schema, self.schema)
            for name in key[1]:
                i = out.get_field_index(name)
                out = out.set(i, out.field(i).with_type(pa.dictionary(pa.int32(), out[i].type)))
            self._parquet_schemas[key] = out
        return out

    @property
    def encoder(self) -> _Encoder:
        if self._encoder is None:
            workers = _workers()
            # Rows waiting for the encoder: enough for every worker to have a row group
            # running and one queued (a larger row group still goes, alone).
            limit = 2 * workers * self.settings.row_group_bytes
            self._encoder = _Encoder(workers, min(limit, _QUEUED_BYTES))
        return self._encoder

    def _open_files(self) -> list[_RollingFile]:
        return [rf for lanes in self._open.values() for rf in lanes.files]

    def dictionary_columns(self, first: list[_Rows]) -> bool | list[str]:
        """The columns whose Parquet pages are dictionary encoded: decided once per write from
        a sample of the first rows written (input order: every file of the write gets the
        same choice). A column whose sample is mostly distinct values (ids, timestamps,
        measures) is written plain: its dictionary would be as large as the values and be
        abandoned at ``write.parquet.dict-size-bytes`` after the work of building it. Schemas
        with nested columns keep dictionaries everywhere."""
        if self._dictionary is None:
            self._dictionary = True
            fields = list(self.arrow_schema)
            rows = sum(p.num_rows for p in first)
            if rows >= _DICT_SAMPLE_MIN and not any(pa.types.is_nested(f.type) for f in fields):
                heads, n = [], 0
                for p in first:
                    if n >= _DICT_SAMPLE_ROWS:
                        break
                    heads.append(p.slice(0, _DICT_SAMPLE_ROWS - n))
                    n += heads[-1].num_rows
                sample = _gather(heads)
                limit = sample.num_rows * _DICT_MAX_DISTINCT
                distinct = {f.name: _distinct(sample.column(f.name), limit) for f in fields}
                self._dictionary = [name for name, n in distinct.items() if n <= limit]
                few = sample.num_rows * _FEW_DISTINCT
                self._few = {name for name, n in distinct.items() if n <= few}
        return self._dictionary

    def _dictionary_encoded(self, table: pa.Table) -> pa.Table:
        """``table`` with the string columns of few distinct values as dictionary arrays, when
        its rows will be grouped by partition or sort order (chosen from the first chunk;
        every later chunk the same, as the files' schema is fixed). Parquet writes them with
        the same bytes as the strings (its statistics count only the values referenced)."""
        if self._encoded is None:
            self._encoded = ()
            grouped = bool(self.spec.fields) or not self.sort_order.is_unsorted()
            if self.file_format == FileFormat.PARQUET and grouped:
                chosen = self.dictionary_columns([_Rows(table, None, 0, table.num_rows, 1.0)])
                if chosen is not True:
                    self._encoded = tuple(
                        f.name
                        for f in self.arrow_schema
                        if f.name in self._few
                        and (pa.types.is_string(f.type) or pa.types.is_large_string(f.type))
                    )
        if not self._encoded:
            return table
        names = self._encoded

        def encode(name: str) -> pa.Array:
            return pc.dictionary_encode(table.column(name).combine_chunks())

        if len(names) > 1 and table.num_rows >= _PARALLEL_ROWS:
            with ThreadPoolExecutor(max_workers=min(len(names), _workers())) as pool:
                encoded = list(pool.map(encode, names))
        else:
            encoded = [encode(n) for n in names]
        for name, column in zip(names, encoded, strict=True):
            i = table.schema.get_field_index(name)
            table = table.set_column(i, table.schema.field(i).with_type(column.type), column)
        return table

    def next_file_count(self) -> int:
        self._file_count += 1
        return self._file_count

    # ---- public

    def write(self, data: ArrowData) -> list[DataFile]:
        """Writes all of ``data`` (see :func:`frazil.table.write.conform.input_batches`) and
        returns its data files. On error, deletes every file written and re-raises."""
        try:
            return self._write(data)
        except OSError as e:
            # Disk full, read-only storage, no permission: named, as a FrazilError.
            location = self.written[-1] if self.written else self.locations.new_data_location("*")
            self.abort()
            raise io_error(e, "writing data file", location) from e
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        """Deletes every file this writer wrote (best effort)."""
        encoder, self._encoder = self._encoder, None
        if encoder is not None:
            encoder.cancel()
            encoder.shutdown()
        files = [rf.file for rf in self._open_files() if rf.file is not None]
        for f in [*files, *(f for f, _ in self._closing)]:
            try:
                f.discard()
            except Exception:  # the file is deleted below anyway
                pass
        self._open.clear()
        self._closing.clear()
        delete_written(self.io, self.written)

    # ---- internals

    def _write(self, data: ArrowData) -> list[DataFile]:
        in_schema, batches, whole = input_batches(data)
        conformed = conform(in_schema, self.schema, downcast_ns_timestamp_to_us=self.downcast)
        self.arrow_schema = conformed.arrow_schema
        self.nan_columns = self._float_columns()
        if self.file_format != FileFormat.PARQUET and self.variant_ids:
            # pyarrow's ORC writer and the native Avro writer give every field an id.
            raise UnsupportedError(
                f"variant columns are written to Parquet data files only, not {self.file_format}"
            )
        if whole:
            # In memory already: check and convert everything before the first file.
            converted = [conformed.convert(b) for b in batches]
            if converted:
                self._write_chunk(pa.Table.from_batches(converted, conformed.arrow_schema))
        else:
            chunk: list[pa.RecordBatch] = []
            size = 0
            for b in batches:
                c = conformed.convert(b)
                chunk.append(c)
                size += c.nbytes
                if size >= _CHUNK_BYTES:
                    self._write_chunk(pa.Table.from_batches(chunk, conformed.arrow_schema))
                    chunk, size = [], 0
                    self._limit_pending()
            if chunk:
                self._write_chunk(pa.Table.from_batches(chunk, conformed.arrow_schema))
        self._finish_all()
        return list(self._done)

    def _finish_all(self) -> None:
        """Closes every open file, waits for the encoder and collects the data files in the
        order the files were closed."""
        for rf in self._open_files():
            self.finish(rf)
        self._open.clear()
        encoder, self._encoder = self._encoder, None
        if encoder is not None:
            try:
                encoder.wait()
            except BaseException:
                self._encoder = encoder  # abort() cancels and stops it
                raise
            encoder.shutdown()
        for _, slot in self._closing:
            if slot[0] is not None:
                self._done.append(slot[0])
        self._closing.clear()

    def _limit_pending(self) -> None:
        """Bounded memory for streams: when the rows buffered for row groups of all open
        files pass the chunk size, the largest buffers are written out as (smaller) row
        groups."""
        open_files = sorted(self._open_files(), key=lambda rf: rf.pending_bytes, reverse=True)
        total = sum(rf.pending_bytes for rf in open_files)
        for rf in open_files:
            if total <= _PENDING_BYTES:
                break
            total -= rf.pending_bytes
            rf.flush()

    def _float_columns(self) -> list[tuple[int, list[str]]]:
        """Float and double columns outside lists and maps: NaN counts are counted while
        writing (Parquet statistics do not have them)."""
        out: list[tuple[int, list[str]]] = []

        def visit(fields: Any, prefix: list[str]) -> None:
            for f in fields:
                t = f.field_type
                if isinstance(t, (FloatType, DoubleType)):
                    mode = self.metrics_config.mode(self.schema.find_column_name(f.field_id))
                    if mode.kind != "none":
                        out.append((f.field_id, [*prefix, f.name]))
                elif hasattr(t, "fields") and not isinstance(t, (ListType, MapType)):
                    visit(t.fields, [*prefix, f.name])

        visit(self.schema.fields, [])
        return out

    def _geo_columns(self) -> list[tuple[int, list[str], bool]]:
        """Geometry and geography columns outside lists and maps whose metrics mode keeps
        bounds: their boxes are computed while writing (spec: geo bounds)."""
        out: list[tuple[int, list[str], bool]] = []

        def visit(fields: Any, prefix: list[str]) -> None:
            for f in fields:
                t = f.field_type
                if is_geo(t):
                    mode = self.metrics_config.mode(self.schema.find_column_name(f.field_id))
                    if mode.truncate_length > 0:
                        out.append((f.field_id, [*prefix, f.name], isinstance(t, GeographyType)))
                elif isinstance(t, StructType):
                    visit(t.fields, [*prefix, f.name])

        visit(self.schema.fields, [])
        return out

    def finish(self, rf: _RollingFile) -> None:
        """Closes ``rf``'s open file (an encoder job after its row groups)."""
        f = rf.finish()
        if f is None:
            return
        slot: list[DataFile | None] = [None]
        self._closing.append((f, slot))

        def close() -> None:
            slot[0] = f.close()

        self.encoder.submit(f, close, 0)

    def _partition_columns(self, table: pa.Table) -> list[pa.ChunkedArray]:
        out = []
        for pf, nested in zip(self.spec.fields, self.ptype, strict=True):
            name = self.schema.find_column_name(pf.source_id)
            if is_void(pf.transform) or name is None:
                out.append(pa.chunked_array([pa.nulls(table.num_rows, nested.type)]))
                continue
            source = _column(table, name)
            assert not isinstance(pf.transform, UnknownTransform)  # refused by __init__
            values = pf.transform.apply(source)
            out.append(_cast_partition(values, nested.type))
        return out

    def _sort_keys(
        self, table: pa.Table, parts: list[pa.ChunkedArray]
    ) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        columns: dict[str, Any] = {}
        keys: list[tuple[str, str]] = []
        for i, values in enumerate(parts):
            columns[f"p{i}"] = _sortable(values)
            keys.append((f"p{i}", "ascending"))
        order = self.sort_order
        for i, sf in enumerate(order.fields):
            if isinstance(sf.transform, UnknownTransform):
                continue
            name = self.schema.find_column_name(sf.source_id)
            if name is None:
                continue
            values = _sortable(sf.transform.apply(_column(table, name)))
            nulls_first = sf.null_order == NullOrder.NULLS_FIRST
            # Nulls placed per key with a validity key before the values (pyarrow's null
            # placement is one setting for all keys).
            columns[f"v{i}"] = pc.is_valid(values)
            keys.append((f"v{i}", "ascending" if nulls_first else "descending"))
            columns[f"s{i}"] = values
            keys.append(
                (f"s{i}", "ascending" if sf.direction == SortDirection.ASC else "descending")
            )
        return columns, keys

    def _write_chunk(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        self.chunk_seq += 1
        parts = self._partition_columns(table) if len(self.spec.fields) else []
        # Rows are grouped by one integer per partition tuple when possible: sorting one int64
        # column (a counting sort over few distinct codes) is far cheaper than a multi-column
        # sort of the partition values. Partitions then come in first-seen order.
        codes = _group_codes(parts) if parts else None
        columns, keys = self._sort_keys(table, [] if codes is not None else parts)
        table = self._dictionary_encoded(table)
        row_bytes = max(table.nbytes / table.num_rows, 1.0)
        if codes is not None and not keys:
            starts = _clustered_starts(codes)
            if starts is not None:
                # Each partition's rows are one run already (time-ordered input by day(ts)):
                # zero-copy slices, in first-seen order as a sort by the codes would give.
                self._route_runs(table, None, row_bytes, parts, starts)
                return
        if codes is not None:
            if keys:
                columns = {"g": codes, **columns}
                keys = [("g", "ascending"), *keys]
            else:
                columns, keys = {}, [("g", "ascending")]
        if not keys:
            self._route((), "", _Rows(table, None, 0, table.num_rows, row_bytes))
            return
        if columns:
            order = pc.sort_indices(pa.table(columns), sort_keys=keys)
        else:
            assert codes is not None
            order = pc.sort_indices(codes)
        # Rows are gathered by index from here: Arrow's take over a column of several chunks
        # concatenates them first, at every gather (a row group of each partition), so they
        # are concatenated once (a quarter of a partitioned write's time went to copies).
        table = one_chunk(table)
        if not parts:
            self._route((), "", _Rows(table, order, 0, table.num_rows, row_bytes))
            return
        # Only the (small) keys are put in order here; the rows are gathered per row group
        # in the encoder jobs (_Rows).
        if codes is not None:
            self._route_runs(table, order, row_bytes, parts, _code_starts(codes.take(order)))
        else:
            parts = [p.take(order) for p in parts]
            self._route_runs(table, order, row_bytes, parts, _run_starts(parts), taken=True)

    def _route_runs(
        self,
        table: pa.Table,
        order: pa.Array | None,
        row_bytes: float,
        parts: list[pa.ChunkedArray],
        starts: list[int],
        *,
        taken: bool = False,
    ) -> None:
        """Routes each run of rows (``starts``: where runs begin, in ``order`` when given,
        else in ``table``; in the order to route them) to its partition. ``parts`` are the
        partition values in input order, or already in ``order`` when ``taken``."""
        bounds = sorted([*starts, table.num_rows])
        following = dict(itertools.pairwise(bounds))
        ends = [following[s] for s in starts]
        pstruct = pa.Table.from_arrays(parts, schema=pa.schema(list(self.ptype)))
        at = pa.array(starts, pa.int64())
        if order is not None and not taken:
            at = order.take(at)
        rows = pstruct.take(at).to_pylist()
        for row, start, end in zip(rows, starts, ends, strict=True):
            values = tuple(row[f.name] for f in self.ptype)
            path = partition_to_path(self.spec, self.schema, values)
            self._route(values, path, _Rows(table, order, start, end - start, row_bytes))

    def _route(self, values: tuple[Any, ...], path: str, rows: _Rows) -> None:
        key = (path,)
        lanes = self._open.get(key)
        if lanes is None:
            lanes = self._open[key] = _Lanes()
        turns = max(self.concurrent_files, 1)
        group = _balanced_group_rows(rows.num_rows, self.settings.row_group_rows, turns)
        while rows.num_rows:
            if lanes.current == len(lanes.files):
                lanes.files.append(_RollingFile(self, _Key(self.spec.spec_id, values, path)))
            rows, handed = lanes.files[lanes.current].add(rows, group)
            if handed:
                lanes.current = (lanes.current + 1) % turns

    def data_file(self, rf: _OpenFile, size: int) -> DataFile:
        # Only called by _OpenFile.close once a file was opened (writer and location set).
        assert rf.writer is not None and rf.location is not None
        try:
            if rf.arrow_metrics is not None:
                metrics = rf.arrow_metrics.metrics()
            else:
                assert isinstance(rf.writer, pq.ParquetWriter)
                footer = rf.writer.writer.metadata
                metrics = parquet_metrics(footer, self.schema, config=self.metrics_config)
        except FrazilError as e:
            raise type(e)(f"{rf.location}: {e}") from None
        if self.sort_order.is_unsorted():
            sort_order_id: int | None = self.sort_order.order_id
        else:
            sort_order_id = self.sort_order.order_id if rf.sorted_runs <= 1 else None
        return DataFile(
            file_path=rf.location,
            file_format=self.file_format,
            partition=rf.key.values,
            file_size_in_bytes=size,
            spec_id=rf.key.spec_id,
            nan_value_counts=dict(rf.nan_counts) if self.nan_columns else None,
            sort_order_id=sort_order_id,
            key_metadata=data_key_metadata(self.io, rf.location),
            **with_geo_metrics(metrics.data_file_fields(), rf.geo_bounds, rf.geo_counts),
        )


def _distinct(column: pa.ChunkedArray, default: float) -> float:
    """Distinct values (nulls as one) of ``column``; ``default`` for types Arrow cannot count
    (extension types): those keep their dictionary."""
    try:
        return float(pc.count_distinct(column, mode="all").as_py())
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return default


def _workers() -> int:
    return max(1, min(os.cpu_count() or 1, _MAX_WORKERS))


def _column(table: pa.Table, dotted: str) -> pa.ChunkedArray:
    # Partition and sort sources are primitives, possibly inside structs (not lists or maps).
    parts = dotted.split(".")
    if parts[0] in table.column_names:
        column = table.column(parts[0])
        for name in parts[1:]:
            column = pc.struct_field(column, name)
        return column
    raise InvalidArgumentError(f"column {dotted!r} is not in the data")


def _cast_partition(values: Any, arrow_type: pa.DataType) -> pa.ChunkedArray:
    if isinstance(values, pa.Array):
        values = pa.chunked_array([values])
    if values.type == arrow_type:
        return values
    if isinstance(arrow_type, pa.BaseExtensionType):
        return pa.chunked_array(
            [
                pa.ExtensionArray.from_storage(arrow_type, c.cast(arrow_type.storage_type))
                if not isinstance(c.type, pa.BaseExtensionType)
                else c
                for c in values.chunks
            ],
            type=arrow_type,
        )
    return values.cast(arrow_type)


def _sortable(values: Any) -> Any:
    """A sort key column pyarrow can order (extension types by their storage)."""
    if isinstance(values, pa.Array):
        values = pa.chunked_array([values])
    if isinstance(values.type, pa.BaseExtensionType):
        return pa.chunked_array([c.storage for c in values.chunks], type=values.type.storage_type)
    return values


def _group_codes(parts: list[pa.ChunkedArray]) -> pa.Array | None:
    """One int64 per row, equal exactly when the rows' partition tuples are equal: each
    column's dictionary indices (nulls encoded as a value), in mixed radix. None when a column
    is floating point (-0.0 and NaN: the run scan decides those) or cannot be dictionary
    encoded, or when the codes could overflow."""
    codes: Any = None
    span = 1
    for values in parts:
        v = _sortable(values).combine_chunks()
        if pa.types.is_floating(v.type) or pa.types.is_null(v.type):
            return None
        try:
            encoded = pc.dictionary_encode(v, null_encoding="encode")
        except pa.ArrowNotImplementedError:
            return None
        n = max(len(encoded.dictionary), 1)
        span *= n
        if span >= 2**62:
            return None
        indices = encoded.indices.cast(pa.int64())
        codes = indices if codes is None else pc.add(pc.multiply(codes, n), indices)
    return codes


def _code_starts(codes: pa.Array) -> list[int]:
    """Row indices where the (grouped) codes change, starting with 0."""
    import numpy as np

    k = codes.to_numpy(zero_copy_only=False)
    if len(k) == 0:
        return []
    return [0, *(np.flatnonzero(k[1:] != k[:-1]) + 1).tolist()]


def _clustered_starts(codes: pa.Array) -> list[int] | None:
    """Where runs of equal codes begin, in the order of their codes, when every code is a
    single run (input already clustered by partition: no sort or gather needed); None
    otherwise."""
    import numpy as np

    k = codes.to_numpy(zero_copy_only=False)
    if len(k) == 0:
        return None
    change = k[1:] != k[:-1]
    # More runs than codes could take values (codes are in [0, max]): not clustered.
    if np.count_nonzero(change) >= int(k.max()) + 1:
        return None
    starts = np.concatenate(([0], np.flatnonzero(change) + 1))
    first = k[starts]
    if len(np.unique(first)) != len(starts):
        return None
    # Runs in ascending code order, as a sort by the codes would put them.
    return list(starts[np.argsort(first, kind="stable")].tolist())


def _run_starts(parts: list[pa.ChunkedArray]) -> list[int]:
    """Row indices where the (sorted) partition tuple changes, starting with 0."""
    n = len(parts[0])
    if n == 0:
        return []
    change = None
    for values in parts:
        v = _sortable(values).combine_chunks()
        a, b = v.slice(1), v.slice(0, n - 1)
        neq = pc.fill_null(pc.not_equal(a, b), False) if not pa.types.is_null(v.type) else None
        nulls = pc.xor(a.is_null(), b.is_null())
        diff = nulls if neq is None else pc.or_(neq, nulls)
        if pa.types.is_floating(v.type):
            both_nan = pc.and_(pc.fill_null(pc.is_nan(a), False), pc.fill_null(pc.is_nan(b), False))
            diff = pc.and_(diff, pc.invert(both_nan))
        change = diff if change is None else pc.or_(change, diff)
    assert change is not None
    idx = pc.indices_nonzero(change)
    return [0, *(pc.add(idx, 1).to_pylist())]


# ---------------------------------------------------------------------------------------------
# Transactions


class _Abortable(Protocol):
    def abort(self) -> None: ...


class WrittenFilesStep(TransactionStep):
    """A snapshot producer's step that also owns the files written for it (by any writers
    with an ``abort()``: data files, delete files): they are deleted when the step fails or the
    transaction is aborted."""

    def __init__(self, producer: TransactionStep, *writers: _Abortable) -> None:
        self.producer = producer
        self.writers = writers

    def _abort_writers(self) -> None:
        for w in self.writers:
            w.abort()

    def apply(self, base: TableMetadata, attempt: int) -> list[TableUpdate]:
        try:
            return self.producer.apply(base, attempt)
        except BaseException:
            self._abort_writers()
            raise

    def on_commit(self, committed: TableMetadata) -> None:
        self.producer.on_commit(committed)

    def on_abort(self) -> None:
        try:
            self.producer.on_abort()
        finally:
            self._abort_writers()


def write_data_files(
    io: FileIO,
    metadata: TableMetadata,
    data: ArrowData,
    *,
    operation_id: uuid.UUID | None = None,
) -> list[DataFile]:
    """Writes ``data`` as data files of the table (nothing committed); on error nothing stays.
    The caller owns the files: delete them if they are not committed."""
    return DataFileWriter(io, metadata, operation_id=operation_id).write(data)


def append(
    transaction: Transaction,
    df: ArrowData,
    snapshot_properties: Mapping[str, str] | None = None,
    branch: str | None = None,
) -> None:
    """Writes ``df`` and stages one append of its files (merge or fast append per
    ``commit.manifest-merge.enabled``) in ``transaction``."""
    metadata = transaction.table_metadata
    writer = DataFileWriter(transaction.table.io, metadata)
    files = writer.write(df)
    update = transaction.update_snapshot(snapshot_properties, branch)
    merge = property_bool(metadata.properties, MANIFEST_MERGE_ENABLED)
    producer = update.merge_append() if merge is None or merge else update.fast_append()
    try:
        for f in files:
            producer.append_data_file(f)
    except BaseException:
        writer.abort()
        raise
    # A failure while staging cleans up in the step itself; once staged, the transaction
    # aborts it if the commit does not land.
    transaction.stage(WrittenFilesStep(producer, writer))
