"""Iceberg partition transforms as Spark Columns, computed by frazil's native kernels on Spark's
Arrow batches (never one Python call per row).

Each function gives the same values and the same Spark type as the Java reference's
``system.*`` function (Iceberg's ``SparkFunctions``) on the same column:

============================  =====================================================
``bucket(n, col)``            int; tinyint, smallint, int, bigint, decimal, date, timestamp,
                              timestamp_ntz, string, binary
``truncate(w, col)``          the column's own type; tinyint, smallint, int, bigint,
                              decimal, string, binary
``years(col)``                int (years from 1970); date, timestamp, timestamp_ntz
``months(col)``               int (months from 1970-01); date, timestamp, timestamp_ntz
``days(col)``                 date; date, timestamp, timestamp_ntz
``hours(col)``                int (hours from 1970-01-01 00:00); timestamp, timestamp_ntz
``identity(col)``             the column itself
============================  =====================================================

Spark's ``timestamp`` is Iceberg's ``timestamptz`` and ``timestamp_ntz`` is ``timestamp``; both
are transformed in UTC. Nulls stay null. A decimal that ``truncate`` rounds below its type's
range is null, as Spark stores Java's result.

:func:`with_transforms` adds several such columns to a DataFrame at once, from Iceberg
transform strings (``{"id_bucket": ("bucket[16]", "id")}``); on PySpark 3.5 and 4.0 it runs the
kernels in one ``mapInArrow`` pass, which skips the pandas layer of a ``pandas_udf``.

On PySpark 4.1+ the kernels run in a scalar ``arrow_udf``; on 3.5 and 4.0 in a scalar
``pandas_udf`` fed Arrow-backed Series (see :mod:`frazil.spark._arrow`). Executors import frazil
from the Python environment ``PYSPARK_PYTHON`` names, so frazil must be installed there.

``truncate``'s result type depends on its column's type, which a Python UDF cannot follow. When
the column is one of a DataFrame (``df["name"]``) its type is known at once; otherwise (a name
or an expression) the call goes through the SQL function that :func:`frazil.spark.register`
installs in the active session, which picks the type when Spark has resolved the column.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

from frazil.exceptions import InvalidArgumentError, ParseError
from frazil.spark import _arrow
from frazil.spark.common import positive_int
from frazil.transforms import Transform
from frazil.transforms import parse as parse_transform

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark import SparkContext
    from pyspark.sql import Column, DataFrame
    from pyspark.sql._typing import UserDefinedFunctionLike
    from pyspark.sql.session import SparkSession
    from pyspark.sql.types import DataType

__all__ = [
    "bucket",
    "days",
    "hours",
    "identity",
    "months",
    "truncate",
    "with_transforms",
    "years",
]

log = logging.getLogger(__name__)

ColumnOrName: TypeAlias = "Column | str"

# Spark types (their simpleString without parameters) each function accepts.
_INTEGRAL = ("tinyint", "smallint", "int", "bigint")
# Spark's types as Iceberg's (Spark's timestamp is timestamptz, timestamp_ntz is timestamp): the
# transforms' own rules (native can_transform / result_type) say what each function takes and
# returns, as Java's system functions do.
_ICEBERG_TYPE = {
    "tinyint": "int",
    "smallint": "int",
    "int": "int",
    "bigint": "long",
    "decimal": "decimal(38,0)",
    "float": "float",
    "double": "double",
    "boolean": "boolean",
    "date": "date",
    "timestamp": "timestamptz",
    "timestamp_ntz": "timestamp",
    "string": "string",
    "binary": "binary",
}
# Spark's plural function names for the time transforms.
_SPARK_PLURALS = {"years": "year", "months": "month", "days": "day", "hours": "hour"}


def bucket(n: int, col: ColumnOrName) -> Column:
    """``bucket[n]``: the Murmur3 hash of each value modulo ``n``, as Spark int."""
    return _fixed("bucket", positive_int("bucket", "number of buckets", n, 2**31 - 1), col)


def truncate(w: int, col: ColumnOrName) -> Column:
    """``truncate[w]``: integers and decimals rounded down to a multiple of ``w``, strings cut to
    ``w`` code points, binaries to ``w`` bytes; the result has the column's own type."""
    width = positive_int("truncate", "width", w, 2**31 - 1)
    known = _known_field(col)
    if known is not None:
        check_type("truncate", known[0])
        return _apply("truncate", width, known, col)
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = SparkSession.getActiveSession()
    if spark is None:
        raise InvalidArgumentError(
            "frazil.spark.functions.truncate needs an active SparkSession for a column given by "
            "name (its result type is the column's type); or pass df[name]"
        )
    register(spark)
    call = F.call_function("frazil_truncate", F.lit(width), _column(col))
    return call.alias(_display("truncate", width, col))


