"""The filesystem catalog: the Java HadoopCatalog layout, with no database.

``<warehouse>/<namespace levels>/<table>/metadata/v<N>.metadata.json`` (``v<N>.gz.metadata.json``
under ``write.metadata.compression-codec=gzip``) plus ``version-hint.text`` holding ``N``.
Namespaces are directories; a directory is a table when its ``metadata`` directory holds a
``*.metadata.json`` file.

The current version is the hint's, then ``v<N+1>``, ``v<N+2>``, ... while they exist (as Java's
``HadoopTableOperations`` probes, because the hint is rewritten after the commit and may lag);
without a readable hint, the highest version in a listing of the metadata directory.

A commit creates ``v<N+1>.metadata.json`` with an atomic create-if-absent
(``FileIO.write(overwrite=False)``): of two writers of the same version, exactly one creates the
file and the other gets ``FileExistsError``, a :class:`CommitFailedError` that leaves nothing
changed. The hint is rewritten afterwards, best effort. Object stores have no such create, so the
catalog refuses a warehouse whose FileIO lacks ``supports_atomic_create``.

What Java's HadoopCatalog does not support is refused with :class:`UnsupportedError`: namespace
properties (other than the reported ``location``), renaming tables, registering tables,
table locations other than the layout's, and views (the :class:`Catalog` defaults refuse them).
Format version 4 tables are refused too: the spec removes this commit scheme in v4.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

import pyarrow.fs as pafs

from frazil.catalog.base import (
    WAREHOUSE,
    Catalog,
    Identifier,
    PropertiesUpdateSummary,
)
from frazil.catalog.purge import purge_table_files
from frazil.exceptions import (
    InvalidArgumentError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    UnsupportedError,
)

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.metadata import TableMetadata
    from frazil.table import Table

__all__ = ["FileSystemCatalog"]

logger = logging.getLogger(__name__)

VERSION_HINT = "version-hint.text"
_VERSION_FILE = re.compile(r"^v(\d+)(\.gz)?\.metadata\.json$")
_SUPPORTED = (
    "create/drop/list namespaces, create/load/drop (with or without purge)/list tables, commits"
)


def _version_of(location: str) -> int | None:
    m = _VERSION_FILE.match(location.rsplit("/", 1)[-1])
    return int(m.group(1)) if m else None


class FileSystemCatalog(Catalog):
    """A catalog over a warehouse directory in the Java HadoopCatalog layout (see the module
    docstring). Properties: ``warehouse`` (required; a local path, ``file:`` URI or any location
    whose FileIO supports atomic create-if-absent)."""

    _swap_writes_file = True

    def __init__(self, name: str, **properties: str) -> None:
        super().__init__(name, **properties)
        warehouse = self.properties.get(WAREHOUSE)
        if not warehouse:
            raise InvalidArgumentError(f"filesystem catalog {name!r} needs a 'warehouse'")
        self.warehouse = warehouse.rstrip("/")
        if not self.io.supports_atomic_create:
            raise UnsupportedError(
                f"filesystem catalog {name!r}: the warehouse {warehouse} is on storage without "
                f"an atomic create-if-absent ({type(self.io).__name__}), so concurrent commits "
                "could silently replace each other; use the SQL catalog there"
            )
        self._fs, self._root = self.io.filesystem(self.warehouse)

    # ---- paths

    # Both check the result against the warehouse: the identifier's parts were checked, and
    # this makes sure no layout path can leave the warehouse whatever reaches it.
    def _location(self, ident: Identifier) -> str:
        location = "/".join([self.warehouse, *ident])
        return self._check_under(self.warehouse, location, f"location of {'.'.join(ident)}")

    def _path(self, ident: Identifier) -> str:
        if not ident:
            return self._root
        path = "/".join([self._root.rstrip("/"), *ident])
        return self._check_under(self._root, path, f"path of {'.'.join(ident)}")

    def _is_dir(self, path: str) -> bool:
        return bool(self._fs.get_file_info(path).type == pafs.FileType.Directory)

    def _children(self, path: str) -> list[pafs.FileInfo]:
        try:
            infos: list[pafs.FileInfo] = self._fs.get_file_info(
                pafs.FileSelector(path, allow_not_found=True)
            )
            return infos
        except (FileNotFoundError, NotADirectoryError):
            return []

    def _is_table_path(self, path: str) -> bool:
        return any(
            info.type == pafs.FileType.File and info.base_name.endswith(".metadata.json")
            for info in self._children(f"{path}/metadata")
        )

    def _is_namespace_path(self, path: str) -> bool:
        return self._is_dir(path) and not self._is_table_path(path)

    # ---- namespaces

    def namespace_exists(self, namespace: str | Identifier) -> bool:
        ns = self._namespace_identifier(namespace, allow_root=True)
        return not ns or self._is_namespace_path(self._path(ns))

    def create_namespace(
        self, namespace: str | Identifier, properties: Mapping[str, str] | None = None
    ) -> None:
        ns = self._namespace_identifier(namespace)
        name = ".".join(ns)
        if properties:
            raise UnsupportedError(
                f"cannot create namespace {name} with properties: the filesystem catalog "
                f"(Java's HadoopCatalog layout) stores none; it supports {_SUPPORTED}"
            )
        path = self._path(ns)
        if self._fs.get_file_info(path).type != pafs.FileType.NotFound:
            raise NamespaceAlreadyExistsError(f"namespace {name} already exists")
        self._fs.create_dir(path, recursive=True)

    def drop_namespace(self, namespace: str | Identifier) -> None:
        ns = self._namespace_identifier(namespace)
        name = ".".join(ns)
        path = self._path(ns)
        if not self._is_namespace_path(path):
            raise NoSuchNamespaceError(f"cannot drop namespace {name}: it does not exist")
        entries = self._children(path)
        if entries:
            tables = self.list_tables(ns)
            what = f"table {'.'.join(tables[0])}" if tables else f"{entries[0].base_name!r}"
            raise NamespaceNotEmptyError(
                f"cannot drop namespace {name}: it is not empty (holds {what})"
            )
        self._fs.delete_dir(path)

    def list_namespaces(self, namespace: str | Identifier = ()) -> list[Identifier]:
        parent = self._namespace_identifier(namespace, allow_root=True)
        path = self._path(parent)
        if parent and not self._is_namespace_path(path):
            raise NoSuchNamespaceError(
                f"cannot list namespaces: namespace {'.'.join(parent)} does not exist"
            )
        return sorted(
            (*parent, info.base_name)
            for info in self._children(path)
            if info.type == pafs.FileType.Directory and not self._is_table_path(info.path)
        )

    def load_namespace_properties(self, namespace: str | Identifier) -> dict[str, str]:
        """Only ``location`` (the namespace's directory), as Java's HadoopCatalog reports."""
        ns = self._namespace_identifier(namespace)
        if not self.namespace_exists(ns):
            raise NoSuchNamespaceError(
                f"cannot load properties: namespace {'.'.join(ns)} does not exist"
            )
        return {"location": self._location(ns)}

    def update_namespace_properties(
        self,
        namespace: str | Identifier,
        removals: set[str] | None = None,
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdateSummary:
        name = ".".join(self._namespace_identifier(namespace))
        raise UnsupportedError(
            f"cannot update properties of namespace {name}: the filesystem catalog "
            "(Java's HadoopCatalog layout) stores none; it supports "
            f"{_SUPPORTED}"
        )

    # ---- tables

    def _default_table_location(self, identifier: Identifier) -> str:
        return self._location(identifier)

    def _check_create_location(self, identifier: Identifier, location: str) -> None:
        if location != self._location(identifier):
            raise UnsupportedError(
                f"cannot create table {'.'.join(identifier)} at {location}: in the filesystem "
                f"catalog a table's location is its path, {self._location(identifier)}"
            )

    def list_tables(self, namespace: str | Identifier) -> list[Identifier]:
        ns = self._namespace_identifier(namespace)
        path = self._path(ns)
        if not self._is_namespace_path(path):
            raise NoSuchNamespaceError(
                f"cannot list tables: namespace {'.'.join(ns)} does not exist"
            )
        return sorted(
            (*ns, info.base_name)
            for info in self._children(path)
            if info.type == pafs.FileType.Directory and self._is_table_path(info.path)
        )

    def register_table(self, identifier: str | Identifier, metadata_location: str) -> Table:
        raise UnsupportedError(
            f"cannot register table {'.'.join(self._table_identifier(identifier))}: the "
            f"filesystem catalog (Java's HadoopCatalog layout) finds tables by path; it supports "
            f"{_SUPPORTED}"
        )

    def rename_table(
        self, from_identifier: str | Identifier, to_identifier: str | Identifier
    ) -> Table:
        raise UnsupportedError(
            f"cannot rename table {'.'.join(self._table_identifier(from_identifier))} to "
            f"{'.'.join(self._table_identifier(to_identifier))}: a "
            "filesystem catalog table's location is its path (Java's HadoopCatalog cannot "
            f"rename either); it supports {_SUPPORTED}"
        )

    def drop_table(
        self,
        identifier: str | Identifier,
        purge: bool = False,
        *,
        delete_outside_location: bool = False,
    ) -> None:
        """Deletes the table's directory (as Java's HadoopCatalog does, with or without purge;
        in this layout the metadata files are the table's existence). ``purge`` first deletes
        the files the metadata reaches under the table location, and with
        ``delete_outside_location`` also those outside it."""
        ident = self._table_identifier(identifier)
        table = self.load_table(ident)
        if purge:
            purge_table_files(
                table.io,
                table.metadata,
                table.metadata_location,
                delete_outside_location=delete_outside_location,
            )
        self._fs.delete_dir(self._path(ident))
        logger.info("dropped table %s%s", ".".join(ident), " (purged)" if purge else "")

    # ---- versions

    def _version_file(self, ident: Identifier, version: int, gz: bool) -> str:
        suffix = ".gz.metadata.json" if gz else ".metadata.json"
        return f"{self._location(ident)}/metadata/v{version}{suffix}"

    def _existing_version_file(self, ident: Identifier, version: int) -> str | None:
        for gz in (False, True):
            loc = self._version_file(ident, version, gz)
            if self.io.exists(loc):
                return loc
        return None

    def _read_hint(self, ident: Identifier) -> int | None:
        try:
            return int(self.io.read(f"{self._location(ident)}/metadata/{VERSION_HINT}").strip())
        except (FileNotFoundError, ValueError):
            return None

    def _listed_version(self, ident: Identifier) -> int | None:
        versions = [
            v
            for info in self._children(f"{self._path(ident)}/metadata")
            if (v := _version_of(info.base_name)) is not None
        ]
        return max(versions) if versions else None

    def _load_pointer(self, identifier: Identifier) -> str | None:
        version = self._read_hint(identifier)
        current = None if version is None else self._existing_version_file(identifier, version)
        if current is None:
            version = self._listed_version(identifier)
            if version is None:
                return None
            current = self._existing_version_file(identifier, version)
            if current is None:
                return None
        assert version is not None
        while (following := self._existing_version_file(identifier, version + 1)) is not None:
            version, current = version + 1, following
        return current

    def _new_metadata_location(
        self, identifier: Identifier, metadata: TableMetadata, current_location: str | None
    ) -> str:
        if metadata.format_version >= 4:
            # Spec "File System Tables": the scheme is deprecated and removed in v4.
            raise UnsupportedError(
                f"table {'.'.join(identifier)}: the filesystem catalog cannot commit format "
                f"version {metadata.format_version} metadata (the spec removes its commit "
                "scheme in v4); use the SQL or REST catalog"
            )
        version = 1 if current_location is None else (_version_of(current_location) or 0) + 1
        _, gz = self._metadata_suffix(metadata)
        return self._version_file(identifier, version, gz)

    def _swap_pointer(
        self,
        identifier: Identifier,
        current_location: str | None,
        new_location: str,
        data: bytes,
        io: FileIO,
        new: TableMetadata,
        base: TableMetadata | None,
    ) -> bool:
        version = _version_of(new_location)
        other = (
            None
            if version is None
            else self._version_file(
                identifier, version, not new_location.endswith(".gz.metadata.json")
            )
        )
        # A writer using the other codec may already hold this version under its name.
        if other is not None and io.exists(other):
            return False
        try:
            self._write_metadata_file(io, new_location, data)
        except FileExistsError:
            return False
        return True

    def _commit_landed(
        self, identifier: Identifier, new_location: str, data: bytes, io: FileIO
    ) -> bool:
        # The version file is the pointer: it landed if it holds exactly what this commit wrote.
        try:
            return io.read(new_location) == data
        except FileNotFoundError:
            return False

    def _after_commit(self, identifier: Identifier, new_location: str, io: FileIO) -> None:
        version = _version_of(new_location)
        hint = f"{self._location(identifier)}/metadata/{VERSION_HINT}"
        try:
            io.write(hint, str(version).encode(), overwrite=True)
        except Exception:  # readers probe past a stale hint
            logger.warning("could not update %s", hint, exc_info=True)
