"""File I/O under catalogs and tables: local files, S3 (pyarrow), anything else through fsspec.

A :class:`FileIO` reads and writes whole files by location (a path or a URI) and hands pyarrow
a filesystem for Parquet. Iceberg writes each file once, so writes are whole-file, and
``write(..., overwrite=False)`` (the default) never replaces an existing file: the filesystem
catalog's commit relies on that (``supports_atomic_create``).

Implementations:

- :class:`~frazil.io.local.LocalFileIO`: plain paths and ``file:`` URIs; ``write`` without
  ``overwrite`` is an atomic create-if-absent (temp file, fsync, hard link).
- :class:`~frazil.io.s3.S3FileIO`: ``s3://``, ``s3a://``, ``s3n://`` through
  ``pyarrow.fs.S3FileSystem`` configured from Iceberg's ``s3.*`` properties.
- :class:`~frazil.io.fsspec.FsspecFileIO`: every other scheme fsspec knows (``memory://``,
  ``gs://``, ``abfs://``, ...).

:func:`load_file_io` picks the implementation from the catalog's properties (``py-io-impl``
names a class explicitly) and the location's scheme.

Trust: a table's FileIO is configured by its catalog (or the caller of
``StaticTable.from_metadata``), never by the table's metadata. Table metadata can be written by
anyone with write access to the storage, so a table property must not choose code to import
(``py-io-impl``) nor where bytes or credentials go (endpoints, keys, tokens, regions, proxies,
role ARNs). :func:`table_file_io_properties` is the one place table properties meet FileIO
properties: only :data:`TABLE_TUNABLE_IO_PROPERTIES` pass, everything else is ignored (never an
error, so tables written by other engines still load).

Missing and already-existing files raise the builtin ``FileNotFoundError`` / ``FileExistsError``
(their ``filename`` is the location as given); other I/O failures keep their type and gain a note
naming the location; configuration mistakes raise :mod:`frazil.exceptions`.
"""

from __future__ import annotations

import abc
import errno
import importlib
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
    "PY_IO_IMPL",
    "TABLE_TUNABLE_IO_PROPERTIES",
    "FileIO",
    "FsspecFileIO",
    "LocalFileIO",
    "S3FileIO",
    "is_under_location",
    "load_file_io",
    "table_file_io_properties",
    "under_location",
]

PY_IO_IMPL = "py-io-impl"

_logger = logging.getLogger(__name__)

# The only table properties a table's FileIO sees: timeouts of the S3 client, which tune how long
# to wait but not where requests (or credentials) go. Everything else that configures a FileIO
# comes from the catalog.
TABLE_TUNABLE_IO_PROPERTIES = frozenset({"s3.connect-timeout", "s3.request-timeout"})

# Table property keys that look like FileIO configuration: ignoring one of these is worth a
# warning (the table may have been written for a different setup, or be hostile).
_IO_KEY_PREFIXES = ("py-", "s3.", "gcs.", "adls.", "client.", "hf.", "oss.", "azure.", "aws.")
_IO_KEYS = frozenset({"warehouse"})
_warned_ignored: set[frozenset[str]] = set()

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


def _import_file_io(impl: str) -> type[FileIO]:
    module_name, _, class_name = impl.rpartition(".")
    if not module_name:
        raise InvalidArgumentError(
            f"{PY_IO_IMPL}={impl!r} is not a dotted path to a class (module.ClassName)"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InvalidArgumentError(
            f"{PY_IO_IMPL}={impl!r}: cannot import module {module_name!r}: {exc}"
        ) from exc
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, FileIO)):
        raise InvalidArgumentError(
            f"{PY_IO_IMPL}={impl!r}: {class_name!r} in {module_name!r} is not a FileIO class"
        )
    return cls


def table_file_io_properties(
    catalog_properties: Mapping[str, str], table_properties: Mapping[str, str] | None
) -> dict[str, str]:
    """The FileIO properties of a table: ``catalog_properties`` (trusted configuration) with
    only the :data:`TABLE_TUNABLE_IO_PROPERTIES` of ``table_properties`` (untrusted table
    metadata) on top.

    Ignored table properties that look like FileIO configuration (``py-io-impl``, ``s3.*``,
    ``gcs.*``, ``adls.*``, ``client.*``, ...) are logged by key, never with their values
    (they may be secrets): a warning the first time a set of keys is seen, debug after.
    """
    props = dict(catalog_properties)
    if not table_properties:
        return props
    ignored = []
    for key, value in table_properties.items():
        if key in TABLE_TUNABLE_IO_PROPERTIES:
            props[key] = value
        elif key in _IO_KEYS or key.startswith(_IO_KEY_PREFIXES):
            ignored.append(key)
    if ignored:
        keys = frozenset(ignored)
        level = logging.DEBUG if keys in _warned_ignored else logging.WARNING
        if len(_warned_ignored) < 1024:  # bounded memory; past it, new key sets always warn
            _warned_ignored.add(keys)
        _logger.log(
            level,
            "ignoring table properties %s for the FileIO: storage access is configured by "
            "the catalog, not by table metadata",
            ", ".join(sorted(keys)),
        )
    return props


