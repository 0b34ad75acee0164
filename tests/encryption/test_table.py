"""Encrypted tables end to end: appends, overwrite, copy-on-write deletes and upserts write
AES-GCM manifest lists and manifests and Parquet-encrypted data files; scans decrypt them.

The layout is checked with an oracle independent of frazil's encryption code: pyca/cryptography's
AES-GCM unwraps the KEK and the snapshot key, decrypts the AGS1 streams; fastavro reads the
decrypted manifest list and manifests; pyarrow's Parquet decryption (the data key and AAD prefix
taken from the manifests) reads the data files."""

from __future__ import annotations

import base64
import io as _io
import os
import struct
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pyarrow.parquet.encryption as pe
import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from frazil.catalog import load_catalog
from frazil.catalog.base import Catalog
from frazil.exceptions import EncryptionError, FrazilError
from frazil.expressions import EqualTo
from frazil.table import Table

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.string())])
MASTER = os.urandom(16)
KMS = {
    "encryption.kms-impl": "frazil.encryption.InMemoryKms",
    "encryption.kms.key.master-1": base64.b64encode(MASTER).decode(),
}
ENCRYPTED = {"format-version": "3", "encryption.key-id": "master-1"}
MARKER = "MARKER-7c1d9e"


def catalog(tmp_path: Path, **props: str) -> Catalog:
    wh = tmp_path / "wh"
    wh.mkdir(exist_ok=True)
    cat = load_catalog(
        "c", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(wh), **props
    )
    cat.create_namespace_if_not_exists("db")
    return cat


def rows(ids: list[int], vs: list[str]) -> pa.Table:
    return pa.table({"id": ids, "v": vs}, schema=SCHEMA)


def scanned(t: Table) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = t.scan().to_arrow().sort_by("id").to_pylist()
    return out


def no_plaintext(tmp_path: Path, marker: str = MARKER) -> None:
    files = [p for p in (tmp_path / "wh").rglob("*") if p.is_file()]
    assert files
    for p in files:
        assert marker.encode() not in p.read_bytes(), p


# ---- the oracle


