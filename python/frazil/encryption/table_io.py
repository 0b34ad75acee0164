"""The FileIO of an encrypted table frazil can read and write (a catalog KMS that holds the
table's master key), and the hooks the table's readers and writers call where they open a
Parquet file or write a manifest.

Layout (Java 1.11's ``StandardEncryptionManager`` / ``EncryptingFileIO``):

- manifests and manifest lists are AES-GCM streams (``AGS1``) with a fresh data key and AAD
  prefix each; :meth:`EncryptedTableFileIO.write` encrypts them and remembers their key metadata
  (with the encrypted length) for the snapshot producer to put in the manifest list entry
  (``key_metadata``, field 519) or to wrap into the snapshot's ``key-id``
  (:func:`snapshot_key`);
- reads find a file's key metadata by its location: a manifest list's from its snapshot's
  ``key-id``, a manifest's from the manifest list entry that names it (registered when the list
  is decrypted), a file written through this IO from the write. A file with no known key is an
  :class:`EncryptionError`, never a plaintext read;
- Parquet data and delete files use Parquet modular encryption (uniform, encrypted footer), keyed
  by the file's data key with its AAD prefix not stored in the file, as Java's ``Parquet`` writer
  does; their key metadata goes in ``data_file.key_metadata`` (field 131).

:meth:`EncryptedTableFileIO.filesystem` refuses: a path that opens a file itself must go through
:func:`data_filesystem` and pass :func:`parquet_encryption` / :func:`parquet_decryption` to
pyarrow, so a writer not integrated yet fails instead of writing plaintext.
"""

from __future__ import annotations

import base64
import binascii
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, overload

from frazil.encryption.file_io import DelegatingFileIO, _is_table_metadata_file
from frazil.encryption.manager import EncryptionKeyEntry, StandardEncryptionManager
from frazil.encryption.streams import (
    PLAIN_BLOCK_SIZE,
    StandardKeyMetadata,
    decrypt_stream,
    encrypt_stream,
    gcm_encrypt,
)
from frazil.exceptions import EncryptionError, UnsupportedError
from frazil.io.base import FileIO

if TYPE_CHECKING:
    import pyarrow.fs

__all__ = [
    "EXECUTOR_DATA_KEY_LENGTH",
    "EXECUTOR_TABLE",
    "EncryptedTableFileIO",
    "ExecutorFileIO",
    "ListDecoder",
    "StreamDecryption",
    "data_filesystem",
    "data_key_metadata",
    "encrypted_sink",
    "executor_file_io",
    "executor_io_properties",
    "file_decryption",
    "new_key_entries",
    "parquet_decryption",
    "parquet_encryption",
    "read_encrypted_range",
    "read_statistics_file",
    "refuse_partition_statistics",
    "remember_snapshots",
    "seal_file",
    "snapshot_key",
    "write_statistics_file",
    "written_key_metadata",
]

#: Decodes a decrypted manifest list (bytes, its location) to (manifest location, key metadata)
#: pairs; given by the table layer (the IO knows no manifest format).
ListDecoder = Callable[[bytes, str], Iterable[tuple[str, bytes | None]]]


def _is_manifest_list(location: str) -> bool:
    # frazil's and Java's manifest lists are snap-<id>-<attempt>-<uuid>.avro
    return location.rsplit("/", 1)[-1].startswith("snap-")


