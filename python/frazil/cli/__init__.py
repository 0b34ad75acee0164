"""The ``frazil`` command line: PyIceberg's commands and options (``list``, ``describe``,
``schema``, ``spec``, ``uuid``, ``location``, ``drop``, ``rename``, ``properties``, ``files``,
...), table management (``snapshots``, ``manifests``, ``partitions``, ``history``, ``expire``,
``compact``, ``remove-orphan-files``, ``rewrite-manifests``), the REST server (``serve``) and
the demo (``demo``).

Global options come before the command: ``--catalog NAME``, ``--output text|json``,
``--uri``, ``--credential``, ``--warehouse``, ``--verbose`` (``--verbose true`` as PyIceberg
spells it works too). ``--output json`` prints one JSON document per command. Errors are one
line on stderr (``frazil: error: ...``, a traceback only with ``--verbose``) and exit code 1
(2 for bad arguments).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import frazil
from frazil.cli import commands, maintenance, run, tables
from frazil.cli.context import Context
from frazil.cli.output import Output

__all__ = ["main"]

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


# The module docstring is for readers of the code; `frazil --help` gets its own text.
_DESCRIPTION = """\
Inspect and maintain Apache Iceberg tables from the command line: PyIceberg's commands and
options (list, describe, schema, files, properties, ...), table maintenance (snapshots, expire,
compact, remove-orphan-files, rewrite-manifests), and a REST catalog server (serve).
The catalog comes from ~/.frazil.yaml (or PyIceberg's ~/.pyiceberg.yaml),
FRAZIL_CATALOG__<NAME>__<KEY> variables, or --uri and --warehouse."""

_EPILOG = """\
examples:
  frazil --catalog default list                 namespaces of the catalog `default`
  frazil --uri sqlite:////data/wh/catalog.db --warehouse /data/wh list db
  frazil describe db.events                     metadata and a file-size histogram
  frazil schema db.events
  frazil files db.events                        snapshots -> manifests -> data files
  frazil --output json snapshots db.events
  frazil expire db.events --older-than 7d --dry-run
  frazil serve --warehouse /data/wh --no-auth   REST catalog on http://127.0.0.1:8181
                                                (needs: pip install 'frazil[server]')

`frazil COMMAND --help` describes a command's arguments."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line, not argparse's usage block (``--help`` has it)."""
        self.exit(2, f"{self.prog}: error: {message}\n")


def _normalize_verbose(argv: list[str]) -> list[str]:
    """PyIceberg's ``--verbose true|false`` as the ``--verbose`` flag."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        following = argv[i + 1].lower() if i + 1 < len(argv) else ""
        if token == "--verbose" and following in _TRUE | _FALSE:
            if following in _TRUE:
                out.append(token)
            i += 2
            continue
        if token.startswith("--verbose="):
            if token.split("=", 1)[1].lower() in _TRUE:
                out.append("--verbose")
            i += 1
            continue
        out.append(token)
        i += 1
    return out


def _identifier_command(sub: Any, name: str, help: str) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(name, help=help, description=help)
    p.add_argument("identifier", help="table identifier, e.g. db.table")
    return p


def _snapshot_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--snapshot-id", type=int, default=None, help="default: the current snapshot")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="frazil",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("--catalog", default=None, help="catalog name from the configuration")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="tracebacks on errors, debug logging"
    )
    parser.add_argument("--output", choices=("text", "json"), default="text")
    parser.add_argument(
        "--log-level",
        choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"),
        type=str.upper,
        default=os.environ.get("FRAZIL_LOG_LEVEL", "WARNING").upper(),
    )
    parser.add_argument("--uri", default=None, help="catalog URI (overrides the configuration)")
    parser.add_argument("--credential", default=None, help="catalog credential")
    parser.add_argument("--warehouse", default=None, help="catalog warehouse")
    parser.add_argument("--ugi", default=None, help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def bind(p: argparse.ArgumentParser, key: str, table: dict[str, Any]) -> None:
        p.set_defaults(cli_handler=table[key])

    p: argparse.ArgumentParser = sub.add_parser("list", help="list tables or namespaces")
    p.add_argument("parent", nargs="?", default=None, help="namespace to list")
    bind(p, "list", commands.COMMANDS)
    p = sub.add_parser("describe", help="describe a namespace or a table")
    p.add_argument("--entity", choices=("any", "namespace", "table"), default="any")
    p.add_argument("identifier")
    bind(p, "describe", commands.COMMANDS)
    p = _identifier_command(sub, "files", "list all the files of the table")
    p.add_argument("--history", action="store_true", help="every snapshot, not only the current")
    bind(p, "files", tables.COMMANDS)
    for name, help in (
        ("schema", "the schema of the table"),
        ("spec", "the partition spec of the table"),
        ("uuid", "the UUID of the table"),
        ("location", "the location of the table"),
    ):
        bind(_identifier_command(sub, name, help), name, commands.COMMANDS)

    create = sub.add_parser("create", help="create a namespace").add_subparsers(
        dest="entity", required=True
    )
    p = create.add_parser("namespace", help="create a namespace")
    p.add_argument("identifier")
    bind(p, "create namespace", commands.COMMANDS)
    drop = sub.add_parser("drop", help="drop a table or a namespace").add_subparsers(
        dest="entity", required=True
    )
    p = drop.add_parser("table", help="drop a table")
    p.add_argument("identifier")
    p.add_argument("--purge", action="store_true", help="delete the table's files too")
    bind(p, "drop table", commands.COMMANDS)
    p = drop.add_parser("namespace", help="drop a namespace")
    p.add_argument("identifier")
    bind(p, "drop namespace", commands.COMMANDS)
    p = sub.add_parser("rename", help="rename a table")
    p.add_argument("from_identifier")
    p.add_argument("to_identifier")
    bind(p, "rename", commands.COMMANDS)

    props = sub.add_parser("properties", help="properties of tables and namespaces")
    actions = props.add_subparsers(dest="action", required=True)
    for action, help in (("get", "fetch"), ("set", "set"), ("remove", "remove")):
        entities = actions.add_parser(action, help=f"{help} properties").add_subparsers(
            dest="entity", required=True
        )
        for entity in ("namespace", "table"):
            p = entities.add_parser(entity, help=f"{help} properties of a {entity}")
            p.add_argument("identifier")
            if action == "get":
                p.add_argument("property_name", nargs="?", default=None)
            else:
                p.add_argument("property_name")
            if action == "set":
                p.add_argument("property_value")
            bind(p, f"properties {action}", commands.COMMANDS)
    p = _identifier_command(sub, "list-refs", "the branches and tags with their retention")
    p.add_argument("--type", default=None, help="branch or tag")
    bind(p, "list-refs", commands.COMMANDS)

    bind(_identifier_command(sub, "snapshots", "the snapshots as a tree of branches and tags"),
         "snapshots", tables.COMMANDS)  # fmt: skip
    p = _identifier_command(sub, "manifests", "the manifests of a snapshot")
    _snapshot_option(p)
    bind(p, "manifests", tables.COMMANDS)
    p = _identifier_command(sub, "partitions", "rows, files and deletes per partition")
    _snapshot_option(p)
    bind(p, "partitions", tables.COMMANDS)
    bind(_identifier_command(sub, "history", "when each snapshot became current"), "history",
         tables.COMMANDS)  # fmt: skip
    p = _identifier_command(sub, "expire", "expire old snapshots and delete their files")
    p.add_argument(
        "--older-than",
        default=None,
        help="an age (7d, 12h, 30m), an ISO date/time (UTC unless given) or epoch ms; default: "
        "the table's history.expire.max-snapshot-age-ms",
    )
    p.add_argument("--retain-last", type=int, default=None, help="keep each branch's newest N")
    p.add_argument("--snapshot-id", type=int, action="append", help="expire this one too")
    p.add_argument("--dry-run", action="store_true", help="show what would expire, change nothing")
    bind(p, "expire", tables.COMMANDS)
    p = _identifier_command(
        sub, "compute-statistics", "NDV sketches of columns into a Puffin statistics file"
    )
    p.add_argument(
        "--columns", action="append", help="comma-separated (default: every primitive column)"
    )
    _snapshot_option(p)
    p.add_argument(
        "--partition-statistics",
        action="store_true",
        help="also compute the partition statistics file",
    )
    bind(p, "compute-statistics", tables.COMMANDS)
    p = _identifier_command(sub, "compact", "rewrite small data files into larger ones")
    p.add_argument(
        "--target-file-size",
        default=None,
        help="e.g. 512MB (default: the table's write.target-file-size-bytes)",
    )
    p.add_argument("--min-input-files", type=int, default=2)
    p.add_argument("--branch", default=None)
    p.add_argument("--where", default=None, help="only files that may hold rows matching this")
    bind(p, "compact", tables.COMMANDS)
    maintenance.add_parsers(sub, _identifier_command, bind)
    run.add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(
        _normalize_verbose(list(sys.argv[1:] if argv is None else argv))
    )
    if args.version:
        print(frazil.__version__)
        return 0
    if args.command is None:
        build_parser().print_help(sys.stderr)
        return 2
    handler = getattr(args, "handler", None)
    if handler is not None:  # demo and serve configure logging themselves
        result: int = handler(args)
        return result
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else getattr(logging, args.log_level),
        format="%(levelname)s %(name)s: %(message)s",
    )
    out = Output(args.output, verbose=args.verbose)
    try:
        args.cli_handler(Context(args, out))
    except KeyboardInterrupt:
        sys.stderr.write("frazil: interrupted\n")
        return 130
    except Exception as e:  # every failure is one line (a traceback with --verbose)
        out.error(e)
        return 1
    return 0
