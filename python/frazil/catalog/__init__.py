"""Catalogs: where a table's current metadata pointer lives (PyIceberg's API names).

:func:`load_catalog` builds a catalog from (later wins) the YAML file ``.frazil.yaml`` in
``$FRAZIL_HOME`` or the home directory, ``FRAZIL_CATALOG__<NAME>__<KEY>`` environment variables
and keyword properties (see :mod:`frazil.catalog.config`). Two kinds are built in:

- ``type="sql"`` (the default, :class:`~frazil.catalog.sql.SqlCatalog`): the pointer is a row
  of ``iceberg_tables`` in SQLite or PostgreSQL, the tables of the Java JDBC catalog and of
  PyIceberg's ``SqlCatalog``, so the three can share one database.
- ``type="filesystem"`` (alias ``"hadoop"``, :class:`~frazil.catalog.filesystem.FileSystemCatalog`):
  the Java HadoopCatalog layout, where the pointer is the highest ``v<N>.metadata.json``.

``py-catalog-impl`` names any other :class:`Catalog` subclass (``"package.module.Class"``).

Every catalog commits the same way (:meth:`Catalog.commit_table`): load the current metadata,
check the requirements against it, apply the updates, write the new metadata file, and swap the
pointer atomically (a check-and-put on the metadata location, or a create-if-absent of the next
version file). Losing the race is a :class:`~frazil.exceptions.CommitFailedError` (the
transaction refreshes and retries); when the swap fails in a way that leaves its outcome open
(a dropped connection), the catalog re-reads the pointer before deciding, and raises
:class:`~frazil.exceptions.CommitStateUnknownError` only when it cannot find out.

Views (:mod:`frazil.view`) share the tables' name space and commit the same way
(:meth:`Catalog.commit_view`, rules in :mod:`frazil.view.commit`); the SQL catalog holds them,
the filesystem catalog (like Java's HadoopCatalog) refuses them.

:class:`Catalog` lives in :mod:`frazil.catalog.base`, the commit protocol it shares with views
in :mod:`frazil.catalog.commit`; this package re-exports their public names.
"""

from __future__ import annotations

# The catalog and table property names are re-exported too (``X as X``): callers read them here.
from frazil.catalog.base import DEFAULT_FORMAT_VERSION as DEFAULT_FORMAT_VERSION
from frazil.catalog.base import FORMAT_VERSION as FORMAT_VERSION
from frazil.catalog.base import MAX_IDENTIFIER_PART_BYTES as MAX_IDENTIFIER_PART_BYTES
from frazil.catalog.base import METADATA_DELETE_AFTER_COMMIT as METADATA_DELETE_AFTER_COMMIT
from frazil.catalog.base import PY_CATALOG_IMPL as PY_CATALOG_IMPL
from frazil.catalog.base import TYPE as TYPE
from frazil.catalog.base import URI as URI
from frazil.catalog.base import WAREHOUSE as WAREHOUSE
from frazil.catalog.base import Catalog, Identifier, PropertiesUpdateSummary
from frazil.catalog.commit import METADATA_COMPRESSION as METADATA_COMPRESSION
from frazil.catalog.commit import METADATA_PATH as METADATA_PATH
from frazil.catalog.commit import STATUS_CHECK_MAX_WAIT_MS as STATUS_CHECK_MAX_WAIT_MS
from frazil.catalog.commit import STATUS_CHECK_MIN_WAIT_MS as STATUS_CHECK_MIN_WAIT_MS
from frazil.catalog.commit import STATUS_CHECK_NUM_RETRIES as STATUS_CHECK_NUM_RETRIES
from frazil.catalog.commit import CommitTableResponse, CommitViewResponse, TableCommit
from frazil.catalog.config import load_catalog

__all__ = [
    "Catalog",
    "CommitTableResponse",
    "CommitViewResponse",
    "Identifier",
    "PropertiesUpdateSummary",
    "TableCommit",
    "load_catalog",
]
