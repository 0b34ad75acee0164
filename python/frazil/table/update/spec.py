"""Partition evolution (spec "Partition Evolution", "Partitioning").

``UpdateSpec`` adds, removes and renames fields of the table's default spec and produces the new
spec with its updates and requirements. Field ids are reused for a field equivalent to one of any
earlier spec and are otherwise fresh from ``last-partition-id``, so they never collide. In v1
tables, fields are never dropped or reordered: a removed field becomes ``void`` in place and new
fields go at the end (the spec's recommended v1 rules)::

    with UpdateSpec(metadata) as update:
        update.add_field("ts", "day")
        update.remove_field("id_bucket")
"""

from __future__ import annotations

from frazil.exceptions import FrazilError, ValidationError
from frazil.metadata import TableMetadata
from frazil.partitioning import (
    PARTITION_FIELD_ID_START,
    AnyTransform,
    PartitionField,
    PartitionSpec,
    can_transform,
    is_void,
    validate_spec,
)
from frazil.table.update import (
    AddPartitionSpecUpdate,
    AssertDefaultSpecId,
    AssertLastAssignedPartitionId,
    PendingUpdate,
    SetDefaultSpecUpdate,
    TableRequirement,
    TableUpdate,
)
from frazil.table.update.updates import LAST_ADDED, OnCommit
from frazil.transforms import Transform, parse

__all__ = ["UpdateSpec", "default_partition_name"]

_TIME = {"year", "month", "day", "hour"}
_VOID = parse("void")


def default_partition_name(source_name: str, transform: AnyTransform) -> str:
    """The reference's names for evolved partition fields (``id_bucket_16``, ``ts_day``)."""
    text = str(transform)
    if text == "identity":
        return source_name
    if text.startswith("bucket["):
        return f"{source_name}_bucket_{text[7:-1]}"
    if text.startswith("truncate["):
        return f"{source_name}_trunc_{text[9:-1]}"
    if text == "void":
        return f"{source_name}_null"
    return f"{source_name}_{text}"


def _dedup_key(field: PartitionField) -> tuple[tuple[int, ...], str]:
    # Two time transforms of one column are redundant (day(ts) already orders hour(ts)).
    text = str(field.transform)
    return field.source_ids, "time" if text in _TIME else text


