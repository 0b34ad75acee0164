"""What a user does first with a freshly installed wheel: a table in a SQLite catalog, an append,
a row-level delete (numpy-backed paths), a filtered scan, then the ``frazil`` command the wheel
installs (list, describe, files, schema; serve without its extra). Run by dev/wheel-check.sh in
a clean venv with no Rust toolchain on PATH and only the wheel's declared dependencies."""

import importlib.util
import os
import pathlib
import subprocess
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

# The console script next to this interpreter, configured only through the environment.
frazil_cmd = str(pathlib.Path(sys.executable).parent / "frazil")
env = {
    **os.environ,
    "HOME": warehouse,  # no configuration files of the machine's
    "FRAZIL_HOME": warehouse,
    "PYICEBERG_HOME": warehouse,
    "COLUMNS": "200",  # rich does not wrap the paths
    "FRAZIL_CATALOG__SMOKE__TYPE": "sql",
    "FRAZIL_CATALOG__SMOKE__URI": f"sqlite:///{warehouse}/c.db",
    "FRAZIL_CATALOG__SMOKE__WAREHOUSE": warehouse,
}


def cli(*args: str, code: int = 0) -> str:
    p = subprocess.run([frazil_cmd, *args], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == code, (args, p.returncode, p.stdout, p.stderr)
    return p.stdout + p.stderr


assert cli("--catalog", "smoke", "list").split() == ["db"]
assert cli("--catalog", "smoke", "list", "db").split() == ["db.t"]
described = cli("--catalog", "smoke", "describe", "db.t")
assert "Table format version" in described and "1: id: optional long" in described, described
files = cli("--catalog", "smoke", "files", "db.t")
assert ".parquet" in files and "Manifest" in files, files
schema = cli("--catalog", "smoke", "schema", "db.t").split()
assert schema == ["id", "long", "s", "string"], schema
assert "examples:" in cli("--help")
if importlib.util.find_spec("uvicorn") is None:  # the wheel alone: no server extra
    served = cli("serve", "--warehouse", warehouse, "--no-auth", code=2)
    assert served == "frazil serve needs the server extra: pip install 'frazil[server]'\n", served
print(f"wheel ok: Python {sys.version.split()[0]}, pyarrow {pa.__version__}, {frazil.__file__}")
