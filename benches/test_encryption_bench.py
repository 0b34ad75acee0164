"""Encrypted vs plaintext tables: appending and scanning 10M rows.

Two v3 tables of the same SQL catalog (with ``frazil.encryption.InMemoryKms``), one with
``encryption.key-id``: data files with Parquet modular encryption (AES-GCM, uniform, encrypted
footer), manifests and manifest lists as AES-GCM streams. Input: 10M rows of ``id`` (int64),
``s`` (a short string), ``v`` (float64), fixed seed, unpartitioned, zstd, in 1M-row files
(``write.target-file-size-bytes`` left at its default, so file count follows the data). Each
round appends the rows to a fresh table (write) and scans that table whole with
``table.scan().to_arrow()`` (read); the encrypted scan's rows must equal the plaintext one's
before any timing counts.

    .venv/bin/python -m pytest benches/test_encryption_bench.py -m benchmark -p no:cacheprovider
    FRAZIL_BENCH_SMOKE=1 .venv/bin/python -m pytest benches/test_encryption_bench.py -m benchmark

The table is printed at the end of the run (and a full run writes benches/encryption_results.md).
"""

from __future__ import annotations

import base64
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from bench_report import register_report, time_rounds

from frazil.catalog import load_catalog

pytestmark = [pytest.mark.benchmark]

ROOT = Path(__file__).resolve().parent.parent
SMOKE = os.environ.get("FRAZIL_BENCH_SMOKE", "").strip() not in ("", "0")
ROWS = 10_000 if SMOKE else 10_000_000
ROUNDS = 1 if SMOKE else 3
SEED = 0xE7C1

_results: list[tuple[str, dict[str, float]]] = []
_facts: dict[str, Any] = {}


def _rows() -> pa.Table:
    rng = np.random.default_rng(SEED)
    ids = np.arange(ROWS, dtype=np.int64)
    words = np.array([f"word-{i:04d}" for i in range(5000)])
    return pa.table(
        {
            "id": ids,
            "s": pa.array(words[rng.integers(0, len(words), ROWS)]),
            "v": rng.standard_normal(ROWS),
        }
    )


def _lines() -> list[str]:
    if not _results:
        return []
    by = dict(_results)
    out = [
        f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; machine: "
        f"{platform.machine()}, {os.cpu_count()} logical CPUs; load average at end "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} (the machine is shared with other jobs)",
        f"- Python {sys.version.split()[0]}, pyarrow {pa.__version__}",
        f"- input: {ROWS:,} rows x 3 columns (int64, string, float64), unpartitioned, zstd; "
        f"{_facts.get('files', '?')} data files per table",
        f"- timing: median wall time of {ROUNDS} round(s); CPU/wall over all rounds",
        "",
        "| case | seconds (wall) | M rows/s | CPU seconds (all threads) | CPU/wall |",
        "|---|---|---|---|---|",
    ]
    for name, r in _results:
        out.append(
            f"| {name} | {r['median']:.2f} | {ROWS / r['median'] / 1e6:.2f} | "
            f"{r['cpu'] / ROUNDS:.2f} | {r['cpu'] / r['wall']:.2f} |"
        )
    out += ["", "Overhead of encryption (encrypted / plaintext - 1):", ""]
    for op in ("append", "scan"):
        plain, enc = by.get(f"{op}: plaintext"), by.get(f"{op}: encrypted")
        if plain and enc:
            wall = enc["median"] / plain["median"] - 1
            cpu = enc["cpu"] / plain["cpu"] - 1
            out.append(f"- {op}: wall {wall:+.1%}, CPU {cpu:+.1%}")
    out += [
        "",
        "Notes:",
        "",
        "- CPU/wall far below 1 means other processes had the CPUs: on a shared machine "
        "differences of tens of percent between the two tables are noise, and the CPU seconds "
        "are the steadier comparison.",
        "- Parquet pages and footers are encrypted by Arrow's Parquet encryption (OpenSSL's "
        "AES-GCM, AES-NI); manifests and manifest lists (a few KiB here) by frazil's Rust "
        "AES-GCM streams.",
    ]
    return out


@pytest.fixture(scope="module", autouse=True)
def report(request: pytest.FixtureRequest) -> None:
    register_report(
        request,
        "frazil-encryption-bench",
        lambda: "encryption: encrypted vs plaintext tables",
        _lines,
        results_md=None if SMOKE else ROOT / "benches" / "encryption_results.md",
        heading="Encryption: encrypted vs plaintext tables (append and scan)",
        command=".venv/bin/python -m pytest benches/test_encryption_bench.py -m benchmark "
        "-p no:cacheprovider",
    )


def test_encryption_overhead(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    wh.mkdir()
    cat = load_catalog(
        "bench",
        type="sql",
        uri=f"sqlite:///{tmp_path}/c.db",
        warehouse=str(wh),
        **{
            "encryption.kms-impl": "frazil.encryption.InMemoryKms",
            "encryption.kms.key.master-1": base64.b64encode(os.urandom(16)).decode(),
        },
    )
    cat.create_namespace("b")
    data = _rows()
    plain_props = {"format-version": "3"}
    enc_props = {**plain_props, "encryption.key-id": "master-1"}
    counter = iter(range(10_000))
    last: dict[str, str] = {}

    def append(kind: str, props: dict[str, str]) -> None:
        name = f"b.{kind}_{next(counter)}"
        t = cat.create_table(name, data.schema, properties=props)
        t.append(data)
        last[kind] = name

    def scan(kind: str) -> pa.Table:
        return cat.load_table(last[kind]).scan().to_arrow()

    for kind, props in (("plaintext", plain_props), ("encrypted", enc_props)):
        _results.append(
            (f"append: {kind}", time_rounds(lambda k=kind, p=props: append(k, p), ROUNDS))
        )
    plain = scan("plaintext").sort_by("id")
    enc = scan("encrypted").sort_by("id")
    assert enc.num_rows == ROWS and enc.equals(plain)
    t = cat.load_table(last["encrypted"])
    files = list(t.scan().plan_files())
    assert all(f.file.key_metadata for f in files)
    _facts["files"] = len(files)
    for kind in ("plaintext", "encrypted"):
        _results.append((f"scan: {kind}", time_rounds(lambda k=kind: scan(k), ROUNDS)))
