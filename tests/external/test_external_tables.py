"""Real tables from other projects' test suites (``../shared/external-fixtures``), read by frazil
and by peers nobody here wrote.

Every table folder there is relocated (tests/external/relocate.py) and its current snapshot read
with ``StaticTable.from_metadata(...).scan().to_arrow()``; the rows must equal those PyIceberg
and DuckDB's iceberg extension read from the same copy (each peer that can read it: PyIceberg
refuses equality deletes, DuckDB reads no ORC). Tables no peer reads carry their expected row
count from the source project's own tests, or the rows of their one data file read by pyarrow
(:data:`DATA_FILE_ROWS`). Every table metadata JSON file there is parsed, and
the deliberately invalid ones (named in :data:`INVALID_METADATA` with the Java reference's
verdict) must be refused with a :class:`~frazil.exceptions.FrazilError`.

Known gaps are ``xfail(strict=True)`` with the reason, so fixing one fails the suite until its
mark is removed.
"""

from __future__ import annotations

import datetime as dt
import decimal
import gzip
import math
import multiprocessing
import re
import sys
import uuid
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fixtures_root import fixtures_root, require_fixtures
from relocate import relocate

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "interop"))
from duckdb_peer import duckdb_with_iceberg
from peers import import_peer

from frazil.exceptions import FileReadError, FrazilError
from frazil.metadata import TableMetadata
from frazil.table.static import StaticTable

_UUID_TEXT = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_VERSION = re.compile(r"^v?(\d+)(?:-[^/]*)?(?:\.gz)?\.metadata\.json(?:\.gz)?$")

# TableMetadataV1SchemasWithoutCurrentId.json (iceberg-rust, iceberg-go) is read, not refused:
# the spec makes current-schema-id optional in v1 and frazil then takes the deprecated `schema`
# (tests/test_metadata.py), where Java's parser requires the id beside `schemas`.

# Table metadata files written to be refused, with why (the Java reference's TableMetadataParser
# refuses each; its tests assert so).
INVALID_METADATA = {
    "TableMetadataUnsupportedVersion.json": "format-version 4 is newer than supported",
    "TableMetadataV2MissingSortOrder.json": "v2 requires sort-orders",
    "TableMetadataV2CurrentSchemaNotFound.json": "current-schema-id names no schema",
    "TableMetadataV2MissingPartitionSpecs.json": "v2 requires partition-specs",
    "TableMetadataV2MissingSchemas.json": "v2 requires schemas",
    "TableMetadataV2MissingLastPartitionId.json": "v2 requires last-partition-id",
    "TableMetadataV1MissingSchemaType.json": "a v1 schema field has no type",
    "TableMetadataV1NoValidSchema.json": "no schema and no current-schema-id",
    "bad_iceberg_metadata.json": "not table metadata (JSON lines of rows)",
    "big_query_error/metadata/v0.metadata.json": "not table metadata (a BigQuery stub)",
    "TableMetadataV2Valid.zstd.metadata.json": "zstd-compressed metadata: Java reads only "
    "plain and gzip metadata files (iceberg-go writes this one)",
    "equality_delete_cross_partition/warehouse/ns/t/metadata/vfinal.metadata.json": "current-"
    "snapshot-id 9876543210123456789 is not a long (Java: 'Cannot parse to a long value')",
    "equality_delete_extra_column/warehouse/ns/t/metadata/vfinal.metadata.json": "the same",
    "TableMetadataV3WithPartitionStatistics.json": "a v3 snapshot with first-row-id and no "
    "added-rows (the spec requires both in v3; the Java reference's verdict is not checked)",
    "timestamptz_ns/metadata/v1.metadata.json": "a v3 table without next-row-id (the spec "
    "requires it; PyIceberg reads it anyway)",
}

# Metadata files frazil still judges wrongly: file -> reason (strict xfail).
METADATA_GAPS: dict[str, str] = {}

# Tables whose only metadata file is invalid (test_metadata_file checks it is refused).
INVALID_TABLES = {
    "duckdb__duckdb-iceberg/data/persistent/equality_delete_cross_partition/warehouse/ns/t",
    "duckdb__duckdb-iceberg/data/persistent/timestamptz_ns",
}

