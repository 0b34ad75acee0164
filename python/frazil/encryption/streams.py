"""The byte formats of Iceberg encryption, over the native core (``rust/frazil-encryption``):
AES-GCM streams (``AGS1``, Java's ``format/gcm-stream-spec.md``), Java's standard key metadata,
and single-shot AES-GCM (nonce || ciphertext || tag) for wrapping keys. Errors are
:class:`~frazil.exceptions.EncryptionError` naming the file; key bytes never appear in messages
or reprs."""

from __future__ import annotations

from dataclasses import dataclass, field

from frazil import _native
from frazil.exceptions import DecodeError, EncryptionError

__all__ = [
    "PLAIN_BLOCK_SIZE",
    "StandardKeyMetadata",
    "decrypt_stream",
    "encrypt_stream",
    "gcm_decrypt",
    "gcm_encrypt",
    "stream_plain_length",
]

# Java's Ciphers.PLAIN_BLOCK_SIZE.
PLAIN_BLOCK_SIZE = 1024 * 1024


@dataclass(frozen=True)
class StandardKeyMetadata:
    """One file's key metadata: its data key, its AAD prefix, and (Java 1.11+) the encrypted
    file's length, which readers trust over the file system's so a truncation is caught."""

    encryption_key: bytes = field(repr=False)
    aad_prefix: bytes | None = field(default=None, repr=False)
    file_length: int | None = None

    def to_bytes(self, *, java_1_10: bool = False) -> bytes:
        """Version byte 0x01 + the Avro record; ``java_1_10``: without ``file_length``, as
        Java 1.10.2 writes it."""
        return _native.key_metadata_encode(
            self.encryption_key, self.aad_prefix, self.file_length, java_1_10
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> StandardKeyMetadata:
        try:
            key, aad, length = _native.key_metadata_decode(bytes(data))
        except DecodeError as e:
            raise EncryptionError(str(e)) from e
        return cls(key, aad, length)

    def with_file_length(self, length: int) -> StandardKeyMetadata:
        return StandardKeyMetadata(self.encryption_key, self.aad_prefix, length)


def gcm_encrypt(key: bytes, plaintext: bytes, aad: bytes = b"") -> bytes:
    """nonce || ciphertext || tag of ``plaintext`` (Java's ``Ciphers.AesGcmEncryptor``)."""
    try:
        return _native.gcm(key, plaintext, aad, True)
    except DecodeError as e:
        raise EncryptionError(str(e)) from e


def gcm_decrypt(key: bytes, sealed: bytes, aad: bytes = b"", *, what: str = "ciphertext") -> bytes:
    """The plaintext of :func:`gcm_encrypt`'s output, its tag checked; ``what`` names it in
    the error."""
    try:
        return _native.gcm(key, sealed, aad, False)
    except DecodeError as e:
        raise EncryptionError(f"{what}: {e}") from e


def encrypt_stream(
    key: bytes, aad_prefix: bytes | None, plaintext: bytes, block_size: int = PLAIN_BLOCK_SIZE
) -> bytes:
    """``plaintext`` as one AES-GCM stream (random nonce per block)."""
    try:
        return _native.gcm_stream_encrypt(key, aad_prefix or b"", plaintext, block_size)
    except (DecodeError, OverflowError) as e:
        raise EncryptionError(f"AES-GCM stream: {e}") from e


def decrypt_stream(
    key: bytes,
    aad_prefix: bytes | None,
    data: bytes,
    *,
    name: str,
    expected_length: int | None = None,
    offset: int = 0,
    length: int | None = None,
) -> bytes:
    """``length`` plaintext bytes from ``offset`` (default: all) of the stream ``data``,
    decrypting only the blocks they lie in, every tag checked. ``expected_length``: the key
    metadata's ``file_length`` (a stream of another length is refused); ``name``: the file,
    for errors."""
    return _read(key, aad_prefix, data, name, expected_length, offset, length)[1]


def stream_plain_length(
    key: bytes,
    aad_prefix: bytes | None,
    data: bytes,
    *,
    name: str,
    expected_length: int | None = None,
) -> int:
    """The plaintext length of the stream ``data``, from its layout (no block is decrypted)."""
    return _read(key, aad_prefix, data, name, expected_length, 0, 0)[0]


def _read(
    key: bytes,
    aad_prefix: bytes | None,
    data: bytes,
    name: str,
    expected_length: int | None,
    offset: int,
    length: int | None,
) -> tuple[int, bytes]:
    try:
        return _native.gcm_stream_decrypt(
            key, aad_prefix or b"", data, expected_length, name, (offset, length)
        )
    except (DecodeError, OverflowError) as e:
        raise EncryptionError(str(e) if name in str(e) else f"{name}: {e}") from e
