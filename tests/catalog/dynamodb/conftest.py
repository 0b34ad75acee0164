"""DynamoDB fixtures: moto's server on loopback, one per test module (moto honours DynamoDB's
condition expressions, and the server answers one request at a time so that each conditional
write is atomic as in DynamoDB: commits race for real)."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aws_moto import client_props

from frazil.catalog import load_catalog
from frazil.catalog.dynamodb import DynamoDbCatalog

_names = itertools.count()


@pytest.fixture
def dynamo(moto_url: str, warehouse: Path) -> DynamoDbCatalog:
    catalog = load_catalog(
        "dynamo_test",
        type="dynamodb",
        warehouse=str(warehouse),
        **client_props("dynamodb", moto_url),
    )
    assert isinstance(catalog, DynamoDbCatalog)
    return catalog


@pytest.fixture
def namespace(dynamo: DynamoDbCatalog) -> str:
    name = f"ns_{next(_names)}"
    dynamo.create_namespace(name)
    return name
