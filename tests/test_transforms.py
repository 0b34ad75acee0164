"""Partition transforms over Arrow arrays: the spec's vectors on every layout, properties, and
bad input."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from frazil import transforms as T
from frazil.exceptions import FrazilError, InvalidArgumentError, ParseError, UnsupportedError
from frazil.types import DateType, DecimalType, IntegerType, StringType, parse_type

MAX = 2**31 - 1
UTC = dt.timezone.utc


def bucket_of(hash_: int, n: int) -> int:
    """The spec's `(murmur3_x86_32_hash(x) & Integer.MAX_VALUE) % N`."""
    return (hash_ & 0x7FFFFFFF) % n


def ts_us(*args: int) -> int:
    return (dt.datetime(*args, tzinfo=UTC) - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(
        microseconds=1
    )


SPEC_TS = ts_us(2017, 11, 16, 22, 31, 8)
SPEC_UUID = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")

# Appendix B: (arrays of every layout carrying the type, the spec's hash).
APPENDIX_B = [
    pytest.param(
        [pa.array([34], t) for t in (pa.int8(), pa.int16(), pa.int32(), pa.int64())]
        + [pa.array([34], t) for t in (pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64())],
        2017239379,
        id="int-long",
    ),
    pytest.param(
        [
            pa.array([Decimal("14.20")], t)
            for t in (pa.decimal32(9, 2), pa.decimal64(9, 2), pa.decimal128(9, 2))
        ]
        + [pa.array([Decimal("14.20")], pa.decimal256(38, 2))],
        -500754589,
        id="decimal",
    ),
    pytest.param(
        [pa.array([dt.date(2017, 11, 16)], t) for t in (pa.date32(), pa.date64())],
        -653330422,
        id="date",
    ),
    pytest.param(
        [pa.array([dt.time(22, 31, 8)], pa.time32(u)) for u in ("s", "ms")]
        + [pa.array([dt.time(22, 31, 8)], pa.time64(u)) for u in ("us", "ns")],
        -662762989,
        id="time",
    ),
    pytest.param(
        [
            pa.array([SPEC_TS // 10**6], pa.timestamp("s")),
            pa.array([SPEC_TS // 1000], pa.timestamp("ms", tz="UTC")),
            pa.array([SPEC_TS], pa.timestamp("us")),
            pa.array([SPEC_TS], pa.timestamp("us", tz="America/Los_Angeles")),
            pa.array([SPEC_TS * 1000], pa.timestamp("ns")),
            pa.array([SPEC_TS * 1000], pa.timestamp("ns", tz="UTC")),
        ],
        -2047944441,
        id="timestamp",
    ),
    pytest.param(
        [
            pa.array([SPEC_TS + 1], pa.timestamp("us")),
            pa.array([SPEC_TS + 1], pa.timestamp("us", tz="UTC")),
            pa.array([(SPEC_TS + 1) * 1000 + 1], pa.timestamp("ns")),
            pa.array([(SPEC_TS + 1) * 1000 + 1], pa.timestamp("ns", tz="UTC")),
        ],
        -1207196810,
        id="timestamp-micro",
    ),
    pytest.param(
        [pa.array(["iceberg"], t) for t in (pa.string(), pa.large_string(), pa.string_view())],
        1210000089,
        id="string",
    ),
    pytest.param(
        [
            pa.array([SPEC_UUID.bytes], pa.uuid()),
            pa.array([SPEC_UUID.bytes], pa.binary(16)),
        ],
        1488055340,
        id="uuid",
    ),
    pytest.param(
        [
            pa.array([b"\x00\x01\x02\x03"], t)
            for t in (pa.binary(), pa.large_binary(), pa.binary_view(), pa.binary(4))
        ],
        -188683207,
        id="fixed-binary",
    ),
]


@pytest.mark.parametrize(("arrays", "hash_"), APPENDIX_B)
@pytest.mark.parametrize("n", [1, 2, 16, 1000, MAX])
def test_bucket_appendix_b(arrays: list[pa.Array], hash_: int, n: int) -> None:
    for array in arrays:
        with_null = pa.concat_arrays([array, pa.nulls(1, array.type)])
        out = T.bucket(n, with_null)
        assert out.type == pa.int32(), array.type
        assert out.to_pylist() == [bucket_of(hash_, n), None], array.type
        assert T.parse(f"bucket[{n}]").apply(pa.chunked_array([array])).to_pylist() == [
            bucket_of(hash_, n)
        ]


def test_bucket_scalar_entry_point() -> None:
    b = T.parse("bucket[16]")
    assert b.apply_scalar(34, "int") == b.apply_scalar(34, "long") == bucket_of(2017239379, 16)
    assert b.apply_scalar(Decimal("14.20"), "decimal(9,2)") == bucket_of(-500754589, 16)
    assert b.apply_scalar(SPEC_UUID, "uuid") == bucket_of(1488055340, 16)
    assert b.apply_scalar(None, "string") is None
    full = T.parse(f"bucket[{MAX}]")
    assert full.apply_scalar(dt.date(2017, 11, 16), "date") == bucket_of(-653330422, MAX)
    assert full.apply_scalar(dt.time(22, 31, 8), "time") == bucket_of(-662762989, MAX)
    aware = dt.datetime(2017, 11, 16, 14, 31, 8, 1, tzinfo=dt.timezone(dt.timedelta(hours=-8)))
    assert full.apply_scalar(aware, "timestamptz") == bucket_of(-1207196810, MAX)
    assert full.apply_scalar((SPEC_TS + 1) * 1000 + 1, "timestamptz_ns") == bucket_of(
        -1207196810, MAX
    )


# The truncate table of the spec.
def test_truncate_spec_examples() -> None:
    for t in (pa.int8(), pa.int16(), pa.int32(), pa.uint8()):
        values = [1, None] if t == pa.uint8() else [1, -1, None]
        out = T.truncate(10, pa.array(values, t))
        assert out.type == pa.int32()
        assert out.to_pylist() == ([0, None] if t == pa.uint8() else [0, -10, None])
    for t in (pa.int64(), pa.uint32()):
        out = T.truncate(10, pa.array([1, None], t))
        assert (out.type, out.to_pylist()) == (pa.int64(), [0, None])
    assert T.truncate(10, pa.array([-1], pa.int64())).to_pylist() == [-10]
    for t in (pa.decimal64(9, 2), pa.decimal128(9, 2), pa.decimal256(38, 2)):
        out = T.truncate(50, pa.array([Decimal("10.65"), Decimal("-0.01"), None], t))
        assert out.type == t
        assert out.to_pylist() == [Decimal("10.50"), Decimal("-0.50"), None]
    for t in (pa.string(), pa.large_string(), pa.string_view()):
        out = T.truncate(3, pa.array(["iceberg", "ab", "", "héllo", "😀😀😀😀", None], t))
        assert out.type == t
        assert out.to_pylist() == ["ice", "ab", "", "hél", "😀😀😀", None]
    for t in (pa.binary(), pa.large_binary(), pa.binary_view()):
        out = T.truncate(3, pa.array([b"\x01\x02\x03\x04\x05", b"", None], t))
        assert out.to_pylist() == [b"\x01\x02\x03", b"", None]


def test_truncate_wraps_like_java_at_the_int_range() -> None:
    # Java computes `v - (((v % W) + W) % W)` in int arithmetic, so it wraps at the edges;
    # partition values must agree with it bit for bit.
    out = T.truncate(10, pa.array([-(2**31)], pa.int32())).to_pylist()
    assert out == [2**31 - 2]
    # v % W = 2^31 - 2; + W wraps to -3; -3 % W = -3; v - (-3) wraps to -(2^31) + 1
    out = T.truncate(MAX, pa.array([2**31 - 2], pa.int32())).to_pylist()
    assert out == [-(2**31) + 1]
    assert T.parse(f"truncate[{MAX}]").apply_scalar(2**31 - 2, "int") == -(2**31) + 1


def test_date_and_time_transforms() -> None:
    values = [
        ts_us(2017, 11, 16, 22, 31, 8),
        ts_us(1969, 12, 31, 23, 59, 59) + 999_999,
        ts_us(1970, 1, 1),
        ts_us(1969, 1, 1),
        ts_us(1900, 3, 1, 1),
        None,
    ]
    expected = {
        "year": [47, -1, 0, -1, -70, None],
        "month": [47 * 12 + 10, -1, 0, -12, -70 * 12 + 2, None],
        "day": [17486, -1, 0, -365, -25508, None],
        "hour": [17486 * 24 + 22, -1, 0, -365 * 24, -25508 * 24 + 1, None],
    }
    layouts = {
        "us": pa.array(values, pa.timestamp("us")),
        "us-tz": pa.array(values, pa.timestamp("us", tz="UTC")),
        "ns": pa.array([v * 1000 if v is not None else None for v in values], pa.timestamp("ns")),
        "ms": pa.array([v // 1000 if v is not None else None for v in values], pa.timestamp("ms")),
    }
    for name, fn in [("year", T.year), ("month", T.month), ("day", T.day), ("hour", T.hour)]:
        for layout, array in layouts.items():
            out = fn(array)
            assert out.type == pa.int32()
            assert out.to_pylist() == expected[name], (name, layout)
    dates = pa.array([dt.date(2017, 11, 16), dt.date(1969, 12, 31), None], pa.date32())
    assert T.year(dates).to_pylist() == [47, -1, None]
    assert T.month(dates).to_pylist() == [574, -1, None]
    assert T.day(dates).to_pylist() == [17486, -1, None]
    assert T.day(dates, as_date=True).to_pylist() == [
        dt.date(2017, 11, 16),
        dt.date(1969, 12, 31),
        None,
    ]
    with pytest.raises(UnsupportedError):
        T.hour(dates)


def test_identity_and_void_keep_the_type() -> None:
    uuids = pa.array([SPEC_UUID.bytes, None], pa.uuid())
    assert T.identity(uuids).type == pa.uuid()
    assert T.identity(uuids).to_pylist() == uuids.to_pylist()
    out = T.void(pa.array([1, 2], pa.int64()))
    assert (out.type, out.null_count) == (pa.int64(), 2)
    chunked = pa.chunked_array([pa.array([1.5]), pa.array([2.5])])
    assert T.identity(chunked).equals(chunked)


def test_chunked_arrays_keep_their_chunks() -> None:
    chunked = pa.chunked_array([pa.array([1, 2, 3]), pa.array([], pa.int64()), pa.array([4])])
    out = T.bucket(4, chunked)
    assert isinstance(out, pa.ChunkedArray)
    assert [len(c) for c in out.chunks] == [3, 0, 1]
    assert out.to_pylist() == T.bucket(4, chunked.combine_chunks()).to_pylist()
    empty = T.truncate(2, pa.chunked_array([], pa.string()))
    assert (empty.type, len(empty)) == (pa.string(), 0)


def test_sliced_arrays() -> None:
    base = pa.array(["iceberg", "spark", None, "arrow"])
    assert T.truncate(2, base.slice(1, 3)).to_pylist() == ["sp", None, "ar"]
    ints = pa.array(range(100), pa.int64()).slice(37, 5)
    assert T.bucket(16, ints).to_pylist() == [
        T.parse("bucket[16]").apply_scalar(v, "long") for v in range(37, 42)
    ]


def test_transform_objects() -> None:
    b = T.parse("bucket[16]")
    assert (
        str(b) == "bucket[16]"
        and b == T.parse(" BUCKET[16] ")
        and hash(b) == hash(T.parse("bucket[16]"))
    )
    assert b.result_type("string") == IntegerType()
    assert T.parse("day").result_type("timestamptz_ns") == DateType()
    assert T.parse("truncate[4]").result_type("decimal(9, 2)") == DecimalType(9, 2)
    assert T.parse("identity").result_type(StringType()) == StringType()
    assert b.can_transform("uuid") and not b.can_transform("float")
    assert not T.parse("truncate[2]").can_transform("fixed[4]")
    assert not T.parse("hour").can_transform("date")
    assert T.parse("void").can_transform("boolean")
    order = {
        s: T.parse(s).preserves_order
        for s in ["identity", "bucket[2]", "truncate[2]", "year", "month", "day", "hour", "void"]
    }
    assert order == {
        "identity": True,
        "bucket[2]": False,
        "truncate[2]": True,
        "year": True,
        "month": True,
        "day": True,
        "hour": True,
        "void": False,
    }
    with pytest.raises(UnsupportedError):
        b.result_type("double")
    assert parse_type("int") == IntegerType()


# --- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, -1, -(2**40), 2**31, True, 1.5, "16", None])
def test_bad_bucket_counts(n: object) -> None:
    with pytest.raises(InvalidArgumentError):
        T.bucket(n, pa.array([1]))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        T.truncate(n, pa.array([1]))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "bucket",
        "bucket[]",
        "bucket[0]",
        "bucket[-4]",
        "bucket[x]",
        "bucket[16",
        "truncate[0]",
        "truncate[2.5]",
        "bucket[99999999999]",
        "zorder",
        "identity()",
    ],
)
def test_malformed_transform_strings(text: str) -> None:
    with pytest.raises(ParseError):
        T.parse(text)


@pytest.mark.parametrize(
    ("fn", "array"),
    [
        (lambda a: T.bucket(4, a), pa.array([1.0])),
        (lambda a: T.bucket(4, a), pa.array([True])),
        (lambda a: T.bucket(4, a), pa.array([[1]])),
        (lambda a: T.bucket(4, a), pa.array([{"a": 1}])),
        (lambda a: T.truncate(4, a), pa.array([SPEC_UUID.bytes], pa.uuid())),
        (lambda a: T.truncate(4, a), pa.array([b"abcd"], pa.binary(4))),
        (lambda a: T.truncate(4, a), pa.array([dt.date(2020, 1, 1)])),
        (lambda a: T.year(a), pa.array([1], pa.int64())),
        (lambda a: T.day(a), pa.array(["2020-01-01"])),
        (lambda a: T.identity(a), pa.array([[1]])),
        (lambda a: T.bucket(4, a), pa.array([1], pa.decimal256(76, 0))),
        (lambda a: T.bucket(4, a), pa.array(["a"]).dictionary_encode()),
    ],
)
def test_wrong_array_types(fn, array: pa.Array) -> None:
    with pytest.raises(UnsupportedError):
        fn(array)


def test_values_outside_the_iceberg_range() -> None:
    with pytest.raises(InvalidArgumentError):
        T.bucket(4, pa.array([2**63], pa.uint64()))
    with pytest.raises(InvalidArgumentError):
        T.day(pa.array([2**62], pa.timestamp("s")))
    # a null slot's garbage is never looked at
    assert T.bucket(4, pa.array([None, 1], pa.uint64())).to_pylist()[0] is None


@pytest.mark.parametrize("obj", [[1, 2, 3], None, 5, "abc", object()])
def test_non_arrow_inputs(obj: object) -> None:
    with pytest.raises(InvalidArgumentError):
        T.bucket(4, obj)


def test_errors_share_one_base() -> None:
    for call in (lambda: T.parse("x"), lambda: T.bucket(0, pa.array([1]))):
        with pytest.raises(FrazilError):
            call()


# --- properties --------------------------------------------------------------------------

longs = st.integers(-(2**63), 2**63 - 1)
ints = st.integers(-(2**31), 2**31 - 1)
widths = st.integers(1, MAX)


@given(st.lists(ints, max_size=50), widths)
def test_bucket_is_the_same_for_int_and_long(values: list[int], n: int) -> None:
    as_int = T.bucket(n, pa.array(values, pa.int32())).to_pylist()
    assert as_int == T.bucket(n, pa.array(values, pa.int64())).to_pylist()
    assert all(0 <= b < n for b in as_int)


@given(st.lists(st.one_of(st.none(), longs), max_size=50), widths)
def test_kernels_agree_with_scalar_form(values: list[int | None], w: int) -> None:
    array = pa.array(values, pa.int64())
    for spec in (f"bucket[{w}]", f"truncate[{w}]"):
        t = T.parse(spec)
        assert t.apply(array).to_pylist() == [t.apply_scalar(v, "long") for v in values]


@given(st.lists(st.one_of(st.none(), st.text()), max_size=30), st.integers(1, 20))
def test_string_truncation_is_a_code_point_prefix(values: list[str | None], w: int) -> None:
    out = T.truncate(w, pa.array(values, pa.string())).to_pylist()
    for v, t in zip(values, out, strict=True):
        assert (v is None and t is None) or (t == v[:w])  # Python slices by code point


@given(st.lists(st.binary(), max_size=30), st.integers(1, 20))
def test_binary_truncation_is_a_byte_prefix(values: list[bytes], w: int) -> None:
    assert T.truncate(w, pa.array(values, pa.binary())).to_pylist() == [v[:w] for v in values]


@given(st.lists(st.integers(-(2**62), 2**62), max_size=40), st.integers(1, 10**6))
def test_long_truncation_is_a_floor_to_a_multiple(values: list[int], w: int) -> None:
    out = T.truncate(w, pa.array(values, pa.int64())).to_pylist()
    assert out == [v - v % w for v in values]  # Python's % is already non-negative


@given(st.lists(st.integers(-(2**59), 2**59), min_size=1, max_size=40))
def test_date_transforms_match_python_calendar(values: list[int]) -> None:
    array = pa.array(values, pa.timestamp("ns"))
    epoch = dt.datetime(1970, 1, 1)
    for v, y, m, d, h in zip(
        values,
        T.year(array).to_pylist(),
        T.month(array).to_pylist(),
        T.day(array).to_pylist(),
        T.hour(array).to_pylist(),
        strict=True,
    ):
        moment = epoch + dt.timedelta(microseconds=v // 1000)
        assert y == moment.year - 1970
        assert m == (moment.year - 1970) * 12 + moment.month - 1
        assert d == (moment.date() - epoch.date()).days
        assert h == v // (3600 * 10**9)


@given(st.lists(st.one_of(st.none(), longs), max_size=30), st.integers(1, 5))
def test_chunking_does_not_change_results(values: list[int | None], parts: int) -> None:
    array = pa.array(values, pa.int64())
    step = max(1, len(values) // parts)
    chunked = pa.chunked_array(
        [array.slice(i, step) for i in range(0, len(values), step)], pa.int64()
    )
    assert T.bucket(7, chunked).to_pylist() == T.bucket(7, array).to_pylist()


class _OnlyArray:
    """A producer that speaks nothing but the PyCapsule array protocol (not a pyarrow type)."""

    def __init__(self, array: pa.Array) -> None:
        self._array = array

    def __arrow_c_array__(self, requested_schema=None):
        return self._array.__arrow_c_array__(requested_schema)


class _OnlyStream:
    def __init__(self, chunked: pa.ChunkedArray) -> None:
        self._chunked = chunked

    def __arrow_c_stream__(self, requested_schema=None):
        return self._chunked.__arrow_c_stream__(requested_schema)


def test_any_pycapsule_producer() -> None:
    ids = pa.array([34, None, -1], pa.int64())
    assert T.bucket(16, _OnlyArray(ids)).to_pylist() == T.bucket(16, ids).to_pylist()
    uuids = pa.array([SPEC_UUID.bytes], pa.uuid())
    assert T.bucket(MAX, _OnlyArray(uuids)).to_pylist() == [1488055340]
    chunked = pa.chunked_array([["iceberg"], ["arrow", None]])
    out = T.truncate(3, _OnlyStream(chunked))
    assert isinstance(out, pa.ChunkedArray)
    assert out.to_pylist() == ["ice", "arr", None]


def test_outputs_are_independent_of_the_input() -> None:
    # The result owns its buffers: dropping the input (and its capsule) must not matter.
    out = T.truncate(2, pa.array(["iceberg", "spark"]))
    import gc

    gc.collect()
    assert out.to_pylist() == ["ic", "sp"]
    assert out.validate(full=True) is None
