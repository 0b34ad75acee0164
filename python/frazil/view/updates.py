"""View updates and requirements (``ViewUpdate`` / ``ViewRequirement`` in
``rest-catalog-open-api.yaml``) and the builder that applies them under the view spec's rules.

The updates whose JSON is the same for tables and views (``assign-uuid``,
``upgrade-format-version``, ``add-schema``, ``set-location``, ``set-properties``,
``remove-properties``) are the table update classes; only ``add-view-version`` and
``set-current-view-version`` are defined here.

:class:`ViewMetadataBuilder` keeps the rules of the reference's ``ViewMetadata.Builder``:

- an added version that behaves like an existing one (same summary, representations, default
  catalog and namespace, and schema) reuses that version's id instead of adding a duplicate; an
  added schema with the columns of an existing one reuses its id;
- ``-1`` means "the schema / version added last" in ``add-view-version``'s ``schema-id`` and in
  ``set-current-view-version``;
- a version may hold one SQL representation per dialect (compared case-insensitively);
- the version log gets an entry only when ``current-version-id`` changes;
- at most ``version.history.num-entries`` (default 10) versions are kept, never dropping the
  current version or one added in the same change; the version log is cut before the oldest
  entry whose version is gone;
- unless ``replace.drop-dialect.allowed`` is true, the new current version must keep every SQL
  dialect of the previous one.
"""

from __future__ import annotations

import time
import uuid as uuid_mod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from frazil._json import Fields
from frazil.exceptions import CommitFailedError, ParseError, UnsupportedError, ValidationError
from frazil.schema import Schema
from frazil.table.update.updates import (
    AddSchemaUpdate,
    AssignUUIDUpdate,
    RemovePropertiesUpdate,
    SetLocationUpdate,
    SetPropertiesUpdate,
    TableUpdate,
    UpgradeFormatVersionUpdate,
)
from frazil.view.metadata import (
    SUPPORTED_VIEW_FORMAT_VERSION,
    ViewHistoryEntry,
    ViewMetadata,
    ViewVersion,
    duplicate_dialect,
    sql_dialects,
)

__all__ = [
    "LAST_ADDED",
    "REPLACE_DROP_DIALECT_ALLOWED",
    "VERSION_HISTORY_SIZE",
    "AddSchemaUpdate",
    "AddViewVersionUpdate",
    "AssertViewUUID",
    "AssignUUIDUpdate",
    "RemovePropertiesUpdate",
    "SetCurrentViewVersionUpdate",
    "SetLocationUpdate",
    "SetPropertiesUpdate",
    "UpgradeFormatVersionUpdate",
    "ViewMetadataBuilder",
    "ViewRequirement",
    "ViewUpdate",
    "update_view_metadata",
    "view_requirement_from_json",
    "view_update_from_json",
]

# View properties (names and defaults of the Java reference's ViewProperties).
VERSION_HISTORY_SIZE = "version.history.num-entries"
VERSION_HISTORY_SIZE_DEFAULT = 10
REPLACE_DROP_DIALECT_ALLOWED = "replace.drop-dialect.allowed"
LAST_ADDED = -1
INITIAL_SCHEMA_ID = 0


@dataclass(frozen=True)
class AddViewVersionUpdate(TableUpdate):
    action: ClassVar[str] = "add-view-version"
    view_version: ViewVersion

    def _body(self) -> dict[str, Any]:
        return {"view-version": self.view_version.to_json()}

    @classmethod
    def _from(cls, f: Fields) -> AddViewVersionUpdate:
        return cls(ViewVersion.from_json(f.raw("view-version"), f.at("view-version")))


@dataclass(frozen=True)
class SetCurrentViewVersionUpdate(TableUpdate):
    action: ClassVar[str] = "set-current-view-version"
    view_version_id: int

    def _body(self) -> dict[str, Any]:
        return {"view-version-id": self.view_version_id}

    @classmethod
    def _from(cls, f: Fields) -> SetCurrentViewVersionUpdate:
        return cls(f.int32("view-version-id"))


ViewUpdate = (
    AssignUUIDUpdate
    | UpgradeFormatVersionUpdate
    | AddSchemaUpdate
    | SetLocationUpdate
    | SetPropertiesUpdate
    | RemovePropertiesUpdate
    | AddViewVersionUpdate
    | SetCurrentViewVersionUpdate
)

