"""Single values and their serializations (spec Appendix D).

``to_bytes``/``from_bytes`` are the binary form used for manifest bounds; ``to_json``/``from_json``
the JSON form used for defaults and in table metadata. The codecs run in the native core; this
module only converts between natural Python objects and the core's canonical forms.

Python values by Iceberg type:

================================  ===========================================================
boolean                           ``bool``
int, long                         ``int``
float, double                     ``float``
decimal(P, S)                     ``decimal.Decimal`` (an ``int`` is taken as a whole number)
date                              ``datetime.date``
time                              ``datetime.time`` (no tzinfo)
timestamp                         naive ``datetime.datetime``
timestamptz                       aware ``datetime.datetime``; read back in UTC
timestamp_ns, timestamptz_ns      ``int`` nanoseconds from the epoch (a ``datetime`` is also
                                  accepted on input); Python's datetime cannot hold nanoseconds
string                            ``str``
uuid                              ``uuid.UUID``
fixed(L), binary                  ``bytes``
struct                            ``dict`` by field name (or a sequence in field order)
list                              ``list``
map                               ``dict`` (or a sequence of ``(key, value)`` pairs)
================================  ===========================================================
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from frazil import _native
from frazil.exceptions import DecodeError, InvalidArgumentError, UnsupportedError
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
    as_type,
)

__all__ = [
    "from_bytes",
    "from_json",
    "iso_date_days",
    "iso_time_nanos",
    "iso_timestamp_nanos",
    "to_bytes",
    "to_json",
]

_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_MICROS_PER_DAY = 86_400_000_000


def to_bytes(value: Any, type: IcebergType | str) -> bytes:
    """Binary single-value serialization of ``value`` as an Iceberg ``type``."""
    t = as_type(type)
    return _native.value_to_bytes(_to_native(value, t), t.json_text())


def from_bytes(data: bytes, type: IcebergType | str) -> Any:
    """Reads a binary single value. A 4-byte bound of a ``long``, ``double``, ``timestamp`` or
    ``timestamp_ns`` column is read as the ``int``, ``float`` or ``date`` it was written as."""
    t = as_type(type)
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InvalidArgumentError(f"expected bytes, got {data.__class__.__name__}")
    return _from_native(_native.value_from_bytes(bytes(data), t.json_text()), t)


def to_json(value: Any, type: IcebergType | str) -> Any:
    """JSON single-value serialization: returns a JSON-compatible object (``json.dumps``-able)."""
    t = as_type(type)
    return json.loads(_native.value_to_json(_to_native(value, t), t.json_text()))


def from_json(obj: Any, type: IcebergType | str) -> Any:
    """Reads a JSON single value: ``obj`` is the parsed JSON (``"14.20"``, ``{"1": 2}``, ...)."""
    t = as_type(type)
    try:
        text = json.dumps(obj, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise DecodeError(f"not a JSON value: {obj!r} ({e})") from None
    return _from_native(_native.value_from_json(text, t.json_text()), t)


def iso_date_days(text: str) -> int:
    """Days from the epoch of ISO-8601 date text (``[±]YYYY-MM-DD``, Java's ``ISO_LOCAL_DATE``;
    surrounding whitespace ignored), as expression literals are read. Raises
    :class:`~frazil.exceptions.ParseError`."""
    return _native.value_parse_date_literal(_text(text))


def iso_time_nanos(text: str) -> int:
    """Nanoseconds of the day of ISO-8601 time text (``HH:MM[:SS[.fffffffff]]``, Java's
    ``ISO_LOCAL_TIME``)."""
    return _native.value_parse_time_literal(_text(text))


def iso_timestamp_nanos(text: str, with_zone: bool) -> int:
    """Nanoseconds from the epoch (UTC) of ISO-8601 timestamp text: Java's
    ``ISO_LOCAL_DATE_TIME`` (``with_zone=False``) or ``ISO_DATE_TIME`` with an offset (``Z`` or
    ``±HH:MM[:SS]``, required exactly when ``with_zone``), a space allowed for the ``T`` and a
    date alone read as its midnight; fractions to nanoseconds."""
    return _native.value_parse_timestamp_literal(_text(text), with_zone)


def _text(text: Any) -> str:
    if not isinstance(text, str):
        raise InvalidArgumentError(f"expected ISO-8601 text, got {text!r}")
    return text


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
        return _micros_of(value - _EPOCH_UTC)
    if value.tzinfo is not None:
        raise _fail(value, t, "a timestamp without zone needs a naive datetime")
    return _micros_of(value - _EPOCH)


def _bytes_of(value: Any, t: IcebergType) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise _fail(value, t, "expected bytes")


def _to_native(value: Any, t: IcebergType) -> Any:
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
        return (value - _EPOCH_DATE).days
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
        return [_to_native(v, f.field_type) for v, f in zip(items, t.fields, strict=True)]
    if isinstance(t, ListType):
        if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
            raise InvalidArgumentError(f"a list value must be a sequence: {value!r}")
        return [_to_native(v, t.element_type) for v in value]
    if isinstance(t, MapType):
        pairs = value.items() if isinstance(value, Mapping) else value
        return [(_to_native(k, t.key_type), _to_native(v, t.value_type)) for k, v in pairs]
    raise UnsupportedError(f"no single values for type {t}")  # pragma: no cover


def _from_native(obj: Any, t: IcebergType) -> Any:
    """The core's canonical form -> natural Python value."""
    if obj is None:
        return None
    try:
        if isinstance(t, DecimalType):
            return _decimal_from_unscaled(obj, t.scale)
        if isinstance(t, DateType):
            return _EPOCH_DATE + dt.timedelta(days=obj)
        if isinstance(t, TimeType):
            seconds, micros = divmod(obj, 1_000_000)
            return dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60, micros)
        if isinstance(t, TimestampType):
            return _EPOCH + dt.timedelta(microseconds=obj)
        if isinstance(t, TimestamptzType):
            return _EPOCH_UTC + dt.timedelta(microseconds=obj)
    except OverflowError:
        raise UnsupportedError(
            f"{t} value {obj} is outside the range of Python's datetime module"
        ) from None
    if isinstance(t, UUIDType):
        return uuid.UUID(bytes=obj)
    if isinstance(t, StructType):
        return {f.name: _from_native(v, f.field_type) for v, f in zip(obj, t.fields, strict=True)}
    if isinstance(t, ListType):
        return [_from_native(v, t.element_type) for v in obj]
    if isinstance(t, MapType):
        pairs = [(_from_native(k, t.key_type), _from_native(v, t.value_type)) for k, v in obj]
        try:
            return dict(pairs)
        except TypeError:  # unhashable keys (structs, lists) stay pairs
            return pairs
    return obj
