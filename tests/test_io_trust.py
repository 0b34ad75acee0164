"""Table metadata cannot choose a table's FileIO: no ``py-io-impl`` import, no endpoint or
credential from table properties (issue 19). The FileIO comes from the catalog's configuration."""

from __future__ import annotations

import logging
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import frazil.io
from frazil.catalog import Catalog, load_catalog
from frazil.io import (
    TABLE_TUNABLE_IO_PROPERTIES,
    LocalFileIO,
    S3FileIO,
    load_file_io,
    table_file_io_properties,
)
from frazil.io.s3 import s3_filesystem_options
from frazil.table.static import StaticTable

CATALOG_S3 = {
    "s3.endpoint": "http://catalog-endpoint.invalid:9000",
    "s3.access-key-id": "catalog-key",
    "s3.secret-access-key": "catalog-secret",
    "s3.session-token": "catalog-token",
    "s3.region": "eu-west-1",
}
HOSTILE_S3 = {
    "s3.endpoint": "http://attacker.invalid",
    "s3.access-key-id": "attacker-key",
    "s3.secret-access-key": "attacker-secret",
    "s3.proxy-uri": "http://attacker-proxy.invalid",
    "s3.role-arn": "arn:aws:iam::000000000000:role/attacker",
    "client.region": "attacker-region",
    "gcs.service.host": "http://attacker.invalid",
    "adls.account-name": "attacker",
    "hf.endpoint": "http://attacker.invalid",
}

# A module that records being imported, and defines a FileIO that records being instantiated.
MODULE_SOURCE = """
import os
with open(os.environ["FRAZIL_TRUST_MARKER"], "a") as f:
    f.write("imported\\n")
from frazil.io import LocalFileIO
class RecordingIO(LocalFileIO):
    def __init__(self, properties=None):
        super().__init__(properties)
        with open(os.environ["FRAZIL_TRUST_MARKER"], "a") as f:
            f.write("instantiated\\n")
"""


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "frazil-home"
    home.mkdir()
    monkeypatch.setenv("FRAZIL_HOME", str(home))
    for var in list(os.environ):
        if var.upper().startswith("FRAZIL_CATALOG__"):
            monkeypatch.delenv(var)


@pytest.fixture
def recording_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """A fresh importable module name and the marker file it writes to when imported."""
    name = f"frazil_trust_probe_{uuid.uuid4().hex}"
    src = tmp_path / "modules"
    src.mkdir()
    (src / f"{name}.py").write_text(MODULE_SOURCE, encoding="utf-8")
    marker = tmp_path / "marker.txt"
    monkeypatch.setenv("FRAZIL_TRUST_MARKER", str(marker))
    monkeypatch.syspath_prepend(str(src))
    yield name, marker
    sys.modules.pop(name, None)


def _catalog(kind: str, warehouse: Path, **props: str) -> Catalog:
    return load_catalog("trust", type=kind, warehouse=str(warehouse), **props)


DATA = pa.table({"id": pa.array([1, 2, 3], pa.int64())})


@pytest.mark.parametrize("kind", ["sql", "filesystem"])
def test_table_py_io_impl_is_never_imported(
    kind: str, tmp_path: Path, recording_module: tuple[str, Path]
) -> None:
    name, marker = recording_module
    impl = f"{name}.RecordingIO"
    catalog = _catalog(kind, tmp_path / "wh")
    catalog.create_namespace("db")
    # Set at creation and by a later commit, as a hostile writer (or another engine) could.
    table = catalog.create_table("db.t", DATA.schema, properties={"py-io-impl": impl})
    table.append(DATA)
    with table.transaction() as tx:
        tx.set_properties(**{"py-io-impl": impl, **HOSTILE_S3})
    loaded = catalog.load_table("db.t")
    assert loaded.properties["py-io-impl"] == impl  # the property is kept, just not obeyed
    assert loaded.scan().to_arrow().sort_by("id").equals(DATA)
    static = StaticTable.from_metadata(loaded.metadata_location)
    assert static.scan().to_arrow().num_rows == 3
    for t in (table, loaded, static):
        assert type(t.io) is LocalFileIO
        assert "py-io-impl" not in t.io.properties
    assert name not in sys.modules
    assert not marker.exists()