def file_io_class_for_scheme(scheme: str) -> type[FileIO]:
    """The implementation :func:`load_file_io` uses for a scheme when ``py-io-impl`` is unset."""
    if scheme in LOCAL_SCHEMES:
        return LocalFileIO
    if scheme in S3_SCHEMES:
        return S3FileIO
    return FsspecFileIO


def load_file_io(
    properties: Mapping[str, str] | None = None, location: str | None = None
) -> FileIO:
    """The FileIO for ``location`` (a table or warehouse location) under ``properties``.

    Precedence:

    1. ``py-io-impl``: a dotted path to a :class:`FileIO` subclass, instantiated with the
       properties; used for every location. ``properties`` are trusted configuration: for a
       table, pass :func:`table_file_io_properties`, never the table's raw properties.
    2. The scheme of ``location``, or when it is ``None`` of the ``warehouse`` property: local
       paths and ``file:`` give :class:`LocalFileIO`, ``s3``/``s3a``/``s3n`` give
       :class:`S3FileIO`, anything else :class:`FsspecFileIO` (an
       :class:`~frazil.exceptions.UnsupportedError` naming the scheme if fsspec is missing or
       does not know it).
    3. Neither: :class:`LocalFileIO`.

    The returned FileIO serves locations of the scheme it was chosen for (S3FileIO serves all
    three S3 schemes, FsspecFileIO every fsspec scheme).
    """
    props = dict(properties or {})
    impl = props.get(PY_IO_IMPL)
    if impl:
        return _import_file_io(impl)(props)
    target = location if location is not None else props.get("warehouse")
    scheme = location_scheme(target) if target else ""
    cls = file_io_class_for_scheme(scheme)
    if cls is FsspecFileIO:
        require_fsspec_protocol(scheme)
    return cls(props)


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


# How many of the skipped locations a warning names (the count is always given).
_SKIPPED_SHOWN = 5


def _location_key(location: str) -> tuple[str, str, bool, tuple[str, ...]] | None:
    """``location`` as (scheme, authority, absolute, path segments), with the S3 schemes as one,
    the local forms as one, ``.`` and empty segments dropped and ``..`` applied; ``None`` when
    it cannot be placed (a ``..`` above the root, a remote ``file:`` host)."""
    scheme = location_scheme(location)
    if scheme in LOCAL_SCHEMES:
        try:
            path = local_path(location)
        except UnsupportedError:
            return None
        scheme, authority = "file", ""
    else:
        rest = location[len(scheme) + 1 :]
        authority = ""
        if rest.startswith("//"):
            authority, slash, path = rest[2:].partition("/")
            path = slash + path
        else:
            path = rest
        if scheme in S3_SCHEMES:
            scheme = "s3"  # s3a:// and s3n:// name the same objects
    segments: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not segments:
                return None
            segments.pop()
        else:
            segments.append(part)
    return scheme, authority, path.startswith("/") or authority != "", tuple(segments)


def is_under_location(location: str, table_location: str, *, or_equal: bool = False) -> bool:
    """Whether ``location`` lies strictly inside the directory ``table_location`` (or is it,
    with ``or_equal``), compared segment by segment after normalization (so ``<loc>-evil/x``
    and ``<loc>/../x`` are not inside, ``<loc>//a/./b`` is). What cannot be placed is not
    inside: deleting is the choice that cannot be undone."""
    inner, outer = _location_key(location), _location_key(table_location)
    if inner is None or outer is None or inner[:3] != outer[:3]:
        return False
    prefix = outer[3]
    if or_equal and inner[3] == prefix:
        return True
    return len(inner[3]) > len(prefix) and inner[3][: len(prefix)] == prefix


def under_location(locations: Iterable[str], table_location: str | None, context: str) -> list[str]:
    """The ``locations`` inside ``table_location`` (:func:`is_under_location`; none when the
    table has no location); the others are
    logged at warning level (how many, and the first few) as kept. For deleting a table's files:
    a table's metadata may name files of other tables or datasets (``add_files``, a crafted
    metadata log), and those are not the table's to delete."""
    inside: list[str] = []
    outside: list[str] = []
    for loc in locations:
        ok = table_location is not None and is_under_location(loc, table_location)
        (inside if ok else outside).append(loc)
    if outside:
        _logger.warning(
            "%s: keeping %d files outside the table location %s: %s%s",
            context,
            len(outside),
            table_location,
            ", ".join(outside[:_SKIPPED_SHOWN]),
            ", ..." if len(outside) > _SKIPPED_SHOWN else "",
        )
    return inside


from frazil.io.fsspec import FsspecFileIO, require_fsspec_protocol  # noqa: E402
from frazil.io.local import LocalFileIO  # noqa: E402
from frazil.io.s3 import S3FileIO  # noqa: E402
