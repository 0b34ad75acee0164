"""Any scheme fsspec knows (``memory://``, ``gs://``, ``abfs://``, ...), when fsspec is installed.

Filesystems are built from the properties PyIceberg's ``FsspecFileIO`` reads (``gcs.*``,
``adls.*``, ``s3.*``), one per scheme and configuration. None of these stores has a
create-if-absent through fsspec, so ``write(overwrite=False)`` checks and then writes
(not atomic) and ``supports_atomic_create`` is False. Local paths and ``file:`` URIs handed to
this class are written with :mod:`frazil.io.local`'s atomic create all the same.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from frazil.exceptions import InvalidArgumentError, UnsupportedError
from frazil.io.base import (
    LOCAL_SCHEMES,
    FileIO,
    add_location_note,
    delete_idempotent,
    file_exists,
    file_not_found,
    first_property,
    location_scheme,
    property_bool,
    property_float,
)
from frazil.io.local import LocalFileIO

if TYPE_CHECKING:
    import fsspec as fsspec_module
    import pyarrow.fs

__all__ = ["FsspecFileIO", "fsspec_storage_options", "require_fsspec_protocol"]

logger = logging.getLogger(__name__)


def require_fsspec_protocol(scheme: str) -> None:
    """Raises :class:`~frazil.exceptions.UnsupportedError` naming ``scheme`` unless fsspec is
    installed, knows the scheme and can import its implementation."""
    try:
        import fsspec
    except ImportError:
        raise UnsupportedError(
            f"no FileIO for {scheme}:// locations: install fsspec (pip install 'frazil[fsspec]')"
            " and its filesystem for that scheme"
        ) from None
    try:
        fsspec.get_filesystem_class(scheme)
    except ValueError:
        raise UnsupportedError(f"fsspec knows no filesystem for {scheme}:// locations") from None
    except ImportError as exc:
        raise UnsupportedError(
            f"the fsspec filesystem for {scheme}:// locations is not installed: {exc}"
        ) from None


def _drop_none(options: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in options.items() if value is not None}


def fsspec_storage_options(scheme: str, properties: Mapping[str, str]) -> dict[str, Any]:
    """Keyword arguments for the fsspec filesystem of ``scheme`` under ``properties``."""
    if scheme in ("gs", "gcs"):
        session_kwargs = properties.get("gcs.session-kwargs")
        try:
            session = json.loads(session_kwargs) if session_kwargs else None
        except ValueError:
            raise InvalidArgumentError(
                f"property gcs.session-kwargs={session_kwargs!r} is not a JSON object"
            ) from None
        return _drop_none(
            {
                "project": properties.get("gcs.project-id"),
                "access": properties.get("gcs.access"),
                "token": properties.get("gcs.oauth2.token"),
                "consistency": properties.get("gcs.consistency"),
                "cache_timeout": property_float(properties, "gcs.cache-timeout"),
                "requester_pays": property_bool(properties, "gcs.requester-pays"),
                "session_kwargs": session,
                "endpoint_url": properties.get("gcs.service.host"),
                "default_location": properties.get("gcs.default-bucket-location"),
                "version_aware": property_bool(properties, "gcs.version-aware"),
            }
        )
    if scheme in ("abfs", "abfss", "az", "adl", "wasb", "wasbs"):
        return _drop_none(
            {
                "connection_string": properties.get("adls.connection-string"),
                "account_name": properties.get("adls.account-name"),
                "account_key": properties.get("adls.account-key"),
                "sas_token": properties.get("adls.sas-token"),
                "tenant_id": properties.get("adls.tenant-id"),
                "client_id": properties.get("adls.client-id"),
                "client_secret": properties.get("adls.client-secret"),
                "anon": property_bool(properties, "adls.anon"),
            }
        )
    if scheme in ("s3", "s3a", "s3n"):
        client = _drop_none(
            {"region_name": first_property(properties, "s3.region", "client.region")}
        )
        return _drop_none(
            {
                "endpoint_url": properties.get("s3.endpoint"),
                "key": first_property(properties, "s3.access-key-id", "client.access-key-id"),
                "secret": first_property(
                    properties, "s3.secret-access-key", "client.secret-access-key"
                ),
                "token": first_property(properties, "s3.session-token", "client.session-token"),
                "anon": property_bool(properties, "s3.anonymous"),
                "client_kwargs": client or None,
            }
        )
    return {}


class FsspecFileIO(FileIO):
    """Locations of any scheme fsspec knows. Not ``supports_atomic_create``."""

    def __init__(self, properties: Mapping[str, str] | None = None) -> None:
        super().__init__(properties)
        self._filesystems: dict[str, fsspec_module.AbstractFileSystem] = {}
        self._lock = threading.Lock()
        self._local = LocalFileIO(self.properties)

    def _fs(self, scheme: str) -> fsspec_module.AbstractFileSystem:
        with self._lock:
            fs = self._filesystems.get(scheme)
            if fs is None:
                require_fsspec_protocol(scheme)
                import fsspec

                options = fsspec_storage_options(scheme, self.properties)
                fs = fsspec.filesystem(scheme, **options)
                self._filesystems[scheme] = fs
            return fs

    def _resolve(self, location: str) -> tuple[fsspec_module.AbstractFileSystem, str]:
        fs = self._fs(location_scheme(location))
        return fs, fs._strip_protocol(location)

    @staticmethod
    def _is_local(location: str) -> bool:
        return location_scheme(location) in LOCAL_SCHEMES

    def read(self, location: str) -> bytes:
        if self._is_local(location):
            return self._local.read(location)
        fs, path = self._resolve(location)
        try:
            data: bytes = fs.cat_file(path)
            return data
        except FileNotFoundError:
            raise file_not_found(location) from None
        except OSError as exc:
            add_location_note(exc, "reading", location)
            raise

    def write(self, location: str, data: bytes, *, overwrite: bool = False) -> None:
        if self._is_local(location):
            self._local.write(location, data, overwrite=overwrite)
            return
        fs, path = self._resolve(location)
        # Not atomic: another writer may create the file between this check and the write.
        if not overwrite and fs.exists(path):
            raise file_exists(location)
        try:
            try:
                fs.pipe_file(path, bytes(data))
            except FileNotFoundError:
                # A filesystem with real directories; object stores never get here, and calling
                # makedirs on them up front could create a bucket.
                fs.makedirs(fs._parent(path), exist_ok=True)
                fs.pipe_file(path, bytes(data))
        except OSError as exc:
            add_location_note(exc, "writing", location)
            raise

    def exists(self, location: str) -> bool:
        if self._is_local(location):
            return self._local.exists(location)
        fs, path = self._resolve(location)
        return bool(fs.exists(path))

    def delete(self, location: str) -> None:
        if self._is_local(location):
            self._local.delete(location)
            return
        fs, path = self._resolve(location)
        delete_idempotent(location, lambda: fs.rm_file(path))

    def size(self, location: str) -> int:
        if self._is_local(location):
            return self._local.size(location)
        fs, path = self._resolve(location)
        try:
            info = fs.info(path)
        except FileNotFoundError:
            raise file_not_found(location) from None
        if info.get("type") != "file":
            raise file_not_found(location)
        return int(info["size"])

    def list_prefix(self, prefix: str) -> list[str]:
        if self._is_local(prefix):
            return self._local.list_prefix(prefix)
        fs, root = self._resolve(prefix)
        root = root.rstrip("/")
        try:
            found = fs.find(root)
        except FileNotFoundError:
            return []
        base = prefix.rstrip("/")
        locations = []
        for path in found:
            # find() may include the root itself when the prefix names a file.
            if path.startswith(root + "/"):
                locations.append(f"{base}/{path[len(root) + 1 :]}")
        return sorted(locations)

    def filesystem(self, location: str) -> tuple[pyarrow.fs.FileSystem, str]:
        if self._is_local(location):
            return self._local.filesystem(location)
        import pyarrow.fs

        fs, path = self._resolve(location)
        return pyarrow.fs.PyFileSystem(pyarrow.fs.FSSpecHandler(fs)), path
