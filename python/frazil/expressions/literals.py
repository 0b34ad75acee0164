"""Typed constants of expressions and their conversion to a column's type.

A :class:`Literal` is a value plus an Iceberg type; values are the natural Python objects
of :mod:`frazil.values` (``int`` for int/long, ``decimal.Decimal``, ``datetime.date``,
``datetime.time``, ``datetime.datetime``, ``int`` nanoseconds for the ``_ns`` timestamps,
``uuid.UUID``, ``bytes``).

Binding converts a literal to the type of the term it is compared with (:func:`convert`). The
result is either the converted literal, :data:`ABOVE_MAX`/:data:`BELOW_MIN` for values outside the
type's range (binding then folds the predicate to true or false, as Java's ``Literals`` does), or
a :class:`Between` when the value lies strictly between two values of the type (``int_col < 1.5``,
a decimal with more digits after the point than the column's scale, a timestamp with nanoseconds
on a microsecond column). A ``Between`` lets binding rewrite the predicate exactly (``x < 1.5`` is
``x <= 1``), which is the spec's "promote, never cast unsafely" rule; Java rejects those cases and
PyIceberg rounds, which can drop matching rows.
"""

from __future__ import annotations

import datetime as dt
import math
import struct
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from frazil import values
from frazil.exceptions import FrazilError, InvalidArgumentError
from frazil.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
    PrimitiveType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
    as_type,
)
from frazil.values.native import from_native, to_native

__all__ = ["ABOVE_MAX", "BELOW_MIN", "Between", "Literal", "convert", "literal"]

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
FLOAT_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]

_MICROS_PER_DAY = 86_400_000_000
_NANOS_PER_DAY = _MICROS_PER_DAY * 1000

_NATURAL_TYPES = (LongType, DoubleType, StringType, BooleanType)


class Literal:
    """A non-null, non-NaN constant of an Iceberg primitive type."""

    __slots__ = ("type", "value")

    value: Any
    type: PrimitiveType

    def __init__(self, value: Any, type: IcebergType | str | None = None) -> None:
        t = _infer_type(value) if type is None else as_type(type)
        if not isinstance(t, PrimitiveType):
            raise InvalidArgumentError(f"a literal must have a primitive type, not {t}")
        object.__setattr__(self, "value", _check_value(value, t))
        object.__setattr__(self, "type", t)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Literal is immutable")

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Literal)
            and self.type == other.type
            and type(self.value) is type(other.value)
            and self.value == other.value
        )

    def __hash__(self) -> int:
        return hash((self.type, self.value))

    def __reduce__(self) -> Any:
        return (Literal, (self.value, self.type))

    def __repr__(self) -> str:
        if isinstance(self.type, _NATURAL_TYPES) and _infer_type(self.value) == self.type:
            return f"literal({self.value!r})"
        return f"Literal({self.value!r}, {str(self.type)!r})"

    def __str__(self) -> str:
        """The row-filter syntax of the value (see :mod:`frazil.expressions.parser`)."""
        v = self.value
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(self.type, (DoubleType, FloatType)):
            text = repr(float(v))
            if text in ("inf", "-inf"):
                return f"{text[:-3]}1e999"
            return text if "e" in text else f"{text}e0"  # an exponent reads back as a double
        if isinstance(v, (int, Decimal)) and not isinstance(
            self.type, (TimestampNanoType, TimestamptzNanoType)
        ):
            return str(v)
        if isinstance(v, (bytes, bytearray)):
            return f"X'{bytes(v).hex().upper()}'"
        if isinstance(self.type, (TimestampNanoType, TimestamptzNanoType)):
            text = values.to_json(v, self.type)
        elif isinstance(v, (dt.date, dt.time, dt.datetime)):
            text = v.isoformat()
        else:
            text = str(v)
        return "'" + text.replace("'", "''") + "'"

    def to(self, type: IcebergType | str) -> Literal | _Bound | Between:
        """This literal as a value of ``type`` (see :func:`convert`)."""
        return convert(self, as_type(type))


def literal(value: Any) -> Literal:
    """A literal of a Python value's natural Iceberg type: ``bool`` -> boolean, ``int`` -> long,
    ``float`` -> double, ``str`` -> string, ``Decimal`` -> decimal(P, S), ``date``, ``time``,
    naive ``datetime`` -> timestamp, aware -> timestamptz, ``UUID`` -> uuid, ``bytes`` ->
    binary. A :class:`Literal` is returned as it is."""
    if isinstance(value, Literal):
        return value
    return Literal(value)


