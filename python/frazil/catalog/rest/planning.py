"""Server-side scan planning over the REST protocol (``rest.scan-planning=server|auto``).

``planTableScan`` (``POST .../plan``) answers ``completed`` with tasks, or ``submitted`` with a
plan id that ``fetchPlanningResult`` (``GET .../plan/{plan-id}``) is polled on until it
completes; a completed result may hold opaque plan tasks, each turned into file scan tasks by
``fetchScanTasks`` (``POST .../tasks``), which may hand out further plan tasks. File scan tasks
reference the response's ``delete-files`` by index; both are read with
:func:`frazil.table.scan.tasks.content_file_from_json` into the tasks frazil's reader reads.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from frazil import exceptions as exc
from frazil.expressions import AlwaysTrue, BooleanExpression, bind
from frazil.expressions.json import from_json as expr_from_json
from frazil.expressions.json import to_json as expr_to_json
from frazil.rest.wire import ErrorModel
from frazil.table.scan.tasks import FileScanTask, content_file_from_json

if TYPE_CHECKING:
    from frazil.catalog import Identifier
    from frazil.catalog.rest import RestCatalog
    from frazil.table.scan import DataScan

__all__ = ["ServerPlanner", "plan_table_scan_request"]

# Polling a submitted plan: doubling waits from 50 ms up to 2 s, for at most this long.
_POLL_MIN_S = 0.05
_POLL_MAX_S = 2.0
_POLL_TIMEOUT_S = 600.0


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


class ServerPlanner:
    """Plans scans of one table on the REST server (a :data:`frazil.table.scan.Planner`)."""

    def __init__(self, catalog: RestCatalog, identifier: Identifier) -> None:
        self._catalog = catalog
        self._ident = identifier

    def __repr__(self) -> str:
        return f"ServerPlanner({'.'.join(self._ident)!r})"

    def __call__(self, scan: DataScan) -> Iterator[FileScanTask]:
        if scan.snapshot() is None:
            return iter(())
        return self._tasks(scan)

    def _tasks(self, scan: DataScan) -> Iterator[FileScanTask]:
        cat = self._catalog
        result = cat._plan_request(
            self._ident, "POST", "/plan", "table", plan_table_scan_request(scan)
        )
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
            result = cat._plan_request(self._ident, "GET", f"/plan/{plan_id}", "plan")
        status = result.get("status")
        if status == "failed":
            model = ErrorModel.from_json(result)
            raise exc.RESTError(
                f"server-side planning failed: {model.message if model else 'no detail'}"
            )
        if status != "completed":
            raise exc.RESTError(f"server-side planning ended with status {status!r}")
        pending = list(result.get("plan-tasks") or [])
        yield from self._read(scan, result)
        while pending:
            task = pending.pop(0)
            page = cat._plan_request(
                self._ident, "POST", "/tasks", "plan-task", {"plan-task": task}
            )
            pending.extend(page.get("plan-tasks") or [])
            yield from self._read(scan, page)

    def _read(self, scan: DataScan, page: Any) -> Iterator[FileScanTask]:
        md = scan.table_metadata
        schema = scan.table_schema()
        specs = md.specs()
        deletes = [
            content_file_from_json(d, specs, schema, f"delete-files[{i}]")
            for i, d in enumerate(page.get("delete-files") or [])
        ]
        default_residual: BooleanExpression = scan._bound_filter()
        for i, t in enumerate(page.get("file-scan-tasks") or []):
            if not isinstance(t, dict):
                raise exc.ParseError(f"file-scan-tasks[{i}]: expected an object")
            data = content_file_from_json(
                t.get("data-file"), specs, schema, f"file-scan-tasks[{i}]"
            )
            refs = t.get("delete-file-references") or []
            try:
                task_deletes = [deletes[r] for r in refs]
            except (IndexError, TypeError):
                raise exc.ParseError(
                    f"file-scan-tasks[{i}].delete-file-references: {refs!r} out of range"
                ) from None
            residual = default_residual
            if "residual-filter" in t:
                residual = bind(schema, expr_from_json(t["residual-filter"]), scan.case_sensitive)
            yield FileScanTask(data, task_deletes, residual, schema, specs[data.spec_id])
