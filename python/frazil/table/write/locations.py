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

import base64
import datetime as dt
import urllib.parse
import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from frazil import _native
from frazil._json import java_double
from frazil.io import property_bool
from frazil.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

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
# Human strings (Java's Transform.toHumanString) and partition paths

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)


def _escape(text: str) -> str:
    # java.net.URLEncoder: [A-Za-z0-9.*_-] kept, space as '+', everything else %XX of UTF-8.
    return urllib.parse.quote_plus(text, safe="*").replace("~", "%7E")


def _java_fraction(nanos: int) -> str:
    if nanos == 0:
        return ""
    if nanos % 1_000_000 == 0:
        return f".{nanos // 1_000_000:03d}"
    if nanos % 1000 == 0:
        return f".{nanos // 1000:06d}"
    return f".{nanos:09d}"


def _java_time(hour: int, minute: int, second: int, nanos: int) -> str:
    # LocalTime.toString: seconds only when seconds or fraction are non-zero.
    out = f"{hour:02d}:{minute:02d}"
    if second or nanos:
        out += f":{second:02d}{_java_fraction(nanos)}"
    return out


def _java_date(days: int) -> str:
    d = _EPOCH_DATE + dt.timedelta(days=days)
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


def _iso_local_datetime(nanos: int) -> str:
    # DateTimeFormatter.ISO_LOCAL_DATE_TIME, as Iceberg 1.10's human strings use it: seconds
    # always, a fraction only when non-zero and without trailing zeros (unlike toString).
    days, rem = divmod(nanos, 86_400_000_000_000)
    secs, frac = divmod(rem, 1_000_000_000)
    h, rest = divmod(secs, 3600)
    m, s = divmod(rest, 60)
    fraction = f".{frac:09d}".rstrip("0") if frac else ""
    return f"{_java_date(days)}T{h:02d}:{m:02d}:{s:02d}{fraction}"


def _java_decimal(unscaled: int, scale: int) -> str:
    # BigDecimal.toString: plain unless the scale is negative or the exponent below -6.
    sign = "-" if unscaled < 0 else ""
    digits = str(abs(unscaled))
    adjusted = len(digits) - 1 - scale
    if scale >= 0 and adjusted >= -6:
        if scale == 0:
            return sign + digits
        digits = digits.rjust(scale + 1, "0")
        return f"{sign}{digits[:-scale]}.{digits[-scale:]}"
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mantissa}E{'+' if adjusted > 0 else ''}{adjusted}"


def _storage(value: Any, t: IcebergType) -> Any:
    """Partition values come as pyarrow's Python objects; the time types as counts."""
    if isinstance(t, DateType) and isinstance(value, dt.date):
        return (value - _EPOCH_DATE).days
    if isinstance(t, TimeType) and isinstance(value, dt.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + (
            value.microsecond
        )
    if isinstance(t, (TimestampType, TimestamptzType)) and isinstance(value, dt.datetime):
        naive = value.astimezone(dt.timezone.utc).replace(tzinfo=None) if value.tzinfo else value
        delta = naive - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(t, (TimestampNanoType, TimestamptzNanoType)) and not isinstance(value, int):
        if hasattr(value, "value"):  # pandas.Timestamp
            return int(value.value)
        return _storage(value, TimestampType()) * 1000
    return value


def human_string(transform: str, result_type: IcebergType, value: Any) -> str:
    """``Transform.toHumanString`` of one partition value of ``result_type``."""
    if value is None:
        return "null"
    if transform == "year":
        return f"{1970 + value:04d}"
    if transform == "month":
        y, m = divmod(value, 12)
        return f"{1970 + y:04d}-{m + 1:02d}"
    if transform == "day":
        return _java_date(_storage(value, DateType()))
    if transform == "hour":
        days, h = divmod(value, 24)
        return f"{_java_date(days)}-{h:02d}"
    if transform.startswith("bucket"):
        return str(value)
    t = result_type
    value = _storage(value, t)
    if isinstance(t, BooleanType):
        return "true" if value else "false"
    if isinstance(t, DateType):
        return _java_date(value)
    if isinstance(t, TimeType):
        secs, micros = divmod(value, 1_000_000)
        h, rest = divmod(secs, 3600)
        return _java_time(h, rest // 60, rest % 60, micros * 1000)
    if isinstance(t, TimestampType):
        return _iso_local_datetime(value * 1000)
    if isinstance(t, TimestamptzType):
        return _iso_local_datetime(value * 1000) + "+00:00"
    if isinstance(t, TimestampNanoType):
        return _iso_local_datetime(value)
    if isinstance(t, TimestamptzNanoType):
        return _iso_local_datetime(value) + "+00:00"
    if isinstance(t, (FloatType, DoubleType)):
        return java_double(float(value), isinstance(t, FloatType))
    if isinstance(t, DecimalType):
        if isinstance(value, Decimal):
            sign, digits, _ = value.as_tuple()
            unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
            shift = -int(value.as_tuple().exponent) - t.scale
            unscaled = unscaled * 10**-shift if shift < 0 else unscaled // 10**shift
            return _java_decimal(unscaled, t.scale)
        return _java_decimal(int(value), t.scale)
    if isinstance(t, (BinaryType, FixedType)):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(t, UUIDType):
        return str(value if isinstance(value, uuid.UUID) else uuid.UUID(bytes=bytes(value)))
    if isinstance(t, StringType):
        return str(value)
    return str(value)


def partition_to_path(spec: PartitionSpec, schema: Schema, values: Sequence[Any]) -> str:
    """Java's ``PartitionSpec.partitionToPath`` for one partition tuple (values in the Python
    form of :class:`frazil.manifest.content_file.DataFile` partitions)."""
    ptype = spec.partition_type(schema)
    parts = []
    for f, nested, value in zip(spec.fields, ptype.fields, values, strict=True):
        text = human_string(str(f.transform), nested.field_type, value)
        parts.append(f"{_escape(f.name)}={_escape(text)}")
    return "/".join(parts)
