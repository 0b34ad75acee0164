"""The view commit path every catalog uses (:meth:`frazil.catalog.Catalog.commit_view` and
``create_view``): load the current pointer, check the requirements, apply the updates, write
``<location>/metadata/<NNNNN>-<uuid>.gz.metadata.json`` (or ``.metadata.json``), and swap the
pointer atomically through the catalog's view pointer hooks, by the commit protocol tables use
(:mod:`frazil.catalog.commit`: a swap with an unknown outcome is checked before deciding).

View metadata files are gzip-compressed unless ``write.metadata.compression-codec`` is ``none``
(the reference's ``ViewProperties`` default) and numbered one past the current file, as the
reference's ``BaseViewOperations`` names them (``00000-`` for a new view).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from frazil.catalog.commit import CommitViewResponse, next_metadata_location, publish
from frazil.exceptions import (
    CommitFailedError,
    InvalidArgumentError,
    NoSuchNamespaceError,
    NoSuchViewError,
    ParseError,
    TableAlreadyExistsError,
    ValidationError,
    ViewAlreadyExistsError,
    io_error,
)
from frazil.view import as_namespace, engine_summary, view_schema
from frazil.view.metadata import (
    SQLViewRepresentation,
    UnknownViewRepresentation,
    ViewMetadata,
    ViewVersion,
)
from frazil.view.updates import (
    ViewMetadataBuilder,
    ViewRequirement,
    ViewUpdate,
    update_view_metadata,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from frazil.catalog.base import Catalog, Identifier
    from frazil.schema import Schema
    from frazil.view import View
    from frazil.view.metadata import ViewRepresentation

logger = logging.getLogger(__name__)

# View metadata is gzip-compressed unless the property says otherwise (ViewProperties).
METADATA_COMPRESSION_DEFAULT = "gzip"


def read_view_metadata(catalog: Catalog, location: str) -> ViewMetadata:
    try:
        data = catalog._table_io(None, location).read(location)
    except OSError as e:
        raise io_error(e, "reading view metadata", location) from e
    try:
        return ViewMetadata.from_json(data)
    except ParseError as e:  # name the file
        detail = str(e).removeprefix("view metadata: ")
        raise ParseError(f"view metadata {location}: {detail}") from e


def first_view_version(
    ident: Identifier,
    schema: Schema | pa.Schema,
    sql: str | ViewRepresentation | Sequence[ViewRepresentation],
    default_namespace: str | Sequence[str] | None,
    default_catalog: str | None,
    *,
    dialect: str,
    summary: Mapping[str, str] | None,
) -> tuple[Schema, ViewVersion]:
    """A new view's schema (fresh field ids) and first version (id 1): what every catalog's
    ``create_view`` starts from (a REST client sends them as a ``CreateViewRequest``)."""
    if isinstance(sql, str):
        representations: tuple[ViewRepresentation, ...] = (
            SQLViewRepresentation(sql=sql, dialect=dialect),
        )
    elif isinstance(sql, (SQLViewRepresentation, UnknownViewRepresentation)):
        representations = (sql,)
    else:
        representations = tuple(sql)
    if not representations:
        raise InvalidArgumentError(f"cannot create view {'.'.join(ident)} without a query")
    fresh = view_schema(schema)
    version = ViewVersion(
        version_id=1,
        timestamp_ms=int(time.time() * 1000),
        schema_id=fresh.schema_id,
        summary={**engine_summary(), **(summary or {})},
        representations=representations,
        default_namespace=(
            tuple(ident[:-1]) if default_namespace is None else as_namespace(default_namespace)
        ),
        default_catalog=default_catalog,
    )
    return fresh, version


def create_view_updates(
    catalog: Catalog,
    ident: Identifier,
    schema: Schema | pa.Schema,
    sql: str | ViewRepresentation | Sequence[ViewRepresentation],
    default_namespace: str | Sequence[str] | None,
    default_catalog: str | None,
    properties: Mapping[str, str] | None,
    location: str | None,
    *,
    dialect: str,
    summary: Mapping[str, str] | None,
) -> list[ViewUpdate]:
    """The updates that build a new view's first metadata from nothing (checked against the
    spec's rules before anything is written)."""
    name = ".".join(ident)
    if not catalog.namespace_exists(ident[:-1]):
        raise NoSuchNamespaceError(
            f"cannot create view {name}: namespace {'.'.join(ident[:-1])} does not exist"
        )
    fresh, version = first_view_version(
        ident, schema, sql, default_namespace, default_catalog, dialect=dialect, summary=summary
    )
    view_location = (location or catalog._default_table_location(ident)).rstrip("/")
    builder = ViewMetadataBuilder(None).assign_uuid(uuid.uuid4()).set_location(view_location)
    builder.set_properties({k: str(v) for k, v in (properties or {}).items()})
    builder.set_current_version(version, fresh)
    try:
        builder.build()
    except ValidationError as e:
        raise ValidationError(f"cannot create view {name}: {e}") from None
    return builder.changes


