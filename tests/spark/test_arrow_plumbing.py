"""The executor-side plumbing of frazil.spark (frazil/spark/_arrow.py) without a Spark session:
result types and Java's narrowing rules on plain Arrow arrays, and the pandas pass-through."""

from __future__ import annotations

from decimal import Decimal

import pytest
from peers import import_peer

pa = import_peer("pyarrow")
pd = import_peer("pandas")

from frazil.exceptions import InvalidArgumentError  # noqa: E402
from frazil.spark import _arrow  # noqa: E402


def test_result_types_follow_javas_spark_functions():
    ts = pa.array([0, None, -1], pa.timestamp("us", tz="UTC"))
    assert _arrow.apply("bucket", 16, pa.array([1, None], pa.int8())).type == pa.int32()
    assert _arrow.apply("years", None, ts).type == pa.int32()
    assert _arrow.apply("months", None, ts).type == pa.int32()
    assert _arrow.apply("hours", None, ts).type == pa.int32()
    assert _arrow.apply("days", None, ts).to_pylist()[1:] == [
        None,
        pa.scalar(-1, pa.date32()).as_py(),
    ]
    for arrow_type in (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.decimal128(5, 1)):
        assert _arrow.apply("truncate", 3, pa.array([4, None], arrow_type)).type == arrow_type
    assert _arrow.apply("truncate", 2, pa.array(["abc"], pa.large_string())).to_pylist() == ["ab"]


def test_truncate_narrows_tinyint_and_smallint_like_java():
    # Java: (byte) (v - (((v % w) + w) % w)) in int arithmetic, so the result wraps around
    out = _arrow.apply("truncate", 10, pa.array([-128, -121, 127, None], pa.int8()))
    assert out.to_pylist() == [126, -130 + 256, 120, None]
    out = _arrow.apply("truncate", 1000, pa.array([-32768, None], pa.int16()))
    assert out.to_pylist() == [-33000 + 65536, None]


def test_truncate_nulls_decimals_that_leave_their_precision():
    values = pa.array(
        [Decimal("-9.99"), Decimal("-9.90"), Decimal("9.99"), None], pa.decimal128(3, 2)
    )
    assert _arrow.apply("truncate", 10, values).to_pylist() == [
        None,
        Decimal("-9.90"),
        Decimal("9.90"),
        None,
    ]
    wide = pa.array([Decimal("-" + "9" * 28 + "." + "9" * 10)], pa.decimal128(38, 10))
    assert _arrow.apply("truncate", 10, wide).to_pylist() == [None]


def test_refuses_types_javas_functions_refuse():
    with pytest.raises(InvalidArgumentError, match="frazil_hours cannot be applied"):
        _arrow.apply("hours", None, pa.array([1], pa.date32()))
    with pytest.raises(InvalidArgumentError, match="frazil_truncate cannot be applied"):
        _arrow.apply("truncate", 2, pa.array([1.5], pa.float64()))
    with pytest.raises(InvalidArgumentError, match="frazil_bucket cannot be applied"):
        _arrow.apply("bucket", 2, pa.array([True], pa.bool_()))


def test_marked_struct_columns_pass_through_as_arrow_backed_series():
    inner = pa.array([2**53 + 1, None, -5], pa.int64())  # would not survive float64
    marked = pa.StructArray.from_arrays([inner], names=[_arrow.MARKER])
    chunked = pa.chunked_array([marked, marked])
    assert _arrow.install_pandas_passthrough() in (True, False)

    def original(self, column, *args, **kwargs):
        return "original"

    convert = _arrow._passthrough(original)
    series = convert(None, chunked)
    assert isinstance(series.dtype, pd.ArrowDtype)
    back = _arrow.series_to_arrow(series)
    assert back.to_pylist() == inner.to_pylist() * 2
    kernel = _arrow.pandas_kernel("bucket", 16)
    out = _arrow.series_to_arrow(kernel(series))
    assert out.type == pa.int32() and out.null_count == 2
    # anything else converts as PySpark always does
    other = pa.StructArray.from_arrays([inner], names=["x"])
    assert convert(None, other) == "original"
    assert convert(None, pa.chunked_array([inner])) == "original"


def test_numpy_backed_series_are_refused_not_converted_lossily():
    # what PySpark makes of a nullable bigint column: float64, inexact past 2**53
    with pytest.raises(InvalidArgumentError, match="pass-through converter is not active"):
        _arrow.series_to_arrow(pd.Series([2**53 + 1, None]))
    with pytest.raises(InvalidArgumentError, match="pass-through converter is not active"):
        _arrow.series_to_arrow(pd.Series(["a", "b"]))


def test_numpy_integer_series_are_viewed_exactly():
    """An unmarked non-nullable integer column: its NumPy data viewed as Arrow, no copy."""
    import numpy as np

    for dtype in (np.int8, np.int16, np.int32, np.int64):
        values = np.array([0, -1, np.iinfo(dtype).max, np.iinfo(dtype).min], dtype=dtype)
        series = pd.Series(values)
        out = _arrow.series_to_arrow(series)
        assert out.type == pa.from_numpy_dtype(dtype)
        assert out.to_pylist() == values.tolist()
        assert out.buffers()[1].address == values.ctypes.data  # the same memory
