"""What every command gets: the parsed arguments, the output, and the catalog (loaded on first
use, from the configuration plus ``--uri``/``--credential``/``--warehouse``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from frazil.cli.output import Output

# The catalog, table, demo and server packages are imported inside the commands that use them:
# ``frazil --help`` and argument errors answer without loading them.

if TYPE_CHECKING:
    from frazil.catalog import Catalog
    from frazil.table import Table

__all__ = ["Context"]


class Context:
    def __init__(self, args: argparse.Namespace, out: Output) -> None:
        self.args = args
        self.out = out
        self._catalog: Catalog | None = None

    def catalog(self) -> Catalog:
        if self._catalog is None:
            from frazil.catalog import load_catalog

            props: dict[str, str] = {}
            for key, value in (
                ("uri", self.args.uri),
                ("credential", self.args.credential),
                ("warehouse", self.args.warehouse),
                ("ugi", self.args.ugi),
            ):
                if value:
                    props[key] = value
            if self.args.uri and self.args.uri.startswith(("http://", "https://")):
                props["type"] = "rest"  # PyIceberg infers the REST catalog from such a URI
            self._catalog = load_catalog(self.args.catalog, **props)
        return self._catalog

    def table(self, identifier: str) -> Table:
        return self.catalog().load_table(identifier)
