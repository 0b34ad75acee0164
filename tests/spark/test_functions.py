"""frazil.spark.functions and frazil.spark.register on a local Spark (PySpark 3.5 and 4.x).

Expected values come from the spec's definitions, written out below independently of frazil
(a pure-Python Murmur3 checked against the spec's own hash examples, floor arithmetic for
truncate and the time transforms); expected types are those of the Java reference's Spark
functions (Iceberg's BucketFunction, TruncateFunction, YearsFunction, ... in Spark 3.5:
int, the source type, int, int, date, int). tests/interop/test_spark_functions_java.py compares
against Java itself over 1M rows.

The input goes to Spark as a Parquet file written by pyarrow, so every Spark type gets exact
values: tinyint and smallint (Parquet INT(8)/INT(16)), decimals, dates from year 1 to 9999,
timestamps (Spark's timestamp = Iceberg's timestamptz) and timestamp_ntz (= timestamp) with
pre-epoch sub-second values, unicode strings, binaries; with nulls in every column.
"""

from __future__ import annotations

import datetime as dt
import random
import struct
from decimal import Context, Decimal

import pytest
from peers import import_peer

pa = import_peer("pyarrow")
pq = import_peer("pyarrow.parquet")

import frazil.spark  # noqa: E402
from frazil.exceptions import InvalidArgumentError  # noqa: E402
from frazil.spark import functions as fs  # noqa: E402

