"""The key hierarchy of an encrypted table, as Java 1.11's ``StandardEncryptionManager`` builds it
(the table metadata JSON itself stays plaintext):

- the table's master key (``encryption.key-id``) lives in the catalog's KMS and wraps a random
  key-encryption key (KEK), stored in the metadata's ``encryption-keys`` (``encrypted-by-id`` =
  the master key id, ``properties`` = its creation time in ms); new snapshots use the first
  KEK (in metadata order) under the current master key that is younger than 730 days, and a new
  KEK is made when there is none. Older KEKs and the snapshot keys they wrap stay in the
  metadata, as Java keeps them (they still decrypt older snapshots' manifest lists);
- each snapshot's manifest list gets its own data key and AAD prefix; that key metadata,
  AES-GCM-encrypted with the KEK (AAD = the KEK's timestamp string), is another
  ``encryption-keys`` entry, whose id is the snapshot's ``key-id``;
- manifests' key metadata goes in manifest list entries (``key_metadata``, field 519), data
  and delete files' in ``data_file.key_metadata`` (field 131); those are plain
  :class:`StandardKeyMetadata` bytes inside encrypted files.
"""

from __future__ import annotations

import base64
import binascii
import os
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from frazil.encryption.kms import ENCRYPTION_DATA_KEY_LENGTH_DEFAULT, KeyManagementClient
from frazil.encryption.streams import StandardKeyMetadata, gcm_decrypt, gcm_encrypt
from frazil.exceptions import EncryptionError, InvalidArgumentError

__all__ = [
    "KEK_LIFESPAN_MS",
    "KEK_TIMESTAMP_PROPERTY",
    "EncryptionKeyEntry",
    "StandardEncryptionManager",
]

# Java 1.11's StandardEncryptionManager: the KEK entry's creation-time property and lifespan.
KEK_TIMESTAMP_PROPERTY = "KEY_TIMESTAMP"
KEK_LIFESPAN_MS = 730 * 24 * 3600 * 1000
AAD_PREFIX_LENGTH = 16


def wall_clock_ms() -> int:
    """The time KEKs are dated and aged by (milliseconds since the epoch)."""
    return int(time.time() * 1000)


class _KeyLike(Protocol):
    """An ``encryption-keys`` entry as :class:`frazil.metadata.EncryptedKey` holds it."""

    @property
    def key_id(self) -> str: ...
    @property
    def encrypted_key_metadata(self) -> str: ...
    @property
    def encrypted_by_id(self) -> str | None: ...
    @property
    def properties(self) -> Mapping[str, str]: ...


@dataclass(frozen=True)
class EncryptionKeyEntry:
    """A new ``encryption-keys`` entry (``to_json`` is the table metadata's shape)."""

    key_id: str
    encrypted_key_metadata: str = field(repr=False)
    encrypted_by_id: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "key-id": self.key_id,
            "encrypted-key-metadata": self.encrypted_key_metadata,
        }
        if self.encrypted_by_id is not None:
            out["encrypted-by-id"] = self.encrypted_by_id
        if self.properties:
            out["properties"] = dict(self.properties)
        return out


def _b64decode(entry: _KeyLike) -> bytes:
    try:
        return base64.b64decode(entry.encrypted_key_metadata, validate=True)
    except (binascii.Error, ValueError):
        raise EncryptionError(
            f"encryption key {entry.key_id!r}: encrypted-key-metadata is not base64"
        ) from None


