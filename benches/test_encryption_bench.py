"""Encrypted vs plaintext tables: writing and reading 10M rows through the public API.

Two kinds of v3 tables in one SQL catalog (with ``frazil.encryption.InMemoryKms``), the
encrypted ones with ``encryption.key-id``: data files with Parquet modular encryption (AES-GCM,
uniform, encrypted footer), manifests and manifest lists as AES-GCM streams. Input: 10M rows of
``id`` (int64), ``s`` (a short string), ``v`` (float64), fixed seed, unpartitioned, zstd
(``write.target-file-size-bytes`` left at its default, so file count follows the data).

Every timed operation runs in its own process (benches/encryption_bench_child.py), so its wall
time, CPU time (all threads) and peak RSS are its own. Write: ``table.append(rows)`` into a fresh
table (the rows generated before the timing). Read: ``table.scan().to_arrow()`` of the last
table written. The encrypted scan's rows must equal the plaintext one's (a digest of the rows
sorted by id) before any number is reported.

    .venv/bin/python -m pytest benches/test_encryption_bench.py -m benchmark -p no:cacheprovider
    FRAZIL_BENCH_SMOKE=1 .venv/bin/python -m pytest benches/test_encryption_bench.py -m benchmark

The table is printed at the end of the run (and a full run writes benches/encryption_results.md).
"""

from __future__ import annotations

import base64
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from bench_report import register_report

from frazil.catalog import load_catalog

pytestmark = [pytest.mark.benchmark]

ROOT = Path(__file__).resolve().parent.parent
SMOKE = os.environ.get("FRAZIL_BENCH_SMOKE", "").strip() not in ("", "0")
ROWS = 10_000 if SMOKE else 10_000_000
ROUNDS = 1 if SMOKE else 3
SEED = 0xE7C1

CHILD = Path(__file__).with_name("encryption_bench_child.py")

_results: list[tuple[str, dict[str, float]]] = []
_facts: dict[str, Any] = {}


def _child(op: str, args: dict[str, Any]) -> dict[str, Any]:
    # The parent's import path: the child imports the same frazil (source tree or wheel).
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, str(CHILD), op, json.dumps(args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def _summary(runs: list[dict[str, Any]]) -> dict[str, float]:
    """Median wall time; CPU and wall over all rounds; the largest peak and start RSS."""
    return {
        "median": statistics.median(r["wall"] for r in runs),
        "cpu": sum(r["cpu"] for r in runs),
        "wall": sum(r["wall"] for r in runs),
        "rss_peak": max(r["rss_peak"] for r in runs),
        "rss_start": max(r["rss_start"] for r in runs),
    }


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
        f"- timing: each operation in its own process, {ROUNDS} round(s); median wall time; "
        "CPU seconds (all threads) per round and CPU/wall over all rounds; peak RSS of the "
        "process (sampled from /proc and its high-water mark; the write's includes the input "
        "rows), and its RSS when the timed part started",
        "",
        "| case | seconds (wall) | M rows/s | CPU seconds | CPU/wall | peak RSS (MB) "
        "| RSS at start (MB) |",
        "|---|---|---|---|---|---|---|",
    ]
    mb = 1024 * 1024
    for name, r in _results:
        out.append(
            f"| {name} | {r['median']:.2f} | {ROWS / r['median'] / 1e6:.2f} | "
            f"{r['cpu'] / ROUNDS:.2f} | {r['cpu'] / r['wall']:.2f} | {r['rss_peak'] / mb:.0f} "
            f"| {r['rss_start'] / mb:.0f} |"
        )
    out += ["", "Overhead of encryption (encrypted / plaintext - 1):", ""]
    for op in ("write", "read"):
        plain, enc = by.get(f"{op}: plaintext"), by.get(f"{op}: encrypted")
        if plain and enc:
            wall = enc["median"] / plain["median"] - 1
            cpu = enc["cpu"] / plain["cpu"] - 1
            rss = enc["rss_peak"] / plain["rss_peak"] - 1
            out.append(f"- {op}: wall {wall:+.1%}, CPU {cpu:+.1%}, peak RSS {rss:+.1%}")
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
    props = {
        "type": "sql",
        "uri": f"sqlite:///{tmp_path}/c.db",
        "warehouse": str(wh),
        "encryption.kms-impl": "frazil.encryption.InMemoryKms",
        "encryption.kms.key.master-1": base64.b64encode(os.urandom(16)).decode(),
    }
    cat = load_catalog("bench", **props)
    cat.create_namespace("b")
    kinds = {
        "plaintext": {"format-version": "3"},
        "encrypted": {"format-version": "3", "encryption.key-id": "master-1"},
    }
    last: dict[str, str] = {}
    for kind, table_props in kinds.items():
        runs = []
        for i in range(ROUNDS):
            last[kind] = f"b.{kind}_{i}"
            args = {"catalog": props, "table": last[kind], "rows": ROWS, "seed": SEED}
            runs.append(_child("append", {**args, "props": table_props}))
        _results.append((f"write: {kind}", _summary(runs)))

    t = cat.load_table(last["encrypted"])
    files = list(t.scan().plan_files())
    assert files and all(f.file.key_metadata for f in files)
    _facts["files"] = len(files)
    digests = {}
    for kind in kinds:
        runs = [_child("scan", {"catalog": props, "table": last[kind]}) for _ in range(ROUNDS)]
        assert all(r["rows"] == ROWS for r in runs)
        digests[kind] = {r["digest"] for r in runs}
        _results.append((f"read: {kind}", _summary(runs)))
    # The same rows from both tables (and every round), read back through each table's keys.
    assert len(digests["plaintext"]) == 1 and digests["plaintext"] == digests["encrypted"]
