"""The metadata builder: applies updates to a base metadata, one dispatch per update type, keeping
the table metadata's invariants (spec "Table Metadata"); ``new_table_metadata`` for creates."""

from __future__ import annotations

import dataclasses
import time
import uuid as uuid_mod
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from frazil.exceptions import (
    InvalidArgumentError,
    UnsupportedError,
    ValidationError,
)
from frazil.io.paths import qualify_location
from frazil.metadata import (
    MAIN_BRANCH,
    MetadataLogEntry,
    SnapshotLogEntry,
    SnapshotRefType,
    TableMetadata,
)
from frazil.partitioning import (
    PARTITION_FIELD_ID_START,
    UNPARTITIONED_PARTITION_SPEC,
    PartitionField,
    PartitionSpec,
    is_void,
    validate_spec,
)
from frazil.schema import MAX_FIELD_ID, Schema, assign_fresh_schema_ids, validate_identifier_fields
from frazil.sorting import (
    UNSORTED_SORT_ORDER,
    SortField,
    SortOrder,
    validate_sort_order,
)
from frazil.table.update.requirements import TableRequirement
from frazil.table.update.updates import (
    LAST_ADDED,
    MAX_WRITE_FORMAT_VERSION,
    PREVIOUS_VERSIONS_MAX,
    PREVIOUS_VERSIONS_MAX_DEFAULT,
    AddEncryptionKeyUpdate,
    AddPartitionSpecUpdate,
    AddSchemaUpdate,
    AddSnapshotUpdate,
    AddSortOrderUpdate,
    AssignUUIDUpdate,
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
)
from frazil.types import (
    GeographyType,
    GeometryType,
    IcebergType,
    ListType,
    MapType,
    StructType,
    TimestampNanoType,
    TimestamptzNanoType,
    UnknownType,
    VariantType,
)


def _now_ms() -> int:
    return int(time.time() * 1000)


_V3_TYPES = (
    TimestampNanoType,
    TimestamptzNanoType,
    UnknownType,
    VariantType,
    GeometryType,
    GeographyType,
)


def _check_schema_for_version(schema: Schema, format_version: int) -> None:
    """v3 types and defaults need a v3 table (Appendix E); field ids stay out of the reserved
    range."""

    def visit(t: IcebergType, name: str) -> None:
        if format_version < 3 and isinstance(t, _V3_TYPES):
            raise ValidationError(
                f"column {name!r}: type {t} needs format version 3, the table has {format_version}"
            )
        if isinstance(t, StructType):
            for f in t.fields:
                full = f"{name}.{f.name}" if name else f.name
                if f.field_id > MAX_FIELD_ID:
                    raise ValidationError(f"column {full!r}: field id {f.field_id} is reserved")
                if format_version < 3 and (
                    f.initial_default is not None or f.write_default is not None
                ):
                    raise ValidationError(
                        f"column {full!r}: default values need format version 3, the table has "
                        f"{format_version}"
                    )
                visit(f.field_type, full)
        elif isinstance(t, ListType):
            visit(t.element_type, f"{name}.element")
        elif isinstance(t, MapType):
            visit(t.key_type, f"{name}.key")
            visit(t.value_type, f"{name}.value")

    visit(schema.as_struct(), "")


