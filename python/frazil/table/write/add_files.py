"""Existing Parquet files as data files of a table (``Table.add_files``).

Each file's footer is read (concurrently) for its schema, its metrics
(:mod:`frazil.table.write.metrics`) and its partition values. The file's columns are matched to the
table's fields by the file's field ids, else by the table's name mapping
(``schema.name-mapping.default``), else by the current schema's column names, as PyIceberg's
``add_files`` does; every column must belong to a table field of a type it can be read as, and
every required table column must be present and required.

A partitioned table's partition values come from the statistics: for each field of the default
spec, the transform of the column's minimum and of its maximum must agree (for a transform that
does not preserve order, minimum and maximum must be equal), else the file spans several
partitions and cannot be added as one data file. A column whose values are all null gives a null
partition value; one with both nulls and values spans two partitions.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from frazil.arrow_schema import field_id_of, schema_from_arrow, type_to_arrow, walk_fields
from frazil.encryption.table_io import data_filesystem
from frazil.exceptions import FrazilError, ValidationError
from frazil.io.paths import qualify_location
from frazil.manifest import read_manifest, read_manifest_list, read_manifests
from frazil.manifest.content_file import (
    DataFile,
    FileFormat,
    ManifestEntryStatus,
    partition_arrow_type,
)
from frazil.metadata.name_mapping import NameMapping, create_mapping_from_schema
from frazil.partitioning import PartitionField, PartitionSpec, is_void
from frazil.schema import Schema
from frazil.table.write.metrics import ColumnStats, MetricsConfig, parquet_metrics
from frazil.transforms import Transform
from frazil.types import (
    BinaryType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    PrimitiveType,
    StructType,
    TimestampNanoType,
    TimestampType,
    UnknownType,
    UUIDType,
)
from frazil.values.geo import is_geo

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.io.paths import qualify_location
from frazil.metadata import TableMetadata

__all__ = ["data_files_from_parquet", "referenced_data_files"]

logger = logging.getLogger(__name__)

_MAX_WORKERS = 16


def data_files_from_parquet(
    io: FileIO,
    metadata: TableMetadata,
    file_paths: Iterable[str],
    check_duplicate_files: bool = True,
) -> list[DataFile]:
    """One :class:`DataFile` per Parquet file, in the order of ``file_paths``, for the table's
    current schema and default spec. With ``check_duplicate_files``, paths that live data files
    of the current snapshot already reference are a :class:`ValidationError`."""
    paths = list(file_paths)
    if metadata.format_version >= 4:
        # v4 paths are absolute with a scheme: a local path gets file://, as the table's own do
        paths = [qualify_location(p) for p in paths]
    seen: set[str] = set()
    repeated = sorted({p for p in paths if p in seen or seen.add(p)})  # type: ignore[func-returns-value]
    if repeated:
        raise ValidationError(f"file paths must be unique; given more than once: {repeated}")
    if not paths:
        return []
    if check_duplicate_files:
        already = referenced_data_files(io, metadata, paths)
        if already:
            raise ValidationError(
                "cannot add files that are already referenced by the table: "
                + ", ".join(sorted(already))
            )
    schema = metadata.schema()
    spec = metadata.spec()
    mapping = metadata.name_mapping()
    config = MetricsConfig.from_properties(metadata.properties, schema, metadata.sort_order())
    ptype = partition_arrow_type(spec, schema)

    def one(path: str) -> DataFile:
        return _data_file(io, path, schema, spec, ptype, mapping, config)

    if len(paths) == 1:
        return [one(paths[0])]
    with ThreadPoolExecutor(max_workers=min(_MAX_WORKERS, len(paths))) as pool:
        return list(pool.map(one, paths))


def _data_file(
    io: FileIO,
    path: str,
    schema: Schema,
    spec: PartitionSpec,
    ptype: pa.StructType,
    mapping: NameMapping | None,
    config: MetricsConfig,
) -> DataFile:
    # An encrypted table adds plaintext files as Java's add_files does: the entry has no
    # key_metadata (read as plaintext), and the encrypted manifest holds its metrics.
    fs, fs_path = data_filesystem(io, path)
    with fs.open_input_file(fs_path) as f:
        size = f.size()
        try:
            footer = pq.read_metadata(f)
        except (pa.ArrowInvalid, OSError) as e:
            raise ValidationError(f"{path}: not a readable Parquet file: {e}") from None
    check_file_schema(path, footer.schema.to_arrow_schema(), schema, mapping)
    try:
        metrics = parquet_metrics(footer, schema, config=config, name_mapping=mapping)
    except FrazilError as e:
        raise type(e)(f"{path}: {e}") from None
    partition = tuple(
        _partition_value(path, pf, metrics.stats, schema, ptype.field(i).type)
        for i, pf in enumerate(spec.fields)
    )
    return DataFile(
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=partition,
        file_size_in_bytes=size,
        spec_id=spec.spec_id,
        **metrics.data_file_fields(),
    )


# ---------------------------------------------------------------------------------------------
# Schema compatibility


def _has_any_id(arrow_schema: pa.Schema) -> bool:
    def walk(t: pa.DataType) -> bool:
        if isinstance(t, pa.StructType):
            return any(
                field_id_of(t.field(i)) is not None or walk(t.field(i).type)
                for i in range(t.num_fields)
            )
        if isinstance(t, (pa.ListType, pa.LargeListType)):
            return field_id_of(t.value_field) is not None or walk(t.value_type)
        if isinstance(t, pa.MapType):
            return any(
                field_id_of(c) is not None or walk(c.type) for c in (t.key_field, t.item_field)
            )
        return False

    return any(field_id_of(f) is not None or walk(f.type) for f in arrow_schema)


def check_file_schema(
    path: str, arrow_schema: pa.Schema, schema: Schema, mapping: NameMapping | None
) -> Schema:
    """The file's schema with table field ids; :class:`ValidationError` (naming the file and
    the column) unless the table can read the file as written."""
    try:
        if _has_any_id(arrow_schema):
            file_schema = schema_from_arrow(arrow_schema)
            if not _all_ids(arrow_schema):
                raise ValidationError("some columns have field ids and others do not")
        else:
            file_schema = schema_from_arrow(
                arrow_schema, mapping or create_mapping_from_schema(schema)
            )
    except FrazilError as e:
        raise ValidationError(f"{path}: {e}") from None
    table_ids = schema.field_ids
    extra = [i for i in file_schema.field_ids if i not in table_ids]
    if extra:
        names = sorted(file_schema.find_column_name(i) or str(i) for i in extra)
        raise ValidationError(
            f"{path}: columns {names} (field ids {sorted(extra)}) are not in the table schema"
        )
    file_ids = file_schema.field_ids
    for fid in sorted(table_ids):
        want = schema.find_field(fid)
        name = schema.find_column_name(fid)
        if fid not in file_ids:
            if want.required and not _under_optional_missing(schema, fid, file_ids):
                raise ValidationError(f"{path}: required column {name!r} is missing")
            continue
        got = file_schema.find_field(fid)
        if want.required and not got.required:
            raise ValidationError(
                f"{path}: column {name!r} is optional in the file, required in the table"
            )
        if not _compatible(got.field_type, want.field_type):
            raise ValidationError(
                f"{path}: column {name!r} has type {_show(got.field_type)} in the file, which "
                f"cannot be read as the table's {_show(want.field_type)}"
            )
    return file_schema


def _all_ids(arrow_schema: pa.Schema) -> bool:
    return all(field_id_of(f) is not None for f in walk_fields(list(arrow_schema)))


def _under_optional_missing(schema: Schema, fid: int, file_ids: set[int]) -> bool:
    # A required field of a struct that is itself missing (and optional) is not required.
    parent = schema.parent_id(fid)
    while parent is not None:
        if parent not in file_ids:
            return True
        parent = schema.parent_id(parent)
    return False


def _show(t: IcebergType) -> str:
    if isinstance(t, StructType):
        return "struct"
    if isinstance(t, ListType):
        return "list"
    if isinstance(t, MapType):
        return "map"
    return str(t)


def _compatible(file_type: IcebergType, table_type: IcebergType) -> bool:
    """Whether values of ``file_type`` read as ``table_type`` (equal, or a promotion the spec
    allows; children of nested types are checked by their own ids)."""
    for nested in (StructType, ListType, MapType):
        if isinstance(file_type, nested) or isinstance(table_type, nested):
            return isinstance(file_type, nested) and isinstance(table_type, nested)
    if file_type == table_type or isinstance(file_type, UnknownType):
        return True
    if isinstance(file_type, IntegerType) and isinstance(table_type, LongType):
        return True
    if isinstance(file_type, FloatType) and isinstance(table_type, DoubleType):
        return True
    if isinstance(file_type, DecimalType) and isinstance(table_type, DecimalType):
        return file_type.scale == table_type.scale and file_type.precision <= table_type.precision
    if isinstance(file_type, DateType) and isinstance(
        table_type, (TimestampType, TimestampNanoType)
    ):
        return True
    # pyarrow reads Parquet GEOMETRY / GEOGRAPHY columns as binary WKB (without a registered
    # geoarrow.wkb extension type), so a binary column may hold a table's geo values.
    if isinstance(file_type, BinaryType) and is_geo(table_type):
        return True
    # Parquet's UUID logical type reads as a plain fixed_size_binary(16) without extensions.
    return (
        isinstance(file_type, FixedType)
        and file_type.length == 16
        and isinstance(table_type, UUIDType)
    )


# ---------------------------------------------------------------------------------------------
# Partition values


def _canonical_array(value: Any, t: PrimitiveType) -> pa.Array:
    """A one-value Arrow array of the table type from a statistics' canonical value."""
    if isinstance(t, DecimalType):
        digits = tuple(int(c) for c in str(abs(value)))
        value = Decimal((1 if value < 0 else 0, digits, -t.scale))
        return pa.array([value], pa.decimal128(t.precision, t.scale))
    if isinstance(t, UUIDType):
        return pa.ExtensionArray.from_storage(pa.uuid(), pa.array([value], pa.binary(16)))
    arrow = type_to_arrow(t, large_types=False)
    if isinstance(t, DateType):
        return pa.array([value], pa.int32()).cast(arrow)
    if pa.types.is_time(arrow) or pa.types.is_timestamp(arrow):
        return pa.array([value], pa.int64()).cast(arrow)
    return pa.array([value], arrow)


