"""Scan and commit metrics reports, shaped as the REST protocol's ``ReportMetricsRequest`` (a
``ScanReport`` or ``CommitReport`` with ``report-type``) and named as the Java reference's
``ScanMetricsResult`` / ``CommitMetricsResult`` write them: counters ``{"unit", "value"}`` and
timers ``{"time-unit", "count", "total-duration"}``.

A catalog that takes reports (the REST catalog, when its server advertises the metrics
endpoint) gets them from :class:`ScanCounts` (counted as a scan's tasks go by, or from an Arrow
plan) and from a committed snapshot's summary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil.expressions.json import to_json
from frazil.manifest.content_file import DataFileContent, is_deletion_vector_of

if TYPE_CHECKING:
    from frazil.metadata import Snapshot
    from frazil.table.scan import DataScan
    from frazil.table.scan.arrow_plan import ScanPlan
    from frazil.table.scan.tasks import FileScanTask

__all__ = ["ScanCounts", "commit_report", "scan_report"]

# Snapshot summary key -> (CommitMetricsResult name, unit).
_COMMIT_METRICS = {
    "added-data-files": ("added-data-files", "count"),
    "deleted-data-files": ("removed-data-files", "count"),
    "total-data-files": ("total-data-files", "count"),
    "added-delete-files": ("added-delete-files", "count"),
    "added-equality-delete-files": ("added-equality-delete-files", "count"),
    "added-position-delete-files": ("added-positional-delete-files", "count"),
    "added-dvs": ("added-dvs", "count"),
    "removed-delete-files": ("removed-delete-files", "count"),
    "removed-equality-delete-files": ("removed-equality-delete-files", "count"),
    "removed-position-delete-files": ("removed-positional-delete-files", "count"),
    "removed-dvs": ("removed-dvs", "count"),
    "total-delete-files": ("total-delete-files", "count"),
    "added-records": ("added-records", "count"),
    "deleted-records": ("removed-records", "count"),
    "total-records": ("total-records", "count"),
    "added-files-size": ("added-files-size-in-bytes", "bytes"),
    "removed-files-size": ("removed-files-size-in-bytes", "bytes"),
    "total-files-size": ("total-files-size-in-bytes", "bytes"),
    "added-position-deletes": ("added-positional-deletes", "count"),
    "removed-position-deletes": ("removed-positional-deletes", "count"),
    "total-position-deletes": ("total-positional-deletes", "count"),
    "added-equality-deletes": ("added-equality-deletes", "count"),
    "removed-equality-deletes": ("removed-equality-deletes", "count"),
    "total-equality-deletes": ("total-equality-deletes", "count"),
}


def _counter(value: int, unit: str = "count") -> dict[str, Any]:
    return {"unit": unit, "value": int(value)}


def _timer(duration_ns: int) -> dict[str, Any]:
    return {"time-unit": "nanoseconds", "count": 1, "total-duration": max(0, int(duration_ns))}


@dataclass
class ScanCounts:
    """What a scan's plan held: its data files and the distinct delete files they carry."""

    data_files: int = 0
    data_bytes: int = 0
    delete_bytes: int = 0
    positional: int = 0
    equality: int = 0
    dvs: int = 0
    _seen: set[tuple[str, int | None]] = field(default_factory=set, repr=False)

    def add(self, task: FileScanTask) -> None:
        self.data_files += 1
        self.data_bytes += task.file.file_size_in_bytes
        for d in task.delete_files:
            # A deletion vector is a blob of a Puffin file that holds others too.
            key = (d.file_path, d.content_offset)
            if key not in self._seen:
                self._seen.add(key)
                self._add_delete(
                    int(d.content), d.file_format, d.file_size_in_bytes, d.content_size_in_bytes
                )

    def add_page(self, tasks: pa.Table, deletes: pa.Table) -> None:
        """Counts a page of a plan at once (rows shaped as a plan's ``tasks``, whose
        ``delete_file_references`` index ``deletes``), as :meth:`add` of each of its tasks."""
        self.data_files += tasks.num_rows
        if tasks.num_rows:
            total = pc.sum(tasks.column("file_size_in_bytes")).as_py()
            self.data_bytes += int(total or 0)
        refs = tasks.column("delete_file_references")
        flat = pa.chunked_array([c.flatten() for c in refs.chunks], pa.int32())
        if not len(flat):
            return
        rows = pc.unique(flat).cast(pa.int64())
        names = ["file_path", "content_offset", "content", "file_format"]
        names += ["file_size_in_bytes", "content_size_in_bytes"]
        for d in deletes.select(names).take(rows).to_pylist():
            key = (d["file_path"], d["content_offset"])
            if key not in self._seen:
                self._seen.add(key)
                self._add_delete(
                    d["content"],
                    d["file_format"],
                    d["file_size_in_bytes"],
                    d["content_size_in_bytes"],
                )

    def _add_delete(self, content: int, file_format: str, size: int, blob_size: int | None) -> None:
        self.delete_bytes += size if blob_size is None else blob_size
        if content == DataFileContent.EQUALITY_DELETES:
            self.equality += 1
        elif is_deletion_vector_of(content, str(file_format)):
            self.dvs += 1
        else:
            self.positional += 1

    @classmethod
    def from_plan(cls, plan: ScanPlan) -> ScanCounts:
        out = cls(
            data_files=plan.tasks.num_rows,
            data_bytes=int(sum(plan.tasks.column("file_size_in_bytes").to_pylist())),
        )
        deletes = plan.delete_files.select(
            ["content", "file_format", "file_size_in_bytes", "content_size_in_bytes"]
        ).to_pylist()
        for d in deletes:
            out._add_delete(
                d["content"], d["file_format"], d["file_size_in_bytes"], d["content_size_in_bytes"]
            )
        return out

    def metrics(self, planning_ns: int) -> dict[str, Any]:
        return {
            "total-planning-duration": _timer(planning_ns),
            "result-data-files": _counter(self.data_files),
            "result-delete-files": _counter(self.positional + self.equality + self.dvs),
            "total-file-size-in-bytes": _counter(self.data_bytes, "bytes"),
            "total-delete-file-size-in-bytes": _counter(self.delete_bytes, "bytes"),
            "positional-delete-files": _counter(self.positional),
            "equality-delete-files": _counter(self.equality),
            "dvs": _counter(self.dvs),
        }


