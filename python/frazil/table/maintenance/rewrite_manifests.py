"""Manifest rewriting (Java's ``RewriteManifests``): the branch head's manifests, reorganized.

The manifests chosen (all by default; ``spec_id`` and ``rewrite_if`` narrow them) are read, and
their live entries, per partition spec and content (data and delete manifests never mix), are
clustered by partition (the first partition field's values first, then the next, as Java's
Spark action sorts them) and written as EXISTING entries into as many new manifests as the
total size of the rewritten manifests divided by ``commit.manifest.target-size-bytes`` (default
8 MB), rounded up. Entries keep their snapshot ids, data and file sequence numbers and v3
``first_row_id`` (made explicit), so scans, sequence-number-based delete application and row
lineage are unchanged. DELETED entries are dropped. One snapshot with operation ``replace``
and no content change is committed; nothing is committed when the selection is one manifest
that would be rewritten into one.

On a retry against a newer head, the manifests to replace must still be the head's (else the
commit fails); manifests the concurrent commits added are kept as they are.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil.exceptions import InvalidArgumentError, ValidationError
from frazil.metadata import Operation, Snapshot, SnapshotRefType, TableMetadata
from frazil.table.update import AddSnapshotUpdate, SetSnapshotRefUpdate, TableUpdate
from frazil.table.update.manifest_merge import MergeSettings
from frazil.table.update.snapshot_producer import DELETED, EXISTING, SnapshotProducer
from frazil.table.update.snapshot_summary import update_totals

if TYPE_CHECKING:
    from frazil.table import Table
    from frazil.table.transaction import Transaction

__all__ = ["RewriteManifests", "RewriteManifestsResult", "rewrite_manifests"]

ManifestPredicate = Callable[[Mapping[str, Any]], bool]


@dataclass(frozen=True)
class RewriteManifestsResult:
    """Java's ``RewriteManifests.Result``: the manifests replaced and the ones written."""

    rewritten_manifests: list[str] = field(default_factory=list)
    added_manifests: list[str] = field(default_factory=list)
    snapshot_id: int | None = None


def _clustered(entries: pa.Table) -> pa.Table:
    """Entries sorted by partition, field by field (nulls first), then by file path so equal
    partitions come out in a stable order."""
    partition = entries.column("data_file").combine_chunks().field("partition")
    keys: dict[str, Any] = {}
    if isinstance(partition.type, pa.StructType):
        for i in range(partition.type.num_fields):
            keys[f"k{i}"] = partition.field(i)
    keys["path"] = entries.column("data_file").combine_chunks().field("file_path")
    order = pc.sort_indices(pa.table(keys), sort_keys=[(k, "ascending", "at_start") for k in keys])
    return entries.take(order)


