"""The safety guard: asking for encryption without a way to do it is an error, and an encrypted
table is never read as plaintext or garbage, nor written in plaintext.

- :func:`check_encryption_request`: a create or commit whose metadata sets ``encryption.key-id``
  is refused unless the catalog has a KMS (``encryption.kms-impl``) that holds that key.
- :func:`guard_table_io`: the FileIO of an encrypted table (``encryption.key-id``,
  ``encryption-keys`` or a snapshot ``key-id``) is wrapped so every data, manifest list and
  manifest access raises :class:`~frazil.exceptions.EncryptionError` naming the key ids and the
  reason (no KMS, a key the KMS lacks, or the path is not yet integrated: frazil's readers and
  writers do not decrypt or encrypt table files yet, see ``docs/encryption.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from frazil.encryption.file_io import EncryptedTableGuardFileIO
from frazil.encryption.kms import (
    ENCRYPTION_DATA_KEY_LENGTH,
    ENCRYPTION_DATA_KEY_LENGTH_DEFAULT,
    ENCRYPTION_KEY_ID,
    KMS_IMPL,
    KeyManagementClient,
    load_kms,
)
from frazil.encryption.manager import StandardEncryptionManager
from frazil.encryption.table_io import EncryptedTableFileIO, ListDecoder
from frazil.exceptions import EncryptionError, InvalidArgumentError

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.metadata import TableMetadata

__all__ = [
    "catalog_properties",
    "check_encryption_request",
    "check_key_id_unchanged",
    "guard_table_io",
    "is_encrypted",
    "master_key_ids",
    "table_file_io",
]


def catalog_properties(catalog: Any) -> Mapping[str, str]:
    """A catalog's properties, or none (a static table stands without a catalog)."""
    props = getattr(catalog, "properties", None) if catalog is not None else None
    return props if isinstance(props, Mapping) else {}


def is_encrypted(metadata: TableMetadata) -> bool:
    return bool(
        metadata.properties.get(ENCRYPTION_KEY_ID)
        or metadata.encryption_keys
        or any(s.key_id is not None for s in metadata.snapshots)
    )


def master_key_ids(metadata: TableMetadata) -> list[str]:
    """The KMS key ids the table needs: its ``encryption.key-id`` and every ``encrypted-by-id``
    that is not itself an ``encryption-keys`` entry."""
    entries = {k.key_id for k in metadata.encryption_keys}
    ids = {k.encrypted_by_id for k in metadata.encryption_keys if k.encrypted_by_id}
    wanted = metadata.properties.get(ENCRYPTION_KEY_ID)
    out = sorted(i for i in ids if i not in entries)
    if wanted and wanted not in out:
        out.insert(0, wanted)
    return out


def _kms_lacks(kms: KeyManagementClient, key_id: str) -> bool:
    has_key = getattr(kms, "has_key", None)
    return callable(has_key) and not has_key(key_id)


def check_encryption_request(
    catalog_props: Mapping[str, str], metadata: TableMetadata, table: str
) -> None:
    """Refuses metadata that asks for encryption (``encryption.key-id``) when the catalog
    cannot provide it."""
    key_id = metadata.properties.get(ENCRYPTION_KEY_ID)
    if not key_id:
        return
    if metadata.format_version < 3:
        raise EncryptionError(
            f"table {table}: {ENCRYPTION_KEY_ID} needs format version 3 (encryption keys are a "
            f"v3 feature); this table is v{metadata.format_version}"
        )
    kms = load_kms(catalog_props)
    if kms is None:
        raise EncryptionError(
            f"table {table} asks for encryption with master key {key_id!r} "
            f"({ENCRYPTION_KEY_ID}), but the catalog has no KMS: set the catalog property "
            f"{KMS_IMPL} (e.g. frazil.encryption.InMemoryKms or frazil.encryption.AwsKms)"
        )
    if _kms_lacks(kms, key_id):
        raise EncryptionError(
            f"table {table} asks for encryption with master key {key_id!r}, which the "
            "catalog's KMS does not hold"
        )