def _infer_type(value: Any) -> PrimitiveType:
    if value is None:
        raise InvalidArgumentError("a literal cannot be null: use IsNull / NotNull")
    if isinstance(value, bool):
        return BooleanType()
    if isinstance(value, int):
        return LongType()
    if isinstance(value, float):
        return DoubleType()
    if isinstance(value, str):
        return StringType()
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise InvalidArgumentError(f"a decimal literal must be finite, got {value}")
        _, digits, exponent = value.as_tuple()
        scale = max(0, -int(exponent))
        precision = max(len(digits) + max(0, int(exponent)), scale, 1)
        return DecimalType(precision, scale)
    if isinstance(value, dt.datetime):
        return TimestampType() if value.tzinfo is None else TimestamptzType()
    if isinstance(value, dt.date):
        return DateType()
    if isinstance(value, dt.time):
        return TimeType()
    if isinstance(value, uuid.UUID):
        return UUIDType()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return BinaryType()
    raise InvalidArgumentError(
        f"cannot make an expression literal of a {type(value).__name__}: {value!r}"
    )


def _check_value(value: Any, t: PrimitiveType) -> Any:
    """Validates (and normalizes) a value of type ``t``."""
    if value is None:
        raise InvalidArgumentError("a literal cannot be null: use IsNull / NotNull")
    if isinstance(value, float) and math.isnan(value):
        raise InvalidArgumentError("a literal cannot be NaN: use IsNaN / NotNaN")

    def fail(why: str) -> InvalidArgumentError:
        return InvalidArgumentError(f"{value!r} is not a valid {t} literal: {why}")

    if isinstance(t, BooleanType):
        if not isinstance(value, bool):
            raise fail("expected a bool")
        return value
    if isinstance(t, (IntegerType, LongType)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail("expected an int")
        # An unbound long may be out of range (``x < 2**70``); binding folds it away.
        if isinstance(t, IntegerType) and not INT_MIN <= value <= INT_MAX:
            raise fail("out of the int range")
        return value
    if isinstance(t, (FloatType, DoubleType)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise fail("expected a float")
        return float(value)
    if isinstance(t, DecimalType):
        if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
            raise fail("expected a decimal.Decimal")
        d = Decimal(value)
        if not d.is_finite():
            raise fail("not finite")
        unscaled = d.scaleb(t.scale)
        if unscaled != unscaled.to_integral_value():
            raise fail(f"more than {t.scale} digits after the point")
        if abs(unscaled) >= 10**t.precision:
            raise fail(f"more than {t.precision} digits")
        return Decimal(int(unscaled)).scaleb(-t.scale)
    if isinstance(t, DateType):
        if isinstance(value, dt.datetime) or not isinstance(value, dt.date):
            raise fail("expected a datetime.date")
        return value
    if isinstance(t, TimeType):
        if not isinstance(value, dt.time) or value.tzinfo is not None:
            raise fail("expected a datetime.time without tzinfo")
        return value
    if isinstance(t, TimestampType):
        if not isinstance(value, dt.datetime) or value.tzinfo is not None:
            raise fail("expected a naive datetime.datetime")
        return value
    if isinstance(t, TimestamptzType):
        if not isinstance(value, dt.datetime) or value.utcoffset() is None:
            raise fail("expected an aware datetime.datetime")
        return value.astimezone(dt.timezone.utc)
    if isinstance(t, (TimestampNanoType, TimestamptzNanoType)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail("expected int nanoseconds from the epoch")
        return value
    if isinstance(t, StringType):
        if not isinstance(value, str):
            raise fail("expected a str")
        return value
    if isinstance(t, UUIDType):
        if not isinstance(value, uuid.UUID):
            raise fail("expected a uuid.UUID")
        return value
    if isinstance(t, (FixedType, BinaryType)):
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise fail("expected bytes")
        value = bytes(value)
        if isinstance(t, FixedType) and len(value) != t.length:
            raise fail(f"{len(value)} bytes, expected {t.length}")
        return value
    raise InvalidArgumentError(f"{t} columns cannot be compared with literals")


# ---------------------------------------------------------------------------------------------
# conversion


class _Bound:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


ABOVE_MAX = _Bound("ABOVE_MAX")
"""The value is greater than every value of the target type."""
BELOW_MIN = _Bound("BELOW_MIN")
"""The value is less than every value of the target type."""


@dataclass(frozen=True)
class Between:
    """The value lies strictly between ``below`` and ``above``, adjacent values of the target
    type; either is ``None`` when the value is beyond the type's range on that side."""

    below: Literal | None
    above: Literal | None


class ConversionError(InvalidArgumentError):
    """The literal cannot be a value of the target type (binding turns this into a
    ValidationError naming the column)."""


def convert(lit: Literal, target: IcebergType) -> Literal | _Bound | Between:
    """``lit`` as a value of ``target``; raises :class:`ConversionError` when it cannot be one."""
    v, src = lit.value, lit.type
    if src == target:
        if isinstance(target, LongType) and not LONG_MIN <= v <= LONG_MAX:
            return ABOVE_MAX if v > 0 else BELOW_MIN  # Python ints are unbounded
        return lit
    try:
        out = _convert(v, src, target)
    except (ValueError, ArithmeticError, OverflowError, FrazilError) as e:
        raise ConversionError(f"cannot convert {src} literal {lit} to {target}: {e}") from None
    if out is None:
        raise ConversionError(f"cannot convert {src} literal {lit} to {target}")
    return out


def _exact_number(v: Any, src: IcebergType) -> Fraction | _Bound | None:
    """The exact numeric value of a number literal, or None if it is not a number."""
    if isinstance(src, (IntegerType, LongType, DecimalType)):
        return Fraction(v)
    if isinstance(src, (FloatType, DoubleType)):
        if math.isinf(v):
            return ABOVE_MAX if v > 0 else BELOW_MIN
        # The shortest decimal that reads back as this float, as Java's BigDecimal.valueOf.
        return Fraction(Decimal(repr(v)))
    if isinstance(src, StringType):
        return Fraction(_parse_number_text(v))
    return None


def _parse_number_text(text: str) -> Decimal:
    try:
        d = Decimal(text.strip())
    except InvalidOperation:
        raise ValueError(f"{text!r} is not a number") from None
    if not d.is_finite():
        raise ValueError(f"{text!r} is not a finite number")
    return d


def _to_integral(
    x: Fraction | _Bound, lo: int, hi: int, make: Callable[[int], Literal]
) -> Literal | _Bound | Between:
    if isinstance(x, _Bound):
        return x
    if x > hi:
        return ABOVE_MAX
    if x < lo:
        return BELOW_MIN
    if x.denominator == 1:
        return make(int(x))
    f, c = math.floor(x), math.ceil(x)
    return Between(make(f) if f >= lo else None, make(c) if c <= hi else None)


def _to_decimal(x: Fraction | _Bound, t: DecimalType) -> Literal | _Bound | Between:
    limit = 10**t.precision - 1

    def make(unscaled: int) -> Literal:
        return Literal(Decimal(unscaled).scaleb(-t.scale), t)

    if isinstance(x, _Bound):
        return x
    return _to_integral(x * 10**t.scale, -limit, limit, make)


def _to_float32(x: float) -> Literal | _Bound:
    if math.isinf(x):
        return Literal(x, FloatType())
    if x > FLOAT_MAX:
        return ABOVE_MAX
    if x < -FLOAT_MAX:
        return BELOW_MIN
    # Java narrows to the nearest float (Literals.DoubleLiteral.to(FloatType)).
    return Literal(struct.unpack("<f", struct.pack("<f", x))[0], FloatType())


def _timestamp_nanos(v: Any, src: IcebergType) -> int | None:
    """Nanoseconds from the epoch of a date/timestamp literal (naive and aware alike, as
    PyIceberg and Java, which share one timestamp literal for both)."""
    if isinstance(src, (TimestampType, TimestamptzType)):
        return int(to_native(v, src)) * 1000
    if isinstance(src, (TimestampNanoType, TimestamptzNanoType)):
        return int(v)
    if isinstance(src, DateType):
        return int(to_native(v, src)) * _NANOS_PER_DAY
    return None


def _timestamp_from_nanos(
    nanos: int, per: int, make: Callable[[int], Literal | None]
) -> Literal | Between | None:
    q, r = divmod(nanos, per)
    if r == 0:
        return make(q)
    return Between(make(q), make(q + 1))


# Epoch-based ints to values, as frazil.values converts the native core's canonical forms.


def _make_date(days: int) -> Literal:
    return Literal(from_native(days, DateType()), DateType())


def _make_time(micros: int) -> Literal | None:
    if not 0 <= micros < _MICROS_PER_DAY:
        return None
    return Literal(from_native(micros, TimeType()), TimeType())


def _make_timestamp(t: IcebergType) -> Callable[[int], Literal]:
    def make(micros: int) -> Literal:
        return Literal(from_native(micros, t), t)

    return make


def _convert(v: Any, src: PrimitiveType, t: IcebergType) -> Literal | _Bound | Between | None:
    if isinstance(t, BooleanType):
        if isinstance(src, StringType) and v.strip().lower() in ("true", "false"):
            return Literal(v.strip().lower() == "true", t)
        return None
    if isinstance(t, (IntegerType, LongType)):
        if isinstance(src, (DateType, TimeType, BooleanType)) or _is_timestamp(src):
            return None
        x = _exact_number(v, src)
        if x is None:
            return None
        lo, hi = (INT_MIN, INT_MAX) if isinstance(t, IntegerType) else (LONG_MIN, LONG_MAX)
        return _to_integral(x, lo, hi, lambda i: Literal(i, t))
    if isinstance(t, DoubleType):
        if isinstance(src, (IntegerType, LongType)):
            try:
                return Literal(float(v), t)
            except OverflowError:
                return ABOVE_MAX if v > 0 else BELOW_MIN
        if isinstance(src, (FloatType, DecimalType)):
            return Literal(float(v), t)
        if isinstance(src, StringType):
            return Literal(float(_parse_number_text(v)), t)
        return None
    if isinstance(t, FloatType):
        if isinstance(src, (IntegerType, LongType, DecimalType, DoubleType, StringType)):
            num = _parse_number_text(v) if isinstance(src, StringType) else v
            try:
                f = float(num)
            except OverflowError:
                return ABOVE_MAX if num > 0 else BELOW_MIN
            return _to_float32(f)
        return None
    if isinstance(t, DecimalType):
        if isinstance(src, (DateType, TimeType, BooleanType)) or _is_timestamp(src):
            return None
        x = _exact_number(v, src)
        return None if x is None else _to_decimal(x, t)
    if isinstance(t, DateType):
        if isinstance(src, (IntegerType, LongType)):
            # Java: a number is days from the epoch.
            return _to_integral(Fraction(v), INT_MIN, INT_MAX, _make_date)
        if isinstance(src, StringType):
            return _make_date(values.iso_date_days(v))
        nanos = _timestamp_nanos(v, src)
        if nanos is None:
            return None
        return _timestamp_from_nanos(nanos, _NANOS_PER_DAY, _make_date)
    if isinstance(t, TimeType):
        if isinstance(src, (IntegerType, LongType)):
            return _make_time(v)  # Java: a number is microseconds of the day
        if isinstance(src, StringType):
            nanos = values.iso_time_nanos(v)
            return _timestamp_from_nanos(nanos, 1000, _make_time)
        return None
    if isinstance(t, (TimestampType, TimestamptzType)):
        make = _make_timestamp(t)
        if isinstance(src, (IntegerType, LongType)):
            return make(v)  # Java: a number is microseconds from the epoch
        if isinstance(src, StringType):
            nanos = values.iso_timestamp_nanos(v, isinstance(t, TimestamptzType))
        else:
            nanos = _timestamp_nanos(v, src)
            if nanos is None:
                return None
        return _timestamp_from_nanos(nanos, 1000, make)
    if isinstance(t, (TimestampNanoType, TimestamptzNanoType)):
        if isinstance(src, (IntegerType, LongType)):
            return Literal(v * 1000, t)  # Java: a number is microseconds, as for timestamp
        if isinstance(src, StringType):
            nanos = values.iso_timestamp_nanos(v, isinstance(t, TimestamptzNanoType))
            return Literal(nanos, t)
        nanos = _timestamp_nanos(v, src)
        return None if nanos is None else Literal(nanos, t)
    if isinstance(t, StringType):
        return None
    if isinstance(t, UUIDType):
        if isinstance(src, StringType):
            return Literal(uuid.UUID(v.strip()), t)
        if isinstance(src, (FixedType, BinaryType)) and len(v) == 16:
            return Literal(uuid.UUID(bytes=v), t)
        return None
    if isinstance(t, (FixedType, BinaryType)):
        if isinstance(src, StringType):
            data = bytes.fromhex(v)  # the JSON single-value form of binary and fixed
        elif isinstance(src, (FixedType, BinaryType)):
            data = v
        elif isinstance(src, UUIDType):
            data = v.bytes
        else:
            return None
        if isinstance(t, FixedType) and len(data) != t.length:
            raise ValueError(f"{len(data)} bytes, expected {t.length}")
        return Literal(data, t)
    return None


def _is_timestamp(t: IcebergType) -> bool:
    return isinstance(t, (TimestampType, TimestamptzType, TimestampNanoType, TimestamptzNanoType))