pytestmark = [
    pytest.mark.spark,
    # PySpark leaves sockets of its py4j/collect plumbing to the garbage collector
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

N_RANDOM = 300
EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DAY = dt.date(1970, 1, 1)
DAY_US = 86_400_000_000
WIDE = Context(prec=80)  # decimal's default 28 digits would round 38-digit values
HOUR_US = 3_600_000_000

# ============================================================================================
# The spec's definitions, independently of frazil


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """Murmur3 x86 32-bit, as a signed int (the spec's bucket hash)."""
    c1, c2, mask = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF
    h = seed
    n = len(data) // 4 * 4
    for (k,) in struct.iter_unpack("<I", data[:n]):
        k = (k * c1) & mask
        k = ((k << 15) | (k >> 17)) & mask
        k = (k * c2) & mask
        h ^= k
        h = ((h << 13) | (h >> 19)) & mask
        h = (h * 5 + 0xE6546B64) & mask
    tail = data[n:]
    if tail:
        k = int.from_bytes(tail, "little")
        k = (k * c1) & mask
        k = ((k << 15) | (k >> 17)) & mask
        k = (k * c2) & mask
        h ^= k
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def hash_bytes(kind: str, v) -> bytes:
    if kind in ("int", "date", "timestamp"):  # ints, dates (days), timestamps (micros): as long
        return struct.pack("<q", v)
    if kind == "decimal":  # unscaled, minimal big-endian two's complement
        size = ((v if v >= 0 else ~v).bit_length() + 8) // 8
        return v.to_bytes(size, "big", signed=True)
    if kind == "string":
        return v.encode("utf-8")
    return bytes(v)


def spec_bucket(kind: str, n: int, v):
    return None if v is None else (murmur3_32(hash_bytes(kind, v)) & 0x7FFFFFFF) % n


def wrap(v: int, bits: int) -> int:
    half = 1 << (bits - 1)
    return (v + half) % (1 << bits) - half


def spec_truncate(kind: str, w: int, v, bits: int = 64, precision: int = 38):
    if v is None:
        return None
    if kind == "int":  # Java computes in int/long and narrows, so out-of-range results wrap
        return wrap(v - v % w, bits)
    if kind == "decimal":  # unscaled; Spark stores a result outside the precision as null
        out = v - v % w
        return None if abs(out) >= 10**precision else out
    return v[:w]  # code points of a str, bytes of a bytes


def spec_time(fn: str, kind: str, v):
    if v is None:
        return None
    if kind == "date":
        day = v
        moment = EPOCH + dt.timedelta(days=v)
    else:
        day = v // DAY_US
        moment = EPOCH + dt.timedelta(microseconds=v)
    if fn == "years":
        return moment.year - 1970
    if fn == "months":
        return (moment.year - 1970) * 12 + moment.month - 1
    if fn == "days":
        return day
    return v // HOUR_US


def test_murmur3_matches_the_spec_examples():
    # spec, "Appendix B: 32-bit Hash Requirements"
    assert murmur3_32(hash_bytes("int", 34)) == 2017239379
    assert murmur3_32(hash_bytes("decimal", 1420)) == -500754589
    assert murmur3_32(hash_bytes("date", 17486)) == -653330422
    assert murmur3_32(hash_bytes("timestamp", 1510871468000000)) == -2047944441
    assert murmur3_32(hash_bytes("string", "iceberg")) == 1210000089
    assert murmur3_32(hash_bytes("binary", b"\x00\x01\x02\x03")) == -188683207


# ============================================================================================
# The input: one Parquet file, a column per Spark type


# column -> (Spark type, kind for the spec helpers, bits or precision, Arrow type, edge cases)
def _ts(*args) -> int:
    delta = dt.datetime(*args) - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


COLUMNS = {
    "c_tinyint": ("tinyint", "int", 8, pa.int8(), [0, 1, -1, 9, -9, 10, -10, 127, -128, -127]),
    "c_smallint": ("smallint", "int", 16, pa.int16(), [0, -1, 32767, -32768, -32761, 999]),
    "c_int": ("int", "int", 32, pa.int32(), [0, 1, -1, 34, 2**31 - 1, -(2**31), -(2**31) + 5]),
    "c_bigint": (
        "bigint",
        "int",
        64,
        pa.int64(),
        [0, -1, 34, 2**63 - 1, -(2**63), 2**53 + 1, -(2**53) - 1, -(2**63) + 3],
    ),
    "c_decimal_9_2": (
        "decimal(9,2)",
        "decimal",
        9,
        pa.decimal128(9, 2),
        [0, 1, -1, 1420, 10**9 - 1, -(10**9) + 1, -5, 5],
    ),
    "c_decimal_38_10": (
        "decimal(38,10)",
        "decimal",
        38,
        pa.decimal128(38, 10),
        [0, -1, 10**38 - 1, -(10**38) + 1, -(10**37), 12345678901234567890123],
    ),
    "c_decimal_3_2": ("decimal(3,2)", "decimal", 3, pa.decimal128(3, 2), [-999, 999, -991, -1]),
    "c_date": (
        "date",
        "date",
        None,
        pa.date32(),
        [0, -1, 1, 17486, -719162, 2932896, -365, -366, -719162 + 59],
    ),
    "c_timestamp": (
        "timestamp",
        "timestamp",
        None,
        pa.timestamp("us", tz="UTC"),
        [
            0,
            -1,
            1,
            1510871468000000,
            -HOUR_US,
            -HOUR_US - 1,
            -DAY_US + 1,
            _ts(1, 1, 1),
            _ts(9999, 12, 31, 23, 59, 59, 999999),
            _ts(1900, 2, 28, 23, 59, 59, 500000),
        ],
    ),
    "c_timestamp_ntz": (
        "timestamp_ntz",
        "timestamp",
        None,
        pa.timestamp("us"),
        [0, -1, 1510871468000000, -DAY_US - 1, _ts(1, 1, 1), _ts(9999, 12, 31, 23, 59, 59)],
    ),
    "c_string": (
        "string",
        "string",
        None,
        pa.string(),
        ["", "a", "iceberg", "é", "😀", "aé😀中xyz", "\U0010ffff\U0010ffff", "ab\x00c", "中文字"],
    ),
    "c_binary": (
        "binary",
        "binary",
        None,
        pa.binary(),
        [b"", b"\x00\x01\x02\x03", b"\xff" * 30, b"\x00", b"abc"],
    ),
}


def _random_value(rng: random.Random, kind: str, size, spark_type: str):
    if kind == "int":
        return rng.randrange(-(2 ** (size - 1)), 2 ** (size - 1))
    if kind == "decimal":
        return rng.randrange(-(10**size) + 1, 10**size) // 10 ** rng.randrange(0, size)
    if kind == "date":
        return rng.randrange(-719162, 2932897)
    if kind == "timestamp":
        if rng.random() < 0.5:
            return rng.randrange(-5 * DAY_US, 5 * DAY_US)
        return rng.randrange(_ts(1, 1, 1), _ts(9999, 12, 31, 23, 59, 59, 999999))
    if kind == "string":
        alphabet = "aZ09 é€中😀\U0010ffff"
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))
    return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 20)))


