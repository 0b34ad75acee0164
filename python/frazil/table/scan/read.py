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

import logging
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from frazil import values
from frazil.arrow_schema import field_id_of, schema_to_arrow, type_to_arrow
from frazil.exceptions import (
    DecodeError,
    FileReadError,
    FrazilError,
    UnsupportedError,
    ValidationError,
)
from frazil.expressions import AlwaysTrue, BooleanExpression
from frazil.manifest.content_file import DataFile, DataFileContent, FileFormat, is_deletion_vector
from frazil.manifest.deletes import DeletionVector, EqualityDeleteSet
from frazil.metadata.name_mapping import MappedField, NameMapping, create_mapping_from_schema
from frazil.schema import Schema
from frazil.table.scan.filter import RowFilter, referenced_field_ids
from frazil.table.scan.formats import AvroFile, OrcFile
from frazil.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
    VariantType,
)

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.table.scan import FileScanTask

__all__ = [
    "FILE_PATH_FIELD_ID",
    "METADATA_COLUMNS",
    "POS_FIELD_ID",
    "DeleteCache",
    "metadata_field",
    "prune_schema",
    "read_task",
]

log = logging.getLogger(__name__)

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
# schemas


@contextmanager
def reading(what: str, location: str) -> Iterator[None]:
    """Turns the file reader's errors (pyarrow's, the file system's) into a
    :class:`~frazil.exceptions.FileReadError` naming ``what`` (``"data file"``, ...) and
    ``location``; frazil's own errors pass as they are."""
    try:
        yield
    except FrazilError:
        raise
    except (OSError, pa.ArrowException) as e:
        raise FileReadError(f"{what} {location}: {type(e).__name__}: {e}") from e


def open_parquet(source: Any) -> pq.ParquetFile:
    """A Parquet file to read, with strings, binaries and lists in the large Arrow types the
    table's Arrow schema uses (``schema_to_arrow``), so that files without a stored Arrow
    schema (Java's, Spark's, frazil's own) need no cast after decoding."""
    return pq.ParquetFile(source, binary_type=pa.large_binary(), list_type=pa.LargeListType)


def open_file(
    source: Any, fmt: str, record_count: int | None = None
) -> pq.ParquetFile | OrcFile | AvroFile:
    """A Parquet, ORC or Avro file (``fmt``, from :func:`_check_format`) to read;
    ``record_count`` (its manifest entry's) bounds what an Avro file may decode to."""
    if fmt == FileFormat.ORC:
        return OrcFile(source)
    if fmt == FileFormat.AVRO:
        return AvroFile(source, record_count)
    return open_parquet(source)


# Formats whose files without field ids Java reads by the table's column names when the table
# has no name mapping (its ORC and Avro readers fall back to a mapping of the read schema).
_MAPPED_BY_DEFAULT = (FileFormat.ORC, FileFormat.AVRO)


def prune_schema(schema: Schema, field_ids: set[int]) -> Schema:
    """``schema`` with only the fields in ``field_ids`` and their ancestors; a selected struct
    keeps all of its fields, a list or map is kept whole when anything inside it is selected."""

    def inside(t: IcebergType) -> set[int]:
        out: set[int] = set()
        if isinstance(t, StructType):
            for f in t.fields:
                out.add(f.field_id)
                out |= inside(f.field_type)
        elif isinstance(t, ListType):
            out.add(t.element_id)
            out |= inside(t.element_type)
        elif isinstance(t, MapType):
            out |= {t.key_id, t.value_id} | inside(t.key_type) | inside(t.value_type)
        return out

    def prune(t: StructType) -> StructType:
        kept = []
        for f in t.fields:
            if f.field_id in field_ids:
                kept.append(f)
            elif isinstance(f.field_type, StructType):
                if inside(f.field_type) & field_ids:
                    kept.append(_with_type(f, prune(f.field_type)))
            elif inside(f.field_type) & field_ids:
                kept.append(f)
        return StructType(*kept)

    pruned = prune(schema.as_struct())
    return Schema(*pruned.fields, schema_id=schema.schema_id)


def _with_type(f: NestedField, t: IcebergType) -> NestedField:
    return NestedField(f.field_id, f.name, t, f.required, f.doc, f.initial_default, f.write_default)