_VIEW_UPDATES: dict[str, type[TableUpdate]] = {
    cls.action: cls
    for cls in (
        AssignUUIDUpdate,
        UpgradeFormatVersionUpdate,
        AddSchemaUpdate,
        SetLocationUpdate,
        SetPropertiesUpdate,
        RemovePropertiesUpdate,
        AddViewVersionUpdate,
        SetCurrentViewVersionUpdate,
    )
}


def view_update_from_json(obj: Any, path: str = "update") -> ViewUpdate:
    f = Fields(obj, path)
    action = f.str("action")
    cls = _VIEW_UPDATES.get(action)
    if cls is None:
        raise ParseError(f"{f.at('action')}: unknown view update {action!r}")
    return cls._from(f)  # type: ignore[return-value]


# --------------------------------------------------------------------------------------------
# requirements


class ViewRequirement:
    type: ClassVar[str]

    def validate(self, base: ViewMetadata | None) -> None:
        """Raises :class:`CommitFailedError` when the requirement does not hold."""
        raise NotImplementedError

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, **self._body()}

    def _body(self) -> dict[str, Any]:
        return {}


@dataclass(frozen=True)
class AssertViewUUID(ViewRequirement):
    type: ClassVar[str] = "assert-view-uuid"
    uuid: uuid_mod.UUID

    def validate(self, base: ViewMetadata | None) -> None:
        if base is None:
            raise CommitFailedError("requirement failed: view uuid: the view does not exist")
        if base.view_uuid != self.uuid:
            raise CommitFailedError(
                f"requirement failed: view uuid {base.view_uuid} != expected {self.uuid}"
            )

    def _body(self) -> dict[str, Any]:
        return {"uuid": str(self.uuid)}


def view_requirement_from_json(obj: Any, path: str = "requirement") -> ViewRequirement:
    f = Fields(obj, path)
    kind = f.str("type")
    if kind != AssertViewUUID.type:
        raise ParseError(f"{f.at('type')}: unknown view requirement {kind!r}")
    text = f.str("uuid")
    try:
        return AssertViewUUID(uuid_mod.UUID(text))
    except ValueError:
        raise ParseError(f"{f.at('uuid')}: {text!r} is not a UUID") from None


# --------------------------------------------------------------------------------------------
# the builder


def _now_ms() -> int:
    return int(time.time() * 1000)


