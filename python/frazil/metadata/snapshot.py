"""Snapshots, their summaries and operations, refs (branches and tags) and the snapshot and
metadata logs: the parts of table metadata (:class:`frazil.metadata.TableMetadata`) that record
its history. All are exported from :mod:`frazil.metadata`."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from frazil._json import Fields, check_str
from frazil.exceptions import ParseError

__all__ = [
    "MetadataLogEntry",
    "Operation",
    "Snapshot",
    "SnapshotLogEntry",
    "SnapshotRef",
    "SnapshotRefType",
    "Summary",
]


class Operation(str, Enum):
    """Values of a snapshot summary's ``operation``. A ``str`` enum that compares, hashes and
    prints as its value, so ``Operation.APPEND == "append"`` and both find each other in sets."""

    APPEND = "append"
    REPLACE = "replace"
    OVERWRITE = "overwrite"
    DELETE = "delete"

    def __str__(self) -> str:
        return str(self.value)

    def __hash__(self) -> int:
        return hash(str(self.value))


class Summary(Mapping[str, str]):
    """A snapshot summary: ``operation`` plus string properties. A read-only mapping (as
    stored in metadata, ``summary["operation"]`` is the plain string) with PyIceberg's
    ``summary.operation`` (an :class:`Operation`) and ``additional_properties``."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, str]) -> None:
        self._data: dict[str, str] = {k: str(v) for k, v in data.items()}

    def __getitem__(self, key: str) -> str:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Summary({self._data!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._data == dict(other.items())
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._data.items())))

    @property
    def operation(self) -> Operation | str | None:
        """The operation as an :class:`Operation`; an unknown name stays a string."""
        op = self._data.get("operation")
        if op is None:
            return None
        try:
            return Operation(op)
        except ValueError:
            return op

    @property
    def additional_properties(self) -> dict[str, str]:
        """Every property but ``operation`` (PyIceberg's name)."""
        return {k: v for k, v in self._data.items() if k != "operation"}


