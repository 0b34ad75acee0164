"""Nested types (structs, lists, maps) for the JSON parity test with the Java reference: random
values and their Python and Java JSON forms, computed without frazil."""

from __future__ import annotations

import math
import random
from typing import Any

from java_values import (
    from_java_json,
    from_python,
    same,
    to_python,
)
from value_generators import (
    generate,
)

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
