"""Catalog-level transactions: changes to several tables committed as one
(:meth:`Catalog.transaction <frazil.catalog.Catalog.transaction>`)::

    with catalog.transaction() as tx:
        tx.table("db.orders").append(new_orders)
        tx.table("db.stock").delete("sku = 'x'")
    # both tables changed, or neither

Each :meth:`CatalogTransaction.table` is an ordinary per-table
:class:`~frazil.table.transaction.Transaction` (every change it offers is staged the same way);
the catalog transaction takes their updates and requirements and hands them to
:meth:`Catalog.commit_tables` at once (the REST catalog's ``POST /v1/transactions/commit``).
When another writer wins the race (:class:`CommitFailedError`), every table is refreshed and
its steps re-run on the new head with the per-table rebase machinery, then the whole set is
tried again (``commit.retry.*`` of the first table); a step that no longer applies raises and
nothing lands. An unknown outcome (:class:`CommitStateUnknownError`) is raised as is, with no
cleanup. Catalogs that cannot swap several pointers atomically raise
:class:`~frazil.exceptions.UnsupportedError` when more than one table changed.
"""

from __future__ import annotations

import logging
import time
from types import TracebackType
from typing import TYPE_CHECKING

from frazil.catalog.commit import TableCommit
from frazil.exceptions import CommitFailedError, CommitStateUnknownError, ValidationError
from frazil.table.transaction import RetryPolicy, Transaction, requirements_for

if TYPE_CHECKING:
    from frazil.catalog.base import Catalog, Identifier
    from frazil.table import Table

__all__ = ["CatalogTransaction"]

logger = logging.getLogger(__name__)


class CatalogTransaction:
    """Changes to several tables of one catalog, committed together (a context manager that
    commits on a clean exit, or call :meth:`commit_transaction`)."""

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog
        self._tables: dict[Identifier, Transaction] = {}
        self._committed = False

    def __repr__(self) -> str:
        names = ", ".join(".".join(i) for i in self._tables)
        return f"CatalogTransaction({self._catalog.name!r}, [{names}])"

    def table(self, identifier: str | Identifier) -> Transaction:
        """The transaction of one table in this catalog transaction (loaded on first use):
        stage changes on it (``append``, ``delete``, ``update_schema()``, ...); it commits with
        the others. Do not call its own ``commit_transaction``."""
        if self._committed:
            raise ValidationError("this catalog transaction has already been committed")
        ident = self._catalog._existing_table_identifier(identifier)
        tx = self._tables.get(ident)
        if tx is None:
            tx = Transaction(self._catalog.load_table(ident))
            self._tables[ident] = tx
        return tx

    def __enter__(self) -> CatalogTransaction:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.commit_transaction()
        elif not self._committed:
            self._abort()

    def _abort(self) -> None:
        for tx in self._tables.values():
            tx._abort()

    def commit_transaction(self) -> list[Table]:
        """Commits every table's staged changes as one, retrying on conflicts; returns the
        refreshed tables."""
        if self._committed:
            return [tx.table for tx in self._tables.values()]
        changed = [tx for tx in self._tables.values() if tx._steps]
        if len(changed) <= 1:
            # One table alone commits atomically through its own transaction.
            for tx in changed:
                tx.commit_transaction()
            self._committed = True
            return [tx.table for tx in self._tables.values()]
        policy = RetryPolicy.from_properties(changed[0].table_metadata.properties)
        started = time.monotonic()
        attempt = 0
        try:
            for tx in changed:
                tx._refresh(0)
        except BaseException:
            self._abort()
            raise
        while True:
            commits = []
            for tx in changed:
                refs_read = {name for step in tx._steps for name in step.refs_read()}
                commits.append(
                    TableCommit(
                        tx.table, requirements_for(tx._base, tx._updates, refs_read), tx._updates
                    )
                )
            try:
                responses = self._catalog.commit_tables(commits)
                break
            except CommitFailedError as e:
                attempt += 1
                if policy.gives_up(attempt, started, time.monotonic()):
                    self._abort()
                    raise
                wait = policy.wait_seconds(attempt)
                logger.info(
                    "multi-table commit failed (%s); retry %d%s in %.2f s",
                    e,
                    attempt,
                    policy.describe(),
                    wait,
                )
                time.sleep(wait)
                try:
                    for tx in changed:
                        tx.table.refresh()
                        tx._rebase(tx.table.metadata, attempt)
                except BaseException:
                    self._abort()
                    raise
            except CommitStateUnknownError:
                raise  # the changes may be current: their files must stay
            except BaseException:
                self._abort()
                raise
        self._committed = True
        for tx, response in zip(changed, responses, strict=True):
            tx._committed = True
            tx.table._set_metadata(response.metadata, response.metadata_location)
            for step in tx._steps:
                try:
                    step.on_commit(response.metadata)
                except Exception:
                    logger.warning(
                        "post-commit cleanup of %s failed", tx.table.full_name(), exc_info=True
                    )
        return [tx.table for tx in self._tables.values()]
