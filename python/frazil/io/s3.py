"""S3 through ``pyarrow.fs.S3FileSystem``, configured from Iceberg's ``s3.*`` properties.

Property mapping (names as PyIceberg and the Java ``S3FileIOProperties`` read them; where both
an ``s3.`` and a ``client.`` key exist, the ``s3.`` one wins):

============================================  ==============================================
``s3.endpoint``                               ``endpoint_override`` (``http://host:port`` ok)
``s3.access-key-id`` / ``client.…``           ``access_key``
``s3.secret-access-key`` / ``client.…``       ``secret_key``
``s3.session-token`` / ``client.…``           ``session_token``
``s3.region`` / ``client.region``             ``region``
``s3.role-arn`` / ``client.role-arn``         ``role_arn``
``s3.role-session-name`` / ``client.…``       ``session_name``
``s3.anonymous``                              ``anonymous``
``s3.proxy-uri``                              ``proxy_options``
``s3.connect-timeout``, ``s3.request-timeout``  seconds
``s3.force-virtual-addressing`` (PyIceberg)   ``force_virtual_addressing``
``s3.path-style-access`` (Java)               its negation
============================================  ==============================================

pyarrow addresses virtual-host style unless an endpoint is given, so path style needs
``s3.endpoint``. ``s3.resolve-region=true`` asks S3 for each bucket's region (a network call,
once per bucket) instead of trusting ``s3.region``.

S3 has no create-if-absent through pyarrow, so ``write(overwrite=False)`` checks existence and
then writes: two writers can both pass the check and the later upload wins. That is why the
filesystem catalog refuses object stores.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

import pyarrow.fs

from frazil.exceptions import InvalidArgumentError
from frazil.io.base import (
    S3_SCHEMES,
    FileIO,
    add_location_note,
    delete_idempotent,
    file_exists,
    file_not_found,
    first_property,
    location_scheme,
    property_bool,
    property_float,
    unsupported_scheme,
)

__all__ = ["S3FileIO", "s3_filesystem_options"]

logger = logging.getLogger(__name__)

S3_ENDPOINT = "s3.endpoint"
S3_ACCESS_KEY_ID = "s3.access-key-id"
S3_SECRET_ACCESS_KEY = "s3.secret-access-key"
S3_SESSION_TOKEN = "s3.session-token"
S3_REGION = "s3.region"
S3_RESOLVE_REGION = "s3.resolve-region"
S3_ROLE_ARN = "s3.role-arn"
S3_ROLE_SESSION_NAME = "s3.role-session-name"
S3_ANONYMOUS = "s3.anonymous"
S3_PROXY_URI = "s3.proxy-uri"
S3_CONNECT_TIMEOUT = "s3.connect-timeout"
S3_REQUEST_TIMEOUT = "s3.request-timeout"
S3_FORCE_VIRTUAL_ADDRESSING = "s3.force-virtual-addressing"
S3_PATH_STYLE_ACCESS = "s3.path-style-access"
CLIENT_REGION = "client.region"
CLIENT_ACCESS_KEY_ID = "client.access-key-id"
CLIENT_SECRET_ACCESS_KEY = "client.secret-access-key"
CLIENT_SESSION_TOKEN = "client.session-token"
CLIENT_ROLE_ARN = "client.role-arn"
CLIENT_ROLE_SESSION_NAME = "client.role-session-name"


def s3_filesystem_options(properties: Mapping[str, str]) -> dict[str, Any]:
    """The ``pyarrow.fs.S3FileSystem`` keyword arguments for ``properties`` (see the module
    docstring); raises :class:`~frazil.exceptions.InvalidArgumentError` for a malformed or
    contradictory value."""
    options: dict[str, Any] = {}
    simple = {
        "endpoint_override": (S3_ENDPOINT,),
        "access_key": (S3_ACCESS_KEY_ID, CLIENT_ACCESS_KEY_ID),
        "secret_key": (S3_SECRET_ACCESS_KEY, CLIENT_SECRET_ACCESS_KEY),
        "session_token": (S3_SESSION_TOKEN, CLIENT_SESSION_TOKEN),
        "region": (S3_REGION, CLIENT_REGION),
        "role_arn": (S3_ROLE_ARN, CLIENT_ROLE_ARN),
        "session_name": (S3_ROLE_SESSION_NAME, CLIENT_ROLE_SESSION_NAME),
        "proxy_options": (S3_PROXY_URI,),
    }
    for option, keys in simple.items():
        value = first_property(properties, *keys)
        if value is not None:
            options[option] = value
    if (options.get("access_key") is None) != (options.get("secret_key") is None):
        raise InvalidArgumentError(
            f"S3 credentials need both {S3_ACCESS_KEY_ID} and {S3_SECRET_ACCESS_KEY}, "
            "or neither (to use the AWS default chain)"
        )
    for option, key in (
        ("connect_timeout", S3_CONNECT_TIMEOUT),
        ("request_timeout", S3_REQUEST_TIMEOUT),
    ):
        seconds = property_float(properties, key)
        if seconds is not None:
            options[option] = seconds
    anonymous = property_bool(properties, S3_ANONYMOUS)
    if anonymous is not None:
        options["anonymous"] = anonymous
    virtual = property_bool(properties, S3_FORCE_VIRTUAL_ADDRESSING)
    path_style = property_bool(properties, S3_PATH_STYLE_ACCESS)
    if virtual is not None and path_style is not None and virtual == path_style:
        raise InvalidArgumentError(
            f"{S3_FORCE_VIRTUAL_ADDRESSING}={properties[S3_FORCE_VIRTUAL_ADDRESSING]} "
            f"contradicts {S3_PATH_STYLE_ACCESS}={properties[S3_PATH_STYLE_ACCESS]}"
        )
    if virtual is None and path_style is not None:
        virtual = not path_style
    if virtual is not None:
        options["force_virtual_addressing"] = virtual
    return options


# One S3FileSystem per distinct configuration: each holds an AWS SDK client with its connection
# pool and credential provider, and they are thread-safe.
_FILESYSTEMS: dict[tuple[tuple[str, Any], ...], pyarrow.fs.S3FileSystem] = {}
_FILESYSTEMS_LOCK = threading.Lock()


def _cached_filesystem(options: Mapping[str, Any]) -> pyarrow.fs.S3FileSystem:
    key = tuple(sorted(options.items()))
    with _FILESYSTEMS_LOCK:
        fs = _FILESYSTEMS.get(key)
        if fs is None:
            fs = pyarrow.fs.S3FileSystem(**options)
            _FILESYSTEMS[key] = fs
        return fs


_REGIONS: dict[str, str] = {}


def _bucket_region(bucket: str, fallback: str | None) -> str | None:
    if bucket not in _REGIONS:
        try:
            _REGIONS[bucket] = pyarrow.fs.resolve_s3_region(bucket)
        except OSError as exc:
            logger.warning("cannot resolve the region of bucket %s: %s", bucket, exc)
            return fallback
    return _REGIONS[bucket]


class S3FileIO(FileIO):
    """``s3://``, ``s3a://`` and ``s3n://`` locations through pyarrow's S3 filesystem.

    Not ``supports_atomic_create``: ``write(overwrite=False)`` checks, then writes.
    """

    def __init__(self, properties: Mapping[str, str] | None = None) -> None:
        super().__init__(properties)
        # Validate the configuration now rather than at the first read.
        self._options = s3_filesystem_options(self.properties)
        self._resolve_region = bool(property_bool(self.properties, S3_RESOLVE_REGION))

    def _resolve(self, location: str) -> tuple[pyarrow.fs.S3FileSystem, str]:
        scheme = location_scheme(location)
        if scheme not in S3_SCHEMES:
            raise unsupported_scheme(self, location)
        path = location[len(scheme) + 3 :] if location[len(scheme) :].startswith("://") else ""
        bucket = path.split("/", 1)[0]
        if not bucket:
            raise InvalidArgumentError(f"{location} names no bucket (expected s3://bucket/key)")
        options = self._options
        if self._resolve_region:
            options = {**options, "region": _bucket_region(bucket, options.get("region"))}
        return _cached_filesystem(options), path

    def read(self, location: str) -> bytes:
        fs, path = self._resolve(location)
        try:
            with fs.open_input_stream(path) as stream:
                data: bytes = stream.read()
                return data
        except FileNotFoundError:
            raise file_not_found(location) from None
        except OSError as exc:
            add_location_note(exc, "reading", location)
            raise

    def write(self, location: str, data: bytes, *, overwrite: bool = False) -> None:
        fs, path = self._resolve(location)
        # Not atomic: another writer may create the object between this check and the upload.
        if (
            not overwrite
            and self._file_info(fs, path, location).type != pyarrow.fs.FileType.NotFound
        ):
            raise file_exists(location)
        try:
            with fs.open_output_stream(path) as stream:
                stream.write(data)
        except OSError as exc:
            add_location_note(exc, "writing", location)
            raise

    def exists(self, location: str) -> bool:
        fs, path = self._resolve(location)
        return bool(self._file_info(fs, path, location).type != pyarrow.fs.FileType.NotFound)

    def delete(self, location: str) -> None:
        fs, path = self._resolve(location)
        delete_idempotent(location, lambda: fs.delete_file(path))

    def size(self, location: str) -> int:
        fs, path = self._resolve(location)
        info = self._file_info(fs, path, location)
        if info.type != pyarrow.fs.FileType.File:
            raise file_not_found(location)
        return int(info.size)

    def list_prefix(self, prefix: str) -> list[str]:
        fs, path = self._resolve(prefix)
        root = path.rstrip("/")
        scheme = location_scheme(prefix)
        selector = pyarrow.fs.FileSelector(root, recursive=True, allow_not_found=True)
        try:
            infos = fs.get_file_info(selector)
        except OSError as exc:
            add_location_note(exc, "listing", prefix)
            raise
        return sorted(
            f"{scheme}://{info.path}" for info in infos if info.type == pyarrow.fs.FileType.File
        )

    def filesystem(self, location: str) -> tuple[pyarrow.fs.FileSystem, str]:
        return self._resolve(location)

    @staticmethod
    def _file_info(fs: pyarrow.fs.FileSystem, path: str, location: str) -> pyarrow.fs.FileInfo:
        try:
            return fs.get_file_info(path)
        except OSError as exc:
            add_location_note(exc, "checking", location)
            raise

    def __repr__(self) -> str:
        endpoint = self._options.get("endpoint_override")
        return f"S3FileIO(endpoint={endpoint!r})" if endpoint else "S3FileIO()"
