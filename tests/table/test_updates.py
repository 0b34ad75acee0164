"""Updates and requirements (REST JSON forms) and the builder's invariants."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from frazil.exceptions import CommitFailedError, ParseError, UnsupportedError, ValidationError
from frazil.metadata import (
    BlobMetadata,
    EncryptedKey,
    MetadataLogEntry,
    PartitionStatisticsFile,
    Snapshot,
    SnapshotLogEntry,
    StatisticsFile,
    TableMetadata,
)
from frazil.partitioning import PartitionField, PartitionSpec, UnknownTransform
from frazil.schema import Schema
from frazil.sorting import SortDirection, SortField, SortOrder
from frazil.table.update import (
    AddEncryptionKeyUpdate,
    AddPartitionSpecUpdate,
    AddSchemaUpdate,
    AddSnapshotUpdate,
    AddSortOrderUpdate,
    AssertCreate,
    AssertCurrentSchemaId,
    AssertDefaultSortOrderId,
    AssertDefaultSpecId,
    AssertLastAssignedFieldId,
    AssertLastAssignedPartitionId,
    AssertRefSnapshotId,
    AssertTableUUID,
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
    new_table_metadata,
    requirement_from_json,
    update_from_json,
    update_table_metadata,
)
from frazil.transforms import parse
from frazil.types import (
    GeometryType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    VariantType,
)

U = uuid.UUID("9c12d441-03fe-4693-9a96-a0705ddf69c1")
SCHEMA = Schema(
    NestedField(10, "id", LongType(), True),
    NestedField(11, "ts", TimestampType()),
    NestedField(12, "s", StructType(NestedField(13, "a", IntegerType()))),
    identifier_field_ids=[10],
)


def table(version: int = 2, **kw: Any) -> TableMetadata:
    return new_table_metadata(SCHEMA, "s3://b/t", format_version=version, table_uuid=U, **kw)


def snapshot(sid: int, seq: int, parent: int | None = None, **kw: Any) -> Snapshot:
    return Snapshot(
        snapshot_id=sid,
        timestamp_ms=1_700_000_000_000 + sid,
        parent_snapshot_id=parent,
        sequence_number=seq,
        manifest_list=f"s3://b/t/metadata/snap-{sid}.avro",
        summary={"operation": "append"},
        schema_id=0,
        **kw,
    )


def apply(m: TableMetadata, *updates: TableUpdate, **kw: Any) -> TableMetadata:
    return update_table_metadata(m, list(updates), **kw)


# ---- creation


def test_new_table_assigns_fresh_ids() -> None:
    spec = PartitionSpec(PartitionField(11, 5, parse("day"), "ts_day"))
    order = SortOrder(SortField(10, parse("identity"), SortDirection.DESC), order_id=7)
    m = table(partition_spec=spec, sort_order=order)
    assert [f.field_id for f in m.schema().fields] == [1, 2, 3]
    assert m.schema().find_field("s.a").field_id == 4 and m.last_column_id == 4
    assert m.schema().identifier_field_ids == (1,)
    assert m.spec().fields == (PartitionField(2, 1000, parse("day"), "ts_day"),)
    assert m.last_partition_id == 1000
    assert m.sort_order().order_id == 1 and m.sort_order().fields[0].source_id == 1
    assert m.current_snapshot_id is None and m.refs == {}
    assert table(3).next_row_id == 0 and table(2).next_row_id is None
    unpartitioned = table()
    assert unpartitioned.spec().fields == () and unpartitioned.last_partition_id == 999
    assert unpartitioned.sort_orders == (SortOrder(order_id=0),)


def test_new_table_refusals() -> None:
    for version in (0, 5, 6):
        with pytest.raises(UnsupportedError):
            table(version)
    with pytest.raises(ValidationError, match="needs format version 3"):
        new_table_metadata(
            Schema(NestedField(1, "t", TimestampNanoType())), "s3://b", format_version=2
        )
    with pytest.raises(ValidationError, match="source column id 99"):
        table(partition_spec=PartitionSpec(PartitionField(99, 1000, parse("identity"), "x")))


# ---- JSON forms

ALL_UPDATES: list[TableUpdate] = [
    AssignUUIDUpdate(U),
    UpgradeFormatVersionUpdate(3),
    AddSchemaUpdate(SCHEMA),
    AddSchemaUpdate(SCHEMA, 20),
    SetCurrentSchemaUpdate(-1),
    AddPartitionSpecUpdate(PartitionSpec(PartitionField(10, 1000, parse("bucket[4]"), "b"))),
    SetDefaultSpecUpdate(2),
    AddSortOrderUpdate(SortOrder(SortField(10), order_id=1)),
    SetDefaultSortOrderUpdate(1),
    AddSnapshotUpdate(snapshot(1, 1, first_row_id=0, added_rows=5)),
    SetSnapshotRefUpdate("b1", 1, "branch", 2, 3, 4),
    RemoveSnapshotsUpdate((1, 2)),
    RemoveSnapshotRefUpdate("b1"),
    SetLocationUpdate("s3://new"),
    SetPropertiesUpdate({"a": "b"}),
    RemovePropertiesUpdate(("a",)),
    SetStatisticsUpdate(StatisticsFile(1, "p", 1, 1, (BlobMetadata("t", 1, 1, (1,)),))),
    RemoveStatisticsUpdate(1),
    SetPartitionStatisticsUpdate(PartitionStatisticsFile(1, "p", 3)),
    RemovePartitionStatisticsUpdate(1),
    AddEncryptionKeyUpdate(EncryptedKey("k", "bWV0YQ==")),
    RemoveEncryptionKeyUpdate("k"),
    RemoveSchemasUpdate((1, 2)),
    RemovePartitionSpecsUpdate((3,)),
]


@pytest.mark.parametrize("update", ALL_UPDATES, ids=lambda u: u.action)
def test_update_json_round_trip(update: TableUpdate) -> None:
    obj = update.to_json()
    assert obj["action"] == update.action
    assert update_from_json(obj) == update


def test_update_json_forms_match_the_rest_spec() -> None:
    assert SetSnapshotRefUpdate("main", 5).to_json() == {
        "action": "set-snapshot-ref",
        "ref-name": "main",
        "snapshot-id": 5,
        "type": "branch",
    }
    assert SetPropertiesUpdate({"k": "v"}).to_json() == {
        "action": "set-properties",
        "updates": {"k": "v"},
    }
    assert AddSchemaUpdate(SCHEMA).to_json()["schema"]["identifier-field-ids"] == [10]
    assert update_from_json({"action": "add-spec", "spec": {"fields": []}}) == (
        AddPartitionSpecUpdate(PartitionSpec())
    )


ALL_REQUIREMENTS = [
    AssertCreate(),
    AssertTableUUID(U),
    AssertRefSnapshotId("main", 5),
    AssertRefSnapshotId("main", None),
    AssertLastAssignedFieldId(3),
    AssertCurrentSchemaId(0),
    AssertLastAssignedPartitionId(999),
    AssertDefaultSpecId(0),
    AssertDefaultSortOrderId(0),
]


@pytest.mark.parametrize("requirement", ALL_REQUIREMENTS, ids=lambda r: r.type)
def test_requirement_json_round_trip(requirement: Any) -> None:
    assert requirement_from_json(requirement.to_json()) == requirement


def test_requirement_json_forms() -> None:
    assert AssertRefSnapshotId("main", None).to_json() == {
        "type": "assert-ref-snapshot-id",
        "ref": "main",
        "snapshot-id": None,
    }
    assert AssertLastAssignedFieldId(3).to_json() == {
        "type": "assert-last-assigned-field-id",
        "last-assigned-field-id": 3,
    }


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"action": "explode"}, "action: unknown table update 'explode'"),
        ({}, "action: required field is missing"),
        ({"action": "assign-uuid", "uuid": "x"}, "uuid: 'x' is not a UUID"),
        ({"action": "set-current-schema"}, "schema-id: required"),
        ({"action": "remove-snapshots", "snapshot-ids": ["a"]}, r"snapshot-ids\[0\]"),
        ({"action": "set-properties", "updates": {"a": 1}}, "updates.a: expected a string"),
        ({"action": "set-snapshot-ref", "snapshot-id": 1, "type": "tag"}, "ref-name: required"),
    ],
)
def test_malformed_updates(obj: dict[str, Any], message: str) -> None:
    with pytest.raises(ParseError, match=message):
        update_from_json(obj)


def test_malformed_requirements() -> None:
    with pytest.raises(ParseError, match="unknown table requirement"):
        requirement_from_json({"type": "assert-nothing"})
    with pytest.raises(ParseError, match="snapshot-id: required field is missing"):
        requirement_from_json({"type": "assert-ref-snapshot-id", "ref": "main"})


# ---- requirements against metadata


def test_requirements_hold_and_fail() -> None:
    m = apply(table(), AddSnapshotUpdate(snapshot(1, 1)), SetSnapshotRefUpdate("main", 1))
    for ok in [
        AssertTableUUID(U),
        AssertRefSnapshotId("main", 1),
        AssertRefSnapshotId("b", None),
        AssertLastAssignedFieldId(4),
        AssertCurrentSchemaId(0),
        AssertLastAssignedPartitionId(999),
        AssertDefaultSpecId(0),
        AssertDefaultSortOrderId(0),
    ]:
        ok.validate(m)
    AssertCreate().validate(None)
    for bad, message in [
        (AssertCreate(), "already exists"),
        (AssertTableUUID(uuid.uuid4()), "table uuid"),
        (AssertRefSnapshotId("main", 2), "points to snapshot 1, expected 2"),
        (AssertRefSnapshotId("main", None), "created concurrently"),
        (AssertRefSnapshotId("b", 1), "ref 'b' is missing"),
        (AssertLastAssignedFieldId(3), "last assigned field id changed: expected 3, found 4"),
        (AssertCurrentSchemaId(1), "current schema id"),
        (AssertLastAssignedPartitionId(1000), "last assigned partition id"),
        (AssertDefaultSpecId(1), "default spec id"),
        (AssertDefaultSortOrderId(1), "default sort order id"),
    ]:
        with pytest.raises(CommitFailedError, match=message):
            update_table_metadata(m, [], [bad])
    with pytest.raises(CommitFailedError, match="does not exist"):
        AssertCurrentSchemaId(0).validate(None)


# ---- builder invariants


def test_add_schema_reuses_ids_and_tracks_last_column_id() -> None:
    m = table()
    wider = Schema(*m.schema().fields, NestedField(9, "n", StringType()), identifier_field_ids=[1])
    m2 = apply(m, AddSchemaUpdate(wider), SetCurrentSchemaUpdate(-1))
    assert m2.current_schema_id == 1 and m2.last_column_id == 9
    assert m2.schema().fields == wider.fields
    # the same columns again reuse the schema id
    m3 = apply(m2, AddSchemaUpdate(m.schema()), SetCurrentSchemaUpdate(-1))
    assert m3.current_schema_id == 0 and len(m3.schemas) == 2 and m3.last_column_id == 9
    with pytest.raises(ValidationError, match="no schema was added"):
        apply(m, SetCurrentSchemaUpdate(-1))
    with pytest.raises(ValidationError, match="no schema with id 7"):
        apply(m, SetCurrentSchemaUpdate(7))
    with pytest.raises(ValidationError, match="needs format version 3"):
        apply(m, AddSchemaUpdate(Schema(NestedField(1, "t", TimestampNanoType()))))
    with pytest.raises(ValidationError, match="default values need format version 3"):
        apply(m, AddSchemaUpdate(Schema(NestedField(1, "a", IntegerType(), initial_default=1))))
    with pytest.raises(ValidationError, match="reserved"):
        apply(m, AddSchemaUpdate(Schema(NestedField(2**31 - 100, "a", IntegerType()))))


def test_add_spec_reuses_compatible_specs_and_tracks_last_partition_id() -> None:
    m = table()
    spec = PartitionSpec(PartitionField(1, 1000, parse("bucket[4]"), "b"), spec_id=99)
    m2 = apply(m, AddPartitionSpecUpdate(spec), SetDefaultSpecUpdate(-1))
    assert m2.default_spec_id == 1 and m2.last_partition_id == 1000
    m3 = apply(m2, AddPartitionSpecUpdate(PartitionSpec()), SetDefaultSpecUpdate(-1))
    assert m3.default_spec_id == 0 and len(m3.partition_specs) == 2
    with pytest.raises(UnsupportedError, match="unknown transform"):
        apply(
            m,
            AddPartitionSpecUpdate(
                PartitionSpec(PartitionField(1, 1000, UnknownTransform("z"), "z"))
            ),
        )
    with pytest.raises(ValidationError, match="no partition spec with id 5"):
        apply(m, SetDefaultSpecUpdate(5))


def test_v1_specs_keep_positional_field_ids() -> None:
    m = table(1)
    with pytest.raises(ValidationError, match="must have id 1000"):
        apply(
            m,
            AddPartitionSpecUpdate(PartitionSpec(PartitionField(1, 1005, parse("identity"), "i"))),
        )


def test_add_sort_order_reuses_and_numbers_orders() -> None:
    m = table()
    order = SortOrder(SortField(1), order_id=42)
    m2 = apply(m, AddSortOrderUpdate(order), SetDefaultSortOrderUpdate(-1))
    assert m2.default_sort_order_id == 1 and m2.sort_order().fields == order.fields
    m3 = apply(m2, AddSortOrderUpdate(SortOrder(SortField(1))), SetDefaultSortOrderUpdate(-1))
    assert len(m3.sort_orders) == 2 and m3.default_sort_order_id == 1
    m4 = apply(m3, AddSortOrderUpdate(SortOrder()), SetDefaultSortOrderUpdate(-1))
    assert m4.default_sort_order_id == 0


def test_snapshots_refs_and_logs() -> None:
    m = table()
    m1 = apply(
        m,
        AddSnapshotUpdate(snapshot(1, 1)),
        SetSnapshotRefUpdate("main", 1),
        previous_metadata_location="s3://b/t/metadata/v1.metadata.json",
    )
    assert m1.current_snapshot_id == 1 and m1.last_sequence_number == 1
    assert m1.last_updated_ms == snapshot(1, 1).timestamp_ms
    assert m1.snapshot_log == (SnapshotLogEntry(1, m1.last_updated_ms),)
    assert m1.metadata_log == (
        MetadataLogEntry("s3://b/t/metadata/v1.metadata.json", m.last_updated_ms),
    )
    m2 = apply(
        m1,
        AddSnapshotUpdate(snapshot(2, 2, parent=1)),
        SetSnapshotRefUpdate("main", 2),
        SetSnapshotRefUpdate("tag", 1, "tag", max_ref_age_ms=5),
        SetStatisticsUpdate(StatisticsFile(1, "p", 1, 1)),
        SetPartitionStatisticsUpdate(PartitionStatisticsFile(1, "p", 1)),
    )
    assert [e.snapshot_id for e in m2.snapshot_log] == [1, 2]
    assert m2.refs["tag"].snapshot_id == 1
    # removing snapshot 1 drops its refs, statistics and the log up to it
    m3 = apply(m2, RemoveSnapshotsUpdate((1,)))
    assert "tag" not in m3.refs and m3.statistics == () and m3.partition_statistics == ()
    assert [e.snapshot_id for e in m3.snapshot_log] == [2]
    assert m3.current_snapshot_id == 2
    # removing main leaves no current snapshot
    m4 = apply(m3, RemoveSnapshotRefUpdate("main"))
    assert m4.current_snapshot_id is None and "main" not in m4.refs
    assert TableMetadata.from_json(m4.to_json()) == m4


@pytest.mark.parametrize(
    ("updates", "message"),
    [
        ([AddSnapshotUpdate(snapshot(1, 1)), AddSnapshotUpdate(snapshot(1, 2))], "already exists"),
        (
            [AddSnapshotUpdate(snapshot(1, 5)), AddSnapshotUpdate(snapshot(2, 5, parent=1))],
            "sequence number 5 is not above",
        ),
        ([SetSnapshotRefUpdate("main", 9)], "no snapshot with id 9"),
        (
            [AddSnapshotUpdate(snapshot(1, 1)), SetSnapshotRefUpdate("main", 1, "tag")],
            "main must be a branch",
        ),
        (
            [AddSnapshotUpdate(snapshot(1, 1)), SetSnapshotRefUpdate("t", 1, "tag", 3)],
            "a tag cannot set min-snapshots-to-keep",
        ),
        ([AddSnapshotUpdate(Snapshot(1, 1, manifests=("m",)))], "needs a manifest-list"),
        ([SetStatisticsUpdate(StatisticsFile(7, "p", 1, 1))], "no snapshot with id 7"),
        ([AddEncryptionKeyUpdate(EncryptedKey("k", "x"))], "need format version 3"),
        ([AssignUUIDUpdate(uuid.uuid4())], "cannot reassign table uuid"),
        ([UpgradeFormatVersionUpdate(1)], "cannot downgrade format version 2 to 1"),
        ([SetDefaultSortOrderUpdate(3)], "no sort order with id 3"),
    ],
)
def test_builder_refusals(updates: list[TableUpdate], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        apply(table(), *updates)


def test_v3_row_lineage() -> None:
    m = table(3)
    m1 = apply(m, AddSnapshotUpdate(snapshot(1, 1, first_row_id=0, added_rows=10)))
    assert m1.next_row_id == 10
    with pytest.raises(ValidationError, match="first-row-id 5 is below the table's next-row-id 10"):
        apply(m1, AddSnapshotUpdate(snapshot(2, 2, parent=1, first_row_id=5, added_rows=1)))
    with pytest.raises(ValidationError, match="needs first-row-id and added-rows"):
        apply(m1, AddSnapshotUpdate(snapshot(2, 2, parent=1)))
    m2 = apply(m1, AddEncryptionKeyUpdate(EncryptedKey("k", "x")))
    assert m2.encryption_keys == (EncryptedKey("k", "x"),)
    with pytest.raises(ValidationError, match="already exists"):
        apply(m2, AddEncryptionKeyUpdate(EncryptedKey("k", "y")))
    assert apply(m2, RemoveEncryptionKeyUpdate("k")).encryption_keys == ()


def test_upgrade_format_version() -> None:
    m1 = table(1).replace(table_uuid=None)
    m2 = apply(m1, UpgradeFormatVersionUpdate(2))
    assert m2.format_version == 2 and m2.table_uuid is not None and m2.next_row_id is None
    m3 = apply(m2, UpgradeFormatVersionUpdate(3))
    assert m3.format_version == 3 and m3.next_row_id == 0
    # v4 (experimental) is the newest
    m4 = apply(m3, UpgradeFormatVersionUpdate(4))
    assert m4.format_version == 4 and m4.location is not None and "://" in m4.location
    with pytest.raises(UnsupportedError, match="newest supported is 4"):
        apply(m4, UpgradeFormatVersionUpdate(5))
    assert apply(m3, UpgradeFormatVersionUpdate(3)).format_version == 3


def test_properties_location_and_metadata_log_limit() -> None:
    m = apply(
        table(),
        SetPropertiesUpdate({"write.metadata.previous-versions-max": "2", "a": "1"}),
        SetLocationUpdate("s3://elsewhere/t/"),
    )
    assert m.location == "s3://elsewhere/t"
    for i in range(5):
        m = apply(m, SetPropertiesUpdate({"n": str(i)}), previous_metadata_location=f"v{i}")
    assert [e.metadata_file for e in m.metadata_log] == ["v3", "v4"]
    m = apply(m, RemovePropertiesUpdate(("a", "missing")))
    assert "a" not in m.properties and m.properties["n"] == "4"


def test_no_updates_change_nothing() -> None:
    m = table()
    assert update_table_metadata(m, []) is m


def test_a_schema_change_cannot_orphan_the_default_spec_or_sort_order() -> None:
    spec = PartitionSpec(PartitionField(11, 1000, parse("day"), "ts_day"))
    m = table(partition_spec=spec, sort_order=SortOrder(SortField(10)))
    without_ts = Schema(*(f for f in m.schema().fields if f.name != "ts"))
    with pytest.raises(ValidationError, match="partition field 'ts_day' of the default spec"):
        apply(m, AddSchemaUpdate(without_ts), SetCurrentSchemaUpdate(-1))
    unpartitioned = apply(m, AddPartitionSpecUpdate(PartitionSpec()), SetDefaultSpecUpdate(-1))
    without_id = Schema(*(f for f in m.schema().fields if f.name != "id"))
    with pytest.raises(ValidationError, match="the default sort order uses column id 1"):
        apply(unpartitioned, AddSchemaUpdate(without_id), SetCurrentSchemaUpdate(-1))
    # adding such a schema without making it current is fine
    assert len(apply(m, AddSchemaUpdate(without_ts)).schemas) == 2


def test_identity_is_refused_on_geo_and_variant_columns() -> None:
    schema = Schema(NestedField(1, "g", GeometryType()), NestedField(2, "v", VariantType()))
    for column in (1, 2):
        with pytest.raises(ValidationError, match="cannot be applied"):
            new_table_metadata(
                schema,
                "s3://b",
                PartitionSpec(PartitionField(column, 1000, parse("identity"), "p")),
                format_version=3,
            )
    new_table_metadata(
        schema,
        "s3://b",
        PartitionSpec(PartitionField(1, 1000, parse("void"), "p")),
        format_version=3,
    )


def test_remove_schemas_and_specs() -> None:
    m = table()
    wider = Schema(*m.schema().fields, NestedField(9, "n", StringType()))
    spec = PartitionSpec(PartitionField(1, 1000, parse("identity"), "id"))
    m2 = apply(m, AddSchemaUpdate(wider), SetCurrentSchemaUpdate(-1), AddPartitionSpecUpdate(spec))
    m3 = apply(m2, RemoveSchemasUpdate((0,)), RemovePartitionSpecsUpdate((1,)))
    assert [s.schema_id for s in m3.schemas] == [1]
    assert [s.spec_id for s in m3.partition_specs] == [0]
    # ids are never reused: the last column id stays
    assert m3.last_column_id == 9
    with pytest.raises(ValidationError, match="cannot remove the current schema 1"):
        apply(m2, RemoveSchemasUpdate((1,)))
    with pytest.raises(ValidationError, match="cannot remove the default spec 0"):
        apply(m2, RemovePartitionSpecsUpdate((0,)))


def test_snapshots_keep_only_the_fields_of_the_table_version() -> None:
    s = snapshot(1, 7, first_row_id=0, added_rows=3, key_id="k")
    v1 = apply(table(1), AddSnapshotUpdate(s)).snapshots[0]
    assert (v1.sequence_number, v1.first_row_id, v1.key_id) == (0, None, None)
    v2 = apply(table(2), AddSnapshotUpdate(s)).snapshots[0]
    assert (v2.sequence_number, v2.first_row_id) == (7, None)
    for version in (1, 2):
        m = apply(table(version), AddSnapshotUpdate(s))
        assert TableMetadata.from_json(m.to_json()) == m
