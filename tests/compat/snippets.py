"""PyIceberg's documented snippets (mkdocs/docs/api.md and friends), each written once against a
namespace of modules so it runs with ``pyiceberg`` imports and with ``frazil`` imports.

A snippet takes ``m`` (the modules of one package, see :func:`modules`) and a catalog, and
returns plain data (rows, printed schemas, snapshot operations, summary counts) that the test
compares between the two runs. Add a snippet by adding a function to ``SNIPPETS``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from datetime import datetime, timezone
from types import SimpleNamespace
from typing import Any

import pyarrow as pa

MODULES = (
    "catalog",
    "catalog.sql",
    "exceptions",
    "expressions",
    "partitioning",
    "schema",
    "table",
    "table.name_mapping",
    "table.sorting",
    "transforms",
    "types",
)


def modules(pkg: str) -> SimpleNamespace:
    """``m.catalog``, ``m.catalog_sql``, ``m.types``... of ``pyiceberg`` or ``frazil``."""
    return SimpleNamespace(
        **{name.replace(".", "_"): importlib.import_module(f"{pkg}.{name}") for name in MODULES}
    )


# ---- normalizing results so the two packages compare


def rows(table: pa.Table, *keys: str) -> list[dict[str, Any]]:
    out = table.to_pylist()
    return sorted(out, key=lambda r: tuple(str(r[k]) for k in (keys or sorted(r))))


def op(snapshot: Any) -> str:
    o = snapshot.summary.operation
    return str(getattr(o, "value", o))


SUMMARY_KEYS = ("added-records", "deleted-records", "total-records")


def summary(snapshot: Any) -> dict[str, str]:
    s = snapshot.summary
    # PyIceberg's Summary answers None for a missing key
    return {k: s[k] for k in SUMMARY_KEYS if k in s and s[k] is not None}


def history(table: Any) -> list[tuple[str, dict[str, str]]]:
    return [(op(s), summary(s)) for s in table.snapshots()]


def arrow_schema(table: pa.Table) -> list[tuple[str, str]]:
    return [(f.name, str(f.type)) for f in table.schema]


def arrow_fields(schema: pa.Schema) -> list[Any]:
    """Every field, nested ones included: path, type, nullability and metadata (unordered)."""
    out: list[Any] = []

    def visit(f: pa.Field, path: str) -> None:
        out.append((path, str(f.type), f.nullable, sorted((f.metadata or {}).items())))
        t = f.type
        children = [t.field(i) for i in range(t.num_fields)] if t.num_fields else []
        for c in children:
            visit(c, f"{path}.{c.name}")

    for f in schema:
        visit(f, f.name)
    return out


# ---- the documented inputs

CITIES = pa.Table.from_pylist(
    [
        {"city": "Amsterdam", "lat": 52.371807, "long": 4.896029},
        {"city": "San Francisco", "lat": 37.773972, "long": -122.431297},
        {"city": "Drachten", "lat": 53.11254, "long": 6.0989},
        {"city": "Paris", "lat": 48.864716, "long": 2.349014},
    ]
)


def docs_schema(m: SimpleNamespace) -> Any:
    """api.md's "Create a table" schema (nested struct included)."""
    t = m.types
    return m.schema.Schema(
        t.NestedField(field_id=1, name="datetime", field_type=t.TimestampType(), required=True),
        t.NestedField(field_id=2, name="symbol", field_type=t.StringType(), required=True),
        t.NestedField(field_id=3, name="bid", field_type=t.FloatType(), required=False),
        t.NestedField(field_id=4, name="ask", field_type=t.DoubleType(), required=False),
        t.NestedField(
            field_id=5,
            name="details",
            field_type=t.StructType(
                t.NestedField(
                    field_id=4, name="created_by", field_type=t.StringType(), required=False
                ),
            ),
            required=False,
        ),
    )


# ---- snippets


