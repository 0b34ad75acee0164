"""The metadata updates of the REST catalog's model (``TableUpdate`` in
``rest-catalog-open-api.yaml``): one class per action, with its JSON form, and ``PendingUpdate``,
the base of the changes built by method calls (schema, spec, sort order)."""

from __future__ import annotations

import uuid as uuid_mod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from frazil._json import Fields, check_int, check_str
from frazil.exceptions import (
    ParseError,
)
from frazil.metadata import (
    SUPPORTED_FORMAT_VERSION,
    EncryptedKey,
    PartitionStatisticsFile,
    Snapshot,
    SnapshotRef,
    SnapshotRefType,
    StatisticsFile,
)
from frazil.partitioning import (
    PartitionSpec,
)
from frazil.schema import Schema
from frazil.sorting import (
    SortOrder,
)
from frazil.table.update.requirements import TableRequirement

# -1 in set-current-schema / set-default-spec / set-default-sort-order: "the one added last in
# this change" (REST spec).
LAST_ADDED = -1
PREVIOUS_VERSIONS_MAX = "write.metadata.previous-versions-max"
# v4 (relative paths, content_stats manifests) is experimental: the spec has not adopted it and
# no other implementation here writes or reads it; tables opt in with format-version=4.
MAX_WRITE_FORMAT_VERSION = 4
PREVIOUS_VERSIONS_MAX_DEFAULT = 100


# --------------------------------------------------------------------------------------------
# updates


class TableUpdate:
    action: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, **self._body()}

    def _body(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def _from(cls, f: Fields) -> TableUpdate:
        raise NotImplementedError


@dataclass(frozen=True)
class AssignUUIDUpdate(TableUpdate):
    action: ClassVar[str] = "assign-uuid"
    uuid: uuid_mod.UUID

    def _body(self) -> dict[str, Any]:
        return {"uuid": str(self.uuid)}

    @classmethod
    def _from(cls, f: Fields) -> AssignUUIDUpdate:
        text = f.str("uuid")
        try:
            return cls(uuid_mod.UUID(text))
        except ValueError:
            raise ParseError(f"{f.at('uuid')}: {text!r} is not a UUID") from None


@dataclass(frozen=True)
class UpgradeFormatVersionUpdate(TableUpdate):
    action: ClassVar[str] = "upgrade-format-version"
    format_version: int

    def _body(self) -> dict[str, Any]:
        return {"format-version": self.format_version}

    @classmethod
    def _from(cls, f: Fields) -> UpgradeFormatVersionUpdate:
        return cls(f.int32("format-version"))


@dataclass(frozen=True)
class AddSchemaUpdate(TableUpdate):
    action: ClassVar[str] = "add-schema"
    schema_: Schema
    # Deprecated in the REST spec, but the reference still sends it and older servers need it:
    # the table's last column id after this schema is added.
    last_column_id: int | None = None

    def _body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"schema": self.schema_.to_json()}
        if self.last_column_id is not None:
            out["last-column-id"] = self.last_column_id
        return out

    @classmethod
    def _from(cls, f: Fields) -> AddSchemaUpdate:
        return cls(Schema.from_json(f.raw("schema"), f.at("schema")), f.opt_int32("last-column-id"))


@dataclass(frozen=True)
class SetCurrentSchemaUpdate(TableUpdate):
    action: ClassVar[str] = "set-current-schema"
    schema_id: int

    def _body(self) -> dict[str, Any]:
        return {"schema-id": self.schema_id}

    @classmethod
    def _from(cls, f: Fields) -> SetCurrentSchemaUpdate:
        return cls(f.int32("schema-id"))


@dataclass(frozen=True)
class AddPartitionSpecUpdate(TableUpdate):
    action: ClassVar[str] = "add-spec"
    spec: PartitionSpec

    def _body(self) -> dict[str, Any]:
        return {"spec": self.spec.to_json()}

    @classmethod
    def _from(cls, f: Fields) -> AddPartitionSpecUpdate:
        spec = f.object("spec")
        # The REST spec lets a client omit spec-id; the builder assigns it.
        if not spec.has("spec-id"):
            spec = Fields({**spec.obj, "spec-id": 0}, spec.path)
        return cls(PartitionSpec.from_json(spec.obj, spec.path))