def scan_report(
    table_name: str, scan: DataScan, counts: ScanCounts, planning_ns: int
) -> dict[str, Any] | None:
    """The ``ScanReport`` of a planned scan (``None`` for a table without snapshots)."""
    snapshot = scan.snapshot()
    if snapshot is None:
        return None
    schema = scan.table_schema()
    projection = scan.projection()
    ids = sorted(projection.field_ids)
    names = [schema.find_column_name(i) or str(i) for i in ids]
    return {
        "report-type": "scan-report",
        "table-name": table_name,
        "snapshot-id": snapshot.snapshot_id,
        "filter": to_json(scan.row_filter, legacy=True),  # the form Java 1.10 reads
        "schema-id": schema.schema_id,
        "projected-field-ids": ids,
        "projected-field-names": names,
        "metrics": counts.metrics(planning_ns),
        "metadata": {"engine-name": "frazil"},
    }


def commit_report(
    table_name: str, snapshot: Snapshot, duration_ns: int, attempts: int = 1
) -> dict[str, Any]:
    """The ``CommitReport`` of a committed snapshot, its counters from the snapshot summary."""
    summary: Mapping[str, str] = snapshot.summary or {}
    metrics: dict[str, Any] = {
        "total-duration": _timer(duration_ns),
        "attempts": _counter(attempts),
    }
    for key, (name, unit) in _COMMIT_METRICS.items():
        value = summary.get(key)
        if value is not None:
            try:
                metrics[name] = _counter(int(value), unit)
            except ValueError:
                continue
    return {
        "report-type": "commit-report",
        "table-name": table_name,
        "snapshot-id": snapshot.snapshot_id,
        "sequence-number": snapshot.sequence_number,
        "operation": str(summary.get("operation", "")),
        "metrics": metrics,
        "metadata": {"engine-name": "frazil"},
    }