def _with_mapped_ids(fields: Sequence[pa.Field], mapping: Sequence[MappedField]) -> list[pa.Field]:
    """Arrow fields with ``PARQUET:field_id`` from a name mapping (unmapped fields: none)."""
    out = []
    for f in fields:
        m = next((m for m in mapping if f.name in m.names), None)
        children = m.fields if m is not None else ()
        t = f.type
        if pa.types.is_struct(t):
            t = pa.struct(_with_mapped_ids(list(t), children))
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            (elem,) = _with_mapped_ids([t.value_field], children)
            t = pa.large_list(elem) if pa.types.is_large_list(t) else pa.list_(elem)
        elif pa.types.is_map(t):
            key, item = _with_mapped_ids([t.key_field, t.item_field], children)
            t = pa.map_(key, item)
        meta = {k: v for k, v in (f.metadata or {}).items() if k != b"PARQUET:field_id"}
        if m is not None and m.field_id is not None:
            meta[b"PARQUET:field_id"] = str(m.field_id).encode()
        out.append(pa.field(f.name, t, f.nullable, meta or None))
    return out


def _has_ids(fields: Sequence[pa.Field]) -> bool:
    """Whether any field, at any depth, has an id (Java's ``ParquetSchemaUtil.hasIds``)."""
    for f in fields:
        if field_id_of(f) is not None:
            return True
        t = f.type
        if pa.types.is_struct(t):
            children = list(t)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            children = [t.value_field]
        elif pa.types.is_map(t):
            children = [t.key_field, t.item_field]
        else:
            continue
        if _has_ids(children):
            return True
    return False


def _with_fallback_ids(fields: Sequence[pa.Field]) -> list[pa.Field]:
    """Top-level fields numbered 1..n in file order, nested ones left without ids: Java's
    ``ParquetSchemaUtil.addFallbackIds`` for a file with no ids in a table with no name
    mapping (files of tables migrated from Hive, whose columns were only ever appended)."""
    out = []
    for position, f in enumerate(fields, 1):
        if _reads_null_without_ids(f.type):
            out.append(f)  # no id: read as a missing column, null
            continue
        meta = dict(f.metadata or {})
        meta[b"PARQUET:field_id"] = str(position).encode()
        out.append(f.with_metadata(meta))
    return out


def _reads_null_without_ids(t: pa.DataType) -> bool:
    """Whether Java's Parquet reader reads a column of type ``t`` as null in every row when its
    nested fields have no ids: a struct then reads none of its children's columns (so it is
    null), a list reads through its element and a map through its key (checked against
    Iceberg 1.10.2; a map's struct values read as null there, as structs of nulls here)."""
    if pa.types.is_struct(t):
        return True
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _reads_null_without_ids(t.value_type)
    if pa.types.is_map(t):
        return _reads_null_without_ids(t.key_type)
    return False


def _file_fields(schema: pa.Schema, mapping: NameMapping | None) -> list[pa.Field]:
    """The file's fields with the ids they are matched by: their own, else the name mapping's,
    else ids by position (in that order, as Java's Parquet reader)."""
    fields = list(schema)
    if _has_ids(fields):
        return fields
    if mapping is None:
        return _with_fallback_ids(fields)
    return _with_mapped_ids(fields, list(mapping.fields))


# ---------------------------------------------------------------------------------------------
# projection of Arrow arrays to Iceberg types


def _scalar(value: Any, t: IcebergType) -> pa.Scalar:
    arrow_type = type_to_arrow(t)
    if value is None:
        return pa.scalar(None, arrow_type)
    if isinstance(t, UUIDType):
        return pa.ExtensionScalar.from_storage(pa.uuid(), pa.scalar(value.bytes, pa.binary(16)))
    return pa.scalar(value, arrow_type)


def _repeat(value: pa.Scalar, n: int) -> pa.Array:
    if value.is_valid:
        return pa.repeat(value, n)
    return pa.nulls(n, value.type)


