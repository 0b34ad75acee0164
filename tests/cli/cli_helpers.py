"""A SQLite catalog with one real table for the CLI tests (fixtures in conftest.py), and
runners for ``frazil`` and PyIceberg's ``pyiceberg`` pointed at it (each through its own
environment variables).

The table ``db.events`` (format v2, merge-on-read deletes): three appends, a delete (a position
delete file), a second partition spec (identity on ``city``) and an append under it, a branch
``audit`` from the second snapshot with an append of its own, and a tag ``v1`` on the head of
``main``.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pytest

from frazil.catalog import Catalog, load_catalog
from frazil.table import Table

IDENT = "db.events"


@dataclass
class Warehouse:
    path: pathlib.Path
    home: pathlib.Path

    @property
    def uri(self) -> str:
        return f"sqlite:///{self.path}/catalog.db"

    def catalog(self) -> Catalog:
        return load_catalog("default", type="sql", uri=self.uri, warehouse=str(self.path))

    def table(self, ident: str = IDENT) -> Table:
        return self.catalog().load_table(ident)

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("FRAZIL_", "PYICEBERG_")) and k not in ("COLUMNS", "LINES")
        }
        env.update(
            HOME=str(self.home),  # no ~/.frazil.yaml or ~/.pyiceberg.yaml of the machine's
            FRAZIL_HOME=str(self.home),
            PYICEBERG_HOME=str(self.home),
            FRAZIL_CATALOG__DEFAULT__TYPE="sql",
            FRAZIL_CATALOG__DEFAULT__URI=self.uri,
            FRAZIL_CATALOG__DEFAULT__WAREHOUSE=str(self.path),
            PYICEBERG_CATALOG__DEFAULT__TYPE="sql",
            PYICEBERG_CATALOG__DEFAULT__URI=self.uri,
            PYICEBERG_CATALOG__DEFAULT__WAREHOUSE=f"file://{self.path}",
            COLUMNS="400",  # neither rich nor PyIceberg's rich wraps long paths
        )
        env.update(extra)
        return env


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        assert self.returncode == 0, self.stderr
        return json.loads(self.stdout)


def run(cmd: list[str], env: dict[str, str]) -> Run:
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    return Run(p.returncode, p.stdout, p.stderr)


def frazil(wh: Warehouse, *args: str) -> Run:
    return run([sys.executable, "-m", "frazil", *args], wh.env())


def pyiceberg(wh: Warehouse, *args: str) -> Run:
    script = pathlib.Path(sys.executable).parent / "pyiceberg"
    if not script.exists():
        pytest.skip("PyIceberg's console script is not installed next to this Python")
    return run([str(script), *args], wh.env())


def build(path: pathlib.Path) -> None:
    cat = load_catalog(
        "default", type="sql", uri=f"sqlite:///{path}/catalog.db", warehouse=str(path)
    )
    cat.create_namespace("db", {"owner": "ops"})
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("city", pa.string()),
            pa.field("amount", pa.float64()),
        ]
    )
    t = cat.create_table(
        IDENT,
        schema=schema,
        properties={"write.delete.mode": "merge-on-read", "owner": "ops"},
    )
    for i, n in enumerate((100, 300, 50)):
        ids = pa.array(range(i * 1000, i * 1000 + n), pa.int64())
        t.append(pa.table({"id": ids, "city": ["ams", "ber"] * (n // 2), "amount": [1.5] * n}))
    t.delete("id < 10")
    with t.update_spec() as u:
        u.add_identity("city")
    ids = pa.array(range(5000, 5060), pa.int64())
    t.append(pa.table({"id": ids, "city": ["ams"] * 40 + ["par"] * 20, "amount": [2.0] * 60}))
    head = t.current_snapshot()
    assert head is not None
    second = t.snapshots()[1].snapshot_id
    t.manage_snapshots().create_branch(second, "audit").create_tag(head.snapshot_id, "v1").commit()
    one = pa.table({"id": pa.array([9000], pa.int64()), "city": ["rom"], "amount": [3.0]})
    t.append(one, branch="audit")
