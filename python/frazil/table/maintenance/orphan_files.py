"""Orphan file removal (Java's ``DeleteOrphanFiles`` action, PyIceberg's naming).

A file under the table location is an orphan when no metadata of the table reaches it:

1. the location is listed first (through the table's FileIO), keeping only files last modified
   before ``older_than`` (default: three days ago), so a writer's files that are not committed
   *yet* survive;
2. then the table is reloaded and everything reachable is collected: the current metadata file,
   the metadata log (followed through the older metadata files, as Java's recursive walk),
   ``version-hint.text``, statistics and partition statistics files, and for every snapshot its
   manifest list, manifests and every data and delete file (deletion vectors' Puffin files
   included) named by a live entry (as Java: a file only DELETED entries name was removed, and
   is live in an older snapshot's manifests while that snapshot exists);
3. a listed file is compared with the reachable ones by path; when a reachable file has the same
   path but another scheme or authority (after ``equal_schemes`` / ``equal_authorities``, with
   Java's default ``{"s3n,s3a": "s3"}``), ``prefix_mismatch_mode`` decides: ``"error"`` raises
   naming the conflicting pairs, ``"ignore"`` keeps the file, ``"delete"`` counts it an orphan.
   A reachable location without a scheme or authority matches any.

Paths and names starting with ``_`` or ``.`` are not listed (Hadoop's hidden files, such as
``.crc`` checksums), except partition directories of partition fields whose names start so; a
listed path with a ``..`` segment is therefore never an orphan, and in any case only files inside
the table location are ever deleted. ``gc.enabled=false`` refuses the action.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from frazil.encryption.table_io import data_filesystem
from frazil.exceptions import (
    FrazilError,
    InvalidArgumentError,
    UnsupportedError,
    ValidationError,
)
from frazil.io import is_under_location, location_scheme, under_location
from frazil.metadata import TableMetadata
from frazil.table.maintenance.expire_snapshots import (
    _content_file_paths,
    _gc_enabled,
    _manifest_paths,
)

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.table import Table

__all__ = [
    "EQUAL_SCHEMES_DEFAULT",
    "PrefixMismatchMode",
    "find_orphans",
    "list_older_than",
    "reachable_files",
    "remove_orphan_files",
]

logger = logging.getLogger(__name__)

OLDER_THAN_DEFAULT_MS = 3 * 24 * 60 * 60 * 1000
EQUAL_SCHEMES_DEFAULT: Mapping[str, str] = {"s3n,s3a": "s3"}
VERSION_HINT = "version-hint.text"
WRITE_METADATA_PATH = "write.metadata.path"


class PrefixMismatchMode:
    """What to do with a listed file whose path is reachable under another scheme/authority."""

    ERROR = "error"
    IGNORE = "ignore"
    DELETE = "delete"
    ALL = (ERROR, IGNORE, DELETE)


@dataclass(frozen=True)
class _FileURI:
    scheme: str | None
    authority: str | None
    path: str


def _flatten(mapping: Mapping[str, str] | None) -> dict[str, str]:
    """``{"s3n,s3a": "s3"}`` as ``{"s3n": "s3", "s3a": "s3"}`` (Java's comma-separated keys)."""
    out: dict[str, str] = {}
    for keys, value in (mapping or {}).items():
        for key in str(keys).split(","):
            if key.strip():
                out[key.strip()] = str(value).strip()
    return out


def _file_uri(
    location: str, schemes: Mapping[str, str], authorities: Mapping[str, str]
) -> _FileURI:
    scheme: str | None = location_scheme(location) or None
    rest = location[len(scheme) + 1 :] if scheme else location
    authority: str | None = None
    if rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
    # Hadoop's Path drops repeated and trailing slashes before the comparison.
    path = "/" + "/".join(p for p in rest.split("/") if p) if rest.startswith("/") else rest
    if scheme is not None:
        scheme = schemes.get(scheme, scheme)
    if authority is not None:
        authority = authorities.get(authority, authority) or None
    return _FileURI(scheme, authority, path)


def _component_match(valid: str | None, actual: str | None) -> bool:
    return not valid or (actual is not None and valid.lower() == actual.lower())


def _hidden(relative: str, partition_names: frozenset[str]) -> bool:
    for name in relative.split("/"):
        if name.startswith(("_", ".")):
            key, eq, _ = name.partition("=")
            if not (eq and key in partition_names):
                return True
    return False


def list_older_than(
    io: FileIO,
    location: str,
    older_than_ms: int,
    partition_names: frozenset[str],
    *,
    recursive: bool = True,
    directories: list[str] | None = None,
) -> list[str]:
    """The files under ``location`` last modified before ``older_than_ms``, spelled
    ``<location>/<relative path>``, hidden names skipped. Not ``recursive``: only the
    directory's own files, its (not hidden) subdirectories appended to ``directories``."""
    import pyarrow.fs as pafs

    fs, root = data_filesystem(io, location)  # listing only: no file is opened
    base = location.rstrip("/")
    root = root.rstrip("/")
    try:
        infos = fs.get_file_info(pafs.FileSelector(root, recursive=recursive, allow_not_found=True))
    except OSError as e:
        raise FrazilError(f"listing {location} for orphan files: {e}") from e
    out: list[str] = []
    for info in infos:
        relative = info.path[len(root) :].lstrip("/") if info.path.startswith(root) else None
        if not relative or _hidden(relative, partition_names):
            continue
        if info.type == pafs.FileType.Directory and directories is not None:
            directories.append(f"{base}/{relative}")
        if info.type != pafs.FileType.File:
            continue
        if info.mtime is None:
            # Without a modification time a file may be a writer's uncommitted output.
            logger.info("keeping %s/%s: no modification time", base, relative)
            continue
        if int(info.mtime.timestamp() * 1000) < older_than_ms:
            out.append(f"{base}/{relative}")
    return out


def _metadata_dir(md: TableMetadata) -> str:
    root = md.properties.get(WRITE_METADATA_PATH) or f"{(md.location or '').rstrip('/')}/metadata"
    return root.rstrip("/")


def _metadata_files(io: FileIO, md: TableMetadata, metadata_location: str | None) -> set[str]:
    """The current metadata file, ``version-hint.text``, and every metadata file of the log,
    followed through the older files' logs (Java's ``metadataFileLocations(table, true)``)."""
    out = {f"{_metadata_dir(md)}/{VERSION_HINT}"}
    if metadata_location:
        out.add(metadata_location)
    todo = [md]
    seen: set[str] = set(out)
    while todo:
        current = todo.pop()
        for entry in current.metadata_log:
            path = current.resolve(entry.metadata_file)
            out.add(path)
            if path in seen:
                continue
            seen.add(path)
            try:
                todo.append(TableMetadata.from_json(io.read(path), location=md.location, file=path))
            except FileNotFoundError:
                continue
            except (FrazilError, OSError) as e:
                logger.warning("could not read metadata file %s for its log: %s", path, e)
    return out


def reachable_files(io: FileIO, md: TableMetadata, metadata_location: str | None) -> set[str]:
    """Every file the table's metadata reaches (module documentation, step 2)."""
    out = _metadata_files(io, md, metadata_location)
    out.update(md.resolve(f.statistics_path) for f in md.statistics)
    out.update(md.resolve(f.statistics_path) for f in md.partition_statistics)
    snapshots = list(md.snapshots)
    out.update(md.resolve(s.manifest_list) for s in snapshots if s.manifest_list)
    # A manifest that cannot be read, or is not what its list row promises (cut short), fails
    # the action: its files' reachability is unknown.
    manifests = _manifest_paths(io, md, snapshots, missing_ok=False)
    out.update(manifests)
    out.update(_content_file_paths(io, md, manifests, live_only=True, missing_ok=False))
    return out


def _current(table: Table) -> tuple[TableMetadata, str | None]:
    """The table's metadata as the catalog has it now (a commit may have landed since the
    table was loaded; its files must count as reachable)."""
    try:
        fresh = table.catalog.load_table(table.identifier)
    except (FrazilError, AttributeError):
        return table.metadata, table.metadata_location
    return fresh.metadata, fresh.metadata_location


def find_orphans(
    listed: list[str],
    reachable: set[str],
    *,
    equal_schemes: Mapping[str, str] | None = None,
    equal_authorities: Mapping[str, str] | None = None,
    prefix_mismatch_mode: str = PrefixMismatchMode.ERROR,
    table_name: str = "table",
) -> list[str]:
    """The listed locations no reachable location names (module documentation, step 3)."""
    mode = str(prefix_mismatch_mode).lower()
    if mode not in PrefixMismatchMode.ALL:
        raise InvalidArgumentError(
            f"prefix_mismatch_mode must be one of {', '.join(PrefixMismatchMode.ALL)}, "
            f"got {prefix_mismatch_mode!r}"
        )
    schemes = _flatten({**EQUAL_SCHEMES_DEFAULT, **(equal_schemes or {})})
    authorities = _flatten(equal_authorities)
    by_path: dict[str, list[_FileURI]] = {}
    for loc in reachable:
        uri = _file_uri(loc, schemes, authorities)
        by_path.setdefault(uri.path, []).append(uri)
    orphans: list[str] = []
    conflicts: set[tuple[str, str | None, str | None]] = set()
    for loc in listed:
        actual = _file_uri(loc, schemes, authorities)
        candidates = by_path.get(actual.path)
        if not candidates:
            orphans.append(loc)
            continue
        mismatched: list[tuple[str, str | None, str | None]] = []
        for valid in candidates:
            scheme_ok = _component_match(valid.scheme, actual.scheme)
            authority_ok = _component_match(valid.authority, actual.authority)
            if scheme_ok and authority_ok:
                mismatched = []
                break
            if not scheme_ok:
                mismatched.append(("scheme", valid.scheme, actual.scheme))
            if not authority_ok:
                mismatched.append(("authority", valid.authority, actual.authority))
        if not mismatched:
            continue
        if mode == PrefixMismatchMode.DELETE:
            orphans.append(loc)
        elif mode == PrefixMismatchMode.ERROR:
            conflicts.update(mismatched)
    if conflicts:
        shown = ", ".join(f"{kind} {v!r} vs {a!r}" for kind, v, a in sorted(conflicts, key=str))
        raise ValidationError(
            f"{table_name}: cannot tell whether some files are orphans: metadata names files "
            f"with the listed paths under another scheme or authority ({shown}); declare them "
            "equal with equal_schemes / equal_authorities, or pass "
            "prefix_mismatch_mode='ignore' (keep them) or 'delete'"
        )
    return sorted(orphans)


def remove_orphan_files(
    table: Table,
    older_than: int | datetime | None = None,
    dry_run: bool = False,
    location: str | None = None,
    equal_schemes: Mapping[str, str] | None = None,
    equal_authorities: Mapping[str, str] | None = None,
    prefix_mismatch_mode: str = PrefixMismatchMode.ERROR,
    *,
    list_files: Callable[[str, int, frozenset[str]], list[str]] | None = None,
    delete_files: Callable[[list[str]], None] | None = None,
) -> list[str]:
    """Finds (and unless ``dry_run`` deletes) the files under ``location`` (default: the table
    location) that no metadata of the table reaches and that were last modified before
    ``older_than`` (epoch milliseconds or a datetime; default three days ago). Returns the
    orphan locations, sorted. See the module documentation.

    ``list_files(location, older_than_ms, partition_names)`` and ``delete_files(locations)``
    replace the table FileIO's listing (:func:`list_older_than`) and bulk delete, e.g. to
    spread them over Spark executors (:mod:`frazil.spark.maintenance`)."""
    name = table.full_name()
    if not _gc_enabled(table.metadata.properties):
        raise ValidationError(
            f"{name}: cannot remove orphan files: gc.enabled is false "
            "(deleting files may corrupt other tables)"
        )
    if isinstance(older_than, datetime):
        older_than = int(older_than.timestamp() * 1000)
    elif older_than is None:
        older_than = int(time.time() * 1000) - OLDER_THAN_DEFAULT_MS
    elif isinstance(older_than, bool) or not isinstance(older_than, int):
        raise InvalidArgumentError(
            f"older_than must be epoch milliseconds or a datetime, got {older_than!r}"
        )
    table_location = table.metadata.location
    if not table_location:
        raise UnsupportedError(f"{name}: the table has no location to list")
    where = location or table_location
    if not dry_run and not is_under_location(where, table_location, or_equal=True):
        raise InvalidArgumentError(
            f"{name}: cannot remove orphan files under {where}: outside the table location "
            f"{table_location} (use dry_run=True to only report them)"
        )
    partition_names = frozenset(
        f.name for spec in table.metadata.partition_specs for f in spec.fields
    )
    # Listing before reading the metadata: a file committed meanwhile is then reachable.
    if list_files is None:
        listed = list_older_than(table.io, where, older_than, partition_names)
    else:
        listed = list_files(where, older_than, partition_names)
    md, metadata_location = _current(table)
    reachable = reachable_files(table.io, md, metadata_location)
    orphans = find_orphans(
        listed,
        reachable,
        equal_schemes=equal_schemes,
        equal_authorities=equal_authorities,
        prefix_mismatch_mode=prefix_mismatch_mode,
        table_name=name,
    )
    if dry_run:
        logger.info("%s: %d orphan files under %s (dry run)", name, len(orphans), where)
        return orphans
    doomed = under_location(orphans, md.location, f"{name}: remove_orphan_files")
    if delete_files is None:
        table.io.delete_many(doomed)
    else:
        delete_files(doomed)
    logger.info("%s: deleted %d orphan files under %s", name, len(doomed), where)
    return orphans