@dataclass(frozen=True)
class SetDefaultSpecUpdate(TableUpdate):
    action: ClassVar[str] = "set-default-spec"
    spec_id: int

    def _body(self) -> dict[str, Any]:
        return {"spec-id": self.spec_id}

    @classmethod
    def _from(cls, f: Fields) -> SetDefaultSpecUpdate:
        return cls(f.int32("spec-id"))


@dataclass(frozen=True)
class AddSortOrderUpdate(TableUpdate):
    action: ClassVar[str] = "add-sort-order"
    sort_order: SortOrder

    def _body(self) -> dict[str, Any]:
        return {"sort-order": self.sort_order.to_json()}

    @classmethod
    def _from(cls, f: Fields) -> AddSortOrderUpdate:
        return cls(SortOrder.from_json(f.raw("sort-order"), f.at("sort-order")))


@dataclass(frozen=True)
class SetDefaultSortOrderUpdate(TableUpdate):
    action: ClassVar[str] = "set-default-sort-order"
    sort_order_id: int

    def _body(self) -> dict[str, Any]:
        return {"sort-order-id": self.sort_order_id}

    @classmethod
    def _from(cls, f: Fields) -> SetDefaultSortOrderUpdate:
        return cls(f.int32("sort-order-id"))


@dataclass(frozen=True)
class AddSnapshotUpdate(TableUpdate):
    action: ClassVar[str] = "add-snapshot"
    snapshot: Snapshot

    def _body(self) -> dict[str, Any]:
        return {"snapshot": self.snapshot.to_json(SUPPORTED_FORMAT_VERSION)}

    @classmethod
    def _from(cls, f: Fields) -> AddSnapshotUpdate:
        # Every field present is read; the table's version decides what is required when applied.
        return cls(Snapshot.from_json(f.raw("snapshot"), f.at("snapshot"), None))


@dataclass(frozen=True)
class SetSnapshotRefUpdate(TableUpdate):
    action: ClassVar[str] = "set-snapshot-ref"
    ref_name: str
    snapshot_id: int
    type: str = SnapshotRefType.BRANCH
    min_snapshots_to_keep: int | None = None
    max_snapshot_age_ms: int | None = None
    max_ref_age_ms: int | None = None

    @property
    def ref(self) -> SnapshotRef:
        return SnapshotRef(
            self.snapshot_id,
            self.type,
            self.min_snapshots_to_keep,
            self.max_snapshot_age_ms,
            self.max_ref_age_ms,
        )

    def _body(self) -> dict[str, Any]:
        return {"ref-name": self.ref_name, **self.ref.to_json()}

    @classmethod
    def _from(cls, f: Fields) -> SetSnapshotRefUpdate:
        ref = SnapshotRef.from_json(f.obj, f.path)
        return cls(
            f.str("ref-name"),
            ref.snapshot_id,
            ref.snapshot_ref_type,
            ref.min_snapshots_to_keep,
            ref.max_snapshot_age_ms,
            ref.max_ref_age_ms,
        )


@dataclass(frozen=True)
class RemoveSnapshotsUpdate(TableUpdate):
    action: ClassVar[str] = "remove-snapshots"
    snapshot_ids: tuple[int, ...]

    def _body(self) -> dict[str, Any]:
        return {"snapshot-ids": list(self.snapshot_ids)}

    @classmethod
    def _from(cls, f: Fields) -> RemoveSnapshotsUpdate:
        ids = f.list("snapshot-ids")
        at = f.at("snapshot-ids")
        return cls(
            tuple(
                check_int(i, f"{at}[{n}]", -(2**63), 2**63 - 1, "a long") for n, i in enumerate(ids)
            )
        )


