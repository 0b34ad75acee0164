"""What every FileIO shares: the :class:`FileIO` base class, the scheme sets, location forms
(:func:`location_scheme`, :func:`local_path`), the errors implementations raise and the property
readers their configuration uses. The implementations (:mod:`frazil.io.local`,
:mod:`frazil.io.s3`, :mod:`frazil.io.fsspec`) build on this module; :mod:`frazil.io` chooses
between them and re-exports these names.
"""

from __future__ import annotations

import abc
import errno
import logging
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Literal, TypeVar, overload

from frazil.exceptions import InvalidArgumentError, UnsupportedError
from frazil.io.paths import has_scheme

if TYPE_CHECKING:
    import pyarrow.fs

__all__ = [
    "DEFAULT_MAX_WORKERS",
    "LOCAL_SCHEMES",
    "S3_SCHEMES",
    "FileIO",
    "add_location_note",
    "delete_idempotent",
    "file_exists",
    "file_not_found",
    "first_property",
    "local_path",
    "location_scheme",
    "property_bool",
    "property_float",
    "unsupported_scheme",
]

_logger = logging.getLogger(__name__)

LOCAL_SCHEMES = frozenset({"", "file"})
S3_SCHEMES = frozenset({"s3", "s3a", "s3n"})

# Threads for read_many/delete_many when the caller does not say: the work is I/O-bound
# (pyarrow and the OS release the GIL), so more threads than cores pays off for object stores.
DEFAULT_MAX_WORKERS = 16

T = TypeVar("T")


def location_scheme(location: str) -> str:
    """The lower-cased URI scheme of ``location``, ``""`` for a plain path (a one-letter
    "scheme" is a Windows drive letter, so a plain path too)."""
    if not has_scheme(location):
        return ""
    scheme = location.partition(":")[0]
    return "" if len(scheme) == 1 else scheme.lower()


def file_not_found(location: str) -> FileNotFoundError:
    return FileNotFoundError(errno.ENOENT, "No such file", location)


def file_exists(location: str) -> FileExistsError:
    return FileExistsError(errno.EEXIST, "File already exists", location)


def add_location_note(exc: BaseException, action: str, location: str) -> None:
    """Notes on ``exc`` which file failed, so an error from a filesystem library or a thread
    pool still names its location; the exception keeps its type."""
    if hasattr(exc, "add_note"):  # Python 3.11+
        exc.add_note(f"while {action} {location}")


def delete_idempotent(location: str, remove: Callable[[], object]) -> None:
    """Runs ``remove`` (one implementation's delete of ``location``): a file already gone is not
    an error, since deletes are retried and repeated; any other OS error names the location."""
    try:
        remove()
    except FileNotFoundError:
        _logger.debug("delete %s: already absent", location)
        return
    except OSError as exc:
        add_location_note(exc, "deleting", location)
        raise
    _logger.debug("deleted %s", location)


def property_bool(properties: Mapping[str, str], key: str) -> bool | None:
    """A boolean property (``true``/``false``, any case), ``None`` when absent."""
    value = properties.get(key)
    if value is None:
        return None
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise InvalidArgumentError(f"property {key}={value!r} is not a boolean (true or false)")


def property_float(properties: Mapping[str, str], key: str) -> float | None:
    value = properties.get(key)
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        raise InvalidArgumentError(f"property {key}={value!r} is not a number") from None


def first_property(properties: Mapping[str, str], *keys: str) -> str | None:
    for key in keys:
        value = properties.get(key)
        if value is not None:
            return value
    return None


