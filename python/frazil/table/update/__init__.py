"""Metadata updates and commit requirements, the REST catalog's model of every table change
(``TableUpdate`` / ``TableRequirement`` in ``rest-catalog-open-api.yaml``), and the builder that
applies updates while keeping the table metadata's invariants.

Every catalog commits through :func:`update_table_metadata`; the JSON forms (``to_json`` /
``update_from_json`` / ``requirement_from_json``) are exactly the REST request bodies.
"""

from __future__ import annotations

from frazil.table.update.metadata_builder import (
    MetadataBuilder,
    empty_table_metadata,
    new_table_metadata,
    update_table_metadata,
)
from frazil.table.update.requirements import (
    AssertCreate,
    AssertCurrentSchemaId,
    AssertDefaultSortOrderId,
    AssertDefaultSpecId,
    AssertLastAssignedFieldId,
    AssertLastAssignedPartitionId,
    AssertRefSnapshotId,
    AssertTableUUID,
    TableRequirement,
    requirement_from_json,
)
from frazil.table.update.updates import (
    AddEncryptionKeyUpdate,
    AddPartitionSpecUpdate,
    AddSchemaUpdate,
    AddSnapshotUpdate,
    AddSortOrderUpdate,
    AssignUUIDUpdate,
    PendingUpdate,
    RemoveEncryptionKeyUpdate,
    RemovePartitionSpecsUpdate,
    RemovePartitionStatisticsUpdate,
    RemovePropertiesUpdate,
    RemoveSchemasUpdate,
    RemoveSnapshotRefUpdate,
    RemoveSnapshotsUpdate,
    RemoveStatisticsUpdate,
    SetCurrentSchemaUpdate,
    SetDefaultSortOrderUpdate,
    SetDefaultSpecUpdate,
    SetLocationUpdate,
    SetPartitionStatisticsUpdate,
    SetPropertiesUpdate,
    SetSnapshotRefUpdate,
    SetStatisticsUpdate,
    TableUpdate,
    UpgradeFormatVersionUpdate,
    update_from_json,
)

__all__ = [
    "AddEncryptionKeyUpdate",
    "AddPartitionSpecUpdate",
    "AddSchemaUpdate",
    "AddSnapshotUpdate",
    "AddSortOrderUpdate",
    "AssertCreate",
    "AssertCurrentSchemaId",
    "AssertDefaultSortOrderId",
    "AssertDefaultSpecId",
    "AssertLastAssignedFieldId",
    "AssertLastAssignedPartitionId",
    "AssertRefSnapshotId",
    "AssertTableUUID",
    "AssignUUIDUpdate",
    "MetadataBuilder",
    "PendingUpdate",
    "RemoveEncryptionKeyUpdate",
    "RemovePartitionSpecsUpdate",
    "RemovePartitionStatisticsUpdate",
    "RemovePropertiesUpdate",
    "RemoveSchemasUpdate",
    "RemoveSnapshotRefUpdate",
    "RemoveSnapshotsUpdate",
    "RemoveStatisticsUpdate",
    "SetCurrentSchemaUpdate",
    "SetDefaultSortOrderUpdate",
    "SetDefaultSpecUpdate",
    "SetLocationUpdate",
    "SetPartitionStatisticsUpdate",
    "SetPropertiesUpdate",
    "SetSnapshotRefUpdate",
    "SetStatisticsUpdate",
    "TableRequirement",
    "TableUpdate",
    "UpgradeFormatVersionUpdate",
    "empty_table_metadata",
    "new_table_metadata",
    "requirement_from_json",
    "update_from_json",
    "update_table_metadata",
]