@dataclass(frozen=True)
class RemoveSnapshotRefUpdate(TableUpdate):
    action: ClassVar[str] = "remove-snapshot-ref"
    ref_name: str

    def _body(self) -> dict[str, Any]:
        return {"ref-name": self.ref_name}

    @classmethod
    def _from(cls, f: Fields) -> RemoveSnapshotRefUpdate:
        return cls(f.str("ref-name"))


@dataclass(frozen=True)
class SetLocationUpdate(TableUpdate):
    action: ClassVar[str] = "set-location"
    location: str

    def _body(self) -> dict[str, Any]:
        return {"location": self.location}

    @classmethod
    def _from(cls, f: Fields) -> SetLocationUpdate:
        return cls(f.str("location"))


@dataclass(frozen=True)
class SetPropertiesUpdate(TableUpdate):
    action: ClassVar[str] = "set-properties"
    updates: Mapping[str, str] = field(default_factory=dict)

    def _body(self) -> dict[str, Any]:
        return {"updates": dict(self.updates)}

    @classmethod
    def _from(cls, f: Fields) -> SetPropertiesUpdate:
        if not f.has("updates"):
            raise ParseError(f"{f.at('updates')}: required field is missing")
        return cls(f.opt_str_map("updates"))


@dataclass(frozen=True)
class RemovePropertiesUpdate(TableUpdate):
    action: ClassVar[str] = "remove-properties"
    removals: tuple[str, ...]

    def _body(self) -> dict[str, Any]:
        return {"removals": list(self.removals)}

    @classmethod
    def _from(cls, f: Fields) -> RemovePropertiesUpdate:
        at = f.at("removals")
        return cls(tuple(check_str(r, f"{at}[{i}]") for i, r in enumerate(f.list("removals"))))


@dataclass(frozen=True)
class SetStatisticsUpdate(TableUpdate):
    action: ClassVar[str] = "set-statistics"
    statistics: StatisticsFile

    def _body(self) -> dict[str, Any]:
        # `snapshot-id` is deprecated (it repeats the file's), but the reference still writes it.
        return {"snapshot-id": self.statistics.snapshot_id, "statistics": self.statistics.to_json()}

    @classmethod
    def _from(cls, f: Fields) -> SetStatisticsUpdate:
        return cls(StatisticsFile.from_json(f.raw("statistics"), f.at("statistics")))


@dataclass(frozen=True)
class RemoveStatisticsUpdate(TableUpdate):
    action: ClassVar[str] = "remove-statistics"
    snapshot_id: int

    def _body(self) -> dict[str, Any]:
        return {"snapshot-id": self.snapshot_id}

    @classmethod
    def _from(cls, f: Fields) -> RemoveStatisticsUpdate:
        return cls(f.long("snapshot-id"))


@dataclass(frozen=True)
class SetPartitionStatisticsUpdate(TableUpdate):
    action: ClassVar[str] = "set-partition-statistics"
    partition_statistics: PartitionStatisticsFile

    def _body(self) -> dict[str, Any]:
        return {"partition-statistics": self.partition_statistics.to_json()}

    @classmethod
    def _from(cls, f: Fields) -> SetPartitionStatisticsUpdate:
        return cls(
            PartitionStatisticsFile.from_json(
                f.raw("partition-statistics"), f.at("partition-statistics")
            )
        )


@dataclass(frozen=True)
class RemovePartitionStatisticsUpdate(TableUpdate):
    action: ClassVar[str] = "remove-partition-statistics"
    snapshot_id: int

    def _body(self) -> dict[str, Any]:
        return {"snapshot-id": self.snapshot_id}

    @classmethod
    def _from(cls, f: Fields) -> RemovePartitionStatisticsUpdate:
        return cls(f.long("snapshot-id"))


@dataclass(frozen=True)
class AddEncryptionKeyUpdate(TableUpdate):
    action: ClassVar[str] = "add-encryption-key"
    encryption_key: EncryptedKey

    def _body(self) -> dict[str, Any]:
        return {"encryption-key": self.encryption_key.to_json()}

    @classmethod
    def _from(cls, f: Fields) -> AddEncryptionKeyUpdate:
        return cls(EncryptedKey.from_json(f.raw("encryption-key"), f.at("encryption-key")))


