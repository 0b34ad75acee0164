"""load_catalog: the YAML file under FRAZIL_HOME, FRAZIL_CATALOG__ variables, keyword properties
(later wins), catalog types and their errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from frazil.catalog import Catalog, load_catalog
from frazil.catalog.config import catalog_properties, default_catalog_name
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.catalog.sql import SqlCatalog
from frazil.exceptions import InvalidArgumentError


def write_config(text: str) -> None:
    Path(os.environ["FRAZIL_HOME"], ".frazil.yaml").write_text(text)


def test_yaml_file(tmp_path: Path) -> None:
    write_config(
        f"""
catalog:
  Local:
    type: filesystem
    warehouse: {tmp_path}/wh
  other:
    uri: sqlite:///{tmp_path}/other.db
    warehouse: {tmp_path}/other
"""
    )
    local = load_catalog("local")
    assert isinstance(local, FileSystemCatalog)
    assert local.name == "local"
    assert local.properties["warehouse"] == f"{tmp_path}/wh"
    other = load_catalog("other")
    assert isinstance(other, SqlCatalog)  # type defaults to sql
    assert other.properties["uri"] == f"sqlite:///{tmp_path}/other.db"
    other.close()


def test_default_catalog_name(tmp_path: Path) -> None:
    write_config(
        f"default-catalog: mine\ncatalog:\n  mine:\n    type: hadoop\n    warehouse: {tmp_path}\n"
    )
    assert load_catalog().name == "mine"
    write_config(f"catalog:\n  default:\n    type: hadoop\n    warehouse: {tmp_path}\n")
    assert load_catalog().name == "default"


def test_precedence_file_env_kwargs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(
        """
catalog:
  prod:
    type: filesystem
    warehouse: /from/file
    s3.region: file-region
    a-key: file
