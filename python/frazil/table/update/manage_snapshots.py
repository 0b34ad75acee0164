"""Branches and tags: create, replace, rename and remove refs with their retention settings, set
the current snapshot, roll back (PyIceberg's ``ManageSnapshots`` names plus the Java reference's
``ManageSnapshots`` operations).

Each call is checked at once against the transaction's staged metadata (an unknown snapshot, a
name that exists, a rollback target that is not an ancestor of ``main`` raise
:class:`ValidationError` right away) and recorded. Staged as one :class:`TransactionStep`, the
recorded operations are replayed on every base the transaction commits against: on a retry they
are checked again there, and a ref that an operation replaces, removes or renames must still point
where it pointed when staged (the catalog enforces the same through the transaction's
``assert-ref-snapshot-id`` requirements). Rollbacks re-check ancestry on the newer ``main``, as
the Java reference's ``SetSnapshotOperation`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from frazil.exceptions import InvalidArgumentError, ValidationError
from frazil.metadata import MAIN_BRANCH, Snapshot, SnapshotRef, SnapshotRefType, TableMetadata
from frazil.table.step import TransactionStep
from frazil.table.update import RemoveSnapshotRefUpdate, SetSnapshotRefUpdate, TableUpdate

if TYPE_CHECKING:
    from frazil.table.transaction import Transaction

__all__ = ["ManageSnapshots", "ancestors_of", "latest_ancestor_before_timestamp"]


def ancestors_of(snapshot_id: int | None, snapshots: Mapping[int, Snapshot]) -> Iterator[Snapshot]:
    """``snapshot_id``'s snapshot, its parent, and so on while they exist in ``snapshots``."""
    seen: set[int] = set()
    current = None if snapshot_id is None else snapshots.get(snapshot_id)
    while current is not None and current.snapshot_id not in seen:
        seen.add(current.snapshot_id)
        yield current
        parent = current.parent_snapshot_id
        current = None if parent is None else snapshots.get(parent)


def latest_ancestor_before_timestamp(metadata: TableMetadata, timestamp_ms: int) -> Snapshot | None:
    """The newest ancestor of ``main``'s head whose timestamp is before ``timestamp_ms``."""
    snapshots = {s.snapshot_id: s for s in metadata.snapshots}
    best: Snapshot | None = None
    for s in ancestors_of(metadata.current_snapshot_id, snapshots):
        if s.timestamp_ms < timestamp_ms and (best is None or s.timestamp_ms > best.timestamp_ms):
            best = s
    return best


@dataclass
class _State:
    """The refs as the recorded operations have left them, over one base metadata."""

    base: TableMetadata
    snapshots: dict[int, Snapshot]
    refs: dict[str, SnapshotRef]

    @classmethod
    def of(cls, base: TableMetadata) -> _State:
        return cls(base, {s.snapshot_id: s for s in base.snapshots}, dict(base.refs))

    def main_head(self) -> int | None:
        ref = self.refs.get(MAIN_BRANCH)
        return None if ref is None else ref.snapshot_id


# An operation: mutates the state or raises ValidationError. ``touches`` are the refs whose base
# value the operation depends on (checked unchanged on retries).
_Op = Callable[[_State], None]


