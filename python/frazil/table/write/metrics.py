"""Iceberg column metrics of a Parquet file from its footer (spec "Manifests": ``value_counts``,
``null_value_counts``, ``column_sizes``, ``lower_bounds``, ``upper_bounds``; "Metrics modes").

Behaviour follows the Java reference's ``ParquetMetrics`` (Iceberg 1.10):

- Modes come from ``write.metadata.metrics.default`` and ``write.metadata.metrics.column.<col>``
  (``none``, ``counts``, ``truncate(N)``, ``full``; default ``truncate(16)``). Without an
  explicit default, a schema of more than ``write.metadata.metrics.max-inferred-column-defaults``
  (100) leaf columns keeps metrics for the first 100 only, and columns of the sort order get at
  least ``truncate(16)``. An invalid mode is logged and ignored, as the reference does.
- ``column_sizes``: total compressed size of a column's chunks (not for ``none`` columns).
- Counts and bounds only for columns outside lists and maps (the reference drops all metrics of
  repeated fields), and only when every row group has statistics; a column whose chunks lack
  them gets no counts or bounds at all. INT96 columns get none (Parquet orders them
  meaninglessly).
- Bounds: min of the row groups' mins, max of their maxes, in the table column's type
  (Appendix D binary form; e.g. an ``int`` file column of a ``long`` table column gives 8-byte
  bounds). Float bounds that are NaN are dropped (counts stay). ``truncate(N)`` shortens string
  bounds to N code points and binary bounds to N bytes: the lower bound is the prefix, the upper
  bound the prefix with its last code point (byte) incremented, carrying leftwards, and omitted
  when nothing can be incremented. Other types are never truncated.
- ``nan_value_counts`` cannot come from Parquet statistics and are left out.
- ``split_offsets``: row group start offsets, sorted.

Columns are matched to table fields by the file's field ids (``PARQUET:field_id``), else by a
name mapping (the table's ``schema.name-mapping.default``, or one made from the table schema's
names). The raw, untruncated per-column minimum and maximum are kept in
:attr:`ParquetMetrics.stats` for callers that need exact values (partition inference).
"""

from __future__ import annotations

import json
import logging
import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import _native
from frazil.arrow_schema import field_id_of
from frazil.exceptions import InvalidArgumentError, UnsupportedError
from frazil.metadata.name_mapping import (
    DEFAULT_NAME_MAPPING_PROPERTY,
    MappedField,
    NameMapping,
    create_mapping_from_schema,
    parse_mapping_from_json,
)
from frazil.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    GeographyType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    PrimitiveType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
    VariantType,
)
from frazil.values.geo import GeoBounds, footer_bounds, is_geo

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pyarrow.parquet as pq

    from frazil.schema import Schema
    from frazil.sorting import SortOrder

__all__ = [
    "DEFAULT_METRICS_MODE",
    "ArrowMetrics",
    "ColumnStats",
    "MetricsConfig",
    "MetricsMode",
    "ParquetMetrics",
    "parquet_metrics",
    "parse_metrics_mode",
    "split_offsets",
    "truncate_binary_lower",
    "truncate_binary_upper",
    "truncate_string_lower",
    "truncate_string_upper",
]

logger = logging.getLogger(__name__)

DEFAULT_WRITE_METRICS_MODE = "write.metadata.metrics.default"
METRICS_MODE_COLUMN_CONF_PREFIX = "write.metadata.metrics.column."
METRICS_MAX_INFERRED_COLUMN_DEFAULTS = "write.metadata.metrics.max-inferred-column-defaults"
METRICS_MAX_INFERRED_COLUMN_DEFAULTS_DEFAULT = 100


# ---------------------------------------------------------------------------------------------
# Modes


@dataclass(frozen=True)
class MetricsMode:
    """``none``, ``counts``, ``truncate`` (with ``length``) or ``full``."""

    kind: str
    length: int | None = None

    def __str__(self) -> str:
        return f"truncate({self.length})" if self.kind == "truncate" else self.kind

    @property
    def truncate_length(self) -> int:
        """0 for no bounds, else the longest bound kept (as the reference computes it)."""
        if self.kind in ("none", "counts"):
            return 0
        if self.kind == "truncate":
            assert self.length is not None
            return self.length
        return 2**31 - 1