class EncryptedTableFileIO(DelegatingFileIO):
    """The FileIO of an encrypted table (see the module docstring). ``list_keys``: resolved
    manifest list location -> its snapshot's ``key-id``."""

    def __init__(
        self,
        io: FileIO,
        manager: StandardEncryptionManager,
        list_keys: Mapping[str, str],
        decode_list: ListDecoder,
        table: str,
    ) -> None:
        super().__init__(io)
        self.manager = manager
        self.table = table
        self._list_keys = dict(list_keys)
        self._decode_list = decode_list
        self._keys: dict[str, StandardKeyMetadata] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"EncryptedTableFileIO({self.inner!r}, {self.manager!r})"

    # ---- keys

    def register(self, location: str, key_metadata: bytes | StandardKeyMetadata) -> None:
        km = (
            key_metadata
            if isinstance(key_metadata, StandardKeyMetadata)
            else StandardKeyMetadata.from_bytes(key_metadata)
        )
        with self._lock:
            self._keys[location] = km

    def key_for(self, location: str) -> StandardKeyMetadata:
        """The key metadata of a manifest list or manifest of this table."""
        with self._lock:
            km = self._keys.get(location)
        if km is not None:
            return km
        key_id = self._list_keys.get(location)
        if key_id is None:
            raise EncryptionError(
                f"{location}: table {self.table} is encrypted and no key metadata is known for "
                "this file (read manifests through their manifest list)"
            )
        km = self.manager.snapshot_key_metadata(key_id)
        self.register(location, km)
        return km

    def written_key(self, location: str) -> StandardKeyMetadata | None:
        with self._lock:
            return self._keys.get(location)

    def remember_snapshots(self, metadata: Any) -> None:
        """Learns the manifest list keys of ``metadata``'s snapshots (an older version of the
        table's metadata: expiry reads the snapshots it removed)."""
        self.manager.add_entries(metadata.encryption_keys)
        for s in metadata.snapshots:
            if s.key_id is not None and s.manifest_list is not None:
                self._list_keys.setdefault(metadata.resolve(s.manifest_list), s.key_id)

    # ---- FileIO

    def _decrypt(self, location: str, data: bytes) -> bytes:
        km = self.key_for(location)
        plain = decrypt_stream(
            km.encryption_key,
            km.aad_prefix,
            data,
            name=location,
            expected_length=km.file_length,
        )
        if location in self._list_keys or _is_manifest_list(location):
            for path, key_metadata in self._decode_list(plain, location):
                if key_metadata is not None:
                    self.register(path, key_metadata)
        return plain

    def read(self, location: str) -> bytes:
        if _is_table_metadata_file(location):
            return self.inner.read(location)
        self.key_for(location)  # no key: refused before any byte is read
        return self._decrypt(location, self.inner.read(location))

    @overload
    def read_many(
        self,
        locations: Sequence[str],
        max_workers: int | None = None,
        *,
        missing_ok: Literal[False] = False,
    ) -> list[bytes]: ...

    @overload
    def read_many(
        self, locations: Sequence[str], max_workers: int | None = None, *, missing_ok: bool
    ) -> list[bytes | None]: ...

    def read_many(
        self, locations: Sequence[str], max_workers: int | None = None, *, missing_ok: bool = False
    ) -> list[bytes] | list[bytes | None]:
        locations = list(locations)
        for location in locations:
            if not _is_table_metadata_file(location):
                self.key_for(location)
        datas = self.inner.read_many(locations, max_workers, missing_ok=missing_ok)
        return [
            d if d is None or _is_table_metadata_file(p) else self._decrypt(p, d)
            for p, d in zip(locations, datas, strict=True)
        ]

    def write(self, location: str, data: bytes, *, overwrite: bool = False) -> None:
        if _is_table_metadata_file(location):
            self.inner.write(location, data, overwrite=overwrite)
            return
        if not location.endswith(".avro"):
            # Other files are written through their own hooks (write_statistics_file,
            # seal_file, parquet_encryption), which keep their keys where readers find them.
            raise EncryptionError(
                f"{location}: table {self.table} is encrypted, and this file (not a manifest or "
                "manifest list) has no place for its key here (docs/encryption.md)"
            )
        km = self.manager.new_key_metadata()
        sealed = encrypt_stream(km.encryption_key, km.aad_prefix, data)
        self.inner.write(location, sealed, overwrite=overwrite)
        self.register(location, km.with_file_length(len(sealed)))

    def filesystem(self, location: str) -> tuple[pyarrow.fs.FileSystem, str]:
        raise EncryptionError(
            f"{location}: table {self.table} is encrypted, and this operation opens table files "
            "without encryption (not integrated yet, see docs/encryption.md)"
        )


# ---------------------------------------------------------------------------------------------
# Executors (Spark): data keys travel in the plan, never master keys

# FileIO properties an executor's FileIO is rebuilt from: the table is encrypted, with data keys
# of this length.
EXECUTOR_DATA_KEY_LENGTH = "frazil.encryption.executor.data-key-length"
EXECUTOR_TABLE = "frazil.encryption.executor.table"
_KEY_MATERIAL_PREFIXES = ("encryption.kms",)


