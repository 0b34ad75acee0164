"""``frazil_scan_plans`` (frazil serve's recorded plans) in a SQL catalog's database: created
once however many servers start on the database at the same moment, records readable by any
of them."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, inspect

from frazil.catalog.sql import SqlCatalog
from frazil.server.plan_db import SCAN_PLANS, PlanRecord, PlanTable


def _record(plan_id: str) -> PlanRecord:
    return PlanRecord(plan_id, ("db", "t"), "/m/v1.metadata.json", "{}", 10, 25, time.time() + 60)


def _catalog(tmp_path: Path) -> SqlCatalog:
    return SqlCatalog("c", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=str(tmp_path))


def test_created_by_another_server_between_check_and_create(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race of two servers: the other one creates the table after this one found it
    missing. Simulated by skipping the existence check: the create then fails on the
    existing table, which must count as created."""
    first, second = _catalog(tmp_path), _catalog(tmp_path)
    PlanTable(first).insert(_record("a"))
    create = SCAN_PLANS.create

    def racing(bind: Any, checkfirst: bool = True) -> None:
        create(bind, checkfirst=False)

    monkeypatch.setattr(SCAN_PLANS, "create", racing)
    late = PlanTable(second)
    late.insert(_record("b"))
    assert {r.plan_id for r in (late.get("a"), late.get("b")) if r} == {"a", "b"}
    engine = create_engine(f"sqlite:///{tmp_path}/catalog.db")
    assert "frazil_scan_plans" in inspect(engine).get_table_names()
    engine.dispose()


def test_servers_starting_together(tmp_path: Path) -> None:
    catalogs = [_catalog(tmp_path) for _ in range(6)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(catalogs))

    def run(i: int) -> None:
        try:
            barrier.wait()
            PlanTable(catalogs[i]).insert(_record(f"p{i}"))
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(catalogs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    reader = PlanTable(catalogs[0])
    for i in range(len(catalogs)):
        got = reader.get(f"p{i}")
        assert got is not None and got.table == ("db", "t") and got.task_count == 25
    reader.delete("p0")
    assert reader.get("p0") is None
