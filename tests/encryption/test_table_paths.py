"""Encrypted tables on the paths beyond Parquet data: statistics (Puffin) files, Avro data files,
``add_files`` of plaintext Parquet files, and the paths still refused (partition statistics,
ORC, variant columns in Parquet).

The oracle is the one of ``test_table.py`` (pyca/cryptography's AES-GCM, fastavro, a Puffin
footer parsed by hand); every test also greps the whole warehouse for the marker value."""

from __future__ import annotations

import base64
import io as _io
import json
import os
import struct
from dataclasses import replace
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_table import (
    ENCRYPTED,
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

from frazil.encryption import StandardKeyMetadata
from frazil.encryption.table_io import StreamDecryption, data_key_metadata, encrypted_sink
from frazil.exceptions import EncryptionError, UnsupportedError, ValidationError
from frazil.expressions import EqualTo
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.table import Table
from frazil.transforms import IdentityTransform
from frazil.types import LongType, NestedField, StringType, VariantType
from frazil.values import variant


def oracle_key(t: Table, key_id: str) -> tuple[bytes, bytes, int | None]:
    """An ``encryption-keys`` entry's key metadata, unwrapped KEK first (master key, then the
    KEK's timestamp as AAD), as Java's ``EncryptionUtil.decryptKeyMetadata`` does."""
    entries = {k.key_id: k for k in t.metadata.encryption_keys}
    entry = entries[key_id]
    kek_entry = entries[entry.encrypted_by_id or ""]
    assert kek_entry.encrypted_by_id == "master-1"
    kek = oracle_unwrap(MASTER, base64.b64decode(kek_entry.encrypted_key_metadata))
    timestamp = kek_entry.properties["KEY_TIMESTAMP"].encode()
    plain = oracle_unwrap(kek, base64.b64decode(entry.encrypted_key_metadata), timestamp)
    key, aad, length = oracle_key_metadata(plain)
    return key, aad or b"", length


def oracle_data_files(t: Table) -> list[dict[str, Any]]:
    """The live data_file records of the current snapshot, decrypted by the oracle."""
    snap = t.metadata.current_snapshot()
    assert snap is not None and snap.key_id is not None and snap.manifest_list is not None
    key, aad, _ = oracle_key(t, snap.key_id)
    listed = fastavro.reader(
        _io.BytesIO(oracle_stream(key, aad, Path(snap.manifest_list).read_bytes()))
    )
    out = []
    for m in listed:
        mkey, maad, _ = oracle_key_metadata(m["key_metadata"])
        plain = oracle_stream(mkey, maad or b"", Path(m["manifest_path"]).read_bytes())
        out += [e["data_file"] for e in fastavro.reader(_io.BytesIO(plain)) if e["status"] != 2]
    return out


# ---- statistics (Puffin) files


def _puffin_footer(data: bytes) -> dict[str, Any]:
    # Puffin: magic, blobs, footer = magic + JSON payload + payload length + flags + magic.
    assert data[:4] == data[-4:] == b"PFA1"
    n = struct.unpack("<i", data[-12:-8])[0]
    assert data[-8:-4] == b"\0\0\0\0"  # footer not compressed
    footer: dict[str, Any] = json.loads(data[-12 - n : -12])
    return footer


def _stats_table(tmp_path: Path) -> Table:
    cat = catalog(tmp_path, **KMS)
    t = cat.create_table("db.t", SCHEMA, properties=ENCRYPTED)
    t.append(rows([1, 2, 3, 4], [MARKER, "b", "b", "c"]))
    return cat.load_table("db.t")


def test_statistics_files_are_aes_gcm_streams_keyed_by_a_key_id(tmp_path: Path) -> None:
    t = _stats_table(tmp_path)
    written = t.compute_statistics()
    t = t.refresh()
    assert t.read_ndv() == {1: 4, 2: 3}

    # The metadata JSON names the wrapped key (key-id, where Java's StatisticsFileParser of
    # apache/iceberg PR #17417 puts it) and holds no key metadata in the clear.
    raw = json.loads(Path(t.metadata_location).read_text())
    (stats,) = raw["statistics"]
    assert list(stats) == [
        "snapshot-id",
        "statistics-path",
        "file-size-in-bytes",
        "file-footer-size-in-bytes",
        "key-id",
        "blob-metadata",
    ]
    assert stats["key-id"] == written.key_id
    assert stats["key-id"] in {k["key-id"] for k in raw["encryption-keys"]}

    # The oracle: the stats key from its encryption-keys entry, the stream decrypted with it.
    stored = Path(stats["statistics-path"]).read_bytes()
    assert stored[:4] == b"AGS1"
    key, aad, length = oracle_key(t, stats["key-id"])
    assert length == len(stored) == stats["file-size-in-bytes"]
    plain = oracle_stream(key, aad, stored)
    footer = _puffin_footer(plain)
    # The footer size is the plaintext one: magic, payload, its length, flags, magic.
    assert stats["file-footer-size-in-bytes"] == 16 + struct.unpack("<i", plain[-12:-8])[0]
    assert {tuple(b["fields"]): b["properties"]["ndv"] for b in footer["blobs"]} == {
        (1,): "4",
        (2,): "3",
    }
    no_plaintext(tmp_path)


def test_a_flipped_byte_in_a_statistics_file_names_it(tmp_path: Path) -> None:
    t = _stats_table(tmp_path)
    f = t.compute_statistics()
    path = Path(f.statistics_path)
    data = bytearray(path.read_bytes())
    data[20] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(EncryptionError, match=path.name):
        t.refresh().read_ndv()


def test_a_plaintext_statistics_file_without_a_key_is_read(tmp_path: Path) -> None:
    # Java 1.10/1.11 write statistics files in plaintext on encrypted tables (through
    # EncryptingFileIO.newOutputFile) with no key field: such an entry is read as plaintext.
    t = _stats_table(tmp_path)
    f = t.compute_statistics()
    key, aad, _ = oracle_key(t, f.key_id or "")
    plain = oracle_stream(key, aad, Path(f.statistics_path).read_bytes())
    other = Path(f.statistics_path).with_name("java-written.stats")
    other.write_bytes(plain)
    t.transaction().set_statistics(
        replace(f, statistics_path=str(other), file_size_in_bytes=len(plain), key_id=None)
    ).commit_transaction()
    t = t.refresh()
    assert t.metadata.statistics[0].key_id is None
    assert t.read_ndv() == {1: 4, 2: 3}


def test_expiry_and_orphan_removal_handle_statistics_files(tmp_path: Path) -> None:
    t = _stats_table(tmp_path)
    old = t.compute_statistics()
    t.append(rows([5], ["d"]))
    t = t.refresh()
    new = t.compute_statistics()
    t = t.refresh()
    current = t.metadata.current_snapshot()
    assert current is not None
    t.expire_snapshots().expire_older_than(current.timestamp_ms + 1).commit()
    t = t.refresh()
    assert not Path(old.statistics_path).exists()
    assert Path(new.statistics_path).exists()
    assert t.remove_orphan_files(older_than=current.timestamp_ms + 10_000_000) == []
    assert t.read_ndv() == {1: 5, 2: 4}
    no_plaintext(tmp_path)


def test_partition_statistics_are_refused_with_the_reason(tmp_path: Path) -> None:
    cat = catalog(tmp_path, **KMS)
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "v", StringType(), required=False),
    )
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "v"))
    t = cat.create_table("db.p", schema, partition_spec=spec, properties=ENCRYPTED)
    t.append(rows([1, 2], [MARKER, "b"]))
    with pytest.raises(UnsupportedError, match="partition-statistics struct has no field"):
        cat.load_table("db.p").compute_partition_statistics()
    assert not list((tmp_path / "wh").rglob("partition-stats-*"))
    no_plaintext(tmp_path)


