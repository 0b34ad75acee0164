"""JSON text as the Java reference writes it (Jackson's compact generator).

Metadata files are compared and rewritten by other implementations; writing the same bytes as
Java's ``TableMetadataParser`` keeps a file unchanged when one implementation rewrites the
other's. Where JSON leaves a choice, Jackson writes: no white space, non-ASCII characters as they
are (UTF-8), the short escapes ``\\" \\\\ \\b \\t \\n \\f \\r`` and ``\\u00XX`` (upper-case hex)
for the other control characters, and floating-point numbers as Java's ``Double.toString``.
"""

from __future__ import annotations

import math
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


def java_double(x: float) -> str:
    """``Double.toString``: plain notation for 1e-3 <= |x| < 1e7, else ``d.dddE[-]n``, always
    with a digit after the point; the digits are the shortest that read back as ``x``."""
    if math.isnan(x) or math.isinf(x):
        raise ValueError(f"JSON has no {x!r}")
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    sign, digits, exponent = Decimal(repr(x)).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits))
    point = len(text) + exponent  # the decimal point sits after this many digits
    minus = "-" if sign else ""
    if 1e-3 <= abs(x) < 1e7:
        if point <= 0:
            return f"{minus}0.{'0' * -point}{text}"
        if point >= len(text):
            return f"{minus}{text}{'0' * (point - len(text))}.0"
        return f"{minus}{text[:point]}.{text[point:]}"
    return f"{minus}{text[0]}.{text[1:] or '0'}E{point - 1}"


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