def _holds(file_type: pa.DataType, t: IcebergType) -> Any:  # pyarrow's predicates are untyped
    """Whether a file's column of Arrow type ``file_type`` holds values of ``t``: the same type
    in any of its Parquet representations, or one the spec promotes to ``t`` (int -> long,
    float -> double, decimal(P, S) -> decimal(P', S) with P' >= P, date -> timestamp and
    timestamp_ns); any type reads as ``unknown`` (as null)."""
    p = pa.types
    if isinstance(t, UnknownType) or p.is_null(file_type):
        return True
    if isinstance(file_type, pa.BaseExtensionType):
        return isinstance(t, UUIDType) and file_type.extension_name == "arrow.uuid"
    if isinstance(t, BooleanType):
        return p.is_boolean(file_type)
    if isinstance(t, IntegerType):
        return file_type in _INTS
    if isinstance(t, LongType):
        return file_type in _INTS or file_type in (pa.int64(), pa.uint32())
    if isinstance(t, FloatType):
        return file_type in (pa.float16(), pa.float32())
    if isinstance(t, DoubleType):
        return file_type in (pa.float16(), pa.float32(), pa.float64())
    if isinstance(t, DecimalType):
        return (
            p.is_decimal(file_type)
            and file_type.scale == t.scale
            and file_type.precision <= t.precision
        )
    if isinstance(t, DateType):
        return p.is_date(file_type)
    if isinstance(t, TimeType):
        return p.is_time(file_type)
    if isinstance(t, (TimestampType, TimestampNanoType)):
        return p.is_timestamp(file_type) or p.is_date(file_type)
    if isinstance(t, (TimestamptzType, TimestamptzNanoType)):
        return p.is_timestamp(file_type)
    if isinstance(t, StringType):
        # Hive and Impala write strings as Parquet binary without the UTF8 annotation.
        return p.is_string(file_type) or p.is_large_string(file_type) or _is_binary(file_type)
    if isinstance(t, UUIDType):
        return p.is_fixed_size_binary(file_type) and file_type.byte_width == 16
    if isinstance(t, FixedType):
        return p.is_fixed_size_binary(file_type) and file_type.byte_width == t.length
    if isinstance(t, (BinaryType, GeometryType, GeographyType)):
        return _is_binary(file_type)
    return True  # variant: no Arrow type to check against yet


def _readable_as(file_type: pa.DataType, t: IcebergType) -> bool:
    return bool(_holds(file_type, t))


_INTS = (pa.int8(), pa.int16(), pa.int32(), pa.uint8(), pa.uint16())


def _is_binary(t: pa.DataType) -> bool:
    return bool(pa.types.is_binary(t) or pa.types.is_large_binary(t))


def _cast(arr: pa.Array, target: pa.DataType, t: IcebergType, where: str) -> pa.Array:
    if not _readable_as(arr.type, t):
        raise ValidationError(
            f"{where}: a column of {arr.type} cannot be read as {t} (only the spec's type "
            "promotions are)"
        )
    if isinstance(t, UnknownType):
        return pa.nulls(len(arr), target)
    if isinstance(t, VariantType):
        from frazil.values.variant import read_column

        return read_column(arr, where)
    if arr.type == target:
        return arr
    if isinstance(t, UUIDType):
        if isinstance(arr.type, pa.ExtensionType):
            return arr
        return pa.ExtensionArray.from_storage(pa.uuid(), arr.cast(pa.binary(16)))
    try:
        return arr.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise ValidationError(f"{where}: cannot read {arr.type} as {t}: {e}") from None