def years(col: ColumnOrName) -> Column:
    """Years from 1970 of a date or timestamp, as Spark int."""
    return _fixed("years", None, col)


def months(col: ColumnOrName) -> Column:
    """Months from 1970-01 of a date or timestamp, as Spark int."""
    return _fixed("months", None, col)


def days(col: ColumnOrName) -> Column:
    """The day of a date or timestamp, as a Spark date (like Java's ``system.days``)."""
    return _fixed("days", None, col)


def hours(col: ColumnOrName) -> Column:
    """Hours from 1970-01-01 00:00 of a timestamp, as Spark int."""
    return _fixed("hours", None, col)


def identity(col: ColumnOrName) -> Column:
    """The partition value of an identity field: the column itself, in Spark's own plan."""
    return _column(col)


# --------------------------------------------------------------------------------------------
# helpers shared with register


def _column(col: ColumnOrName) -> Column:
    from pyspark.sql import Column
    from pyspark.sql import functions as F

    if isinstance(col, str):
        return F.col(col)
    if isinstance(col, Column):
        return col
    raise InvalidArgumentError(f"expected a Column or a column name, got {type(col).__name__}")


def _type_name(spark_type: DataType) -> str:
    name = spark_type.simpleString()
    return "decimal" if name.startswith("decimal") else name


def _transform(kind: str) -> Transform:
    """The Iceberg transform of a function kind (a count or width of 1: types do not depend on
    it)."""
    name = _SPARK_PLURALS.get(kind, kind)
    return parse_transform(f"{name}[1]" if kind in ("bucket", "truncate") else name)


def _iceberg_type(spark_type: DataType) -> str | None:
    name = spark_type.simpleString()
    return name if name.startswith("decimal") else _ICEBERG_TYPE.get(name)


def check_type(kind: str, spark_type: DataType) -> None:
    """Raises when Java's ``system.<kind>`` would refuse a column of this Spark type."""
    transform = _transform(kind)
    source = _iceberg_type(spark_type)
    if source is None or not transform.can_transform(source):
        accepted = ", ".join(n for n, t in _ICEBERG_TYPE.items() if transform.can_transform(t))
        raise InvalidArgumentError(
            f"frazil_{kind} cannot be applied to a column of type {spark_type.simpleString()} "
            f"(accepted: {accepted})"
        )


def result_type(kind: str, spark_type: DataType) -> DataType:
    """The Spark type of ``kind`` over a column of ``spark_type`` (Java's ``resultType``)."""
    from pyspark.sql.types import _parse_datatype_string

    check_type(kind, spark_type)
    if kind == "truncate":
        return spark_type
    source = _iceberg_type(spark_type)
    assert source is not None  # check_type passed
    # The fixed results (int, date) are spelled alike in both type systems.
    return _parse_datatype_string(str(_transform(kind).result_type(source)))


def _known_type(col: ColumnOrName) -> DataType | None:
    """The Spark type of a Column that is already resolved (``df["x"]`` on classic PySpark),
    else None. Names and unresolved expressions are typed only by Spark's analyzer."""
    known = _known_field(col)
    return None if known is None else known[0]