class MetadataBuilder:
    """Applies updates to a base metadata, one dispatch per update type, keeping the invariants:
    ids never reused, ``last-*`` ids monotonic, ``current-snapshot-id`` equal to ``main``, the
    snapshot log following ``main``, row ids and sequence numbers growing."""

    def __init__(self, base: TableMetadata) -> None:
        self.base = base
        self._m = base
        self._changes: list[TableUpdate] = []
        self._last_added_schema_id: int | None = None
        self._last_added_spec_id: int | None = None
        self._last_added_order_id: int | None = None
        self._added_snapshot_ts: int | None = None
        self._main_changed = False

    @property
    def current(self) -> TableMetadata:
        return self._m

    @property
    def changes(self) -> list[TableUpdate]:
        return list(self._changes)

    def apply(self, update: TableUpdate) -> MetadataBuilder:
        handler = getattr(self, "_" + update.action.replace("-", "_"), None)
        if handler is None:  # pragma: no cover - every update class has a handler
            raise UnsupportedError(f"unsupported update {update.action!r}")
        handler(update)
        self._changes.append(update)
        return self

    # ---- one handler per update

    def _assign_uuid(self, u: AssignUUIDUpdate) -> None:
        if self._m.table_uuid is not None and self._m.table_uuid != u.uuid:
            raise ValidationError(f"cannot reassign table uuid {self._m.table_uuid} to {u.uuid}")
        self._m = self._m.replace(table_uuid=u.uuid)

    def _upgrade_format_version(self, u: UpgradeFormatVersionUpdate) -> None:
        v = u.format_version
        if v > MAX_WRITE_FORMAT_VERSION and v != self._m.format_version:
            raise UnsupportedError(
                f"cannot upgrade to format version {v}: newest supported is "
                f"{MAX_WRITE_FORMAT_VERSION}"
            )
        if v < self._m.format_version:
            raise ValidationError(
                f"cannot downgrade format version {self._m.format_version} to {v}"
            )
        changes: dict[str, Any] = {"format_version": v}
        if v >= 2 and self._m.table_uuid is None:
            changes["table_uuid"] = uuid_mod.uuid4()
        if v >= 3 and self._m.next_row_id is None:
            # Spec "Row Lineage for Upgraded Tables": next-row-id starts at 0.
            changes["next_row_id"] = 0
        if v >= 4 > self._m.format_version and self._m.location is not None:
            # the old paths are absolute (a local one gets file://), relative where they can be
            self._m = self._m.with_v4_paths(qualify_location(self._m.location))
        self._m = self._m.replace(**changes)

    def _add_schema(self, u: AddSchemaUpdate) -> None:
        schema = u.schema_
        _check_schema_for_version(schema, self._m.format_version)
        _validated(validate_identifier_fields, schema)
        last_column_id = max(self._m.last_column_id, schema.highest_field_id, u.last_column_id or 0)
        existing = next((s for s in self._m.schemas if s.same_columns(schema)), None)
        if existing is not None:
            self._last_added_schema_id = existing.schema_id
            self._m = self._m.replace(last_column_id=last_column_id)
            return
        new_id = max((s.schema_id for s in self._m.schemas), default=-1) + 1
        added = Schema(
            *schema.fields, schema_id=new_id, identifier_field_ids=schema.identifier_field_ids
        )
        self._last_added_schema_id = new_id
        self._m = self._m.replace(schemas=(*self._m.schemas, added), last_column_id=last_column_id)

    def _set_current_schema(self, u: SetCurrentSchemaUpdate) -> None:
        schema_id = u.schema_id
        if schema_id == LAST_ADDED:
            if self._last_added_schema_id is None:
                raise ValidationError("set-current-schema -1: no schema was added")
            schema_id = self._last_added_schema_id
        if self._m.schema_by_id(schema_id) is None:
            raise ValidationError(f"set-current-schema: no schema with id {schema_id}")
        self._m = self._m.replace(current_schema_id=schema_id)

    def _add_spec(self, u: AddPartitionSpecUpdate) -> None:
        spec = u.spec
        _validated(validate_spec, spec, self._m.schema())
        if self._m.format_version == 1:
            # v1 field ids are positional from 1000, so a new spec must keep that numbering.
            for i, f in enumerate(spec.fields):
                if f.field_id != PARTITION_FIELD_ID_START + i:
                    raise ValidationError(
                        f"v1 partition field {f.name!r} must have id "
                        f"{PARTITION_FIELD_ID_START + i}, not {f.field_id} (v1 ids are "
                        "positional; evolve v1 specs by appending or voiding fields)"
                    )
        existing = next((s for s in self._m.partition_specs if s.compatible_with(spec)), None)
        last_partition_id = max(self._m.last_partition_id, spec.last_assigned_field_id)
        if existing is not None:
            self._last_added_spec_id = existing.spec_id
            self._m = self._m.replace(last_partition_id=last_partition_id)
            return
        new_id = max((s.spec_id for s in self._m.partition_specs), default=-1) + 1
        self._last_added_spec_id = new_id
        self._m = self._m.replace(
            partition_specs=(*self._m.partition_specs, PartitionSpec(*spec.fields, spec_id=new_id)),
            last_partition_id=last_partition_id,
        )

    def _set_default_spec(self, u: SetDefaultSpecUpdate) -> None:
        spec_id = u.spec_id
        if spec_id == LAST_ADDED:
            if self._last_added_spec_id is None:
                raise ValidationError("set-default-spec -1: no partition spec was added")
            spec_id = self._last_added_spec_id
        if self._m.spec_by_id(spec_id) is None:
            raise ValidationError(f"set-default-spec: no partition spec with id {spec_id}")
        self._m = self._m.replace(default_spec_id=spec_id)

    def _add_sort_order(self, u: AddSortOrderUpdate) -> None:
        order = u.sort_order
        _validated(validate_sort_order, order, self._m.schema())
        existing = next((o for o in self._m.sort_orders if o.same_order(order)), None)
        if existing is not None:
            self._last_added_order_id = existing.order_id
            return
        if order.is_unsorted():
            new_order = UNSORTED_SORT_ORDER
        else:
            new_id = max((o.order_id for o in self._m.sort_orders), default=0) + 1
            new_order = SortOrder(*order.fields, order_id=new_id)
        self._last_added_order_id = new_order.order_id
        self._m = self._m.replace(sort_orders=(*self._m.sort_orders, new_order))

    def _set_default_sort_order(self, u: SetDefaultSortOrderUpdate) -> None:
        order_id = u.sort_order_id
        if order_id == LAST_ADDED:
            if self._last_added_order_id is None:
                raise ValidationError("set-default-sort-order -1: no sort order was added")
            order_id = self._last_added_order_id
        if self._m.sort_order_by_id(order_id) is None:
            raise ValidationError(f"set-default-sort-order: no sort order with id {order_id}")
        self._m = self._m.replace(default_sort_order_id=order_id)

    def _add_snapshot(self, u: AddSnapshotUpdate) -> None:
        s = u.snapshot
        m = self._m
        # Keep only what the table's version has, so the metadata reads back as it was built.
        if m.format_version < 2 and s.sequence_number != 0:
            s = dataclasses.replace(s, sequence_number=0)
        if m.format_version < 3 and (s.first_row_id, s.added_rows, s.key_id) != (None,) * 3:
            s = dataclasses.replace(s, first_row_id=None, added_rows=None, key_id=None)
        if m.snapshot_by_id(s.snapshot_id) is not None:
            raise ValidationError(f"add-snapshot: snapshot {s.snapshot_id} already exists")
        if m.format_version >= 2:
            if s.manifest_list is None:
                raise ValidationError("add-snapshot: a v2+ snapshot needs a manifest-list")
            if s.summary is None:
                raise ValidationError("add-snapshot: a v2+ snapshot needs a summary")
            if s.sequence_number <= m.last_sequence_number and s.parent_snapshot_id is not None:
                raise ValidationError(
                    f"add-snapshot: sequence number {s.sequence_number} is not above the "
                    f"table's last sequence number {m.last_sequence_number}"
                )
        changes: dict[str, Any] = {
            "snapshots": (*m.snapshots, s),
            "last_sequence_number": max(m.last_sequence_number, s.sequence_number),
        }
        if m.format_version >= 3:
            if s.first_row_id is None or s.added_rows is None:
                raise ValidationError(
                    "add-snapshot: a v3 snapshot needs first-row-id and added-rows"
                )
            assert m.next_row_id is not None
            if s.first_row_id < m.next_row_id:
                raise ValidationError(
                    f"add-snapshot: first-row-id {s.first_row_id} is below the table's "
                    f"next-row-id {m.next_row_id}"
                )
            changes["next_row_id"] = s.first_row_id + s.added_rows
        self._added_snapshot_ts = s.timestamp_ms
        self._m = m.replace(**changes)

    def _set_snapshot_ref(self, u: SetSnapshotRefUpdate) -> None:
        ref = u.ref
        problem = ref.problem()
        if problem:
            raise ValidationError(f"set-snapshot-ref {u.ref_name!r}: {problem}")
        if u.ref_name == MAIN_BRANCH and ref.snapshot_ref_type != SnapshotRefType.BRANCH:
            raise ValidationError("set-snapshot-ref: main must be a branch")
        snapshot = self._m.snapshot_by_id(ref.snapshot_id)
        if snapshot is None:
            raise ValidationError(
                f"set-snapshot-ref {u.ref_name!r}: no snapshot with id {ref.snapshot_id}"
            )
        if self._m.refs.get(u.ref_name) == ref:
            return
        refs = {**self._m.refs, u.ref_name: ref}
        changes: dict[str, Any] = {"refs": refs}
        if u.ref_name == MAIN_BRANCH:
            changes["current_snapshot_id"] = ref.snapshot_id
            self._main_changed = True
        self._m = self._m.replace(**changes)

    def _remove_snapshots(self, u: RemoveSnapshotsUpdate) -> None:
        gone = set(u.snapshot_ids)
        m = self._m
        refs = {name: r for name, r in m.refs.items() if r.snapshot_id not in gone}
        current = m.current_snapshot_id
        if current in gone:
            current = None
        # Drop log entries up to the last one whose snapshot no longer exists, as the spec
        # asks ("all entries before a snapshot that has expired should be removed").
        log = list(m.snapshot_log)
        last_gone = max((i for i, e in enumerate(log) if e.snapshot_id in gone), default=-1)
        self._m = m.replace(
            snapshots=tuple(s for s in m.snapshots if s.snapshot_id not in gone),
            refs=refs,
            current_snapshot_id=current,
            snapshot_log=tuple(log[last_gone + 1 :]),
            statistics=tuple(s for s in m.statistics if s.snapshot_id not in gone),
            partition_statistics=tuple(
                s for s in m.partition_statistics if s.snapshot_id not in gone
            ),
        )

    def _remove_snapshot_ref(self, u: RemoveSnapshotRefUpdate) -> None:
        if u.ref_name not in self._m.refs:
            return
        refs = {k: v for k, v in self._m.refs.items() if k != u.ref_name}
        changes: dict[str, Any] = {"refs": refs}
        if u.ref_name == MAIN_BRANCH:
            changes["current_snapshot_id"] = None
        self._m = self._m.replace(**changes)

    def _set_location(self, u: SetLocationUpdate) -> None:
        self._m = self._m.replace(location=u.location.rstrip("/"))

    def _set_properties(self, u: SetPropertiesUpdate) -> None:
        for k, v in u.updates.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise ValidationError(f"set-properties: {k!r}={v!r}: properties are strings")
        self._m = self._m.replace(properties={**self._m.properties, **u.updates})

    def _remove_properties(self, u: RemovePropertiesUpdate) -> None:
        removals = set(u.removals)
        self._m = self._m.replace(
            properties={k: v for k, v in self._m.properties.items() if k not in removals}
        )

    def _set_statistics(self, u: SetStatisticsUpdate) -> None:
        sid = u.statistics.snapshot_id
        if self._m.snapshot_by_id(sid) is None:
            raise ValidationError(f"set-statistics: no snapshot with id {sid}")
        rest = tuple(s for s in self._m.statistics if s.snapshot_id != sid)
        self._m = self._m.replace(statistics=(*rest, u.statistics))

    def _remove_statistics(self, u: RemoveStatisticsUpdate) -> None:
        self._m = self._m.replace(
            statistics=tuple(s for s in self._m.statistics if s.snapshot_id != u.snapshot_id)
        )

    def _set_partition_statistics(self, u: SetPartitionStatisticsUpdate) -> None:
        sid = u.partition_statistics.snapshot_id
        if self._m.snapshot_by_id(sid) is None:
            raise ValidationError(f"set-partition-statistics: no snapshot with id {sid}")
        rest = tuple(s for s in self._m.partition_statistics if s.snapshot_id != sid)
        self._m = self._m.replace(partition_statistics=(*rest, u.partition_statistics))

    def _remove_partition_statistics(self, u: RemovePartitionStatisticsUpdate) -> None:
        self._m = self._m.replace(
            partition_statistics=tuple(
                s for s in self._m.partition_statistics if s.snapshot_id != u.snapshot_id
            )
        )

    def _add_encryption_key(self, u: AddEncryptionKeyUpdate) -> None:
        if self._m.format_version < 3:
            raise ValidationError("add-encryption-key: encryption keys need format version 3")
        if any(k.key_id == u.encryption_key.key_id for k in self._m.encryption_keys):
            raise ValidationError(
                f"add-encryption-key: key {u.encryption_key.key_id!r} already exists"
            )
        self._m = self._m.replace(encryption_keys=(*self._m.encryption_keys, u.encryption_key))

    def _remove_encryption_key(self, u: RemoveEncryptionKeyUpdate) -> None:
        self._m = self._m.replace(
            encryption_keys=tuple(k for k in self._m.encryption_keys if k.key_id != u.key_id)
        )

    def _remove_schemas(self, u: RemoveSchemasUpdate) -> None:
        if self._m.current_schema_id in u.schema_ids:
            raise ValidationError(
                f"remove-schemas: cannot remove the current schema {self._m.current_schema_id}"
            )
        gone = set(u.schema_ids)
        self._m = self._m.replace(
            schemas=tuple(s for s in self._m.schemas if s.schema_id not in gone)
        )

    def _remove_partition_specs(self, u: RemovePartitionSpecsUpdate) -> None:
        if self._m.default_spec_id in u.spec_ids:
            raise ValidationError(
                f"remove-partition-specs: cannot remove the default spec {self._m.default_spec_id}"
            )
        gone = set(u.spec_ids)
        self._m = self._m.replace(
            partition_specs=tuple(s for s in self._m.partition_specs if s.spec_id not in gone)
        )

    # ---- result

    def build(self, previous_metadata_location: str | None = None) -> TableMetadata:
        """The new metadata. ``previous_metadata_location`` is the file of ``base``; it joins the
        metadata log, which is trimmed to ``write.metadata.previous-versions-max``."""
        m = self._m
        if not self._changes:
            return m
        _check_complete(m)
        _check_bindings(m)
        now = max(_now_ms(), self._added_snapshot_ts or 0)
        # The reference stamps a commit that adds a snapshot with the snapshot's time.
        last_updated = self._added_snapshot_ts if self._added_snapshot_ts is not None else now
        changes: dict[str, Any] = {"last_updated_ms": last_updated}
        if (
            self._main_changed
            and m.current_snapshot_id is not None
            and (m.current_snapshot_id != self.base.current_snapshot_id)
        ):
            changes["snapshot_log"] = (
                *m.snapshot_log,
                SnapshotLogEntry(m.current_snapshot_id, last_updated),
            )
        if previous_metadata_location is not None:
            entry = MetadataLogEntry(previous_metadata_location, self.base.last_updated_ms)
            log = [*m.metadata_log, entry]
            keep = _int_property(m.properties, PREVIOUS_VERSIONS_MAX, PREVIOUS_VERSIONS_MAX_DEFAULT)
            changes["metadata_log"] = tuple(log[max(0, len(log) - max(1, keep)) :])
        return m.replace(**changes)


