"""Arrow input checked against a table schema and conformed to it, before anything is written.

Columns are matched to the table's fields by ``PARQUET:field_id`` where an Arrow field carries
one, else by name (case-sensitive), at every nesting level. Then:

* unknown columns, missing required columns (without a ``write-default``), nulls in required
  columns (nested ones included: a struct's required field may only be null where the struct
  is) and types that cannot be written as the table's are :class:`ValidationError` naming the
  column (``a.b`` for struct fields, ``l.element``, ``m.key``, ``m.value``);
* compatible differences are cast: field order, narrower integers into ``int``/``long``,
  ``float16``/``float32`` into ``double``, a decimal's precision widened, dates as ``date64``,
  times and timestamps of other units (``ns`` into microseconds only where no value loses
  precision, unless ``downcast-ns-timestamp-to-us-on-write`` asks to truncate, as PyIceberg
  does), views and dictionary-encoded columns decoded, ``fixed_size_binary(16)`` as ``uuid``,
  nested structs, lists and maps recursively. 32- and 64-bit offsets are kept as given
  (Parquet stores both alike);
* a missing optional column is written as nulls, a missing column with a v3 ``write-default``
  as that value (spec "Default values"); columns of type ``unknown`` are not stored in data
  files (spec "Parquet": omit from data files).

The result is an Arrow schema with field ids (what the Parquet writer gets) and a function that
turns each input batch into a batch of that schema.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from frazil.arrow_schema import FIELD_ID_KEY, field_id_of, type_to_arrow
from frazil.exceptions import FrazilError, InvalidArgumentError, ValidationError
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
from frazil.values import from_json

if TYPE_CHECKING:
    from frazil.schema import Schema

__all__ = [
    "DOWNCAST_NS_ENV",
    "ArrowData",
    "ArrowStreamExportable",
    "ConformedInput",
    "as_table",
    "conform",
    "input_batches",
]

# PyIceberg's configuration key (``downcast-ns-timestamp-to-us-on-write``) as an environment
# variable, under both projects' prefixes.
DOWNCAST_NS_ENV = (
    "FRAZIL_DOWNCAST_NS_TIMESTAMP_TO_US_ON_WRITE",
    "PYICEBERG_DOWNCAST_NS_TIMESTAMP_TO_US_ON_WRITE",
)


def _downcast_default() -> bool:
    for name in DOWNCAST_NS_ENV:
        value = os.environ.get(name)
        if value is not None:
            return value.strip().lower() in ("1", "true", "yes", "on")
    return False


# ---------------------------------------------------------------------------------------------
# Input shapes


class ArrowStreamExportable(Protocol):
    """Anything that exports its rows as an Arrow C stream (the PyCapsule interface): pyarrow
    tables and readers, Polars and pandas data frames, DuckDB relations..."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...


#: The data the write operations (``append``, ``overwrite``, ``upsert``) accept; see
#: :func:`input_batches`.
ArrowData: TypeAlias = (
    pa.Table
    | pa.RecordBatch
    | pa.RecordBatchReader
    | ArrowStreamExportable
    | Iterable[pa.Table | pa.RecordBatch]
)


def as_table(data: ArrowData) -> pa.Table:
    """An Arrow input (any shape :func:`input_batches` takes) read whole into a ``pa.Table``."""
    if isinstance(data, pa.Table):
        return data
    schema, batches, _ = input_batches(data)
    return pa.Table.from_batches(list(batches), schema)


