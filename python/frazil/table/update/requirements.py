"""The commit requirements of the REST catalog's model (``TableRequirement`` in
``rest-catalog-open-api.yaml``): each checks one fact of the base metadata a change was built on."""

from __future__ import annotations

import uuid as uuid_mod
from dataclasses import dataclass
from typing import Any, ClassVar

from frazil._json import Fields
from frazil.exceptions import (
    CommitFailedError,
    ParseError,
)
from frazil.metadata import (
    TableMetadata,
)


class TableRequirement:
    type: ClassVar[str]

    def validate(self, base: TableMetadata | None) -> None:
        """Raises :class:`CommitFailedError` when the requirement does not hold."""
        raise NotImplementedError

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, **self._body()}

    def _body(self) -> dict[str, Any]:
        return {}

    @classmethod
    def _from(cls, f: Fields) -> TableRequirement:
        raise NotImplementedError


def _exists(base: TableMetadata | None, what: str) -> TableMetadata:
    if base is None:
        raise CommitFailedError(f"requirement failed: {what}: the table does not exist")
    return base


@dataclass(frozen=True)
class AssertCreate(TableRequirement):
    type: ClassVar[str] = "assert-create"

    def validate(self, base: TableMetadata | None) -> None:
        if base is not None:
            raise CommitFailedError("requirement failed: the table already exists")

    @classmethod
    def _from(cls, f: Fields) -> AssertCreate:
        return cls()


@dataclass(frozen=True)
class AssertTableUUID(TableRequirement):
    type: ClassVar[str] = "assert-table-uuid"
    uuid: uuid_mod.UUID

    def validate(self, base: TableMetadata | None) -> None:
        base = _exists(base, "table uuid")
        if base.table_uuid != self.uuid:
            raise CommitFailedError(
                f"requirement failed: table uuid {base.table_uuid} != expected {self.uuid}"
            )

    def _body(self) -> dict[str, Any]:
        return {"uuid": str(self.uuid)}

    @classmethod
    def _from(cls, f: Fields) -> AssertTableUUID:
        text = f.str("uuid")
        try:
            return cls(uuid_mod.UUID(text))
        except ValueError:
            raise ParseError(f"{f.at('uuid')}: {text!r} is not a UUID") from None


@dataclass(frozen=True)
class AssertRefSnapshotId(TableRequirement):
    """``snapshot_id=None`` asserts that the ref does not exist."""

    type: ClassVar[str] = "assert-ref-snapshot-id"
    ref: str
    snapshot_id: int | None

    def validate(self, base: TableMetadata | None) -> None:
        base = _exists(base, f"ref {self.ref!r}")
        ref = base.refs.get(self.ref)
        if ref is None and self.snapshot_id is not None:
            raise CommitFailedError(f"requirement failed: ref {self.ref!r} is missing")
        if ref is not None and self.snapshot_id is None:
            raise CommitFailedError(
                f"requirement failed: ref {self.ref!r} was created concurrently"
            )
        if ref is not None and ref.snapshot_id != self.snapshot_id:
            raise CommitFailedError(
                f"requirement failed: ref {self.ref!r} points to snapshot {ref.snapshot_id}, "
                f"expected {self.snapshot_id}"
            )

    def _body(self) -> dict[str, Any]:
        return {"ref": self.ref, "snapshot-id": self.snapshot_id}

    @classmethod
    def _from(cls, f: Fields) -> AssertRefSnapshotId:
        if "snapshot-id" not in f.obj:
            raise ParseError(f"{f.at('snapshot-id')}: required field is missing (null is allowed)")
        return cls(f.str("ref"), f.opt_long("snapshot-id"))


class _IntRequirement(TableRequirement):
    """A requirement comparing one integer of the metadata with the expected one."""

    json_key: ClassVar[str]
    attr: ClassVar[str]
    what: ClassVar[str]

    @property
    def expected(self) -> int:
        value: int = getattr(self, self.attr)
        return value

    def validate(self, base: TableMetadata | None) -> None:
        base = _exists(base, self.what)
        actual = getattr(base, self.attr)
        if actual != self.expected:
            raise CommitFailedError(
                f"requirement failed: {self.what} changed: expected {self.expected}, found {actual}"
            )

    def _body(self) -> dict[str, Any]:
        return {self.json_key: self.expected}

    @classmethod
    def _from(cls, f: Fields) -> TableRequirement:
        return cls(f.int32(cls.json_key))  # type: ignore[call-arg]


@dataclass(frozen=True)
class AssertLastAssignedFieldId(_IntRequirement):
    type: ClassVar[str] = "assert-last-assigned-field-id"
    json_key: ClassVar[str] = "last-assigned-field-id"
    attr: ClassVar[str] = "last_column_id"
    what: ClassVar[str] = "last assigned field id"
    last_column_id: int


@dataclass(frozen=True)
class AssertCurrentSchemaId(_IntRequirement):
    type: ClassVar[str] = "assert-current-schema-id"
    json_key: ClassVar[str] = "current-schema-id"
    attr: ClassVar[str] = "current_schema_id"
    what: ClassVar[str] = "current schema id"
    current_schema_id: int


@dataclass(frozen=True)
class AssertLastAssignedPartitionId(_IntRequirement):
    type: ClassVar[str] = "assert-last-assigned-partition-id"
    json_key: ClassVar[str] = "last-assigned-partition-id"
    attr: ClassVar[str] = "last_partition_id"
    what: ClassVar[str] = "last assigned partition id"
    last_partition_id: int


@dataclass(frozen=True)
class AssertDefaultSpecId(_IntRequirement):
    type: ClassVar[str] = "assert-default-spec-id"
    json_key: ClassVar[str] = "default-spec-id"
    attr: ClassVar[str] = "default_spec_id"
    what: ClassVar[str] = "default spec id"
    default_spec_id: int


@dataclass(frozen=True)
class AssertDefaultSortOrderId(_IntRequirement):
    type: ClassVar[str] = "assert-default-sort-order-id"
    json_key: ClassVar[str] = "default-sort-order-id"
    attr: ClassVar[str] = "default_sort_order_id"
    what: ClassVar[str] = "default sort order id"
    default_sort_order_id: int


_REQUIREMENTS: dict[str, type[TableRequirement]] = {
    cls.type: cls
    for cls in (
        AssertCreate,
        AssertTableUUID,
        AssertRefSnapshotId,
        AssertLastAssignedFieldId,
        AssertCurrentSchemaId,
        AssertLastAssignedPartitionId,
        AssertDefaultSpecId,
        AssertDefaultSortOrderId,
    )
}


def requirement_from_json(obj: Any, path: str = "requirement") -> TableRequirement:
    f = Fields(obj, path)
    kind = f.str("type")
    cls = _REQUIREMENTS.get(kind)
    if cls is None:
        raise ParseError(f"{f.at('type')}: unknown table requirement {kind!r}")
    return cls._from(f)
