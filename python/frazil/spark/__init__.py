"""frazil on Spark (PySpark 3.5 and 4.x): partition transforms as Spark functions.

:mod:`frazil.spark.functions` has the Column functions; :func:`register` makes them callable
from SQL::

    frazil.spark.register(spark)
    spark.sql("SELECT frazil_bucket(16, id), frazil_days(ts), frazil_truncate(4, name) FROM t")

``frazil_bucket`` and ``frazil_truncate`` take their count or width as a constant first
argument, like Java's ``system.bucket`` and ``system.truncate``.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, ClassVar

from frazil.exceptions import InvalidArgumentError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    from frazil.metadata import StatisticsFile
    from frazil.table import Table

__all__ = ["compute_statistics", "register"]

log = logging.getLogger(__name__)

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
        from frazil.spark import _arrow
        from frazil.spark import functions as fs

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
        udf = fs.make_udf(self.kind, param, fs.result_type(self.kind, spark_type))
        jvm = self._sc._jvm
        assert jvm is not None  # set on the driver, where Spark resolves calls
        if not fs.arrow_udf_available():
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
        from frazil.spark.functions import _positive_int

        return _positive_int(self.kind, what, expr.eval(None), 2**31 - 1)

    def toString(self) -> str:
        return f"frazil builder {self.name}"

    class Java:
        implements: ClassVar[list[str]] = ["scala.Function1"]


def compute_statistics(
    spark: SparkSession,
    table: Table,
    columns: Sequence[str] | None = None,
    snapshot_id: int | None = None,
) -> StatisticsFile:
    """NDV sketches of a table's columns computed on Spark's executors and merged on the
    driver; see :mod:`frazil.spark.statistics`."""
    from frazil.spark.statistics import compute_statistics as compute

    return compute(spark, table, columns, snapshot_id)


# Distributed write and read (frazil.spark.write, frazil.spark.read).
from frazil.spark.read import read  # noqa: E402
from frazil.spark.write import write  # noqa: E402

__all__ += ["read", "write"]


def register_data_source(spark: SparkSession, pushdown: bool | None = None) -> None:
    """Registers the ``frazil`` Python data source with ``spark`` (PySpark 4.0+):
    ``spark.read.format("frazil")`` and ``df.write.format("frazil")`` (see
    :func:`frazil.spark.datasource.register_data_source` for ``pushdown``)."""
    from frazil.spark.datasource import register_data_source as _register

    _register(spark, pushdown)


__all__ += ["register_data_source"]

# Distributed maintenance (frazil.spark.maintenance).
from frazil.spark.maintenance import (  # noqa: E402
    expire_snapshots,
    remove_orphan_files,
    rewrite_data_files,
)

__all__ += ["expire_snapshots", "remove_orphan_files", "rewrite_data_files"]
