"""The AWS Glue catalog: ``load_catalog(name, type="glue", ...)``.

Tables are stored as Java's ``GlueCatalog`` and PyIceberg's ``GlueCatalog`` store them, so the
three share one Glue Data Catalog: a Glue database per namespace (one level; ``location`` is its
``LocationUri``, ``Description`` its description, other properties its ``Parameters``) and per
table an ``EXTERNAL_TABLE`` whose ``Parameters`` hold ``table_type=ICEBERG``,
``metadata_location``, ``previous_metadata_location`` and the table properties, with
``StorageDescriptor`` columns carrying ``iceberg.field.id``/``optional``/``current``.

A commit takes the one commit path of :class:`~frazil.catalog.Catalog`: the new metadata file is
written, then the Glue table is read and, if its ``metadata_location`` is still the one the
commit started from, ``UpdateTable(VersionId=<the version read>, SkipArchive=...)`` moves it.
Glue refuses an update whose ``VersionId`` is stale with ``ConcurrentModificationException``,
which is a lost race (:class:`~frazil.exceptions.CommitFailedError`, retried by the
transaction); other AWS errors are :class:`~frazil.exceptions.CatalogError` (``CatalogBusyError``
for throttling and lost connections), after a re-read decides whether the update landed.

Databases federated with S3 Tables (``FederatedDatabase`` with connection ``aws:s3tables``) are
handled as PyIceberg 0.12 does: S3 Tables picks the table location, so ``create_table`` first
makes an empty Glue entry, reads the location back and writes the first metadata there, and
metadata files are written without an existence check (S3 Tables storage refuses listings).

Properties (PyIceberg's names): ``glue.region``, ``glue.id`` (the catalog's account id),
``glue.endpoint``, ``glue.access-key-id``, ``glue.secret-access-key``, ``glue.session-token``,
``glue.profile-name`` (each falling back to ``client.*`` and then boto3's default chain),
``glue.skip-archive`` (default ``true``), ``glue.max-retries`` (default 10), ``glue.retry-mode``
(``standard``, ``adaptive`` or ``legacy``), and ``warehouse`` (tables default to
``<warehouse>/<database>.db/<table>`` when the database has no location). Needs boto3
(``pip install 'frazil[glue]'``).
"""

from __future__ import annotations

from frazil.catalog.glue.catalog import GlueCatalog

__all__ = ["GlueCatalog"]
