"""A writer process for the stress suite (tests/table/test_stress.py), through a catalog
configured by JSON on the command line:

    python stress_worker.py append '<catalog JSON>' <table> <worker id> <appends>
    python stress_worker.py mutate '<catalog JSON>' <table> <rounds>
    python stress_worker.py crash  '<catalog JSON>' <table> <commits>

``append``: ``appends`` commits of two rows each, ids ``a`` and ``a + 500000`` with
``a = worker * 1000 + i`` (the wide range makes every file's bounds overlap the mutator's ids, so
serializable deletes meet conflicting files and must re-plan). Each snapshot is tagged
``stress.writer``. ``mutate``: per round ``k`` it appends ids ``200000 + 2k`` and ``+1``, deletes
the first, overwrites the second with ``v = k``, and every fourth round adds a column. ``crash``:
commits until the table has ``commits`` metadata versions, cycling through append, delete,
overwrite and schema change, to be killed with SIGKILL at any point. Every mode prints one JSON
line: commits done and retries seen (from the transaction's log).
"""

from __future__ import annotations

import json
import logging
import sys
import time

import pyarrow as pa

from frazil.catalog import load_catalog
from frazil.types import LongType

OFFSET = 500_000
MUTATOR_BASE = 200_000


class RetryCounter(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.retries = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "failed" in record.getMessage() and "retry" in record.getMessage():
            self.retries += 1


def batch(ids: list[int], v: int = 0) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array([v] * len(ids), pa.int64())})


def append(table: object, worker: int, appends: int) -> int:
    for i in range(appends):
        a = worker * 1000 + i
        table.append(  # type: ignore[attr-defined]
            batch([a, a + OFFSET]), snapshot_properties={"stress.writer": f"w{worker}-{i}"}
        )
    return appends


def mutate(table: object, rounds: int) -> int:
    t: object = table
    commits = 0
    for k in range(rounds):
        first = MUTATOR_BASE + 2 * k
        t.append(batch([first, first + 1]))  # type: ignore[attr-defined]
        t.delete(f"id = {first}")  # type: ignore[attr-defined]
        t.overwrite(batch([first + 1], v=k), overwrite_filter=f"id = {first + 1}")  # type: ignore[attr-defined]
        commits += 3
        if k % 4 == 3:
            with t.update_schema() as update:  # type: ignore[attr-defined]
                update.add_column(f"c{k}", LongType())
            commits += 1
    return commits


def crash(catalog: object, identifier: str, commits: int) -> int:
    done = 0
    while True:
        t = catalog.load_table(identifier)  # type: ignore[attr-defined]
        n = len(t.metadata.metadata_log) + 1  # metadata versions so far
        if n >= commits:
            return done
        print(f"commit {n}", flush=True)  # the parent kills during one of the next few
        op = n % 4
        if op in (0, 1):
            t.append(batch([n * 10, n * 10 + 1, n * 10 + 2]))
        elif op == 2:
            t.delete(f"id = {(n - 1) * 10}")
        else:
            if n % 8 == 3:
                with t.update_schema() as update:
                    update.add_column(f"c{n}", LongType())
            else:
                t.overwrite(batch([n * 10 + 5], v=n), overwrite_filter=f"id = {(n - 2) * 10 + 1}")
        done += 1


def main() -> None:
    mode, props, identifier = sys.argv[1:4]
    counter = RetryCounter()
    log = logging.getLogger("frazil.table.transaction")
    log.setLevel(logging.INFO)
    log.addHandler(counter)
    catalog = load_catalog("stress", **json.loads(props))
    started = time.monotonic()
    if mode == "append":
        done = append(catalog.load_table(identifier), int(sys.argv[4]), int(sys.argv[5]))
    elif mode == "mutate":
        done = mutate(catalog.load_table(identifier), int(sys.argv[4]))
    elif mode == "crash":
        print("ready", flush=True)  # imports done: the parent kills at a random point now
        done = crash(catalog, identifier, int(sys.argv[4]))
    else:
        raise SystemExit(f"unknown mode {mode}")
    elapsed = time.monotonic() - started
    print(json.dumps({"mode": mode, "commits": done, "retries": counter.retries, "s": elapsed}))


if __name__ == "__main__":
    main()
