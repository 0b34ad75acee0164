"""Tables read straight from a metadata file, without a catalog (PyIceberg's ``StaticTable``).

Usage (a plain example, not a doctest: it needs a table on disk)::

    table = StaticTable.from_metadata("/warehouse/db/t/metadata/v3.metadata.json")
    table.scan(row_filter="id > 5").to_arrow()

``from_metadata`` also takes the table directory or its ``metadata`` directory: the version in
``metadata/version-hint.text`` is read (as the Hadoop catalog writes it), else the newest
``v<N>.metadata.json`` / ``<N>-<uuid>.metadata.json`` file found there. A static table is
read-only: every way of committing a change raises :class:`~frazil.exceptions.UnsupportedError`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from frazil.exceptions import NoSuchTableError, UnsupportedError
from frazil.io import FileIO, load_file_io, table_file_io_properties
from frazil.io.paths import table_location_from_metadata
from frazil.metadata import TableMetadata
from frazil.table.table import Table

__all__ = ["StaticTable"]

_VERSION = re.compile(r"^v?(\d+)(?:-[^/]*)?(?:\.gz)?\.metadata\.json(?:\.gz)?$")


class _NoCatalog:
    """Stands where a catalog would: refuses every commit, naming the metadata file."""

    def __init__(self, metadata_location: str) -> None:
        self.metadata_location = metadata_location

    def _refuse(self, *_: Any, **__: Any) -> Any:
        raise UnsupportedError(
            f"table {self.metadata_location} was opened with StaticTable.from_metadata and "
            "is read-only (no catalog to commit to)"
        )

    commit_table = _refuse
    load_table = _refuse

    def __getattr__(self, name: str) -> Any:
        return self._refuse


def _version_of(name: str) -> int | None:
    m = _VERSION.match(name)
    return int(m.group(1)) if m else None


def _find_metadata_file(io: FileIO, location: str) -> str:
    base = location.rstrip("/")
    if not base.endswith("/metadata"):
        base = f"{base}/metadata"
    hint = f"{base}/version-hint.text"
    if io.exists(hint):
        text = io.read(hint).decode("utf-8", "replace").strip()
        if text.isdigit():
            for candidate in (f"{base}/v{text}.metadata.json", f"{base}/v{text}.gz.metadata.json"):
                if io.exists(candidate):
                    return candidate
        elif text.endswith(".metadata.json"):  # some writers put a file name in the hint
            return text if "/" in text else f"{base}/{text}"
    files = [f for f in io.list_prefix(base) if _version_of(f.rsplit("/", 1)[-1]) is not None]
    if not files:
        raise NoSuchTableError(f"no metadata file found under {base}")
    return max(files, key=lambda f: (_version_of(f.rsplit("/", 1)[-1]), f))


class StaticTable(Table):
    """A read-only :class:`~frazil.table.Table` loaded from one metadata file."""

    @classmethod
    def from_metadata(
        cls, metadata_location: str, properties: Mapping[str, str] | None = None
    ) -> StaticTable:
        """The table whose metadata is at ``metadata_location`` (a ``*.metadata.json`` file,
        or a table or metadata directory); ``properties`` configure its FileIO (the metadata's own
        properties cannot: see :func:`~frazil.io.table_file_io_properties`)."""
        props = dict(properties or {})
        io = load_file_io(props, metadata_location)
        location = metadata_location
        if not location.rstrip("/").endswith(".metadata.json") and not location.endswith(".gz"):
            location = _find_metadata_file(io, location)
        metadata = TableMetadata.from_json(
            io.read(location), location=table_location_from_metadata(location), file=location
        )
        # The caller's properties configure storage; the file's own properties are untrusted.
        io = load_file_io(table_file_io_properties(props, metadata.properties), location)
        return cls(("static-table", location), metadata, location, io, _NoCatalog(location))  # type: ignore[arg-type]

    def refresh(self) -> StaticTable:
        raise UnsupportedError(
            f"table {self.metadata_location} is static: load a newer metadata file instead"
        )

    def _transaction(self, autocommit: bool) -> Any:
        raise UnsupportedError(
            f"table {self.metadata_location} was opened with StaticTable.from_metadata and "
            "is read-only (no catalog to commit to)"
        )