class _NoMasterKeys:
    """The KMS of an executor: it holds none."""

    def wrap_key(self, key: bytes, key_id: str) -> bytes:
        raise EncryptionError("an executor holds no master keys (it wraps no keys)")

    def unwrap_key(self, wrapped: bytes, key_id: str) -> bytes:
        raise EncryptionError("an executor holds no master keys (it unwraps no keys)")


class ExecutorFileIO(EncryptedTableFileIO):
    """The FileIO of an encrypted table on a Spark executor: data and delete files are read with
    the data keys the plan carries (their ``key_metadata``) and written under fresh data keys
    returned to the driver in the data files; it holds no master key, so it reads and writes no
    manifest or manifest list."""

    def __init__(self, io: FileIO, data_key_length: int, table: str) -> None:
        manager = StandardEncryptionManager(_NoMasterKeys(), "", data_key_length=data_key_length)
        super().__init__(io, manager, {}, lambda data, path: (), table)

    def __repr__(self) -> str:
        return f"ExecutorFileIO({self.inner!r})"

    def write(self, location: str, data: bytes, *, overwrite: bool = False) -> None:
        if _is_table_metadata_file(location):
            self.inner.write(location, data, overwrite=overwrite)
            return
        raise EncryptionError(
            f"{location}: table {self.table} is encrypted; an executor writes only data files"
        )


def executor_io_properties(io: FileIO) -> dict[str, str]:
    """The properties an executor rebuilds a table's FileIO from: ``io``'s without key material
    (a KMS's master keys never leave the driver), marked with the data key length when the
    table is encrypted (:func:`executor_file_io`)."""
    out = {
        k: v for k, v in io.properties.items() if not k.lower().startswith(_KEY_MATERIAL_PREFIXES)
    }
    if isinstance(io, EncryptedTableFileIO):
        out[EXECUTOR_DATA_KEY_LENGTH] = str(io.manager.data_key_length)
        out[EXECUTOR_TABLE] = io.table
    return out


def executor_file_io(io: FileIO, properties: Mapping[str, str]) -> FileIO:
    """``io`` (built from :func:`executor_io_properties`' output) as an encrypted table's
    :class:`ExecutorFileIO` when they say so."""
    length = properties.get(EXECUTOR_DATA_KEY_LENGTH)
    if length is None:
        return io
    return ExecutorFileIO(io, int(length), properties.get(EXECUTOR_TABLE, "?"))


# ---------------------------------------------------------------------------------------------
# Hooks for the table's readers and writers: each is a no-op for a plaintext table's FileIO.


def remember_snapshots(io: FileIO, metadata: Any) -> FileIO:
    """``io``, knowing the manifest list keys of ``metadata``'s snapshots too (see
    :meth:`EncryptedTableFileIO.remember_snapshots`)."""
    if isinstance(io, EncryptedTableFileIO):
        io.remember_snapshots(metadata)
    return io


def data_filesystem(io: FileIO, location: str) -> tuple[pyarrow.fs.FileSystem, str]:
    """The filesystem to open a data or delete file with, for a path that encrypts or decrypts
    it with :func:`parquet_encryption` / :func:`parquet_decryption`."""
    if isinstance(io, EncryptedTableFileIO):
        return io.inner.filesystem(location)
    return io.filesystem(location)


def parquet_encryption(
    io: FileIO, location: str, file_format: str = "PARQUET", patches_footer: bool = False
) -> Any:
    """pyarrow ``FileEncryptionProperties`` for a new data or delete file of an encrypted table
    (``None`` for a plaintext table): uniform encryption with an encrypted footer under a fresh
    data key, the AAD prefix not stored in the file (Java's ``Parquet.WriteBuilder``). The key
    metadata is kept for :func:`data_key_metadata`."""
    if not isinstance(io, EncryptedTableFileIO):
        return None
    fmt = file_format.upper()
    if fmt == "AVRO":
        return None  # an AES-GCM stream, encrypted by its sink (encrypted_sink)
    if fmt != "PARQUET":
        # Java's ORC.write refuses encryption too ("Native ORC encryption is not supported").
        raise UnsupportedError(
            f"{location}: table {io.table} is encrypted; frazil writes encrypted data files in "
            f"Parquet or Avro, not {file_format} (ORC has no encryption in Iceberg)"
        )
    if patches_footer:
        # Variant columns' annotation is patched into a plaintext footer after writing.
        raise UnsupportedError(
            f"{location}: table {io.table} is encrypted; variant columns cannot be written "
            "to encrypted Parquet files: pyarrow cannot mark a group as VARIANT, so frazil "
            "patches that annotation into the footer after writing, and an encrypted footer "
            "cannot be patched"
        )
    import pyarrow.parquet.encryption as pe

    km = io.manager.new_key_metadata()
    io.register(location, km)
    return pe.create_encryption_properties(
        km.encryption_key, aad_prefix=km.aad_prefix, store_aad_prefix=False
    )


