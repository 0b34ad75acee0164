"""Partition transforms, writes and reads on local Spark: frazil vs the Java reference vs
``pandas_udf``s.

``bucket(16, id)`` over ``spark.range(20M)`` (smoke: 200k), fully aggregated
(``df.select(f).agg(sum)``) so every value is computed, through

- ``frazil.spark.functions.bucket`` (PySpark 3.5: Arrow-backed ``pandas_udf``; 4.1+: ``arrow_udf``),
- a ``pandas_udf`` calling ``mmh3.hash`` per value,
- a ``pandas_udf`` calling ``pyiceberg_core.transform.bucket`` on the batch,
- the Java reference's built-in ``ref.system.bucket`` (Iceberg 1.10.2 on Spark 3.5).

The frazil case is also run under PySpark 4.x (``.venv-spark4``, a child process of this file),
which has no Iceberg runtime jar: the JVM built-in is measured on 3.5 only. Spark's own
``pmod(hash(id), 16)`` (a JVM Murmur3, not Iceberg's bucket) is timed under both versions to
show whether the JVM side itself differs between them.

Then the distributed write and read of the same events (the demo's generator, 5M rows over 14
days; smoke: 50k over 2 days) into a v3 table partitioned by ``day(ts), bucket(16, user_id)``:
``frazil.spark.write`` / ``frazil.spark.read`` vs the Java reference's ``writeTo(...).append()``
/ ``spark.table``.

    .venv/bin/python -m pytest benches/test_spark_bench.py -m benchmark -p no:cacheprovider
    FRAZIL_BENCH_SMOKE=1 .venv/bin/python -m pytest benches/test_spark_bench.py -m benchmark \\
        -p no:cacheprovider

The table is printed at the end and, on a full run, written to benches/spark_results.md.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SMOKE = os.environ.get("FRAZIL_BENCH_SMOKE", "").strip() not in ("", "0")
ROWS = 200_000 if SMOKE else 20_000_000
CHECK_ROWS = 50_000 if SMOKE else 1_000_000  # outputs compared (as a checksum of each value)
IO_ROWS = 50_000 if SMOKE else 5_000_000
IO_DAYS = 2.0 if SMOKE else 14.0  # smoke: 32 partitions instead of 224, fewer tiny files
ROUNDS = 1 if SMOKE else 3
BUCKET_ROUNDS = 1 if SMOKE else 5  # the bucket cases, interleaved (1-3 s each)
WARMUP = 0 if SMOKE else 1
BATCH = 100_000  # spark.sql.execution.arrow.maxRecordsPerBatch, for every Python UDF alike
RESULTS_MD = Path(__file__).with_name("spark_results.md")
ROOT = Path(__file__).resolve().parents[1]
SPARK4_PYTHON = Path(os.environ.get("FRAZIL_SPARK4_VENV", ROOT / ".venv-spark4")) / "bin/python"
CONF = {
    "spark.sql.execution.arrow.maxRecordsPerBatch": str(BATCH),
    "spark.sql.shuffle.partitions": "4",
}

_TIMES: dict[str, dict[str, Any]] = {}  # case -> median, rounds, pyspark, n, note
_NOTES: list[str] = []


def _time(fn: Callable[[], Any], rounds: int = ROUNDS, warmup: int = WARMUP) -> dict[str, Any]:
    for _ in range(warmup):
        fn()
    walls = []
    result = None
    for _ in range(rounds):
        t0 = time.perf_counter()
        result = fn()
        walls.append(time.perf_counter() - t0)
    return {"median": statistics.median(walls), "rounds": rounds, "result": result}


def _time_interleaved(
    fns: dict[str, Callable[[], Any]], rounds: int = BUCKET_ROUNDS, warmup: int = WARMUP
) -> dict[str, dict[str, Any]]:
    """Each case once per round, in turn: a slow drift of the machine (page cache, JIT, other
    load) then falls on every case alike instead of on whichever block of rounds it hit."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    walls: dict[str, list[float]] = {name: [] for name in fns}
    results: dict[str, Any] = {}
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            results[name] = fn()
            walls[name].append(time.perf_counter() - t0)
    return {
        name: {"median": statistics.median(w), "rounds": rounds, "result": results[name]}
        for name, w in walls.items()
    }


# --------------------------------------------------------------------------------------------
# the bucket functions (module-level functions are shipped to the workers by value)


def _mmh3_bucket(ids):
    import struct

    import mmh3
    import pandas as pd

    out = [(mmh3.hash(struct.pack("<q", v)) & 0x7FFFFFFF) % 16 for v in ids.tolist()]
    return pd.Series(out, dtype="int32")


def _pyiceberg_core_bucket(ids):
    import pyarrow as pa
    from pyiceberg_core import transform

    return transform.bucket(pa.Array.from_pandas(ids), 16).to_pandas().astype("int32")


def _pandas_udf(fn):
    import warnings

    from pyspark.sql.functions import pandas_udf

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "distutils Version classes", DeprecationWarning)
        return pandas_udf(fn, "int")


def _no_hash_pandas(ids):
    return (ids % 16).astype("int32")


def _no_hash_arrow(ids):
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.cast(pc.bit_wise_and(ids, 15), pa.int32())


# Not bucket(16, id): what any Python UDF costs here, with no hashing at all.
FLOOR_PANDAS = "floor: pandas_udf returning id % 16"
FLOOR_ARROW = "floor: arrow_udf returning id & 15"
WITH_TRANSFORMS = "frazil with_transforms"
NOT_BUCKET = ("hash(id)", "floor:")
FRAZIL = ("frazil", WITH_TRANSFORMS)


