"""Every code example of the documentation site (docs/**/*.md) and of the README runs, each on
its own: a fresh namespace, a fresh working directory and no configuration of the machine's
(``~/.frazil.yaml``, ``~/.pyiceberg.yaml``, ``FRAZIL_*`` variables).

Every fenced block names its language. ``python`` blocks run; one that cannot run here (it
needs a Spark session, a REST server, cloud storage) is preceded by an HTML comment saying why,
``<!-- no-run: needs a running Spark session -->``, and is still compiled, so it stays valid
Python. Other languages (``sh``, ``yaml``, ``text``, ...) are shown, never run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LANGUAGES = {"python", "sh", "yaml", "text", "json", "toml", "console", "ini", "sql"}
_FENCE = re.compile(
    r"(?:<!--\s*no-run:\s*(?P<why>[^>]*?)\s*-->\s*\n)?"
    r"^(?P<indent>[ \t]*)```(?P<lang>[^\n`]*)\n(?P<code>.*?)^(?P=indent)```[ \t]*$",
    re.S | re.M,
)


@dataclass(frozen=True)
class Example:
    path: Path
    line: int
    lang: str
    code: str
    no_run: str | None

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def _examples() -> list[Example]:
    found = []
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        for m in _FENCE.finditer(text):
            indent = m.group("indent")
            code = "\n".join(
                line[len(indent) :] if line.startswith(indent) else line
                for line in m.group("code").splitlines()
            )
            lang = m.group("lang").strip().split()[0] if m.group("lang").strip() else ""
            line = text.count("\n", 0, m.start("lang")) + 1
            found.append(Example(path, line, lang, code, m.group("why")))
    return found


EXAMPLES = _examples()
PYTHON = [e for e in EXAMPLES if e.lang == "python"]


def test_every_block_names_a_known_language() -> None:
    unnamed = [e.id for e in EXAMPLES if e.lang not in LANGUAGES]
    assert not unnamed, f"fenced blocks without a known language: {unnamed}"


def test_the_site_has_examples() -> None:
    pages = {e.path for e in PYTHON if e.no_run is None}
    assert len(PYTHON) >= 30 and len(pages) >= 8


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory and home of its own, without the machine's catalog settings."""
    import os

    for key in list(os.environ):
        if key.startswith(("FRAZIL_", "PYICEBERG_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("FRAZIL_HOME", str(tmp_path))
    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("example", PYTHON, ids=[e.id for e in PYTHON])
def test_example(example: Example, isolated: Path) -> None:
    compiled = compile(example.code, example.id, "exec")
    if example.no_run is not None:
        assert example.no_run, f"{example.id}: a no-run comment must say why"
        return
    namespace: dict[str, object] = {"__name__": "__docs_example__"}
    exec(compiled, namespace)


def test_readme_is_a_landing_page() -> None:
    """At most 12,000 characters, and every relative link it has leads to a file here."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text) <= 12_000
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert local and all((ROOT / link).exists() for link in local), local
