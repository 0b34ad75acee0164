"""A writer process for the REST concurrency test: appends ``count`` one-row snapshots to one table
through a REST catalog, with frazil's client or PyIceberg's ``RestCatalog``.

    python rest_writers.py {frazil|pyiceberg} <uri> <credential or ""> <ns> <table> <writer> <count>

Each row is ``(writer, seq, "<client>-<writer>-<seq>")``; ``COMMITTED <seq>`` is printed once the
append returned. Both clients retry a lost commit themselves (the table's ``commit.retry.*``).
"""

from __future__ import annotations

import sys

import pyarrow as pa

SCHEMA = pa.schema(
    [
        pa.field("writer", pa.int32(), nullable=True),
        pa.field("seq", pa.int32(), nullable=True),
        pa.field("payload", pa.large_string(), nullable=True),
    ]
)


def _rows(client: str, writer: int, seq: int) -> pa.Table:
    return pa.table(
        {
            "writer": pa.array([writer], pa.int32()),
            "seq": pa.array([seq], pa.int32()),
            "payload": pa.array([f"{client}-{writer}-{seq}"], pa.large_string()),
        },
        schema=SCHEMA,
    )


def main(argv: list[str]) -> int:
    client, uri, credential, namespace, name, writer_s, count_s = argv
    writer, count = int(writer_s), int(count_s)
    props = {"uri": uri}
    if credential:
        props["credential"] = credential
    if client == "frazil":
        from frazil.catalog import load_catalog

        catalog = load_catalog("rest", type="rest", **props)
    elif client == "pyiceberg":
        from pyiceberg.catalog.rest import RestCatalog

        props["oauth2-server-uri"] = f"{uri}/v1/oauth/tokens"
        catalog = RestCatalog("rest", **props)  # type: ignore[assignment]
    else:
        raise SystemExit(f"unknown client {client!r}")
    ident = f"{namespace}.{name}"
    for seq in range(count):
        table = catalog.load_table(ident)
        data = _rows(client, writer, seq)
        if client == "pyiceberg":
            # PyIceberg wants the table's own Arrow types (string, not large_string).
            data = data.cast(
                pa.schema([f.with_type(pa.string()) if f.name == "payload" else f for f in SCHEMA])
            )
        table.append(data)
        print(f"COMMITTED {seq}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