@dataclass(frozen=True)
class Snapshot:
    snapshot_id: int
    timestamp_ms: int
    parent_snapshot_id: int | None = None
    # v1 snapshots read as sequence number 0 (Appendix E).
    sequence_number: int = 0
    manifest_list: str | None = None
    # v1 only: manifest locations listed inline instead of a manifest list.
    manifests: tuple[str, ...] | None = None
    # ``operation`` plus string properties; optional only in v1.
    summary: Mapping[str, str] | None = None
    schema_id: int | None = None
    # v3 row lineage; absent on snapshots written before an upgrade to v3.
    first_row_id: int | None = None
    added_rows: int | None = None
    key_id: str | None = None

    def __post_init__(self) -> None:
        if self.summary is not None and not isinstance(self.summary, Summary):
            object.__setattr__(self, "summary", Summary(self.summary))

    @property
    def operation(self) -> str | None:
        return None if self.summary is None else self.summary.get("operation")

    def to_json(self, format_version: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        # First, as the reference writes it. The reference leaves out a sequence number of 0 (a
        # v1 snapshot carried into v2 by an upgrade); the spec requires it from v2, so it stays.
        if format_version >= 2:
            out["sequence-number"] = self.sequence_number
        out["snapshot-id"] = self.snapshot_id
        if self.parent_snapshot_id is not None:
            out["parent-snapshot-id"] = self.parent_snapshot_id
        out["timestamp-ms"] = self.timestamp_ms
        if self.summary is not None:
            # the operation first, then the other properties in their order
            out["summary"] = {"operation": self.summary["operation"]} | dict(self.summary)
        if self.manifest_list is not None:
            out["manifest-list"] = self.manifest_list
        elif self.manifests is not None:
            out["manifests"] = list(self.manifests)
        if self.schema_id is not None:
            out["schema-id"] = self.schema_id
        if format_version >= 3:
            if self.first_row_id is not None:
                out["first-row-id"] = self.first_row_id
            if self.added_rows is not None:
                out["added-rows"] = self.added_rows
            if self.key_id is not None:
                out["key-id"] = self.key_id
        return out

    @classmethod
    def from_json(cls, obj: Any, path: str, format_version: int | None) -> Snapshot:
        """Reads a snapshot of a table of ``format_version``; ``None`` (a REST ``add-snapshot``,
        whose table is not known yet) reads every field that is present."""
        f = Fields(obj, path)
        v = format_version
        snapshot_id = f.long("snapshot-id")
        parent = f.opt_long("parent-snapshot-id")
        # v1 has no sequence numbers: they read as 0 (Appendix E) even if a writer put one in.
        if v is None:
            sequence_number = f.opt_long("sequence-number") or 0
        else:
            # A v2 snapshot without one has 0 (one from v1, carried over by an upgrade): the
            # reference writes none for 0 and reads a missing one as 0.
            sequence_number = (f.opt_long("sequence-number") or 0) if v >= 2 else 0
        timestamp_ms = f.long("timestamp-ms")
        strict = v is not None and v >= 2
        manifest_list = f.str("manifest-list") if strict else f.opt_str("manifest-list")
        manifests_raw = f.opt_list("manifests")
        manifests = None
        if manifests_raw is not None:
            at = f.at("manifests")
            manifests = tuple(check_str(m, f"{at}[{i}]") for i, m in enumerate(manifests_raw))
        if manifest_list is None and manifests is None:
            raise ParseError(f"{path}: a snapshot needs manifest-list or manifests")
        v3 = v is None or v >= 3
        first_row_id = f.opt_long("first-row-id") if v3 else None
        added_rows = f.opt_long("added-rows") if v3 else None
        if first_row_id is not None and added_rows is None:
            # Both are required in v3: without added-rows, the row ids this snapshot assigned
            # (first-row-id onwards) have no bound, so next-row-id cannot be checked against it.
            raise ParseError(f"{path}: a v3 snapshot with first-row-id needs added-rows")
        summary: dict[str, str] | None
        if strict or f.has("summary"):
            summary = _summary(f)
        else:
            summary = None
        return cls(
            snapshot_id=snapshot_id,
            timestamp_ms=timestamp_ms,
            parent_snapshot_id=parent,
            sequence_number=sequence_number,
            manifest_list=manifest_list,
            manifests=manifests,
            summary=summary,
            schema_id=f.opt_int32("schema-id"),
            # v3 fields; an older table has none (and would not write them back)
            first_row_id=first_row_id,
            added_rows=added_rows,
            key_id=f.opt_str("key-id") if v3 else None,
        )


def _summary(f: Fields) -> dict[str, str]:
    summary = f.object("summary")
    out = {}
    for key, value in summary.obj.items():
        # Some writers put non-string values in summaries; keep them as the reference reads
        # them (text), rather than refusing the whole table.
        out[key] = value if isinstance(value, str) else json.dumps(value)
    if "operation" not in out:
        raise ParseError(f"{summary.at('operation')}: required field is missing")
    return out


class SnapshotRefType:
    BRANCH = "branch"
    TAG = "tag"


@dataclass(frozen=True)
class SnapshotRef:
    snapshot_id: int
    snapshot_ref_type: str = SnapshotRefType.BRANCH
    min_snapshots_to_keep: int | None = None
    max_snapshot_age_ms: int | None = None
    max_ref_age_ms: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"snapshot-id": self.snapshot_id, "type": self.snapshot_ref_type}
        for key, value in (
            ("min-snapshots-to-keep", self.min_snapshots_to_keep),
            ("max-snapshot-age-ms", self.max_snapshot_age_ms),
            ("max-ref-age-ms", self.max_ref_age_ms),
        ):
            if value is not None:
                out[key] = value
        return out

    @classmethod
    def from_json(cls, obj: Any, path: str) -> SnapshotRef:
        f = Fields(obj, path)
        ref_type = f.str("type").lower()
        if ref_type not in (SnapshotRefType.BRANCH, SnapshotRefType.TAG):
            raise ParseError(f"{f.at('type')}: expected 'branch' or 'tag', got {ref_type!r}")
        ref = cls(
            snapshot_id=f.long("snapshot-id"),
            snapshot_ref_type=ref_type,
            min_snapshots_to_keep=f.opt_int32("min-snapshots-to-keep"),
            max_snapshot_age_ms=f.opt_long("max-snapshot-age-ms"),
            max_ref_age_ms=f.opt_long("max-ref-age-ms"),
        )
        problem = ref.problem()
        if problem:
            raise ParseError(f"{path}: {problem}")
        return ref

    def problem(self) -> str | None:
        """Why this ref is invalid (spec "Snapshot References"), or None."""
        if self.snapshot_ref_type == SnapshotRefType.TAG and (
            self.min_snapshots_to_keep is not None or self.max_snapshot_age_ms is not None
        ):
            return "a tag cannot set min-snapshots-to-keep or max-snapshot-age-ms"
        for name, value in (
            ("min-snapshots-to-keep", self.min_snapshots_to_keep),
            ("max-snapshot-age-ms", self.max_snapshot_age_ms),
            ("max-ref-age-ms", self.max_ref_age_ms),
        ):
            if value is not None and value <= 0:
                return f"{name} must be positive, got {value}"
        return None


@dataclass(frozen=True)
class SnapshotLogEntry:
    snapshot_id: int
    timestamp_ms: int

    def to_json(self) -> dict[str, Any]:
        return {"timestamp-ms": self.timestamp_ms, "snapshot-id": self.snapshot_id}

    @classmethod
    def from_json(cls, obj: Any, path: str) -> SnapshotLogEntry:
        f = Fields(obj, path)
        return cls(snapshot_id=f.long("snapshot-id"), timestamp_ms=f.long("timestamp-ms"))


@dataclass(frozen=True)
class MetadataLogEntry:
    metadata_file: str
    timestamp_ms: int

    def to_json(self) -> dict[str, Any]:
        return {"timestamp-ms": self.timestamp_ms, "metadata-file": self.metadata_file}

    @classmethod
    def from_json(cls, obj: Any, path: str) -> MetadataLogEntry:
        f = Fields(obj, path)
        return cls(metadata_file=f.str("metadata-file"), timestamp_ms=f.long("timestamp-ms"))
