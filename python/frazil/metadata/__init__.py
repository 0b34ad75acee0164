"""Table metadata (spec "Table Metadata", "Snapshots", "Snapshot References"; JSON in Appendix C;
version rules in Appendix E).

``TableMetadata.from_json`` reads v1, v2, v3 and v4 metadata (text or bytes, gzip detected),
applying the spec's defaults for older versions; ``to_json`` writes each version with its own
fields. Every attribute is typed; parse errors name the field path and never leave a half-built
object behind.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import uuid
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from frazil import _json
from frazil._json import Fields, check_unicode, check_unique
from frazil.exceptions import FrazilError, ParseError, UnsupportedError
from frazil.io.paths import has_scheme, relativize_path, resolve_path
from frazil.metadata.name_mapping import (
    DEFAULT_NAME_MAPPING_PROPERTY,
    NameMapping,
    parse_mapping_from_json,
)
from frazil.metadata.snapshot import (
    MetadataLogEntry,
    Operation,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    SnapshotRefType,
    Summary,
)
from frazil.partitioning import (
    PARTITION_FIELD_ID_START,
    PartitionSpec,
    fields_from_json,
)
from frazil.schema import Schema
from frazil.sorting import UNSORTED_SORT_ORDER, UNSORTED_SORT_ORDER_ID, SortOrder

__all__ = [
    "MAIN_BRANCH",
    "SUPPORTED_FORMAT_VERSION",
    "BlobMetadata",
    "EncryptedKey",
    "MetadataLogEntry",
    "Operation",
    "PartitionStatisticsFile",
    "Snapshot",
    "SnapshotLogEntry",
    "SnapshotRef",
    "SnapshotRefType",
    "StatisticsFile",
    "Summary",
    "TableMetadata",
    "gunzip",
    "resolve_path",
]

# The newest format version this library reads. v4 is read for its relative paths and optional
# location; it is still under development in the spec.
SUPPORTED_FORMAT_VERSION = 4
MAIN_BRANCH = "main"


def _relativize_fields(out: dict[str, Any], location: str) -> None:
    """Spec "Path Relativization" of the path fields of serialized v4 metadata."""
    for snap in out.get("snapshots", ()):
        if snap.get("manifest-list"):
            snap["manifest-list"] = relativize_path(snap["manifest-list"], location)
        if snap.get("manifests"):  # a v1 snapshot's inline manifests, kept by upgrades
            snap["manifests"] = [relativize_path(m, location) for m in snap["manifests"]]
    for entry in out.get("metadata-log", ()):
        entry["metadata-file"] = relativize_path(entry["metadata-file"], location)
    for key in ("statistics", "partition-statistics"):
        for stats in out.get(key, ()):
            stats["statistics-path"] = relativize_path(stats["statistics-path"], location)


# Inflating gzip metadata is capped: deflate expands at most ~1032x, and no metadata file comes
# near a gibibyte of JSON, so a small crafted file cannot take the machine before its parse error.
MAX_GZIP_EXPANSION = 1032
MAX_METADATA_BYTES = 1 << 30
_INFLATE_CHUNK = 1 << 20


def gunzip(raw: bytes | bytearray, limit: int | None = None) -> bytearray:
    """Inflates gzip ``raw`` (every member) in bounded chunks, refusing output past
    ``MAX_GZIP_EXPANSION`` times the input (plus 1 MiB) or ``limit`` (default
    ``MAX_METADATA_BYTES``) before allocating it."""
    cap = min(
        MAX_GZIP_EXPANSION * len(raw) + _INFLATE_CHUNK,
        MAX_METADATA_BYTES if limit is None else limit,
    )
    out = bytearray()
    rest = raw
    try:
        while rest:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            tail = rest
            while not d.eof:
                chunk = d.decompress(tail, _INFLATE_CHUNK)
                if len(out) + len(chunk) > cap:
                    raise ParseError(
                        f"table metadata: gzip data of {len(raw)} bytes inflates past {cap} "
                        "bytes, the most a metadata file may take"
                    )
                out += chunk
                tail = d.unconsumed_tail
                if not chunk and not tail:
                    raise ParseError("table metadata: invalid gzip data: truncated stream")
            rest = d.unused_data
    except zlib.error as e:
        raise ParseError(f"table metadata: invalid gzip data: {e}") from None
    return out


@dataclass(frozen=True)
class BlobMetadata:
    type: str
    snapshot_id: int
    sequence_number: int
    fields: tuple[int, ...]
    properties: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": self.type,
            "snapshot-id": self.snapshot_id,
            "sequence-number": self.sequence_number,
            "fields": list(self.fields),
        }
        if self.properties:
            out["properties"] = dict(self.properties)
        return out

    @classmethod
    def from_json(cls, obj: Any, path: str) -> BlobMetadata:
        f = Fields(obj, path)
        fields = f.opt_int32_list("fields")
        if fields is None:
            raise ParseError(f"{f.at('fields')}: required field is missing")
        return cls(
            type=f.str("type"),
            snapshot_id=f.long("snapshot-id"),
            sequence_number=f.long("sequence-number"),
            fields=tuple(fields),
            properties=f.opt_str_map("properties"),
        )


@dataclass(frozen=True)
class StatisticsFile:
    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int
    file_footer_size_in_bytes: int
    blob_metadata: tuple[BlobMetadata, ...] = ()
    #: The spec's ``key-metadata`` (base64 key metadata, in the plaintext JSON): read, never
    #: written by frazil, since it would store the file's data key in the clear.
    key_metadata: str | None = None
    #: The ``encryption-keys`` entry holding the file's key metadata wrapped by the table's KEK
    #: (Java's ``StatisticsFile.keyId``, apache/iceberg PR #17417 / spec PR #17533).
    key_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "snapshot-id": self.snapshot_id,
            "statistics-path": self.statistics_path,
            "file-size-in-bytes": self.file_size_in_bytes,
            "file-footer-size-in-bytes": self.file_footer_size_in_bytes,
        }
        if self.key_metadata is not None:
            out["key-metadata"] = self.key_metadata
        if self.key_id is not None:
            out["key-id"] = self.key_id
        out["blob-metadata"] = [b.to_json() for b in self.blob_metadata]
        return out

    @classmethod
    def from_json(cls, obj: Any, path: str) -> StatisticsFile:
        f = Fields(obj, path)
        blobs = f.list("blob-metadata")
        return cls(
            snapshot_id=f.long("snapshot-id"),
            statistics_path=f.str("statistics-path"),
            file_size_in_bytes=f.long("file-size-in-bytes"),
            file_footer_size_in_bytes=f.long("file-footer-size-in-bytes"),
            key_metadata=f.opt_str("key-metadata"),
            key_id=f.opt_str("key-id"),
            blob_metadata=tuple(
                BlobMetadata.from_json(b, f"{f.at('blob-metadata')}[{i}]")
                for i, b in enumerate(blobs)
            ),
        )


@dataclass(frozen=True)
class PartitionStatisticsFile:
    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "snapshot-id": self.snapshot_id,
            "statistics-path": self.statistics_path,
            "file-size-in-bytes": self.file_size_in_bytes,
        }

    @classmethod
    def from_json(cls, obj: Any, path: str) -> PartitionStatisticsFile:
        f = Fields(obj, path)
        return cls(
            snapshot_id=f.long("snapshot-id"),
            statistics_path=f.str("statistics-path"),
            file_size_in_bytes=f.long("file-size-in-bytes"),
        )


@dataclass(frozen=True)
class EncryptedKey:
    key_id: str
    encrypted_key_metadata: str
    encrypted_by_id: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "key-id": self.key_id,
            "encrypted-key-metadata": self.encrypted_key_metadata,
        }
        if self.encrypted_by_id is not None:
            out["encrypted-by-id"] = self.encrypted_by_id
        if self.properties:
            out["properties"] = dict(self.properties)
        return out

    @classmethod
    def from_json(cls, obj: Any, path: str) -> EncryptedKey:
        f = Fields(obj, path)
        return cls(
            key_id=f.str("key-id"),
            encrypted_key_metadata=f.str("encrypted-key-metadata"),
            encrypted_by_id=f.opt_str("encrypted-by-id"),
            properties=f.opt_str_map("properties"),
        )


@dataclass(frozen=True)
class TableMetadata:
    """One version of a table's metadata. Build changed versions with
    :class:`frazil.table.update.MetadataBuilder`, never by hand-editing fields."""

    format_version: int
    table_uuid: uuid.UUID | None
    location: str | None
    last_updated_ms: int
    last_column_id: int
    schemas: tuple[Schema, ...]
    current_schema_id: int
    partition_specs: tuple[PartitionSpec, ...]
    default_spec_id: int
    last_partition_id: int
    sort_orders: tuple[SortOrder, ...] = (UNSORTED_SORT_ORDER,)
    default_sort_order_id: int = UNSORTED_SORT_ORDER_ID
    properties: Mapping[str, str] = field(default_factory=dict)
    current_snapshot_id: int | None = None
    snapshots: tuple[Snapshot, ...] = ()
    snapshot_log: tuple[SnapshotLogEntry, ...] = ()
    metadata_log: tuple[MetadataLogEntry, ...] = ()
    refs: Mapping[str, SnapshotRef] = field(default_factory=dict)
    statistics: tuple[StatisticsFile, ...] = ()
    partition_statistics: tuple[PartitionStatisticsFile, ...] = ()
    # v1 reads as 0 (Appendix E).
    last_sequence_number: int = 0
    # v3+: the next snapshot's first-row-id.
    next_row_id: int | None = None
    encryption_keys: tuple[EncryptedKey, ...] = ()

    # ---- lookups

    @property
    def highest_assigned_id(self) -> int:
        """The id above which new fields are numbered: ``last-column-id``, or the highest field
        id of any schema when a writer left ``last-column-id`` below it (Hive, Impala)."""
        return max(self.last_column_id, *(s.highest_field_id for s in self.schemas))

    def schema(self) -> Schema:
        return self.schema_by_id(self.current_schema_id)  # type: ignore[return-value]

    def schema_by_id(self, schema_id: int) -> Schema | None:
        return next((s for s in self.schemas if s.schema_id == schema_id), None)

    def spec(self) -> PartitionSpec:
        return self.spec_by_id(self.default_spec_id)  # type: ignore[return-value]

    def spec_by_id(self, spec_id: int) -> PartitionSpec | None:
        return next((s for s in self.partition_specs if s.spec_id == spec_id), None)

    def specs(self) -> dict[int, PartitionSpec]:
        return {s.spec_id: s for s in self.partition_specs}

    def sort_order(self) -> SortOrder:
        return self.sort_order_by_id(self.default_sort_order_id)  # type: ignore[return-value]

    def sort_order_by_id(self, order_id: int) -> SortOrder | None:
        return next((o for o in self.sort_orders if o.order_id == order_id), None)

    def snapshot_by_id(self, snapshot_id: int) -> Snapshot | None:
        return next((s for s in self.snapshots if s.snapshot_id == snapshot_id), None)

    def snapshot_by_name(self, name: str) -> Snapshot | None:
        ref = self.refs.get(name)
        return None if ref is None else self.snapshot_by_id(ref.snapshot_id)

    def current_snapshot(self) -> Snapshot | None:
        if self.current_snapshot_id is None:
            return None
        return self.snapshot_by_id(self.current_snapshot_id)

    def name_mapping(self) -> NameMapping | None:
        """The table's ``schema.name-mapping.default``, parsed, if it has one."""
        text = self.properties.get(DEFAULT_NAME_MAPPING_PROPERTY)
        return None if text is None else parse_mapping_from_json(text)

    @property
    def paths_location(self) -> str | None:
        """The location relative paths resolve against: the table location from format
        version 4, ``None`` before (every path is absolute there)."""
        return self.location if self.format_version >= 4 else None

    def resolve(self, path: str) -> str:
        """A location field resolved against the table location. Only v4+ has relative paths;
        before v4 every path is absolute, even one without a URI scheme (``/tmp/t/...``)."""
        if self.format_version < 4:
            return path
        return resolve_path(path, self.location)

    def with_v4_paths(self, location: str) -> TableMetadata:
        """This (pre-v4) metadata's path fields as v4 holds them for a table at ``location``
        (spec "Reading v3 or prior metadata for v4": absolute, a missing scheme prepended; then
        relative where under the location)."""
        snapshots = tuple(
            dataclasses.replace(s, manifest_list=relativize_path(s.manifest_list, location))
            if s.manifest_list
            else dataclasses.replace(
                s, manifests=tuple(relativize_path(m, location) for m in s.manifests)
            )
            if s.manifests
            else s
            for s in self.snapshots
        )
        log = tuple(
            dataclasses.replace(e, metadata_file=relativize_path(e.metadata_file, location))
            for e in self.metadata_log
        )
        stats = tuple(
            dataclasses.replace(f, statistics_path=relativize_path(f.statistics_path, location))
            for f in self.statistics
        )
        part_stats = tuple(
            dataclasses.replace(f, statistics_path=relativize_path(f.statistics_path, location))
            for f in self.partition_statistics
        )
        return self.replace(
            location=location,
            snapshots=snapshots,
            metadata_log=log,
            statistics=stats,
            partition_statistics=part_stats,
        )

    def replace(self, **changes: Any) -> TableMetadata:
        return dataclasses.replace(self, **changes)

    # ---- JSON

    @classmethod
    def from_json(
        cls, data: str | bytes | bytearray, location: str | None = None, *, file: str | None = None
    ) -> TableMetadata:
        """Parses a metadata file's content (plain or gzip-compressed JSON). ``location`` is the
        table location for v4 metadata that omits it; ``file``, the file's path, is named in
        errors."""
        if file is None:
            return cls._from_json(data, location)
        try:
            return cls._from_json(data, location)
        except (ParseError, UnsupportedError) as e:
            detail = str(e).removeprefix("table metadata: ")
            raise type(e)(f"table metadata {file}: {detail}") from e

    @classmethod
    def _from_json(cls, data: str | bytes | bytearray, location: str | None) -> TableMetadata:
        if isinstance(data, (bytes, bytearray)):
            raw: bytes | bytearray = bytes(data)
            if raw[:2] == b"\x1f\x8b":
                raw = gunzip(raw)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise ParseError(f"table metadata: not UTF-8: {e}") from None
        elif isinstance(data, str):
            text = data
        else:
            raise ParseError(f"table metadata: expected str or bytes, got {type(data).__name__}")
        try:
            obj = json.loads(text)
            check_unicode(text, obj)
        except (json.JSONDecodeError, RecursionError) as e:
            raise ParseError(f"table metadata: invalid JSON: {e}") from None
        return cls.from_dict(obj, location=location)

    @classmethod
    def from_dict(cls, obj: Any, location: str | None = None) -> TableMetadata:
        try:
            return _parse(Fields(obj, ""), location)
        except RecursionError:
            raise ParseError("table metadata: nesting too deep") from None

    def to_dict(self) -> dict[str, Any]:
        return _serialize(self)

    def to_file_dict(self) -> dict[str, Any]:
        """:meth:`to_dict` as a metadata file holds it: from v4 without ``location`` (the
        catalog supplies it, so the table can be moved without rewriting this file)."""
        out = _serialize(self)
        if self.format_version >= 4:
            out.pop("location", None)
        return out

    def to_json(self, indent: int | None = None) -> str:
        """The metadata's text, byte for byte as the Java reference writes it (compact, its
        field order and number format); ``indent`` pretty-prints it for people instead. Before
        v4 this is the metadata file's text; a v4 file omits ``location`` (see
        :meth:`to_json_bytes`)."""
        if indent is None:
            return _json.dumps(self.to_dict())
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def to_json_bytes(self, compress: bool = False) -> bytes:
        """The metadata file's bytes (:meth:`to_file_dict`): UTF-8 JSON, gzip-compressed when
        ``compress`` (file name ``*.gz.metadata.json``)."""
        data = _json.dumps(self.to_file_dict()).encode("utf-8")
        return gzip.compress(data, mtime=0) if compress else data


