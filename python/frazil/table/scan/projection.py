"""Opening a data or delete file and projecting its columns onto the table schema.

Columns are matched by field id, or through a name mapping for files written without ids;
columns a file lacks read as null, their ``initial-default`` or a partition constant; promoted
types are cast; structs, lists and maps are projected recursively (spec "Column Projection").
:mod:`frazil.table.scan.read` applies this per task, and to delete files.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from frazil import values
from frazil.arrow_schema import field_id_of, type_to_arrow
from frazil.exceptions import FileReadError, FrazilError, UnsupportedError, ValidationError
from frazil.manifest.content_file import FileFormat
from frazil.metadata.name_mapping import MappedField, NameMapping
from frazil.schema import Schema
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
from frazil.values.variant import read_column

__all__ = [
    "MAPPED_BY_DEFAULT",
    "Projector",
    "arrow_scalar",
    "file_fields",
    "open_file",
    "open_parquet",
    "prune_schema",
    "read_pool",
    "reading",
    "repeat_scalar",
]


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


def open_parquet(source: Any, decryption: Any = None) -> pq.ParquetFile:
    """A Parquet file to read, with strings, binaries and lists in the large Arrow types the
    table's Arrow schema uses (``schema_to_arrow``), so that files without a stored Arrow
    schema (Java's, Spark's, frazil's own) need no cast after decoding."""
    return pq.ParquetFile(
        source,
        binary_type=pa.large_binary(),
        list_type=pa.LargeListType,
        decryption_properties=decryption,
    )


def open_file(
    source: Any, fmt: str, record_count: int | None = None, decryption: Any = None
) -> pq.ParquetFile | OrcFile | AvroFile:
    """A Parquet, ORC or Avro file (``fmt``, checked by the reader) to read;
    ``record_count`` (its manifest entry's) bounds what an Avro file may decode to;
    ``decryption``: an encrypted file's (frazil.encryption.table_io: pyarrow's properties for
    Parquet, a ``StreamDecryption`` for Avro)."""
    if decryption is not None and fmt not in (FileFormat.PARQUET, FileFormat.AVRO):
        raise UnsupportedError(
            f"encrypted {fmt} data files are not supported (Parquet and Avro only)"
        )
    if fmt == FileFormat.ORC:
        return OrcFile(source)
    if fmt == FileFormat.AVRO:
        return AvroFile(source, record_count, decryption)
    return open_parquet(source, decryption)


def read_pool() -> pa.MemoryPool:
    """The pool decoded Parquet data is allocated from: jemalloc where pyarrow has it, unless
    the user chose a pool (``ARROW_DEFAULT_MEMORY_POOL``). A read allocates and frees pages and
    column chunks between the buffers it keeps; with mimalloc (pyarrow's default) those holes
    stayed resident, about 0.7x the result on top of it on a 20M-row scan (jemalloc returns
    them: 1.15x the result's size against 1.65x)."""
    global _POOL
    if _POOL is None:
        pool = pa.default_memory_pool()
        if not os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
            try:
                pool = pa.jemalloc_memory_pool()
            except NotImplementedError:  # pyarrow built without jemalloc (Windows wheels)
                pass
        _POOL = pool
    return _POOL


_POOL: pa.MemoryPool | None = None

# Formats whose files without field ids Java reads by the table's column names when the table
# has no name mapping (its ORC and Avro readers fall back to a mapping of the read schema).
MAPPED_BY_DEFAULT = (FileFormat.ORC, FileFormat.AVRO)


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


def file_fields(schema: pa.Schema, mapping: NameMapping | None) -> list[pa.Field]:
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


def arrow_scalar(value: Any, t: IcebergType) -> pa.Scalar:
    arrow_type = type_to_arrow(t)
    if value is None:
        return pa.scalar(None, arrow_type)
    if isinstance(t, UUIDType):
        return pa.ExtensionScalar.from_storage(pa.uuid(), pa.scalar(value.bytes, pa.binary(16)))
    return pa.scalar(value, arrow_type)


def repeat_scalar(value: pa.Scalar, n: int) -> pa.Array:
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
        return read_column(arr, where)
    if arr.type == target:
        return arr
    if isinstance(t, UUIDType):
        if isinstance(arr.type, pa.ExtensionType):
            return arr
        return pa.ExtensionArray.from_storage(pa.uuid(), arr.cast(pa.binary(16)))
    try:
        return arr.cast(target, memory_pool=read_pool())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise ValidationError(f"{where}: cannot read {arr.type} as {t}: {e}") from None


@dataclass
class Projector:
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
            return repeat_scalar(arrow_scalar(self.constants[tf.field_id], tf.field_type), n)
        if tf.initial_default is not None:
            value = values.from_json(tf.initial_default, tf.field_type)
            if isinstance(tf.field_type, StructType):
                return pa.array([value] * n, type_to_arrow(tf.field_type))
            return repeat_scalar(arrow_scalar(value, tf.field_type), n)
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
