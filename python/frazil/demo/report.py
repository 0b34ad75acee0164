"""The demo's summary, printed as rich tables."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


__all__ = ["print_summary"]


from frazil.demo.pipeline import BATCHES, DemoSummary


def _short(path: str, keep: int = 2) -> str:
    parts = path.rstrip("/").split("/")
    return "…/" + "/".join(parts[-keep:]) if len(parts) > keep else path


def print_summary(summary: DemoSummary, console: Console | None = None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    console.print()
    snaps = Table(title=f"snapshots of {summary.identifier}", title_justify="left")
    for name, justify in (
        ("snapshot", "right"),
        ("operation", "left"),
        ("demo step", "left"),
        ("+ data files", "right"),
        ("+ rows", "right"),
        ("+ DVs", "right"),
        ("rows deleted", "right"),
        ("total rows", "right"),
        ("commit attempt", "right"),
    ):
        snaps.add_column(name, justify=justify)  # type: ignore[arg-type]
    for s in summary.snapshots:
        m = s["summary"]
        label = s["label"] or ("delete refunds (US, GB)" if s["operation"] == "delete" else "")
        snaps.add_row(
            str(s["snapshot_id"]),
            s["operation"],
            label,
            m.get("added-data-files", ""),
            _num(m.get("added-records")),
            m.get("added-dvs", ""),
            _num(m.get("added-position-deletes")),
            _num(m.get("total-records")),
            "" if s["attempt"] is None else str(s["attempt"]),
        )
    console.print(snaps)

    if summary.dv_files:
        dvs = Table(title="deletion vectors (Puffin files)", title_justify="left")
        dvs.add_column("file")
        dvs.add_column("DVs", justify="right")
        dvs.add_column("rows deleted", justify="right")
        dvs.add_column("bytes", justify="right")
        for d in summary.dv_files:
            dvs.add_row(_short(d.path), f"{d.dvs:,}", f"{d.rows:,}", f"{d.size:,}")
        console.print(dvs)

    prune = Table(title="filtered scan planning (pruning)", title_justify="left")
    for name in ("filter", "manifests kept", "data files planned", "DVs attached", "rows", "ms"):
        prune.add_column(name, justify="left" if name == "filter" else "right")
    for p in summary.pruning:
        prune.add_row(
            f"{p.description}\n[dim]{p.row_filter}[/]",
            f"{p.manifests_kept}/{p.manifests_total} ({p.manifests_pruned} pruned)",
            f"{p.files_planned}/{p.files_total} ({p.files_pruned} pruned)",
            f"{p.deletes_attached:,}",
            f"{p.rows:,}",
            f"{p.plan_ms:.1f}",
        )
    console.print(prune)

    travel = Table(title="time travel", title_justify="left")
    for name in ("as of", "snapshot", "expected rows", "rows read", ""):
        travel.add_column(name, justify="left" if name == "as of" else "right")
    for t in summary.time_travel:
        ok = "[green]✓[/]" if t.expected == t.read else "[red]✗[/]"
        travel.add_row(t.label, str(t.snapshot_id), f"{t.expected:,}", f"{t.read:,}", ok)
    console.print(travel)

    if summary.by_event_type:
        types = Table(title="current rows by event type (Spark over frazil.spark.read)")
        types.title_justify = "left"
        types.add_column("event_type")
        types.add_column("rows", justify="right")
        types.add_column("sum(amount)", justify="right")
        for kind, n, amount in summary.by_event_type:
            types.add_row(kind, f"{n:,}", amount)
        console.print(types)

    totals = Table(title="rows", title_justify="left")
    totals.add_column("what")
    totals.add_column("rows", justify="right")
    totals.add_row(f"written ({len(summary.batches)} Spark writes)", f"{summary.rows_written:,}")
    totals.add_row("deleted (DVs; rows matching the filter before)", f"{summary.rows_deleted:,}")
    totals.add_row("read by frazil.spark.read", f"{summary.rows_read:,}")
    totals.add_row("counted by frazil's scan", f"{summary.rows_read_local:,}")
    totals.add_row(
        "written - deleted = read",
        "[green]✓ consistent[/]" if summary.consistent else "[red]✗ INCONSISTENT[/]",
    )
    totals.add_row("commit retries (transaction log)", str(summary.retries_logged))
    files = ", ".join(f"{n:,} of spec {k}" for k, n in sorted(summary.data_files_by_spec.items()))
    totals.add_row(
        f"live data files ({files})",
        f"{sum(summary.data_files_by_spec.values()):,} files, {summary.data_bytes / 1e6:,.1f} MB",
    )
    console.print(totals)

    timing = Table(title="timings", title_justify="left")
    timing.add_column("step")
    timing.add_column("s", justify="right")
    timing.add_column("rows/s", justify="right")
    by_label = {f"writing {b.label}": b.rows for b in summary.batches}
    concurrent = sum(b.rows for b in summary.batches if b.label in _concurrent_labels())
    for name, seconds in summary.timings.items():
        rows = by_label.get(name) or (concurrent if "concurrently" in name else None)
        if name.startswith("reading the table"):
            rows = summary.rows_read
        rate = f"{rows / seconds:,.0f}" if rows and seconds > 0 else ""
        timing.add_row(name, f"{seconds:.1f}", rate)
    timing.add_row("[bold]total[/]", f"{sum(summary.timings.values()):.1f}", "")
    console.print(timing)
    console.print(
        f"table {summary.identifier} ({summary.catalog_type} catalog, warehouse "
        f"{summary.warehouse})\nmetadata {summary.metadata_location}\n"
        f"columns {', '.join(summary.schema_columns)}; spec {summary.spec}"
    )


def _concurrent_labels() -> set[str]:
    return {b[0] for b in BATCHES if b[3] is not None}


def _num(value: str | None) -> str:
    if value is None or value == "":
        return ""
    try:
        return f"{int(value):,}"
    except ValueError:
        return value
