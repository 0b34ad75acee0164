"""What the Spark modules share: finding the catalog and table (from a catalog argument or the
data source's options), the read options, the FileIO an executor rebuilds, a quiet PySpark
3.5, and the checks of the transforms' constant arguments.

Imports no PySpark, so the PySpark 3.5 paths (:mod:`frazil.spark.read`,
:mod:`frazil.spark.write`) and the PySpark 4 data source share it.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from frazil.catalog import Catalog, load_catalog
from frazil.encryption.kms import KMS_KEY_PREFIX
from frazil.encryption.table_io import executor_file_io, executor_io_properties
from frazil.exceptions import EncryptionError, InvalidArgumentError
from frazil.io import FileIO, load_file_io

if TYPE_CHECKING:
    from frazil.table import Table

__all__ = [
    "CATALOG_PREFIX",
    "catalog_from_options",
    "io_spec",
    "positive_int",
    "quiet_pyspark_warnings",
    "read_args",
    "refuse_master_keys",
    "resolve_catalog",
    "table_identifier",
]

#: Data source options naming catalog properties: ``catalog.<key>``.
CATALOG_PREFIX = "catalog."


def resolve_catalog(catalog: Any) -> Catalog:
    """A frazil Catalog from a Catalog, a catalog name (:func:`frazil.catalog.load_catalog`) or a
    dict of catalog properties (``name`` names it, default ``"spark"``)."""
    if isinstance(catalog, Catalog):
        return catalog
    if isinstance(catalog, str):
        return load_catalog(catalog)
    if isinstance(catalog, Mapping):
        props = {str(k): str(v) for k, v in catalog.items()}
        name = props.pop("name", "spark")
        return load_catalog(name, **props)
    raise InvalidArgumentError(
        f"catalog must be a frazil Catalog, a catalog name or a dict of properties, "
        f"got {type(catalog).__name__}"
    )


@contextlib.contextmanager
def quiet_pyspark_warnings() -> Iterator[None]:
    """PySpark 3.5 checks pandas and pyarrow versions with distutils' deprecated LooseVersion."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "distutils Version classes", DeprecationWarning)
        yield


def io_spec(table: Table) -> tuple[dict[str, str], str | None]:
    """What an executor needs to rebuild the table's FileIO (:func:`executor_io`): never key
    material (an encrypted table's data keys travel in the plan, its master keys stay here)."""
    return executor_io_properties(table.io), table.metadata_location or table.location()


def executor_io(properties: Mapping[str, str], location: str | None) -> FileIO:
    """The table's FileIO on an executor, from :func:`io_spec`'s output."""
    return executor_file_io(load_file_io(properties, location), properties)


def refuse_master_keys(options: Any) -> None:
    """Refuses data source options holding master keys (``catalog.encryption.kms.key.<id>``,
    :class:`~frazil.encryption.InMemoryKms`'s): Spark pickles a reader's or writer's options to
    every executor, and executors must never hold master keys. The KMS's keys belong in the
    named catalog's configuration on the driver (``.frazil.yaml`` or ``FRAZIL_CATALOG__*``)."""
    prefix = CATALOG_PREFIX + KMS_KEY_PREFIX
    for k in options:
        if str(k).lower().startswith(prefix):
            raise EncryptionError(
                f"data source option {k}: a master key in the options would be shipped by Spark "
                "to every executor; configure the KMS keys in the catalog's configuration on "
                "the driver (.frazil.yaml or FRAZIL_CATALOG__<NAME>__* variables) and name the "
                "catalog with the 'catalog' option"
            )


def catalog_from_options(options: Any) -> Catalog:
    """The catalog a data source's options name: ``catalog`` (a configured catalog, default
    ``"spark"``) with the ``catalog.<key>`` properties (never master keys:
    :func:`refuse_master_keys`)."""
    refuse_master_keys(options)
    props = {
        k[len(CATALOG_PREFIX) :]: v
        for k, v in options.items()
        if k.lower().startswith(CATALOG_PREFIX)
    }
    name = options.get("catalog") or props.pop("name", None) or "spark"
    return load_catalog(name, **props)


def table_identifier(options: Any) -> str:
    """The table a data source's options name (``load("db.table")`` or ``table``)."""
    ident = options.get("path") or options.get("table")
    if not ident:
        raise InvalidArgumentError("the frazil data source needs a table: load('db.table')")
    return str(ident)


def read_args(options: Any) -> dict[str, Any]:
    """The scan arguments of a data source's read options."""

    def number(key: str) -> int | None:
        raw = options.get(key)
        if not raw:
            return None
        try:
            return int(raw)
        except ValueError:
            raise InvalidArgumentError(f"read option {key}: not an integer: {raw!r}") from None

    fields = options.get("selected-fields")
    return {
        "row_filter": options.get("filter") or None,
        "snapshot_id": number("snapshot-id"),
        "as_of_timestamp": number("as-of-timestamp"),
        "ref": options.get("ref") or None,
        "branch": options.get("branch") or None,
        "tag": options.get("tag") or None,
        "selected_fields": [f.strip() for f in fields.split(",")] if fields else None,
    }


def positive_int(kind: str, what: str, value: Any, limit: int) -> int:
    """``value`` if it is an int in ``1..limit``: a transform's count or width."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentError(f"frazil_{kind}: the {what} must be an int, got {value!r}")
    if not 0 < value <= limit:
        raise InvalidArgumentError(f"frazil_{kind}: the {what} must be positive, got {value}")
    return value