NONE = MetricsMode("none")
COUNTS = MetricsMode("counts")
FULL = MetricsMode("full")
DEFAULT_METRICS_MODE = MetricsMode("truncate", 16)
_TRUNCATE = re.compile(r"truncate\((-?\d+)\)")


def parse_metrics_mode(text: str) -> MetricsMode:
    """Parses a metrics mode, case-insensitively (``"truncate(8)"``, ``"full"``, ...)."""
    mode = text.strip().lower() if isinstance(text, str) else text
    if mode in ("none", "counts", "full"):
        return MetricsMode(mode)
    if isinstance(mode, str) and (m := _TRUNCATE.fullmatch(mode)):
        length = int(m.group(1))
        if length <= 0:
            raise InvalidArgumentError(f"metrics mode {text!r}: truncate length must be positive")
        return MetricsMode("truncate", length)
    raise InvalidArgumentError(f"invalid metrics mode {text!r}")


def _parse_or(text: str, fallback: MetricsMode, context: str) -> MetricsMode:
    try:
        return parse_metrics_mode(text)
    except InvalidArgumentError as e:
        logger.warning("ignoring invalid metrics mode (%s): %s", context, e)
        return fallback


def _leaf_ids_in_order(schema: Schema, limit: int) -> set[int]:
    """The reference's choice of the first ``limit`` metrics columns: a struct's primitive
    fields first, then its nested fields' columns, depth first."""
    out: set[int] = set()

    def full() -> bool:
        return len(out) >= limit

    def visit(t: IcebergType) -> None:
        if isinstance(t, StructType):
            for f in t.fields:
                if full():
                    return
                if isinstance(f.field_type, PrimitiveType):
                    out.add(f.field_id)
            for f in t.fields:
                if full():
                    return
                visit(f.field_type)
        elif isinstance(t, ListType):
            if not full() and isinstance(t.element_type, PrimitiveType):
                out.add(t.element_id)
            visit(t.element_type)
        elif isinstance(t, MapType):
            if not full() and isinstance(t.key_type, PrimitiveType):
                out.add(t.key_id)
            if not full() and isinstance(t.value_type, PrimitiveType):
                out.add(t.value_id)
            visit(t.key_type)
            visit(t.value_type)

    visit(schema.as_struct())
    return out


def _primitive_ids(t: IcebergType) -> list[int]:
    if isinstance(t, StructType):
        out = []
        for f in t.fields:
            out += [f.field_id] if isinstance(f.field_type, PrimitiveType) else []
            out += _primitive_ids(f.field_type)
        return out
    if isinstance(t, ListType):
        own = [t.element_id] if isinstance(t.element_type, PrimitiveType) else []
        return own + _primitive_ids(t.element_type)
    if isinstance(t, MapType):
        own = [
            i
            for i, x in ((t.key_id, t.key_type), (t.value_id, t.value_type))
            if isinstance(x, PrimitiveType)
        ]
        return own + _primitive_ids(t.key_type) + _primitive_ids(t.value_type)
    return []


class MetricsConfig:
    """The metrics mode of each column of a table (Java's ``MetricsConfig.from``)."""

    def __init__(
        self,
        default: MetricsMode = DEFAULT_METRICS_MODE,
        columns: Mapping[str, MetricsMode] | None = None,
    ) -> None:
        self.default = default
        self.columns: dict[str, MetricsMode] = dict(columns or {})

    def __repr__(self) -> str:
        return f"MetricsConfig({self.default}, {self.columns!r})"

    @classmethod
    def from_properties(
        cls,
        properties: Mapping[str, str],
        schema: Schema | None = None,
        sort_order: SortOrder | None = None,
    ) -> MetricsConfig:
        columns: dict[str, MetricsMode] = {}
        configured = properties.get(DEFAULT_WRITE_METRICS_MODE)
        if configured is not None:
            default = _parse_or(configured, DEFAULT_METRICS_MODE, "default")
        elif schema is None:
            default = DEFAULT_METRICS_MODE
        else:
            limit = _max_inferred(properties)
            if len(_primitive_ids(schema.as_struct())) <= limit:
                default = DEFAULT_METRICS_MODE
            else:
                # Wide tables: metrics for the first columns only, to keep manifests small.
                for fid in _leaf_ids_in_order(schema, limit):
                    name = schema.find_column_name(fid)
                    if name is not None:
                        columns[name] = DEFAULT_METRICS_MODE
                default = NONE
        if sort_order is not None and schema is not None:
            sorted_mode = DEFAULT_METRICS_MODE if default in (NONE, COUNTS) else default
            for sf in sort_order.fields:
                if sf.transform.preserves_order and sf.source_id in schema.field_ids:
                    name = schema.find_column_name(sf.source_id)
                    if name is not None:
                        columns[name] = sorted_mode
        for key, value in properties.items():
            if key.startswith(METRICS_MODE_COLUMN_CONF_PREFIX):
                column = key[len(METRICS_MODE_COLUMN_CONF_PREFIX) :]
                columns[column] = _parse_or(value, default, f"column {column}")
        return cls(default, columns)

    def mode(self, column_name: str | None) -> MetricsMode:
        if column_name is None:
            return self.default
        return self.columns.get(column_name, self.default)