class UpdateSpec(PendingUpdate):
    """Changes to the default partition spec of ``metadata``; see the module docstring."""

    def __init__(
        self,
        metadata: TableMetadata,
        case_sensitive: bool = True,
        on_commit: OnCommit | None = None,
    ) -> None:
        self._metadata = metadata
        self._spec = metadata.spec()
        self._schema = metadata.schema()
        self._v1 = metadata.format_version == 1
        self._case_sensitive = case_sensitive
        self._on_commit = on_commit
        self._last_partition_id = metadata.last_partition_id
        self._adds: list[PartitionField] = []
        self._deletes: set[int] = set()
        self._renames: dict[str, str] = {}
        self._by_name = {f.name: f for f in self._spec.fields}

    # ---- changes

    def add_identity(self, source_column_name: str) -> UpdateSpec:
        return self.add_field(source_column_name, "identity")

    def add_field(
        self,
        source_column_name: str,
        transform: Transform | str,
        partition_field_name: str | None = None,
    ) -> UpdateSpec:
        """Adds ``transform(source_column_name)``; the transform is an object or its string
        (``"day"``, ``"bucket[16]"``)."""
        try:
            source = self._schema.find_field(source_column_name, self._case_sensitive)
            t = transform if isinstance(transform, Transform) else parse(transform)
        except FrazilError as e:
            raise ValidationError(f"cannot add partition field: {e}") from None
        if not can_transform(t, source.field_type):
            raise ValidationError(
                f"cannot partition {source_column_name!r} ({source.field_type}) by {t}"
            )
        probe = PartitionField(source.field_id, 0, t, partition_field_name or "")
        key = _dedup_key(probe)
        for existing in self._spec.fields:
            if _dedup_key(existing) != key or is_void(existing.transform):
                continue
            if existing.field_id in self._deletes and existing.transform == t:
                # Removing then re-adding the same field cancels the removal.
                self._deletes.discard(existing.field_id)
                if partition_field_name and partition_field_name != existing.name:
                    self.rename_field(existing.name, partition_field_name)
                return self
            if existing.field_id not in self._deletes:
                raise ValidationError(
                    f"cannot add partition field {t}({source_column_name}): it duplicates "
                    f"existing field {existing.name!r} ({existing.transform})"
                )
        for added in self._adds:
            if _dedup_key(added) == key:
                raise ValidationError(
                    f"cannot add partition field {t}({source_column_name}): redundant with "
                    f"{added.name!r} ({added.transform}) added in this change"
                )
        field_id, old_name = self._recycle(source.field_id, t, partition_field_name)
        name = partition_field_name or old_name or default_partition_name(source.name, t)
        if name in self._names_after_changes():
            raise ValidationError(f"cannot add partition field {name!r}: the name already exists")
        self._adds.append(PartitionField(source.field_id, field_id, t, name))
        return self

    def _recycle(self, source_id: int, t: Transform, name: str | None) -> tuple[int, str | None]:
        """Spec: reuse the id of an equivalent field (same source, transform and name, or no name
        asked for) of any earlier spec (v2+); otherwise take the next id. v1 ids are
        positional, so v1 always appends a new one."""
        if not self._v1:
            for spec in self._metadata.partition_specs:
                for f in spec.fields:
                    same = f.source_ids == (source_id,) and f.transform == t
                    if same and name in (None, f.name):
                        return f.field_id, f.name
            self._last_partition_id += 1
            return self._last_partition_id, None
        position = len(self._spec.fields) + len(self._adds)
        return PARTITION_FIELD_ID_START + position, None

    def _names_after_changes(self) -> set[str]:
        names = set()
        for f in self._spec.fields:
            if f.field_id in self._deletes and not self._v1:
                continue
            names.add(self._renames.get(f.name, f.name))
        names.update(f.name for f in self._adds)
        return names

    def remove_field(self, name: str) -> UpdateSpec:
        if any(f.name == name for f in self._adds):
            raise ValidationError(
                f"cannot remove partition field {name!r}: it is added in this change"
            )
        if name in self._renames:
            raise ValidationError(f"cannot remove and rename partition field {name!r}")
        field = self._by_name.get(name)
        if field is None:
            raise ValidationError(f"cannot find partition field {name!r}")
        self._deletes.add(field.field_id)
        return self

    def rename_field(self, name: str, new_name: str) -> UpdateSpec:
        field = self._by_name.get(name)
        if field is None:
            added = next((f for f in self._adds if f.name == name), None)
            if added is None:
                raise ValidationError(f"cannot find partition field {name!r}")
            if new_name in self._names_after_changes() - {name}:
                raise ValidationError(f"cannot rename {name!r} to {new_name!r}: the name exists")
            self._adds = [
                PartitionField(f.source_id, f.field_id, f.transform, new_name, f.source_ids)
                if f is added
                else f
                for f in self._adds
            ]
            return self
        if field.field_id in self._deletes:
            raise ValidationError(f"cannot rename and remove partition field {name!r}")
        if new_name in self._names_after_changes() - {self._renames.get(name, name)}:
            raise ValidationError(f"cannot rename {name!r} to {new_name!r}: the name exists")
        self._renames[name] = new_name
        return self

    # ---- results

    def apply(self) -> PartitionSpec:
        fields = []
        for f in self._spec.fields:
            name = self._renames.get(f.name, f.name)
            if f.field_id in self._deletes:
                if self._v1:
                    fields.append(
                        PartitionField(f.source_id, f.field_id, _VOID, name, f.source_ids)
                    )
                continue
            fields.append(PartitionField(f.source_id, f.field_id, f.transform, name, f.source_ids))
        fields.extend(self._adds)
        existing = next(
            (
                s
                for s in self._metadata.partition_specs
                if s.compatible_with(PartitionSpec(*fields))
            ),
            None,
        )
        spec_id = (
            existing.spec_id
            if existing is not None
            else max(s.spec_id for s in self._metadata.partition_specs) + 1
        )
        spec = PartitionSpec(*fields, spec_id=spec_id)
        try:
            validate_spec(spec, self._schema)
        except FrazilError as e:
            raise ValidationError(str(e)) from None
        return spec

    def updates_and_requirements(self) -> tuple[list[TableUpdate], list[TableRequirement]]:
        """``add-spec`` + ``set-default-spec`` (-1), guarded by the default spec id and the last
        assigned partition id; nothing when the spec does not change."""
        new = self.apply()
        if new.compatible_with(self._spec):
            return [], []
        return (
            [AddPartitionSpecUpdate(new), SetDefaultSpecUpdate(LAST_ADDED)],
            [
                AssertDefaultSpecId(self._metadata.default_spec_id),
                AssertLastAssignedPartitionId(self._metadata.last_partition_id),
            ],
        )
