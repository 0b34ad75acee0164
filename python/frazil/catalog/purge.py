"""Deleting every file a table's metadata reaches (``drop_table(..., purge=True)``).

As the Java reference's ``CatalogUtil.dropTableData``: data and delete files listed in the
manifests of every snapshot, the manifests, the manifest lists, statistics and partition
statistics files, the metadata files of the metadata log and the current one. Manifest lists and
manifests are read concurrently and decoded natively (only ``data_file.file_path``); a file that
is already gone is not an error.

Unlike the Java reference, only files under the table location are deleted unless the caller
passes ``delete_outside_location=True``: metadata can name files the table does not own (an
``add_files`` Parquet file of another dataset, a metadata-log or statistics entry pointing
anywhere), and a purge must not delete them. Those are kept and logged.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from frazil.io import under_location
from frazil.manifest import read_manifest_list, read_manifests
from frazil.metadata import TableMetadata

if TYPE_CHECKING:
    from frazil.io import FileIO

__all__ = ["purge_table_files", "reachable_files"]

logger = logging.getLogger(__name__)


def _read_existing(io: FileIO, locations: list[str]) -> list[tuple[str, bytes]]:
    """Contents of the files that can be read; a missing one (an earlier, interrupted purge) is
    skipped with a warning rather than stopping the purge."""
    out = []
    for loc, data in zip(locations, io.read_many(locations, missing_ok=True), strict=True):
        if data is None:
            logger.warning("purge: %s is already gone", loc)
        else:
            out.append((loc, data))
    return out


def reachable_files(
    io: FileIO, metadata: TableMetadata, metadata_location: str | None
) -> dict[str, list[str]]:
    """Every file the metadata reaches, by kind: ``data`` (data and delete files),
    ``manifests``, ``manifest_lists``, ``statistics`` and ``metadata``."""
    lists: list[str] = []
    manifests: set[str] = set()
    for s in metadata.snapshots:
        if s.manifest_list is not None:
            lists.append(metadata.resolve(s.manifest_list))
        for m in s.manifests or ():  # v1 snapshots that list manifests inline
            manifests.add(metadata.resolve(m))
    lists = sorted(set(lists))
    for loc, data in _read_existing(io, lists):
        table = read_manifest_list(data, path=loc, location=metadata.paths_location)
        manifests.update(metadata.resolve(p) for p in table.column("manifest_path").to_pylist())
    manifest_locations = sorted(manifests)
    data_files: set[str] = set()
    found = _read_existing(io, manifest_locations)
    decoded = read_manifests(
        [d for _, d in found],
        columns=["data_file.file_path"],
        location=metadata.paths_location,
        paths=[loc for loc, _ in found],
    )
    for t in decoded:
        paths = t.column("data_file").combine_chunks().field("file_path").to_pylist()
        data_files.update(metadata.resolve(p) for p in paths)
    stats = [metadata.resolve(f.statistics_path) for f in metadata.statistics]
    stats += [metadata.resolve(f.statistics_path) for f in metadata.partition_statistics]
    meta = [metadata.resolve(e.metadata_file) for e in metadata.metadata_log]
    if metadata_location is not None:
        meta.append(metadata_location)
    return {
        "data": sorted(data_files),
        "manifests": manifest_locations,
        "manifest_lists": lists,
        "statistics": sorted(set(stats)),
        "metadata": meta,
    }


def purge_table_files(
    io: FileIO,
    metadata: TableMetadata,
    metadata_location: str | None,
    *,
    delete_outside_location: bool = False,
) -> None:
    """Deletes the files :func:`reachable_files` lists that lie under the table location (all
    of them with ``delete_outside_location``): data first, metadata last, so an interrupted
    purge can be re-run from what is left."""
    files = reachable_files(io, metadata, metadata_location)
    for kind in ("data", "manifests", "manifest_lists", "statistics", "metadata"):
        doomed = files[kind]
        if not delete_outside_location:
            doomed = under_location(doomed, metadata.location, f"purge of {kind} files")
        if doomed:
            logger.info("purge: deleting %d %s files", len(doomed), kind)
            io.delete_many(doomed)