def _max_inferred(properties: Mapping[str, str]) -> int:
    text = properties.get(METRICS_MAX_INFERRED_COLUMN_DEFAULTS)
    if text is None:
        return METRICS_MAX_INFERRED_COLUMN_DEFAULTS_DEFAULT
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        logger.warning(
            "invalid %s %r, using %d",
            METRICS_MAX_INFERRED_COLUMN_DEFAULTS,
            text,
            METRICS_MAX_INFERRED_COLUMN_DEFAULTS_DEFAULT,
        )
        return METRICS_MAX_INFERRED_COLUMN_DEFAULTS_DEFAULT
    return value


# ---------------------------------------------------------------------------------------------
# Truncation


def truncate_string_lower(value: str, length: int) -> str:
    """The first ``length`` code points: a lower bound of every string with that prefix."""
    return value[:length]


def truncate_string_upper(value: str, length: int) -> str | None:
    """At most ``length`` code points, greater than or equal to ``value`` (and to every string
    that starts with ``value``'s first ``length`` code points), or ``None`` if none exists."""
    if len(value) <= length:
        return value
    prefix = value[:length]
    for i in range(length - 1, -1, -1):
        cp = ord(prefix[i])
        if cp == 0x10FFFF:
            continue
        # Surrogates are not scalar values: step over them.
        nxt = 0xE000 if cp == 0xD7FF else cp + 1
        return prefix[:i] + chr(nxt)
    return None


def truncate_binary_lower(value: bytes, length: int) -> bytes:
    return value[:length]


def truncate_binary_upper(value: bytes, length: int) -> bytes | None:
    """At most ``length`` bytes, greater than or equal to ``value`` in unsigned byte order, or
    ``None`` if every kept byte is 0xFF."""
    if len(value) <= length:
        return value
    for i in range(length - 1, -1, -1):
        if value[i] != 0xFF:
            return value[:i] + bytes([value[i] + 1])
    return None


# ---------------------------------------------------------------------------------------------
# Parquet statistics -> canonical values


@dataclass
class ColumnStats:
    """One table column's statistics aggregated over a file's row groups, untruncated.

    ``lower``/``upper`` are in the single-value core's canonical form for ``iceberg_type``
    (ints for dates, times, timestamps and decimals' unscaled values; ``str``; ``bytes``...);
    ``None`` when no row group had a non-null value or the statistics could not give one.
    ``complete`` is whether every row group had statistics for the column.
    """

    field_id: int
    iceberg_type: PrimitiveType
    repeated: bool
    value_count: int = 0
    null_count: int | None = 0
    lower: Any = None
    upper: Any = None
    complete: bool = True
    bounds_usable: bool = True


@dataclass
class ParquetMetrics:
    """What a Parquet footer says about a data file, in the ``data_file`` fields' terms."""

    record_count: int
    column_sizes: dict[int, int]
    value_counts: dict[int, int]
    null_value_counts: dict[int, int]
    lower_bounds: dict[int, bytes]
    upper_bounds: dict[int, bytes]
    split_offsets: tuple[int, ...]
    stats: dict[int, ColumnStats] = field(default_factory=dict)

    def data_file_fields(self) -> dict[str, Any]:
        """Keyword arguments for :class:`frazil.manifest.content_file.DataFile`."""
        return {
            "record_count": self.record_count,
            "column_sizes": self.column_sizes,
            "value_counts": self.value_counts,
            "null_value_counts": self.null_value_counts,
            "lower_bounds": self.lower_bounds,
            "upper_bounds": self.upper_bounds,
            "split_offsets": self.split_offsets or None,
        }


