"""Parity of frazil's partition transforms and single-value codecs with the Java reference.

The reference is Apache Iceberg 1.10.2 (see java_reference.py), asked two ways:

* through Spark SQL (``ref.system.bucket(N, col)`` and friends) for the types Spark can express:
  int, bigint, decimal, date, timestamp (= Iceberg timestamptz), timestamp_ntz, string, binary;
  the values go to Spark in a Parquet file written by pyarrow, and frazil's Arrow kernels run on
  the very same pyarrow arrays;
* through the FrazilOracle JVM (java/FrazilOracle.java), which calls ``Transform.bind(type)
  .apply(value)``, ``Conversions.toByteBuffer/fromByteBuffer`` and ``SingleValueParser`` directly,
  for every primitive type including those Spark lacks (time, timestamp_ns, timestamptz_ns, uuid,
  fixed[L]) and for nested types' JSON.

Values are random but seeded, and every type's list starts with its edge cases (nulls, extremes,
dates far outside 1..9999, pre-1970 timestamps with sub-second parts, 4-byte UTF-8, empty strings
and binaries...). Every disagreement is collected; a test fails listing the first 20.

The test side never uses frazil to produce the expected answers: raw values (ints for dates,
times and timestamps, unscaled ints for decimals, bytes for uuids) are formatted to and parsed
from Java's JSON by the small independent helpers below.

Canonical JSON text is allowed to differ where the spec allows (Java writes fixed/binary hex in
upper case, floats as ``1.0E10``, times and timestamps without trailing zero fractions and
``+00:00`` for UTC); the codec tests therefore compare decoded *values*, never JSON text.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
import re
import struct
import sys
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Context, Decimal
from pathlib import Path
from typing import Any

import pytest
from peers import import_peer, peer_missing

sys.path.insert(0, str(Path(__file__).resolve().parent))
from java_reference import (
    Err,
    JavaOracle,
    ReferenceUnavailable,
    check_available,
    reference_session,
)

pa = import_peer("pyarrow")
pq = import_peer("pyarrow.parquet")

try:
    check_available()
except ReferenceUnavailable as _e:
    peer_missing(f"the Java reference is unavailable: {_e}", module_level=True)

frazil = pytest.importorskip("frazil", reason="frazil is not built (run maturin develop)")
import frazil.transforms as ft  # noqa: E402
import frazil.values as fv  # noqa: E402
from frazil.types import type_from_json  # noqa: E402

pytestmark = [
    pytest.mark.interop,
    # PySpark leaves sockets of its py4j/collect plumbing to the garbage collector
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

N_SPARK = 5000  # random values per Spark type
N_ORACLE = 5000  # random values per type for the oracle-only types
N_CODEC = 3000  # random values per type for codec parity
N_NESTED = 500  # random values per nested type
SHOW = 20  # mismatches shown on failure

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
US, NS = 10**6, 10**9
DAY_US, DAY_NS = 86_400 * US, 86_400 * NS

BUCKETS = (1, 16, 1000, 2147483647)
NUM_WIDTHS = (1, 3, 10, 1000)
TEXT_WIDTHS = (1, 3, 16)


# ============================================================================================
# Types, described by their spec strings

_DECIMAL = re.compile(r"^decimal\((\d+),\s*(\d+)\)$")
_FIXED = re.compile(r"^fixed\[(\d+)\]$")


def kind(t: str) -> str:
    if _DECIMAL.match(t):
        return "decimal"
    if _FIXED.match(t):
        return "fixed"
    return t


def decimal_ps(t: str) -> tuple[int, int]:
    m = _DECIMAL.match(t)
    assert m, t
    return int(m.group(1)), int(m.group(2))


def fixed_len(t: str) -> int:
    m = _FIXED.match(t)
    assert m, t
    return int(m.group(1))


def normalize_type(t: str) -> str:
    """Java writes ``decimal(9, 2)``; frazil and the spec strings here ``decimal(9,2)``."""
    return t.replace(" ", "")


# ============================================================================================
# Calendar arithmetic (proleptic Gregorian, as java.time), independent of frazil


def civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (1 if m <= 2 else 0), m, d


def days_from_civil(y: int, m: int, d: int) -> int:
    y -= 1 if m <= 2 else 0
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146_097 + doe - 719_468


def _year_text(y: int) -> str:
    # java.time: four digits at least, '+' beyond 9999, '-' before year 0
    if y > 9999:
        return f"+{y}"
    if y < 0:
        return f"-{-y:04d}"
    return f"{y:04d}"


def iso_date(days: int) -> str:
    y, m, d = civil_from_days(days)
    return f"{_year_text(y)}-{m:02d}-{d:02d}"


def iso_time(units: int, per_second: int) -> str:
    digits = len(str(per_second)) - 1
    secs, frac = divmod(units, per_second)
    return f"{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}.{frac:0{digits}d}"


def iso_timestamp(units: int, per_second: int, zoned: bool) -> str:
    days, rest = divmod(units, 86_400 * per_second)
    return f"{iso_date(days)}T{iso_time(rest, per_second)}" + ("+00:00" if zoned else "")


_DATE_RE = r"([+-]?\d{4,})-(\d{2})-(\d{2})"
_TIME_RE = r"(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?"
_RE_DATE = re.compile(f"^{_DATE_RE}$")
_RE_TIME = re.compile(f"^{_TIME_RE}$")
_RE_TS = re.compile(f"^{_DATE_RE}T{_TIME_RE}(Z|[+-]\\d{{2}}:\\d{{2}})?$")


def parse_iso_date(text: str) -> int:
    m = _RE_DATE.match(text)
    if not m:
        raise ValueError(f"not an ISO date: {text!r}")
    return days_from_civil(int(m.group(1)), int(m.group(2)), int(m.group(3)))


def _time_units(h, mi, s, frac, per_second: int) -> int:
    digits = len(str(per_second)) - 1
    frac = (frac or "").ljust(9, "0")[:digits] if digits else ""
    return ((int(h) * 60 + int(mi)) * 60 + int(s or 0)) * per_second + int(frac or 0)


def parse_iso_time(text: str, per_second: int) -> int:
    m = _RE_TIME.match(text)
    if not m:
        raise ValueError(f"not an ISO time: {text!r}")
    return _time_units(*m.groups(), per_second)


def parse_iso_timestamp(text: str, per_second: int, zoned: bool) -> int:
    m = _RE_TS.match(text)
    if not m:
        raise ValueError(f"not an ISO timestamp: {text!r}")
    y, mo, d, h, mi, s, frac, zone = m.groups()
    if zoned != (zone is not None) or (zone not in (None, "Z", "+00:00", "-00:00")):
        raise ValueError(f"unexpected zone in {text!r}")
    days = days_from_civil(int(y), int(mo), int(d))
    return days * 86_400 * per_second + _time_units(h, mi, s, frac, per_second)


# ============================================================================================
# Raw values: the physical form (ints for temporals, unscaled ints for decimals, bytes for
# uuid/fixed/binary). Converters between raw values and Java's JSON / bytes / Arrow / frazil's
# Python value forms.


def dec_text(unscaled: int, scale: int) -> str:
    sign = "-" if unscaled < 0 else ""
    digits = str(abs(unscaled))
    if scale == 0:
        return sign + digits
    digits = digits.rjust(scale + 1, "0")
    return f"{sign}{digits[:-scale]}.{digits[-scale:]}"


def dec_unscaled(d: Decimal, scale: int) -> int:
    scaled = d.scaleb(scale, context=Context(prec=200))
    if scaled != scaled.to_integral_value():
        raise ValueError(f"{d} has more than {scale} decimal places")
    return int(scaled)


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def java_json_text(raw: Any, t: str) -> str:
    """A JSON text of ``raw`` that Java's SingleValueParser reads (null for None)."""
    if raw is None:
        return "null"
    k = kind(t)
    if k == "boolean":
        return "true" if raw else "false"
    if k in ("int", "long"):
        return str(raw)
    if k in ("float", "double"):
        if math.isnan(raw) or math.isinf(raw):
            return json.dumps(str(raw).replace("inf", "Infinity").replace("nan", "NaN"))
        return repr(raw)
    if k == "decimal":
        return json.dumps(dec_text(raw, decimal_ps(t)[1]))
    if k == "date":
        return json.dumps(iso_date(raw))
    if k == "time":
        return json.dumps(iso_time(raw, US))
    if k in ("timestamp", "timestamptz"):
        return json.dumps(iso_timestamp(raw, US, k == "timestamptz"))
    if k in ("timestamp_ns", "timestamptz_ns"):
        return json.dumps(iso_timestamp(raw, NS, k == "timestamptz_ns"))
    if k == "string":
        return json.dumps(raw, ensure_ascii=False)
    if k == "uuid":
        return json.dumps(str(uuid.UUID(bytes=raw)))
    if k in ("fixed", "binary"):
        return json.dumps(raw.hex())
    raise AssertionError(t)


