"""View metadata (the view spec: "View Metadata", "Versions", "Representations", "Version log").

``ViewMetadata.from_json`` reads a view metadata file (text or bytes, gzip detected) strictly:
every error names the field path. ``to_json`` writes the fields in the Java reference's order
(``ViewMetadataParser``) in its compact form, so a file rewritten by either is the same.
Representations of a type other than ``sql`` are kept as read and written back untouched.
"""

from __future__ import annotations

import copy
import dataclasses
import gzip
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from frazil import _json
from frazil._json import Fields, check_unicode, check_unique
from frazil.exceptions import ParseError, UnsupportedError
from frazil.metadata import gunzip
from frazil.schema import Schema, check_str_list

__all__ = [
    "SUPPORTED_VIEW_FORMAT_VERSION",
    "SQLViewRepresentation",
    "UnknownViewRepresentation",
    "ViewHistoryEntry",
    "ViewMetadata",
    "ViewRepresentation",
    "ViewVersion",
    "representation_from_json",
]

SUPPORTED_VIEW_FORMAT_VERSION = 1
SQL_TYPE = "sql"


@dataclass(frozen=True)
class SQLViewRepresentation:
    """A ``sql`` representation: a SELECT in one dialect."""

    sql: str
    dialect: str

    @property
    def type(self) -> str:
        return SQL_TYPE

    def to_json(self) -> dict[str, Any]:
        return {"type": SQL_TYPE, "sql": self.sql, "dialect": self.dialect}


@dataclass(frozen=True)
class UnknownViewRepresentation:
    """A representation of a type this library does not know, kept as its JSON object so that
    rewriting the metadata leaves it untouched."""

    type: str
    raw: Mapping[str, Any] = field(hash=False)

    def to_json(self) -> dict[str, Any]:
        return copy.deepcopy(dict(self.raw))


ViewRepresentation = SQLViewRepresentation | UnknownViewRepresentation


def representation_from_json(obj: Any, path: str) -> ViewRepresentation:
    f = Fields(obj, path)
    kind = f.str("type")
    # The reference compares the type case-insensitively.
    if kind.lower() == SQL_TYPE:
        return SQLViewRepresentation(sql=f.str("sql"), dialect=f.str("dialect"))
    return UnknownViewRepresentation(type=kind, raw=copy.deepcopy(f.obj))


def sql_dialects(representations: Sequence[ViewRepresentation]) -> list[str]:
    """The lower-cased dialects of the SQL representations (the reference compares dialects
    case-insensitively)."""
    return [r.dialect.lower() for r in representations if isinstance(r, SQLViewRepresentation)]


def duplicate_dialect(representations: Sequence[ViewRepresentation]) -> str | None:
    """A dialect that appears more than once (the spec allows one SQL representation per
    dialect), or ``None``."""
    seen: set[str] = set()
    for dialect in sql_dialects(representations):
        if dialect in seen:
            return dialect
        seen.add(dialect)
    return None


