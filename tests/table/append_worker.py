"""A writer process for the concurrency tests: appends N one-row Parquet files to a table, one
commit each, through a catalog configured by JSON on the command line.

    python append_worker.py '<catalog properties JSON>' <table> <worker id> <appends> <data dir>
"""

from __future__ import annotations

import json
import sys

import pyarrow as pa
import pyarrow.parquet as pq

from frazil.catalog import load_catalog


def main() -> None:
    props, identifier, worker, appends, data_dir = sys.argv[1:6]
    catalog = load_catalog("concurrency", **json.loads(props))
    table = catalog.load_table(identifier)
    for i in range(int(appends)):
        path = f"{data_dir}/w{worker}-{i:03d}.parquet"
        pq.write_table(pa.table({"id": pa.array([int(worker) * 1000 + i], pa.int64())}), path)
        # Every append commits alone and retries on conflicts; the duplicate check reads every
        # manifest of the table, which is not what this test is about.
        with table.transaction() as tx:
            tx.add_files([path], check_duplicate_files=False)
    print(json.dumps({"worker": worker, "done": int(appends)}))


if __name__ == "__main__":
    main()
