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

import json
from typing import Any

from frazil import _native
from frazil.exceptions import DecodeError, InvalidArgumentError
from frazil.types import IcebergType, as_type
from frazil.values.native import from_native, to_native

__all__ = [
    "from_bytes",
    "from_json",
    "iso_date_days",
    "iso_time_nanos",
    "iso_timestamp_nanos",
    "to_bytes",
    "to_json",
]


def to_bytes(value: Any, type: IcebergType | str) -> bytes:
    """Binary single-value serialization of ``value`` as an Iceberg ``type``."""
    t = as_type(type)
    return _native.value_to_bytes(to_native(value, t), t.json_text())


def from_bytes(data: bytes, type: IcebergType | str) -> Any:
    """Reads a binary single value. A 4-byte bound of a ``long``, ``double``, ``timestamp`` or
    ``timestamp_ns`` column is read as the ``int``, ``float`` or ``date`` it was written as."""
    t = as_type(type)
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InvalidArgumentError(f"expected bytes, got {data.__class__.__name__}")
    return from_native(_native.value_from_bytes(bytes(data), t.json_text()), t)


def to_json(value: Any, type: IcebergType | str) -> Any:
    """JSON single-value serialization: returns a JSON-compatible object (``json.dumps``-able)."""
    t = as_type(type)
    return json.loads(_native.value_to_json(to_native(value, t), t.json_text()))


def from_json(obj: Any, type: IcebergType | str) -> Any:
    """Reads a JSON single value: ``obj`` is the parsed JSON (``"14.20"``, ``{"1": 2}``, ...)."""
    t = as_type(type)
    try:
        text = json.dumps(obj, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise DecodeError(f"not a JSON value: {obj!r} ({e})") from None
    return from_native(_native.value_from_json(text, t.json_text()), t)


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
