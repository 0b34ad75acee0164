"""Writing to a table: the data file writer (partitioning, rolling files, Parquet metrics),
Arrow schema conformance, row-level changes (overwrite, delete, upsert), adding existing files
and maintenance (compaction). Each operation stages a snapshot producer on a transaction."""