class _StreamSink:
    """A data file written as one AES-GCM stream as its bytes come (Java's
    ``AesGcmOutputStream``): the header, then each full plaintext block sealed under the file's
    key with AAD = prefix + block index; on close the last, partial block (a single empty one
    for an empty file, none after a full block). ``tell`` is the stored length the bytes
    written so far make once closed (the writer reads it before closing)."""

    def __init__(self, io: EncryptedTableFileIO, location: str, sink: Any) -> None:
        self._io = io
        self._location = location
        self._sink = sink
        self._km = io.manager.new_key_metadata()
        io.register(location, self._km)
        self._pending = bytearray()
        self._index = 0
        self._stored = 0
        self._emit(b"AGS1" + PLAIN_BLOCK_SIZE.to_bytes(4, "little"))

    def _emit(self, data: bytes) -> None:
        self._sink.write(data)
        self._stored += len(data)

    def _seal(self, block: bytes) -> None:
        aad = (self._km.aad_prefix or b"") + self._index.to_bytes(4, "little")
        self._emit(gcm_encrypt(self._km.encryption_key, block, aad))
        self._index += 1

    def write(self, data: bytes) -> int:
        self._pending += data
        while len(self._pending) >= PLAIN_BLOCK_SIZE:
            self._seal(bytes(self._pending[:PLAIN_BLOCK_SIZE]))
            del self._pending[:PLAIN_BLOCK_SIZE]
        return len(data)

    def tell(self) -> int:
        # The stored length once closed: the last block is nonce + pending bytes + tag.
        if self._pending or self._index == 0:
            return self._stored + 12 + len(self._pending) + 16
        return self._stored

    def close(self) -> None:
        if self._pending or self._index == 0:
            self._seal(bytes(self._pending))
            self._pending.clear()
        self._sink.close()
        # Java 1.11's DataWriter: the key metadata carries the stored length.
        self._io.register(self._location, self._km.with_file_length(self._stored))


def encrypted_sink(io: FileIO, location: str, sink: Any) -> Any:
    """``sink`` for a new Avro data or delete file: on an encrypted table it writes the file as
    an AES-GCM stream under a fresh data key (Java's ``Avro`` writer over
    ``EncryptedOutputFile.encryptingOutputFile()``), for :func:`data_key_metadata`."""
    if not isinstance(io, EncryptedTableFileIO):
        return sink
    return _StreamSink(io, location, sink)


def data_key_metadata(io: FileIO, location: str) -> bytes | None:
    """The ``key_metadata`` (field 131) of a data or delete file written with
    :func:`parquet_encryption` or :func:`encrypted_sink` (``None`` for a plaintext table).
    Parquet: Java 1.10.2's form, without a length (a Parquet file's length is
    ``file_size_in_bytes``, and its footer's tag covers it). An AES-GCM stream (Avro): with
    the stored length, as Java 1.11's ``DataWriter`` sets it."""
    if not isinstance(io, EncryptedTableFileIO):
        return None
    km = io.written_key(location)
    if km is None:
        raise EncryptionError(f"{location}: no data key was made for this file")
    return km.to_bytes(java_1_10=km.file_length is None)


@dataclass(frozen=True)
class StreamDecryption:
    """How to decrypt an Avro data or delete file of an encrypted table: one AES-GCM stream
    under the key of its ``key_metadata``."""

    location: str
    key_metadata: StandardKeyMetadata = field(repr=False)

    def decrypt(self, data: bytes) -> bytes:
        km = self.key_metadata
        return decrypt_stream(
            km.encryption_key,
            km.aad_prefix,
            data,
            name=self.location,
            expected_length=km.file_length,
        )


