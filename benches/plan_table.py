"""The scan-planning benchmark's table: generated, written with frazil's manifest writers, and
cached on disk so that repeated runs reuse it.

100 manifests x ``entries`` data files (10,000 on a full run, 10 in smoke mode), format v2,
partitioned by ``day(ts)``; manifest ``m`` holds the days ``DAY0 + 3m .. DAY0 + 3m + 2``. Every
data file has value, null and column-size counts and lower/upper bounds on the 8 columns (NaN
counts on the double), bounds serialized as the spec's single values (Appendix D):

==  ==========  ============  ==============================================================
id  column      type          bounds (per file)
==  ==========  ============  ==============================================================
1   id          long          ``[lo, lo + w]``, lo uniform over ``files x ID_WIDTH``, w < ID_WIDTH
2   ts          timestamp     inside the file's day
3   user_id     long          lo uniform in ``[0, user_span)``, width below 5M
4   category    string        all 12 categories (72% of files) or a single one
5   amount      double        ``[lo, lo + x]``
6   qty         int           ``[lo, hi]``
7   country     string        all 20 countries (69% of files) or a single one
8   day         date          the file's day (lower = upper)
==  ==========  ============  ==============================================================

So ``category = 'music' AND country = 'FR'`` admits about 0.743 x 0.706 = 52% of the files, an
``id`` range of 37 ``ID_WIDTH`` about 37.5 files whatever the table's size, and ``user_id <
1000`` a fraction ``1000 / user_span`` of them. The data files themselves do not exist (local
paths under the table's ``data/``): planning reads metadata only.

The cache is ``$FRAZIL_BENCH_CACHE`` (default ``<tempdir>/frazil-bench-cache``), one directory
per set of parameters (``plan-v<GENERATOR_VERSION>-<manifests>x<entries>-<seed>-<user_span>``),
written under a temporary name and renamed when complete.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import struct
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa

import frazil.manifest as fm
from frazil.table.update.snapshot import MANIFEST_FILE_SCHEMA

GENERATOR_VERSION = 1  # bump when the table's content changes, so caches are not reused
N_MANIFESTS = 100
SEED = 0x9A17
SNAPSHOT_ID = 1
DAY0 = 19_000  # 2022-01-08
DAYS_PER_MANIFEST = 3
ID_WIDTH = 1 << 24
USER_WIDTH = 5_000_000
CATEGORIES = sorted(
    [
        "beauty",
        "books",
        "electronics",
        "fashion",
        "games",
        "garden",
        "grocery",
        "health",
        "music",
        "sports",
        "toys",
        "travel",
    ]
)
COUNTRIES = sorted("AT BE BR CA CH CN DE DK ES FI FR GB IE IN IT JP NL PL SE US".split())
P_ALL_CATEGORIES = 0.72
P_ALL_COUNTRIES = 0.69

FIELDS = [
    {"id": 1, "name": "id", "required": True, "type": "long"},
    {"id": 2, "name": "ts", "required": True, "type": "timestamp"},
    {"id": 3, "name": "user_id", "required": False, "type": "long"},
    {"id": 4, "name": "category", "required": False, "type": "string"},
    {"id": 5, "name": "amount", "required": False, "type": "double"},
    {"id": 6, "name": "qty", "required": False, "type": "int"},
    {"id": 7, "name": "country", "required": False, "type": "string"},
    {"id": 8, "name": "day", "required": False, "type": "date"},
]
N_COLUMNS = len(FIELDS)
SCHEMA = {"type": "struct", "schema-id": 0, "fields": FIELDS}
SPEC_FIELDS = [{"source-id": 2, "field-id": 1000, "name": "ts_day", "transform": "day"}]
US_PER_DAY = 86_400_000_000


def cache_root() -> Path:
    env = os.environ.get("FRAZIL_BENCH_CACHE", "").strip()
    return Path(env) if env else Path(tempfile.gettempdir()) / "frazil-bench-cache"


def table_dir(entries: int, user_span: int) -> Path:
    name = f"plan-v{GENERATOR_VERSION}-{N_MANIFESTS}x{entries}-{SEED:x}-{user_span}"
    return cache_root() / name


def day_of(index: int) -> _dt.date:
    return _dt.date(1970, 1, 1) + _dt.timedelta(days=index)


# --------------------------------------------------------------------------------------------
# Appendix D single-value serialization, one Arrow binary array per column


def _fixed(values: np.ndarray, dtype: str) -> pa.Array:
    """Little-endian fixed-width values as a binary array (no copy through Python objects)."""
    raw = np.ascontiguousarray(values.astype(dtype))
    width = raw.dtype.itemsize
    arr = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(width), len(raw), [None, pa.py_buffer(raw.tobytes())]
    )
    return arr.cast(pa.binary())


def _strings(values: list[str]) -> pa.Array:
    return pa.array(values, pa.string()).cast(pa.binary())  # UTF-8 bytes, no length


def _interleave(columns: list[pa.Array], n: int) -> pa.Array:
    """Row-major order: file 0's 8 values, then file 1's, ... (one map entry per column)."""
    stacked = pa.concat_arrays(columns)
    order = (np.arange(N_COLUMNS)[None, :] * n + np.arange(n)[:, None]).ravel()
    return stacked.take(pa.array(order))


def _map(values: pa.Array, keys: np.ndarray, per_row: int, n: int) -> pa.MapArray:
    offsets = pa.array(np.arange(0, per_row * (n + 1), per_row, dtype=np.int32))
    return pa.MapArray.from_arrays(offsets, pa.array(keys, pa.int32()), values)


# --------------------------------------------------------------------------------------------
# one manifest's entries


def _pick(rng: np.random.Generator, names: list[str], p_all: float, n: int) -> tuple[list, list]:
    """Each file holds every name (bounds first..last) with probability ``p_all``, else one."""
    every = rng.random(n) < p_all
    one = rng.integers(0, len(names), n)
    lower = [names[0] if e else names[i] for e, i in zip(every, one, strict=True)]
    upper = [names[-1] if e else names[i] for e, i in zip(every, one, strict=True)]
    return lower, upper


def _entries(
    rng: np.random.Generator, m: int, n: int, total_files: int, user_span: int, root: Path
) -> tuple[pa.Table, np.ndarray]:
    days = DAY0 + DAYS_PER_MANIFEST * m + rng.integers(0, DAYS_PER_MANIFEST, n)
    counts = rng.integers(10_000, 1_000_000, n)
    id_lo = rng.integers(0, total_files * ID_WIDTH, n)
    id_hi = id_lo + rng.integers(0, ID_WIDTH, n)
    day_us = days.astype(np.int64) * US_PER_DAY
    ts_lo = day_us + rng.integers(0, 3_600_000_000, n)
    ts_hi = day_us + US_PER_DAY - 1 - rng.integers(0, 3_600_000_000, n)
    user_lo = rng.integers(0, user_span, n)
    user_hi = user_lo + rng.integers(0, USER_WIDTH, n)
    cat_lo, cat_hi = _pick(rng, CATEGORIES, P_ALL_CATEGORIES, n)
    amount_lo = rng.random(n) * 100.0
    amount_hi = amount_lo + rng.random(n) * 10_000.0
    qty_lo = rng.integers(1, 5, n)
    qty_hi = qty_lo + rng.integers(0, 1_000, n)
    ctry_lo, ctry_hi = _pick(rng, COUNTRIES, P_ALL_COUNTRIES, n)

    lower = [
        _fixed(id_lo, "<i8"),
        _fixed(ts_lo, "<i8"),
        _fixed(user_lo, "<i8"),
        _strings(cat_lo),
        _fixed(amount_lo, "<f8"),
        _fixed(qty_lo, "<i4"),
        _strings(ctry_lo),
        _fixed(days, "<i4"),
    ]
    upper = [
        _fixed(id_hi, "<i8"),
        _fixed(ts_hi, "<i8"),
        _fixed(user_hi, "<i8"),
        _strings(cat_hi),
        _fixed(amount_hi, "<f8"),
        _fixed(qty_hi, "<i4"),
        _strings(ctry_hi),
        _fixed(days, "<i4"),
    ]
    keys = np.tile(np.arange(1, N_COLUMNS + 1, dtype=np.int32), n)
    nulls = np.zeros((n, N_COLUMNS), np.int64)
    nulls[:, 2] = rng.integers(0, 100, n)  # user_id
    nulls[:, 6] = rng.integers(0, 1_000, n)  # country
    sizes = rng.integers(1_000, 4_000_000, n * N_COLUMNS)
    partition = pa.StructArray.from_arrays(
        [pa.array(days.astype(np.int32)).cast(pa.date32())],
        fields=[pa.field("ts_day", pa.date32(), metadata={"PARQUET:field_id": "1000"})],
    )
    paths = [
        f"{root}/data/ts_day={day_of(int(d))}/{m:03d}-{i:06d}-0001.parquet"
        for i, d in enumerate(days)
    ]
    data_file = pa.StructArray.from_arrays(
        [
            pa.array(np.zeros(n, np.int32)),
            pa.array(paths),
            pa.array(["PARQUET"] * n),
            partition,
            pa.array(counts),
            pa.array(counts * 29),
            _map(pa.array(sizes), keys, N_COLUMNS, n),
            _map(pa.array(np.repeat(counts, N_COLUMNS)), keys, N_COLUMNS, n),
            _map(pa.array(nulls.ravel()), keys, N_COLUMNS, n),
            _map(pa.array(np.zeros(n, np.int64)), np.full(n, 5, np.int32), 1, n),
            _map(_interleave(lower, n), keys, N_COLUMNS, n),
            _map(_interleave(upper, n), keys, N_COLUMNS, n),
            pa.array([[4]] * n, pa.list_(pa.int64())),
            pa.array(np.zeros(n, np.int32)),
        ],
        names=[
            "content",
            "file_path",
            "file_format",
            "partition",
            "record_count",
            "file_size_in_bytes",
            "column_sizes",
            "value_counts",
            "null_value_counts",
            "nan_value_counts",
            "lower_bounds",
            "upper_bounds",
            "split_offsets",
            "sort_order_id",
        ],
    )
    entries = pa.table(
        {
            "status": pa.array(np.ones(n, np.int32)),
            "snapshot_id": pa.array([None] * n, pa.int64()),
            "sequence_number": pa.array([None] * n, pa.int64()),
            "file_sequence_number": pa.array([None] * n, pa.int64()),
            "data_file": data_file,
        }
    )
    return entries, days


def _check_summary(summary: dict, days: np.ndarray, m: int) -> None:
    """The manifest list's partition summary, checked against the days drawn (PyIceberg and
    every planner prune manifests with it, so a wrong one would change the one-day case)."""
    (part,) = summary["partitions"]
    lo, hi = struct.pack("<i", int(days.min())), struct.pack("<i", int(days.max()))
    got = (part["contains_null"], part["lower_bound"], part["upper_bound"])
    if got != (False, lo, hi):
        raise AssertionError(f"manifest {m}: partition summary {got}, expected {(False, lo, hi)}")


def _write(disk: Path, root: Path, entries_per_manifest: int, user_span: int) -> None:
    """Writes the table's files under ``disk``, recording the locations under ``root``."""
    rng = np.random.default_rng(SEED)
    (disk / "metadata").mkdir(parents=True)
    total = N_MANIFESTS * entries_per_manifest
    rows = []
    for m in range(N_MANIFESTS):
        entries, days = _entries(rng, m, entries_per_manifest, total, user_span, root)
        body = fm.write_manifest(
            entries,
            format_version=2,
            schema=json.dumps(SCHEMA),
            partition_spec=json.dumps(SPEC_FIELDS),
            schema_id=0,
            partition_spec_id=0,
        )
        path = root / "metadata" / f"manifest-{m:03d}.avro"
        (disk / "metadata" / path.name).write_bytes(body)
        summary = fm.summarize_manifest(entries)
        _check_summary(summary, days, m)
        rows.append(
            {
                **summary,
                "manifest_path": str(path),
                "manifest_length": len(body),
                "partition_spec_id": 0,
                "content": 0,
                "sequence_number": 1,
                "min_sequence_number": 1,
                "added_snapshot_id": SNAPSHOT_ID,
                "key_metadata": None,
                "first_row_id": None,
            }
        )
    list_path = root / "metadata" / f"snap-{SNAPSHOT_ID}.avro"
    (disk / "metadata" / list_path.name).write_bytes(
        fm.write_manifest_list(
            pa.Table.from_pylist(rows, schema=MANIFEST_FILE_SCHEMA),
            format_version=2,
            snapshot_id=SNAPSHOT_ID,
            sequence_number=1,
        )
    )
    metadata = {
        "format-version": 2,
        "table-uuid": "6f1c2a8e-3b9d-4c52-8f0e-7a4d1e2b0014",
        "location": str(root),
        "last-sequence-number": 1,
        "last-updated-ms": 1_700_000_000_000,
        "last-column-id": N_COLUMNS,
        "current-schema-id": 0,
        "schemas": [SCHEMA],
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": SPEC_FIELDS}],
        "last-partition-id": 1000,
        "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": {},
        "current-snapshot-id": SNAPSHOT_ID,
        "refs": {"main": {"snapshot-id": SNAPSHOT_ID, "type": "branch"}},
        "snapshots": [
            {
                "snapshot-id": SNAPSHOT_ID,
                "sequence-number": 1,
                "timestamp-ms": 1_700_000_000_000,
                "manifest-list": str(list_path),
                "summary": {"operation": "append"},
                "schema-id": 0,
            }
        ],
        "snapshot-log": [],
        "metadata-log": [],
    }
    (disk / "metadata" / "v1.metadata.json").write_text(json.dumps(metadata))
    (disk / "metadata" / "version-hint.text").write_text("1")


def ensure_table(entries_per_manifest: int, user_span: int) -> tuple[str, bool]:
    """The metadata file of the cached table with these parameters, generating it if missing;
    and whether it was generated now."""
    final = table_dir(entries_per_manifest, user_span)
    meta = final / "metadata" / "v1.metadata.json"
    if meta.exists():
        return str(meta), False
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=final.name + ".tmp-", dir=final.parent))
    try:
        # Locations inside the files are the final ones: the directory is renamed when done.
        _write(tmp, final, entries_per_manifest, user_span)
        try:
            tmp.rename(final)
        except OSError:
            if not meta.exists():  # unless another run finished the same table meanwhile
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return str(meta), True
