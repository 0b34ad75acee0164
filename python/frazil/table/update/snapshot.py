"""Snapshot operations: append (fast or merging), overwrite, delete, replace (rewrite) and row
deltas, as ``transaction.update_snapshot(...)`` (an :class:`UpdateSnapshot`) gives them. Each
is a :class:`~frazil.table.update.snapshot_producer._SnapshotProducer` (which writes manifests
and the manifest list, and retries); the operations that delete add their conflict checks:
files to delete must still be live, delete files added concurrently against them fail the
commit, and under serializable isolation so do data files added concurrently that might hold
rows matching the conflict detection filter (evaluated natively over the added entries'
metrics, :class:`~frazil.expressions.metrics_evaluator.InclusiveMetricsEvaluator`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from frazil.exceptions import InvalidArgumentError, UnsupportedError, ValidationError
from frazil.expressions import BooleanExpression
from frazil.expressions.metrics_evaluator import InclusiveMetricsEvaluator
from frazil.manifest.content_file import DataFile, DataFileContent, data_files_from_entries
from frazil.metadata import Operation, Snapshot, TableMetadata
from frazil.table.update.snapshot_producer import (
    ADDED,
    DELETED,
    EXISTING,
    MANIFEST_FILE_SCHEMA,
    DataFilePredicate,
    _path_of,
    _SnapshotProducer,
)

if TYPE_CHECKING:
    from frazil.schema import Schema
    from frazil.table.transaction import Transaction

__all__ = [
    "ADDED",
    "DELETED",
    "EXISTING",
    "MANIFEST_FILE_SCHEMA",
    "DeleteFiles",
    "FastAppend",
    "MergeAppend",
    "OverwriteFiles",
    "ReplaceFiles",
    "RowDelta",
    "UpdateSnapshot",
]


def _applies(delete: DataFile, data: DataFile) -> bool:
    """Whether a delete file may apply to a data file (spec "Scan Planning"), conservatively:
    a position delete naming the file or in its partition, an equality delete in its partition
    or global."""
    if delete.referenced_data_file is not None:
        return delete.referenced_data_file == data.file_path
    if delete.content == DataFileContent.EQUALITY_DELETES and not delete.partition:
        return True
    return delete.spec_id == data.spec_id and tuple(delete.partition) == tuple(data.partition)


class FastAppend(_SnapshotProducer):
    """Adds data files in new manifests and keeps the head's manifests as they are."""

    _merges = False

    def _operation(self) -> str:
        return Operation.APPEND


class MergeAppend(_SnapshotProducer):
    """Adds data files, merging small manifests per ``commit.manifest-merge.*``."""

    def _operation(self) -> str:
        return Operation.APPEND