def input_batches(data: ArrowData) -> tuple[pa.Schema, Iterator[pa.RecordBatch], bool]:
    """(schema, batches, whole) of an Arrow input: a ``pa.Table`` or ``pa.RecordBatch`` (whole:
    in memory, so it can be checked completely before writing), a ``pa.RecordBatchReader``,
    anything with ``__arrow_c_stream__`` (Polars, DuckDB...), or an iterable of record
    batches."""
    if isinstance(data, pa.Table):
        return data.schema, iter(data.to_batches()), True
    if isinstance(data, pa.RecordBatch):
        return data.schema, iter([data]), True
    if isinstance(data, pa.RecordBatchReader):
        return data.schema, iter(data), False
    if hasattr(data, "__arrow_c_stream__"):
        reader = pa.RecordBatchReader.from_stream(data)
        return reader.schema, iter(reader), False
    if isinstance(data, Iterable) and not isinstance(data, (str, bytes, dict)):
        it = iter(data)
        first = next(it, None)
        if first is None:
            raise InvalidArgumentError("cannot infer the schema of an empty iterable of batches")
        if isinstance(first, pa.Table):
            first_batches = first.to_batches()
        elif isinstance(first, pa.RecordBatch):
            first_batches = [first]
        else:
            raise InvalidArgumentError(
                f"expected record batches in the iterable, got {type(first).__name__}"
            )

        def chain() -> Iterator[pa.RecordBatch]:
            yield from first_batches
            for b in it:
                if not isinstance(b, (pa.Table, pa.RecordBatch)):
                    raise InvalidArgumentError(
                        f"expected record batches in the iterable, got {type(b).__name__}"
                    )
                if not b.schema.equals(first.schema):
                    raise InvalidArgumentError(
                        "every batch of the iterable must have the first batch's schema; got "
                        f"{b.schema} after {first.schema}"
                    )
                yield from b.to_batches() if isinstance(b, pa.Table) else [b]

        return first.schema, chain(), False
    raise InvalidArgumentError(
        "expected a pyarrow Table, RecordBatch, RecordBatchReader, an object with "
        f"__arrow_c_stream__ or an iterable of record batches, got {type(data).__name__}"
    )


# ---------------------------------------------------------------------------------------------
# Plans: how each table field is made from the input


@dataclass
class _Plan:
    """How to produce one output column (or nested child) of ``field``."""

    field: NestedField | None  # None for list elements / map keys and values (see ``ice``)
    ice: IcebergType
    required: bool
    path: str
    target: pa.DataType  # output Arrow type (without field metadata on itself)
    source: pa.DataType | None  # input Arrow type; None: missing, filled
    children: list[tuple[_Plan, int | None]]  # struct: (plan, input child index); list/map
    default: Any = None  # Python write default (missing fields)
    has_default: bool = False
    needs_check: bool = False  # some required field at or below (null checks)


def _show(t: IcebergType) -> str:
    if isinstance(t, StructType):
        return "struct"
    if isinstance(t, ListType):
        return "list"
    if isinstance(t, MapType):
        return "map"
    return str(t)


def _meta(field_id: int) -> dict[bytes, bytes]:
    return {FIELD_ID_KEY: str(field_id).encode()}


def _decoded(t: pa.DataType) -> pa.DataType:
    while isinstance(t, pa.DictionaryType):
        t = t.value_type
    return t


def _incompatible(path: str, src: pa.DataType, ice: IcebergType, why: str = "") -> ValidationError:
    suffix = f" ({why})" if why else ""
    return ValidationError(
        f"column {path!r} has Arrow type {src}, which cannot be written as the table's "
        f"{_show(ice)}{suffix}"
    )


