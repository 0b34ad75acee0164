"""Catalog fixtures: one catalog per kind (SQLite, PostgreSQL, filesystem) over a temp warehouse,
a private PostgreSQL server for the session, and a clean configuration environment."""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aws_moto import moto_url, warehouse  # noqa: F401 (the Glue and DynamoDB fixtures)
from catalog_helpers import make_catalog
from pg_server import postgres_server, postgres_url  # noqa: F401

from frazil.catalog import Catalog
from frazil.schema import Schema
from frazil.types import LongType, NestedField, StringType

CATALOG_KINDS = ["sqlite", "postgresql", "filesystem"]
SQL_KINDS = ["sqlite", "postgresql"]

_names = itertools.count()


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user configuration leaks in: FRAZIL_HOME, PYICEBERG_HOME, HOME and the current
    directory are an empty directory and every FRAZIL_/PYICEBERG_ catalog variable is removed."""
    home = tmp_path / "frazil-home"
    home.mkdir()
    monkeypatch.setenv("FRAZIL_HOME", str(home))
    # PyIceberg's file is searched in PYICEBERG_HOME, then ~, then the current directory.
    monkeypatch.setenv("PYICEBERG_HOME", str(home))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(home)
    for var in list(os.environ):
        if var.upper().startswith(("FRAZIL_CATALOG__", "PYICEBERG_CATALOG__")) or var.upper() in (
            "FRAZIL_DEFAULT_CATALOG",
            "PYICEBERG_DEFAULT_CATALOG",
        ):
            monkeypatch.delenv(var)


@pytest.fixture
def schema() -> Schema:
    return Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "name", StringType()),
    )


@pytest.fixture(params=CATALOG_KINDS)
def catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Catalog]:
    cat = make_catalog(request.param, tmp_path / "warehouse", request)
    yield cat
    close = getattr(cat, "close", None)
    if close is not None:
        close()


@pytest.fixture(params=SQL_KINDS)
def sql_catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Catalog]:
    cat = make_catalog(request.param, tmp_path / "warehouse", request)
    yield cat
    cat.close()  # type: ignore[attr-defined]
