"""Glue fixtures: moto's server on loopback (one per test module) behind the proxy of
``aws_moto.GlueEmulator``, which emulates Glue's VersionId check and S3 Tables federation."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aws_moto import GlueEmulator, client_props

from frazil.catalog import load_catalog
from frazil.catalog.glue import GlueCatalog

_names = itertools.count()


@pytest.fixture(scope="module")
def glue_emulator(
    moto_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GlueEmulator]:
    emulator = GlueEmulator(moto_url, managed_root=str(tmp_path_factory.mktemp("s3tables")))
    yield emulator
    emulator.close()


@pytest.fixture
def glue(glue_emulator: GlueEmulator, warehouse: Path) -> GlueCatalog:
    catalog = load_catalog(
        "glue_test",
        type="glue",
        warehouse=str(warehouse),
        **client_props("glue", glue_emulator.url),
    )
    assert isinstance(catalog, GlueCatalog)
    return catalog


@pytest.fixture
def database(glue: GlueCatalog) -> str:
    """A fresh Glue database (moto's state lives as long as the module's server)."""
    name = f"db_{next(_names)}"
    glue.create_namespace(name)
    return name
