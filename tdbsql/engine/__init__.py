"""Physical execution: tiles -> columns -> Arrow, and the operators over them.

Scanning: ``scan`` (entry, funnel counters), ``sparse_scan`` / ``dense_scan`` (TileDB's read
semantics), ``column`` (raw cells), ``fill``, ``arrow_convert`` / ``fields`` (cells -> Arrow),
``parallel`` (the tile-decoding thread pool).

Running a plan: ``runner`` drives the steps over ``frame``s; ``scan_step``, ``join_step``
(+ ``hash_join``, ``hash_table``, ``range_join``), ``aggregate_step`` (+ ``grouping``,
``partial_aggregate``, ``key_partitions``, ``dense_groups``, ``ordered_aggregates``,
``string_agg``), ``join_aggregate`` (an
aggregate per left row of a non-equi join, by blocks of pairs, or from running states:
``range_aggregate``), ``sort_step``,
``setop_step``, ``project``, ``subqueries``; ``metadata_answer`` / ``metadata_residual``
answer count/sum/min/max from tile metadata.

Expressions: ``evaluate`` (the evaluator, + ``column_refs``), ``functions`` (+
``functions_math``, ``functions_text``, ``functions_lists``), ``arithmetic``, ``datetime_ops``,
``list_ops`` (+ ``list_lambdas``, ``list_values``), ``value_types``.
"""