@dataclass
class _Projector:
    """Projects one file's arrays onto a table schema (ids, defaults, promotion, constants)."""

    location: str
    constants: Mapping[int, Any]  # field id -> Python value (identity partition values)

    def struct_children(
        self,
        arrays: Sequence[pa.Array],
        fields: Sequence[pa.Field],
        target: StructType,
        n: int,
        valid: pa.Array | None = None,
    ) -> list[pa.Array]:
        """The children of ``target`` from a file's ``arrays``; ``valid`` masks the rows where
        their struct is not null (``None``: the top level, every row)."""
        by_id: dict[int, int] = {}
        for i, f in enumerate(fields):
            fid = field_id_of(f)
            if fid is not None:
                by_id[fid] = i
        out = []
        for tf in target.fields:
            idx = by_id.get(tf.field_id)
            if idx is None:
                out.append(self.missing(tf, n))
            else:
                child = self.project(arrays[idx], fields[idx], tf)
                if tf.required and child.null_count:
                    self.check_required(child, fields[idx], valid)
                out.append(child)
        return out

    def check_required(self, arr: pa.Array, ff: pa.Field, valid: pa.Array | None) -> None:
        nulls = arr.is_null() if valid is None else pc.and_(arr.is_null(), valid)
        if pc.any(nulls).as_py():
            raise ValidationError(
                f"{self.location}, column {ff.name!r}: a required column holds nulls"
            )

    def missing(self, tf: NestedField, n: int) -> pa.Array:
        if tf.field_id in self.constants:
            return _repeat(_scalar(self.constants[tf.field_id], tf.field_type), n)
        if tf.initial_default is not None:
            value = values.from_json(tf.initial_default, tf.field_type)
            if isinstance(tf.field_type, StructType):
                return pa.array([value] * n, type_to_arrow(tf.field_type))
            return _repeat(_scalar(value, tf.field_type), n)
        if tf.required:
            raise ValidationError(
                f"{self.location}: required field {tf.name!r} (id {tf.field_id}) is missing "
                "and has no initial-default"
            )
        return pa.nulls(n, type_to_arrow(tf.field_type))

    def project(self, arr: pa.Array, ff: pa.Field, tf: NestedField) -> pa.Array:
        t = tf.field_type
        target = type_to_arrow(t)
        where = f"{self.location}, column {ff.name!r}"
        if isinstance(t, StructType):
            if not pa.types.is_struct(arr.type):
                raise ValidationError(f"{where}: expected a struct, found {arr.type}")
            # The children's ids come from ``ff`` (a name mapping puts them there), not the array.
            children = self.struct_children(
                [arr.field(i) for i in range(arr.type.num_fields)],
                list(ff.type),
                t,
                len(arr),
                arr.is_valid() if arr.null_count else None,
            )
            mask = arr.is_null() if arr.null_count else None
            return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
        if isinstance(t, ListType):
            if not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)):
                raise ValidationError(f"{where}: expected a list, found {arr.type}")
            elem = NestedField(t.element_id, "element", t.element_type, t.element_required)
            values_ = self.project(arr.values, ff.type.value_field, elem)
            if t.element_required and values_.null_count and arr.flatten().null_count:
                self.check_required(arr.flatten(), ff.type.value_field, None)
            mask = arr.is_null() if arr.null_count else None
            offsets = arr.offsets.cast(pa.int64())
            return pa.LargeListArray.from_arrays(offsets, values_, type=target, mask=mask)
        if isinstance(t, MapType):
            if not pa.types.is_map(arr.type):
                raise ValidationError(f"{where}: expected a map, found {arr.type}")
            key = NestedField(t.key_id, "key", t.key_type, True)
            value = NestedField(t.value_id, "value", t.value_type, t.value_required)
            keys = self.project(arr.keys, ff.type.key_field, key)
            items = self.project(arr.items, ff.type.item_field, value)
            if t.value_required and items.null_count:
                self.check_required(items, ff.type.item_field, None)
            mask = arr.is_null() if arr.null_count else None
            return pa.MapArray.from_arrays(arr.offsets, keys, items, type=target, mask=mask)
        return _cast(arr, target, t, where)


# ---------------------------------------------------------------------------------------------
# deletes


def _read_range(io: FileIO, location: str, offset: int, length: int) -> bytes:
    fs, path = io.filesystem(location)
    with fs.open_input_file(path) as f:
        size = f.size()
        if offset < 0 or length < 0 or offset + length > size:
            raise DecodeError(
                f"{location}: blob at offset {offset} length {length} is beyond the file "
                f"({size} bytes)"
            )
        data: bytes = f.read_at(length, offset)
        return data


def _read_dv(io: FileIO, dv: DataFile) -> DeletionVector:
    if dv.content_offset is None or dv.content_size_in_bytes is None:
        raise ValidationError(
            f"deletion vector {dv.file_path} has no content_offset/content_size_in_bytes"
        )
    with reading("deletion vector file", dv.file_path):
        blob = _read_range(io, dv.file_path, dv.content_offset, dv.content_size_in_bytes)
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
        fs, path = self.io.filesystem(delete_file.file_path)
        with reading("position delete file", delete_file.file_path), fs.open_input_file(path) as fh:
            pf = open_file(fh, fmt, delete_file.record_count)
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
        fs, path = self.io.filesystem(delete_file.file_path)
        with reading("equality delete file", delete_file.file_path), fs.open_input_file(path) as fh:
            pf = open_file(fh, fmt, delete_file.record_count)
            mapping = self.name_mapping
            if mapping is None and fmt in _MAPPED_BY_DEFAULT:
                mapping = create_mapping_from_schema(schema)  # as Java's ORC reader falls back
            fields = _file_fields(pf.schema_arrow, mapping)
            top = {field_id_of(f): i for i, f in enumerate(fields)}
            target = Schema(*(_top_field_for(schema, i, delete_file) for i in ids))
            wanted = sorted({top[i] for i in ids if i in top})
            t = pf.read(columns=[fields[i].name for i in wanted])
            n = t.num_rows
            arrays = [c.combine_chunks() for c in t.columns]
            proj = _Projector(delete_file.file_path, {})
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


