"""The main job: an event pipeline on local Spark, end to end (``python -m frazil demo``).

On the embedded default (a local warehouse directory, the SQLite catalog, Spark ``local[2]``) it:

1. creates namespace ``demo`` and a v3 table ``demo.events`` partitioned by ``day(ts)`` and
   ``bucket(16, user_id)``, with merge-on-read deletes (deletion vectors);
2. generates an event stream in Spark (``spark.range`` and column expressions, no Python per
   row): skewed user ids, two weeks of timestamps, event types, decimal amounts, countries and a
   nullable device column, deterministic for a seed;
3. writes it with :func:`frazil.spark.write` in time-ordered commits, two of them concurrently
   from two driver threads, so one of them retries its commit (counted from the
   ``frazil.table.transaction`` log and the attempt number in the snapshot's manifest list name);
4. tags the current snapshot, deletes the refunds of two countries (deletion vectors in Puffin
   files) and lists the DVs;
5. adds a column, switches the spec to ``hour(ts), bucket(4, user_id)`` (hourly partitions for
   fresh data, fewer buckets so their files stay large) and writes the newest day;
6. plans filtered scans and counts the manifests and data files they prune;
7. time-travels to the tag and to the first snapshot and compares counts;
8. reads the table with :func:`frazil.spark.read` and checks rows written - rows deleted = rows
   read, then prints a summary.

:func:`run` does it and returns a :class:`DemoSummary`; :func:`print_summary` prints that.
"""

from __future__ import annotations

from frazil.demo.pipeline import (
    BATCHES,
    DEFAULT_ROWS,
    DELETE_FILTER,
    EVOLVED_BATCH,
    QUICK_ROWS,
    TAG,
    DemoError,
    DemoOptions,
    DemoSummary,
    batch_rows,
    check_java,
    events,
    partition_spec,
    run,
    start_spark,
    table_schema,
)
from frazil.demo.report import print_summary

__all__ = [
    "BATCHES",
    "DEFAULT_ROWS",
    "DELETE_FILTER",
    "EVOLVED_BATCH",
    "QUICK_ROWS",
    "TAG",
    "DemoError",
    "DemoOptions",
    "DemoSummary",
    "batch_rows",
    "check_java",
    "events",
    "partition_spec",
    "print_summary",
    "run",
    "start_spark",
    "table_schema",
]