@dataclass(frozen=True)
class ViewVersion:
    """One immutable version of a view: its query representations, schema and defaults."""

    version_id: int
    timestamp_ms: int
    schema_id: int
    summary: Mapping[str, str]
    representations: tuple[ViewRepresentation, ...]
    default_namespace: tuple[str, ...]
    default_catalog: str | None = None

    def sql_for(self, dialect: str) -> SQLViewRepresentation | None:
        """The SQL of ``dialect`` (case-insensitive), else the first SQL representation, else
        ``None``: the reference's ``View.sqlFor``."""
        closest = None
        for r in self.representations:
            if isinstance(r, SQLViewRepresentation):
                if r.dialect.lower() == dialect.lower():
                    return r
                if closest is None:
                    closest = r
        return closest

    def replace(self, **changes: Any) -> ViewVersion:
        return dataclasses.replace(self, **changes)

    def same_as(self, other: ViewVersion) -> bool:
        """Whether both behave the same, ignoring version id and timestamp (how the reference
        finds an existing version to reuse instead of adding a duplicate)."""
        return (
            dict(self.summary) == dict(other.summary)
            and [r.to_json() for r in self.representations]
            == [r.to_json() for r in other.representations]
            and self.default_catalog == other.default_catalog
            and tuple(self.default_namespace) == tuple(other.default_namespace)
            and self.schema_id == other.schema_id
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "version-id": self.version_id,
            "timestamp-ms": self.timestamp_ms,
            "schema-id": self.schema_id,
            "summary": dict(self.summary),
        }
        if self.default_catalog is not None:
            out["default-catalog"] = self.default_catalog
        out["default-namespace"] = list(self.default_namespace)
        out["representations"] = [r.to_json() for r in self.representations]
        return out

    @classmethod
    def from_json(cls, obj: Any, path: str) -> ViewVersion:
        f = Fields(obj, path)
        version_id = f.int32("version-id")
        timestamp_ms = f.long("timestamp-ms")
        schema_id = f.int32("schema-id")
        if not f.has("summary"):
            raise ParseError(f"{f.at('summary')}: required field is missing")
        summary = f.opt_str_map("summary")
        representations = tuple(
            representation_from_json(r, f"{f.at('representations')}[{i}]")
            for i, r in enumerate(f.list("representations"))
        )
        dup = duplicate_dialect(representations)
        if dup is not None:
            raise ParseError(
                f"{f.at('representations')}: more than one SQL representation for dialect {dup!r}"
            )
        default_namespace = tuple(
            check_str_list(f.list("default-namespace"), f.at("default-namespace"))
        )
        return cls(
            version_id=version_id,
            timestamp_ms=timestamp_ms,
            schema_id=schema_id,
            summary=summary,
            representations=representations,
            default_namespace=default_namespace,
            default_catalog=f.opt_str("default-catalog"),
        )


@dataclass(frozen=True)
class ViewHistoryEntry:
    """An entry of the version log: when ``current-version-id`` became ``version_id``."""

    timestamp_ms: int
    version_id: int

    def to_json(self) -> dict[str, Any]:
        return {"timestamp-ms": self.timestamp_ms, "version-id": self.version_id}

    @classmethod
    def from_json(cls, obj: Any, path: str) -> ViewHistoryEntry:
        f = Fields(obj, path)
        return cls(timestamp_ms=f.long("timestamp-ms"), version_id=f.int32("version-id"))


