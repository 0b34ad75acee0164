"""Modules that moved, still importable from their old paths.

Importing an old path gives the module at its new path (the same module object, so classes and
module state are shared) and a :class:`DeprecationWarning` naming the new path. Names that left
a module for another (:data:`MOVED_NAMES`) resolve the same way through the old module's
``__getattr__``. The table is the only place that knows the old layout.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any

#: Old module path -> new module path.
MOVED_MODULES: dict[str, str] = {
    "frazil.variant": "frazil.values.variant",
    "frazil.geo": "frazil.values.geo",
    "frazil.name_mapping": "frazil.metadata.name_mapping",
    "frazil.paths": "frazil.io.paths",
    "frazil.content_file": "frazil.manifest.content_file",
    "frazil.deletes": "frazil.manifest.deletes",
    "frazil.puffin": "frazil.manifest.puffin",
    "frazil.table.planning": "frazil.table.scan.plan",
    "frazil.table.scan_plan": "frazil.table.scan.arrow_plan",
    "frazil.table.tasks": "frazil.table.scan.tasks",
    "frazil.table.read": "frazil.table.scan.read",
    "frazil.table.arrow_filter": "frazil.table.scan.filter",
    "frazil.table.avro": "frazil.table.scan.formats",
    "frazil.table.orc": "frazil.table.scan.formats",
    "frazil.table.handoff": "frazil.table.scan.handoff",
    "frazil.table.incremental": "frazil.table.scan.incremental",
    "frazil.table.changelog": "frazil.table.scan.changelog",
    "frazil.table.inspect_aggregates": "frazil.table.inspect.aggregates",
    "frazil.table.orphan_files": "frazil.table.maintenance.orphan_files",
    "frazil.table.update.expire_snapshots": "frazil.table.maintenance.expire_snapshots",
    "frazil.table.update.rewrite_manifests": "frazil.table.maintenance.rewrite_manifests",
    "frazil.table.write.maintenance": "frazil.table.maintenance.rewrite_data_files",
    "frazil.table.write.rewrite_position_deletes": (
        "frazil.table.maintenance.rewrite_position_deletes"
    ),
    "frazil.rest.auth": "frazil.server.auth",
    "frazil.rest.planning": "frazil.server.planning",
    "frazil.rest.serve": "frazil.server.serve",
    "frazil.rest.server": "frazil.server.app",
}

#: Module -> {name: module it moved to}, for names that left a module that stayed.
MOVED_NAMES: dict[str, dict[str, str]] = {
    "frazil.values.geo": {
        "plan_intersecting": "frazil.table.scan.geo",
        "read_intersecting": "frazil.table.scan.geo",
    },
}


def moved_name(module: str, name: str) -> Any:
    """``module.name`` for a name that moved out of ``module`` (its ``__getattr__`` calls this)."""
    target = MOVED_NAMES.get(module, {}).get(name)
    if target is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    warnings.warn(f"{module}.{name} moved to {target}.{name}", DeprecationWarning, stacklevel=3)
    return getattr(importlib.import_module(target), name)


class _Alias(importlib.abc.Loader):
    def __init__(self, old: str, new: str) -> None:
        self.old = old
        self.new = new
        self.spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(
            f"{self.old} moved to {self.new}; import it from there",
            DeprecationWarning,
            stacklevel=2,
        )
        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system stamped the old path's spec on the shared module: give it back its own.
        module.__spec__ = self.spec


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED_MODULES.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(fullname, new))


def install() -> None:
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.append(_Finder())
