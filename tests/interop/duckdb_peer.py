"""DuckDB with its iceberg and avro extensions loaded from their PyPI wheels
(``duckdb-extension-iceberg``, ``duckdb-extension-avro``), so ``iceberg_scan`` works offline.
Shared by the interop tests and the benchmarks (which put this folder on ``sys.path``)."""

from __future__ import annotations

import glob
import os
from typing import Any

import pytest


def duckdb_with_iceberg() -> Any:
    """A DuckDB connection that can ``iceberg_scan``; skips the test when a wheel is missing."""
    duckdb = pytest.importorskip("duckdb")
    avro = pytest.importorskip("duckdb_extension_avro")
    iceberg = pytest.importorskip("duckdb_extension_iceberg")
    con = duckdb.connect()
    for mod, name in ((avro, "avro"), (iceberg, "iceberg")):
        root = os.path.dirname(mod.__file__)
        (path,) = glob.glob(f"{root}/extensions/*/{name}.duckdb_extension")
        con.execute(f"LOAD '{path}'")
    return con