# Table folders without their data (only a metadata file was published) or naming object stores:
# their metadata is parsed by test_metadata_file, not read.
_TRINO = "trinodb__trino/plugin/trino-iceberg/src/test/resources/iceberg/"
NOT_READABLE = {
    "duckdb__duckdb-iceberg/data/persistent/generated_bounds": "data files are s3:// stand-ins",
    _TRINO + "conflict_truncate": "metadata only",
    _TRINO + "mixed_case_bloom_filter": "metadata only",
}

_IMPALA = "apache__impala/testdata/data/iceberg_test/"
_ICE = _IMPALA + "hadoop_catalog/ice/"
_DUCK = "duckdb__duckdb-iceberg/data/persistent/"

# Peers known to misread a table: (table, peer) -> why frazil is not compared with it.
PEER_MISREADS: dict[tuple[str, str], str] = {
    (_ICE + "iceberg_alltypes_part", "pyiceberg"): "PyIceberg 0.12 fills the identity partition "
    "column p_double with float32 precision (2.2219998836517334; the manifest holds 2.222)",
    (_ICE + "iceberg_alltypes_part_orc", "pyiceberg"): "the same float32 p_double as its "
    "Parquet twin",
    (_ICE + "complextypestbl_iceberg_orc", "pyiceberg"): "PyIceberg 0.12 reads id 4's null map "
    "nested_struct.g as an empty map; pyarrow's ORC reader alone decodes it as null",
    (_IMPALA + "iceberg_v3/iceberg_v3_deletion_vectors", "pyiceberg"): "PyIceberg 0.12 returns "
    "the rows the deletion vectors delete (5 rows; DuckDB reads 3)",
}

# Tables no peer reads: table -> (column, its sorted values), from the source project's tests.
EXPECTED: dict[str, tuple[str, list[Any]]] = {
    # duckdb-iceberg's big_query_error/rewrite_manifests.test: rows (1, Alice), (2, Bob).
    _DUCK + "big_query_error": ("name", ["Alice", "Bob"]),
    # Hive-style path p_double=2.222 and the manifest's partition value (PyIceberg misreads).
    _ICE + "iceberg_alltypes_part": ("p_double", [2.222, 2.222]),
    _ICE + "iceberg_alltypes_part_orc": ("p_double", [2.222, 2.222]),
    # Its two ORC files hold ids 1 to 7 and 8 (read by pyarrow alone).
    _ICE + "complextypestbl_iceberg_orc": ("id", [1, 2, 3, 4, 5, 6, 7, 8]),
    # Both peers refuse inline manifests (they require manifest-list); its two Parquet data
    # files, read by pyarrow, hold ids 1, 3 (alpha) and 2 (beta), the summary's 3 records.
    _DUCK + "iceberg_v1_deprecated/default/legacy_v1": ("id", [1, 2, 3]),
    # Its generator (scripts/.../legacy_bare_deletion_vector) deletes position 1 of ids 1, 2, 3.
    _DUCK + "legacy_bare_deletion_vector/warehouse/default/legacy_bare_deletion_vector": (
        "id",
        [1, 3],
    ),
    # No peer reads Avro data files: its two files (read by fastavro) hold i=1 (written before
    # j was added, so j is its initial-default -1) and (i=2, j=2).
    _IMPALA + "iceberg_v3/iceberg_v3_default_value_avro": ("j", [-1, 2]),
}

# Tables no peer reads whose rows are one data file's, read by pyarrow alone (columns by
# position): table -> that file, in the table folder.
DATA_FILE_ROWS: dict[str, str] = {
    # No field ids, no name mapping: read by position as Java's Parquet reader does
    # (ParquetSchemaUtil.addFallbackIds). PyIceberg refuses it; DuckDB reads no v1 'schema'.
    _ICE + "airports_parquet": "000000_0",
    # Trino-written variant columns (top level; in a struct, a list and a map): PyIceberg 0.12
    # refuses the variant type and DuckDB 1.5 will not bind Trino's unshredded variant group, so
    # the oracle is pyarrow reading the one data file (no deletes) as a struct of binaries.
    _IMPALA + "iceberg_v3/trino_variant": "data/20260629_095655_00023_wa2kj-"
    "0f39c7a5-6cc6-4be7-abc0-a45a62dacec5.parquet",
    _IMPALA + "iceberg_v3/trino_nested_variant": "data/20260703_115517_00018_wa2kj-"
    "fc2bf4c0-5cb6-4bd2-abb2-2eac147adff9.parquet",
}