def _arrow_values(kind: str, arrow_type, raw: list):
    if kind == "decimal":
        scale = arrow_type.scale
        return pa.array(
            [None if v is None else Decimal(v).scaleb(-scale, WIDE) for v in raw], arrow_type
        )
    return pa.array(raw, arrow_type)


@pytest.fixture(scope="module")
def data(spark, tmp_path_factory):
    """(raw values per column, the Spark DataFrame). Row i of every column is raw[col][i]."""
    rng = random.Random(20260)
    raws = {}
    for name, (spark_type, kind, size, _arrow, edges) in COLUMNS.items():
        values = [None, *edges]
        values += [_random_value(rng, kind, size, spark_type) for _ in range(N_RANDOM)]
        values += [None] * 5
        raws[name] = values
    length = max(len(v) for v in raws.values())
    for name, values in raws.items():  # pad to one length with more random values and nulls
        spark_type, kind, size, _arrow, _ = COLUMNS[name]
        while len(values) < length:
            values.append(None if len(values) % 3 else _random_value(rng, kind, size, spark_type))
    table = pa.table(
        {
            "id": pa.array(range(length), pa.int32()),
            **{
                name: _arrow_values(kind, arrow_type, raws[name])
                for name, (_, kind, _, arrow_type, _) in COLUMNS.items()
            },
        }
    )
    path = tmp_path_factory.mktemp("spark_functions") / "values.parquet"
    pq.write_table(table, path)
    # small Arrow batches, so that every function runs over many batches per task
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "64")
    df = spark.read.parquet(str(path)).repartition(3)
    for name, (spark_type, *_rest) in COLUMNS.items():
        assert df.schema[name].dataType.simpleString() == spark_type
    return raws, df


def collect_sorted(df, *cols):
    rows = df.select("id", *cols).collect()
    rows.sort(key=lambda r: r[0])
    return rows


def as_raw(v):
    """A collected result as the spec helpers' raw value."""
    if isinstance(v, dt.date):
        return (v - EPOCH_DAY).days
    if isinstance(v, bytearray):
        return bytes(v)
    return v


def unscaled(v: Decimal | None, scale: int):
    return None if v is None else int(v.scaleb(scale, WIDE))


# ============================================================================================
# Values and types


BUCKETS = [1, 16, 1009, 2**31 - 1]
WIDTHS = [1, 3, 10, 1000]


def compare(label: str, want: list, got: list) -> None:
    bad = [(i, w, g) for i, (w, g) in enumerate(zip(want, got, strict=True)) if w != g]
    assert not bad, f"{label}: {len(bad)} differences, e.g. (row, want, got) {bad[:10]}"


@pytest.mark.parametrize("name", list(COLUMNS))
def test_bucket(data, name):
    raws, df = data
    spark_type, kind, *_ = COLUMNS[name]
    cols = [fs.bucket(n, name).alias(f"b{n}") for n in BUCKETS]
    out = df.select("id", *cols)
    assert [f.dataType.simpleString() for f in out.schema.fields[1:]] == ["int"] * len(BUCKETS)
    rows = collect_sorted(out, *[f"b{n}" for n in BUCKETS])
    for j, n in enumerate(BUCKETS):
        want = [spec_bucket(kind, n, v) for v in raws[name]]
        compare(f"bucket({n}, {spark_type})", want, [r[j + 1] for r in rows])