def parquet_decryption(
    io: FileIO, location: str, key_metadata: bytes | None, file_format: str = "PARQUET"
) -> Any:
    """pyarrow ``FileDecryptionProperties`` for a data or delete file of an encrypted table from
    its ``key_metadata`` (``None``: a plaintext table, or a file the manifest lists without a
    key, written before the table was encrypted, or added by ``add_files``); for an Avro file
    a :class:`StreamDecryption`."""
    if not isinstance(io, EncryptedTableFileIO) or key_metadata is None:
        return None
    km = StandardKeyMetadata.from_bytes(key_metadata)
    if file_format.upper() == "AVRO":
        return StreamDecryption(location, km)
    import pyarrow.parquet.encryption as pe

    return pe.create_decryption_properties(km.encryption_key, aad_prefix=km.aad_prefix)


def file_decryption(io: FileIO, content_file: Any) -> Any:
    """:func:`parquet_decryption` of a ``DataFile`` (data or delete file)."""
    return parquet_decryption(
        io, content_file.file_path, content_file.key_metadata, str(content_file.file_format)
    )


def seal_file(io: FileIO, data: bytes) -> tuple[bytes, bytes | None]:
    """A whole file an encrypted table writes as an AES-GCM stream (a Puffin file of deletion
    vectors): the bytes to store and its ``key_metadata`` with the stored length; for a plaintext
    table ``data`` itself and ``None``. Offsets in the file (a DV's ``content_offset``) are
    offsets in ``data``, as Java's readers see the decrypted stream."""
    if not isinstance(io, EncryptedTableFileIO):
        return data, None
    km = io.manager.new_key_metadata()
    sealed = encrypt_stream(km.encryption_key, km.aad_prefix, data)
    return sealed, km.with_file_length(len(sealed)).to_bytes()


def read_encrypted_range(
    io: FileIO, location: str, key_metadata: bytes | None, offset: int, length: int
) -> bytes | None:
    """``length`` plaintext bytes at ``offset`` of an AES-GCM stream file of an encrypted table
    (a DV's blob), only the blocks they lie in decrypted, every tag checked; ``None`` for a
    plaintext table or a file without key metadata (read as plaintext by the caller)."""
    if not isinstance(io, EncryptedTableFileIO) or key_metadata is None:
        return None
    km = StandardKeyMetadata.from_bytes(key_metadata)
    return decrypt_stream(
        km.encryption_key,
        km.aad_prefix,
        io.inner.read(location),
        name=location,
        expected_length=km.file_length,
        offset=offset,
        length=length,
    )


def write_statistics_file(io: FileIO, location: str, data: bytes) -> tuple[int, str | None]:
    """Writes a table statistics (Puffin) file; returns its stored size and its ``key-id``.

    An encrypted table's is one AES-GCM stream under a fresh data key. Its key metadata (with
    the stored length) is wrapped by the table's KEK into a new ``encryption-keys`` entry,
    whose id the statistics file's ``key-id`` names, as Java's ``ComputeTableStatsSparkAction``
    does in apache/iceberg PR #17417 (``StandardEncryptionManager.addKeyMetadata``). The spec's
    ``key-metadata`` field is not used: the metadata JSON is plaintext, so it would hold the
    file's data key in the clear. ``Transaction.set_statistics`` commits the new entries
    (:func:`new_key_entries`). A plaintext table's file is written as it is, ``key-id`` ``None``.
    """
    if not isinstance(io, EncryptedTableFileIO):
        io.write(location, data)
        return len(data), None
    km = io.manager.new_key_metadata()
    sealed = encrypt_stream(km.encryption_key, km.aad_prefix, data)
    io.inner.write(location, sealed)
    key_id, _ = io.manager.wrap_snapshot_key(km.with_file_length(len(sealed)))
    return len(sealed), key_id


