"""View metadata JSON: the view spec's two example files (Appendix A) parse to the values they
spell and serialize back to the same JSON; malformed files are refused naming the field;
representations of unknown types survive a rewrite untouched; parse/serialize round-trips for
generated metadata."""

from __future__ import annotations

import gzip
import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frazil.exceptions import ParseError, UnsupportedError
from frazil.schema import Schema
from frazil.types import DateType, IntegerType, LongType, NestedField, StringType
from frazil.view.metadata import (
    SQLViewRepresentation,
    UnknownViewRepresentation,
    ViewHistoryEntry,
    ViewMetadata,
    ViewVersion,
)

# The two metadata files of the view spec's Appendix A, copied verbatim from view-spec.md
# (test_examples_are_the_specs checks the copy wherever the spec is beside the repository).
EXAMPLES = Path(__file__).resolve().parent / "spec_examples"
SPEC = next(
    (
        p / "shared" / "reference" / "view-spec.md"
        for p in Path(__file__).resolve().parents[3:5]
        if (p / "shared" / "reference" / "view-spec.md").exists()
    ),
    Path("shared/reference/view-spec.md"),
)


def spec_examples() -> list[str]:
    return [(EXAMPLES / f"appendix-a-{i}.metadata.json").read_text() for i in (1, 2)]


def test_examples_are_the_specs() -> None:
    if not SPEC.exists():
        pytest.skip(f"the view spec is not at {SPEC}")
    assert re.findall(r"```json\n(.*?)```", SPEC.read_text(), re.S) == spec_examples()


SQL_1 = "SELECT\n    COUNT(1), CAST(event_ts AS DATE)\nFROM events\nGROUP BY 2"
SQL_2 = "SELECT\n    COUNT(1), CAST(event_ts AS DATE)\nFROM prod.default.events\nGROUP BY 2"


def test_spec_example_1_values() -> None:
    m = ViewMetadata.from_json(spec_examples()[0])
    assert m.view_uuid == uuid.UUID("fa6506c3-7681-40c8-86dc-e36561f83385")
    assert m.format_version == 1
    assert m.location == "s3://bucket/warehouse/default.db/event_agg"
    assert m.current_version_id == 1
    assert dict(m.properties) == {"comment": "Daily event counts"}
    v = m.current_version()
    assert v == ViewVersion(
        version_id=1,
        timestamp_ms=1573518431292,
        schema_id=1,
        summary={"engine-name": "Spark", "engine-version": "3.3.2"},
        representations=(SQLViewRepresentation(sql=SQL_1, dialect="spark"),),
        default_namespace=("default",),
        default_catalog="prod",
    )
    assert m.schema() == Schema(
        NestedField(1, "event_count", IntegerType(), required=False, doc="Count of events"),
        NestedField(2, "event_date", DateType(), required=False),
        schema_id=1,
    )
    assert m.version_log == (ViewHistoryEntry(timestamp_ms=1573518431292, version_id=1),)


def test_spec_example_2_values() -> None:
    m = ViewMetadata.from_json(spec_examples()[1])
    assert m.current_version_id == 2
    assert [v.version_id for v in m.versions] == [1, 2]
    assert m.current_version().timestamp_ms == 1573518981593
    assert m.current_version().representations == (
        SQLViewRepresentation(sql=SQL_2, dialect="spark"),
    )
    assert m.version_by_id(1).representations[0].sql == SQL_1  # type: ignore[union-attr]
    assert m.version_log == (
        ViewHistoryEntry(1573518431292, 1),
        ViewHistoryEntry(1573518981593, 2),
    )


@pytest.mark.parametrize("index", [0, 1])
def test_spec_examples_round_trip(index: int) -> None:
    text = spec_examples()[index]
    m = ViewMetadata.from_json(text)
    assert json.loads(m.to_json()) == json.loads(text)
    assert ViewMetadata.from_json(m.to_json()) == m
    assert ViewMetadata.from_json(m.to_json_bytes(compress=True)) == m
    assert gzip.decompress(m.to_json_bytes(compress=True)) == m.to_json().encode()


def test_field_order_is_the_references() -> None:
    m = ViewMetadata.from_json(spec_examples()[0])
    assert list(json.loads(m.to_json())) == [
        "view-uuid",
        "format-version",
        "location",
        "properties",
        "schemas",
        "current-version-id",
        "versions",
        "version-log",
    ]
    assert list(m.current_version().to_json()) == [
        "version-id",
        "timestamp-ms",
        "schema-id",
        "summary",
        "default-catalog",
        "default-namespace",
        "representations",
    ]
    # no properties: the field is left out, as the reference writes it
    assert "properties" not in json.loads(m.replace(properties={}).to_json())


def test_unknown_representation_is_kept_untouched() -> None:
    obj = json.loads(spec_examples()[0])
    odd = {"type": "substrait", "plan": {"rels": [1, 2, {"x": None}]}, "version": 3}
    obj["versions"][0]["representations"].append(odd)
    m = ViewMetadata.from_dict(obj)
    reps = m.current_version().representations
    assert isinstance(reps[1], UnknownViewRepresentation) and reps[1].type == "substrait"
    assert json.loads(m.to_json())["versions"][0]["representations"][1] == odd
    # the reference compares the sql type case-insensitively
    obj["versions"][0]["representations"][0]["type"] = "SQL"
    assert isinstance(
        ViewMetadata.from_dict(obj).current_version().representations[0], SQLViewRepresentation
    )


