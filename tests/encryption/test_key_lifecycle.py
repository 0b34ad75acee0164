"""The lifecycle of an encrypted table's ``encryption-keys``, as Java 1.11 runs it (read from its
sources: ``StandardEncryptionManager``, ``TableMetadata.Builder``, ``RemoveSnapshots`` and
``HiveTableOperations``; no 1.11 jar is on PyPI to run):

- snapshot expiry leaves ``encryption-keys`` alone: Java's ``RemoveSnapshots`` and
  ``TableMetadata.Builder.removeSnapshots`` never remove a key, and ``HiveTableOperations``
  adds every key its encryption manager knows to each commit;
- new snapshot keys are wrapped by the first KEK (in metadata order) under the table's master key
  that is younger than 730 days; a new KEK is made when none is; older KEKs stay and still
  decrypt older snapshots;
- ``encryption.key-id`` of an encrypted table can be neither changed nor removed.

The KEKs and snapshot keys are unwrapped here with pyca/cryptography, independently of frazil.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from test_table import (
    ENCRYPTED,
    KMS,
    MARKER,
    MASTER,
    SCHEMA,
    catalog,
    no_plaintext,
    oracle_key_metadata,
    oracle_read,
    oracle_unwrap,
    rows,
    scanned,
)

from frazil.encryption import InMemoryKms, StandardEncryptionManager
from frazil.encryption import manager as manager_module
from frazil.encryption.streams import StandardKeyMetadata
from frazil.exceptions import EncryptionError
from frazil.metadata import EncryptedKey
from frazil.table import Table

DAY_MS = 24 * 3600 * 1000


def keks(t: Table) -> list[EncryptedKey]:
    return [k for k in t.metadata.encryption_keys if k.encrypted_by_id == "master-1"]


def kek_of_snapshot(t: Table, snapshot_id: int) -> EncryptedKey:
    snap = t.metadata.snapshot_by_id(snapshot_id)
    assert snap is not None and snap.key_id is not None
    entries = {k.key_id: k for k in t.metadata.encryption_keys}
    return entries[entries[snap.key_id].encrypted_by_id or ""]


def test_expired_snapshots_keep_their_keys_as_java_does(tmp_path: Path) -> None:
    cat = catalog(tmp_path, **KMS)
    t = cat.create_table("db.t", SCHEMA, properties=ENCRYPTED)
    for i in range(3):
        t.append(rows([i], [MARKER]))
    t = cat.load_table("db.t")
    before = [(k.key_id, k.encrypted_by_id) for k in t.metadata.encryption_keys]
    snaps = t.snapshots()
    # One KEK, then one snapshot key per snapshot, each wrapped by the KEK.
    assert len(before) == 4 and len(keks(t)) == 1
    assert {s.key_id for s in snaps} == {k for k, by in before if by == keks(t)[0].key_id}

    current = t.metadata.current_snapshot()
    assert current is not None
    t.expire_snapshots().expire_older_than(current.timestamp_ms + 1).commit()
    t = cat.load_table("db.t")
    assert [s.snapshot_id for s in t.snapshots()] == [current.snapshot_id]
    # The expired snapshots' key entries (and the KEK) stay, in their order.
    assert [(k.key_id, k.encrypted_by_id) for k in t.metadata.encryption_keys] == before
    # Their manifest lists are gone: only the current one is left.
    assert sum(p.name.startswith("snap-") for p in (tmp_path / "wh").rglob("*")) == 1
    assert scanned(t) == oracle_read(t)[0] == [{"id": i, "v": MARKER} for i in range(3)]
    # Later commits keep them too.
    t.append(rows([9], [MARKER]))
    t = cat.load_table("db.t")
    assert [(k.key_id, k.encrypted_by_id) for k in t.metadata.encryption_keys][:4] == before
    no_plaintext(tmp_path)


def test_a_kek_older_than_730_days_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = 1_700_000_000_000
    now = [start]
    monkeypatch.setattr(manager_module, "wall_clock_ms", lambda: now[0])
    cat = catalog(tmp_path, **KMS)
    t = cat.create_table("db.t", SCHEMA, properties=ENCRYPTED)
    t.append(rows([1], [MARKER]))
    first = cat.load_table("db.t").metadata.current_snapshot()
    assert first is not None

    now[0] = start + 730 * DAY_MS - 1  # one ms short of the lifespan: the same KEK
    t = cat.load_table("db.t")
    t.append(rows([2], [MARKER]))
    t = cat.load_table("db.t")
    assert len(keks(t)) == 1
    old_kek = keks(t)[0]
    assert old_kek.properties == {"KEY_TIMESTAMP": str(start)}

    now[0] = start + 730 * DAY_MS  # the lifespan reached: a new KEK under the master key
    t.append(rows([3], [MARKER]))
    t = cat.load_table("db.t")
    third = t.metadata.current_snapshot()
    assert third is not None
    assert [k.key_id for k in keks(t)] == [old_kek.key_id, keks(t)[1].key_id]
    new_kek = keks(t)[1]
    assert new_kek.properties == {"KEY_TIMESTAMP": str(now[0])}
    assert kek_of_snapshot(t, first.snapshot_id).key_id == old_kek.key_id
    assert kek_of_snapshot(t, third.snapshot_id).key_id == new_kek.key_id

    # The oracle unwraps both KEKs with the master key; each snapshot key with its own KEK.
    for snap_id, kek in ((first.snapshot_id, old_kek), (third.snapshot_id, new_kek)):
        raw = oracle_unwrap(MASTER, base64.b64decode(kek.encrypted_key_metadata))
        snap = t.metadata.snapshot_by_id(snap_id)
        assert snap is not None
        entry = next(k for k in t.metadata.encryption_keys if k.key_id == snap.key_id)
        sealed = base64.b64decode(entry.encrypted_key_metadata)
        key, _, length = oracle_key_metadata(
            oracle_unwrap(raw, sealed, kek.properties["KEY_TIMESTAMP"].encode())
        )
        assert (
            len(key) == 16
            and length == Path(t.metadata.resolve(snap.manifest_list or "")).stat().st_size
        )
    assert scanned(t) == oracle_read(t)[0]
    # The old snapshots stay readable through the old KEK.
    old = t.scan(snapshot_id=first.snapshot_id).to_arrow().to_pylist()
    assert old == [{"id": 1, "v": MARKER}]

    now[0] += DAY_MS  # the new KEK is used from now on; no third one
    t.append(rows([4], [MARKER]))
    t = cat.load_table("db.t")
    assert len(keks(t)) == 2
    latest = t.metadata.current_snapshot()
    assert latest is not None
    assert kek_of_snapshot(t, latest.snapshot_id).key_id == new_kek.key_id
    assert [r["id"] for r in scanned(t)] == [1, 2, 3, 4]
    no_plaintext(tmp_path)


def _kek_entry(key_id: str, kek: bytes, created_ms: int) -> EncryptedKey:
    # Wrapped as InMemoryKms wraps: AES-GCM under the master key, nonce || ciphertext || tag.
    nonce = os.urandom(12)
    wrapped = nonce + AESGCM(MASTER).encrypt(nonce, kek, None)
    return EncryptedKey(
        key_id=key_id,
        encrypted_key_metadata=base64.b64encode(wrapped).decode(),
        encrypted_by_id="master-1",
        properties={"KEY_TIMESTAMP": str(created_ms)},
    )


def test_the_first_unexpired_kek_in_metadata_order_is_used() -> None:
    # Java's keyEncryptionKeyID walks the keys in order and takes the first one under the table
    # key younger than the lifespan (two can coexist after concurrent writers each made one).
    now = 1_800_000_000_000
    entries = [
        _kek_entry("expired", bytes(16), now - 731 * DAY_MS),
        _kek_entry("older", bytes(range(16)), now - 10 * DAY_MS),
        _kek_entry("newer", bytes(range(16, 32)), now - DAY_MS),
    ]
    kms = InMemoryKms({"encryption.kms.key.master-1": base64.b64encode(MASTER).decode()})
    m = StandardEncryptionManager(kms, "master-1", entries, clock=lambda: now)
    km = StandardKeyMetadata(bytes(16), bytes(16), 100)
    key_id, new = m.wrap_snapshot_key(km)
    assert [e.encrypted_by_id for e in new] == ["older"]  # no new KEK
    sealed = base64.b64decode(new[0].encrypted_key_metadata)
    aad = str(now - 10 * DAY_MS).encode()
    assert AESGCM(bytes(range(16))).decrypt(sealed[:12], sealed[12:], aad) == km.to_bytes()
    assert m.snapshot_key_metadata(key_id) == km


def test_changing_or_removing_the_master_key_is_refused(tmp_path: Path) -> None:
    other = base64.b64encode(bytes(16)).decode()
    cat = catalog(tmp_path, **KMS, **{"encryption.kms.key.master-2": other})
    t = cat.create_table("db.t", SCHEMA, properties=ENCRYPTED)
    t.append(rows([1], [MARKER]))
    location = cat.load_table("db.t").metadata_location
    with pytest.raises(EncryptionError, match=r"'master-1'.*cannot change it to 'master-2'"):
        with cat.load_table("db.t").transaction() as tx:
            tx.set_properties({"encryption.key-id": "master-2"})
    with pytest.raises(EncryptionError, match=r"'master-1'.*cannot remove it"):
        with cat.load_table("db.t").transaction() as tx:
            tx.remove_properties("encryption.key-id")
    t = cat.load_table("db.t")
    assert t.metadata_location == location
    assert t.properties["encryption.key-id"] == "master-1"
    assert scanned(t) == [{"id": 1, "v": MARKER}]
    no_plaintext(tmp_path)
