"""Catalog configuration: the YAML file, environment variables and keyword properties.

Sources, later wins (as PyIceberg's ``PYICEBERG_*`` configuration, with ``FRAZIL`` instead):

1. The YAML file ``.frazil.yaml`` in ``$FRAZIL_HOME`` if set, else in the home directory::

       default-catalog: local          # optional; otherwise the catalog named "default"
       catalog:
         local:
           type: sql                   # "sql" (default; "rest" when uri is http(s)://,
                                       # "hive" when it is thrift://), "filesystem" (alias
                                       # "hadoop"), "rest", "hive", "glue", "dynamodb"
           uri: postgresql+psycopg://user@host/db
           warehouse: /data/warehouse

2. Environment variables ``FRAZIL_CATALOG__<NAME>__<KEY>=value``, case-insensitive: in the
   name and key ``_`` stands for ``-`` (``FRAZIL_CATALOG__PROD__PY_IO_IMPL`` sets
   ``py-io-impl`` of catalog ``prod``); a further ``__`` in the key stands for ``.``
   (``FRAZIL_CATALOG__PROD__S3__REGION`` sets ``s3.region``).
3. Keyword properties of :func:`load_catalog`.

``py-catalog-impl`` (``"package.module.Class"``) names a :class:`~frazil.catalog.Catalog`
subclass to build instead of a ``type``.

PyIceberg's configuration is read too, beneath frazil's own, so a PyIceberg setup works
unchanged: the first ``.pyiceberg.yaml`` found in ``$PYICEBERG_HOME``, the home directory, then
the current directory (PyIceberg's search order), and ``PYICEBERG_CATALOG__<NAME>__<KEY>``
variables (same spelling rules as above; they win over the PyIceberg file). In full, later wins:
the PyIceberg file's catalog entry (replaced whole by a ``.frazil.yaml`` entry of the same name),
``PYICEBERG_CATALOG__*``, ``FRAZIL_CATALOG__*``, keyword properties. The default catalog name is
the first set of ``FRAZIL_DEFAULT_CATALOG``, ``.frazil.yaml``'s ``default-catalog``,
``PYICEBERG_DEFAULT_CATALOG``, ``.pyiceberg.yaml``'s ``default-catalog``, else ``"default"``.

``type: in-memory`` is PyIceberg's in-memory catalog: a SQL catalog on SQLite ``:memory:``
(one per catalog object, gone when it is closed) with the given ``warehouse`` or a fresh
temporary directory.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Any

from frazil.catalog.base import PY_CATALOG_IMPL, TYPE, URI, WAREHOUSE, Catalog
from frazil.exceptions import InvalidArgumentError

__all__ = [
    "catalog_properties",
    "default_catalog_name",
    "load_catalog",
    "load_config",
    "load_pyiceberg_config",
]

FRAZIL_HOME = "FRAZIL_HOME"
CONFIG_FILE = ".frazil.yaml"
ENV_PREFIX = "FRAZIL_CATALOG__"
DEFAULT_CATALOG = "default"
PYICEBERG_HOME = "PYICEBERG_HOME"
PYICEBERG_CONFIG_FILE = ".pyiceberg.yaml"
PYICEBERG_ENV_PREFIX = "PYICEBERG_CATALOG__"
IN_MEMORY = "in-memory"


def _config_path() -> str:
    home = os.environ.get(FRAZIL_HOME)
    return os.path.join(home if home else os.path.expanduser("~"), CONFIG_FILE)


def _pyiceberg_config_path() -> str | None:
    """The first ``.pyiceberg.yaml`` of PyIceberg's search order, if any."""
    for directory in (os.environ.get(PYICEBERG_HOME), os.path.expanduser("~"), os.getcwd()):
        if directory and os.path.isfile(os.path.join(directory, PYICEBERG_CONFIG_FILE)):
            return os.path.join(directory, PYICEBERG_CONFIG_FILE)
    return None


def load_pyiceberg_config() -> dict[str, Any]:
    """PyIceberg's YAML file's content with keys lower-cased (``{}`` when there is none)."""
    path = _pyiceberg_config_path()
    return {} if path is None else _read_yaml(path)


def load_config() -> dict[str, Any]:
    """The YAML file's content with keys lower-cased (``{}`` when there is no file)."""
    path = _config_path()
    if not os.path.isfile(path):
        return {}
    return _read_yaml(path)


