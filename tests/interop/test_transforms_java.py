"""Parity of frazil's partition transforms and single-value codecs with the Java reference.

The reference is Apache Iceberg 1.10.2 (see java_reference.py), asked two ways:

* through Spark SQL (``ref.system.bucket(N, col)`` and friends) for the types Spark can express:
  int, bigint, decimal, date, timestamp (= Iceberg timestamptz), timestamp_ntz, string, binary;
  the values go to Spark in a Parquet file written by pyarrow, and frazil's Arrow kernels run on
  the very same pyarrow arrays;
* through the FrazilOracle JVM (java/FrazilOracle.java), which calls ``Transform.bind(type)
  .apply(value)``, ``Conversions.toByteBuffer/fromByteBuffer`` and ``SingleValueParser`` directly,
  for every primitive type including those Spark lacks (time, timestamp_ns, timestamptz_ns, uuid,
  fixed[L]) and for nested types' JSON.

Values are random but seeded, and every type's list starts with its edge cases (nulls, extremes,
dates far outside 1..9999, pre-1970 timestamps with sub-second parts, 4-byte UTF-8, empty strings
and binaries...). Every disagreement is collected; a test fails listing the first 20.

The test side never uses frazil to produce the expected answers: raw values (ints for dates,
times and timestamps, unscaled ints for decimals, bytes for uuids) are formatted to and parsed
from Java's JSON by the small independent helpers below.

Canonical JSON text is allowed to differ where the spec allows (Java writes fixed/binary hex in
upper case, floats as ``1.0E10``, times and timestamps without trailing zero fractions and
``+00:00`` for UTC); the codec tests therefore compare decoded *values*, never JSON text.
"""

from __future__ import annotations

import json
import math
import random
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from peers import import_peer, peer_missing

sys.path.insert(0, str(Path(__file__).resolve().parent))
from java_reference import (
    Err,
    JavaOracle,
    ReferenceUnavailable,
    check_available,
    reference_session,
)

pa = import_peer("pyarrow")
pq = import_peer("pyarrow.parquet")

try:
    check_available()
except ReferenceUnavailable as _e:
    peer_missing(f"the Java reference is unavailable: {_e}", module_level=True)

from java_values import (  # noqa: E402
    BUCKETS,
    D_MAX_PY,
    D_MIN_PY,
    NUM_WIDTHS,
    TEXT_WIDTHS,
    Failed,
    dec_unscaled,
    decimal_ps,
    from_arrow,
    from_java_json,
    from_python,
    java_json_text,
    kind,
    normalize_type,
    parse_iso_date,
    python_representable,
    raw_bytes,
    same,
    show,
    shown,
    to_arrow,
    to_python,
)
from nested_values import (  # noqa: E402
    NESTED_TYPES,
    _gen_nested,
    _nested_from_java,
    _nested_from_python,
    _nested_same,
    _nested_to_python,
)
from value_generators import (  # noqa: E402
    generate,
    transforms_for,
)

import frazil.transforms as ft  # noqa: E402
import frazil.values as fv  # noqa: E402
from frazil.types import type_from_json  # noqa: E402

