"""Settings, result collection and the comparison table for the benchmark suite.

``FRAZIL_BENCH_SMOKE=1`` divides every input by 1000 and times one round, so CI can run every
case in seconds (the numbers are then meaningless and benches/results.md is left alone). A full
run refuses to start on a debug build of frazil.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

SMOKE = os.environ.get("FRAZIL_BENCH_SMOKE", "").strip() not in ("", "0")
RESULTS_MD = Path(__file__).with_name("results.md")
RUN_COMMAND = ".venv/bin/python -m pytest benches -m benchmark -p no:cacheprovider"


@dataclass(frozen=True)
class Settings:
    smoke: bool
    scale: int  # every input's size is divided by this
    rounds: int
    warmup_rounds: int


SETTINGS = (
    Settings(smoke=True, scale=1000, rounds=1, warmup_rounds=0)
    if SMOKE
    else Settings(smoke=False, scale=1, rounds=5, warmup_rounds=1)
)


@dataclass
class Row:
    label: str
    n: int = 0  # input size (the mmh3 loop runs on a prefix, see prefix_n)
    extra: bool = False
    times: dict[str, dict[str, float]] = field(default_factory=dict)  # impl -> n/median/cpu/wall
    skipped: dict[str, str] = field(default_factory=dict)  # impl -> why
    agreement: str = ""
    loop_agreement: str = ""
    details: str = ""


class Results:
    """What the tests measured, keyed by case id, in the order the cases ran."""

    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}
        self.load_start = _loadavg()

    def _row(self, case: Any) -> Row:
        if case.id not in self.rows:
            self.rows[case.id] = Row(case.label, extra=case.extra)
        return self.rows[case.id]

    def record_agreement(self, case: Any, pyiceberg: str, loop: str, details: str) -> None:
        row = self._row(case)
        row.agreement, row.loop_agreement, row.details = pyiceberg, loop, details

    def record_skip(self, case: Any, impl: str, why: str) -> None:
        self._row(case).skipped[impl] = why

    def record_time(
        self, case: Any, impl: str, *, n: int, median: float, cpu: float, wall: float
    ) -> None:
        row = self._row(case)
        if impl != "mmh3-loop":
            row.n = n
        row.times[impl] = {"n": n, "median": median, "cpu": cpu, "wall": wall}


_RESULTS = pytest.StashKey[Results]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_RESULTS] = Results()


@pytest.fixture(scope="session")
def bench_settings() -> Settings:
    return SETTINGS


@pytest.fixture(scope="session")
def bench_results(request: pytest.FixtureRequest) -> Results:
    return request.config.stash[_RESULTS]


@pytest.fixture(scope="session", autouse=True)
def _release_build_only() -> None:
    from frazil import _native

    profile = getattr(_native, "build_profile", "unknown")
    if profile != "release" and not SETTINGS.smoke:
        pytest.exit(
            f"benches: frazil is a {profile!r} build; timing it would be meaningless. "
            "Rebuild in release mode (maturin develop --release), or set FRAZIL_BENCH_SMOKE=1 "
            "to only check that the suite runs.",
            returncode=pytest.ExitCode.USAGE_ERROR,
        )


# --------------------------------------------------------------------------------------------
# The table


def _loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def _mvps(t: dict[str, float] | None) -> float | None:
    return None if t is None or t["median"] <= 0 else t["n"] / t["median"] / 1e6


def _fmt_rate(rate: float | None, why: str | None) -> str:
    if rate is None:
        return why or "—"
    return f"{rate:,.1f}" if rate >= 10 else f"{rate:.2f}"


def _fmt_ratio(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f}x" if x >= 10 else f"{x:.2f}x"


def _cpu_wall(t: dict[str, float] | None) -> str:
    return "—" if t is None or t["wall"] <= 0 else f"{t['cpu'] / t['wall']:.2f}"


def _table(results: Results) -> list[str]:
    loop_prefix = 100_000 // SETTINGS.scale
    header = [
        "case",
        "n",
        "frazil M values/s",
        "pyiceberg-core M values/s",
        f"mmh3 loop M values/s ({loop_prefix:,}-value prefix)",
        "frazil / pyiceberg-core",
        "frazil / mmh3 loop",
        "pyiceberg-core CPU/wall",
        "outputs",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in results.rows.values():
        f = row.times.get("frazil")
        p = row.times.get("pyiceberg-core")
        m = row.times.get("mmh3-loop")
        rf, rp, rm = _mvps(f), _mvps(p), _mvps(m)
        agree = row.agreement or "?"
        if row.loop_agreement and row.loop_agreement != "n/a":
            agree += f"; mmh3 loop {row.loop_agreement}"
        loop_cell = (
            _fmt_rate(rm, row.skipped.get("mmh3-loop"))
            if m or "mmh3-loop" in row.skipped
            else "n/a"
        )
        cells = [
            row.label + (" (extra)" if row.extra else ""),
            f"{row.n:,}" if row.n else "—",
            _fmt_rate(rf, row.skipped.get("frazil")),
            _fmt_rate(rp, row.skipped.get("pyiceberg-core")),
            loop_cell,
            _fmt_ratio(rf / rp if rf and rp else None),
            _fmt_ratio(rf / rm if rf and rm else None),
            _cpu_wall(p),
            agree,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _targets(results: Results) -> list[str]:
    out = []
    row = results.rows.get("bucket16-int64")
    if row and "frazil" in row.times:
        rf = _mvps(row.times["frazil"])
        rp = _mvps(row.times.get("pyiceberg-core"))
        assert rf is not None
        ok = rf >= 300
        out.append(
            f"- bucket[16] int64 above 300 M values/s: {'PASS' if ok else 'FAIL'} "
            f"({rf:,.1f} M values/s)"
        )
        if rp:
            ok = rf / rp >= 10
            out.append(
                f"- bucket[16] int64 at least 10x pyiceberg-core: "
                f"{'PASS' if ok else 'FAIL'} ({rf / rp:.1f}x)"
            )
    slower = []
    compared = 0
    for row in results.rows.values():
        rf, rp = _mvps(row.times.get("frazil")), _mvps(row.times.get("pyiceberg-core"))
        if rf and rp:
            compared += 1
            if rf < rp:
                slower.append(f"{row.label} ({rf / rp:.2f}x)")
    if compared:
        out.append(
            "- no transform slower than pyiceberg-core: "
            + ("PASS" if not slower else "FAIL: " + ", ".join(slower))
        )
    return out


def _environment(results: Results) -> list[str]:
    import numpy
    import pyarrow

    from frazil import _native

    try:
        from importlib.metadata import version

        pic = version("pyiceberg-core")
        mmh3v = version("mmh3")
    except Exception:
        pic = mmh3v = "?"
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        rev = (
            subprocess.run(
                ["git", "describe", "--always", "--dirty"],
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
                cwd=Path(__file__).parent,
            ).stdout.strip()
            or "?"
        )
    except (OSError, subprocess.SubprocessError):
        rev = "?"
    return [
        f"- date: {_dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- machine: {cpu}, {os.cpu_count()} logical CPUs; load average (1/5/15 min) "
        f"at start {results.load_start}, at end {_loadavg()}",
        f"- frazil {_native.__version__} ({getattr(_native, 'build_profile', '?')} build, "
        f"git {rev}), pyiceberg-core {pic}, mmh3 {mmh3v}, pyarrow {pyarrow.__version__}, "
        f"numpy {numpy.__version__}, Python {platform.python_version()}",
        f"- timing: median of {SETTINGS.rounds} round(s) after {SETTINGS.warmup_rounds} "
        "warm-up round(s), one call per round, all implementations in one process on the same "
        "inputs (seeded numpy default_rng); M values/s = input length / median / 1e6",
    ]


def _notes(results: Results) -> list[str]:
    ratios = [
        r.times["pyiceberg-core"]["cpu"] / r.times["pyiceberg-core"]["wall"]
        for r in results.rows.values()
        if "pyiceberg-core" in r.times and r.times["pyiceberg-core"]["wall"] > 0
    ]
    notes = []
    if ratios:
        hi = max(ratios)
        verdict = (
            "single-threaded, like frazil's kernels" if hi < 1.2 else "uses more than one thread"
        )
        notes.append(
            f"- pyiceberg-core runs with its defaults (nothing pins its threads); its CPU time / "
            f"wall time is at most {hi:.2f} over the cases, i.e. it is {verdict}."
        )
    notes += [
        "- mmh3 loop: Iceberg's bucket computed per value in Python with `mmh3.hash` "
        "(`struct.pack('<q', v)` for int/long, UTF-8 bytes for strings, minimal big-endian "
        "two's-complement unscaled bytes for decimals), including `to_pylist()` and building "
        f"the int32 result array; measured on the first {100_000 // SETTINGS.scale:,} values "
        "of the same input and reported per value (values/s).",
        "- outputs: frazil vs pyiceberg-core compared on the whole input (pyiceberg-core's "
        "date32 day numbers cast to int32), the mmh3 loop vs frazil on its prefix. Where they "
        "differ, an independent oracle (the mmh3 loop for bucket, numpy for truncate[W] on "
        "longs and for the time transforms, Python slicing for strings) is run on the differing "
        "positions: if frazil matches it everywhere the peer is marked WRONG and the case is "
        "still timed (test_outputs_agree xfails), otherwise it is a MISMATCH (the test fails "
        "and the case is not timed).",
    ]
    for r in results.rows.values():
        if r.details:
            bad = "MISMATCH" in (r.agreement, r.loop_agreement)
            what = "MISMATCH" if bad else "a peer is wrong"
            notes.append(f"- {r.label}: {what}:\n\n```\n{r.details}\n```")
    return notes


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    results = config.stash.get(_RESULTS, None)
    if results is None or not any(r.times or r.skipped for r in results.rows.values()):
        return
    title = "frazil vs pyiceberg-core vs mmh3 loop"
    if SETTINGS.smoke:
        title += " (SMOKE MODE: inputs / 1000, 1 round; numbers are meaningless)"
    tr = terminalreporter
    tr.write_sep("=", title)
    env, table, targets, notes = (
        _environment(results),
        _table(results),
        _targets(results),
        _notes(results),
    )
    shown_targets = [] if SETTINGS.smoke else ["Targets (from the issue):", *targets, ""]
    for line in [*env, "", *table, "", *shown_targets, *notes]:
        tr.write_line(line)
    if SETTINGS.smoke:
        return
    md = [
        "# Partition transforms: frazil vs pyiceberg-core vs an mmh3 Python loop",
        "",
        f"Generated by `{RUN_COMMAND}` (benches/conftest.py); do not edit by hand.",
        "",
        *env,
        "",
        *table,
        "",
        "Targets (from the issue):",
        "",
        *targets,
        "",
        "Notes:",
        "",
        *notes,
        "",
    ]
    RESULTS_MD.write_text("\n".join(md), encoding="utf-8")
    tr.write_line(f"\nwrote {RESULTS_MD}")
