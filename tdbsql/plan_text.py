"""EXPLAIN text: the optimized logical query, the operator tree, and per scan the pruning
funnel; EXPLAIN ANALYZE adds rows, time, tiles and bytes per operator from the run's profile."""

from __future__ import annotations

from sqlglot import exp, planner

from .planner.conjuncts import conjuncts
from .planner.limit_percent import PercentLimit
from .planner.pushdown import scan_filters


def explain_text(query, runner, analyze: bool) -> str:
    lines = ["Logical plan:"]
    lines += ["  " + line for line in query.expression.sql(dialect="duckdb", pretty=True)
              .splitlines()]
    for index, entry in enumerate(query.correlated):  # planner/correlated.py
        lines.append(f"Correlated subquery {index} ({entry.kind}), run once for the distinct "
                     "outer values __outer.c0, ...:")
        lines += ["  " + line for line in entry.query.sql(dialect="duckdb", pretty=True)
                  .splitlines()]
    runs: dict[int, list[dict]] = {}
    for entry in runner.profile if analyze else []:
        runs.setdefault(id(entry["step"]), []).append(entry)
    profile = {step_id: _merged(entries) for step_id, entries in runs.items()}
    for step_id, order in runner.join_orders.items():
        if step_id in profile:
            profile[step_id]["order"] = order
    pushed = scan_filters(query.plan)
    lines.append("Operators:")
    _tree(query.plan.root, 1, lines, profile, pushed, set())
    return "\n".join(lines)


def _tree(step, depth: int, lines: list[str], profile: dict, pushed: dict, seen: set) -> None:
    pad = "  " * depth
    entry = profile.get(id(step))
    head = f"{pad}{_label(step)}"
    if entry is not None and entry.get("streamed"):  # ran tile by tile inside its consumer
        head += f"  [rows={entry['rows']:,} streamed]"
    elif entry is not None:
        head += f"  [rows={entry['rows']:,} time={entry['seconds'] * 1000:.1f} ms]"
    lines.append(head)
    if entry is not None and "runs" in entry:  # a CTE's steps run for two deferred readers
        lines.append(f"{pad}    Ran {len(entry['runs'])} times (rows and time summed): "
                     + " + ".join(f"{run['rows']:,}" for run in entry["runs"]) + " rows")
    if entry is not None and "keys" in entry:  # ran inside its join, for the keys joined
        lines.append(f"{pad}    Keys from the join: {entry['keys']}")
    if entry is not None and "how" in entry:
        lines.append(f"{pad}    {entry['how']}")
    if entry is not None and len(entry.get("order", ())) > 1:  # as run, not as planned
        lines.append(f"{pad}    Joined in this order: " + ", ".join(
            f"{name} ({rows:,} rows)" for name, rows in entry["order"]))
    for detail in _details(step, pushed):
        lines.append(f"{pad}    {detail}")
    if entry is not None and "scan" in entry:
        lines += [f"{pad}    {text}" for text in funnel_lines(entry["scan"])]
    for number, run in enumerate(entry.get("runs", []) if entry is not None else [], 1):
        if "scan" in run:
            lines.append(f"{pad}    Run {number}:")
            lines += [f"{pad}      {text}" for text in funnel_lines(run["scan"])]
    if id(step) in seen:
        return
    seen.add(id(step))
    for dep in sorted(step.dependencies, key=lambda s: s.name or ""):
        _tree(dep, depth + 1, lines, profile, pushed, seen)


def _merged(entries: list[dict]) -> dict:
    """A step's profile entry over its runs: the one, or rows and time summed with each
    run's entry under ``runs`` (keys of the join as text either way)."""
    if len(entries) == 1:
        entry = dict(entries[0])
        if "keys" in entry:
            entry["keys"] = f"{entry['keys']:,}"
        return entry
    merged = {"step": entries[0]["step"], "rows": sum(e["rows"] for e in entries),
              "seconds": sum(e["seconds"] for e in entries), "runs": entries,
              "streamed": all(e["streamed"] for e in entries)}
    if any("keys" in e for e in entries):
        merged["keys"] = " + ".join(f"{e['keys']:,}" if "keys" in e else "all"
                                    for e in entries)
    return merged