pytestmark = [
    pytest.mark.interop,
    # PySpark leaves sockets of its py4j/collect plumbing to the garbage collector
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

N_SPARK = 5000  # random values per Spark type
N_ORACLE = 5000  # random values per type for the oracle-only types
N_CODEC = 3000  # random values per type for codec parity
N_NESTED = 500  # random values per nested type
SHOW = 20  # mismatches shown on failure


ALL_TRANSFORMS = (
    [f"bucket[{n}]" for n in BUCKETS]
    + [f"truncate[{w}]" for w in sorted(set(NUM_WIDTHS) | set(TEXT_WIDTHS))]
    + ["year", "month", "day", "hour", "identity", "void"]
)


def frazil_kernel(transform: str, arr) -> list:
    """frazil's Arrow kernel for one transform string, through the module-level functions.

    If the kernel raises for the whole array, each value is retried alone so that only the
    values it rejects are reported (as Failed)."""
    fn: Callable[[Any], Any]
    m = re.match(r"^(bucket|truncate)\[(\d+)\]$", transform)
    if m:
        width = int(m.group(2))
        fn = (
            (lambda a: ft.bucket(width, a))
            if m.group(1) == "bucket"
            else (lambda a: ft.truncate(width, a))
        )
    else:
        fn = {
            "year": ft.year,
            "month": ft.month,
            "day": ft.day,
            "hour": ft.hour,
            "identity": ft.identity,
            "void": ft.void,
        }[transform]
    try:
        out = fn(arr)
    except Exception:
        out = None
    if out is not None:
        values = from_arrow(out)
        if len(values) == len(arr):
            return values
    results: list = []
    for i in range(len(arr)):
        try:
            results.append(from_arrow(fn(arr.slice(i, 1)))[0])
        except Exception as e:
            results.append(Failed(f"{type(e).__name__}: {e}"))
    return results


def result_kind(transform: str, t: str) -> str:
    """The type of the transform's values as raw values (day gives days as ints)."""
    if transform.startswith(("truncate", "identity", "void")):
        return t
    return "int"


def java_transform_results(
    oracle: JavaOracle, t: str, transform: str, raws: Sequence[Any], stats: dict
) -> list:
    """Java's transform of each raw value, as raw values, or Err where Java refuses.

    Values go in as JSON (SingleValueParser.fromJson); where Java cannot parse our JSON for a
    value (e.g. timestamps whose micros overflow in java.time's ChronoUnit.between), the value
    is sent again in its binary form."""
    answers = oracle.transform([(t, transform, java_json_text(v, t)) for v in raws])
    retry = [i for i, a in enumerate(answers) if isinstance(a, Err) and raws[i] is not None]
    if retry:
        again = oracle.ask(
            [("transform_bytes", t, transform, raw_bytes(raws[i], t).hex()) for i in retry]
        )
        for i, a in zip(retry, again, strict=True):
            if not isinstance(a, Err):
                key = f"{transform}: Java read from bytes, not JSON"
                stats[key] = stats.get(key, 0) + 1
            answers[i] = a
    out: list = []
    for a in answers:
        if isinstance(a, Err):
            out.append(a)
            continue
        rtype, text = a.split("\t", 1)
        obj = json.loads(text)
        if transform == "day" and obj is not None:
            out.append(parse_iso_date(obj))  # Java's day transform yields a date
        else:
            out.append(from_java_json(obj, normalize_type(rtype)))
    return out


class Mismatches:
    def __init__(self, title: str) -> None:
        self.title = title
        self.items: list[str] = []
        self.checked = 0

    def add(self, text: str) -> None:
        self.items.append(text)

    def check(self) -> None:
        if self.items:
            shown = "\n".join(f"  {m}" for m in self.items[:SHOW])
            pytest.fail(
                f"{self.title}: {len(self.items)} mismatches out of {self.checked} checks; "
                f"first {min(SHOW, len(self.items))}:\n{shown}",
                pytrace=False,
            )


def compare_values(
    mm: Mismatches,
    label: str,
    t: str,
    rkind: str,
    raws,
    frazil_out,
    ref_out,
    ref_name: str,
    extra: Callable[[int], str] | None = None,
) -> None:
    for i, (v, got, want) in enumerate(zip(raws, frazil_out, ref_out, strict=True)):
        mm.checked += 1
        if isinstance(want, Err):
            if isinstance(got, Failed) or v is None:
                continue
            mm.add(
                f"{label} of {t} {show(v, t)}: {ref_name} refuses ({want}), "
                f"frazil gives {show(got, rkind)}"
            )
            continue
        if isinstance(got, Failed) or not same(got, want):
            got_s = repr(got) if isinstance(got, Failed) else show(got, rkind)
            note = extra(i) if extra else ""
            mm.add(
                f"{label} of {t} {show(v, t)}: {ref_name} {show(want, rkind)}, frazil {got_s}{note}"
            )


# ============================================================================================
# Fixtures


@pytest.fixture(scope="module")
def oracle():
    with JavaOracle() as o:
        yield o


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    session = reference_session(str(tmp_path_factory.mktemp("warehouse")))
    yield session
    session.stop()


# Spark SQL type -> Iceberg type string (Spark's TIMESTAMP is Iceberg's timestamptz)
SPARK_TYPES = {
    "int": "int",
    "bigint": "long",
    "decimal(9,2)": "decimal(9,2)",
    "decimal(38,10)": "decimal(38,10)",
    "date": "date",
    "timestamp": "timestamptz",
    "timestamp_ntz": "timestamp",
    "string": "string",
    "binary": "binary",
}


def spark_sql(transform: str, col: str) -> str:
    m = re.match(r"^(bucket|truncate)\[(\d+)\]$", transform)
    if m:
        return f"ref.system.{m.group(1)}({m.group(2)}, {col})"
    if transform == "day":
        # ref.system.days gives a DATE; as days from 1970 so that years beyond 9999 survive
        # the trip to Python
        return f"unix_date(ref.system.days({col}))"
    return f"ref.system.{transform}s({col})"


@pytest.fixture(scope="module")
def spark_case(spark, tmp_path_factory):
    """Every Spark type's values in one Parquet file, and all transforms in one SELECT."""
    columns = {}
    raws = {}
    for i, (spark_type, t) in enumerate(SPARK_TYPES.items()):
        raws[spark_type] = generate(t, N_SPARK, seed=1)
        columns[f"c{i}"] = to_arrow(raws[spark_type], t)
    table = pa.table({"id": pa.array(range(N_SPARK), pa.int32()), **columns})
    path = tmp_path_factory.mktemp("spark_input") / "values.parquet"
    pq.write_table(table, path)

    exprs, keys = ["id"], []
    df = spark.read.parquet(str(path))
    for i, (spark_type, t) in enumerate(SPARK_TYPES.items()):
        schema_type = df.schema[f"c{i}"].dataType.simpleString()
        assert schema_type.replace(" ", "") == spark_type, (spark_type, schema_type)
        for transform in transforms_for(t):
            if transform == "identity":
                continue
            exprs.append(f"{spark_sql(transform, f'c{i}')} AS r{len(keys)}")
            keys.append((spark_type, transform))
    df.createOrReplaceTempView("frazil_values")
    rows = spark.sql(f"SELECT {', '.join(exprs)} FROM frazil_values").collect()
    rows.sort(key=lambda row: row[0])
    assert [row[0] for row in rows] == list(range(N_SPARK))

    results: dict[tuple[str, str], list] = {}
    for j, (spark_type, transform) in enumerate(keys):
        t = SPARK_TYPES[spark_type]
        rk = result_kind(transform, t)
        col = [row[j + 1] for row in rows]
        if kind(rk) == "decimal":
            col = [None if v is None else dec_unscaled(v, decimal_ps(rk)[1]) for v in col]
        elif kind(rk) == "binary":
            col = [None if v is None else bytes(v) for v in col]
        results[(spark_type, transform)] = col
    return raws, columns, results


# ============================================================================================
# Spark SQL functions vs frazil's Arrow kernels


@pytest.mark.spark
@pytest.mark.parametrize("spark_type", list(SPARK_TYPES))
def test_spark_transforms(spark_type, spark_case, oracle):
    raws, columns, results = spark_case
    t = SPARK_TYPES[spark_type]
    arr = columns[f"c{list(SPARK_TYPES).index(spark_type)}"]
    mm = Mismatches(f"Spark ref.system.* vs frazil on {spark_type} ({t})")
    notes = []
    for transform in transforms_for(t):
        if transform == "identity":
            continue
        rk = result_kind(transform, t)
        values = raws[spark_type]
        spark_out = results[(spark_type, transform)]
        frazil_out = frazil_kernel(transform, arr)
        java_out = None
        for i, (v, s) in enumerate(zip(values, spark_out, strict=True)):
            if v is not None and s is None:
                # Spark nulls a value that overflows its SQL type (decimal truncate near the
                # precision limit); what Java's Transform itself gives is the reference then.
                if java_out is None:
                    java_out = java_transform_results(oracle, t, transform, values, {})
                notes.append(f"{transform}({show(v, t)}): Spark null, Java {show(java_out[i], rk)}")
                spark_out = list(spark_out)
                spark_out[i] = java_out[i]
        compare_values(mm, transform, t, rk, values, frazil_out, spark_out, "Spark")
    if notes:
        print(f"\n{spark_type}: {len(notes)} values Spark nulls on overflow, e.g. {notes[:3]}")
    mm.check()


# ============================================================================================
# The Java Transform API vs frazil, for every type (Spark's types as a cross-check)

ORACLE_TYPES = [
    "int",
    "long",
    "decimal(9,2)",
    "decimal(38,10)",
    "decimal(1,0)",
    "decimal(18,4)",
    "decimal(38,0)",
    "date",
    "time",
    "timestamp",
    "timestamptz",
    "timestamp_ns",
    "timestamptz_ns",
    "string",
    "uuid",
    "fixed[1]",
    "fixed[7]",
    "fixed[16]",
    "binary",
]
NON_TRANSFORMABLE_EXTRA = ["boolean", "float", "double"]


def test_transform_applicability(oracle):
    """can_transform and result_type agree with Java for every (type, transform) pair."""
    mm = Mismatches("transform applicability / result type")
    pairs = [(t, tr) for t in ORACLE_TYPES + NON_TRANSFORMABLE_EXTRA for tr in ALL_TRANSFORMS]
    answers = oracle.transform([(t, tr, "null") for t, tr in pairs])
    for (t, tr), a in zip(pairs, answers, strict=True):
        mm.checked += 1
        java_ok = not isinstance(a, Err)
        try:
            transform = ft.parse(tr)
            ours = transform.can_transform(t)
        except Exception as e:
            mm.add(f"{tr} on {t}: frazil raised {type(e).__name__}: {e}")
            continue
        if ours != java_ok:
            mm.add(f"{tr} on {t}: Java can_transform={java_ok} ({a}), frazil {ours}")
            continue
        if java_ok:
            java_rtype = normalize_type(a.split("\t", 1)[0])
            try:
                our_rtype = normalize_type(str(transform.result_type(t)))
            except Exception as e:
                our_rtype = f"<raised {type(e).__name__}: {e}>"
            if our_rtype != java_rtype:
                mm.add(f"{tr} on {t}: Java result type {java_rtype}, frazil {our_rtype}")
    mm.check()


@pytest.mark.parametrize("t", ORACLE_TYPES)
def test_oracle_transforms(t, oracle):
    raws = generate(t, N_ORACLE if t not in SPARK_TYPES.values() else N_SPARK, seed=2)
    arr = to_arrow(raws, t)
    mm = Mismatches(f"Java Transform vs frazil on {t}")
    stats: dict = {}
    for transform in transforms_for(t):
        rk = result_kind(transform, t)
        java_out = java_transform_results(oracle, t, transform, raws, stats)
        frazil_out = frazil_kernel(transform, arr)
        compare_values(mm, transform, t, rk, raws, frazil_out, java_out, "Java")
        # the scalar path (Python values) must agree too; a sample, it goes value by value
        if transform == "identity":
            continue
        parsed = ft.parse(transform)
        for i, v in enumerate(raws[:400]):
            want = java_out[i]
            if v is None or isinstance(want, Err) or not python_representable(v, t):
                continue
            if transform == "day" and not D_MIN_PY <= want <= D_MAX_PY:
                continue
            mm.checked += 1
            try:
                got = parsed.apply_scalar(to_python(v, t), t)
                if transform == "day":
                    got = from_python(got, "date")
                elif rk == t:
                    got = from_python(got, t)
            except Exception as e:
                got = Failed(f"{type(e).__name__}: {e}")
            if isinstance(got, Failed) or not same(got, want):
                mm.add(
                    f"apply_scalar {transform} of {t} {show(raws[i], t)}: Java "
                    f"{show(want, rk)}, frazil {shown(got, rk)}"
                )
    if stats:
        print(f"\n{t}: {stats}")
    mm.check()


# ============================================================================================
# Single-value codecs: binary (Appendix D) and JSON

CODEC_TYPES = [
    "boolean",
    "int",
    "long",
    "float",
    "double",
    "decimal(1,0)",
    "decimal(9,2)",
    "decimal(18,6)",
    "decimal(19,0)",
    "decimal(38,10)",
    "decimal(38,0)",
    "decimal(38,38)",
    "date",
    "time",
    "timestamp",
    "timestamptz",
    "timestamp_ns",
    "timestamptz_ns",
    "string",
    "uuid",
    "fixed[1]",
    "fixed[16]",
    "fixed[33]",
    "binary",
]


def _frazil(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as e:
        return Failed(f"{type(e).__name__}: {e}")


@pytest.mark.parametrize("t", CODEC_TYPES)
def test_codecs(t, oracle):
    raws = [v for v in generate(t, N_CODEC, seed=3, python_range=True) if v is not None]
    mm = Mismatches(f"single-value codecs of {t}")
    k = kind(t)
    text_diffs: dict[str, str] = {}

    # Java's bytes for each value, from our JSON (or, where Java cannot read JSON for the
    # value -- NaN and the infinities -- from our own encoding of its bytes)
    java_hex = oracle.to_bytes([(t, java_json_text(v, t)) for v in raws])
    redo = [i for i, h in enumerate(java_hex) if isinstance(h, Err)]
    if redo:
        for i, h in zip(
            redo,
            oracle.ask([("rebytes", t, raw_bytes(raws[i], t).hex()) for i in redo]),
            strict=True,
        ):
            java_hex[i] = h
    # frazil's bytes and JSON
    py_values = [to_python(v, t) for v in raws]
    our_bytes = [_frazil(lambda v=v: fv.to_bytes(v, t)) for v in py_values]
    our_json = [_frazil(lambda v=v: fv.to_json(v, t)) for v in py_values]
    # Java reads frazil's bytes and frazil's JSON
    java_read_bytes = oracle.from_bytes(
        [(t, b.hex() if isinstance(b, bytes) else "") for b in our_bytes]
    )
    java_read_json = oracle.json(
        [
            (t, json.dumps(j, ensure_ascii=False) if not isinstance(j, Failed) else "!")
            for j in our_json
        ]
    )
    # Java's own canonical JSON of each value
    java_json = oracle.json([(t, java_json_text(v, t)) for v in raws])
    redo = [i for i, j in enumerate(java_json) if isinstance(j, Err)]
    if redo:
        for i, j in zip(
            redo, oracle.from_bytes([(t, raw_bytes(raws[i], t).hex()) for i in redo]), strict=True
        ):
            java_json[i] = j

    for i, v in enumerate(raws):
        where = f"{t} {show(v, t)}"
        # 1. to_bytes
        mm.checked += 1
        want_hex = java_hex[i]
        got = our_bytes[i]
        if isinstance(want_hex, Err):
            mm.add(f"to_bytes {where}: Java refuses ({want_hex})")
        elif isinstance(got, Failed) or got.hex() != want_hex:
            got_s = repr(got) if isinstance(got, Failed) else got.hex()
            mm.add(f"to_bytes {where}: Java {want_hex}, frazil {got_s}")
        # 2. frazil reads Java's bytes
        if not isinstance(want_hex, Err):
            mm.checked += 1
            back = _frazil(lambda h=want_hex: from_python(fv.from_bytes(bytes.fromhex(h), t), t))
            if isinstance(back, Failed) or not same(back, v):
                mm.add(f"from_bytes {where} (Java bytes {want_hex}): frazil {shown(back, t)}")
        # 3. Java reads frazil's bytes
        if isinstance(got, bytes):
            mm.checked += 1
            a = java_read_bytes[i]
            if isinstance(a, Err):
                mm.add(f"Java from_bytes of frazil's {got.hex()} for {where}: Java refuses ({a})")
            elif not same(from_java_json(json.loads(a), t), v):
                mm.add(f"Java from_bytes of frazil's {got.hex()} for {where}: Java reads {a}")
        # 4. Java reads frazil's JSON
        j = our_json[i]
        mm.checked += 1
        if isinstance(j, Failed):
            mm.add(f"to_json {where}: frazil {j!r}")
        else:
            a = java_read_json[i]
            if isinstance(a, Err):
                nonfinite = k in ("float", "double") and not math.isfinite(v)
                if not nonfinite:  # Java's SingleValueParser reads no NaN/Infinity at all
                    mm.add(f"Java reads frazil's JSON {json.dumps(j)} for {where}: refuses ({a})")
            elif not same(from_java_json(json.loads(a), t), v):
                mm.add(f"Java reads frazil's JSON {json.dumps(j)} for {where}: gets {a}")
            jj = java_json[i]
            if not isinstance(jj, Err) and json.loads(jj) != j and len(text_diffs) < 3:
                text_diffs[f"{show(v, t)}"] = f"Java {jj} / frazil {json.dumps(j)}"
        # 5. frazil reads Java's canonical JSON
        jj = java_json[i]
        mm.checked += 1
        if isinstance(jj, Err):
            mm.add(f"Java to_json {where}: Java refuses ({jj})")
        else:
            back = _frazil(lambda j=jj: from_python(fv.from_json(json.loads(j), t), t))
            if isinstance(back, Failed) or not same(back, v):
                mm.add(f"from_json of Java's {jj} for {where}: frazil {shown(back, t)}")
    if text_diffs:
        # allowed by the spec (values equal): e.g. hex case, float spelling, trimmed fractions
        print(f"\n{t}: JSON text differs (values agree), e.g. {text_diffs}")
    mm.check()


# ============================================================================================
# JSON of nested types (SingleValueParser with struct / list / map types)


@pytest.mark.parametrize("name", list(NESTED_TYPES))
def test_nested_json(name, oracle):
    typ = NESTED_TYPES[name]
    type_text = json.dumps(typ, separators=(",", ":"))
    ftype = type_from_json(typ)
    r = random.Random(f"nested:{name}")
    raws = [_gen_nested(r, typ, True) for _ in range(N_NESTED)]
    mm = Mismatches(f"JSON of nested type {name}")
    ours = [_frazil(lambda v=v: fv.to_json(_nested_to_python(v, typ), ftype)) for v in raws]
    java = oracle.json(
        [
            (type_text, json.dumps(j, ensure_ascii=False) if not isinstance(j, Failed) else "!")
            for j in ours
        ]
    )
    for v, j, a in zip(raws, ours, java, strict=True):
        mm.checked += 1
        if isinstance(j, Failed):
            mm.add(f"to_json {v!r}: frazil {j!r}")
            continue
        if isinstance(a, Err):
            mm.add(f"Java reads frazil's JSON {json.dumps(j)}: refuses ({a})")
            continue
        if not _nested_same(_nested_from_java(json.loads(a), typ), v):
            mm.add(f"Java reads frazil's JSON {json.dumps(j)} as {a} (value {v!r})")
            continue
        # Java's canonical JSON back into frazil
        mm.checked += 1
        back = _frazil(lambda a=a: _nested_from_python(fv.from_json(json.loads(a), ftype), typ))
        if isinstance(back, Failed) or not _nested_same(back, v):
            mm.add(f"from_json of Java's {a}: frazil {back!r} (value {v!r})")
    mm.check()


# ============================================================================================
# The harness itself


def test_oracle_protocol(oracle):
    """Bad requests answer ERROR without stopping the JVM; known spec values come out right."""
    answers = oracle.ask(
        [
            ("bogus",),
            ("to_bytes", "int"),
            ("to_bytes", "int", "34"),
            ("from_bytes", "int", "zz"),
            ("type", "decimal(9,2)"),
            # spec appendix B: murmur3_x86_32 of int 34 and of "iceberg"
            ("transform", "int", "bucket[2147483647]", "34"),
            ("transform", "string", "bucket[2147483647]", '"iceberg"'),
            ("json", "fixed[2]", '"abcd"'),
        ]
    )
    assert isinstance(answers[0], Err) and "unknown request" in answers[0]
    assert isinstance(answers[1], Err)
    assert answers[2] == "22000000"
    assert isinstance(answers[3], Err)
    assert answers[4] == "decimal(9, 2)"
    assert answers[5] == "int\t2017239379"
    assert answers[6] == "int\t1210000089"
    assert answers[7] == '"ABCD"'
