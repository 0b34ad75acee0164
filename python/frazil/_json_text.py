"""JSON text as the Java reference writes it (Jackson's compact generator), and Java's
``Double.toString`` (also used by partition paths' human strings).

Metadata files are compared and rewritten by other implementations; writing the same bytes as
Java's ``TableMetadataParser`` keeps a file unchanged when one implementation rewrites the
other's. Where JSON leaves a choice, Jackson writes: no white space, non-ASCII characters as they
are (UTF-8), the short escapes ``\\" \\\\ \\b \\t \\n \\f \\r`` and ``\\u00XX`` (upper-case hex)
for the other control characters, and floating-point numbers as Java's ``Double.toString``.
"""

from __future__ import annotations

import math
import struct
from decimal import Decimal
from typing import Any

_ESCAPES = {
    **{i: f"\\u{i:04X}" for i in range(0x20)},
    ord('"'): '\\"',
    ord("\\"): "\\\\",
    0x08: "\\b",
    0x09: "\\t",
    0x0A: "\\n",
    0x0C: "\\f",
    0x0D: "\\r",
}


def java_double(x: float, single: bool = False) -> str:
    """``Double.toString`` (``Float.toString`` when ``single``): the shortest digits that read
    back as ``x`` (as a float32 when ``single``), in plain notation for 1e-3 <= |x| < 1e7, else
    as ``d.dddE[-]n``, always with a digit after the point; ``NaN``, ``Infinity``."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    if single:
        x = _float32(x)
        text = next(t for t in (f"{x:.{p}g}" for p in range(1, 10)) if _float32(float(t)) == x)
    else:
        text = repr(x)
    sign, digits, exponent = Decimal(text).normalize().as_tuple()
    assert isinstance(exponent, int)
    ds = "".join(map(str, digits))
    point = len(ds) + exponent  # the decimal point sits after this many digits
    minus = "-" if sign else ""
    if 1e-3 <= abs(x) < 1e7:
        if point <= 0:
            return f"{minus}0.{'0' * -point}{ds}"
        if point >= len(ds):
            return f"{minus}{ds}{'0' * (point - len(ds))}.0"
        return f"{minus}{ds[:point]}.{ds[point:]}"
    return f"{minus}{ds[0]}.{ds[1:] or '0'}E{point - 1}"


def _float32(x: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


def dumps(value: Any) -> str:
    """``value`` (dicts, lists, strings, ints, floats, booleans, None) as compact JSON text."""
    out: list[str] = []
    _write(value, out)
    return "".join(out)


def _write(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(f'"{value.translate(_ESCAPES)}"')
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"JSON has no {value!r}")
        out.append(java_double(value))
    elif isinstance(value, dict):
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            if i:
                out.append(",")
            out.append(f'"{str(key).translate(_ESCAPES)}":')
            _write(item, out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write(item, out)
        out.append("]")
    else:
        raise TypeError(f"cannot write {type(value).__name__} as JSON")
