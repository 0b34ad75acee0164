"""Natural Python values <-> the native core's canonical forms (the table of Python values by
Iceberg type is in :mod:`frazil.values`).

These are the conversions every call into the core's value codecs and transforms makes on its
way in and out; :mod:`frazil.values`, :mod:`frazil.transforms` and expression literals share
them.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from frazil.exceptions import InvalidArgumentError, UnsupportedError
from frazil.types import (
    BinaryType,
    BooleanType,
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
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
)

__all__ = ["EPOCH", "EPOCH_DATE", "EPOCH_UTC", "from_native", "to_native"]

# The epoch, for every conversion between Python dates and times and Iceberg's counts.
EPOCH_DATE = dt.date(1970, 1, 1)
EPOCH = dt.datetime(1970, 1, 1)
EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def _fail(value: Any, t: IcebergType, why: str = "") -> InvalidArgumentError:
    suffix = f": {why}" if why else ""
    return InvalidArgumentError(f"{value!r} is not a valid {t} value{suffix}")


def _decimal_unscaled(value: Any, t: DecimalType) -> int:
    if isinstance(value, bool) or not isinstance(value, (Decimal, int)):
        raise _fail(value, t, "expected a decimal.Decimal")
    d = Decimal(value)
    if not d.is_finite():
        raise _fail(value, t, "not a finite number")
    sign, digits, exponent = d.as_tuple()
    unscaled = int("".join(map(str, digits)) or "0")
    shift = int(exponent) + t.scale
    # Bound the work before any power of ten: a hostile exponent (1E+999999999) must fail fast.
    if unscaled and len(digits) + shift > t.precision:
        raise _fail(value, t, f"it has more than {t.precision} digits")
    if shift >= 0:
        unscaled *= 10 ** min(shift, t.precision)
    elif -shift > len(digits):
        if unscaled:
            raise _fail(value, t, f"it has more than {t.scale} digits after the point")
    else:
        unscaled, rest = divmod(unscaled, 10**-shift)
        if rest:
            raise _fail(value, t, f"it has more than {t.scale} digits after the point")
    return -unscaled if sign else unscaled


def _decimal_from_unscaled(unscaled: int, scale: int) -> Decimal:
    digits = tuple(int(c) for c in str(abs(unscaled)))
    return Decimal((1 if unscaled < 0 else 0, digits, -scale))


def _micros_of(delta: dt.timedelta) -> int:
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _timestamp_micros(value: Any, t: IcebergType, with_zone: bool) -> int:
    if not isinstance(value, dt.datetime):
        raise _fail(value, t, "expected a datetime.datetime")
    if with_zone:
        if value.tzinfo is None or value.utcoffset() is None:
            raise _fail(value, t, "a timestamptz needs an aware datetime (e.g. tzinfo=UTC)")
        return _micros_of(value - EPOCH_UTC)
    if value.tzinfo is not None:
        raise _fail(value, t, "a timestamp without zone needs a naive datetime")
    return _micros_of(value - EPOCH)


def _bytes_of(value: Any, t: IcebergType) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise _fail(value, t, "expected bytes")


def to_native(value: Any, t: IcebergType) -> Any:
    """Natural Python value -> the core's canonical form (see the module docstring)."""
    if value is None:
        return None
    if isinstance(t, BooleanType):
        if not isinstance(value, bool):
            raise _fail(value, t, "expected a bool")
        return value
    if isinstance(t, (IntegerType, LongType)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(value, t, "expected an int")
        return value
    if isinstance(t, (FloatType, DoubleType)):
        if isinstance(value, bool) or not isinstance(value, (float, int)):
            raise _fail(value, t, "expected a float")
        try:
            return float(value)
        except OverflowError:
            raise _fail(value, t, "too large for a float") from None
    if isinstance(t, DecimalType):
        return _decimal_unscaled(value, t)
    if isinstance(t, DateType):
        if isinstance(value, dt.datetime) or not isinstance(value, dt.date):
            raise _fail(value, t, "expected a datetime.date")
        return (value - EPOCH_DATE).days
    if isinstance(t, TimeType):
        if not isinstance(value, dt.time) or value.tzinfo is not None:
            raise _fail(value, t, "expected a datetime.time without tzinfo")
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + (
            value.microsecond
        )
    if isinstance(t, (TimestampType, TimestamptzType)):
        return _timestamp_micros(value, t, isinstance(t, TimestamptzType))
    if isinstance(t, (TimestampNanoType, TimestamptzNanoType)):
        if isinstance(value, dt.datetime):
            return _timestamp_micros(value, t, isinstance(t, TimestamptzNanoType)) * 1000
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(value, t, "expected int nanoseconds from the epoch or a datetime")
        return value
    if isinstance(t, StringType):
        if not isinstance(value, str):
            raise _fail(value, t, "expected a str")
        return value
    if isinstance(t, UUIDType):
        if not isinstance(value, uuid.UUID):
            raise _fail(value, t, "expected a uuid.UUID")
        return value.bytes
    if isinstance(t, (FixedType, BinaryType)):
        return _bytes_of(value, t)
    if isinstance(t, UnknownType):
        raise _fail(value, t, "unknown-typed values are always null")
    if isinstance(t, StructType):
        if isinstance(value, Mapping):
            names = {f.name for f in t.fields}
            extra = set(value) - names
            if extra:
                raise _fail(value, t, f"no fields named {sorted(extra)}")
            items = [value.get(f.name) for f in t.fields]
        elif isinstance(value, (list, tuple)):
            items = list(value)
        else:
            raise InvalidArgumentError(f"a struct value must be a dict or a sequence: {value!r}")
        if len(items) != len(t.fields):
            raise InvalidArgumentError(
                f"struct value has {len(items)} fields, its type has {len(t.fields)}"
            )
        return [to_native(v, f.field_type) for v, f in zip(items, t.fields, strict=True)]
    if isinstance(t, ListType):
        if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
            raise InvalidArgumentError(f"a list value must be a sequence: {value!r}")
        return [to_native(v, t.element_type) for v in value]
    if isinstance(t, MapType):
        pairs = value.items() if isinstance(value, Mapping) else value
        return [(to_native(k, t.key_type), to_native(v, t.value_type)) for k, v in pairs]
    raise UnsupportedError(f"no single values for type {t}")  # pragma: no cover


def from_native(obj: Any, t: IcebergType) -> Any:
    """The core's canonical form -> natural Python value."""
    if obj is None:
        return None
    try:
        if isinstance(t, DecimalType):
            return _decimal_from_unscaled(obj, t.scale)
        if isinstance(t, DateType):
            return EPOCH_DATE + dt.timedelta(days=obj)
        if isinstance(t, TimeType):
            seconds, micros = divmod(obj, 1_000_000)
            return dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60, micros)
        if isinstance(t, TimestampType):
            return EPOCH + dt.timedelta(microseconds=obj)
        if isinstance(t, TimestamptzType):
            return EPOCH_UTC + dt.timedelta(microseconds=obj)
    except OverflowError:
        raise UnsupportedError(
            f"{t} value {obj} is outside the range of Python's datetime module"
        ) from None
    if isinstance(t, UUIDType):
        return uuid.UUID(bytes=obj)
    if isinstance(t, StructType):
        return {f.name: from_native(v, f.field_type) for v, f in zip(obj, t.fields, strict=True)}
    if isinstance(t, ListType):
        return [from_native(v, t.element_type) for v in obj]
    if isinstance(t, MapType):
        pairs = [(from_native(k, t.key_type), from_native(v, t.value_type)) for k, v in obj]
        try:
            return dict(pairs)
        except TypeError:  # unhashable keys (structs, lists) stay pairs
            return pairs
    return obj
