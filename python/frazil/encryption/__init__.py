"""Table encryption (format v3 ``encryption-keys`` and snapshot ``key-id``), byte-compatible with
the Java reference's formats: AES-GCM streams for metadata files, Java's standard key metadata,
the KEK / snapshot-key hierarchy of Java 1.11's ``StandardEncryptionManager``, KMS clients, and
an encrypting wrapper at the FileIO boundary. The KMS is a catalog choice
(``encryption.kms-impl``); table metadata only names its master key (``encryption.key-id``).

What is integrated into table reads and writes today, and what is not, is in
``docs/encryption.md``; until a path is integrated, :mod:`frazil.encryption.guard` refuses it
with an :class:`~frazil.exceptions.EncryptionError` rather than read garbage or write plaintext.
"""

from frazil.encryption.aws_kms import AwsKms
from frazil.encryption.file_io import EncryptedTableGuardFileIO, EncryptingFileIO
from frazil.encryption.guard import check_encryption_request, guard_table_io, is_encrypted
from frazil.encryption.kms import (
    ENCRYPTION_DATA_KEY_LENGTH,
    ENCRYPTION_DATA_KEY_LENGTH_DEFAULT,
    ENCRYPTION_KEY_ID,
    KMS_IMPL,
    KMS_KEY_PREFIX,
    InMemoryKms,
    KeyManagementClient,
    load_kms,
)
from frazil.encryption.manager import (
    KEK_LIFESPAN_MS,
    KEK_TIMESTAMP_PROPERTY,
    EncryptionKeyEntry,
    StandardEncryptionManager,
)
from frazil.encryption.streams import (
    PLAIN_BLOCK_SIZE,
    StandardKeyMetadata,
    decrypt_stream,
    encrypt_stream,
    gcm_decrypt,
    gcm_encrypt,
    stream_plain_length,
)

__all__ = [
    "ENCRYPTION_DATA_KEY_LENGTH",
    "ENCRYPTION_DATA_KEY_LENGTH_DEFAULT",
    "ENCRYPTION_KEY_ID",
    "KEK_LIFESPAN_MS",
    "KEK_TIMESTAMP_PROPERTY",
    "KMS_IMPL",
    "KMS_KEY_PREFIX",
    "PLAIN_BLOCK_SIZE",
    "AwsKms",
    "EncryptedTableGuardFileIO",
    "EncryptingFileIO",
    "EncryptionKeyEntry",
    "InMemoryKms",
    "KeyManagementClient",
    "StandardEncryptionManager",
    "StandardKeyMetadata",
    "check_encryption_request",
    "decrypt_stream",
    "encrypt_stream",
    "gcm_decrypt",
    "gcm_encrypt",
    "guard_table_io",
    "is_encrypted",
    "load_kms",
    "stream_plain_length",
]
