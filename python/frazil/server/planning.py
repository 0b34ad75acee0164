"""Server-side scan planning for ``frazil serve``: ``planTableScan``, ``fetchPlanningResult``,
``cancelPlanning`` and ``fetchScanTasks`` over frazil's native planner.

A plan is planned whole, synchronously, into its Arrow form (:class:`~frazil.table.scan.arrow_plan.
ScanPlan`) and kept in memory under a random plan id. A small plan is answered at once with its
``file-scan-tasks``; a larger one with ``plan-tasks``: opaque tokens, one per page of
``page_size`` tasks, each fetched with ``fetchScanTasks``. Only the requested page is turned into
Python objects and JSON. Plans expire after ``ttl_s`` and at most ``max_plans`` are kept (the
oldest go first), so memory stays bounded whatever clients do.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from frazil.exceptions import (
    NoSuchPlanIdError,
    NoSuchPlanTaskError,
    UnsupportedError,
)
from frazil.expressions import AlwaysTrue
from frazil.expressions.json import from_json, to_json
from frazil.table.scan.tasks import content_file_to_json

if TYPE_CHECKING:
    from frazil.rest.wire import PlanTableScanRequest
    from frazil.table import Table
    from frazil.table.scan.arrow_plan import ScanPlan

__all__ = ["PlanStore"]

DEFAULT_PAGE_SIZE = 1_000
DEFAULT_MAX_PLANS = 256
DEFAULT_TTL_S = 900.0


@dataclass
class _Plan:
    table: tuple[str, ...]
    plan: ScanPlan
    created: float


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
    """Plans kept for paging (see the module docstring); safe to use from several threads."""

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

    def plan(self, table: Table, request: PlanTableScanRequest) -> dict[str, Any]:
        """Plans the scan and answers ``planTableScan`` (``completed``)."""
        plan = scan_for(table, request).plan_files_arrow()
        plan_id = secrets.token_urlsafe(16)
        with self._lock:
            self._expire()
            while len(self._plans) >= self.max_plans:
                self._plans.popitem(last=False)
            self._plans[plan_id] = _Plan(tuple(table.identifier), plan, time.monotonic())
        return {"plan-id": plan_id, **self._completed(plan_id, plan)}

    def fetch(self, table: tuple[str, ...], plan_id: str) -> dict[str, Any]:
        """``fetchPlanningResult``: the plan is always complete once it has an id."""
        entry = self._get(table, plan_id)
        return self._completed(plan_id, entry.plan)

    def cancel(self, table: tuple[str, ...], plan_id: str) -> None:
        self._get(table, plan_id)
        with self._lock:
            self._plans.pop(plan_id, None)

    def tasks(self, table: tuple[str, ...], plan_task: str) -> dict[str, Any]:
        """``fetchScanTasks`` for one page token."""
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
        return page_json(entry.plan, start, self.page_size)

    # ----

    def _completed(self, plan_id: str, plan: ScanPlan) -> dict[str, Any]:
        if len(plan) <= self.page_size:
            return {"status": "completed", **page_json(plan, 0, self.page_size)}
        return {
            "status": "completed",
            "plan-tasks": [f"{plan_id}:{s}" for s in range(0, len(plan), self.page_size)],
        }

    def _get(self, table: tuple[str, ...], plan_id: str) -> _Plan:
        with self._lock:
            self._expire()
            entry = self._plans.get(plan_id)
        if entry is None or entry.table != tuple(table):
            raise NoSuchPlanIdError(f"unknown plan id {plan_id[:80]!r}")
        return entry

    def _expire(self) -> None:
        cutoff = time.monotonic() - self.ttl_s
        while self._plans:
            first = next(iter(self._plans.values()))
            if first.created >= cutoff:
                break
            self._plans.popitem(last=False)


def page_json(plan: ScanPlan, start: int, size: int) -> dict[str, Any]:
    """``ScanTasks`` of the tasks ``[start, start + size)``: their ``file-scan-tasks`` and the
    ``delete-files`` they refer to (renumbered for the page)."""
    tasks = plan.tasks.slice(start, size)
    if tasks.num_rows == 0:
        return {"file-scan-tasks": [], "delete-files": []}
    refs = tasks.column("delete_file_references").to_pylist()
    delete_rows = sorted({r for row in refs for r in row})
    local = {g: i for i, g in enumerate(delete_rows)}
    schema = plan.schema
    delete_json = []
    if delete_rows:
        # The DataFile objects of just these rows.
        for d in plan.data_files(plan.delete_files.take(delete_rows)):
            delete_json.append(content_file_to_json(d, plan.specs[d.spec_id], schema))
    residual_texts = tasks.column("residual").to_pylist()
    parsed: dict[str, Any] = {}
    out = []
    for f, row_refs, text in zip(plan.data_files(tasks), refs, residual_texts, strict=True):
        task: dict[str, Any] = {"data-file": content_file_to_json(f, plan.specs[f.spec_id], schema)}
        if row_refs:
            task["delete-file-references"] = [local[r] for r in row_refs]
        residual = parsed.get(text)
        if residual is None:
            # The plan's residuals are bound (field ids); the wire's are the REST form, with
            # terms as column names.
            residual = parsed[text] = _wire_expression(text, schema)
        # Sent even when it is ``true``: without it a client must filter with the whole
        # scan filter (the spec), where the partition already proved it holds.
        task["residual-filter"] = residual
        out.append(task)
    return {"file-scan-tasks": out, "delete-files": delete_json}


def _wire_expression(text: str, schema: Any) -> Any:
    obj = json.loads(text)
    if obj is True or obj is False:
        return obj
    return to_json(from_json(obj, schema), legacy=True)
