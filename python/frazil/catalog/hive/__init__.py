"""The Hive Metastore catalog (``load_catalog(name, type="hive", uri="thrift://host:9083")``):
:class:`HiveCatalog` (:mod:`frazil.catalog.hive.catalog`), its Thrift connections
(:mod:`~frazil.catalog.hive.client`), its commit lock (:mod:`~frazil.catalog.hive.lock`) and
how tables and views are stored in the metastore (:mod:`~frazil.catalog.hive.tables`). The
Thrift bindings are generated from Hive's IDL (``_thrift/README.md``) and need the ``thrift``
package (``pip install 'frazil[hive]'``).
"""

from __future__ import annotations

from frazil.catalog.hive.catalog import HiveCatalog
from frazil.catalog.hive.lock import HiveLockTimeoutError

__all__ = ["HiveCatalog", "HiveLockTimeoutError"]