# ---- Avro data files


def _big_rows(n: int) -> pa.Table:
    # Incompressible values: the Avro file spans several 1 MiB stream blocks.
    vs = [os.urandom(24).hex() for _ in range(n)]
    vs[n // 2] = MARKER
    return rows(list(range(n)), vs)


def test_avro_data_files_are_aes_gcm_streams(tmp_path: Path) -> None:
    cat = catalog(tmp_path, **KMS)
    t = cat.create_table("db.t", SCHEMA, properties={**ENCRYPTED, "write.format.default": "avro"})
    data = _big_rows(60_000)
    t.append(data)
    t.append(rows([-1], ["x"]))
    t = cat.load_table("db.t")
    expect = sorted([*data.to_pylist(), {"id": -1, "v": "x"}], key=lambda r: r["id"])
    assert scanned(t) == expect

    oracle_rows = []
    files = oracle_data_files(t)
    assert len(files) == 2
    for f in files:
        assert f["file_format"] == "AVRO"
        stored = Path(f["file_path"]).read_bytes()
        key, aad, length = oracle_key_metadata(f["key_metadata"])
        # Java 1.11's DataWriter: the key metadata and file_size_in_bytes carry the stored length
        assert length == len(stored) == f["file_size_in_bytes"]
        plain = oracle_stream(key, aad or b"", stored)
        oracle_rows += list(fastavro.reader(_io.BytesIO(plain)))
    assert max(len(Path(f["file_path"]).read_bytes()) for f in files) > 1024 * 1024  # 2 blocks
    assert sorted(oracle_rows, key=lambda r: r["id"]) == expect

    # Copy-on-write delete rewrites the Avro file, encrypted again.
    cat.load_table("db.t").delete(EqualTo("id", 7))
    t = cat.load_table("db.t")
    assert scanned(t) == [r for r in expect if r["id"] != 7]
    assert all(f["key_metadata"] for f in oracle_data_files(t))
    no_plaintext(tmp_path)


def test_a_flipped_byte_in_an_avro_data_file_names_it(tmp_path: Path) -> None:
    cat = catalog(tmp_path, **KMS)
    t = cat.create_table("db.t", SCHEMA, properties={**ENCRYPTED, "write.format.default": "avro"})
    t.append(rows([1, 2], [MARKER, "b"]))
    (path,) = (tmp_path / "wh" / "db" / "t" / "data").rglob("*.avro")
    data = bytearray(path.read_bytes())
    data[30] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(EncryptionError, match=path.name):
        cat.load_table("db.t").scan().to_arrow()


def test_orc_data_files_are_refused(tmp_path: Path) -> None:
    # Java's ORC.write refuses encryption ("Native ORC encryption is not supported").
    cat = catalog(tmp_path, **KMS)
    t = cat.create_table("db.t", SCHEMA, properties={**ENCRYPTED, "write.format.default": "orc"})
    with pytest.raises(UnsupportedError, match="not ORC"):
        t.append(rows([1], [MARKER]))
    no_plaintext(tmp_path)


# ---- add_files


def test_add_files_adds_plaintext_parquet_files_as_java_does(tmp_path: Path) -> None:
    cat = catalog(tmp_path, **KMS)
    t = cat.create_table("db.t", SCHEMA, properties=ENCRYPTED)
    t.append(rows([1], ["a"]))
    outside = tmp_path / "import"
    outside.mkdir()
    src = outside / "f.parquet"
    pq.write_table(rows([2, 3], [MARKER, "c"]), src)
    cat.load_table("db.t").add_files([str(src)])
    t = cat.load_table("db.t")
    assert scanned(t) == [{"id": 1, "v": "a"}, {"id": 2, "v": MARKER}, {"id": 3, "v": "c"}]
    by_path = {f["file_path"]: f for f in oracle_data_files(t)}
    # The added file keeps no key (read as plaintext, as Java's EncryptingFileIO does for an
    # entry without key_metadata); the encrypted manifest holds its bounds (the marker).
    assert by_path[str(src)]["key_metadata"] is None
    assert by_path[str(src)]["record_count"] == 2
    assert all(f["key_metadata"] for p, f in by_path.items() if p != str(src))
    no_plaintext(tmp_path)


def test_add_files_refuses_an_encrypted_parquet_file(tmp_path: Path) -> None:
    cat = catalog(tmp_path, **KMS)
    t = cat.create_table("db.t", SCHEMA, properties=ENCRYPTED)
    t.append(rows([1], [MARKER]))
    (data,) = (tmp_path / "wh").rglob("*.parquet")
    with pytest.raises(ValidationError, match="not a readable Parquet file"):
        cat.load_table("db.t").add_files([str(data)], check_duplicate_files=False)


# ---- variant columns


def test_variant_columns_in_parquet_are_refused_with_the_reason(tmp_path: Path) -> None:
    cat = catalog(tmp_path, **KMS)
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "v", VariantType(), required=False),
    )
    t = cat.create_table("db.v", schema, properties=ENCRYPTED)
    with pytest.raises(UnsupportedError, match="encrypted footer cannot be patched"):
        t.append(pa.table({"id": [1], "v": variant.from_json([json.dumps(MARKER)])}))
    no_plaintext(tmp_path)


@pytest.mark.parametrize("size", [0, 1, 1024 * 1024, 1024 * 1024 + 1, 2 * 1024 * 1024 + 5])
def test_the_stream_sink_writes_the_stream_format(tmp_path: Path, size: int) -> None:
    # Block boundaries as Java's AesGcmOutputStream: one empty block for an empty file, no
    # empty block after a full one; the length the writer reads before closing is the final one.
    t = _stats_table(tmp_path)
    plain = os.urandom(size)
    buf = pa.BufferOutputStream()
    sink = encrypted_sink(t.io, "mem://f.avro", buf)
    for at in range(0, size, 300_001):
        sink.write(plain[at : at + 300_001])
    told = sink.tell()
    sink.close()
    stored = buf.getvalue().to_pybytes()
    assert told == len(stored) == 8 + max(1, -(-size // (1024 * 1024))) * 28 + size
    key, aad, length = oracle_key_metadata(data_key_metadata(t.io, "mem://f.avro") or b"")
    assert length == len(stored)
    assert oracle_stream(key, aad or b"", stored) == plain
    decryption = StreamDecryption("mem://f.avro", StandardKeyMetadata(key, aad, length))
    assert decryption.decrypt(stored) == plain