def create_namespace_and_table(m: SimpleNamespace, catalog: Any) -> Any:
    catalog.create_namespace("docs_example")
    schema = docs_schema(m)
    partition_spec = m.partitioning.PartitionSpec(
        m.partitioning.PartitionField(
            source_id=1, field_id=1000, transform=m.transforms.DayTransform(), name="datetime_day"
        )
    )
    sort_order = m.table_sorting.SortOrder(
        m.table_sorting.SortField(source_id=2, transform=m.transforms.IdentityTransform())
    )
    table = catalog.create_table(
        identifier="docs_example.bids",
        schema=schema,
        location=None,
        partition_spec=partition_spec,
        sort_order=sort_order,
    )
    loaded = catalog.load_table(("docs_example", "bids"))
    try:
        catalog.load_table("docs_example.missing")
        missing = "no error"
    except m.exceptions.NoSuchTableError:
        missing = "NoSuchTableError"
    return {
        "namespaces": catalog.list_namespaces(),
        "tables": catalog.list_tables("docs_example"),
        "name": table.name(),
        "schema": str(loaded.schema()),
        "schema_as_arrow": str(loaded.schema().as_arrow()),
        "spec": [(f.source_id, str(f.transform), f.name) for f in loaded.spec().fields],
        "sort": [
            (f.source_id, str(f.transform), str(f.direction.value))
            for f in loaded.sort_order().fields
        ],
        "missing": missing,
        "last_sequence_number": loaded.last_sequence_number,
    }


def transform_strings(m: SimpleNamespace, catalog: Any) -> Any:
    """A transform given as a string is parsed when the field is built."""
    field = m.partitioning.PartitionField(
        source_id=1, field_id=1000, transform="bucket[16]", name="b"
    )
    return {
        "transform": repr(field.transform),
        "bucket": m.transforms.BucketTransform(num_buckets=16).num_buckets,
        "truncate": m.transforms.TruncateTransform(width=4).width,
        "equal": field.transform == m.transforms.BucketTransform(16),
        "names": [
            str(c())
            for c in (
                m.transforms.IdentityTransform,
                m.transforms.YearTransform,
                m.transforms.MonthTransform,
                m.transforms.DayTransform,
                m.transforms.HourTransform,
                m.transforms.VoidTransform,
            )
        ],
    }


def _cities_table(catalog: Any, name: str = "default.cities") -> Any:
    catalog.create_namespace("default")
    return catalog.create_table(name, schema=CITIES.schema)


def append_overwrite_delete(m: SimpleNamespace, catalog: Any) -> Any:
    tbl = _cities_table(catalog)
    tbl.append(CITIES)
    after_append = rows(tbl.scan().to_arrow(), "city")
    df = pa.Table.from_pylist([{"city": "New York", "lat": 40.7128, "long": -74.0060}])
    tbl.overwrite(df, overwrite_filter=m.expressions.EqualTo("city", "Paris"))
    after_overwrite = rows(tbl.scan().to_arrow(), "city")
    tbl.delete(delete_filter="city == 'Drachten'")
    return {
        "append": after_append,
        "overwrite": after_overwrite,
        "delete": rows(tbl.scan().to_arrow(), "city"),
        "to_arrow_types": arrow_schema(tbl.scan().to_arrow()),
        "history": history(tbl),
        "first_and_last": [history(tbl)[0], history(tbl)[-1]],
    }


def dynamic_partition_overwrite(m: SimpleNamespace, catalog: Any) -> Any:
    catalog.create_namespace("default")
    data = pa.Table.from_pylist(
        [
            {"city": "Amsterdam", "lat": 52.371807, "long": 4.896029, "index": 1},
            {"city": "San Francisco", "lat": 37.773972, "long": -122.431297, "index": 1},
            {"city": "Drachten", "lat": 53.11254, "long": 6.0989, "index": 2},
            {"city": "Paris", "lat": -48.864716, "long": -2.349014, "index": 2},
        ]
    )
    tbl = catalog.create_table("default.cities_partitioned", schema=data.schema)
    with tbl.update_spec() as spec:
        spec.add_identity("city")
    tbl.append(data)
    fix = pa.Table.from_pylist([{"city": "Paris", "lat": 48.864716, "long": 2.349014, "index": 2}])
    tbl.dynamic_partition_overwrite(fix)
    return {
        "rows": rows(tbl.scan().to_arrow(), "city"),
        "total": tbl.current_snapshot().summary["total-records"],
    }


def row_filters(m: SimpleNamespace, catalog: Any) -> Any:
    tbl = _cities_table(catalog)
    tbl.append(CITIES)
    e = m.expressions
    out = {}
    for label, f in {
        "string_eq": "city = 'Amsterdam'",
        "string_and": "lat >= 50.0 AND long > 5.0",
        "string_in": "city IN ('Paris', 'Drachten')",
        "string_not_null": "city IS NOT NULL AND NOT city LIKE 'San%'",
        "dsl_ge": e.GreaterThanOrEqual("lat", 50.0),
        "dsl_and_or": e.Or(
            e.And(e.LessThan("lat", 50.0), e.GreaterThan("long", 0.0)),
            e.EqualTo("city", "Drachten"),
        ),
        "dsl_in_not": e.Not(e.In("city", {"Amsterdam", "Paris"})),
        "dsl_starts": e.StartsWith("city", "San"),
        "dsl_null": e.IsNull("city"),
    }.items():
        out[label] = rows(tbl.scan(row_filter=f, selected_fields=("city",)).to_arrow(), "city")
    out["limit"] = tbl.scan(limit=2).to_arrow().num_rows
    return out