def _known_field(col: ColumnOrName) -> tuple[DataType, bool] | None:
    """(Spark type, nullable) of a resolved Column, else None (see :func:`_known_type`)."""
    if isinstance(col, str):
        return None
    jc: Any = getattr(col, "_jc", None)  # a py4j proxy
    if jc is None:  # Spark Connect
        return None
    expr = None
    # Spark 3.5's Column wraps a catalyst expression; Spark 4's a ColumnNode, which for a
    # DataFrame's column wraps the resolved catalyst attribute
    getters: tuple[Callable[[], Any], ...] = (lambda: jc.expr(), lambda: jc.node().expression())
    for get in getters:
        try:
            expr = get()
            break
        except Exception:
            continue
    if expr is None:
        return None
    try:
        if not expr.resolved():
            return None
        from pyspark.sql.types import _parse_datatype_json_string

        return _parse_datatype_json_string(expr.dataType().json()), bool(expr.nullable())
    except Exception:  # not a classic Column with a catalyst expression
        return None


def arrow_udf_available() -> bool:
    """Whether this PySpark has the native scalar ``arrow_udf`` (4.1+)."""
    import os

    if os.environ.get("FRAZIL_SPARK_UDF") == "pandas":  # lets tests cover the 3.5 path on 4.x
        return False
    from pyspark.sql import functions as F

    return hasattr(F, "arrow_udf")


