"""How an Iceberg table or view is stored in the metastore, as Java's ``HiveTableOperations``
and ``HiveViewOperations`` (and PyIceberg's ``HiveCatalog``) store it.

A table is an ``EXTERNAL_TABLE`` with parameters ``EXTERNAL=TRUE``, ``table_type=ICEBERG``,
``metadata_location`` and ``previous_metadata_location``, every Iceberg table property, and the
summary Java writes for engines that only read the metastore: ``uuid``, ``current-schema``,
``current-snapshot-id``/``-summary``/``-timestamp-ms``, ``snapshot-count``,
``default-partition-spec``, ``default-sort-order`` (each left out when longer than
``iceberg.hive.table-property-max-size``, 32672) and Hive's ``numFiles``/``numRows``/
``totalSize``. Its storage descriptor lists the current schema's columns in Hive types, the
table location, and the FileInputFormat/FileOutputFormat/LazySimpleSerDe placeholders (a Hive
engine reads it through Iceberg, not through them). A view is a ``VIRTUAL_VIEW`` with
``table_type=ICEBERG-VIEW`` and the same location parameters.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from frazil.catalog.hive_types import hive_type_name
from frazil.types import (
    GeographyType,
    GeometryType,
    IcebergType,
    TimestamptzNanoType,
    TimestamptzType,
    UnknownType,
    VariantType,
)

if TYPE_CHECKING:
    from frazil.catalog.hive._thrift.hive_metastore import ttypes
    from frazil.metadata import TableMetadata
    from frazil.schema import Schema

__all__ = [
    "ICEBERG",
    "ICEBERG_VIEW",
    "METADATA_HASH",
    "METADATA_LOCATION",
    "PREVIOUS_METADATA_LOCATION",
    "TABLE_TYPE",
    "hive_type",
    "metadata_hash",
    "new_hms_table",
    "set_table_parameters",
    "storage_descriptor",
]

TABLE_TYPE = "table_type"
ICEBERG = "ICEBERG"
ICEBERG_VIEW = "ICEBERG-VIEW"
METADATA_LOCATION = "metadata_location"
PREVIOUS_METADATA_LOCATION = "previous_metadata_location"
# Java 1.11 keeps an encrypted table's metadata hash in the metastore: the metadata JSON is
# plaintext in storage, so the hash in the (trusted) metastore is what detects a file swapped
# or edited behind the catalog's back.
METADATA_HASH = "metadata_hash"
ENCRYPTION_KEY_ID = "encryption.key-id"
EXTERNAL_TABLE = "EXTERNAL_TABLE"
VIRTUAL_VIEW = "VIRTUAL_VIEW"
HIVE2_COMPATIBLE = "hive.hive2-compatible"
MAX_PROPERTY_SIZE = "iceberg.hive.table-property-max-size"
DEFAULT_MAX_PROPERTY_SIZE = 32672
# Hive's environment context key: skip the metastore's own statistics work on alter.
DO_NOT_UPDATE_STATS = "DO_NOT_UPDATE_STATS"

_SUMMARY_KEYS = (
    "current-snapshot-id",
    "current-snapshot-summary",
    "current-snapshot-timestamp-ms",
    "snapshot-count",
    "current-schema",
    "default-partition-spec",
    "default-sort-order",
)
# Hive's StatsSetupConst names, from the snapshot summary's totals.
_HIVE_STATS = {
    "numFiles": "total-data-files",
    "numRows": "total-records",
    "totalSize": "total-files-size",
}

# The types Hive has no name for, as Java's HiveSchemaUtil stores them; the zoned timestamp is
# plain ``timestamp`` for Hive 2 readers (``hive.hive2-compatible``).
_NAMES: dict[type[IcebergType], str] = {
    TimestamptzType: "timestamp with local time zone",
    TimestamptzNanoType: "timestamp with local time zone",
    GeometryType: "binary",
    GeographyType: "binary",
    VariantType: "binary",
    UnknownType: "void",
}
_HIVE2_NAMES = {
    **_NAMES,
    TimestamptzType: "timestamp",
    TimestamptzNanoType: "timestamp",
}


def hive_type(t: IcebergType, hive2_compatible: bool = False) -> str:
    """The Hive type string of an Iceberg type (Java's ``HiveSchemaUtil`` and PyIceberg's
    mapping; ``timestamptz`` is ``timestamp with local time zone``, or ``timestamp`` with
    ``hive.hive2-compatible``, which Hive 2 readers need)."""
    return hive_type_name(t, _HIVE2_NAMES if hive2_compatible else _NAMES, lambda _: "string")


def storage_descriptor(
    schema: Schema, location: str | None, hive2_compatible: bool
) -> ttypes.StorageDescriptor:
    from frazil.catalog.hive._thrift.hive_metastore import ttypes

    return ttypes.StorageDescriptor(
        cols=[
            ttypes.FieldSchema(f.name, hive_type(f.field_type, hive2_compatible), f.doc)
            for f in schema.fields
        ],
        location=location,
        inputFormat="org.apache.hadoop.mapred.FileInputFormat",
        outputFormat="org.apache.hadoop.mapred.FileOutputFormat",
        serdeInfo=ttypes.SerDeInfo(
            serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
        ),
    )


def new_hms_table(db: str, name: str, owner: str, view: bool = False) -> ttypes.Table:
    """An empty metastore table of the kind Java creates (parameters set by the caller)."""
    from frazil.catalog.hive._thrift.hive_metastore import ttypes

    now = int(time.time())
    return ttypes.Table(
        tableName=name,
        dbName=db,
        owner=owner,
        createTime=now,
        lastAccessTime=now,
        retention=2**31 - 1,
        partitionKeys=[],
        parameters={"EXTERNAL": "TRUE"},
        tableType=VIRTUAL_VIEW if view else EXTERNAL_TABLE,
    )


def _bounded(params: dict[str, str], key: str, value: str | None, limit: int) -> None:
    if value is None or len(value) > limit:
        params.pop(key, None)
    else:
        params[key] = value


def set_table_parameters(
    tbl: ttypes.Table,
    metadata: TableMetadata,
    new_location: str,
    previous_location: str | None,
    removed: set[str],
    catalog_properties: Mapping[str, str],
    metadata_bytes: bytes | None = None,
) -> None:
    """Sets ``tbl``'s parameters and storage descriptor for a commit of ``metadata`` at
    ``new_location`` (``removed``: table properties the commit dropped; ``metadata_bytes``: the
    metadata file as written, whose hash an encrypted table keeps in ``metadata_hash``)."""
    params: dict[str, str] = dict(tbl.parameters or {})
    params.update(metadata.properties)
    for key in removed:
        params.pop(key, None)
    params.pop(METADATA_HASH, None)
    if metadata.properties.get(ENCRYPTION_KEY_ID) and metadata_bytes is not None:
        params[METADATA_HASH] = metadata_hash(metadata_bytes)
    params["EXTERNAL"] = "TRUE"
    params[TABLE_TYPE] = ICEBERG
    params[METADATA_LOCATION] = new_location
    if previous_location:
        params[PREVIOUS_METADATA_LOCATION] = previous_location
    if metadata.table_uuid is not None:
        params["uuid"] = str(metadata.table_uuid)
    limit = _int(catalog_properties.get(MAX_PROPERTY_SIZE), DEFAULT_MAX_PROPERTY_SIZE)
    snapshot = metadata.current_snapshot()
    summary: Mapping[str, str] = (snapshot.summary or {}) if snapshot is not None else {}
    values: dict[str, str | None] = dict.fromkeys(_SUMMARY_KEYS)
    if snapshot is not None:
        values["current-snapshot-id"] = str(snapshot.snapshot_id)
        values["current-snapshot-timestamp-ms"] = str(snapshot.timestamp_ms)
        values["current-snapshot-summary"] = _json(dict(summary))
        values["snapshot-count"] = str(len(metadata.snapshots))
    values["current-schema"] = _json(metadata.schema().to_json())
    if not metadata.spec().is_unpartitioned():
        values["default-partition-spec"] = _json(metadata.spec().to_json())
    if not metadata.sort_order().is_unsorted():
        values["default-sort-order"] = _json(metadata.sort_order().to_json())
    for key, value in values.items():
        _bounded(params, key, value, limit)
    for hive_key, summary_key in _HIVE_STATS.items():
        if summary_key in summary:
            params[hive_key] = summary[summary_key]
    tbl.parameters = params
    hive2 = str(catalog_properties.get(HIVE2_COMPATIBLE, "false")).strip().lower() == "true"
    old_sd = tbl.sd
    tbl.sd = storage_descriptor(metadata.schema(), metadata.location, hive2)
    if old_sd is not None and old_sd.parameters:
        tbl.sd.parameters = old_sd.parameters


def metadata_hash(data: bytes) -> str:
    """Java 1.11's ``metadata_hash``: base64 of the SHA-256 of the metadata file's bytes."""
    return base64.b64encode(hashlib.sha256(data).digest()).decode("ascii")


def _json(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _int(value: str | None, default: int) -> int:
    try:
        return default if value is None else int(value)
    except ValueError:
        return default