def scans(m: SimpleNamespace, catalog: Any) -> Any:
    tbl = _cities_table(catalog)
    tbl.append(CITIES)
    scan = tbl.scan(
        row_filter=m.expressions.GreaterThanOrEqual("lat", 40.0), selected_fields=("city", "lat")
    )
    con = scan.to_duckdb(table_name="distant_cities")
    reader = scan.to_arrow_batch_reader()
    return {
        "arrow": rows(scan.to_arrow(), "city"),
        "pandas": sorted(scan.to_pandas()["city"].tolist()),
        "duckdb": con.execute("SELECT city FROM distant_cities ORDER BY city").fetchall(),
        "polars": sorted(scan.to_polars()["city"].to_list()),
        "polars_lazy": sorted(
            tbl.to_polars().filter(__import__("polars").col("lat") > 50).collect()["city"].to_list()
        ),
        "batch_reader": sorted(reader.read_all().column("city").to_pylist()),
        "count": scan.count(),
    }


def schema_evolution(m: SimpleNamespace, catalog: Any) -> Any:
    tbl = _cities_table(catalog)
    t = m.types
    with tbl.update_schema() as update:
        update.add_column("retries", t.IntegerType(), "Number of retries to place the bid")
        update.add_column(("details",), t.StructType())
    with tbl.update_schema() as update:
        update.add_column(("details", "confirmed_by"), t.StringType(), "Name of the exchange")
    with tbl.update_schema() as update:
        update.rename_column("retries", "num_retries")
        update.rename_column("details.confirmed_by", "exchange")
    with tbl.update_schema() as update:
        update.move_first("city")
        update.move_after("num_retries", "lat")
    with tbl.update_schema() as update:
        update.update_column("num_retries", field_type=t.LongType(), doc="retries")
    new = pa.schema(
        [
            pa.field("city", pa.string()),
            pa.field("lat", pa.float64()),
            pa.field("long", pa.float64()),
            pa.field("population", pa.int32()),
        ]
    )
    with tbl.update_schema() as update:
        update.union_by_name(new)
    with tbl.update_schema() as update:
        update.delete_column("details")
    return {"schema": str(tbl.schema()), "ids": sorted(tbl.schemas())}


def partition_evolution(m: SimpleNamespace, catalog: Any) -> Any:
    catalog.create_namespace("default")
    tbl = catalog.create_table("default.evolve", schema=docs_schema(m))
    tr = m.transforms
    with tbl.update_spec() as update:
        update.add_field("symbol", tr.BucketTransform(16), "bucketed_symbol")
        update.add_field("datetime", tr.DayTransform(), "day_ts")
        update.add_identity("ask")
    with tbl.update_spec() as update:
        update.remove_field("bucketed_symbol")
        update.rename_field("day_ts", "ts_by_day")
    return {
        "spec": [(f.source_id, f.field_id, str(f.transform), f.name) for f in tbl.spec().fields],
        "specs": sorted(tbl.specs()),
    }


def sort_order_update(m: SimpleNamespace, catalog: Any) -> Any:
    catalog.create_namespace("default")
    tbl = catalog.create_table("default.sorted", schema=docs_schema(m))
    s = m.table_sorting
    with tbl.update_sort_order() as update:
        update.desc("bid", m.transforms.IdentityTransform(), s.NullOrder.NULLS_FIRST)
        update.asc("datetime", m.transforms.DayTransform())
    return [
        (f.source_id, str(f.transform), f.direction.value, f.null_order.value)
        for f in tbl.sort_order().fields
    ]


def table_properties(m: SimpleNamespace, catalog: Any) -> Any:
    tbl = _cities_table(catalog)
    with tbl.transaction() as transaction:
        transaction.set_properties(abc="def")
    first = tbl.properties.get("abc")
    with tbl.transaction() as transaction:
        transaction.remove_properties("abc")
    return {"set": first, "removed": "abc" in tbl.properties}


