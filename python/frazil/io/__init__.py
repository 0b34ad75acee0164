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

They build on :mod:`frazil.io.base` (the :class:`FileIO` base class and what the backends
share); this module chooses between them: :func:`load_file_io` picks the implementation from
the catalog's properties (``py-io-impl`` names a class explicitly) and the location's scheme.

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

import importlib
import logging
from collections.abc import Iterable, Mapping

from frazil.exceptions import InvalidArgumentError, UnsupportedError
from frazil.io.base import LOCAL_SCHEMES, S3_SCHEMES, FileIO

# Re-exported: callers outside frazil.io read locations and properties through these names.
from frazil.io.base import local_path as local_path
from frazil.io.base import location_scheme as location_scheme
from frazil.io.base import property_bool as property_bool
from frazil.io.fsspec import FsspecFileIO, require_fsspec_protocol
from frazil.io.local import LocalFileIO
from frazil.io.s3 import S3FileIO

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