def bucket_frames(df, with_reference: bool) -> dict[str, Any]:
    """Per implementation available in this PySpark: ``df`` as (id, b = bucket(16, id))."""
    from pyspark.sql import functions as F

    from frazil.spark import functions as fs

    cols = {"frazil": fs.bucket(16, df["id"])}
    if with_reference:
        cols["pandas_udf + mmh3"] = _pandas_udf(_mmh3_bucket)(df["id"])
        cols["pandas_udf + pyiceberg-core"] = _pandas_udf(_pyiceberg_core_bucket)(df["id"])
        cols["JVM built-in ref.system.bucket"] = F.expr("ref.system.bucket(16, id)")
    cols["Spark pmod(hash(id), 16)"] = F.expr("pmod(hash(id), 16)")
    if fs.arrow_udf_available():
        from pyspark.sql.functions import arrow_udf

        cols[FLOOR_ARROW] = arrow_udf(_no_hash_arrow, "int")(df["id"])
    else:
        cols[FLOOR_PANDAS] = _pandas_udf(_no_hash_pandas)(df["id"])
    frames = {name: df.select("id", col.alias("b")) for name, col in cols.items()}
    frames[WITH_TRANSFORMS] = fs.with_transforms(df, {"b": ("bucket[16]", "id")})
    return frames


def aggregate(frame) -> int:
    from pyspark.sql import functions as F

    return int(frame.agg(F.sum("b")).collect()[0][0])


def checksum(frame) -> tuple[int, int]:
    """(count, a sum of a hash of (id, bucket)): equal only if the buckets are equal per id."""
    from pyspark.sql import functions as F

    row = frame.agg(F.count("b"), F.sum(F.xxhash64("id", "b") % 1_000_003)).collect()[0]
    return int(row[0]), int(row[1])


def local_session(app: str):
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = (
        SparkSession.builder.master("local[2]")
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
    )
    for k, v in CONF.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _child(rows: int, rounds: int, warmup: int) -> None:
    """Under another PySpark (``python benches/test_spark_bench.py --child ...``): times the
    cases that need no Java reference and prints them as JSON."""
    import pyspark

    spark = local_session("frazil-bench-child")
    df = spark.range(rows, numPartitions=2)
    out: dict[str, Any] = {"pyspark": pyspark.__version__, "times": {}}
    cases = {
        name: (lambda frame=frame: aggregate(frame))
        for name, frame in bucket_frames(df, with_reference=False).items()
    }
    for name, t in _time_interleaved(cases, rounds, warmup).items():
        out["times"][name] = {"median": t["median"], "rounds": rounds, "sum": t["result"]}
    from frazil.spark import functions as fs

    small = spark.range(CHECK_ROWS, numPartitions=2)
    out["checksum"] = list(checksum(small.select("id", fs.bucket(16, "id").alias("b"))))
    out["arrow_udf"] = fs.arrow_udf_available()
    spark.stop()
    print("FRAZIL-BENCH " + json.dumps(out))


def _stream_child(batches: int, rows: int) -> None:
    """Under PySpark 4.x (``--stream-child``): a ``rate-micro-batch`` stream of ``rows`` rows a
    micro-batch into the frazil sink until ``batches`` micro-batches have landed; prints the
    rows and seconds between the first and the last commit as JSON."""
    import tempfile

    import pyspark

    import frazil.spark
    from frazil.catalog import load_catalog
    from frazil.schema import Schema
    from frazil.spark.streaming import last_committed_batch
    from frazil.types import LongType, NestedField, TimestamptzType

    warehouse = tempfile.mkdtemp(prefix="frazil-stream-bench-")
    cat = load_catalog("bench", warehouse=warehouse)
    cat.create_namespace("db")
    cat.create_table(
        "db.events",
        Schema(NestedField(1, "timestamp", TimestamptzType()), NestedField(2, "value", LongType())),
    )
    spark = local_session("frazil-bench-stream")
    frazil.spark.register_data_source(spark)
    query = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", rows)
        .option("numPartitions", 2)
        .load()
        .writeStream.format("frazil")
        .option("catalog", "bench")
        .option("catalog.warehouse", warehouse)
        .option("checkpointLocation", warehouse + "/cp")
        .trigger(processingTime="0 seconds")
        .start("db.events")
    )

    def landed() -> int:
        last = last_committed_batch(cat.load_table("db.events"), str(query.id))
        return -1 if last is None else last

    try:
        while landed() < batches - 1:
            if query.exception() is not None:
                raise RuntimeError(str(query.exception()))
            time.sleep(0.2)
    finally:
        query.stop()
    table = cat.load_table("db.events")
    stamps = sorted(s.timestamp_ms for s in table.snapshots())[:batches]
    landed = table.scan().count()
    spark.stop()
    out = {
        "pyspark": pyspark.__version__,
        "rows": (batches - 1) * rows,
        "seconds": (stamps[-1] - stamps[0]) / 1000,
        "landed": landed,
    }
    print("FRAZIL-BENCH " + json.dumps(out))


# --------------------------------------------------------------------------------------------
# reads of one Java-written table (frazil.spark.read, the data source, Spark's Parquet reader)

READ_TABLE = "bench.read_events"
READ_OK = "read same table: "
# frazil.spark.read's plan of this table is whole Parquet files with nothing left for Iceberg's
# rules, so it is read by Spark's own Parquet reader; this case keeps frazil's own reader
PY_READER = 'frazil.spark.read(reader="frazil"): frazil\'s reader in the Python workers'


def _all_columns_checksum(df) -> tuple[int, int]:
    """(rows, sum of a hash of every column of each row): every value is materialized."""
    from pyspark.sql import functions as F

    row = df.agg(F.count("*"), F.sum(F.xxhash64(*sorted(df.columns)) % 1_000_003)).collect()[0]
    return int(row[0]), int(row[1])


