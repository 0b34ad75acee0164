"""A writer process for the concurrency tests: ``python hive_writer.py KIND URI TABLE WORKER N``
appends N one-row commits (ids WORKER*1000 + i) through frazil's (``frazil``) or PyIceberg's
(``pyiceberg``) Hive catalog, then prints ``done WORKER``. With ``hold``, it appends once with
the lock held forever (the kill -9 test)."""

from __future__ import annotations

import sys
import time

import pyarrow as pa

SCHEMA = pa.schema([("id", pa.int64()), ("writer", pa.int32())])
#: the longest wait between two polls of a waiting lock, in seconds
POLL = "0.2"


def main() -> None:
    kind, uri, table_name, worker, n = sys.argv[1:6]
    w, count = int(worker), int(n)
    if kind == "pyiceberg":
        from pyiceberg.catalog.hive import HiveCatalog

        # PyIceberg polls a waiting lock up to a minute apart by default; a lock at the head of
        # the queue is granted only when its owner polls, so every writer would wait on it.
        catalog = HiveCatalog(
            "pyi", uri=uri, **{"lock-check-retries": "1000000", "lock-check-max-wait-time": POLL}
        )
        for i in range(count):
            for attempt in range(200):
                try:
                    catalog.load_table(table_name).append(
                        pa.table({"id": [w * 1000 + i], "writer": [w]}, schema=SCHEMA)
                    )
                    break
                except Exception as e:  # PyIceberg has no retry loop of its own
                    if "CommitFailed" not in type(e).__name__ and "Lock" not in str(e):
                        raise
                    time.sleep(0.05 * min(attempt + 1, 10))
            else:
                raise RuntimeError(f"writer {w}: commit {i} never landed")
    else:
        from frazil.catalog import load_catalog

        # The same bound on frazil's polls (default: up to 5 s apart, as Java's): eight
        # writers queue behind each other, and each poll's wait is idle time in the test.
        catalog = load_catalog("hms", uri=uri, **{"lock-check-max-wait-time": POLL})
        if kind == "hold":
            from frazil.catalog.hive import catalog as hive_catalog

            original = hive_catalog.HiveCatalog._locked_swap

            def hang(self, *args, **kwargs):  # type: ignore[no-untyped-def]
                from frazil.catalog.hive.lock import TableLock

                db, name = args[0], args[1]
                with TableLock(self._connector, self._locks, db, name):
                    print(f"holding {w}", flush=True)
                    time.sleep(3600)
                return original(self, *args, **kwargs)

            hive_catalog.HiveCatalog._locked_swap = hang  # type: ignore[method-assign]
        for i in range(count):
            catalog.load_table(table_name).append(
                pa.table({"id": [w * 1000 + i], "writer": [w]}, schema=SCHEMA)
            )
    print(f"done {w}", flush=True)


if __name__ == "__main__":
    main()