"""
    )
    monkeypatch.setenv("FRAZIL_CATALOG__PROD__WAREHOUSE", "/from/env")
    monkeypatch.setenv("FRAZIL_CATALOG__PROD__S3__REGION", "env-region")
    monkeypatch.setenv("FRAZIL_CATALOG__PROD__PY_IO_IMPL", "x.Y")
    monkeypatch.setenv("FRAZIL_CATALOG__OTHER__WAREHOUSE", "/not/mine")
    props = catalog_properties("prod", **{"a-key": "kwarg"})
    assert props == {
        "type": "filesystem",
        "warehouse": "/from/env",
        "s3.region": "env-region",
        "py-io-impl": "x.Y",
        "a-key": "kwarg",
    }
    assert catalog_properties("prod", warehouse=str(tmp_path))["warehouse"] == str(tmp_path)


def test_env_only_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FRAZIL_CATALOG__MY_CAT__TYPE", "filesystem")
    monkeypatch.setenv("FRAZIL_CATALOG__MY_CAT__WAREHOUSE", str(tmp_path))
    catalog = load_catalog("my-cat")
    assert isinstance(catalog, FileSystemCatalog)
    assert catalog.properties["warehouse"] == str(tmp_path)


def test_sqlite_default_from_local_warehouse(tmp_path: Path) -> None:
    catalog = load_catalog("embedded", warehouse=str(tmp_path / "wh"))
    assert isinstance(catalog, SqlCatalog)
    assert catalog.uri == f"sqlite:///{tmp_path}/wh/catalog.db"
    assert not (tmp_path / "wh").exists()  # opening writes nothing; the first write creates it
    catalog.create_namespace("db")
    assert (tmp_path / "wh" / "catalog.db").exists()
    catalog.close()
    file_uri = load_catalog("embedded", warehouse=f"file://{tmp_path}/wh2")
    assert isinstance(file_uri, SqlCatalog)
    assert file_uri.uri == f"sqlite:///{tmp_path}/wh2/catalog.db"
    file_uri.close()


def test_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="'nothing' is not configured"):
        load_catalog("nothing")
    with pytest.raises(InvalidArgumentError, match="unknown type 'rest2'"):
        load_catalog("x", type="rest2", warehouse=str(tmp_path))
    with pytest.raises(InvalidArgumentError, match="uri"):
        load_catalog("x", type="sql", warehouse="s3://bucket/wh")
    with pytest.raises(InvalidArgumentError, match="warehouse"):
        load_catalog("x", type="filesystem", uri="sqlite://")
    with pytest.raises(InvalidArgumentError, match="not both"):
        load_catalog("x", type="sql", **{"py-catalog-impl": "a.B"})
    with pytest.raises(InvalidArgumentError, match="cannot import"):
        load_catalog("x", **{"py-catalog-impl": "no_such_module.Catalog"})
    with pytest.raises(InvalidArgumentError, match="not a frazil Catalog"):
        load_catalog("x", **{"py-catalog-impl": "pathlib.Path"})
    write_config("catalog: [1, 2]\n")
    with pytest.raises(InvalidArgumentError, match="mapping"):
        load_catalog("x")


class CustomCatalog(FileSystemCatalog):
    pass


def test_py_catalog_impl(tmp_path: Path) -> None:
    catalog: Catalog = load_catalog(
        "custom",
        warehouse=str(tmp_path),
        **{"py-catalog-impl": f"{__name__}.CustomCatalog"},
    )
    assert type(catalog) is CustomCatalog


# ---- PyIceberg's configuration, read beneath frazil's own (PyIceberg's configuration.md)


def test_pyiceberg_file_env_and_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pyhome = tmp_path / "pyhome"
    pyhome.mkdir()
    monkeypatch.setenv("PYICEBERG_HOME", str(pyhome))
    (pyhome / ".pyiceberg.yaml").write_text(
        f"default-catalog: Lake\ncatalog:\n  lake:\n    type: filesystem\n"
        f"    warehouse: {tmp_path}/wh\n    s3.region: file-region\n"
    )
    # double underscore nests, single underscore is a hyphen; the variable beats the file
    monkeypatch.setenv("PYICEBERG_CATALOG__LAKE__S3__REGION", "env-region")
    monkeypatch.setenv("PYICEBERG_CATALOG__LAKE__PY_IO_IMPL", "x.Y")
    assert catalog_properties("lake") == {
        "type": "filesystem",
        "warehouse": f"{tmp_path}/wh",
        "s3.region": "env-region",
        "py-io-impl": "x.Y",
    }
    monkeypatch.delenv("PYICEBERG_CATALOG__LAKE__PY_IO_IMPL")
    cat = load_catalog()  # default-catalog of the PyIceberg file
    assert isinstance(cat, FileSystemCatalog) and cat.name == "Lake"  # as PyIceberg keeps it
    monkeypatch.setenv("PYICEBERG_DEFAULT_CATALOG", "other")
    with pytest.raises(InvalidArgumentError, match="'other' is not configured"):
        load_catalog()
    # frazil's own configuration wins: its entry replaces PyIceberg's, its variables win
    write_config(f"catalog:\n  lake:\n    type: sql\n    uri: sqlite:///{tmp_path}/f.db\n")
    monkeypatch.setenv("FRAZIL_CATALOG__LAKE__S3__REGION", "frazil-region")
    assert catalog_properties("lake") == {
        "type": "sql",
        "uri": f"sqlite:///{tmp_path}/f.db",
        "s3.region": "frazil-region",
    }
    monkeypatch.setenv("FRAZIL_DEFAULT_CATALOG", "lake")
    assert default_catalog_name() == "lake"


def test_pyiceberg_file_search_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    home.mkdir()
    cwd.mkdir()
    monkeypatch.delenv("PYICEBERG_HOME")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    (cwd / ".pyiceberg.yaml").write_text("catalog:\n  c:\n    warehouse: /from-cwd\n")
    assert catalog_properties("c") == {"warehouse": "/from-cwd"}
    (home / ".pyiceberg.yaml").write_text("catalog:\n  c:\n    warehouse: /from-home\n")
    assert catalog_properties("c") == {"warehouse": "/from-home"}  # the first file found wins


def test_in_memory_catalog(tmp_path: Path) -> None:
    import pyarrow as pa

    cat = load_catalog("mem", type="in-memory")
    assert isinstance(cat, SqlCatalog)
    cat.create_namespace("ns")
    t = cat.create_table("ns.t", schema=pa.schema([("id", pa.int64())]))
    t.append(pa.table({"id": [1, 2]}))
    assert cat.load_table("ns.t").scan().to_arrow().num_rows == 2
    given = load_catalog("mem2", type="in-memory", warehouse=str(tmp_path / "wh"))
    given.create_namespace("ns")
    assert (
        given.create_table("ns.t", schema=pa.schema([("id", pa.int64())]))
        .location()
        .startswith(str(tmp_path / "wh"))
    )
    # each in-memory catalog is its own database
    assert load_catalog("mem3", type="in-memory").list_namespaces() == []


def test_http_uri_without_type_is_a_rest_catalog() -> None:
    # PyIceberg's configurations often name a REST catalog by its uri alone.
    from frazil.catalog.config import _catalog_class
    from frazil.catalog.rest import RestCatalog
    from frazil.catalog.sql import SqlCatalog

    assert _catalog_class("prod", {"uri": "https://catalog.example.com/api"}) is RestCatalog
    assert _catalog_class("prod", {"uri": "HTTP://127.0.0.1:8181"}) is RestCatalog
    assert _catalog_class("prod", {"uri": "sqlite:///c.db"}) is SqlCatalog
    assert _catalog_class("prod", {"uri": "http://x", "type": "sql"}) is SqlCatalog
