"""frazil: Apache Iceberg for Python, with its hot paths in Rust."""

from __future__ import annotations

import os

# The native module allocates with mimalloc, which reads its options once, when the module is
# loaded. Freed pages go back to the OS after 10 s (jemalloc's default) instead of mimalloc's
# 10 ms: a scan frees its decoded manifests and the next allocates as much again, and
# re-faulting those pages cost 15% of a decode. A value the user set wins.
os.environ.setdefault("MIMALLOC_PURGE_DELAY", "10000")

from frazil import _moved, exceptions, transforms, types, values
from frazil._native import __version__

_moved.install()

__all__ = ["__version__", "exceptions", "transforms", "types", "values"]
