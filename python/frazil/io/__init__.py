"""File I/O under catalogs and tables: local files, S3 (pyarrow), anything else through fsspec.

A :class:`FileIO` reads and writes whole files by location (a path or a URI) and hands pyarrow
a filesystem for Parquet. Iceberg writes each file once, so writes are whole-file, and
``write(..., overwrite=False)`` (the default) never replaces an existing file: the filesystem
catalog's commit relies on that (``supports_atomic_create``).

:func:`load_file_io` picks the implementation from the catalog/table properties (``py-io-impl``
names a class explicitly) and the location's scheme.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow.fs

__all__ = ["FileIO", "load_file_io"]

PY_IO_IMPL = "py-io-impl"


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
    def size(self, location: str) -> int: ...

    @abc.abstractmethod
    def list_prefix(self, prefix: str) -> list[str]:
        """Every file location under a directory prefix, recursively (for purges and orphan
        checks)."""

    @abc.abstractmethod
    def filesystem(self, location: str) -> tuple[pyarrow.fs.FileSystem, str]:
        """A pyarrow filesystem and the path within it, for reading and writing Parquet."""

    @property
    def supports_atomic_create(self) -> bool:
        """Whether ``write(overwrite=False)`` is an atomic create-if-absent (local and HDFS-like
        filesystems yes, object stores no)."""
        return False

    def read_many(self, locations: Sequence[str], max_workers: int | None = None) -> list[bytes]:
        """Reads several files concurrently, results in the order of ``locations``."""
        raise NotImplementedError

    def delete_many(self, locations: Iterable[str], max_workers: int | None = None) -> None:
        """Deletes several files concurrently; missing files are ignored."""
        raise NotImplementedError


def load_file_io(
    properties: Mapping[str, str] | None = None, location: str | None = None
) -> FileIO:
    """The FileIO for ``location`` (a table or warehouse location) under ``properties``."""
    raise NotImplementedError
