"""The commit protocol every catalog follows for tables and views alike.

A commit writes a new metadata file (``<metadata dir>/<NNNNN>-<uuid>[.gz].metadata.json``, one
version past the current file, as the Java reference numbers them) and swaps the catalog's
pointer to it atomically. :func:`publish` runs the swap: ``False`` from the swap is a lost race
(the new file is discarded); an exception leaves the outcome open, so the pointer is re-read a
few times with backoff (``commit.status-check.*``, :func:`check_commit_status`) before deciding,
and :class:`~frazil.exceptions.CommitStateUnknownError` is raised only when it cannot be read.
A failure a retry cannot fix (disk full, read-only storage, no permission) is raised as it is
(:func:`permanent_failure`) instead of as a lost race.

:class:`~frazil.catalog.base.Catalog` uses this for tables (``commit_table``) and
:mod:`frazil.view.commit` for views, each with its own pointer hooks and error messages.
"""

from __future__ import annotations

import errno
import logging
import re
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from frazil.exceptions import (
    CatalogBusyError,
    CatalogError,
    CommitFailedError,
    CommitStateUnknownError,
    FrazilError,
    InvalidArgumentError,
    TableAlreadyExistsError,
    io_error,
)

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.metadata import TableMetadata
    from frazil.table import Table
    from frazil.table.update import TableRequirement, TableUpdate
    from frazil.view.metadata import ViewMetadata

__all__ = [
    "METADATA_COMPRESSION",
    "METADATA_PATH",
    "STATUS_CHECK_MAX_WAIT_MS",
    "STATUS_CHECK_MIN_WAIT_MS",
    "STATUS_CHECK_NUM_RETRIES",
    "CommitTableResponse",
    "CommitViewResponse",
    "CreateConflict",
    "PreparedCommit",
    "TableCommit",
    "bool_property",
    "check_commit_status",
    "int_property",
    "metadata_suffix",
    "next_metadata_location",
    "permanent_failure",
    "publish",
]

logger = logging.getLogger(__name__)

# Table and view properties (names and defaults of the Java reference's TableProperties and
# ViewProperties).
METADATA_COMPRESSION = "write.metadata.compression-codec"
METADATA_PATH = "write.metadata.path"
STATUS_CHECK_NUM_RETRIES = "commit.status-check.num-retries"
STATUS_CHECK_MIN_WAIT_MS = "commit.status-check.min-wait-ms"
STATUS_CHECK_MAX_WAIT_MS = "commit.status-check.max-wait-ms"

# I/O errors a retry cannot fix (disk full, read-only storage, no permission, a bad path): the
# commit fails at once instead of being retried as a lost race. Others (a dropped connection, a
# timeout) may pass on their own.
_PERMANENT_ERRNO_NAMES = ("ENOSPC", "EDQUOT", "EROFS", "EACCES", "EPERM", "EFBIG", "ENAMETOOLONG")
_PERMANENT_ERRNOS = frozenset(
    getattr(errno, name)
    for name in (*_PERMANENT_ERRNO_NAMES, "ENOTDIR", "EISDIR")
    if hasattr(errno, name)
)

# ``00012-<uuid>.metadata.json`` (the version is the leading number), as Java parses it.
_VERSIONED_NAME = re.compile(r"^(\d+)-")


@dataclass(frozen=True)
class CommitTableResponse:
    metadata: TableMetadata
    metadata_location: str


@dataclass(frozen=True)
class CommitViewResponse:
    metadata: ViewMetadata
    metadata_location: str


@dataclass(frozen=True)
class PreparedCommit:
    """One table's commit, built and checked but not yet published (see
    :meth:`Catalog._prepare_commit`); ``data`` is ``None`` when nothing changes."""

    ident: tuple[str, ...]
    current_location: str | None
    current: TableMetadata | None
    new: TableMetadata
    new_location: str
    data: bytes | None
    io: FileIO


@dataclass(frozen=True)
class TableCommit:
    """One table's part of a multi-table commit (:meth:`Catalog.commit_tables`): the table as
    its transaction last saw it (``table.metadata_location`` is ``None`` for a table being
    created), and the requirements and updates to apply to it."""

    table: Table
    requirements: Sequence[TableRequirement]
    updates: Sequence[TableUpdate]


class CreateConflict(CommitFailedError, TableAlreadyExistsError):
    """A table creation that lost to another creation of the same table: a failed commit to a
    transaction, an existing table to :meth:`Catalog.create_table`."""


def bool_property(props: Mapping[str, str], key: str, default: bool) -> bool:
    value = props.get(key)
    return default if value is None else str(value).strip().lower() == "true"


def int_property(props: Mapping[str, str], key: str, default: int) -> int:
    try:
        return int(props[key])
    except (KeyError, ValueError):
        return default


