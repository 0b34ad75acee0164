"""Reading one file scan task into Arrow record batches: projection, deletes, residual filter.

:func:`read_task` streams a task's rows batch by batch (one Parquet row group at a time, never
the whole file), in the table's (projected) schema:

- columns are matched by field id (``PARQUET:field_id``), or through the table's name mapping
  for files written without ids (without a mapping: top-level columns by position, as Java);
  renamed columns are found by id, columns added later read as null or as their
  ``initial-default``, promoted types are cast (int -> long, float -> double, wider decimals,
  date -> timestamp), structs, lists and maps are projected recursively, and identity
  partition columns a file lacks are filled from the task's partition value (spec
  "Column Projection");
- metadata columns ``_file``, ``_pos``, ``_spec_id``, ``_partition`` and, for v3 row lineage,
  ``_row_id`` and ``_last_updated_sequence_number`` (inherited from the data file's
  ``first_row_id`` and data sequence number where the file holds null or lacks the column);
- deletes: deletion vectors (which supersede position delete files for their data file),
  position delete files, and equality delete files (their keys hashed once per scan; null-safe,
  columns matched by field id so renamed columns still match) are applied natively as one
  keep-mask per batch (:mod:`frazil.manifest.deletes`);
- then the residual filter, with the expressions spec's 2-valued semantics, evaluated natively
  (:class:`frazil.table.scan.filter.RowFilter`).

Parquet, ORC and Avro files are read (ORC through :mod:`frazil.table.scan.formats`, stripe by
stripe;
Avro natively through :mod:`frazil.table.scan.formats`); a file the reader cannot read raises a
:class:`~frazil.exceptions.FileReadError` naming it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from frazil.arrow_schema import field_id_of, schema_to_arrow, type_to_arrow
from frazil.encryption.table_io import data_filesystem, file_decryption, read_encrypted_range
from frazil.exceptions import (
    DecodeError,
    UnsupportedError,
    ValidationError,
)
from frazil.expressions import AlwaysTrue, BooleanExpression
from frazil.manifest.content_file import DataFile, DataFileContent, FileFormat, is_deletion_vector
from frazil.manifest.deletes import DeletionVector, EqualityDeleteSet
from frazil.metadata.name_mapping import NameMapping, create_mapping_from_schema
from frazil.schema import Schema
from frazil.table.scan.filter import (
    LATE_WALK,
    LateFilter,
    RowFilter,
    pruning_expression,
    referenced_field_ids,
)
from frazil.table.scan.formats import AvroFile, NativeParquet, OrcFile
from frazil.table.scan.handoff import large_field, large_schema
from frazil.table.scan.projection import (
    MAPPED_BY_DEFAULT,
    Projector,
    arrow_scalar,
    file_fields,
    open_file,
    prune_schema,
    read_pool,
    reading,
    repeat_scalar,
)
from frazil.types import (
    IcebergType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    StructType,
)

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.table.scan import FileScanTask

__all__ = [
    "FILE_PATH_FIELD_ID",
    "METADATA_COLUMNS",
    "POS_FIELD_ID",
    "DeleteCache",
    "decode_threads",
    "metadata_field",
    "prune_schema",
    "read_dv",
    "read_range",
    "read_task",
]

log = logging.getLogger(__name__)

# FRAZIL_NATIVE_PARQUET=0 reads every Parquet file with pyarrow (a comparison and a way out).
_NATIVE_PARQUET = os.environ.get("FRAZIL_NATIVE_PARQUET", "1") != "0"

DEFAULT_BATCH_SIZE = 131_072

FILE_PATH_FIELD_ID = 2147483546
POS_FIELD_ID = 2147483545
ROW_ID_FIELD_ID = 2147483540
LAST_UPDATED_FIELD_ID = 2147483539

# Reserved field ids (spec "Reserved Field IDs"); ``_partition``'s type depends on the table.
METADATA_COLUMNS: Mapping[str, tuple[int, IcebergType | None]] = {
    "_file": (2147483646, StringType()),
    "_pos": (2147483645, LongType()),
    "_spec_id": (2147483643, IntegerType()),
    "_partition": (2147483642, None),
    "_row_id": (ROW_ID_FIELD_ID, LongType()),
    "_last_updated_sequence_number": (LAST_UPDATED_FIELD_ID, LongType()),
}


def metadata_field(name: str, partition_type: StructType | None = None) -> NestedField:
    """The Iceberg field of a metadata column (``_partition`` needs the table's partition type)."""
    field_id, t = METADATA_COLUMNS[name]
    if t is None:
        t = partition_type if partition_type is not None else StructType()
    return NestedField(field_id, name, t, required=name in ("_file", "_pos", "_spec_id"))


# ---------------------------------------------------------------------------------------------
# deletes


def read_range(
    io: FileIO, location: str, offset: int, length: int, key_metadata: bytes | None = None
) -> bytes:
    """``length`` bytes at ``offset`` of a file (a Puffin blob); a range beyond the file raises
    :class:`~frazil.exceptions.DecodeError`. ``key_metadata``: an encrypted table's file's."""
    blob = read_encrypted_range(io, location, key_metadata, offset, length)
    if blob is not None:
        return blob
    fs, path = data_filesystem(io, location)
    with fs.open_input_file(path) as f:
        size = f.size()
        if offset < 0 or length < 0 or offset + length > size:
            raise DecodeError(
                f"{location}: blob at offset {offset} length {length} is beyond the file "
                f"({size} bytes)"
            )
        data: bytes = f.read_at(length, offset)
        return data


def read_dv(io: FileIO, dv: DataFile) -> DeletionVector:
    """The deletion vector a DV delete file entry points at (its blob in the Puffin file)."""
    if dv.content_offset is None or dv.content_size_in_bytes is None:
        raise ValidationError(
            f"deletion vector {dv.file_path} has no content_offset/content_size_in_bytes"
        )
    with reading("deletion vector file", dv.file_path):
        blob = read_range(
            io, dv.file_path, dv.content_offset, dv.content_size_in_bytes, dv.key_metadata
        )
    return DeletionVector.from_puffin_blob(
        blob, 0, dv.content_size_in_bytes, dv.file_path, dv.referenced_data_file
    )


@dataclass
class DeleteCache:
    """Delete files read once per scan: position delete files (as sorted ``(file_path, pos)``
    tables), equality delete key tables (by location and field ids) and the hashed key sets of
    each group of equality delete files a task applies (by locations and field ids), and the
    scan's residuals compiled to native row filters (:meth:`row_filter`). Tasks read
    concurrently share it; a key set is built by one of them."""

    io: FileIO
    name_mapping: NameMapping | None = None
    _positions: dict[str, pa.Table] = field(default_factory=dict)
    _equality: dict[tuple[str, tuple[int, ...]], pa.Table] = field(default_factory=dict)
    _equality_sets: dict[tuple[tuple[str, ...], tuple[int, ...]], EqualityDeleteSet] = field(
        default_factory=dict
    )
    _lock: threading.Lock = field(default_factory=threading.Lock)
    # compiled residuals by the identity of the expression (kept alive beside its filter): the
    # planner hands every task of one residual the same object
    _filters: dict[int, tuple[BooleanExpression, RowFilter]] = field(default_factory=dict)

    def row_filter(self, expr: BooleanExpression, schema: Schema) -> RowFilter:
        """``expr`` (bound to ``schema``) compiled once per scan."""
        hit = self._filters.get(id(expr))
        if hit is not None and hit[0] is expr:
            return hit[1]
        compiled = RowFilter(expr, schema)
        self._filters[id(expr)] = (expr, compiled)
        return compiled

    def positions(self, delete_file: DataFile, data_path: str) -> np.ndarray:
        table = self._positions.get(delete_file.file_path)
        if table is None:
            table = self._read_position_file(delete_file)
            self._positions[delete_file.file_path] = table
        mask = pc.equal(table.column("file_path"), data_path)
        positions: np.ndarray = table.column("pos").filter(mask).to_numpy()
        return positions

    def _read_position_file(self, delete_file: DataFile) -> pa.Table:
        fmt = _check_format(delete_file, "position delete file")
        fs, path = data_filesystem(self.io, delete_file.file_path)
        with reading("position delete file", delete_file.file_path), fs.open_input_file(path) as fh:
            pf = open_file(fh, fmt, delete_file.record_count, file_decryption(self.io, delete_file))
            names = {field_id_of(f): f.name for f in pf.schema_arrow}
            cols = [
                names.get(FILE_PATH_FIELD_ID, "file_path"),
                names.get(POS_FIELD_ID, "pos"),
            ]
            missing = [c for c in cols if c not in pf.schema_arrow.names]
            if missing:
                raise ValidationError(
                    f"position delete file {delete_file.file_path} lacks columns {missing}"
                )
            t = pf.read(columns=cols)
        return pa.table(
            {"file_path": t.column(0).cast(pa.string()), "pos": t.column(1).cast(pa.int64())}
        )

    def equality_keys(self, delete_file: DataFile, schema: Schema) -> pa.Table:
        """The delete file's equality columns, typed and named as ``schema`` (field ids)."""
        ids = tuple(delete_file.equality_ids or ())
        key = (delete_file.file_path, ids)
        cached = self._equality.get(key)
        if cached is not None:
            return cached
        if not ids:
            raise ValidationError(f"equality delete file {delete_file.file_path} has no ids")
        fmt = _check_format(delete_file, "equality delete file")
        fs, path = data_filesystem(self.io, delete_file.file_path)
        with reading("equality delete file", delete_file.file_path), fs.open_input_file(path) as fh:
            pf = open_file(fh, fmt, delete_file.record_count, file_decryption(self.io, delete_file))
            mapping = self.name_mapping
            if mapping is None and fmt in MAPPED_BY_DEFAULT:
                mapping = create_mapping_from_schema(schema)  # as Java's ORC reader falls back
            fields = file_fields(pf.schema_arrow, mapping)
            top = {field_id_of(f): i for i, f in enumerate(fields)}
            target = Schema(*(_top_field_for(schema, i, delete_file) for i in ids))
            wanted = sorted({top[i] for i in ids if i in top})
            t = pf.read(columns=[fields[i].name for i in wanted])
            n = t.num_rows
            arrays = [c.combine_chunks() for c in t.columns]
            proj = Projector(delete_file.file_path, {})
            cols = proj.struct_children(arrays, [fields[i] for i in wanted], target.as_struct(), n)
        table = pa.table(cols, names=[f"k{i}" for i in ids])
        self._equality[key] = table
        return table

    def equality_set(
        self, delete_files: Sequence[DataFile], ids: tuple[int, ...], schema: Schema
    ) -> EqualityDeleteSet:
        """The keys of ``delete_files`` (whose equality field ids are ``ids``), typed as
        ``schema``'s columns, hashed once per scan."""
        key = (tuple(sorted(d.file_path for d in delete_files)), ids)
        with self._lock:
            keys = self._equality_sets.get(key)
            if keys is None:
                tables = [self.equality_keys(d, schema) for d in delete_files]
                keys = EqualityDeleteSet(pa.concat_tables(tables))
                self._equality_sets[key] = keys
        return keys


def _top_field_for(schema: Schema, field_id: int, delete_file: DataFile) -> NestedField:
    for f in schema.fields:
        if f.field_id == field_id:
            return f
    raise UnsupportedError(
        f"equality delete file {delete_file.file_path}: equality field id {field_id} is not a "
        "top-level column of the table schema"
    )


def _check_format(f: DataFile, what: str) -> str:
    """The file's format, Parquet, ORC or Avro (others are refused, naming the file)."""
    fmt = (f.file_format or "").upper()
    if fmt not in (FileFormat.PARQUET, FileFormat.ORC, FileFormat.AVRO):
        raise UnsupportedError(f"{what} {f.file_path}: {fmt} files are not supported yet")
    return fmt


# Strings, binaries and lists in the large Arrow types of ``schema_to_arrow`` (files without a
# stored Arrow schema then need no cast), as :func:`~frazil.table.scan.projection.open_parquet`.
_PARQUET_READ = ds.ParquetReadOptions(binary_type=pa.large_binary(), list_type=pa.LargeListType)
_PARQUET = ds.ParquetFileFormat(read_options=_PARQUET_READ)


def _parquet_format(decryption: Any) -> ds.ParquetFileFormat:
    """The Parquet format of one encrypted file: its decryption properties in the scan options."""
    return ds.ParquetFileFormat(
        read_options=_PARQUET_READ,
        default_fragment_scan_options=ds.ParquetFragmentScanOptions(
            decryption_properties=decryption
        ),
    )


#: decoding threads per row group of a natively decoded file (its columns in parallel), by
#: default: as many as the scan's read threads (to_arrow's ``read-threads`` default). A
#: reader of several files at once passes fewer (see :func:`decode_threads`).
_DECODE_THREADS = max(1, min(8, os.cpu_count() or 1))


def decode_threads(files_at_once: int) -> int:
    """Threads to decode each row group's columns on while ``files_at_once`` files are read
    concurrently: the cores left to each. Column threads on top of a thread per file only
    contend for the same cores (a filtered read of 30 files on 2 cores: 0.29 s of CPU with one
    decoding thread per file, 0.31-0.40 s with two)."""
    return max(1, _DECODE_THREADS // max(1, files_at_once))


class _ParquetData:
    """A Parquet data file: its footer and row-group statistics through pyarrow's dataset
    fragment; its rows decoded natively (:class:`~frazil.table.scan.formats.NativeParquet`)
    where that gives the columns read exactly pyarrow's Arrow types and field ids, else by
    pyarrow into :func:`~frazil.table.scan.projection.read_pool`, handed on without a copy."""

    def __init__(
        self, fs: Any, path: str, decryption: Any = None, stack: contextlib.ExitStack | None = None
    ) -> None:
        # An encrypted file's key (frazil.encryption.table_io) goes in its own format's options.
        fmt = _PARQUET if decryption is None else _parquet_format(decryption)
        self.fragment = fmt.make_fragment(path, filesystem=fs)
        self.schema_arrow = self.fragment.physical_schema
        self._native: NativeParquet | None = None
        if decryption is None and stack is not None and _NATIVE_PARQUET:
            # strings, binaries and lists straight into the large types the table's Arrow
            # schema uses: no cast (and no second offsets buffer) after decoding
            self._native = NativeParquet(
                stack.enter_context(fs.open_input_file(path)),
                path,
                large_schema(self.schema_arrow),
            )

    def _native_indices(self, columns: list[str]) -> list[int] | None:
        """The native decoder's column indices for ``columns``, if it decodes each of them to
        pyarrow's type and field ids (nested fields' too)."""
        if self._native is None:
            return None
        ours = self._native.schema_arrow
        names = ours.names
        if len(names) != len(set(names)) or any(c not in names for c in columns):
            return None
        theirs = self.schema_arrow
        for c in columns:
            if not _same_field(ours.field(c), large_field(theirs.field(c))):
                return None
        indices = [names.index(c) for c in columns]
        # the decoder returns columns in file order
        return indices if indices == sorted(set(indices)) else None

    def batches(
        self,
        columns: list[str],
        batch_size: int,
        start: int | None,
        length: int | None,
        prune: pc.Expression | None = None,
        deleted: DeletionVector | None = None,
        pages: Any = None,
        late: LateFilter | None = None,
        threads: int | None = None,
    ) -> Iterator[tuple[int | None, pa.RecordBatch, bool]]:
        """(position of its first row, batch, filtered) of the split's row groups, less those
        whose statistics show ``prune`` false for all their rows; ``filtered``: the batch holds
        only rows ``late``'s filter holds for. Where the rows are decoded
        natively, the rows ``deleted`` names are not decoded, nor those of the pages whose
        page index bounds show ``pages`` (the residual as a native ``RowFilter``) false for
        all their rows, and the position is None (the batch's rows are no longer
        consecutive); elsewhere the caller drops them. With ``late``, a row group's filter
        columns are decoded first and its other columns only for the rows the filter keeps,
        where it keeps few of them (:class:`LateFilter`). A row group's columns are decoded on
        up to ``threads`` threads (default :data:`_DECODE_THREADS`)."""
        threads = _DECODE_THREADS if threads is None else max(1, threads)
        groups = _row_groups(self.fragment.metadata, start, length)
        if prune is not None and groups:
            kept = {rg.id for rg in self.fragment.subset(filter=prune).row_groups}
            groups = [g for g in groups if g[0] in kept]
        indices = self._native_indices(columns) if groups else None
        if indices is not None and self._native is not None:
            md = self.fragment.metadata
            for group, first in groups:
                keep = None
                if deleted is not None:
                    n = md.row_group(group).num_rows
                    if deleted.deleted_count(first, n):
                        keep = deleted.keep_mask(first, n)
                if pages is not None:
                    in_pages = self._native.page_keep(group, pages)
                    if in_pages is not None:
                        keep = in_pages if keep is None else pc.and_(keep, in_pages)
                        if not keep.true_count:
                            continue
                inputs = None if late is None else late.inputs(columns, indices)
                if late is not None and inputs is not None:
                    held = self._native.row_group_where(
                        group,
                        indices,
                        batch_size,
                        threads,
                        keep,
                        late.native,
                        inputs,
                        LATE_WALK,
                    )
                    # the rows come filtered: no position
                    for raw in held or ():
                        yield None, raw, True
                    continue
                reader = self._native.row_group(group, indices, batch_size, threads, keep)
                pos: int | None = None if keep is not None else first
                for raw in reader:
                    yield pos, raw, False
                    if pos is not None:
                        pos += raw.num_rows
            return
        # runs of adjacent row groups: within one, positions continue from batch to batch
        runs: list[list[tuple[int, int]]] = []
        for rg in groups:
            if runs and runs[-1][-1][0] + 1 == rg[0]:
                runs[-1].append(rg)
            else:
                runs.append([rg])
        for run in runs:
            part = self.fragment.subset(row_group_ids=[rg for rg, _ in run])
            pos = run[0][1]
            for raw in part.to_batches(
                columns=columns, batch_size=batch_size, use_threads=True, memory_pool=read_pool()
            ):
                yield pos, raw, False
                pos += raw.num_rows


def _same_field(a: pa.Field, b: pa.Field) -> bool:
    """Equal fields (types, nullability, field ids), nested ones too, but for the name of a
    map's entries, which the C data interface does not carry (pyarrow names them after the
    column, arrow-rs ``key_value``) and nothing reads."""
    if a.equals(b, check_metadata=True):
        return True
    if a.name != b.name or a.nullable != b.nullable or a.metadata != b.metadata:
        return False
    s, t = a.type, b.type
    if pa.types.is_map(s) and pa.types.is_map(t):
        return (
            s.keys_sorted == t.keys_sorted
            and _same_field(s.key_field, t.key_field)
            and _same_field(s.item_field, t.item_field)
        )
    if pa.types.is_struct(s) and pa.types.is_struct(t):
        return s.num_fields == t.num_fields and all(
            _same_field(s.field(i), t.field(i)) for i in range(s.num_fields)
        )
    if (pa.types.is_large_list(s) and pa.types.is_large_list(t)) or (
        pa.types.is_list(s) and pa.types.is_list(t)
    ):
        return _same_field(s.value_field, t.value_field)
    return False


def _batches(
    pf: _ParquetData | OrcFile | AvroFile,
    task: FileScanTask,
    columns: list[str],
    batch_size: int,
    prune: pc.Expression | None,
    deleted: DeletionVector | None,
    pages: Any = None,
    late: LateFilter | None = None,
    threads: int | None = None,
) -> Iterator[tuple[int | None, pa.RecordBatch, bool]]:
    """(position in the file of its first row, batch, filtered) of the rows the task's split
    covers; a position of None: the rows ``deleted`` names, and those of pages ``pages`` skips,
    are already dropped; filtered: so are those ``late``'s filter does not hold for (see
    :meth:`_ParquetData.batches`)."""
    if isinstance(pf, (OrcFile, AvroFile)):
        for start, raw in pf.batches(
            columns, batch_size, task.start, task.length, task.file.split_offsets
        ):
            yield start, raw, False
        return
    yield from pf.batches(
        columns, batch_size, task.start, task.length, prune, deleted, pages, late, threads
    )


# ---------------------------------------------------------------------------------------------
# reading a task


def _row_groups(
    md: pq.FileMetaData, start: int | None, length: int | None
) -> list[tuple[int, int]]:
    """(row group, first row position) of the row groups a split covers (all without one)."""
    out = []
    first = 0
    for i in range(md.num_row_groups):
        rg = md.row_group(i)
        if start is None or length is None:
            out.append((i, first))
        else:
            col = rg.column(0) if rg.num_columns else None
            offset = 0
            if col is not None:
                offset = col.data_page_offset
                if col.has_dictionary_page and col.dictionary_page_offset:
                    offset = min(offset, col.dictionary_page_offset)
            if start <= offset < start + length:
                out.append((i, first))
        first += rg.num_rows
    return out


def _partition_constants(task: FileScanTask, schema: Schema) -> dict[int, Any]:
    spec = task.spec
    if spec is None:
        return {}
    out: dict[int, Any] = {}
    for i, pf in enumerate(spec.fields):
        if str(pf.transform) == "identity" and i < len(task.partition):
            if pf.source_id in schema.field_ids:
                out[pf.source_id] = task.partition[i]
    return out


def _partition_struct(task: FileScanTask, partition_type: StructType, n: int) -> pa.Array:
    by_id: dict[int, Any] = {}
    if task.spec is not None:
        for i, pf in enumerate(task.spec.fields):
            if i < len(task.partition):
                by_id[pf.field_id] = task.partition[i]
    arrow_type = type_to_arrow(partition_type)
    children = [
        repeat_scalar(arrow_scalar(by_id.get(f.field_id), f.field_type), n)
        for f in partition_type.fields
    ]
    if not children:
        return pa.array([{}] * n, pa.struct([]))
    return pa.StructArray.from_arrays(children, fields=list(arrow_type))


def read_task(
    task: FileScanTask,
    io: FileIO,
    table_schema: Schema,
    projected_schema: Schema | None = None,
    *,
    metadata_columns: Sequence[str] = (),
    partition_type: StructType | None = None,
    name_mapping: NameMapping | None = None,
    residual: BooleanExpression | None = None,
    delete_cache: DeleteCache | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    decode_threads: int | None = None,
) -> Iterator[pa.RecordBatch]:
    """The live rows of one task, batch by batch, with the columns of ``projected_schema``
    (default: ``table_schema``) followed by ``metadata_columns``. A natively decoded row
    group's columns are decoded on up to ``decode_threads`` threads (default: one per core,
    up to 8; see :func:`decode_threads` for a reader of several tasks at once).

    ``table_schema`` is the schema the task's residual is bound to; ``residual`` overrides the
    task's. ``partition_type`` is the table's partition type for ``_partition`` (see
    :func:`frazil.table.scan.table_partition_type`).
    """
    projected = projected_schema if projected_schema is not None else table_schema
    data_file = task.file
    fmt = _check_format(data_file, "data file")
    for name in metadata_columns:
        if name not in METADATA_COLUMNS:
            raise ValidationError(f"unknown metadata column {name!r}")
    cache = delete_cache if delete_cache is not None else DeleteCache(io, name_mapping)
    filt = residual if residual is not None else task.residual
    if filt is None:
        filt = AlwaysTrue()

    dvs = [d for d in task.delete_files if is_deletion_vector(d)]
    pos_files = [
        d
        for d in task.delete_files
        if d.content == DataFileContent.POSITION_DELETES and d not in dvs
    ]
    eq_files = [d for d in task.delete_files if d.content == DataFileContent.EQUALITY_DELETES]
    for d in dvs + pos_files:
        if d.referenced_data_file is not None and d.referenced_data_file != data_file.file_path:
            raise ValidationError(
                f"delete file {d.file_path} references data file {d.referenced_data_file}, "
                f"not {data_file.file_path} of this task"
            )
    if len(dvs) > 1:
        raise ValidationError(f"data file {data_file.file_path} has {len(dvs)} deletion vectors")

    # Positions deleted: a DV supersedes position delete files for its data file.
    deleted: DeletionVector | None = None
    if dvs:
        deleted = read_dv(io, dvs[0])
    elif pos_files:
        parts = [cache.positions(d, data_file.file_path) for d in pos_files]
        deleted = DeletionVector.from_positions(pa.array(np.concatenate(parts)))
    if deleted is not None and deleted.max is not None and deleted.max >= data_file.record_count:
        raise ValidationError(
            f"deletes of {data_file.file_path} name row position {deleted.max}, beyond its "
            f"{data_file.record_count} rows"
        )

    eq_groups: dict[tuple[int, ...], list[DataFile]] = {}
    for d in eq_files:
        eq_groups.setdefault(tuple(d.equality_ids or ()), []).append(d)

    needed = projected.field_ids | referenced_field_ids(filt)
    for ids in eq_groups:
        needed |= set(ids)
    read_schema = prune_schema(table_schema, needed)
    row_filter = None if isinstance(filt, AlwaysTrue) else cache.row_filter(filt, table_schema)
    eq_sets = [
        (ids, cache.equality_set(files, ids, table_schema)) for ids, files in eq_groups.items()
    ]

    out_schema = schema_to_arrow(projected)
    meta_fields = [metadata_field(n, partition_type) for n in metadata_columns]
    out_schema = pa.schema(list(out_schema) + list(schema_to_arrow(Schema(*meta_fields))))
    constants = _partition_constants(task, table_schema)
    projector = Projector(data_file.file_path, constants)
    seq = data_file.extra.get("sequence_number")

    fs, path = data_filesystem(io, data_file.file_path)
    with reading("data file", data_file.file_path), contextlib.ExitStack() as stack:
        pf: _ParquetData | OrcFile | AvroFile
        decryption = file_decryption(io, data_file)
        if fmt == FileFormat.PARQUET:
            pf = _ParquetData(fs, path, decryption, stack)
        else:
            fh = stack.enter_context(fs.open_input_file(path))
            pf = open_file(fh, fmt, data_file.record_count, decryption)
        mapping = name_mapping
        if mapping is None and fmt in MAPPED_BY_DEFAULT:
            # Java's ORC and Avro readers read a file without ids by the table's column names.
            mapping = create_mapping_from_schema(table_schema)
        fields = file_fields(pf.schema_arrow, mapping)
        by_id = {field_id_of(f): i for i, f in enumerate(fields)}
        wanted = sorted(
            {by_id[f.field_id] for f in read_schema.fields if f.field_id in by_id}
            | {
                by_id[i]
                for i in (ROW_ID_FIELD_ID, LAST_UPDATED_FIELD_ID)
                if i in by_id and METADATA_COLUMNS_BY_ID[i] in metadata_columns
            }
        )
        columns = [fields[i].name for i in wanted]
        wanted_fields = [fields[i] for i in wanted]
        prune = None
        if row_filter is not None and isinstance(pf, _ParquetData):
            # row groups pruned by the file columns holding exactly the table column's type
            same = {
                f.field_id: fields[by_id[f.field_id]]
                for f in table_schema.fields
                if f.field_id in by_id
                and fields[by_id[f.field_id]].type == type_to_arrow(f.field_type)
            }
            prune = pruning_expression(filt, same)
        # the decoder may drop deleted rows, and pages the residual cannot hold for, itself
        # where no column needs the rows' positions
        positional = bool(_POSITIONAL & set(metadata_columns))
        decoder_deletes = None if positional else deleted
        pages = None if positional or row_filter is None else row_filter.native
        late = None
        if pages is not None and row_filter is not None and isinstance(pf, _ParquetData):
            late = LateFilter.of(row_filter, table_schema, fields, by_id)
        for start, raw, filtered in _batches(
            pf, task, columns, batch_size, prune, decoder_deletes, pages, late, decode_threads
        ):
            n = raw.num_rows
            arrays = projector.struct_children(
                raw.columns, wanted_fields, read_schema.as_struct(), n
            )
            names = [f.name for f in read_schema.fields]
            file_cols = {field_id_of(f): raw.column(j) for j, f in enumerate(wanted_fields)}
            for name in metadata_columns:
                arrays.append(_metadata_array(name, task, start, n, file_cols, seq, partition_type))
                names.append(name)
            batch = pa.RecordBatch.from_arrays(arrays, names=names)

            keep = None
            if start is not None and deleted is not None and deleted.deleted_count(start, n):
                keep = deleted.keep_mask(start, n)
            for ids, keys in eq_sets:
                cols = [batch.column(_top_name(read_schema, i)) for i in ids]
                keep = keys.keep_mask(cols, keep)
            # the kept rows are copied into the read's pool, where the batch was decoded
            if keep is not None and keep.false_count:
                batch = pc.filter(batch, keep, memory_pool=read_pool())
            if row_filter is not None and batch.num_rows and not filtered:
                # (a late filter's rows are those the same native filter already held for)
                holds = row_filter.mask(batch)
                if holds.false_count:
                    batch = pc.filter(batch, holds, memory_pool=read_pool())
            if batch.num_rows == 0:
                continue
            out = [batch.column(f.name) for f in projected.fields]
            out += [batch.column(n) for n in metadata_columns]
            yield pa.RecordBatch.from_arrays(
                [_narrow(a, f) for a, f in zip(out, out_schema, strict=True)],
                schema=out_schema,
            )


METADATA_COLUMNS_BY_ID = {fid: name for name, (fid, _) in METADATA_COLUMNS.items()}
#: metadata columns computed from the rows' positions in their file
_POSITIONAL = {"_pos", "_row_id"}


def _top_name(schema: Schema, field_id: int) -> str:
    for f in schema.fields:
        if f.field_id == field_id:
            return f.name
    raise ValidationError(f"field id {field_id} is not a top-level column")


def _narrow(arr: pa.Array, f: pa.Field) -> pa.Array:
    """A read-schema column cut down to the projected (possibly pruned) type."""
    if arr.type == f.type:
        return arr
    if pa.types.is_struct(f.type) and pa.types.is_struct(arr.type):
        children = [_narrow(arr.field(c.name), c) for c in f.type]
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(f.type), mask=mask)
    return arr.cast(f.type)


def _metadata_array(
    name: str,
    task: FileScanTask,
    start: int | None,
    n: int,
    file_cols: Mapping[int | None, pa.Array],
    seq: int | None,
    partition_type: StructType | None,
) -> pa.Array:
    f = task.file
    if name in _POSITIONAL:
        if start is None:  # read_task keeps positions where these are read
            raise ValidationError(f"{name} of {f.file_path}: the rows' positions are unknown")
        return _positional(name, f, start, n, file_cols)
    if name == "_file":
        return pa.repeat(pa.scalar(f.file_path, pa.large_string()), n)
    if name == "_spec_id":
        return pa.repeat(pa.scalar(task.spec_id, pa.int32()), n)
    if name == "_partition":
        return _partition_struct(task, partition_type or StructType(), n)
    if name == "_last_updated_sequence_number":
        inherited_seq = pa.scalar(seq if f.first_row_id is not None or seq is not None else None)
        inherited = repeat_scalar(inherited_seq.cast(pa.int64()), n)
        stored = file_cols.get(LAST_UPDATED_FIELD_ID)
        return inherited if stored is None else pc.coalesce(stored.cast(pa.int64()), inherited)
    raise ValidationError(f"unknown metadata column {name!r}")


def _positional(
    name: str, f: DataFile, start: int, n: int, file_cols: Mapping[int | None, pa.Array]
) -> pa.Array:
    """``_pos`` or ``_row_id`` of the rows at positions ``[start, start + n)``."""
    if name == "_pos":
        return pa.array(np.arange(start, start + n, dtype=np.int64))
    inherited = (
        pa.array(np.arange(start, start + n, dtype=np.int64) + f.first_row_id)
        if f.first_row_id is not None
        else pa.nulls(n, pa.int64())
    )
    stored = file_cols.get(ROW_ID_FIELD_ID)
    return inherited if stored is None else pc.coalesce(stored.cast(pa.int64()), inherited)