def _jvm_token() -> int:
    """Identifies the running Spark JVM: a PySpark UDF binds its Java twin to the JVM it was
    first used in, so a cached UDF must not outlive a restarted Spark (stop, then a new
    session, as notebooks do)."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if gateway is None:
        return 0
    for i, seen in enumerate(_GATEWAYS):
        if seen is gateway:
            return i + 1
    _GATEWAYS.append(gateway)  # kept, so its position stays its token
    return len(_GATEWAYS)


_GATEWAYS: list[object] = []


@functools.lru_cache(maxsize=256)
def _udf_cached(
    kind: str, param: int | None, result_json: str, arrow: bool, jvm: int
) -> UserDefinedFunctionLike:
    from pyspark.sql.types import _parse_datatype_json_string

    result = _parse_datatype_json_string(result_json)
    if arrow:
        from pyspark.sql.functions import arrow_udf  # type: ignore[attr-defined]  # PySpark 4.1+

        udf: UserDefinedFunctionLike = arrow_udf(_arrow.arrow_kernel(kind, param), result)
        return udf
    from pyspark.sql.pandas.functions import pandas_udf

    with warnings.catch_warnings():
        # PySpark 3.5 checks the pandas and pyarrow versions with distutils' LooseVersion
        warnings.filterwarnings("ignore", "distutils Version classes", DeprecationWarning)
        # The UDF's kind comes from the kernel's runtime __annotations__ (Series -> Series) and
        # the result is any DataType: neither is visible to PySpark's overloads.
        udf = pandas_udf(_arrow.pandas_kernel(kind, param), result)  # type: ignore[call-overload]
        return udf


def make_udf(kind: str, param: int | None, result: DataType) -> UserDefinedFunctionLike:
    """The PySpark UDF computing ``kind`` with this parameter into this Spark type; its input
    must be passed through :func:`udf_input` (or :func:`wrap_input_expression`)."""
    arrow = arrow_udf_available()
    if not arrow:
        _arrow.install_pandas_passthrough()
    return _udf_cached(kind, param, json.dumps(json.loads(result.json())), arrow, _jvm_token())


def udf_input(col: Column, known: tuple[DataType, bool] | None = None) -> Column:
    """The Column a frazil UDF takes: the column itself for arrow_udf, else marked for the
    pandas pass-through (a one-field struct). A column ``known`` to be a non-nullable integer
    goes unmarked: PySpark's own NumPy conversion of it is exact and copies nothing, and
    Spark then builds no struct per row."""
    if arrow_udf_available():
        return col
    if known is not None and not known[1] and _type_name(known[0]) in _INTEGRAL:
        return col
    from pyspark.sql import functions as F

    return F.struct(col.alias(_arrow.MARKER))


def _display(kind: str, param: int | None, col: ColumnOrName) -> str:
    if isinstance(col, str):
        inner = col
    else:
        try:
            inner = str(col._jc.toString())
        except Exception:  # Spark Connect: no JVM column
            inner = "col"
    return f"frazil_{kind}({param}, {inner})" if param is not None else f"frazil_{kind}({inner})"


def _apply(kind: str, param: int | None, known: tuple[DataType, bool], col: ColumnOrName) -> Column:
    udf = make_udf(kind, param, result_type(kind, known[0]))
    return udf(udf_input(_column(col), known)).alias(_display(kind, param, col))


def _fixed(kind: str, param: int | None, col: ColumnOrName) -> Column:
    from pyspark.sql.types import _parse_datatype_string

    known = _known_field(col)
    if known is not None:
        check_type(kind, known[0])  # fail now rather than in an executor
    # bucket and the time transforms give one type whatever they take: ask with any they accept.
    result = _transform(kind).result_type("int" if kind == "bucket" else "timestamp")
    udf = make_udf(kind, param, _parse_datatype_string(str(result)))
    return udf(udf_input(_column(col), known)).alias(_display(kind, param, col))


# Iceberg transform names (as in partition specs) -> the functions' kinds.
_ICEBERG_NAMES = {
    "year": "years",
    "years": "years",
    "month": "months",
    "months": "months",
    "day": "days",
    "days": "days",
    "hour": "hours",
    "hours": "hours",
    "identity": "identity",
}


def _parse_transform(text: str) -> tuple[str, int | None]:
    """A transform string as (function kind, count or width), parsed by the transforms' own
    grammar (native); Spark's plural names of the time transforms are taken too."""
    name = text.strip().lower()
    try:
        transform = parse_transform(_SPARK_PLURALS.get(name, name))
    except ParseError as error:
        kind = name.partition("[")[0]
        if kind in ("bucket", "truncate"):
            what = "bucket count" if kind == "bucket" else "width"
            raise InvalidArgumentError(
                f"frazil_{kind}: the {what} must be a positive int, in {text!r}"
            ) from error
        raise _unknown_transform(text) from error
    kind, _, param = str(transform).partition("[")
    if param:  # bucket[N], truncate[W]: the functions' own kinds
        return kind, int(param[:-1])
    if kind not in _ICEBERG_NAMES:  # void
        raise _unknown_transform(text)
    return _ICEBERG_NAMES[kind], None


def _unknown_transform(text: str) -> InvalidArgumentError:
    return InvalidArgumentError(
        f"unknown transform {text!r} (expected bucket[N], truncate[W], year, month, day, hour "
        "or identity)"
    )


