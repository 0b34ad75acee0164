"""Content files (spec "Manifests": the ``data_file`` struct): data files and delete files as
records, and their conversion to and from the Arrow columns of a manifest.

One :class:`DataFile` per file, never per row. Bounds stay in the spec's binary single-value
form (Appendix D) keyed by field id; partition values are a tuple in the order of the spec's
fields, each in the Python form pyarrow gives for that field's Arrow type in a manifest's
``data_file.partition`` struct.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class DataFileContent:
    """Values of ``data_file.content``."""

    DATA = 0
    POSITION_DELETES = 1
    EQUALITY_DELETES = 2


class FileFormat:
    """Values of ``data_file.file_format`` (written upper case, read case-insensitively)."""

    AVRO = "AVRO"
    ORC = "ORC"
    PARQUET = "PARQUET"
    PUFFIN = "PUFFIN"


@dataclass(frozen=True)
class DataFile:
    """A data or delete file as a manifest entry's ``data_file`` describes it.

    ``spec_id`` is the partition spec the ``partition`` tuple belongs to (not stored in the
    struct itself: the manifest's spec id carries it).
    """

    file_path: str
    file_format: str
    partition: tuple[Any, ...]
    record_count: int
    file_size_in_bytes: int
    content: int = DataFileContent.DATA
    spec_id: int = 0
    column_sizes: dict[int, int] | None = None
    value_counts: dict[int, int] | None = None
    null_value_counts: dict[int, int] | None = None
    nan_value_counts: dict[int, int] | None = None
    lower_bounds: dict[int, bytes] | None = None
    upper_bounds: dict[int, bytes] | None = None
    key_metadata: bytes | None = None
    split_offsets: tuple[int, ...] | None = None
    equality_ids: tuple[int, ...] | None = None
    sort_order_id: int | None = None
    # v3
    first_row_id: int | None = None
    referenced_data_file: str | None = None
    content_offset: int | None = None
    content_size_in_bytes: int | None = None
    # Not part of the struct: where a scan found the entry (sequence numbers after inheritance).
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)