class RewriteManifests(SnapshotProducer):
    """Stages a manifest rewrite (``commit()``, or a clean exit of a ``with`` block)."""

    _merges = False

    def __init__(
        self,
        transaction: Transaction,
        snapshot_properties: Mapping[str, str] | None = None,
        branch: str | None = None,
        *,
        spec_id: int | None = None,
        rewrite_if: ManifestPredicate | None = None,
        target_size_bytes: int | None = None,
    ) -> None:
        super().__init__(transaction, snapshot_properties, branch)
        if target_size_bytes is not None and target_size_bytes <= 0:
            raise InvalidArgumentError(f"target_size_bytes must be > 0, got {target_size_bytes}")
        self._spec_id = spec_id
        self._rewrite_if = rewrite_if
        self._target = target_size_bytes
        # planned once (against the first base): replaced manifest paths -> written rows
        self._replaced: list[str] | None = None
        self._written: list[dict[str, Any]] = []
        self.result = RewriteManifestsResult()

    def _operation(self) -> str:
        return Operation.REPLACE

    def _selected(self, row: Mapping[str, Any]) -> bool:
        if self._spec_id is not None and row["partition_spec_id"] != self._spec_id:
            return False
        return self._rewrite_if is None or bool(self._rewrite_if(row))

    def _plan(self, base: TableMetadata, rows: list[dict[str, Any]]) -> None:
        chosen = [r for r in rows if self._selected(r)]
        target = self._target or MergeSettings.from_properties(base.properties).target_size_bytes
        groups: dict[tuple[int, int], list[dict[str, Any]]] = {}
        for r in chosen:
            groups.setdefault((r["content"], r["partition_spec_id"]), []).append(r)
        replaced: list[str] = []
        written: list[dict[str, Any]] = []
        for (content, spec_id), members in sorted(groups.items()):
            total = sum(r["manifest_length"] for r in members)
            count = max(1, math.ceil(total / target))
            if count == 1 and len(members) == 1:
                continue  # rewriting one manifest into one changes nothing
            parts = []
            for entries in self._entries(members):
                live = entries.filter(pc.not_equal(entries.column("status"), DELETED))
                status = pa.array([EXISTING] * live.num_rows, pa.int32())
                parts.append(live.set_column(0, live.schema.field("status"), status))
            merged = _clustered(pa.concat_tables(parts, promote_options="permissive"))
            replaced.extend(r["manifest_path"] for r in members)
            if not merged.num_rows:
                continue
            count = min(count, merged.num_rows)
            step = math.ceil(merged.num_rows / count)
            for start in range(0, merged.num_rows, step):
                chunk = merged.slice(start, step)
                written.append(self._write_manifest(base, chunk, spec_id, content))
        self._replaced, self._written = replaced, written

    def _apply(self, base: TableMetadata) -> list[TableUpdate]:
        name = self._table_name()
        ref = base.refs.get(self._branch)
        if ref is not None and ref.snapshot_ref_type != SnapshotRefType.BRANCH:
            raise ValidationError(f"{name}: {self._branch!r} is a tag, not a branch")
        parent = base.snapshot_by_id(ref.snapshot_id) if ref is not None else None
        if parent is None:
            raise ValidationError(f"{name}: branch {self._branch!r} has no snapshot to rewrite")
        if self._snapshot_id is None:
            self._snapshot_id = self._new_snapshot_id(base)
        rows = self._manifest_rows(parent)
        if self._replaced is None:
            self._plan(base, rows)
        assert self._replaced is not None
        present = {r["manifest_path"] for r in rows}
        missing = [p for p in self._replaced if p not in present]
        if missing:
            raise ValidationError(
                f"{name}: manifests to rewrite are no longer in branch {self._branch!r}'s "
                f"head (a concurrent commit replaced them): {', '.join(missing[:5])}"
            )
        gone = set(self._replaced)
        kept = [r for r in rows if r["manifest_path"] not in gone]
        manifests = [dict(r) for r in self._written] + kept
        version = base.format_version
        sequence_number = base.last_sequence_number + 1 if version >= 2 else 0
        list_rows, first_row_id, added_rows = self._assign(base, manifests, sequence_number)
        list_path = self._write_list(base, list_rows, parent, sequence_number, first_row_id)
        key_id, key_updates = self._snapshot_key(base, list_path)
        props = {
            **self._properties,
            "manifests-created": str(len(self._written)),
            "manifests-kept": str(len(kept)),
            "manifests-replaced": str(len(self._replaced)),
            "changed-partition-count": "0",
            "entries-processed": str(
                sum(
                    (r.get("added_files_count") or 0)
                    + (r.get("existing_files_count") or 0)
                    + (r.get("deleted_files_count") or 0)
                    for r in rows
                    if r["manifest_path"] in gone
                )
            ),
        }
        props = update_totals(props, dict(parent.summary or {}))
        snapshot = Snapshot(
            snapshot_id=self.snapshot_id,
            timestamp_ms=max(int(time.time() * 1000), base.last_updated_ms),
            parent_snapshot_id=parent.snapshot_id,
            sequence_number=sequence_number,
            manifest_list=list_path,
            summary={"operation": self._operation(), **props},
            schema_id=base.current_schema_id,
            first_row_id=first_row_id,
            added_rows=added_rows,
            key_id=key_id,
        )
        self.result = RewriteManifestsResult(
            rewritten_manifests=list(self._replaced),
            added_manifests=[r["manifest_path"] for r in self._written],
            snapshot_id=self.snapshot_id,
        )
        return [
            *key_updates,
            AddSnapshotUpdate(snapshot),
            SetSnapshotRefUpdate(
                self._branch,
                self.snapshot_id,
                SnapshotRefType.BRANCH,
                ref.min_snapshots_to_keep if ref else None,
                ref.max_snapshot_age_ms if ref else None,
                ref.max_ref_age_ms if ref else None,
            ),
        ]


def stage_rewrite_manifests(
    transaction: Transaction,
    spec_id: int | None = None,
    rewrite_if: ManifestPredicate | None = None,
    target_size_bytes: int | None = None,
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
) -> RewriteManifestsResult:
    """Stages a manifest rewrite of ``branch`` (default main) in ``transaction``; nothing is
    staged when nothing needs rewriting (the result then names no manifests)."""
    step = RewriteManifests(
        transaction,
        snapshot_properties,
        branch,
        spec_id=spec_id,
        rewrite_if=rewrite_if,
        target_size_bytes=target_size_bytes,
    )
    md = transaction.table_metadata
    ref = md.refs.get(step._branch)
    head = md.snapshot_by_id(ref.snapshot_id) if ref is not None else None
    if head is None:
        return RewriteManifestsResult()
    step._snapshot_id = step._new_snapshot_id(md)
    step._location = md.paths_location  # planned before apply: v4 paths resolve against it
    step._plan(md, step._manifest_rows(head))
    if not step._replaced:
        return RewriteManifestsResult()
    transaction.stage(step)
    return step.result


def rewrite_manifests(
    table: Table,
    spec_id: int | None = None,
    rewrite_if: ManifestPredicate | None = None,
    target_size_bytes: int | None = None,
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
) -> RewriteManifestsResult:
    """Rewrites ``table``'s manifests (module documentation), committed before returning."""
    with table.transaction() as tx:
        return stage_rewrite_manifests(
            tx, spec_id, rewrite_if, target_size_bytes, branch, snapshot_properties
        )
