"""Local Spark sessions for tests/spark (PySpark 3.5 in .venv, 4.x in .venv-spark4).

One session per test module: ``local[2]``, two shuffle partitions, no UI, UTC, and Python
workers from this interpreter's environment (where frazil is installed).
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest
from peers import import_peer, peer_missing

import_peer("pyspark")
import_peer("pandas", reason="PySpark's Arrow UDFs need pandas")


def make_session(app: str, **conf):
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        peer_missing("Java is not installed (Spark needs it)")
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master("local[2]")
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        # pyarrow writes proleptic Gregorian dates and timestamps; read them as they are
        .config("spark.sql.parquet.datetimeRebaseModeInRead", "CORRECTED")
        .config("spark.sql.parquet.int96RebaseModeInRead", "CORRECTED")
    )
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@pytest.fixture(scope="module")
def spark(request):
    session = make_session(f"frazil-{request.module.__name__}")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def spark_factory():
    """``make_session`` for modules that need their own configuration (one session each)."""
    return make_session


def _pyspark_major() -> int:
    import pyspark

    return int(pyspark.__version__.split(".")[0])


# The Python data source API (frazil's "frazil" format) exists from PySpark 4.0 on.
collect_ignore = (
    []
    if _pyspark_major() >= 4
    else [
        "test_datasource.py",
        "test_datasource_write.py",
        "test_encryption_datasource.py",
        "test_streaming.py",
    ]
)