def _validated(check: Any, *args: Any) -> None:
    """Runs a validation, reporting a broken rule as the builder's ValidationError."""
    try:
        check(*args)
    except InvalidArgumentError as e:
        raise ValidationError(str(e)) from None


def _check_complete(m: TableMetadata) -> None:
    """A table built from :func:`empty_table_metadata` must have been given everything a table
    has (a create request that left one out)."""
    missing = [
        what
        for what, ok in (
            ("a current schema", m.schema_by_id(m.current_schema_id) is not None),
            ("a default partition spec", m.spec_by_id(m.default_spec_id) is not None),
            ("a default sort order", m.sort_order_by_id(m.default_sort_order_id) is not None),
            ("a location", bool(m.location)),
        )
        if not ok
    ]
    if missing:
        raise ValidationError(f"the table metadata has no {', no '.join(missing)}")


def _check_bindings(m: TableMetadata) -> None:
    """The default spec and sort order must still apply to the current schema (a schema change
    cannot drop a column they use)."""
    ids = m.schema().field_ids
    for f in m.spec().fields:
        missing = [i for i in f.source_ids if i not in ids]
        if missing and not is_void(f.transform):
            raise ValidationError(
                f"partition field {f.name!r} of the default spec uses column id {missing[0]}, "
                "which the current schema does not have"
            )
    for sf in m.sort_order().fields:
        missing = [i for i in sf.source_ids if i not in ids]
        if missing:
            raise ValidationError(
                f"the default sort order uses column id {missing[0]}, which the current schema "
                "does not have"
            )