def read_cases(session, warehouse: str, java: bool) -> dict[str, Callable[[], Any]]:
    """Per reader available in this PySpark: a function reading every column of every row of
    the Java-written READ_TABLE (or its data files) into a checksum."""
    import frazil.spark as fspark
    from frazil.catalog import load_catalog

    catalog = load_catalog("bench-read", type="hadoop", warehouse=warehouse)
    files = [t.file.file_path for t in catalog.load_table(READ_TABLE).scan().plan_files()]
    cases = {
        READ_OK + "frazil.spark.read": lambda: _all_columns_checksum(
            fspark.read(session, READ_TABLE, catalog)
        ),
        READ_OK + PY_READER: lambda: _all_columns_checksum(
            fspark.read(session, READ_TABLE, catalog, reader="frazil")
        ),
        READ_OK + "spark.read.parquet (its data files)": lambda: _all_columns_checksum(
            session.read.parquet(*files)
        ),
    }
    if java:
        cases[READ_OK + "Java reference (spark.table)"] = lambda: _all_columns_checksum(
            session.table("ref." + READ_TABLE)
        )
    cases[READ_OK + READ_FLOOR] = _floor_case(session, catalog.load_table(READ_TABLE))
    cases[READ_OK + DECODE_FLOOR] = _decode_floor_case(session, catalog.load_table(READ_TABLE))
    try:
        from pyspark.sql.datasource import DataSource  # noqa: F401  # PySpark 4.0+
    except ImportError:
        return cases
    fspark.register_data_source(session)
    reader = session.read.format("frazil").option("catalog", "bench-read")
    reader = reader.option("catalog.type", "hadoop").option("catalog.warehouse", warehouse)
    cases[READ_OK + 'data source (format("frazil"))'] = lambda: _all_columns_checksum(
        reader.load(READ_TABLE)
    )
    return cases


READ_FLOOR = "floor: mapInArrow yielding the rows from memory-mapped Arrow (no Parquet, no Iceberg)"
FLOOR_PARTITIONS = 7  # as many Spark partitions as frazil.spark.read plans for this table


