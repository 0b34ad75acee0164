"""A transaction's steps: what a staged change must do on every attempt of a commit.

Kept apart from ``transaction.py`` so that the operations (snapshot producers, schema, spec and
ref changes, row deltas) depend on this small contract and not on the transaction itself.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from frazil.exceptions import CommitFailedError, ValidationError
from frazil.metadata import TableMetadata
from frazil.table.update import TableRequirement, TableUpdate

__all__ = ["StaticStep", "TransactionStep"]


class TransactionStep:
    """One staged change. ``apply`` may run several times (first when staged, then once per
    retry, each time against a newer base) and must give updates valid against that base, or
    raise (``ValidationError``) when the change no longer applies."""

    def apply(self, base: TableMetadata, attempt: int) -> list[TableUpdate]:
        raise NotImplementedError

    def refs_read(self) -> Collection[str]:
        """Branches whose state this step's updates were computed from even when it changes
        nothing (a delete that matched no row): the commit requires each to be unchanged, so
        that a concurrent commit to one makes this step run again against it."""
        return ()

    def on_commit(self, committed: TableMetadata) -> None:
        """Called once the transaction landed: delete what earlier attempts wrote and the
        committed metadata does not use, or other post-commit work (e.g. expiry's deletes)."""

    def on_abort(self) -> None:
        """Called when the transaction certainly did not land: delete every file written."""


class StaticStep(TransactionStep):
    """Fixed updates built against a known metadata, with the requirements that say so."""

    def __init__(self, updates: Sequence[TableUpdate], requirements: Sequence[TableRequirement]):
        self.updates = list(updates)
        self.requirements = list(requirements)

    def apply(self, base: TableMetadata, attempt: int) -> list[TableUpdate]:
        for r in self.requirements:
            try:
                r.validate(base)
            except CommitFailedError as e:
                # Not retryable: the change was built for a state the table has left.
                raise ValidationError(f"the table changed concurrently: {e}") from None
        return list(self.updates)