class FileIO(abc.ABC):
    """Whole-file access by location. Implementations are thread-safe."""

    def __init__(self, properties: Mapping[str, str] | None = None) -> None:
        self.properties: dict[str, str] = dict(properties or {})

    @abc.abstractmethod
    def read(self, location: str) -> bytes:
        """The file's content. ``FileNotFoundError`` (naming the location) if it is missing."""

    @abc.abstractmethod
    def write(self, location: str, data: bytes, *, overwrite: bool = False) -> None:
        """Writes the whole file. Without ``overwrite``, raises ``FileExistsError`` if the file
        exists; where ``supports_atomic_create`` that check and the creation are one atomic step
        and readers never see a partial file."""

    @abc.abstractmethod
    def exists(self, location: str) -> bool: ...

    @abc.abstractmethod
    def delete(self, location: str) -> None:
        """Deletes a file; a missing file is not an error."""

    @abc.abstractmethod
    def size(self, location: str) -> int:
        """The file's length in bytes. ``FileNotFoundError`` (naming the location) if it is
        missing."""

    @abc.abstractmethod
    def list_prefix(self, prefix: str) -> list[str]:
        """Every file location under a directory prefix, recursively (for purges and orphan
        checks), sorted, spelled like ``prefix`` (same scheme and form). A prefix that does not
        exist lists nothing."""

    @abc.abstractmethod
    def filesystem(self, location: str) -> tuple[pyarrow.fs.FileSystem, str]:
        """A pyarrow filesystem and the path within it, for reading and writing Parquet."""

    @property
    def supports_atomic_create(self) -> bool:
        """Whether ``write(overwrite=False)`` is an atomic create-if-absent (local and HDFS-like
        filesystems yes, object stores no)."""
        return False

    @overload
    def read_many(
        self,
        locations: Sequence[str],
        max_workers: int | None = None,
        *,
        missing_ok: Literal[False] = False,
    ) -> list[bytes]: ...

    @overload
    def read_many(
        self, locations: Sequence[str], max_workers: int | None = None, *, missing_ok: bool
    ) -> list[bytes | None]: ...

    def read_many(
        self, locations: Sequence[str], max_workers: int | None = None, *, missing_ok: bool = False
    ) -> list[bytes] | list[bytes | None]:
        """Reads several files concurrently, results in the order of ``locations``. The first
        failure (in that order) is raised, naming its location; with ``missing_ok`` a missing
        file reads as ``None`` instead (cleanup after an interrupted purge or expiry)."""
        if not missing_ok:
            return _run_many(self.read, list(locations), max_workers)

        def read_or_none(location: str) -> bytes | None:
            try:
                return self.read(location)
            except FileNotFoundError:
                return None

        return _run_many(read_or_none, list(locations), max_workers)

    def delete_many(self, locations: Iterable[str], max_workers: int | None = None) -> None:
        """Deletes several files concurrently; missing files are ignored."""
        _run_many(self.delete, list(dict.fromkeys(locations)), max_workers)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _run_many(fn: Callable[[str], T], locations: list[str], max_workers: int | None) -> list[T]:
    if max_workers is not None and max_workers < 1:
        raise InvalidArgumentError(f"max_workers must be at least 1, got {max_workers}")
    if not locations:
        return []
    workers = min(len(locations), max_workers or DEFAULT_MAX_WORKERS)
    if workers == 1:
        return [fn(location) for location in locations]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="frazil-io") as pool:
        # map() yields in input order and re-raises the first failure in that order.
        return list(pool.map(fn, locations))


def unsupported_scheme(io: FileIO, location: str) -> UnsupportedError:
    scheme = location_scheme(location) or "a local path"
    return UnsupportedError(
        f"{type(io).__name__} does not handle {scheme!r} locations ({location}); "
        f"use load_file_io(properties, location) to get one that does"
    )


def local_path(location: str) -> str:
    """The OS path of a local location: a plain path, ``file:/p``, ``file:///p`` or
    ``file://localhost/p`` (the forms Java, Hadoop and Python write)."""
    scheme = location_scheme(location)
    if scheme == "":
        return location
    if scheme != "file":
        raise UnsupportedError(f"{location} is not a local path or file: URI")
    rest = location[len("file:") :]
    if rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        if authority not in ("", "localhost"):
            raise UnsupportedError(
                f"{location}: file URIs with a remote host ({authority!r}) are not supported"
            )
        rest = slash + path
    if os.name == "nt" and re.match(r"^/[A-Za-z]:", rest):
        rest = rest[1:]  # file:///C:/dir on Windows
    return rest
