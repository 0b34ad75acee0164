"""View updates and requirements: their REST JSON, and the rules of applying them (the view
spec and the reference's ViewMetadata.Builder): version and schema reuse, ``-1`` as "last
added", the version log, ``version.history.num-entries`` trimming, one SQL representation per
dialect, no dropped dialects, assert-view-uuid."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from frazil.exceptions import CommitFailedError, ParseError, ValidationError
from frazil.schema import Schema
from frazil.table.update import AddSchemaUpdate as TableAddSchemaUpdate
from frazil.types import LongType, NestedField, StringType
from frazil.view.metadata import SQLViewRepresentation, ViewMetadata, ViewVersion
from frazil.view.updates import (
    AddSchemaUpdate,
    AddViewVersionUpdate,
    AssertViewUUID,
    AssignUUIDUpdate,
    RemovePropertiesUpdate,
    SetCurrentViewVersionUpdate,
    SetLocationUpdate,
    SetPropertiesUpdate,
    UpgradeFormatVersionUpdate,
    ViewMetadataBuilder,
    update_view_metadata,
    view_requirement_from_json,
    view_update_from_json,
)

EXAMPLES = Path(__file__).resolve().parent / "spec_examples"
S1 = Schema(NestedField(1, "id", LongType()), schema_id=0)
S2 = Schema(NestedField(1, "id", LongType()), NestedField(2, "name", StringType()), schema_id=0)


def example(i: int) -> ViewMetadata:
    return ViewMetadata.from_json((EXAMPLES / f"appendix-a-{i}.metadata.json").read_text())


def version(
    sql: str, *, vid: int = 1, schema_id: int = -1, ts: int = 1000, **kw: object
) -> ViewVersion:
    reps = kw.pop("reps", None) or (SQLViewRepresentation(sql, "spark"),)
    return ViewVersion(
        version_id=vid,
        timestamp_ms=ts,
        schema_id=schema_id,
        summary={"engine-name": "test"},
        representations=reps,  # type: ignore[arg-type]
        default_namespace=("db",),
        **kw,  # type: ignore[arg-type]
    )


def new_view(*versions: ViewVersion, props: dict[str, str] | None = None) -> ViewMetadata:
    b = ViewMetadataBuilder(None).set_location("/wh/db/v").set_properties(props or {})
    b.add_schema(S1)
    for v in versions:
        b.add_version(v)
    b.set_current_version_id(-1)
    return b.build()


def test_updates_share_the_table_classes_where_the_json_is_the_same() -> None:
    assert AddSchemaUpdate is TableAddSchemaUpdate


@pytest.mark.parametrize(
    "update",
    [
        AssignUUIDUpdate(uuid.UUID(int=7)),
        UpgradeFormatVersionUpdate(1),
        AddSchemaUpdate(S2),
        SetLocationUpdate("s3://b/v"),
        SetPropertiesUpdate({"comment": "c"}),
        RemovePropertiesUpdate(("a", "b")),
        AddViewVersionUpdate(version("select 1", vid=3, default_catalog="prod")),
        SetCurrentViewVersionUpdate(-1),
    ],
)
def test_update_json_round_trip(update: object) -> None:
    obj = update.to_json()  # type: ignore[attr-defined]
    assert view_update_from_json(json.loads(json.dumps(obj))) == update


def test_update_json_is_the_rest_shape() -> None:
    assert SetCurrentViewVersionUpdate(-1).to_json() == {
        "action": "set-current-view-version",
        "view-version-id": -1,
    }
    body = AddViewVersionUpdate(version("q", vid=2, schema_id=-1)).to_json()
    assert body["action"] == "add-view-version"
    assert body["view-version"]["schema-id"] == -1
    assert body["view-version"]["representations"] == [
        {"type": "sql", "sql": "q", "dialect": "spark"}
    ]
    req = AssertViewUUID(uuid.UUID(int=1))
    assert req.to_json() == {"type": "assert-view-uuid", "uuid": str(uuid.UUID(int=1))}
    assert view_requirement_from_json(req.to_json()) == req


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"action": "add-snapshot"}, "action: unknown view update 'add-snapshot'"),
        ({"action": "set-current-view-version"}, "view-version-id: required field is missing"),
        ({"action": "add-view-version", "view-version": {}}, "view-version.version-id"),
    ],
)
def test_bad_update_json(obj: dict[str, object], message: str) -> None:
    with pytest.raises(ParseError, match=message):
        view_update_from_json(obj)
    with pytest.raises(ParseError, match="unknown view requirement"):
        view_requirement_from_json({"type": "assert-table-uuid", "uuid": str(uuid.UUID(int=1))})


def test_create_from_updates_alone() -> None:
    u = uuid.uuid4()
    m = update_view_metadata(
        None,
        [
            AssignUUIDUpdate(u),
            SetLocationUpdate("/wh/v"),
            AddSchemaUpdate(S2.__class__(*S2.fields, schema_id=7)),
            AddViewVersionUpdate(version("select 1", vid=1, schema_id=-1)),
            SetCurrentViewVersionUpdate(-1),
        ],
    )
    assert m.view_uuid == u and m.format_version == 1 and m.location == "/wh/v"
    # the first schema's id is 0 whatever the update said (the reference's numbering)
    assert [s.schema_id for s in m.schemas] == [0]
    assert m.current_version().schema_id == 0
    assert [(e.version_id, e.timestamp_ms) for e in m.version_log] == [(1, 1000)]


def test_identical_version_is_reused_not_duplicated() -> None:
    base = new_view(version("select 1", vid=1))
    b = ViewMetadataBuilder(base)
    b.set_current_version(version("select 1", vid=2, ts=5000), S1)
    assert b.changes == []  # nothing to do: it is the current version already
    # a different query is a new version; then the first again is reused (a rollback)
    m2 = update_view_metadata(
        base,
        ViewMetadataBuilder(base)
        .set_current_version(version("select 2", vid=2, ts=2000), S1)
        .changes,
    )
    assert [v.version_id for v in m2.versions] == [1, 2]
    b3 = ViewMetadataBuilder(m2).set_current_version(version("select 1", vid=3, ts=3000), S1)
    assert b3.changes == [SetCurrentViewVersionUpdate(1)]
    m3 = b3.build()
    assert [v.version_id for v in m3.versions] == [1, 2]
    assert m3.current_version_id == 1
    assert [e.version_id for e in m3.version_log] == [1, 2, 1]
    # a rollback is logged when it happens, not at the version's creation time
    assert m3.version_log[-1].timestamp_ms > 3000


def test_version_differing_in_default_namespace_catalog_or_schema_is_new() -> None:
    base = new_view(version("select 1"))
    for changed in (
        version("select 1", vid=9, schema_id=0).replace(default_namespace=("other",)),
        version("select 1", vid=9, schema_id=0).replace(default_catalog="cat"),
    ):
        m = ViewMetadataBuilder(base)
        assert m.add_version(changed) == 9  # a new version, keeping its free id
    b = ViewMetadataBuilder(base)
    b.set_current_version(version("select 1", vid=9), S2)
    m = b.build()
    assert [s.schema_id for s in m.schemas] == [0, 1]
    assert m.current_version().schema_id == 1 and m.current_version_id == 9


def test_schema_with_same_columns_is_reused() -> None:
    base = new_view(version("select 1"))
    b = ViewMetadataBuilder(base)
    assert b.add_schema(Schema(*S1.fields, schema_id=42)) == 0
    assert b.changes == []


def test_version_ids_never_collide() -> None:
    base = new_view(version("select 1", vid=5))
    b = ViewMetadataBuilder(base)
    assert b.add_version(version("select 2", vid=5, schema_id=0)) == 6
    assert b.add_version(version("select 3", vid=1, schema_id=0)) == 7


def test_last_added_needs_something_added() -> None:
    base = new_view(version("select 1"))
    with pytest.raises(ValidationError, match="no version was added"):
        update_view_metadata(base, [SetCurrentViewVersionUpdate(-1)])
    with pytest.raises(ValidationError, match="no schema was added"):
        ViewMetadataBuilder(None).add_version(version("x"))
    with pytest.raises(ValidationError, match="unknown version 9"):
        update_view_metadata(base, [SetCurrentViewVersionUpdate(9)])
    with pytest.raises(ValidationError, match="unknown schema 3"):
        update_view_metadata(base, [AddViewVersionUpdate(version("y", vid=2, schema_id=3))])


def test_one_sql_representation_per_dialect() -> None:
    reps = (SQLViewRepresentation("select 1", "spark"), SQLViewRepresentation("select 2", "SPARK"))
    base = new_view(version("select 1"))
    with pytest.raises(ValidationError, match="more than one SQL representation for dialect"):
        update_view_metadata(
            base, [AddViewVersionUpdate(version("", vid=2, schema_id=0, reps=reps))]
        )
    ok = (SQLViewRepresentation("select 1", "spark"), SQLViewRepresentation("select 1", "trino"))
    m = update_view_metadata(
        base,
        [
            AddViewVersionUpdate(version("", vid=2, schema_id=0, reps=ok)),
            SetCurrentViewVersionUpdate(-1),
        ],
    )
    assert m.current_version().sql_for("trino") == ok[1]


def test_a_replace_may_not_drop_a_dialect_unless_allowed() -> None:
    two = (SQLViewRepresentation("select 1", "spark"), SQLViewRepresentation("select 1", "trino"))
    base = new_view(version("", reps=two))
    replace = [
        AddViewVersionUpdate(version("select 2", vid=2, schema_id=0)),
        SetCurrentViewVersionUpdate(-1),
    ]
    with pytest.raises(ValidationError, match=r"drops dialect\(s\) \['trino'\]"):
        update_view_metadata(base, replace)
    m = update_view_metadata(
        base, [SetPropertiesUpdate({"replace.drop-dialect.allowed": "true"}), *replace]
    )
    assert m.current_version_id == 2


def test_history_is_trimmed_to_num_entries() -> None:
    m = new_view(version("select 0"), props={"version.history.num-entries": "3"})
    for i in range(1, 6):
        m = update_view_metadata(
            m,
            [
                AddViewVersionUpdate(version(f"select {i}", vid=i + 1, schema_id=0, ts=1000 + i)),
                SetCurrentViewVersionUpdate(-1),
            ],
        )
    assert [v.version_id for v in m.versions] == [4, 5, 6]
    # the log keeps only the entries after the last one whose version is gone
    assert [e.version_id for e in m.version_log] == [4, 5, 6]
    # rolling back to a kept version and trimming again keeps the current version
    m = update_view_metadata(m, [SetCurrentViewVersionUpdate(4)])
    m = update_view_metadata(m, [SetPropertiesUpdate({"version.history.num-entries": "1"})])
    assert [v.version_id for v in m.versions] == [4]
    assert [e.version_id for e in m.version_log] == [4]


def test_default_history_is_ten_versions() -> None:
    m = new_view(version("select 0"))
    for i in range(1, 15):
        m = update_view_metadata(
            m,
            [
                AddViewVersionUpdate(version(f"select {i}", vid=i + 1, schema_id=0)),
                SetCurrentViewVersionUpdate(-1),
            ],
        )
    assert [v.version_id for v in m.versions] == list(range(6, 16))


def test_versions_added_in_one_change_are_all_kept() -> None:
    m = new_view(version("select 0"), props={"version.history.num-entries": "1"})
    ups = [
        AddViewVersionUpdate(version(f"select {i}", vid=i + 1, schema_id=0)) for i in range(1, 4)
    ]
    m = update_view_metadata(m, [*ups, SetCurrentViewVersionUpdate(-1)])
    assert [v.version_id for v in m.versions] == [2, 3, 4]


@pytest.mark.parametrize("value", ["0", "-2", "ten"])
def test_bad_history_size(value: str) -> None:
    with pytest.raises(ValidationError, match=r"version\.history\.num-entries"):
        new_view(version("select 0"), props={"version.history.num-entries": value})


def test_assert_view_uuid() -> None:
    m = example(1)
    AssertViewUUID(m.view_uuid).validate(m)
    with pytest.raises(CommitFailedError, match="view uuid"):
        AssertViewUUID(uuid.UUID(int=3)).validate(m)
    with pytest.raises(CommitFailedError, match="does not exist"):
        AssertViewUUID(m.view_uuid).validate(None)


def test_uuid_cannot_be_reassigned_and_format_cannot_move() -> None:
    m = example(1)
    assert update_view_metadata(m, [AssignUUIDUpdate(m.view_uuid)]) is m
    with pytest.raises(ValidationError, match="cannot reassign"):
        update_view_metadata(m, [AssignUUIDUpdate(uuid.UUID(int=5))])
    assert update_view_metadata(m, [UpgradeFormatVersionUpdate(1)]) is m
    with pytest.raises(ValidationError, match="downgrade"):
        update_view_metadata(m, [UpgradeFormatVersionUpdate(0)])


def test_spec_example_2_is_example_1_replaced() -> None:
    """Applying the replace of Appendix A to the first file gives the second file's versions
    and log (the spec's own before/after pair)."""
    one, two = example(1), example(2)
    new = two.current_version()
    m = update_view_metadata(
        one,
        ViewMetadataBuilder(one).set_current_version(new, one.schema()).changes,
    )
    assert m.versions == two.versions
    assert m.version_log == two.version_log
    assert m.schemas == two.schemas and m.current_version_id == 2
