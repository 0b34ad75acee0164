"""Content files (spec "Manifests": the ``data_file`` struct): data files and delete files as
records, and their conversion to and from the Arrow columns of a manifest.

One :class:`DataFile` per file, never per row. Bounds stay in the spec's binary single-value
form (Appendix D) keyed by field id; partition values are a tuple in the order of the spec's
fields, each in the Python form pyarrow gives for that field's Arrow type in a manifest's
``data_file.partition`` struct.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import _native
from frazil.arrow_schema import type_to_arrow
from frazil.exceptions import InvalidArgumentError

if TYPE_CHECKING:
    from frazil.partitioning import PartitionSpec
    from frazil.schema import Schema

__all__ = [
    "DataFile",
    "DataFileContent",
    "FileFormat",
    "ManifestEntryStatus",
    "data_file_arrow_type",
    "data_files_from_arrow",
    "data_files_from_entries",
    "data_files_to_arrow",
    "deletion_vector_mask",
    "is_deletion_vector",
    "is_deletion_vector_of",
    "manifest_entries",
    "partition_arrow_type",
]


class DataFileContent:
    """Values of ``data_file.content``."""

    DATA = 0
    POSITION_DELETES = 1
    EQUALITY_DELETES = 2


class ManifestEntryStatus:
    """Values of ``manifest_entry.status``."""

    EXISTING = 0
    ADDED = 1
    DELETED = 2


class FileFormat:
    """Values of ``data_file.file_format`` (written upper case, read case-insensitively)."""

    AVRO = "AVRO"
    ORC = "ORC"
    PARQUET = "PARQUET"
    PUFFIN = "PUFFIN"


# The one rule for "is this delete file a deletion vector" (spec "Deletion Vectors"): position
# deletes stored in a Puffin file. Three forms: a DataFile, its two fields, and Arrow columns.


def is_deletion_vector_of(content: int, file_format: str | None) -> bool:
    """Whether a file of this ``content`` and ``file_format`` is a deletion vector."""
    return (
        content == DataFileContent.POSITION_DELETES
        and (file_format or "").upper() == FileFormat.PUFFIN
    )


def is_deletion_vector(f: DataFile) -> bool:
    """Whether a delete file is a deletion vector (position deletes in Puffin)."""
    return is_deletion_vector_of(f.content, f.file_format)


def deletion_vector_mask(content: Any, file_format: Any) -> Any:
    """Per row of ``data_file`` columns ``content`` and ``file_format``: whether the file is a
    deletion vector (a pyarrow boolean array)."""
    return pc.and_(
        pc.equal(content, DataFileContent.POSITION_DELETES),
        pc.equal(pc.utf8_upper(file_format), FileFormat.PUFFIN),
    )


@dataclass(frozen=True)
class DataFile:
    """A data or delete file as a manifest entry's ``data_file`` describes it.

    ``spec_id`` is the partition spec the ``partition`` tuple belongs to (not stored in the
    struct itself: the manifest's spec id carries it).
    """

    file_path: str
    file_format: str
    partition: tuple[Any, ...]
    record_count: int
    file_size_in_bytes: int
    content: int = DataFileContent.DATA
    spec_id: int = 0
    column_sizes: dict[int, int] | None = None
    value_counts: dict[int, int] | None = None
    null_value_counts: dict[int, int] | None = None
    nan_value_counts: dict[int, int] | None = None
    lower_bounds: dict[int, bytes] | None = None
    upper_bounds: dict[int, bytes] | None = None
    # An encrypted table's data key: never in a repr (logs, error messages).
    key_metadata: bytes | None = field(default=None, repr=False)
    split_offsets: tuple[int, ...] | None = None
    equality_ids: tuple[int, ...] | None = None
    sort_order_id: int | None = None
    # v3
    first_row_id: int | None = None
    referenced_data_file: str | None = None
    content_offset: int | None = None
    content_size_in_bytes: int | None = None
    # Not part of the struct: where a scan found the entry (sequence numbers after inheritance).
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)


# ---------------------------------------------------------------------------------------------
# Arrow: the ``data_file`` struct and ``manifest_entry`` rows, shaped as frazil.manifest reads
# and writes them (field ids as ``PARQUET:field_id`` metadata, maps keyed by field id).


def _fid(field_id: int) -> dict[bytes, bytes]:
    return {b"PARQUET:field_id": str(field_id).encode()}


def _f(name: str, t: pa.DataType, field_id: int, nullable: bool = True) -> pa.Field:
    return pa.field(name, t, nullable=nullable, metadata=_fid(field_id))


# The manifest_entry and data_file structs are defined once, by the manifest crate
# (frazil_manifest::manifest): names, types, field ids, which entry fields are required.
_ENTRY: pa.StructType = pa.array(_native.manifest_entry_type()).type
# The data_file fields a DataFile carries, in the spec's order.
_DATA_FILE_FIELDS = tuple(
    f
    for f in _ENTRY.field("data_file").type
    if f.name in {d.name for d in dataclasses.fields(DataFile)}
)
_MAPS = frozenset(f.name for f in _DATA_FILE_FIELDS if pa.types.is_map(f.type))
_LISTS = frozenset(f.name for f in _DATA_FILE_FIELDS if pa.types.is_list(f.type))
# The fields a DataFile cannot do without (its constructor's required arguments), required in
# every format version; a projected read may lack the others.
_REQUIRED = tuple(
    f.name
    for f in dataclasses.fields(DataFile)
    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
)


def partition_arrow_type(spec: PartitionSpec, schema: Schema) -> pa.StructType:
    """The Arrow type of a spec's partition tuples: one field per partition field, named as in
    the spec, typed by its transform's result type (:func:`frazil.arrow_schema.type_to_arrow`,
    small offsets as the manifest reader uses), ``PARQUET:field_id`` = the partition field id."""
    return pa.struct(
        [
            _f(n.name, type_to_arrow(n.field_type, large_types=False), n.field_id)
            for n in spec.partition_type(schema).fields
        ]
    )


def data_file_arrow_type(partition_type: pa.StructType | None) -> pa.StructType:
    """The Arrow type of the ``data_file`` struct with this partition type (``None``: without
    the ``partition`` field)."""
    return pa.struct(
        [
            f.with_type(partition_type if f.name == "partition" else f.type).with_nullable(
                f.name not in _REQUIRED
            )
            for f in _DATA_FILE_FIELDS
            if partition_type is not None or f.name != "partition"
        ]
    )


def _check_version(files: Sequence[DataFile], format_version: int) -> None:
    if format_version not in (1, 2, 3, 4):
        raise InvalidArgumentError(f"format version {format_version} manifests are not written")
    for f in files:
        if format_version == 1 and f.content != DataFileContent.DATA:
            raise InvalidArgumentError(
                f"{f.file_path}: a v1 table has no delete files (content {f.content})"
            )


def _partition_array(files: Sequence[DataFile], partition_type: pa.StructType) -> pa.StructArray:
    n = partition_type.num_fields
    for f in files:
        if len(f.partition) != n:
            raise InvalidArgumentError(
                f"{f.file_path}: partition {f.partition!r} has {len(f.partition)} values, "
                f"the partition type has {n} fields"
            )
    if n == 0:
        return pa.array([{}] * len(files), type=partition_type)
    children = []
    for i in range(n):
        field = partition_type.field(i)
        try:
            children.append(pa.array([f.partition[i] for f in files], type=field.type))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as e:
            raise InvalidArgumentError(
                f"partition field {field.name!r}: values are not {field.type}: {e}"
            ) from None
    return pa.StructArray.from_arrays(children, fields=list(partition_type))


def data_files_to_arrow(
    files: Sequence[DataFile], partition_type: pa.StructType | None, format_version: int
) -> pa.StructArray:
    """The ``data_file`` struct column for ``files``, as :func:`frazil.manifest.write_manifest`
    takes it inside ``manifest_entry`` rows (see :func:`manifest_entries`).

    ``partition_type`` is the spec's :func:`partition_arrow_type` (or the partition struct type
    of a manifest read back); each file's ``partition`` tuple holds its values in field order.
    ``None`` leaves the partition out, for readers of the other fields (files of several specs
    in one column, e.g. for :mod:`frazil.expressions.metrics_evaluator`).
    """
    _check_version(files, format_version)
    arrays: list[pa.Array] = []
    fields: list[pa.Field] = []
    for df_field in data_file_arrow_type(partition_type):
        name = df_field.name
        if name == "partition":
            assert partition_type is not None
            arr: pa.Array = _partition_array(files, partition_type)
        else:
            values = [getattr(f, name) for f in files]
            if name in _MAPS:
                values = [None if v is None else list(v.items()) for v in values]
            elif name in _LISTS:
                values = [None if v is None else list(v) for v in values]
            try:
                arr = pa.array(values, type=df_field.type)
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as e:
                raise InvalidArgumentError(f"data_file.{name}: {e}") from None
        arrays.append(arr)
        fields.append(df_field)
    return pa.StructArray.from_arrays(arrays, fields=fields)


def _column(entries: pa.StructArray | pa.Table, name: str) -> pa.Array | pa.ChunkedArray | None:
    if isinstance(entries, pa.Table):
        return entries.column(name) if name in entries.column_names else None
    t = entries.type
    return entries.field(name) if t.get_field_index(name) >= 0 else None


def _as_struct(array: Any) -> pa.StructArray:
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if not isinstance(array, pa.StructArray):
        raise InvalidArgumentError(f"expected a data_file struct array, got {type(array).__name__}")
    return array


def data_files_from_arrow(data_file: Any, spec_id: int) -> list[DataFile]:
    """One :class:`DataFile` per row of a ``data_file`` struct column (a ``StructArray`` or a
    ``ChunkedArray`` of them, e.g. ``read_manifest(...).column("data_file")``).

    Columns a projected read left out are ``None`` (``content`` reads as data); ``spec_id`` is
    the spec of the manifest the rows came from.
    """
    arr = _as_struct(data_file)
    n = len(arr)
    columns: dict[str, list[Any]] = {}
    for name in (f.name for f in _DATA_FILE_FIELDS):
        col = _column(arr, name)
        if col is None:
            continue
        if name == "partition":
            pcol = _as_struct(col)
            if pcol.type.num_fields == 0:
                columns[name] = [()] * n
            else:
                parts = [pcol.field(i).to_pylist() for i in range(pcol.type.num_fields)]
                columns[name] = list(zip(*parts, strict=True))
        else:
            values = col.to_pylist()
            if name in _MAPS:
                values = [None if v is None else dict(v) for v in values]
            elif name in _LISTS:
                values = [None if v is None else tuple(v) for v in values]
            columns[name] = values
    if "file_path" not in columns:
        raise InvalidArgumentError("a data_file column without file_path")
    if "content" not in columns:
        columns["content"] = [DataFileContent.DATA] * n
    names = list(columns)
    rows = zip(*(columns[k] for k in names), strict=True)
    defaults = {k: None for k in _REQUIRED}
    return [
        DataFile(**{**defaults, **dict(zip(names, row, strict=True))}, spec_id=spec_id)
        for row in rows
    ]


def data_files_from_entries(entries: pa.Table, spec_id: int) -> list[DataFile]:
    """The data files of ``manifest_entry`` rows (``read_manifest``'s table), each with its
    entry's ``status``, ``snapshot_id``, ``sequence_number`` and ``file_sequence_number`` in
    :attr:`DataFile.extra`."""
    files = data_files_from_arrow(entries.column("data_file"), spec_id)
    for key in ("status", "snapshot_id", "sequence_number", "file_sequence_number"):
        if key in entries.column_names:
            for f, v in zip(files, entries.column(key).to_pylist(), strict=True):
                f.extra[key] = v
    return files


def _per_file(value: Any, n: int, name: str, t: pa.DataType) -> pa.Array:
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise InvalidArgumentError(f"{name}: {len(value)} values for {n} files")
        values = list(value)
    else:
        values = [value] * n
    return pa.array(values, type=t)


def manifest_entries(
    files: Sequence[DataFile],
    status: int | Sequence[int],
    snapshot_id: int | Sequence[int | None] | None,
    sequence_number: int | Sequence[int | None] | None,
    file_sequence_number: int | Sequence[int | None] | None,
    partition_type: pa.StructType,
    format_version: int,
) -> pa.Table:
    """``manifest_entry`` rows for ``files``, ready for :func:`frazil.manifest.write_manifest`.

    Each of ``status`` (:class:`ManifestEntryStatus`), ``snapshot_id``, ``sequence_number`` and
    ``file_sequence_number`` is one value for every file or a sequence with one per file;
    ``None`` sequence numbers (and, from v2, snapshot ids) are inherited by readers from the
    manifest list entry, as an ADDED entry of a new snapshot should leave them.
    """
    n = len(files)
    given = {
        "status": status,
        "snapshot_id": snapshot_id,
        "sequence_number": sequence_number,
        "file_sequence_number": file_sequence_number,
    }
    columns = [(f, _per_file(given[f.name], n, f.name, f.type)) for f in _ENTRY if f.name in given]
    data_file = data_files_to_arrow(files, partition_type, format_version)
    columns.append((_ENTRY.field("data_file").with_type(data_file.type), data_file))
    return pa.Table.from_arrays([a for _, a in columns], schema=pa.schema([f for f, _ in columns]))
