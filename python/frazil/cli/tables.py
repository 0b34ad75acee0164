"""Commands for people managing tables: ``files`` (PyIceberg's), ``snapshots`` (the tree of
branches and tags), ``manifests``, ``partitions``, ``history``, ``expire``, ``compact`` and
``compute-statistics``.

The metadata tables (:mod:`frazil.table.inspect`) and the manifest decoders do the reading;
these functions only choose what to show.
"""

from __future__ import annotations

import dataclasses
import re
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from frazil.cli.charts import bars
from frazil.cli.output import shown_path
from frazil.exceptions import InvalidArgumentError

# The catalog, table, demo and server packages are imported inside the commands that use them:
# ``frazil --help`` and argument errors answer without loading them.

if TYPE_CHECKING:
    import pyarrow as pa
    from rich.console import RenderableType

    from frazil.cli.context import Context
    from frazil.metadata import Snapshot

__all__ = ["COMMANDS", "parse_older_than", "parse_size"]

MANIFEST_BATCH = 32  # manifests read (in parallel) per progress step
_STATUS = {0: "existing", 1: "added", 2: "deleted"}
_CONTENT = {0: "data", 1: "deletes"}


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


def _rich_table(
    rows: list[dict[str, Any]], columns: list[tuple[str, str]], title: str
) -> RenderableType:
    """A table of ``rows`` with ``(key, header)`` columns; ids and counts never wrap."""
    from rich.table import Table as RichTable
    from rich.text import Text

    cells = [[_cell(r[key]) for key, _ in columns] for r in rows]
    out = RichTable(title=title, title_justify="left")
    for i, (key, header) in enumerate(columns):
        widest = max((len(row[i]) for row in cells), default=0)
        out.add_column(header, overflow="fold", min_width=None if key == "path" else widest)
    for row in cells:
        out.add_row(*(Text(c) for c in row))
    return out


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return str(value)


def _snapshot_id(ctx: Context) -> int | None:
    value: int | None = getattr(ctx.args, "snapshot_id", None)
    return value


# ---- files


def _manifest_paths(io: Any, md: Any, snapshot: Snapshot) -> list[tuple[str, int]]:
    """The (stored path, content) of each manifest the snapshot lists."""
    from frazil.manifest import read_manifest_list

    if snapshot.manifest_list is None:  # v1: manifests listed inline, all data manifests
        return [(m, 0) for m in snapshot.manifests or ()]
    location = md.resolve(snapshot.manifest_list)
    listed = read_manifest_list(io.read(location), path=location, location=md.paths_location)
    return list(
        zip(
            listed.column("manifest_path").to_pylist(),
            listed.column("content").to_pylist(),
            strict=True,
        )
    )


def cmd_files(ctx: Context) -> None:
    from frazil.manifest import read_manifests

    table = ctx.table(ctx.args.identifier)
    md, io = table.metadata, table.io
    current = table.current_snapshot()
    snapshots = list(md.snapshots) if ctx.args.history else [current] if current else []
    listed = [(s, _manifest_paths(io, md, s)) for s in snapshots]
    result: list[dict[str, Any]] = []
    with ctx.out.progress("reading manifests", total=sum(len(m) for _, m in listed)) as step:
        for snapshot, manifests in listed:
            entries: list[dict[str, Any]] = []
            for start in range(0, len(manifests), MANIFEST_BATCH):
                batch = manifests[start : start + MANIFEST_BATCH]
                locations = [md.resolve(p) for p, _ in batch]
                decoded = read_manifests(
                    io.read_many(locations),
                    columns=["status", "data_file.file_path"],
                    location=md.paths_location,
                    paths=locations,
                )
                for (path, content), t in zip(batch, decoded, strict=True):
                    paths = t.column("data_file").combine_chunks().field("file_path")
                    files = [
                        {"path": p, "status": _STATUS.get(s, str(s))}
                        for p, s in zip(
                            paths.to_pylist(), t.column("status").to_pylist(), strict=True
                        )
                    ]
                    entries.append(
                        {"path": path, "content": _CONTENT.get(content, content), "files": files}
                    )
                step.advance(len(batch))
            result.append(
                {
                    "snapshot_id": snapshot.snapshot_id,
                    "schema_id": snapshot.schema_id,
                    "manifest_list": snapshot.manifest_list,
                    "manifests": entries,
                }
            )

    def text() -> RenderableType:
        from rich.text import Text
        from rich.tree import Tree

        interactive, location = ctx.out.interactive, table.location()

        def path(p: str | None) -> str:
            return shown_path(p, location, interactive)

        title = f"Snapshots: {table.full_name()}"
        if interactive:  # the paths below are relative to it
            title += f" (paths under {location})"
        tree = Tree(Text(title))
        for s in result:
            branch = tree.add(
                Text(
                    f"Snapshot {s['snapshot_id']}, schema {s['schema_id']}: "
                    f"{path(s['manifest_list'])}"
                )
            )
            for m in s["manifests"]:
                node = branch.add(Text(f"Manifest: {path(m['path'])}"))
                for f in m["files"]:
                    node.add(Text(f"Datafile: {path(f['path'])}"))
        return tree

    ctx.out.emit(result, text)


