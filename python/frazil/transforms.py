"""Partition transforms (spec "Partition Transforms"), over whole Arrow arrays.

Inputs are anything that speaks the Arrow PyCapsule interface (pyarrow arrays and chunked
arrays, Polars series, ...); outputs are pyarrow arrays, built without copying from the native
kernels' buffers. ``bucket``, ``year``, ``month``, ``day`` and ``hour`` return int32;
``truncate`` returns int32 for 8- to 32-bit integers, int64 for 64-bit ones, and the input's own
layout for decimals, strings and binaries; ``identity`` and ``void`` keep the input's type.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pyarrow as pa

from frazil import _native
from frazil._json import java_double
from frazil.exceptions import InvalidArgumentError
from frazil.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
    as_type,
    type_from_json,
)
from frazil.values.native import EPOCH, EPOCH_DATE, from_native, to_native

__all__ = [
    "BucketTransform",
    "DayTransform",
    "HourTransform",
    "IdentityTransform",
    "MonthTransform",
    "Transform",
    "TruncateTransform",
    "VoidTransform",
    "YearTransform",
    "bucket",
    "day",
    "hour",
    "human_string",
    "identity",
    "month",
    "parse",
    "truncate",
    "void",
    "year",
]

ArrowArrayLike = Any  # pa.Array | pa.ChunkedArray | anything with __arrow_c_array__/_stream__


class Transform:
    """One partition transform, e.g. ``parse("bucket[16]")``."""

    __slots__ = ("_spec",)

    def __init__(self, spec: str) -> None:
        self._spec = _native.transform_parse(spec)

    def __str__(self) -> str:
        return self._spec

    def __repr__(self) -> str:
        return f"Transform({self._spec!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Transform) and other._spec == self._spec

    def __hash__(self) -> int:
        return hash(self._spec)

    @property
    def preserves_order(self) -> bool:
        """Whether ``a <= b`` implies ``t(a) <= t(b)``."""
        return _native.transform_preserves_order(self._spec)

    def can_transform(self, source_type: IcebergType | str) -> bool:
        return _native.transform_can_transform(self._spec, as_type(source_type).json_text())

    def result_type(self, source_type: IcebergType | str) -> IcebergType:
        """The Iceberg type of the partition values, e.g. ``date`` for ``day``."""
        text = _native.transform_result_type(self._spec, as_type(source_type).json_text())
        return type_from_json(json.loads(text))

    def apply(self, values: ArrowArrayLike) -> pa.Array | pa.ChunkedArray:
        """Transforms every value of an Arrow array; nulls stay null. A chunked array (or any
        ``__arrow_c_stream__``) gives a chunked array back."""
        if hasattr(values, "__arrow_c_array__"):
            return pa.array(_native.transform_apply(self._spec, values))
        if hasattr(values, "__arrow_c_stream__"):
            out = _native.transform_apply_stream(self._spec, values)
            return pa.chunked_array(
                [pa.array(c) for c in out.chunks], type=pa.array(out.empty).type
            )
        raise InvalidArgumentError(
            "expected an Arrow array (an object with __arrow_c_array__ or __arrow_c_stream__), "
            f"got {type(values).__name__}"
        )

    def apply_scalar(self, value: Any, source_type: IcebergType | str) -> Any:
        """Transforms one Python value of an Iceberg type (see :mod:`frazil.values`)."""
        source = as_type(source_type)
        out = _native.transform_apply_scalar(
            self._spec, to_native(value, source), source.json_text()
        )
        return from_native(out, self.result_type(source))

    def __call__(self, values: ArrowArrayLike) -> pa.Array | pa.ChunkedArray:
        return self.apply(values)


# PyIceberg's transform classes (same names and constructor arguments), so a spec or sort order
# written for PyIceberg builds unchanged. Each is a Transform: equal to, and hashing as, the
# parsed string form (``BucketTransform(16) == parse("bucket[16]")``).


class IdentityTransform(Transform):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("identity")

    def __repr__(self) -> str:
        return "IdentityTransform()"


class BucketTransform(Transform):
    __slots__ = ()

    def __init__(self, num_buckets: int) -> None:
        self._spec = _native.transform_bucket(num_buckets)

    @property
    def num_buckets(self) -> int:
        return int(self._spec[len("bucket[") : -1])

    def __repr__(self) -> str:
        return f"BucketTransform(num_buckets={self.num_buckets})"


class TruncateTransform(Transform):
    __slots__ = ()

    def __init__(self, width: int) -> None:
        self._spec = _native.transform_truncate(width)

    @property
    def width(self) -> int:
        return int(self._spec[len("truncate[") : -1])

    def __repr__(self) -> str:
        return f"TruncateTransform(width={self.width})"


class YearTransform(Transform):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("year")

    def __repr__(self) -> str:
        return "YearTransform()"


class MonthTransform(Transform):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("month")

    def __repr__(self) -> str:
        return "MonthTransform()"


class DayTransform(Transform):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("day")

    def __repr__(self) -> str:
        return "DayTransform()"


class HourTransform(Transform):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("hour")

    def __repr__(self) -> str:
        return "HourTransform()"


class VoidTransform(Transform):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("void")

    def __repr__(self) -> str:
        return "VoidTransform()"


_PLAIN: dict[str, Callable[[], Transform]] = {
    "identity": IdentityTransform,
    "year": YearTransform,
    "month": MonthTransform,
    "day": DayTransform,
    "hour": HourTransform,
    "void": VoidTransform,
}


def typed(transform: Transform) -> Transform:
    """The same transform as an instance of its PyIceberg-named class."""
    spec = transform._spec
    plain = _PLAIN.get(spec)
    if plain is not None:
        return plain()
    if spec.startswith("bucket["):
        return BucketTransform(int(spec[len("bucket[") : -1]))
    if spec.startswith("truncate["):
        return TruncateTransform(int(spec[len("truncate[") : -1]))
    return transform


def parse(text: str) -> Transform:
    """Parses a transform string: ``identity``, ``bucket[N]``, ``truncate[W]``, ``year``,
    ``month``, ``day``, ``hour`` or ``void``; the result is one of the classes above."""
    if not isinstance(text, str):
        raise InvalidArgumentError(f"a transform string must be a str, got {text!r}")
    return typed(Transform(text))


def bucket(n: int, values: ArrowArrayLike) -> pa.Array | pa.ChunkedArray:
    """``bucket[n]``: Murmur3 hash of each value, modulo ``n`` (int32)."""
    return Transform(_native.transform_bucket(n)).apply(values)


def truncate(w: int, values: ArrowArrayLike) -> pa.Array | pa.ChunkedArray:
    """``truncate[w]``: integers and decimals floored to a multiple of ``w``, strings to ``w``
    code points, binaries to ``w`` bytes."""
    return Transform(_native.transform_truncate(w)).apply(values)


def year(values: ArrowArrayLike) -> pa.Array | pa.ChunkedArray:
    """Years from 1970 of dates or timestamps (int32)."""
    return _YEAR.apply(values)


def month(values: ArrowArrayLike) -> pa.Array | pa.ChunkedArray:
    """Months from 1970-01 of dates or timestamps (int32)."""
    return _MONTH.apply(values)


def day(values: ArrowArrayLike, *, as_date: bool = False) -> pa.Array | pa.ChunkedArray:
    """Days from 1970-01-01 of dates or timestamps: int32, or date32 with ``as_date=True``
    (the spec's result type is ``date``; readers accept both)."""
    out = _DAY.apply(values)
    return out.cast(pa.date32()) if as_date else out


def hour(values: ArrowArrayLike) -> pa.Array | pa.ChunkedArray:
    """Hours from 1970-01-01T00:00 of timestamps (int32)."""
    return _HOUR.apply(values)


def identity(values: ArrowArrayLike) -> pa.Array | pa.ChunkedArray:
    """The values themselves (checked to be of a type identity can partition by)."""
    return _IDENTITY.apply(values)


def void(values: ArrowArrayLike) -> pa.Array | pa.ChunkedArray:
    """All nulls, of the input's type."""
    return _VOID.apply(values)


_YEAR = Transform("year")
_MONTH = Transform("month")
_DAY = Transform("day")
_HOUR = Transform("hour")
_IDENTITY = Transform("identity")
_VOID = Transform("void")


# ---------------------------------------------------------------------------------------------
# Human strings (Java's Transform.toHumanString), as partition paths and metadata tables show
# partition values


def _java_fraction(nanos: int) -> str:
    if nanos == 0:
        return ""
    if nanos % 1_000_000 == 0:
        return f".{nanos // 1_000_000:03d}"
    if nanos % 1000 == 0:
        return f".{nanos // 1000:06d}"
    return f".{nanos:09d}"


def _java_time(hour: int, minute: int, second: int, nanos: int) -> str:
    # LocalTime.toString: seconds only when seconds or fraction are non-zero.
    out = f"{hour:02d}:{minute:02d}"
    if second or nanos:
        out += f":{second:02d}{_java_fraction(nanos)}"
    return out


def _java_date(days: int) -> str:
    d = EPOCH_DATE + dt.timedelta(days=days)
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


def _iso_local_datetime(nanos: int) -> str:
    # DateTimeFormatter.ISO_LOCAL_DATE_TIME, as Iceberg 1.10's human strings use it: seconds
    # always, a fraction only when non-zero and without trailing zeros (unlike toString).
    days, rem = divmod(nanos, 86_400_000_000_000)
    secs, frac = divmod(rem, 1_000_000_000)
    h, rest = divmod(secs, 3600)
    m, s = divmod(rest, 60)
    fraction = f".{frac:09d}".rstrip("0") if frac else ""
    return f"{_java_date(days)}T{h:02d}:{m:02d}:{s:02d}{fraction}"


def _java_decimal(unscaled: int, scale: int) -> str:
    # BigDecimal.toString: plain unless the scale is negative or the exponent below -6.
    sign = "-" if unscaled < 0 else ""
    digits = str(abs(unscaled))
    adjusted = len(digits) - 1 - scale
    if scale >= 0 and adjusted >= -6:
        if scale == 0:
            return sign + digits
        digits = digits.rjust(scale + 1, "0")
        return f"{sign}{digits[:-scale]}.{digits[-scale:]}"
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mantissa}E{'+' if adjusted > 0 else ''}{adjusted}"


