"""Scan-planning pages (``ScanTasks``: ``file-scan-tasks`` and ``delete-files``) to and from a
plan's Arrow columns (:class:`~frazil.table.scan.arrow_plan.ScanPlan`), natively: no Python
object per task on either side.

:func:`write_page` gives the JSON bytes of rows of a plan (``frazil serve``'s
``fetchScanTasks``); :func:`read_page` reads such bytes back into tables shaped like a plan's
``tasks`` and ``delete_files`` (frazil's REST client). The content files are Java's
``ContentFileParser`` form: partition values in the JSON single-value form (spec Appendix D),
bounds and key metadata as upper-case hex of their binary form.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import _native
from frazil.expressions import from_json
from frazil.expressions.json import to_json
from frazil.types import UnknownType

if TYPE_CHECKING:
    from frazil.partitioning import PartitionSpec
    from frazil.schema import Schema
    from frazil.table.scan.arrow_plan import ScanPlan

__all__ = ["PageLayout", "read_page", "write_page"]

_ENTRY_NULLS = ("status", "snapshot_id", "file_sequence_number")


@dataclass(frozen=True)
class PageLayout:
    """Where each spec's partition values live in a plan's ``partition`` struct (the table's
    partition type, fields by partition field id): the native codec's argument."""

    #: the struct's fields: partition field id and Iceberg type name
    fields: list[tuple[int, str]]
    #: per spec id: positions in ``fields`` of its partition fields (-1: not in the struct)
    specs: dict[int, list[int]]

    @classmethod
    def of(
        cls, partition: pa.StructType, specs: Mapping[int, PartitionSpec], schema: Schema
    ) -> PageLayout:
        types: dict[int, str] = {}
        for spec in sorted(specs.values(), key=lambda s: -s.spec_id):
            for nf in spec.partition_type(schema).fields:
                if not isinstance(nf.field_type, UnknownType):
                    types.setdefault(nf.field_id, str(nf.field_type))
        ids = [int((f.metadata or {}).get(b"PARQUET:field_id", b"-1")) for f in partition]
        fields = [(fid, types.get(fid, "unknown")) for fid in ids]
        at = {fid: i for i, fid in enumerate(ids)}
        return cls(
            fields,
            {sid: [at.get(pf.field_id, -1) for pf in s.fields] for sid, s in specs.items()},
        )


def _dumps(obj: Any) -> str:
    # as Starlette's JSONResponse renders
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def wire_residual(text: str, schema: Schema) -> str:
    """A plan residual (expressions-spec JSON, bound by field name) as the wire's JSON text:
    the REST form, terms as column names."""
    obj = json.loads(text)
    if obj is True or obj is False:
        return _dumps(obj)
    return _dumps(to_json(from_json(obj, schema), legacy=True))


def write_page(
    plan: ScanPlan,
    start: int,
    size: int,
    layout: PageLayout,
    residuals: dict[str, str] | None = None,
) -> bytes:
    """The ``ScanTasks`` JSON of the tasks ``[start, start + size)``: their
    ``file-scan-tasks`` and the ``delete-files`` they refer to, renumbered for the page in
    plan order. Every task carries its ``residual-filter``, even ``true``: without it a client
    must filter with the whole scan filter (the spec), where the partition proved it holds.
    ``residuals`` caches wire forms of residual texts across pages."""
    tasks = plan.tasks.slice(start, size)
    cache = {} if residuals is None else residuals
    for chunk in tasks.column("residual").chunks:
        for text in chunk.dictionary.to_pylist():
            if text not in cache:
                cache[text] = wire_residual(text, plan.schema)
    refs = tasks.column("delete_file_references")
    flat = pa.chunked_array([c.flatten() for c in refs.chunks], pa.int32())
    rows = sorted(pc.unique(flat).to_pylist()) if len(flat) else []
    deletes = plan.delete_files.take(pa.array(rows, pa.int64()))
    out = bytes(_native.rest_write_page(tasks, deletes, rows, cache, layout.fields, layout.specs))
    return out


def read_page(
    data: bytes,
    layout: PageLayout,
    empty: ScanPlan,
    residual_text: Callable[[str | None], str],
) -> tuple[pa.Table, pa.Table, list[str]]:
    """A ``ScanTasks`` object read into tables with the schemas of ``empty``'s ``tasks`` and
    ``delete_files`` (an empty plan of the scan), and its further ``plan-tasks``.
    ``residual_text`` turns a task's wire residual (compact JSON text, ``None`` when absent)
    into the plan's residual text.
    Malformed input raises :class:`~frazil.exceptions.ParseError` naming where it is."""
    raw_tasks, raw_deletes, more = _native.rest_read_page(data, layout.fields, layout.specs)
    deletes = pa.table(raw_deletes)
    return (
        _conform(pa.table(raw_tasks), empty.tasks.schema, residual_text),
        # most pages have no delete files: their empty table as is
        _conform(deletes, empty.delete_files.schema, residual_text)
        if deletes.num_rows
        else empty.delete_files,
        list(more),
    )


def _conform(
    raw: pa.Table, schema: pa.Schema, residual_text: Callable[[str | None], str]
) -> pa.Table:
    n = raw.num_rows
    columns = []
    for f in schema:
        if f.name == "partition":
            columns.append(_partition(raw.column("partition").combine_chunks(), f.type, n))
        elif f.name == "residual":
            # the wire's distinct residual texts (null: absent) as the plan's
            col = raw.column("residual").combine_chunks()
            texts = [residual_text(t) for t in col.dictionary.to_pylist()]
            indices = col.indices.cast(pa.int32())
            if indices.null_count:
                indices = pc.fill_null(indices, len(texts)).cast(pa.int32())
                texts.append(residual_text(None))
            columns.append(pa.DictionaryArray.from_arrays(indices, pa.array(texts, pa.string())))
        elif f.name in _ENTRY_NULLS or f.name not in raw.column_names:
            columns.append(pa.nulls(n, f.type))
        else:
            col = raw.column(f.name).combine_chunks()
            columns.append(col if col.type == f.type else col.cast(f.type))
    return pa.Table.from_arrays(columns, schema=schema)


def _partition(raw: pa.StructArray, target: pa.StructType, n: int) -> pa.Array:
    if target.num_fields == 0:
        return pa.array([{}] * n, pa.struct([]))
    children = []
    for i, f in enumerate(target):
        child = raw.field(i)
        if child.type != f.type:
            if isinstance(f.type, pa.ExtensionType):
                child = pa.ExtensionArray.from_storage(f.type, child.cast(f.type.storage_type))
            else:
                child = child.cast(f.type)
        children.append(child)
    return pa.StructArray.from_arrays(children, fields=list(target))
