"""Views: a catalog's handle on one view's current metadata, and the ways to change it.

A view is a query stored in the catalog (the view spec): versions of SQL representations (one per
dialect), each with the schema of its result and the default catalog and namespace its names are
resolved in. Changes are view updates plus requirements (``updates``) committed through
:meth:`frazil.catalog.Catalog.commit_view`, like a table's.

::

    view = catalog.create_view("db.v", schema, "SELECT id, name FROM db.t", dialect="spark")
    view.sql_for("spark").sql
    view.replace_version().with_query("spark", "SELECT id FROM db.t").with_schema(s2).commit()
    with view.update_properties() as p:
        p.set("comment", "ids only")
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from frazil import __version__
from frazil.arrow_schema import schema_from_arrow
from frazil.exceptions import CommitFailedError, InvalidArgumentError
from frazil.schema import Schema, assign_fresh_schema_ids
from frazil.table.transaction import RetryPolicy
from frazil.view.metadata import (
    SQLViewRepresentation,
    UnknownViewRepresentation,
    ViewHistoryEntry,
    ViewMetadata,
    ViewRepresentation,
    ViewVersion,
)
from frazil.view.updates import (
    AssertViewUUID,
    ViewMetadataBuilder,
    ViewRequirement,
    ViewUpdate,
    update_view_metadata,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from frazil.catalog import Catalog, Identifier

__all__ = [
    "ReplaceViewVersion",
    "SQLViewRepresentation",
    "UnknownViewRepresentation",
    "UpdateViewProperties",
    "View",
    "ViewHistoryEntry",
    "ViewMetadata",
    "ViewRepresentation",
    "ViewVersion",
    "engine_summary",
    "view_schema",
]

logger = logging.getLogger(__name__)


def engine_summary() -> dict[str, str]:
    """The version summary frazil writes (the spec's ``engine-name`` and ``engine-version``)."""
    return {"engine-name": "frazil", "engine-version": __version__}


def view_schema(schema: Schema | pa.Schema) -> Schema:
    """A view's schema from a frazil or pyarrow schema, with fresh field ids from 1 (so the same
    columns always give the same schema, and a replace with unchanged columns reuses it)."""
    if not isinstance(schema, Schema):
        schema = schema_from_arrow(schema)
    return assign_fresh_schema_ids(schema)[0]


def as_namespace(namespace: str | Sequence[str]) -> tuple[str, ...]:
    if isinstance(namespace, str):
        return tuple(namespace.split(".")) if namespace else ()
    return tuple(namespace)


class View:
    """One view of a catalog at its last known metadata version (``refresh()`` reloads it)."""

    def __init__(
        self,
        identifier: Identifier,
        metadata: ViewMetadata,
        metadata_location: str | None,
        catalog: Catalog,
    ) -> None:
        self.identifier: tuple[str, ...] = tuple(identifier)
        self.metadata = metadata
        self.metadata_location = metadata_location
        self.catalog = catalog

    def __repr__(self) -> str:
        return f"View({self.name()!r}, {self.metadata_location!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, View)
            and self.identifier == other.identifier
            and self.metadata_location == other.metadata_location
            and self.metadata == other.metadata
        )

    __hash__ = None  # type: ignore[assignment]

    def _set_metadata(self, metadata: ViewMetadata, metadata_location: str | None) -> None:
        self.metadata = metadata
        self.metadata_location = metadata_location

    # ---- lookups

    def name(self) -> str:
        return ".".join(self.identifier)

    def schema(self) -> Schema:
        """The schema of the current version."""
        return self.metadata.schema()

    def schemas(self) -> dict[int, Schema]:
        return {s.schema_id: s for s in self.metadata.schemas}

    @property
    def current_version(self) -> ViewVersion:
        return self.metadata.current_version()

    @property
    def versions(self) -> tuple[ViewVersion, ...]:
        return self.metadata.versions

    def version(self, version_id: int) -> ViewVersion | None:
        return self.metadata.version_by_id(version_id)

    @property
    def history(self) -> tuple[ViewHistoryEntry, ...]:
        """The version log: when each version became current."""
        return self.metadata.version_log

    @property
    def properties(self) -> Mapping[str, str]:
        return self.metadata.properties

    @property
    def location(self) -> str:
        return self.metadata.location

    @property
    def uuid(self) -> Any:
        return self.metadata.view_uuid

    def sql_for(self, dialect: str) -> SQLViewRepresentation | None:
        """The current version's SQL in ``dialect`` (case-insensitive), else its first SQL
        representation, else ``None`` (the reference's ``View.sqlFor``)."""
        if not dialect:
            raise InvalidArgumentError("sql_for: the dialect must not be empty")
        return self.current_version.sql_for(dialect)

    def refresh(self) -> View:
        fresh = self.catalog.load_view(self.identifier)
        self._set_metadata(fresh.metadata, fresh.metadata_location)
        return self

    # ---- changes

    def replace_version(self) -> ReplaceViewVersion:
        """A new current version (the reference's ``ReplaceViewVersion``): give it queries,
        a schema and (optionally) a default namespace and catalog, then ``commit()``."""
        return ReplaceViewVersion(self)

    def update_properties(self) -> UpdateViewProperties:
        return UpdateViewProperties(self)

    def update_location(self, location: str) -> View:
        def build(base: ViewMetadata) -> list[ViewUpdate]:
            return ViewMetadataBuilder(base).set_location(location).changes

        return self._commit(build)

    def _commit(self, build: Callable[[ViewMetadata], list[ViewUpdate]]) -> View:
        """Commits the updates ``build`` makes from the current metadata; a commit that lost a
        race is rebuilt on the refreshed metadata and retried under the view's
        ``commit.retry.*`` properties, as a table transaction is."""
        policy = RetryPolicy.from_properties(self.metadata.properties)
        started = time.monotonic()
        attempt = 0
        while True:
            updates = build(self.metadata)
            if not updates:
                return self
            requirements: list[ViewRequirement] = [AssertViewUUID(self.metadata.view_uuid)]
            try:
                response = self.catalog.commit_view(self, requirements, updates)
                break
            except CommitFailedError as e:
                attempt += 1
                if policy.gives_up(attempt, started, time.monotonic()):
                    raise
                wait = policy.wait_seconds(attempt)
                logger.info("commit to view %s failed (%s); retry %d", self.name(), e, attempt)
                time.sleep(wait)
                self.refresh()
        self._set_metadata(response.metadata, response.metadata_location)
        return self