def _avro_long(data: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return (result >> 1) ^ -(result & 1), pos


def oracle_key_metadata(data: bytes) -> tuple[bytes, bytes | None, int | None]:
    """Java's StandardKeyMetadata: 0x01, then Avro bytes key, union aad, (1.11) union length."""
    assert data[0] == 1
    n, pos = _avro_long(data, 1)
    key = data[pos : pos + n]
    pos += n
    branch, pos = _avro_long(data, pos)
    aad = None
    if branch == 1:
        n, pos = _avro_long(data, pos)
        aad, pos = data[pos : pos + n], pos + n
    length = None
    if pos < len(data):
        branch, pos = _avro_long(data, pos)
        if branch == 1:
            length, pos = _avro_long(data, pos)
    assert pos == len(data)
    return key, aad, length


def oracle_unwrap(key: bytes, sealed: bytes, aad: bytes | None = None) -> bytes:
    return AESGCM(key).decrypt(sealed[:12], sealed[12:], aad)


def oracle_stream(key: bytes, aad: bytes, data: bytes) -> bytes:
    assert data[:4] == b"AGS1"
    block = struct.unpack("<i", data[4:8])[0]
    out, pos, i = [], 8, 0
    while pos < len(data):
        chunk = data[pos : pos + 12 + block + 16]
        out.append(oracle_unwrap(key, chunk, aad + struct.pack("<i", i)))
        pos += len(chunk)
        i += 1
    return b"".join(out)


def oracle_read(t: Table) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The current snapshot's rows, read with the oracle; and facts about the layout."""
    md = t.metadata
    snap = md.current_snapshot()
    assert snap is not None and snap.key_id is not None and snap.manifest_list is not None
    entries = {k.key_id: k for k in md.encryption_keys}
    snap_entry = entries[snap.key_id]
    kek_entry = entries[snap_entry.encrypted_by_id or ""]
    assert kek_entry.encrypted_by_id == "master-1"
    kek = oracle_unwrap(MASTER, base64.b64decode(kek_entry.encrypted_key_metadata))
    timestamp = kek_entry.properties["KEY_TIMESTAMP"].encode()
    list_km = oracle_unwrap(kek, base64.b64decode(snap_entry.encrypted_key_metadata), timestamp)
    key, aad, length = oracle_key_metadata(list_km)
    stored = Path(snap.manifest_list).read_bytes()
    assert length == len(stored)
    listed = list(fastavro.reader(_io.BytesIO(oracle_stream(key, aad or b"", stored))))
    out: list[dict[str, Any]] = []
    for m in listed:
        mkey, maad, mlength = oracle_key_metadata(m["key_metadata"])
        mstored = Path(m["manifest_path"]).read_bytes()
        assert mlength == len(mstored) == m["manifest_length"]
        for e in fastavro.reader(_io.BytesIO(oracle_stream(mkey, maad or b"", mstored))):
            if e["status"] == 2:
                continue
            f = e["data_file"]
            dkey, daad, _ = oracle_key_metadata(f["key_metadata"])
            data = Path(f["file_path"]).read_bytes()
            assert data[:4] == data[-4:] == b"PARE"  # encrypted footer
            assert len(data) == f["file_size_in_bytes"]
            props = pe.create_decryption_properties(dkey, aad_prefix=daad)
            table = pq.read_table(f["file_path"], decryption_properties=props)
            out += table.select(["id", "v"]).to_pylist()
    return sorted(out, key=lambda r: r["id"]), {"manifests": len(listed)}


# ---- round trips


def test_writes_and_reads_checked_by_an_independent_oracle(tmp_path: Path) -> None:
    cat = catalog(tmp_path, **KMS)
    t = cat.create_table("db.t", SCHEMA, properties=ENCRYPTED)
    t.append(rows([1, 2], [MARKER, "b"]))
    t.append(rows([3], ["c"]))
    t = cat.load_table("db.t")
    expect = [{"id": 1, "v": MARKER}, {"id": 2, "v": "b"}, {"id": 3, "v": "c"}]
    assert scanned(t) == expect
    assert oracle_read(t)[0] == expect

    t.overwrite(rows([4, 5], ["d", MARKER]))
    expect = [{"id": 4, "v": "d"}, {"id": 5, "v": MARKER}]
    assert scanned(cat.load_table("db.t")) == oracle_read(cat.load_table("db.t"))[0] == expect

    t = cat.load_table("db.t")
    t.delete(EqualTo("id", 4))  # copy-on-write: the file is rewritten
    expect = [{"id": 5, "v": MARKER}]
    assert scanned(cat.load_table("db.t")) == oracle_read(cat.load_table("db.t"))[0] == expect

    t = cat.load_table("db.t")
    t.upsert(rows([5, 6], ["e", MARKER]), join_cols=["id"])
    t = cat.load_table("db.t")
    expect = [{"id": 5, "v": "e"}, {"id": 6, "v": MARKER}]
    assert scanned(t) == oracle_read(t)[0] == expect
    assert t.scan(row_filter=EqualTo("id", 6)).to_arrow().to_pylist() == [expect[1]]

    # Every snapshot has its own key; one KEK (wrapped by the master key) serves them all.
    md = t.metadata
    keks = [k for k in md.encryption_keys if k.encrypted_by_id == "master-1"]
    assert len(keks) == 1
    key_ids = [s.key_id for s in md.snapshots]
    assert None not in key_ids and len(set(key_ids)) == len(md.snapshots)
    for s in md.snapshots:
        assert s.manifest_list is not None
        assert Path(s.manifest_list).read_bytes()[:4] == b"AGS1"
    no_plaintext(tmp_path)


def test_the_metadata_json_stays_plaintext_and_keyless(tmp_path: Path) -> None:
    cat = catalog(tmp_path, **KMS)
    t = cat.create_table("db.t", SCHEMA, properties=ENCRYPTED)
    t.append(rows([1], [MARKER]))
    loc = cat.load_table("db.t").metadata_location
    assert loc is not None
    text = Path(loc).read_bytes()
    assert text.startswith(b"{") and b'"encryption-keys"' in text
    assert base64.b64encode(MASTER) not in text


def test_a_data_key_length_of_32(tmp_path: Path) -> None:
    cat = catalog(tmp_path, **KMS)
    t = cat.create_table(
        "db.t", SCHEMA, properties={**ENCRYPTED, "encryption.data-key-length": "32"}
    )
    t.append(rows([1], ["a"]))
    t = cat.load_table("db.t")
    assert scanned(t) == oracle_read(t)[0] == [{"id": 1, "v": "a"}]
    f = next(iter(t.scan().plan_files())).file
    assert f.key_metadata is not None
    assert len(oracle_key_metadata(f.key_metadata)[0]) == 32


# ---- tampering and keys


def _table_with_rows(tmp_path: Path) -> tuple[Catalog, Table]:
    cat = catalog(tmp_path, **KMS)
    t = cat.create_table("db.t", SCHEMA, properties=ENCRYPTED)
    t.append(rows([1, 2, 3], ["a", "b", "c"]))
    return cat, cat.load_table("db.t")


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def test_a_flipped_byte_in_a_manifest_names_the_manifest(tmp_path: Path) -> None:
    _, t = _table_with_rows(tmp_path)
    manifest = next((tmp_path / "wh").rglob("*-m0.avro"))
    _flip(manifest, 40)
    with pytest.raises(EncryptionError, match=str(manifest.name)):
        t.scan().to_arrow()


def test_a_flipped_byte_in_the_manifest_list_names_it(tmp_path: Path) -> None:
    _, t = _table_with_rows(tmp_path)
    listed = next((tmp_path / "wh").rglob("snap-*.avro"))
    _flip(listed, len(listed.read_bytes()) - 3)  # in the last block's tag
    with pytest.raises(EncryptionError, match=str(listed.name)):
        t.scan().to_arrow()


def test_a_truncated_manifest_list_names_it(tmp_path: Path) -> None:
    _, t = _table_with_rows(tmp_path)
    listed = next((tmp_path / "wh").rglob("snap-*.avro"))
    listed.write_bytes(listed.read_bytes()[:-1])
    with pytest.raises(EncryptionError, match=str(listed.name)):
        t.scan().to_arrow()


def test_a_flipped_byte_in_a_data_file_names_it(tmp_path: Path) -> None:
    _, t = _table_with_rows(tmp_path)
    data = next((tmp_path / "wh").rglob("*.parquet"))
    _flip(data, 10)  # inside the first encrypted page
    with pytest.raises(FrazilError, match=str(data.name)):
        t.scan().to_arrow()


def test_a_swapped_manifest_is_refused(tmp_path: Path) -> None:
    # Another manifest of the table, under the same name: its key is not this entry's.
    cat, t = _table_with_rows(tmp_path)
    t.append(rows([4], ["d"]))
    first, second = sorted((tmp_path / "wh").rglob("*-m0.avro"), key=lambda p: p.stat().st_mtime)
    first.write_bytes(second.read_bytes())
    with pytest.raises(EncryptionError, match=str(first.name)):
        cat.load_table("db.t").scan().to_arrow()


def test_a_wrong_master_key_is_an_error_not_garbage(tmp_path: Path) -> None:
    _table_with_rows(tmp_path)
    other = {**KMS, "encryption.kms.key.master-1": base64.b64encode(os.urandom(16)).decode()}
    cat = catalog(tmp_path, **other)
    with pytest.raises(EncryptionError, match="master-1"):
        cat.load_table("db.t").scan().to_arrow()


def test_the_data_files_do_not_open_without_the_key(tmp_path: Path) -> None:
    _table_with_rows(tmp_path)
    data = next((tmp_path / "wh").rglob("*.parquet"))
    with pytest.raises(OSError):
        pq.read_table(data)


# ---- deletion vectors, maintenance, inspect, incremental scans


def test_deletion_vectors_are_aes_gcm_streams(tmp_path: Path) -> None:
    cat = catalog(tmp_path, **KMS)
    props = {**ENCRYPTED, "write.delete.mode": "merge-on-read"}
    t = cat.create_table("db.t", SCHEMA, properties=props)
    t.append(rows([1, 2, 3], ["a", MARKER, "c"]))
    cat.load_table("db.t").delete(EqualTo("id", 2))
    t = cat.load_table("db.t")
    assert scanned(t) == [{"id": 1, "v": "a"}, {"id": 3, "v": "c"}]
    (puffin,) = (tmp_path / "wh").rglob("*.puffin")
    stored = puffin.read_bytes()
    assert stored[:4] == b"AGS1"
    (dv,) = t.inspect.delete_files().to_pylist()
    key, aad, length = oracle_key_metadata(dv["key_metadata"])
    assert length == len(stored)
    plain = oracle_stream(key, aad or b"", stored)
    assert plain[:4] == b"PFA1" and plain[-4:] == b"PFA1"  # a Puffin file inside
    assert [r["pos"] for r in t.inspect.position_deletes().to_pylist()] == [1]
    # A second delete merges with the first DV (read back decrypted).
    t.delete(EqualTo("id", 3))
    assert scanned(cat.load_table("db.t")) == [{"id": 1, "v": "a"}]
    no_plaintext(tmp_path)


def test_a_flipped_byte_in_a_deletion_vector_names_it(tmp_path: Path) -> None:
    cat = catalog(tmp_path, **KMS)
    t = cat.create_table(
        "db.t", SCHEMA, properties={**ENCRYPTED, "write.delete.mode": "merge-on-read"}
    )
    t.append(rows([1, 2], ["a", "b"]))
    cat.load_table("db.t").delete(EqualTo("id", 2))
    (puffin,) = (tmp_path / "wh").rglob("*.puffin")
    _flip(puffin, 20)
    with pytest.raises(EncryptionError, match=puffin.name):
        cat.load_table("db.t").scan().to_arrow()


def test_maintenance_on_an_encrypted_table(tmp_path: Path) -> None:
    cat = catalog(tmp_path, **KMS)
    t = cat.create_table(
        "db.t", SCHEMA, properties={**ENCRYPTED, "write.delete.mode": "merge-on-read"}
    )
    for i in range(3):
        t.append(rows([10 * i + 1, 10 * i + 2], ["a", MARKER]))
    cat.load_table("db.t").delete(EqualTo("id", 2))
    expect = scanned(cat.load_table("db.t"))
    assert len(expect) == 5

    done = cat.load_table("db.t").rewrite_data_files()
    assert done.rewritten_data_files_count == 3 and done.added_data_files_count == 1
    assert scanned(cat.load_table("db.t")) == oracle_read(cat.load_table("db.t"))[0] == expect
    cat.load_table("db.t").rewrite_manifests()
    assert scanned(cat.load_table("db.t")) == oracle_read(cat.load_table("db.t"))[0] == expect

    t = cat.load_table("db.t")
    current = t.metadata.current_snapshot()
    assert current is not None
    t.expire_snapshots().expire_older_than(current.timestamp_ms + 1).commit()
    t = cat.load_table("db.t")
    assert [s.snapshot_id for s in t.snapshots()] == [current.snapshot_id]
    # The expired snapshots' manifest lists, manifests, data and delete files are gone.
    left = {p.name for p in (tmp_path / "wh").rglob("*") if p.is_file()}
    assert not any(n.endswith(".puffin") for n in left)
    assert sum(n.endswith(".parquet") for n in left) == 1
    assert sum(n.startswith("snap-") for n in left) == 1
    assert scanned(t) == expect

    junk = tmp_path / "wh" / "db" / "t" / "data" / "junk.parquet"
    junk.write_bytes(b"x")
    removed = t.remove_orphan_files(older_than=int(junk.stat().st_mtime * 1000) + 1000)
    assert removed == [str(junk)]
    assert scanned(cat.load_table("db.t")) == expect
    no_plaintext(tmp_path)


def test_inspect_and_incremental_scans(tmp_path: Path) -> None:
    cat = catalog(tmp_path, **KMS)
    t = cat.create_table("db.t", SCHEMA, properties=ENCRYPTED)
    for i in range(3):
        t.append(rows([i], [f"{MARKER}-{i}"]))
    t = cat.load_table("db.t")
    ids = [s.snapshot_id for s in t.snapshots()]
    files = t.inspect.files().to_pylist()
    assert len(files) == 3 and all(f["key_metadata"] for f in files)
    assert t.inspect.entries().num_rows == 3
    manifests = t.inspect.manifests().to_pylist()
    assert len(manifests) == 3
    assert t.inspect.all_manifests().num_rows == 1 + 2 + 3
    for m in manifests:
        assert m["length"] == Path(m["path"]).stat().st_size
    got = t.incremental_append_scan(ids[0], ids[2]).to_arrow().sort_by("id")
    assert got.column("id").to_pylist() == [1, 2]
    changes = t.changelog_scan(ids[0], ids[2]).to_arrow()
    assert sorted(changes.column("id").to_pylist()) == [1, 2]
    no_plaintext(tmp_path)


def test_no_key_material_in_reprs(tmp_path: Path) -> None:
    _cat, t = _table_with_rows(tmp_path)
    task = next(iter(t.scan().plan_files()))
    km = task.file.key_metadata
    assert km is not None
    key, _aad, _ = oracle_key_metadata(km)
    for shown in (repr(task), repr(task.file), repr(t.io), repr(t)):
        assert key.hex() not in shown and repr(key) not in shown and repr(km) not in shown
        assert base64.b64encode(MASTER).decode() not in shown
