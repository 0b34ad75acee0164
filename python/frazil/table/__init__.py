"""Table changes: updates and requirements (``updates``), schema, partition spec and sort order
evolution (``update_schema``, ``update_spec``, ``sorting``)."""
