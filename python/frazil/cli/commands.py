"""PyIceberg's commands, with its arguments and output shapes (text and JSON): ``list``,
``describe``, ``schema``, ``spec``, ``uuid``, ``location``, ``create namespace``, ``drop``,
``rename``, ``properties get|set|remove`` and ``list-refs``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from frazil.cli.charts import bars, histogram_bins, human_bytes
from frazil.cli.output import field_text, shown_path, sort_order_text, spec_text
from frazil.exceptions import FrazilError, NoSuchNamespaceError, NoSuchTableError

# The catalog, table, demo and server packages are imported inside the commands that use them:
# ``frazil --help`` and argument errors answer without loading them.

if TYPE_CHECKING:
    from rich.console import RenderableType

    from frazil.catalog import Catalog
    from frazil.cli.context import Context
    from frazil.table import Table

__all__ = ["COMMANDS", "NoSuchPropertyError"]


class NoSuchPropertyError(FrazilError):
    """The property to get or remove is not set."""


def _identifier(text: str) -> tuple[str, ...]:
    from frazil.catalog import Catalog

    return tuple(Catalog.identifier_to_tuple(text))


def cmd_list(ctx: Context) -> None:
    catalog = ctx.catalog()
    parent = ctx.args.parent
    identifiers: list[tuple[str, ...]] = []
    if parent:
        identifiers = [tuple(i) for i in catalog.list_tables(parent)]
    if not identifiers:
        identifiers = [tuple(i) for i in catalog.list_namespaces(parent or ())]
    names = [".".join(i) for i in identifiers]
    if not names and not ctx.out.json:  # say so, rather than print a blank line
        ctx.out.note(_empty_listing(catalog, parent))
        return
    ctx.out.emit(names, lambda: ctx.out.grid([[n] for n in names]))


def _empty_listing(catalog: Catalog, parent: str | None) -> str:
    """Why ``list`` shows nothing, naming the catalog and where it lives (and, for a SQL
    database that holds other catalogs, their names: a different ``--catalog`` is the usual
    cause)."""
    from frazil.catalog.sql import SqlCatalog

    what = f"namespace {parent} holds no tables or namespaces" if parent else "no namespaces"
    where = f"catalog {catalog.name!r}"
    if isinstance(catalog, SqlCatalog):
        where += f" ({catalog.engine.url.render_as_string()})"
        others = [n for n in catalog.list_catalog_names() if n != catalog.name]
        if others and not parent:
            return (
                f"{where}: {what}; the database also holds catalog(s) "
                f"{', '.join(others)} (choose one with --catalog NAME)"
            )
    return f"{where}: {what}"


def data_file_sizes(table: Table) -> list[int]:
    snapshot = table.current_snapshot()
    if snapshot is None:
        return []
    files = table.inspect.data_files(snapshot.snapshot_id)
    sizes: list[int] = files.column("file_size_in_bytes").to_pylist()
    return sizes


def size_chart(bins: list[dict[str, int]]) -> RenderableType:
    rows = [
        (f"{human_bytes(b['lower'])} – {human_bytes(b['upper'])}", float(b["count"])) for b in bins
    ]
    return bars(rows, unit=" files") if rows else "no data files"


def _describe_table_text(ctx: Context, table: Table, bins: list[dict[str, int]]) -> Any:
    from rich.console import Group
    from rich.text import Text
    from rich.tree import Tree

    md = table.metadata
    interactive, location = ctx.out.interactive, table.location()

    def path(p: str | None) -> str:  # relative to the table location on a terminal
        return shown_path(p, location, interactive)

    schema_tree = Tree(f"Schema, id={md.current_schema_id}")
    for field in table.schema().fields:
        schema_tree.add(Text(field_text(field)))
    snapshot_tree = Tree("Snapshots")
    for s in md.snapshots:
        snapshot_tree.add(
            Text(f"Snapshot {s.snapshot_id}, schema {s.schema_id}: {path(s.manifest_list)}")
        )
    current = table.current_snapshot()
    current_text = "None"
    if current is not None:
        op = current.summary.get("operation", "unknown") if current.summary else "unknown"
        current_text = (
            f"{op}: id={current.snapshot_id}, parent_id={current.parent_snapshot_id}, "
            f"schema_id={current.schema_id}"
        )
    located: list[list[Any]] = [["Location", location]] if interactive else []
    grid = ctx.out.grid(
        [
            *located,
            ["Table format version", str(md.format_version)],
            ["Metadata location", path(table.metadata_location)],
            ["Table UUID", str(md.table_uuid)],
            ["Last Updated", str(md.last_updated_ms)],
            ["Partition spec", spec_text(table.spec())],
            ["Sort order", sort_order_text(table.sort_order())],
            ["Current schema", schema_tree],
            ["Current snapshot", current_text],
            ["Snapshots", snapshot_tree],
            ["Properties", ctx.out.grid(list(md.properties.items()))],
        ]
    )
    title = f"Data file sizes ({sum(b['count'] for b in bins)} files, current snapshot)"
    return Group(grid, "", Text(title, style="bold"), size_chart(bins))


def cmd_describe(ctx: Context) -> None:
    entity, text = ctx.args.entity, ctx.args.identifier
    ident = _identifier(text)
    catalog = ctx.catalog()
    shown = False
    if entity in ("namespace", "any") and ident:
        try:
            props = catalog.load_namespace_properties(ident)
        except NoSuchNamespaceError:
            if entity != "any" or len(ident) == 1:
                raise
        else:
            ctx.out.properties(props)
            shown = True
    if entity in ("table", "any") and len(ident) > 1:
        try:
            table = catalog.load_table(ident)
        except NoSuchTableError:
            if entity != "any":
                raise
        else:
            bins = histogram_bins(data_file_sizes(table))
            data = {
                "identifier": list(table.identifier),
                "metadata_location": table.metadata_location,
                "metadata": table.metadata.to_dict(),
                "data_file_sizes": bins,
            }
            ctx.out.emit(data, lambda: _describe_table_text(ctx, table, bins))
            shown = True
    if not shown:
        raise NoSuchTableError(f"Table or namespace does not exist: {text}")


def cmd_schema(ctx: Context) -> None:
    schema = ctx.table(ctx.args.identifier).schema()
    data = schema.to_json()
    data.setdefault("identifier-field-ids", [])  # optional in the spec; PyIceberg prints it
    ctx.out.emit(
        data,
        lambda: ctx.out.grid([[f.name, str(f.field_type), f.doc or ""] for f in schema.fields]),
    )


def cmd_spec(ctx: Context) -> None:
    spec = ctx.table(ctx.args.identifier).spec()
    ctx.out.emit(spec.to_json(), lambda: spec_text(spec))


def cmd_uuid(ctx: Context) -> None:
    value = ctx.table(ctx.args.identifier).metadata.table_uuid
    text = str(value) if value else "missing"
    ctx.out.emit({"uuid": text}, lambda: text)


def cmd_location(ctx: Context) -> None:
    ctx.out.message(ctx.table(ctx.args.identifier).location())


def cmd_create_namespace(ctx: Context) -> None:
    ctx.catalog().create_namespace(ctx.args.identifier)
    ctx.out.message(f"Created namespace: {ctx.args.identifier}")


def cmd_drop_table(ctx: Context) -> None:
    ident = ctx.args.identifier
    if ctx.args.purge:
        ctx.catalog().purge_table(ident)
    else:
        ctx.catalog().drop_table(ident)
    ctx.out.message(f"Dropped table: {ident}{' (purge requested)' if ctx.args.purge else ''}")


def cmd_drop_namespace(ctx: Context) -> None:
    ctx.catalog().drop_namespace(ctx.args.identifier)
    ctx.out.message(f"Dropped namespace: {ctx.args.identifier}")


def cmd_rename(ctx: Context) -> None:
    ctx.catalog().rename_table(ctx.args.from_identifier, ctx.args.to_identifier)
    ctx.out.message(f"Renamed table from {ctx.args.from_identifier} to {ctx.args.to_identifier}")


def _entity_properties(ctx: Context) -> dict[str, str]:
    if ctx.args.entity == "namespace":
        return dict(ctx.catalog().load_namespace_properties(_identifier(ctx.args.identifier)))
    return dict(ctx.table(ctx.args.identifier).properties)


def cmd_properties_get(ctx: Context) -> None:
    props = _entity_properties(ctx)
    name = ctx.args.property_name
    if not name:
        ctx.out.properties(props)
        return
    if name not in props:
        raise NoSuchPropertyError(
            f"Could not find property {name} on {ctx.args.entity} {ctx.args.identifier}"
        )
    ctx.out.message(props[name])


def cmd_properties_set(ctx: Context) -> None:
    ident, name, value = ctx.args.identifier, ctx.args.property_name, ctx.args.property_value
    if ctx.args.entity == "namespace":
        ctx.catalog().update_namespace_properties(ident, updates={name: value})
        ctx.out.message(f"Updated {name} on {ident}")
        return
    with ctx.table(ident).transaction() as tx:
        tx.set_properties({name: value})
    ctx.out.message(f"Set {name}={value} on {ident}")


def cmd_properties_remove(ctx: Context) -> None:
    ident, name = ctx.args.identifier, ctx.args.property_name
    if ctx.args.entity == "namespace":
        summary = ctx.catalog().update_namespace_properties(ident, removals={name})
        if list(summary.removed) != [name]:
            raise NoSuchPropertyError(f"Property {name} does not exist on {ident}")
    else:
        table = ctx.table(ident)
        if name not in table.properties:
            raise NoSuchPropertyError(f"Property {name} does not exist on {ident}")
        with table.transaction() as tx:
            tx.remove_properties(name)
    ctx.out.message(f"Property {name} removed from {ident}")


def cmd_list_refs(ctx: Context) -> None:
    from frazil.table.maintenance.expire_snapshots import (
        MAX_SNAPSHOT_AGE_MS,
        MAX_SNAPSHOT_AGE_MS_DEFAULT,
        MIN_SNAPSHOTS_TO_KEEP,
        MIN_SNAPSHOTS_TO_KEEP_DEFAULT,
    )

    table = ctx.table(ctx.args.identifier)
    kind = (ctx.args.type or "").lower()
    if kind and kind not in ("branch", "tag"):
        raise FrazilError(f"Type must be either branch or tag, got: {kind}")
    props = table.properties
    rows: list[dict[str, Any]] = []
    for name, ref in table.refs().items():
        ref_type = str(ref.snapshot_ref_type)
        if kind and ref_type != kind:
            continue
        row: dict[str, Any] = {"name": name, "type": ref_type}
        if ref_type == "branch":
            keep = ref.min_snapshots_to_keep or props.get(
                MIN_SNAPSHOTS_TO_KEEP, MIN_SNAPSHOTS_TO_KEEP_DEFAULT
            )
            age = ref.max_snapshot_age_ms or props.get(
                MAX_SNAPSHOT_AGE_MS, MAX_SNAPSHOT_AGE_MS_DEFAULT
            )
            row["min_snapshots_to_keep"], row["max_snapshot_age_ms"] = str(keep), str(age)
        else:
            row["min_snapshots_to_keep"] = row["max_snapshot_age_ms"] = "N/A"
        row["max_ref_age_ms"] = str(ref.max_ref_age_ms) if ref.max_ref_age_ms else "forever"
        rows.append(row)

    def text() -> RenderableType:
        from rich.table import Table as RichTable

        out = RichTable(title="Snapshot Refs")
        for column in ("Ref", "Type", "Max ref age ms", "Min snapshots to keep"):
            out.add_column(column)
        out.add_column("Max snapshot age ms")
        for r in rows:
            out.add_row(
                r["name"],
                r["type"],
                r["max_ref_age_ms"],
                r["min_snapshots_to_keep"],
                r["max_snapshot_age_ms"],
            )
        return out

    ctx.out.emit(rows, text)


COMMANDS = {
    "list": cmd_list,
    "describe": cmd_describe,
    "schema": cmd_schema,
    "spec": cmd_spec,
    "uuid": cmd_uuid,
    "location": cmd_location,
    "create namespace": cmd_create_namespace,
    "drop table": cmd_drop_table,
    "drop namespace": cmd_drop_namespace,
    "rename": cmd_rename,
    "properties get": cmd_properties_get,
    "properties set": cmd_properties_set,
    "properties remove": cmd_properties_remove,
    "list-refs": cmd_list_refs,
}
