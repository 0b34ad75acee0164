"""JSON for metadata files, both ways: typed reads of parsed objects, and text written as the
Java reference writes it.

Reads: every getter names the full path of the field it reads (``schemas[0].fields[2].id``), so
a malformed metadata file is reported by where it is wrong, and parsers build their frozen
objects only after every field was read, so no half-built object ever escapes.

Writes: Jackson's compact generator, and Java's ``Double.toString`` (also used by partition
paths' human strings). Metadata files are compared and rewritten by other implementations;
writing the same bytes as Java's ``TableMetadataParser`` keeps a file unchanged when one
implementation rewrites the other's. Where JSON leaves a choice, Jackson writes: no white space,
non-ASCII characters as they are (UTF-8), the short escapes ``\\" \\\\ \\b \\t \\n \\f \\r`` and
``\\u00XX`` (upper-case hex) for the other control characters, and floating-point numbers as
Java's ``Double.toString``.
"""

from __future__ import annotations

import builtins
import math
import re
import struct
from decimal import Decimal
from typing import Any

from frazil.exceptions import ParseError

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_MISSING = object()
# A \uD800-\uDFFF escape; a pair of them decodes to one character, a lone one stays a surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class Fields:
    """A JSON object being read, with the path that leads to it."""

    __slots__ = ("obj", "path")

    def __init__(self, obj: Any, path: str) -> None:
        if not isinstance(obj, dict):
            raise ParseError(f"{path}: expected a JSON object, got {_kind(obj)}")
        self.obj: dict[str, Any] = obj
        self.path = path

    def at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def has(self, key: str) -> bool:
        return self.obj.get(key) is not None

    def _get(self, key: str, required: bool) -> Any:
        value = self.obj.get(key, _MISSING)
        if value is _MISSING or value is None:
            if required:
                raise ParseError(f"{self.at(key)}: required field is missing")
            return _MISSING
        return value

    def _int(self, key: str, required: bool, lo: int, hi: int, what: str) -> int | None:
        value = self._get(key, required)
        if value is _MISSING:
            return None
        return check_int(value, self.at(key), lo, hi, what)

    def int32(self, key: str) -> int:
        return self._int(key, True, _INT32_MIN, _INT32_MAX, "a 32-bit integer")  # type: ignore[return-value]

    def opt_int32(self, key: str) -> int | None:
        return self._int(key, False, _INT32_MIN, _INT32_MAX, "a 32-bit integer")

    def long(self, key: str) -> int:
        return self._int(key, True, _INT64_MIN, _INT64_MAX, "a 64-bit integer")  # type: ignore[return-value]

    def opt_long(self, key: str) -> int | None:
        return self._int(key, False, _INT64_MIN, _INT64_MAX, "a 64-bit integer")

    def str(self, key: builtins.str) -> builtins.str:
        value = self._get(key, True)
        return check_str(value, self.at(key))

    def opt_str(self, key: builtins.str) -> builtins.str | None:
        value = self._get(key, False)
        return None if value is _MISSING else check_str(value, self.at(key))

    def bool(self, key: builtins.str) -> builtins.bool:
        value = self._get(key, True)
        if not isinstance(value, bool):
            raise ParseError(f"{self.at(key)}: expected a boolean, got {_kind(value)}")
        return value

    def list(self, key: builtins.str) -> builtins.list[Any]:
        value = self._get(key, True)
        return check_list(value, self.at(key))

    def opt_list(self, key: builtins.str) -> builtins.list[Any] | None:
        value = self._get(key, False)
        return None if value is _MISSING else check_list(value, self.at(key))

    def object(self, key: builtins.str) -> Fields:
        return Fields(self._get(key, True), self.at(key))

    def opt_str_map(self, key: builtins.str) -> dict[builtins.str, builtins.str]:
        value = self._get(key, False)
        if value is _MISSING:
            return {}
        if not isinstance(value, dict):
            raise ParseError(f"{self.at(key)}: expected a JSON object, got {_kind(value)}")
        for k, v in value.items():
            if not isinstance(v, str):
                raise ParseError(f"{self.at(key)}.{k}: expected a string, got {_kind(v)}")
        return dict(value)

    def opt_int32_list(self, key: builtins.str) -> builtins.list[int] | None:
        items = self.opt_list(key)
        if items is None:
            return None
        at = self.at(key)
        return [
            check_int(v, f"{at}[{i}]", _INT32_MIN, _INT32_MAX, "a 32-bit integer")
            for i, v in enumerate(items)
        ]

    def raw(self, key: builtins.str) -> Any:
        """The value as it is (``None`` when absent), for fields kept in their JSON form."""
        return self.obj.get(key)


def check_int(value: Any, at: str, lo: int, hi: int, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ParseError(f"{at}: expected {what}, got {_kind(value)}")
    if not lo <= value <= hi:
        raise ParseError(f"{at}: {value} is out of range for {what}")
    return value


def check_str(value: Any, at: str) -> str:
    if not isinstance(value, str):
        raise ParseError(f"{at}: expected a string, got {_kind(value)}")
    return value


def check_list(value: Any, at: str) -> list[Any]:
    if not isinstance(value, list):
        raise ParseError(f"{at}: expected a JSON list, got {_kind(value)}")
    return value


def check_unique(ids: list[int], at: str, what: str) -> None:
    seen: set[int] = set()
    for i in ids:
        if i in seen:
            raise ParseError(f"{at}: duplicate {what} {i}")
        seen.add(i)


def check_unicode(text: str, obj: Any, path: str = "") -> None:
    """Refuses a lone UTF-16 surrogate (``"\\ud800"`` without its pair) anywhere in ``obj``,
    the JSON ``text`` decoded: it is no Unicode text, so it could not be written back as UTF-8
    nor handed to Arrow or the native core. Walks ``obj`` only when ``text`` may hold one."""
    if _SURROGATE_ESCAPE.search(text) is None and (text.isascii() or not _SURROGATE.search(text)):
        return
    _check_unicode(obj, path)


def _check_unicode(value: Any, path: str) -> None:
    if isinstance(value, str):
        _check_str(value, path or "(value)")
    elif isinstance(value, dict):
        for key, item in value.items():
            at = f"{path}.{key}" if path else key
            _check_str(key, f"{path or '(object)'}: key {key!r}")
            _check_unicode(item, at)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_unicode(item, f"{path}[{i}]")


def _check_str(value: str, at: str) -> None:
    m = _SURROGATE.search(value)
    if m is None:
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ParseError(
            f"{at}: holds a lone surrogate \\u{ord(m.group()):04x} (an escape without its pair), "
            "which is not Unicode text"
        ) from e


# Writing JSON text

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