def _label(step) -> str:
    if isinstance(step, planner.Scan):
        source = step.source.sql(dialect="duckdb") if step.source is not None else "(one row)"
        return f"{'Window' if _windows(step) else 'Scan'} {step.name}: {source}"
    if isinstance(step, planner.Join) and not step.joins:  # sqlglot's step for WHERE alone
        return f"{'Filter' if step.condition is not None else 'Project'} {step.name}"
    if isinstance(step, planner.SetOperation):
        return f"{step.op.__name__}{' DISTINCT' if step.distinct else ' ALL'} {step.name}"
    return f"{step.type_name} {step.name}"


def _conjunct_text(node) -> str:
    """A conjunct as SQL, parenthesized when it is an OR (it is listed among ANDs)."""
    text = node.sql(dialect="duckdb")
    return f"({text})" if isinstance(node, exp.Or) else text


def _details(step, pushed: dict) -> list[str]:
    out = []
    if isinstance(step, planner.Scan) and id(step) in pushed:
        out.append("Pushed: " + " AND ".join(_conjunct_text(p) for p in pushed[id(step)]))
    if isinstance(step, planner.Join):
        for name, join in step.joins.items():
            keys = ", ".join(f"{a.sql()} = {b.sql()}" for a, b in
                             zip(join.get("source_key") or [], join.get("join_key") or []))
            rest = [c for c in conjuncts(join.get("condition")) if not isinstance(c, exp.Boolean)]
            out.append(f"{(join.get('side') or 'INNER')} JOIN {name}"
                       + (f" ON {keys}" if keys else " (no keys)")
                       + "".join(f" AND {_conjunct_text(c)}" for c in rest))
    if isinstance(step, planner.Aggregate):
        if step.group:
            out.append("Group: " + ", ".join(e.sql() for e in step.group.values()))
        if step.aggregations:
            out.append("Aggregates: " + ", ".join(e.sql() for e in step.aggregations))
    if isinstance(step, planner.Sort):
        out.append("Key: " + ", ".join(e.sql() for e in step.key))
    if _windows(step):
        out += [f"Function: {w.sql(dialect='duckdb')}" for w in _windows(step)]
    if step.condition is not None and not (isinstance(step.condition, exp.Boolean)):
        out.append(f"Filter: {step.condition.sql(dialect='duckdb')}")
    if step.limit != float("inf"):
        out.append(f"Limit: {step.limit if isinstance(step.limit, PercentLimit) else int(step.limit)}")
    if step.offset:
        out.append(f"Offset: {step.offset}")
    return out


def _windows(step) -> list[exp.Window]:
    """The window calls a step computes (``planner.windows`` gives them a step of their
    own)."""
    return [p.unalias() for p in step.projections if isinstance(p.unalias(), exp.Window)]


def funnel_lines(stats: dict) -> list[str]:
    """The pruning funnel of one scan from its stats (keys documented in ``engine.scan``)."""
    get = stats.get
    out = [f"Fragments: {get('fragments_total', 0)} -> {get('fragments_after_timestamps', 0)} "
           f"(timestamps) -> {get('fragments_after_domain', 0)} (non-empty domain)",
           f"Tiles: {get('tiles_total', 0)} -> {get('tiles_after_mbr', 0)} (MBRs / space tiles)"
           f" -> {get('tiles_after_zonemap', 0)} (zone maps)"
           + (f" -> {get('tiles_after_sample')} (sample)" if "tiles_after_sample" in stats
              else "")
           + (f" -> {get('tiles_after_keys')} (join keys)" if "tiles_after_keys" in stats
              else "")
           + f", {get('tiles_always', 0)} ALWAYS"
           + (f", {get('tiles_from_metadata')} answered from metadata"
              if get("tiles_from_metadata") else "")]
    if "bytes_read" in stats:
        out.append(f"Bytes: {get('bytes_read', 0):,} read, {get('bytes_decoded', 0):,} decoded; "
                   f"{get('rows', 0):,} cells"
                   + (f"; newest-wins merge in {get('merge_slabs')} slabs"
                      if get("merge_slabs") else ""))
    if "tiles_skipped_by_top" in stats:  # engine.top_scan
        out.append(f"ORDER BY ... LIMIT: {get('tiles_skipped_by_top'):,} tiles left unread, "
                   f"their bounds worse than the rows read")
    if get("tiles_summed"):  # engine.scan_sums
        out.append(f"Summed in the scan: {get('tiles_summed'):,} tiles"
                   + (f", {get('tiles_summed_coded'):,} of them by their dictionary codes"
                      if get("tiles_summed_coded") else ""))
    return out
