"""v3 ``geometry`` / ``geography`` columns: written as Parquet GEOMETRY / GEOGRAPHY (WKB) that
DuckDB 1.5 reads; DuckDB-written ones read and added by frazil; bounding-box bounds checked
against boxes computed here by an independent WKB walk; file pruning by box counted and its
rows checked against DuckDB's ``st_intersects_extent`` over every row."""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from peers import import_peer

from frazil.catalog import load_catalog
from frazil.exceptions import FrazilError
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.scan.geo import plan_intersecting, read_intersecting
from frazil.types import GeographyType, GeometryType, LongType, NestedField
from frazil.values.geo import BoundingBox

# ---------------------------------------------------------------------------------------------
# WKB built and walked here, independently of frazil's native reader


def point(x: float, y: float, *zm: float, big: bool = False) -> bytes:
    code = {0: 1, 1: 1001, 2: 3001}[len(zm)]
    e = ">" if big else "<"
    return struct.pack(f"{e}BI{2 + len(zm)}d", 0 if big else 1, code, x, y, *zm)


def linestring(coords: list[tuple[float, ...]]) -> bytes:
    dims = len(coords[0])
    code = {2: 2, 3: 1002, 4: 3002}[dims]
    out = struct.pack("<BII", 1, code, len(coords))
    return out + b"".join(struct.pack(f"<{dims}d", *c) for c in coords)


def polygon(ring: list[tuple[float, float]]) -> bytes:
    out = struct.pack("<BIII", 1, 3, 1, len(ring))
    return out + b"".join(struct.pack("<2d", *c) for c in ring)


def multi(code: int, parts: list[bytes]) -> bytes:
    return struct.pack("<BII", 1, code, len(parts)) + b"".join(parts)


def walk(wkb: bytes, pos: int, out: list[list[float]]) -> int:
    """Appends every coordinate (as [x, y, z, m], NaN where absent) of the value at ``pos``."""
    e = "<" if wkb[pos] == 1 else ">"
    (code,) = struct.unpack_from(f"{e}I", wkb, pos + 1)
    pos += 5
    kind, dims = code % 1000, code // 1000
    width = 2 + (dims in (1, 3)) + (dims in (2, 3))
    has_z, has_m = dims in (1, 3), dims in (2, 3)

    def coord(p: int) -> int:
        v = list(struct.unpack_from(f"{e}{width}d", wkb, p))
        out.append([v[0], v[1], v[2] if has_z else math.nan, v[-1] if has_m else math.nan])
        return p + 8 * width

    if kind == 1:
        return coord(pos)
    (n,) = struct.unpack_from(f"{e}I", wkb, pos)
    pos += 4
    for _ in range(n):
        if kind == 2:
            pos = coord(pos)
        elif kind == 3:
            (k,) = struct.unpack_from(f"{e}I", wkb, pos)
            pos += 4
            for _ in range(k):
                pos = coord(pos)
        else:
            pos = walk(wkb, pos, out)
    return pos


def expected_bounds(values: list[bytes | None]) -> tuple[bytes, bytes] | None:
    coords: list[list[float]] = []
    for v in values:
        if v is not None:
            walk(v, 0, coords)
    dims = [[c[i] for c in coords if not math.isnan(c[i])] for i in range(4)]
    if not dims[0] or not dims[1]:
        return None
    lo = [min(d) if d else None for d in dims]
    hi = [max(d) if d else None for d in dims]

    def pack(p: list[float | None]) -> bytes:
        x, y, z, m = p
        if z is None and m is None:
            return struct.pack("<2d", x, y)
        if m is None:
            return struct.pack("<3d", x, y, z)
        return struct.pack("<4d", x, y, math.nan if z is None else z, m)

    return pack(lo), pack(hi)


# ---------------------------------------------------------------------------------------------