def _primitive_target(src: pa.DataType, ice: IcebergType, path: str) -> pa.DataType:
    """The output Arrow type of a primitive column, or an error if ``src`` does not fit."""
    t = _decoded(src)
    ok = False
    if isinstance(ice, BooleanType):
        ok = pa.types.is_boolean(t)
    elif isinstance(ice, IntegerType):
        ok = any(
            f(t)
            for f in (
                pa.types.is_int8,
                pa.types.is_int16,
                pa.types.is_int32,
                pa.types.is_uint8,
                pa.types.is_uint16,
            )
        )
    elif isinstance(ice, LongType):
        ok = pa.types.is_integer(t) and not pa.types.is_uint64(t)
    elif isinstance(ice, FloatType):
        ok = pa.types.is_float16(t) or pa.types.is_float32(t)
    elif isinstance(ice, DoubleType):
        ok = pa.types.is_floating(t)
    elif isinstance(ice, DecimalType):
        if pa.types.is_decimal(t):
            if t.scale != ice.scale:
                raise _incompatible(path, src, ice, "the scales differ")
            if t.precision > ice.precision:
                raise _incompatible(path, src, ice, "the precision is wider")
            ok = True
    elif isinstance(ice, DateType):
        ok = pa.types.is_date(t)
    elif isinstance(ice, TimeType):
        ok = pa.types.is_time(t)
    elif isinstance(ice, (TimestampType, TimestampNanoType)):
        ok = pa.types.is_timestamp(t) and t.tz is None
        if pa.types.is_timestamp(t) and t.tz is not None:
            raise _incompatible(path, src, ice, "it has a time zone, the table's has none")
    elif isinstance(ice, (TimestamptzType, TimestamptzNanoType)):
        ok = pa.types.is_timestamp(t) and t.tz is not None
        if pa.types.is_timestamp(t) and t.tz is None:
            raise _incompatible(path, src, ice, "it has no time zone, the table's is UTC-adjusted")
    elif isinstance(ice, StringType):
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return t
        ok = pa.types.is_string_view(t)
    elif isinstance(ice, BinaryType):
        if pa.types.is_binary(t) or pa.types.is_large_binary(t):
            return t
        ok = pa.types.is_binary_view(t) or pa.types.is_fixed_size_binary(t)
    elif isinstance(ice, (GeometryType, GeographyType)):
        # WKB: plain binary, or GeoArrow's geoarrow.wkb extension over binary.
        if isinstance(t, pa.BaseExtensionType) and t.extension_name == "geoarrow.wkb":
            t = t.storage_type
        if pa.types.is_binary(t) or pa.types.is_large_binary(t):
            return t
        ok = pa.types.is_binary_view(t)
    elif isinstance(ice, FixedType):
        ok = pa.types.is_fixed_size_binary(t) and t.byte_width == ice.length
    elif isinstance(ice, UUIDType):
        ok = (isinstance(t, pa.BaseExtensionType) and t.extension_name == "arrow.uuid") or (
            pa.types.is_fixed_size_binary(t) and t.byte_width == 16
        )
    elif isinstance(ice, UnknownType):
        ok = True  # checked to be all null when converting
    elif isinstance(ice, VariantType):
        # Variant bytes: struct<metadata, value> of binaries (frazil.values.variant.from_json).
        if isinstance(t, pa.BaseExtensionType):
            t = t.storage_type
        names = [t.field(i).name for i in range(t.num_fields)] if pa.types.is_struct(t) else []
        ok = sorted(names) == ["metadata", "value"] and all(
            pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type) for f in t
        )
    if not ok:
        raise _incompatible(path, src, ice)
    return type_to_arrow(ice)


def _list_like(t: pa.DataType) -> bool:
    return isinstance(
        t,
        (
            pa.ListType,
            pa.LargeListType,
            pa.FixedSizeListType,
            pa.ListViewType,
            pa.LargeListViewType,
        ),
    )


def _default_value(f: NestedField, path: str) -> tuple[Any, bool]:
    if f.write_default is None:
        return None, False
    if isinstance(f.field_type, StructType):
        return {}, True  # filled field by field from the children's own defaults

    try:
        return from_json(f.write_default, f.field_type), True
    except FrazilError as e:
        raise ValidationError(f"column {path!r}: invalid write-default: {e}") from None


def _plan_missing(f: NestedField, path: str) -> _Plan:
    default, has = _default_value(f, path)
    if f.required and not has:
        raise ValidationError(f"required column {path!r} is missing from the data")
    target = type_to_arrow(f.field_type, large_types=True)
    children: list[tuple[_Plan, int | None]] = []
    if isinstance(f.field_type, StructType) and has:
        children = [(_plan_missing(c, f"{path}.{c.name}"), None) for c in f.field_type.fields]
        target = pa.struct([_out_field(p) for p, _ in children])
    return _Plan(f, f.field_type, f.required, path, target, None, children, default, has)


def _out_field(p: _Plan) -> pa.Field:
    assert p.field is not None
    return pa.field(
        p.field.name, p.target, nullable=not p.required, metadata=_meta(p.field.field_id)
    )


