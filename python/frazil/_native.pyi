# Hand-written stub of the private native module; CI checks it against the binary with
# `python -m mypy.stubtest frazil._native`.
from collections.abc import Sequence
from typing import Any, Final, TypeAlias, final

_I: TypeAlias = int | None
# A manifest list row: (added_snapshot_id, sequence_number, first_row_id) to inherit, optionally
# followed by what it promises of the file: manifest_length, added/existing/deleted_files_count,
# added/existing/deleted_rows_count.
_ListEntry: TypeAlias = tuple[_I, _I, _I] | tuple[_I, _I, _I, _I, _I, _I, _I, _I, _I, _I]

__all__ = [
    "COLUMN_STATS",
    "ArrowArrayExport",
    "AvroDataWriter",
    "DeletePlan",
    "DeletionVector",
    "EqualityDeleteSet",
    "GeoBounds",
    "KeptRows",
    "LenientTransform",
    "MetricsEvaluator",
    "ParquetFooter",
    "PlannedManifest",
    "PlannedScan",
    "PuffinBlobMetadata",
    "PuffinFileMetadata",
    "PuffinWritten",
    "RecordBatchExport",
    "RowFilter",
    "ScanPlanner",
    "ThetaSketch",
    "ThetaUnion",
    "TransformedChunks",
    "__version__",
    "avro_data_read",
    "avro_data_schema",
    "build_profile",
    "deletes_group_positions",
    "gcm",
    "gcm_stream_decrypt",
    "gcm_stream_encrypt",
    "geo_bounds_intersect",
    "geo_intersects_box",
    "geo_prune",
    "inspect_readable_metrics",
    "key_metadata_decode",
    "key_metadata_encode",
    "manifest_entry_type",
    "manifest_read",
    "manifest_read_list",
    "manifest_read_many",
    "manifest_summarize",
    "manifest_write",
    "manifest_write_list",
    "murmur3_32",
    "parquet_annotate_variants",
    "path_has_scheme",
    "path_relativize",
    "path_resolve",
    "puffin_read_blob",
    "puffin_read_metadata",
    "puffin_write",
    "rest_read_page",
    "rest_write_page",
    "transform_apply",
    "transform_apply_scalar",
    "transform_apply_stream",
    "transform_bucket",
    "transform_can_transform",
    "transform_parse",
    "transform_parse_lenient",
    "transform_preserves_order",
    "transform_result_type",
    "transform_truncate",
    "type_parse_primitive",
    "value_from_bytes",
    "value_from_json",
    "value_parse_date_literal",
    "value_parse_time_literal",
    "value_parse_timestamp_literal",
    "value_to_bytes",
    "value_to_json",
    "variant_from_json",
    "variant_to_json",
    "variant_unshred",
]

__version__: str
COLUMN_STATS: list[str]
build_profile: str

@final
class ArrowArrayExport:
    def __arrow_c_array__(
        self, requested_schema: object | None = None
    ) -> tuple[object, object]: ...
    def __arrow_c_schema__(self) -> object: ...
    def __len__(self) -> int: ...

@final
class RecordBatchExport:
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...
    def __arrow_c_schema__(self) -> object: ...
    def __len__(self) -> int: ...

@final
class ThetaSketch:
    def __new__(cls, lg_k: int = 12) -> ThetaSketch: ...
    def update(self, values: object, type_json: str) -> None: ...
    def estimate(self) -> float: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def estimate_of(data: bytes) -> float: ...

@final
class ThetaUnion:
    def __new__(cls, lg_k: int = 12) -> ThetaUnion: ...
    def update(self, data: bytes) -> None: ...
    def estimate(self) -> float: ...
    def to_bytes(self) -> bytes: ...

@final
class DeletionVector:
    def __new__(cls) -> DeletionVector: ...
    @staticmethod
    def from_positions(positions: object) -> DeletionVector: ...
    @staticmethod
    def deserialize(
        data: bytes,
        offset: int = 0,
        length: int | None = None,
        context: str = "",
        record_count: int | None = None,
    ) -> DeletionVector: ...
    def serialize(self) -> bytes: ...
    @property
    def cardinality(self) -> int: ...
    @property
    def min(self) -> int | None: ...
    @property
    def max(self) -> int | None: ...
    def contains(self, pos: int) -> bool: ...
    def deleted_count(self, start: int, length: int) -> int: ...
    def positions(self, record_count: int | None = None) -> ArrowArrayExport: ...
    def keep_mask(self, start: int, length: int) -> ArrowArrayExport: ...
    def keep_indices(self, start: int, length: int) -> ArrowArrayExport: ...
    def union(self, other: DeletionVector) -> DeletionVector: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __len__(self) -> int: ...

@final
class EqualityDeleteSet:
    @staticmethod
    def from_keys(keys: object) -> EqualityDeleteSet: ...
    def keep_mask(self, columns: list[object], keep: object | None = None) -> ArrowArrayExport: ...
    def __len__(self) -> int: ...

def deletes_group_positions(
    rows: object, data_file: str | None = None
) -> list[tuple[str, DeletionVector]]: ...