def _batches(
    pf: pq.ParquetFile | OrcFile | AvroFile,
    task: FileScanTask,
    columns: list[str],
    batch_size: int,
) -> Iterator[tuple[int, pa.RecordBatch]]:
    """(position in the file of its first row, batch) of the rows the task's split covers."""
    if isinstance(pf, (OrcFile, AvroFile)):
        yield from pf.batches(columns, batch_size, task.start, task.length, task.file.split_offsets)
        return
    for rg, first in _row_groups(pf, task.start, task.length):
        pos = first
        for raw in pf.iter_batches(
            batch_size=batch_size, row_groups=[rg], columns=columns, use_threads=True
        ):
            yield pos, raw
            pos += raw.num_rows


# ---------------------------------------------------------------------------------------------
# reading a task


def _row_groups(pf: pq.ParquetFile, start: int | None, length: int | None) -> list[tuple[int, int]]:
    """(row group, first row position) of the row groups a split covers (all without one)."""
    out = []
    first = 0
    md = pf.metadata
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
        _repeat(_scalar(by_id.get(f.field_id), f.field_type), n) for f in partition_type.fields
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
) -> Iterator[pa.RecordBatch]:
    """The live rows of one task, batch by batch, with the columns of ``projected_schema``
    (default: ``table_schema``) followed by ``metadata_columns``.

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
        deleted = _read_dv(io, dvs[0])
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
    projector = _Projector(data_file.file_path, constants)
    seq = data_file.extra.get("sequence_number")

    fs, path = io.filesystem(data_file.file_path)
    with reading("data file", data_file.file_path), fs.open_input_file(path) as fh:
        pf = open_file(fh, fmt, data_file.record_count)
        mapping = name_mapping
        if mapping is None and fmt in _MAPPED_BY_DEFAULT:
            # Java's ORC and Avro readers read a file without ids by the table's column names.
            mapping = create_mapping_from_schema(table_schema)
        fields = _file_fields(pf.schema_arrow, mapping)
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
        for start, raw in _batches(pf, task, columns, batch_size):
            n = raw.num_rows
            positions = np.arange(start, start + n, dtype=np.int64)
            arrays = projector.struct_children(
                raw.columns, wanted_fields, read_schema.as_struct(), n
            )
            names = [f.name for f in read_schema.fields]
            file_cols = {field_id_of(f): raw.column(j) for j, f in enumerate(wanted_fields)}
            for name in metadata_columns:
                arrays.append(
                    _metadata_array(name, task, positions, file_cols, seq, partition_type)
                )
                names.append(name)
            batch = pa.RecordBatch.from_arrays(arrays, names=names)

            keep = None
            if deleted is not None and deleted.deleted_count(start, n):
                keep = deleted.keep_mask(start, n)
            for ids, keys in eq_sets:
                cols = [batch.column(_top_name(read_schema, i)) for i in ids]
                keep = keys.keep_mask(cols, keep)
            if keep is not None and keep.false_count:
                batch = batch.filter(keep)
            if row_filter is not None and batch.num_rows:
                batch = row_filter.filter(batch)
            if batch.num_rows == 0:
                continue
            out = [batch.column(f.name) for f in projected.fields]
            out += [batch.column(n) for n in metadata_columns]
            yield pa.RecordBatch.from_arrays(
                [_narrow(a, f) for a, f in zip(out, out_schema, strict=True)],
                schema=out_schema,
            )


METADATA_COLUMNS_BY_ID = {fid: name for name, (fid, _) in METADATA_COLUMNS.items()}


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
    positions: np.ndarray,
    file_cols: Mapping[int | None, pa.Array],
    seq: int | None,
    partition_type: StructType | None,
) -> pa.Array:
    n = len(positions)
    f = task.file
    if name == "_file":
        return pa.repeat(pa.scalar(f.file_path, pa.large_string()), n)
    if name == "_pos":
        return pa.array(positions)
    if name == "_spec_id":
        return pa.repeat(pa.scalar(task.spec_id, pa.int32()), n)
    if name == "_partition":
        return _partition_struct(task, partition_type or StructType(), n)
    if name == "_row_id":
        inherited = (
            pa.array(positions + f.first_row_id)
            if f.first_row_id is not None
            else pa.nulls(n, pa.int64())
        )
        stored = file_cols.get(ROW_ID_FIELD_ID)
        return inherited if stored is None else pc.coalesce(stored.cast(pa.int64()), inherited)
    if name == "_last_updated_sequence_number":
        inherited_seq = pa.scalar(seq if f.first_row_id is not None or seq is not None else None)
        inherited = _repeat(inherited_seq.cast(pa.int64()), n)
        stored = file_cols.get(LAST_UPDATED_FIELD_ID)
        return inherited if stored is None else pc.coalesce(stored.cast(pa.int64()), inherited)
    raise ValidationError(f"unknown metadata column {name!r}")