def new_view_metadata_location(metadata: ViewMetadata, current: str | None) -> str:
    """Where the view's next metadata file goes: one version past ``current``, gzip unless the
    view's ``write.metadata.compression-codec`` is ``none``."""
    return next_metadata_location(
        metadata.properties, metadata.location, current, METADATA_COMPRESSION_DEFAULT
    )


def commit_view(
    catalog: Catalog,
    ident: Identifier,
    handle: View | None,
    requirements: Sequence[ViewRequirement],
    updates: Sequence[ViewUpdate],
    *,
    create: bool,
) -> CommitViewResponse:
    """Commits ``updates`` to the view ``ident`` (``create``: to a view that must not exist
    yet, built from the updates alone). ``handle``'s metadata is used when it is still the
    current file (a metadata file is written once and never changed)."""
    name = ".".join(ident)
    current_location = catalog._load_view_pointer(ident)
    if create:
        if current_location is not None:
            raise ViewAlreadyExistsError(f"view {name} already exists")
        if catalog.table_exists(ident):
            raise TableAlreadyExistsError(f"cannot create view {name}: a table has that name")
        current = None
    elif current_location is None:
        raise NoSuchViewError(f"cannot commit to view {name}: it does not exist")
    elif handle is not None and current_location == handle.metadata_location:
        current = handle.metadata
    else:
        current = read_view_metadata(catalog, current_location)
    try:
        for r in requirements:
            r.validate(current)
    except CommitFailedError as e:
        raise CommitFailedError(f"commit to view {name} failed: {e}") from None
    try:
        new = update_view_metadata(current, updates)
    except ValidationError as e:
        if handle is not None and current_location != handle.metadata_location:
            # Built against a stale base: a refresh and retry may well apply.
            raise CommitFailedError(
                f"commit to view {name} failed: the view changed concurrently ({e})"
            ) from None
        raise ValidationError(f"commit to view {name}: {e}") from None
    if current is not None and new is current:
        assert current_location is not None
        return CommitViewResponse(current, current_location)

    new_location = new_view_metadata_location(new, current_location)
    try:
        data = new.to_json_bytes(compress=new_location.endswith(".gz.metadata.json"))
    except UnicodeEncodeError as e:
        raise InvalidArgumentError(
            f"cannot commit to view {name}: its metadata holds text that is not valid Unicode "
            f"(a lone surrogate): {e}"
        ) from e
    io = catalog._table_io(None, new_location)
    # A failure here leaves at most an unreferenced file: the pointer is unchanged.
    catalog._write_metadata_file(io, new_location, data)
    landed, cause = publish(
        f"view {name}",
        new_location,
        new.properties,
        swap=lambda: catalog._swap_view_pointer(ident, current_location, new_location),
        landed=lambda: catalog._read_view_pointer_fresh(ident) == new_location,
        discard=lambda: catalog._discard(io, new_location),
    )
    if not landed:
        if current_location is None:
            if catalog.table_exists(ident):
                raise TableAlreadyExistsError(
                    f"cannot create view {name}: a table has that name"
                ) from cause
            raise ViewAlreadyExistsError(f"cannot create view {name}: it already exists") from cause
        raise CommitFailedError(
            f"commit to view {name} failed: another commit replaced {current_location} first"
        ) from cause
    logger.info("committed view %s: %s", name, new_location)
    return CommitViewResponse(new, new_location)