def test_sql_for_is_the_references_closest_dialect() -> None:
    v = ViewVersion(
        1,
        0,
        0,
        {},
        (
            UnknownViewRepresentation("x", {"type": "x"}),
            SQLViewRepresentation("select 1", "trino"),
            SQLViewRepresentation("select 2", "Spark"),
        ),
        ("db",),
    )
    assert v.sql_for("spark") == SQLViewRepresentation("select 2", "Spark")
    assert v.sql_for("TRINO") == SQLViewRepresentation("select 1", "trino")
    assert v.sql_for("duckdb") == SQLViewRepresentation("select 1", "trino")


def _mutate(path: list[Any], value: Any) -> dict[str, Any]:
    obj = json.loads(spec_examples()[1])
    target = obj
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return obj


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (["view-uuid"], _DELETE, "view-uuid: required field is missing"),
        (["view-uuid"], "nope", "view-uuid: 'nope' is not a UUID"),
        (["format-version"], "1", "format-version: expected a 32-bit integer"),
        (["format-version"], 0, "format-version: 0 is not a valid"),
        (["location"], 7, "location: expected a string"),
        (["schemas"], {}, "schemas: expected a JSON list"),
        (["current-version-id"], 9, "current-version-id: no version with id 9"),
        (["versions", 1, "version-id"], 1, "versions: duplicate version-id 1"),
        (["versions", 1, "summary"], _DELETE, "versions[1].summary: required field is missing"),
        (["versions", 1, "schema-id"], 5, "versions[1].schema-id: no schema with id 5"),
        (["versions", 0, "default-namespace"], [1], "versions[0].default-namespace[0]"),
        (["versions", 0, "timestamp-ms"], 1.5, "versions[0].timestamp-ms: expected a 64-bit"),
        (["versions", 0, "representations", 0, "sql"], _DELETE, "representations[0].sql"),
        (["versions", 0, "representations", 0, "type"], _DELETE, "representations[0].type"),
        (["version-log", 0, "version-id"], "x", "version-log[0].version-id"),
        (["version-log"], _DELETE, "version-log: required field is missing"),
        (["properties", "comment"], 1, "properties.comment: expected a string"),
    ],
)
def test_malformed_metadata_names_the_field(path: list[Any], value: Any, message: str) -> None:
    with pytest.raises(ParseError, match=re.escape(message)):
        ViewMetadata.from_dict(_mutate(path, value))


def test_duplicate_dialect_is_refused() -> None:
    obj = json.loads(spec_examples()[0])
    reps = obj["versions"][0]["representations"]
    reps.append({**reps[0], "dialect": "SPARK", "sql": "select 1"})
    with pytest.raises(ParseError, match="more than one SQL representation for dialect 'spark'"):
        ViewMetadata.from_dict(obj)


def test_newer_format_version_is_refused_not_misread() -> None:
    with pytest.raises(UnsupportedError, match="view format version 2 is newer"):
        ViewMetadata.from_dict(_mutate(["format-version"], 2))


def test_a_lone_surrogate_is_a_parse_error_naming_the_field() -> None:
    text = json.dumps(_mutate(["versions", 0, "representations", 0, "sql"], "select '\udfff'"))
    with pytest.raises(ParseError, match=r"versions\[0\]\.representations\[0\]\.sql: .*surr"):
        ViewMetadata.from_json(text.encode())


@pytest.mark.parametrize("data", [b"\x1f\x8b\x08junk", b"\xff\xfe", "{", "[]", 3])
def test_garbage_is_a_parse_error(data: Any) -> None:
    with pytest.raises(ParseError):
        ViewMetadata.from_json(data)


# ---- generated round trips

_names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8)
_strmap = st.dictionaries(_names, st.text(max_size=10), max_size=3)
_int32 = st.integers(-(2**31), 2**31 - 1)


@st.composite
def view_metadata(draw: st.DrawFn) -> ViewMetadata:
    n_schemas = draw(st.integers(1, 3))
    schemas = tuple(
        Schema(
            *[
                NestedField(i + 1, f"c{i}", draw(st.sampled_from([LongType(), StringType()])))
                for i in range(draw(st.integers(0, 3)))
            ],
            schema_id=sid,
        )
        for sid in range(n_schemas)
    )
    versions = []
    for vid in draw(st.lists(_int32, min_size=1, max_size=4, unique=True)):
        dialects = draw(st.lists(_names, max_size=3, unique_by=str.lower))
        reps: list[Any] = [SQLViewRepresentation(draw(st.text()), d) for d in dialects]
        if draw(st.booleans()):
            reps.append(
                UnknownViewRepresentation("other", {"type": "other", "k": draw(st.integers())})
            )
        versions.append(
            ViewVersion(
                version_id=vid,
                timestamp_ms=draw(st.integers(0, 2**63 - 1)),
                schema_id=draw(st.integers(0, n_schemas - 1)),
                summary=draw(_strmap),
                representations=tuple(reps),
                default_namespace=tuple(draw(st.lists(_names, max_size=3))),
                default_catalog=draw(st.none() | _names),
            )
        )
    log = tuple(
        ViewHistoryEntry(draw(st.integers(0, 2**40)), draw(st.sampled_from(versions)).version_id)
        for _ in range(draw(st.integers(0, 3)))
    )
    return ViewMetadata(
        view_uuid=draw(st.uuids()),
        format_version=1,
        location=draw(st.text(min_size=1)),
        schemas=schemas,
        current_version_id=draw(st.sampled_from(versions)).version_id,
        versions=tuple(versions),
        version_log=log,
        properties=draw(_strmap),
    )


@given(view_metadata(), st.booleans())
def test_generated_metadata_round_trips(m: ViewMetadata, compress: bool) -> None:
    back = ViewMetadata.from_json(m.to_json_bytes(compress=compress))
    assert back == m
    assert back.to_json() == m.to_json()
    # and the text is plain JSON that any parser reads to the same structure
    assert json.loads(m.to_json()) == m.to_dict()