@pytest.mark.parametrize("name", ["c_tinyint", "c_smallint", "c_int", "c_bigint"])
def test_non_nullable_integers(data, spark, name):
    """A column known to be a non-nullable integer reaches the pandas_udf (PySpark 3.5/4.0)
    unmarked, as the NumPy array PySpark makes of it (exact for integers without nulls), so
    Spark builds no struct per row; the values are the spec's all the same."""
    from pyspark.sql.types import LongType, StructField, StructType, _parse_datatype_string

    raws, _ = data
    spark_type, kind, size, *_ = COLUMNS[name]
    values = [v for v in raws[name] if v is not None]
    schema = StructType(
        [
            StructField("id", LongType(), False),
            StructField("v", _parse_datatype_string(spark_type), False),
        ]
    )
    df = spark.createDataFrame(list(enumerate(values)), schema).repartition(3)
    assert df.schema["v"].nullable is False
    cols = [fs.bucket(n, df["v"]).alias(f"b{n}") for n in BUCKETS]
    cols += [fs.truncate(w, df["v"]).alias(f"t{w}") for w in WIDTHS]
    out = df.select("id", *cols)
    plan = out._jdf.queryExecution().executedPlan().toString()
    marked = "__frazil_arrow_value__" in plan
    assert marked is False
    rows = collect_sorted(out, *[f"b{n}" for n in BUCKETS], *[f"t{w}" for w in WIDTHS])
    for j, n in enumerate(BUCKETS):
        want = [spec_bucket(kind, n, v) for v in values]
        compare(f"bucket({n}, {spark_type} not null)", want, [r[j + 1] for r in rows])
    for j, w in enumerate(WIDTHS, start=len(BUCKETS)):
        want = [spec_truncate(kind, w, v, bits=size) for v in values]
        compare(f"truncate({w}, {spark_type} not null)", want, [r[j + 1] for r in rows])
    # a nullable column of the same type is marked on the pandas path
    nullable = spark.createDataFrame(list(enumerate(values)), f"id bigint, v {spark_type}")
    plan = nullable.select(fs.bucket(4, nullable["v"]))._jdf.queryExecution().executedPlan()
    assert ("__frazil_arrow_value__" in plan.toString()) is not fs.arrow_udf_available()


TRUNCATABLE = [n for n, c in COLUMNS.items() if c[1] in ("int", "decimal", "string", "binary")]


@pytest.mark.parametrize("name", TRUNCATABLE)
def test_truncate(data, name):
    raws, df = data
    spark_type, kind, size, arrow_type, _ = COLUMNS[name]
    # by name (typed through the registered SQL function) and as df[name] (typed at once)
    cols = [fs.truncate(w, name).alias(f"t{w}") for w in WIDTHS]
    cols += [fs.truncate(w, df[name]).alias(f"r{w}") for w in WIDTHS]
    out = df.select("id", *cols)
    assert {f.dataType.simpleString() for f in out.schema.fields[1:]} == {spark_type}
    rows = collect_sorted(out, *[f"t{w}" for w in WIDTHS], *[f"r{w}" for w in WIDTHS])
    for j, w in enumerate(WIDTHS * 2):
        if kind == "int":
            want = [spec_truncate(kind, w, v, bits=size) for v in raws[name]]
            got = [r[j + 1] for r in rows]
        elif kind == "decimal":
            want = [spec_truncate(kind, w, v, precision=size) for v in raws[name]]
            got = [unscaled(r[j + 1], arrow_type.scale) for r in rows]
        else:
            want = [spec_truncate(kind, w, v) for v in raws[name]]
            got = [as_raw(r[j + 1]) for r in rows]
        compare(f"truncate({w}, {spark_type})", want, got)


TEMPORAL = [n for n, c in COLUMNS.items() if c[1] in ("date", "timestamp")]
RESULT_TYPES = {"years": "int", "months": "int", "days": "date", "hours": "int"}


@pytest.mark.parametrize("name", TEMPORAL)
def test_time_transforms(data, name):
    raws, df = data
    spark_type, kind, *_ = COLUMNS[name]
    fns = {"years": fs.years, "months": fs.months, "days": fs.days}
    if kind == "timestamp":
        fns["hours"] = fs.hours
    out = df.select("id", *[fn(name).alias(f) for f, fn in fns.items()])
    assert {f.name: f.dataType.simpleString() for f in out.schema.fields[1:]} == {
        f: RESULT_TYPES[f] for f in fns
    }
    rows = collect_sorted(out, *fns)
    for j, f in enumerate(fns):
        want = [spec_time(f, kind, v) for v in raws[name]]
        compare(f"{f}({spark_type})", want, [as_raw(r[j + 1]) for r in rows])


