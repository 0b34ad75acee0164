"""Where frazil's filters differ from PyIceberg 0.12's, as README's "Switching from PyIceberg"
lists them: the same table written by each library, the same filters, both libraries' rows.

frazil follows the expressions spec (2-valued, null-safe); PyIceberg drops nulls for some
negated predicates and not for others, and its delete disagrees with its scan.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from peers import import_peer

import frazil.expressions as F
from frazil.catalog import load_catalog

pyiceberg = import_peer("pyiceberg")

import pyiceberg.expressions as P  # noqa: E402
from pyiceberg.catalog.sql import SqlCatalog  # noqa: E402

pytestmark = [pytest.mark.interop, pytest.mark.filterwarnings("ignore::UserWarning")]

DATA = pa.table(
    {
        "id": pa.array(range(6), pa.int64()),
        "s": pa.array(["a", "b", None, "c", "a", None]),
        "i": pa.array([1, 2, None, 3, 1, None], pa.int64()),
        "x": pa.array([1.5, float("nan"), None, 2.0, 0.5, None]),
    }
)

# (name, frazil filter, PyIceberg filter, frazil's rows, PyIceberg 0.12's scan rows)
CASES = [
    ("s != 'a'", F.NotEqualTo("s", "a"), P.NotEqualTo("s", "a"), [1, 2, 3, 5], [1, 3]),
    ("string", "s != 'a'", "s != 'a'", [1, 2, 3, 5], [1, 3]),
    ("NOT s = 'a'", F.Not(F.EqualTo("s", "a")), P.Not(P.EqualTo("s", "a")), [1, 2, 3, 5], [1, 3]),
    ("i != 1", F.NotEqualTo("i", 1), P.NotEqualTo("i", 1), [1, 2, 3, 5], [1, 3]),
    ("not starts", F.NotStartsWith("s", "a"), P.NotStartsWith("s", "a"), [1, 2, 3, 5], [1, 3]),
    ("NOT i < 2", F.Not(F.LessThan("i", 2)), P.Not(P.LessThan("i", 2)), [1, 2, 3, 5], [1, 3]),
    ("i NOT IN", F.NotIn("i", [1, 2]), P.NotIn("i", [1, 2]), [2, 3, 5], [2, 3, 5]),
    ("x IS NOT NaN", F.NotNaN("x"), P.NotNaN("x"), [0, 2, 3, 4, 5], [0, 3, 4]),
    ("x != 1.5", F.NotEqualTo("x", 1.5), P.NotEqualTo("x", 1.5), [1, 2, 3, 4, 5], [1, 3, 4]),
    ("x > 1.0", F.GreaterThan("x", 1.0), P.GreaterThan("x", 1.0), [0, 3], [0, 3]),
]

# (frazil filter, PyIceberg filter, rows frazil's delete leaves, rows PyIceberg's leaves)
DELETES = [
    (F.NotEqualTo("s", "a"), P.NotEqualTo("s", "a"), [0, 4], [0, 2, 4, 5]),
    (F.NotIn("i", [1, 2]), P.NotIn("i", [1, 2]), [0, 1, 4], [0, 1, 2, 4, 5]),
    (F.Not(F.EqualTo("s", "a")), P.Not(P.EqualTo("s", "a")), [0, 4], [0, 2, 4, 5]),
]


@pytest.fixture(scope="module")
def catalogs(tmp_path_factory: Any) -> tuple[Any, Any]:
    tmp: Path = tmp_path_factory.mktemp("filters")
    ours = load_catalog("f", type="sql", uri=f"sqlite:///{tmp}/f.db", warehouse=f"file://{tmp}/f")
    ours.create_namespace("db")
    theirs = SqlCatalog("p", uri=f"sqlite:///{tmp}/p.db", warehouse=f"file://{tmp}/p")
    theirs.create_namespace("db")
    return ours, theirs


def _ids(table: Any, e: Any) -> list[int]:
    return sorted(table.scan(row_filter=e).to_arrow()["id"].to_pylist())


def _fresh(catalogs: tuple[Any, Any], name: str) -> tuple[Any, Any]:
    ours, theirs = catalogs
    a = ours.create_table(f"db.{name}", schema=DATA.schema)
    a.append(DATA)
    b = theirs.create_table(f"db.{name}", schema=DATA.schema)
    b.append(DATA)
    return a, b


def test_scans_differ_where_the_readme_says(catalogs: tuple[Any, Any]) -> None:
    ours, theirs = _fresh(catalogs, "scan")
    for name, f, p, want_ours, want_theirs in CASES:
        assert _ids(ours, f) == want_ours, name
        assert _ids(theirs, p) == want_theirs, name


@pytest.mark.parametrize("k", range(len(DELETES)))
def test_deletes_differ_where_the_readme_says(catalogs: tuple[Any, Any], k: int) -> None:
    f, p, left_ours, left_theirs = DELETES[k]
    ours, theirs = _fresh(catalogs, f"d{k}")
    ours.delete(f)
    theirs.delete(p)
    assert _ids(ours, F.AlwaysTrue()) == left_ours
    assert _ids(theirs, P.AlwaysTrue()) == left_theirs
    # frazil's delete leaves exactly what its scan of the negation returns, before the delete
    fresh, _ = _fresh(catalogs, f"n{k}")
    assert _ids(fresh, F.Not(f)) == left_ours
