"""The README's Python examples run as written."""

from __future__ import annotations

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 3


def test_readme_examples_run() -> None:
    namespace: dict[str, object] = {"pytest": pytest, "__file__": str(README)}
    for block in BLOCKS:  # later blocks use names of earlier ones, as a reader would
        exec(compile(block, str(README), "exec"), namespace)
