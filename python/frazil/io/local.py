"""Local files: plain paths and ``file:`` URIs.

``write(overwrite=False)`` is the primitive the filesystem catalog commits with, so it must
never replace an existing file and never let a reader see a partial one. A rename cannot give
that (POSIX ``rename`` silently replaces), so the content goes to a temp file in the target's
directory, is fsynced, and is then hard-linked to the final name: ``link`` fails with EEXIST
when the name is taken, atomically, and the file appears whole.
"""

from __future__ import annotations

import errno
import logging
import os
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING

from frazil.io.base import (
    LOCAL_SCHEMES,
    FileIO,
    add_location_note,
    delete_idempotent,
    file_exists,
    file_not_found,
    local_path,
    location_scheme,
    unsupported_scheme,
)

if TYPE_CHECKING:
    import pyarrow.fs

__all__ = ["LocalFileIO"]

logger = logging.getLogger(__name__)

# errno values for which a filesystem cannot hard-link at all (FAT, some FUSE and SMB mounts);
# there the create falls back to O_EXCL, still no-replace but not all-or-nothing for readers.
_NO_HARD_LINKS = frozenset(
    {errno.EPERM, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP), errno.EMLINK}
)


def _fsync_dir(directory: str) -> None:
    # Makes the new directory entry durable; not every platform/filesystem allows it.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_fsynced(path: str, data: bytes, flags: int) -> None:
    fd = os.open(path, flags, 0o666)
    try:
        with open(fd, "wb", closefd=True) as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        os.unlink(path)
        raise


def atomic_write(path: str, data: bytes, *, overwrite: bool, location: str) -> None:
    """Writes ``data`` to the local ``path`` all at once (see the module docstring);
    ``location`` is what errors name."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    temp = os.path.join(directory, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
    _write_fsynced(temp, data, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        if overwrite:
            os.replace(temp, path)
        else:
            try:
                os.link(temp, path)
            except FileExistsError:
                raise file_exists(location) from None
            except OSError as exc:
                if exc.errno not in _NO_HARD_LINKS:
                    raise
                logger.warning(
                    "hard links unsupported in %s (%s); creating %s with O_EXCL instead, "
                    "readers may see it before it is complete",
                    directory,
                    exc.strerror,
                    location,
                )
                try:
                    _write_fsynced(path, data, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
                except FileExistsError:
                    raise file_exists(location) from None
    finally:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass  # os.replace consumed it
    _fsync_dir(directory)


class LocalFileIO(FileIO):
    """Local files. ``write(overwrite=False)`` is an atomic create-if-absent."""

    def __init__(self, properties: Mapping[str, str] | None = None) -> None:
        super().__init__(properties)

    def _path(self, location: str) -> str:
        if location_scheme(location) not in LOCAL_SCHEMES:
            raise unsupported_scheme(self, location)
        return local_path(location)

    @property
    def supports_atomic_create(self) -> bool:
        return True

    def read(self, location: str) -> bytes:
        path = self._path(location)
        try:
            with open(path, "rb") as f:
                return f.read()
        except FileNotFoundError:
            raise file_not_found(location) from None
        except OSError as exc:
            add_location_note(exc, "reading", location)
            raise

    def write(self, location: str, data: bytes, *, overwrite: bool = False) -> None:
        path = self._path(location)
        try:
            atomic_write(path, data, overwrite=overwrite, location=location)
        except FileExistsError:
            raise
        except OSError as exc:
            add_location_note(exc, "writing", location)
            raise

    def exists(self, location: str) -> bool:
        return os.path.exists(self._path(location))

    def delete(self, location: str) -> None:
        path = self._path(location)
        delete_idempotent(location, lambda: os.unlink(path))

    def size(self, location: str) -> int:
        try:
            return os.stat(self._path(location)).st_size
        except FileNotFoundError:
            raise file_not_found(location) from None

    def list_prefix(self, prefix: str) -> list[str]:
        root = self._path(prefix)
        if not os.path.isdir(root):
            return []
        base = prefix.rstrip("/")
        found: list[str] = []
        for directory, _dirs, files in os.walk(root):
            relative = os.path.relpath(directory, root)
            sub = "" if relative == "." else relative.replace(os.sep, "/") + "/"
            found.extend(f"{base}/{sub}{name}" for name in files)
        return sorted(found)

    def filesystem(self, location: str) -> tuple[pyarrow.fs.FileSystem, str]:
        import pyarrow.fs

        return pyarrow.fs.LocalFileSystem(), os.path.abspath(self._path(location))
