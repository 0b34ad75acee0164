"""Runs one catalog operation as a user without write access to the warehouse, for
tests/catalog/test_catalog_failures.py; prints one JSON line: the rows read, or the error.

    python readonly_worker.py '<catalog JSON>' <table> read|append

As root (which file permissions do not stop) it imports everything first and then drops to the
``nobody`` user; otherwise the test has made the files read-only.
"""

from __future__ import annotations

import json
import os
import pwd
import sys
import time

import pyarrow as pa
import pyarrow.dataset
import pyarrow.parquet
import sqlalchemy.dialects.sqlite.pysqlite  # noqa: F401

import frazil.catalog.config
import frazil.catalog.filesystem
import frazil.catalog.sql
import frazil.table.scan
import frazil.table.scan.read
import frazil.table.update.snapshot
import frazil.table.write.writer  # noqa: F401
from frazil.catalog import load_catalog


def main() -> None:
    props, identifier, op = sys.argv[1:4]
    if os.geteuid() == 0:
        user = pwd.getpwnam("nobody")
        os.setgid(user.pw_gid)
        os.setuid(user.pw_uid)
    started = time.monotonic()
    try:
        table = load_catalog("ro", **json.loads(props)).load_table(identifier)
        if op == "read":
            out = {"rows": table.scan().to_arrow().num_rows}
        else:
            table.append(pa.table({"id": pa.array([7], pa.int64())}))
            out = {"rows": -1}
    except Exception as e:
        out = {
            "error": type(e).__name__,
            "mro": [c.__name__ for c in type(e).__mro__],
            "message": str(e),
            "cause": type(e.__cause__).__name__,
        }
    out["s"] = time.monotonic() - started
    print(json.dumps(out))


if __name__ == "__main__":
    main()