def with_transforms(df: DataFrame, columns: dict[str, tuple[str, str]]) -> DataFrame:
    """``df`` with one more column per entry of ``columns``: new name -> (Iceberg transform
    string, name of a top-level column of ``df``), e.g. ``{"b": ("bucket[16]", "id"),
    "d": ("day", "ts")}``. Values and types are those of the Column functions above.

    On PySpark 4.1+ this is ``withColumns`` over the ``arrow_udf`` Columns. On 3.5 and 4.0 the
    kernels run in one ``mapInArrow`` pass over ``df``'s Arrow batches, without the pandas
    conversion of a ``pandas_udf`` (about 1.7x less time for a bucket of a bigint column); every
    column of ``df`` passes through Python then, so select what is needed first.
    """
    from pyspark.sql.types import StructField, StructType

    specs = []
    for name, (transform, source) in columns.items():
        kind, param = _parse_transform(transform)
        if source not in df.columns:
            raise InvalidArgumentError(f"with_transforms: {df!r} has no column {source!r}")
        if name in df.columns:
            raise InvalidArgumentError(f"with_transforms: {df!r} already has a column {name!r}")
        spark_type = df.schema[source].dataType
        out_type = spark_type if kind == "identity" else result_type(kind, spark_type)
        specs.append((name, kind, param, df.columns.index(source), out_type))
    if not specs:
        return df
    if arrow_udf_available():
        with_param = {"bucket": bucket, "truncate": truncate}
        plain = {
            "years": years,
            "months": months,
            "days": days,
            "hours": hours,
            "identity": identity,
        }
        new = {}
        for name, kind, param, index, _ in specs:
            col = df[df.columns[index]]
            if kind in with_param:
                assert param is not None  # _parse_transform always gives bucket/truncate one
                new[name] = with_param[kind](param, col)
            else:
                new[name] = plain[kind](col)
        return df.withColumns(new)
    schema = StructType(
        list(df.schema.fields) + [StructField(name, t, True) for name, _, _, _, t in specs]
    )
    plan = [(kind, param, index) for _, kind, param, index, _ in specs]
    names = [f.name for f in schema.fields]
    with warnings.catch_warnings():
        # PySpark 3.5 checks the pandas and pyarrow versions with distutils' LooseVersion
        warnings.filterwarnings("ignore", "distutils Version classes", DeprecationWarning)
        return df.mapInArrow(_batch_transformer(plan, names), schema)