def from_java_json(obj: Any, t: str) -> Any:
    """Java's (or anyone's) JSON single value of a primitive type -> raw value."""
    if obj is None:
        return None
    k = kind(t)
    if k == "boolean":
        assert isinstance(obj, bool)
        return obj
    if k in ("int", "long"):
        assert isinstance(obj, int) and not isinstance(obj, bool)
        return obj
    if k in ("float", "double"):
        if isinstance(obj, str):
            x = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[obj]
        else:
            x = float(obj)
        return f32(x) if k == "float" else x
    if k == "decimal":
        return dec_unscaled(Decimal(obj), decimal_ps(t)[1])
    if k == "date":
        return parse_iso_date(obj)
    if k == "time":
        return parse_iso_time(obj, US)
    if k in ("timestamp", "timestamptz"):
        return parse_iso_timestamp(obj, US, k == "timestamptz")
    if k in ("timestamp_ns", "timestamptz_ns"):
        return parse_iso_timestamp(obj, NS, k == "timestamptz_ns")
    if k == "string":
        assert isinstance(obj, str)
        return obj
    if k == "uuid":
        return uuid.UUID(obj).bytes
    if k in ("fixed", "binary"):
        return bytes.fromhex(obj)
    raise AssertionError(t)


def raw_bytes(raw: Any, t: str) -> bytes:
    """Spec Appendix D binary single-value form, written here without frazil."""
    k = kind(t)
    if k == "boolean":
        return b"\x01" if raw else b"\x00"
    if k in ("int", "date"):
        return struct.pack("<i", raw)
    if k in ("long", "time", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"):
        return struct.pack("<q", raw)
    if k == "float":
        return struct.pack("<f", raw)
    if k == "double":
        return struct.pack("<d", raw)
    if k == "decimal":
        n = (raw if raw >= 0 else ~raw).bit_length() // 8 + 1
        return raw.to_bytes(n, "big", signed=True)
    if k == "string":
        return raw.encode("utf-8")
    if k in ("uuid", "fixed", "binary"):
        return raw
    raise AssertionError(t)


def to_arrow(raws: Sequence[Any], t: str):
    k = kind(t)
    if k == "boolean":
        return pa.array(raws, pa.bool_())
    if k == "int":
        return pa.array(raws, pa.int32())
    if k == "long":
        return pa.array(raws, pa.int64())
    if k == "float":
        return pa.array(raws, pa.float32())
    if k == "double":
        return pa.array(raws, pa.float64())
    if k == "decimal":
        p, s = decimal_ps(t)
        return pa.array(
            [None if v is None else Decimal(dec_text(v, s)) for v in raws], pa.decimal128(p, s)
        )
    if k == "date":
        return pa.array(raws, pa.int32()).cast(pa.date32())
    if k == "time":
        return pa.array(raws, pa.int64()).cast(pa.time64("us"))
    arrow_ts = {
        "timestamp": pa.timestamp("us"),
        "timestamptz": pa.timestamp("us", tz="UTC"),
        "timestamp_ns": pa.timestamp("ns"),
        "timestamptz_ns": pa.timestamp("ns", tz="UTC"),
    }
    if k in arrow_ts:
        return pa.array(raws, pa.int64()).cast(arrow_ts[k])
    if k == "string":
        return pa.array(raws, pa.string())
    if k == "binary":
        return pa.array(raws, pa.binary())
    if k == "fixed":
        return pa.array(raws, pa.binary(fixed_len(t)))
    if k == "uuid":
        return pa.ExtensionArray.from_storage(pa.uuid(), pa.array(raws, pa.binary(16)))
    raise AssertionError(t)


def from_arrow(arr) -> list:
    """An Arrow result -> raw values (dates, times and timestamps as ints)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    typ = arr.type
    if isinstance(typ, pa.BaseExtensionType):
        arr = arr.storage
        typ = arr.type
    if pa.types.is_date32(typ):
        arr = arr.cast(pa.int32())
    elif pa.types.is_time(typ) or pa.types.is_timestamp(typ):
        arr = arr.cast(pa.int64())
    values = arr.to_pylist()
    if pa.types.is_decimal(typ):
        return [None if v is None else dec_unscaled(v, typ.scale) for v in values]
    return values


_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def to_python(raw: Any, t: str) -> Any:
    """Raw value -> the Python form frazil.values takes."""
    if raw is None:
        return None
    k = kind(t)
    if k == "decimal":
        return Decimal(dec_text(raw, decimal_ps(t)[1]))
    if k == "date":
        return _EPOCH_DATE + dt.timedelta(days=raw)
    if k == "time":
        secs, micros = divmod(raw, US)
        return dt.time(secs // 3600, secs // 60 % 60, secs % 60, micros)
    if k == "timestamp":
        return _EPOCH + dt.timedelta(microseconds=raw)
    if k == "timestamptz":
        return _EPOCH_UTC + dt.timedelta(microseconds=raw)
    if k == "uuid":
        return uuid.UUID(bytes=raw)
    return raw


def _micros(delta: dt.timedelta) -> int:
    return (delta.days * 86_400 + delta.seconds) * US + delta.microseconds


def from_python(v: Any, t: str) -> Any:
    """frazil's Python value -> raw value (checking its Python type on the way)."""
    if v is None:
        return None
    k = kind(t)
    expect = {
        "boolean": bool,
        "int": int,
        "long": int,
        "float": float,
        "double": float,
        "decimal": Decimal,
        "date": dt.date,
        "time": dt.time,
        "timestamp": dt.datetime,
        "timestamptz": dt.datetime,
        "timestamp_ns": int,
        "timestamptz_ns": int,
        "string": str,
        "uuid": uuid.UUID,
        "fixed": bytes,
        "binary": bytes,
    }[k]
    if not isinstance(v, expect):
        raise TypeError(f"frazil returned a {type(v).__name__} for {t}, expected {expect.__name__}")
    if k == "decimal":
        return dec_unscaled(v, decimal_ps(t)[1])
    if k == "date":
        return (v - _EPOCH_DATE).days
    if k == "time":
        return ((v.hour * 60 + v.minute) * 60 + v.second) * US + v.microsecond
    if k == "timestamp":
        if v.tzinfo is not None:
            raise TypeError(f"frazil returned an aware datetime for timestamp: {v!r}")
        return _micros(v - _EPOCH)
    if k == "timestamptz":
        if v.tzinfo is None:
            raise TypeError(f"frazil returned a naive datetime for timestamptz: {v!r}")
        return _micros(v - _EPOCH_UTC)
    if k == "uuid":
        return v.bytes
    return v


def python_representable(raw: Any, t: str) -> bool:
    """Whether frazil's Python value form can hold ``raw`` (datetime covers years 1..9999)."""
    k = kind(t)
    if k == "date":
        return D_MIN_PY <= raw <= D_MAX_PY
    if k in ("timestamp", "timestamptz"):
        return D_MIN_PY * DAY_US <= raw < (D_MAX_PY + 1) * DAY_US
    return True


def same(a: Any, b: Any, t: str | None = None) -> bool:
    """Raw equality; floats compare bit for bit (so -0.0 != 0.0) except that NaNs are equal."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    return (type(a) is type(b) and a == b) or (a is None and b is None)


def shown(result: Any, t: str) -> str:
    """Like show, for a frazil result that may be a Failed."""
    return repr(result) if isinstance(result, Failed) else show(result, t)


def show(raw: Any, t: str) -> str:
    """A readable rendering of a raw value for failure messages."""
    if raw is None:
        return "null"
    k = kind(t)
    if k == "date":
        return f"{raw} ({iso_date(raw)})"
    if k in ("time",):
        return f"{raw} ({iso_time(raw, US)})"
    if k in ("timestamp", "timestamptz"):
        return f"{raw} ({iso_timestamp(raw, US, k == 'timestamptz')})"
    if k in ("timestamp_ns", "timestamptz_ns"):
        return f"{raw} ({iso_timestamp(raw, NS, k == 'timestamptz_ns')})"
    if k == "decimal":
        return dec_text(raw, decimal_ps(t)[1])
    if k == "uuid":
        return str(uuid.UUID(bytes=raw))
    if k in ("fixed", "binary"):
        return f"0x{raw.hex()}"
    return repr(raw)


# ============================================================================================
# Random values, edge cases first


def _near_powers(r: random.Random, bits: int) -> int:
    b = r.randrange(0, bits)
    return r.choice((1, -1)) * (2**b) + r.randint(-2, 2)


def _clamp(v: int, lo: int, hi: int) -> int:
    return min(max(v, lo), hi)


def gen_integers(r: random.Random, n: int, lo: int, hi: int, bits: int) -> list:
    specials = [
        None,
        0,
        1,
        -1,
        2,
        -2,
        3,
        -3,
        9,
        -9,
        10,
        -10,
        999,
        -999,
        1000,
        -1000,
        1001,
        -1001,
        lo,
        lo + 1,
        lo + 2,
        lo + 3,
        lo + 9,
        lo + 10,
        hi,
        hi - 1,
        hi - 2,
        hi - 9,
    ]
    out = list(specials)
    while len(out) < n:
        c = r.random()
        if c < 0.05:
            out.append(None)
        elif c < 0.35:
            out.append(r.randint(-2000, 2000))
        elif c < 0.6:
            out.append(_clamp(_near_powers(r, bits), lo, hi))
        else:
            out.append(r.randint(lo, hi))
    return out


def gen_decimal(r: random.Random, n: int, p: int, s: int) -> list:
    top = 10**p - 1
    specials = [
        None,
        0,
        1,
        -1,
        5,
        -5,
        9,
        -9,
        10,
        -10,
        11,
        -11,
        10**s,
        -(10**s),
        top,
        -top,
        top - 1,
        -top + 1,
        10 ** (p - 1),
        -(10 ** (p - 1)),
        999,
        -999,
        1000,
        -1000,
    ]
    out = [v for v in specials if v is None or abs(v) <= top]
    while len(out) < n:
        c = r.random()
        if c < 0.05:
            out.append(None)
        elif c < 0.3:
            out.append(_clamp(r.randint(-5000, 5000), -top, top))
        elif c < 0.7:
            d = r.randint(1, p)
            out.append(r.choice((1, -1)) * r.randrange(10 ** (d - 1), 10**d))
        else:
            out.append(r.randint(-top, top))
    return out


D_MIN_PY = days_from_civil(1, 1, 1)  # the range of Python's datetime.date
D_MAX_PY = days_from_civil(9999, 12, 31)


def gen_days(r: random.Random, n: int, python_range: bool = False) -> list:
    specials = [
        None,
        0,
        -1,
        1,
        D_MIN_PY,
        D_MAX_PY,
        D_MIN_PY + 1,
        D_MAX_PY - 1,
        days_from_civil(1582, 10, 4),
        days_from_civil(1582, 10, 15),
        days_from_civil(1900, 2, 28),
        days_from_civil(1900, 3, 1),
        days_from_civil(2000, 2, 29),
        days_from_civil(1969, 12, 31),
        days_from_civil(1969, 1, 1),
        days_from_civil(1968, 12, 31),
        days_from_civil(2024, 2, 29),
        days_from_civil(1600, 2, 29),
    ]
    if not python_range:
        specials += [
            INT_MIN,
            INT_MAX,
            INT_MIN + 1,
            INT_MAX - 1,
            days_from_civil(10000, 1, 1),
            days_from_civil(0, 12, 31),
            days_from_civil(0, 1, 1),
            days_from_civil(-1, 12, 31),
            days_from_civil(-4713, 11, 24),
            days_from_civil(-100000, 3, 1),
            days_from_civil(275760, 9, 13),
        ]
    out = list(specials)
    while len(out) < n:
        c = r.random()
        if c < 0.05:
            out.append(None)
        elif c < 0.25:
            out.append(r.randint(-3000, 3000))
        elif c < 0.6 or python_range:
            out.append(r.randint(D_MIN_PY, D_MAX_PY))
        elif c < 0.8:
            out.append(r.randint(days_from_civil(-20000, 1, 1), days_from_civil(30000, 1, 1)))
        else:
            out.append(r.randint(INT_MIN, INT_MAX))
    return out


def gen_timestamps(r: random.Random, n: int, per_second: int, python_range: bool = False) -> list:
    """Timestamps in micros or nanos; ``python_range`` keeps them within datetime's years."""
    per_day = 86_400 * per_second
    per_hour = 3600 * per_second
    lo = LONG_MIN if not python_range else max(LONG_MIN, D_MIN_PY * per_day)
    hi = LONG_MAX if not python_range else min(LONG_MAX, (D_MAX_PY + 1) * per_day - 1)
    specials = [
        None,
        0,
        1,
        -1,
        per_second - 1,
        -per_second + 1,
        per_second,
        -per_second,
        -per_second - 1,
        per_hour,
        -per_hour,
        -per_hour - 1,
        per_day - 1,
        -per_day,
        -per_day - 1,
        -per_day + 1,
        lo,
        hi,
        lo + 1,
        hi - 1,
        days_from_civil(1900, 1, 1) * per_day + 1,
        days_from_civil(1969, 12, 31) * per_day + per_day - 1,
        # the last second before a pre-1970 midnight, with a fraction: pyiceberg-core 0.11
        # puts 1914-01-12T23:59:59.923916 on the next day
        days_from_civil(1914, 1, 13) * per_day - per_second + per_second * 923_916 // 1_000_000,
    ]
    if per_second == US:
        specials += [D_MIN_PY * per_day, (D_MAX_PY + 1) * per_day - 1]
        if not python_range:
            specials += [days_from_civil(10000, 1, 1) * per_day, D_MIN_PY * per_day - 1]
    out = [v for v in specials if v is None or lo <= v <= hi]
    while len(out) < n:
        c = r.random()
        if c < 0.05:
            out.append(None)
        elif c < 0.3:  # within a few years of 1970, sub-second parts everywhere
            out.append(r.randint(-3 * 366 * per_day, 3 * 366 * per_day))
        elif c < 0.4:  # hour and day boundaries +- a little
            b = r.randint(-200_000, 200_000) * per_hour
            out.append(_clamp(b + r.randint(-2, 2), lo, hi))
        elif c < 0.45:  # within the last second before a midnight, mostly before 1970
            b = r.randint(-50_000, 5_000) * per_day
            out.append(_clamp(b - r.randint(1, per_second), lo, hi))
        elif c < 0.8:
            out.append(
                r.randint(max(lo, D_MIN_PY * per_day), min(hi, (D_MAX_PY + 1) * per_day - 1))
            )
        else:
            out.append(r.randint(lo, hi))
    return out


def gen_times(r: random.Random, n: int) -> list:
    top = DAY_US - 1
    out = [None, 0, 1, top, top - 1, US - 1, US, 3600 * US, 12 * 3600 * US, 23 * 3600 * US]
    while len(out) < n:
        c = r.random()
        if c < 0.05:
            out.append(None)
        elif c < 0.2:
            out.append(r.randint(0, 86_399) * US)
        else:
            out.append(r.randint(0, top))
    return out


_ALPHABETS = [
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.,:;/",
    "\t\n\r\"\\'\x00\x01\x7f",
    "éüßñçøåÆŒ€£¥©®°±µ",
    "αβγδεζηθλμπσφψωЖЩЯ",
    "中文字漢字日本語한국어ไทย",
    "😀🎉🧊👍🏽🚀🦀𝔘𝕟𝖎𓀀",
    "\u0301\u0308\u200d\u00a0\u2028\ufeff",
]
_SPECIAL_STRINGS = [
    None,
    "",
    "a",
    "ab",
    "abc",
    "iceberg",
    "Iceberg\x00tail",
    "é",
    "éé",
    "😀",
    "😀😀",
    "😀a",
    "a😀",
    "😀" * 20,
    "é" * 20,
    "中" * 17,
    "ab😀cd",
    "e\u0301",
    "👨\u200d👩\u200d👧",
    "\U0010ffff",
    "\ud7ff\ue000",
    " ",
    "\x7f" * 3,
]


def gen_strings(r: random.Random, n: int) -> list:
    out = list(_SPECIAL_STRINGS)
    while len(out) < n:
        if r.random() < 0.05:
            out.append(None)
            continue
        length = r.choice((0, 1, 2, 3, 4, 5, 15, 16, 17)) if r.random() < 0.3 else r.randint(0, 24)
        weights = [r.random() for _ in _ALPHABETS]
        out.append("".join(r.choice(r.choices(_ALPHABETS, weights)[0]) for _ in range(length)))
    return out


def gen_binary(r: random.Random, n: int) -> list:
    out = [
        None,
        b"",
        b"\x00",
        b"\xff",
        b"\x00" * 3,
        b"\xff" * 20,
        b"\x80\x00\x01",
        bytes(range(256)),
        b"abc",
        "😀".encode(),
    ]
    while len(out) < n:
        if r.random() < 0.05:
            out.append(None)
            continue
        length = r.choice((0, 1, 2, 3, 4, 15, 16, 17)) if r.random() < 0.3 else r.randint(0, 24)
        out.append(r.randbytes(length))
    return out


def gen_fixed(r: random.Random, n: int, length: int) -> list:
    out = [None, b"\x00" * length, b"\xff" * length, (b"\x80" + b"\x00" * length)[:length]]
    while len(out) < n:
        out.append(None if r.random() < 0.05 else r.randbytes(length))
    return out


def gen_uuids(r: random.Random, n: int) -> list:
    out = [
        None,
        b"\x00" * 16,
        b"\xff" * 16,
        uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7").bytes,
        uuid.UUID("00000000-0000-0000-0000-000000000001").bytes,
    ]
    while len(out) < n:
        out.append(None if r.random() < 0.05 else r.randbytes(16))
    return out


def gen_floats(r: random.Random, n: int, single: bool) -> list:
    fmt, bits = ("<f", 32) if single else ("<d", 64)
    big = 3.4028234663852886e38 if single else sys.float_info.max
    tiny = 1.401298464324817e-45 if single else 5e-324
    specials = [
        None,
        0.0,
        -0.0,
        math.nan,
        math.inf,
        -math.inf,
        1.0,
        -1.0,
        0.1,
        -0.1,
        1e10,
        1e-7,
        123456.789,
        big,
        -big,
        tiny,
        -tiny,
        2.0**-126,
        16777217.0,
        3.0,
        1 / 3,
    ]
    out = [None if v is None else (f32(v) if single else v) for v in specials]
    while len(out) < n:
        c = r.random()
        if c < 0.05:
            out.append(None)
            continue
        if c < 0.5:
            raw = r.getrandbits(bits).to_bytes(bits // 8, "little")
            x = struct.unpack(fmt, raw)[0]
            if math.isnan(x):
                x = math.nan  # only the canonical NaN: JSON cannot carry a payload
        elif c < 0.8:
            x = r.uniform(-1e6, 1e6)
        else:
            x = r.choice((1, -1)) * 10 ** r.uniform(-40, 38)
        out.append(f32(x) if single else x)
    return out


def generate(t: str, n: int, seed: int, python_range: bool = False) -> list:
    r = random.Random(f"{seed}:{t}")
    k = kind(t)
    if k == "boolean":
        return [None, True, False] + [r.choice((True, False, None)) for _ in range(n - 3)]
    if k == "int":
        return gen_integers(r, n, INT_MIN, INT_MAX, 31)
    if k == "long":
        return gen_integers(r, n, LONG_MIN, LONG_MAX, 63)
    if k == "float":
        return gen_floats(r, n, True)
    if k == "double":
        return gen_floats(r, n, False)
    if k == "decimal":
        return gen_decimal(r, n, *decimal_ps(t))
    if k == "date":
        return gen_days(r, n, python_range)
    if k == "time":
        return gen_times(r, n)
    if k in ("timestamp", "timestamptz"):
        return gen_timestamps(r, n, US, python_range)
    if k in ("timestamp_ns", "timestamptz_ns"):
        return gen_timestamps(r, n, NS, python_range)
    if k == "string":
        return gen_strings(r, n)
    if k == "binary":
        return gen_binary(r, n)
    if k == "fixed":
        return gen_fixed(r, n, fixed_len(t))
    if k == "uuid":
        return gen_uuids(r, n)
    raise AssertionError(t)


# ============================================================================================
# Transforms


def transforms_for(t: str) -> list[str]:
    """The transforms to try on type ``t`` (applicability itself is checked against Java)."""
    k = kind(t)
    out = [f"bucket[{n}]" for n in BUCKETS]
    if k in ("int", "long", "decimal"):
        out += [f"truncate[{w}]" for w in NUM_WIDTHS]
    if k in ("string", "binary"):
        out += [f"truncate[{w}]" for w in TEXT_WIDTHS]
    if k in ("date", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"):
        out += ["year", "month", "day"]
    if k in ("timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"):
        out += ["hour"]
    return [*out, "identity"]


ALL_TRANSFORMS = (
    [f"bucket[{n}]" for n in BUCKETS]
    + [f"truncate[{w}]" for w in sorted(set(NUM_WIDTHS) | set(TEXT_WIDTHS))]
    + ["year", "month", "day", "hour", "identity", "void"]
)


@dataclass
class Failed:
    """frazil raised instead of answering."""

    error: str

    def __repr__(self) -> str:
        return f"<frazil raised {self.error}>"


def frazil_kernel(transform: str, arr) -> list:
    """frazil's Arrow kernel for one transform string, through the module-level functions.

    If the kernel raises for the whole array, each value is retried alone so that only the
    values it rejects are reported (as Failed)."""
    fn: Callable[[Any], Any]
    m = re.match(r"^(bucket|truncate)\[(\d+)\]$", transform)
    if m:
        width = int(m.group(2))
        fn = (
            (lambda a: ft.bucket(width, a))
            if m.group(1) == "bucket"
            else (lambda a: ft.truncate(width, a))
        )
    else:
        fn = {
            "year": ft.year,
            "month": ft.month,
            "day": ft.day,
            "hour": ft.hour,
            "identity": ft.identity,
            "void": ft.void,
        }[transform]
    try:
        out = fn(arr)
    except Exception:
        out = None
    if out is not None:
        values = from_arrow(out)
        if len(values) == len(arr):
            return values
    results: list = []
    for i in range(len(arr)):
        try:
            results.append(from_arrow(fn(arr.slice(i, 1)))[0])
        except Exception as e:
            results.append(Failed(f"{type(e).__name__}: {e}"))
    return results


def result_kind(transform: str, t: str) -> str:
    """The type of the transform's values as raw values (day gives days as ints)."""
    if transform.startswith(("truncate", "identity", "void")):
        return t
    return "int"


def java_transform_results(
    oracle: JavaOracle, t: str, transform: str, raws: Sequence[Any], stats: dict
) -> list:
    """Java's transform of each raw value, as raw values, or Err where Java refuses.

    Values go in as JSON (SingleValueParser.fromJson); where Java cannot parse our JSON for a
    value (e.g. timestamps whose micros overflow in java.time's ChronoUnit.between), the value
    is sent again in its binary form."""
    answers = oracle.transform([(t, transform, java_json_text(v, t)) for v in raws])
    retry = [i for i, a in enumerate(answers) if isinstance(a, Err) and raws[i] is not None]
    if retry:
        again = oracle.ask(
            [("transform_bytes", t, transform, raw_bytes(raws[i], t).hex()) for i in retry]
        )
        for i, a in zip(retry, again, strict=True):
            if not isinstance(a, Err):
                key = f"{transform}: Java read from bytes, not JSON"
                stats[key] = stats.get(key, 0) + 1
            answers[i] = a
    out: list = []
    for a in answers:
        if isinstance(a, Err):
            out.append(a)
            continue
        rtype, text = a.split("\t", 1)
        obj = json.loads(text)
        if transform == "day" and obj is not None:
            out.append(parse_iso_date(obj))  # Java's day transform yields a date
        else:
            out.append(from_java_json(obj, normalize_type(rtype)))
    return out


class Mismatches:
    def __init__(self, title: str) -> None:
        self.title = title
        self.items: list[str] = []
        self.checked = 0

    def add(self, text: str) -> None:
        self.items.append(text)

    def check(self) -> None:
        if self.items:
            shown = "\n".join(f"  {m}" for m in self.items[:SHOW])
            pytest.fail(
                f"{self.title}: {len(self.items)} mismatches out of {self.checked} checks; "
                f"first {min(SHOW, len(self.items))}:\n{shown}",
                pytrace=False,
            )


def compare_values(
    mm: Mismatches,
    label: str,
    t: str,
    rkind: str,
    raws,
    frazil_out,
    ref_out,
    ref_name: str,
    extra: Callable[[int], str] | None = None,
) -> None:
    for i, (v, got, want) in enumerate(zip(raws, frazil_out, ref_out, strict=True)):
        mm.checked += 1
        if isinstance(want, Err):
            if isinstance(got, Failed) or v is None:
                continue
            mm.add(
                f"{label} of {t} {show(v, t)}: {ref_name} refuses ({want}), "
                f"frazil gives {show(got, rkind)}"
            )
            continue
        if isinstance(got, Failed) or not same(got, want):
            got_s = repr(got) if isinstance(got, Failed) else show(got, rkind)
            note = extra(i) if extra else ""
            mm.add(
                f"{label} of {t} {show(v, t)}: {ref_name} {show(want, rkind)}, frazil {got_s}{note}"
            )


# ============================================================================================
# Fixtures


@pytest.fixture(scope="module")
def oracle():
    with JavaOracle() as o:
        yield o


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    session = reference_session(str(tmp_path_factory.mktemp("warehouse")))
    yield session
    session.stop()


# Spark SQL type -> Iceberg type string (Spark's TIMESTAMP is Iceberg's timestamptz)
SPARK_TYPES = {
    "int": "int",
    "bigint": "long",
    "decimal(9,2)": "decimal(9,2)",
    "decimal(38,10)": "decimal(38,10)",
    "date": "date",
    "timestamp": "timestamptz",
    "timestamp_ntz": "timestamp",
    "string": "string",
    "binary": "binary",
}


def spark_sql(transform: str, col: str) -> str:
    m = re.match(r"^(bucket|truncate)\[(\d+)\]$", transform)
    if m:
        return f"ref.system.{m.group(1)}({m.group(2)}, {col})"
    if transform == "day":
        # ref.system.days gives a DATE; as days from 1970 so that years beyond 9999 survive
        # the trip to Python
        return f"unix_date(ref.system.days({col}))"
    return f"ref.system.{transform}s({col})"


@pytest.fixture(scope="module")
def spark_case(spark, tmp_path_factory):
    """Every Spark type's values in one Parquet file, and all transforms in one SELECT."""
    columns = {}
    raws = {}
    for i, (spark_type, t) in enumerate(SPARK_TYPES.items()):
        raws[spark_type] = generate(t, N_SPARK, seed=1)
        columns[f"c{i}"] = to_arrow(raws[spark_type], t)
    table = pa.table({"id": pa.array(range(N_SPARK), pa.int32()), **columns})
    path = tmp_path_factory.mktemp("spark_input") / "values.parquet"
    pq.write_table(table, path)

    exprs, keys = ["id"], []
    df = spark.read.parquet(str(path))
    for i, (spark_type, t) in enumerate(SPARK_TYPES.items()):
        schema_type = df.schema[f"c{i}"].dataType.simpleString()
        assert schema_type.replace(" ", "") == spark_type, (spark_type, schema_type)
        for transform in transforms_for(t):
            if transform == "identity":
                continue
            exprs.append(f"{spark_sql(transform, f'c{i}')} AS r{len(keys)}")
            keys.append((spark_type, transform))
    df.createOrReplaceTempView("frazil_values")
    rows = spark.sql(f"SELECT {', '.join(exprs)} FROM frazil_values").collect()
    rows.sort(key=lambda row: row[0])
    assert [row[0] for row in rows] == list(range(N_SPARK))

    results: dict[tuple[str, str], list] = {}
    for j, (spark_type, transform) in enumerate(keys):
        t = SPARK_TYPES[spark_type]
        rk = result_kind(transform, t)
        col = [row[j + 1] for row in rows]
        if kind(rk) == "decimal":
            col = [None if v is None else dec_unscaled(v, decimal_ps(rk)[1]) for v in col]
        elif kind(rk) == "binary":
            col = [None if v is None else bytes(v) for v in col]
        results[(spark_type, transform)] = col
    return raws, columns, results


# ============================================================================================
# Spark SQL functions vs frazil's Arrow kernels


@pytest.mark.spark
@pytest.mark.parametrize("spark_type", list(SPARK_TYPES))
def test_spark_transforms(spark_type, spark_case, oracle):
    raws, columns, results = spark_case
    t = SPARK_TYPES[spark_type]
    arr = columns[f"c{list(SPARK_TYPES).index(spark_type)}"]
    mm = Mismatches(f"Spark ref.system.* vs frazil on {spark_type} ({t})")
    notes = []
    for transform in transforms_for(t):
        if transform == "identity":
            continue
        rk = result_kind(transform, t)
        values = raws[spark_type]
        spark_out = results[(spark_type, transform)]
        frazil_out = frazil_kernel(transform, arr)
        java_out = None
        for i, (v, s) in enumerate(zip(values, spark_out, strict=True)):
            if v is not None and s is None:
                # Spark nulls a value that overflows its SQL type (decimal truncate near the
                # precision limit); what Java's Transform itself gives is the reference then.
                if java_out is None:
                    java_out = java_transform_results(oracle, t, transform, values, {})
                notes.append(f"{transform}({show(v, t)}): Spark null, Java {show(java_out[i], rk)}")
                spark_out = list(spark_out)
                spark_out[i] = java_out[i]
        compare_values(mm, transform, t, rk, values, frazil_out, spark_out, "Spark")
    if notes:
        print(f"\n{spark_type}: {len(notes)} values Spark nulls on overflow, e.g. {notes[:3]}")
    mm.check()


# ============================================================================================
# The Java Transform API vs frazil, for every type (Spark's types as a cross-check)

ORACLE_TYPES = [
    "int",
    "long",
    "decimal(9,2)",
    "decimal(38,10)",
    "decimal(1,0)",
    "decimal(18,4)",
    "decimal(38,0)",
    "date",
    "time",
    "timestamp",
    "timestamptz",
    "timestamp_ns",
    "timestamptz_ns",
    "string",
    "uuid",
    "fixed[1]",
    "fixed[7]",
    "fixed[16]",
    "binary",
]
NON_TRANSFORMABLE_EXTRA = ["boolean", "float", "double"]


def test_transform_applicability(oracle):
    """can_transform and result_type agree with Java for every (type, transform) pair."""
    mm = Mismatches("transform applicability / result type")
    pairs = [(t, tr) for t in ORACLE_TYPES + NON_TRANSFORMABLE_EXTRA for tr in ALL_TRANSFORMS]
    answers = oracle.transform([(t, tr, "null") for t, tr in pairs])
    for (t, tr), a in zip(pairs, answers, strict=True):
        mm.checked += 1
        java_ok = not isinstance(a, Err)
        try:
            transform = ft.parse(tr)
            ours = transform.can_transform(t)
        except Exception as e:
            mm.add(f"{tr} on {t}: frazil raised {type(e).__name__}: {e}")
            continue
        if ours != java_ok:
            mm.add(f"{tr} on {t}: Java can_transform={java_ok} ({a}), frazil {ours}")
            continue
        if java_ok:
            java_rtype = normalize_type(a.split("\t", 1)[0])
            try:
                our_rtype = normalize_type(str(transform.result_type(t)))
            except Exception as e:
                our_rtype = f"<raised {type(e).__name__}: {e}>"
            if our_rtype != java_rtype:
                mm.add(f"{tr} on {t}: Java result type {java_rtype}, frazil {our_rtype}")
    mm.check()


@pytest.mark.parametrize("t", ORACLE_TYPES)
def test_oracle_transforms(t, oracle):
    raws = generate(t, N_ORACLE if t not in SPARK_TYPES.values() else N_SPARK, seed=2)
    arr = to_arrow(raws, t)
    mm = Mismatches(f"Java Transform vs frazil on {t}")
    stats: dict = {}
    for transform in transforms_for(t):
        rk = result_kind(transform, t)
        java_out = java_transform_results(oracle, t, transform, raws, stats)
        frazil_out = frazil_kernel(transform, arr)
        compare_values(mm, transform, t, rk, raws, frazil_out, java_out, "Java")
        # the scalar path (Python values) must agree too; a sample, it goes value by value
        if transform == "identity":
            continue
        parsed = ft.parse(transform)
        for i, v in enumerate(raws[:400]):
            want = java_out[i]
            if v is None or isinstance(want, Err) or not python_representable(v, t):
                continue
            if transform == "day" and not D_MIN_PY <= want <= D_MAX_PY:
                continue
            mm.checked += 1
            try:
                got = parsed.apply_scalar(to_python(v, t), t)
                if transform == "day":
                    got = from_python(got, "date")
                elif rk == t:
                    got = from_python(got, t)
            except Exception as e:
                got = Failed(f"{type(e).__name__}: {e}")
            if isinstance(got, Failed) or not same(got, want):
                mm.add(
                    f"apply_scalar {transform} of {t} {show(raws[i], t)}: Java "
                    f"{show(want, rk)}, frazil {shown(got, rk)}"
                )
    if stats:
        print(f"\n{t}: {stats}")
    mm.check()


# ============================================================================================
# Single-value codecs: binary (Appendix D) and JSON

CODEC_TYPES = [
    "boolean",
    "int",
    "long",
    "float",
    "double",
    "decimal(1,0)",
    "decimal(9,2)",
    "decimal(18,6)",
    "decimal(19,0)",
    "decimal(38,10)",
    "decimal(38,0)",
    "decimal(38,38)",
    "date",
    "time",
    "timestamp",
    "timestamptz",
    "timestamp_ns",
    "timestamptz_ns",
    "string",
    "uuid",
    "fixed[1]",
    "fixed[16]",
    "fixed[33]",
    "binary",
]


def _frazil(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as e:
        return Failed(f"{type(e).__name__}: {e}")


@pytest.mark.parametrize("t", CODEC_TYPES)
def test_codecs(t, oracle):
    raws = [v for v in generate(t, N_CODEC, seed=3, python_range=True) if v is not None]
    mm = Mismatches(f"single-value codecs of {t}")
    k = kind(t)
    text_diffs: dict[str, str] = {}

    # Java's bytes for each value, from our JSON (or, where Java cannot read JSON for the
    # value -- NaN and the infinities -- from our own encoding of its bytes)
    java_hex = oracle.to_bytes([(t, java_json_text(v, t)) for v in raws])
    redo = [i for i, h in enumerate(java_hex) if isinstance(h, Err)]
    if redo:
        for i, h in zip(
            redo,
            oracle.ask([("rebytes", t, raw_bytes(raws[i], t).hex()) for i in redo]),
            strict=True,
        ):
            java_hex[i] = h
    # frazil's bytes and JSON
    py_values = [to_python(v, t) for v in raws]
    our_bytes = [_frazil(lambda v=v: fv.to_bytes(v, t)) for v in py_values]
    our_json = [_frazil(lambda v=v: fv.to_json(v, t)) for v in py_values]
    # Java reads frazil's bytes and frazil's JSON
    java_read_bytes = oracle.from_bytes(
        [(t, b.hex() if isinstance(b, bytes) else "") for b in our_bytes]
    )
    java_read_json = oracle.json(
        [
            (t, json.dumps(j, ensure_ascii=False) if not isinstance(j, Failed) else "!")
            for j in our_json
        ]
    )
    # Java's own canonical JSON of each value
    java_json = oracle.json([(t, java_json_text(v, t)) for v in raws])
    redo = [i for i, j in enumerate(java_json) if isinstance(j, Err)]
    if redo:
        for i, j in zip(
            redo, oracle.from_bytes([(t, raw_bytes(raws[i], t).hex()) for i in redo]), strict=True
        ):
            java_json[i] = j

    for i, v in enumerate(raws):
        where = f"{t} {show(v, t)}"
        # 1. to_bytes
        mm.checked += 1
        want_hex = java_hex[i]
        got = our_bytes[i]
        if isinstance(want_hex, Err):
            mm.add(f"to_bytes {where}: Java refuses ({want_hex})")
        elif isinstance(got, Failed) or got.hex() != want_hex:
            got_s = repr(got) if isinstance(got, Failed) else got.hex()
            mm.add(f"to_bytes {where}: Java {want_hex}, frazil {got_s}")
        # 2. frazil reads Java's bytes
        if not isinstance(want_hex, Err):
            mm.checked += 1
            back = _frazil(lambda h=want_hex: from_python(fv.from_bytes(bytes.fromhex(h), t), t))
            if isinstance(back, Failed) or not same(back, v):
                mm.add(f"from_bytes {where} (Java bytes {want_hex}): frazil {shown(back, t)}")
        # 3. Java reads frazil's bytes
        if isinstance(got, bytes):
            mm.checked += 1
            a = java_read_bytes[i]
            if isinstance(a, Err):
                mm.add(f"Java from_bytes of frazil's {got.hex()} for {where}: Java refuses ({a})")
            elif not same(from_java_json(json.loads(a), t), v):
                mm.add(f"Java from_bytes of frazil's {got.hex()} for {where}: Java reads {a}")
        # 4. Java reads frazil's JSON
        j = our_json[i]
        mm.checked += 1
        if isinstance(j, Failed):
            mm.add(f"to_json {where}: frazil {j!r}")
        else:
            a = java_read_json[i]
            if isinstance(a, Err):
                nonfinite = k in ("float", "double") and not math.isfinite(v)
                if not nonfinite:  # Java's SingleValueParser reads no NaN/Infinity at all
                    mm.add(f"Java reads frazil's JSON {json.dumps(j)} for {where}: refuses ({a})")
            elif not same(from_java_json(json.loads(a), t), v):
                mm.add(f"Java reads frazil's JSON {json.dumps(j)} for {where}: gets {a}")
            jj = java_json[i]
            if not isinstance(jj, Err) and json.loads(jj) != j and len(text_diffs) < 3:
                text_diffs[f"{show(v, t)}"] = f"Java {jj} / frazil {json.dumps(j)}"
        # 5. frazil reads Java's canonical JSON
        jj = java_json[i]
        mm.checked += 1
        if isinstance(jj, Err):
            mm.add(f"Java to_json {where}: Java refuses ({jj})")
        else:
            back = _frazil(lambda j=jj: from_python(fv.from_json(json.loads(j), t), t))
            if isinstance(back, Failed) or not same(back, v):
                mm.add(f"from_json of Java's {jj} for {where}: frazil {shown(back, t)}")
    if text_diffs:
        # allowed by the spec (values equal): e.g. hex case, float spelling, trimmed fractions
        print(f"\n{t}: JSON text differs (values agree), e.g. {text_diffs}")
    mm.check()


# ============================================================================================
# JSON of nested types (SingleValueParser with struct / list / map types)

NESTED_TYPES = {
    "struct": {
        "type": "struct",
        "fields": [
            {"id": 1, "name": "a", "required": False, "type": "int"},
            {"id": 2, "name": "b", "required": True, "type": "string"},
            {
                "id": 3,
                "name": "c",
                "required": False,
                "type": {
                    "type": "list",
                    "element-id": 4,
                    "element": "date",
                    "element-required": False,
                },
            },
            {
                "id": 5,
                "name": "d",
                "required": False,
                "type": {
                    "type": "map",
                    "key-id": 6,
                    "key": "string",
                    "value-id": 7,
                    "value": "decimal(9,2)",
                    "value-required": False,
                },
            },
            {
                "id": 8,
                "name": "e",
                "required": False,
                "type": {
                    "type": "struct",
                    "fields": [
                        {"id": 9, "name": "x", "required": False, "type": "timestamptz"},
                        {"id": 10, "name": "y", "required": False, "type": "uuid"},
                        {"id": 11, "name": "z", "required": False, "type": "fixed[3]"},
                    ],
                },
            },
            {"id": 12, "name": "f", "required": False, "type": "double"},
        ],
    },
    "list_of_structs": {
        "type": "list",
        "element-id": 1,
        "element-required": False,
        "element": {
            "type": "struct",
            "fields": [
                {"id": 2, "name": "n", "required": True, "type": "long"},
                {"id": 3, "name": "t", "required": False, "type": "time"},
                {"id": 4, "name": "ns", "required": False, "type": "timestamp_ns"},
            ],
        },
    },
    "map_int_list_binary": {
        "type": "map",
        "key-id": 1,
        "key": "int",
        "value-id": 2,
        "value-required": False,
        "value": {"type": "list", "element-id": 3, "element": "binary", "element-required": False},
    },
    "map_string_bool": {
        "type": "map",
        "key-id": 1,
        "key": "string",
        "value-id": 2,
        "value": "boolean",
        "value-required": True,
    },
}


_POOLS: dict[str, list] = {}


def _gen_nested(r: random.Random, typ: Any, required: bool, depth: int = 0) -> Any:
    if not required and r.random() < 0.15:
        return None
    if isinstance(typ, str):
        if typ not in _POOLS:
            # Java's SingleValueParser reads no NaN or infinities (it wants a JSON number), so
            # nested values stay finite; test_codecs covers non-finite floats on their own
            _POOLS[typ] = [
                v
                for v in generate(typ, 300, 4, python_range=True)
                if v is not None and not (isinstance(v, float) and not math.isfinite(v))
            ]
        return r.choice(_POOLS[typ])
    if typ["type"] == "struct":
        return tuple(_gen_nested(r, f["type"], f["required"], depth + 1) for f in typ["fields"])
    if typ["type"] == "list":
        return [
            _gen_nested(r, typ["element"], typ["element-required"], depth + 1)
            for _ in range(r.randint(0, 4))
        ]
    entries = {}
    for _ in range(r.randint(0, 4)):
        key = _gen_nested(r, typ["key"], True, depth + 1)
        # Java reads maps into a Guava ImmutableMap, which refuses null values: a null map value
        # cannot be checked against Java, so none are generated
        entries[key] = _gen_nested(r, typ["value"], True, depth + 1)
    return entries


def _nested_to_python(raw: Any, typ: Any) -> Any:
    if raw is None:
        return None
    if isinstance(typ, str):
        return to_python(raw, typ)
    if typ["type"] == "struct":
        return {
            f["name"]: _nested_to_python(v, f["type"])
            for v, f in zip(raw, typ["fields"], strict=True)
        }
    if typ["type"] == "list":
        return [_nested_to_python(v, typ["element"]) for v in raw]
    return {
        _nested_to_python(k, typ["key"]): _nested_to_python(v, typ["value"]) for k, v in raw.items()
    }


def _nested_from_python(v: Any, typ: Any) -> Any:
    if v is None:
        return None
    if isinstance(typ, str):
        return from_python(v, typ)
    if typ["type"] == "struct":
        assert isinstance(v, dict), v
        return tuple(_nested_from_python(v.get(f["name"]), f["type"]) for f in typ["fields"])
    if typ["type"] == "list":
        return [_nested_from_python(x, typ["element"]) for x in v]
    pairs = v.items() if isinstance(v, dict) else v
    return {
        _nested_from_python(a, typ["key"]): _nested_from_python(b, typ["value"]) for a, b in pairs
    }


def _nested_from_java(obj: Any, typ: Any) -> Any:
    if obj is None:
        return None
    if isinstance(typ, str):
        return from_java_json(obj, typ)
    if typ["type"] == "struct":
        return tuple(_nested_from_java(obj.get(str(f["id"])), f["type"]) for f in typ["fields"])
    if typ["type"] == "list":
        return [_nested_from_java(x, typ["element"]) for x in obj]
    assert len(obj["keys"]) == len(obj["values"])
    return {
        _nested_from_java(a, typ["key"]): _nested_from_java(b, typ["value"])
        for a, b in zip(obj["keys"], obj["values"], strict=True)
    }


def _nested_same(a: Any, b: Any) -> bool:
    if (isinstance(a, tuple) and isinstance(b, tuple)) or (
        isinstance(a, list) and isinstance(b, list)
    ):
        return len(a) == len(b) and all(_nested_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_nested_same(a[k], b[k]) for k in a)
    return same(a, b)


@pytest.mark.parametrize("name", list(NESTED_TYPES))
def test_nested_json(name, oracle):
    typ = NESTED_TYPES[name]
    type_text = json.dumps(typ, separators=(",", ":"))
    ftype = type_from_json(typ)
    r = random.Random(f"nested:{name}")
    raws = [_gen_nested(r, typ, True) for _ in range(N_NESTED)]
    mm = Mismatches(f"JSON of nested type {name}")
    ours = [_frazil(lambda v=v: fv.to_json(_nested_to_python(v, typ), ftype)) for v in raws]
    java = oracle.json(
        [
            (type_text, json.dumps(j, ensure_ascii=False) if not isinstance(j, Failed) else "!")
            for j in ours
        ]
    )
    for v, j, a in zip(raws, ours, java, strict=True):
        mm.checked += 1
        if isinstance(j, Failed):
            mm.add(f"to_json {v!r}: frazil {j!r}")
            continue
        if isinstance(a, Err):
            mm.add(f"Java reads frazil's JSON {json.dumps(j)}: refuses ({a})")
            continue
        if not _nested_same(_nested_from_java(json.loads(a), typ), v):
            mm.add(f"Java reads frazil's JSON {json.dumps(j)} as {a} (value {v!r})")
            continue
        # Java's canonical JSON back into frazil
        mm.checked += 1
        back = _frazil(lambda a=a: _nested_from_python(fv.from_json(json.loads(a), ftype), typ))
        if isinstance(back, Failed) or not _nested_same(back, v):
            mm.add(f"from_json of Java's {a}: frazil {back!r} (value {v!r})")
    mm.check()


# ============================================================================================
# The harness itself


def test_oracle_protocol(oracle):
    """Bad requests answer ERROR without stopping the JVM; known spec values come out right."""
    answers = oracle.ask(
        [
            ("bogus",),
            ("to_bytes", "int"),
            ("to_bytes", "int", "34"),
            ("from_bytes", "int", "zz"),
            ("type", "decimal(9,2)"),
            # spec appendix B: murmur3_x86_32 of int 34 and of "iceberg"
            ("transform", "int", "bucket[2147483647]", "34"),
            ("transform", "string", "bucket[2147483647]", '"iceberg"'),
            ("json", "fixed[2]", '"abcd"'),
        ]
    )
    assert isinstance(answers[0], Err) and "unknown request" in answers[0]
    assert isinstance(answers[1], Err)
    assert answers[2] == "22000000"
    assert isinstance(answers[3], Err)
    assert answers[4] == "decimal(9, 2)"
    assert answers[5] == "int\t2017239379"
    assert answers[6] == "int\t1210000089"
    assert answers[7] == '"ABCD"'
