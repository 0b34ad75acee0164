"""The view commit path every catalog uses (:meth:`frazil.catalog.Catalog.commit_view` and
``create_view``): load the current pointer, check the requirements, apply the updates, write
``<location>/metadata/<NNNNN>-<uuid>.gz.metadata.json`` (or ``.metadata.json``), and swap the
pointer atomically through the catalog's view pointer hooks.

View metadata files are gzip-compressed unless ``write.metadata.compression-codec`` is ``none``
(the reference's ``ViewProperties`` default) and numbered one past the current file, as the
reference's ``BaseViewOperations`` names them (``00000-`` for a new view).
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from frazil.exceptions import (
    CommitFailedError,
    CommitStateUnknownError,
    InvalidArgumentError,
    NoSuchNamespaceError,
    NoSuchViewError,
    ParseError,
    TableAlreadyExistsError,
    ValidationError,
    ViewAlreadyExistsError,
    io_error,
)
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

    from frazil.catalog import Catalog, CommitViewResponse, Identifier
    from frazil.schema import Schema
    from frazil.view import View
    from frazil.view.metadata import ViewRepresentation

logger = logging.getLogger(__name__)

METADATA_COMPRESSION = "write.metadata.compression-codec"
METADATA_COMPRESSION_DEFAULT = "gzip"
METADATA_PATH = "write.metadata.path"
_VERSIONED_NAME = re.compile(r"^(\d+)-")


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
    from frazil.view import as_namespace, engine_summary, view_schema

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
    version = 0
    if current is not None:
        m = _VERSIONED_NAME.match(current.rsplit("/", 1)[-1])
        version = int(m.group(1)) + 1 if m else 0
    codec = metadata.properties.get(METADATA_COMPRESSION, METADATA_COMPRESSION_DEFAULT)
    codec = codec.strip().lower()
    if codec in ("gzip", "gz"):
        suffix = ".gz.metadata.json"
    elif codec in ("none", ""):
        suffix = ".metadata.json"
    else:
        raise InvalidArgumentError(
            f"{METADATA_COMPRESSION}={codec!r} is not supported (use 'none' or 'gzip')"
        )
    directory = metadata.properties.get(METADATA_PATH) or f"{metadata.location}/metadata"
    return f"{directory.rstrip('/')}/{version:05d}-{uuid.uuid4()}{suffix}"


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
    from frazil.catalog import CommitViewResponse

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
    try:
        landed = catalog._swap_view_pointer(ident, current_location, new_location)
    except Exception as e:
        logger.warning("swapping the pointer of view %s failed (%s); checking it", name, e)
        landed = _landed_after_error(catalog, ident, new_location, new, e)
    if not landed:
        catalog._discard(io, new_location)
        if current_location is None:
            if catalog.table_exists(ident):
                raise TableAlreadyExistsError(f"cannot create view {name}: a table has that name")
            raise ViewAlreadyExistsError(f"cannot create view {name}: it already exists")
        raise CommitFailedError(
            f"commit to view {name} failed: another commit replaced {current_location} first"
        )
    logger.info("committed view %s: %s", name, new_location)
    return CommitViewResponse(new, new_location)


def _landed_after_error(
    catalog: Catalog, ident: Identifier, new_location: str, new: ViewMetadata, cause: Exception
) -> bool:
    """After a pointer swap with an unknown outcome: re-reads the pointer a few times
    (``commit.status-check.*``, as for tables). A failure a retry cannot fix (a read-only
    database, a full disk) is raised as it is; :class:`CommitStateUnknownError` when the
    pointer cannot be read at all."""
    from frazil.catalog import (
        STATUS_CHECK_MAX_WAIT_MS,
        STATUS_CHECK_MIN_WAIT_MS,
        STATUS_CHECK_NUM_RETRIES,
        _int_property,
        _permanent_failure,
    )

    permanent = _permanent_failure(cause, new_location)
    if permanent is not None:
        if permanent is cause:
            raise permanent
        raise permanent from cause
    retries = max(0, _int_property(new.properties, STATUS_CHECK_NUM_RETRIES, 3))
    wait_ms = max(0, _int_property(new.properties, STATUS_CHECK_MIN_WAIT_MS, 1000))
    max_wait_ms = max(0, _int_property(new.properties, STATUS_CHECK_MAX_WAIT_MS, 60_000))
    last: BaseException = cause
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(min(wait_ms * 2 ** (attempt - 1), max_wait_ms) / 1000.0)
        try:
            return catalog._read_view_pointer_fresh(ident) == new_location
        except Exception as e:
            last = e
    raise CommitStateUnknownError(
        f"commit of view {'.'.join(ident)} to {new_location}: the pointer swap failed ({cause}) "
        f"and the current pointer cannot be read ({last}); the commit may or may not have landed"
    ) from cause