def _storage(value: Any, t: IcebergType) -> Any:
    """Partition values come as pyarrow's Python objects; the time types as counts."""
    if isinstance(t, DateType) and isinstance(value, dt.date):
        return (value - EPOCH_DATE).days
    if isinstance(t, TimeType) and isinstance(value, dt.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + (
            value.microsecond
        )
    if isinstance(t, (TimestampType, TimestamptzType)) and isinstance(value, dt.datetime):
        naive = value.astimezone(dt.timezone.utc).replace(tzinfo=None) if value.tzinfo else value
        delta = naive - EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(t, (TimestampNanoType, TimestamptzNanoType)) and not isinstance(value, int):
        if hasattr(value, "value"):  # pandas.Timestamp
            return int(value.value)
        return _storage(value, TimestampType()) * 1000
    return value


def human_string(transform: str, result_type: IcebergType, value: Any) -> str:
    """``Transform.toHumanString`` of one partition value of ``result_type``."""
    if value is None:
        return "null"
    if transform == "year":
        return f"{1970 + value:04d}"
    if transform == "month":
        y, m = divmod(value, 12)
        return f"{1970 + y:04d}-{m + 1:02d}"
    if transform == "day":
        return _java_date(_storage(value, DateType()))
    if transform == "hour":
        days, h = divmod(value, 24)
        return f"{_java_date(days)}-{h:02d}"
    if transform.startswith("bucket"):
        return str(value)
    t = result_type
    value = _storage(value, t)
    if isinstance(t, BooleanType):
        return "true" if value else "false"
    if isinstance(t, DateType):
        return _java_date(value)
    if isinstance(t, TimeType):
        secs, micros = divmod(value, 1_000_000)
        h, rest = divmod(secs, 3600)
        return _java_time(h, rest // 60, rest % 60, micros * 1000)
    if isinstance(t, TimestampType):
        return _iso_local_datetime(value * 1000)
    if isinstance(t, TimestamptzType):
        return _iso_local_datetime(value * 1000) + "+00:00"
    if isinstance(t, TimestampNanoType):
        return _iso_local_datetime(value)
    if isinstance(t, TimestamptzNanoType):
        return _iso_local_datetime(value) + "+00:00"
    if isinstance(t, (FloatType, DoubleType)):
        return java_double(float(value), isinstance(t, FloatType))
    if isinstance(t, DecimalType):
        if isinstance(value, Decimal):
            sign, digits, _ = value.as_tuple()
            unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
            shift = -int(value.as_tuple().exponent) - t.scale
            unscaled = unscaled * 10**-shift if shift < 0 else unscaled // 10**shift
            return _java_decimal(unscaled, t.scale)
        return _java_decimal(int(value), t.scale)
    if isinstance(t, (BinaryType, FixedType)):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(t, UUIDType):
        return str(value if isinstance(value, uuid.UUID) else uuid.UUID(bytes=bytes(value)))
    if isinstance(t, StringType):
        return str(value)
    return str(value)
