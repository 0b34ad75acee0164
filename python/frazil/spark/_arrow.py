"""The executor side of frazil's Spark functions: Spark's Arrow batches in, frazil's kernels over
them, Arrow arrays of exactly the Spark result type out.

Two ways in, picked by the driver (see :mod:`frazil.spark.functions`):

* PySpark 4.1+: a scalar ``arrow_udf``; Spark hands over ``pyarrow.Array`` batches and takes
  them back as they are.
* PySpark 3.5 and 4.0: a scalar ``pandas_udf``. PySpark converts every Arrow column to a
  NumPy-backed pandas Series before the UDF sees it, which would cost a Python object per value
  for dates, decimals, strings and binaries, turn nullable bigints into float64 (losing
  precision past 2**53) and overflow timestamps outside 1677..2262. So the driver wraps the input
  in a one-field struct named :data:`MARKER`, and :func:`install_pandas_passthrough` makes
  PySpark's converter hand such columns over as a pandas Series backed by the Arrow array itself
  (``pd.ArrowDtype``, no copy). Every other column converts as PySpark always does. A column the
  driver knows to be a non-nullable integer is not marked: NumPy holds it exactly, and Spark
  skips building a struct per row. The way back needs no help: PySpark converts a Series with an
  ``__arrow_array__`` without copying.

The patch is installed when this module is imported, which on an executor happens when the UDF
is unpickled, before its first batch arrives.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import transforms
from frazil.exceptions import InvalidArgumentError

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

# The struct field name that marks frazil's inputs on the pandas_udf path.
MARKER = "__frazil_arrow_value__"

# Spark functions (Java's system.* names) -> what they accept, as Arrow type predicates.
_INTEGERS = (pa.types.is_int8, pa.types.is_int16, pa.types.is_int32, pa.types.is_int64)
_STRINGS = (pa.types.is_string, pa.types.is_large_string, pa.types.is_string_view)
_BINARIES = (pa.types.is_binary, pa.types.is_large_binary, pa.types.is_binary_view)
_TIMESTAMPS = (pa.types.is_timestamp,)
_DATES = (pa.types.is_date32,)
_DECIMALS = (pa.types.is_decimal128,)
ACCEPTS = {
    "bucket": _INTEGERS + _DECIMALS + _DATES + _TIMESTAMPS + _STRINGS + _BINARIES,
    "truncate": _INTEGERS + _DECIMALS + _STRINGS + _BINARIES,
    "years": _DATES + _TIMESTAMPS,
    "months": _DATES + _TIMESTAMPS,
    "days": _DATES + _TIMESTAMPS,
    "hours": _TIMESTAMPS,
}


def _check(kind: str, values: pa.Array | pa.ChunkedArray) -> None:
    if not any(accepts(values.type) for accepts in ACCEPTS[kind]):
        raise InvalidArgumentError(f"frazil_{kind} cannot be applied to Arrow type {values.type}")


def apply(kind: str, param: int | None, values: Any) -> pa.Array | pa.ChunkedArray:
    """One batch through one transform, with the result in the type Java's Spark function
    returns: int for bucket, years, months and hours, date for days, the input's own type for
    truncate."""
    _check(kind, values)
    if kind == "bucket":
        assert param is not None  # bucket and truncate always come with their parameter
        return transforms.bucket(param, values)
    if kind == "truncate":
        assert param is not None
        out = transforms.truncate(param, values)
        if pa.types.is_int8(values.type) or pa.types.is_int16(values.type):
            # Java truncates tinyint and smallint in int arithmetic and narrows with a cast, so an
            # out-of-range result wraps around (truncate(10, -128Y) = 126Y); so does this cast.
            return out.cast(values.type, safe=False)
        if pa.types.is_decimal(values.type):
            return _null_decimal_overflow(out, values.type)
        return out
    if kind == "years":
        return transforms.year(values)
    if kind == "months":
        return transforms.month(values)
    if kind == "days":
        return transforms.day(values, as_date=True)
    if kind == "hours":
        return transforms.hour(values)
    raise InvalidArgumentError(f"unknown frazil function {kind!r}")


def _null_decimal_overflow(out: Any, dtype: pa.Decimal128Type) -> Any:
    """Truncating rounds toward negative infinity, so a value near the lower limit can need one
    more digit than the type has (truncate(10, -9.99 as decimal(3,2)) = -10.00). Java's function
    returns that value and Spark stores a decimal that does not fit its type as null."""
    # -99...9 (precision nines) at the type's scale; a tuple keeps all 38 digits exact
    lowest = pa.scalar(Decimal((1, (9,) * dtype.precision, -dtype.scale)), type=dtype)
    overflow = pc.less(out, lowest)
    if not pc.any(overflow).as_py():
        return out
    return pc.if_else(overflow, pa.scalar(None, type=dtype), out)


# --------------------------------------------------------------------------------------------
# The pandas_udf path (PySpark 3.5 and 4.0)


def series_to_arrow(series: Any) -> pa.Array | pa.ChunkedArray:
    """The Arrow data behind a Series made by the pass-through converter (no copy); or, for a
    non-nullable integer column the driver left unmarked, the Arrow view of its NumPy data."""
    try:
        return series.array._pa_array  # pandas' ArrowExtensionArray keeps the ChunkedArray here
    except AttributeError:
        pass
    kind = getattr(getattr(series, "dtype", None), "kind", None)
    if kind in ("i", "u"):  # NumPy integers hold no nulls
        return pa.Array.from_pandas(series)  # zero-copy over the NumPy buffer
    raise InvalidArgumentError(
        f"frazil's pandas_udf received a NumPy-backed Series of {series.dtype}: the Arrow "
        "pass-through converter is not active in this Python worker (unsupported PySpark "
        "version?)"
    )


def arrow_to_series(values: pa.Array | pa.ChunkedArray) -> Any:
    import pandas as pd

    if isinstance(values, pa.ChunkedArray):
        # PySpark builds its result batch from one Array per column
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    return pd.Series(pd.arrays.ArrowExtensionArray(values), copy=False)


def _marked_value(column: Any) -> Any:
    """The value column of a frazil-marked struct column, else None."""
    dtype = getattr(column, "type", None)
    if (
        dtype is None
        or not pa.types.is_struct(dtype)
        or dtype.num_fields != 1
        or dtype.field(0).name != MARKER
    ):
        return None
    if isinstance(column, pa.ChunkedArray):
        return pa.chunked_array([c.field(0) for c in column.chunks], type=dtype.field(0).type)
    return column.field(0)


def _passthrough(original: Callable[..., Any]) -> Callable[..., Any]:
    def arrow_to_pandas(self: Any, arrow_column: Any, *args: Any, **kwargs: Any) -> Any:
        inner = _marked_value(arrow_column)
        if inner is None:
            return original(self, arrow_column, *args, **kwargs)
        import pandas as pd

        return pd.Series(pd.arrays.ArrowExtensionArray(inner), copy=False)

    arrow_to_pandas.__dict__["__frazil_original__"] = original
    arrow_to_pandas.__doc__ = original.__doc__
    return arrow_to_pandas


def install_pandas_passthrough() -> bool:
    """Patches PySpark's Arrow-to-pandas converters (both the base serializer's and the scalar
    pandas UDF serializer's, which flattens struct inputs before the base one sees them) so that
    frazil-marked columns reach the UDF as Arrow-backed Series. Idempotent; False when this
    PySpark has no such converters (4.1+, where frazil uses arrow_udf instead)."""
    try:
        from pyspark.sql.pandas import serializers
    except ImportError:  # pragma: no cover - pyspark or pandas missing
        return False
    patched = False
    for name in ("ArrowStreamPandasSerializer", "ArrowStreamPandasUDFSerializer"):
        cls = getattr(serializers, name, None)
        method = getattr(cls, "arrow_to_pandas", None) if cls is not None else None
        # patch only methods defined on this class itself, and only once
        if cls is None or method is None or "arrow_to_pandas" not in vars(cls):
            continue
        if not hasattr(method, "__frazil_original__"):
            cls.arrow_to_pandas = _passthrough(method)
        patched = True
    return patched


def pandas_kernel(kind: str, param: int | None) -> Callable[[pd.Series], pd.Series]:
    """The function a scalar pandas_udf runs: Series (Arrow-backed) -> Series (Arrow-backed)."""
    import pandas as pd

    def kernel(values: pd.Series) -> pd.Series:
        return arrow_to_series(apply(kind, param, series_to_arrow(values)))

    kernel.__annotations__ = {"values": pd.Series, "return": pd.Series}
    kernel.__name__ = f"frazil_{kind}"  # the UDF's name in Spark plans
    return kernel


def arrow_kernel(kind: str, param: int | None) -> Callable[[pa.Array], pa.Array]:
    """The function a scalar arrow_udf (PySpark 4.1+) runs: Array -> Array."""

    def kernel(values: pa.Array) -> pa.Array:
        out = apply(kind, param, values)
        if isinstance(out, pa.ChunkedArray):
            out = out.combine_chunks()
        return out

    kernel.__annotations__ = {"values": pa.Array, "return": pa.Array}
    kernel.__name__ = f"frazil_{kind}"  # the UDF's name in Spark plans
    return kernel


try:
    install_pandas_passthrough()
except Exception:  # pragma: no cover - never break an executor over the optional fast path
    log.warning("could not install frazil's Arrow pass-through for pandas UDFs", exc_info=True)
