"""Server-side scan planning over the REST protocol (``rest.scan-planning=server|auto``).

``planTableScan`` (``POST .../plan``) answers ``completed`` with tasks, or ``submitted`` with a
plan id that ``fetchPlanningResult`` (``GET .../plan/{plan-id}``) is polled on until it
completes; a completed result may hold opaque plan tasks, each turned into file scan tasks by
``fetchScanTasks`` (``POST .../tasks``), which may hand out further plan tasks. File scan tasks
reference the response's ``delete-files`` by index.

Pages are read natively (:func:`frazil.rest.plan_wire.read_page`) into the columns of the plan
frazil's own planner yields (:class:`~frazil.table.scan.arrow_plan.ScanPlan`), one page at a
time as tasks are iterated: ``plan_files()`` streams thin views of those columns
(:class:`~frazil.table.scan.tasks.PlannedFileScanTask`), as it does when planning locally, and
``plan_files_arrow()`` concatenates the pages.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import exceptions as exc
from frazil.expressions import AlwaysTrue, BooleanExpression, bind
from frazil.expressions.json import from_json as expr_from_json
from frazil.expressions.json import to_json as expr_to_json
from frazil.expressions.json import to_json_text
from frazil.rest.plan_wire import PageLayout, read_page
from frazil.rest.wire import ErrorModel
from frazil.table.scan import ScanPlan, table_partition_type
from frazil.table.scan.plan import data_file_values
from frazil.table.scan.tasks import PlannedFileScanTask

if TYPE_CHECKING:
    from frazil.catalog import Identifier
    from frazil.catalog.rest import RestCatalog
    from frazil.manifest.content_file import DataFile
    from frazil.partitioning import PartitionSpec
    from frazil.schema import Schema
    from frazil.table.scan import DataScan

__all__ = ["ServerPlanner", "plan_table_scan_request"]

# Polling a submitted plan: doubling waits from 50 ms up to 2 s, for at most this long.
_POLL_MIN_S = 0.05
_POLL_MAX_S = 2.0
_POLL_TIMEOUT_S = 600.0

# Pages fetched ahead of the one being consumed (each read natively off the GIL).
_PAGES_AHEAD = 2

_ENTRY_COLUMNS = ("status", "snapshot_id", "sequence_number", "file_sequence_number")


def plan_table_scan_request(scan: DataScan) -> dict[str, Any]:
    """The ``PlanTableScanRequest`` of a scan."""
    out: dict[str, Any] = {}
    snapshot = scan.snapshot()
    if snapshot is not None:
        out["snapshot-id"] = snapshot.snapshot_id
    if "*" not in scan.selected_fields:
        out["select"] = [n for n in scan.selected_fields if not n.startswith("_")]
    if not isinstance(scan.row_filter, AlwaysTrue):
        out["filter"] = expr_to_json(scan.row_filter)
    out["case-sensitive"] = scan.case_sensitive
    if scan.snapshot_id is not None:
        # A time-travel scan reads with the snapshot's schema (as frazil's own planner does).
        out["use-snapshot-schema"] = scan.table_schema() is not scan.table_metadata.schema()
    return out


class _Reading:
    """What reading a scan's pages needs: the plan's schemas (an empty plan of the scan), the
    partition layout, and the residuals seen so far."""

    def __init__(self, scan: DataScan) -> None:
        md = scan.table_metadata
        self.schema = scan.table_schema()
        self.specs = md.specs()
        self.case_sensitive = scan.case_sensitive
        self.default_residual: BooleanExpression = scan._bound_filter()
        self.empty = ScanPlan.from_tasks(
            [],
            self.schema,
            self.specs,
            table_partition_type(md, self.schema),
            stats=scan._stats_option() is True,
        )
        self.layout = PageLayout.of(
            self.empty.tasks.schema.field("partition").type, self.specs, self.schema
        )
        #: plan residual text -> the bound expression
        self.residuals: dict[str, BooleanExpression] = {}

    def residual_text(self, wire: str | None) -> str:
        if wire is None:
            expr = self.default_residual
        else:
            try:
                expr = bind(self.schema, expr_from_json(json.loads(wire)), self.case_sensitive)
            except exc.FrazilError as e:
                raise exc.ParseError(f"file-scan-tasks: residual-filter {wire[:200]}: {e}") from e
        text = to_json_text(expr)
        self.residuals.setdefault(text, expr)
        return text

    def page(self, body: bytes) -> tuple[_Page, list[str]]:
        tasks, deletes, more = read_page(body, self.layout, self.empty, self.residual_text)
        return _Page(self, tasks, deletes), more


class _Page:
    """One page read: its tasks and delete files as plan tables."""

    def __init__(self, reading: _Reading, tasks: pa.Table, deletes: pa.Table) -> None:
        self.reading = reading
        self.tasks = tasks
        self.deletes = deletes
        self._delete_files: list[DataFile] | None = None

    def delete_files(self) -> list[DataFile]:
        if self._delete_files is None:
            r = self.reading
            self._delete_files = ScanPlan(
                self.tasks, self.deletes, r.schema, dict(r.specs)
            ).data_files(self.deletes)
        return self._delete_files

    def views(self) -> Iterator[PlannedFileScanTask]:
        """A view per task, in order (runs of one spec share their columns)."""
        n = self.tasks.num_rows
        if n == 0:
            return
        spec_ids = self.tasks.column("spec_id").combine_chunks()
        starts = [0]
        if n > 1:
            changed = pc.not_equal(spec_ids.slice(1), spec_ids.slice(0, n - 1))
            starts += [i + 1 for i in pc.indices_nonzero(changed).to_pylist()]
        for a, b in zip(starts, [*starts[1:], n], strict=True):
            run = _Run(self, self.tasks.slice(a, b - a), spec_ids[a].as_py())
            yield from PlannedFileScanTask.views(run, range(b - a))


class _Run:
    """Rows of a page with one partition spec: the columns the task views read
    (:class:`frazil.table.scan.tasks.TaskColumns`)."""

    def __init__(self, page: _Page, table: pa.Table, spec_id: int) -> None:
        self.page = page
        self.table = table
        self.spec_id = spec_id
        self.spec: PartitionSpec | None = page.reading.specs.get(spec_id)
        self._cache: dict[str, list[Any]] = {}

    def column(self, name: str) -> list[Any]:
        values = self._cache.get(name)
        if values is None:
            values = self._cache[name] = self._column(name)
        return values

    def _column(self, name: str) -> list[Any]:
        n = self.table.num_rows
        if name not in self.table.column_names:
            return [0] * n if name == "content" else [None] * n
        arr = self.table.column(name).combine_chunks()
        if name == "partition":
            fields = self.spec.fields if self.spec is not None else ()
            if not fields:
                return [()] * n
            ids = [int((f.metadata or {}).get(b"PARQUET:field_id", b"-1")) for f in arr.type]
            at = {fid: i for i, fid in enumerate(ids)}
            cols = [
                arr.field(at[pf.field_id]).to_pylist() if pf.field_id in at else [None] * n
                for pf in fields
            ]
            return list(zip(*cols, strict=True))
        return data_file_values(arr, name)

    def extra(self, row: int) -> dict[str, Any]:
        # what the wire carries: a data file's sequence number (with its first row id)
        seq = self.column("sequence_number")[row]
        return {} if seq is None else {"sequence_number": seq}

    def task_parts(
        self, row: int
    ) -> tuple[list[DataFile], BooleanExpression, Schema | None, PartitionSpec | None]:
        reading = self.page.reading
        refs = self.column("delete_file_references")[row]
        deletes = self.page.delete_files() if refs else []
        residual = reading.residuals[self.column("residual")[row]]
        return [deletes[k] for k in refs], residual, reading.schema, self.spec


class ServerPlanner:
    """Plans scans of one table on the REST server (a :data:`frazil.table.scan.Planner`)."""

    def __init__(self, catalog: RestCatalog, identifier: Identifier) -> None:
        self._catalog = catalog
        self._ident = identifier

    def __repr__(self) -> str:
        return f"ServerPlanner({'.'.join(self._ident)!r})"

    def __call__(self, scan: DataScan) -> Iterator[PlannedFileScanTask]:
        if scan.snapshot() is None:
            return iter(())
        return (t for page in self._pages(scan) for t in page.views())

    def plan_pages(
        self, scan: DataScan
    ) -> Iterator[tuple[pa.Table, pa.Table, Iterator[PlannedFileScanTask]]]:
        """The plan page by page: each page's ``tasks`` and ``delete_files`` tables and its
        task views (so that a scan's metrics count pages, not tasks)."""
        if scan.snapshot() is None:
            return
        for page in self._pages(scan):
            yield page.tasks, page.deletes, page.views()

    def plan_arrow(self, scan: DataScan) -> ScanPlan:
        """The whole plan as Arrow: the pages' tables concatenated, delete files once each
        (by path). Entry columns the protocol does not carry (status, snapshot id, a delete
        file's sequence numbers) are null."""
        reading = _Reading(scan)
        pages = list(self._pages(scan, reading)) if scan.snapshot() is not None else []
        tasks = [p.tasks for p in pages]
        deletes = [p.deletes for p in pages]
        empty = reading.empty
        if not pages:
            return empty
        # page-local delete references -> rows of the plan's delete table
        paths: dict[str, int] = {}
        keep: list[int] = []
        shifted = []
        offset = 0
        for p in pages:
            local: list[int] = []
            for path in p.deletes.column("file_path").to_pylist():
                at = paths.get(path)
                if at is None:
                    at = paths[path] = len(paths)
                    keep.append(offset + len(local))
                local.append(at)
            offset += len(local)
            refs = p.tasks.column("delete_file_references").combine_chunks()
            if len(local):
                values = pc.take(pa.array(local, pa.int32()), refs.flatten())
                offsets = pc.subtract(refs.offsets, refs.offsets[0])
                refs = pa.ListArray.from_arrays(offsets, values, type=refs.type)
            shifted.append(refs)
        table = pa.concat_tables(tasks).combine_chunks()
        at = table.schema.get_field_index("delete_file_references")
        table = table.set_column(
            at, table.schema.field(at), pa.chunked_array(shifted, table.schema.field(at).type)
        )
        at = table.schema.get_field_index("residual")
        texts = pc.cast(table.column(at), pa.string()).combine_chunks().dictionary_encode()
        residual = pa.DictionaryArray.from_arrays(texts.indices.cast(pa.int32()), texts.dictionary)
        table = table.set_column(at, table.schema.field(at), residual)
        delete_table = pa.concat_tables(deletes).take(pa.array(keep, pa.int64()))
        return ScanPlan(table, delete_table, empty.schema, empty.specs)

    def _pages(self, scan: DataScan, reading: _Reading | None = None) -> Iterator[_Page]:
        cat = self._catalog
        ident = self._ident
        body = cat._plan_request_bytes(
            ident, "POST", "/plan", "table", plan_table_scan_request(scan)
        )
        result = _object(body)
        plan_id = result.get("plan-id")
        waited = 0.0
        wait = _POLL_MIN_S
        while result.get("status") == "submitted":
            if not isinstance(plan_id, str):
                raise exc.RESTError("planTableScan: a submitted plan without a plan-id")
            if waited >= _POLL_TIMEOUT_S:
                raise exc.RESTError(
                    f"planTableScan: plan {plan_id} still submitted after {waited:.0f} s"
                )
            time.sleep(wait)
            waited += wait
            wait = min(_POLL_MAX_S, wait * 2)
            body = cat._plan_request_bytes(ident, "GET", f"/plan/{plan_id}", "plan")
            result = _object(body)
        status = result.get("status")
        if status == "failed":
            model = ErrorModel.from_json(result)
            raise exc.RESTError(
                f"server-side planning failed: {model.message if model else 'no detail'}"
            )
        if status != "completed":
            raise exc.RESTError(f"server-side planning ended with status {status!r}")
        reading = reading if reading is not None else _Reading(scan)
        page, more = reading.page(body)
        yield page
        pending = deque(more)

        def fetch(task: str) -> tuple[_Page, list[str]]:
            body = cat._plan_request_bytes(
                ident, "POST", "/tasks", "plan-task", {"plan-task": task}
            )
            return reading.page(body)

        # The next pages are fetched and read (natively, without the GIL) on workers while
        # the caller consumes this one: the server writes them meanwhile. Pages come out in
        # the order their plan tasks were handed out.
        pool = ThreadPoolExecutor(_PAGES_AHEAD, thread_name_prefix="frazil-plan-pages")
        ahead: deque[Future[tuple[_Page, list[str]]]] = deque()
        try:
            while True:
                while pending and len(ahead) < _PAGES_AHEAD:
                    ahead.append(pool.submit(fetch, pending.popleft()))
                if not ahead:
                    break
                page, more = ahead.popleft().result()
                pending.extend(more)
                while pending and len(ahead) < _PAGES_AHEAD:
                    ahead.append(pool.submit(fetch, pending.popleft()))
                yield page
        finally:
            pool.shutdown(wait=False, cancel_futures=True)


def _object(body: bytes) -> dict[str, Any]:
    try:
        obj = json.loads(body)
    except ValueError as e:
        raise exc.ParseError(f"planning response is not JSON: {e}") from None
    if not isinstance(obj, dict):
        raise exc.ParseError("planning response is not a JSON object")
    return obj