@pytest.fixture
def catalog(tmp_path: Path) -> Any:
    cat = load_catalog("w", type="filesystem", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    return cat


def make(catalog: Any, name: str, *fields: NestedField, id_required: bool = True) -> Table:
    schema = Schema(NestedField(1, "id", LongType(), id_required), *fields)
    return catalog.create_table(f"db.{name}", schema, properties={"format-version": "3"})


def files(t: Table) -> list[Any]:
    return [task.file for task in t.scan().include_column_stats(True).plan_files()]


GEOMS: list[bytes | None] = [
    point(1, 2),
    None,
    point(-3, 9, big=True),
    linestring([(0, 0, 5), (4, -2, 7)]),
    polygon([(10, 10), (12, 10), (12, 14), (10, 10)]),
    multi(4, [point(7, math.nan), point(-8, 1)]),
    multi(7, [linestring([(1, 1), (2, 2)]), multi(6, [])]),
]


def test_geometry_round_trip_bounds_and_duckdb(catalog: Any) -> None:
    duckdb = import_peer("duckdb")
    t = make(
        catalog,
        "g",
        NestedField(2, "g", GeometryType()),
        NestedField(3, "c", GeometryType("srid:3857")),
    )
    data = pa.table(
        {
            "id": pa.array(range(len(GEOMS)), pa.int64()),
            "g": pa.array(GEOMS, pa.binary()),
            "c": pa.array([point(i, -i) for i in range(len(GEOMS))], pa.large_binary()),
        }
    )
    t.append(data)
    t = catalog.load_table("db.g")
    assert t.scan().to_arrow().sort_by("id").column("g").to_pylist() == GEOMS

    (f,) = files(t)
    assert (f.lower_bounds[2], f.upper_bounds[2]) == expected_bounds(GEOMS)
    # Z exists (the linestring), M does not: 24-byte x:y:z points.
    assert len(f.lower_bounds[2]) == 24
    assert struct.unpack("<3d", f.lower_bounds[2]) == (-8.0, -2.0, 5.0)
    assert struct.unpack("<2d", f.upper_bounds[3]) == (6.0, 0.0)
    assert f.value_counts[2] == 7 and f.null_value_counts[2] == 1

    logical = pq.read_metadata(f.file_path).schema
    assert logical.column(1).logical_type.to_json() == '{"Type":"Geometry"}'
    assert logical.column(2).logical_type.to_json() == '{"Type":"Geometry","crs":"srid:3857"}'
    con = duckdb.connect()
    rows = con.execute(
        f"SELECT id, typeof(g), st_aswkb(g), st_astext(c) FROM '{f.file_path}' ORDER BY id"
    ).fetchall()
    assert [r[1] for r in rows] == ["GEOMETRY"] * len(GEOMS)
    # DuckDB normalizes to little-endian WKB: compare the big-endian point by its text.
    for (_, _, wkb, _), mine in zip(rows, GEOMS, strict=True):
        if mine is not None and mine[0] == 1:
            assert bytes(wkb) == mine
    assert con.execute(f"SELECT st_astext(g) FROM '{f.file_path}' WHERE id = 2").fetchone() == (
        "POINT (-3 9)",
    )
    assert rows[3][3] == "POINT (3 -3)"


def test_xym_bounds_have_nan_z(catalog: Any) -> None:
    t = make(catalog, "m", NestedField(2, "g", GeometryType()))
    xym = struct.pack("<BI3d", 1, 2001, 1.0, 2.0, 9.0)
    t.append(pa.table({"id": pa.array([1], pa.int64()), "g": pa.array([xym], pa.binary())}))
    (f,) = files(catalog.load_table("db.m"))
    assert (f.lower_bounds[2], f.upper_bounds[2]) == expected_bounds([xym])
    lo = struct.unpack("<4d", f.lower_bounds[2])
    assert math.isnan(lo[2]) and lo[3] == 9.0


def test_geography_antimeridian_and_edges(catalog: Any) -> None:
    t = make(
        catalog,
        "geog",
        NestedField(2, "p", GeographyType()),
        NestedField(3, "l", GeographyType("OGC:CRS84", "karney")),
    )
    t.append(
        pa.table(
            {
                "id": pa.array([1, 2, 3], pa.int64()),
                "p": pa.array([point(170, 1), point(-175, -4), point(179, 2)], pa.binary()),
                "l": pa.array([linestring([(170, 60), (-170, 60)]), None, None], pa.binary()),
            }
        )
    )
    (f,) = files(catalog.load_table("db.geog"))
    # The points hug the antimeridian: the box wraps (xmin > xmax), per the spec's rule.
    assert struct.unpack("<2d", f.lower_bounds[2]) == (170.0, -4.0)
    assert struct.unpack("<2d", f.upper_bounds[2]) == (-175.0, 2.0)
    # A spherical edge leaves its vertices' box (here it crosses the antimeridian and bulges
    # north of 60): no bounds rather than wrong ones.
    assert 3 not in f.lower_bounds and 3 not in f.upper_bounds
    # Without bounds a file is never pruned.
    assert (
        plan_intersecting(catalog.load_table("db.geog").scan(), "l", BoundingBox(0, 0, 1, 1))[1]
        == 0
    )
    logical = pq.read_metadata(f.file_path).schema
    assert logical.column(1).logical_type.to_json() == '{"Type":"Geography"}'
    # pyarrow 26 writes GEOGRAPHY with spherical edges only: karney stays plain binary.
    assert logical.column(2).logical_type.to_json() == '{"Type":"None"}'


def test_invalid_wkb_names_the_column(catalog: Any) -> None:
    t = make(catalog, "bad", NestedField(2, "g", GeometryType()))
    data = pa.table({"id": pa.array([1, 2], pa.int64()), "g": pa.array([point(1, 2), b"\x01\x01"])})
    with pytest.raises(FrazilError, match="column g: row 1: WKB value ends early"):
        t.append(data)
    assert catalog.load_table("db.bad").current_snapshot() is None


def test_duckdb_written_geometry_added_and_read(catalog: Any, tmp_path: Path) -> None:
    duckdb = import_peer("duckdb")
    path = tmp_path / "duck.parquet"
    con = duckdb.connect()
    con.execute(
        "COPY (SELECT i::BIGINT AS id, CASE WHEN i = 2 THEN NULL ELSE "
        "('LINESTRING Z (' || i || ' ' || (-i) || ' 1, ' || (i + 3) || ' 4 2)')::GEOMETRY END AS g "
        f"FROM range(5) t(i)) TO '{path}' (FIELD_IDS {{id: 1, g: 2}}, GEOPARQUET_VERSION 'NONE')"
    )
    theirs = [
        None if w is None else bytes(w)
        for (w,) in con.execute(f"SELECT st_aswkb(g) FROM '{path}' ORDER BY id").fetchall()
    ]
    t = make(catalog, "duck", NestedField(2, "g", GeometryType()), id_required=False)
    t.add_files([str(path)])
    t = catalog.load_table("db.duck")
    assert t.scan().to_arrow().sort_by("id").column("g").to_pylist() == theirs
    (f,) = files(t)
    # Bounds from the footer's geospatial statistics, equal to the values' own box.
    assert (f.lower_bounds[2], f.upper_bounds[2]) == expected_bounds(theirs)


def test_pruning_by_box(catalog: Any) -> None:
    duckdb = import_peer("duckdb")
    t = make(catalog, "prune", NestedField(2, "g", GeometryType()))
    everything = []
    for k in range(5):  # file k holds shapes around (10k, k)
        vals = [point(10 * k + i, k) for i in range(3)] + [
            linestring([(10 * k, k + 0.5), (10 * k + 2, k + 1.5)])
        ]
        part = pa.table(
            {"id": pa.array(range(10 * k, 10 * k + 4), pa.int64()), "g": pa.array(vals)}
        )
        everything.append(part)
        t.append(part)
    t = catalog.load_table("db.prune")
    box = BoundingBox(11.5, 0.0, 21.0, 2.2)

    tasks, skipped = plan_intersecting(t.scan(), "g", box)
    assert (len(tasks), skipped) == (2, 3)
    got = read_intersecting(t.scan(), "g", box).sort_by("id")

    con = duckdb.connect()
    con.register("all_rows", pa.concat_tables(everything))
    expected = con.execute(
        "SELECT id, g FROM all_rows WHERE st_intersects_extent(st_geomfromwkb(g), "
        "'POLYGON ((11.5 0, 21 0, 21 2.2, 11.5 2.2, 11.5 0))'::GEOMETRY) ORDER BY id"
    ).fetchall()
    assert [(r["id"], r["g"]) for r in got.to_pylist()] == [(i, bytes(g)) for i, g in expected]
    assert len(expected) > 0
    # Unpruned: the same row test over every row of every file.
    assert read_intersecting(t.scan(), "g", BoundingBox(-1e9, -1e9, 1e9, 1e9)).num_rows == 20


def test_geography_pruning_across_the_antimeridian(catalog: Any) -> None:
    t = make(catalog, "wrap", NestedField(2, "p", GeographyType()))
    t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "p": [point(175, 0), point(-178, 1)]}))
    t.append(pa.table({"id": pa.array([3], pa.int64()), "p": [point(0, 0)]}))
    t = catalog.load_table("db.wrap")
    # A query box that itself wraps: 179 -> -179.
    tasks, skipped = plan_intersecting(t.scan(), "p", BoundingBox(179.0, -5.0, -177.0, 5.0))
    assert (len(tasks), skipped) == (1, 1)
    got = read_intersecting(t.scan(), "p", BoundingBox(179.0, -5.0, -177.0, 5.0))
    assert got.column("id").to_pylist() == [2]
    _, skipped = plan_intersecting(t.scan(), "p", BoundingBox(-1.0, -1.0, 1.0, 1.0))
    assert skipped == 1


