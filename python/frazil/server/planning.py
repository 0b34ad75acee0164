"""Server-side scan planning for ``frazil serve``: ``planTableScan``, ``fetchPlanningResult``,
``cancelPlanning`` and ``fetchScanTasks`` over frazil's native planner.

A plan is planned whole, synchronously, into its Arrow form (:class:`~frazil.table.scan.arrow_plan.
ScanPlan`) under a random plan id. A small plan is answered at once with its
``file-scan-tasks``; a larger one with ``plan-tasks``: opaque tokens, one per page of
``page_size`` tasks, each fetched with ``fetchScanTasks``. A page's JSON is written natively from
the plan's columns (:func:`frazil.rest.plan_wire.write_page`): no Python object per task.

Plans in memory expire after ``ttl_s`` and at most ``max_plans`` are kept (the oldest go
first), so memory stays bounded whatever clients do. When the catalog is a database (the SQL
catalog), each plan is also recorded in its ``frazil_scan_plans`` table: the table's metadata
file, the request and the task count. A server that restarts, or another server process on the
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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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


@dataclass
class _Plan:
    table: tuple[str, ...]
    plan: ScanPlan
    created: float
    layout: PageLayout
    #: wire JSON of the plan's residual texts, filled as pages are written
    residuals: dict[str, str] = field(default_factory=dict)


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


def _entry(table: tuple[str, ...], plan: ScanPlan) -> _Plan:
    layout = PageLayout.of(plan.tasks.schema.field("partition").type, plan.specs, plan.schema)
    return _Plan(table, plan, time.monotonic(), layout)


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
        """:meth:`plan`'s answer as the JSON body (written natively)."""
        plan = scan_for(table, request).plan_files_arrow()
        plan_id = secrets.token_urlsafe(16)
        entry = _entry(tuple(table.identifier), plan)
        if self._db is not None and len(plan) > self.page_size and table.metadata_location:
            # Only paged plans outlive their answer: a small one is answered whole.
            self._db.insert(
                PlanRecord(
                    plan_id,
                    tuple(table.identifier),
                    table.metadata_location,
                    json.dumps(request.to_json()),
                    self.page_size,
                    len(plan),
                    time.time() + self.ttl_s,
                )
            )
        self._remember(plan_id, entry)
        return self._completed(plan_id, entry, with_id=True)

    def fetch_body(self, table: tuple[str, ...], plan_id: str) -> bytes:
        """:meth:`fetch`'s answer as the JSON body."""
        return self._completed(plan_id, self._get(table, plan_id), with_id=False)

    def cancel(self, table: tuple[str, ...], plan_id: str) -> None:
        with self._lock:
            entry = self._plans.get(plan_id)
        record = self._db.get(plan_id) if self._db is not None else None
        # a recorded plan is cancelled without planning it again
        owner = entry.table if entry is not None else record.table if record else None
        if owner != tuple(table):
            raise NoSuchPlanIdError(f"unknown plan id {plan_id[:80]!r}")
        with self._lock:
            self._plans.pop(plan_id, None)
        if self._db is not None and record is not None:
            self._db.delete(plan_id)

    def tasks_body(self, table: tuple[str, ...], plan_task: str) -> bytes:
        """:meth:`tasks`'s answer as the JSON body (written natively)."""
        plan_id, sep, start_text = plan_task.rpartition(":")
        if not sep or not start_text.isdigit() or len(start_text) > 18:
            raise NoSuchPlanTaskError(f"unknown plan task {plan_task[:80]!r}")
        try:
            entry = self._get(table, plan_id)
        except NoSuchPlanIdError:
            raise NoSuchPlanTaskError(f"unknown plan task {plan_task[:80]!r}") from None
        start = int(start_text)
        if start % self.page_size or start >= len(entry.plan):
            raise NoSuchPlanTaskError(f"unknown plan task {plan_task[:80]!r}")
        return write_page(entry.plan, start, self.page_size, entry.layout, entry.residuals)

    # ----

    def _remember(self, plan_id: str, entry: _Plan) -> None:
        with self._lock:
            self._expire()
            while len(self._plans) >= self.max_plans:
                self._plans.popitem(last=False)
            self._plans[plan_id] = entry

    def _completed(self, plan_id: str, entry: _Plan, *, with_id: bool) -> bytes:
        head = b"{"
        if with_id:
            head += b'"plan-id":' + json.dumps(plan_id).encode() + b","
        head += b'"status":"completed",'
        plan = entry.plan
        if len(plan) <= self.page_size:
            page = write_page(plan, 0, self.page_size, entry.layout, entry.residuals)
            return head + page[1:]
        tokens = [f"{plan_id}:{s}" for s in range(0, len(plan), self.page_size)]
        return head + b'"plan-tasks":' + json.dumps(tokens).encode() + b"}"

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
        entry = _entry(record.table, plan)
        self._remember(plan_id, entry)
        return entry

    def _expire(self) -> None:
        cutoff = time.monotonic() - self.ttl_s
        while self._plans:
            first = next(iter(self._plans.values()))
            if first.created >= cutoff:
                break
            self._plans.popitem(last=False)
