"""Tables: a catalog's handle on one table's current metadata, and the ways to read and change it.

- :class:`Table` (``table.py``), read-only :class:`~frazil.table.static.StaticTable`, and
  :class:`~frazil.table.transaction.Transaction`, which stages changes as the steps of
  :mod:`frazil.table.step`.
- ``scan/``: reading (planning, tasks, Arrow reads, row filters, incremental and changelog
  scans); the twin of the Rust crate ``frazil-scan``.
- ``update/``: metadata changes as updates and requirements (schema, partition spec, sort
  order, snapshots and refs).
- ``write/``: data writes (append, overwrite, delete, upsert, row deltas, added files).
- ``maintenance/``: expiry, orphan files, compaction, manifest and position-delete rewrites.
- ``inspect/``: metadata tables; ``statistics`` and ``partition_statistics``: statistics files.
- ``snapshots``, ``sorting``, ``name_mapping``: PyIceberg's import paths.
"""

from frazil.metadata import MAIN_BRANCH
from frazil.table.static import StaticTable
from frazil.table.table import MaintenanceTable, Table
from frazil.table.transaction import Transaction

__all__ = ["MAIN_BRANCH", "MaintenanceTable", "StaticTable", "Table", "Transaction"]
