"""Server-side scan planning for ``frazil serve``: ``planTableScan``, ``fetchPlanningResult``,
``cancelPlanning`` and ``fetchScanTasks`` over frazil's native planner.

A plan is planned into its Arrow form (:class:`~frazil.table.scan.arrow_plan.ScanPlan`) under
a random plan id, a manifest at a time on a worker thread (``DataScan.plan_files_arrow_stream``),
so that its first pages are served while the rest is planned. A small plan is answered at once
with its ``file-scan-tasks``; a larger one with ``plan-tasks``: opaque tokens, one per page of
``page_size`` tasks, each fetched with ``fetchScanTasks``. ``planTableScan`` answers once its
first page is planned, with the tokens of the pages planned so far; each page answers with the
tokens of the pages planned since (every token is handed out once, in ``plan-tasks`` of a
response, as the spec lets ``fetchScanTasks`` do); ``fetchPlanningResult`` waits for the whole
plan and lists every page. A page's JSON is written natively from the plan's columns
(:func:`frazil.rest.plan_wire.write_page`): no Python object per task.

Plans in memory expire after ``ttl_s`` and at most ``max_plans`` are kept (the oldest go
first), so memory stays bounded whatever clients do. When the catalog is a database (the SQL
catalog), each paged plan is also recorded in its ``frazil_scan_plans`` table once planned
(the first response does not wait for it): the table's metadata file, the request and the task
count. A server that restarts, or another server process on the
same database, re-plans such a plan on its first use from that immutable metadata file (the
planner is deterministic: the same manifests in the same order), so the plan's remaining pages
can still be fetched until it expires.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from frazil.exceptions import (
    FrazilError,
    NoSuchPlanIdError,
    NoSuchPlanTaskError,
    UnsupportedError,
)
from frazil.expressions import AlwaysTrue
from frazil.expressions.json import from_json
from frazil.rest.plan_wire import PageLayout, write_page
from frazil.server.plan_db import PlanRecord, PlanTable

if TYPE_CHECKING:
    from frazil.catalog import Catalog
    from frazil.rest.wire import PlanTableScanRequest
    from frazil.table import Table
    from frazil.table.scan.arrow_plan import ScanPlan

__all__ = ["PlanStore"]

log = logging.getLogger(__name__)

DEFAULT_PAGE_SIZE = 1_000
DEFAULT_MAX_PLANS = 256
DEFAULT_TTL_S = 900.0
_PLANNING = 4  # plans planned at once (each on all cores); more wait their turn
_ALL = 1 << 62


_WAIT_S = 600.0  # the longest a request waits for a page being planned


class _Plan:
    """A plan under its id, planned on a worker thread a manifest at a time while its first
    pages are fetched. ``batches`` only grows. A page is written once the rows after it exist
    (or planning ended), so that the page tokens it hands out are of pages that exist."""

    def __init__(self, table: tuple[str, ...], head: ScanPlan) -> None:
        self.table = table
        #: the plan without its tasks: delete files, schemas, specs
        self.head = head
        self.created = time.monotonic()
        self.layout = PageLayout.of(
            head.tasks.schema.field("partition").type, head.specs, head.schema
        )
        #: wire JSON of the plan's residual texts, filled as pages are written
        self.residuals: dict[str, str] = {}
        self.cond = threading.Condition()
        self.batches: list[pa.RecordBatch] = []
        self.rows = 0
        self.done = False
        self.error: FrazilError | None = None
        #: evicted, expired or cancelled: its worker stops planning
        self.stopped = False
        #: page tokens handed out so far (pages 0 .. handed - 1)
        self.handed = 0

    @classmethod
    def planned(cls, table: tuple[str, ...], plan: ScanPlan, page_size: int) -> _Plan:
        """A plan planned whole already, every page handed out."""
        entry = cls(table, plan.with_batches([]))
        entry.batches = plan.tasks.to_batches()
        entry.rows = len(plan)
        entry.done = True
        entry.handed = -(-entry.rows // page_size)
        return entry

    def run(self, batches: Iterator[pa.RecordBatch], finished: Callable[[int], None]) -> None:
        """The worker: plans ``batches`` into this plan; ``finished(rows)`` once complete."""
        error: FrazilError | None = None
        try:
            for b in batches:
                with self.cond:
                    if self.stopped:
                        return
                    self.batches.append(b)
                    self.rows += b.num_rows
                    self.cond.notify_all()
            # recorded before it is done: once a client sees the whole plan, it is recorded
            finished(self.rows)
        except FrazilError as e:
            error = e
        except Exception as e:  # a bug fails the plan's requests rather than hanging them
            log.exception("scan planning failed")
            error = FrazilError(f"scan planning failed: {type(e).__name__}")
        with self.cond:
            self.error = error
            self.done = True
            self.cond.notify_all()

    def stop(self) -> None:
        with self.cond:
            self.stopped = True
            self.cond.notify_all()

    def wait_rows(self, rows: int) -> None:
        """Waits until the plan has ``rows`` rows or is planned; raises its planning error."""
        deadline = time.monotonic() + _WAIT_S
        with self.cond:
            while self.rows < rows and not self.done and not self.stopped:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise FrazilError(f"scan planning still running after {_WAIT_S:.0f} s")
                self.cond.wait(left)
            if self.error is not None:
                raise self.error
            if self.stopped and not self.done:
                raise NoSuchPlanIdError("the plan was dropped (expired, cancelled or evicted)")

    def page(self, start: int, size: int) -> tuple[ScanPlan, int]:
        """The planned batches holding rows ``[start, start + size)`` as a plan, and where
        ``start`` is in it (a page's table is not built over every batch)."""
        with self.cond:
            batches = list(self.batches)
        skipped = 0
        first = 0
        while first < len(batches) and skipped + batches[first].num_rows <= start:
            skipped += batches[first].num_rows
            first += 1
        last = first
        covered = skipped
        while last < len(batches) and covered < start + size:
            covered += batches[last].num_rows
            last += 1
        return self.head.with_batches(batches[first:last]), start - skipped

    def hand_out(self, page_size: int, *, every: bool = False) -> list[int]:
        """Starts of the pages with rows not handed out yet (``every``: of all pages with
        rows, handed out or not)."""
        with self.cond:
            pages = -(-self.rows // page_size)
            first = 0 if every else self.handed
            self.handed = max(self.handed, pages)
        return [k * page_size for k in range(first, pages)]


def scan_for(table: Table, request: PlanTableScanRequest) -> Any:
    """The :class:`~frazil.table.scan.DataScan` a planning request asks for."""
    if request.start_snapshot_id is not None or request.end_snapshot_id is not None:
        raise UnsupportedError("incremental scan planning (start/end-snapshot-id) is not supported")
    # Without a schema, a field-id reference is refused by the parser: filters name columns.
    row_filter = AlwaysTrue() if request.filter is None else from_json(request.filter)
    scan = table.scan(
        row_filter=row_filter,
        selected_fields=tuple(request.select) if request.select else ("*",),
        case_sensitive=request.case_sensitive,
        snapshot_id=request.snapshot_id,
    )
    if request.stats_fields:
        scan = scan.include_column_stats(True)
    return scan


class PlanStore:
    """Plans kept for paging (see the module docstring); safe to use from several threads.
    ``catalog`` (the server's) records plans in its database when it has one."""

    def __init__(
        self,
        page_size: int = DEFAULT_PAGE_SIZE,
        max_plans: int = DEFAULT_MAX_PLANS,
        ttl_s: float = DEFAULT_TTL_S,
    ) -> None:
        self.page_size = max(1, page_size)
        self.max_plans = max(1, max_plans)
        self.ttl_s = ttl_s
        self._plans: OrderedDict[str, _Plan] = OrderedDict()
        self._lock = threading.Lock()
        self._catalog: Catalog | None = None
        self._db: PlanTable | None = None
        self._planning = threading.BoundedSemaphore(_PLANNING)

    @classmethod
    def for_catalog(
        cls,
        catalog: Catalog,
        page_size: int = DEFAULT_PAGE_SIZE,
        max_plans: int = DEFAULT_MAX_PLANS,
        ttl_s: float = DEFAULT_TTL_S,
    ) -> PlanStore:
        """The store of a server over ``catalog``: paged plans are also recorded in the
        catalog's database when it has one (see the module docstring)."""
        store = cls(page_size, max_plans, ttl_s)
        store._catalog = catalog
        store._db = PlanTable.of(catalog)
        return store

    def plan(self, table: Table, request: PlanTableScanRequest) -> dict[str, Any]:
        """Plans the scan and answers ``planTableScan`` (``completed``)."""
        return json.loads(self.plan_body(table, request))  # type: ignore[no-any-return]

    def fetch(self, table: tuple[str, ...], plan_id: str) -> dict[str, Any]:
        """``fetchPlanningResult``: the plan is always complete once it has an id."""
        return json.loads(self.fetch_body(table, plan_id))  # type: ignore[no-any-return]

    def tasks(self, table: tuple[str, ...], plan_task: str) -> dict[str, Any]:
        """``fetchScanTasks`` for one page token."""
        return json.loads(self.tasks_body(table, plan_task))  # type: ignore[no-any-return]

    def plan_body(self, table: Table, request: PlanTableScanRequest) -> bytes:
        """:meth:`plan`'s answer as the JSON body (written natively). The plan's first
        manifests are planned here (errors in the request answer it); the rest on a worker
        while the first pages are fetched: the answer lists the pages planned so far, and
        each page lists the pages planned since (``plan-tasks`` of ``fetchScanTasks``)."""
        head, batches = scan_for(table, request).plan_files_arrow_stream()
        plan_id = secrets.token_urlsafe(16)
        ident = tuple(table.identifier)
        entry = _Plan(ident, head)
        location = table.metadata_location

        def finished(rows: int) -> None:
            # Only paged plans outlive their answer: a small one is answered whole.
            if self._db is None or rows <= self.page_size or not location:
                return
            record = PlanRecord(
                plan_id,
                ident,
                location,
                json.dumps(request.to_json()),
                self.page_size,
                rows,
                time.time() + self.ttl_s,
            )
            try:
                self._db.insert(record)
            except FrazilError as e:  # the plan still pages from memory
                log.warning("plan %s not recorded: %s", plan_id[:80], e)

        self._remember(plan_id, entry)
        threading.Thread(
            target=self._run, args=(entry, batches, finished), name="frazil-plan", daemon=True
        ).start()
        # the first page is known once a row after it is planned (or planning ended)
        entry.wait_rows(self.page_size + 1)
        return self._completed(plan_id, entry, with_id=True)

    def _run(
        self, entry: _Plan, batches: Iterator[pa.RecordBatch], finished: Callable[[int], None]
    ) -> None:
        with self._planning:  # at most a few plans are planned at once
            entry.run(batches, finished)

    def fetch_body(self, table: tuple[str, ...], plan_id: str) -> bytes:
        """:meth:`fetch`'s answer as the JSON body: once planned, every page."""
        entry = self._get(table, plan_id)
        entry.wait_rows(_ALL)
        return self._completed(plan_id, entry, with_id=False)

    def cancel(self, table: tuple[str, ...], plan_id: str) -> None:
        with self._lock:
            entry = self._plans.get(plan_id)
        record = self._db.get(plan_id) if self._db is not None else None
        # a recorded plan is cancelled without planning it again
        owner = entry.table if entry is not None else record.table if record else None
        if owner != tuple(table):
            raise NoSuchPlanIdError(f"unknown plan id {plan_id[:80]!r}")
        with self._lock:
            gone = self._plans.pop(plan_id, None)
        if gone is not None:
            gone.stop()
        if self._db is not None and record is not None:
            self._db.delete(plan_id)

    def tasks_body(self, table: tuple[str, ...], plan_task: str) -> bytes:
        """:meth:`tasks`'s answer as the JSON body (written natively), with the pages planned
        since the last answer handed out its pages."""
        plan_id, sep, start_text = plan_task.rpartition(":")
        if not sep or not start_text.isdigit() or len(start_text) > 18:
            raise NoSuchPlanTaskError(f"unknown plan task {plan_task[:80]!r}")
        try:
            entry = self._get(table, plan_id)
        except NoSuchPlanIdError:
            raise NoSuchPlanTaskError(f"unknown plan task {plan_task[:80]!r}") from None
        start = int(start_text)
        if start % self.page_size or start // self.page_size >= entry.handed:
            raise NoSuchPlanTaskError(f"unknown plan task {plan_task[:80]!r}")
        try:
            entry.wait_rows(start + self.page_size + 1)
        except NoSuchPlanIdError:
            raise NoSuchPlanTaskError(f"unknown plan task {plan_task[:80]!r}") from None
        rows, at = entry.page(start, self.page_size)
        page = write_page(rows, at, self.page_size, entry.layout, entry.residuals)
        more = entry.hand_out(self.page_size)
        if not more:
            return page
        return page[:-1] + b',"plan-tasks":' + self._tokens(plan_id, more) + b"}"

    # ----

    def _remember(self, plan_id: str, entry: _Plan) -> None:
        with self._lock:
            self._expire()
            while len(self._plans) >= self.max_plans:
                self._plans.popitem(last=False)[1].stop()
            self._plans[plan_id] = entry

    @staticmethod
    def _tokens(plan_id: str, starts: list[int]) -> bytes:
        return json.dumps([f"{plan_id}:{s}" for s in starts]).encode()

    def _completed(self, plan_id: str, entry: _Plan, *, with_id: bool) -> bytes:
        head = b"{"
        if with_id:
            head += b'"plan-id":' + json.dumps(plan_id).encode() + b","
        head += b'"status":"completed",'
        if entry.done and entry.rows <= self.page_size:
            rows, _ = entry.page(0, self.page_size)
            page = write_page(rows, 0, self.page_size, entry.layout, entry.residuals)
            return head + page[1:]
        starts = entry.hand_out(self.page_size, every=not with_id)
        return head + b'"plan-tasks":' + self._tokens(plan_id, starts) + b"}"

    def _get(self, table: tuple[str, ...], plan_id: str) -> _Plan:
        with self._lock:
            self._expire()
            entry = self._plans.get(plan_id)
        if entry is None:
            entry = self._restore(plan_id)
        if entry is None or entry.table != tuple(table):
            raise NoSuchPlanIdError(f"unknown plan id {plan_id[:80]!r}")
        return entry

    def _restore(self, plan_id: str) -> _Plan | None:
        """A plan recorded in the catalog's database (by this process before a restart, or by
        another), planned again from the metadata file it was planned from."""
        if self._db is None or self._catalog is None:
            return None
        record = self._db.get(plan_id)
        if record is None or record.page_size != self.page_size:
            return None
        from frazil.rest.wire import PlanTableScanRequest
        from frazil.table import Table

        cat = self._catalog
        try:
            metadata = cat._read_metadata(record.metadata_location)
            table = Table(
                record.table,
                metadata,
                record.metadata_location,
                cat._table_io(metadata, record.metadata_location),
                cat,
            )
            request = PlanTableScanRequest.from_json(json.loads(record.request))
            plan = scan_for(table, request).plan_files_arrow()
        except FrazilError as e:
            log.warning("plan %s could not be planned again: %s", plan_id[:80], e)
            return None
        if len(plan) != record.task_count:
            log.warning(
                "plan %s planned again has %d tasks, recorded %d: dropped",
                plan_id[:80],
                len(plan),
                record.task_count,
            )
            return None
        entry = _Plan.planned(record.table, plan, self.page_size)
        self._remember(plan_id, entry)
        return entry

    def _expire(self) -> None:
        cutoff = time.monotonic() - self.ttl_s
        while self._plans:
            first = next(iter(self._plans.values()))
            if first.created >= cutoff:
                break
            self._plans.popitem(last=False)[1].stop()