def _parse(f: Fields, location_override: str | None) -> TableMetadata:
    version = f.int32("format-version")
    if version > SUPPORTED_FORMAT_VERSION:
        raise UnsupportedError(
            f"format-version: table format version {version} is newer than the newest "
            f"supported ({SUPPORTED_FORMAT_VERSION}); refusing to misread it"
        )
    if version < 1:
        raise ParseError(f"format-version: {version} is not a valid format version")
    v1 = version == 1

    uuid_text = f.str("table-uuid") if version >= 2 else f.opt_str("table-uuid")
    table_uuid = None
    if uuid_text is not None:
        try:
            table_uuid = uuid.UUID(uuid_text)
        except ValueError:
            raise ParseError(f"table-uuid: {uuid_text!r} is not a UUID") from None

    location = f.opt_str("location") if version >= 4 else f.str("location")
    if location is None:
        location = location_override
    if version >= 4 and location is not None and not has_scheme(location):
        raise ParseError(f"location: {location!r} must be an absolute path (with a URI scheme)")

    # v1 reads as 0 (Appendix E), as the reference does, whatever a writer put in.
    last_sequence_number = f.long("last-sequence-number") if version >= 2 else 0
    last_updated_ms = f.long("last-updated-ms")
    last_column_id = f.int32("last-column-id")

    # Schemas: v1 may have only the deprecated `schema`.
    if version >= 2 or f.has("schemas"):
        items = f.list("schemas")
        schemas = [Schema.from_json(s, f"schemas[{i}]") for i, s in enumerate(items)]
        if not schemas:
            raise ParseError("schemas: must not be empty")
        if version >= 2 or f.has("current-schema-id") or not f.has("schema"):
            current_schema_id = f.int32("current-schema-id")
        else:
            # v1 with both forms but no current id: the deprecated `schema` is the current one
            current_schema_id = Schema.from_json(
                f.raw("schema"), "schema", default_schema_id=0
            ).schema_id
    else:
        f.object("schema")  # reports a missing or non-object field by name
        schema = Schema.from_json(f.raw("schema"), "schema", default_schema_id=0)
        schemas = [schema]
        current_schema_id = schema.schema_id
    check_unique([s.schema_id for s in schemas], "schemas", "schema-id")
    if current_schema_id not in {s.schema_id for s in schemas}:
        raise ParseError(f"current-schema-id: no schema with id {current_schema_id}")

    # Partition specs: v1 may have only the deprecated field list `partition-spec`.
    if version >= 2 or f.has("partition-specs"):
        items = f.list("partition-specs")
        specs = [
            PartitionSpec.from_json(s, f"partition-specs[{i}]", v1=v1) for i, s in enumerate(items)
        ]
        if not specs:
            raise ParseError("partition-specs: must not be empty")
        default_spec_id = (
            f.int32("default-spec-id")
            if version >= 2 or f.has("default-spec-id")
            else specs[0].spec_id
        )
    else:
        fields = fields_from_json(f.list("partition-spec"), "partition-spec", v1=True)
        specs = [PartitionSpec(*fields, spec_id=0)]
        default_spec_id = 0
    check_unique([s.spec_id for s in specs], "partition-specs", "spec-id")
    if default_spec_id not in {s.spec_id for s in specs}:
        raise ParseError(f"default-spec-id: no partition spec with id {default_spec_id}")
    if version >= 2 or f.has("last-partition-id"):
        last_partition_id = f.int32("last-partition-id")
    else:
        last_partition_id = max(
            (pf.field_id for s in specs for pf in s.fields), default=PARTITION_FIELD_ID_START - 1
        )

    # Sort orders: optional in v1, where the table is unsorted if they are missing.
    if version >= 2 or f.has("sort-orders"):
        items = f.list("sort-orders")
        orders = [SortOrder.from_json(o, f"sort-orders[{i}]") for i, o in enumerate(items)]
        default_order_id = f.int32("default-sort-order-id")
    else:
        orders = [UNSORTED_SORT_ORDER]
        default_order_id = UNSORTED_SORT_ORDER_ID
    check_unique([o.order_id for o in orders], "sort-orders", "order-id")
    if default_order_id not in {o.order_id for o in orders}:
        raise ParseError(f"default-sort-order-id: no sort order with id {default_order_id}")

    properties = f.opt_str_map("properties")
    current_snapshot_id = f.opt_long("current-snapshot-id")
    if current_snapshot_id == -1:  # older writers used -1 for "no snapshot"
        current_snapshot_id = None

    snapshots = [
        Snapshot.from_json(s, f"snapshots[{i}]", version)
        for i, s in enumerate(f.opt_list("snapshots") or [])
    ]
    check_unique([s.snapshot_id for s in snapshots], "snapshots", "snapshot-id")
    snapshot_ids = {s.snapshot_id for s in snapshots}
    if current_snapshot_id is not None and current_snapshot_id not in snapshot_ids:
        raise ParseError(f"current-snapshot-id: no snapshot with id {current_snapshot_id}")

    refs: dict[str, SnapshotRef] = {}
    if f.has("refs"):
        refs_obj = f.object("refs")
        for name, ref in refs_obj.obj.items():
            refs[name] = SnapshotRef.from_json(ref, refs_obj.at(name))
            if refs[name].snapshot_id not in snapshot_ids:
                raise ParseError(
                    f"refs.{name}.snapshot-id: no snapshot with id {refs[name].snapshot_id}"
                )
    main = refs.get(MAIN_BRANCH)
    if main is None and current_snapshot_id is not None:
        # There is always a main branch at the current snapshot, even if refs omit it.
        refs[MAIN_BRANCH] = SnapshotRef(current_snapshot_id, SnapshotRefType.BRANCH)
    elif main is not None:
        if main.snapshot_ref_type != SnapshotRefType.BRANCH:
            raise ParseError("refs.main: main must be a branch")
        if current_snapshot_id is None and not f.has("current-snapshot-id"):
            current_snapshot_id = main.snapshot_id
        elif main.snapshot_id != current_snapshot_id:
            raise ParseError(
                f"current-snapshot-id: {current_snapshot_id} differs from the main branch's "
                f"snapshot {main.snapshot_id}"
            )

    snapshot_log = tuple(
        SnapshotLogEntry.from_json(e, f"snapshot-log[{i}]")
        for i, e in enumerate(f.opt_list("snapshot-log") or [])
    )
    metadata_log = tuple(
        MetadataLogEntry.from_json(e, f"metadata-log[{i}]")
        for i, e in enumerate(f.opt_list("metadata-log") or [])
    )
    statistics = tuple(
        StatisticsFile.from_json(e, f"statistics[{i}]")
        for i, e in enumerate(f.opt_list("statistics") or [])
    )
    partition_statistics = tuple(
        PartitionStatisticsFile.from_json(e, f"partition-statistics[{i}]")
        for i, e in enumerate(f.opt_list("partition-statistics") or [])
    )
    next_row_id = f.long("next-row-id") if version >= 3 else None
    encryption_keys = tuple(
        EncryptedKey.from_json(e, f"encryption-keys[{i}]")
        for i, e in enumerate((f.opt_list("encryption-keys") or []) if version >= 3 else [])
    )
    # A last-column-id below the highest field id (Hive and Impala wrote such tables) is kept
    # as the reference keeps it; new ids start above both (TableMetadata.highest_assigned_id).

    return TableMetadata(
        format_version=version,
        table_uuid=table_uuid,
        location=location,
        last_updated_ms=last_updated_ms,
        last_column_id=last_column_id,
        schemas=tuple(schemas),
        current_schema_id=current_schema_id,
        partition_specs=tuple(specs),
        default_spec_id=default_spec_id,
        last_partition_id=last_partition_id,
        sort_orders=tuple(orders),
        default_sort_order_id=default_order_id,
        properties=properties,
        current_snapshot_id=current_snapshot_id,
        snapshots=tuple(snapshots),
        snapshot_log=snapshot_log,
        metadata_log=metadata_log,
        refs=refs,
        statistics=statistics,
        partition_statistics=partition_statistics,
        last_sequence_number=last_sequence_number,
        next_row_id=next_row_id,
        encryption_keys=encryption_keys,
    )