@pytest.mark.parametrize("fmt", ["orc", "avro"])
def test_geo_bounds_in_other_formats(catalog: Any, fmt: str) -> None:
    schema = Schema(NestedField(1, "id", LongType(), True), NestedField(2, "g", GeometryType()))
    props = {"format-version": "3", "write.format.default": fmt}
    t = catalog.create_table(f"db.{fmt}", schema, properties=props)
    vals = [point(4, -1), None, linestring([(0, 2), (9, 3)])]
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "g": pa.array(vals)}))
    t = catalog.load_table(f"db.{fmt}")
    assert t.scan().to_arrow().sort_by("id").column("g").to_pylist() == vals
    (f,) = files(t)
    assert (f.lower_bounds[2], f.upper_bounds[2]) == expected_bounds(vals)


def test_nested_geometry_and_evolution(catalog: Any) -> None:
    from frazil.types import StructType, TimestampNanoType

    t = make(catalog, "evo")
    t.append(pa.table({"id": pa.array([1], pa.int64())}))
    with t.update_schema() as u:
        u.add_column(
            "s",
            StructType(
                NestedField(10, "inner", GeometryType()), NestedField(11, "n", TimestampNanoType())
            ),
        )
    t = catalog.load_table("db.evo")
    s_type = pa.struct([("inner", pa.binary()), ("n", pa.timestamp("ns"))])
    row = {"inner": point(5, 6), "n": 1}
    t.append(pa.table({"id": pa.array([2], pa.int64()), "s": pa.array([row], s_type)}))
    t = catalog.load_table("db.evo")
    got = t.scan().to_arrow().sort_by("id").to_pylist()
    assert got[0]["s"] is None and got[1]["s"]["inner"] == point(5, 6)
    assert got[1]["s"]["n"].value == 1  # nanoseconds kept
    new = [
        f for f in files(t) if f.record_count == 1 and f.lower_bounds.get(1) == b"\2" + b"\0" * 7
    ]
    (f,) = new
    inner = t.schema().find_field("s.inner").field_id
    assert (f.lower_bounds[inner], f.upper_bounds[inner]) == expected_bounds([point(5, 6)])