@final
class PuffinBlobMetadata:
    blob_type: Final[str]
    fields: Final[list[int]]
    snapshot_id: Final[int]
    sequence_number: Final[int]
    offset: Final[int]
    length: Final[int]
    compression_codec: Final[str | None]
    properties: Final[list[tuple[str, str]]]

@final
class PuffinFileMetadata:
    blobs: Final[list[PuffinBlobMetadata]]
    properties: Final[list[tuple[str, str]]]

@final
class ParquetFooter:
    def __new__(cls, tail: bytes, file_length: int, want: Any = None) -> ParquetFooter: ...
    @staticmethod
    def footer_length(tail: bytes) -> int: ...
    def schema(self) -> RecordBatchExport: ...
    def page_index_ranges(self, row_group: int, filter: RowFilter) -> list[tuple[int, int]]: ...
    def page_keep(
        self, row_group: int, filter: RowFilter, parts: Sequence[tuple[int, Any]]
    ) -> ArrowArrayExport | None: ...
    def byte_ranges(self, row_group: int, columns: list[int]) -> list[tuple[int, int]]: ...
    def decode(
        self,
        row_group: int,
        columns: list[int],
        parts: Sequence[tuple[int, Any]],
        batch_size: int,
        threads: int,
        keep: object | None = None,
    ) -> RecordBatchExport: ...
    def filter_rows(
        self,
        row_group: int,
        columns: list[int],
        parts: Sequence[tuple[int, Any]],
        threads: int,
        keep: object | None,
        filter: RowFilter,
        inputs: list[int],
    ) -> tuple[KeptRows, int, list[int]]: ...
    def decode_kept(
        self,
        kept: KeptRows,
        parts: Sequence[tuple[int, Any]],
        batch_size: int,
        threads: int,
        walk: str,
    ) -> RecordBatchExport: ...

@final
class KeptRows: ...

@final
class PuffinWritten:
    data: Final[bytes]
    metadata: Final[PuffinFileMetadata]

def puffin_read_metadata(data: bytes, location: str) -> PuffinFileMetadata: ...
def puffin_read_blob(
    data: bytes,
    blob_type: str,
    offset: int,
    length: int,
    compression_codec: str | None,
    location: str,
) -> bytes: ...
def puffin_write(
    blobs: list[tuple[str, list[int], int, int, bytes, str | None, list[tuple[str, str]]]],
    properties: list[tuple[str, str]],
    compress_footer: bool = False,
) -> PuffinWritten: ...

@final
class PlannedManifest:
    row: Final[int]
    content: Final[int]
    entries: Final[RecordBatchExport]
    positions: Final[ArrowArrayExport]
    residual_index: Final[ArrowArrayExport]
    deletes: Final[ArrowArrayExport]

@final
class PlannedScan:
    manifests: Final[list[PlannedManifest]]
    residuals: Final[list[str]]

@final
class MetricsEvaluator:
    def __new__(
        cls, schema_json: str, filter_json: str, strict: bool, sql_nulls: bool = False
    ) -> MetricsEvaluator: ...
    def eval(self, data_files: object) -> ArrowArrayExport: ...

@final
class RowFilter:
    def __new__(cls, schema_json: str, filter_json: str) -> RowFilter: ...
    def field_ids(self) -> list[int]: ...
    def mask(self, columns: list[object], length: int) -> ArrowArrayExport: ...

@final
class ScanPlanner:
    def __new__(
        cls,
        schema_json: str,
        specs_json: str,
        filter_json: str,
        table_location: str | None = None,
    ) -> ScanPlanner: ...
    def prune_manifests(self, manifest_list: object) -> ArrowArrayExport: ...
    def filter_json(self) -> str: ...
    def partition_filter_json(self, spec_id: int) -> str: ...
    def plan_deletes(
        self,
        manifest_list: object,
        rows: list[int],
        datas: list[bytes],
        inherits: list[_ListEntry | None],
        threads: int | None = None,
    ) -> DeletePlan: ...
    def plan_data(
        self,
        deletes: DeletePlan,
        manifest_list: object,
        rows: list[int],
        datas: list[bytes],
        inherits: list[_ListEntry | None],
        threads: int | None = None,
        include_column_stats: bool = True,
    ) -> PlannedScan: ...

@final
class DeletePlan:
    @property
    def manifests(self) -> list[PlannedManifest]: ...
    def __len__(self) -> int: ...

def inspect_readable_metrics(
    data_files: object, columns: list[tuple[str, int, str]]
) -> ArrowArrayExport: ...
def manifest_entry_type() -> ArrowArrayExport: ...
def manifest_read_list(data: bytes, location: str | None = None) -> RecordBatchExport: ...

@final
class AvroDataWriter:
    def __new__(cls, template: object, codec: str) -> AvroDataWriter: ...
    def write(self, batch: object) -> None: ...
    def take_written(self) -> bytes: ...
    def finish(self) -> bytes: ...

