"""One writer process of the DynamoDB concurrency test: appends ``count`` one-row batches
``(writer, n)`` to a table through the DynamoDB catalog, then prints how many landed."""

from __future__ import annotations

import json
import sys

import pyarrow as pa

from frazil.catalog import load_catalog


def main() -> None:
    props, identifier, writer, count = (
        json.loads(sys.argv[1]),
        sys.argv[2],
        int(sys.argv[3]),
        int(sys.argv[4]),
    )
    catalog = load_catalog("writer", **props)
    for n in range(count):
        batch = pa.table({"writer": pa.array([writer], pa.int32()), "n": pa.array([n], pa.int32())})
        catalog.load_table(identifier).append(batch)
    print(json.dumps({"writer": writer, "landed": count}))


if __name__ == "__main__":
    main()