def test_time_transforms_ignore_the_session_time_zone(data, spark):
    """Iceberg transforms a timestamptz in UTC, whatever Spark's session time zone is."""
    raws, df = data
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    try:
        out = df.select(
            "id",
            fs.days("c_timestamp").alias("d"),
            fs.hours("c_timestamp").alias("h"),
            fs.days("c_timestamp_ntz").alias("dn"),
            fs.months("c_timestamp").alias("m"),
        )
        rows = collect_sorted(out, "d", "h", "dn", "m")
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
    ts, ntz = raws["c_timestamp"], raws["c_timestamp_ntz"]
    compare(
        "days(ts)", [spec_time("days", "timestamp", v) for v in ts], [as_raw(r[1]) for r in rows]
    )
    compare("hours(ts)", [spec_time("hours", "timestamp", v) for v in ts], [r[2] for r in rows])
    compare(
        "days(ntz)", [spec_time("days", "timestamp", v) for v in ntz], [as_raw(r[3]) for r in rows]
    )
    compare("months(ts)", [spec_time("months", "timestamp", v) for v in ts], [r[4] for r in rows])


def test_identity_is_the_column_itself(data):
    raws, df = data
    out = df.select("id", fs.identity("c_decimal_9_2").alias("i"), fs.identity(df["c_string"]))
    assert out.schema["i"].dataType.simpleString() == "decimal(9,2)"
    rows = collect_sorted(out, "i", "c_string")
    compare("identity", raws["c_string"], [r[2] for r in rows])


def test_runs_as_arrow_batches_not_rows(data):
    """The plan evaluates frazil's functions in Arrow-batched Python (ArrowEvalPython), never
    row at a time (BatchEvalPython)."""
    _, df = data
    out = df.select(fs.bucket(16, "c_bigint"), fs.truncate(4, "c_string"), fs.days("c_date"))
    plan = out._jdf.queryExecution().executedPlan().toString()
    assert "ArrowEvalPython" in plan
    assert "BatchEvalPython" not in plan


# PySpark 3.5 checks the pandas version with distutils' LooseVersion when making a pandas_udf
@pytest.mark.filterwarnings("ignore:distutils Version classes:DeprecationWarning")
def test_alongside_a_users_pandas_udf(data):
    """The Arrow pass-through (PySpark 3.5/4.0) touches only frazil's own inputs: another pandas
    UDF in the same stage, over a struct column, still gets its usual pandas DataFrame."""
    import pandas as pd
    from pyspark.sql import functions as F

    def plus_one(s):
        return s["x"].fillna(-1).astype("int64") + 1

    # real classes (not this module's postponed strings: pandas is imported locally)
    plus_one.__annotations__ = {"s": pd.DataFrame, "return": pd.Series}
    plus_one = F.pandas_udf(plus_one, "long")

    _, df = data
    out = df.select(
        "id",
        "c_int",
        plus_one(F.struct(F.col("c_int").alias("x"))).alias("p"),
        fs.bucket(16, "c_int").alias("b"),
    )
    rows = collect_sorted(out, "p", "b", "c_int")
    assert all(r[1] == (-1 if r[3] is None else r[3]) + 1 for r in rows)
    assert all(r[2] == spec_bucket("int", 16, r[3]) for r in rows)


# ============================================================================================
# Errors


def test_bad_arguments():
    with pytest.raises(InvalidArgumentError, match="positive"):
        fs.bucket(0, "x")
    with pytest.raises(InvalidArgumentError, match="must be an int"):
        fs.truncate(2.5, "x")
    with pytest.raises(InvalidArgumentError, match="Column or a column name"):
        fs.years(3)


def test_unsupported_types_are_refused(data, spark):
    _, df = data
    # a DataFrame's column has a known type: refused at once
    with pytest.raises(InvalidArgumentError, match="cannot be applied to a column of type date"):
        fs.hours(df["c_date"])
    with pytest.raises(InvalidArgumentError, match="cannot be applied to a column of type date"):
        fs.truncate(3, df["c_date"])
    # by name: truncate is typed by the analyzer, the others fail in the executor
    with pytest.raises(Exception, match="cannot be applied"):
        df.select(fs.truncate(3, "c_timestamp")).collect()
    with pytest.raises(Exception, match="cannot be applied"):
        df.select(fs.hours("c_date")).collect()