def snapshots_and_refs(m: SimpleNamespace, catalog: Any) -> Any:
    tbl = _cities_table(catalog)
    tbl.append(CITIES.slice(0, 2))
    first = tbl.current_snapshot().snapshot_id
    tbl.append(CITIES.slice(2))
    tbl.manage_snapshots().create_tag(first, "tag123").commit()
    tbl.manage_snapshots().create_branch(first, "branch123").commit()
    at_tag = tbl.scan(snapshot_id=tbl.snapshot_by_name("tag123").snapshot_id).to_arrow()
    tbl.manage_snapshots().remove_tag("tag123").commit()
    return {
        "refs": sorted(tbl.refs()),
        "ops": [op(s) for s in tbl.snapshots()],
        "summaries": [summary(s) for s in tbl.snapshots()],
        "at_tag": rows(at_tag, "city"),
        "history_len": len(tbl.history()),
        "last_sequence_number": tbl.last_sequence_number,
    }


def expire_snapshots(m: SimpleNamespace, catalog: Any) -> Any:
    tbl = _cities_table(catalog)
    for i in range(3):
        tbl.append(CITIES.slice(i, 1))
    ids = [s.snapshot_id for s in tbl.snapshots()]
    tbl.maintenance.expire_snapshots().by_id(ids[0]).commit()
    after_one = len(tbl.snapshots())
    tbl.maintenance.expire_snapshots().older_than(datetime.now(timezone.utc)).commit()
    return {
        "after_by_id": after_one,
        "after_older_than": [s.snapshot_id == ids[-1] for s in tbl.snapshots()],
        "rows": rows(tbl.scan().to_arrow(), "city"),
    }


def name_mapping(m: SimpleNamespace, catalog: Any) -> Any:
    import pyarrow.parquet as pq

    tbl = _cities_table(catalog)
    before = tbl.name_mapping()
    # api.md's add_files: a file without field ids; the table gets a name mapping
    path = f"{tbl.location()}/data/external.parquet"
    local = path.removeprefix("file://")
    os.makedirs(os.path.dirname(local), exist_ok=True)
    pq.write_table(CITIES, local)
    tbl.add_files(file_paths=[path])
    mapping = tbl.name_mapping()
    created = m.table_name_mapping.create_mapping_from_schema(tbl.schema())
    return {
        "before": before,
        "rows": rows(tbl.scan().to_arrow(), "city"),
        "fields": [(f.field_id, list(f.names)) for f in mapping],
        "created_equal": [(f.field_id, list(f.names)) for f in created]
        == [(f.field_id, list(f.names)) for f in mapping],
    }


def static_table(m: SimpleNamespace, catalog: Any) -> Any:
    tbl = _cities_table(catalog)
    tbl.append(CITIES)
    static = m.table.StaticTable.from_metadata(tbl.metadata_location)
    return {
        "rows": rows(static.scan().to_arrow(), "city"),
        "schema": str(static.schema()),
        "snapshots": len(static.snapshots()),
    }


def print_nested_schema(m: SimpleNamespace, catalog: Any) -> Any:
    t = m.types
    schema = m.schema.Schema(
        t.NestedField(1, "id", t.LongType(), required=True, doc="the key"),
        t.NestedField(
            2,
            "loc",
            t.StructType(
                t.NestedField(3, "x", t.DecimalType(10, 2), required=True),
                t.NestedField(4, "ts", t.TimestamptzType(), required=False),
            ),
            required=False,
        ),
        t.NestedField(
            5, "tags", t.ListType(6, t.StringType(), element_required=True), required=False
        ),
        t.NestedField(
            7,
            "attrs",
            t.MapType(8, t.StringType(), 9, t.FixedType(4), value_required=False),
            required=True,
        ),
        t.NestedField(10, "u", t.UUIDType(), required=False),
        identifier_field_ids=[1],
    )
    return {"str": str(schema), "arrow": arrow_fields(schema.as_arrow())}


SNIPPETS: dict[str, Callable[[SimpleNamespace, Any], Any]] = {
    f.__name__: f
    for f in (
        create_namespace_and_table,
        transform_strings,
        append_overwrite_delete,
        dynamic_partition_overwrite,
        row_filters,
        scans,
        schema_evolution,
        partition_evolution,
        sort_order_update,
        table_properties,
        snapshots_and_refs,
        expire_snapshots,
        name_mapping,
        static_table,
        print_nested_schema,
    )
}