def _read_yaml(path: str) -> dict[str, Any]:
    import yaml

    with open(path, encoding="utf-8") as f:
        try:
            data = yaml.safe_load(f)
        except yaml.YAMLError as e:
            raise InvalidArgumentError(f"{path}: invalid YAML: {e}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InvalidArgumentError(f"{path}: expected a mapping at the top level")

    def lower(d: Any) -> Any:  # YAML values: any plain data
        return {str(k).lower(): lower(v) for k, v in d.items()} if isinstance(d, dict) else d

    lowered: dict[str, Any] = lower(data)
    return lowered


def _env_properties(name: str, prefix: str = ENV_PREFIX) -> dict[str, str]:
    out: dict[str, str] = {}
    for var, value in os.environ.items():
        if not var.upper().startswith(prefix):
            continue
        parts = var[len(prefix) :].lower().split("__", 1)
        if len(parts) != 2 or not parts[1]:
            continue
        catalog, key = (p.replace("__", ".").replace("_", "-") for p in parts)
        if catalog == name.lower().replace("_", "-"):
            out[key] = value
    return out


def _file_entry(config: Mapping[str, Any], name: str, path: str) -> dict[str, Any] | None:
    catalogs = config.get("catalog") or {}
    if not isinstance(catalogs, dict):
        raise InvalidArgumentError(f"{path}: 'catalog' must be a mapping of catalogs")
    entry = catalogs.get(name.lower())
    if entry is not None and not isinstance(entry, dict):
        raise InvalidArgumentError(f"{path}: catalog.{name} must be a mapping")
    return entry


def catalog_properties(name: str, **properties: str) -> dict[str, str]:
    """The merged properties of catalog ``name``: the files (frazil's entry replacing
    PyIceberg's), ``PYICEBERG_CATALOG__*``, ``FRAZIL_CATALOG__*``, then ``properties``."""
    from_file = _file_entry(load_config(), name, _config_path())
    if from_file is None:
        from_file = _file_entry(
            load_pyiceberg_config(), name, _pyiceberg_config_path() or PYICEBERG_CONFIG_FILE
        )
    merged: dict[str, str] = {str(k): str(v) for k, v in (from_file or {}).items() if v is not None}
    merged.update(_env_properties(name, PYICEBERG_ENV_PREFIX))
    merged.update(_env_properties(name))
    merged.update({k: str(v) for k, v in properties.items() if v is not None})
    return merged


def _import_class(path: str) -> type[Catalog]:
    module_name, _, class_name = path.rpartition(".")
    if not module_name:
        raise InvalidArgumentError(
            f"{PY_CATALOG_IMPL}={path!r}: expected a full class path (package.module.Class)"
        )
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as e:
        raise InvalidArgumentError(f"{PY_CATALOG_IMPL}={path!r}: cannot import it: {e}") from None
    if not (isinstance(cls, type) and issubclass(cls, Catalog)):
        raise InvalidArgumentError(f"{PY_CATALOG_IMPL}={path!r} is not a frazil Catalog class")
    return cls


def _catalog_class(name: str, props: Mapping[str, str]) -> type[Catalog]:
    impl = props.get(PY_CATALOG_IMPL)
    kind = props.get(TYPE)
    if impl:
        if kind:
            raise InvalidArgumentError(
                f"catalog {name!r}: set either 'type' ({kind!r}) or {PY_CATALOG_IMPL!r}, not both"
            )
        return _import_class(impl)
    if not kind and str(props.get(URI, "")).lower().startswith(("http://", "https://")):
        # As PyIceberg infers it: a catalog named only by an HTTP(S) uri is a REST catalog.
        kind = "rest"
    if not kind and str(props.get(URI, "")).lower().startswith("thrift://"):
        # Likewise a thrift:// uri names a Hive Metastore.
        kind = "hive"
    kind = (kind or "sql").strip().lower()
    # Imported on demand: each implementation brings its own dependencies (SQLAlchemy, requests)
    # that only the catalogs of that type need.
    if kind == IN_MEMORY:
        return _in_memory_class()
    if kind == "sql":
        from frazil.catalog.sql import SqlCatalog

        return SqlCatalog
    if kind in ("filesystem", "hadoop"):
        from frazil.catalog.filesystem import FileSystemCatalog

        return FileSystemCatalog
    if kind == "rest":
        from frazil.catalog.rest import RestCatalog

        return RestCatalog
    if kind == "glue":
        from frazil.catalog.glue import GlueCatalog

        return GlueCatalog
    if kind == "dynamodb":
        from frazil.catalog.dynamodb import DynamoDbCatalog

        return DynamoDbCatalog
    if kind == "hive":
        from frazil.catalog.hive import HiveCatalog

        return HiveCatalog
    raise InvalidArgumentError(
        f"catalog {name!r}: unknown type {kind!r} (known: 'sql', 'filesystem', 'hadoop', "
        f"'rest', 'hive', 'glue', 'dynamodb', 'in-memory'; or set {PY_CATALOG_IMPL!r} to a class)"
    )


def load_catalog(name: str | None = None, **properties: str) -> Catalog:
    """Builds catalog ``name`` (default: the file's ``default-catalog``, else ``"default"``)
    from the merged configuration. A catalog that is configured nowhere and given no
    properties is an error rather than an empty default."""
    if name is None:
        name = default_catalog_name()
    props = catalog_properties(name, **properties)
    if not props:
        raise InvalidArgumentError(
            f"catalog {name!r} is not configured: no entry catalog.{name} in {_config_path()}, "
            f"no {ENV_PREFIX}{name.upper()}__* environment variables and no properties given "
            f"(e.g. load_catalog({name!r}, {WAREHOUSE}='/path/to/warehouse') or {URI}=...)"
        )
    cls = _catalog_class(name, props)
    if props.get(TYPE, "").strip().lower() == IN_MEMORY:
        props = {k: v for k, v in props.items() if k != TYPE}
    return cls(name, **props)


def default_catalog_name() -> str:
    """The default catalog's name (see the module docstring for where it comes from)."""
    for candidate in (
        os.environ.get("FRAZIL_DEFAULT_CATALOG"),
        load_config().get("default-catalog"),
        os.environ.get("PYICEBERG_DEFAULT_CATALOG"),
        load_pyiceberg_config().get("default-catalog"),
    ):
        if candidate:
            return str(candidate)
    return DEFAULT_CATALOG


def _in_memory_class() -> type[Catalog]:
    from frazil.catalog.sql import SqlCatalog

    class InMemoryCatalog(SqlCatalog):
        """PyIceberg's ``in-memory`` catalog: SQLite ``:memory:``, warehouse given or a new
        temporary directory."""

        def __init__(self, name: str, **properties: str) -> None:
            import tempfile

            props = dict(properties)
            props.setdefault(URI, "sqlite:///:memory:")
            if not props.get(WAREHOUSE):
                props[WAREHOUSE] = tempfile.mkdtemp(prefix="frazil-in-memory-")
            super().__init__(name, **props)

    return InMemoryCatalog
