"""KMS clients (in-memory; AWS KMS on moto) and the key hierarchy of Java 1.11's
StandardEncryptionManager, checked with an independent AES-GCM (pyca/cryptography)."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from frazil.encryption import (
    KEK_LIFESPAN_MS,
    KEK_TIMESTAMP_PROPERTY,
    AwsKms,
    EncryptingFileIO,
    InMemoryKms,
    StandardEncryptionManager,
    load_kms,
)
from frazil.exceptions import EncryptionError, InvalidArgumentError
from frazil.io import LocalFileIO
from frazil.metadata import EncryptedKey

MASTER = os.urandom(16)
PROPS = {
    "encryption.kms-impl": "frazil.encryption.InMemoryKms",
    "encryption.kms.key.m1": base64.b64encode(MASTER).decode(),
}


def test_in_memory_kms_wraps_with_aes_gcm_under_the_master_key() -> None:
    kms = load_kms(PROPS)
    assert isinstance(kms, InMemoryKms)
    wrapped = kms.wrap_key(b"k" * 16, "m1")
    assert AESGCM(MASTER).decrypt(wrapped[:12], wrapped[12:], None) == b"k" * 16
    assert kms.unwrap_key(wrapped, "m1") == b"k" * 16
    with pytest.raises(EncryptionError, match="no master key 'm2'"):
        kms.wrap_key(b"k" * 16, "m2")
    assert base64.b64encode(MASTER).decode() not in repr(kms)
    assert load_kms({}) is None
    with pytest.raises(InvalidArgumentError, match="16, 24 or 32"):
        InMemoryKms({"encryption.kms.key.x": base64.b64encode(b"short").decode()})
    with pytest.raises(InvalidArgumentError, match="cannot load"):
        load_kms({"encryption.kms-impl": "no.such.Kms"})


def test_aws_kms_on_moto() -> None:
    moto = pytest.importorskip("moto")
    with moto.mock_aws():
        import boto3

        key_id = boto3.client("kms", region_name="us-east-1").create_key()["KeyMetadata"]["KeyId"]
        kms = load_kms(
            {
                "encryption.kms-impl": "frazil.encryption.AwsKms",
                "encryption.kms.aws.region": "us-east-1",
            }
        )
        assert isinstance(kms, AwsKms)
        wrapped = kms.wrap_key(b"d" * 32, key_id)
        assert wrapped != b"d" * 32
        assert kms.unwrap_key(wrapped, key_id) == b"d" * 32
        with pytest.raises(EncryptionError, match="could not unwrap"):
            kms.unwrap_key(b"garbage", key_id)


def _entries(new: list) -> list[EncryptedKey]:  # type: ignore[type-arg]
    return [EncryptedKey.from_json(e.to_json(), "k") for e in new]


def test_key_hierarchy_layout_and_round_trip() -> None:
    kms = InMemoryKms(PROPS)
    mgr = StandardEncryptionManager(kms, "m1")
    list_key = mgr.new_key_metadata()
    assert len(list_key.encryption_key) == 16 and len(list_key.aad_prefix or b"") == 16
    snap_key_id, new = mgr.wrap_snapshot_key(list_key, now_ms=1_700_000_000_000)
    kek_entry, snap_entry = (e.to_json() for e in new)
    assert kek_entry["encrypted-by-id"] == "m1"
    assert kek_entry["properties"] == {KEK_TIMESTAMP_PROPERTY: "1700000000000"}
    assert (
        snap_entry["key-id"] == snap_key_id and snap_entry["encrypted-by-id"] == kek_entry["key-id"]
    )
    # Independently: unwrap the KEK with the master key, then the snapshot key metadata with the
    # KEK and the timestamp string as AAD.
    wrapped_kek = base64.b64decode(kek_entry["encrypted-key-metadata"])
    kek = AESGCM(MASTER).decrypt(wrapped_kek[:12], wrapped_kek[12:], None)
    sealed = base64.b64decode(snap_entry["encrypted-key-metadata"])
    plain = AESGCM(kek).decrypt(sealed[:12], sealed[12:], b"1700000000000")
    assert plain == list_key.to_bytes()
    # A fresh manager over the committed entries (as a reader would) finds the same key.
    reader = StandardEncryptionManager(InMemoryKms(PROPS), "m1", _entries(new))
    assert reader.snapshot_key_metadata(snap_key_id) == list_key
    with pytest.raises(EncryptionError, match="'nope' is not in"):
        reader.snapshot_key_metadata("nope")


def test_kek_reused_then_rotated_after_730_days() -> None:
    kms = InMemoryKms(PROPS)
    t0 = 1_700_000_000_000
    mgr = StandardEncryptionManager(kms, "m1")
    _, first = mgr.wrap_snapshot_key(mgr.new_key_metadata(), now_ms=t0)
    assert len(first) == 2
    _, second = mgr.wrap_snapshot_key(mgr.new_key_metadata(), now_ms=t0 + KEK_LIFESPAN_MS - 1)
    assert len(second) == 1 and second[0].encrypted_by_id == first[0].key_id
    k3, third = mgr.wrap_snapshot_key(mgr.new_key_metadata(), now_ms=t0 + KEK_LIFESPAN_MS)
    assert len(third) == 2 and third[0].key_id != first[0].key_id
    reader = StandardEncryptionManager(kms, "m1", _entries([*first, *second, *third]))
    assert reader.snapshot_key_metadata(k3).encryption_key


def test_wrong_master_key_is_an_error() -> None:
    mgr = StandardEncryptionManager(InMemoryKms(PROPS), "m1")
    key_id, new = mgr.wrap_snapshot_key(mgr.new_key_metadata())
    other = {"encryption.kms.key.m1": base64.b64encode(os.urandom(16)).decode()}
    reader = StandardEncryptionManager(InMemoryKms(other), "m1", _entries(new))
    with pytest.raises(EncryptionError, match="tag check failed"):
        reader.snapshot_key_metadata(key_id)


def test_encrypting_file_io_round_trip_and_truncation(tmp_path: Path) -> None:
    eio = EncryptingFileIO(LocalFileIO(), block_size=32)
    mgr = StandardEncryptionManager(InMemoryKms(PROPS), "m1", data_key_length=32)
    km = mgr.new_key_metadata()
    path = str(tmp_path / "snap-1.avro")
    written = eio.write(path, b"MARKER" * 20, km)
    assert written.file_length == (tmp_path / "snap-1.avro").stat().st_size
    assert b"MARKER" not in (tmp_path / "snap-1.avro").read_bytes()
    assert eio.read(path, written) == b"MARKER" * 20
    assert eio.read(path, written, offset=30, length=10) == (b"MARKER" * 20)[30:40]
    data = (tmp_path / "snap-1.avro").read_bytes()
    (tmp_path / "snap-1.avro").write_bytes(data[: 8 + 2 * 60])  # whole blocks cut off
    with pytest.raises(EncryptionError, match=r"snap-1.avro.*key metadata says"):
        eio.read(path, written)