def test_catalog_py_io_impl_still_used(tmp_path: Path, recording_module: tuple[str, Path]) -> None:
    name, marker = recording_module
    impl = f"{name}.RecordingIO"
    catalog = _catalog("sql", tmp_path / "wh", **{"py-io-impl": impl})
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", DATA.schema)
    table.append(DATA)
    loaded = catalog.load_table("db.t")
    assert type(loaded.io).__name__ == "RecordingIO"
    assert type(loaded.io).__module__ == name
    assert loaded.scan().to_arrow().num_rows == 3
    static = StaticTable.from_metadata(loaded.metadata_location, {"py-io-impl": impl})
    assert type(static.io).__module__ == name
    assert marker.read_text().splitlines()[0] == "imported"
    assert "instantiated" in marker.read_text()


@pytest.mark.parametrize("kind", ["sql", "filesystem"])
def test_table_endpoint_and_credentials_ignored(kind: str, tmp_path: Path) -> None:
    catalog = _catalog(kind, tmp_path / "wh", **CATALOG_S3)
    catalog.create_namespace("db")
    table = catalog.create_table(
        "db.t", DATA.schema, properties={**HOSTILE_S3, "s3.request-timeout": "7"}
    )
    table.append(DATA)
    with table.transaction() as tx:
        tx.set_properties(
            **{"s3.session-token": "attacker-token", "s3.endpoint": "http://x.invalid"}
        )
    loaded = catalog.load_table("db.t")
    static = StaticTable.from_metadata(loaded.metadata_location, CATALOG_S3)
    for t in (table, loaded, static):
        props = t.io.properties
        for key, value in CATALOG_S3.items():
            assert props[key] == value, key
        for key in HOSTILE_S3.keys() - CATALOG_S3.keys():
            assert key not in props, key
        assert props["s3.request-timeout"] == "7"  # a harmless tuning key passes
    assert loaded.scan().to_arrow().num_rows == 3
    # What an S3 table of this catalog would connect with (pyarrow's options; no network).
    io = load_file_io(loaded.io.properties, "s3://bucket/db/t")
    assert isinstance(io, S3FileIO)
    options = s3_filesystem_options(io.properties)
    assert options["endpoint_override"] == CATALOG_S3["s3.endpoint"]
    assert options["access_key"] == "catalog-key"
    assert options["session_token"] == "catalog-token"
    assert options["region"] == "eu-west-1"
    assert "proxy_options" not in options and "role_arn" not in options
    assert options["request_timeout"] == 7.0


def test_spark_io_spec_carries_only_catalog_storage(tmp_path: Path) -> None:
    """Spark executors rebuild the FileIO from the driver's filtered properties."""
    from frazil.spark.write import io_spec

    catalog = _catalog("sql", tmp_path / "wh", **CATALOG_S3)
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", DATA.schema, properties=HOSTILE_S3)
    props, _ = io_spec(table)
    assert props["s3.endpoint"] == CATALOG_S3["s3.endpoint"]
    assert "s3.proxy-uri" not in props


def test_table_file_io_properties_filter(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(frazil.io, "_warned_ignored", set())
    table = {
        "py-io-impl": "evil.IO",
        "s3.secret-access-key": "attacker-secret-value",
        "s3.connect-timeout": "3",
        "write.format.default": "parquet",
        "warehouse": "s3://elsewhere",
    }
    with caplog.at_level(logging.DEBUG, logger="frazil.io"):
        props = table_file_io_properties({"s3.endpoint": "http://catalog"}, table)
        table_file_io_properties({}, table)
    assert props == {"s3.endpoint": "http://catalog", "s3.connect-timeout": "3"}
    assert TABLE_TUNABLE_IO_PROPERTIES == {"s3.connect-timeout", "s3.request-timeout"}
    records = [r for r in caplog.records if "ignoring table properties" in r.getMessage()]
    # A warning naming the keys the first time, debug after; never a value.
    assert [r.levelno for r in records] == [logging.WARNING, logging.DEBUG]
    message = records[0].getMessage()
    assert "py-io-impl" in message and "s3.secret-access-key" in message and "warehouse" in message
    assert "write.format.default" not in message
    assert "attacker-secret-value" not in caplog.text and "evil.IO" not in caplog.text
    assert table_file_io_properties({"a": "b"}, None) == {"a": "b"}
