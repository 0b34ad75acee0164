"""Small terminal charts: horizontal bars drawn with Unicode eighth blocks.

The numbers come from Arrow (the metadata tables); only the bins and bars are computed here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import RenderableType

__all__ = ["bar", "bars", "histogram_bins", "human_bytes"]

_EIGHTHS = " ▏▎▍▌▋▊▉"
BAR_WIDTH = 40


def bar(value: float, largest: float, width: int = BAR_WIDTH) -> str:
    """``value`` as a bar of at most ``width`` cells, in eighths of a cell (a non-zero value
    always shows at least one eighth)."""
    if largest <= 0 or value <= 0:
        return ""
    eighths = max(1, round(value / largest * width * 8))
    full, rest = divmod(eighths, 8)
    return "█" * full + (_EIGHTHS[rest] if rest else "")


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def histogram_bins(values: Sequence[int], bins: int = 8) -> list[dict[str, int]]:
    """Equal-width bins over ``[min, max]`` of ``values``: ``lower`` inclusive, ``upper``
    exclusive except the last bin's; one bin when all values are equal, none when empty."""
    if not values:
        return []
    lo, hi = min(values), max(values)
    if lo == hi:
        return [{"lower": lo, "upper": hi, "count": len(values)}]
    width = math.ceil((hi - lo + 1) / bins)
    counts = [0] * bins
    for v in values:
        counts[min((v - lo) // width, bins - 1)] += 1
    out = []
    for i, c in enumerate(counts):
        lower = lo + i * width
        upper = hi if i == bins - 1 else lower + width
        out.append({"lower": lower, "upper": upper, "count": c})
    return out


def bars(
    rows: Sequence[tuple[str, float]], title: str | None = None, unit: str = ""
) -> RenderableType:
    """One labelled bar per row, scaled to the largest value."""
    from rich.table import Table
    from rich.text import Text

    largest = max((v for _, v in rows), default=0)
    grid = Table(title=title, show_header=False, box=None, padding=(0, 1), title_justify="left")
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(style="cyan", no_wrap=True)
    grid.add_column(justify="right", no_wrap=True)
    for label, value in rows:
        shown: Any = f"{value:,.0f}{unit}"
        grid.add_row(Text(label), bar(value, largest), shown)
    return grid
