"""v3 row lineage kept through rewrites (spec "Row Lineage"): the ``_row_id`` and
``_last_updated_sequence_number`` columns and the data file writer that stores them with their
reserved field ids. Row-level operations, compaction and Spark's rewrite write through it."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from frazil.arrow_schema import FIELD_ID_KEY
from frazil.manifest.content_file import DataFile
from frazil.table.scan.read import LAST_UPDATED_FIELD_ID, ROW_ID_FIELD_ID
from frazil.table.write.conform import conform
from frazil.table.write.writer import DataFileWriter

__all__ = ["LAST_UPDATED", "LINEAGE", "ROW_ID", "LineageWriter"]

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
        self._finish_all(list(self._open.values()))
        self._open.clear()
        return list(self._done)