def _match(arrow_fields: list[pa.Field], struct: StructType, path: str) -> dict[int, int]:
    """Table field id -> input child index, by field id where the input has one, else name."""
    by_id = {f.field_id: f for f in struct.fields}
    by_name = {f.name: f for f in struct.fields}
    out: dict[int, int] = {}
    for i, af in enumerate(arrow_fields):
        where = f"{path}{af.name}"
        try:
            fid = field_id_of(af)
        except FrazilError as e:
            raise ValidationError(f"column {where!r}: {e}") from None
        if fid is not None:
            target = by_id.get(fid)
            if target is None:
                raise ValidationError(
                    f"column {where!r} (field id {fid}) is not in the table schema"
                )
        else:
            target = by_name.get(af.name)
            if target is None:
                raise ValidationError(f"column {where!r} is not in the table schema")
        if target.field_id in out:
            raise ValidationError(
                f"column {path}{target.name!r} is given more than once in the data"
            )
        out[target.field_id] = i
    return out


def _plan_field(f: NestedField, src: pa.Field, path: str) -> _Plan:
    if f.required and pa.types.is_null(src.type):
        raise ValidationError(f"required column {path!r} has only nulls (Arrow type null)")
    plan = _plan_type(f.field_type, f.required, src.type, path)
    plan.field = f
    return plan


def _plan_type(ice: IcebergType, required: bool, src: pa.DataType, path: str) -> _Plan:
    t = _decoded(src)
    if pa.types.is_null(t) and not isinstance(ice, UnknownType):
        # All nulls: any optional type accepts it.
        target = type_to_arrow(ice, large_types=True)
        return _Plan(None, ice, required, path, target, src, [])
    if isinstance(ice, StructType):
        if not isinstance(t, pa.StructType):
            raise _incompatible(path, src, ice)
        arrow_children = [t.field(i) for i in range(t.num_fields)]
        matched = _match(arrow_children, ice, f"{path}.")
        children: list[tuple[_Plan, int | None]] = []
        for cf in ice.fields:
            cpath = f"{path}.{cf.name}"
            if cf.field_id in matched:
                idx = matched[cf.field_id]
                children.append((_plan_field(cf, arrow_children[idx], cpath), idx))
            else:
                children.append((_plan_missing(cf, cpath), None))
        kept = [(p, i) for p, i in children if not isinstance(p.ice, UnknownType)]
        target = pa.struct([_out_field(p) for p, _ in kept])
        return _Plan(None, ice, required, path, target, src, children)
    if isinstance(ice, ListType):
        if not _list_like(t):
            raise _incompatible(path, src, ice)
        epath = f"{path}.element"
        element = _plan_type(ice.element_type, ice.element_required, t.value_type, epath)
        efield = pa.field(
            "element", element.target, not ice.element_required, metadata=_meta(ice.element_id)
        )
        target = pa.list_(efield) if isinstance(t, pa.ListType) else pa.large_list(efield)
        return _Plan(None, ice, required, path, target, src, [(element, 0)])
    if isinstance(ice, MapType):
        if not isinstance(t, pa.MapType):
            raise _incompatible(path, src, ice)
        key = _plan_type(ice.key_type, True, t.key_type, f"{path}.key")
        value = _plan_type(ice.value_type, ice.value_required, t.item_type, f"{path}.value")
        target = pa.map_(
            pa.field("key", key.target, False, metadata=_meta(ice.key_id)),
            pa.field("value", value.target, not ice.value_required, metadata=_meta(ice.value_id)),
        )
        return _Plan(None, ice, required, path, target, src, [(key, 0), (value, 1)])
    if isinstance(ice, VariantType):  # a struct of binaries in Arrow
        return _Plan(None, ice, required, path, _primitive_target(src, ice, path), src, [])
    if isinstance(t, (pa.StructType, pa.MapType)) or _list_like(t):
        raise _incompatible(path, src, ice)
    return _Plan(None, ice, required, path, _primitive_target(src, ice, path), src, [])


def _mark_checks(p: _Plan) -> bool:
    below = [_mark_checks(c) for c, _ in p.children]
    p.needs_check = p.required or any(below)
    return p.needs_check


# ---------------------------------------------------------------------------------------------
# Conversion


