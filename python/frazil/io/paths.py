"""Paths in metadata (spec "Paths in Metadata", format version 4, experimental).

From v4 a path field may be relative to the table location. The rules live in Rust
(``frazil-manifest``'s ``paths`` module, twin of this one) and are bound here: a path with a URI
scheme is absolute; any other is joined to the table location with one ``/``; ``.`` and ``..``
segments are refused, so a resolved path never leaves the table location. Writers store a path
relative when it lies under the table location followed by ``/``.

The table location of v4 metadata that omits ``location`` is supplied by the catalog; frazil's
catalogs infer it from the metadata file's own location (``<table>/metadata/<file>``), so a
table copied elsewhere and registered at its new metadata path reads from its new place.
"""

from __future__ import annotations

from frazil import _native
from frazil.exceptions import FrazilError, InvalidArgumentError

__all__ = [
    "has_scheme",
    "qualify_location",
    "relativize_path",
    "resolve_path",
    "table_location_from_metadata",
]


def has_scheme(path: str) -> bool:
    """Whether ``path`` starts with a URI scheme (an absolute path in v4's terms)."""
    return _native.path_has_scheme(path)


def resolve_path(path: str, table_location: str | None) -> str:
    """Spec "Path Resolution": a path with a URI scheme as it is; any other joined to the table
    location with one ``/`` (no normalization of either part). ``..``/``.`` segments raise
    :class:`InvalidArgumentError`. Without a table location the path is returned as it is."""
    if table_location is None:
        return path
    try:
        return _native.path_resolve(path, table_location)
    except FrazilError as e:
        raise InvalidArgumentError(f"table {table_location}: {e}") from None


def relativize_path(path: str, table_location: str) -> str:
    """Spec "Path Relativization": the part of ``path`` after ``table_location`` + ``/``, or
    the path itself (a local path without a scheme first gets ``file://``)."""
    return _native.path_relativize(path, table_location)


def qualify_location(location: str) -> str:
    """A table location as v4 needs it (absolute, with a URI scheme): a local path without a
    scheme gets ``file://``."""
    if has_scheme(location) or not location.startswith("/"):
        return location
    return "file://" + location


def table_location_from_metadata(metadata_location: str) -> str | None:
    """The table location a catalog infers for v4 metadata without ``location``: the parent of
    the ``metadata`` directory holding the file, ``None`` when the file is not in one."""
    parent, _, _ = metadata_location.rpartition("/")
    table, _, name = parent.rpartition("/")
    if name != "metadata" or not table:
        return None
    return qualify_location(table)