def _serialize(m: TableMetadata) -> dict[str, Any]:
    v = m.format_version
    if v > SUPPORTED_FORMAT_VERSION or v < 1:
        raise UnsupportedError(f"cannot write format version {v}")
    out: dict[str, Any] = {"format-version": v}
    if m.table_uuid is not None:
        out["table-uuid"] = str(m.table_uuid)
    elif v >= 2:
        raise FrazilError("table-uuid is required from format version 2")
    if m.location is not None:
        out["location"] = m.location
    elif v < 4:
        raise FrazilError("location is required before format version 4")
    if v >= 2:
        out["last-sequence-number"] = m.last_sequence_number
    out["last-updated-ms"] = m.last_updated_ms
    # As read, even below the highest field id (Hive, Impala): Java keeps it too. New columns
    # are numbered above both (highest_assigned_id).
    out["last-column-id"] = m.last_column_id
    if v == 1:
        # v1 readers know only the deprecated single schema and spec.
        out["schema"] = m.schema().to_json()
    out["current-schema-id"] = m.current_schema_id
    out["schemas"] = [s.to_json() for s in m.schemas]
    if v == 1:
        out["partition-spec"] = m.spec().fields_to_json()
    out["default-spec-id"] = m.default_spec_id
    out["partition-specs"] = [s.to_json() for s in m.partition_specs]
    out["last-partition-id"] = m.last_partition_id
    out["default-sort-order-id"] = m.default_sort_order_id
    out["sort-orders"] = [o.to_json() for o in m.sort_orders]
    out["properties"] = dict(m.properties)
    if m.current_snapshot_id is not None:
        out["current-snapshot-id"] = m.current_snapshot_id
    else:
        # What the reference writes for "no snapshot": -1 before v3 (older readers expect a
        # number), null from v3.
        out["current-snapshot-id"] = -1 if v < 3 else None
    if v >= 3:
        if m.next_row_id is None:
            raise FrazilError("next-row-id is required from format version 3")
        out["next-row-id"] = m.next_row_id
        if m.encryption_keys:
            out["encryption-keys"] = [k.to_json() for k in m.encryption_keys]
    # The reference writes refs for every version (v1 tables can have branches too).
    out["refs"] = {name: ref.to_json() for name, ref in m.refs.items()}
    out["snapshots"] = [s.to_json(v) for s in m.snapshots]
    out["statistics"] = [s.to_json() for s in m.statistics]
    out["partition-statistics"] = [s.to_json() for s in m.partition_statistics]
    out["snapshot-log"] = [e.to_json() for e in m.snapshot_log]
    out["metadata-log"] = [e.to_json() for e in m.metadata_log]
    if v >= 4 and m.location is not None:
        _relativize_fields(out, m.location)
    return out