def _floor_case(session, table) -> Callable[[], Any]:
    """The least any reader running in PySpark's Python workers pays: the same rows, already
    decoded into Spark's Arrow types and written uncompressed to Arrow IPC files (one per Spark
    partition), memory-mapped and yielded by ``mapInArrow``; only the Python-to-JVM transfer
    and Spark's aggregation remain."""
    import tempfile

    import pyarrow as pa

    from frazil.spark.read import spark_arrow_schema, spark_schema, to_spark_batch
    from frazil.spark.write import quiet_pyspark_warnings

    data = table.scan().to_arrow()
    target = spark_arrow_schema(data.schema)
    where = tempfile.mkdtemp(prefix="frazil-read-floor-")
    per = -(-data.num_rows // FLOOR_PARTITIONS)
    for i in range(FLOOR_PARTITIONS):
        with pa.OSFile(f"{where}/{i}.arrow", "wb") as sink, pa.ipc.new_file(sink, target) as w:
            for batch in data.slice(i * per, per).to_batches(max_chunksize=100_000):
                w.write_batch(to_spark_batch(batch, target))

    def gen(batches):
        import pyarrow as pa

        for b in batches:
            for i in b.column(0).to_pylist():
                with pa.memory_map(f"{where}/{i}.arrow") as src:
                    reader = pa.ipc.open_file(src)
                    for k in range(reader.num_record_batches):
                        yield reader.get_batch(k)

    schema = spark_schema(data.schema)

    def floor() -> Any:
        with quiet_pyspark_warnings():
            df = session.range(FLOOR_PARTITIONS, numPartitions=FLOOR_PARTITIONS)
            return _all_columns_checksum(df.mapInArrow(gen, schema))

    return floor


DECODE_FLOOR = "floor + decode: mapInArrow reading the same Parquet files with pyarrow (no Iceberg)"


def _decode_floor_case(session, table) -> Callable[[], Any]:
    """The read floor plus the decoding no reader skips: each of FLOOR_PARTITIONS partitions
    reads its share of the table's Parquet files (balanced by size) with pyarrow and converts
    the batches to Spark's Arrow types; no planning, metrics, deletes or metadata columns."""
    from frazil.spark.read import spark_arrow_schema, spark_schema
    from frazil.spark.write import quiet_pyspark_warnings

    files = sorted(
        ((t.file.file_path, t.file.file_size_in_bytes) for t in table.scan().plan_files()),
        key=lambda f: -f[1],
    )
    bins: list[list[str]] = [[] for _ in range(FLOOR_PARTITIONS)]
    sizes = [0] * FLOOR_PARTITIONS
    for path, size in files:
        i = sizes.index(min(sizes))
        bins[i].append(path.removeprefix("file:"))
        sizes[i] += size
    arrow_schema = table.schema().as_arrow()
    target = spark_arrow_schema(arrow_schema)
    names = target.names

    def gen(batches):
        import pyarrow.parquet as pq

        from frazil.spark.read import to_spark_batch

        for b in batches:
            for i in b.column(0).to_pylist():
                for path in bins[i]:
                    for batch in pq.ParquetFile(path).iter_batches(100_000, columns=names):
                        yield to_spark_batch(batch, target)

    schema = spark_schema(arrow_schema)

    def floor() -> Any:
        with quiet_pyspark_warnings():
            df = session.range(FLOOR_PARTITIONS, numPartitions=FLOOR_PARTITIONS)
            return _all_columns_checksum(df.mapInArrow(gen, schema))

    return floor


def _read_child(warehouse: str, rounds: int, warmup: int) -> None:
    """Under PySpark 4 (``--read-child``): times :func:`read_cases` and prints them as JSON."""
    import pyspark

    spark = local_session("frazil-bench-read-child")
    out: dict[str, Any] = {"pyspark": pyspark.__version__, "times": {}}
    for name, t in _time_interleaved(
        read_cases(spark, warehouse, java=False), rounds, warmup
    ).items():
        out["times"][name] = {"median": t["median"], "rounds": rounds, "sum": t["result"]}
    spark.stop()
    print("FRAZIL-BENCH " + json.dumps(out))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(*(int(a) for a in sys.argv[2:5]))
        sys.exit(0)
    if sys.argv[1:2] == ["--stream-child"]:
        _stream_child(int(sys.argv[2]), int(sys.argv[3]))
        sys.exit(0)
    if sys.argv[1:2] == ["--read-child"]:
        _read_child(sys.argv[2], *(int(a) for a in sys.argv[3:5]))
        sys.exit(0)


import pytest  # noqa: E402
from bench_report import register_report  # noqa: E402

pytestmark = [
    pytest.mark.benchmark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    sys.path.insert(0, str(ROOT / "tests" / "interop"))
    from java_reference import ReferenceUnavailable, reference_session

    # the UDFs are defined in this module, which the Python workers cannot import
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    warehouse = tmp_path_factory.mktemp("spark-bench")
    try:
        session = reference_session(str(warehouse), **CONF)
    except ReferenceUnavailable as e:
        pytest.skip(str(e))
    yield session, warehouse
    session.stop()


IMPLS = [
    "frazil",
    WITH_TRANSFORMS,
    "pandas_udf + mmh3",
    "pandas_udf + pyiceberg-core",
    "JVM built-in ref.system.bucket",
    "Spark pmod(hash(id), 16)",
    FLOOR_PANDAS,
]
RATIO = {*IMPLS, FLOOR_ARROW}
_EXPECTED: dict[str, int] = {}


def test_outputs_agree(spark) -> None:
    """Every implementation gives the same bucket for every id (checksum over CHECK_ROWS)."""
    session, _ = spark
    df = session.range(CHECK_ROWS, numPartitions=2)
    frames = bucket_frames(df, with_reference=True)
    sums = {
        name: checksum(frame)
        for name, frame in frames.items()
        if not any(x in name for x in NOT_BUCKET)
    }
    assert len(set(sums.values())) == 1, sums
    _EXPECTED["checksum"] = next(iter(sums.values()))[1]


def test_bucket_throughput(spark) -> None:
    """Every implementation over the same ids, the rounds interleaved (see _time_interleaved)."""
    session, _ = spark
    df = session.range(ROWS, numPartitions=2)
    frames = bucket_frames(df, with_reference=True)
    cases = {impl: (lambda frame=frames[impl]: aggregate(frame)) for impl in IMPLS}
    import pyspark

    for impl, t in _time_interleaved(cases).items():
        if not any(x in impl for x in NOT_BUCKET):
            expected = _EXPECTED.setdefault("sum", t["result"])
            assert t["result"] == expected, f"{impl}: sum {t['result']} != {expected}"
        _TIMES[f"{impl} @ {pyspark.__version__}"] = {
            "median": t["median"],
            "rounds": t["rounds"],
            "n": ROWS,
            "impl": impl,
            "pyspark": pyspark.__version__,
            "note": {"frazil": "pandas_udf", WITH_TRANSFORMS: "mapInArrow"}.get(impl, ""),
        }


def test_bucket_throughput_pyspark4() -> None:
    if SMOKE and os.environ.get("FRAZIL_BENCH_SPARK4", "") in ("", "0"):
        # a second JVM and Python workers: half a minute, too much for a smoke run
        pytest.skip("smoke mode: set FRAZIL_BENCH_SPARK4=1 to run the PySpark 4 child too")
    if not SPARK4_PYTHON.exists():
        pytest.skip(f"no PySpark 4 environment at {SPARK4_PYTHON} (dev/spark4-env.sh makes it)")
    proc = subprocess.run(
        [str(SPARK4_PYTHON), __file__, "--child", str(ROWS), str(BUCKET_ROUNDS), str(WARMUP)],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=ROOT,
    )
    line = next((x for x in proc.stdout.splitlines() if x.startswith("FRAZIL-BENCH ")), None)
    assert proc.returncode == 0 and line, proc.stderr[-3000:]
    out = json.loads(line.removeprefix("FRAZIL-BENCH "))
    if "checksum" in _EXPECTED:
        assert out["checksum"][1] == _EXPECTED["checksum"], "PySpark 4 frazil buckets differ"
    if "sum" in _EXPECTED:
        assert out["times"]["frazil"]["sum"] == _EXPECTED["sum"]
        assert out["times"][WITH_TRANSFORMS]["sum"] == _EXPECTED["sum"]
    for impl, t in out["times"].items():
        _TIMES[f"{impl} @ {out['pyspark']}"] = {
            "median": t["median"],
            "rounds": t["rounds"],
            "n": ROWS,
            "impl": impl,
            "pyspark": out["pyspark"],
            "note": "arrow_udf" if impl in FRAZIL and out["arrow_udf"] else "",
        }


# --------------------------------------------------------------------------------------------
# distributed write and read


def _events(session):
    from frazil import demo

    return demo.events(session, 0, IO_ROWS, 0.0, IO_DAYS, seed=7, partitions=4)


def _read_checksum(df) -> tuple[int, int]:
    """Every column of every row is materialized: (rows, sum of a hash of the whole row)."""
    from pyspark.sql import functions as F

    cols = sorted(df.columns)
    row = df.agg(F.count("*"), F.sum(F.xxhash64(*cols) % 1_000_003)).collect()[0]
    return int(row[0]), int(row[1])


def test_write_and_read_throughput(spark) -> None:
    import frazil.spark
    from frazil import demo
    from frazil.catalog import load_catalog

    session, warehouse = spark
    catalog = load_catalog("bench", type="filesystem", warehouse=str(warehouse / "frazil"))
    catalog.create_namespace_if_not_exists("bench")
    session.sql("CREATE NAMESPACE IF NOT EXISTS ref.bench")
    props = {"format-version": "3"}

    def frazil_write() -> None:
        if catalog.table_exists("bench.events"):
            catalog.drop_table("bench.events", purge=True)
        catalog.create_table(
            "bench.events", demo.table_schema(), partition_spec=demo.partition_spec(),
            properties=props,
        )  # fmt: skip
        frazil.spark.write(_events(session), "bench.events", catalog)

    def java_write() -> None:
        session.sql("DROP TABLE IF EXISTS ref.bench.events PURGE")
        session.sql(
            "CREATE TABLE ref.bench.events (event_id bigint NOT NULL, user_id bigint, "
            "ts timestamp, event_type string, amount decimal(10,2), country string, "
            "device string) USING iceberg PARTITIONED BY (days(ts), bucket(16, user_id)) "
            "TBLPROPERTIES ('format-version'='3')"
        )
        _events(session).writeTo("ref.bench.events").append()

    def frazil_read() -> tuple[int, int]:
        return _read_checksum(frazil.spark.read(session, "bench.events", catalog))

    def java_read() -> tuple[int, int]:
        return _read_checksum(session.table("ref.bench.events"))

    import pyspark

    results = {}
    cases = {
        "write: frazil.spark.write": frazil_write,
        "write: Java reference (writeTo.append)": java_write,
        "read: frazil.spark.read": frazil_read,
        "read: Java reference (spark.table)": java_read,
    }
    # in turn, after a warm-up round: the first write of a session pays the JVM's warm-up
    # (several seconds), which would otherwise fall on whichever writer runs first
    for name, t in _time_interleaved(cases, *((1, 0) if SMOKE else (3, 1))).items():
        results[name] = t["result"]
        _TIMES[name] = {
            "median": t["median"],
            "rounds": t["rounds"],
            "n": IO_ROWS,
            "impl": name,
            "pyspark": pyspark.__version__,
        }
    # the same rows, whichever wrote and read them
    assert results["read: frazil.spark.read"] == results["read: Java reference (spark.table)"]
    assert results["read: frazil.spark.read"][0] == IO_ROWS
    files = {
        "frazil": len(list(catalog.load_table("bench.events").scan().plan_files())),
        "Java": session.sql("SELECT count(*) FROM ref.bench.events.data_files").collect()[0][0],
    }
    _NOTES.append(
        f"- write/read: {IO_ROWS:,} events (the demo's generator: 7 columns, {IO_DAYS:g} days), "
        f"v3, partitioned by day(ts), bucket(16, user_id); data files written: frazil "
        f"{files['frazil']}, Java {files['Java']}; both readers give the same row checksum. "
        "Each write creates the table anew; each read aggregates a hash of every column."
    )


def test_dynamic_overwrite_throughput(spark) -> None:
    """The same events again, as a dynamic overwrite (every partition replaced): frazil's
    ``overwrite_mode="dynamic"`` vs the Java reference's ``overwritePartitions``; then the
    issue's write target, from the append rows of ``test_write_and_read_throughput``."""
    import pyspark

    import frazil.spark
    from frazil.catalog import load_catalog

    session, warehouse = spark
    catalog = load_catalog("bench", type="filesystem", warehouse=str(warehouse / "frazil"))
    if not catalog.table_exists("bench.events"):
        pytest.skip("needs the tables test_write_and_read_throughput writes")

    def frazil_overwrite() -> None:
        frazil.spark.write(
            _events(session), "bench.events", catalog, "overwrite", overwrite_mode="dynamic"
        )

    def java_overwrite() -> None:
        _events(session).writeTo("ref.bench.events").overwritePartitions()

    for name, fn in (
        ("write: frazil.spark.write, dynamic overwrite", frazil_overwrite),
        ("write: Java reference (overwritePartitions)", java_overwrite),
    ):
        t = _time(fn, rounds=1 if SMOKE else 2, warmup=0)
        _TIMES[name] = {
            "median": t["median"],
            "rounds": t["rounds"],
            "n": IO_ROWS,
            "impl": name,
            "pyspark": pyspark.__version__,
        }
    counts = {
        "frazil": catalog.load_table("bench.events").scan().count(),
        "Java": session.table("ref.bench.events").count(),
    }
    assert counts["frazil"] == counts["Java"] == IO_ROWS
    ours, java = _t("write: frazil.spark.write"), _t("write: Java reference (writeTo.append)")
    if ours and java:
        _NOTES.append(
            f"- Target (issue 28): frazil.spark.write at least 2x faster than the Java runtime "
            f"writing the same DataFrame (3.5): {'PASS' if java / ours >= 2 else 'FAIL'} "
            f"(Java {java:.2f} s / frazil {ours:.2f} s = {java / ours:.2f})"
        )


# --------------------------------------------------------------------------------------------
# distributed maintenance: compaction of a small-files table, orphan listing (3.5, beside Java)

COMPACT_APPENDS = 4 if SMOKE else 20


def test_maintenance_throughput(spark) -> None:
    """The same events appended in COMPACT_APPENDS slices (many small files per partition),
    then compacted by ``frazil.spark.rewrite_data_files`` and by the Java reference's
    ``rewrite_data_files`` procedure; then ``frazil.spark.remove_orphan_files`` and Java's
    ``remove_orphan_files`` (dry runs with the default 3-day threshold: both list the whole
    table and find nothing). Only the maintenance call is timed; both tables hold the same rows."""
    import pyspark
    from pyspark.sql import functions as F

    import frazil.spark
    from frazil import demo
    from frazil.catalog import load_catalog

    session, warehouse = spark
    catalog = load_catalog("bench", type="filesystem", warehouse=str(warehouse / "frazil"))
    catalog.create_namespace_if_not_exists("bench")
    session.sql("CREATE NAMESPACE IF NOT EXISTS ref.bench")
    slices = _events(session).withColumn("slice", F.col("event_id") % COMPACT_APPENDS)

    def setup_frazil() -> Any:
        if catalog.table_exists("bench.compact"):
            catalog.drop_table("bench.compact", purge=True)
        catalog.create_table(
            "bench.compact", demo.table_schema(), partition_spec=demo.partition_spec(),
            properties={"format-version": "3"},
        )  # fmt: skip
        for i in range(COMPACT_APPENDS):
            part = slices.where(F.col("slice") == i).drop("slice")
            frazil.spark.write(part, "bench.compact", catalog)
        return catalog.load_table("bench.compact")

    def setup_java() -> None:
        session.sql("DROP TABLE IF EXISTS ref.bench.compact PURGE")
        session.sql(
            "CREATE TABLE ref.bench.compact (event_id bigint NOT NULL, user_id bigint, "
            "ts timestamp, event_type string, amount decimal(10,2), country string, "
            "device string) USING iceberg PARTITIONED BY (days(ts), bucket(16, user_id)) "
            "TBLPROPERTIES ('format-version'='3')"
        )
        for i in range(COMPACT_APPENDS):
            slices.where(F.col("slice") == i).drop("slice").writeTo("ref.bench.compact").append()

    rounds = 1 if SMOKE else 2
    walls: dict[str, list[float]] = {}
    files: dict[str, tuple[int, int]] = {}
    for _ in range(rounds):
        table = setup_frazil()
        before = len(list(table.scan().plan_files()))
        t0 = time.perf_counter()
        frazil.spark.rewrite_data_files(session, table)
        walls.setdefault("compact: frazil.spark.rewrite_data_files", []).append(
            time.perf_counter() - t0
        )
        table = catalog.load_table("bench.compact")
        files["frazil"] = (before, len(list(table.scan().plan_files())))
        t0 = time.perf_counter()
        found = frazil.spark.remove_orphan_files(session, table, dry_run=True)
        walls.setdefault("orphans: frazil.spark.remove_orphan_files (dry run)", []).append(
            time.perf_counter() - t0
        )
        assert list(found) == []

        setup_java()
        before = session.sql("SELECT count(*) FROM ref.bench.compact.data_files").collect()[0][0]
        t0 = time.perf_counter()
        session.sql("CALL ref.system.rewrite_data_files(table => 'bench.compact')").collect()
        walls.setdefault("compact: Java reference (rewrite_data_files)", []).append(
            time.perf_counter() - t0
        )
        after = session.sql("SELECT count(*) FROM ref.bench.compact.data_files").collect()[0][0]
        files["Java"] = (before, after)
        t0 = time.perf_counter()
        orphans = session.sql(
            "CALL ref.system.remove_orphan_files(table => 'bench.compact', dry_run => true)"
        ).collect()
        walls.setdefault("orphans: Java reference (remove_orphan_files, dry run)", []).append(
            time.perf_counter() - t0
        )
        assert orphans == []
    for name, ws in walls.items():
        _TIMES[name] = {
            "median": statistics.median(ws),
            "rounds": rounds,
            "n": IO_ROWS,
            "impl": name,
            "pyspark": pyspark.__version__,
        }
    ours = _read_checksum(frazil.spark.read(session, "bench.compact", catalog))
    assert ours == _read_checksum(session.table("ref.bench.compact"))
    assert ours[0] == IO_ROWS
    _NOTES.append(
        f"- maintenance: the {IO_ROWS:,} events appended in {COMPACT_APPENDS} slices; data files "
        f"before/after compaction: frazil {files['frazil'][0]}/{files['frazil'][1]}, Java "
        f"{files['Java'][0]}/{files['Java'][1]}; both tables read the same row checksum after "
        "it. The orphan rows are dry runs over the compacted tables (nothing to find)."
    )


# --------------------------------------------------------------------------------------------
# the streaming sink (PySpark 4.x only: the Python data source API)

STREAM_BATCHES = 5 if SMOKE else 20
STREAM_ROWS = 2_000 if SMOKE else 200_000  # per micro-batch


def test_streaming_sink_throughput_pyspark4() -> None:
    """Rows/s of ``writeStream.format("frazil")`` between its first and last micro-batch
    commit (each micro-batch: executors write the files, the driver commits one snapshot)."""
    if SMOKE and os.environ.get("FRAZIL_BENCH_SPARK4", "") in ("", "0"):
        pytest.skip("smoke mode: set FRAZIL_BENCH_SPARK4=1 to run the PySpark 4 child too")
    if not SPARK4_PYTHON.exists():
        pytest.skip(f"no PySpark 4 environment at {SPARK4_PYTHON} (dev/spark4-env.sh makes it)")
    proc = subprocess.run(
        [str(SPARK4_PYTHON), __file__, "--stream-child", str(STREAM_BATCHES), str(STREAM_ROWS)],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=ROOT,
    )
    line = next((x for x in proc.stdout.splitlines() if x.startswith("FRAZIL-BENCH ")), None)
    assert proc.returncode == 0 and line, proc.stderr[-3000:]
    out = json.loads(line.removeprefix("FRAZIL-BENCH "))
    assert out["landed"] >= STREAM_BATCHES * STREAM_ROWS
    _TIMES[f"frazil streaming sink @ {out['pyspark']}"] = {
        "median": out["seconds"],
        "rounds": 1,
        "n": out["rows"],
        "impl": "frazil streaming sink",
        "pyspark": out["pyspark"],
        "note": f"{STREAM_BATCHES - 1} micro-batches of {STREAM_ROWS:,} rows after the first",
    }


def test_read_throughput(spark) -> None:
    """One table written by the Java reference (the write/read events), read by every reader
    on PySpark 3.5 here and on PySpark 4 in a child process; all give the same checksum."""
    import pyspark

    session, warehouse = spark
    session.sql("CREATE NAMESPACE IF NOT EXISTS ref.bench")
    session.sql("DROP TABLE IF EXISTS ref." + READ_TABLE + " PURGE")
    session.sql(
        "CREATE TABLE ref." + READ_TABLE + " (event_id bigint NOT NULL, user_id bigint, "
        "ts timestamp, event_type string, amount decimal(10,2), country string, "
        "device string) USING iceberg PARTITIONED BY (days(ts), bucket(16, user_id)) "
        "TBLPROPERTIES ('format-version'='3')"
    )
    _events(session).writeTo("ref." + READ_TABLE).append()
    results = {}
    cases = read_cases(session, str(warehouse), java=True)
    for name, t in _time_interleaved(cases, *((1, 0) if SMOKE else (5, 1))).items():
        results[name] = t["result"]
        _TIMES[f"{name} @ {pyspark.__version__}"] = {
            "median": t["median"],
            "rounds": t["rounds"],
            "n": IO_ROWS,
            "impl": name,
            "pyspark": pyspark.__version__,
        }
    assert len(set(results.values())) == 1, results
    assert next(iter(results.values()))[0] == IO_ROWS
    import frazil.spark as fspark
    from frazil.catalog import load_catalog

    catalog = load_catalog("bench-read", type="hadoop", warehouse=str(warehouse))
    parts = fspark.read(session, READ_TABLE, catalog).rdd.getNumPartitions()
    py_parts = fspark.read(session, READ_TABLE, catalog, reader="frazil").rdd.getNumPartitions()
    java_parts = session.table("ref." + READ_TABLE).rdd.getNumPartitions()
    _NOTES.append(
        f"- read same table: {IO_ROWS:,} events written by the Java reference (as in write/read); "
        f"Spark partitions: frazil.spark.read {parts} (Spark's Parquet reader, its own split "
        f"rules), frazil's reader {py_parts} (Java's split rules without its adaptive shrinking "
        f"below the split size), Java {java_parts}; PySpark costs tens of ms of CPU per Python "
        "task, so frazil's reader keeps partitions few."
    )
    if not SPARK4_PYTHON.exists():
        _NOTES.append(f"- reads on PySpark 4: not measured (no {SPARK4_PYTHON})")
        _NOTES.extend(_read_targets())
        return
    rounds, warmup = (1, 0) if SMOKE else (5, 1)
    proc = subprocess.run(
        [str(SPARK4_PYTHON), __file__, "--read-child", str(warehouse), str(rounds), str(warmup)],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=ROOT,
    )
    line = next((x for x in proc.stdout.splitlines() if x.startswith("FRAZIL-BENCH ")), None)
    assert proc.returncode == 0 and line, proc.stderr[-3000:]
    out = json.loads(line.removeprefix("FRAZIL-BENCH "))
    for name, t in out["times"].items():
        assert tuple(t["sum"]) == next(iter(results.values())), name
        _TIMES[f"{name} @ {out['pyspark']}"] = {
            "median": t["median"],
            "rounds": t["rounds"],
            "n": IO_ROWS,
            "impl": name,
            "pyspark": out["pyspark"],
        }
    _NOTES.extend(_read_targets())


def _read_targets() -> list[str]:
    """The issue's read targets, from the rows of test_read_throughput."""
    out = ["", "Read targets (one Java-written table, every column of every row hashed):", ""]
    fr3 = _find(READ_OK + "frazil.spark.read", "3.")
    java = _find(READ_OK + "Java reference (spark.table)", "3.")
    if fr3 and java:
        out.append(
            f"- frazil.spark.read at least as fast as Java's spark.table on PySpark 3.5: "
            f"{'PASS' if fr3 <= java else 'FAIL'} ({fr3:.2f} s vs {java:.2f} s)"
        )
    out.append(
        "  (the plan is whole Parquet files with no deletes or residual filter: "
        "frazil.spark.read hands them to Spark's Parquet reader, matched by field id)"
    )
    py3 = _find(READ_OK + PY_READER, "3.")
    floor3 = _find(READ_OK + READ_FLOOR, "3.")
    if py3 and floor3:
        out.append(
            f"  (frazil's own reader in the Python workers, for plans Spark's reader cannot "
            f"take, {py3:.2f} s; the floor of any reader there, {FLOOR_PARTITIONS} "
            f"partitions yielding pre-decoded rows, takes {floor3:.2f} s on 3.5: "
            f"{py3 / floor3:.2f}x it)"
        )
    decode3 = _find(READ_OK + DECODE_FLOOR, "3.")
    if py3 and decode3:
        out.append(
            f"  (with the Parquet decoding added, pyarrow reading the same files in as many "
            f"partitions: {decode3:.2f} s on 3.5; frazil's reader is {py3 / decode3:.2f}x that)"
        )
    parquet = _find(READ_OK + "spark.read.parquet (its data files)", "4.")
    for name in ("frazil.spark.read", PY_READER, 'data source (format("frazil"))'):
        t = _find(READ_OK + name, "4.")
        if t and parquet:
            out.append(
                f"- {name} within 1.25x of spark.read.parquet on PySpark 4: "
                f"{'PASS' if t <= 1.25 * parquet else 'FAIL'} ({t / parquet:.2f}x)"
            )
    return out


# --------------------------------------------------------------------------------------------
# the report


def _t(key: str) -> float | None:
    t = _TIMES.get(key)
    return None if t is None else t["median"]


def _find(impl: str, major: str) -> float | None:
    for t in _TIMES.values():
        if t["impl"] == impl and str(t["pyspark"]).startswith(major):
            return t["median"]
    return None


def _report() -> list[str]:
    import pyarrow

    import frazil

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        f"- date: {_dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; machine: "
        f"{platform.machine()}, {os.cpu_count()} logical CPUs, load average at the end {load}",
        f"- frazil {frazil.__version__} ({frazil._native.build_profile}), Python "
        f"{platform.python_version()}, pyarrow {pyarrow.__version__}; Spark local[2], "
        f"{BATCH:,} rows per Arrow batch for every Python UDF",
        f"- median wall time of {ROUNDS} round(s) after {WARMUP} warm-up; bucket cases: "
        f"`df.select(f).agg(sum)` over `spark.range({ROWS:,})` in 2 partitions, "
        f"{BUCKET_ROUNDS} rounds interleaved across the cases after {WARMUP} warm-up",
        "",
        "| case | PySpark | rows | seconds | M rows/s | vs JVM built-in (3.5) |",
        "|---|---|---|---|---|---|",
    ]
    jvm = _find("JVM built-in ref.system.bucket", "3.")
    for t in _TIMES.values():
        s = t["median"]
        ratio = f"{s / jvm:.2f}x the time" if jvm and t["impl"] in RATIO else "—"
        name = t["impl"] + (f" ({t['note']})" if t.get("note") else "")
        lines.append(
            f"| {name} | {t['pyspark']} | {t['n']:,} | {s:.2f} | {t['n'] / s / 1e6:.2f} | {ratio} |"
        )
    lines += ["", "Targets (from the issue):", ""]
    f4 = _find("frazil", "4.")
    floor4 = _find(FLOOR_ARROW, "4.")
    if jvm and f4:
        ok = f4 <= 2 * jvm
        lines.append(
            f"- frazil on PySpark 4.x within 2x of the JVM built-in (measured on 3.5: no Iceberg "
            f"runtime for Spark 4 here): {'PASS' if ok else 'FAIL'} ({f4 / jvm:.2f}x the time)"
            + (
                f"; an arrow_udf that only computes `id & 15` takes {floor4:.2f} s "
                f"({floor4 / jvm:.2f}x), so no Python UDF reaches 2x on this machine"
                if floor4 and floor4 > 2 * jvm
                else ""
            )
        )
    else:
        lines.append("- frazil on PySpark 4.x within 2x of the JVM built-in: not measured")
    pandas = [_find(i, "3.") for i in IMPLS if i.startswith("pandas_udf")]
    pandas = [p for p in pandas if p]
    floor35 = _find(FLOOR_PANDAS, "3.")
    for impl, how in (
        ("frazil", "the Column function (a pandas_udf on 3.5)"),
        (WITH_TRANSFORMS, "`with_transforms` (mapInArrow on 3.5)"),
    ):
        f35 = _find(impl, "3.")
        if not (f35 and pandas):
            continue
        speedup = min(pandas) / f35
        lines.append(
            f"- frazil at least 3x faster than the pandas_udf variants on 3.5, {how}: "
            f"{'PASS' if speedup >= 3 else 'FAIL'} ({speedup:.1f}x faster than the fastest)"
        )
    if floor35 and pandas:
        lines.append(
            f"  (a pandas_udf computing only `id % 16` takes {floor35:.2f} s: "
            f"{min(pandas) / floor35:.1f}x faster than the fastest variant, the most any "
            "pandas_udf can be)"
        )
    h35, h4 = _find("Spark pmod(hash(id), 16)", "3."), _find("Spark pmod(hash(id), 16)", "4.")
    notes = [
        "",
        "Notes:",
        "",
        "- The JVM built-in is Iceberg's `system.bucket` from iceberg-spark-runtime-3.5 1.10.2; "
        "there is no Spark 4 runtime jar in this environment, so the 4.x comparison divides "
        "frazil's 4.x time by the built-in's 3.5 time.",
    ]
    if h35 and h4:
        notes.append(
            f"- Spark's own `pmod(hash(id), 16)` (JVM Murmur3, whole-stage codegen) takes "
            f"{h35:.2f} s on 3.5 and {h4:.2f} s on 4.x: the JVM side of the two versions is "
            f"{'about the same' if 0.67 < h4 / h35 < 1.5 else 'not the same'} speed here."
        )
    notes.append(
        "- `with_transforms` adds the column to the DataFrame (`df` here is `spark.range`, one "
        "column); the floor cases compute no bucket and are not checked."
    )
    notes.append(
        "- Every bucket implementation gives the same sum, and the same checksum of "
        f"(id, bucket) over the first {CHECK_ROWS:,} ids (tests `test_outputs_agree`, and the "
        "PySpark 4 child's own checksum)."
    )
    return [*lines, *notes, *_NOTES]


TITLE = "Spark: bucket(16, id), distributed write and read"
SMOKE_NOTE = " (SMOKE MODE: numbers are meaningless)"


@pytest.fixture(scope="module", autouse=True)
def _register_report(request: pytest.FixtureRequest) -> None:
    register_report(
        request,
        "frazil-spark-bench-report",
        lambda: TITLE + (SMOKE_NOTE if SMOKE else ""),
        lambda: _report() if _TIMES else [],
        results_md=None if SMOKE else RESULTS_MD,
        heading="Spark: frazil's transforms, writes and reads vs the Java reference",
        command=".venv/bin/python -m pytest benches/test_spark_bench.py -m benchmark "
        "-p no:cacheprovider",
    )