class _ViewChange:
    """A change built by method calls, committed by ``commit()`` or on a clean exit from a
    ``with`` block."""

    def __init__(self, view: View) -> None:
        self._view = view
        self._committed = False

    def __enter__(self) -> Any:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()

    def _updates(self, base: ViewMetadata) -> list[ViewUpdate]:
        raise NotImplementedError

    def apply(self) -> ViewMetadata:
        """The metadata this change would commit on the view's current metadata."""
        return update_view_metadata(self._view.metadata, self._updates(self._view.metadata))

    def commit(self) -> View:
        if self._committed:
            return self._view
        self._committed = True
        return self._view._commit(self._updates)


class ReplaceViewVersion(_ViewChange):
    """A new current version: ``with_query(dialect, sql)`` (one or more dialects),
    ``with_schema(schema)``, ``with_default_namespace(ns)`` (default: the current version's),
    ``with_default_catalog(name)``. An identical existing version is made current again
    instead of being added twice."""

    def __init__(self, view: View) -> None:
        super().__init__(view)
        self._representations: list[ViewRepresentation] = []
        self._schema: Schema | None = None
        self._default_namespace: tuple[str, ...] | None = None
        self._default_catalog: str | None = None
        self._summary: dict[str, str] = engine_summary()

    def with_query(self, dialect: str, sql: str) -> ReplaceViewVersion:
        self._representations.append(SQLViewRepresentation(sql=sql, dialect=dialect))
        return self

    def with_representation(self, representation: ViewRepresentation) -> ReplaceViewVersion:
        self._representations.append(representation)
        return self

    def with_schema(self, schema: Schema | pa.Schema) -> ReplaceViewVersion:
        self._schema = view_schema(schema)
        return self

    def with_default_namespace(self, namespace: str | Sequence[str]) -> ReplaceViewVersion:
        self._default_namespace = as_namespace(namespace)
        return self

    def with_default_catalog(self, catalog: str | None) -> ReplaceViewVersion:
        self._default_catalog = catalog
        return self

    def with_summary(self, summary: Mapping[str, str]) -> ReplaceViewVersion:
        self._summary.update(summary)
        return self

    def _updates(self, base: ViewMetadata) -> list[ViewUpdate]:
        if not self._representations:
            raise InvalidArgumentError("cannot replace a view version without a query")
        if self._schema is None:
            raise InvalidArgumentError("cannot replace a view version without a schema")
        current = base.current_version()
        namespace = (
            self._default_namespace
            if self._default_namespace is not None
            else current.default_namespace
        )
        version = ViewVersion(
            version_id=max(v.version_id for v in base.versions) + 1,
            timestamp_ms=int(time.time() * 1000),
            schema_id=self._schema.schema_id,
            summary=dict(self._summary),
            representations=tuple(self._representations),
            default_namespace=namespace,
            default_catalog=self._default_catalog,
        )
        builder = ViewMetadataBuilder(base).set_current_version(version, self._schema)
        builder.build()  # checks the rules now, before anything is written
        return builder.changes


class UpdateViewProperties(_ViewChange):
    """``set(key, value)`` / ``remove(key)``, committed together."""

    def __init__(self, view: View) -> None:
        super().__init__(view)
        self._set: dict[str, str] = {}
        self._remove: set[str] = set()

    def set(self, key: str, value: str) -> UpdateViewProperties:
        if key in self._remove:
            raise InvalidArgumentError(f"property {key!r} is both set and removed")
        self._set[key] = str(value)
        return self

    def remove(self, key: str) -> UpdateViewProperties:
        if key in self._set:
            raise InvalidArgumentError(f"property {key!r} is both set and removed")
        self._remove.add(key)
        return self

    def _updates(self, base: ViewMetadata) -> list[ViewUpdate]:
        builder = ViewMetadataBuilder(base)
        builder.set_properties(self._set)
        builder.remove_properties(sorted(k for k in self._remove if k in base.properties))
        builder.build()
        return builder.changes
