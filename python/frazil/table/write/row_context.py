"""What row-level rewrites share: the branch head an operation reads (copy-on-write or
merge-on-read mode, the files a filter may touch, their live rows read with ``_pos`` and v3
lineage, the positions their DVs and position deletes already remove) and the data file writer
that keeps the lineage columns (:class:`LineageWriter`). Delete, overwrite and upsert
(:mod:`frazil.table.write.row_delta`, :mod:`frazil.table.write.upsert`), compaction
(:mod:`frazil.table.maintenance.rewrite_data_files`) and Spark's rewrite use it."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from frazil.arrow_schema import FIELD_ID_KEY, schema_to_arrow
from frazil.exceptions import InvalidArgumentError
from frazil.expressions import AlwaysFalse, AlwaysTrue, BooleanExpression
from frazil.manifest.content_file import DataFile, DataFileContent, is_deletion_vector
from frazil.manifest.deletes import DeletionVector
from frazil.metadata import Snapshot, TableMetadata
from frazil.schema import Schema
from frazil.table.scan import DataScan, FileScanTask
from frazil.table.scan.read import (
    LAST_UPDATED_FIELD_ID,
    ROW_ID_FIELD_ID,
    DeleteCache,
    read_range,
    read_task,
)
from frazil.table.write.conform import conform
from frazil.table.write.writer import DataFileWriter

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.table.transaction import Transaction

__all__ = [
    "COPY_ON_WRITE",
    "LAST_UPDATED",
    "LINEAGE",
    "MERGE_ON_READ",
    "POS",
    "ROW_ID",
    "LineageWriter",
    "RowContext",
    "data_columns",
    "read_live_rows",
    "write_mode",
]

COPY_ON_WRITE = "copy-on-write"
MERGE_ON_READ = "merge-on-read"
#: The position metadata column the rows are read with.
POS = "_pos"

# v3 row lineage (spec "Row Lineage"): rows moved by a rewrite keep these columns, written with
# their reserved field ids.
ROW_ID = "_row_id"
LAST_UPDATED = "_last_updated_sequence_number"
#: The lineage columns with their reserved field ids.
LINEAGE = ((ROW_ID, ROW_ID_FIELD_ID), (LAST_UPDATED, LAST_UPDATED_FIELD_ID))


def _lineage_field(name: str, fid: int) -> pa.Field:
    return pa.field(name, pa.int64(), True, metadata={FIELD_ID_KEY: str(fid).encode()})


class LineageWriter(DataFileWriter):
    """A data file writer that also stores ``_row_id`` and ``_last_updated_sequence_number``
    (reserved field ids) when the input has them; other input goes through unchanged."""

    def _write(self, data: Any) -> list[DataFile]:
        if not isinstance(data, pa.Table) or not any(n in data.column_names for n, _ in LINEAGE):
            return super()._write(data)
        lineage = [(n, fid) for n, fid in LINEAGE if n in data.column_names]
        body = data.drop_columns([n for n, _ in lineage])
        conformed = conform(body.schema, self.schema, downcast_ns_timestamp_to_us=self.downcast)
        extra = [_lineage_field(n, fid) for n, fid in lineage]
        self.arrow_schema = pa.schema([*conformed.arrow_schema, *extra])
        self.nan_columns = self._float_columns()
        converted = [conformed.convert(b) for b in body.to_batches()]
        table = pa.Table.from_batches(converted, conformed.arrow_schema)
        for f, (n, _) in zip(extra, lineage, strict=True):
            table = table.append_column(f, data.column(n).cast(pa.int64()))
        self._write_chunk(table)
        self._finish_all()
        return list(self._done)


def write_mode(metadata: TableMetadata, key: str) -> str:
    """The table's ``copy-on-write``/``merge-on-read`` mode under property ``key``."""
    mode = metadata.properties.get(key, COPY_ON_WRITE).strip().lower()
    if mode not in (COPY_ON_WRITE, MERGE_ON_READ):
        raise InvalidArgumentError(
            f"table property {key}={mode!r} must be {COPY_ON_WRITE!r} or {MERGE_ON_READ!r}"
        )
    return mode


