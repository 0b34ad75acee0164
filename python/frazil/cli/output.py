"""Where a command's answer goes: a terminal (rich) or JSON on stdout.

Every command builds its answer once as plain data (what ``--output json`` prints, parsed back
by scripts) and, for the terminal, a rich renderable drawn from the same data. Progress bars
only appear when stdout is a terminal and the output is text: a pipe or a JSON consumer sees
none of it.

To a terminal, the output is fitted to its width (paths under the table location shown relative
to it); to a pipe or a file it is plain (no colour) and complete: nothing is cut or wrapped at
rich's default of 80 columns, whatever ``COLUMNS`` says.
"""

from __future__ import annotations

import datetime
import decimal
import json
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from frazil.partitioning import PartitionSpec
    from frazil.schema import Schema
    from frazil.sorting import SortOrder
    from frazil.types import NestedField

__all__ = [
    "Output",
    "Step",
    "field_text",
    "json_default",
    "shown_path",
    "sort_order_text",
    "spec_text",
]

# A pipe's "width": wide enough that no line of any command is cut or wrapped.
PIPE_WIDTH = 1_000_000


def json_default(value: Any) -> Any:
    """JSON for what Arrow's ``to_pylist`` and the metadata hold beyond plain JSON."""
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, (decimal.Decimal, uuid.UUID)):
        return str(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


# ---- PyIceberg's text forms of metadata objects (its ``str()`` of fields, specs, orders)


def field_text(field: NestedField) -> str:
    required = "required" if field.required else "optional"
    doc = f" ({field.doc})" if field.doc else ""
    return f"{field.field_id}: {field.name}: {required} {field.field_type}{doc}"


def spec_text(spec: PartitionSpec) -> str:
    if not spec.fields:
        return "[]"
    lines = [f"  {f.field_id}: {f.name}: {f.transform}({f.source_id})" for f in spec.fields]
    return "[\n" + "\n".join(lines) + "\n]"


def sort_order_text(order: SortOrder) -> str:
    if not order.fields:
        return "[]"
    lines = [
        f"  {f.transform}({f.source_id}) {f.direction.name} "
        f"{f.null_order.name.replace('_', ' ') if f.null_order else ''}".rstrip()
        for f in order.fields
    ]
    return "[\n" + "\n".join(lines) + "\n]"


def schema_tree_lines(schema: Schema) -> list[str]:
    return [field_text(f) for f in schema.fields]


def shown_path(path: str | None, location: str, interactive: bool) -> str:
    """``path`` as a terminal shows it: relative to the table ``location`` when under it (the
    unique part fits on a line instead of being cut inside a UUID); in a pipe, as stored."""
    if path is None:
        return "None"
    prefix = location.rstrip("/") + "/"
    if interactive and path.startswith(prefix):
        return path[len(prefix) :]
    return path


class Step:
    """One progress bar's handle: ``advance()`` by units done, ``total`` once known."""

    def __init__(self, advance: Callable[[int], None], set_total: Callable[[int], None]) -> None:
        self._advance = advance
        self._set_total = set_total

    def advance(self, n: int = 1) -> None:
        self._advance(n)

    def total(self, total: int) -> None:
        self._set_total(total)


class Output:
    """A command's answer as text (rich, on a terminal or not) or JSON; errors as one line."""

    def __init__(self, fmt: str = "text", verbose: bool = False) -> None:
        self.json = fmt == "json"
        self.verbose = verbose
        self._console: Console | None = None

    @property
    def console(self) -> Console:
        if self._console is None:
            from rich.console import Console

            console = Console()
            if not console.is_terminal:
                console = Console(width=PIPE_WIDTH, no_color=True, highlight=False)
            self._console = console
        return self._console

    @property
    def interactive(self) -> bool:
        """Whether progress bars and charts are drawn for a person at a terminal."""
        return not self.json and self.console.is_terminal

    def emit(self, data: Any, text: Callable[[], RenderableType | str] | None = None) -> None:
        """Prints ``data`` as one JSON document, or ``text()`` (default: ``data`` itself)."""
        if self.json:
            sys.stdout.write(json.dumps(data, default=json_default) + "\n")
            sys.stdout.flush()
            return
        shown = text() if text is not None else data
        if isinstance(shown, str):
            self.console.print(shown, soft_wrap=True, markup=False, highlight=False)
        else:
            self.console.print(shown)

    def message(self, message: str) -> None:
        """A one-line answer (``Dropped table: db.t``); JSON mode prints it as a JSON string."""
        self.emit(message)

    def grid(self, rows: Sequence[Sequence[Any]]) -> RenderableType:
        """PyIceberg's borderless two-space grid."""
        from rich.table import Table
        from rich.text import Text

        grid = Table.grid(padding=(0, 2))
        for row in rows:  # strings are shown as they are, never read as rich markup
            grid.add_row(*(Text(c) if isinstance(c, str) else c for c in row))
        return grid

    def properties(self, props: Mapping[str, str]) -> None:
        self.emit(dict(props), lambda: self.grid(list(props.items())))

    def note(self, message: str) -> None:
        """A remark for the person reading (an empty listing, ...) on stderr, so that stdout
        stays what scripts parse."""
        if not self.json:
            sys.stderr.write(f"frazil: {message}\n")
            sys.stderr.flush()

    def error(self, exc: BaseException) -> None:
        """``frazil: error: <message>`` on stderr (a traceback too with ``--verbose``); JSON
        mode also prints ``{"type": ..., "message": ...}`` on stdout, as PyIceberg does. The
        message is one line, except a parse error's: its text and caret lines stay below it."""
        from frazil.exceptions import ParseError

        message = str(exc) or type(exc).__name__
        first, _, rest = message.partition("\n")
        if isinstance(exc, ParseError) and rest:
            message = " ".join(first.split()) + "\n" + rest.rstrip()
        else:
            message = " ".join(message.split())  # one line, whatever the exception's text holds
        if self.verbose:
            import traceback

            traceback.print_exception(exc, file=sys.stderr)
        if self.json:
            sys.stdout.write(json.dumps({"type": type(exc).__name__, "message": message}) + "\n")
            sys.stdout.flush()
        sys.stderr.write(f"frazil: error: {message}\n")
        sys.stderr.flush()

    @contextmanager
    def progress(self, description: str, total: int | None = None) -> Iterator[Step]:
        """A progress bar while the block runs (nothing unless :attr:`interactive`)."""
        if not self.interactive:
            yield Step(lambda n: None, lambda t: None)
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        with Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=False,
        ) as bar:
            task = bar.add_task(description, total=total)
            yield Step(
                lambda n: bar.advance(task, n),
                lambda t: bar.update(task, total=t),
            )
