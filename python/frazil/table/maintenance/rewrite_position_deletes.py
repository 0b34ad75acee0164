"""Position deletes into deletion vectors (v3 tables): ``rewrite_position_deletes``.

A table upgraded from v2 may keep v2 position delete files; the spec deprecates them in v3
("Existing position deletes must be written to delete vectors when updating the position
deletes for a data file"; at most one DV per data file, and a DV must hold every position
delete of its file). This maintenance step does that for a whole branch head:

* the head is planned, so each live data file comes with exactly the position deletes that
  apply to it (sequence numbers respected: a delete file older than the data file does not);
* every data file with a v2 position delete file gets one new deletion vector holding the union
  of the positions of those files and of its current DV, if any (all written into one Puffin
  file);
* one ``replace`` snapshot adds the new DVs and removes every v2 position delete file of the
  head (each one's live targets now have DVs; those that apply to no live file are dangling)
  and the DVs the new ones supersede. Equality deletes are untouched.

The commit validates from the planned snapshot: the removed delete files must still be live,
and no delete file may have been added concurrently against a data file that gets a new DV
(two DVs for one file would be invalid).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow.compute as pc

from frazil import manifest as fm
from frazil.exceptions import UnsupportedError, ValidationError
from frazil.manifest.content_file import (
    DataFile,
    DataFileContent,
    data_files_from_entries,
    is_deletion_vector,
)
from frazil.manifest.deletes import DeletionVector
from frazil.metadata import MAIN_BRANCH, Snapshot, TableMetadata
from frazil.table.scan import DataScan
from frazil.table.scan.plan import snapshot_manifests
from frazil.table.scan.read import DeleteCache, read_dv
from frazil.table.update.snapshot import ReplaceFiles
from frazil.table.write.delete_writer import DeleteWriter
from frazil.table.write.writer import WrittenFilesStep

if TYPE_CHECKING:
    from frazil.table import Table
    from frazil.table.transaction import Transaction

__all__ = ["RewritePositionDeletesResult", "rewrite_position_deletes"]

logger = logging.getLogger(__name__)
DELETED = 2


@dataclass(frozen=True)
class RewritePositionDeletesResult:
    """Java's ``RewritePositionDeleteFiles.Result`` counts."""

    rewritten_delete_files_count: int = 0
    added_delete_files_count: int = 0
    rewritten_bytes_count: int = 0
    added_bytes_count: int = 0
    snapshot_id: int | None = None


class _RewriteDeletes(ReplaceFiles):
    """A replace of delete files that also fails when a concurrent commit added deletes for a
    data file this one writes a deletion vector for."""

    targets: list[DataFile]

    def _validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        super()._validate(base, parent)
        self._validate_no_new_deletes_for(base, parent, self.targets)


def _position_delete_files(table: Table, snapshot: Snapshot) -> list[DataFile]:
    """The live v2 position delete files (not DVs) of a snapshot."""
    md = table.metadata
    # the planner's reader: manifest paths come back resolved against the table location (v4)
    rows = snapshot_manifests(table.io, md, snapshot)[1].to_pylist()
    rows = [r for r in rows if r["content"] == 1]
    datas = table.io.read_many([r["manifest_path"] for r in rows])
    out: list[DataFile] = []
    for data, row in zip(datas, rows, strict=True):
        entries = fm.read_manifest(data, row, path=row["manifest_path"], location=md.paths_location)
        live = entries.filter(pc.not_equal(entries.column("status"), DELETED))
        for f in data_files_from_entries(live, row["partition_spec_id"]):
            if f.content == DataFileContent.POSITION_DELETES and not is_deletion_vector(f):
                out.append(f)
    return out


def stage_rewrite_position_deletes(
    transaction: Transaction,
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
) -> RewritePositionDeletesResult:
    """Stages the rewrite (module documentation) in ``transaction``; nothing is staged when the
    head has no v2 position delete file."""
    md = transaction.table_metadata
    table = transaction.table
    name = table.full_name()
    if md.format_version < 3:
        raise UnsupportedError(
            f"{name}: deletion vectors need format version 3 (the table is v{md.format_version};"
            " upgrade it first)"
        )
    ref = md.refs.get(branch or MAIN_BRANCH)
    head = md.snapshot_by_id(ref.snapshot_id) if ref is not None else None
    if head is None:
        return RewritePositionDeletesResult()
    old_files = _position_delete_files(table, head)
    if not old_files:
        logger.info("rewrite_position_deletes on %s: no position delete files", name)
        return RewritePositionDeletesResult()

    scan = DataScan(
        md,
        table.io,
        snapshot_id=head.snapshot_id,
        ref=(branch or MAIN_BRANCH) if (branch or MAIN_BRANCH) in md.refs else None,
    )
    cache = DeleteCache(table.io, md.name_mapping())
    vectors: list[tuple[DataFile, DeletionVector]] = []
    superseded: list[DataFile] = []
    for task in scan.plan_files():
        positional = [
            d
            for d in task.delete_files
            if d.content == DataFileContent.POSITION_DELETES and not is_deletion_vector(d)
        ]
        if not positional:
            continue
        dvs = [d for d in task.delete_files if is_deletion_vector(d)]
        if len(dvs) > 1:
            raise ValidationError(
                f"{name}: data file {task.file.file_path} has {len(dvs)} deletion vectors"
            )
        parts = [cache.positions(d, task.file.file_path) for d in positional]
        positions = np.unique(np.concatenate(parts)) if parts else np.array([], np.int64)
        dv = DeletionVector.from_positions(positions)
        for old in dvs:
            dv = dv | read_dv(table.io, old)
            superseded.append(old)
        if dv:
            vectors.append((task.file, dv))

    writer = DeleteWriter(table.io, md, uuid.uuid4())
    try:
        added = writer.write_dvs(vectors)
        step = _RewriteDeletes(transaction, snapshot_properties, branch)
        step.targets = [f for f, _ in vectors]
        for d in added:
            step.add_delete_file(d)
        for d in old_files:
            step.delete_delete_file(d)
        for d in superseded:
            step.delete_delete_file(d)
        step.validate_from_snapshot(head.snapshot_id)
    except BaseException:
        writer.abort()
        raise
    transaction.stage(WrittenFilesStep(step, writer))
    result = RewritePositionDeletesResult(
        rewritten_delete_files_count=len(old_files) + len(superseded),
        added_delete_files_count=len(added),
        rewritten_bytes_count=sum(d.file_size_in_bytes for d in old_files)
        + sum(d.content_size_in_bytes or 0 for d in superseded),
        added_bytes_count=sum(d.content_size_in_bytes or 0 for d in added),
        snapshot_id=step.snapshot_id,
    )
    logger.info(
        "rewrite_position_deletes on %s: %d position delete files and %d DVs into %d DVs",
        name,
        len(old_files),
        len(superseded),
        len(added),
    )
    return result


def rewrite_position_deletes(
    table: Table,
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
) -> RewritePositionDeletesResult:
    """Rewrites the v2 position delete files of a v3 ``table`` into deletion vectors (module
    documentation), committed before returning."""
    with table.transaction() as tx:
        return stage_rewrite_position_deletes(tx, branch, snapshot_properties)