class _Deleting(_SnapshotProducer):
    def delete_data_file(self, data_file: DataFile | str) -> _Deleting:
        """Removes a data file (by record or path); it must be live in the branch head."""
        if isinstance(data_file, DataFile):
            self._check_content(data_file, True)
        path = _path_of(data_file)
        if path not in self._delete_paths:
            self._delete_paths[path] = None
            self._changed()
        return self

    def delete_files(self, predicate: DataFilePredicate) -> _Deleting:
        """Removes every live data file for which ``predicate`` (over the file's partition
        tuple and metrics) is true; matching nothing is not an error."""
        self._delete_predicates.append(predicate)
        self._changed()
        return self

    def delete_partitions(self, predicate: DataFilePredicate) -> _Deleting:
        """Removes every live data file and delete file for which ``predicate`` is true; it
        must test only the file's ``spec_id`` and ``partition``. Dropping a partition's data
        drops its deletes too (Java's ``dropPartition``, as ``ReplacePartitions`` does)."""
        self._delete_predicates.append(predicate)
        self._partition_predicates.append(predicate)
        self._changed()
        return self

    def validate_from_snapshot(self, snapshot_id: int | None) -> _Deleting:
        """The snapshot the operation read (default: the branch head when first staged);
        conflicts are looked for in the snapshots committed after it."""
        self._set_validate_from(snapshot_id)
        return self

    def conflict_detection(
        self, conflict: BooleanExpression | DataFilePredicate, schema: Schema | None = None
    ) -> _Deleting:
        """Under serializable isolation, fail if a concurrent commit added a data file that
        might hold rows this operation should have seen: one whose metrics say rows might match
        the filter ``conflict`` (Java's ``conflictDetectionFilter``; bound to ``schema``,
        default the table's current schema), or for which a predicate ``conflict`` is true."""
        if isinstance(conflict, BooleanExpression):
            schema = schema if schema is not None else self._transaction.table_metadata.schema()
            self._conflict_filter = InclusiveMetricsEvaluator(schema, conflict)
        else:
            self._conflict_filter = conflict
        return self

    def isolation_level(self, level: str) -> _Deleting:
        level = level.lower()
        if level not in ("serializable", "snapshot"):
            raise InvalidArgumentError(
                f"isolation level must be 'serializable' or 'snapshot', not {level!r}"
            )
        self._isolation = level
        return self

    def _validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        self._validate_no_conflicting_data(base, parent)

    def _check_deleted(
        self, base: TableMetadata, parent: Snapshot | None, removed: Sequence[DataFile]
    ) -> None:
        self._validate_no_new_deletes_for(base, parent, removed)

    # ---- conflict detection

    def _entries_added_since(
        self,
        base: TableMetadata,
        parent: Snapshot | None,
        content: int,
        operations: AbstractSet[str],
        status: int = ADDED,
    ) -> Iterator[tuple[int, pa.Table]]:
        """(spec id, entries) of the manifests of ``content`` that the snapshots after the one
        validated from added, with operations in ``operations``, filtered to the entries each
        of them marked ``status`` (``ADDED``, or ``DELETED`` for the files it removed)."""
        for snap in self._snapshots_since(base, parent):
            if snap.operation not in operations:
                continue
            rows = [
                r
                for r in self._manifest_rows(snap)
                if bool(r["content"]) == bool(content)
                and r["added_snapshot_id"] == snap.snapshot_id
            ]
            for row, entries in zip(rows, self._entries(rows), strict=True):
                added = pc.and_(
                    pc.equal(entries.column("status"), status),
                    pc.equal(entries.column("snapshot_id"), snap.snapshot_id),
                )
                yield row["partition_spec_id"], entries.filter(added)

    def _files_added_since(
        self,
        base: TableMetadata,
        parent: Snapshot | None,
        content: int,
        operations: AbstractSet[str],
    ) -> list[DataFile]:
        files: list[DataFile] = []
        for spec_id, entries in self._entries_added_since(base, parent, content, operations):
            files.extend(data_files_from_entries(entries, spec_id))
        return files

    def _conflicting_files(self, base: TableMetadata, parent: Snapshot | None) -> list[str]:
        """Data files added concurrently that may hold rows matching the conflict filter: an
        expression is evaluated natively over the added entries' metrics (Java's
        ``InclusiveMetricsEvaluator``), a predicate per file."""
        operations = {Operation.APPEND, Operation.OVERWRITE}
        conflict = self._conflict_filter
        if not isinstance(conflict, InclusiveMetricsEvaluator):
            added = self._files_added_since(base, parent, 0, operations)
            return [f.file_path for f in added if conflict is not None and conflict(f)]
        out: list[str] = []
        for _, entries in self._entries_added_since(base, parent, 0, operations):
            paths = pc.struct_field(entries.column("data_file"), "file_path")
            out.extend(pc.filter(paths, conflict.eval(entries)).to_pylist())
        return out

    def _validate_no_conflicting_data(self, base: TableMetadata, parent: Snapshot | None) -> None:
        if self._conflict_filter is None or self._isolation != "serializable":
            return
        conflicts = self._conflicting_files(base, parent)
        if conflicts:
            raise ValidationError(
                f"{self._table_name()}: found conflicting files that can contain records "
                f"matching the conflict detection filter: {', '.join(conflicts[:10])}"
            )

    def _validate_no_new_deletes_for(
        self, base: TableMetadata, parent: Snapshot | None, removed: Sequence[DataFile]
    ) -> None:
        if not removed or base.format_version < 2 or parent is None:
            return
        if parent.snapshot_id == self._validate_from:
            return
        new_deletes = self._files_added_since(
            base, parent, 1, {Operation.OVERWRITE, Operation.DELETE}
        )
        for d in new_deletes:
            for f in removed:
                if _applies(d, f):
                    raise ValidationError(
                        f"{self._table_name()}: cannot commit, found new delete file "
                        f"{d.file_path} for data file {f.file_path}, which this commit removes"
                    )


