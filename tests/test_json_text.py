"""frazil._json writes JSON as Jackson does (the bytes are checked against Java itself in
tests/interop/test_metadata_json_java.py; these are the documented forms, without a JVM)."""

from __future__ import annotations

import json

import pytest

from frazil._json import dumps, java_double


@pytest.mark.parametrize(
    ("value", "text"),
    [
        # java.lang.Double.toString: plain in [1e-3, 1e7), else d.dddE[-]n
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.0, "1.0"),
        (100.0, "100.0"),
        (0.1, "0.1"),
        (0.001, "0.001"),
        (0.000999, "9.99E-4"),
        (123456.789, "123456.789"),
        (9999999.0, "9999999.0"),
        (1e7, "1.0E7"),
        (12345678.9, "1.23456789E7"),
        (1e20, "1.0E20"),
        (-1e-5, "-1.0E-5"),
        (1.5e-300, "1.5E-300"),
        (2.0**63, "9.223372036854776E18"),
    ],
)
def test_java_double(value: float, text: str) -> None:
    assert java_double(value) == text
    assert float(text) == value


@pytest.mark.parametrize(
    ("value", "text"), [(0.1, "0.1"), (1e-10, "1.0E-10"), (16777217.0, "1.6777216E7")]
)
def test_java_float(value: float, text: str) -> None:
    assert java_double(value, single=True) == text


def test_non_finite_numbers_are_text_but_not_json() -> None:
    assert java_double(float("nan")) == "NaN"
    assert java_double(float("-inf")) == "-Infinity"
    with pytest.raises(ValueError):
        dumps({"x": float("inf")})


def test_compact_text_and_escapes() -> None:
    value = {"a": [1, -2, True, False, None, 1.5, {}], "ü": 'q"\\/\x01\x1f\b\t\n\f\r€', "e": []}
    text = dumps(value)
    assert text == (
        '{"a":[1,-2,true,false,null,1.5,{}],"ü":"q\\"\\\\/\\u0001\\u001F\\b\\t\\n\\f\\r€","e":[]}'
    )
    assert json.loads(text) == value