@dataclass(frozen=True)
class ViewMetadata:
    """One version of a view's metadata. Build changed versions with
    :func:`frazil.view.updates.update_view_metadata`, never by hand-editing fields."""

    view_uuid: uuid.UUID
    format_version: int
    location: str
    schemas: tuple[Schema, ...]
    current_version_id: int
    versions: tuple[ViewVersion, ...]
    version_log: tuple[ViewHistoryEntry, ...] = ()
    properties: Mapping[str, str] = field(default_factory=dict)

    # ---- lookups

    def version_by_id(self, version_id: int) -> ViewVersion | None:
        return next((v for v in self.versions if v.version_id == version_id), None)

    def current_version(self) -> ViewVersion:
        version = self.version_by_id(self.current_version_id)
        if version is None:  # only a hand-built object can get here; parsing checks it
            raise ParseError(f"current-version-id: no version with id {self.current_version_id}")
        return version

    def schema_by_id(self, schema_id: int) -> Schema | None:
        return next((s for s in self.schemas if s.schema_id == schema_id), None)

    def schema(self) -> Schema:
        """The schema of the current version."""
        schema_id = self.current_version().schema_id
        schema = self.schema_by_id(schema_id)
        if schema is None:
            raise ParseError(f"current version: no schema with id {schema_id}")
        return schema

    def replace(self, **changes: Any) -> ViewMetadata:
        return dataclasses.replace(self, **changes)

    # ---- JSON

    @classmethod
    def from_json(cls, data: str | bytes | bytearray) -> ViewMetadata:
        """Parses a view metadata file's content (plain or gzip-compressed JSON)."""
        if isinstance(data, (bytes, bytearray)):
            raw: bytes | bytearray = bytes(data)
            if raw[:2] == b"\x1f\x8b":
                raw = gunzip(raw)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise ParseError(f"view metadata: not UTF-8: {e}") from None
        elif isinstance(data, str):
            text = data
        else:
            raise ParseError(f"view metadata: expected str or bytes, got {type(data).__name__}")
        try:
            obj = json.loads(text)
            check_unicode(text, obj)
        except (json.JSONDecodeError, RecursionError) as e:
            raise ParseError(f"view metadata: invalid JSON: {e}") from None
        return cls.from_dict(obj)

    @classmethod
    def from_dict(cls, obj: Any) -> ViewMetadata:
        try:
            return _parse(Fields(obj, ""))
        except RecursionError:
            raise ParseError("view metadata: nesting too deep") from None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "view-uuid": str(self.view_uuid),
            "format-version": self.format_version,
            "location": self.location,
        }
        # The reference writes properties only when there are some.
        if self.properties:
            out["properties"] = dict(self.properties)
        out["schemas"] = [s.to_json() for s in self.schemas]
        out["current-version-id"] = self.current_version_id
        out["versions"] = [v.to_json() for v in self.versions]
        out["version-log"] = [e.to_json() for e in self.version_log]
        return out

    def to_json(self, indent: int | None = None) -> str:
        """The metadata file's text as the Java reference writes it (compact, its field order);
        ``indent`` pretty-prints it for people instead."""
        if indent is None:
            return _json.dumps(self.to_dict())
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def to_json_bytes(self, compress: bool = False) -> bytes:
        """UTF-8 JSON, gzip-compressed when ``compress`` (file name ``*.gz.metadata.json``)."""
        data = self.to_json().encode("utf-8")
        return gzip.compress(data, mtime=0) if compress else data


def _parse(f: Fields) -> ViewMetadata:
    version = f.int32("format-version")
    if version > SUPPORTED_VIEW_FORMAT_VERSION:
        raise UnsupportedError(
            f"format-version: view format version {version} is newer than the newest supported "
            f"({SUPPORTED_VIEW_FORMAT_VERSION}); refusing to misread it"
        )
    if version < 1:
        raise ParseError(f"format-version: {version} is not a valid view format version")
    uuid_text = f.str("view-uuid")
    try:
        view_uuid = uuid.UUID(uuid_text)
    except ValueError:
        raise ParseError(f"view-uuid: {uuid_text!r} is not a UUID") from None
    location = f.str("location")
    properties = f.opt_str_map("properties")

    schemas = tuple(Schema.from_json(s, f"schemas[{i}]") for i, s in enumerate(f.list("schemas")))
    check_unique([s.schema_id for s in schemas], "schemas", "schema-id")

    current_version_id = f.int32("current-version-id")
    versions = tuple(
        ViewVersion.from_json(v, f"versions[{i}]") for i, v in enumerate(f.list("versions"))
    )
    check_unique([v.version_id for v in versions], "versions", "version-id")
    current = next((v for v in versions if v.version_id == current_version_id), None)
    if current is None:
        raise ParseError(f"current-version-id: no version with id {current_version_id}")
    if current.schema_id not in {s.schema_id for s in schemas}:
        i = versions.index(current)
        raise ParseError(f"versions[{i}].schema-id: no schema with id {current.schema_id}")

    log = tuple(
        ViewHistoryEntry.from_json(e, f"version-log[{i}]")
        for i, e in enumerate(f.list("version-log"))
    )
    return ViewMetadata(
        view_uuid=view_uuid,
        format_version=version,
        location=location,
        schemas=schemas,
        current_version_id=current_version_id,
        versions=versions,
        version_log=log,
        properties=properties,
    )