class StandardEncryptionManager:
    """Keys of one table: ``kms`` (the catalog's), ``master_key_id`` (the table's
    ``encryption.key-id``), the metadata's ``encryption-keys`` entries. New entries it creates
    are returned to the caller to commit (``AddEncryptionKeyUpdate``). ``clock`` (ms since the
    epoch) dates new KEKs and ages old ones (:func:`wall_clock_ms` when not given, looked up at
    each use so a test can replace it for every table it opens)."""

    def __init__(
        self,
        kms: KeyManagementClient,
        master_key_id: str,
        encryption_keys: Iterable[_KeyLike] = (),
        *,
        data_key_length: int = ENCRYPTION_DATA_KEY_LENGTH_DEFAULT,
        clock: Callable[[], int] | None = None,
    ) -> None:
        if data_key_length not in (16, 24, 32):
            raise InvalidArgumentError(
                f"encryption.data-key-length must be 16, 24 or 32, not {data_key_length}"
            )
        self.kms = kms
        self.master_key_id = master_key_id
        self.data_key_length = data_key_length
        self.clock = clock
        self._entries: dict[str, _KeyLike] = {e.key_id: e for e in encryption_keys}
        self._keks: dict[str, bytes] = {}

    def __repr__(self) -> str:
        return f"StandardEncryptionManager(master key {self.master_key_id!r})"

    def add_entries(self, entries: Iterable[_KeyLike]) -> None:
        """Entries of another version of the table's metadata (an expired snapshot's key)."""
        for e in entries:
            self._entries.setdefault(e.key_id, e)

    def entry(self, key_id: str) -> _KeyLike | None:
        """The ``encryption-keys`` entry ``key_id`` (the metadata's, or one made here)."""
        return self._entries.get(key_id)

    # ---- keys of files

    def new_key_metadata(self) -> StandardKeyMetadata:
        """A fresh data key and AAD prefix for one file."""
        return StandardKeyMetadata(os.urandom(self.data_key_length), os.urandom(AAD_PREFIX_LENGTH))

    # ---- KEKs

    def _kek_entries(self) -> list[_KeyLike]:
        return [e for e in self._entries.values() if e.encrypted_by_id == self.master_key_id]

    def _kek(self, entry: _KeyLike) -> bytes:
        kek = self._keks.get(entry.key_id)
        if kek is None:
            kek = self.kms.unwrap_key(_b64decode(entry), self.master_key_id)
            self._keks[entry.key_id] = kek
        return kek

    def current_kek(self, now_ms: int | None = None) -> tuple[str, EncryptionKeyEntry | None]:
        """The id of the KEK new snapshots use, and the entry to commit when it is new. As Java
        1.11's ``StandardEncryptionManager.keyEncryptionKeyID``: the first KEK in metadata order
        wrapped by the current master key and younger than 730 days; else a new one."""
        if now_ms is None:
            now = self.clock() if self.clock is not None else wall_clock_ms()
        else:
            now = now_ms
        for e in self._kek_entries():
            try:
                created = int(e.properties.get(KEK_TIMESTAMP_PROPERTY, ""))
            except ValueError:
                continue  # undated: never chosen for new keys (Java could not age it either)
            if now - created < KEK_LIFESPAN_MS:
                return e.key_id, None
        kek = os.urandom(self.data_key_length)
        entry = EncryptionKeyEntry(
            key_id=str(uuid.uuid4()),
            encrypted_key_metadata=base64.b64encode(
                self.kms.wrap_key(kek, self.master_key_id)
            ).decode(),
            encrypted_by_id=self.master_key_id,
            properties={KEK_TIMESTAMP_PROPERTY: str(now)},
        )
        self._entries[entry.key_id] = entry
        self._keks[entry.key_id] = kek
        return entry.key_id, entry

    # ---- snapshot (manifest list) keys

    def wrap_snapshot_key(
        self, key_metadata: StandardKeyMetadata, now_ms: int | None = None
    ) -> tuple[str, list[EncryptionKeyEntry]]:
        """The snapshot's ``key-id`` for a manifest list's key metadata, and the entries to
        commit (the snapshot key's, after a new KEK's if one was made)."""
        kek_id, new_kek = self.current_kek(now_ms)
        kek_entry = self._entries[kek_id]
        aad = kek_entry.properties[KEK_TIMESTAMP_PROPERTY].encode()
        sealed = gcm_encrypt(self._kek(kek_entry), key_metadata.to_bytes(), aad)
        entry = EncryptionKeyEntry(
            key_id=str(uuid.uuid4()),
            encrypted_key_metadata=base64.b64encode(sealed).decode(),
            encrypted_by_id=kek_id,
        )
        self._entries[entry.key_id] = entry
        return entry.key_id, [*([new_kek] if new_kek else []), entry]

    def snapshot_key_metadata(self, key_id: str) -> StandardKeyMetadata:
        """The manifest list key metadata of the snapshot whose ``key-id`` is ``key_id``."""
        entry = self._entries.get(key_id)
        if entry is None:
            raise EncryptionError(f"snapshot key {key_id!r} is not in the table's encryption-keys")
        kek_entry = self._entries.get(entry.encrypted_by_id or "")
        if kek_entry is None or kek_entry.encrypted_by_id is None:
            raise EncryptionError(
                f"snapshot key {key_id!r}: its key-encryption key "
                f"{entry.encrypted_by_id!r} is not in the table's encryption-keys"
            )
        if kek_entry.encrypted_by_id != self.master_key_id:
            # An older master key (after a change of encryption.key-id) still unwraps its KEKs.
            kek = self.kms.unwrap_key(_b64decode(kek_entry), kek_entry.encrypted_by_id)
        else:
            kek = self._kek(kek_entry)
        timestamp = kek_entry.properties.get(KEK_TIMESTAMP_PROPERTY)
        if timestamp is None:
            raise EncryptionError(
                f"key-encryption key {kek_entry.key_id!r} has no {KEK_TIMESTAMP_PROPERTY} property"
            )
        plain = gcm_decrypt(
            kek, _b64decode(entry), timestamp.encode(), what=f"snapshot key {key_id!r}"
        )
        return StandardKeyMetadata.from_bytes(plain)
