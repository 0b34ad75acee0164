"""What a new user meets first, in-process: ``frazil --help`` (a clean description, examples
that parse), ``frazil serve`` without the server extra (one line, no traceback), and the
command's dependencies coming with a plain ``pip install frazil`` (dev/wheel-check.sh runs the
installed wheel's commands in a clean venv)."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

from frazil.cli import build_parser, main
from frazil.cli.run import SERVER_EXTRA_MISSING

ROOT = Path(__file__).resolve().parents[2]


def test_help_has_a_description_and_examples_that_parse(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    description = out.split("\n\n")[1]
    assert description.startswith("Inspect and maintain Apache Iceberg tables")
    assert "``" not in out and ":mod:" not in out  # no reStructuredText from the docstring
    examples = [line for line in out.splitlines() if line.startswith("  frazil ")]
    assert len(examples) >= 5, out
    commands = set()
    for line in examples:
        args = shlex.split(re.split(r"\s{2,}", line.strip())[0])[1:]  # without its comment
        parsed = build_parser().parse_args(args)  # exits (code 2) on a bad example
        commands.add(parsed.command)
    assert {"list", "describe", "files", "schema", "serve"} <= commands


def test_serve_without_the_server_extra_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn: ModuleNotFoundError
    code = main(["serve", "--warehouse", str(tmp_path), "--no-auth"])
    assert code == 2
    captured = capsys.readouterr()
    assert captured.err == f"{SERVER_EXTRA_MISSING}\n" and captured.out == ""
    assert "pip install 'frazil[server]'" in SERVER_EXTRA_MISSING


def test_the_command_needs_no_extra() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert any(re.match(r"rich\b", d) for d in project["dependencies"])
    assert "cli" in project["optional-dependencies"]  # `pip install 'frazil[cli]'` still works
    server = project["optional-dependencies"]["server"]
    assert {re.split(r"[<>=\[ ]", d)[0] for d in server} >= {"starlette", "uvicorn"}
