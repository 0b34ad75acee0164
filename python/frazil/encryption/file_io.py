"""Encryption at the FileIO boundary (Java's ``EncryptingFileIO``): whole-file reads and writes
of AES-GCM streams under a file's :class:`StandardKeyMetadata`, over any :class:`FileIO`; and the
guard that stands in for the FileIO of an encrypted table frazil cannot decrypt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from frazil.encryption.streams import (
    PLAIN_BLOCK_SIZE,
    StandardKeyMetadata,
    decrypt_stream,
    encrypt_stream,
)
from frazil.exceptions import EncryptionError
from frazil.io.base import FileIO

if TYPE_CHECKING:
    import pyarrow.fs

__all__ = ["EncryptedTableGuardFileIO", "EncryptingFileIO"]


class EncryptingFileIO:
    """Reads and writes AES-GCM stream files through ``io``. The key metadata a write returns
    carries the encrypted file's length; reads trust that length over the file system's, so a
    truncated or extended file is an :class:`EncryptionError` naming it, as is any tampering."""

    def __init__(self, io: FileIO, *, block_size: int = PLAIN_BLOCK_SIZE) -> None:
        self.io = io
        self.block_size = block_size

    def __repr__(self) -> str:
        return f"EncryptingFileIO({self.io!r})"

    def write(
        self,
        location: str,
        plaintext: bytes,
        key_metadata: StandardKeyMetadata,
        *,
        overwrite: bool = False,
    ) -> StandardKeyMetadata:
        data = encrypt_stream(
            key_metadata.encryption_key, key_metadata.aad_prefix, plaintext, self.block_size
        )
        self.io.write(location, data, overwrite=overwrite)
        return key_metadata.with_file_length(len(data))

    def read(
        self,
        location: str,
        key_metadata: StandardKeyMetadata,
        *,
        offset: int = 0,
        length: int | None = None,
    ) -> bytes:
        data = self.io.read(location)
        return decrypt_stream(
            key_metadata.encryption_key,
            key_metadata.aad_prefix,
            data,
            name=location,
            expected_length=key_metadata.file_length,
            offset=offset,
            length=length,
        )


def _is_table_metadata_file(location: str) -> bool:
    # The metadata JSON and the Hadoop catalog's version hint stay plaintext in encrypted tables.
    name = location.rsplit("/", 1)[-1]
    return name == "version-hint.text" or name.endswith(
        (".metadata.json", ".metadata.json.gz", ".gz.metadata.json")
    )


class DelegatingFileIO(FileIO):
    """A FileIO over ``inner`` that changes what files hold, not where they are: existence,
    sizes, listing and deletes pass through (the encrypted table's IO and its guard)."""

    def __init__(self, io: FileIO) -> None:
        super().__init__(io.properties)
        self.inner = io

    def exists(self, location: str) -> bool:
        return self.inner.exists(location)

    def delete(self, location: str) -> None:
        self.inner.delete(location)

    def size(self, location: str) -> int:
        return self.inner.size(location)

    def list_prefix(self, prefix: str) -> list[str]:
        return self.inner.list_prefix(prefix)

    @property
    def supports_atomic_create(self) -> bool:
        return self.inner.supports_atomic_create


class EncryptedTableGuardFileIO(DelegatingFileIO):
    """The FileIO of an encrypted table frazil cannot read or write as encrypted (no KMS, an
    unknown master key, or a path not yet integrated): table metadata files pass through, every
    other read or write raises :class:`EncryptionError` with ``reason``, so nothing is ever
    written in plaintext or read as garbage. Listing, sizes and deletes pass through."""

    def __init__(self, io: FileIO, reason: str) -> None:
        super().__init__(io)
        self.reason = reason

    def __repr__(self) -> str:
        return f"EncryptedTableGuardFileIO({self.inner!r})"

    def _refuse(self, location: str) -> EncryptionError:
        return EncryptionError(f"{location}: {self.reason}")

    def read(self, location: str) -> bytes:
        if not _is_table_metadata_file(location):
            raise self._refuse(location)
        return self.inner.read(location)

    def write(self, location: str, data: bytes, *, overwrite: bool = False) -> None:
        if not _is_table_metadata_file(location):
            raise self._refuse(location)
        self.inner.write(location, data, overwrite=overwrite)

    def filesystem(self, location: str) -> tuple[pyarrow.fs.FileSystem, str]:
        raise self._refuse(location)
