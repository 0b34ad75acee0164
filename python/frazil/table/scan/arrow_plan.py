"""A planned scan as Arrow: :class:`ScanPlan` (what :meth:`DataScan.plan_files_arrow
<frazil.table.scan.DataScan.plan_files_arrow>` returns).

Shaped like the REST catalog's ``PlanTableScanResult``: the tasks, and the delete files once,
which tasks refer to by index. Both tables have the columns of the ``data_file`` struct
(spec "Manifests"), flattened, with every task's ``partition`` in the table's partition type
(the union of all specs' fields by partition field id, as the ``_partition`` metadata column
and the Java reference's ``files`` metadata table; fields a file's spec lacks are null)::

    content, file_path, file_format, spec_id, partition, record_count, file_size_in_bytes,
    [column_sizes, value_counts, null_value_counts, nan_value_counts, lower_bounds,
     upper_bounds: with include_column_stats], key_metadata, split_offsets, equality_ids,
    sort_order_id, first_row_id, referenced_data_file, content_offset, content_size_in_bytes,
    status, snapshot_id, sequence_number, file_sequence_number

and ``tasks`` has two more: ``residual`` (dictionary-encoded text: the filter its rows must
still pass, expressions-spec JSON bound by field name) and ``delete_file_references``
(``list<int32>``: rows of ``delete_files``). Sequence numbers and first row ids are inherited
(as a reader sees them). A plan pickles as Arrow (IPC) and turns rows into
:class:`~frazil.table.scan.tasks.FileScanTask` objects where a reader needs them
(:meth:`ScanPlan.file_scan_tasks`).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil.arrow_schema import type_to_arrow
from frazil.expressions import BooleanExpression, from_json
from frazil.expressions.json import to_json_text
from frazil.manifest.content_file import (
    data_file_arrow_type,
    data_files_from_arrow,
    data_files_to_arrow,
    partition_arrow_type,
)
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.table.scan.handoff import one_chunk
from frazil.table.scan.tasks import FileScanTask
from frazil.types import StructType

if TYPE_CHECKING:
    from frazil.table.scan.plan import ManifestTasks, PlanContext

__all__ = ["ScanPlan"]

_ENTRY_FIELDS = (
    pa.field("status", pa.int32()),
    pa.field("snapshot_id", pa.int64()),
    pa.field("sequence_number", pa.int64()),
    pa.field("file_sequence_number", pa.int64()),
)
_STATS = (
    "column_sizes",
    "value_counts",
    "null_value_counts",
    "nan_value_counts",
    "lower_bounds",
    "upper_bounds",
)
_RESIDUAL = pa.dictionary(pa.int32(), pa.string())
_REFERENCES = pa.list_(pa.field("item", pa.int32(), nullable=False))


def _file_fields(partition: pa.StructType, stats: bool) -> list[pa.Field]:
    fields = [f for f in data_file_arrow_type(partition) if stats or f.name not in _STATS]
    # spec_id after file_format, as in the ``files`` metadata table
    at = [f.name for f in fields].index("file_format") + 1
    return [*fields[:at], pa.field("spec_id", pa.int32(), nullable=False), *fields[at:]]


def _partition(
    part: pa.StructArray, spec: PartitionSpec | None, target: pa.StructType
) -> pa.StructArray:
    n = len(part)
    if target.num_fields == 0:
        return pa.array([{}] * n, pa.struct([]))
    by_id = {}
    if spec is not None:
        for i, pf in enumerate(spec.fields):
            if i < part.type.num_fields:
                by_id[pf.field_id] = part.field(i)
    children = []
    for f in target:
        fid = int((f.metadata or {}).get(b"PARQUET:field_id", b"-1"))
        child = by_id.get(fid)
        if child is None or pa.types.is_null(child.type):
            children.append(pa.nulls(n, f.type))
        else:
            children.append(child if child.type == f.type else child.cast(f.type))
    return pa.StructArray.from_arrays(children, fields=list(target))


def _flatten(
    group: ManifestTasks, fields: list[pa.Field], spec: PartitionSpec | None
) -> list[pa.Array]:
    """The group's rows as the plan's columns (``fields``), then the entry columns."""
    entries = group.entries
    return _columns(
        entries.column("data_file").combine_chunks(),
        {f.name: entries.column(f.name).combine_chunks() for f in _ENTRY_FIELDS
         if f.name in entries.column_names},
        group.spec_id,
        fields,
        spec,
    )  # fmt: skip


def _columns(
    data_file: pa.StructArray,
    entry_columns: dict[str, pa.Array],
    spec_id: int,
    fields: list[pa.Field],
    spec: PartitionSpec | None,
) -> list[pa.Array]:
    n = len(data_file)
    out: list[pa.Array] = []
    for f in fields:
        if f.name == "spec_id":
            out.append(pa.repeat(pa.scalar(spec_id, pa.int32()), n))
        elif f.name == "partition":
            out.append(_partition(data_file.field("partition"), spec, f.type))
        elif data_file.type.get_field_index(f.name) >= 0:
            col = data_file.field(f.name)
            out.append(col if col.type == f.type else col.cast(f.type))
        elif f.name == "content":
            out.append(pa.repeat(pa.scalar(0, pa.int32()), n))
        else:
            out.append(pa.nulls(n, f.type))
    for f in _ENTRY_FIELDS:
        col = entry_columns.get(f.name)
        if col is not None:
            out.append(col if col.type == f.type else col.cast(f.type))
        else:
            out.append(pa.nulls(n, f.type))
    return out


def _file_batches(
    files: Sequence[Any],
    fields: list[pa.Field],
    specs: Mapping[int, PartitionSpec],
    schema: Schema,
    arrow_schema: pa.Schema,
) -> list[pa.RecordBatch]:
    """Rows of ``files`` (DataFile objects, in order) as the plan's columns; the entry columns
    from what the files carry (a REST task's data sequence number), else null."""
    out = []
    for spec_id, run in itertools.groupby(files, key=lambda f: f.spec_id):
        batch = list(run)
        spec = specs.get(spec_id)
        ptype = partition_arrow_type(spec, schema) if spec is not None else pa.struct([])
        entries = {
            f.name: pa.array([x.extra.get(f.name) for x in batch], f.type) for f in _ENTRY_FIELDS
        }
        columns = _columns(data_files_to_arrow(batch, ptype, 3), entries, spec_id, fields, spec)
        out.append(pa.RecordBatch.from_arrays(columns, schema=arrow_schema))
    return out


@dataclass(frozen=True)
class ScanPlan:
    """A planned scan as Arrow tables (see the module docstring)."""

    #: one row per task
    tasks: pa.Table
    #: one row per delete file the tasks refer to
    delete_files: pa.Table
    #: the schema the residuals are bound to (the scan's)
    schema: Schema
    #: the table's partition specs, by id
    specs: dict[int, PartitionSpec]

    @classmethod
    def from_groups(
        cls, plan: PlanContext, groups: Sequence[ManifestTasks], partition_type: StructType
    ) -> ScanPlan:
        """The plan of :func:`frazil.table.scan.plan.plan_manifests`'s planned manifests."""
        head, stream = cls.streamed(plan, iter(groups), partition_type)
        batches = list(stream)
        if not batches:
            return head
        # Each batch's residual dictionary is a prefix of the last one: one dictionary for all.
        at = head.tasks.schema.get_field_index("residual")
        dictionary = batches[-1].column(at).dictionary
        return head.with_batches(
            [
                b.set_column(
                    at,
                    head.tasks.schema.field(at),
                    pa.DictionaryArray.from_arrays(b.column(at).indices, dictionary),
                )
                for b in batches
            ]
        )

    @classmethod
    def streamed(
        cls, plan: PlanContext, groups: Iterator[ManifestTasks], partition_type: StructType
    ) -> tuple[ScanPlan, Iterator[pa.RecordBatch]]:
        """The plan of :func:`frazil.table.scan.plan.plan_manifests`'s manifests as they are
        planned: a plan without tasks yet (its delete files, planned first, and the tasks'
        schema), and the tasks' batches, a planned manifest each, in plan order. Each batch's
        ``residual`` dictionary holds the residuals planned so far."""
        ptype = type_to_arrow(partition_type, large_types=False)
        stats = plan.stats.value == "included"
        fields = _file_fields(ptype, stats)
        schema = pa.schema(
            [
                *fields,
                *_ENTRY_FIELDS,
                pa.field("residual", _RESIDUAL, nullable=False),
                pa.field("delete_file_references", _REFERENCES, nullable=False),
            ]
        )
        delete_fields = _file_fields(ptype, True)
        delete_schema = pa.schema([*delete_fields, *_ENTRY_FIELDS])
        deletes = [
            pa.RecordBatch.from_arrays(
                _flatten(g, delete_fields, plan.specs.get(g.spec_id)), schema=delete_schema
            )
            for g in plan.delete_groups
        ]
        head = cls(
            pa.Table.from_batches([], schema=schema),
            pa.Table.from_batches(deletes, schema=delete_schema),
            plan.schema,
            dict(plan.specs),
        )

        def batches() -> Iterator[pa.RecordBatch]:
            texts: list[str] = []
            dictionary = pa.array(texts, pa.string())
            for g in groups:
                if len(texts) < len(plan.residuals):
                    texts += [to_json_text(r) for r in plan.residuals[len(texts) :]]
                    dictionary = pa.array(texts, pa.string())
                columns = _flatten(g, fields, plan.specs.get(g.spec_id))
                columns.append(pa.DictionaryArray.from_arrays(g.residuals, dictionary))
                columns.append(g.deletes.cast(_REFERENCES))
                yield pa.RecordBatch.from_arrays(columns, schema=schema)

        return head, batches()

    def combined(self) -> ScanPlan:
        """This plan with its tasks in one chunk: for many ``take``s of its rows (a take over
        several chunks, one per planned manifest, concatenates them all each time)."""
        tasks = one_chunk(self.tasks)
        return self if tasks is self.tasks else self.with_batches(tasks.to_batches())

    def with_batches(self, batches: Sequence[pa.RecordBatch]) -> ScanPlan:
        """This plan with ``batches`` as its tasks (of its tasks' schema)."""
        return ScanPlan(
            pa.Table.from_batches(batches, schema=self.tasks.schema),
            self.delete_files,
            self.schema,
            self.specs,
        )

    @classmethod
    def from_tasks(
        cls,
        tasks: Sequence[FileScanTask],
        schema: Schema,
        specs: Mapping[int, PartitionSpec],
        partition_type: StructType,
        *,
        stats: bool = False,
    ) -> ScanPlan:
        """The plan of tasks planned elsewhere (a REST server's file scan tasks), in their
        order; delete files once each, by path. Entry columns the tasks do not carry
        (status, snapshot id, a delete file's sequence numbers) are null."""
        ptype = type_to_arrow(partition_type, large_types=False)
        fields = _file_fields(ptype, stats)
        task_schema = pa.schema(
            [
                *fields,
                *_ENTRY_FIELDS,
                pa.field("residual", _RESIDUAL, nullable=False),
                pa.field("delete_file_references", _REFERENCES, nullable=False),
            ]
        )
        delete_fields = _file_fields(ptype, True)
        delete_schema = pa.schema([*delete_fields, *_ENTRY_FIELDS])
        deletes: dict[str, int] = {}
        delete_files: list[Any] = []
        refs: list[list[int]] = []
        texts: dict[str, int] = {}
        residuals: list[int] = []
        for t in tasks:
            row = []
            for d in t.delete_files:
                at = deletes.get(d.file_path)
                if at is None:
                    at = deletes[d.file_path] = len(delete_files)
                    delete_files.append(d)
                row.append(at)
            refs.append(row)
            residuals.append(texts.setdefault(to_json_text(t.residual), len(texts)))
        file_schema = pa.schema([*fields, *_ENTRY_FIELDS])
        data = _file_batches([t.file for t in tasks], fields, specs, schema, file_schema)
        table = pa.Table.from_batches(data, schema=file_schema)
        dictionary = pa.DictionaryArray.from_arrays(
            pa.array(residuals, pa.int32()), pa.array(list(texts), pa.string())
        )
        table = table.append_column(task_schema.field("residual"), dictionary)
        table = table.append_column(
            task_schema.field("delete_file_references"), pa.array(refs, _REFERENCES)
        )
        delete_table = pa.Table.from_batches(
            _file_batches(delete_files, delete_fields, specs, schema, delete_schema),
            schema=delete_schema,
        )
        return cls(table, delete_table, schema, dict(specs))

    def __len__(self) -> int:
        return int(self.tasks.num_rows)

    @property
    def residuals(self) -> list[BooleanExpression]:
        """The distinct residuals, bound to :attr:`schema`, in dictionary order."""
        col = self.tasks.column("residual")
        if col.num_chunks == 0:
            return []
        return [from_json(json.loads(t), self.schema) for t in col.chunk(0).dictionary.to_pylist()]

    def file_scan_tasks(self, rows: Sequence[int] | None = None) -> list[FileScanTask]:
        """Plain :class:`FileScanTask` objects for the rows ``rows`` (default: all), e.g. on
        a Spark executor that reads them; one Python object per task, so not for a whole
        large plan on the driver."""
        tasks = self.tasks if rows is None else self.tasks.take(pa.array(rows, pa.int64()))
        if tasks.num_rows == 0:
            return []
        deletes = self._files(self.delete_files)
        residual_texts = tasks.column("residual").combine_chunks()
        parsed: dict[str, BooleanExpression] = {}
        out = []
        files = self._files(tasks)
        refs = tasks.column("delete_file_references").to_pylist()
        for f, text, ref in zip(files, residual_texts.to_pylist(), refs, strict=True):
            residual = parsed.get(text)
            if residual is None:
                residual = parsed[text] = from_json(json.loads(text), self.schema)
            spec = self.specs.get(f.spec_id)
            out.append(FileScanTask(f, [deletes[k] for k in ref], residual, self.schema, spec))
        return out

    def data_files(self, table: pa.Table) -> list[Any]:
        """One :class:`~frazil.manifest.content_file.DataFile` per row of ``table``: rows of
        :attr:`tasks` or :attr:`delete_files` (or a ``take`` of them), each with its spec's
        partition tuple. For callers that must hand files on one by one (a REST server's
        scan tasks); readers stay on the Arrow tables."""
        return self._files(table)

    def _files(self, table: pa.Table) -> list[Any]:
        """One DataFile per row, with its spec's partition tuple."""
        if table.num_rows == 0:
            return []
        spec_ids = table.column("spec_id").to_pylist()
        partition = table.column("partition").combine_chunks()
        names = [n for n in table.column_names if n in _DATA_FILE_NAMES]
        out: list[Any] = [None] * table.num_rows
        for spec_id in set(spec_ids):
            rows = pc.indices_nonzero(pc.equal(table.column("spec_id"), spec_id))
            spec = self.specs.get(spec_id)
            part = partition.take(rows)
            ids = [int((f.metadata or {}).get(b"PARQUET:field_id", b"-1")) for f in part.type]
            index = {fid: i for i, fid in enumerate(ids)}
            fields = spec.fields if spec is not None else ()
            children = [part.field(index[pf.field_id]) for pf in fields if pf.field_id in index]
            own = (
                pa.StructArray.from_arrays(
                    children, names=[pf.name for pf in fields if pf.field_id in index]
                )
                if children
                else pa.array([{}] * len(part), pa.struct([]))
            )
            arrays = [
                own if n == "partition" else table.column(n).take(rows).combine_chunks()
                for n in names
            ]
            struct = pa.StructArray.from_arrays(arrays, names=names)
            files = data_files_from_arrow(struct, spec_id)
            seqs = {
                k: table.column(k).take(rows).to_pylist()
                for k in ("status", "snapshot_id", "sequence_number", "file_sequence_number")
            }
            for j, (r, f) in enumerate(zip(rows.to_pylist(), files, strict=True)):
                for k, v in seqs.items():
                    f.extra[k] = v[j]
                out[r] = f
        return out


_DATA_FILE_NAMES = frozenset(f.name for f in data_file_arrow_type(pa.struct([])))
