"""``geometry(C)`` and ``geography(C, A)`` columns (spec v3, Appendix G): WKB values, Parquet's
GEOMETRY / GEOGRAPHY logical types, and bounding-box bounds (the twin of Rust
``frazil_values::geo``, which reads the WKB and computes the boxes).

- In Arrow, frazil reads and takes geo columns as plain binary WKB. Parquet files are written
  with the column as a ``geoarrow.wkb`` extension type (the GeoArrow convention pyarrow maps to
  the GEOMETRY / GEOGRAPHY logical types; its ``crs`` and ``edges`` metadata carry the type's
  parameters), so other engines see a geometry column.
- Bounds (spec "Bounds for Geometry and Geography"): the lower and upper points of the values'
  box, serialized as x:y[:z][:m] little-endian doubles (Appendix D), computed natively while a
  file is written. NaN coordinates are skipped per dimension; a file without X or Y values has
  no bounds. Geography boxes of points use the antimeridian rule (``xmin > xmax`` wraps); a
  geography file holding values with edges keeps no bounds (its spherical edges can leave the
  box of its vertices). A curved WKB type gives no bounds for its file.
- Spatial filtering by box (:mod:`frazil.table.scan.geo`) compares a query
  :class:`BoundingBox` with these bounds and boxes.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from frazil import _moved, _native
from frazil.types import DEFAULT_CRS, GeographyType, GeometryType, IcebergType, StructType

if TYPE_CHECKING:
    import pyarrow.parquet as pq

    from frazil.schema import Schema

__all__ = [
    "BoundingBox",
    "GeoBounds",
    "WkbType",
    "bounds_intersect",
    "is_geo",
    "parquet_type",
    "type_from_wkb_extension",
]

GeoBounds = _native.GeoBounds
"""Native accumulator: ``GeoBounds(geography).add(array)``, ``.bounds() -> (lower, upper)``."""

_EXTENSION = "geoarrow.wkb"


def __getattr__(name: str) -> Any:
    # plan_intersecting and read_intersecting moved to frazil.table.scan.geo.
    return _moved.moved_name(__name__, name)


def is_geo(t: IcebergType) -> bool:
    return isinstance(t, (GeometryType, GeographyType))


class WkbType(pa.ExtensionType):  # type: ignore[misc]  # pyarrow ships no stubs
    """The ``geoarrow.wkb`` extension type over binary storage. Deliberately not registered
    (geoarrow-pyarrow registers its own): frazil only builds it to hand pyarrow's Parquet
    writer, which recognizes the name."""

    def __init__(self, storage: pa.DataType, metadata: bytes = b"{}") -> None:
        self._metadata = metadata
        super().__init__(storage, _EXTENSION)

    def __arrow_ext_serialize__(self) -> bytes:
        return self._metadata

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> WkbType:
        return cls(storage_type, serialized)


def parquet_type(t: GeometryType | GeographyType, storage: pa.DataType) -> pa.DataType:
    """The Arrow type that makes pyarrow write ``t``'s Parquet logical type. pyarrow 26 writes
    GEOGRAPHY only with spherical edges: a geography of another algorithm (vincenty, thomas,
    andoyer, karney) is written as plain binary WKB (its type lives in the table schema)."""
    meta: dict[str, str] = {}
    if t.crs is not None and t.crs != DEFAULT_CRS:
        meta["crs"] = t.crs
    if isinstance(t, GeographyType):
        if t.algorithm not in (None, "spherical"):
            return storage
        meta["edges"] = "spherical"
    return WkbType(storage, json.dumps(meta).encode())


def type_from_wkb_extension(metadata: bytes | None) -> GeometryType | GeographyType:
    """The Iceberg type of a ``geoarrow.wkb`` column from its extension metadata."""
    try:
        meta = json.loads(metadata or b"{}") or {}
    except ValueError:
        meta = {}
    crs = meta.get("crs")
    if isinstance(crs, dict):  # PROJJSON: no Iceberg CRS string for it
        crs = None
    edges = meta.get("edges")
    if edges and edges != "planar":
        return GeographyType(crs, None if edges == "spherical" else edges)
    return GeometryType(crs)


@dataclass(frozen=True)
class BoundingBox:
    """An X/Y box; for geography ``xmin > xmax`` wraps through the antimeridian."""

    xmin: float
    ymin: float
    xmax: float
    ymax: float

    def bounds(self) -> tuple[bytes, bytes]:
        """The box as Appendix D lower and upper bound points."""
        return struct.pack("<2d", self.xmin, self.ymin), struct.pack("<2d", self.xmax, self.ymax)


def bounds_intersect(
    lower: bytes, upper: bytes, box: BoundingBox, *, geography: bool = False
) -> bool:
    """Whether a file's geo bounds may share a point with ``box`` (the rule is native)."""
    lo, hi = box.bounds()
    return bool(_native.geo_bounds_intersect(lower, upper, lo, hi, geography))