def read_live_rows(
    io: FileIO,
    metadata: TableMetadata,
    task: FileScanTask,
    cache: DeleteCache,
    projected: Schema | None = None,
    meta: Sequence[str] | None = None,
) -> pa.Table:
    """:meth:`RowContext.read` from a FileIO and metadata alone (Spark's executors compact
    through it, with no transaction at hand)."""
    if meta is None:
        v3 = metadata.format_version >= 3
        meta = [POS, ROW_ID, LAST_UPDATED] if v3 and projected is None else [POS]
    table_schema = metadata.schema()
    schema = projected if projected is not None else table_schema
    batches = list(
        read_task(
            task,
            io,
            table_schema,
            schema,
            metadata_columns=meta,
            name_mapping=metadata.name_mapping(),
            residual=AlwaysTrue(),
            delete_cache=cache,
        )
    )
    if batches:
        return pa.Table.from_batches(batches)
    fields = list(schema_to_arrow(schema)) + [pa.field(n, pa.int64()) for n in meta]
    return pa.schema(fields).empty_table()


@dataclass
class RowContext:
    """The branch head a row-level operation works on (delete, overwrite, upsert, compaction):
    its files matching a filter and their live rows, with positions and, on v3, lineage."""

    transaction: Transaction
    metadata: TableMetadata
    branch: str | None
    snapshot: Snapshot | None
    schema: Schema
    v3: bool
    mode: str
    isolation: str
    operation_id: uuid.UUID = field(default_factory=uuid.uuid4)

    @property
    def io(self) -> FileIO:
        return self.transaction.table.io

    @classmethod
    def make(
        cls,
        transaction: Transaction,
        md: TableMetadata,
        branch: str | None,
        mode_key: str,
        isolation_key: str,
    ) -> RowContext:
        if md.format_version < 2 and write_mode(md, mode_key) == MERGE_ON_READ:
            mode = COPY_ON_WRITE  # v1 has no delete files
        else:
            mode = write_mode(md, mode_key)
        ref = md.refs.get(branch or "main")
        snapshot = md.snapshot_by_id(ref.snapshot_id) if ref is not None else None
        isolation = md.properties.get(isolation_key, "serializable").strip().lower()
        return cls(
            transaction, md, branch, snapshot, md.schema(), md.format_version >= 3, mode, isolation
        )

    def scan(self, bound: BooleanExpression) -> DataScan | None:
        """The scan of the branch head with ``bound`` (``None``: nothing can match)."""
        if self.snapshot is None or isinstance(bound, AlwaysFalse):
            return None
        branch = self.branch or "main"
        return DataScan(
            self.metadata,
            self.io,
            row_filter=bound,
            snapshot_id=self.snapshot.snapshot_id,
            ref=branch if branch in self.metadata.refs else None,
        )

    def tasks(self, bound: BooleanExpression) -> list[FileScanTask]:
        scan = self.scan(bound)
        return [] if scan is None else list(scan.plan_files())

    def read(
        self,
        task: FileScanTask,
        cache: DeleteCache,
        projected: Schema | None = None,
        meta: Sequence[str] | None = None,
    ) -> pa.Table:
        """The live rows of the task's file in file order with ``meta`` (default: ``_pos``,
        and on v3 lineage unless ``projected`` narrows the columns: merge-on-read only needs
        the filter's columns)."""
        return read_live_rows(self.io, self.metadata, task, cache, projected, meta)

    def existing_positions(self, task: FileScanTask, cache: DeleteCache) -> np.ndarray:
        """Positions already deleted from the task's file by its DV or position deletes."""
        parts = []
        for d in task.delete_files:
            if is_deletion_vector(d):
                assert d.content_offset is not None and d.content_size_in_bytes is not None
                blob = read_range(
                    self.io, d.file_path, d.content_offset, d.content_size_in_bytes, d.key_metadata
                )
                # Bounded by the data file's rows: a DV's positions all lie below its count.
                rows = task.file.record_count
                dv = DeletionVector.from_puffin_blob(
                    blob, 0, d.content_size_in_bytes, d.file_path, d.referenced_data_file, rows
                )
                parts.append(dv.positions(rows).to_numpy())
            elif d.content == DataFileContent.POSITION_DELETES:
                parts.append(cache.positions(d, task.file.file_path))
        if not parts:
            return np.empty(0, np.int64)
        return np.concatenate(parts)


def data_columns(rows: pa.Table) -> pa.Table:
    """The rows to write again: table columns and (v3) lineage, without ``_pos``."""
    return rows.drop_columns([POS])
