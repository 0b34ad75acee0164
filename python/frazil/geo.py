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
- :class:`BoundingBox` and :func:`bounds_intersect` serve file pruning for
  :func:`frazil.expressions.st_intersects` / :func:`frazil.expressions.st_disjoint`.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass

import pyarrow as pa

from frazil import _native
from frazil.types import DEFAULT_CRS, GeographyType, GeometryType, IcebergType

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


def is_geo(t: IcebergType) -> bool:
    return isinstance(t, (GeometryType, GeographyType))


class WkbType(pa.ExtensionType):
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
    """The Arrow type that makes pyarrow write ``t``'s Parquet logical type."""
    meta: dict[str, str] = {}
    if t.crs is not None and t.crs != DEFAULT_CRS:
        meta["crs"] = t.crs
    if isinstance(t, GeographyType):
        meta["edges"] = t.algorithm or "spherical"
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