class ViewMetadataBuilder:
    """Changes one view's metadata (or builds a new view's from nothing) under the spec's rules
    (see the module docstring). ``changes`` lists the updates that express what was done, as a
    REST request would carry them."""

    def __init__(self, base: ViewMetadata | None = None) -> None:
        self.changes: list[ViewUpdate] = []
        self._base = base
        self._last_added_schema_id: int | None = None
        self._last_added_version_id: int | None = None
        self._history_entry: ViewHistoryEntry | None = None
        if base is None:
            self._uuid: uuid_mod.UUID | None = None
            self._format_version = SUPPORTED_VIEW_FORMAT_VERSION
            self._location: str | None = None
            self._schemas: list[Schema] = []
            self._versions: list[ViewVersion] = []
            self._log: list[ViewHistoryEntry] = []
            self._properties: dict[str, str] = {}
            self._current_version_id: int | None = None
            self._previous: ViewVersion | None = None
        else:
            self._uuid = base.view_uuid
            self._format_version = base.format_version
            self._location = base.location
            self._schemas = list(base.schemas)
            self._versions = list(base.versions)
            self._log = list(base.version_log)
            self._properties = dict(base.properties)
            self._current_version_id = base.current_version_id
            self._previous = base.current_version()

    # ---- one method per update

    def apply(self, update: ViewUpdate | TableUpdate) -> ViewMetadataBuilder:
        if isinstance(update, AssignUUIDUpdate):
            return self.assign_uuid(update.uuid)
        if isinstance(update, UpgradeFormatVersionUpdate):
            return self.upgrade_format_version(update.format_version)
        if isinstance(update, AddSchemaUpdate):
            self.add_schema(update.schema_)
            return self
        if isinstance(update, SetLocationUpdate):
            return self.set_location(update.location)
        if isinstance(update, SetPropertiesUpdate):
            return self.set_properties(update.updates)
        if isinstance(update, RemovePropertiesUpdate):
            return self.remove_properties(update.removals)
        if isinstance(update, AddViewVersionUpdate):
            self.add_version(update.view_version)
            return self
        if isinstance(update, SetCurrentViewVersionUpdate):
            return self.set_current_version_id(update.view_version_id)
        raise ValidationError(f"{update.action!r} is not a view update")

    def assign_uuid(self, new_uuid: uuid_mod.UUID) -> ViewMetadataBuilder:
        if self._uuid is not None and self._uuid != new_uuid:
            raise ValidationError(f"cannot reassign the view uuid {self._uuid} to {new_uuid}")
        if self._uuid != new_uuid:
            self._uuid = new_uuid
            self.changes.append(AssignUUIDUpdate(new_uuid))
        return self

    def upgrade_format_version(self, format_version: int) -> ViewMetadataBuilder:
        if format_version < self._format_version:
            raise ValidationError(
                f"cannot downgrade a v{self._format_version} view to v{format_version}"
            )
        if format_version > SUPPORTED_VIEW_FORMAT_VERSION:
            raise UnsupportedError(f"view format version {format_version} is not supported")
        if format_version != self._format_version:
            self._format_version = format_version
            self.changes.append(UpgradeFormatVersionUpdate(format_version))
        return self

    def set_location(self, location: str) -> ViewMetadataBuilder:
        if not location:
            raise ValidationError("invalid view location: empty")
        if location != self._location:
            self._location = location
            self.changes.append(SetLocationUpdate(location))
        return self

    def set_properties(self, updates: Mapping[str, str]) -> ViewMetadataBuilder:
        if updates:
            self._properties.update(updates)
            self.changes.append(SetPropertiesUpdate(dict(updates)))
        return self

    def remove_properties(self, removals: Iterable[str]) -> ViewMetadataBuilder:
        keys = tuple(removals)
        if keys:
            for key in keys:
                self._properties.pop(key, None)
            self.changes.append(RemovePropertiesUpdate(keys))
        return self

    def add_schema(self, schema: Schema) -> int:
        """Adds ``schema`` (or finds an existing schema with its columns); returns its id."""
        new_id = INITIAL_SCHEMA_ID
        for existing in self._schemas:
            if existing.same_columns(schema):
                # A reused schema is "the one added last" for a following -1.
                self._last_added_schema_id = existing.schema_id
                return existing.schema_id
            new_id = max(new_id, existing.schema_id + 1)
        if schema.schema_id != new_id:
            schema = Schema(
                *schema.fields, schema_id=new_id, identifier_field_ids=schema.identifier_field_ids
            )
        self._schemas.append(schema)
        self.changes.append(AddSchemaUpdate(schema))
        self._last_added_schema_id = new_id
        return new_id

    def add_version(self, version: ViewVersion) -> int:
        """Adds ``version`` (or finds an existing version that behaves the same); returns its
        id. A ``schema_id`` of -1 is the schema added last."""
        if version.schema_id == LAST_ADDED:
            if self._last_added_schema_id is None:
                raise ValidationError("cannot use the last added schema: no schema was added")
            version = version.replace(schema_id=self._last_added_schema_id)
        new_id = version.version_id
        for existing in self._versions:
            if existing.same_as(version):
                self._last_added_version_id = existing.version_id
                return existing.version_id
            if existing.version_id >= new_id:
                new_id = existing.version_id + 1
        if version.version_id != new_id:
            version = version.replace(version_id=new_id)
        if not any(s.schema_id == version.schema_id for s in self._schemas):
            raise ValidationError(
                f"cannot add a view version with unknown schema {version.schema_id}"
            )
        dup = duplicate_dialect(version.representations)
        if dup is not None:
            raise ValidationError(
                f"invalid view version: more than one SQL representation for dialect {dup!r}"
            )
        self._versions.append(version)
        added = version
        if version.schema_id == self._last_added_schema_id and self._schema_added_here(
            version.schema_id
        ):
            added = version.replace(schema_id=LAST_ADDED)
        self.changes.append(AddViewVersionUpdate(added))
        self._last_added_version_id = new_id
        return new_id

    def _schema_added_here(self, schema_id: int) -> bool:
        return any(
            isinstance(c, AddSchemaUpdate) and c.schema_.schema_id == schema_id
            for c in self.changes
        )

    def _added_version_ids(self) -> set[int]:
        return {
            c.view_version.version_id for c in self.changes if isinstance(c, AddViewVersionUpdate)
        }

    def set_current_version_id(self, version_id: int) -> ViewMetadataBuilder:
        if version_id == LAST_ADDED:
            if self._last_added_version_id is None:
                raise ValidationError("cannot set the last added version: no version was added")
            version_id = self._last_added_version_id
        version = next((v for v in self._versions if v.version_id == version_id), None)
        if version is None:
            raise ValidationError(f"cannot set the current version to unknown version {version_id}")
        if version_id == self._current_version_id:
            return self
        self._current_version_id = version_id
        added_here = version_id in self._added_version_ids()
        self.changes.append(SetCurrentViewVersionUpdate(LAST_ADDED if added_here else version_id))
        # A version added in this change became current when it was created; one made current
        # again (a rollback) became current now.
        self._history_entry = ViewHistoryEntry(
            timestamp_ms=version.timestamp_ms if added_here else _now_ms(), version_id=version_id
        )
        return self

    def set_current_version(self, version: ViewVersion, schema: Schema) -> ViewMetadataBuilder:
        """Adds ``schema`` and ``version`` (on that schema) and makes the version current."""
        schema_id = self.add_schema(schema)
        return self.set_current_version_id(self.add_version(version.replace(schema_id=schema_id)))

    # ---- the result

    def build(self) -> ViewMetadata:
        if self._location is None:
            raise ValidationError("invalid view metadata: no location")
        if not self._versions or self._current_version_id is None:
            raise ValidationError("invalid view metadata: no current version")
        log = list(self._log)
        if self._history_entry is not None:
            log.append(self._history_entry)
        current = next(v for v in self._versions if v.version_id == self._current_version_id)
        allowed = self._properties.get(REPLACE_DROP_DIALECT_ALLOWED, "false").strip().lower()
        if self._previous is not None and allowed != "true":
            lost = set(sql_dialects(self._previous.representations)) - set(
                sql_dialects(current.representations)
            )
            if lost:
                raise ValidationError(
                    f"cannot replace the view: its new version drops dialect(s) {sorted(lost)} "
                    f"(set {REPLACE_DROP_DIALECT_ALLOWED}=true to allow it)"
                )
        text = self._properties.get(VERSION_HISTORY_SIZE)
        try:
            history_size = VERSION_HISTORY_SIZE_DEFAULT if text is None else int(text)
        except ValueError:
            raise ValidationError(f"{VERSION_HISTORY_SIZE}={text!r} is not an integer") from None
        if history_size <= 0:
            raise ValidationError(f"{VERSION_HISTORY_SIZE} must be positive, got {history_size}")
        must_keep = self._added_version_ids()
        must_keep.add(self._current_version_id)
        keep = max(len(must_keep), history_size)
        versions = self._versions
        if len(versions) > keep:
            # Ids grow with every added version: keep the current one and the newest others.
            kept = {self._current_version_id}
            for vid in sorted((v.version_id for v in versions), reverse=True):
                if len(kept) >= keep:
                    break
                kept.add(vid)
            versions = [v for v in versions if v.version_id in kept]
            trimmed: list[ViewHistoryEntry] = []
            for entry in log:
                if entry.version_id in kept:
                    trimmed.append(entry)
                else:  # history before a version that is gone cannot be replayed
                    trimmed.clear()
            log = trimmed
        return ViewMetadata(
            view_uuid=self._uuid if self._uuid is not None else uuid_mod.uuid4(),
            format_version=self._format_version,
            location=self._location,
            schemas=tuple(self._schemas),
            current_version_id=self._current_version_id,
            versions=tuple(versions),
            version_log=tuple(log),
            properties=dict(self._properties),
        )


def update_view_metadata(
    base: ViewMetadata | None, updates: Sequence[ViewUpdate | TableUpdate]
) -> ViewMetadata:
    """``base`` with ``updates`` applied (``None``: a new view built from the updates alone).
    Returns ``base`` itself when nothing changes. Breaking a rule of the spec is a
    :class:`ValidationError`."""
    builder = ViewMetadataBuilder(base)
    for update in updates:
        builder.apply(update)
    if base is not None and not builder.changes:
        return base
    return builder.build()
