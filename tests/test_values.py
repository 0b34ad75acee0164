"""Single-value serialization (spec Appendix D): the spec's examples, round trips, bad input."""

from __future__ import annotations

import datetime as dt
import json
import math
import struct
import uuid
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frazil import values
from frazil.exceptions import DecodeError, FrazilError, InvalidArgumentError, ParseError
from frazil.types import ListType, MapType, NestedField, StringType, StructType, type_from_json

UTC = dt.timezone.utc
SPEC_UUID = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")

# (type, Python value, JSON form from Appendix D's table)
JSON_EXAMPLES = [
    ("boolean", True, True),
    ("int", 34, 34),
    ("long", 34, 34),
    ("float", 1.0, 1.0),
    ("double", 1.0, 1.0),
    ("decimal(9,2)", Decimal("14.20"), "14.20"),
    ("decimal(9,-20)", Decimal("2E+20"), "2E+20"),
    ("date", dt.date(2017, 11, 16), "2017-11-16"),
    ("time", dt.time(22, 31, 8, 123456), "22:31:08.123456"),
    ("timestamp", dt.datetime(2017, 11, 16, 22, 31, 8, 123456), "2017-11-16T22:31:08.123456"),
    (
        "timestamptz",
        dt.datetime(2017, 11, 16, 22, 31, 8, 123456, tzinfo=UTC),
        "2017-11-16T22:31:08.123456+00:00",
    ),
    ("timestamp_ns", 1_510_871_468_123_456_789, "2017-11-16T22:31:08.123456789"),
    ("timestamptz_ns", 1_510_871_468_123_456_789, "2017-11-16T22:31:08.123456789+00:00"),
    ("string", "iceberg", "iceberg"),
    ("uuid", SPEC_UUID, "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
    ("fixed[4]", b"\x00\x01\x02\xff", "000102ff"),
    ("binary", b"\x00\x01\x02\xff", "000102ff"),
]


@pytest.mark.parametrize(("type_", "value", "expected"), JSON_EXAMPLES)
def test_json_spec_examples(type_: str, value: object, expected: object) -> None:
    assert values.to_json(value, type_) == expected
    assert values.from_json(expected, type_) == value


# (type, Python value, bytes per Appendix D)
BINARY_EXAMPLES = [
    ("boolean", False, b"\x00"),
    ("boolean", True, b"\x01"),
    ("int", 34, struct.pack("<i", 34)),
    ("long", -2, struct.pack("<q", -2)),
    ("float", 1.5, struct.pack("<f", 1.5)),
    ("double", -0.25, struct.pack("<d", -0.25)),
    ("decimal(9,2)", Decimal("14.20"), bytes([0x05, 0x8C])),
    ("decimal(9,2)", Decimal("-0.01"), b"\xff"),
    ("decimal(9,2)", Decimal("1.28"), b"\x00\x80"),
    ("decimal(9,2)", Decimal("0.00"), b"\x00"),
    ("date", dt.date(2017, 11, 16), struct.pack("<i", 17486)),
    ("time", dt.time(22, 31, 8), struct.pack("<q", 81_068_000_000)),
    ("timestamp", dt.datetime(1970, 1, 1, 0, 0, 0, 1), struct.pack("<q", 1)),
    ("timestamptz", dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), b"\xff" * 8),
    ("timestamp_ns", -1, b"\xff" * 8),
    ("string", "hé", "hé".encode()),
    ("uuid", SPEC_UUID, bytes.fromhex("F79C3E09677C4BBDA4793F349CB785E7")),
    ("fixed[3]", b"abc", b"abc"),
    ("binary", b"", b""),
]


@pytest.mark.parametrize(("type_", "value", "expected"), BINARY_EXAMPLES)
def test_binary_spec_forms(type_: str, value: object, expected: bytes) -> None:
    assert values.to_bytes(value, type_) == expected
    assert values.from_bytes(expected, type_) == value


def test_promoted_bounds_are_read_as_the_wider_type() -> None:
    # Spec, "Schema Evolution": bounds keep the width they were written with.
    assert values.from_bytes(struct.pack("<i", -7), "long") == -7
    assert values.from_bytes(struct.pack("<f", 0.5), "double") == 0.5
    assert values.from_bytes(struct.pack("<i", 1), "timestamp") == dt.datetime(1970, 1, 2)
    assert values.from_bytes(struct.pack("<i", -1), "timestamp_ns") == -86_400 * 10**9
    with pytest.raises(DecodeError):
        values.from_bytes(struct.pack("<i", 1), "timestamptz")  # never promoted from date


