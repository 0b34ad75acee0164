"""Parity with pyiceberg-core (iceberg-rust's Python binding) on every type it supports: the same
random arrays, with nulls and extremes, through both libraries must give the same values."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal

import pyarrow as pa
import pytest
from peers import import_peer

from frazil import transforms as T

P = import_peer("pyiceberg_core.transform", reason="pyiceberg-core is not installed")

pytestmark = pytest.mark.interop
N = 5000


def _ints(rng: random.Random, lo: int, hi: int) -> list[int | None]:
    extremes = [lo, lo + 1, -1, 0, 1, hi - 1, hi]
    values = [rng.randint(lo, hi) for _ in range(N)] + extremes
    return [None if rng.random() < 0.05 else v for v in values]


def _text(rng: random.Random) -> list[str | None]:
    alphabet = "aZ09 é日本語😀\u0301ß"
    out: list[str | None] = ["", "😀" * 20]
    for _ in range(N):
        out.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24))))
    return [None if rng.random() < 0.05 else v for v in out]


def arrays() -> dict[str, pa.Array]:
    rng = random.Random(20261122)
    micros = _ints(rng, -(2**61), 2**61)
    decimals = [
        None if v is None else Decimal(v).scaleb(-2) for v in _ints(rng, -(10**18) + 1, 10**18 - 1)
    ]
    return {
        "int32": pa.array(_ints(rng, -(2**31), 2**31 - 1), pa.int32()),
        "int64": pa.array(_ints(rng, -(2**63), 2**63 - 1), pa.int64()),
        "decimal(20,2)": pa.array(decimals, pa.decimal128(20, 2)),
        "date32": pa.array(_ints(rng, -(10**6), 10**6), pa.date32()),
        "time64[us]": pa.array(
            [None if v is None else v % 86_400_000_000 for v in micros], pa.time64("us")
        ),
        "timestamp[us]": pa.array(micros, pa.timestamp("us")),
        "timestamp[us,UTC]": pa.array(micros, pa.timestamp("us", tz="UTC")),
        "timestamp[ns]": pa.array(_ints(rng, -(2**63), 2**63 - 1), pa.timestamp("ns")),
        "string": pa.array(_text(rng), pa.string()),
        "large_string": pa.array(_text(rng), pa.large_string()),
        "binary": pa.array([None if s is None else s.encode() for s in _text(rng)], pa.binary()),
        "uuid": pa.array([rng.randbytes(16) for _ in range(N)], pa.uuid()),
        "fixed[16]": pa.array([rng.randbytes(16) for _ in range(N)], pa.binary(16)),
    }


ARRAYS = arrays()
TEMPORAL = {"date32", "timestamp[us]", "timestamp[us,UTC]", "timestamp[ns]"}
TRUNCATABLE = {"int32", "int64", "decimal(20,2)", "string", "large_string", "binary"}


def _check(ours: pa.Array, theirs: pa.Array, what: str) -> None:
    ours_list, theirs_list = ours.to_pylist(), theirs.to_pylist()
    mismatches = [
        (i, a, b) for i, (a, b) in enumerate(zip(ours_list, theirs_list, strict=True)) if a != b
    ]
    assert not mismatches, f"{what}: {len(mismatches)} mismatches, first {mismatches[:10]}"


@pytest.mark.parametrize("name", sorted(ARRAYS))
@pytest.mark.parametrize("n", [1, 16, 1000, 2**31 - 1])
def test_bucket(name: str, n: int) -> None:
    array = ARRAYS[name]
    _check(T.bucket(n, array), P.bucket(array, n), f"bucket[{n}] {name}")


@pytest.mark.parametrize("name", sorted(TRUNCATABLE))
@pytest.mark.parametrize("w", [1, 3, 10, 1000])
def test_truncate(name: str, w: int) -> None:
    array = ARRAYS[name]
    _check(T.truncate(w, array), P.truncate(array, w), f"truncate[{w}] {name}")


@pytest.mark.parametrize(
    ("name", "transform"),
    [
        (name, transform)
        for name in sorted(TEMPORAL)
        for transform in ("year", "month", "day", "hour")
        if not (transform == "hour" and name == "date32")  # hour is not defined for dates
    ],
)
def test_dates_and_times(name: str, transform: str) -> None:
    array = ARRAYS[name]
    ours = getattr(T, transform)(array)
    theirs = getattr(P, transform)(array)
    if transform == "day" and pa.types.is_date32(theirs.type):
        theirs = theirs.cast(pa.int32())  # pyiceberg-core gives date32, frazil int32 days
    _check(ours, theirs, f"{transform} {name}")


def test_identity() -> None:
    for name, array in ARRAYS.items():
        ours = T.identity(array)
        assert ours.type == array.type, name  # frazil keeps extension types such as uuid
        theirs = P.identity(array)
        if isinstance(ours.type, pa.BaseExtensionType):
            assert ours.storage.to_pylist() == theirs.to_pylist(), name
        else:
            assert ours.equals(theirs), name


def test_dates_far_from_the_epoch() -> None:
    days = pa.array([-(10**6), -719_528, -1, 0, 1, 2_932_896], pa.date32())
    for transform in ("year", "month", "day"):
        ours = getattr(T, transform)(days)
        theirs = getattr(P, transform)(days)
        if pa.types.is_date32(theirs.type):
            theirs = theirs.cast(pa.int32())
        _check(ours, theirs, f"{transform} of far dates")
    assert T.year(pa.array([dt.date(1, 1, 1)])).to_pylist() == [-1969]
