"""The ``frazil_scan_plans`` table: paged scan plans of ``frazil serve`` recorded in its SQL
catalog's database (SQLite, PostgreSQL, ...), so that they outlive the server process.

A row is what it takes to plan the same plan again (:mod:`frazil.server.planning`): the
table, the metadata file it was planned from (immutable), the request, the page size and
task count (to check the plan came out the same), and when it expires. Expired rows are
deleted as new plans are recorded.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    Integer,
    MetaData,
    String,
    Text,
    delete,
    insert,
    select,
)
from sqlalchemy import Table as SqlTable

if TYPE_CHECKING:
    from frazil.catalog import Catalog
    from frazil.catalog.sql import SqlCatalog

__all__ = ["PlanRecord", "PlanTable"]

_metadata = MetaData()
SCAN_PLANS = SqlTable(
    "frazil_scan_plans",
    _metadata,
    Column("catalog_name", String(255), primary_key=True),
    Column("plan_id", String(64), primary_key=True),
    Column("table_identifier", Text, nullable=False),
    Column("metadata_location", Text, nullable=False),
    Column("request", Text, nullable=False),
    Column("page_size", Integer, nullable=False),
    Column("task_count", BigInteger, nullable=False),
    Column("expires_at", Float, nullable=False),
)


@dataclass(frozen=True)
class PlanRecord:
    plan_id: str
    table: tuple[str, ...]
    metadata_location: str
    #: the ``PlanTableScanRequest`` JSON
    request: str
    page_size: int
    task_count: int
    #: seconds since the epoch
    expires_at: float


class PlanTable:
    """Plan records in one SQL catalog's database (rows keyed by the catalog's name, as its
    tables are)."""

    def __init__(self, catalog: SqlCatalog) -> None:
        self._catalog = catalog
        self._created = False

    @classmethod
    def of(cls, catalog: Catalog) -> PlanTable | None:
        """The plan table of ``catalog`` if it keeps a database; ``None`` otherwise."""
        from frazil.catalog.sql import SqlCatalog

        return cls(catalog) if isinstance(catalog, SqlCatalog) else None

    def _ensure(self) -> None:
        if not self._created:
            # several servers on one database may create it at once
            self._catalog.create_side_table(SCAN_PLANS)
            self._created = True

    def insert(self, record: PlanRecord) -> None:
        self._ensure()
        name = self._catalog.name
        with self._catalog.write_transaction() as conn:
            conn.execute(
                delete(SCAN_PLANS).where(
                    SCAN_PLANS.c.catalog_name == name, SCAN_PLANS.c.expires_at < time.time()
                )
            )
            conn.execute(
                insert(SCAN_PLANS).values(
                    catalog_name=name,
                    plan_id=record.plan_id,
                    table_identifier=json.dumps(list(record.table)),
                    metadata_location=record.metadata_location,
                    request=record.request,
                    page_size=record.page_size,
                    task_count=record.task_count,
                    expires_at=record.expires_at,
                )
            )

    def get(self, plan_id: str) -> PlanRecord | None:
        """The plan's record, unless it is unknown or expired."""
        self._ensure()
        with self._catalog.read_transaction() as conn:
            row = conn.execute(
                select(SCAN_PLANS).where(
                    SCAN_PLANS.c.catalog_name == self._catalog.name,
                    SCAN_PLANS.c.plan_id == plan_id,
                )
            ).first()
        if row is None or row.expires_at < time.time():
            return None
        return PlanRecord(
            row.plan_id,
            tuple(json.loads(row.table_identifier)),
            row.metadata_location,
            row.request,
            row.page_size,
            row.task_count,
            row.expires_at,
        )

    def delete(self, plan_id: str) -> None:
        self._ensure()
        with self._catalog.write_transaction() as conn:
            conn.execute(
                delete(SCAN_PLANS).where(
                    SCAN_PLANS.c.catalog_name == self._catalog.name,
                    SCAN_PLANS.c.plan_id == plan_id,
                )
            )
