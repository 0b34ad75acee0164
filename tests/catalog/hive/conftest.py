"""The Hive catalog's fixtures: one real metastore per test module (PySpark's Hive 2.3.9 on
embedded Derby, tests/catalog/hive/metastore.py), a warehouse beside it, and catalogs on it."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))

from metastore import Metastore, MetastoreUnavailable  # noqa: E402
from peers import import_peer, peer_missing  # noqa: E402

_names = itertools.count()


def start_metastore(root: Path, **kwargs: Any) -> Metastore:
    import_peer("thrift")
    try:
        return Metastore(root, **kwargs).start()
    except MetastoreUnavailable as e:
        peer_missing(f"the Hive Metastore cannot start: {e}")


@pytest.fixture(scope="module")
def metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Metastore]:
    ms = start_metastore(tmp_path_factory.mktemp("hms"))
    try:
        yield ms
    finally:
        ms.stop()


@pytest.fixture
def catalog(metastore: Metastore) -> Any:
    from frazil.catalog import load_catalog

    return load_catalog("hms", type="hive", uri=metastore.uri, warehouse=metastore.warehouse)


@pytest.fixture
def db(catalog: Any) -> str:
    """A fresh database for one test."""
    name = f"db{next(_names)}"
    catalog.create_namespace(name)
    return name
