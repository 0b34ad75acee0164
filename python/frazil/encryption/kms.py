"""Key management: the KMS protocol frazil calls, the in-memory KMS for tests and local use,
and the catalog properties that choose one.

The KMS is chosen by the **catalog** (``encryption.kms-impl``), never by table metadata: a table
only names its master key (``encryption.key-id``), which the catalog's KMS must hold.
"""

from __future__ import annotations

import base64
import binascii
import importlib
from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from frazil.encryption.streams import gcm_decrypt, gcm_encrypt
from frazil.exceptions import EncryptionError, InvalidArgumentError

__all__ = [
    "ENCRYPTION_DATA_KEY_LENGTH",
    "ENCRYPTION_DATA_KEY_LENGTH_DEFAULT",
    "ENCRYPTION_KEY_ID",
    "KMS_IMPL",
    "KMS_KEY_PREFIX",
    "InMemoryKms",
    "KeyManagementClient",
    "load_kms",
]

# Catalog properties.
KMS_IMPL = "encryption.kms-impl"
KMS_KEY_PREFIX = "encryption.kms.key."
# Table properties (Java's TableProperties names).
ENCRYPTION_KEY_ID = "encryption.key-id"
ENCRYPTION_DATA_KEY_LENGTH = "encryption.data-key-length"
ENCRYPTION_DATA_KEY_LENGTH_DEFAULT = 16


@runtime_checkable
class KeyManagementClient(Protocol):
    """What frazil needs of a KMS (Java's ``KeyManagementClient``): wrap a key with the master
    key ``key_id``, and unwrap it again. Implementations are built as ``cls(properties)`` from
    the catalog's properties."""

    def wrap_key(self, key: bytes, key_id: str) -> bytes: ...

    def unwrap_key(self, wrapped: bytes, key_id: str) -> bytes: ...


class InMemoryKms:
    """Master keys held in the catalog's properties, ``encryption.kms.key.<key-id>`` = the key,
    base64 (16, 24 or 32 bytes). Wrapping is AES-GCM under the master key (nonce || ciphertext
    || tag, no AAD). For tests and local use: the keys are only as safe as the properties."""

    def __init__(self, properties: Mapping[str, str]) -> None:
        self._keys: dict[str, bytes] = {}
        for name, value in properties.items():
            if not name.startswith(KMS_KEY_PREFIX):
                continue
            key_id = name[len(KMS_KEY_PREFIX) :]
            try:
                key = base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raise InvalidArgumentError(
                    f"catalog property {name}: the master key is not valid base64"
                ) from None
            if len(key) not in (16, 24, 32):
                raise InvalidArgumentError(
                    f"catalog property {name}: a master key is 16, 24 or 32 bytes, not {len(key)}"
                )
            self._keys[key_id] = key

    def __repr__(self) -> str:
        return f"InMemoryKms(key ids={sorted(self._keys)})"

    def has_key(self, key_id: str) -> bool:
        return key_id in self._keys

    def _master(self, key_id: str) -> bytes:
        try:
            return self._keys[key_id]
        except KeyError:
            raise EncryptionError(
                f"the KMS has no master key {key_id!r} (catalog property {KMS_KEY_PREFIX}{key_id})"
            ) from None

    def wrap_key(self, key: bytes, key_id: str) -> bytes:
        return gcm_encrypt(self._master(key_id), key)

    def unwrap_key(self, wrapped: bytes, key_id: str) -> bytes:
        return gcm_decrypt(self._master(key_id), wrapped, what=f"key wrapped by {key_id!r}")


def load_kms(properties: Mapping[str, str]) -> KeyManagementClient | None:
    """The KMS the catalog's ``encryption.kms-impl`` names (a dotted class path, built as
    ``cls(properties)``), or ``None`` when the catalog has none."""
    impl = properties.get(KMS_IMPL)
    if not impl:
        return None
    module_name, _, class_name = impl.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError, ValueError) as e:
        raise InvalidArgumentError(f"catalog property {KMS_IMPL}: cannot load {impl!r}: {e}") from e
    kms = cls(properties)
    if not isinstance(kms, KeyManagementClient):
        raise InvalidArgumentError(
            f"catalog property {KMS_IMPL}: {impl} has no wrap_key/unwrap_key methods"
        )
    return kms