def _fill(p: _Plan, n: int) -> pa.Array:
    """A missing column: its write default, or nulls."""
    if not p.has_default:
        return pa.nulls(n, p.target)
    if isinstance(p.ice, StructType):
        kept = [c for c, _ in p.children if not isinstance(c.ice, UnknownType)]
        return pa.StructArray.from_arrays(
            [_fill(c, n) for c in kept], fields=[_out_field(c) for c in kept]
        )
    try:
        scalar = pa.scalar(p.default, type=p.target)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as e:
        raise ValidationError(f"column {p.path!r}: invalid write-default: {e}") from None
    return pa.repeat(scalar, n)


def _nulls_where_valid(arr: pa.Array, valid: pa.Array | None) -> int:
    if arr.null_count == 0:
        return 0
    if valid is None:
        return int(arr.null_count)
    return pc.sum(pc.and_(arr.is_null(), valid)).as_py() or 0


def _cast(arr: pa.Array, target: pa.DataType, p: _Plan, downcast: bool) -> pa.Array:
    if arr.type == target:
        return arr
    src = arr.type
    if isinstance(p.ice, UUIDType) and pa.types.is_fixed_size_binary(src):
        return pa.ExtensionArray.from_storage(target, arr)
    if isinstance(src, pa.BaseExtensionType) and not isinstance(p.ice, UUIDType):
        # geoarrow.wkb (geo) or a variant extension: their storage is what is written.
        return _cast(arr.storage, target, p, downcast)
    try:
        if (
            pa.types.is_timestamp(src)
            and src.unit == "ns"
            and pa.types.is_timestamp(target)
            and target.unit == "us"
        ):
            try:
                return arr.cast(target, safe=True)
            except pa.ArrowInvalid:
                if not downcast:
                    raise ValidationError(
                        f"column {p.path!r} has nanosecond timestamps that do not fit the "
                        f"table's microsecond {p.ice} without losing precision; set "
                        "downcast-ns-timestamp-to-us-on-write to truncate them"
                    ) from None
                return arr.cast(target, safe=False)
        return arr.cast(target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise ValidationError(
            f"column {p.path!r}: cannot write {src} values as {p.ice}: {e}"
        ) from None


def _convert(arr: pa.Array, p: _Plan, valid: pa.Array | None, downcast: bool) -> pa.Array:
    """``arr`` (an input column or child) as ``p.target``; ``valid`` marks where its parents
    are non-null (for the required checks; ``None``: everywhere)."""
    if p.required and arr.null_count:
        bad = _nulls_where_valid(arr, valid)
        if bad:
            raise ValidationError(
                f"required column {p.path!r} has {bad} null value{'s' if bad > 1 else ''}"
            )
    if isinstance(arr.type, pa.DictionaryType):
        arr = arr.dictionary_decode()
    if pa.types.is_null(arr.type):
        return pa.nulls(len(arr), p.target)
    if isinstance(p.ice, UnknownType):
        if arr.null_count != len(arr):
            raise ValidationError(f"column {p.path!r} is of type unknown and must be all null")
        return pa.nulls(len(arr), p.target)
    if isinstance(p.ice, StructType):
        return _convert_struct(arr, p, valid, downcast)
    if isinstance(p.ice, ListType):
        return _convert_list(arr, p, valid, downcast)
    if isinstance(p.ice, MapType):
        return _convert_map(arr, p, valid, downcast)
    return _cast(arr, p.target, p, downcast)


def _child_valid(arr: pa.Array, valid: pa.Array | None) -> pa.Array | None:
    if arr.null_count == 0:
        return valid
    own = arr.is_valid()
    return own if valid is None else pc.and_(own, valid)


def _convert_struct(arr: pa.Array, p: _Plan, valid: pa.Array | None, downcast: bool) -> pa.Array:
    n = len(arr)
    inner_valid = _child_valid(arr, valid) if p.needs_check else None
    children, fields = [], []
    for c, idx in p.children:
        if isinstance(c.ice, UnknownType):
            continue
        if idx is None:
            children.append(_fill(c, n))
        else:
            children.append(_convert(arr.field(idx), c, inner_valid, downcast))
        fields.append(_out_field(c))
    mask = pc.invert(arr.is_valid()) if arr.null_count else None
    return pa.StructArray.from_arrays(children, fields=fields, mask=mask)


def _flat(arr: pa.Array) -> tuple[pa.Array, pa.Array]:
    """(offsets from 0, values) of a list or map array, null entries made empty so that the
    values are exactly those of the non-null entries (a map's values: its entry structs)."""
    offsets = arr.offsets  # absolute into the full child, for sliced arrays too
    if arr.null_count:
        mask = pc.invert(arr.is_valid())
        cls = pa.ListArray if offsets.type == pa.int32() else pa.LargeListArray
        # from_arrays wants unsliced offsets when given a mask
        view = cls.from_arrays(pa.concat_arrays([offsets]), arr.values, mask=mask)
        lengths = pc.fill_null(pc.list_value_length(view), 0).cast(offsets.type)
        zero = pa.array([0], offsets.type)
        return pa.concat_arrays([zero, pc.cumulative_sum(lengths)]), pc.list_flatten(view)
    start, end = offsets[0].as_py(), offsets[-1].as_py()
    if start:
        offsets = pc.subtract(offsets, pa.scalar(start, offsets.type))
    return offsets, arr.values.slice(start, end - start)


def _convert_list(arr: pa.Array, p: _Plan, valid: pa.Array | None, downcast: bool) -> pa.Array:
    ((element, _),) = p.children
    if not isinstance(arr.type, (pa.ListType, pa.LargeListType)):
        arr = arr.cast(pa.large_list(arr.type.value_field))
    offsets, values = _flat(arr)
    new_values = _convert(values, element, None, downcast)
    mask = pc.invert(arr.is_valid()) if arr.null_count else None
    cls = pa.ListArray if isinstance(p.target, pa.ListType) else pa.LargeListArray
    return cls.from_arrays(offsets, new_values, type=p.target, mask=mask)


def _convert_map(arr: pa.Array, p: _Plan, valid: pa.Array | None, downcast: bool) -> pa.Array:
    (key, _), (value, _) = p.children
    offsets, entries = _flat(arr)
    new_keys = _convert(entries.field(0), key, None, downcast)
    new_items = _convert(entries.field(1), value, None, downcast)
    mask = pc.invert(arr.is_valid()) if arr.null_count else None
    return pa.MapArray.from_arrays(offsets, new_keys, new_items, type=p.target, mask=mask)


# ---------------------------------------------------------------------------------------------
# Public


@dataclass
class ConformedInput:
    """The output schema and the conversion of each input batch to it."""

    arrow_schema: pa.Schema
    convert: Callable[[pa.RecordBatch], pa.RecordBatch]


def conform(
    arrow_schema: pa.Schema,
    schema: Schema,
    *,
    downcast_ns_timestamp_to_us: bool | None = None,
) -> ConformedInput:
    """Checks an input schema against the table ``schema`` (unknown columns, missing required
    columns, incompatible types) and returns the conversion of its batches (casts, defaults,
    required-null checks). Errors are :class:`ValidationError` naming the column."""
    downcast = (
        _downcast_default() if downcast_ns_timestamp_to_us is None else downcast_ns_timestamp_to_us
    )
    inputs = list(arrow_schema)
    names = [f.name for f in inputs]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise ValidationError(f"column {dup!r} is given more than once in the data")
    matched = _match(inputs, schema.as_struct(), "")
    plans: list[tuple[_Plan, int | None]] = []
    for f in schema.fields:
        if f.field_id in matched:
            idx = matched[f.field_id]
            plans.append((_plan_field(f, inputs[idx], f.name), idx))
        else:
            plans.append((_plan_missing(f, f.name), None))
    for p, _ in plans:
        _mark_checks(p)
    kept = [(p, i) for p, i in plans if not isinstance(p.ice, UnknownType)]
    out_schema = pa.schema([_out_field(p) for p, _ in kept])
    # Input columns of unknown type must still be all null.
    unknown = [(p, i) for p, i in plans if isinstance(p.ice, UnknownType) and i is not None]

    def convert(batch: pa.RecordBatch) -> pa.RecordBatch:
        n = batch.num_rows
        for p, i in unknown:
            _convert(batch.column(i), p, None, downcast)
        arrays = [
            _fill(p, n) if i is None else _convert(batch.column(i), p, None, downcast)
            for p, i in kept
        ]
        return pa.RecordBatch.from_arrays(arrays, schema=out_schema)

    return ConformedInput(out_schema, convert)
