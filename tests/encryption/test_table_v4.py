"""Encryption on a format v4 table, whose metadata, manifest lists and manifests store paths
relative to the table location: each encrypted file's key must be found by its resolved location
(a manifest list from its snapshot's ``key-id``, a manifest from its list entry, a data file or
deletion vector from its manifest entry).

No peer writes v4 (see tests/table/test_format_v4.py), so the oracle is the one of test_table.py
(pyca/cryptography, fastavro, pyarrow) with relative paths resolved against the table location
here; it also checks that the stored paths are relative."""

from __future__ import annotations

import base64
import io as _io
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import fastavro
import pyarrow.parquet as pq
import pyarrow.parquet.encryption as pe
from test_table import (
    KMS,
    MARKER,
    MASTER,
    SCHEMA,
    catalog,
    no_plaintext,
    oracle_key_metadata,
    oracle_stream,
    oracle_unwrap,
    rows,
    scanned,
)

from frazil.expressions import EqualTo
from frazil.table import Table

V4 = {"format-version": "4", "encryption.key-id": "master-1", "write.delete.mode": "merge-on-read"}


def local(t: Table, path: str) -> Path:
    """A stored path as a local file: relative ones resolve against the table location."""
    assert "://" not in path and not path.startswith("/"), f"not relative: {path}"
    base = urlparse(t.metadata.location)
    return Path(base.path if base.scheme else t.metadata.location) / path


def oracle_read_v4(t: Table) -> tuple[list[dict[str, Any]], int]:
    """The current snapshot's rows (DV-deleted rows included) and the number of DVs, read by the
    oracle from relative paths only."""
    md = t.metadata
    snap = md.current_snapshot()
    assert snap is not None and snap.key_id is not None and snap.manifest_list is not None
    entries = {k.key_id: k for k in md.encryption_keys}
    kek_entry = entries[entries[snap.key_id].encrypted_by_id or ""]
    kek = oracle_unwrap(MASTER, base64.b64decode(kek_entry.encrypted_key_metadata))
    sealed = base64.b64decode(entries[snap.key_id].encrypted_key_metadata)
    timestamp = kek_entry.properties["KEY_TIMESTAMP"].encode()
    key, aad, _ = oracle_key_metadata(oracle_unwrap(kek, sealed, timestamp))
    stored = local(t, snap.manifest_list).read_bytes()
    out: list[dict[str, Any]] = []
    dvs = 0
    for m in fastavro.reader(_io.BytesIO(oracle_stream(key, aad or b"", stored))):
        mkey, maad, _ = oracle_key_metadata(m["key_metadata"])
        mstored = local(t, m["manifest_path"]).read_bytes()
        for e in fastavro.reader(_io.BytesIO(oracle_stream(mkey, maad or b"", mstored))):
            if e["status"] == 2:
                continue
            f = e["data_file"]
            path = local(t, f["file_path"])
            dkey, daad, flength = oracle_key_metadata(f["key_metadata"])
            if f["content"] == 1:  # a deletion vector: an AGS1 Puffin stream
                assert f["file_format"] == "PUFFIN"
                local(t, f["referenced_data_file"])  # relative too
                stored_dv = path.read_bytes()
                assert flength == len(stored_dv)
                assert oracle_stream(dkey, daad or b"", stored_dv)[:4] == b"PFA1"
                dvs += 1
                continue
            props = pe.create_decryption_properties(dkey, aad_prefix=daad)
            out += pq.read_table(path, decryption_properties=props).select(["id", "v"]).to_pylist()
    return sorted(out, key=lambda r: r["id"]), dvs


def test_a_v4_table_with_relative_paths(tmp_path: Path) -> None:
    cat = catalog(tmp_path, **KMS)
    t = cat.create_table("db.t", SCHEMA, properties=V4)
    for i in range(3):
        t.append(rows([10 * i + 1, 10 * i + 2], ["a", MARKER]))
    t = cat.load_table("db.t")
    snap = t.metadata.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    assert snap.manifest_list.startswith("metadata/snap-")  # relative in the metadata JSON
    expect = [{"id": 10 * i + j, "v": "a" if j == 1 else MARKER} for i in range(3) for j in (1, 2)]
    assert scanned(t) == oracle_read_v4(t)[0] == expect

    t.delete(EqualTo("id", 2))  # a deletion vector
    t = cat.load_table("db.t")
    remaining = [r for r in expect if r["id"] != 2]
    assert scanned(t) == remaining
    assert oracle_read_v4(t) == (expect, 1)  # the oracle applies no DVs: it only finds one
    files = t.inspect.files()
    assert files.num_rows == 4  # three data files and the DV

    # Incremental and older-snapshot reads find keys by the resolved locations as well.
    first = t.snapshots()[0]
    assert t.scan(snapshot_id=first.snapshot_id).to_arrow().num_rows == 2
    appended = t.incremental_append_scan(from_snapshot_id=first.snapshot_id).to_arrow()
    assert sorted(appended.column("id").to_pylist()) == [11, 12, 21, 22]

    current = t.metadata.current_snapshot()
    assert current is not None
    t.expire_snapshots().expire_older_than(current.timestamp_ms + 1).commit()
    t = cat.load_table("db.t")
    assert [s.snapshot_id for s in t.snapshots()] == [current.snapshot_id]
    assert sum(p.name.startswith("snap-") for p in (tmp_path / "wh").rglob("*")) == 1
    assert scanned(t) == remaining
    t.append(rows([40], [MARKER]))
    assert [r["id"] for r in scanned(cat.load_table("db.t"))] == [1, 11, 12, 21, 22, 40]
    no_plaintext(tmp_path)