def _int_property(props: Mapping[str, str], key: str, default: int) -> int:
    try:
        return int(props[key])
    except (KeyError, ValueError):
        return default


def update_table_metadata(
    base: TableMetadata,
    updates: Iterable[TableUpdate],
    requirements: Sequence[TableRequirement] = (),
    previous_metadata_location: str | None = None,
) -> TableMetadata:
    """Checks ``requirements`` against ``base`` (:class:`CommitFailedError` if one fails), then
    applies ``updates`` in order and returns the new metadata."""
    for r in requirements:
        r.validate(base)
    builder = MetadataBuilder(base)
    for u in updates:
        builder.apply(u)
    return builder.build(previous_metadata_location)


def empty_table_metadata() -> TableMetadata:
    """The base a create's updates build a table from when they carry everything (the REST
    protocol's staged create: ``assign-uuid``, ``upgrade-format-version``, ``add-schema``,
    ``set-current-schema -1``, ``add-spec``, ..., ``set-location``, ``set-properties``), as the
    Java reference's ``TableMetadata.buildFromEmpty``. Format version 1, so that
    ``upgrade-format-version`` may choose any; :meth:`MetadataBuilder.build` refuses a result
    that lacks a schema, spec, sort order or location."""
    return TableMetadata(
        format_version=1,
        table_uuid=None,
        location=None,
        last_updated_ms=0,
        last_column_id=0,
        schemas=(),
        current_schema_id=-1,
        partition_specs=(),
        default_spec_id=-1,
        last_partition_id=PARTITION_FIELD_ID_START - 1,
        sort_orders=(),
        default_sort_order_id=-1,
    )


