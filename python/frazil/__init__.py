"""frazil: Apache Iceberg for Python, with its hot paths in Rust."""

from __future__ import annotations

from frazil import exceptions, transforms, types, values
from frazil._native import __version__

__all__ = ["__version__", "exceptions", "transforms", "types", "values"]