def _unit_factor(unit: str | None, target: str) -> tuple[int, int] | None:
    """(multiply, divide) turning ``unit`` values into ``target`` ones."""
    scale = {"milliseconds": 3, "microseconds": 6, "nanoseconds": 9}
    if unit not in scale:
        return None
    d = scale[target] - scale[unit]
    return (10**d, 1) if d >= 0 else (1, 10**-d)


class _Converter:
    """Parquet statistic values of one column -> canonical values of its table type; returns
    ``None`` for a column whose statistics cannot give bounds of that type."""

    def __init__(self, t: PrimitiveType, column: Any) -> None:
        self.t = t
        self.physical = column.physical_type
        logical = json.loads(column.logical_type.to_json())
        self.logical = logical.get("Type")
        self.logical_json = logical

    def build(self) -> Any:
        t, phys, logical = self.t, self.physical, self.logical
        if phys == "INT96":
            return None
        if isinstance(t, BooleanType) and phys == "BOOLEAN":
            return (lambda v, up: bool(v)), _plain_key
        if isinstance(t, (IntegerType, LongType)) and phys in ("INT32", "INT64"):
            if logical == "Int" and not self.logical_json.get("isSigned", True):
                mask = (1 << (32 if phys == "INT32" else 64)) - 1
                return (lambda v, up: int(v) & mask), _plain_key
            return (lambda v, up: int(v)), _plain_key
        if isinstance(t, (FloatType, DoubleType)) and phys in ("FLOAT", "DOUBLE"):
            return (lambda v, up: float(v)), _float_key
        if isinstance(t, DecimalType) and logical == "Decimal":
            if self.logical_json.get("scale") != t.scale:
                return None
            if phys in ("INT32", "INT64"):
                return (lambda v, up: int(v)), _plain_key
            if phys in ("FIXED_LEN_BYTE_ARRAY", "BYTE_ARRAY"):
                return (lambda v, up: int.from_bytes(v, "big", signed=True)), _plain_key
            return None
        if isinstance(t, DateType) and phys == "INT32":
            return (lambda v, up: int(v)), _plain_key
        if isinstance(t, TimeType) and logical == "Time":
            return self._scaled("microseconds")
        if isinstance(t, (TimestampType, TimestamptzType)) and logical == "Timestamp":
            return self._scaled("microseconds")
        if isinstance(t, (TimestampNanoType, TimestamptzNanoType)) and logical == "Timestamp":
            return self._scaled("nanoseconds")
        if isinstance(t, StringType) and phys == "BYTE_ARRAY":
            return (lambda v, up: bytes(v).decode("utf-8")), _plain_key
        if isinstance(t, UUIDType) and phys == "FIXED_LEN_BYTE_ARRAY":
            return (lambda v, up: bytes(v) if len(v) == 16 else _bad()), _plain_key
        if isinstance(t, (FixedType, BinaryType)) and phys in (
            "FIXED_LEN_BYTE_ARRAY",
            "BYTE_ARRAY",
        ):
            return (lambda v, up: bytes(v)), _plain_key
        return None

    def _scaled(self, target: str) -> Any:
        factor = _unit_factor(self.logical_json.get("timeUnit"), target)
        if factor is None:
            return None
        mul, div = factor
        if div == 1:
            return (lambda v, up: int(v) * mul), _plain_key
        # Coarser target: floor a lower bound, ceil an upper one, so both stay bounds.
        return (lambda v, up: -((-int(v)) // div) if up else int(v) // div), _plain_key


class _BadValue(Exception):
    pass


def _bad() -> Any:
    raise _BadValue


def _plain_key(v: Any) -> Any:
    return v


def _float_key(v: float) -> tuple[float, float]:
    # -0.0 sorts before 0.0, as the reference's comparators order them.
    return (v, math.copysign(1.0, v))


def _encode(value: Any, t: PrimitiveType) -> bytes:
    return _native.value_to_bytes(value, t.json_text())


def _arrow_children(t: pa.DataType) -> list[tuple[str, pa.Field]]:
    if isinstance(t, pa.DictionaryType):
        return _arrow_children(t.value_type)
    if isinstance(t, pa.StructType):
        return [(t.field(i).name, t.field(i)) for i in range(t.num_fields)]
    if isinstance(t, pa.MapType):
        return [("key", t.key_field), ("value", t.item_field)]
    if isinstance(t, (pa.ListType, pa.LargeListType, pa.FixedSizeListType)):
        return [("element", t.value_field)]
    return []


def _leaves(
    arrow_schema: pa.Schema, mapping: NameMapping | None, use_ids: bool
) -> list[tuple[int | None, bool]]:
    """(field id, inside a list or map) of each Parquet leaf column, in column order."""
    out: list[tuple[int | None, bool]] = []

    def visit(
        name: str,
        f: pa.Field,
        level: tuple[MappedField, ...] | None,
        repeated: bool,
        parent_has: bool,
    ) -> None:
        if use_ids:
            fid = field_id_of(f) if parent_has else None
            sub = None
        else:
            found = next((m for m in level or () if name in m.names), None)
            fid = None if found is None else found.field_id
            sub = None if found is None else found.fields
        children = _arrow_children(f.type)
        if not children:
            out.append((fid, repeated))
            return
        is_collection = not isinstance(f.type, pa.StructType) and not (
            isinstance(f.type, pa.DictionaryType)
        )
        for child_name, child in children:
            visit(
                child_name,
                child,
                sub,
                repeated or is_collection,
                fid is not None if use_ids else True,
            )

    top = mapping.fields if mapping is not None else None
    for f in arrow_schema:
        visit(f.name, f, top, False, True)
    return out


def _file_has_ids(arrow_schema: pa.Schema) -> bool:
    def walk(f: pa.Field) -> bool:
        if field_id_of(f) is not None:
            return True
        return any(walk(c) for _, c in _arrow_children(f.type))

    return any(walk(f) for f in arrow_schema)


def leaf_field_ids(
    file_metadata: pq.FileMetaData, schema: Schema, name_mapping: NameMapping | None = None
) -> list[tuple[int | None, bool]]:
    """The table field id (``None`` when unmatched) and repeated-ness of each Parquet column:
    by the file's field ids if it has any, else by ``name_mapping`` (default: the schema's
    own names)."""
    arrow_schema = file_metadata.schema.to_arrow_schema()
    use_ids = _file_has_ids(arrow_schema)
    mapping = None if use_ids else (name_mapping or create_mapping_from_schema(schema))
    leaves = _leaves(arrow_schema, mapping, use_ids)
    if len(leaves) != file_metadata.num_columns:
        raise UnsupportedError(
            f"the file's Arrow schema has {len(leaves)} leaf columns, its Parquet schema "
            f"{file_metadata.num_columns}; cannot match columns to fields"
        )
    return leaves


def split_offsets(file_metadata: pq.FileMetaData) -> tuple[int, ...]:
    """Where each row group starts (its first column chunk's dictionary or first data page),
    sorted."""
    out = []
    for r in range(file_metadata.num_row_groups):
        rg = file_metadata.row_group(r)
        if rg.num_columns == 0:
            continue
        c = rg.column(0)
        start = c.data_page_offset
        if c.has_dictionary_page and c.dictionary_page_offset is not None:
            if 0 < c.dictionary_page_offset < start:
                start = c.dictionary_page_offset
        out.append(start)
    return tuple(sorted(out))


def name_mapping_of(properties: Mapping[str, str]) -> NameMapping | None:
    text = properties.get(DEFAULT_NAME_MAPPING_PROPERTY)
    return None if text is None else parse_mapping_from_json(text)


def parquet_metrics(
    file_metadata: pq.FileMetaData,
    schema: Schema,
    properties: Mapping[str, str] | None = None,
    *,
    name_mapping: NameMapping | None = None,
    sort_order: SortOrder | None = None,
    config: MetricsConfig | None = None,
) -> ParquetMetrics:
    """The metrics of a Parquet file for a table of ``schema`` and ``properties``.

    ``config`` overrides the modes the properties (and ``sort_order``) give; ``name_mapping``
    defaults to the properties' ``schema.name-mapping.default`` (used only for files without
    field ids).
    """
    properties = properties or {}
    if config is None:
        config = MetricsConfig.from_properties(properties, schema, sort_order)
    if name_mapping is None:
        name_mapping = name_mapping_of(properties)
    leaves = leaf_field_ids(file_metadata, schema, name_mapping)
    known = schema.field_ids

    column_sizes: dict[int, int] = {}
    stats: dict[int, ColumnStats] = {}
    converters: dict[int, Any] = {}
    modes: dict[int, MetricsMode] = {}
    for i, (fid, repeated) in enumerate(leaves):
        if fid is None or fid not in known:
            continue
        t = schema.find_type(fid)
        if not isinstance(t, PrimitiveType) or fid in stats:
            continue
        modes[fid] = config.mode(schema.find_column_name(fid))
        stats[fid] = ColumnStats(fid, t, repeated)
        column = file_metadata.schema.column(i)
        converters[fid] = _Converter(t, column).build()
        if column.physical_type == "INT96":
            stats[fid].complete = False

    index_of = {fid: i for i, (fid, _) in enumerate(leaves) if fid in stats}
    for r in range(file_metadata.num_row_groups):
        rg = file_metadata.row_group(r)
        for fid, i in index_of.items():
            chunk = rg.column(i)
            if modes[fid] != NONE:
                column_sizes[fid] = column_sizes.get(fid, 0) + chunk.total_compressed_size
            _accumulate(stats[fid], chunk, converters[fid])

    value_counts, null_value_counts, lower_bounds, upper_bounds = _counts_and_bounds(
        stats, modes, {fid: c is not None for fid, c in converters.items()}
    )
    for fid, i in index_of.items():  # geo bounds: from Parquet's geospatial statistics
        s = stats[fid]
        if is_geo(s.iceberg_type) and not s.repeated and modes[fid].truncate_length > 0:
            if box := footer_bounds(file_metadata, i, isinstance(s.iceberg_type, GeographyType)):
                lower_bounds[fid], upper_bounds[fid] = box

    return ParquetMetrics(
        record_count=file_metadata.num_rows,
        column_sizes=column_sizes,
        value_counts=value_counts,
        null_value_counts=null_value_counts,
        lower_bounds=lower_bounds,
        upper_bounds=upper_bounds,
        split_offsets=split_offsets(file_metadata),
        stats=stats,
    )


def _counts_and_bounds(
    stats: Mapping[int, ColumnStats],
    modes: Mapping[int, MetricsMode],
    usable: Mapping[int, bool],
) -> tuple[dict[int, int], dict[int, int], dict[int, bytes], dict[int, bytes]]:
    """value and null counts, lower and upper bounds (truncated as the modes say) of columns'
    statistics; ``usable``: whether a column's values can give bounds at all."""
    value_counts: dict[int, int] = {}
    null_value_counts: dict[int, int] = {}
    lower_bounds: dict[int, bytes] = {}
    upper_bounds: dict[int, bytes] = {}
    for fid, s in stats.items():
        mode = modes[fid]
        if mode == NONE or s.repeated or not s.complete:
            continue
        value_counts[fid] = s.value_count
        if s.null_count is not None:
            null_value_counts[fid] = s.null_count
        length = mode.truncate_length
        if length <= 0 or not s.bounds_usable or not usable[fid]:
            continue
        if s.lower is None or s.upper is None:
            continue
        lower, upper = s.lower, s.upper
        if isinstance(s.iceberg_type, StringType):
            lower, upper = (
                truncate_string_lower(lower, length),
                truncate_string_upper(upper, length),
            )
        elif isinstance(s.iceberg_type, BinaryType):
            lower, upper = (
                truncate_binary_lower(lower, length),
                truncate_binary_upper(upper, length),
            )
        lower_bounds[fid] = _encode(lower, s.iceberg_type)
        if upper is not None:
            upper_bounds[fid] = _encode(upper, s.iceberg_type)

    return value_counts, null_value_counts, lower_bounds, upper_bounds


def _accumulate(s: ColumnStats, chunk: Any, converter: Any) -> None:
    st = chunk.statistics if chunk.is_stats_set else None
    if st is None or not (st.has_min_max or st.has_null_count):
        s.complete = False
        return
    s.value_count += chunk.num_values
    if st.has_null_count and s.null_count is not None:
        s.null_count += st.null_count
    else:
        s.null_count = None
    if not st.has_min_max or converter is None or not s.bounds_usable:
        return
    convert, key = converter
    try:
        lo = convert(st.min_raw, False)
        hi = convert(st.max_raw, True)
    except (_BadValue, UnicodeDecodeError, TypeError, ValueError):
        s.bounds_usable = False
        return
    if isinstance(lo, float) and (math.isnan(lo) or math.isnan(hi)):
        # The reference drops bounds when a NaN reaches them (old writers put NaN in stats).
        s.bounds_usable = False
        return
    if s.lower is None or key(lo) < key(s.lower):
        s.lower = lo
    if s.upper is None or key(hi) > key(s.upper):
        s.upper = hi


# ---------------------------------------------------------------------------------------------
# Metrics from Arrow data (ORC and Avro files)


class ArrowMetrics:
    """The metrics of the rows written to an ORC or Avro file, from the Arrow data (their
    writers here keep no statistics): value and null counts and bounds of columns outside
    lists and maps, with the same modes and truncation as :func:`parquet_metrics`; no column
    sizes (Java keeps none for Avro) and no split offsets."""

    def __init__(self, schema: Schema, config: MetricsConfig) -> None:
        self.schema = schema
        self.config = config
        self.rows = 0
        self.stats: dict[int, ColumnStats] = {}
        self.modes: dict[int, MetricsMode] = {}
        self.geo: dict[int, Any] = {}  # field id -> native GeoBounds

    def add(self, table: pa.Table) -> None:
        """Counts the rows of ``table`` (the table schema's Arrow columns)."""
        self.rows += table.num_rows
        for f in self.schema.fields:
            self._visit(f.field_id, f.field_type, table.column(f.name))

    def _visit(self, fid: int, t: IcebergType, column: pa.ChunkedArray) -> None:
        if isinstance(t, StructType):
            for c in t.fields:  # struct_field is null where its struct is
                self._visit(c.field_id, c.field_type, pc.struct_field(column, c.name))
            return
        if not isinstance(t, PrimitiveType):
            return  # lists and maps: no metrics (as for Parquet)
        s = self.stats.get(fid)
        if s is None:
            s = self.stats[fid] = ColumnStats(fid, t, False)
            self.modes[fid] = self.config.mode(self.schema.find_column_name(fid))
        s.value_count += len(column)
        s.null_count = (s.null_count or 0) + column.null_count
        if self.modes[fid].truncate_length <= 0 or len(column) == column.null_count:
            return
        if isinstance(t, VariantType):
            return  # no variant bounds
        if is_geo(t):
            self.geo.setdefault(fid, GeoBounds(isinstance(t, GeographyType))).add(column)
            return
        lo, hi = _arrow_min_max(column, t)
        if lo is None or hi is None or (isinstance(lo, float) and math.isnan(lo)):
            return
        key = _float_key if isinstance(lo, float) else _plain_key
        if s.lower is None or key(lo) < key(s.lower):
            s.lower = lo
        if s.upper is None or key(hi) > key(s.upper):
            s.upper = hi

    def metrics(self) -> ParquetMetrics:
        usable = dict.fromkeys(self.stats, True)
        usable.update(dict.fromkeys(self.geo, False))
        counts, nulls, lower, upper = _counts_and_bounds(self.stats, self.modes, usable)
        for fid, acc in self.geo.items():
            box = acc.bounds()
            if box is not None:
                lower[fid], upper[fid] = box
        return ParquetMetrics(self.rows, {}, counts, nulls, lower, upper, (), self.stats)


def _arrow_min_max(column: pa.ChunkedArray, t: PrimitiveType) -> tuple[Any, Any]:
    """Minimum and maximum of a column in the canonical form of ``t`` (see ColumnStats)."""
    if isinstance(column.type, pa.BaseExtensionType):  # uuid
        column = pa.chunked_array([c.storage for c in column.chunks], column.type.storage_type)
    elif isinstance(t, DateType):
        column = column.cast(pa.int32())
    elif pa.types.is_time(column.type) or pa.types.is_timestamp(column.type):
        column = column.cast(pa.int64())
    mm = pc.min_max(column).as_py()
    lo, hi = mm["min"], mm["max"]
    if isinstance(t, DecimalType) and lo is not None and hi is not None:
        lo, hi = int(lo.scaleb(t.scale)), int(hi.scaleb(t.scale))
    return lo, hi
