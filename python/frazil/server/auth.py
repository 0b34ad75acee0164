"""Authentication of ``frazil serve``: an OAuth2 client-credentials token endpoint
(``POST /v1/oauth/tokens``) backed by configured clients, and bearer-token checks.

Clients come from a YAML file (``--auth-config``)::

    token-lifetime-seconds: 3600        # optional, default 3600
    clients:
      - id: spark
        secret-sha256: 9f86d08...       # hex SHA-256 of the secret (preferred), or
      - id: etl
        secret: plain-text-secret       # hashed when read, never kept

Secrets are kept only as SHA-256 digests and compared in constant time; tokens are opaque random
strings kept in memory (a restart logs everyone out) until they expire. Nothing here logs a
secret or a token.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote

from frazil.exceptions import InvalidArgumentError, OAuthError, UnauthorizedError
from frazil.rest.wire import OAuthTokenResponse

__all__ = ["AuthConfig", "TokenStore", "load_auth_config"]

DEFAULT_TOKEN_LIFETIME_S = 3600
# RFC 8693 token exchange: Java's client trades its token for a fresh one before it expires.
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
# Tokens kept at most: a flood of token requests cannot grow memory without bound.
MAX_TOKENS = 100_000


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8")).digest()


@dataclass(frozen=True)
class AuthConfig:
    """Client ids with their secrets' SHA-256 digests, and the lifetime of issued tokens."""

    clients: Mapping[str, bytes] = field(default_factory=dict, repr=False)
    token_lifetime_s: int = DEFAULT_TOKEN_LIFETIME_S

    @classmethod
    def from_secrets(
        cls, clients: Mapping[str, str], token_lifetime_s: int = DEFAULT_TOKEN_LIFETIME_S
    ) -> AuthConfig:
        """From plain ``{client_id: secret}`` (tests, embedding); only digests are kept."""
        return cls({k: _digest(v) for k, v in clients.items()}, token_lifetime_s)

    @classmethod
    def from_dict(cls, obj: Any, source: str = "auth config") -> AuthConfig:
        if not isinstance(obj, dict):
            raise InvalidArgumentError(f"{source}: expected a mapping")
        lifetime = obj.get("token-lifetime-seconds", DEFAULT_TOKEN_LIFETIME_S)
        if not isinstance(lifetime, int) or isinstance(lifetime, bool) or lifetime < 1:
            raise InvalidArgumentError(
                f"{source}: token-lifetime-seconds must be a positive integer"
            )
        entries = obj.get("clients")
        if not isinstance(entries, list) or not entries:
            raise InvalidArgumentError(f"{source}: 'clients' must be a non-empty list")
        clients: dict[str, bytes] = {}
        for i, entry in enumerate(entries):
            at = f"{source}: clients[{i}]"
            if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
                raise InvalidArgumentError(f"{at}: needs an 'id' string")
            if isinstance(entry.get("secret-sha256"), str):
                try:
                    digest = bytes.fromhex(entry["secret-sha256"])
                except ValueError:
                    raise InvalidArgumentError(f"{at}: secret-sha256 is not hex") from None
                if len(digest) != 32:
                    raise InvalidArgumentError(f"{at}: secret-sha256 is not a SHA-256 digest")
            elif isinstance(entry.get("secret"), str):
                digest = _digest(entry["secret"])
            else:
                raise InvalidArgumentError(f"{at}: needs 'secret-sha256' or 'secret'")
            clients[entry["id"]] = digest
        return cls(clients, lifetime)

    def check_client(self, client_id: str, secret: str) -> bool:
        expected = self.clients.get(client_id)
        # Compare against a dummy digest for unknown ids too, so timing does not tell them.
        ok = hmac.compare_digest(expected or b"\0" * 32, _digest(secret))
        return ok and expected is not None


def load_auth_config(path: str) -> AuthConfig:
    import yaml

    try:
        with open(path, encoding="utf-8") as f:
            obj = yaml.safe_load(f)
    except OSError as e:
        raise InvalidArgumentError(f"cannot read auth config {path}: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise InvalidArgumentError(f"auth config {path} is not valid YAML: {e}") from None
    return AuthConfig.from_dict(obj, f"auth config {path}")


class TokenStore:
    """Issued bearer tokens (by their SHA-256) and when they expire."""

    def __init__(self, config: AuthConfig, clock: Any = time.monotonic) -> None:
        self.config = config
        self._clock = clock
        self._tokens: dict[bytes, tuple[str, float]] = {}
        self._lock = threading.Lock()

    def issue(self, client_id: str) -> tuple[str, int]:
        token = secrets.token_urlsafe(32)
        now = self._clock()
        lifetime = self.config.token_lifetime_s
        with self._lock:
            if len(self._tokens) >= MAX_TOKENS:
                self._tokens = {k: v for k, v in self._tokens.items() if v[1] > now}
                while len(self._tokens) >= MAX_TOKENS:  # still full: forget the oldest
                    del self._tokens[next(iter(self._tokens))]
            self._tokens[_digest(token)] = (client_id, now + lifetime)
        return token, lifetime

    def check(self, token: str) -> str:
        """The client the token was issued to; :class:`UnauthorizedError` when unknown or
        expired (the message never holds the token)."""
        key = _digest(token)
        with self._lock:
            entry = self._tokens.get(key)
            if entry is not None and entry[1] <= self._clock():
                del self._tokens[key]
                raise UnauthorizedError("the bearer token has expired")
        if entry is None:
            raise UnauthorizedError("the bearer token is not valid")
        return entry[0]

    def check_header(self, authorization: str | None) -> str:
        if not authorization:
            raise UnauthorizedError("authentication required: send 'Authorization: Bearer <token>'")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise UnauthorizedError("authentication required: send 'Authorization: Bearer <token>'")
        return self.check(token.strip())

    def token_request(self, body: bytes, authorization: str | None) -> dict[str, Any]:
        """Answers a form-encoded token request (``client_credentials``, client secret in the
        form or as HTTP Basic; or a token exchange of a valid token). :class:`OAuthError`
        (``invalid_client``) or :class:`InvalidArgumentError` (``invalid_request``) else."""
        try:
            form = {
                k: v[0]
                for k, v in parse_qs(
                    body.decode("utf-8"), keep_blank_values=True, strict_parsing=False
                ).items()
            }
        except (UnicodeDecodeError, ValueError):
            raise InvalidArgumentError("the token request is not a form") from None
        grant = form.get("grant_type")
        scope = form.get("scope")
        if grant == TOKEN_EXCHANGE:
            client = self.check(form.get("subject_token", ""))
        elif grant == "client_credentials":
            client_id, secret = form.get("client_id"), form.get("client_secret")
            if authorization and authorization.lower().startswith("basic "):
                try:
                    decoded = base64.b64decode(authorization[6:].strip(), validate=True).decode()
                except (ValueError, UnicodeDecodeError):
                    raise OAuthError("invalid client authentication") from None
                basic_id, _, basic_secret = decoded.partition(":")
                client_id, secret = unquote(basic_id), unquote(basic_secret)
            if not client_id or secret is None:
                raise InvalidArgumentError("client_id and client_secret are required")
            if not self.config.check_client(client_id, secret):
                raise OAuthError("invalid client credentials")
            client = client_id
        else:
            raise InvalidArgumentError(f"unsupported grant_type {grant!r}")
        token, lifetime = self.issue(client)
        return OAuthTokenResponse(token, "bearer", lifetime, scope=scope).to_json()