def check_key_id_unchanged(base: TableMetadata | None, new: TableMetadata, table: str) -> None:
    """Refuses a commit that changes or removes an encrypted table's ``encryption.key-id``, as
    Java 1.11's ``HiveTableOperations`` does ("Cannot modify key ID of an encrypted table"): the
    master key is chosen once, and new KEKs come from age (730 days), not from a new master key.
    Java refuses setting a key id on an existing plaintext table too; frazil allows that (its
    older files stay readable without keys, vouched for by the encrypted manifests)."""
    if base is None:
        return
    old = base.properties.get(ENCRYPTION_KEY_ID)
    if not old or new.properties.get(ENCRYPTION_KEY_ID) == old:
        return
    wanted = new.properties.get(ENCRYPTION_KEY_ID)
    change = f"change it to {wanted!r}" if wanted else "remove it"
    raise EncryptionError(
        f"table {table} is encrypted with master key {old!r} ({ENCRYPTION_KEY_ID}); a commit "
        f"cannot {change} (Java refuses it too: the master key of a table is fixed)"
    )


def _refusal(
    catalog_props: Mapping[str, str], metadata: TableMetadata, table: str
) -> str | KeyManagementClient:
    """Why the table's files cannot be read or written, or the usable KMS."""
    keys = master_key_ids(metadata)
    named = ", ".join(repr(k) for k in keys) or "(none named)"
    entries = {k.key_id for k in metadata.encryption_keys}
    dangling = sorted({s.key_id for s in metadata.snapshots if s.key_id} - entries)
    if dangling:
        return (
            f"table {table} is encrypted, and snapshot key id(s) "
            f"{', '.join(repr(k) for k in dangling)} are not in its encryption-keys"
        )
    try:
        kms = load_kms(catalog_props)
    except Exception as e:
        return f"table {table} is encrypted (master key {named}); the catalog's KMS fails: {e}"
    if kms is None:
        return (
            f"table {table} is encrypted with master key {named}, and the catalog has no KMS "
            f"({KMS_IMPL}) to unwrap it"
        )
    missing = [k for k in keys if _kms_lacks(kms, k)]
    if missing:
        return (
            f"table {table} is encrypted with master key "
            f"{', '.join(repr(k) for k in missing)}, which the catalog's KMS does not hold"
        )
    if not metadata.properties.get(ENCRYPTION_KEY_ID):
        return (
            f"table {table} has encryption keys (master key {named}) but no "
            f"{ENCRYPTION_KEY_ID} property to encrypt new files with"
        )
    return kms


def _reason(catalog_props: Mapping[str, str], metadata: TableMetadata, table: str) -> str:
    out = _refusal(catalog_props, metadata, table)
    if isinstance(out, str):
        return out
    named = ", ".join(repr(k) for k in master_key_ids(metadata)) or "(none named)"
    return (
        f"table {table} is encrypted (master key {named}); this path does not decrypt or "
        "encrypt table files yet (docs/encryption.md)"
    )


def table_file_io(
    io: FileIO,
    metadata: TableMetadata,
    catalog_props: Mapping[str, str],
    table: str,
    decode_list: ListDecoder,
) -> FileIO:
    """``io`` itself for a plaintext table; for an encrypted one whose master key the catalog's
    KMS holds, an :class:`EncryptedTableFileIO` (``decode_list`` reads a decrypted manifest
    list's manifests and their keys); otherwise the guard refusing every file but the metadata
    JSON with the reason."""
    if isinstance(io, (EncryptedTableGuardFileIO, EncryptedTableFileIO)) or not is_encrypted(
        metadata
    ):
        return io
    out = _refusal(catalog_props, metadata, table)
    if isinstance(out, str):
        return EncryptedTableGuardFileIO(io, out)
    length = metadata.properties.get(ENCRYPTION_DATA_KEY_LENGTH)
    try:
        key_length = int(length) if length else ENCRYPTION_DATA_KEY_LENGTH_DEFAULT
    except ValueError:
        raise InvalidArgumentError(
            f"table {table}: {ENCRYPTION_DATA_KEY_LENGTH}={length!r} is not an integer"
        ) from None
    manager = StandardEncryptionManager(
        out,
        metadata.properties[ENCRYPTION_KEY_ID],
        metadata.encryption_keys,
        data_key_length=key_length,
    )
    list_keys = {
        metadata.resolve(s.manifest_list): s.key_id
        for s in metadata.snapshots
        if s.key_id is not None and s.manifest_list is not None
    }
    return EncryptedTableFileIO(io, manager, list_keys, decode_list, table)


def guard_table_io(
    io: FileIO, metadata: TableMetadata, catalog_props: Mapping[str, str], table: str
) -> FileIO:
    """``io`` itself for a plaintext table; for an encrypted one, a FileIO that refuses every
    file but the metadata JSON with the reason (see the module docstring)."""
    if isinstance(io, EncryptedTableGuardFileIO) or not is_encrypted(metadata):
        return io
    return EncryptedTableGuardFileIO(io, _reason(catalog_props, metadata, table))
