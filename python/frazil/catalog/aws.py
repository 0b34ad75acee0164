"""The AWS clients of the Glue and DynamoDB catalogs: sessions from catalog properties, and AWS
errors as :mod:`frazil.exceptions`.

Credentials and region come from ``<service>.<key>`` (``glue.region``, ``dynamodb.access-key-id``,
...), then ``client.<key>`` (PyIceberg's names shared by every AWS client), then boto3's default
chain (environment, ``~/.aws``, instance roles). Keys: ``region``, ``access-key-id``,
``secret-access-key``, ``session-token``, ``profile-name``. A secret never reaches a message: the
errors built here name the catalog, the call and AWS's error code and message only.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from frazil.exceptions import CatalogBusyError, CatalogError, InvalidArgumentError

__all__ = ["aws_client", "aws_error", "error_code", "is_aws_error"]

CLIENT_PREFIX = "client."
# AWS error codes that may pass on their own (the SDK retried them already).
_BUSY_CODES = frozenset(
    (
        "ThrottlingException",
        "Throttling",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "InternalServerError",
        "InternalServiceException",
        "InternalFailure",
        "ServiceUnavailable",
        "ServiceUnavailableException",
        "OperationTimeoutException",
        "TransactionConflictException",
        "ResourceNumberLimitExceededException",
    )
)
RETRY_MODES = ("standard", "adaptive", "legacy")
# boto3 sessions are not thread-safe to create concurrently (botocore's loader), clients are.
_SESSION_LOCK = threading.Lock()


def _first(props: Mapping[str, str], service: str, key: str) -> str | None:
    for name in (f"{service}.{key}", f"{CLIENT_PREFIX}{key}"):
        value = props.get(name)
        if value:
            return value
    return None


def aws_client(
    service: str,
    props: Mapping[str, str],
    *,
    endpoint_key: str,
    max_retries_key: str | None = None,
    retry_mode_key: str | None = None,
    default_max_retries: int = 5,
) -> Any:
    """A boto3 client for ``service`` (``"glue"``, ``"dynamodb"``) from the catalog properties."""
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise InvalidArgumentError(
            f"the {service} catalog needs boto3: pip install 'frazil[{service}]'"
        ) from None
    retries = default_max_retries
    if max_retries_key and props.get(max_retries_key):
        try:
            retries = int(props[max_retries_key])
        except ValueError:
            raise InvalidArgumentError(
                f"{max_retries_key}={props[max_retries_key]!r} is not an integer"
            ) from None
    mode = (props.get(retry_mode_key or "") or "standard").strip().lower()
    if mode not in RETRY_MODES:
        raise InvalidArgumentError(
            f"{retry_mode_key}={mode!r}: expected one of {', '.join(RETRY_MODES)}"
        )
    with _SESSION_LOCK:
        session = boto3.Session(
            profile_name=_first(props, service, "profile-name"),
            region_name=_first(props, service, "region"),
            aws_access_key_id=_first(props, service, "access-key-id"),
            aws_secret_access_key=_first(props, service, "secret-access-key"),
            aws_session_token=_first(props, service, "session-token"),
        )
        return session.client(
            service,
            endpoint_url=props.get(endpoint_key) or None,
            config=Config(retries={"max_attempts": retries, "mode": mode}),
        )


def error_code(e: BaseException) -> str | None:
    """The AWS error code of a botocore ``ClientError`` (``None`` for anything else)."""
    response = getattr(e, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
        return str(code) if code else None
    return None


def aws_error(e: BaseException, what: str, doing: str) -> CatalogError:
    """The :class:`CatalogError` for an AWS failure of ``doing`` in ``what`` (``"Glue catalog
    'prod'"``): :class:`CatalogBusyError` for throttling, service errors and lost connections.
    Raise it ``from e``."""
    code = error_code(e)
    if code is not None:
        message = getattr(e, "response", {}).get("Error", {}).get("Message") or ""
        cls = CatalogBusyError if code in _BUSY_CODES else CatalogError
        return cls(f"{what}: {doing} failed: {code}: {message}".rstrip(": "))
    try:
        from botocore.exceptions import (
            ConnectionError as BotoConnectionError,
        )
        from botocore.exceptions import (
            HTTPClientError,
            NoCredentialsError,
        )
    except ImportError:  # pragma: no cover - boto3 is installed when a client exists
        return CatalogError(f"{what}: {doing} failed: {type(e).__name__}: {e}")
    if isinstance(e, NoCredentialsError):
        return CatalogError(
            f"{what}: {doing} failed: no AWS credentials (set them in the catalog properties, "
            "the environment or a profile)"
        )
    if isinstance(e, (BotoConnectionError, HTTPClientError)):
        return CatalogBusyError(f"{what}: {doing} failed: {type(e).__name__}: {e}")
    return CatalogError(f"{what}: {doing} failed: {type(e).__name__}: {e}")


def is_aws_error(e: BaseException) -> bool:
    """Whether ``e`` comes from botocore (a service answer or a client-side failure)."""
    try:
        from botocore.exceptions import BotoCoreError, ClientError
    except ImportError:  # pragma: no cover
        return False
    return isinstance(e, (BotoCoreError, ClientError))
