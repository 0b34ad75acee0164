"""Table maintenance, one module per action, each called by the table API
(``table.maintenance``, ``table.expire_snapshots()``, ...), the CLI (:mod:`frazil.cli`) and, run
on executors, Spark (:mod:`frazil.spark.maintenance`):

- :mod:`.expire_snapshots`: remove old snapshots and the files only they reached;
- :mod:`.orphan_files`: delete files under the table location that no metadata references;
- :mod:`.rewrite_data_files`: compaction (bin-pack or sort), deletes applied;
- :mod:`.rewrite_manifests`: regroup manifests by partition;
- :mod:`.rewrite_position_deletes`: merge position delete files and deletion vectors.
"""