class OverwriteFiles(_Deleting):
    """Removes data files (by path or predicate) and adds others in one snapshot."""

    def _operation(self) -> str:
        adds = any(f.content == DataFileContent.DATA for f in self._added.values())
        deletes = bool(self._delete_paths or self._delete_predicates)
        if deletes and not adds:
            return Operation.DELETE
        if adds and not deletes:
            return Operation.APPEND
        return Operation.OVERWRITE


class DeleteFiles(_Deleting):
    """Removes whole data files (by path or predicate)."""

    def append_data_file(self, data_file: DataFile) -> _SnapshotProducer:
        raise UnsupportedError("a delete cannot add data files; use overwrite()")

    def _operation(self) -> str:
        return Operation.DELETE


class _ChangesDeleteFiles(_Deleting):
    """Producers that also add and remove delete files (rewrites and row-level changes)."""

    def add_delete_file(self: _D, delete_file: DataFile) -> _D:
        self._check_content(delete_file, False)
        self._add_file(delete_file)
        return self

    def delete_delete_file(self: _D, delete_file: DataFile | str) -> _D:
        """Removes a delete file; a deletion vector (a DataFile with ``content_offset``) is
        matched by its Puffin file and offset, since several share one file."""
        if isinstance(delete_file, DataFile) and delete_file.content_offset is not None:
            key = (delete_file.file_path, delete_file.content_offset)
            if key not in self._delete_dv_keys:
                self._delete_dv_keys[key] = None
                self._changed()
            return self
        path = _path_of(delete_file)
        if path not in self._delete_delete_paths:
            self._delete_delete_paths[path] = None
            self._changed()
        return self


_D = TypeVar("_D", bound=_ChangesDeleteFiles)


class ReplaceFiles(_ChangesDeleteFiles):
    """Rewrites files without changing the table's data (compaction): the files it replaces
    must still be live, and no delete file may have been added against them meanwhile."""

    def delete_files(self, predicate: DataFilePredicate) -> _Deleting:
        raise UnsupportedError("a replace names the files it rewrites; use delete_data_file()")

    def delete_partitions(self, predicate: DataFilePredicate) -> _Deleting:
        raise UnsupportedError("a replace names the files it rewrites; use delete_data_file()")

    def _operation(self) -> str:
        return Operation.REPLACE

    def _validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        pass

    def _missing_message(self, name: str, missing: list[str]) -> str:
        shown = ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else "")
        return (
            f"{name}: cannot commit the rewrite: missing required files to delete: {shown} "
            "(they are no longer live; a concurrent commit removed them)"
        )


class RowDelta(_ChangesDeleteFiles):
    """Adds data files and/or delete files (row-level changes), optionally removing files."""

    def _operation(self) -> str:
        adds_data = any(f.content == DataFileContent.DATA for f in self._added.values())
        adds_deletes = any(f.content != DataFileContent.DATA for f in self._added.values())
        deletes_data = bool(self._delete_paths or self._delete_predicates)
        if adds_data and not adds_deletes and not deletes_data:
            return Operation.APPEND
        if adds_deletes and not adds_data:
            return Operation.DELETE
        return Operation.OVERWRITE


_P = TypeVar("_P", bound=_SnapshotProducer)


class UpdateSnapshot:
    """The snapshot operations of a transaction (PyIceberg's ``UpdateSnapshot``)."""

    def __init__(
        self,
        transaction: Transaction,
        snapshot_properties: Mapping[str, str] | None = None,
        branch: str | None = None,
    ) -> None:
        self._transaction = transaction
        self._properties = dict(snapshot_properties or {})
        self._branch = branch

    def _make(self, cls: type[_P]) -> _P:
        return cls(self._transaction, self._properties, self._branch)

    def fast_append(self) -> FastAppend:
        return self._make(FastAppend)

    def merge_append(self) -> MergeAppend:
        return self._make(MergeAppend)

    def overwrite(self) -> OverwriteFiles:
        return self._make(OverwriteFiles)

    def delete(self) -> DeleteFiles:
        return self._make(DeleteFiles)

    def replace(self) -> ReplaceFiles:
        return self._make(ReplaceFiles)

    rewrite = replace

    def row_delta(self) -> RowDelta:
        return self._make(RowDelta)
