"""Filters of 10k to 100k terms never crash the process (issue 26).

A row filter of thousands of terms (an OR of ``id = k``, an AND of ``id != k``, an ``IN`` of
100k literals: what generated code and key-based operations produce) once killed the process
with SIGSEGV in ``to_arrow`` (pyarrow's expression canonicalization recursed once per term).
Each case runs in a child process, so a crash fails the test instead of the suite; the child
prints what it read and the parent checks it against values computed here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROWS = 120_000

CHILD = textwrap.dedent(
    """
    import json, sys
    import pyarrow as pa
    from frazil.catalog import load_catalog
    from frazil.expressions import And, EqualTo, In, NotEqualTo, NotIn, Or

    tmp, shape, n, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    catalog = load_catalog("h", type="sql", uri=f"sqlite:///{tmp}/c.db", warehouse=f"file://{tmp}")
    catalog.create_namespace("db")
    ids = pa.array(range(rows), pa.int64())
    data = pa.table({"id": ids, "v": pa.array([i % 10 for i in range(rows)], pa.int32())})
    table = catalog.create_table("db.t", data.schema)
    half = rows // 2
    table.append(data.slice(0, half))
    table.append(data.slice(half))

    keys = range(0, 2 * n, 2)  # every other id from 0, some beyond the table
    if shape == "or":
        expr = Or(*[EqualTo("id", k) for k in keys])
    elif shape == "or-left-deep":
        expr = EqualTo("id", 0)
        for k in list(keys)[1:]:
            expr = Or(expr, EqualTo("id", k))
    elif shape == "and":
        expr = And(*[NotEqualTo("id", k) for k in keys])
    elif shape == "in":
        expr = In("id", list(keys))
    elif shape == "not-in":
        expr = NotIn("id", list(keys))
    else:
        raise SystemExit(f"unknown shape {shape}")

    out = {}
    got = table.scan(row_filter=expr).to_arrow().column("id")
    out["to_arrow"] = [len(got), sum(got.to_pylist())]
    out["count"] = table.scan(row_filter=expr).count()
    table.delete(expr)
    left = table.scan().to_arrow().column("id")
    out["delete"] = [len(left), sum(left.to_pylist())]
    # upsert the matched keys back with v = -1
    back = sorted(set(range(rows)) - set(left.to_pylist()))
    src = pa.table({"id": pa.array(back, pa.int64()), "v": pa.array([-1] * len(back), pa.int32())})
    res = table.upsert(src, join_cols=["id"])
    after = table.scan().to_arrow()
    updated = after.filter(pa.compute.equal(after["v"], -1)).num_rows
    out["upsert"] = [res.rows_inserted, after.num_rows, updated]
    # overwrite the rows the filter selects
    new = pa.table({"id": pa.array([-7], pa.int64()), "v": pa.array([0], pa.int32())})
    table.overwrite(new, expr)
    final = table.scan().to_arrow().column("id")
    out["overwrite"] = [len(final), sum(final.to_pylist())]
    print(json.dumps(out))
    """
)


def _expected(shape: str, n: int) -> dict[str, list[int] | int]:
    keys = set(range(0, 2 * n, 2))
    positive = shape in ("or", "or-left-deep", "in")
    match = [i for i in range(ROWS) if (i in keys) == positive]
    rest = [i for i in range(ROWS) if (i in keys) != positive]
    after_overwrite = [i for i in range(ROWS) if (i in keys) != positive] + [-7]
    return {
        "to_arrow": [len(match), sum(match)],
        "count": len(match),
        "delete": [len(rest), sum(rest)],
        "upsert": [len(match), ROWS, len(match)],
        "overwrite": [len(after_overwrite), sum(after_overwrite)],
    }


@pytest.mark.parametrize(
    ("shape", "n"),
    [
        ("or", 10_000),
        ("and", 10_000),
        # tens of seconds each (a minute and more on a busy machine): the slow group
        pytest.param("or", 50_000, marks=pytest.mark.slow),
        pytest.param("and", 50_000, marks=pytest.mark.slow),
        pytest.param("or", 100_000, marks=pytest.mark.slow),
        pytest.param("or-left-deep", 100_000, marks=pytest.mark.slow),
        pytest.param("and", 100_000, marks=pytest.mark.slow),
        ("in", 100_000),
        ("not-in", 100_000),
    ],
)
def test_huge_filters_in_a_child(tmp_path: Path, shape: str, n: int) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path), shape, str(n), str(ROWS)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"child exited {proc.returncode}: {proc.stderr[-3000:]}"
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got == _expected(shape, n)