# ---------------------------------------------------------------------------------------------
# Writing: Parquet types and bounds of a data file


def with_geo_metrics(
    fields: dict[str, Any], geo: dict[int, Any], counts: dict[int, tuple[int, int]]
) -> dict[str, Any]:
    """Data file fields with the geo columns' bounds and counts (pyarrow keeps no min/max or
    null-count statistics for GEOMETRY / GEOGRAPHY columns)."""
    if not geo:
        return fields
    lower, upper = dict(fields["lower_bounds"]), dict(fields["upper_bounds"])
    value_counts, null_counts = dict(fields["value_counts"]), dict(fields["null_value_counts"])
    for fid, (n, nulls) in counts.items():
        value_counts.setdefault(fid, n)
        null_counts.setdefault(fid, nulls)
    for fid, acc in geo.items():
        lower.pop(fid, None)
        upper.pop(fid, None)
        box = acc.bounds()
        if box is not None:
            lower[fid], upper[fid] = box
    return {
        **fields,
        "lower_bounds": lower,
        "upper_bounds": upper,
        "value_counts": value_counts,
        "null_value_counts": null_counts,
    }


def parquet_schema(arrow_schema: pa.Schema, schema: Schema) -> pa.Schema:
    """``arrow_schema`` with geo columns (outside lists and maps) as ``geoarrow.wkb``, which
    pyarrow writes as Parquet's GEOMETRY / GEOGRAPHY logical types."""

    def convert(f: pa.Field, t: Any) -> pa.Field:
        if is_geo(t):
            return f.with_type(parquet_type(t, f.type))
        if isinstance(t, StructType) and pa.types.is_struct(f.type):
            kids = [convert(f.type.field(c.name), c.field_type) for c in t.fields]
            return f.with_type(pa.struct(kids))
        return f

    if not any(is_geo(t) for t in _primitive_types(schema.fields)):
        return arrow_schema
    fields = {f.name: f.field_type for f in schema.fields}
    return pa.schema(
        [convert(f, fields.get(f.name)) for f in arrow_schema], metadata=arrow_schema.metadata
    )


def _primitive_types(fields: Any) -> list[IcebergType]:
    out: list[IcebergType] = []
    for f in fields:
        t = f.field_type
        out.extend(_primitive_types(t.fields) if isinstance(t, StructType) else [t])
    return out


def with_schema(table: pa.Table, schema: pa.Schema) -> pa.Table:
    if table.schema == schema:
        return table
    return table.cast(schema)


def footer_bounds(
    file_metadata: pq.FileMetaData, column: int, geography: bool
) -> tuple[bytes, bytes] | None:
    """Geo bounds from the column chunks' Parquet geospatial statistics (merged natively, as
    the writer's boxes are); none unless every chunk with values has an X/Y box."""
    acc = GeoBounds(geography)
    for r in range(file_metadata.num_row_groups):
        chunk = file_metadata.row_group(r).column(column)
        st = chunk.geo_statistics if chunk.is_geo_stats_set else None
        if st is None or st.xmin is None or st.ymin is None:
            nulls = chunk.statistics.null_count if chunk.is_stats_set else None
            if nulls is not None and nulls == chunk.num_values:
                continue  # only nulls: nothing to bound
            return None
        acc.add_box(st.xmin, st.ymin, st.xmax, st.ymax, st.zmin, st.zmax, st.mmin, st.mmax)
    return acc.bounds()