# ---- snapshots: branches and tags as a tree


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _snapshot_line(s: Snapshot, tags: list[str]) -> str:
    from rich.markup import escape

    summary = s.summary or {}
    change = []
    for key, label in (("added-records", "+{} rows"), ("deleted-records", "-{} rows")):
        if summary.get(key):
            change.append(label.format(summary[key]))
    labels = "".join(escape(f" [tag {t}]") for t in tags)  # shown as is, not rich markup
    op = summary.get("operation", "?")
    return f"{s.snapshot_id:<19}  {op:<9} {_when(s.timestamp_ms)}  {', '.join(change)}{labels}"


def cmd_snapshots(ctx: Context) -> None:
    from frazil.table.update.manage_snapshots import ancestors_of

    table = ctx.table(ctx.args.identifier)
    md = table.metadata
    by_id = {s.snapshot_id: s for s in md.snapshots}
    refs = table.refs()
    names = sorted(refs, key=lambda n: (n != "main", n))
    branches = [n for n in names if refs[n].snapshot_ref_type == "branch"]
    tags = [n for n in names if refs[n].snapshot_ref_type == "tag"]
    chains = {
        b: [s.snapshot_id for s in ancestors_of(refs[b].snapshot_id, by_id)] for b in branches
    }
    data = {
        "refs": {
            n: {"type": refs[n].snapshot_ref_type, "snapshot_id": refs[n].snapshot_id}
            for n in names
        },
        "branches": chains,
        "snapshots": [
            {
                "snapshot_id": s.snapshot_id,
                "parent_id": s.parent_snapshot_id,
                "timestamp_ms": s.timestamp_ms,
                "operation": (s.summary or {}).get("operation"),
                "summary": dict(s.summary or {}),
                "schema_id": s.schema_id,
                "manifest_list": s.manifest_list,
            }
            for s in md.snapshots
        ],
    }

    def text() -> RenderableType:
        from rich.markup import escape
        from rich.tree import Tree

        tags_of: dict[int, list[str]] = {}
        for t in tags:
            tags_of.setdefault(refs[t].snapshot_id, []).append(t)
        tree = Tree(f"[bold]{escape(table.full_name())}[/]")
        shown: dict[int, str] = {}
        for b in branches:
            node = tree.add(f"[green]branch {escape(b)}[/]")
            for sid in chains[b]:
                if sid in shown:
                    node.add(f"[dim]↳ forks from {escape(shown[sid])} at {sid}[/]")
                    break
                node.add(_snapshot_line(by_id[sid], tags_of.get(sid, [])))
                shown[sid] = b
        for t in tags:
            tree.add(f"[yellow]tag {escape(t)}[/] → {refs[t].snapshot_id}")
        loose = [s for s in md.snapshots if s.snapshot_id not in shown]
        if loose:
            node = tree.add("[dim]not on any branch[/]")
            for s in loose:
                node.add(_snapshot_line(s, tags_of.get(s.snapshot_id, [])))
        return tree

    ctx.out.emit(data, text)


# ---- metadata tables