class ManageSnapshots(TransactionStep):
    """Ref operations staged together into one transaction step.

    Use ``with table.manage_snapshots() as ms: ms.create_tag(...)`` or chain calls and end with
    ``.commit()``.
    """

    def __init__(self, transaction: Transaction) -> None:
        self._transaction = transaction
        self._ops: list[tuple[_Op, tuple[str, ...]]] = []
        self._state = _State.of(transaction.table_metadata)
        # refs (name -> snapshot id or None) as the first staged base had them
        self._expected: dict[str, int | None] | None = None
        self._staged = False

    # ---- recording

    def _record(self, op: _Op, *touches: str) -> ManageSnapshots:
        if self._staged:
            raise ValidationError("these snapshot changes have already been committed")
        op(self._state)  # raises before anything is recorded
        self._ops.append((op, touches))
        return self

    def _table_name(self) -> str:
        return self._transaction.table.full_name()

    # ---- checks shared by the operations

    def _snapshot(self, state: _State, snapshot_id: int, what: str) -> Snapshot:
        snapshot = state.snapshots.get(snapshot_id)
        if snapshot is None:
            raise ValidationError(
                f"{self._table_name()}: cannot {what}: unknown snapshot id {snapshot_id}"
            )
        return snapshot

    def _existing(self, state: _State, name: str, kind: str | None, what: str) -> SnapshotRef:
        ref = state.refs.get(name)
        if ref is None:
            label = {None: "ref", SnapshotRefType.BRANCH: "branch", SnapshotRefType.TAG: "tag"}
            raise ValidationError(
                f"{self._table_name()}: cannot {what}: {label[kind]} {name!r} does not exist"
            )
        if kind is not None and ref.snapshot_ref_type != kind:
            raise ValidationError(
                f"{self._table_name()}: cannot {what}: {name!r} is a "
                f"{ref.snapshot_ref_type}, not a {kind}"
            )
        return ref

    def _absent(self, state: _State, name: str, what: str) -> None:
        if name in state.refs:
            raise ValidationError(
                f"{self._table_name()}: cannot {what}: ref {name!r} already exists"
            )

    def _put(self, state: _State, name: str, ref: SnapshotRef) -> None:
        problem = ref.problem()
        if problem:
            raise ValidationError(f"{self._table_name()}: ref {name!r}: {problem}")
        if name == MAIN_BRANCH and ref.snapshot_ref_type != SnapshotRefType.BRANCH:
            raise ValidationError(f"{self._table_name()}: main must be a branch")
        state.refs[name] = ref

    @staticmethod
    def _check_name(name: Any, what: str) -> str:
        if not isinstance(name, str) or not name:
            raise InvalidArgumentError(f"{what} must be a non-empty string, got {name!r}")
        return name

    # ---- tags

    def create_tag(
        self, snapshot_id: int, tag_name: str, max_ref_age_ms: int | None = None
    ) -> ManageSnapshots:
        """A new tag on ``snapshot_id``; the name must not be taken."""
        name = self._check_name(tag_name, "tag name")

        def op(state: _State) -> None:
            what = f"create tag {name!r}"
            self._absent(state, name, what)
            self._snapshot(state, snapshot_id, what)
            ref = SnapshotRef(snapshot_id, SnapshotRefType.TAG, max_ref_age_ms=max_ref_age_ms)
            self._put(state, name, ref)

        return self._record(op, name)

    def replace_tag(self, tag_name: str, snapshot_id: int) -> ManageSnapshots:
        """Points an existing tag at another snapshot, keeping its retention setting."""
        name = self._check_name(tag_name, "tag name")

        def op(state: _State) -> None:
            what = f"replace tag {name!r}"
            ref = self._existing(state, name, SnapshotRefType.TAG, what)
            self._snapshot(state, snapshot_id, what)
            self._put(state, name, replace(ref, snapshot_id=snapshot_id))

        return self._record(op, name)

    def remove_tag(self, tag_name: str) -> ManageSnapshots:
        name = self._check_name(tag_name, "tag name")

        def op(state: _State) -> None:
            self._existing(state, name, SnapshotRefType.TAG, f"remove tag {name!r}")
            del state.refs[name]

        return self._record(op, name)

    # ---- branches

    def create_branch(
        self,
        snapshot_id: int,
        branch_name: str,
        max_ref_age_ms: int | None = None,
        max_snapshot_age_ms: int | None = None,
        min_snapshots_to_keep: int | None = None,
    ) -> ManageSnapshots:
        """A new branch at ``snapshot_id`` with optional retention settings."""
        name = self._check_name(branch_name, "branch name")

        def op(state: _State) -> None:
            what = f"create branch {name!r}"
            self._absent(state, name, what)
            self._snapshot(state, snapshot_id, what)
            ref = SnapshotRef(
                snapshot_id,
                SnapshotRefType.BRANCH,
                min_snapshots_to_keep=min_snapshots_to_keep,
                max_snapshot_age_ms=max_snapshot_age_ms,
                max_ref_age_ms=max_ref_age_ms,
            )
            self._put(state, name, ref)

        return self._record(op, name)

    def remove_branch(self, branch_name: str) -> ManageSnapshots:
        """Removes a branch (not ``main``)."""
        name = self._check_name(branch_name, "branch name")

        def op(state: _State) -> None:
            what = f"remove branch {name!r}"
            if name == MAIN_BRANCH:
                raise ValidationError(f"{self._table_name()}: cannot remove the main branch")
            self._existing(state, name, SnapshotRefType.BRANCH, what)
            del state.refs[name]

        return self._record(op, name)

    def rename_branch(self, name: str, new_name: str) -> ManageSnapshots:
        """Renames a branch (not ``main``), keeping its head and retention settings."""
        old = self._check_name(name, "branch name")
        new = self._check_name(new_name, "new branch name")

        def op(state: _State) -> None:
            what = f"rename branch {old!r} to {new!r}"
            if old == MAIN_BRANCH:
                raise ValidationError(f"{self._table_name()}: cannot rename the main branch")
            ref = self._existing(state, old, SnapshotRefType.BRANCH, what)
            self._absent(state, new, what)
            del state.refs[old]
            self._put(state, new, ref)

        return self._record(op, old, new)

    def replace_branch(self, branch_name: str, snapshot_id_or_ref: int | str) -> ManageSnapshots:
        """Points an existing branch at a snapshot id, or at the snapshot of another ref (a
        name), keeping its retention settings. The new head need not descend from the old."""
        name = self._check_name(branch_name, "branch name")
        if isinstance(snapshot_id_or_ref, str):
            return self._move_branch(name, snapshot_id_or_ref, fast_forward=False)

        snapshot_id = snapshot_id_or_ref

        def op(state: _State) -> None:
            what = f"replace branch {name!r}"
            ref = self._existing(state, name, SnapshotRefType.BRANCH, what)
            self._snapshot(state, snapshot_id, what)
            self._put(state, name, replace(ref, snapshot_id=snapshot_id))

        return self._record(op, name)

    def fast_forward(self, branch_name: str, to_ref: str) -> ManageSnapshots:
        """Moves a branch to the snapshot of ``to_ref``, which must descend from the branch's
        head."""
        name = self._check_name(branch_name, "branch name")
        return self._move_branch(name, self._check_name(to_ref, "ref name"), fast_forward=True)

    def _move_branch(self, name: str, source: str, fast_forward: bool) -> ManageSnapshots:
        def op(state: _State) -> None:
            verb = "fast-forward" if fast_forward else "replace"
            what = f"{verb} branch {name!r} to {source!r}"
            ref = self._existing(state, name, SnapshotRefType.BRANCH, what)
            target = self._existing(state, source, None, what)
            if target.snapshot_id == ref.snapshot_id:
                return
            if fast_forward:
                lineage = ancestors_of(target.snapshot_id, state.snapshots)
                if all(s.snapshot_id != ref.snapshot_id for s in lineage):
                    raise ValidationError(
                        f"{self._table_name()}: cannot fast-forward: {name!r} (snapshot "
                        f"{ref.snapshot_id}) is not an ancestor of {source!r} (snapshot "
                        f"{target.snapshot_id})"
                    )
            self._put(state, name, replace(ref, snapshot_id=target.snapshot_id))

        return self._record(op, name, source)

    # ---- retention settings

    def set_min_snapshots_to_keep(
        self, branch_name: str, min_snapshots_to_keep: int
    ) -> ManageSnapshots:
        return self._set_retention(
            branch_name, SnapshotRefType.BRANCH, min_snapshots_to_keep=min_snapshots_to_keep
        )

    def set_max_snapshot_age_ms(
        self, branch_name: str, max_snapshot_age_ms: int
    ) -> ManageSnapshots:
        return self._set_retention(
            branch_name, SnapshotRefType.BRANCH, max_snapshot_age_ms=max_snapshot_age_ms
        )

    def set_max_ref_age_ms(self, ref_name: str, max_ref_age_ms: int) -> ManageSnapshots:
        """Sets a branch's or tag's max-ref-age-ms (``main`` never expires, whatever it says)."""
        return self._set_retention(ref_name, None, max_ref_age_ms=max_ref_age_ms)

    def _set_retention(self, ref_name: str, kind: str | None, **changes: Any) -> ManageSnapshots:
        name = self._check_name(ref_name, "ref name")
        ((key, value),) = changes.items()
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidArgumentError(f"{key} must be an int, got {value!r}")

        def op(state: _State) -> None:
            what = f"set {key.replace('_', '-')} of {name!r}"
            ref = self._existing(state, name, None, what)
            if kind == SnapshotRefType.BRANCH and ref.snapshot_ref_type != kind:
                raise ValidationError(
                    f"{self._table_name()}: cannot {what}: tags do not have {key.replace('_', '-')}"
                )
            self._put(state, name, replace(ref, **changes))

        return self._record(op, name)

    # ---- main

    def set_current_snapshot(
        self, snapshot_id: int | None = None, ref_name: str | None = None
    ) -> ManageSnapshots:
        """Points ``main`` at a snapshot (by id, or the snapshot of a ref), whatever its relation
        to the current head; ``main`` keeps its retention settings."""
        if (snapshot_id is None) == (ref_name is None):
            raise InvalidArgumentError("give exactly one of snapshot_id and ref_name")

        def op(state: _State) -> None:
            target = snapshot_id
            if ref_name is not None:
                target = self._existing(
                    state, ref_name, None, "set the current snapshot"
                ).snapshot_id
            assert target is not None
            self._snapshot(state, target, "set the current snapshot")
            self._set_main(state, target)

        return self._record(op)

    def rollback_to_snapshot(self, snapshot_id: int) -> ManageSnapshots:
        """Sets ``main`` back to one of its ancestors."""

        def op(state: _State) -> None:
            what = f"roll back to snapshot {snapshot_id}"
            self._snapshot(state, snapshot_id, what)
            if all(s.snapshot_id != snapshot_id for s in self._main_ancestors(state)):
                raise ValidationError(
                    f"{self._table_name()}: cannot {what}: it is not an ancestor of the current "
                    f"snapshot {state.main_head()}"
                )
            self._set_main(state, snapshot_id)

        return self._record(op)

    def rollback_to_timestamp(self, timestamp_ms: int) -> ManageSnapshots:
        """Sets ``main`` back to its newest ancestor older than ``timestamp_ms``."""

        def op(state: _State) -> None:
            best: Snapshot | None = None
            for s in self._main_ancestors(state):
                if s.timestamp_ms < timestamp_ms and (
                    best is None or s.timestamp_ms > best.timestamp_ms
                ):
                    best = s
            if best is None:
                raise ValidationError(
                    f"{self._table_name()}: cannot roll back: no ancestor of the current "
                    f"snapshot is older than {timestamp_ms}"
                )
            self._set_main(state, best.snapshot_id)

        return self._record(op)

    def _main_ancestors(self, state: _State) -> Iterator[Snapshot]:
        return ancestors_of(state.main_head(), state.snapshots)

    def _set_main(self, state: _State, snapshot_id: int) -> None:
        ref = state.refs.get(MAIN_BRANCH)
        new = SnapshotRef(snapshot_id) if ref is None else replace(ref, snapshot_id=snapshot_id)
        self._put(state, MAIN_BRANCH, new)

    # ---- the transaction step

    def apply(self, base: TableMetadata, attempt: int) -> list[TableUpdate]:
        touched = {name for _, names in self._ops for name in names}
        current = {name: _ref_id(base, name) for name in touched}
        if self._expected is None:
            self._expected = current
        else:
            for name in sorted(touched):
                if current[name] != self._expected[name]:
                    raise ValidationError(
                        f"{self._table_name()}: ref {name!r} changed concurrently (snapshot "
                        f"{self._expected[name]} when staged, now {current[name]})"
                    )
        state = _State.of(base)
        for op, _ in self._ops:
            op(state)
        updates: list[TableUpdate] = [
            RemoveSnapshotRefUpdate(name) for name in base.refs if name not in state.refs
        ]
        for name, ref in state.refs.items():
            if base.refs.get(name) != ref:
                updates.append(
                    SetSnapshotRefUpdate(
                        name,
                        ref.snapshot_id,
                        ref.snapshot_ref_type,
                        ref.min_snapshots_to_keep,
                        ref.max_snapshot_age_ms,
                        ref.max_ref_age_ms,
                    )
                )
        return updates

    def commit(self) -> None:
        """Stages the recorded operations into the transaction (which commits at once when it is
        the table's own autocommit transaction). Nothing recorded, nothing staged."""
        if self._staged or not self._ops:
            return
        self._transaction.stage(self)
        self._staged = True

    def __enter__(self) -> ManageSnapshots:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()


def _ref_id(metadata: TableMetadata, name: str) -> int | None:
    ref = metadata.refs.get(name)
    return None if ref is None else ref.snapshot_id
