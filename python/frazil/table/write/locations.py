"""Where new data files go: the Java reference's location providers and partition paths.

* Default layout: ``<data location>/<partition path>/<file name>``, the data location being
  ``write.data.path``, else the legacy ``write.folder-storage.path``, else
  ``<table location>/data``.
* Object-storage layout (``write.object-storage.enabled``): a hash of the file's relative path
  spreads files over prefixes, as Java's ``ObjectStoreLocationProvider`` (Iceberg 1.7+) does:
  the murmur3 (x86, 32-bit) hash of the UTF-8 relative path, its low 20 bits as a binary string
  cut into ``4/4/4/8`` bits; with ``write.object-storage.partitioned-paths`` (default true) that
  is ``<data>/<hash dirs>/<partition path>/<file>``, without it ``<data>/<4>/<4>/<4>/<8>-<file>``.
  A data location outside the table location adds ``<parent>/<table dir>`` after the hash, so
  that files of different tables sharing a bucket stay apart. The data location here also
  honours ``write.object-storage.path``.
* Partition paths: ``name=value`` per partition field, joined by ``/``, both sides escaped as
  Java's ``URLEncoder`` does, values as the transform's human string (``Transform
  .toHumanString``: dates ``yyyy-MM-dd``, hours ``yyyy-MM-dd-HH``, timestamps in ISO form,
  binary in Base64, null as ``null``).
* File names: ``<partition id>-<task id>-<operation id>-<file count>.parquet`` with the counts
  zero-padded to five digits, as Java's ``OutputFileFactory`` names them.
"""

from __future__ import annotations

import urllib.parse
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from frazil import _native
from frazil.io import property_bool
from frazil.transforms import human_string

if TYPE_CHECKING:
    from frazil.partitioning import PartitionSpec
    from frazil.schema import Schema

__all__ = [
    "LocationProvider",
    "data_file_name",
    "human_string",
    "location_provider",
    "partition_to_path",
]

WRITE_DATA_PATH = "write.data.path"
WRITE_FOLDER_STORAGE_PATH = "write.folder-storage.path"
OBJECT_STORE_ENABLED = "write.object-storage.enabled"
OBJECT_STORE_PATH = "write.object-storage.path"
OBJECT_STORE_PARTITIONED_PATHS = "write.object-storage.partitioned-paths"

_HASH_BITS = 20
_DIR_LENGTH = 4
_DIR_DEPTH = 3


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86 32-bit, unsigned (the native hash of ``frazil-transforms``)."""
    return _native.murmur3_32(data, seed & 0xFFFFFFFF)


def _strip(location: str) -> str:
    return location.rstrip("/") if len(location.rstrip("/")) else location


class LocationProvider:
    """New data file locations of one table (Java's ``LocationProviders.locationsFor``)."""

    def __init__(self, table_location: str, properties: Mapping[str, str]) -> None:
        self.table_location = _strip(table_location)
        self.object_storage = bool(property_bool(properties, OBJECT_STORE_ENABLED))
        data = properties.get(WRITE_DATA_PATH)
        if data is None and self.object_storage:
            data = properties.get(OBJECT_STORE_PATH)
        if data is None:
            data = properties.get(WRITE_FOLDER_STORAGE_PATH)
        if data is None:
            data = f"{self.table_location}/data"
        self.data_location = _strip(data)
        partitioned = property_bool(properties, OBJECT_STORE_PARTITIONED_PATHS)
        self.partitioned_paths = True if partitioned is None else partitioned
        self._context: str | None = None
        if self.object_storage and not self.data_location.startswith(self.table_location):
            parts = [p for p in self.table_location.split("/") if p]
            self._context = "/".join(parts[-2:])

    def new_data_location(self, file_name: str, partition_path: str | None = None) -> str:
        """The location of a new data file; ``partition_path`` as :func:`partition_to_path`
        gives it (``None`` or empty for an unpartitioned spec)."""
        if not self.object_storage:
            if partition_path:
                return f"{self.data_location}/{partition_path}/{file_name}"
            return f"{self.data_location}/{file_name}"
        if partition_path and self.partitioned_paths:
            file_name = f"{partition_path}/{file_name}"
        bits = format(murmur3_32(file_name.encode()) & ((1 << _HASH_BITS) - 1), "020b")
        dirs = [bits[i : i + _DIR_LENGTH] for i in range(0, _DIR_DEPTH * _DIR_LENGTH, _DIR_LENGTH)]
        rest = bits[_DIR_DEPTH * _DIR_LENGTH :]
        if self._context is not None:
            return f"{self.data_location}/{'/'.join(dirs)}/{rest}/{self._context}/{file_name}"
        if self.partitioned_paths:
            return f"{self.data_location}/{'/'.join(dirs)}/{rest}/{file_name}"
        return f"{self.data_location}/{'/'.join(dirs)}/{rest}-{file_name}"


def location_provider(table_location: str, properties: Mapping[str, str]) -> LocationProvider:
    return LocationProvider(table_location, properties)


def data_file_name(
    operation_id: uuid.UUID | str,
    file_count: int,
    partition_id: int = 0,
    task_id: int = 0,
    extension: str = "parquet",
) -> str:
    """Java's ``OutputFileFactory`` file name, with the format's extension (``parquet``,
    ``orc``, ``avro``)."""
    return f"{partition_id:05d}-{task_id}-{operation_id}-{file_count:05d}.{extension}"


# ---------------------------------------------------------------------------------------------
# Partition paths (the values' text is frazil.transforms.human_string)


def _escape(text: str) -> str:
    # java.net.URLEncoder: [A-Za-z0-9.*_-] kept, space as '+', everything else %XX of UTF-8.
    return urllib.parse.quote_plus(text, safe="*").replace("~", "%7E")


def partition_to_path(spec: PartitionSpec, schema: Schema, values: Sequence[Any]) -> str:
    """Java's ``PartitionSpec.partitionToPath`` for one partition tuple (values in the Python
    form of :class:`frazil.manifest.content_file.DataFile` partitions)."""
    ptype = spec.partition_type(schema)
    parts = []
    for f, nested, value in zip(spec.fields, ptype.fields, values, strict=True):
        text = human_string(str(f.transform), nested.field_type, value)
        parts.append(f"{_escape(f.name)}={_escape(text)}")
    return "/".join(parts)
