"""Spatial filtering of a scan by box: files whose geo bounds cannot intersect a query
:class:`~frazil.values.geo.BoundingBox` are skipped, and rows are kept when their value's box
intersects it. The expressions spec defines no spatial predicate, so this sits beside the
expression tree rather than in it; the bounds and boxes are :mod:`frazil.values.geo`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from frazil import _native
from frazil.exceptions import FrazilError, InvalidArgumentError
from frazil.types import GeographyType
from frazil.values.geo import BoundingBox, is_geo

if TYPE_CHECKING:
    from frazil.table.scan import DataScan
    from frazil.table.scan.tasks import FileScanTask

__all__ = ["plan_intersecting", "read_intersecting"]


def _field(scan: DataScan, column: str) -> tuple[int, bool]:
    schema = scan.table_schema()
    try:
        f = schema.find_field(column, case_sensitive=scan.case_sensitive)
    except FrazilError:
        raise InvalidArgumentError(f"no column {column!r} in the table") from None
    if not is_geo(f.field_type):
        raise InvalidArgumentError(
            f"column {column!r} is {f.field_type}, not a geometry or geography column"
        )
    return f.field_id, isinstance(f.field_type, GeographyType)


def plan_intersecting(
    scan: DataScan, column: str, box: BoundingBox
) -> tuple[list[FileScanTask], int]:
    """The tasks of ``scan`` whose files may hold a ``column`` value whose box intersects
    ``box``, and how many were skipped by their geo bounds (files without bounds are kept).
    The plan stays Arrow until then: bounds are compared natively
    (``frazil_scan::geo_evaluator``) and task objects are made for the kept files only."""
    fid, geography = _field(scan, column)
    lo, hi = box.bounds()
    plan = scan.include_column_stats(True).plan_files_arrow()
    tasks = plan.tasks
    if tasks.num_rows == 0:
        return [], 0
    files = pa.StructArray.from_arrays(
        [tasks.column(n).combine_chunks() for n in ("lower_bounds", "upper_bounds")],
        names=["lower_bounds", "upper_bounds"],
    )
    keep = pa.array(_native.geo_prune(files, fid, lo, hi, geography))
    rows = pc.indices_nonzero(keep).to_pylist()
    return plan.file_scan_tasks(rows), tasks.num_rows - len(rows)


def read_intersecting(scan: DataScan, column: str, box: BoundingBox) -> pa.Table:
    """The rows of ``scan`` whose ``column`` value has a box intersecting ``box`` (the
    bounding-box test DuckDB calls ``st_intersects_extent``; a geography value with edges,
    whose box is unknown, is kept), reading only the files :func:`plan_intersecting` keeps.
    ``column`` must be among the scan's selected columns."""
    _, geography = _field(scan, column)
    lo, hi = box.bounds()
    tasks, _ = plan_intersecting(scan, column, box)
    read = scan._task_reader()
    schema = scan.arrow_schema()
    out: list[pa.RecordBatch] = []
    for task in tasks:
        for batch in read(task):
            values = batch.column(column)
            mask = pa.array(_native.geo_intersects_box(values, lo, hi, geography))
            out.append(batch.filter(mask))
    return scan._out(pa.Table.from_batches(out, schema=schema))
