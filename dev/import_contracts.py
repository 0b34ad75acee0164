"""import-linter contract types the built-in ones lack, for pyproject.toml's [tool.importlinter].

- ``acyclic``: no import cycle among the modules of the listed packages, counting imports
  inside function bodies (those hide a cycle from the interpreter, not from a reader) and
  imports of a package's ``__init__`` by its own submodules. TYPE_CHECKING imports are left
  out by the root option ``exclude_type_checking_imports``.
- ``private_names``: no ``from m import _name`` where ``_name`` is private to module ``m`` and
  the importer lies outside ``m``'s package (for a package, the package itself). A private
  module (``frazil._json``) belongs to the package holding it. ``allowed`` lists private modules
  meant for the whole distribution (``frazil._native``, the binding).

Run through ``lint-imports`` with ``dev/`` on ``PYTHONPATH`` (``.ci/run`` does).
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output


def _strongly_connected(graph: ImportGraph, modules: set[str]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (the graph has hundreds of modules)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    counter = 0
    for root in sorted(modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root) & modules)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    imported = graph.find_modules_directly_imported_by(child) & modules
                    work.append((child, iter(sorted(imported))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


class AcyclicContract(Contract):
    type_name = "acyclic"

    packages = fields.SetField(subfield=fields.StringField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        modules: set[str] = set()
        for package in self.packages:  # type: ignore[attr-defined]
            modules |= {package} | graph.find_descendants(package)
        groups = _strongly_connected(graph, modules)
        edges = []
        for group in groups:
            members = set(group)
            for importer in group:
                for imported in sorted(graph.find_modules_directly_imported_by(importer) & members):
                    for detail in graph.get_import_details(importer=importer, imported=imported):
                        edges.append(
                            f"{importer}:{detail['line_number']} -> {imported}: "
                            f"{detail['line_contents']}"
                        )
        return ContractCheck(kept=not groups, metadata={"groups": groups, "edges": edges})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for group in check.metadata["groups"]:
            output.print_error(f"cycle: {', '.join(group)}")
        for edge in check.metadata["edges"]:
            output.print(f"  {edge}")


class PrivateNamesContract(Contract):
    type_name = "private_names"

    root = fields.StringField()
    allowed = fields.SetField(subfield=fields.StringField(), required=False)

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        root: str = self.root  # type: ignore[attr-defined]
        allowed: set[str] = set(self.allowed or ())  # type: ignore[attr-defined]
        spec = importlib.util.find_spec(root)
        assert spec is not None and spec.origin is not None
        base = Path(spec.origin).parent
        modules = {root} | graph.find_descendants(root)
        packages = {
            m for m in modules if (base.joinpath(*m.split(".")[1:]) / "__init__.py").exists()
        }

        def path_of(module: str) -> Path:
            rel = base.joinpath(*module.split(".")[1:])
            return rel / "__init__.py" if module in packages else rel.with_suffix(".py")

        def owner(module: str) -> str:
            return module if module in packages else module.rsplit(".", 1)[0]

        broken = []
        for importer in sorted(modules):
            for node in ast.walk(ast.parse(path_of(importer).read_text())):
                if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                    continue
                if node.module not in modules:
                    continue
                for alias in node.names:
                    if not alias.name.startswith("_"):
                        continue
                    name = f"{node.module}.{alias.name}"
                    if name in allowed:
                        continue
                    # A private module is its package's; a private name is its module's.
                    home = node.module if name in modules else owner(node.module)
                    if importer != home and not importer.startswith(home + "."):
                        broken.append(f"{importer}:{node.lineno} imports {name}")
        return ContractCheck(kept=not broken, metadata={"broken": broken})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for line in check.metadata["broken"]:
            output.print_error(line, bold=False)
