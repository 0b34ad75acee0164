"""HTTP for the REST catalog client: one pooled ``requests.Session`` per catalog, timeouts,
retries and request signing.

- Timeouts: ``rest.connect-timeout`` and ``rest.read-timeout`` in seconds (``rest.timeout``
  sets both; defaults 10 s and 60 s).
- Retries (``rest.max-retries``, default 5): requests that may be repeated (GET, HEAD, DELETE,
  and a POST carrying an ``Idempotency-Key``) are retried on 429, 502, 503 and 504 and on
  connection errors and timeouts, with exponential backoff and full jitter
  (``rest.retry.min-wait-ms`` 100, ``rest.retry.max-wait-ms`` 10000) or the server's
  ``Retry-After``. Any request is retried when it never reached the server (a connect
  timeout) or was refused with 429. A plain POST that may have been applied is never repeated:
  the caller decides what an unknown outcome means (a commit checks the table's state).
- A 401 refreshes the OAuth2 token and repeats the request once.
- TLS: ``ssl.cabundle`` (a CA bundle path, or ``false`` to disable verification),
  ``ssl.client.cert`` and ``ssl.client.key``.
- ``header.<Name>`` properties are sent on every request (``X-Iceberg-Access-Delegation``
  defaults to ``vended-credentials``).
- SigV4 (``rest.sigv4-enabled=true``, ``rest.signing-region``, ``rest.signing-name`` default
  ``execute-api``) signs every request with botocore's default credential chain (extra
  ``frazil[sigv4]``); a bearer token then travels as ``Original-Authorization``.

Nothing here logs a header, a body or a query string.
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import time
from collections.abc import Mapping
from typing import Any

import requests
from requests.adapters import HTTPAdapter

from frazil import exceptions as exc
from frazil.catalog.rest.auth import AuthSession
from frazil.rest.wire import error_from_response

__all__ = ["RestHttp", "RetryPolicy"]

logger = logging.getLogger(__name__)

HEADER_PREFIX = "header."
ACCESS_DELEGATION = "X-Iceberg-Access-Delegation"
DEFAULT_ACCESS_DELEGATION = "vended-credentials"
SIGV4_ENABLED = "rest.sigv4-enabled"
SIGNING_REGION = "rest.signing-region"
SIGNING_NAME = "rest.signing-name"
SSL_CABUNDLE = "ssl.cabundle"
SSL_CLIENT_CERT = "ssl.client.cert"
SSL_CLIENT_KEY = "ssl.client.key"

RETRY_STATUSES = frozenset((429, 502, 503, 504))
IDEMPOTENT_METHODS = frozenset(("GET", "HEAD", "DELETE", "PUT", "OPTIONS"))


def _float(props: Mapping[str, str], key: str, default: float) -> float:
    try:
        return float(props[key])
    except (KeyError, ValueError):
        return default


class RetryPolicy:
    def __init__(self, props: Mapping[str, str]) -> None:
        self.max_retries = max(0, int(_float(props, "rest.max-retries", 5)))
        self.min_wait = max(0.0, _float(props, "rest.retry.min-wait-ms", 100) / 1000.0)
        self.max_wait = max(0.0, _float(props, "rest.retry.max-wait-ms", 10_000) / 1000.0)

    def wait(self, attempt: int, response: requests.Response | None) -> float:
        """Seconds before retry ``attempt`` (1-based): ``Retry-After`` if the server sent one
        (capped at ``max_wait``), else a full-jitter draw under the doubled step."""
        if response is not None:
            after = _retry_after(response.headers.get("Retry-After"))
            if after is not None:
                return min(after, self.max_wait)
        step = min(self.max_wait, self.min_wait * 2 ** min(attempt - 1, 30))
        return random.uniform(0, step)


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class RestHttp:
    """Sends requests to one REST catalog and maps failures onto :mod:`frazil.exceptions`."""

    def __init__(self, base_uri: str, properties: Mapping[str, str]) -> None:
        self.base_uri = base_uri.rstrip("/")
        self.session = requests.Session()
        adapter = HTTPAdapter(pool_connections=4, pool_maxsize=16)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.retry = RetryPolicy(properties)
        self.auth = AuthSession(properties, self.base_uri, self._post_token)
        self.configure(properties)

    def __repr__(self) -> str:
        return f"RestHttp({self.base_uri!r})"

    def configure(self, properties: Mapping[str, str]) -> None:
        """(Re)applies the properties that shape every request (after ``/v1/config``)."""
        timeout = _float(properties, "rest.timeout", 0.0)
        self.timeout = (
            _float(properties, "rest.connect-timeout", timeout or 10.0),
            _float(properties, "rest.read-timeout", timeout or 60.0),
        )
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "frazil",
            "X-Client-Version": "frazil",
            ACCESS_DELEGATION: DEFAULT_ACCESS_DELEGATION,
        }
        for key, value in properties.items():
            if key.startswith(HEADER_PREFIX) and len(key) > len(HEADER_PREFIX):
                headers[key[len(HEADER_PREFIX) :]] = value
        self.headers = headers
        cabundle = properties.get(SSL_CABUNDLE)
        verify: bool | str = True
        if cabundle:
            verify = False if cabundle.strip().lower() == "false" else cabundle
        self.session.verify = verify
        cert, cert_key = properties.get(SSL_CLIENT_CERT), properties.get(SSL_CLIENT_KEY)
        if cert and cert_key:
            self.session.cert = (cert, cert_key)
        else:
            self.session.cert = cert or None
        self.sigv4 = str(properties.get(SIGV4_ENABLED, "false")).strip().lower() == "true"
        self.signing_region = properties.get(SIGNING_REGION)
        self.signing_name = properties.get(SIGNING_NAME) or "execute-api"
        if self.sigv4:
            _require_botocore()

    # ---- sending

    def _post_token(self, url: str, form: Mapping[str, str]) -> tuple[int, bytes]:
        headers = {
            k: v
            for k, v in self.headers.items()
            if k not in ("Content-Type", "Authorization", ACCESS_DELEGATION)
        }
        try:
            r = self.session.post(url, data=dict(form), headers=headers, timeout=self.timeout)
        except requests.RequestException as e:
            raise exc.OAuthError(
                f"fetching an OAuth2 token from {url} failed: {_cause(e)}"
            ) from None
        return r.status_code, r.content

    def request(
        self,
        method: str,
        path: str,
        *,
        about: str,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        retry: bool | None = None,
        commit: bool = False,
        ok: tuple[int, ...] = (200, 201, 202, 204),
    ) -> requests.Response:
        """Sends one request (``path`` under the base URI, or a full URL) and returns the
        response of status ``ok``; otherwise raises the frazil error for it
        (:func:`~frazil.rest.wire.error_from_response` with ``about``). ``retry`` defaults to
        whether the method is idempotent or the request carries an ``Idempotency-Key``."""
        url = path if path.startswith(("http://", "https://")) else self.base_uri + path
        shown = f"{method} {path.split('?', 1)[0]}"
        data = None if body is None else json.dumps(body).encode("utf-8")
        extra = dict(headers or {})
        if retry is None:
            retry = method in IDEMPOTENT_METHODS or "Idempotency-Key" in extra
        attempt = 0
        refreshed = False
        while True:
            sent = {**self.headers, **self.auth.headers(), **extra}
            if self.sigv4:
                sent = self._sign(method, url, params, data, sent)
            response: requests.Response | None = None
            try:
                response = self.session.request(
                    method,
                    url,
                    data=data,
                    params=dict(params) if params else None,
                    headers=sent,
                    timeout=self.timeout,
                )
            except requests.ConnectTimeout as e:
                # Never reached the server: safe to repeat whatever the method.
                failure: BaseException = e
                may_retry = True
            except (requests.ConnectionError, requests.Timeout) as e:
                failure = e
                may_retry = retry
            except requests.RequestException as e:
                # A bad URL, too many redirects, a broken body: repeating cannot help.
                failure = e
                may_retry = False
            else:
                status = response.status_code
                if status in ok:
                    return response
                if status in (401, 419) and not refreshed and self.auth.can_refresh:
                    refreshed = True
                    if self.auth.refresh_after_unauthorized(sent):
                        continue
                may_retry = status == 429 or (retry and status in RETRY_STATUSES)
                if not may_retry or attempt >= self.retry.max_retries:
                    raise error_from_response(
                        status, response.content, about=about, request=shown, commit=commit
                    )
                failure = exc.RESTError(f"{shown}: HTTP {status}")
            if response is None and (not may_retry or attempt >= self.retry.max_retries):
                if commit:
                    raise exc.CommitStateUnknownError(
                        f"{shown}: the request failed ({_cause(failure)}); the commit may or "
                        "may not have landed"
                    ) from None
                raise exc.RESTError(f"{shown}: the request failed: {_cause(failure)}") from None
            attempt += 1
            wait = self.retry.wait(attempt, response)
            logger.info(
                "%s failed (%s); retry %d of %d in %.2f s",
                shown,
                f"HTTP {response.status_code}" if response is not None else _cause(failure),
                attempt,
                self.retry.max_retries,
                wait,
            )
            time.sleep(wait)

    def _sign(
        self,
        method: str,
        url: str,
        params: Mapping[str, str] | None,
        data: bytes | None,
        headers: Mapping[str, str],
    ) -> dict[str, str]:
        import hashlib

        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.session import Session

        credentials = Session().get_credentials()
        if credentials is None:
            raise exc.UnauthorizedError(
                "rest.sigv4-enabled: no AWS credentials found by botocore's default chain"
            )
        prepared = requests.Request(method, url, params=dict(params) if params else None).prepare()
        out = dict(headers)
        bearer = out.pop("Authorization", None)
        if bearer is not None:
            # The signature takes the Authorization header; keep the bearer beside it.
            out["Original-Authorization"] = bearer
        out["x-amz-content-sha256"] = hashlib.sha256(data or b"").hexdigest()
        aws = AWSRequest(method=method, url=prepared.url, data=data or b"", headers=out)
        SigV4Auth(credentials, self.signing_name, self.signing_region or "us-east-1").add_auth(aws)
        return dict(aws.headers.items())

    def close(self) -> None:
        self.session.close()


def _cause(e: BaseException) -> str:
    # requests' messages may hold the URL (never a secret here) but not headers.
    return type(e).__name__ + (f": {e}" if str(e) else "")


def _require_botocore() -> None:
    try:
        import botocore  # noqa: F401
    except ImportError:
        raise exc.InvalidArgumentError(
            "rest.sigv4-enabled=true needs botocore: pip install 'frazil[sigv4]'"
        ) from None