def cmd_manifests(ctx: Context) -> None:
    rows = _rows(ctx.table(ctx.args.identifier).inspect.manifests(_snapshot_id(ctx)))

    def text() -> RenderableType:
        shown = [
            {
                **r,
                "path": r["path"].rsplit("/", 1)[-1],
                "content": _CONTENT.get(r["content"], r["content"]),
                "files": f"{r['added_data_files_count'] + r['added_delete_files_count']}/"
                f"{r['existing_data_files_count'] + r['existing_delete_files_count']}/"
                f"{r['deleted_data_files_count'] + r['deleted_delete_files_count']}",
            }
            for r in rows
        ]
        columns = [
            ("content", "content"),
            ("path", "file"),
            ("length", "bytes"),
            ("partition_spec_id", "spec"),
            ("added_snapshot_id", "added by"),
            ("files", "files +/=/-"),
        ]
        return _rich_table(shown, columns, "Manifests")

    ctx.out.emit(rows, text)


def partition_label(
    partition: dict[str, Any] | None, spec_id: int, fields: list[str] | None = None
) -> str:
    """``spec 1: city=par, day=null``: the values of the spec's ``fields`` (default: every
    field of ``partition``, the table's partition type). A null value is a partition of its
    own, shown as ``null``. The partitions table groups rows by the table's partition type, as
    Java's does, so files of a spec without fields share the row of the all-null key:
    ``spec 0: (unpartitioned; key city=null)``."""
    values = dict(partition or {})
    names = list(values) if fields is None else [n for n in fields if n in values]

    def shown(keys: list[str]) -> str:
        return ", ".join(f"{k}={'null' if values[k] is None else values[k]}" for k in keys)

    if names:
        return f"spec {spec_id}: {shown(names)}"
    if values:
        return f"spec {spec_id}: (unpartitioned; key {shown(list(values))})"
    return f"spec {spec_id}: (unpartitioned)"


def cmd_partitions(ctx: Context) -> None:
    table = ctx.table(ctx.args.identifier)
    rows = _rows(table.inspect.partitions(_snapshot_id(ctx)))
    # The partition column has every spec's fields; a row shows those of its own spec.
    fields = {i: [f.name for f in s.fields] for i, s in table.metadata.specs().items()}

    def text() -> RenderableType:
        return bars(
            [
                (
                    partition_label(r["partition"], r["spec_id"], fields.get(r["spec_id"])),
                    r["record_count"],
                )
                for r in rows
            ],
            title="Rows per partition",
            unit=" rows",
        )

    ctx.out.emit(rows, text)


def cmd_history(ctx: Context) -> None:
    rows = _rows(ctx.table(ctx.args.identifier).inspect.history())
    columns = [
        ("made_current_at", "made current at"),
        ("snapshot_id", "snapshot"),
        ("parent_id", "parent"),
        ("is_current_ancestor", "on main"),
    ]
    ctx.out.emit(rows, lambda: _rich_table(rows, columns, "History"))


# ---- maintenance

_DURATION = re.compile(r"^(\d+)\s*(ms|s|m|h|d|w)$")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)$", re.IGNORECASE)


