"""Scan tasks: :class:`FileScanTask` (one data file to read, its delete files and residual), its
JSON (the Java reference's ``ScanTaskParser`` form, the REST catalog's ``FileScanTask``), and
the thin views a planned scan hands out.

Since Iceberg 1.11 the JSON has lower-case ``content``/``file-format`` and partition tuples as
arrays (the REST catalog's form); :meth:`FileScanTask.from_json` also reads the 1.10 form
(upper-case enums, partition objects keyed by field id).

A planned scan (:mod:`frazil.table.scan.plan`) keeps its tasks in Arrow: one row per task in
the selected entries of each manifest. :class:`PlannedFileScanTask` and
:class:`PlannedDataFile` are views of such a row: nothing per task is built up front, and each
attribute is read from its column on access (the column is turned into a Python list once per
manifest, on its first use). They subclass :class:`FileScanTask` and
:class:`~frazil.manifest.content_file.DataFile` and behave like them: equal to the object with the
same
values, the same ``repr``, JSON, and pickled as the plain object (so that a task shipped to a
Spark executor carries its values, not the plan).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from frazil import values
from frazil.exceptions import InvalidArgumentError, ParseError, ValidationError
from frazil.expressions import AlwaysTrue, BooleanExpression, bind, from_json, to_json
from frazil.manifest.content_file import DataFile, DataFileContent
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.types import BinaryType, IntegerType, LongType, MapType

__all__ = [
    "FileScanTask",
    "PlannedDataFile",
    "PlannedFileScanTask",
    "content_file_from_json",
    "content_file_to_json",
]

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
# views of a planned scan's rows


class TaskColumns(Protocol):
    """What a view reads: the planned tasks of one manifest (``planning.ManifestTasks``)."""

    spec_id: int
    #: the columns built so far, by name (what :meth:`column` returns)
    _cache: dict[str, list[Any]]

    def column(self, name: str) -> list[Any]:
        """The ``data_file`` field (or ``manifest_entry`` column) ``name``, one value per row,
        in the Python form :class:`DataFile` holds it."""
        ...

    def extra(self, row: int) -> dict[str, Any]: ...

    def task_parts(
        self, row: int
    ) -> tuple[list[DataFile], BooleanExpression, Schema | None, PartitionSpec | None]:
        """A row's delete files, residual, schema and spec."""
        ...


_new = object.__new__
_DATA_FILE_FIELDS = tuple(f for f in DataFile.__dataclass_fields__ if f != "extra")


def _column_property(name: str) -> property:
    def get(self: PlannedDataFile) -> Any:
        # the common case (the column's values already built) in one frame
        try:
            return self._columns._cache[name][self._row]
        except KeyError:
            return self._columns.column(name)[self._row]

    get.__name__ = name
    return property(get, doc=f"``data_file.{name}``, read from the plan")


class PlannedDataFile(DataFile):
    """A planned task's data file: a view of one row of a plan (see the module docstring)."""

    __slots__ = ("_columns", "_row")
    _columns: TaskColumns
    _row: int
    # The fields are properties without setters, so this only sets the two slots (views are
    # built by the million: a plain slot store is the fastest way).
    __setattr__ = object.__setattr__

    def __new__(cls, *args: Any, **kwargs: Any) -> DataFile:  # type: ignore[misc]
        # Constructing through the class (``dataclasses.replace(task.file, ...)``) gives the
        # plain object with those values; views themselves are made by ``view``.
        return DataFile(*args, **kwargs)

    @classmethod
    def view(cls, columns: TaskColumns, row: int) -> PlannedDataFile:
        v = _new(cls)
        v._columns = columns
        v._row = row
        return v

    @property
    def spec_id(self) -> int:
        return self._columns.spec_id

    @property
    def extra(self) -> dict[str, Any]:
        return self._columns.extra(self._row)

    def to_data_file(self) -> DataFile:
        """The plain :class:`DataFile` this row describes (stats included as planned)."""
        f = DataFile(**{name: getattr(self, name) for name in _DATA_FILE_FIELDS})
        f.extra.update(self.extra)
        return f

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PlannedDataFile):
            other = other.to_data_file()
        if not isinstance(other, DataFile):
            return NotImplemented
        return self.to_data_file() == other

    def __hash__(self) -> int:
        return hash(self.to_data_file())

    def __repr__(self) -> str:
        return repr(self.to_data_file())

    def __reduce__(self) -> str | tuple[Any, ...]:
        return self.to_data_file().__reduce__()


for _name in _DATA_FILE_FIELDS:
    if _name != "spec_id":
        setattr(PlannedDataFile, _name, _column_property(_name))
del _name


class PlannedFileScanTask(FileScanTask):
    """A planned task: a view of one row of a plan (see the module docstring). Its ``file`` is
    a :class:`PlannedDataFile`; delete files, residual, schema and spec come from the plan."""

    __slots__ = ("_columns", "_file", "_row")
    _columns: TaskColumns
    _row: int
    _file: PlannedDataFile

    def __new__(cls, *args: Any, **kwargs: Any) -> FileScanTask:  # type: ignore[misc]
        # as PlannedDataFile.__new__: ``dataclasses.replace(task, start=...)`` gives a plain task
        return FileScanTask(*args, **kwargs)

    @classmethod
    def view(cls, columns: TaskColumns, row: int) -> PlannedFileScanTask:
        return next(cls.views(columns, range(row, row + 1)))

    @classmethod
    def views(cls, columns: TaskColumns, rows: Iterable[int]) -> Iterator[PlannedFileScanTask]:
        """A view per row of ``rows`` (the loop builds both objects inline: a plan of a
        million tasks makes two million of them)."""
        new = _new
        for i in rows:
            f = new(PlannedDataFile)
            f._columns = columns
            f._row = i
            v = new(cls)
            v._columns = columns
            v._row = i
            v._file = f
            yield v

    @property
    def file(self) -> DataFile:  # type: ignore[override]
        return self._file

    @property
    def delete_files(self) -> list[DataFile]:  # type: ignore[override]
        return self._columns.task_parts(self._row)[0]

    @property
    def residual(self) -> BooleanExpression:  # type: ignore[override]
        return self._columns.task_parts(self._row)[1]

    @property
    def schema(self) -> Schema | None:  # type: ignore[override]
        return self._columns.task_parts(self._row)[2]

    @property
    def spec(self) -> PartitionSpec | None:  # type: ignore[override]
        return self._columns.task_parts(self._row)[3]

    @property
    def start(self) -> int | None:  # type: ignore[override]
        return None

    @property
    def length(self) -> int | None:  # type: ignore[override]
        return None

    def to_file_scan_task(self) -> FileScanTask:
        """The plain :class:`FileScanTask` this row describes."""
        deletes, residual, schema, spec = self._columns.task_parts(self._row)
        return FileScanTask(self._file.to_data_file(), list(deletes), residual, schema, spec)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PlannedFileScanTask):
            other = other.to_file_scan_task()
        if not isinstance(other, FileScanTask):
            return NotImplemented
        return self.to_file_scan_task() == other

    __hash__ = None  # type: ignore[assignment]  # as FileScanTask's (a mutable dataclass)

    def __repr__(self) -> str:
        return repr(self.to_file_scan_task())

    def __reduce__(self) -> str | tuple[Any, ...]:
        return self.to_file_scan_task().__reduce__()