# Tables frazil refuses with a clear error though a peer reads them: table -> (error, pattern).
REFUSED: dict[str, tuple[type[Exception], str]] = {
    # pyarrow (so frazil and PyIceberg) cannot open the Hive-written Parquet file: "Logical type
    # Null cannot be applied to group node"; DuckDB reads it. The error names the file.
    _IMPALA + "iceberg_migrated_complex_test": (
        FileReadError,
        r"data file .*/iceberg_migrated_complex_test/000000_0: OSError: .*Logical type Null",
    ),
}

# Gaps in frazil still open: table -> reason (strict xfail).
KNOWN_GAPS: dict[str, str] = {
    _ICE + "airports_orc": "no field ids, no name mapping: frazil reads it by the table's column "
    "names as Java's ORC reader does, but no peer reads it (PyIceberg refuses, DuckDB reads no "
    "v1 'schema') and the source project's tests give no expected rows",
    _IMPALA + "iceberg_migrated_complex_test_orc": "its name mapping's ids disagree with its "
    "schema's (string_col is 4 in the mapping, int_array_col a list in the schema): frazil "
    "refuses the type mismatch; no peer reads it",
}


def _tables(root: Path) -> list[Path]:
    found = {p.parent.parent for p in root.rglob("*.metadata.json*") if p.parent.name == "metadata"}
    return sorted(found)


def _current_metadata(table_dir: Path) -> Path:
    mdir = table_dir / "metadata"
    hint = mdir / "version-hint.text"
    if hint.exists():
        text = hint.read_text().strip()
        for name in (f"v{text}.metadata.json", f"v{text}.gz.metadata.json"):
            if (mdir / name).exists():
                return mdir / name
    files = [f for f in mdir.iterdir() if _VERSION.match(f.name)]
    if not files:  # e.g. DuckDB's ``vfinal.metadata.json``
        (only,) = [f for f in mdir.iterdir() if f.name.endswith(".metadata.json")]
        return only
    return max(files, key=lambda f: (int(_VERSION.match(f.name).group(1)), f.name))  # type: ignore[union-attr]


def _metadata_files(root: Path) -> list[Path]:
    out = []
    for p in sorted(root.rglob("*.json")):
        if (
            p.name.endswith(".metadata.json")
            or p.name.startswith("TableMetadata")
            or (p.name.startswith("example_") and "metadata" in p.name)
        ):
            out.append(p)
    out += sorted(p for p in root.rglob("*.metadata.json.gz"))
    return out + [p for p in sorted(root.rglob("bad_*.json")) if p not in out]


def _params(kind: str) -> list[Any]:
    root = fixtures_root()
    if root is None:  # the test itself reports the missing folder
        return [pytest.param(None, id="fixtures-missing")]
    if kind == "metadata":
        out = []
        for p in _metadata_files(root):
            gap = next((r for k, r in METADATA_GAPS.items() if str(p).endswith("/" + k)), None)
            marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
            out.append(pytest.param(p, id=str(p.relative_to(root)), marks=marks))
        return out
    params = []
    for t in _tables(root):
        rel = str(t.relative_to(root))
        if rel in NOT_READABLE or rel in INVALID_TABLES:
            continue
        gap = KNOWN_GAPS.get(rel)
        marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
        params.append(pytest.param(t, id=rel, marks=marks))
    return params


@pytest.mark.parametrize("path", _params("metadata"))
def test_metadata_file(path: Path | None) -> None:
    require_fixtures()
    assert path is not None
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    if any(str(path).endswith("/" + name) for name in INVALID_METADATA):
        with pytest.raises(FrazilError):
            TableMetadata.from_json(raw)
    else:
        TableMetadata.from_json(raw)


# ---- comparing rows ---------------------------------------------------------------------------


