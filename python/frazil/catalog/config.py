"""Catalog configuration: the YAML file, environment variables and keyword properties.

Sources, later wins (as PyIceberg's ``PYICEBERG_*`` configuration, with ``FRAZIL`` instead):

1. The YAML file ``.frazil.yaml`` in ``$FRAZIL_HOME`` if set, else in the home directory::

       default-catalog: local          # optional; otherwise the catalog named "default"
       catalog:
         local:
           type: sql                   # "sql" (default), "filesystem" (alias "hadoop"), "rest"
           uri: postgresql+psycopg://user@host/db
           warehouse: /data/warehouse

2. Environment variables ``FRAZIL_CATALOG__<NAME>__<KEY>=value``, case-insensitive: in the
   name and key ``_`` stands for ``-`` (``FRAZIL_CATALOG__PROD__PY_IO_IMPL`` sets
   ``py-io-impl`` of catalog ``prod``); a further ``__`` in the key stands for ``.``
   (``FRAZIL_CATALOG__PROD__S3__REGION`` sets ``s3.region``).
3. Keyword properties of :func:`load_catalog`.

``py-catalog-impl`` (``"package.module.Class"``) names a :class:`~frazil.catalog.Catalog`
subclass to build instead of a ``type``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Any

from frazil.catalog import PY_CATALOG_IMPL, TYPE, URI, WAREHOUSE, Catalog
from frazil.exceptions import InvalidArgumentError

__all__ = ["catalog_properties", "load_catalog", "load_config"]

FRAZIL_HOME = "FRAZIL_HOME"
CONFIG_FILE = ".frazil.yaml"
ENV_PREFIX = "FRAZIL_CATALOG__"
DEFAULT_CATALOG = "default"


def _config_path() -> str:
    home = os.environ.get(FRAZIL_HOME)
    return os.path.join(home if home else os.path.expanduser("~"), CONFIG_FILE)


def load_config() -> dict[str, Any]:
    """The YAML file's content with keys lower-cased (``{}`` when there is no file)."""
    import yaml

    path = _config_path()
    if not os.path.isfile(path):
        return {}
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


def _env_properties(name: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for var, value in os.environ.items():
        if not var.upper().startswith(ENV_PREFIX):
            continue
        parts = var[len(ENV_PREFIX) :].lower().split("__", 1)
        if len(parts) != 2 or not parts[1]:
            continue
        catalog, key = (p.replace("__", ".").replace("_", "-") for p in parts)
        if catalog == name.lower().replace("_", "-"):
            out[key] = value
    return out


def catalog_properties(name: str, **properties: str) -> dict[str, str]:
    """The merged properties of catalog ``name``: file, then environment, then ``properties``."""
    config = load_config()
    catalogs = config.get("catalog") or {}
    if not isinstance(catalogs, dict):
        raise InvalidArgumentError(f"{_config_path()}: 'catalog' must be a mapping of catalogs")
    from_file = catalogs.get(name.lower()) or {}
    if not isinstance(from_file, dict):
        raise InvalidArgumentError(f"{_config_path()}: catalog.{name} must be a mapping")
    merged: dict[str, str] = {str(k): str(v) for k, v in from_file.items() if v is not None}
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
    kind = (kind or "sql").strip().lower()
    if kind == "sql":
        from frazil.catalog.sql import SqlCatalog

        return SqlCatalog
    if kind in ("filesystem", "hadoop"):
        from frazil.catalog.filesystem import FileSystemCatalog

        return FileSystemCatalog
    if kind == "rest":
        from frazil.catalog.rest import RestCatalog

        return RestCatalog
    raise InvalidArgumentError(
        f"catalog {name!r}: unknown type {kind!r} (known: 'sql', 'filesystem', 'hadoop', "
        f"'rest'; or set {PY_CATALOG_IMPL!r} to a class)"
    )


def load_catalog(name: str | None = None, **properties: str) -> Catalog:
    """Builds catalog ``name`` (default: the file's ``default-catalog``, else ``"default"``)
    from the merged configuration. A catalog that is configured nowhere and given no
    properties is an error rather than an empty default."""
    if name is None:
        name = str(load_config().get("default-catalog") or DEFAULT_CATALOG)
    props = catalog_properties(name, **properties)
    if not props:
        raise InvalidArgumentError(
            f"catalog {name!r} is not configured: no entry catalog.{name} in {_config_path()}, "
            f"no {ENV_PREFIX}{name.upper()}__* environment variables and no properties given "
            f"(e.g. load_catalog({name!r}, {WAREHOUSE}='/path/to/warehouse') or {URI}=...)"
        )
    return _catalog_class(name, props)(name, **props)
