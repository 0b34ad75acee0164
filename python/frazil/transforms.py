"""Partition transforms (spec "Partition Transforms"), over whole Arrow arrays.

Inputs are anything that speaks the Arrow PyCapsule interface (pyarrow arrays and chunked
arrays, Polars series, ...); outputs are pyarrow arrays, built without copying from the native
kernels' buffers. ``bucket``, ``year``, ``month``, ``day`` and ``hour`` return int32;
``truncate`` returns int32 for 8- to 32-bit integers, int64 for 64-bit ones, and the input's own
layout for decimals, strings and binaries; ``identity`` and ``void`` keep the input's type.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from frazil import _native
from frazil.exceptions import InvalidArgumentError
from frazil.types import IcebergType, as_type, type_from_json
from frazil.values.native import from_native, to_native

__all__ = [
    "BucketTransform",
    "DayTransform",
    "HourTransform",
    "IdentityTransform",
    "MonthTransform",
    "Transform",
    "TruncateTransform",
    "VoidTransform",
    "YearTransform",
    "bucket",
    "day",
    "hour",
    "identity",
    "month",
    "parse",
    "truncate",
    "void",
    "year",
]

ArrowArrayLike = Any  # pa.Array | pa.ChunkedArray | anything with __arrow_c_array__/_stream__


class Transform:
    """One partition transform, e.g. ``parse("bucket[16]")``."""

    __slots__ = ("_spec",)

    def __init__(self, spec: str) -> None:
        self._spec = _native.transform_parse(spec)

    def __str__(self) -> str:
        return self._spec

    def __repr__(self) -> str:
        return f"Transform({self._spec!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Transform) and other._spec == self._spec

    def __hash__(self) -> int:
        return hash(self._spec)

    @property
    def preserves_order(self) -> bool:
        """Whether ``a <= b`` implies ``t(a) <= t(b)``."""
        return _native.transform_preserves_order(self._spec)

    def can_transform(self, source_type: IcebergType | str) -> bool:
        return _native.transform_can_transform(self._spec, as_type(source_type).json_text())

    def result_type(self, source_type: IcebergType | str) -> IcebergType:
        """The Iceberg type of the partition values, e.g. ``date`` for ``day``."""
        text = _native.transform_result_type(self._spec, as_type(source_type).json_text())
        return type_from_json(json.loads(text))

    def apply(self, values: ArrowArrayLike) -> pa.Array | pa.ChunkedArray:
        """Transforms every value of an Arrow array; nulls stay null. A chunked array (or any
        ``__arrow_c_stream__``) gives a chunked array back."""
        if hasattr(values, "__arrow_c_array__"):
            return pa.array(_native.transform_apply(self._spec, values))
        if hasattr(values, "__arrow_c_stream__"):
            out = _native.transform_apply_stream(self._spec, values)
            return pa.chunked_array(
                [pa.array(c) for c in out.chunks], type=pa.array(out.empty).type
            )
        raise InvalidArgumentError(
            "expected an Arrow array (an object with __arrow_c_array__ or __arrow_c_stream__), "
            f"got {type(values).__name__}"
        )

    def apply_scalar(self, value: Any, source_type: IcebergType | str) -> Any:
        """Transforms one Python value of an Iceberg type (see :mod:`frazil.values`)."""
        source = as_type(source_type)
        out = _native.transform_apply_scalar(
            self._spec, to_native(value, source), source.json_text()
        )
        return from_native(out, self.result_type(source))

    def __call__(self, values: ArrowArrayLike) -> pa.Array | pa.ChunkedArray:
        return self.apply(values)


# PyIceberg's transform classes (same names and constructor arguments), so a spec or sort order
# written for PyIceberg builds unchanged. Each is a Transform: equal to, and hashing as, the
# parsed string form (``BucketTransform(16) == parse("bucket[16]")``).


class IdentityTransform(Transform):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("identity")

    def __repr__(self) -> str:
        return "IdentityTransform()"


class BucketTransform(Transform):
    __slots__ = ()

    def __init__(self, num_buckets: int) -> None:
        self._spec = _native.transform_bucket(num_buckets)

    @property
    def num_buckets(self) -> int:
        return int(self._spec[len("bucket[") : -1])

    def __repr__(self) -> str:
        return f"BucketTransform(num_buckets={self.num_buckets})"


class TruncateTransform(Transform):
    __slots__ = ()

    def __init__(self, width: int) -> None:
        self._spec = _native.transform_truncate(width)

    @property
    def width(self) -> int:
        return int(self._spec[len("truncate[") : -1])

    def __repr__(self) -> str:
        return f"TruncateTransform(width={self.width})"


class YearTransform(Transform):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("year")

    def __repr__(self) -> str:
        return "YearTransform()"


class MonthTransform(Transform):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("month")

    def __repr__(self) -> str:
        return "MonthTransform()"


class DayTransform(Transform):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("day")

    def __repr__(self) -> str:
        return "DayTransform()"


class HourTransform(Transform):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("hour")

    def __repr__(self) -> str:
        return "HourTransform()"


class VoidTransform(Transform):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("void")

    def __repr__(self) -> str:
        return "VoidTransform()"


_PLAIN: dict[str, Callable[[], Transform]] = {
    "identity": IdentityTransform,
    "year": YearTransform,
    "month": MonthTransform,
    "day": DayTransform,
    "hour": HourTransform,
    "void": VoidTransform,
}


def typed(transform: Transform) -> Transform:
    """The same transform as an instance of its PyIceberg-named class."""
    spec = transform._spec
    plain = _PLAIN.get(spec)
    if plain is not None:
        return plain()
    if spec.startswith("bucket["):
        return BucketTransform(int(spec[len("bucket[") : -1]))
    if spec.startswith("truncate["):
        return TruncateTransform(int(spec[len("truncate[") : -1]))
    return transform


def parse(text: str) -> Transform:
    """Parses a transform string: ``identity``, ``bucket[N]``, ``truncate[W]``, ``year``,
    ``month``, ``day``, ``hour`` or ``void``; the result is one of the classes above."""
    if not isinstance(text, str):
        raise InvalidArgumentError(f"a transform string must be a str, got {text!r}")
    return typed(Transform(text))


def bucket(n: int, values: ArrowArrayLike) -> pa.Array | pa.ChunkedArray:
    """``bucket[n]``: Murmur3 hash of each value, modulo ``n`` (int32)."""
    return Transform(_native.transform_bucket(n)).apply(values)


def truncate(w: int, values: ArrowArrayLike) -> pa.Array | pa.ChunkedArray:
    """``truncate[w]``: integers and decimals floored to a multiple of ``w``, strings to ``w``
    code points, binaries to ``w`` bytes."""
    return Transform(_native.transform_truncate(w)).apply(values)


def year(values: ArrowArrayLike) -> pa.Array | pa.ChunkedArray:
    """Years from 1970 of dates or timestamps (int32)."""
    return _YEAR.apply(values)


def month(values: ArrowArrayLike) -> pa.Array | pa.ChunkedArray:
    """Months from 1970-01 of dates or timestamps (int32)."""
    return _MONTH.apply(values)


def day(values: ArrowArrayLike, *, as_date: bool = False) -> pa.Array | pa.ChunkedArray:
    """Days from 1970-01-01 of dates or timestamps: int32, or date32 with ``as_date=True``
    (the spec's result type is ``date``; readers accept both)."""
    out = _DAY.apply(values)
    return out.cast(pa.date32()) if as_date else out


def hour(values: ArrowArrayLike) -> pa.Array | pa.ChunkedArray:
    """Hours from 1970-01-01T00:00 of timestamps (int32)."""
    return _HOUR.apply(values)


def identity(values: ArrowArrayLike) -> pa.Array | pa.ChunkedArray:
    """The values themselves (checked to be of a type identity can partition by)."""
    return _IDENTITY.apply(values)


def void(values: ArrowArrayLike) -> pa.Array | pa.ChunkedArray:
    """All nulls, of the input's type."""
    return _VOID.apply(values)


_YEAR = Transform("year")
_MONTH = Transform("month")
_DAY = Transform("day")
_HOUR = Transform("hour")
_IDENTITY = Transform("identity")
_VOID = Transform("void")
