"""Maintenance commands: ``remove-orphan-files`` and ``rewrite-manifests``."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from frazil.cli.context import Context
from frazil.cli.tables import parse_older_than, parse_size

__all__ = ["COMMANDS", "add_parsers"]


def cmd_remove_orphan_files(ctx: Context) -> None:
    args = ctx.args
    table = ctx.table(args.identifier)
    older_than = parse_older_than(args.older_than) if args.older_than else None
    with ctx.out.progress("finding orphan files", total=1) as step:
        orphans = table.remove_orphan_files(
            older_than=older_than,
            dry_run=args.dry_run,
            location=args.location,
            prefix_mismatch_mode=args.prefix_mismatch_mode,
        )
        step.advance()
    data = {"dry_run": bool(args.dry_run), "orphan_file_locations": orphans}

    def text() -> str:
        verb = "Would delete" if args.dry_run else "Deleted"
        lines = [f"{verb} {len(orphans)} orphan files of {table.full_name()}"]
        return "\n".join(lines + [f"  {p}" for p in orphans])

    ctx.out.emit(data, text)


def cmd_rewrite_manifests(ctx: Context) -> None:
    args = ctx.args
    table = ctx.table(args.identifier)
    target = parse_size(args.target_size) if args.target_size else None
    with ctx.out.progress("rewriting manifests", total=1) as step:
        result = table.rewrite_manifests(
            spec_id=args.spec_id, target_size_bytes=target, branch=args.branch
        )
        step.advance()
    data: dict[str, Any] = dataclasses.asdict(result)

    def text() -> str:
        if result.snapshot_id is None:
            return f"No manifests to rewrite in {table.full_name()}"
        return (
            f"Rewrote {len(result.rewritten_manifests)} manifests of {table.full_name()} into "
            f"{len(result.added_manifests)}; snapshot {result.snapshot_id}"
        )

    ctx.out.emit(data, text)


COMMANDS = {
    "remove-orphan-files": cmd_remove_orphan_files,
    "rewrite-manifests": cmd_rewrite_manifests,
}


def add_parsers(sub: Any, identifier_command: Any, bind: Any) -> None:
    p: argparse.ArgumentParser = identifier_command(
        sub, "remove-orphan-files", "delete files under the table location no metadata reaches"
    )
    p.add_argument(
        "--older-than",
        default=None,
        help="only files older than this: an age (3d, 12h), an ISO date/time or epoch ms "
        "(default: 3 days)",
    )
    p.add_argument("--location", default=None, help="a directory under the table location")
    p.add_argument("--prefix-mismatch-mode", choices=("error", "ignore", "delete"), default="error")
    p.add_argument("--dry-run", action="store_true", help="list them, delete nothing")
    bind(p, "remove-orphan-files", COMMANDS)
    p = identifier_command(
        sub, "rewrite-manifests", "rewrite manifests clustered by partition, at a target size"
    )
    p.add_argument("--target-size", default=None, help="e.g. 8MB (default: the table's)")
    p.add_argument("--spec-id", type=int, default=None, help="only this spec's manifests")
    p.add_argument("--branch", default=None)
    bind(p, "rewrite-manifests", COMMANDS)