def _batch_transformer(
    plan: list[tuple[str, int | None, int]], names: list[str]
) -> Callable[[Iterable[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The ``mapInArrow`` function (shipped to executors by value): each batch's columns, then
    each transform of one of them."""

    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        from frazil.spark import _arrow

        # the arrow_udf's kernel (apply, then one array); identity passes the column through
        kernels = [
            (None if kind == "identity" else _arrow.arrow_kernel(kind, param), index)
            for kind, param, index in plan
        ]
        for batch in batches:
            arrays = list(batch.columns)
            for kernel, index in kernels:
                source = batch.column(index)
                arrays.append(source if kernel is None else kernel(source))
            yield pa.RecordBatch.from_arrays(arrays, names=names)

    return run


# --------------------------------------------------------------------------------------------
# SQL functions (frazil.spark.register)

# SQL name -> (function, whether it takes a constant first argument)
FUNCTIONS = {
    "bucket": True,
    "truncate": True,
    "years": False,
    "months": False,
    "days": False,
    "hours": False,
}

_lock = threading.Lock()
# (id(SparkSession), prefix) -> the JVM session the functions were registered into
_registered: dict[tuple[int, str], Any] = {}


def register(spark: SparkSession, prefix: str = "frazil_") -> list[str]:
    """Registers ``frazil_bucket``, ``frazil_truncate``, ``frazil_years``, ``frazil_months``,
    ``frazil_days``, ``frazil_hours`` and ``frazil_identity`` as temporary functions of
    ``spark`` (a classic SparkSession: Spark Connect has no way to add Python SQL functions of
    a type known only once the argument is resolved). Returns the names.

    Each call is typed and checked when Spark resolves it, like Java's functions: the result
    type follows the argument's type (``frazil_truncate``), the count or width must be a
    constant, and unsupported types are refused before any task runs. Idempotent per session.
    """
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is None:
        raise InvalidArgumentError(
            "frazil.spark.register needs a classic SparkSession (not Spark Connect)"
        )
    names = [prefix + kind for kind in FUNCTIONS] + [prefix + "identity"]
    key = (id(spark), prefix)
    with _lock:
        if _registered.get(key) is jsession:
            return names
        from pyspark.java_gateway import ensure_callback_server_started

        sc = spark.sparkContext
        # Spark's analyzer calls back into this process to build each call's expression.
        ensure_callback_server_started(sc._gateway)  # type: ignore[no-untyped-call]  # PySpark's
        registry = jsession.sessionState().functionRegistry()
        builders = [_Builder(sc, kind, prefix + kind) for kind in FUNCTIONS]
        builders.append(_Builder(sc, "identity", prefix + "identity"))
        for builder in builders:
            registry.createOrReplaceTempFunction(builder.name, builder, "python_udf")
        _registered[key] = jsession
        _keep_alive.extend(builders)
    log.debug("registered %s", ", ".join(names))
    return names


_keep_alive: list[Any] = []


class _Builder:
    """A Spark ``FunctionBuilder`` (``Seq[Expression] => Expression``) implemented in Python
    through py4j: given the resolved arguments of one call, it checks them and returns the
    PythonUDF expression for that call's constant and argument type."""

    def __init__(self, sc: SparkContext, kind: str, name: str) -> None:
        self._sc = sc
        self.kind = kind
        self.name = name

    def apply(self, children: Any) -> Any:  # py4j proxies of Seq[Expression], Expression
        args = [children.apply(i) for i in range(children.size())]
        takes_param = FUNCTIONS.get(self.kind, False)
        expected = 2 if takes_param else 1
        if len(args) != expected:
            shape = "(n, col)" if self.kind == "bucket" else "(width, col)" if takes_param else ""
            raise InvalidArgumentError(
                f"{self.name} takes {expected} argument{'s' if expected > 1 else ''} "
                f"{shape or '(col)'}, got {len(args)}"
            )
        value = args[-1]
        if self.kind == "identity":
            return value
        param = self._constant(args[0]) if takes_param else None
        from pyspark.sql.types import _parse_datatype_json_string

        spark_type = _parse_datatype_json_string(value.dataType().json())
        udf = make_udf(self.kind, param, result_type(self.kind, spark_type))
        jvm = self._sc._jvm
        assert jvm is not None  # set on the driver, where Spark resolves calls
        if not arrow_udf_available():
            expressions = jvm.org.apache.spark.sql.catalyst.expressions
            # Literal's companion object (Scala objects have no static forwarder for apply here)
            marker = getattr(expressions, "Literal$").__getattr__("MODULE$").apply(_arrow.MARKER)
            value = expressions.CreateNamedStruct(jvm.PythonUtils.toSeq([marker, value]))
        # PySpark wraps the UserDefinedFunction (and its Java UDF) in a plain function
        judf = udf._unwrapped._judf  # type: ignore[attr-defined]
        return judf.builder(jvm.PythonUtils.toSeq([value]))

    def _constant(self, expr: Any) -> int:
        what = "number of buckets" if self.kind == "bucket" else "width"
        type_name = expr.dataType().typeName()
        if not expr.foldable() or type_name not in ("byte", "short", "integer", "long"):
            raise InvalidArgumentError(
                f"{self.name}: the {what} must be a constant integer, got {expr.sql()}"
            )
        return positive_int(self.kind, what, expr.eval(None), 2**31 - 1)

    def toString(self) -> str:
        return f"frazil builder {self.name}"

    class Java:
        implements: ClassVar[list[str]] = ["scala.Function1"]


# ---------------------------------------------------------------------------------------------
# bucket keys in JVM arithmetic, for distributed writes' shuffles
#
# A distributed write shuffles rows so that each partition's rows meet in one task
# (frazil.spark.write); Spark must know each row's key before the shuffle. For bucket[N] of an
# int, long, date or timestamp, _with_bucket_key computes the bucket itself (the spec's 32-bit
# Murmur3, seed 0, of the value as an 8-byte little-endian long) in plain Spark arithmetic:
# whole-stage code in the JVM instead of a round trip through a Python worker. The partition
# values the files get still come from the native transforms in the writer: a wrong key could
# only spread a partition over more files (tests compare these keys with the native bucket).
# Every product stays below 2^63 (32-bit values times 16-bit halves), so ANSI mode (Spark 4's
# default) never sees an overflow.

_U32 = 0xFFFF_FFFF
_MURMUR_C1, _MURMUR_C2 = 0xCC9E_2D51, 0x1B87_3593
_FMIX_1, _FMIX_2 = 0x85EB_CA6B, 0xC2B2_AE35


class _Steps:
    """Columns computed one after another. A value used twice is first stored in a column of
    its own and referred to by name: written inline, the hash's expression tree would double
    at each use (millions of nodes), where Spark keeps projections that reuse a value apart."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.columns: list[tuple[str, Any]] = []

    def let(self, value: Any) -> Any:
        from pyspark.sql import functions as F

        name = f"{self.prefix}{len(self.columns)}"
        self.columns.append((name, value))
        return F.col(name)


def _lit(value: int) -> Any:
    from pyspark.sql import functions as F

    return F.lit(value).cast("long")


def _and(x: Any, mask: int) -> Any:
    return x.bitwiseAND(_lit(mask))


def _mul(s: _Steps, x: Any, c: int) -> Any:
    """``x * c mod 2^32`` for ``x`` in [0, 2^32): the constant's halves keep products small."""
    from pyspark.sql import functions as F

    x = s.let(x)
    lo, hi = c & 0xFFFF, c >> 16
    high = F.shiftleft(_and(x * _lit(hi), 0xFFFF), 16)
    return _and(x * _lit(lo) + high, _U32)


def _rotl(s: _Steps, x: Any, r: int) -> Any:
    from pyspark.sql import functions as F

    x = s.let(x)
    return _and(F.shiftleft(x, r).bitwiseOR(F.shiftright(x, 32 - r)), _U32)


def _xor_shift(s: _Steps, x: Any, shift: int) -> Any:
    from pyspark.sql import functions as F

    x = s.let(x)
    return x.bitwiseXOR(F.shiftright(x, shift))


def _mix(s: _Steps, h: Any, k: Any) -> Any:
    k = _mul(s, _rotl(s, _mul(s, k, _MURMUR_C1), 15), _MURMUR_C2)
    h = _rotl(s, h.bitwiseXOR(k), 13)
    return _and(h * _lit(5) + _lit(0xE654_6B64), _U32)


def _murmur3_long(s: _Steps, v: Any) -> Any:
    """The spec's hash of a long Column as an unsigned 32-bit value (a long in [0, 2^32))."""
    from pyspark.sql import functions as F

    v = s.let(v)
    h = _mix(s, _lit(0), _and(v, _U32))
    h = _mix(s, h, _and(F.shiftrightunsigned(v, 32), _U32))
    h = _mul(s, _xor_shift(s, h.bitwiseXOR(_lit(8)), 16), _FMIX_1)
    h = _mul(s, _xor_shift(s, h, 13), _FMIX_2)
    return _xor_shift(s, h, 16)


def _hashes_as_long(spark_type: Any) -> bool:
    """Whether a column of this Spark type hashes as a long (see :func:`_with_bucket_key`)."""
    from pyspark.sql import types as T

    return isinstance(
        spark_type,
        (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.DateType, T.TimestampType),
    )


def _with_bucket_key(df: Any, n: int, col: Any, spark_type: Any, name: str) -> Any:
    """``df`` with a column ``name``: ``bucket[n]`` of ``col`` (of a type
    :func:`_hashes_as_long` accepts) as ints, null for null. Dates hash their day number,
    timestamps (UTC instants) their epoch microseconds, as the spec's bucket does. The
    working columns are named ``name`` followed by a number, and dropped."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(spark_type, T.DateType):
        value = F.unix_date(col).cast("long")
    elif isinstance(spark_type, T.TimestampType):
        value = F.unix_micros(col)
    else:
        value = col.cast("long")
    steps = _Steps(name + "_")
    h = _murmur3_long(steps, value)
    key = (_and(h, 0x7FFF_FFFF) % _lit(n)).cast("int")
    for column, value in steps.columns:
        df = df.withColumn(column, value)
    return df.withColumn(name, key).drop(*(c for c, _ in steps.columns))
