"""PyIceberg's import path for snapshots (``pyiceberg.table.snapshots``); the implementation is
:mod:`frazil.metadata`."""

from frazil.metadata import Operation, Snapshot, SnapshotLogEntry, Summary

__all__ = ["Operation", "Snapshot", "SnapshotLogEntry", "Summary"]