def _partition_value(
    path: str,
    pf: PartitionField,
    stats: dict[int, ColumnStats],
    schema: Schema,
    arrow_type: pa.DataType,
) -> Any:
    if is_void(pf.transform):
        return None
    if not isinstance(pf.transform, Transform):
        raise ValidationError(
            f"{path}: partition field {pf.name!r} uses transform {pf.transform}, unknown here"
        )
    s = stats.get(pf.source_id)
    if s is None:
        # The column is not in the file: every row reads it as null.
        return None
    column = schema.find_column_name(pf.source_id)
    if not s.complete or s.null_count is None:
        raise ValidationError(
            f"{path}: cannot infer partition field {pf.name!r}: column {column!r} has no "
            "statistics in every row group"
        )
    if s.lower is None:
        if s.null_count == s.value_count and s.bounds_usable:
            return None
        raise ValidationError(
            f"{path}: cannot infer partition field {pf.name!r}: column {column!r} has no "
            "usable minimum and maximum"
        )
    if s.null_count > 0:
        raise ValidationError(
            f"{path}: file spans several partitions: column {column!r} has both nulls and "
            f"values, so partition field {pf.name!r} is not one value"
        )
    if not pf.transform.preserves_order and s.lower != s.upper:
        raise ValidationError(
            f"{path}: file spans several partitions: partition field {pf.name!r} "
            f"({pf.transform}) cannot be inferred from a range of {column!r} values"
        )
    lo, hi = (
        pf.transform.apply(_canonical_array(v, s.iceberg_type)).cast(arrow_type).to_pylist()[0]
        for v in (s.lower, s.upper)
    )
    if lo != hi:
        raise ValidationError(
            f"{path}: file spans several partitions: partition field {pf.name!r} "
            f"({pf.transform} of {column!r}) ranges from {lo!r} to {hi!r}"
        )
    return lo


