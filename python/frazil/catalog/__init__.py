"""Catalogs: where a table's current metadata pointer lives (PyIceberg's API names).

``load_catalog(name, **properties)`` builds a catalog from arguments, the YAML file
``~/.frazil.yaml`` (or the file ``$FRAZIL_HOME/.frazil.yaml`` ... see :func:`load_catalog`) and
``FRAZIL_CATALOG__<NAME>__<KEY>`` environment variables. ``type="sql"`` (the default; SQLite or
PostgreSQL through SQLAlchemy) and ``type="filesystem"`` (alias ``"hadoop"``).

Every catalog commits the same way (:meth:`Catalog.commit_table`): load the current metadata,
check the requirements against it, apply the updates, write the new metadata file, and swap the
pointer atomically (a check-and-put on the metadata location, or a create-if-absent of the next
version file). Losing the race is a :class:`~frazil.exceptions.CommitFailedError` (the
transaction refreshes and retries); an outcome that cannot be determined is a
:class:`~frazil.exceptions.CommitStateUnknownError`.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from frazil.metadata import TableMetadata

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.table import Table
    from frazil.table.transaction import Transaction
    from frazil.table.updates import TableRequirement, TableUpdate

__all__ = [
    "Catalog",
    "CommitTableResponse",
    "Identifier",
    "PropertiesUpdateSummary",
    "load_catalog",
]

Identifier = tuple[str, ...]


@dataclass(frozen=True)
class CommitTableResponse:
    metadata: TableMetadata
    metadata_location: str


@dataclass(frozen=True)
class PropertiesUpdateSummary:
    removed: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


class Catalog(abc.ABC):
    """A catalog of namespaces and tables. Identifiers are dotted strings or tuples."""

    def __init__(self, name: str, **properties: str) -> None:
        self.name = name
        self.properties = dict(properties)

    @property
    @abc.abstractmethod
    def io(self) -> FileIO:
        """The FileIO for this catalog's warehouse and tables."""

    # ---- namespaces

    @abc.abstractmethod
    def create_namespace(
        self, namespace: str | Identifier, properties: Mapping[str, str] | None = None
    ) -> None: ...

    def create_namespace_if_not_exists(
        self, namespace: str | Identifier, properties: Mapping[str, str] | None = None
    ) -> None:
        raise NotImplementedError

    @abc.abstractmethod
    def drop_namespace(self, namespace: str | Identifier) -> None: ...

    @abc.abstractmethod
    def list_namespaces(self, namespace: str | Identifier = ()) -> list[Identifier]: ...

    @abc.abstractmethod
    def load_namespace_properties(self, namespace: str | Identifier) -> dict[str, str]: ...

    @abc.abstractmethod
    def update_namespace_properties(
        self,
        namespace: str | Identifier,
        removals: set[str] | None = None,
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdateSummary: ...

    def namespace_exists(self, namespace: str | Identifier) -> bool:
        raise NotImplementedError

    # ---- tables

    @abc.abstractmethod
    def create_table(
        self,
        identifier: str | Identifier,
        schema: Any,
        location: str | None = None,
        partition_spec: Any = None,
        sort_order: Any = None,
        properties: Mapping[str, str] | None = None,
    ) -> Table:
        """Creates a table; ``schema`` is a :class:`frazil.schema.Schema` or a pyarrow schema.
        The format version comes from ``properties["format-version"]`` (default 2)."""

    def create_table_transaction(
        self,
        identifier: str | Identifier,
        schema: Any,
        location: str | None = None,
        partition_spec: Any = None,
        sort_order: Any = None,
        properties: Mapping[str, str] | None = None,
    ) -> Transaction:
        raise NotImplementedError

    def create_table_if_not_exists(
        self,
        identifier: str | Identifier,
        schema: Any,
        location: str | None = None,
        partition_spec: Any = None,
        sort_order: Any = None,
        properties: Mapping[str, str] | None = None,
    ) -> Table:
        raise NotImplementedError

    @abc.abstractmethod
    def load_table(self, identifier: str | Identifier) -> Table: ...

    @abc.abstractmethod
    def register_table(self, identifier: str | Identifier, metadata_location: str) -> Table: ...

    @abc.abstractmethod
    def drop_table(self, identifier: str | Identifier, purge: bool = False) -> None: ...

    def purge_table(self, identifier: str | Identifier) -> None:
        self.drop_table(identifier, purge=True)

    @abc.abstractmethod
    def rename_table(
        self, from_identifier: str | Identifier, to_identifier: str | Identifier
    ) -> Table: ...

    @abc.abstractmethod
    def table_exists(self, identifier: str | Identifier) -> bool: ...

    @abc.abstractmethod
    def list_tables(self, namespace: str | Identifier) -> list[Identifier]: ...

    @abc.abstractmethod
    def commit_table(
        self,
        table: Table,
        requirements: Sequence[TableRequirement],
        updates: Sequence[TableUpdate],
    ) -> CommitTableResponse:
        """Commits ``updates`` atomically if ``requirements`` hold against the table's current
        metadata (freshly loaded, which may be newer than ``table.metadata``).

        Raises :class:`CommitFailedError` when a requirement fails or another commit won the
        pointer swap (nothing changed; the new metadata file is deleted), and
        :class:`CommitStateUnknownError` only when it cannot find out whether the swap landed.
        For a table being created (``AssertCreate`` among the requirements) the pointer is
        inserted instead."""


def load_catalog(name: str | None = None, **properties: str) -> Catalog:
    """A catalog configured from (later wins) the YAML file, the environment and ``properties``."""
    raise NotImplementedError
