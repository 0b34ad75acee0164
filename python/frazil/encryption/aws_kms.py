"""A KMS client over AWS KMS (boto3, the ``aws`` extra): master keys are KMS key ids or ARNs,
keys are wrapped with ``Encrypt`` and unwrapped with ``Decrypt``. Catalog properties:
``encryption.kms.aws.region``, ``encryption.kms.aws.endpoint`` (e.g. a local test server);
credentials come from boto3's usual chain."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from frazil.exceptions import EncryptionError, UnsupportedError

__all__ = ["AwsKms"]

REGION = "encryption.kms.aws.region"
ENDPOINT = "encryption.kms.aws.endpoint"


class AwsKms:
    def __init__(self, properties: Mapping[str, str]) -> None:
        try:
            import boto3
        except ImportError:
            raise UnsupportedError(
                "frazil.encryption.AwsKms needs boto3: pip install 'frazil[kms-aws]'"
            ) from None
        self._client: Any = boto3.client(
            "kms", region_name=properties.get(REGION), endpoint_url=properties.get(ENDPOINT)
        )

    def __repr__(self) -> str:
        return "AwsKms()"

    def wrap_key(self, key: bytes, key_id: str) -> bytes:
        try:
            return bytes(self._client.encrypt(KeyId=key_id, Plaintext=key)["CiphertextBlob"])
        except Exception as e:
            raise EncryptionError(f"AWS KMS could not wrap a key with {key_id!r}: {e}") from e

    def unwrap_key(self, wrapped: bytes, key_id: str) -> bytes:
        try:
            return bytes(self._client.decrypt(KeyId=key_id, CiphertextBlob=wrapped)["Plaintext"])
        except Exception as e:
            raise EncryptionError(f"AWS KMS could not unwrap a key of {key_id!r}: {e}") from e