# ---------------------------------------------------------------------------------------------
# Duplicates


def referenced_data_files(
    io: FileIO, metadata: TableMetadata, file_paths: Iterable[str]
) -> set[str]:
    """Those of ``file_paths`` that live data files of the current snapshot reference."""
    wanted = set(file_paths)
    snapshot = metadata.current_snapshot()
    if snapshot is None or not wanted:
        return set()
    columns = ["status", "data_file.file_path"]
    if snapshot.manifest_list is not None:
        manifests = read_manifest_list(
            io.read(metadata.resolve(snapshot.manifest_list)), location=metadata.paths_location
        )
        rows = [m for m in manifests.to_pylist() if m.get("content", 0) == 0]
        datas = io.read_many([metadata.resolve(m["manifest_path"]) for m in rows])
        tables = read_manifests(datas, rows, columns=columns, location=metadata.paths_location)
    else:  # v1 snapshots may list their manifests inline
        locations = [metadata.resolve(p) for p in snapshot.manifests or ()]
        tables = [
            read_manifest(d, columns=columns, location=metadata.paths_location)
            for d in io.read_many(locations)
        ]
    found: set[str] = set()
    for t in tables:
        statuses = t.column("status").to_pylist()
        files = t.column("data_file").combine_chunks().field("file_path").to_pylist()
        for status, p in zip(statuses, files, strict=True):
            if status != ManifestEntryStatus.DELETED:
                resolved = metadata.resolve(p)
                if resolved in wanted:
                    found.add(resolved)
    return found
