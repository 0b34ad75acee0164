"""``frazil`` in a real terminal (a pseudo-terminal via pexpect): the snapshot tree, the
describe chart, progress bars for expire and compact, and the one-line error."""

from __future__ import annotations

import re
import sys

import pytest
from cli_helpers import IDENT, Warehouse

pexpect = pytest.importorskip("pexpect")

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def terminal(wh: Warehouse, *args: str) -> tuple[int, str]:
    """Runs ``python -m frazil ARGS`` on a 40x120 terminal: exit status and the screen's text
    (colours and cursor moves removed)."""
    env = wh.env(TERM="xterm-256color")
    del env["COLUMNS"]  # the terminal's own size decides
    child = pexpect.spawn(
        sys.executable,
        ["-m", "frazil", *args],
        env=env,
        dimensions=(40, 120),
        encoding="utf-8",
        timeout=60,
    )
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus, _ANSI.sub("", child.before or "")


def test_snapshots_tree(wh: Warehouse) -> None:
    status, screen = terminal(wh, "snapshots", IDENT)
    assert status == 0, screen
    t = wh.table()
    head, audit = t.current_snapshot().snapshot_id, t.refs()["audit"].snapshot_id
    lines = screen.splitlines()
    assert lines[0].strip() == IDENT
    assert any(re.match(r"^├── branch main$", line.rstrip()) for line in lines)
    assert any(re.match(r"^├── branch audit$", line.rstrip()) for line in lines)
    assert any(line.rstrip() == f"└── tag v1 → {head}" for line in lines)
    # main's head, under the branch, labelled with its tag; audit's own snapshot, then the fork
    assert any(re.match(rf"^│   ├── {head}\s+append .* \[tag v1\]$", ln.rstrip()) for ln in lines)
    assert any(re.match(rf"^│   ├── {audit}\s+append", line) for line in lines)
    assert any("└── ↳ forks from main at" in line for line in lines)


def test_describe_chart_and_partition_bars(wh: Warehouse) -> None:
    status, screen = terminal(wh, "describe", IDENT)
    assert status == 0, screen
    files = len(wh.table().inspect.data_files())
    assert f"Data file sizes ({files} files, current snapshot)" in screen
    chart = [line for line in screen.splitlines() if " – " in line and " files" in line]
    assert chart and sum(int(re.search(r"(\d+) files", ln).group(1)) for ln in chart) == files
    assert any("█" in line for line in chart)
    status, screen = terminal(wh, "partitions", IDENT)
    assert status == 0
    bars = {
        m.group(1): m.group(2)
        for m in re.finditer(r"(spec \d: (?:\(.*?\)|[^ ]+))\s+([█▏▎▍▌▋▊▉]+)", screen)
    }
    # the largest partition has the longest bar (spec 0: 440 rows; city=par: 20 rows)
    largest = bars["spec 0: (unpartitioned; key city=null)"]
    assert len(largest) > len(bars["spec 1: city=par"]) > 0


@pytest.mark.parametrize(
    ("args", "bar"),
    [
        (["expire", IDENT, "--older-than", "0s"], r"expiring snapshots\s+━+\s+2/2"),
        (["compact", IDENT, "--target-file-size", "1MB"], r"compacting file groups\s+━+\s+1/1"),
    ],
    ids=["expire", "compact"],
)
def test_progress_bar(fresh: Warehouse, args: list[str], bar: str) -> None:
    status, screen = terminal(fresh, *args)
    assert status == 0, screen
    assert re.search(bar, screen), screen


def test_error_is_one_line(wh: Warehouse) -> None:
    status, screen = terminal(wh, "schema", "db.missing")
    assert status == 1
    assert screen.strip().splitlines() == [screen.strip()]
    assert screen.strip().startswith("frazil: error: ") and "db.missing" in screen