# ============================================================================================
# SQL


def test_sql_register(data, spark):
    raws, df = data
    names = frazil.spark.register(spark)
    assert set(names) == {
        "frazil_bucket",
        "frazil_truncate",
        "frazil_years",
        "frazil_months",
        "frazil_days",
        "frazil_hours",
        "frazil_identity",
    }
    assert frazil.spark.register(spark) == names  # idempotent
    df.createOrReplaceTempView("frazil_sql_values")
    out = spark.sql(
        """
        SELECT id,
               frazil_bucket(16, c_bigint) AS b_bigint,
               frazil_bucket(1009, c_string) AS b_string,
               frazil_bucket(CAST(7 AS TINYINT), c_decimal_38_10) AS b_dec,
               frazil_truncate(3, c_string) AS t_string,
               frazil_truncate(10, c_tinyint) AS t_tinyint,
               frazil_truncate(10, c_decimal_3_2) AS t_dec,
               frazil_truncate(2, c_binary) AS t_binary,
               frazil_years(c_date) AS y,
               frazil_months(c_timestamp_ntz) AS m,
               frazil_days(c_timestamp) AS d,
               frazil_hours(c_timestamp) AS h,
               frazil_identity(c_int) AS i
        FROM frazil_sql_values
        """
    )
    types = {f.name: f.dataType.simpleString() for f in out.schema.fields}
    assert types == {
        "id": "int",
        "b_bigint": "int",
        "b_string": "int",
        "b_dec": "int",
        "t_string": "string",
        "t_tinyint": "tinyint",
        "t_dec": "decimal(3,2)",
        "t_binary": "binary",
        "y": "int",
        "m": "int",
        "d": "date",
        "h": "int",
        "i": "int",
    }
    rows = collect_sorted(out, *list(types)[1:])
    col = {name: [r[j] for r in rows] for j, name in enumerate(types)}
    compare("b_bigint", [spec_bucket("int", 16, v) for v in raws["c_bigint"]], col["b_bigint"])
    compare("b_string", [spec_bucket("string", 1009, v) for v in raws["c_string"]], col["b_string"])
    compare("b_dec", [spec_bucket("decimal", 7, v) for v in raws["c_decimal_38_10"]], col["b_dec"])
    compare("t_string", [spec_truncate("string", 3, v) for v in raws["c_string"]], col["t_string"])
    compare(
        "t_tinyint",
        [spec_truncate("int", 10, v, bits=8) for v in raws["c_tinyint"]],
        col["t_tinyint"],
    )
    compare(
        "t_dec",
        [spec_truncate("decimal", 10, v, precision=3) for v in raws["c_decimal_3_2"]],
        [unscaled(v, 2) for v in col["t_dec"]],
    )
    compare(
        "t_binary",
        [spec_truncate("binary", 2, v) for v in raws["c_binary"]],
        [as_raw(v) for v in col["t_binary"]],
    )
    compare("y", [spec_time("years", "date", v) for v in raws["c_date"]], col["y"])
    compare("m", [spec_time("months", "timestamp", v) for v in raws["c_timestamp_ntz"]], col["m"])
    compare(
        "d", [spec_time("days", "timestamp", v) for v in raws["c_timestamp"]], map(as_raw, col["d"])
    )
    compare("h", [spec_time("hours", "timestamp", v) for v in raws["c_timestamp"]], col["h"])
    compare("i", raws["c_int"], col["i"])


def test_sql_in_where_and_group_by(data, spark):
    raws, df = data
    frazil.spark.register(spark)
    df.createOrReplaceTempView("frazil_sql_values")
    got = spark.sql(
        "SELECT frazil_bucket(4, c_int) AS b, count(*) AS n FROM frazil_sql_values "
        "WHERE frazil_bucket(4, c_int) IS NOT NULL GROUP BY frazil_bucket(4, c_int)"
    ).collect()
    want: dict[int, int] = {}
    for v in raws["c_int"]:
        if v is not None:
            b = spec_bucket("int", 4, v)
            want[b] = want.get(b, 0) + 1
    assert {r["b"]: r["n"] for r in got} == want


