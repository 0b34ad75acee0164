"""Hand-offs of a scan's Arrow output to other engines (DuckDB, Polars, Ray) and the choice of
Arrow string/binary/list widths.

frazil reads Iceberg ``string``/``binary``/``list`` as Arrow's 64-bit-offset ``large_*`` types
(no 2 GiB limit per column chunk, no copy when batches are concatenated). PyIceberg 0.12's
``to_arrow()`` returns the 32-bit ``string``/``binary``/``list`` instead (its batch reader and
``Schema.as_arrow()`` keep the large types). The scan option or table property
``pyarrow.use-large-types-on-read`` (``"true"`` by default) switches frazil's ``to_arrow`` and
batch readers to the 32-bit types when ``"false"``, for code that compares Arrow types exactly.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from frazil.exceptions import InvalidArgumentError

if TYPE_CHECKING:
    import duckdb
    import polars as pl

    from frazil.table.scan import DataScan

__all__ = ["LARGE_TYPES_PROPERTY", "use_large_types"]

LARGE_TYPES_PROPERTY = "pyarrow.use-large-types-on-read"


def one_chunk(table: pa.Table) -> pa.Table:
    """``table`` with each column in one chunk (itself when they are), for rows gathered by
    index more than once: Arrow's ``take`` over a column of several chunks (Arrow from DuckDB,
    Polars, a stream or a plan of many manifests) concatenates them all at each call."""
    if all(c.num_chunks <= 1 for c in table.columns):
        return table
    return table.combine_chunks()


def use_large_types(options: Mapping[str, str], properties: Mapping[str, str]) -> bool:
    """The scan option, else the table property, else ``True``."""
    value = options.get(LARGE_TYPES_PROPERTY, properties.get(LARGE_TYPES_PROPERTY, "true"))
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise InvalidArgumentError(f"{LARGE_TYPES_PROPERTY} must be true or false, got {value!r}")
    return text == "true"


def _widened(t: pa.DataType, large: bool) -> pa.DataType:
    """``t`` with strings, binaries and lists (nested ones too) in their 64-bit-offset
    ``large_*`` types (``large``) or their 32-bit twins."""
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pa.large_string() if large else pa.string()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return pa.large_binary() if large else pa.binary()
    if pa.types.is_large_list(t) or pa.types.is_list(t):
        value = _widened_field(t.value_field, large)
        return pa.large_list(value) if large else pa.list_(value)
    if pa.types.is_map(t):
        return pa.map_(
            _widened_field(t.key_field, large),
            _widened_field(t.item_field, large),
            keys_sorted=t.keys_sorted,
        )
    if pa.types.is_struct(t):
        return pa.struct([_widened_field(t.field(i), large) for i in range(t.num_fields)])
    return t


def _widened_field(f: pa.Field, large: bool) -> pa.Field:
    t = _widened(f.type, large)
    return f if t == f.type else f.with_type(t)


def large_field(f: pa.Field) -> pa.Field:
    """``f`` with every string, binary and list type in its ``large_*`` twin."""
    return _widened_field(f, True)


def large_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with every string, binary and list type in its ``large_*`` twin."""
    return pa.schema([large_field(f) for f in schema], metadata=schema.metadata)


def small_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with every ``large_*`` type replaced by its 32-bit-offset twin."""
    return pa.schema([_widened_field(f, False) for f in schema], metadata=schema.metadata)


def small_batches(reader: pa.RecordBatchReader, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    for batch in reader:
        yield batch.cast(schema)


def to_duckdb(
    scan: DataScan, table_name: str, connection: duckdb.DuckDBPyConnection | None = None
) -> duckdb.DuckDBPyConnection:
    """Registers the scan's rows as view ``table_name`` of ``connection`` (a new in-memory
    database when ``None``) and returns the connection."""
    import duckdb

    con = duckdb.connect(database=":memory:") if connection is None else connection
    con.register(table_name, scan.to_arrow())
    return con


def to_polars(scan: DataScan) -> pl.DataFrame:
    import polars as pl

    df = pl.from_arrow(scan.to_arrow())
    assert isinstance(df, pl.DataFrame)
    return df


def to_polars_lazy(scan: DataScan) -> pl.LazyFrame:
    """A LazyFrame whose source is this scan: Polars' projection and row limit become the
    scan's selected fields and limit; its predicate is applied to each batch."""
    import polars as pl
    from polars.io.plugins import register_io_source

    empty = pl.from_arrow(scan.arrow_schema().empty_table())
    assert isinstance(empty, pl.DataFrame)

    def source(
        with_columns: list[str] | None,
        predicate: pl.Expr | None,
        n_rows: int | None,
        batch_size: int | None,
    ) -> Iterator[pl.DataFrame]:
        narrowed = scan
        if with_columns is not None:
            narrowed = narrowed.select(*with_columns)
        # A predicate filters after reading, so a row limit cannot be pushed below it.
        if n_rows is not None and predicate is None:
            narrowed = narrowed._update(limit=n_rows)
        if batch_size is not None:
            narrowed = narrowed._update(options={**narrowed.options, "batch-size": str(batch_size)})
        remaining = n_rows
        for batch in narrowed.to_arrow_batch_reader():
            df = pl.from_arrow(batch)
            assert isinstance(df, pl.DataFrame)
            if predicate is not None:
                df = df.filter(predicate)
            if remaining is not None:
                df = df.head(remaining)
                remaining -= df.height
            yield df
            if remaining is not None and remaining <= 0:
                return

    return register_io_source(source, schema=empty.schema, explain_name="frazil")


def to_ray(scan: DataScan) -> Any:
    """A Ray Dataset of the scan's rows (Ray must be installed)."""
    import importlib

    try:
        ray_data = importlib.import_module("ray.data")  # optional, and without type stubs
    except ImportError:
        raise InvalidArgumentError(
            "to_ray needs Ray: pip install 'ray[data]' (or use to_arrow / to_polars)"
        ) from None
    return ray_data.from_arrow(scan.to_arrow())