def _norm(v: Any) -> Any:
    if isinstance(v, float):
        return "NaN" if math.isnan(v) else v
    if isinstance(v, decimal.Decimal):
        return v.normalize()
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return ("tz", v.astimezone(dt.timezone.utc).replace(tzinfo=None))
    if isinstance(v, uuid.UUID):
        return v.bytes
    if isinstance(v, str) and _UUID_TEXT.match(v):  # DuckDB returns UUIDs as text
        return uuid.UUID(v).bytes
    if isinstance(v, bytearray):
        return bytes(v)
    if isinstance(v, dict):
        return tuple(sorted((k, _norm(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return tuple(_norm(x) for x in v)
    return v


def _rows(table: pa.Table) -> list[tuple[Any, ...]]:
    """The rows, comparable across engines, columns by position (DuckDB renames duplicate
    case-insensitive names)."""
    columns = [c.to_pylist() for c in table.columns]
    rows = [tuple(_norm(v) for v in row) for row in zip(*columns, strict=True)]
    return sorted(rows, key=repr)


@pytest.fixture(scope="module")
def peers() -> Iterator[dict[str, Any]]:
    """Readers of a metadata file's current snapshot, by peer name."""
    py_static = import_peer("pyiceberg.table").StaticTable
    duckdb_with_iceberg().close()  # the peer is installed (else skip, or fail under CI=true)
    ctx = multiprocessing.get_context("spawn")
    pool = [ProcessPoolExecutor(1, mp_context=ctx)]

    def pyiceberg(metadata: Path) -> pa.Table:
        return py_static.from_metadata(str(metadata)).scan().to_arrow()

    def duckdb(metadata: Path) -> pa.Table:
        # In a worker process: DuckDB 1.5.5 aborts the process on some of these tables.
        try:
            data = pool[0].submit(_duckdb_scan, str(metadata)).result()
        except BrokenProcessPool:
            pool[0] = ProcessPoolExecutor(1, mp_context=ctx)
            raise
        return pa.ipc.open_stream(data).read_all()

    yield {"pyiceberg": pyiceberg, "duckdb": duckdb}
    pool[0].shutdown()


def _duckdb_scan(metadata: str) -> bytes:
    con = duckdb_with_iceberg()
    con.execute("SET TimeZone='UTC'")
    table = con.execute(f"SELECT * FROM iceberg_scan('{metadata}')").fetch_arrow_table()
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return bytes(sink.getvalue())


@pytest.mark.slow  # about 80 s: three engines read 90 tables
@pytest.mark.parametrize("table_dir", _params("tables"))
def test_read_table(table_dir: Path | None, tmp_path: Path, peers: dict[str, Any]) -> None:
    root = require_fixtures()
    assert table_dir is not None
    rel = str(table_dir.relative_to(root))
    copy = relocate(_current_metadata(table_dir), root, tmp_path)

    if rel in REFUSED:
        error, pattern = REFUSED[rel]
        with pytest.raises(error, match=pattern) as info:
            StaticTable.from_metadata(str(copy.metadata_file)).scan().to_arrow()
        assert info.value.__cause__ is not None
        return
    got = StaticTable.from_metadata(str(copy.metadata_file)).scan().to_arrow()

    compared, refused = [], []
    for peer, read in peers.items():
        if (rel, peer) in PEER_MISREADS:
            continue
        try:
            expected = read(copy.metadata_file)
        except Exception as e:  # a peer that cannot read the table is no oracle for it
            refused.append(f"{peer}: {type(e).__name__}: {str(e)[:200]}")
            continue
        if peer == "pyiceberg":
            assert got.column_names == expected.column_names
        assert got.num_columns == expected.num_columns, peer
        assert _rows(got) == _rows(expected), f"rows differ from {peer}'s"
        compared.append(peer)
    if rel in EXPECTED:
        column, values = EXPECTED[rel]
        assert sorted(got.column(column).to_pylist()) == values
        compared.append("expected")
    if rel in DATA_FILE_ROWS:
        expected = pq.read_table(table_dir / DATA_FILE_ROWS[rel])
        assert got.num_rows == expected.num_rows > 0
        assert _rows(got) == _rows(expected), "rows differ from the data file's"
        compared.append("data file")
    assert compared, f"no peer reads {rel}: give it an expected row count ({refused})"