def parse_older_than(text: str, now_ms: int | None = None) -> int:
    """A cutoff in epoch milliseconds from an age (``7d``, ``12h``, ``30m``, ``90s``), an ISO
    date/time (UTC unless it has an offset) or epoch milliseconds."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    text = text.strip()
    m = _DURATION.match(text)
    if m:
        return now - int(m.group(1)) * _UNIT_MS[m.group(2)]
    if text.isdigit():
        return int(text)
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidArgumentError(
            f"--older-than: expected an age such as 7d or 12h, an ISO date/time or epoch "
            f"milliseconds, got {text!r}"
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return int(dt.timestamp() * 1000)


def parse_size(text: str) -> int:
    """Bytes from ``536870912``, ``512MB``, ``512MiB``, ``1.5g`` (units are powers of 1024)."""
    m = _SIZE.match(text.strip())
    if not m:
        raise InvalidArgumentError(f"expected a size such as 512MB, got {text!r}")
    unit = m.group(2).lower().rstrip("b").rstrip("i")
    power = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}[unit]
    value = int(float(m.group(1)) * 1024**power)
    if value <= 0:
        raise InvalidArgumentError(f"the size must be positive, got {text!r}")
    return value


def cmd_expire(ctx: Context) -> None:
    args = ctx.args
    table = ctx.table(args.identifier)
    before = {s.snapshot_id for s in table.metadata.snapshots}
    refs_before = set(table.refs())
    with ctx.out.progress("expiring snapshots", total=1 if args.dry_run else 2) as step:
        expire = table.expire_snapshots()
        if args.older_than is not None:
            expire.expire_older_than(parse_older_than(args.older_than))
        if args.retain_last is not None:
            expire.retain_last(args.retain_last)
        for sid in args.snapshot_id or ():
            expire.expire_snapshot_id(sid)
        plan = expire.plan()
        step.advance()
        if args.dry_run:
            removed, removed_refs = set(plan.removed_ids), list(plan.removed_refs)
        else:
            expire.commit()  # the table's autocommit transaction: commits, then deletes files
            table.refresh()
            removed = before - {s.snapshot_id for s in table.metadata.snapshots}
            removed_refs = sorted(refs_before - set(table.refs()))
            step.advance()
    data = {
        "dry_run": bool(args.dry_run),
        "expired_snapshot_ids": sorted(removed),
        "removed_refs": sorted(removed_refs),
        "retained_snapshot_ids": sorted(before - removed),
    }

    def text() -> str:
        verb = "Would expire" if args.dry_run else "Expired"
        lines = [f"{verb} {len(removed)} of {len(before)} snapshots of {table.full_name()}"]
        lines += [f"  {sid}" for sid in sorted(removed)]
        if removed_refs:
            lines.append(f"{'Would remove' if args.dry_run else 'Removed'} refs: ")
            lines[-1] += ", ".join(sorted(removed_refs))
        return "\n".join(lines)

    ctx.out.emit(data, text)


def cmd_compact(ctx: Context) -> None:
    from frazil.table.maintenance.rewrite_data_files import rewrite_data_files

    args = ctx.args
    table = ctx.table(args.identifier)
    target = parse_size(args.target_file_size) if args.target_file_size else None
    with ctx.out.progress("compacting file groups") as step:
        done = [0]

        def progress(finished: int, total: int) -> None:
            step.total(total)
            step.advance(finished - done[0])
            done[0] = finished

        result = rewrite_data_files(
            table,
            target,
            args.where,
            args.min_input_files,
            args.branch,
            progress=progress,
        )
    data = dataclasses.asdict(result)

    def text() -> str:
        if result.snapshot_id is None:
            return f"Nothing to compact in {table.full_name()}"
        return (
            f"Rewrote {result.rewritten_data_files_count} data files "
            f"({result.rewritten_bytes_count:,} bytes) of {table.full_name()} into "
            f"{result.added_data_files_count}; removed {result.removed_delete_files_count} "
            f"delete files; snapshot {result.snapshot_id}"
        )

    ctx.out.emit(data, text)


def cmd_compute_statistics(ctx: Context) -> None:
    args = ctx.args
    table = ctx.table(args.identifier)
    columns = [c.strip() for arg in args.columns or () for c in arg.split(",") if c.strip()]
    with ctx.out.progress("computing statistics"):
        f = table.compute_statistics(columns or None, args.snapshot_id)
        partition_file = None
        if args.partition_statistics:
            partition_file = table.compute_partition_statistics(f.snapshot_id)
    schema = table.schema()
    ndv = {
        schema.find_column_name(b.fields[0]) or str(b.fields[0]): int(b.properties["ndv"])
        for b in f.blob_metadata
    }
    data = {
        "snapshot_id": f.snapshot_id,
        "statistics_path": f.statistics_path,
        "ndv": ndv,
        "partition_statistics_path": partition_file.statistics_path if partition_file else None,
    }

    def text() -> str:
        head = f"Statistics of {table.full_name()} at snapshot {f.snapshot_id}"
        lines = [f"{head}: {f.statistics_path}"]
        width = max((len(n) for n in ndv), default=0)
        lines += [f"  {name:<{width}}  ndv {value}" for name, value in ndv.items()]
        if partition_file is not None:
            lines.append(f"Partition statistics: {partition_file.statistics_path}")
        return "\n".join(lines)

    ctx.out.emit(data, text)


COMMANDS = {
    "files": cmd_files,
    "snapshots": cmd_snapshots,
    "manifests": cmd_manifests,
    "partitions": cmd_partitions,
    "history": cmd_history,
    "expire": cmd_expire,
    "compact": cmd_compact,
    "compute-statistics": cmd_compute_statistics,
}
