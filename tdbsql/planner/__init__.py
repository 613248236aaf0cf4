"""SQL -> plan: ``parse`` (sqlglot, FOR SYSTEM_TIME), ``build`` (optimizer + planner steps),
``pushdown`` / ``conjuncts`` (predicates into scans), ``ranges`` (dimension ranges), and the
pruning funnel: ``pruning`` (fragments, MBRs, space tiles), ``zonemap`` (attribute tile
min/max/null counts), ``metadata_aggregates`` (which tiles' metadata answers an aggregate).
Never imports ``tdbsql.engine``."""
