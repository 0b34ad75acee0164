"""frazil: Apache Iceberg for Python, with its hot paths in Rust."""

from __future__ import annotations

import os

# The native module allocates with mimalloc, which reads its options once, when the module is
# loaded. Freed pages go back to the OS after 10 s (jemalloc's default) instead of mimalloc's
# 10 ms: a scan frees its decoded manifests and the next allocates as much again, and
# re-faulting those pages cost 15% of a decode. A value the user set wins.
os.environ.setdefault("MIMALLOC_PURGE_DELAY", "10000")

import importlib
from types import ModuleType

from frazil import _moved
from frazil._native import __version__

_moved.install()

__all__ = ["__version__", "exceptions", "transforms", "types", "values"]

# The submodules load on first use rather than here: they import ``frazil._native`` through
# this package, so importing them from ``__init__`` made the package and its own modules
# depend on each other. ``import frazil; frazil.types`` still works through ``__getattr__``.
_SUBMODULES = frozenset({"exceptions", "transforms", "types", "values"})


def __getattr__(name: str) -> ModuleType:
    if name in _SUBMODULES:
        return importlib.import_module(f"frazil.{name}")
    raise AttributeError(f"module 'frazil' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _SUBMODULES)
