"""MkDocs hooks of the documentation site (mkdocs.yml ``hooks:``), run by ``dev/docs``.

- ``<!-- frazil:cli-reference -->`` in a page becomes the reference of the ``frazil`` command,
  generated from its argparse parser (:func:`frazil.cli.build_parser`): every command's
  ``--help``, so the page cannot drift from the code.
- ``<!-- frazil:bench NAME_results.md -->`` becomes that benchmark results file of ``benches/``
  (its tables and notes) with a chart per table, drawn by matplotlib at build time from the
  table's numbers. The charts are added to the site as generated files (``charts/*.png``).

A marker whose source is missing (an unknown results file, a table without numbers) fails the
build: ``--strict`` is meant to catch a page that no longer matches the repository.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCHES = ROOT / "benches"
sys.path.insert(0, str(ROOT / "python"))

CLI_MARKER = "<!-- frazil:cli-reference -->"
BENCH_MARKER = re.compile(r"<!-- frazil:bench (\S+) -->")
_NUMBER = re.compile(r"^[<>~≈]?\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*(?:s|ms|MB|GB|x)?$")
# Columns that measure something, not ratios, counts or settings: times (lower is better),
# else rates (higher is better). One kind per chart, so that one axis means one thing.
_TIME = re.compile(r"(seconds|\bms\b|\bs\b(?!/)|\bs \()", re.I)
_RATE = re.compile(r"(/s\b)", re.I)
_NOT_MEASURE = re.compile(r"(cpu/wall|\bvs\b| / |speed-up|rounds|peak rss|ratio)", re.I)

_charts: dict[str, bytes] = {}


# ---- the CLI reference


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps its subcommands only here
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def cli_reference() -> str:
    """Markdown: the global ``--help``, then each command's (nested commands too)."""
    from frazil.cli import build_parser

    os.environ["COLUMNS"] = "100"  # argparse wraps at the terminal's width: the same page anywhere
    parser = build_parser()
    parts = ["### frazil\n", "```text\n" + parser.format_help().rstrip() + "\n```\n"]

    def walk(prefix: str, p: argparse.ArgumentParser) -> None:
        for name, sub in _subparsers(p).items():
            title = f"{prefix} {name}"
            parts.append(f"### {title}\n")
            parts.append("```text\n" + sub.format_help().rstrip() + "\n```\n")
            walk(title, sub)

    walk("frazil", parser)
    return "\n".join(parts)


# ---- benchmark tables and charts


def _tables(lines: list[str]) -> list[tuple[int, list[str], list[list[str]]]]:
    """The Markdown tables of a file: (line index, header cells, data rows)."""
    found = []
    i = 0
    while i < len(lines) - 1:
        if lines[i].startswith("|") and re.match(r"^\|(\s*:?-+:?\s*\|)+\s*$", lines[i + 1]):
            header = [c.strip() for c in lines[i].strip().strip("|").split("|")]
            rows, j = [], i + 2
            while j < len(lines) and lines[j].startswith("|"):
                rows.append([c.strip() for c in lines[j].strip().strip("|").split("|")])
                j += 1
            found.append((i, header, rows))
            i = j
        else:
            i += 1
    return found


def _number(cell: str) -> float | None:
    m = _NUMBER.match(cell.replace("`", "").strip())
    return float(m.group(1).replace(",", "")) if m else None


def _chart(title: str, header: list[str], rows: list[list[str]]) -> bytes | None:
    """A horizontal bar chart of a table's measure columns (None when it has none)."""
    rows = [r for r in rows if len(r) == len(header)]
    numeric = [
        i
        for i in range(1, len(header))
        if sum(_number(r[i]) is not None for r in rows) * 2 >= len(rows) > 0
    ]

    def of_kind(kind: re.Pattern[str]) -> list[int]:
        return [i for i in numeric if kind.search(header[i]) and not _NOT_MEASURE.search(header[i])]

    times = [i for i in of_kind(_TIME) if i not in of_kind(_RATE)]
    measures = (times or of_kind(_RATE))[:4]
    if not measures:
        return None
    axis = "time (shorter is faster)" if times else "throughput (longer is faster)"
    first_numeric = min(numeric)
    labels = [" · ".join(c for c in r[:first_numeric] if c).replace("`", "") for r in rows]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    height = 0.6 + 0.32 * len(rows) * max(1, len(measures) * 0.7)
    fig, ax = plt.subplots(figsize=(9, min(height, 14)), dpi=100)
    bar = 0.8 / len(measures)
    values_all: list[float] = []
    for k, col in enumerate(measures):
        values = [_number(r[col]) for r in rows]
        ys = [y + k * bar for y, v in enumerate(values) if v is not None]
        xs = [v for v in values if v is not None]
        values_all += xs
        ax.barh(ys, xs, height=bar, label=header[col].replace("`", ""))
    ax.set_yticks([y + bar * (len(measures) - 1) / 2 for y in range(len(rows))])
    ax.set_yticklabels([lb if len(lb) <= 60 else lb[:57] + "..." for lb in labels], fontsize=8)
    ax.invert_yaxis()
    positive = [v for v in values_all if v > 0]
    if positive and max(positive) / min(positive) > 50:
        ax.set_xscale("log")
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(axis + (", log scale" if ax.get_xscale() == "log" else ""), fontsize=8)
    ax.legend(fontsize=8, loc="best")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png")
    plt.close(fig)
    return out.getvalue()


def bench_section(name: str) -> str:
    """A results file as a page section: its text (headings one level down, no H1), each table
    preceded by its chart."""
    path = BENCHES / name
    if not path.is_file():
        raise FileNotFoundError(f"docs: benches/{name} does not exist (marker in performance.md)")
    lines = path.read_text(encoding="utf-8").splitlines()
    title = lines[0].lstrip("# ").strip() if lines and lines[0].startswith("# ") else name
    body = lines[1:] if lines and lines[0].startswith("# ") else lines
    charts_at: dict[int, str] = {}
    for n, (at, header, rows) in enumerate(_tables(body)):
        png = _chart(f"{title} ({n + 1})" if n else title, header, rows)
        if png is not None:
            chart = f"charts/{path.stem}-{n + 1}.png"
            _charts[chart] = png
            # relative to docs/ (the page that holds the marker sits there)
            charts_at[at] = f"![{title}: chart of the table below]({chart})\n"
    if not charts_at:
        raise ValueError(f"docs: benches/{name} has no table with numbers to chart")
    out = [f"*From `benches/{name}`, rendered when the site was built.*", ""]
    for i, line in enumerate(body):
        if i in charts_at:
            out += [charts_at[i], ""]
        if line.startswith("#"):
            line = "#" + line  # its sections sit under the page's section
        # The files are plain text: brackets are never links (`bucket[16](id)`).
        out.append(line.replace("[", "\\["))
    return "\n".join(out) + "\n"


# ---- MkDocs events


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    return BENCH_MARKER.sub(lambda m: bench_section(m.group(1)), markdown)


def on_files(files: Any, config: Any) -> Any:
    # The charts are drawn while pages render, after this event: reserve their names now
    # (by rendering the performance page's markers once) so that links to them validate.
    from mkdocs.structure.files import File

    for f in list(files):
        if f.src_uri.endswith(".md") and "frazil:bench" in Path(f.abs_src_path).read_text():
            for m in BENCH_MARKER.finditer(Path(f.abs_src_path).read_text()):
                bench_section(m.group(1))
    for uri, png in _charts.items():
        files.append(File.generated(config, uri, content=png))
    return files