def new_table_metadata(
    schema: Schema,
    location: str,
    partition_spec: PartitionSpec = UNPARTITIONED_PARTITION_SPEC,
    sort_order: SortOrder = UNSORTED_SORT_ORDER,
    properties: Mapping[str, str] | None = None,
    format_version: int = 2,
    table_uuid: uuid_mod.UUID | None = None,
) -> TableMetadata:
    """Metadata of a new table, with fresh ids: columns from 1, partition fields from 1000,
    schema, spec and sort order ids from their initial values. Partition and sort fields are
    given against ``schema``'s ids and remapped."""
    if not 1 <= format_version <= MAX_WRITE_FORMAT_VERSION:
        raise UnsupportedError(f"cannot create a table with format version {format_version}")
    fresh, last_column_id = assign_fresh_schema_ids(schema)
    old_names = {i: schema.find_column_name(i) for i in schema.field_ids}

    def remap(old_id: int) -> int:
        name = old_names.get(old_id)
        if name is None:
            raise ValidationError(f"source column id {old_id} is not in the schema")
        return fresh.find_field(name).field_id

    spec = PartitionSpec(
        *(
            PartitionField(
                remap(f.source_id),
                PARTITION_FIELD_ID_START + i,
                f.transform,
                f.name,
                tuple(remap(s) for s in f.source_ids),
            )
            for i, f in enumerate(partition_spec.fields)
        ),
        spec_id=0,
    )
    order = (
        SortOrder(
            *(
                SortField(
                    remap(f.source_id),
                    f.transform,
                    f.direction,
                    f.null_order,
                    tuple(remap(s) for s in f.source_ids),
                )
                for f in sort_order.fields
            ),
            order_id=1,
        )
        if sort_order.fields
        else UNSORTED_SORT_ORDER
    )
    _check_schema_for_version(fresh, format_version)
    _validated(validate_identifier_fields, fresh)
    _validated(validate_spec, spec, fresh)
    _validated(validate_sort_order, order, fresh)
    return TableMetadata(
        format_version=format_version,
        table_uuid=table_uuid or uuid_mod.uuid4(),
        location=qualify_location(location.rstrip("/"))
        if format_version >= 4
        else location.rstrip("/"),
        last_updated_ms=_now_ms(),
        last_column_id=last_column_id,
        schemas=(fresh,),
        current_schema_id=fresh.schema_id,
        partition_specs=(spec,),
        default_spec_id=0,
        last_partition_id=spec.last_assigned_field_id,
        sort_orders=(order,),
        default_sort_order_id=order.order_id,
        properties=dict(properties or {}),
        next_row_id=0 if format_version >= 3 else None,
    )
