"""Snapshot summaries (spec "Snapshots" and Appendix F "Optional Snapshot Summary Fields").

A :class:`SnapshotSummaryCollector` counts the files a snapshot adds and removes; ``build``
gives the metrics the Java reference writes (a metric only when it is non-zero, as Java's
``SnapshotSummary`` does), and :func:`update_totals` carries the ``total-*`` fields forward from
the branch head's summary.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from frazil.manifest.content_file import DataFile, DataFileContent, is_deletion_vector

__all__ = ["SnapshotSummaryCollector", "update_totals"]

# (total, added, removed), in the order Java updates them.
_TOTALS = (
    ("total-records", "added-records", "deleted-records"),
    ("total-files-size", "added-files-size", "removed-files-size"),
    ("total-data-files", "added-data-files", "deleted-data-files"),
    ("total-delete-files", "added-delete-files", "removed-delete-files"),
    ("total-position-deletes", "added-position-deletes", "removed-position-deletes"),
    ("total-equality-deletes", "added-equality-deletes", "removed-equality-deletes"),
)

# Java's order of the metrics in a summary.
_METRICS = (
    "added-data-files",
    "deleted-data-files",
    "added-equality-delete-files",
    "removed-equality-delete-files",
    "added-position-delete-files",
    "removed-position-delete-files",
    "added-dvs",
    "removed-dvs",
    "added-delete-files",
    "removed-delete-files",
    "added-records",
    "deleted-records",
    "added-files-size",
    "removed-files-size",
    "added-position-deletes",
    "removed-position-deletes",
    "added-equality-deletes",
    "removed-equality-deletes",
)


def _content_size(f: DataFile) -> int:
    # A deletion vector is one blob of a shared Puffin file: it counts its own bytes only.
    if is_deletion_vector(f) and f.content_size_in_bytes is not None:
        return f.content_size_in_bytes
    return f.file_size_in_bytes


class SnapshotSummaryCollector:
    """Counts added and removed content files (one call per file)."""

    def __init__(self) -> None:
        self.metrics: dict[str, int] = dict.fromkeys(_METRICS, 0)
        self.partitions: set[tuple[int, tuple[Any, ...]]] = set()
        self.deleted_duplicate_files = 0

    def _count(self, f: DataFile, added: bool) -> None:
        m = self.metrics
        self.partitions.add((f.spec_id, tuple(f.partition)))
        if f.content == DataFileContent.DATA:
            m["added-data-files" if added else "deleted-data-files"] += 1
            m["added-records" if added else "deleted-records"] += f.record_count
        elif f.content == DataFileContent.POSITION_DELETES:
            if is_deletion_vector(f):
                m["added-dvs" if added else "removed-dvs"] += 1
            else:
                m["added-position-delete-files" if added else "removed-position-delete-files"] += 1
            m["added-delete-files" if added else "removed-delete-files"] += 1
            m["added-position-deletes" if added else "removed-position-deletes"] += f.record_count
        else:
            m["added-equality-delete-files" if added else "removed-equality-delete-files"] += 1
            m["added-delete-files" if added else "removed-delete-files"] += 1
            m["added-equality-deletes" if added else "removed-equality-deletes"] += f.record_count
        m["added-files-size" if added else "removed-files-size"] += _content_size(f)

    def added_file(self, f: DataFile) -> None:
        self._count(f, True)

    def removed_file(self, f: DataFile) -> None:
        self._count(f, False)

    def build(self) -> dict[str, str]:
        out = {k: str(v) for k, v in self.metrics.items() if v > 0}
        if self.deleted_duplicate_files:
            out["deleted-duplicate-files"] = str(self.deleted_duplicate_files)
        out["changed-partition-count"] = str(len(self.partitions))
        return out


def update_totals(summary: dict[str, str], previous: Mapping[str, str] | None) -> dict[str, str]:
    """Adds the ``total-*`` fields: the previous head's totals plus added minus removed.

    ``previous`` is the branch head's summary, or ``None`` when the branch has no head yet (all
    totals then start at 0). A total the head does not have, or that does not parse, is left
    out rather than guessed, as Java does.
    """
    prev: Mapping[str, str] = (
        previous if previous is not None else {total: "0" for total, _, _ in _TOTALS}
    )
    out = dict(summary)
    for total, added, removed in _TOTALS:
        text = prev.get(total)
        if text is None:
            continue
        try:
            value = int(text) + int(summary.get(added, 0)) - int(summary.get(removed, 0))
        except ValueError:
            continue
        if value >= 0:
            out[total] = str(value)
    return out
