"""Shared test setup. The suite runs against the installed frazil wheel (see dev/test)."""

from __future__ import annotations

import os
import pathlib

import pytest
from hypothesis import HealthCheck, settings

# A private PostgreSQL server for the session, for every test directory (tests/pg_server.py).
from pg_server import postgres_server, postgres_url  # noqa: F401

import frazil

settings.register_profile(
    "default", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("ci", max_examples=500, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "default")


def pytest_report_header(config: pytest.Config) -> list[str]:
    location = pathlib.Path(frazil.__file__).parent
    return [f"frazil {frazil.__version__} ({frazil._native.build_profile}) from {location}"]


def pytest_sessionstart(session: pytest.Session) -> None:
    # CI must test the wheel it built, not the source tree (an editable install points there).
    if os.environ.get("CI") and "site-packages" not in frazil.__file__:
        raise pytest.UsageError(f"frazil imported from {frazil.__file__}, not an installed wheel")
