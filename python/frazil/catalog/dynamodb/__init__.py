"""The DynamoDB catalog: ``load_catalog(name, type="dynamodb", warehouse=..., ...)``.

One DynamoDB table (``dynamodb.table-name``, PyIceberg's ``table-name``, default ``iceberg``;
created on first use, on-demand billing) holds the catalog in the layout of Java's
``DynamoDbCatalog`` and PyIceberg's ``DynamoDbCatalog``, so all three share it: hash key
``identifier``, range key ``namespace``, a global secondary index ``namespace-identifier``
(namespace, identifier), and on every item ``v`` (a version UUID), ``created_at`` and
``updated_at`` (milliseconds). A namespace is the item (``NAMESPACE``, ``<levels joined by
".">``) with its properties as ``p.<key>`` attributes; a table is the item (``<namespace>.<name>``,
``<namespace>``) with ``p.table_type=ICEBERG``, ``p.metadata_location`` and
``p.previous_metadata_location``. Levels may not hold ``"."``.

Commits follow Java's ``DynamoDbTableOperations`` on frazil's one commit path: the new metadata
file is written, the item read (consistently), and if its ``p.metadata_location`` is still the
one the commit started from, an ``UpdateItem`` moves it on the condition that ``v`` is still the
version read (and sets a new ``v``). A failed condition is a lost race
(:class:`~frazil.exceptions.CommitFailedError`, retried by the transaction) unless a re-read
shows the update landed (the SDK retried it); PyIceberg 0.12 cannot commit to these tables at
all. Renames are one ``TransactWriteItems`` (delete if unchanged, put if absent).

Properties: ``warehouse`` (tables default to ``<warehouse>/<namespace>.db/<table>`` unless the
namespace has a ``location``, or Java's ``default_location``), ``dynamodb.endpoint``,
``dynamodb.region``, ``dynamodb.access-key-id``, ``dynamodb.secret-access-key``,
``dynamodb.session-token``, ``dynamodb.profile-name`` (each falling back to ``client.*`` and
then boto3's default chain). Needs boto3 (``pip install 'frazil[dynamodb]'``).
"""

from __future__ import annotations

from frazil.catalog.dynamodb.catalog import DynamoDbCatalog

__all__ = ["DynamoDbCatalog"]