@dataclass(frozen=True)
class RemoveEncryptionKeyUpdate(TableUpdate):
    action: ClassVar[str] = "remove-encryption-key"
    key_id: str

    def _body(self) -> dict[str, Any]:
        return {"key-id": self.key_id}

    @classmethod
    def _from(cls, f: Fields) -> RemoveEncryptionKeyUpdate:
        return cls(f.str("key-id"))


@dataclass(frozen=True)
class RemoveSchemasUpdate(TableUpdate):
    action: ClassVar[str] = "remove-schemas"
    schema_ids: tuple[int, ...]

    def _body(self) -> dict[str, Any]:
        return {"schema-ids": list(self.schema_ids)}

    @classmethod
    def _from(cls, f: Fields) -> RemoveSchemasUpdate:
        at = f.at("schema-ids")
        return cls(
            tuple(
                check_int(i, f"{at}[{n}]", -(2**31), 2**31 - 1, "an int")
                for n, i in enumerate(f.list("schema-ids"))
            )
        )


@dataclass(frozen=True)
class RemovePartitionSpecsUpdate(TableUpdate):
    action: ClassVar[str] = "remove-partition-specs"
    spec_ids: tuple[int, ...]

    def _body(self) -> dict[str, Any]:
        return {"spec-ids": list(self.spec_ids)}

    @classmethod
    def _from(cls, f: Fields) -> RemovePartitionSpecsUpdate:
        at = f.at("spec-ids")
        return cls(
            tuple(
                check_int(i, f"{at}[{n}]", -(2**31), 2**31 - 1, "an int")
                for n, i in enumerate(f.list("spec-ids"))
            )
        )


_UPDATES: dict[str, type[TableUpdate]] = {
    cls.action: cls
    for cls in (
        AssignUUIDUpdate,
        UpgradeFormatVersionUpdate,
        AddSchemaUpdate,
        SetCurrentSchemaUpdate,
        AddPartitionSpecUpdate,
        SetDefaultSpecUpdate,
        AddSortOrderUpdate,
        SetDefaultSortOrderUpdate,
        AddSnapshotUpdate,
        SetSnapshotRefUpdate,
        RemoveSnapshotsUpdate,
        RemoveSnapshotRefUpdate,
        SetLocationUpdate,
        SetPropertiesUpdate,
        RemovePropertiesUpdate,
        SetStatisticsUpdate,
        RemoveStatisticsUpdate,
        SetPartitionStatisticsUpdate,
        RemovePartitionStatisticsUpdate,
        AddEncryptionKeyUpdate,
        RemoveEncryptionKeyUpdate,
        RemoveSchemasUpdate,
        RemovePartitionSpecsUpdate,
    )
}


def update_from_json(obj: Any, path: str = "update") -> TableUpdate:
    f = Fields(obj, path)
    action = f.str("action")
    cls = _UPDATES.get(action)
    if cls is None:
        raise ParseError(f"{f.at('action')}: unknown table update {action!r}")
    return cls._from(f)


_Pending = TypeVar("_Pending", bound="PendingUpdate")
OnCommit = Callable[[list[TableUpdate], list[TableRequirement]], Any]


class PendingUpdate:
    """A change built up by method calls (schema, spec, sort order) that yields updates and
    requirements. ``commit()`` hands them to ``on_commit`` (the catalog's job) when there are
    any; used as a context manager it commits on a clean exit, like PyIceberg."""

    _on_commit: OnCommit | None

    def updates_and_requirements(self) -> tuple[list[TableUpdate], list[TableRequirement]]:
        raise NotImplementedError

    def __enter__(self: _Pending) -> _Pending:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()

    def commit(self) -> tuple[list[TableUpdate], list[TableRequirement]]:
        result = self.updates_and_requirements()
        if self._on_commit is not None and result[0]:
            self._on_commit(*result)
        return result
