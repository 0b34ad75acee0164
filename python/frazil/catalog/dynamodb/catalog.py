"""The DynamoDB catalog (see :mod:`frazil.catalog.dynamodb` for the item layout)."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from frazil.catalog.aws import aws_client, aws_error, error_code, is_aws_error
from frazil.catalog.base import WAREHOUSE, Catalog, Identifier, PropertiesUpdateSummary
from frazil.catalog.purge import purge_table_files
from frazil.exceptions import (
    CatalogBusyError,
    FrazilError,
    InvalidArgumentError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.metadata import TableMetadata
    from frazil.table import Table

__all__ = ["DynamoDbCatalog"]

logger = logging.getLogger(__name__)

# Catalog properties: Java's names, PyIceberg's where it has one.
DYNAMODB_ENDPOINT = "dynamodb.endpoint"
DYNAMODB_TABLE_NAME = "dynamodb.table-name"
TABLE_NAME = "table-name"  # PyIceberg's spelling
DEFAULT_TABLE_NAME = "iceberg"

# The item layout of Java's DynamoDbCatalog and PyIceberg's.
COL_IDENTIFIER = "identifier"
COL_NAMESPACE = "namespace"
COL_VERSION = "v"
COL_CREATED_AT = "created_at"
COL_UPDATED_AT = "updated_at"
NAMESPACE_MARKER = "NAMESPACE"
NAMESPACE_GSI = "namespace-identifier"
PROPERTY_PREFIX = "p."
TABLE_TYPE = "table_type"
ICEBERG = "ICEBERG"
METADATA_LOCATION = "metadata_location"
PREVIOUS_METADATA_LOCATION = "previous_metadata_location"
LOCATION = "location"
DEFAULT_LOCATION = "default_location"  # Java's namespace property for where tables go

_CREATE_WAIT_S = 60.0
# Conditional writes of namespace properties and drops that lose a race are tried again.
_ITEM_RETRIES = 5


class _Conflict(FrazilError):
    """Internal: a conditional write whose condition failed."""


def _prop(key: str) -> str:
    return PROPERTY_PREFIX + key


def _s(item: Mapping[str, Any], attribute: str) -> str | None:
    value = item.get(attribute)
    if isinstance(value, Mapping) and "S" in value:
        return str(value["S"])
    return None


def _properties(item: Mapping[str, Any]) -> dict[str, str]:
    return {
        k[len(PROPERTY_PREFIX) :]: str(v["S"])
        for k, v in item.items()
        if k.startswith(PROPERTY_PREFIX) and isinstance(v, Mapping) and "S" in v
    }


def _now_ms() -> str:
    return str(int(time.time() * 1000))


def _new_entry() -> dict[str, Any]:
    now = _now_ms()
    return {
        COL_CREATED_AT: {"N": now},
        COL_UPDATED_AT: {"N": now},
        COL_VERSION: {"S": str(uuid.uuid4())},
    }


class DynamoDbCatalog(Catalog):
    """Iceberg tables in a DynamoDB table, as Java's ``DynamoDbCatalog`` and PyIceberg's store
    them, with commits as Java's ``DynamoDbTableOperations`` (see
    :mod:`frazil.catalog.dynamodb`)."""

    _paths_from_identifiers = False

    def __init__(self, name: str, **properties: str) -> None:
        super().__init__(name, **properties)
        self.dynamodb = aws_client("dynamodb", self.properties, endpoint_key=DYNAMODB_ENDPOINT)
        self.table_name = (
            self.properties.get(DYNAMODB_TABLE_NAME)
            or self.properties.get(TABLE_NAME)
            or DEFAULT_TABLE_NAME
        )
        self._what = f"DynamoDB catalog {name!r} (table {self.table_name})"
        self._ensure_catalog_table()

    # ---- calls

    def _call(
        self, op: str, doing: str, on: Mapping[str, FrazilError] | None = None, **kwargs: Any
    ) -> Any:
        try:
            return getattr(self.dynamodb, op)(**kwargs)
        except Exception as e:
            if not is_aws_error(e):
                raise
            code = error_code(e)
            if on is not None and code is not None and code in on:
                raise on[code] from e
            raise aws_error(e, self._what, doing) from e

    def _get(self, identifier: str, namespace: str, doing: str) -> dict[str, Any] | None:
        response = self._call(
            "get_item",
            doing,
            TableName=self.table_name,
            ConsistentRead=True,
            Key={COL_IDENTIFIER: {"S": identifier}, COL_NAMESPACE: {"S": namespace}},
        )
        item: dict[str, Any] | None = response.get("Item")
        return item

    def _query(self, doing: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
        start: dict[str, Any] | None = None
        while True:
            page = self._call(
                "query",
                doing,
                TableName=self.table_name,
                **kwargs,
                **({"ExclusiveStartKey": start} if start else {}),
            )
            yield from page.get("Items", [])
            start = page.get("LastEvaluatedKey")
            if not start:
                return

    def _ensure_catalog_table(self) -> None:
        try:
            response = self._call(
                "describe_table",
                "describing the catalog table",
                on={"ResourceNotFoundException": _Conflict()},
                TableName=self.table_name,
            )
            status = response["Table"].get("TableStatus")
        except _Conflict:
            logger.info("%s: creating the catalog table", self._what)
            try:
                self._call(
                    "create_table",
                    "creating the catalog table",
                    on={"ResourceInUseException": _Conflict()},  # created concurrently
                    TableName=self.table_name,
                    KeySchema=[
                        {"AttributeName": COL_IDENTIFIER, "KeyType": "HASH"},
                        {"AttributeName": COL_NAMESPACE, "KeyType": "RANGE"},
                    ],
                    AttributeDefinitions=[
                        {"AttributeName": COL_IDENTIFIER, "AttributeType": "S"},
                        {"AttributeName": COL_NAMESPACE, "AttributeType": "S"},
                    ],
                    GlobalSecondaryIndexes=[
                        {
                            "IndexName": NAMESPACE_GSI,
                            "KeySchema": [
                                {"AttributeName": COL_NAMESPACE, "KeyType": "HASH"},
                                {"AttributeName": COL_IDENTIFIER, "KeyType": "RANGE"},
                            ],
                            "Projection": {"ProjectionType": "KEYS_ONLY"},
                        }
                    ],
                    BillingMode="PAY_PER_REQUEST",
                )
            except _Conflict:
                pass
            status = None
        deadline = time.monotonic() + _CREATE_WAIT_S
        while status != "ACTIVE":
            if time.monotonic() > deadline:
                raise CatalogBusyError(
                    f"{self._what}: the catalog table is not ACTIVE after {_CREATE_WAIT_S:.0f} s "
                    f"(status {status})"
                )
            time.sleep(0.5 if status is not None else 0)
            status = self._call(
                "describe_table", "describing the catalog table", TableName=self.table_name
            )["Table"].get("TableStatus")

    # ---- identifiers

    def _ns(self, namespace: str | Identifier) -> Identifier:
        ns = self._namespace_identifier(namespace)
        for level in ns:
            if "." in level:
                # Items name a namespace by its levels joined with ".", as Java does.
                raise InvalidArgumentError(
                    f"invalid namespace {'.'.join(ns)!r}: a level may not hold '.' in the "
                    "DynamoDB catalog"
                )
        return ns

    def _ident(self, identifier: str | Identifier, strict: bool) -> Identifier:
        ident = self._table_identifier(identifier, strict=strict)
        if any("." in part for part in ident):
            raise InvalidArgumentError(
                f"invalid table identifier {'.'.join(ident)!r}: a level may not hold '.' in the "
                "DynamoDB catalog"
            )
        return ident

    def _existing_table_identifier(self, identifier: str | Identifier) -> Identifier:
        return self._ident(identifier, strict=False)

    @staticmethod
    def _key(ident: Identifier) -> dict[str, Any]:
        return {
            COL_IDENTIFIER: {"S": ".".join(ident)},
            COL_NAMESPACE: {"S": ".".join(ident[:-1])},
        }

    @staticmethod
    def _ns_key(ns: Identifier) -> dict[str, Any]:
        return {COL_IDENTIFIER: {"S": NAMESPACE_MARKER}, COL_NAMESPACE: {"S": ".".join(ns)}}

    # ---- namespaces

    def _namespace_item(self, ns: Identifier) -> dict[str, Any] | None:
        return self._get(NAMESPACE_MARKER, ".".join(ns), f"reading namespace {'.'.join(ns)}")

    def namespace_exists(self, namespace: str | Identifier) -> bool:
        ns = self._namespace_identifier(namespace, allow_root=True)
        if not ns:
            return True
        if any("." in level for level in ns):
            return False
        return self._namespace_item(ns) is not None

    def create_namespace(
        self, namespace: str | Identifier, properties: Mapping[str, str] | None = None
    ) -> None:
        ns = self._ns(namespace)
        item = {**self._ns_key(ns), **_new_entry()}
        for k, v in (properties or {}).items():
            item[_prop(k)] = {"S": str(v)}
        self._call(
            "put_item",
            f"creating namespace {'.'.join(ns)}",
            on={
                "ConditionalCheckFailedException": NamespaceAlreadyExistsError(
                    f"namespace {'.'.join(ns)} already exists"
                )
            },
            TableName=self.table_name,
            Item=item,
            ConditionExpression=f"attribute_not_exists({COL_VERSION})",
        )

    def drop_namespace(self, namespace: str | Identifier) -> None:
        ns = self._ns(namespace)
        name = ".".join(ns)
        tables = self.list_tables(ns)
        if tables:
            raise NamespaceNotEmptyError(
                f"cannot drop namespace {name}: it still holds {len(tables)} table(s), e.g. "
                f"{'.'.join(tables[0])}"
            )
        self._call(
            "delete_item",
            f"dropping namespace {name}",
            on={
                "ConditionalCheckFailedException": NoSuchNamespaceError(
                    f"cannot drop namespace {name}: it does not exist"
                )
            },
            TableName=self.table_name,
            Key=self._ns_key(ns),
            ConditionExpression=f"attribute_exists({COL_NAMESPACE})",
        )

    def list_namespaces(self, namespace: str | Identifier = ()) -> list[Identifier]:
        parent = self._namespace_identifier(namespace, allow_root=True)
        items = self._query(
            "listing namespaces",
            ConsistentRead=True,
            KeyConditionExpression="#i = :marker",
            ExpressionAttributeNames={"#i": COL_IDENTIFIER},
            ExpressionAttributeValues={":marker": {"S": NAMESPACE_MARKER}},
        )
        depth = len(parent) + 1
        found = set()
        for item in items:
            levels = tuple((_s(item, COL_NAMESPACE) or "").split("."))
            if len(levels) >= depth and levels[: depth - 1] == parent and all(levels):
                found.add(levels[:depth])
        # A parent exists by its own item or, as in Java (which never creates parents), by
        # having children.
        if parent and not found and not self.namespace_exists(parent):
            raise NoSuchNamespaceError(
                f"cannot list namespaces: namespace {'.'.join(parent)} does not exist"
            )
        return sorted(found)

    def load_namespace_properties(self, namespace: str | Identifier) -> dict[str, str]:
        ns = self._ns(namespace)
        item = self._namespace_item(ns)
        if item is None:
            raise NoSuchNamespaceError(f"namespace {'.'.join(ns)} does not exist")
        return _properties(item)

    def update_namespace_properties(
        self,
        namespace: str | Identifier,
        removals: set[str] | None = None,
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdateSummary:
        ns = self._ns(namespace)
        name = ".".join(ns)
        removals = set(removals or ())
        updates = {k: str(v) for k, v in (updates or {}).items()}
        overlap = removals & set(updates)
        if overlap:
            raise InvalidArgumentError(
                f"namespace {name}: properties both removed and updated: {sorted(overlap)}"
            )
        for _ in range(_ITEM_RETRIES):
            item = self._namespace_item(ns)
            if item is None:
                raise NoSuchNamespaceError(f"namespace {name} does not exist")
            current = _properties(item)
            removed = sorted(removals & set(current))
            names: dict[str, str] = {"#v": COL_VERSION, "#u": COL_UPDATED_AT}
            values: dict[str, Any] = {
                ":old": item[COL_VERSION],
                ":new": {"S": str(uuid.uuid4())},
                ":now": {"N": _now_ms()},
            }
            sets = ["#v = :new", "#u = :now"]
            for i, (k, v) in enumerate(sorted(updates.items())):
                names[f"#s{i}"] = _prop(k)
                values[f":s{i}"] = {"S": v}
                sets.append(f"#s{i} = :s{i}")
            drops = []
            for i, k in enumerate(removed):
                names[f"#r{i}"] = _prop(k)
                drops.append(f"#r{i}")
            expression = "SET " + ", ".join(sets) + (" REMOVE " + ", ".join(drops) if drops else "")
            try:
                self._call(
                    "update_item",
                    f"updating namespace {name}",
                    on={"ConditionalCheckFailedException": _Conflict()},
                    TableName=self.table_name,
                    Key=self._ns_key(ns),
                    UpdateExpression=expression,
                    ConditionExpression="#v = :old",
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues=values,
                )
            except _Conflict:
                continue  # changed since it was read: read it again
            return PropertiesUpdateSummary(
                removed=removed, updated=sorted(updates), missing=sorted(removals - set(current))
            )
        raise CatalogBusyError(
            f"{self._what}: namespace {name} kept changing; its properties were not updated"
        )

    # ---- tables

    def _default_table_location(self, identifier: Identifier) -> str:
        ns, table = identifier[:-1], identifier[-1]
        props = self.load_namespace_properties(ns)
        root = props.get(LOCATION) or props.get(DEFAULT_LOCATION)
        if root:
            root = root.rstrip("/")
            location = f"{root}/{table}"
        else:
            warehouse = self.properties.get(WAREHOUSE)
            if not warehouse:
                raise InvalidArgumentError(
                    f"{self._what} has no 'warehouse' and namespace {'.'.join(ns)} no location: "
                    "give the table a location"
                )
            root = warehouse.rstrip("/")
            # The layout of Java's and PyIceberg's DynamoDB catalogs.
            location = f"{root}/{'.'.join(ns)}.db/{table}"
        return self._check_under(root, location, f"default location of {'.'.join(identifier)}")

    def _table_item(self, ident: Identifier) -> dict[str, Any] | None:
        return self._get(".".join(ident), ".".join(ident[:-1]), f"reading table {'.'.join(ident)}")

    @staticmethod
    def _is_iceberg(item: Mapping[str, Any]) -> bool:
        return (_s(item, _prop(TABLE_TYPE)) or "").upper() == ICEBERG

    def _load_pointer(self, identifier: Identifier) -> str | None:
        item = self._table_item(identifier)
        if item is None or not self._is_iceberg(item):
            return None
        return _s(item, _prop(METADATA_LOCATION)) or None

    def _swap_pointer(
        self,
        identifier: Identifier,
        current_location: str | None,
        new_location: str,
        data: bytes,
        io: FileIO,
        new: TableMetadata,
        base: TableMetadata | None,
    ) -> bool:
        name = ".".join(identifier)
        if current_location is None:
            item = {**self._key(identifier), **_new_entry()}
            item[_prop(TABLE_TYPE)] = {"S": ICEBERG}
            item[_prop(METADATA_LOCATION)] = {"S": new_location}
            try:
                self._call(
                    "put_item",
                    f"creating table {name}",
                    on={"ConditionalCheckFailedException": _Conflict()},
                    TableName=self.table_name,
                    Item=item,
                    ConditionExpression=f"attribute_not_exists({COL_VERSION})",
                )
            except _Conflict:
                return self._load_pointer(identifier) == new_location
            return True
        current = self._table_item(identifier)
        if current is None:
            raise NoSuchTableError(f"cannot commit to table {name}: it was dropped")
        if _s(current, _prop(METADATA_LOCATION)) != current_location:
            return False  # another commit moved the pointer since it was read
        try:
            self._call(
                "update_item",
                f"committing to table {name}",
                on={"ConditionalCheckFailedException": _Conflict()},
                TableName=self.table_name,
                Key=self._key(identifier),
                UpdateExpression="SET #m = :m, #p = :p, #t = :t, #v = :new, #u = :now",
                # Java's optimistic lock: the version attribute is still the one read above.
                ConditionExpression="#v = :old",
                ExpressionAttributeNames={
                    "#m": _prop(METADATA_LOCATION),
                    "#p": _prop(PREVIOUS_METADATA_LOCATION),
                    "#t": _prop(TABLE_TYPE),
                    "#v": COL_VERSION,
                    "#u": COL_UPDATED_AT,
                },
                ExpressionAttributeValues={
                    ":m": {"S": new_location},
                    ":p": {"S": current_location},
                    ":t": {"S": ICEBERG},
                    ":old": current[COL_VERSION],
                    ":new": {"S": str(uuid.uuid4())},
                    ":now": {"N": _now_ms()},
                },
            )
        except _Conflict:
            # Lost the race, unless the SDK's own retry of this very update is what failed the
            # condition (the first attempt landed): the pointer tells.
            return self._load_pointer(identifier) == new_location
        return True

    def register_table(self, identifier: str | Identifier, metadata_location: str) -> Table:
        """Adds a table whose metadata file already exists (read first, to check it)."""
        ident = self._ident(identifier, strict=True)
        name = ".".join(ident)
        if not self.namespace_exists(ident[:-1]):
            raise NoSuchNamespaceError(
                f"cannot register table {name}: namespace {'.'.join(ident[:-1])} does not exist"
            )
        self._read_metadata(metadata_location)
        item = {**self._key(ident), **_new_entry()}
        item[_prop(TABLE_TYPE)] = {"S": ICEBERG}
        item[_prop(METADATA_LOCATION)] = {"S": metadata_location}
        self._call(
            "put_item",
            f"registering table {name}",
            on={
                "ConditionalCheckFailedException": TableAlreadyExistsError(
                    f"table {name} already exists"
                )
            },
            TableName=self.table_name,
            Item=item,
            ConditionExpression=f"attribute_not_exists({COL_VERSION})",
        )
        return self.load_table(ident)

    def drop_table(
        self,
        identifier: str | Identifier,
        purge: bool = False,
        *,
        delete_outside_location: bool = False,
    ) -> None:
        ident = self._existing_table_identifier(identifier)
        name = ".".join(ident)
        table = self.load_table(ident) if purge else None
        for _ in range(_ITEM_RETRIES):
            item = self._table_item(ident)
            if item is None or not self._is_iceberg(item):
                raise NoSuchTableError(f"cannot drop table {name}: it does not exist")
            try:
                self._call(
                    "delete_item",
                    f"dropping table {name}",
                    on={"ConditionalCheckFailedException": _Conflict()},
                    TableName=self.table_name,
                    Key=self._key(ident),
                    ConditionExpression="#v = :v",
                    ExpressionAttributeNames={"#v": COL_VERSION},
                    ExpressionAttributeValues={":v": item[COL_VERSION]},
                )
            except _Conflict:
                continue  # a commit landed in between: drop what is current now
            break
        else:
            raise CatalogBusyError(f"{self._what}: table {name} kept changing; it was not dropped")
        logger.info("dropped table %s%s", name, " (purging its files)" if purge else "")
        if table is not None:
            # The files of the metadata current at the drop (a commit may have landed since
            # the purge's load: those files stay, as with any concurrent drop).
            purge_table_files(
                table.io,
                table.metadata,
                table.metadata_location,
                delete_outside_location=delete_outside_location,
            )

    def rename_table(
        self, from_identifier: str | Identifier, to_identifier: str | Identifier
    ) -> Table:
        """Moves the item in one transaction (delete the old one if unchanged, put the new one
        if absent), as Java does; the table's files stay where they are."""
        src = self._existing_table_identifier(from_identifier)
        dst = self._ident(to_identifier, strict=True)
        src_name, dst_name = ".".join(src), ".".join(dst)
        if not self.namespace_exists(dst[:-1]):
            raise NoSuchNamespaceError(
                f"cannot rename table {src_name} to {dst_name}: namespace "
                f"{'.'.join(dst[:-1])} does not exist"
            )
        item = self._table_item(src)
        if item is None or not self._is_iceberg(item):
            raise NoSuchTableError(f"cannot rename table {src_name}: it does not exist")
        if self._table_item(dst) is not None:
            raise TableAlreadyExistsError(
                f"cannot rename table {src_name}: table {dst_name} already exists"
            )
        moved: dict[str, Any] = {k: v for k, v in item.items() if k.startswith(PROPERTY_PREFIX)}
        moved.update(self._key(dst))
        moved.update(_new_entry())
        try:
            self._call(
                "transact_write_items",
                f"renaming table {src_name} to {dst_name}",
                on={"TransactionCanceledException": _Conflict()},
                TransactItems=[
                    {
                        "Delete": {
                            "TableName": self.table_name,
                            "Key": self._key(src),
                            "ConditionExpression": "#v = :v",
                            "ExpressionAttributeNames": {"#v": COL_VERSION},
                            "ExpressionAttributeValues": {":v": item[COL_VERSION]},
                        }
                    },
                    {
                        "Put": {
                            "TableName": self.table_name,
                            "Item": moved,
                            "ConditionExpression": "attribute_not_exists(#v)",
                            "ExpressionAttributeNames": {"#v": COL_VERSION},
                        }
                    },
                ],
            )
        except _Conflict:
            if self._table_item(dst) is not None:
                raise TableAlreadyExistsError(
                    f"cannot rename table {src_name}: table {dst_name} already exists"
                ) from None
            raise CatalogBusyError(
                f"{self._what}: table {src_name} changed during the rename; nothing was renamed"
            ) from None
        return self.load_table(dst)

    def list_tables(self, namespace: str | Identifier) -> list[Identifier]:
        ns = self._ns(namespace)
        if not self.namespace_exists(ns):
            raise NoSuchNamespaceError(
                f"cannot list tables: namespace {'.'.join(ns)} does not exist"
            )
        prefix = ".".join(ns) + "."
        items = self._query(
            f"listing tables of {'.'.join(ns)}",
            IndexName=NAMESPACE_GSI,
            KeyConditionExpression="#n = :ns",
            ExpressionAttributeNames={"#n": COL_NAMESPACE},
            ExpressionAttributeValues={":ns": {"S": ".".join(ns)}},
        )
        out = []
        for item in items:
            identifier = _s(item, COL_IDENTIFIER) or ""
            if identifier != NAMESPACE_MARKER and identifier.startswith(prefix):
                out.append((*ns, identifier[len(prefix) :]))
        return sorted(out)
