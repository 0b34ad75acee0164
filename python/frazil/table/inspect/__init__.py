"""Metadata tables (``table.inspect``): a table's snapshots, refs, manifests, files, entries,
partitions and position deletes as ``pyarrow.Table`` s, with PyIceberg's method names, column
names and Arrow types, and the Java reference's values (``SELECT * FROM t.files`` in Spark).

Everything per file or per manifest entry is columnar: manifests are decoded natively
(:func:`frazil.manifest.read_manifests`, several at a time on threads with the GIL released),
their ``data_file`` columns are cast and renamed into the result, and ``readable_metrics`` is
computed natively (``frazil._native.inspect_readable_metrics``, twin ``frazil-scan``
``inspect.rs``). Only metadata-sized tables (snapshots, refs, history, the metadata log, one
row per manifest) are built from Python lists.

Where PyIceberg and Java differ, frazil follows Java and keeps PyIceberg's shape:

- ``readable_metrics`` has one struct per primitive column, nested ones under their dotted
  names (``location.lat``), as Java; PyIceberg lists only the top-level columns (a struct
  column gets a struct of always-null bounds). Order: the schema's, as PyIceberg's.
- ``files``/``entries`` of a v3 table add the v3 ``data_file`` fields Java shows
  (``first_row_id``, ``referenced_data_file``, ``content_offset``,
  ``content_size_in_bytes``) after ``sort_order_id``; v1/v2 tables have PyIceberg's columns.
- ``manifests`` and ``files``-like tables accept a ``snapshot_id`` (Java's time travel);
  ``snapshots``, ``history``, ``refs`` and ``metadata_log_entries`` describe the whole table.

``position_deletes`` (Java's ``PositionDeletesTable``; PyIceberg has none) reads the position
delete files and deletion vectors of a snapshot: ``file_path``, ``pos``, ``row``,
``partition``, ``spec_id``, ``delete_file_path``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import _native
from frazil.arrow_schema import type_to_arrow
from frazil.exceptions import InvalidArgumentError
from frazil.expressions import AlwaysTrue, BooleanExpression
from frazil.metadata import Snapshot, TableMetadata
from frazil.schema import Schema
from frazil.table.inspect.aggregates import partitions_table, position_deletes_table
from frazil.table.inspect.entries import (
    manifest_entries,
    manifest_list,
    partition_column,
    partition_struct,
)
from frazil.table.scan import snapshot_as_of_timestamp
from frazil.transforms import human_string
from frazil.types import (
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
    UnknownType,
)
from frazil.values import from_bytes

if TYPE_CHECKING:
    from frazil.table import Table

__all__ = ["InspectTable"]

_DATA, _POSITION_DELETES, _EQUALITY_DELETES = 0, 1, 2
_DELETED = 2
_I64_MAP = pa.map_(pa.int32(), pa.int64())
_BIN_MAP = pa.map_(pa.int32(), pa.binary())
_METRIC_COUNTS = ("column_size", "value_count", "null_value_count", "nan_value_count")


def _f(name: str, t: pa.DataType, nullable: bool = True) -> pa.Field:
    return pa.field(name, t, nullable=nullable)


_SUMMARY = pa.struct(
    [
        _f("contains_null", pa.bool_(), False),
        _f("contains_nan", pa.bool_()),
        _f("lower_bound", pa.string()),
        _f("upper_bound", pa.string()),
    ]
)
MANIFESTS_SCHEMA = pa.schema(
    [
        _f("content", pa.int8(), False),
        _f("path", pa.string(), False),
        _f("length", pa.int64(), False),
        _f("partition_spec_id", pa.int32(), False),
        _f("added_snapshot_id", pa.int64(), False),
        _f("added_data_files_count", pa.int32(), False),
        _f("existing_data_files_count", pa.int32(), False),
        _f("deleted_data_files_count", pa.int32(), False),
        _f("added_delete_files_count", pa.int32(), False),
        _f("existing_delete_files_count", pa.int32(), False),
        _f("deleted_delete_files_count", pa.int32(), False),
        _f("partition_summaries", pa.list_(_SUMMARY), False),
    ]
)
ALL_MANIFESTS_SCHEMA = MANIFESTS_SCHEMA.append(
    _f("reference_snapshot_id", pa.int64(), False)
).append(_f("key_metadata", pa.binary()))

# The data_file columns both files and entries show, with their Arrow types.
_FILE_COLUMNS: tuple[tuple[str, pa.DataType, bool], ...] = (
    ("record_count", pa.int64(), False),
    ("file_size_in_bytes", pa.int64(), False),
    ("column_sizes", _I64_MAP, True),
    ("value_counts", _I64_MAP, True),
    ("null_value_counts", _I64_MAP, True),
    ("nan_value_counts", _I64_MAP, True),
    ("lower_bounds", _BIN_MAP, True),
    ("upper_bounds", _BIN_MAP, True),
    ("key_metadata", pa.binary(), True),
    ("split_offsets", pa.list_(pa.int64()), True),
    ("equality_ids", pa.list_(pa.int32()), True),
    ("sort_order_id", pa.int32(), True),
)
_V3_COLUMNS: tuple[tuple[str, pa.DataType, bool], ...] = (
    ("first_row_id", pa.int64(), True),
    ("referenced_data_file", pa.string(), True),
    ("content_offset", pa.int64(), True),
    ("content_size_in_bytes", pa.int64(), True),
)


def _ts_ms(values: Sequence[int | None]) -> pa.Array:
    return pa.array(values, pa.int64()).cast(pa.timestamp("ms"))


def _current_ancestors(metadata: TableMetadata) -> set[int]:
    out: set[int] = set()
    s = metadata.current_snapshot()
    while s is not None and s.snapshot_id not in out:
        out.add(s.snapshot_id)
        s = None if s.parent_snapshot_id is None else metadata.snapshot_by_id(s.parent_snapshot_id)
    return out


def _metric_columns(schema: Schema) -> list[tuple[str, int, PrimitiveType]]:
    """(dotted name, id, type) of the primitive columns, depth first in schema order; inside
    structs only (list elements and map entries have no single column's metrics)."""
    out: list[tuple[str, int, PrimitiveType]] = []

    def walk(fields: Sequence[NestedField], prefix: str) -> None:
        for f in fields:
            t = f.field_type
            if isinstance(t, StructType):
                walk(t.fields, f"{prefix}{f.name}.")
            elif isinstance(t, (ListType, MapType)):
                continue
            elif isinstance(t, PrimitiveType):
                out.append((f"{prefix}{f.name}", f.field_id, t))

    walk(schema.fields, "")
    return out


def _readable_metrics_type(columns: Sequence[tuple[str, int, PrimitiveType]]) -> pa.StructType:
    fields = []
    for name, _, t in columns:
        bound = type_to_arrow(t)
        fields.append(
            _f(
                name,
                pa.struct(
                    [_f(c, pa.int64()) for c in _METRIC_COUNTS]
                    + [_f("lower_bound", bound), _f("upper_bound", bound)]
                ),
                False,
            )
        )
    return pa.struct(fields)


class InspectTable:
    """The metadata tables of one table (``Table.inspect``), each a ``pyarrow.Table``."""

    def __init__(self, tbl: Table) -> None:
        self.tbl = tbl

    # ---- lookups

    @property
    def _metadata(self) -> TableMetadata:
        return self.tbl.metadata

    def _get_snapshot(self, snapshot_id: int | None = None) -> Snapshot:
        m = self._metadata
        if snapshot_id is not None:
            s = m.snapshot_by_id(snapshot_id)
            if s is None:
                raise InvalidArgumentError(f"Cannot find snapshot with ID {snapshot_id}")
            return s
        s = m.current_snapshot()
        if s is None:
            raise InvalidArgumentError("Cannot get a snapshot as the table does not have any.")
        return s

    def _snapshot_or_none(self, snapshot_id: int | None) -> Snapshot | None:
        if snapshot_id is None and self._metadata.current_snapshot() is None:
            return None
        return self._get_snapshot(snapshot_id)

    # ---- metadata-sized tables

    def snapshots(self) -> pa.Table:
        """One row per snapshot: ``committed_at``, ``snapshot_id``, ``parent_id``,
        ``operation``, ``manifest_list``, ``summary`` (without ``operation``)."""
        snaps = self._metadata.snapshots
        schema = pa.schema(
            [
                _f("committed_at", pa.timestamp("ms"), False),
                _f("snapshot_id", pa.int64(), False),
                _f("parent_id", pa.int64()),
                _f("operation", pa.string()),
                _f("manifest_list", pa.string(), False),
                _f("summary", pa.map_(pa.string(), pa.string())),
            ]
        )
        summaries = [
            None
            if s.summary is None
            else [(k, v) for k, v in s.summary.items() if k != "operation"]
            for s in snaps
        ]
        return pa.Table.from_arrays(
            [
                _ts_ms([s.timestamp_ms for s in snaps]),
                pa.array([s.snapshot_id for s in snaps], pa.int64()),
                pa.array([s.parent_snapshot_id for s in snaps], pa.int64()),
                pa.array([s.operation for s in snaps], pa.string()),
                pa.array(
                    [
                        self._metadata.resolve(s.manifest_list) if s.manifest_list else ""
                        for s in snaps
                    ],
                    pa.string(),
                ),
                pa.array(summaries, pa.map_(pa.string(), pa.string())),
            ],
            schema=schema,
        )

    def history(self) -> pa.Table:
        """The snapshot log: ``made_current_at``, ``snapshot_id``, ``parent_id``,
        ``is_current_ancestor``."""
        m = self._metadata
        ancestors = _current_ancestors(m)
        log = m.snapshot_log
        parents = []
        for e in log:
            s = m.snapshot_by_id(e.snapshot_id)
            parents.append(None if s is None else s.parent_snapshot_id)
        schema = pa.schema(
            [
                _f("made_current_at", pa.timestamp("ms"), False),
                _f("snapshot_id", pa.int64(), False),
                _f("parent_id", pa.int64()),
                _f("is_current_ancestor", pa.bool_(), False),
            ]
        )
        return pa.Table.from_arrays(
            [
                _ts_ms([e.timestamp_ms for e in log]),
                pa.array([e.snapshot_id for e in log], pa.int64()),
                pa.array(parents, pa.int64()),
                pa.array([e.snapshot_id in ancestors for e in log], pa.bool_()),
            ],
            schema=schema,
        )

    def refs(self) -> pa.Table:
        """Branches and tags: ``name``, ``type`` (``BRANCH``/``TAG``), ``snapshot_id``,
        ``max_reference_age_in_ms``, ``min_snapshots_to_keep``, ``max_snapshot_age_in_ms``."""
        refs = list(self._metadata.refs.items())
        schema = pa.schema(
            [
                _f("name", pa.string(), False),
                _f("type", pa.dictionary(pa.int32(), pa.string()), False),
                _f("snapshot_id", pa.int64(), False),
                _f("max_reference_age_in_ms", pa.int64()),
                _f("min_snapshots_to_keep", pa.int32()),
                _f("max_snapshot_age_in_ms", pa.int64()),
            ]
        )
        return pa.Table.from_arrays(
            [
                pa.array([n for n, _ in refs], pa.string()),
                pa.array([r.snapshot_ref_type.upper() for _, r in refs], pa.string())
                .dictionary_encode()
                .cast(pa.dictionary(pa.int32(), pa.string())),
                pa.array([r.snapshot_id for _, r in refs], pa.int64()),
                pa.array([r.max_ref_age_ms for _, r in refs], pa.int64()),
                pa.array([r.min_snapshots_to_keep for _, r in refs], pa.int32()),
                pa.array([r.max_snapshot_age_ms for _, r in refs], pa.int64()),
            ],
            schema=schema,
        )

    def metadata_log_entries(self) -> pa.Table:
        """The metadata log plus the current metadata file: ``timestamp``, ``file``, and the
        snapshot current on ``main`` then (``latest_snapshot_id``, ``latest_schema_id``,
        ``latest_sequence_number``)."""
        m = self._metadata
        log = [(e.timestamp_ms, m.resolve(e.metadata_file)) for e in m.metadata_log]
        log.append((m.last_updated_ms, self.tbl.metadata_location or ""))
        latest = [snapshot_as_of_timestamp(m, ts, True) for ts, _ in log]
        schema = pa.schema(
            [
                _f("timestamp", pa.timestamp("ms"), False),
                _f("file", pa.string(), False),
                _f("latest_snapshot_id", pa.int64()),
                _f("latest_schema_id", pa.int32()),
                _f("latest_sequence_number", pa.int64()),
            ]
        )
        return pa.Table.from_arrays(
            [
                _ts_ms([ts for ts, _ in log]),
                pa.array([f for _, f in log], pa.string()),
                pa.array([None if s is None else s.snapshot_id for s in latest], pa.int64()),
                pa.array([None if s is None else s.schema_id for s in latest], pa.int32()),
                pa.array([None if s is None else s.sequence_number for s in latest], pa.int64()),
            ],
            schema=schema,
        )

    # ---- manifests

    def _summaries(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        m = self._metadata
        spec = m.specs().get(row["partition_spec_id"])
        parts = row.get("partitions") or []
        if spec is None or not parts:
            return []
        ptype = partition_struct(m, [spec.spec_id])
        types = {f.field_id: f.field_type for f in ptype.fields}
        out = []
        for f, s in zip(spec.fields, parts, strict=False):
            t = types[f.field_id]
            bounds: list[str | None] = []
            for b in (s["lower_bound"], s["upper_bound"]):
                if b is None or isinstance(t, UnknownType):
                    bounds.append(None)
                else:
                    bounds.append(human_string(str(f.transform), t, from_bytes(b, t)))
            out.append(
                {
                    "contains_null": s["contains_null"],
                    "contains_nan": s["contains_nan"],
                    "lower_bound": bounds[0],
                    "upper_bound": bounds[1],
                }
            )
        return out

    def _manifest_rows(self, snapshot: Snapshot, all_manifests: bool) -> list[dict[str, Any]]:
        out = []
        for r in manifest_list(self.tbl.io, self._metadata, snapshot).to_pylist():
            deletes = bool(r.get("content"))
            counts = {k: r.get(f"{k}_files_count") or 0 for k in ("added", "existing", "deleted")}
            row = {
                "content": r.get("content") or 0,
                "path": r["manifest_path"],
                "length": r["manifest_length"],
                "partition_spec_id": r["partition_spec_id"],
                "added_snapshot_id": r["added_snapshot_id"],
                **{f"{k}_data_files_count": 0 if deletes else n for k, n in counts.items()},
                **{f"{k}_delete_files_count": n if deletes else 0 for k, n in counts.items()},
                "partition_summaries": self._summaries(r),
            }
            if all_manifests:
                row["reference_snapshot_id"] = snapshot.snapshot_id
                row["key_metadata"] = r.get("key_metadata")
            out.append(row)
        return out

    def manifests(self, snapshot_id: int | None = None) -> pa.Table:
        """The manifests of a snapshot (default: the current one), one row each."""
        snapshot = self._snapshot_or_none(snapshot_id)
        rows = [] if snapshot is None else self._manifest_rows(snapshot, False)
        return pa.Table.from_pylist(rows, schema=MANIFESTS_SCHEMA)

    def all_manifests(self) -> pa.Table:
        """The manifests of every snapshot, with ``reference_snapshot_id`` (a manifest shared
        by several snapshots appears once per snapshot)."""
        snaps = list(self._metadata.snapshots)
        if not snaps:
            return ALL_MANIFESTS_SCHEMA.empty_table()
        with ThreadPoolExecutor(thread_name_prefix="frazil-inspect") as ex:
            per = list(ex.map(lambda s: self._manifest_rows(s, True), snaps))
        return pa.Table.from_pylist(list(itertools.chain(*per)), schema=ALL_MANIFESTS_SCHEMA)

    # ---- files and entries

    def _file_fields(self) -> list[tuple[str, pa.DataType, bool]]:
        cols = list(_FILE_COLUMNS)
        if self._metadata.format_version >= 3:
            cols.extend(_V3_COLUMNS)
        return cols

    def _files_schema(self) -> pa.Schema:
        metrics = _metric_columns(self._metadata.schema())
        part = type_to_arrow(partition_struct(self._metadata))
        return pa.schema(
            [
                _f("content", pa.int8(), False),
                _f("file_path", pa.string(), False),
                _f("file_format", pa.dictionary(pa.int32(), pa.string()), False),
                _f("spec_id", pa.int32(), False),
                _f("partition", part, False),
                *(_f(n, t, nullable) for n, t, nullable in self._file_fields()),
                _f("readable_metrics", _readable_metrics_type(metrics)),
            ]
        )

    def _entries_schema(self) -> pa.Schema:
        metrics = _metric_columns(self._metadata.schema())
        part = type_to_arrow(partition_struct(self._metadata))
        data_file = pa.struct(
            [
                _f("content", pa.int8(), False),
                _f("file_path", pa.string(), False),
                _f("file_format", pa.string(), False),
                _f("partition", part, False),
                *(_f(n, t, nullable) for n, t, nullable in self._file_fields()),
            ]
        )
        return pa.schema(
            [
                _f("status", pa.int8(), False),
                _f("snapshot_id", pa.int64(), False),
                _f("sequence_number", pa.int64(), False),
                _f("file_sequence_number", pa.int64(), False),
                _f("data_file", data_file, False),
                _f("readable_metrics", _readable_metrics_type(metrics)),
            ]
        )

    def _readable_metrics(self, data_file: pa.StructArray, target: pa.StructType) -> pa.Array:
        columns = [
            (name, fid, t.json_text()) for name, fid, t in _metric_columns(self._metadata.schema())
        ]
        if not columns:
            return pa.array([{}] * len(data_file), pa.struct([]))
        native = pa.array(_native.inspect_readable_metrics(data_file, columns))
        return native.cast(target)

    def _file_arrays(
        self, data_file: pa.StructArray, schema_fields: Sequence[pa.Field]
    ) -> dict[str, pa.Array]:
        """The ``data_file`` columns named in ``schema_fields``, cast to their types."""
        out: dict[str, pa.Array] = {}
        names = set(data_file.type.names) if data_file.type.num_fields else set()
        for f in schema_fields:
            if f.name == "partition":
                out[f.name] = partition_column(data_file, f.type)
            elif f.name == "readable_metrics":
                out[f.name] = self._readable_metrics(data_file, f.type)
            elif f.name in names:
                col = data_file.field(f.name)
                if pa.types.is_dictionary(f.type):
                    col = col.cast(pa.string()).dictionary_encode().cast(f.type)
                out[f.name] = col.cast(f.type)
            else:
                out[f.name] = pa.nulls(len(data_file), f.type)
        return out

    def _files_of(
        self,
        manifests: pa.Table,
        content: Callable[[pa.Array], pa.Array] | None,
    ) -> pa.Table:
        schema = self._files_schema()
        tables = []
        for row, entries in manifest_entries(self.tbl.io, self._metadata, manifests):
            status = entries.column("status")
            data_file = entries.column("data_file").combine_chunks()
            keep = pc.not_equal(status, _DELETED)
            if content is not None:
                keep = pc.and_(keep, content(data_file.field("content")))
            data_file = data_file.filter(keep.combine_chunks())
            arrays = self._file_arrays(data_file, schema)
            arrays["spec_id"] = pa.array([row["partition_spec_id"]] * len(data_file), pa.int32())
            tables.append(pa.Table.from_arrays([arrays[f.name] for f in schema], schema=schema))
        if not tables:
            return schema.empty_table()
        return pa.concat_tables(tables)

    def _files(
        self, snapshot_id: int | None, content: Callable[[pa.Array], pa.Array] | None = None
    ) -> pa.Table:
        snapshot = self._snapshot_or_none(snapshot_id)
        if snapshot is None:
            return self._files_schema().empty_table()
        return self._files_of(manifest_list(self.tbl.io, self._metadata, snapshot), content)

    def files(self, snapshot_id: int | None = None) -> pa.Table:
        """The live data and delete files of a snapshot (default: the current one)."""
        return self._files(snapshot_id)

    def data_files(self, snapshot_id: int | None = None) -> pa.Table:
        """The live data files of a snapshot."""
        return self._files(snapshot_id, _is_data)

    def delete_files(self, snapshot_id: int | None = None) -> pa.Table:
        """The live position and equality delete files (and deletion vectors) of a snapshot."""
        return self._files(snapshot_id, _is_delete)

    def _all_manifest_files(self) -> pa.Table:
        """Every manifest of every snapshot, once each (by path)."""
        lists = [manifest_list(self.tbl.io, self._metadata, s) for s in self._metadata.snapshots]
        if not lists:
            return pa.table({})
        allm = pa.concat_tables([t.cast(lists[0].schema) for t in lists])
        paths = allm.column("manifest_path").to_pylist()
        first: dict[str, int] = {}
        for i, p in enumerate(paths):
            first.setdefault(p, i)
        return allm.take(sorted(first.values()))

    def _all_files(self, content: Callable[[pa.Array], pa.Array] | None = None) -> pa.Table:
        manifests = self._all_manifest_files()
        if manifests.num_rows == 0:
            return self._files_schema().empty_table()
        return self._files_of(manifests, content)

    def all_files(self) -> pa.Table:
        """The live files of every manifest of every snapshot (a file in several manifests
        appears once per manifest, as in Java and PyIceberg)."""
        return self._all_files()

    def all_data_files(self) -> pa.Table:
        return self._all_files(_is_data)

    def all_delete_files(self) -> pa.Table:
        return self._all_files(_is_delete)

    def entries(self, snapshot_id: int | None = None) -> pa.Table:
        """Every manifest entry of a snapshot (deleted ones included), inheritance applied."""
        schema = self._entries_schema()
        snapshot = self._snapshot_or_none(snapshot_id)
        if snapshot is None:
            return schema.empty_table()
        data_file_type: pa.StructType = schema.field("data_file").type
        tables = []
        for _, entries in manifest_entries(
            self.tbl.io, self._metadata, manifest_list(self.tbl.io, self._metadata, snapshot)
        ):
            data_file = entries.column("data_file").combine_chunks()
            arrays = self._file_arrays(data_file, list(data_file_type))
            df = pa.StructArray.from_arrays(
                [arrays[f.name] for f in data_file_type], fields=list(data_file_type)
            )
            cols = [
                entries.column(n).cast(schema.field(n).type)
                for n in ("status", "snapshot_id", "sequence_number", "file_sequence_number")
            ]
            rm = self._readable_metrics(data_file, schema.field("readable_metrics").type)
            tables.append(pa.Table.from_arrays([*cols, df, rm], schema=schema))
        if not tables:
            return schema.empty_table()
        return pa.concat_tables(tables)

    # ---- partitions and position deletes

    def partitions(
        self,
        snapshot_id: int | None = None,
        row_filter: str | BooleanExpression | None = None,
        case_sensitive: bool = True,
    ) -> pa.Table:
        """Per partition of a snapshot's live files: ``partition``, ``spec_id`` (partitioned
        tables only), ``record_count``, ``file_count``, ``total_data_file_size_in_bytes``,
        ``position_delete_record_count``, ``position_delete_file_count``,
        ``equality_delete_record_count``, ``equality_delete_file_count``,
        ``last_updated_at``, ``last_updated_snapshot_id``."""
        snapshot = self._get_snapshot(snapshot_id)
        return partitions_table(
            self.tbl,
            snapshot,
            AlwaysTrue() if row_filter is None else row_filter,
            case_sensitive,
        )

    def position_deletes(self, snapshot_id: int | None = None) -> pa.Table:
        """The deleted positions of a snapshot's position delete files and deletion vectors
        (Java's ``position_deletes`` table): ``file_path``, ``pos``, ``row``, ``partition``,
        ``spec_id``, ``delete_file_path``."""
        return position_deletes_table(self, self._snapshot_or_none(snapshot_id))


def _is_data(content: pa.Array) -> pa.Array:
    return pc.equal(content, _DATA)


def _is_delete(content: pa.Array) -> pa.Array:
    return pc.not_equal(content, _DATA)