def metadata_suffix(properties: Mapping[str, str], default_codec: str) -> tuple[str, bool]:
    """The metadata file suffix ``write.metadata.compression-codec`` asks for (``default_codec``
    when unset: ``none`` for tables, ``gzip`` for views) and whether it is gzip."""
    codec = properties.get(METADATA_COMPRESSION, default_codec).strip().lower()
    if codec in ("gzip", "gz"):
        return ".gz.metadata.json", True
    if codec in ("none", ""):
        return ".metadata.json", False
    raise InvalidArgumentError(
        f"{METADATA_COMPRESSION}={codec!r} is not supported (use 'none' or 'gzip')"
    )


def next_metadata_location(
    properties: Mapping[str, str],
    location: str | None,
    current_location: str | None,
    default_codec: str,
) -> str:
    """``<metadata dir>/<NNNNN>-<uuid><suffix>``, the version one more than the current file's
    (0 for a new table or view); the directory is ``write.metadata.path`` or
    ``<location>/metadata``."""
    version = 0
    if current_location is not None:
        m = _VERSIONED_NAME.match(current_location.rsplit("/", 1)[-1])
        version = int(m.group(1)) + 1 if m else 0
    suffix, _ = metadata_suffix(properties, default_codec)
    directory = properties.get(METADATA_PATH) or f"{location}/metadata"
    return f"{directory.rstrip('/')}/{version:05d}-{uuid.uuid4()}{suffix}"


def permanent_failure(cause: Exception | None, location: str) -> FrazilError | None:
    """The error to raise for a pointer swap that failed for a reason a retry cannot fix (disk
    full, read-only storage or database, no permission), else ``None`` (a lost race, a timeout
    or a busy database: the transaction may retry)."""
    if cause is None or isinstance(cause, CatalogBusyError):
        return None
    if isinstance(cause, CatalogError):
        return cause
    if isinstance(cause, OSError) and cause.errno in _PERMANENT_ERRNOS:
        return io_error(cause, "writing table metadata", location)
    return None


def check_commit_status(
    what: str,
    new_location: str,
    properties: Mapping[str, str],
    cause: BaseException,
    landed: Callable[[], bool],
) -> bool:
    """After a swap with an unknown outcome: asks ``landed`` (a fresh read of the pointer) a few
    times with backoff (``commit.status-check.*`` of the new metadata's ``properties``).
    ``True`` if the new metadata is current, ``False`` if not;
    :class:`CommitStateUnknownError` when the pointer cannot be read at all. ``what`` names
    the table or view (``"table db.t"``)."""
    retries = max(0, int_property(properties, STATUS_CHECK_NUM_RETRIES, 3))
    wait_ms = max(0, int_property(properties, STATUS_CHECK_MIN_WAIT_MS, 1000))
    max_wait_ms = max(0, int_property(properties, STATUS_CHECK_MAX_WAIT_MS, 60_000))
    last: BaseException = cause
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(min(wait_ms * 2 ** (attempt - 1), max_wait_ms) / 1000.0)
        try:
            return landed()
        except Exception as e:
            last = e
            logger.warning(
                "checking the commit of %s failed (attempt %d of %d): %s",
                what,
                attempt + 1,
                retries + 1,
                e,
            )
    raise CommitStateUnknownError(
        f"commit of {what} to {new_location}: the pointer swap failed ({cause}) and the "
        f"current pointer cannot be read ({last}); the commit may or may not have landed"
    ) from cause


def publish(
    what: str,
    new_location: str,
    properties: Mapping[str, str],
    swap: Callable[[], bool],
    landed: Callable[[], bool],
    discard: Callable[[], None],
    settled: tuple[type[Exception], ...] = (),
) -> tuple[bool, Exception | None]:
    """Swaps the pointer to ``new_location`` (the file is written): ``(True, None)`` when the
    commit landed; otherwise the new file is discarded and ``(False, cause)`` returned, where
    ``cause`` is the swap's exception (``None`` for a plain lost race) for the caller to raise
    its own lost-race error from. An exception from ``swap`` is checked with
    :func:`check_commit_status` first, except those in ``settled`` (their outcome is known:
    nothing changed), which are raised after the discard; a permanent failure
    (:func:`permanent_failure`) is raised as it is."""
    cause: Exception | None = None
    try:
        ok = swap()
    except settled:
        discard()
        raise
    except Exception as e:
        logger.warning(
            "swapping the metadata pointer of %s failed (%s); checking whether it landed", what, e
        )
        cause = e
        ok = check_commit_status(what, new_location, properties, e, landed)
    if ok:
        return True, None
    discard()
    permanent = permanent_failure(cause, new_location)
    if permanent is not None and permanent is cause:
        raise permanent
    if permanent is not None:
        raise permanent from cause
    return False, cause
