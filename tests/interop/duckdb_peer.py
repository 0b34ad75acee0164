"""DuckDB with its iceberg and avro extensions loaded from their PyPI wheels
(``duckdb-extension-iceberg``, ``duckdb-extension-avro``), so ``iceberg_scan`` works offline.
Shared by the interop tests and the benchmarks (which put this folder on ``sys.path``)."""

from __future__ import annotations

import glob
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from peers import import_peer


def duckdb_with_iceberg() -> Any:
    """A DuckDB connection that can ``iceberg_scan``; skips the test (fails it under CI=true)
    when a wheel is missing."""
    duckdb = import_peer("duckdb")
    avro = import_peer("duckdb_extension_avro")
    iceberg = import_peer("duckdb_extension_iceberg")
    con = duckdb.connect()
    for mod, name in ((avro, "avro"), (iceberg, "iceberg")):
        root = os.path.dirname(mod.__file__)
        (path,) = glob.glob(f"{root}/extensions/*/{name}.duckdb_extension")
        con.execute(f"LOAD '{path}'")
    return con