@pytest.mark.parametrize(
    ("type_", "data"),
    [
        ("boolean", b""),
        ("boolean", b"\x00\x00"),
        ("int", b"\x00\x00\x00"),
        ("long", b"\x00" * 5),
        ("double", b"\x00" * 7),
        ("date", b"\x00" * 8),
        ("time", struct.pack("<q", -1)),
        ("time", struct.pack("<q", 86_400_000_000)),
        ("uuid", b"\x00" * 15),
        ("fixed[4]", b"\x00" * 5),
        ("decimal(9,2)", b""),
        ("decimal(9,2)", b"\x3b\x9a\xca\x00"),  # 10^9 does not fit 9 digits
        ("decimal(38,0)", b"\x01" * 17),
        ("string", b"\xff\xfe"),
        ("unknown", b"\x00"),
    ],
)
def test_malformed_bytes_are_errors(type_: str, data: bytes) -> None:
    with pytest.raises(FrazilError):
        values.from_bytes(data, type_)


@pytest.mark.parametrize(
    ("type_", "obj"),
    [
        ("int", "34"),
        ("int", 2**31),
        ("long", 1.5),
        ("boolean", 1),
        ("decimal(9,2)", "14.2"),  # scale must match
        ("decimal(9,2)", 14.2),
        ("decimal(4,2)", "123.45"),
        ("date", "2017-02-29"),
        ("date", "2017-11-16T00:00:00"),
        ("time", "25:00:00"),
        ("timestamp", "2017-11-16T22:31:08+00:00"),
        ("timestamptz", "2017-11-16T22:31:08"),
        ("uuid", "f79c3e09677c4bbda4793f349cb785e7"),
        ("fixed[2]", "000102"),
        ("binary", "0g"),
        ("string", 5),
        ("unknown", 1),
    ],
)
def test_malformed_json_is_an_error(type_: str, obj: object) -> None:
    with pytest.raises(DecodeError):
        values.from_json(obj, type_)


def test_json_reads_offsets_and_upper_case_hex() -> None:
    assert values.from_json("2017-11-16T14:31:08-08:00", "timestamptz") == dt.datetime(
        2017, 11, 16, 22, 31, 8, tzinfo=UTC
    )
    assert values.from_json("2017-11-16T22:31:08Z", "timestamptz_ns") == 1_510_871_468 * 10**9
    assert values.from_json("000102FF", "binary") == b"\x00\x01\x02\xff"
    assert values.from_json("F79C3E09-677C-4BBD-A479-3F349CB785E7", "uuid") == SPEC_UUID
    assert values.from_json("22:31", "time") == dt.time(22, 31)


def test_non_finite_floats_in_json() -> None:
    assert values.to_json(math.inf, "double") == "Infinity"
    assert values.to_json(-math.inf, "float") == "-Infinity"
    assert values.to_json(math.nan, "double") == "NaN"
    assert math.isnan(values.from_json("NaN", "double"))


@pytest.mark.parametrize(
    ("value", "type_"),
    [
        ("1", "int"),
        (True, "int"),
        (2**31, "int"),
        (2**63, "long"),
        (1, "boolean"),
        (Decimal("1.234"), "decimal(9,2)"),
        (Decimal("12345678.9"), "decimal(9,2)"),
        (Decimal("NaN"), "decimal(9,2)"),
        (1.5, "decimal(9,2)"),
        (dt.datetime(2020, 1, 1), "date"),
        (dt.datetime(2020, 1, 1, tzinfo=UTC), "timestamp"),
        (dt.datetime(2020, 1, 1), "timestamptz"),
        ("f79c3e09-677c-4bbd-a479-3f349cb785e7", "uuid"),
        (b"abc", "fixed[4]"),
        ("abc", "binary"),
        (None, "no-such-type"),
    ],
)
def test_wrong_python_values_are_errors(value: object, type_: str) -> None:
    with pytest.raises(FrazilError):
        values.to_bytes(value, type_)


def test_nested_json() -> None:
    struct_type = type_from_json(
        {
            "type": "struct",
            "fields": [
                {"id": 1, "name": "a", "required": True, "type": "int"},
                {"id": 2, "name": "b", "required": False, "type": "string"},
            ],
        }
    )
    assert values.to_json({"a": 1, "b": "bar"}, struct_type) == {"1": 1, "2": "bar"}
    assert values.from_json({"1": 1, "2": "bar"}, struct_type) == {"a": 1, "b": "bar"}
    assert values.from_json({"1": 1}, struct_type) == {"a": 1, "b": None}
    with pytest.raises(DecodeError):
        values.from_json({"2": "bar"}, struct_type)  # required field 1 missing
    list_type = ListType(3, StringType(), element_required=False)
    assert values.to_json(["a", None], list_type) == ["a", None]
    map_type = MapType(4, StringType(), 5, type_from_json("decimal(9,2)"), False)
    as_json = {"keys": ["a", "b"], "values": ["1.00", None]}
    assert values.to_json({"a": Decimal("1.00"), "b": None}, map_type) == as_json
    assert values.from_json(as_json, map_type) == {"a": Decimal("1.00"), "b": None}
    with pytest.raises(DecodeError):
        values.from_json({"keys": ["a"], "values": []}, map_type)
    nested = StructType(NestedField(6, "m", map_type), NestedField(7, "l", list_type))
    value = {"m": {"x": Decimal("2.50")}, "l": ["q"]}
    assert values.from_json(values.to_json(value, nested), nested) == value


