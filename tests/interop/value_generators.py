"""Seeded random values per Iceberg type for the parity tests with the Java reference, edge cases
first (nulls, extremes, dates far outside 1..9999, pre-1970 timestamps with sub-second parts,
4-byte UTF-8, empty strings and binaries), as raw values (see java_values.py)."""

from __future__ import annotations

import math
import random
import struct
import sys
import uuid

from java_values import (
    BUCKETS,
    D_MAX_PY,
    D_MIN_PY,
    DAY_US,
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    NS,
    NUM_WIDTHS,
    TEXT_WIDTHS,
    US,
    days_from_civil,
    decimal_ps,
    f32,
    fixed_len,
    kind,
)

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
