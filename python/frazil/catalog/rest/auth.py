"""Authentication of REST catalog requests: a static bearer ``token``, or the OAuth2
client-credentials flow on ``credential`` (``client_id:client_secret``), as the Java reference's
``OAuth2Util`` and PyIceberg do it: a form-encoded POST of ``grant_type=client_credentials``
with ``scope`` (default ``catalog``), ``audience`` and ``resource`` to ``oauth2-server-uri``
(default ``<uri>/v1/oauth/tokens``).

A fetched token is refreshed shortly before ``expires_in`` runs out, and once more when the
server answers 401 (the caller retries that request once). Secrets live only in this object's
private attributes: its ``repr`` shows none, and nothing here logs a token or a credential.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from frazil import exceptions as exc

__all__ = ["AuthSession", "parse_credential"]

logger = logging.getLogger(__name__)

CREDENTIAL = "credential"
TOKEN = "token"
SCOPE = "scope"
DEFAULT_SCOPE = "catalog"
OAUTH2_SERVER_URI = "oauth2-server-uri"
AUDIENCE = "audience"
RESOURCE = "resource"

# Refresh this long before the token expires (or at 10% of its life left, if shorter).
_REFRESH_MARGIN_S = 60.0

# (url, form fields) -> (status, body); the HTTP layer supplies it so that TLS options,
# timeouts and extra headers apply to the token endpoint too.
TokenPost = Callable[[str, Mapping[str, str]], tuple[int, bytes]]


def parse_credential(credential: str) -> tuple[str | None, str]:
    """``client_id:client_secret`` -> both parts; a credential without ``:`` is a secret alone
    (as in Java)."""
    if ":" in credential:
        client_id, secret = credential.split(":", 1)
        return client_id, secret
    return None, credential


class AuthSession:
    """The ``Authorization`` header of every request, kept fresh."""

    def __init__(self, properties: Mapping[str, str], uri: str, post: TokenPost) -> None:
        self._credential = properties.get(CREDENTIAL) or None
        self._token: str | None = properties.get(TOKEN) or None
        self._expires_at: float | None = None
        self._scope = properties.get(SCOPE) or DEFAULT_SCOPE
        self._audience = properties.get(AUDIENCE) or None
        self._resource = properties.get(RESOURCE) or None
        self._server_uri = properties.get(OAUTH2_SERVER_URI) or (
            uri.rstrip("/") + "/v1/oauth/tokens"
        )
        self._post = post
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        kind = "oauth2" if self._credential else ("token" if self._token else "none")
        return f"AuthSession({kind})"

    @property
    def can_refresh(self) -> bool:
        return self._credential is not None

    def headers(self) -> dict[str, str]:
        """The auth headers for a request now: fetches or refreshes the token when due."""
        with self._lock:
            if self._credential is not None and (self._token is None or self._due()):
                self._fetch()
            token = self._token
        return {"Authorization": f"Bearer {token}"} if token else {}

    def refresh_after_unauthorized(self, sent: Mapping[str, str]) -> bool:
        """After a 401: fetch a new token if one can be fetched (``True``: retry the request
        once). A token another thread already replaced counts as refreshed."""
        if self._credential is None:
            return False
        with self._lock:
            if sent.get("Authorization") == f"Bearer {self._token}":
                self._fetch()
        return True

    def _due(self) -> bool:
        if self._expires_at is None:
            return False
        return time.monotonic() >= self._expires_at

    def _fetch(self) -> None:
        assert self._credential is not None
        client_id, secret = parse_credential(self._credential)
        form = {"grant_type": "client_credentials", "client_secret": secret, "scope": self._scope}
        if client_id is not None:
            form["client_id"] = client_id
        if self._audience:
            form["audience"] = self._audience
        if self._resource:
            form["resource"] = self._resource
        status, body = self._post(self._server_uri, form)
        if status != 200:
            # OAuth2 errors ({"error": ..., "error_description": ...}) or an ErrorModel.
            raise exc.OAuthError(
                f"fetching an OAuth2 token from {self._server_uri} failed: HTTP {status}"
                f"{_oauth_detail(body)}"
            )
        data = _json(body)
        token = data.get("access_token") if isinstance(data, dict) else None
        if not isinstance(token, str) or not token:
            raise exc.OAuthError(
                f"the OAuth2 token response of {self._server_uri} has no access_token"
            )
        self._token = token
        expires_in = data.get("expires_in")
        if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool):
            margin = min(_REFRESH_MARGIN_S, 0.1 * float(expires_in))
            self._expires_at = time.monotonic() + float(expires_in) - margin
        else:
            self._expires_at = None
        logger.debug("fetched an OAuth2 token from %s", self._server_uri)


def _json(body: bytes) -> Any:
    import json

    try:
        return json.loads(body)
    except ValueError:
        return None


def _oauth_detail(body: bytes) -> str:
    data = _json(body)
    if not isinstance(data, dict):
        return ""
    if isinstance(data.get("error"), str):
        desc = data.get("error_description")
        return f": {data['error']}" + (f" ({desc})" if isinstance(desc, str) else "")
    err = data.get("error")
    if isinstance(err, dict) and isinstance(err.get("message"), str):
        return f": {err['message']}"
    return ""
