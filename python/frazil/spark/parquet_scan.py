"""Plain Parquet tasks read by Spark's own Parquet reader, in the JVM.

A plan whose tasks are whole Parquet data files, with no delete files and nothing left to
filter (every residual ``true``), asks nothing of a reader but the files' columns, matched by
field id. Spark's vectorized Parquet reader does that in the JVM when the read schema carries
the field ids (``parquet.field.id`` metadata, with ``spark.sql.parquet.fieldId.read.enabled``
set): no Python worker, no Arrow exchange, so the read costs what the Java reference's does
(PySpark's Python workers alone cost more on a 2-core machine than Java's whole read).

frazil still plans the scan: which files, at which snapshot, pruned by the filter. Everything
a Parquet reader would get wrong without Iceberg's rules sends the read to frazil's own reader
in the Python workers (:func:`refusal` says why): delete files, residual filters (Spark's
comparisons treat NaN and null differently from the expressions spec), metadata columns, name
mappings (files without field ids), type promotions and initial defaults (Spark would not
widen or fill them as Iceberg does), types Spark reads differently (uuid, nanosecond
timestamps, variant, geometry, unknown), encrypted files, locations outside the local file
system, and sessions that skip missing or corrupt files.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil.exceptions import FrazilIOError
from frazil.io import location_scheme
from frazil.metadata import TableMetadata
from frazil.schema import Schema
from frazil.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
)

__all__ = ["FIELD_ID_READ", "refusal", "spark_parquet_frame"]

log = logging.getLogger(__name__)

#: the session setting that makes Spark's Parquet reader match columns by field id
FIELD_ID_READ = "spark.sql.parquet.fieldId.read.enabled"
#: session settings under which Spark would skip files instead of failing, as Iceberg does
_SKIPPING = ("spark.sql.files.ignoreMissingFiles", "spark.sql.files.ignoreCorruptFiles")
_GLOB = re.compile(r"[{}\[\]*?\\]")  # Hadoop's glob characters (SparkHadoopUtil.isGlobPath)
_LISTING_THRESHOLD = "spark.sql.sources.parallelPartitionDiscovery.threshold"
_PLAIN = (
    BooleanType,
    IntegerType,
    LongType,
    FloatType,
    DoubleType,
    DecimalType,
    DateType,
    TimestampType,
    TimestamptzType,
    StringType,
    BinaryType,
    FixedType,
)
_LOCAL = ("", "file")


def _fields(schema: Schema) -> list[NestedField]:
    """Every field of ``schema``, nested ones too (list elements and map keys and values as
    the schema's own index names them)."""
    return [schema.find_field(i) for i in schema.field_ids]


def _schema_refusal(projection: Schema, metadata: TableMetadata) -> str | None:
    fields = _fields(projection)
    structs = [tuple(projection.fields)]
    structs += [f.field_type.fields for f in fields if isinstance(f.field_type, StructType)]
    for siblings in structs:
        names = [f.name.lower() for f in siblings]
        if len(set(names)) != len(names):
            # Spark's file sources refuse them unless spark.sql.caseSensitive is set
            return "column names differ only in case"
    for f in fields:
        t = f.field_type
        if not isinstance(t, (*_PLAIN, StructType, ListType, MapType)):
            return f"column {f.name!r} is of type {t}, which Spark's Parquet reader reads otherwise"
        if f.initial_default is not None:
            return f"column {f.name!r} has an initial default (for files written before it)"
    now = {f.field_id: f.field_type for f in fields}
    for old in metadata.schemas:
        for f in _fields(old):
            current = now.get(f.field_id)
            if isinstance(current, _PLAIN) and current != f.field_type:
                return f"field {f.field_id} was promoted from {f.field_type} to {current}"
    return None


def refusal(
    spark: Any,
    metadata: TableMetadata,
    projection: Schema,
    tasks: pa.Table,
    metadata_columns: list[str],
) -> str | None:
    """Why Spark's Parquet reader cannot read these planned ``tasks`` (a
    :class:`~frazil.table.scan.arrow_plan.ScanPlan`'s) as Iceberg would, or ``None`` when it can."""
    if metadata_columns:
        return f"metadata columns {metadata_columns} are selected"
    if metadata.name_mapping() is not None:
        return "the table has a name mapping (its files may lack field ids)"
    for key in _SKIPPING:
        if str(spark.conf.get(key, "false")).lower() == "true":
            return f"the session sets {key}, which would skip files Iceberg must read"
    why = _schema_refusal(projection, metadata)
    if why is not None:
        return why
    if not tasks.num_rows:
        return None
    formats = pc.unique(tasks.column("file_format")).to_pylist()
    if any(str(f).upper() != "PARQUET" for f in formats):
        return f"the plan has files of format {sorted(map(str, formats))}"
    if pc.any(pc.greater(pc.list_value_length(tasks.column("delete_file_references")), 0)).as_py():
        return "the plan has delete files"
    residuals = pc.unique(tasks.column("residual").cast(pa.string())).to_pylist()
    if residuals != ["true"]:
        return "rows must still pass a residual filter"
    if tasks.column("key_metadata").null_count != tasks.num_rows:
        return "the plan has encrypted files"
    paths = pc.unique(tasks.column("file_path")).to_pylist()
    if len(paths) != tasks.num_rows:
        return "the plan lists a file more than once (each listing is read)"
    if any(_GLOB.search(p) for p in paths):
        # Spark would expand the pattern and could read other files of the same name
        return "a file's location holds a glob character ({}[]*?\\)"
    schemes = {location_scheme(p) for p in paths}
    if not schemes <= set(_LOCAL):
        return f"the plan has files outside the local file system ({sorted(schemes - set(_LOCAL))})"
    return None


def _with_field_ids(spark_type: Any, iceberg_type: IcebergType) -> Any:
    """``spark_type`` (the Spark type frazil reads ``iceberg_type`` as) with each struct field
    carrying its Iceberg field id, as Spark's Parquet reader matches them."""
    from pyspark.sql import types as T

    if isinstance(iceberg_type, StructType):
        return T.StructType(
            [
                _with_field_id(sf, f)
                for sf, f in zip(spark_type.fields, iceberg_type.fields, strict=True)
            ]
        )
    if isinstance(iceberg_type, ListType):
        return T.ArrayType(
            _with_field_ids(spark_type.elementType, iceberg_type.element_type),
            spark_type.containsNull,
        )
    if isinstance(iceberg_type, MapType):
        return T.MapType(
            _with_field_ids(spark_type.keyType, iceberg_type.key_type),
            _with_field_ids(spark_type.valueType, iceberg_type.value_type),
            spark_type.valueContainsNull,
        )
    return spark_type


def _with_field_id(spark_field: Any, field: NestedField) -> Any:
    from pyspark.sql import types as T

    return T.StructField(
        spark_field.name,
        _with_field_ids(spark_field.dataType, field.field_type),
        spark_field.nullable,
        {**(spark_field.metadata or {}), "parquet.field.id": field.field_id},
    )


def spark_parquet_frame(
    spark: Any, tasks: pa.Table, projection: Schema, schema: Any, table_name: str
) -> Any:
    """The rows of ``tasks`` (files :func:`refusal` accepted) read by Spark's Parquet reader
    as ``schema`` (the Spark schema of ``projection``). Spark splits and packs the files as its
    ``spark.sql.files.*`` settings say (the same rules as Java's reader, by default). Spark
    looks the files up at once: one it cannot find is a
    :class:`~frazil.exceptions.FrazilIOError` naming the table, with Spark's error (which
    names the file) as its cause."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    if str(spark.conf.get(FIELD_ID_READ, "false")).lower() != "true":
        # Only reads whose schema carries field ids match by id: other reads are unchanged.
        log.info("setting %s for reads of Iceberg files by field id", FIELD_ID_READ)
        spark.conf.set(FIELD_ID_READ, "true")
    read_schema = _with_field_ids(schema, projection.as_struct())
    paths = tasks.column("file_path").to_pylist()  # distinct: refusal() checked
    reader = (
        spark.read.schema(read_schema)
        # Iceberg stores dates and timestamps in the proleptic Gregorian calendar
        .option("datetimeRebaseMode", "CORRECTED")
        .option("int96RebaseMode", "CORRECTED")
    )
    # The files are known: Spark looks each one up as the DataFrame is made, on the driver,
    # rather than in a Spark job (which it runs past this many paths, at some 0.5 s a job).
    old = spark.conf.get(_LISTING_THRESHOLD, None)
    spark.conf.set(_LISTING_THRESHOLD, str(max(len(paths) + 1, int(old or 0))))
    try:
        return _read_parquet(spark, reader, paths)
    except (PySparkException, Py4JError) as e:
        raise FrazilIOError(
            f"{table_name}: Spark's Parquet reader cannot open the planned data files: {e}"
        ) from e
    finally:
        if old is None:
            spark.conf.unset(_LISTING_THRESHOLD)
        else:
            spark.conf.set(_LISTING_THRESHOLD, old)


def _read_parquet(spark: Any, reader: Any, paths: list[str]) -> Any:
    """``reader.parquet(*paths)``, with the paths sent to the JVM as one string: PySpark sends
    a list one element per Py4J call (25 ms for 224 paths, a tenth of a Java read)."""
    if any("\x00" in p for p in paths):
        return reader.parquet(*paths)
    jvm = spark._jvm
    array = jvm.java.util.regex.Pattern.compile("\x00").split("\x00".join(paths))
    # DataFrameReader.parquet is Scala varargs with a Java overload taking the String[]
    return reader._df(reader._jreader.parquet(array))