def test_binary_of_nested_types_is_unsupported() -> None:
    with pytest.raises(FrazilError):
        values.to_bytes(["a"], ListType(1, StringType()))


# --- properties --------------------------------------------------------------------------

MIN_TS = dt.datetime(1, 1, 1)
MAX_TS = dt.datetime(9999, 12, 31, 23, 59, 59, 999999)

PRIMITIVES = {
    "boolean": st.booleans(),
    "int": st.integers(-(2**31), 2**31 - 1),
    "long": st.integers(-(2**63), 2**63 - 1),
    "float": st.floats(width=32, allow_nan=False),
    "double": st.floats(allow_nan=False),
    "decimal(38,10)": st.decimals(
        min_value=Decimal("-9999999999999999999999999999.9999999999"),
        max_value=Decimal("9999999999999999999999999999.9999999999"),
        places=10,
        allow_nan=False,
    ),
    "decimal(5,-3)": st.integers(-99999, 99999).map(lambda u: Decimal(u).scaleb(3)),
    "date": st.dates(),
    "time": st.times(),
    "timestamp": st.datetimes(MIN_TS, MAX_TS),
    "timestamptz": st.datetimes(MIN_TS, MAX_TS, timezones=st.just(UTC)),
    "timestamp_ns": st.integers(-(2**63), 2**63 - 1),
    "timestamptz_ns": st.integers(-(2**63), 2**63 - 1),
    "string": st.text(),
    "uuid": st.uuids(),
    "fixed[7]": st.binary(min_size=7, max_size=7),
    "binary": st.binary(),
}


@st.composite
def typed_values(draw: st.DrawFn) -> tuple[str, object]:
    type_ = draw(st.sampled_from(sorted(PRIMITIVES)))
    return type_, draw(PRIMITIVES[type_])


def _same(back: object, value: object, type_: str) -> bool:
    if type_.startswith("decimal"):
        # equal in value, and read back with exactly the type's scale
        scale = int(type_.split(",")[1].rstrip(")"))
        return back == value and back.as_tuple().exponent == -scale  # type: ignore[union-attr]
    return back == value


@given(typed_values())
def test_binary_round_trip(case: tuple[str, object]) -> None:
    type_, value = case
    assert _same(values.from_bytes(values.to_bytes(value, type_), type_), value, type_)


@given(typed_values())
def test_json_round_trip_through_text(case: tuple[str, object]) -> None:
    type_, value = case
    text = json.dumps(values.to_json(value, type_))
    assert _same(values.from_json(json.loads(text), type_), value, type_)


@given(st.binary(max_size=20), st.sampled_from(sorted(PRIMITIVES)))
def test_decoding_arbitrary_bytes_never_crashes(data: bytes, type_: str) -> None:
    try:
        values.from_bytes(data, type_)
    except FrazilError:
        pass


@given(st.integers(-(2**127), 2**127 - 1))
def test_decimal_bytes_are_minimal_twos_complement(unscaled: int) -> None:
    data = values.to_bytes(Decimal(unscaled), "decimal(38,0)") if abs(unscaled) < 10**38 else None
    if data is None:
        with pytest.raises(InvalidArgumentError):
            values.to_bytes(Decimal(unscaled), "decimal(38,0)")
        return
    # Java's BigInteger.toByteArray: the shortest two's-complement form.
    length = (unscaled + (unscaled < 0)).bit_length() // 8 + 1
    assert data == unscaled.to_bytes(length, "big", signed=True)


@pytest.mark.parametrize(
    "value",
    [Decimal("1E+999999999"), Decimal("1E-999999999"), Decimal("123.456E-999999999")],
)
def test_hostile_decimal_exponents_fail_fast(value: Decimal) -> None:
    with pytest.raises(InvalidArgumentError):
        values.to_bytes(value, "decimal(38,10)")


def test_decimal_zero_with_any_exponent() -> None:
    assert values.to_bytes(Decimal("0E-999999999"), "decimal(9,2)") == b"\x00"
    assert values.to_bytes(Decimal("0E+999999999"), "decimal(9,2)") == b"\x00"
    assert values.from_bytes(b"\x00", "decimal(9,2)") == Decimal("0.00")


def test_huge_ints_for_floats() -> None:
    with pytest.raises(InvalidArgumentError):
        values.to_bytes(10**400, "double")


