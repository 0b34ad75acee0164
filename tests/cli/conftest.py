"""Fixtures of the CLI tests: the shared read-only table and a fresh one per changing test
(see cli_helpers.py)."""

from __future__ import annotations

import pathlib

import pytest
from cli_helpers import Warehouse, build


@pytest.fixture(scope="session")
def wh(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    """The shared table: only read, never changed."""
    path = tmp_path_factory.mktemp("cli-warehouse")
    build(path)
    home = tmp_path_factory.mktemp("cli-home")
    return Warehouse(path, home)


@pytest.fixture
def fresh(tmp_path: pathlib.Path) -> Warehouse:
    """A table of its own for a test that changes it."""
    path = tmp_path / "wh"
    path.mkdir()
    build(path)
    home = tmp_path / "home"
    home.mkdir()
    return Warehouse(path, home)
