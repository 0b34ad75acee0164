"""v3 ``variant`` columns: frazil's Variant bytes read by DuckDB 1.5 (``variant_bytes_to_variant``
of metadata || value), DuckDB's bytes and DuckDB-written (shredded) Parquet files read by
frazil, JSON helpers checked against DuckDB's own JSON of the same values, no bounds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from peers import import_peer

from frazil.catalog import load_catalog
from frazil.exceptions import DecodeError, ParseError, UnsupportedError
from frazil.schema import Schema
from frazil.types import LongType, NestedField, VariantType
from frazil.values import variant

duckdb = import_peer("duckdb")

DOCS: list[str | None] = [
    '{"a": 1, "b": [true, null, "x"], "c": {"d": -2.5, "e": "ü"}}',
    None,
    '"hi"',
    "3.5",
    "null",
    "[]",
    "{}",
    json.dumps({"long": "x" * 100, "n": [2**40, -(2**15), 70000]}),
    json.dumps([{"k": i} for i in range(300)]),
]


@pytest.fixture
def catalog(tmp_path: Path) -> Any:
    cat = load_catalog("w", type="filesystem", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    return cat


def schema(id_required: bool = True) -> Schema:
    return Schema(NestedField(1, "id", LongType(), id_required), NestedField(2, "v", VariantType()))


def parsed(texts: list[str | None]) -> list[Any]:
    return [None if t is None else json.loads(t) for t in texts]


def test_json_round_trip() -> None:
    arr = variant.from_json(DOCS)
    assert arr.type == variant.VARIANT_ARROW_TYPE
    assert arr.null_count == 1
    assert parsed(variant.to_json(arr).to_pylist()) == parsed(DOCS)


def test_duckdb_reads_frazil_variants(catalog: Any) -> None:
    t = catalog.create_table("db.t", schema(), properties={"format-version": "3"})
    ids = pa.array(range(len(DOCS)), pa.int64())
    t.append(pa.table({"id": ids, "v": variant.from_json(DOCS)}))
    t = catalog.load_table("db.t")
    got = t.scan().to_arrow().sort_by("id")
    assert got.schema.field("v").type == variant.VARIANT_ARROW_TYPE
    assert parsed(variant.to_json(got.column("v")).to_pylist()) == parsed(DOCS)

    (task,) = t.scan().include_column_stats(True).plan_files()
    assert 2 not in (task.file.lower_bounds or {}) and 2 not in (task.file.upper_bounds or {})
    # The spec: metadata and value carry no field ids.
    group = pq.read_metadata(task.file.file_path).schema.to_arrow_schema().field("v")
    assert [f.metadata for f in group.type] == [None, None]

    # The group carries Parquet's VARIANT logical type, so DuckDB reads a VARIANT column.
    assert "optional group field_id=2 v (Variant(1))" in str(
        pq.read_metadata(task.file.file_path).schema
    )
    con = duckdb.connect()
    rows = con.execute(
        f"SELECT id, typeof(v), v IS NULL, v::JSON FROM '{task.file.file_path}' ORDER BY id"
    ).fetchall()
    assert {r[1] for r in rows} == {"VARIANT"}
    # DuckDB reads a variant null (the JSON null) as SQL NULL too.
    assert [r[2] for r in rows] == [d is None or d == "null" for d in DOCS]
    assert [None if r[2] else json.loads(r[3]) for r in rows] == parsed(DOCS)
    # DuckDB's own decoder of the raw bytes agrees too.
    raw = pq.read_table(task.file.file_path).sort_by("id").column("v").to_pylist()
    for cell, doc in zip(raw, DOCS, strict=True):
        if cell is not None:
            (text,) = con.execute(
                "SELECT variant_bytes_to_variant(?)::JSON", [cell["metadata"] + cell["value"]]
            ).fetchone()
            assert json.loads(text) == json.loads(doc or "null")


def test_duckdb_iceberg_scan_reads_variant_and_geometry(catalog: Any) -> None:
    import struct
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "interop"))
    from duckdb_peer import duckdb_with_iceberg

    from frazil.types import GeometryType

    con = duckdb_with_iceberg()
    s = Schema(
        NestedField(1, "id", LongType(), True),
        NestedField(2, "v", VariantType()),
        NestedField(3, "g", GeometryType()),
    )
    t = catalog.create_table("db.ice", s, properties={"format-version": "3"})
    wkb = struct.pack("<BIdd", 1, 1, 1.5, -2.0)
    t.append(
        pa.table(
            {
                "id": pa.array(range(3), pa.int64()),
                "v": variant.from_json(DOCS[:3]),
                "g": pa.array([wkb, None, wkb]),
            }
        )
    )
    location = catalog.load_table("db.ice").metadata_location
    rows = con.execute(
        f"SELECT id, v::JSON, st_astext(g) FROM iceberg_scan('{location}') ORDER BY id"
    ).fetchall()
    assert [json.loads(r[1]) if r[1] is not None else None for r in rows][::2] == [
        json.loads(DOCS[0]),
        json.loads(DOCS[2]),
    ]
    assert [r[2] for r in rows] == ["POINT (1.5 -2)", None, "POINT (1.5 -2)"]


def test_frazil_decodes_duckdb_bytes() -> None:
    """DuckDB encodes typed values JSON lacks (dates, decimals, timestamps, uuids, floats,
    binary, times): frazil's JSON of DuckDB's bytes, against values written out here."""
    con = duckdb.connect()
    sql = [
        ("DATE '2024-01-02'", '"2024-01-02"'),
        ("12.34::DECIMAL(4,2)", "12.34"),
        ("(-0.05)::DECIMAL(18,3)", "-0.050"),
        ("TIMESTAMP '2024-01-02 03:04:05.123456'", '"2024-01-02T03:04:05.123456"'),
        ("TIMESTAMPTZ '2024-01-02 03:04:05.5+00'", '"2024-01-02T03:04:05.500000+00:00"'),
        ("'\\xAA\\xBB'::BLOB", '"qrs="'),
        ("'aabbccdd-0000-1111-2222-333344445555'::UUID", '"aabbccdd-0000-1111-2222-333344445555"'),
        ("1.5::FLOAT", "1.5"),
        ("TIME '01:02:03'", '"01:02:03.000000"'),
        ('\'{"k": [1, {"z": null}]}\'::JSON', '{"k":[1,{"z":null}]}'),
    ]
    union = " UNION ALL ".join(
        f"SELECT {i} AS i, variant_to_parquet_variant(({e})::VARIANT) AS p"
        for i, (e, _) in enumerate(sql)
    )
    rows = [p for (p,) in con.execute(f"SELECT p FROM ({union}) ORDER BY i").fetchall()]
    arr = pa.StructArray.from_arrays(
        [
            pa.array([bytes(r["metadata"]) for r in rows]),
            pa.array([bytes(r["value"]) for r in rows]),
        ],
        fields=list(variant.VARIANT_ARROW_TYPE),
    )
    assert variant.to_json(arr).to_pylist() == [want for _, want in sql]


def test_duckdb_written_shredded_file(catalog: Any, tmp_path: Path) -> None:
    path = tmp_path / "duck.parquet"
    con = duckdb.connect()
    # DuckDB shreds the column: strings (the common type) go to typed_value, the rest to value.
    con.execute(
        "COPY (SELECT * FROM (VALUES (1, '{\"a\": 1}'::JSON::VARIANT), (2, 'hi'::VARIANT), "
        "(3, '[1, 2]'::JSON::VARIANT), (4, NULL), (5, 'ho'::VARIANT)) t(id, v)) "
        f"TO '{path}' (FIELD_IDS {{id: 1, v: 2}})"
    )
    shape = pq.read_schema(path).field("v").type
    assert shape.get_field_index("typed_value") >= 0
    expected = [
        json.loads(j)
        for (j,) in con.execute(f"SELECT v::JSON FROM '{path}' ORDER BY id").fetchall()
    ]
    t = catalog.create_table("db.d", schema(False), properties={"format-version": "3"})
    t.add_files([str(path)])
    got = catalog.load_table("db.d").scan().to_arrow().sort_by("id")
    assert parsed(variant.to_json(got.column("v")).to_pylist()) == expected


SHREDDED_DOCS = [
    # Objects of one shape (DuckDB shreds them into typed_value groups), with arrays, a
    # field missing in some rows, nulls, and a row of another type.
    '{"a": 1, "b": "x", "c": [1, 2, 3], "d": {"e": 2.5}}',
    '{"a": 2, "b": "y", "c": [], "d": {"e": -1.0}}',
    '{"a": 3, "c": [4], "d": {"e": 0.0, "f": true}}',
    '{"a": null, "b": "z", "c": [5, 6], "d": {"e": 1.5}}',
    '{"a": 4, "b": "w", "c": [7], "d": {"e": 3.0}, "extra": [1, {"k": "v"}]}',
    "[1, 2]",
]


@pytest.mark.parametrize("docs", [SHREDDED_DOCS, SHREDDED_DOCS[:5]])
def test_duckdb_shredded_objects_and_arrays(tmp_path: Path, catalog: Any, docs: list[str]) -> None:
    path = tmp_path / "obj.parquet"
    con = duckdb.connect()
    con.register("docs", pa.table({"id": range(len(docs)), "j": docs}))
    con.execute(
        "COPY (SELECT id::BIGINT AS id, j::JSON::VARIANT AS v FROM docs) "
        f"TO '{path}' (FIELD_IDS {{id: 1, v: 2}})"
    )
    typed = pq.read_schema(path).field("v").type
    assert typed.get_field_index("typed_value") >= 0
    expected = [
        json.loads(j)
        for (j,) in con.execute(f"SELECT v::JSON FROM '{path}' ORDER BY id").fetchall()
    ]
    assert expected == [json.loads(d) for d in docs]
    t = catalog.create_table("db.o", schema(False), properties={"format-version": "3"})
    t.add_files([str(path)])
    got = catalog.load_table("db.o").scan().to_arrow().sort_by("id")
    assert parsed(variant.to_json(got.column("v")).to_pylist()) == expected


def test_bad_input_errors() -> None:
    with pytest.raises(ParseError, match="row 1: not valid JSON"):
        variant.from_json(["1", "{nope"])
    corrupt = pa.StructArray.from_arrays(
        [pa.array([b"\x01\x00\x00"]), pa.array([b"\x02\x05"])],
        fields=list(variant.VARIANT_ARROW_TYPE),
    )
    with pytest.raises(DecodeError, match="row 0: invalid variant"):
        variant.to_json(corrupt)


@pytest.mark.parametrize("fmt", ["orc", "avro"])
def test_variant_needs_parquet(catalog: Any, fmt: str) -> None:
    props = {"format-version": "3", "write.format.default": fmt}
    t = catalog.create_table(f"db.{fmt}", schema(), properties=props)
    data = pa.table({"id": pa.array([1], pa.int64()), "v": variant.from_json(["1"])})
    with pytest.raises(UnsupportedError, match="Parquet data files only"):
        t.append(data)
