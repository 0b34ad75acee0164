"""``frazil demo`` and ``frazil serve``.

``frazil demo`` runs the main job: an event pipeline on local Spark into a v3 table of a local
warehouse (see :mod:`frazil.demo`): concurrent writes, deletion vectors, schema and partition
evolution, pruned scans, time travel, and a summary.

``frazil serve`` runs a REST catalog server over a SQL catalog (see :mod:`frazil.server.serve`).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from pathlib import Path
from typing import Any

import frazil
from frazil.exceptions import FrazilError

# The catalog, table, demo and server packages are imported inside the commands that use them:
# ``frazil --help`` and argument errors answer without loading them.

logger = logging.getLogger(__name__)

__all__ = ["add_parsers", "run_demo", "run_serve"]


def _positive(text: str) -> int:
    value = int(text.replace("_", "").replace(",", ""))
    if value < 1_000:
        raise argparse.ArgumentTypeError(f"need at least 1,000 rows, got {value}")
    return value


def _page_size(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def run_demo(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.logging import RichHandler

    from frazil import demo

    console = Console()
    if not console.is_terminal and console.width < 120:
        console = Console(width=120)  # a log file: rich would wrap the tables at 80 columns
    level = logging.DEBUG if args.verbose else logging.WARNING
    # The handler's level too: the demo counts commit retries from the transaction log's INFO
    # records (its summary reports them), which must not land between its tables.
    handler = RichHandler(console=console, show_path=False, show_time=False, level=level)
    logging.basicConfig(level=level, format="%(name)s: %(message)s", handlers=[handler], force=True)
    rows = args.rows if args.rows is not None else demo.QUICK_ROWS if args.quick else None
    options = demo.DemoOptions(
        warehouse=args.warehouse,
        rows=rows or demo.DEFAULT_ROWS,
        catalog_type=args.demo_catalog,
        namespace=args.namespace,
        seed=args.seed,
        master=args.master,
    )
    console.print(
        f"[bold]frazil {frazil.__version__}[/] demo: {options.rows:,} events into "
        f"{options.identifier} ({options.catalog_type} catalog, warehouse "
        f"{Path(options.warehouse).expanduser().resolve()})"
    )
    try:
        summary = demo.run(options, console=console)
    except demo.DemoError as e:
        console.print(f"[bold red]cannot run the demo:[/] {e}")
        return 2
    demo.print_summary(summary, console)
    if not summary.consistent:
        console.print("[bold red]the counts do not add up[/]")
        return 1
    return 0


SERVER_EXTRA_MISSING = "frazil serve needs the server extra: pip install 'frazil[server]'"


def run_serve(args: argparse.Namespace) -> int:
    try:  # the server's packages come with the `server` extra, not with frazil itself
        importlib.import_module("starlette")
        importlib.import_module("uvicorn")
    except ImportError:
        sys.stderr.write(f"{SERVER_EXTRA_MISSING}\n")
        return 2
    from frazil.server.serve import open_typed_catalog, serve, serve_catalog

    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s: %(message)s",
    )
    options = {
        "host": args.host,
        "port": args.port,
        "auth_config": args.auth_config,
        "no_auth": args.no_auth,
        "name": args.name,
        "allow_external_locations": args.allow_external_locations,
        "plan_page_size": args.plan_page_size,
    }
    try:
        if args.catalog_type:
            props = dict(args.catalog_property or ())
            if args.catalog_uri:
                props.setdefault("uri", args.catalog_uri)
            catalog = open_typed_catalog(args.warehouse, args.catalog_type, args.name, props)
            serve_catalog(catalog, args.warehouse, **options)
        else:
            serve(args.warehouse, catalog_uri=args.catalog_uri, **options)
    except FrazilError as e:
        logger.error("cannot serve: %s", e)
        return 2
    return 0


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def add_parsers(sub: Any) -> None:
    """The ``demo`` and ``serve`` subcommands (``sub``: argparse's subparsers action)."""
    demo = sub.add_parser(
        "demo",
        help="the end-to-end pipeline on local Spark",
        description="Writes, deletes, evolves, prunes and time-travels a v3 table on local "
        "Spark (needs Java and PySpark).",
    )
    demo.add_argument(
        "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="debug logging"
    )
    demo.add_argument(
        "--warehouse", default="warehouse", help="warehouse directory (default ./warehouse)"
    )
    demo.add_argument(
        "--rows", type=_positive, default=None, help="events to generate (default 3,000,000)"
    )
    demo.add_argument(
        "--quick", action="store_true", help="a small run (40,000 events unless --rows is given)"
    )
    demo.add_argument(
        "--catalog",
        dest="demo_catalog",
        choices=("sql", "filesystem"),
        default="sql",
        help="sql: SQLite in the warehouse (default); filesystem: the Hadoop catalog layout",
    )
    demo.add_argument("--namespace", default="demo", help="namespace of the events table")
    demo.add_argument("--seed", type=int, default=7, help="seed of the generated events")
    demo.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    serve = sub.add_parser(
        "serve",
        help="a REST catalog server",
        description="Serves a SQL catalog (SQLite in the warehouse, or --catalog-uri) over the "
        "Iceberg REST catalog protocol.",
    )
    serve.add_argument(
        "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="debug logging"
    )
    serve.add_argument("--warehouse", required=True, help="warehouse directory or URI")
    serve.add_argument(
        "--catalog-uri",
        default=None,
        help="SQLAlchemy URL of the catalog database (default sqlite:///<warehouse>/catalog.db), "
        "or thrift://host:port[,thrift://...] of a Hive Metastore",
    )
    serve.add_argument(
        "--catalog-type",
        default=None,
        help="serve another kind of catalog: glue, dynamodb (configured by --catalog-property "
        "and the catalog's FRAZIL_CATALOG__<NAME>__* settings)",
    )
    serve.add_argument(
        "--catalog-property",
        action="append",
        type=_key_value,
        metavar="KEY=VALUE",
        help="a property of the --catalog-type catalog, e.g. glue.region=eu-west-1 (repeatable; "
        "keep credentials in the environment, not here)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8181, help="port (default 8181)")
    auth = serve.add_mutually_exclusive_group(required=True)
    auth.add_argument("--auth-config", default=None, help="YAML file of OAuth2 clients")
    auth.add_argument("--no-auth", action="store_true", help="serve without authentication")
    serve.add_argument("--name", default="frazil", help="catalog name (default frazil)")
    serve.add_argument(
        "--allow-external-locations",
        action="store_true",
        help="accept table locations outside the warehouse",
    )
    serve.add_argument(
        "--plan-page-size",
        type=_page_size,
        default=1_000,
        help="file scan tasks per page of a server-side scan plan (default 1000)",
    )
    demo.set_defaults(handler=run_demo)
    serve.set_defaults(handler=run_serve)