def test_geoarrow_input_types_and_box_helper(catalog: Any) -> None:
    from frazil.arrow_schema import type_from_arrow
    from frazil.values.geo import WkbType, bounds_intersect

    ext = WkbType(pa.binary(), b'{"crs": "srid:3857"}')
    assert type_from_arrow(ext) == GeometryType("srid:3857")
    assert type_from_arrow(WkbType(pa.binary(), b'{"edges": "spherical"}')) == GeographyType()
    t = make(catalog, "ext", NestedField(2, "g", GeometryType()))
    arr = pa.ExtensionArray.from_storage(ext, pa.array([point(1, 1), None], pa.binary()))
    t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "g": arr}))
    t = catalog.load_table("db.ext")
    assert t.scan().to_arrow().sort_by("id").column("g").to_pylist() == [point(1, 1), None]
    (f,) = files(t)
    lo, hi = f.lower_bounds[2], f.upper_bounds[2]
    assert bounds_intersect(lo, hi, BoundingBox(0, 0, 2, 2))
    assert not bounds_intersect(lo, hi, BoundingBox(2, 2, 3, 3))
    west, east = struct.pack("<2d", 170, 0), struct.pack("<2d", -170, 1)
    assert bounds_intersect(west, east, BoundingBox(175, 0, 176, 1), geography=True)
    assert not bounds_intersect(west, east, BoundingBox(0, 0, 1, 1), geography=True)