def test_sql_errors(data, spark):
    _, df = data
    frazil.spark.register(spark)
    df.createOrReplaceTempView("frazil_sql_values")
    with pytest.raises(Exception, match="must be a constant integer"):
        spark.sql("SELECT frazil_bucket(c_int, c_int) FROM frazil_sql_values").collect()
    with pytest.raises(Exception, match="must be positive"):
        spark.sql("SELECT frazil_truncate(0, c_string) FROM frazil_sql_values").collect()
    with pytest.raises(Exception, match="cannot be applied to a column of type date"):
        spark.sql("SELECT frazil_hours(c_date) FROM frazil_sql_values").collect()
    with pytest.raises(Exception, match="takes 2 arguments"):
        spark.sql("SELECT frazil_bucket(c_int) FROM frazil_sql_values").collect()


def test_columns_in_where_and_group_by(data):
    raws, df = data
    bucket = fs.bucket(4, "c_int")
    got = df.where(bucket.isNotNull()).groupBy(bucket.alias("b")).count().collect()
    want: dict[int, int] = {}
    for v in raws["c_int"]:
        if v is not None:
            b = spec_bucket("int", 4, v)
            want[b] = want.get(b, 0) + 1
    assert {r["b"]: r["count"] for r in got} == want
    assert df.where(fs.truncate(2, "c_string") == "ab").count() == sum(
        1 for v in raws["c_string"] if v is not None and v[:2] == "ab"
    )


@pytest.mark.parametrize("path", ["default", "mapInArrow"])
def test_with_transforms(data, path, monkeypatch):
    """Several transforms added at once equal the spec's values, in the functions' types, on
    the arrow_udf path (4.1+) and the mapInArrow path (3.5, 4.0: forced here on 4.x)."""
    if path == "mapInArrow":
        monkeypatch.setenv("FRAZIL_SPARK_UDF", "pandas")
    raws, df = data
    spec = {
        "b_big": ("bucket[16]", "c_bigint"),
        "b_str": ("bucket[1009]", "c_string"),
        "b_dec": ("bucket[7]", "c_decimal_9_2"),
        "t_int": ("truncate[10]", "c_int"),
        "t_str": ("truncate[3]", "c_string"),
        "d_ts": ("day", "c_timestamp"),
        "h_ts": ("hour", "c_timestamp"),
        "m_date": ("month", "c_date"),
        "y_ntz": ("year", "c_timestamp_ntz"),
        "i_int": ("identity", "c_int"),
    }
    out = frazil.spark.functions.with_transforms(df, spec)
    assert out.columns == [*df.columns, *spec]
    types = {f.name: f.dataType.simpleString() for f in out.schema.fields}
    assert [types[n] for n in spec] == [
        "int", "int", "int", "int", "string", "date", "int", "int", "int", "int"
    ]  # fmt: skip
    rows = collect_sorted(out, *spec)
    kinds = {name: COLUMNS[name][1] for name in COLUMNS}
    for j, (transform, source) in enumerate(spec.values()):
        kind, raw = kinds[source], raws[source]
        if transform.startswith("bucket"):
            want = [spec_bucket(kind, int(transform[7:-1]), v) for v in raw]
        elif transform.startswith("truncate"):
            want = [spec_truncate(kind, int(transform[9:-1]), v, bits=32) for v in raw]
        elif transform == "identity":
            want = raw
        else:
            want = [spec_time(transform + "s", kind, v) for v in raw]
        compare(f"{transform}({source})", want, [as_raw(r[j + 1]) for r in rows])


def test_with_transforms_errors(data):
    _, df = data
    with pytest.raises(InvalidArgumentError, match="unknown transform"):
        frazil.spark.functions.with_transforms(df, {"x": ("void", "c_int")})
    with pytest.raises(InvalidArgumentError, match="no column"):
        frazil.spark.functions.with_transforms(df, {"x": ("day", "nope")})
    with pytest.raises(InvalidArgumentError, match="cannot be applied"):
        frazil.spark.functions.with_transforms(df, {"x": ("hour", "c_date")})
    with pytest.raises(InvalidArgumentError, match="positive"):
        frazil.spark.functions.with_transforms(df, {"x": ("bucket[0]", "c_int")})
