"""Variant bytes between frazil and the Java reference (Iceberg 1.10.2's generic Parquet
writer, no Spark): Java parses frazil's ``metadata``/``value`` bytes, writes them into a data
file with Parquet's VARIANT annotation, and frazil adds that file to a table and reads back the
same JSON; Java keeps no bounds for the variant column, as frazil does."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import java_reference
import pyarrow.parquet as pq
import pytest
from peers import peer_missing

from frazil.catalog import load_catalog
from frazil.schema import Schema
from frazil.types import LongType, NestedField, VariantType
from frazil.values import variant

pytestmark = pytest.mark.interop

SOURCE = Path(__file__).resolve().parent / "java" / "VariantJava.java"
DOCS: list[str | None] = [
    '{"a": 1, "b": [true, null, "x"], "c": {"d": -2.5}}',
    '"hi"',
    None,
    "[1, 2.5, 70000, 5000000000]",
    "null",
    json.dumps({"long": "y" * 80, "keys": {f"k{i}": i for i in range(20)}}),
]


@pytest.fixture(scope="module")
def java_writer() -> list[str]:
    try:
        classes = java_reference.compile_java(SOURCE, java_reference.program_classpath())
        java = java_reference._java_tool("java")
    except java_reference.ReferenceUnavailable as e:
        peer_missing(f"the Java reference is unavailable: {e}")
    cp = os.pathsep.join([str(classes), *java_reference.program_classpath()])
    return [java, "-Xmx256m", "-cp", cp, "VariantJava"]


def test_java_writes_frazil_variants_frazil_reads_them(
    java_writer: list[str], tmp_path: Path
) -> None:
    schema = Schema(NestedField(1, "id", LongType(), True), NestedField(2, "v", VariantType()))
    (tmp_path / "schema.json").write_text(json.dumps(schema.to_json()))
    rows = []
    for i, r in enumerate(variant.from_json(DOCS).to_pylist()):
        cell = "-" if r is None else f"{r['metadata'].hex()}:{r['value'].hex()}"
        rows.append(f"{i}\t{cell}")
    (tmp_path / "rows.txt").write_text("\n".join(rows) + "\n")
    out = tmp_path / "java.parquet"
    done = subprocess.run(
        [*java_writer, str(tmp_path / "schema.json"), str(out), str(tmp_path / "rows.txt")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    bounded = {
        int(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("BOUND")
    }
    assert bounded == {1}  # Java keeps no bounds for the variant column either
    # Java annotates the group with Parquet's VARIANT logical type (pyarrow 26 cannot).
    assert "optional group field_id=2 v (Variant(1))" in str(pq.read_metadata(out).schema)

    cat: Any = load_catalog("w", type="filesystem", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.t", schema, properties={"format-version": "3"})
    t.add_files([str(out)])
    got = cat.load_table("db.t").scan().to_arrow().sort_by("id")
    texts = variant.to_json(got.column("v")).to_pylist()
    assert [None if x is None else json.loads(x) for x in texts] == [
        None if d is None else json.loads(d) for d in DOCS
    ]
    (task,) = cat.load_table("db.t").scan().include_column_stats(True).plan_files()
    assert 2 not in (task.file.lower_bounds or {})
