"""What a user does first with a freshly installed wheel: a table in a SQLite catalog, an append,
a row-level delete (numpy-backed paths), a filtered scan. Run by dev/wheel-check.sh in a clean
venv with no Rust toolchain on PATH."""

import sys
import tempfile

import pyarrow as pa

import frazil
from frazil.catalog import load_catalog

warehouse = tempfile.mkdtemp()
catalog = load_catalog("smoke", type="sql", uri=f"sqlite:///{warehouse}/c.db", warehouse=warehouse)
catalog.create_namespace("db")
table = catalog.create_table("db.t", pa.schema([("id", pa.int64()), ("s", pa.string())]))
table.append(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}))
table.delete("id = 2")
got = sorted(catalog.load_table("db.t").scan(row_filter="id >= 1").to_arrow()["id"].to_pylist())
assert got == [1, 3], got
print(f"wheel ok: Python {sys.version.split()[0]}, pyarrow {pa.__version__}, {frazil.__file__}")