# ---------------------------------------------------------------------------------------------
# ISO-8601 text of expression literals (Java's Literals string conversions), parsed natively.
# Oracle: the standard library's ISO parsers (datetime.fromisoformat), independent of frazil.

_ISO_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def _stdlib_nanos(text: str, extra_nanos: int = 0) -> int:
    d = dt.datetime.fromisoformat(text)
    if d.tzinfo is None:
        d = d.replace(tzinfo=dt.timezone.utc)
    delta = d - _ISO_EPOCH
    return (delta.days * 86_400 + delta.seconds) * 10**9 + delta.microseconds * 1000 + extra_nanos


@pytest.mark.parametrize("text", ["2024-02-29", "0001-01-01", "9999-12-31", "1969-12-31"])
def test_iso_date_days(text: str) -> None:
    assert values.iso_date_days(text) == (dt.date.fromisoformat(text) - dt.date(1970, 1, 1)).days
    assert values.iso_date_days(f"  {text} ") == values.iso_date_days(text)


def test_iso_dates_beyond_python() -> None:
    assert values.iso_date_days("+10000-01-01") == 2_932_897
    assert values.iso_date_days("-0001-12-31") == -719_529


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("2024-13-01", "month must be in 1..12"),
        ("2023-02-29", "day is out of range for month"),
        ("2024/01/01", "not an ISO date"),
        ("24-01-01", "not an ISO date"),
        ("10000-01-01", "not an ISO date"),  # five-digit years need a sign (ISO-8601, Java)
    ],
)
def test_iso_date_errors(text: str, why: str) -> None:
    with pytest.raises(ParseError, match=why):
        values.iso_date_days(text)


@pytest.mark.parametrize(
    ("text", "nanos"),
    [
        ("00:00", 0),
        ("10:11", (10 * 60 + 11) * 60 * 10**9),
        ("23:59:59", 86_399 * 10**9),
        ("10:11:12.5", (36_672 * 10**9) + 500_000_000),
        ("10:11:12.123456789", 36_672 * 10**9 + 123_456_789),
    ],
)
def test_iso_time_nanos(text: str, nanos: int) -> None:
    assert values.iso_time_nanos(text) == nanos
    if len(text) <= 15:  # the stdlib reads to microseconds
        t = dt.time.fromisoformat(text)
        micros = ((t.hour * 60 + t.minute) * 60 + t.second) * 10**6 + t.microsecond
        assert nanos == micros * 1000


@pytest.mark.parametrize("text", ["24:00", "10:60", "10:11:12.1234567890", "10", "10:11:12."])
def test_iso_time_errors(text: str) -> None:
    with pytest.raises(ParseError):
        values.iso_time_nanos(text)


@pytest.mark.parametrize(
    ("text", "with_zone", "extra"),
    [
        ("2024-01-01T10:00:00", False, 0),
        ("2024-01-01 10:00:00.123456", False, 0),
        ("2024-01-01", False, 0),
        ("1969-12-31T23:59:59.999999", False, 0),
        ("2024-01-01T10:00:00+02:00", True, 0),
        ("2024-01-01T10:00:00Z", True, 0),
        ("2024-01-01T10:00:00-00:00", True, 0),
        ("2024-06-30T23:59:30.25-05:30:15", True, 0),
    ],
)
def test_iso_timestamp_nanos(text: str, with_zone: bool, extra: int) -> None:
    expected = _stdlib_nanos(text.replace("Z", "+00:00"), extra)
    assert values.iso_timestamp_nanos(text, with_zone) == expected


def test_iso_timestamp_nanosecond_precision_and_range() -> None:
    base = _stdlib_nanos("1970-01-01T00:00:01+00:00")
    assert values.iso_timestamp_nanos("1970-01-01T00:00:01.000000001Z", True) == base + 1
    assert values.iso_timestamp_nanos("1970-01-01T00:00:00.000000001", False) == 1
    # beyond 64-bit nanoseconds (year 2262) and beyond Python's datetime (year 9999)
    days = values.iso_date_days("+20000-01-01")
    assert values.iso_timestamp_nanos("+20000-01-01T00:00:00", False) == days * 86_400 * 10**9


@pytest.mark.parametrize(
    ("text", "with_zone", "why"),
    [
        ("2024-01-01T00:00:00+01:00", False, "timestamp without zone"),
        ("2024-01-01T00:00:00", True, "has no UTC offset"),
        ("2024-01-01T", False, "not an ISO timestamp"),
        ("2024-01-01T25:00", False, "not a valid time of day"),
        ("2024-02-30T00:00", False, "day is out of range"),
        ("2024-01-01T00:00:00+19:00", True, "not an ISO timestamp"),
    ],
)
def test_iso_timestamp_errors(text: str, with_zone: bool, why: str) -> None:
    with pytest.raises(ParseError, match=why):
        values.iso_timestamp_nanos(text, with_zone)