def read_statistics_file(
    io: FileIO, location: str, key_id: str | None, key_metadata: str | None
) -> bytes:
    """The plaintext of a table statistics file: decrypted with the key its ``key-id`` names
    (or, written by another implementation, its spec ``key-metadata``), every tag and the stored
    length checked. A file with neither is read as plaintext, also on an encrypted table: Java
    1.10/1.11 write statistics files in plaintext there, and the metadata JSON that lists
    them is the trusted side."""
    if key_id is None and key_metadata is None:
        inner = io.inner if isinstance(io, EncryptedTableFileIO) else io
        return inner.read(location)
    if not isinstance(io, EncryptedTableFileIO):
        raise EncryptionError(
            f"{location}: the statistics file is encrypted, and this table's FileIO has no "
            "encryption (a catalog KMS holding the table's master key)"
        )
    if key_id is not None:
        try:
            km = io.manager.snapshot_key_metadata(key_id)
        except EncryptionError as e:
            raise EncryptionError(f"{location}: {e}") from e
    else:
        try:
            raw = base64.b64decode(key_metadata or "", validate=True)
        except (binascii.Error, ValueError):
            raise EncryptionError(f"{location}: key-metadata is not base64") from None
        km = StandardKeyMetadata.from_bytes(raw)
    return decrypt_stream(
        km.encryption_key,
        km.aad_prefix,
        io.inner.read(location),
        name=location,
        expected_length=km.file_length,
    )


def new_key_entries(
    io: FileIO, key_id: str | None, known_key_ids: Iterable[str]
) -> list[EncryptionKeyEntry]:
    """The ``encryption-keys`` entries a commit that refers to ``key_id`` (a statistics file's)
    must add: the key's own and its KEK's, those not in ``known_key_ids`` (the base
    metadata's); none for a plaintext table or a key the base metadata has."""
    if not isinstance(io, EncryptedTableFileIO) or key_id is None:
        return []
    known = set(known_key_ids)
    out: list[EncryptionKeyEntry] = []
    entry = io.manager.entry(key_id)
    while entry is not None and entry.key_id not in known:
        out.insert(
            0,
            EncryptionKeyEntry(
                entry.key_id,
                entry.encrypted_key_metadata,
                entry.encrypted_by_id,
                dict(entry.properties),
            ),
        )
        if entry.encrypted_by_id == io.manager.master_key_id:
            break
        entry = io.manager.entry(entry.encrypted_by_id or "")
    return out


def refuse_partition_statistics(io: FileIO) -> None:
    """Partition statistics files are not written for an encrypted table (see the message)."""
    if isinstance(io, EncryptedTableFileIO):
        raise UnsupportedError(
            f"table {io.table} is encrypted: frazil writes no partition statistics file for it. "
            "The spec's partition-statistics struct has no field for the file's key (a key-id "
            "is only proposed, apache/iceberg PR #17533), and Java 1.11 writes these files in "
            "plaintext (PartitionStatsHandler through table.io().newOutputFile), which would "
            "store partition values unencrypted"
        )


def written_key_metadata(io: FileIO, location: str, length: int) -> tuple[bytes | None, int]:
    """A manifest written through ``io``: its ``key_metadata`` for the manifest list entry (with
    the encrypted length, Java 1.11's ``copyWithLength``) and its length as stored."""
    if not isinstance(io, EncryptedTableFileIO):
        return None, length
    km = io.written_key(location)
    if km is None or km.file_length is None:
        raise EncryptionError(f"{location}: was not written through the table's encryption")
    return km.to_bytes(), km.file_length


def snapshot_key(
    io: FileIO, list_location: str, known_key_ids: Iterable[str]
) -> tuple[str | None, list[EncryptionKeyEntry]]:
    """A new snapshot's ``key-id`` for the manifest list written at ``list_location`` and the
    ``encryption-keys`` entries to add with it (its key, and the KEK when ``known_key_ids``, the
    base metadata's, lack it); ``(None, [])`` for a plaintext table."""
    if not isinstance(io, EncryptedTableFileIO):
        return None, []
    km = io.written_key(list_location)
    if km is None:
        raise EncryptionError(f"{list_location}: was not written through the table's encryption")
    key_id, entries = io.manager.wrap_snapshot_key(km)
    known = set(known_key_ids)
    kek = io.manager.entry(entries[-1].encrypted_by_id or "")
    if kek is not None and kek.key_id not in known and all(e.key_id != kek.key_id for e in entries):
        # A KEK made by an earlier attempt or step whose commit did not carry it.
        entries.insert(
            0,
            EncryptionKeyEntry(
                kek.key_id, kek.encrypted_key_metadata, kek.encrypted_by_id, dict(kek.properties)
            ),
        )
    return key_id, entries
