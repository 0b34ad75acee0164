"""What a test does when a peer it needs is missing: skip on a developer's machine, fail in CI.

The interop and Spark tests compare frazil with peers nobody here wrote (the Java reference in
PySpark with Java 17, PyIceberg, DuckDB, a PostgreSQL server). A laptop without Java may skip
them; CI has every peer, so there a missing one is a broken environment, and a skip would let
the run pass without testing anything. With ``CI=true`` (as CI runners set it) these helpers fail
the test with the reason instead of skipping it.

Every "peer is missing" path in tests/ goes through :func:`peer_missing` or :func:`import_peer`;
skips for other reasons (a platform without ``fork``) stay plain ``pytest.skip``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import pytest


def peers_required(environ: Mapping[str, str] | None = None) -> bool:
    """True when the environment is CI (``CI=true``, any case), where every peer must be present."""
    env = os.environ if environ is None else environ
    return env.get("CI", "").strip().lower() == "true"


def peer_missing(reason: str, *, module_level: bool = False) -> NoReturn:
    """Skips the test (or the module) because a peer is missing; fails it instead under CI=true."""
    if peers_required():
        pytest.fail(
            f"{reason}\nCI=true: every interop peer must be installed in CI, so this test fails "
            "instead of skipping (unset CI to skip it on a machine without the peer)",
            pytrace=False,
        )
    pytest.skip(reason, allow_module_level=module_level)


def import_peer(name: str, reason: str | None = None) -> ModuleType:
    """``pytest.importorskip(name)`` that fails under CI=true (works at module level too)."""
    try:
        return pytest.importorskip(name, reason=reason, exc_type=ImportError)
    except pytest.skip.Exception as e:
        peer_missing(str(e.msg), module_level=True)


def java_reference_session(warehouse: Any, *, rest: bool = False, **conf: str) -> Any:
    """``java_reference.reference_session`` (a local Spark with Iceberg 1.10.2's runtime; with
    ``rest``, Java's REST catalog too), or :func:`peer_missing` when Java, PySpark, the runtime
    wheel or (for ``rest``) HttpComponents Core 5 is missing."""
    interop = str(Path(__file__).resolve().parent / "interop")
    if interop not in sys.path:
        sys.path.insert(0, interop)
    from java_reference import ReferenceUnavailable, reference_session

    try:
        return reference_session(str(warehouse), rest=rest, **conf)
    except (ReferenceUnavailable, ImportError) as e:
        peer_missing(f"the Java reference is unavailable: {e}")