def avro_data_schema(data: bytes) -> RecordBatchExport: ...
def avro_data_read(
    data: bytes,
    columns: list[int] | None = None,
    split: tuple[int, int] | None = None,
    batch_rows: int = 0,
    max_records: int | None = None,
) -> tuple[list[int], RecordBatchExport]: ...
def manifest_read(
    data: bytes,
    inherit: _ListEntry | None = None,
    columns: list[str] | None = None,
    location: str | None = None,
) -> RecordBatchExport: ...
def manifest_read_many(
    datas: list[bytes],
    inherits: list[_ListEntry | None],
    columns: list[str] | None = None,
    threads: int | None = None,
    location: str | None = None,
    paths: list[str | None] | None = None,
) -> list[RecordBatchExport]: ...
def manifest_write(
    entries: object,
    format_version: int,
    metadata: list[tuple[str, str]],
    codec: str = "deflate",
    location: str | None = None,
) -> bytes: ...
def manifest_write_list(
    manifests: object,
    format_version: int,
    metadata: list[tuple[str, str]],
    codec: str = "deflate",
    location: str | None = None,
) -> bytes: ...
def path_has_scheme(path: str) -> bool: ...
def path_resolve(path: str, location: str) -> str: ...
def path_relativize(path: str, location: str) -> str: ...
def manifest_summarize(entries: object) -> dict[str, Any]: ...
def murmur3_32(data: bytes, seed: int = 0) -> int: ...
def transform_parse(text: str) -> str: ...

@final
class LenientTransform:
    transform: Final[str]
    known: Final[bool]

@final
class TransformedChunks:
    chunks: Final[list[ArrowArrayExport]]
    empty: Final[ArrowArrayExport]

def transform_parse_lenient(text: str) -> LenientTransform: ...
def transform_bucket(n: object) -> str: ...
def transform_truncate(w: object) -> str: ...
def transform_preserves_order(transform: str) -> bool: ...
def transform_can_transform(transform: str, type_json: str) -> bool: ...
def transform_result_type(transform: str, type_json: str) -> str: ...
def transform_apply(transform: str, array: object) -> ArrowArrayExport: ...
def transform_apply_stream(transform: str, stream: object) -> TransformedChunks: ...
def transform_apply_scalar(transform: str, value: object, type_json: str) -> Any: ...
def type_parse_primitive(text: str) -> str: ...
def value_to_bytes(value: object, type_json: str) -> bytes: ...
def value_from_bytes(data: bytes, type_json: str) -> Any: ...
def value_to_json(value: object, type_json: str) -> str: ...
def value_from_json(json_text: str, type_json: str) -> Any: ...
def value_parse_date_literal(text: str) -> int: ...
def value_parse_time_literal(text: str) -> int: ...
def value_parse_timestamp_literal(text: str, with_zone: bool) -> int: ...

# geo (frazil_values::geo)
@final
class GeoBounds:
    def __new__(cls, geography: bool) -> GeoBounds: ...
    def add(self, values: object) -> None: ...
    def add_box(
        self,
        xmin: float,
        ymin: float,
        xmax: float,
        ymax: float,
        zmin: float | None = None,
        zmax: float | None = None,
        mmin: float | None = None,
        mmax: float | None = None,
    ) -> None: ...
    def bounds(self) -> tuple[bytes, bytes] | None: ...

def geo_bounds_intersect(
    lower: bytes, upper: bytes, other_lower: bytes, other_upper: bytes, geography: bool
) -> bool: ...
def geo_prune(
    data_files: object, field_id: int, lower: bytes, upper: bytes, geography: bool
) -> ArrowArrayExport: ...
def geo_intersects_box(
    values: object, lower: bytes, upper: bytes, geography: bool
) -> ArrowArrayExport: ...

# variant (frazil_values::variant)
def variant_from_json(json: object) -> ArrowArrayExport: ...
def variant_to_json(values: object) -> ArrowArrayExport: ...
def variant_unshred(group: object) -> ArrowArrayExport: ...
def parquet_annotate_variants(footer: bytes, field_ids: list[int]) -> bytes: ...

# encryption (frazil_encryption)
def gcm(key: bytes, data: bytes, aad: bytes, seal: bool) -> bytes: ...
def gcm_stream_encrypt(key: bytes, aad: bytes, data: bytes, block: int) -> bytes: ...
def gcm_stream_decrypt(
    key: bytes,
    aad: bytes,
    data: bytes,
    expected_length: int | None,
    name: str,
    range: tuple[int, int | None] = ...,
) -> tuple[int, bytes]: ...
def key_metadata_encode(key: bytes, aad: bytes | None, n: int | None, v1_10: bool) -> bytes: ...
def key_metadata_decode(data: bytes) -> tuple[bytes, bytes | None, int | None]: ...

# REST scan-planning pages (frazil_rest)
def rest_write_page(
    tasks: object,
    deletes: object,
    delete_rows: list[int],
    residuals: dict[str, str],
    fields: list[tuple[int, str]],
    specs: dict[int, list[int]],
) -> bytes: ...
def rest_read_page(
    data: bytes, fields: list[tuple[int, str]], specs: dict[int, list[int]]
) -> tuple[RecordBatchExport, RecordBatchExport, list[str]]: ...
