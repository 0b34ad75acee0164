"""The delete files a row-level change writes: deletion vectors (v3, one Puffin file per
operation with a ``deletion-vector-v1`` blob per data file) and position delete files (v2:
Parquet, ``file_path``/``pos`` with the reserved field ids, sorted, with full metrics for both
columns as Java's ``MetricsConfig.forPositionDelete``). Used by :mod:`row_delta`.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from frazil.arrow_schema import FIELD_ID_KEY
from frazil.encryption.table_io import (
    data_filesystem,
    data_key_metadata,
    parquet_encryption,
    seal_file,
)
from frazil.manifest.content_file import DataFile, DataFileContent, FileFormat
from frazil.manifest.deletes import DeletionVector, write_deletion_vectors
from frazil.metadata import TableMetadata
from frazil.schema import Schema
from frazil.table.scan.read import FILE_PATH_FIELD_ID, POS_FIELD_ID
from frazil.table.write.locations import location_provider, partition_to_path
from frazil.table.write.metrics import MetricsConfig, parquet_metrics, parse_metrics_mode
from frazil.table.write.writer import delete_written
from frazil.types import LongType, NestedField, StringType

if TYPE_CHECKING:
    from frazil.io import FileIO

__all__ = ["DeleteWriter"]

_POSITION_DELETE_SCHEMA = Schema(
    NestedField(FILE_PATH_FIELD_ID, "file_path", StringType(), required=True),
    NestedField(POS_FIELD_ID, "pos", LongType(), required=True),
)
_POSITION_DELETE_ARROW = pa.schema(
    [
        pa.field("file_path", pa.string(), False, {FIELD_ID_KEY: str(FILE_PATH_FIELD_ID).encode()}),
        pa.field("pos", pa.int64(), False, {FIELD_ID_KEY: str(POS_FIELD_ID).encode()}),
    ]
)
# Java keeps full metrics for both columns of position delete files (forPositionDelete).
_POSITION_DELETE_METRICS = MetricsConfig(parse_metrics_mode("full"))


class DeleteWriter:
    """Writes deletion vectors (one Puffin file per operation) and v2 position delete files;
    remembers what it wrote for cleanup."""

    def __init__(self, io: FileIO, metadata: TableMetadata, operation_id: uuid.UUID) -> None:
        self.io = io
        self.metadata = metadata
        self.operation_id = operation_id
        self.locations = location_provider(metadata.location or "", metadata.properties)
        self.written: list[str] = []
        self._count = 0

    def _name(self, ext: str) -> str:
        self._count += 1
        return f"00000-0-{self.operation_id}-{self._count:05d}-deletes.{ext}"

    def _open(self, location: str) -> Any:
        fs, path = data_filesystem(self.io, location)
        self.written.append(location)
        if fs.type_name == "local":
            parent = path.rsplit("/", 1)[0]
            if parent and parent != path:
                fs.create_dir(parent, recursive=True)
        return fs.open_output_stream(path)

    def write_dvs(self, dvs: list[tuple[DataFile, DeletionVector]]) -> list[DataFile]:
        if not dvs:
            return []
        data, placed = write_deletion_vectors([(f.file_path, dv) for f, dv in dvs])
        location = self.locations.new_data_location(self._name("puffin"))
        stored, key_metadata = seal_file(self.io, data)  # encrypted tables: an AGS1 stream
        with self._open(location) as out:
            out.write(stored)
        return [
            DataFile(
                file_path=location,
                file_format=FileFormat.PUFFIN,
                partition=tuple(f.partition),
                record_count=w.record_count,
                file_size_in_bytes=len(data),
                content=DataFileContent.POSITION_DELETES,
                spec_id=f.spec_id,
                referenced_data_file=f.file_path,
                content_offset=w.content_offset,
                content_size_in_bytes=w.content_size_in_bytes,
                key_metadata=key_metadata,
            )
            for (f, _), w in zip(dvs, placed, strict=True)
        ]

    def write_position_deletes(self, f: DataFile, positions: np.ndarray) -> DataFile:
        """A file-scoped position delete file for ``f`` (sorted positions)."""
        spec = self.metadata.spec_by_id(f.spec_id)
        path = ""
        if spec is not None and spec.fields:
            path = partition_to_path(spec, self.metadata.schema(), f.partition)
        location = self.locations.new_data_location(self._name("parquet"), path or None)
        positions = np.sort(positions)
        table = pa.table(
            [pa.repeat(pa.scalar(f.file_path, pa.string()), len(positions)), pa.array(positions)],
            schema=_POSITION_DELETE_ARROW,
        )
        codec = self.metadata.properties.get("write.parquet.compression-codec", "zstd").lower()
        codec = {"uncompressed": "none", "lz4_raw": "lz4"}.get(codec, codec)
        sink = self._open(location)
        writer = pq.ParquetWriter(
            sink,
            _POSITION_DELETE_ARROW,
            compression=codec,
            encryption_properties=parquet_encryption(self.io, location),
        )
        writer.write_table(table)
        writer.close()
        size = sink.tell()
        sink.close()
        metrics = parquet_metrics(
            writer.writer.metadata, _POSITION_DELETE_SCHEMA, config=_POSITION_DELETE_METRICS
        )
        return DataFile(
            file_path=location,
            file_format=FileFormat.PARQUET,
            partition=tuple(f.partition),
            file_size_in_bytes=size,
            content=DataFileContent.POSITION_DELETES,
            spec_id=f.spec_id,
            referenced_data_file=f.file_path,
            key_metadata=data_key_metadata(self.io, location),
            **metrics.data_file_fields(),
        )

    def abort(self) -> None:
        delete_written(self.io, self.written)
