"""SQL text -> an optimized, fully qualified sqlglot tree -> a DAG of logical steps.

sqlglot's optimizer does the relational rewrites a planner needs and that are easy to get subtly
wrong: qualifying every column with its table, expanding ``*``, folding constants, pushing
predicates and projections down, merging and eliminating subqueries, and *decorrelating*
``EXISTS`` / ``IN`` / scalar subqueries into joins over grouped CTEs.  Its ``planner.Plan`` turns
the result into steps (Scan, Join, Aggregate, Sort, SetOperation) that ``engine.runner`` executes
column-at-a-time.  What is ours is the catalog (tables are TileDB arrays or Arrow tables), the
checks that turn a wrong name into an underlined ``SqlError``, and the column usage per table
alias that drives projection pruning.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from sqlglot import exp, planner
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer import RULES, optimize
from sqlglot.optimizer.eliminate_ctes import eliminate_ctes
from sqlglot.optimizer.eliminate_subqueries import eliminate_subqueries
from sqlglot.optimizer.pushdown_projections import pushdown_projections
from sqlglot.optimizer.scope import find_all_in_scope
from sqlglot.optimizer.simplify import simplify
from sqlglot.optimizer.unnest_subqueries import unnest_subqueries
from sqlglot.planner import Plan
from sqlglot.schema import MappingSchema

from ..errors import SqlError, UnsupportedSql
from .aggregate_names import within_group_calls
from . import asof_joins
from .pivots import pivots_as_aggregates
from .group_keys import group_key_references
from .join_order import defer_cross_joins, inner_when_nulls_rejected, keys_on_their_sides
from .binder_checks import check_calls
from .clock import read_clock
from .column_names import column_name
from .comma_joins import order_comma_joins
from .comparison_order import column_first, constants_right, negated_comparisons
from .correlated import extract_correlated, keep_correlated_derived_tables
from .distinct_on import expand_distinct_on
from .distinct_outputs import distinct_output_names
from .double_literals import double_literals
from .exists_bounds import exists_from_bounds
from .extract_operands import extract_operands_kept
from .grouped_columns import (check_grouped_columns, is_aggregate, is_grouped,
                              is_window_function)
from .grouping_sets import expand_grouping_sets
from .inline_subqueries import unnest_subqueries_before_grouping
from .named_windows import check_named_windows, own_windows
from .natural_joins import expand_natural_joins
from .output_aliases import alias_shadowing_items
from .kept_casts import casts_kept
from .parse import span_of, span_over
from .subquery_widths import check_derived_widths, check_subquery_widths
from .shared_operands import share_operands
from .subquery_names import name_subquery_columns, set_branches
from .table_functions import table_functions
from .source_aliases import unshadowed_sources
from .table_aliases import rename_table_columns, renames
from .using_columns import bind_using_columns, mark, refuse_star_beside_using
from .duplicate_aliases import distinct_source_names
from .lateral_joins import lateral_subqueries
from .lateral_unnest import lateral_unnests
from .limit_counts import constant_count
from .limit_percent import check_percent, is_percent
from .table_samples import table_samples
from .union_by_name import union_by_name
from .windows import lift_windows

_SUPPORTED_ROOTS = (exp.Select, exp.SetOperation)
# Names are matched to the arrays' exact spelling by ``_exact_names``; after that the optimizer
# must not fold case again (DuckDB's strategy lower-cases even quoted names).
_DIALECT = "duckdb, normalization_strategy = case_sensitive"


def _set_operation_step(cls, expression: exp.Expression, ctes=None) -> planner.SetOperation:
    """sqlglot's SetOperation step names its two inputs by their table alias, so
    ``SELECT k FROM t ... EXCEPT SELECT k FROM t ...`` has two inputs both called ``t``; this
    keeps the input steps themselves (``left_step`` / ``right_step``) so the runner can tell
    them apart."""
    left = planner.Step.from_expression(expression.left, ctes)
    left.name = left.name or "left"
    right = planner.Step.from_expression(expression.right, ctes)
    right.name = right.name or "right"
    step = cls(op=expression.__class__, left=left.name, right=right.name,
               distinct=bool(expression.args.get("distinct")))
    step.left_step, step.right_step = left, right
    step.add_dependency(left)
    step.add_dependency(right)
    return step


planner.SetOperation.from_expression = classmethod(_set_operation_step)


@dataclass(frozen=True)
class LogicalQuery:
    expression: exp.Expression  # optimized, qualified
    plan: Plan
    used_columns: dict[str, frozenset[str]]  # table alias -> columns read through it
    names: list[str] | None  # result column names as written, when known
    scalar_subqueries: frozenset[str]  # CTEs that stand for scalar subqueries: <= 1 row
    reads_clock: bool = False  # now() / current_date became constants: plan again next time
    correlated: tuple = ()  # planner.correlated: the subqueries the Correlated calls stand for
    series: tuple = ()  # planner.table_functions: the range / generate_series tables
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    def derived(self, what: str, compute, *nodes):
        """``compute()``, worked out once per planned query for ``nodes`` (plan steps and
        expressions, by identity, held so their ids stay theirs): a connection caches plans
        and runs them again, and what follows from the plan alone need not be redone."""
        key = (what, *map(id, nodes))
        hit = self.memo.get(key)
        if hit is None or any(a is not b for a, b in zip(hit[0], nodes)):
            hit = (nodes, compute())
            self.memo[key] = hit
        return hit[1]


_RUN_NOT_PLANNED = (exp.Insert, exp.Update, exp.Delete, exp.Copy, exp.Create, exp.Drop,
                    exp.Describe, exp.TruncateTable)
_KEYWORDS = {"truncatetable": "TRUNCATE"}  # a statement's keyword where its node says more


def check_statement(tree: exp.Expression) -> None:
    """Refuse a statement the query engine does not run, before anything is looked up."""
    kind = _KEYWORDS.get(tree.key, tree.key.upper())
    if isinstance(tree, _RUN_NOT_PLANNED):  # con.sql runs them; EXPLAIN has none to show
        raise UnsupportedSql(f"{kind} statements run, with no query plan or "
                             "result columns to show: EXPLAIN and DESCRIBE take a query "
                             "(SELECT, WITH, UNION/INTERSECT/EXCEPT)")
    if not isinstance(tree, _SUPPORTED_ROOTS):
        raise UnsupportedSql(f"{kind} statements are not supported by the query "
                             "engine (SELECT, WITH, UNION/INTERSECT/EXCEPT are)")


def build(tree: exp.Expression, schema: dict[str, dict[str, str]], sql: str) -> LogicalQuery:
    """Optimize ``tree`` against ``schema`` ({table: {column: SQL type}}) and plan it."""
    tree = pivots_as_aggregates(tree, schema)
    check_statement(tree)
    tree = lateral_unnests(distinct_source_names(table_samples(tree, sql), sql), schema)
    tree, series = table_functions(tree, sql)
    schema = {**schema, **{s.table: {s.column: s.sql_type} for s in series}}
    tree = union_by_name(expand_natural_joins(tree, schema, sql), schema, sql)
    _refuse(tree, sql)
    refuse_star_beside_using(tree, schema)
    check_calls(tree, sql)
    check_named_windows(tree, sql)
    names = _source_spelled(output_names(tree), tree, schema)
    tree = double_literals(within_group_calls(tree, sql))
    tree = alias_shadowing_items(name_subquery_columns(tree, schema))
    tree, reads_clock = read_clock(tree, sql)
    tree = expand_distinct_on(tree, sql)
    tree = _null_options(_fetch_as_limit(_expand_group_by_all(
        _values_names(check_derived_widths(tree, sql)), sql)))
    tree = rename_table_columns(_exact_names(negated_comparisons(tree), schema), schema, sql)
    tree = expand_grouping_sets(mark(order_comma_joins(tree, sql)), schema, sql)
    tree = asof_joins.before_optimizer(tree)
    try:
        optimized = asof_joins.after_optimizer(exists_from_bounds(_optimize(
            _float_betweens_kept(_mixed_temporal_constants(lateral_subqueries(tree, schema,
                                                                              sql))), schema)))
        optimized = bind_using_columns(_having_aliases(optimized))
        optimized = asof_joins.using_inequalities(optimized)
        check_grouped_columns(optimized, sql)
        optimized, correlated = extract_correlated(optimized, schema)
        optimized = lift_windows(_betweens_back(_simplify_conditions(optimized)))
    except OptimizeError as err:
        raise _name_error(err, tree, schema, sql) from None
    except SqlError as err:  # a rule's, which has no SQL text to underline
        if err.sql is not None:
            raise
        raise SqlError(err.plain_message, sql, err.span) from None
    except SqlglotError as err:
        raise SqlError(f"cannot plan this query: {err}", sql) from None
    try:
        plan = plan_steps(optimized)
    except SqlglotError as err:
        raise UnsupportedSql(f"cannot plan this query: {err}") from None
    return LogicalQuery(optimized, plan, _used_columns(optimized), names,
                        _scalar_subqueries(optimized), reads_clock, correlated, series)


def plan_steps(optimized: exp.Expression) -> Plan:
    """sqlglot's plan of an optimized query with our rewrites of its steps: the whole query,
    and each subquery the engine runs on its own (``engine.subqueries``), which needs them
    as much (``GROUP BY a ORDER BY a`` reads the group key column)."""
    tree = distinct_output_names(_one_group(optimized))
    with asof_joins.planned(tree):
        plan = keys_on_their_sides(inner_when_nulls_rejected(Plan(tree)))
    return share_operands(group_key_references(defer_cross_joins(plan)))


def _optimize(tree: exp.Expression, schema: dict) -> exp.Expression:
    """sqlglot's optimizer with our rules.  Its join reordering (``optimize_joins``) fails
    with a bare ``ValueError("Cycle error")`` on some FROM lists whose conditions link later
    tables back to earlier ones (``FROM t0, t1, t2, t3, t4 WHERE t3.u = t1.u AND t4.u = t1.u
    AND (t3.. OR t4..)``); that is refused by name (without the rule the plan is not sound)."""
    try:
        return optimize(tree, schema=MappingSchema(schema, dialect=_DIALECT, normalize=False),
                        dialect=_DIALECT, leave_tables_isolated=True, rules=_RULES)
    except AssertionError:  # sqlglot's own checks (ORDER BY the position of a subquery item)
        raise UnsupportedSql("this query's shape cannot be planned (sqlglot's optimizer "
                             "rejected it); an ORDER BY position naming a subquery item can "
                             "be written as an alias") from None
    except ValueError as err:
        if "Cycle" not in str(err):
            raise
        raise UnsupportedSql("this FROM list cannot be planned: its join conditions link the "
                             "tables in a cycle the join reordering cannot resolve (write the "
                             "joins with explicit JOIN ... ON)") from None


def _having_aliases(tree: exp.Expression) -> exp.Expression:
    """HAVING may name an output alias (DuckDB); the optimizer puts the aliased expression in
    its place, but not a constant's (``SELECT 1 AS k ... HAVING k = 1``), whose name then
    stays a column no step has.  This puts the constant there (in place)."""
    for having in list(tree.find_all(exp.Having)):
        select = having.parent
        outputs = {e.alias: e.this for e in select.expressions if isinstance(e, exp.Alias)}
        for column in list(find_all_in_scope(having.this, exp.Column)):
            if not column.table and column.name in outputs:
                value = outputs[column.name]
                column.replace(value.copy() if isinstance(value, exp.Literal)
                               else exp.paren(value.copy()))
    return tree


def _one_group(tree: exp.Expression) -> exp.Expression:
    """A copy of ``tree`` in which every grouped SELECT without GROUP BY has an empty one.

    sqlglot's planner makes an Aggregate step only for GROUP BY or an aggregate call in the
    select list.  A SELECT that aggregates only in HAVING or ORDER BY (``SELECT 1 FROM t HAVING
    count(*) > 5``) would get none: HAVING dropped, a row per input row.  Like DuckDB, such a
    SELECT is one group over all its rows (one row, or none when HAVING is false), which is
    what an empty GROUP BY plans.  On a copy: ``GROUP BY`` without keys is no SQL to show."""
    def ungrouped(tree):
        return [s for s in tree.find_all(exp.Select)
                if s.args.get("group") is None and is_grouped(s)]

    if not ungrouped(tree):
        return tree
    tree = tree.copy()
    for select in ungrouped(tree):
        select.set("group", exp.Group(expressions=[]))
    return tree


# sqlglot's last rule, simplify, folds constants -- also ``DATE '2024-02-28' + INTERVAL 1 DAY``
# into a DATE, where DuckDB gives a TIMESTAMP.  So it runs only on conditions (WHERE, ON),
# where folding cannot change a result's type but does let dates prune fragments.  Not on
# HAVING: it reads GROUP BY keys, and ``GROUP BY a + 1 HAVING a + 1 > 0`` simplified to
# ``a > -1`` reads a column no group has.
# ``unnest_subqueries`` keeps an uncorrelated subquery after grouping in place (see
# ``inline_subqueries``).
# ``eliminate_subqueries`` keeps a correlated derived table in its subquery
# (``planner.correlated``).
_RULES = tuple(unnest_subqueries_before_grouping if rule is unnest_subqueries else
               keep_correlated_derived_tables(rule) if rule is eliminate_subqueries else
               extract_operands_kept(casts_kept(rule))
               for rule in RULES if rule is not simplify)


def _positional_order(expression: exp.Expression) -> exp.Expression:
    """ORDER BY by output position, after ``qualify`` (which has expanded ``*``), in place:

    - DuckDB's ``ORDER BY ALL [ASC|DESC] [NULLS ...]``: every output column, left to right;
    - ``ORDER BY 2`` where ``qualify`` left the number (two outputs share a name, as in
      ``SELECT a.id, b.id``): that output's expression -- a number left in ORDER BY would
      sort by a constant, i.e. not at all.  Past the last output it is an error, as in DuckDB.
    """
    for select in expression.find_all(exp.Select, exp.SetOperation):
        order = select.args.get("order")
        if order is None:
            continue
        every = _order_all(order)
        if isinstance(select, exp.SetOperation):  # by position, which the sort step reads
            if every is not None:
                width = len(_leftmost(select).expressions)
                _order_by(order, every, [exp.Literal.number(i) for i in range(1, width + 1)])
            else:
                _branch_names(select, order)
            continue
        items = select.expressions
        if every is not None:
            _order_by(order, every, [item.unalias().copy() for item in items])
            continue
        for ordered in order.expressions:
            key = ordered.this
            if isinstance(key, exp.Literal) and key.is_int:
                position = int(key.name)
                if not 1 <= position <= len(items):
                    raise SqlError(f"ORDER term out of range - should be between 1 and "
                                   f"{len(items)}")
                ordered.set("this", items[position - 1].unalias().copy())
    return expression


def _branch_names(operation: exp.SetOperation, order: exp.Order) -> None:
    """A set operation's ORDER BY column that is no output name of its first SELECT but an
    item of one of its SELECTs -- by alias or by the column it reads, ``ORDER BY y`` of
    ``SELECT a AS x ... UNION SELECT k AS y ...``, ``ORDER BY da.a`` -- is that output's
    position (DuckDB binds it so), in place."""
    outputs = {item.alias_or_name for item in _leftmost(operation).expressions}
    for ordered in order.expressions:
        key = ordered.this
        if not isinstance(key, exp.Column) or (not key.table and key.name in outputs):
            continue
        position = next((i for branch in set_branches(operation)
                         for i, item in enumerate(branch.expressions, 1)
                         if _names(item, key)), None)
        if position is not None:
            ordered.set("this", exp.Literal.number(position))


def _names(item: exp.Expression, key: exp.Column) -> bool:
    """Does the select item ``item`` go by the name ``key`` (its alias, or the column it
    reads, qualified as ``key`` is)?"""
    read = item.unalias()
    if not key.table and isinstance(item, exp.Alias) and item.alias == key.name:
        return True
    return isinstance(read, exp.Column) and read.name == key.name and \
        (not key.table or read.table == key.table)


def _leftmost(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.SetOperation):
        node = node.this
    return node


def _order_all(order: exp.Order) -> exp.Ordered | None:
    """The term of an ``ORDER BY ALL`` (with its direction and NULLS placement), or None."""
    terms = order.expressions
    if len(terms) == 1 and isinstance(terms[0].this, exp.Var) and \
            terms[0].this.name.upper() == "ALL":
        return terms[0]
    return None


def _order_by(order: exp.Order, every: exp.Ordered, keys: list[exp.Expression]) -> None:
    """``order`` by each of ``keys`` in the direction and NULLS placement of ``every``."""
    order.set("expressions", [
        exp.Ordered(this=key, desc=every.args.get("desc"),
                    nulls_first=every.args.get("nulls_first")) for key in keys])


def _group_by_all_beside_stars(expression: exp.Expression) -> exp.Expression:
    """GROUP BY ALL over a select list with ``*`` (``SELECT count(*), * ... GROUP BY ALL``),
    once ``qualify`` has expanded the star into the columns it stands for (in place)."""
    for select in expression.find_all(exp.Select):
        group = select.args.get("group")
        if group is not None and group.args.get("all"):
            _group_by_items(select)
    return expression


def _group_by_items(select: exp.Select) -> None:
    """``select`` grouped by each of its items that reads a column per row (in place);
    with none, GROUP BY ALL is no GROUP BY (``SELECT 1, count(*) ...``: one group)."""
    keys = [e.unalias().copy() for e in select.expressions if _row_columns(e)]
    select.set("group", exp.Group(expressions=keys) if keys else None)


_RULES = (_RULES[0], check_subquery_widths, constants_right, _group_by_all_beside_stars,
          _positional_order, unshadowed_sources, *_RULES[1:])  # _RULES[0] is qualify
# Once predicates are pushed down, a derived table or CTE may project a column only its own
# WHERE reads (TPC-H Q13: ``o_comment``, tested in the LEFT JOIN's ON, which moved into the
# orders side): projections are pruned again, so that column is never carried to the join.
_RULES = _RULES[:_RULES.index(eliminate_ctes) + 1] + (pushdown_projections,) + \
    _RULES[_RULES.index(eliminate_ctes) + 1:]


def _simplify_conditions(tree: exp.Expression) -> exp.Expression:
    for node in list(tree.find_all(exp.Where)):
        node.set("this", _simplified(column_first(node.this)))
    for join in list(tree.find_all(exp.Join)):
        if join.args.get("on") is not None:
            join.set("on", _simplified(column_first(join.args["on"])))
    return tree


def _simplified(condition: exp.Expression) -> exp.Expression:
    """sqlglot's simplify of ``condition``, or ``condition`` where it fails comparing
    constants Python cannot order (``TIMESTAMP '..' <= DATE '..'``): the engine compares them
    as DuckDB does."""
    try:
        return simplify(condition.copy(), dialect="duckdb")
    except TypeError:
        return condition


def _mixed_temporal_constants(tree: exp.Expression) -> exp.Expression:
    """Two date/time constants of different types compared (``TIMESTAMP '..' <= DATE '..'``,
    also as BETWEEN's bounds beside its value): sqlglot's simplify compares them as Python
    values and fails (``can't compare datetime.datetime to datetime.date``); the first is
    cast through VARCHAR -- the same value -- so that sqlglot leaves the comparison to the
    engine, which compares them as DuckDB does."""
    pairs = [(node.this, node.expression) for node in tree.find_all(
        exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.NullSafeEQ, exp.NullSafeNEQ)]
    pairs += [(node.this, node.args.get(bound)) for node in tree.find_all(exp.Between)
              for bound in ("low", "high")]
    for left, right in pairs:
        kinds = [_temporal_constant(side) for side in (left, right)]
        if None not in kinds and kinds[0] != kinds[1]:
            inner = exp.Cast(this=left.this.copy(), to=exp.DataType.build("VARCHAR"))
            left.set("this", inner)
    return tree


def _temporal_constant(node):
    """The type of a date/time constant (``DATE '2024-01-31'``), else None."""
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and \
            node.this.is_string and node.to.is_type(*exp.DataType.TEMPORAL_TYPES):
        return node.to.this
    return None


_KEPT_BETWEEN = "__tdbsql_between"


def _float_betweens_kept(tree: exp.Expression) -> exp.Expression:
    """Each ``x BETWEEN a AND b`` with a DOUBLE / FLOAT operand beside others (``v BETWEEN 2e0
    AND 3.9999999999999999``), or with a constant x (``'NaN' BETWEEN f AND 'inf'``), hidden in
    a call sqlglot leaves alone: DuckDB compares the three in their common type (a DOUBLE
    there), while sqlglot's optimizer and simplify split them into two comparisons of their
    own types (``v <= 3.9999999999999999`` exactly, which 4 fails; ``'NaN' <= 'inf'`` as
    text).  ``_betweens_back`` restores them."""
    for between in list(tree.find_all(exp.Between)):
        operands = [between.this, between.args.get("low"), between.args.get("high")]
        floats = [_float_literal(o) for o in operands]
        constant_value = isinstance(between.this, exp.Literal) and \
            not all(isinstance(o, exp.Literal) for o in operands)
        if (constant_value or any(floats) and not all(floats)) and \
                not between.args.get("symmetric"):
            between.replace(exp.Anonymous(this=_KEPT_BETWEEN, expressions=operands))
    return tree


def _betweens_back(tree: exp.Expression) -> exp.Expression:
    for call in list(tree.find_all(exp.Anonymous)):
        if call.name == _KEPT_BETWEEN:
            value, low, high = call.expressions
            call.replace(exp.Between(this=value, low=low, high=high))
    return tree


def _float_literal(node) -> bool:
    """A DOUBLE / FLOAT constant: ``2e0``, ``CAST(2 AS REAL)``, ``-1.5e3``."""
    node = node.this if isinstance(node, exp.Neg) else node
    if isinstance(node, exp.Literal):
        return not node.is_string and "e" in node.this.lower()
    return isinstance(node, exp.Cast) and node.to.this in (
        exp.DataType.Type.FLOAT, exp.DataType.Type.DOUBLE)


def _outer_aggregate(agg: exp.AggFunc, select: exp.Select) -> bool:
    """Does ``agg`` (in ``select``'s WHERE) read only columns qualified by tables of an
    enclosing query -- DuckDB's aggregate of the outer query, as in ``(SELECT ... WHERE x <
    max(outer.y))``?"""
    if select.parent is None:
        return False
    sources = {source.alias_or_name.lower() for source in
               [select.args.get("from_") and select.args["from_"].this,
                *(join.this for join in select.args.get("joins") or [])] if source is not None}
    columns = list(agg.find_all(exp.Column))
    return bool(columns) and all(c.table and c.table.lower() not in sources for c in columns)


def _refuse(tree: exp.Expression, sql: str) -> None:
    """Wrong SQL gets an SqlError; valid SQL the engine does not run gets UnsupportedSql
    naming the construct rather than a wrong answer."""
    for where in tree.find_all(exp.Where):
        for agg in where.this.find_all(exp.AggFunc):
            if agg.find_ancestor(exp.Select) is where.parent:
                if _outer_aggregate(agg, where.parent):
                    raise UnsupportedSql("an aggregate of an enclosing query's columns inside "
                                         f"a subquery: {agg.sql(dialect='duckdb')}")
                raise SqlError(f"aggregate {agg.sql(dialect='duckdb')} is not allowed in WHERE "
                               "(use HAVING)", sql, span_of(agg))
    for clause in tree.find_all(exp.Where, exp.Group, exp.Having):  # windows run after them
        for window in clause.find_all(exp.Window):
            if window.find_ancestor(exp.Select) is clause.parent:
                name = "GROUP BY" if isinstance(clause, exp.Group) else clause.key.upper()
                raise SqlError(f"{name} clause cannot contain window functions", sql,
                               span_over(window))
    for with_ in tree.find_all(exp.With):
        seen = set()
        for cte in with_.expressions:
            name = cte.alias.lower()
            if name in seen:
                raise SqlError(f"duplicate CTE name {cte.alias!r}", sql,
                               span_of(cte.args["alias"]))
            seen.add(name)
    for node in tree.find_all(exp.Lateral, exp.Unnest, exp.Pivot):
        if isinstance(node, exp.Lateral) and isinstance(node.this, exp.Subquery):
            continue  # planner.lateral_joins
        raise UnsupportedSql(f"{node.key.upper()} is not supported: {node.sql()!r}")
    for node in tree.find_all(exp.Join):
        kind = (node.kind or "").upper()
        method = (node.args.get("method") or "").upper()
        if kind in ("POSITIONAL", "SEMI", "ANTI") or method not in ("", "ASOF"):
            raise UnsupportedSql(f"{kind or method} JOIN is not supported")
    for node in tree.find_all(exp.Qualify):
        if not own_windows(node.parent):
            raise SqlError("QUALIFY needs a window function in the select list or in QUALIFY",
                           sql, span_of(node))
    for node in tree.find_all(exp.SetOperation):  # UNION BY NAME is rewritten by now
        if node.args.get("by_name"):
            raise SqlError(f"Invalid combination of {node.key.upper()} and BY NAME", sql)
    for node in tree.find_all(exp.Between):
        if node.args.get("symmetric"):
            raise UnsupportedSql(f"BETWEEN SYMMETRIC is not supported: {node.sql()!r}")
    for node in tree.find_all(exp.Limit, exp.Offset, exp.Fetch):
        options = node.args.get("limit_options")
        if options is not None and options.args.get("with_ties"):
            raise UnsupportedSql(f"{node.sql()!r} (WITH TIES) is not supported")
        if options is not None and options.args.get("percent") and \
                not isinstance(node, exp.Limit):  # FETCH ... PERCENT: no row count either
            raise UnsupportedSql(f"{node.sql(dialect='duckdb')!r} (a percentage) is not "
                                 "supported")
        if is_percent(node):
            check_percent(node, sql)
            continue
        count = node.args.get("count") if isinstance(node, exp.Fetch) else node.expression
        constant_count(node, count, sql)


def _exact_names(tree: exp.Expression, schema: dict[str, dict[str, str]]) -> exp.Expression:
    """Column and table names spelled as the array spells them.

    SQL names are case-insensitive (DuckDB), but TileDB field names are not: an array may have
    both ``datetime_Y`` and ``datetime_y``.  An unquoted name that matches a field exactly keeps
    its case; one that matches a single field ignoring case takes that field's spelling; both
    are quoted so the optimizer does not fold them to lower case.  Other names (aliases) are
    left for the optimizer to normalize as usual.
    """
    fields = {c for cols in schema.values() for c in cols} | set(schema)
    folded: dict[str, set[str]] = {}
    for name in fields:
        folded.setdefault(name.lower(), set()).add(name)
    tree = tree.copy()
    named = _alias_spellings(tree)  # a derived table's Oslo, read as oslo or OSLO too
    for ident in tree.find_all(exp.Identifier):
        if _names_a_struct_field(ident):
            ident.set("quoted", True)  # a struct's field name ({'B': 1}) keeps its spelling
            continue
        if ident.quoted and ident.name in fields:
            continue
        if ident.name in fields:
            ident.set("quoted", True)
        elif len(folded.get(ident.name.lower(), ())) == 1:
            ident.set("this", next(iter(folded[ident.name.lower()])))
            ident.set("quoted", True)
        elif not ident.quoted and ((isinstance(ident.parent, exp.Column)
                                    and ident.arg_key == "this") or _names_a_column(ident)) and \
                len(named.get(ident.name.lower(), ())) == 1:
            ident.set("this", next(iter(named[ident.name.lower()])))
            ident.set("quoted", True)
        elif not ident.quoted:
            ident.set("this", ident.name.lower())  # aliases: case-insensitive, as in DuckDB
    return tree


def _names_a_struct_field(ident: exp.Identifier) -> bool:
    """Is ``ident`` a field name of a struct: ``{'B': 1}``, ``struct_pack(B := 1)``,
    ``STRUCT(B INT)``?"""
    parent = ident.parent
    return ident.arg_key == "this" and (
        isinstance(parent, exp.PropertyEQ)
        or isinstance(parent, exp.ColumnDef) and isinstance(parent.parent, exp.DataType))


def _alias_spellings(tree: exp.Expression) -> dict[str, set[str]]:
    """The spellings of the names a query gives its columns (``AS Oslo``, ``t("Oslo")``, a
    PIVOT's), by their lower case, when one is not all lower case: DuckDB names a result
    column as its source spells it, and a reference in another case reads it (names are
    case-insensitive).  A name spelled two ways is left to fold to lower case."""
    named: dict[str, set[str]] = {}
    for ident in tree.find_all(exp.Identifier):
        if _names_a_column(ident):
            named.setdefault(ident.name.lower(), set()).add(ident.name)
    return {lower: spellings for lower, spellings in named.items()
            if any(name != lower for name in spellings)}


def _names_a_column(ident: exp.Identifier) -> bool:
    """Is ``ident`` a column alias (``AS x``) or a derived table's column name (``t(x)``)?"""
    return isinstance(ident.parent, (exp.Alias, exp.TableAlias)) and \
        ident.arg_key in ("alias", "columns")


def _null_options(tree: exp.Expression) -> exp.Expression:
    """IGNORE / RESPECT NULLS on a plain aggregate call (not a window call, which reads them):
    every aggregate but ``first`` and ``array_agg`` skips NULLs anyway, so the option goes; a
    ``first`` / ``any_value`` that skips NULLs is ``any_value`` (DuckDB's parser writes
    ``any_value(x)`` itself as ``any_value(x) IGNORE NULLS``), one that keeps them ``first``."""
    options = [n for n in tree.find_all(exp.IgnoreNulls, exp.RespectNulls)
               if isinstance(n.this, exp.AggFunc) and not isinstance(n.parent, exp.Window)]
    if not options:
        return tree
    tree = tree.copy()
    for node in [n for n in tree.find_all(exp.IgnoreNulls, exp.RespectNulls)
                 if isinstance(n.this, exp.AggFunc) and not isinstance(n.parent, exp.Window)]:
        call, ignore = node.this, isinstance(node, exp.IgnoreNulls)
        if isinstance(call, (exp.First, exp.AnyValue)):
            kind = exp.AnyValue if ignore else exp.First
            call = kind(this=call.this)
        elif isinstance(call, exp.ArrayAgg) and ignore:
            raise UnsupportedSql(f"{node.sql(dialect='duckdb')}: array_agg with IGNORE NULLS "
                                 "is not supported")
        node.replace(call)
    return tree


def _values_names(tree: exp.Expression) -> exp.Expression:
    """``(VALUES (1, 2)) v(a)`` / ``v``: the columns the alias leaves unnamed are ``col0``,
    ``col1``, ... as in DuckDB (sqlglot would drop them from ``*``); more names than columns
    is an error; in place.  An unaliased VALUES in FROM is DuckDB's ``unnamed_subquery``
    (then ``unnamed_subquery2``, ...), its columns ``col0``, ``col1``, ... too."""
    unnamed = 0
    for values in tree.find_all(exp.Values):
        alias = values.args.get("alias")
        rows = values.expressions
        if alias is None and rows and isinstance(values.parent, (exp.From, exp.Join)):
            unnamed += 1
            alias = exp.TableAlias(this=exp.to_identifier(
                "unnamed_subquery" + (str(unnamed) if unnamed > 1 else "")))
            values.set("alias", alias)
        if alias is None or not rows:
            continue
        width = len(rows[0].expressions) if isinstance(rows[0], exp.Tuple) else 1
        if len(alias.columns) > width:
            raise SqlError(f"table {alias.name!r} has {width} columns available but "
                           f"{len(alias.columns)} columns specified")
        for i in range(len(alias.columns), width):
            alias.append("columns", exp.to_identifier(f"col{i}"))
    return tree


def _fetch_as_limit(tree: exp.Expression) -> exp.Expression:
    """``FETCH FIRST n ROWS ONLY`` is ``LIMIT n`` (what sqlglot's planner reads); ``LIMIT
    NULL`` is no limit (DuckDB)."""
    for limit in list(tree.find_all(exp.Limit)):
        if isinstance(limit.expression, exp.Null):
            limit.pop()
    for fetch in list(tree.find_all(exp.Fetch)):
        count = fetch.args.get("count")
        fetch.replace(exp.Limit(expression=count.copy() if count is not None
                                else exp.Literal.number(1)))
    return tree


def _expand_group_by_all(tree: exp.Expression, sql: str) -> exp.Expression:
    """GROUP BY ALL (DuckDB): group by every select item that reads a column per row
    (``_row_columns``).  A select list with a ``*`` keeps its GROUP BY ALL until ``qualify``
    has expanded the star (``_group_by_all_beside_stars``)."""
    groups = [g for g in tree.find_all(exp.Group) if g.args.get("all")]
    if not groups:
        return tree
    tree = tree.copy()
    for group in [g for g in tree.find_all(exp.Group) if g.args.get("all")]:
        select = group.parent
        for item in select.expressions:
            _check_group_by_all_item(item, sql)
        if not any(item.is_star for item in select.expressions):
            _group_by_items(select)
    return tree


def _check_group_by_all_item(item: exp.Expression, sql: str) -> None:
    """DuckDB's refusals of a GROUP BY ALL select item that reads a column per row: beside
    an aggregate (``x + count(*)``: DuckDB refuses to mix them rather than group by the
    column), or in a window call (``sum(x) OVER ()``: no group key)."""
    column = _column_beside_aggregate(item)
    if column is not None:
        text = item.unalias().sql(dialect="duckdb", normalize_functions="lower")
        raise SqlError("GROUP BY ALL: cannot mix aggregates with non-aggregated columns "
                       f"in {text!r}", sql, span_of(column))
    window = next((n for n in _outside(item, exp.Select) if isinstance(n, exp.Window)), None)
    if window is not None and _row_columns(item):
        raise SqlError("GROUP BY ALL: cannot group on a window clause", sql, span_over(window))


def _row_columns(item: exp.Expression) -> list[exp.Column]:
    """The columns ``item`` reads per row: outside aggregate calls (the function of a window
    call, ``sum(x) OVER ()``, is not one here) and nested queries.  GROUP BY ALL groups by
    the items that read one, as DuckDB: a constant or ``count(*) + 1`` is no key."""
    def inside(node: exp.Expression) -> bool:
        return isinstance(node, exp.Select) or (is_aggregate(node)
                                                and not is_window_function(node))

    return [node for node in item.walk(prune=inside) if isinstance(node, exp.Column)]


def _column_beside_aggregate(item: exp.Expression) -> exp.Column | None:
    """A column a select item reads outside its aggregate calls, if it has one (not in a
    window call or a nested query: those are not refused here)."""
    if not any(isinstance(n, exp.AggFunc) for n in _outside(item, exp.Window, exp.Select)):
        return None
    return next((n for n in _outside(item, exp.AggFunc, exp.Filter, exp.WithinGroup, exp.Window,
                                     exp.Select) if isinstance(n, exp.Column)), None)


def _outside(node: exp.Expression, *kinds):
    """``node``'s subtree without what is below a node of ``kinds`` (``node`` itself is
    yielded, its subtree left out when it is of ``kinds``: ``sum(x)`` reads no column
    beside its aggregate)."""
    return node.walk(prune=lambda n: isinstance(n, kinds))


def output_names(tree: exp.Expression) -> list[str | None] | None:
    """The result column names of the select list (aliases, column names, or the expression
    as DuckDB prints it: ``planner.column_names``), which the optimizer replaces by
    ``_col_N``.  One ``*`` is a None: the columns it expands to keep their names (with two,
    the names are not known here: None)."""
    tree = _first_select(tree)
    if not isinstance(tree, exp.Select):
        return None
    stars = [e.is_star for e in tree.expressions]
    if sum(stars) > 1:
        return None
    return [None if star else column_name(e) for e, star in zip(tree.expressions, stars)]


def _source_spelled(names: list | None, tree: exp.Expression, schema: dict) -> list | None:
    """``names`` with each bare column's (``SELECT day``) spelled as its source spells it,
    as DuckDB names it (an array's field ``Day``, a derived table's ``Foo`` or ``"Foo"``);
    expressions keep the text written."""
    spelled = output_names(_exact_names(tree, schema)) if names else None
    if spelled is None or len(spelled) != len(names):
        return names
    items = _first_select(tree).expressions
    return [new if isinstance(item, exp.Column) else old
            for old, new, item in zip(names, spelled, items)]


def _first_select(tree: exp.Expression) -> exp.Select:
    while isinstance(tree, exp.SetOperation):
        tree = tree.this
    return tree


def _scalar_subqueries(tree: exp.Expression) -> frozenset[str]:
    """The optimizer unnests subqueries into CTEs named ``_u_N``; IN / EXISTS / correlated
    ones are grouped by their key, an uncorrelated scalar subquery is not.  Such a CTE must
    have at most one row, or the query is an error (as it would be before the rewrite)."""
    names = set()
    for cte in tree.find_all(exp.CTE):
        body = cte.this
        if cte.alias.startswith("_u_") and isinstance(body, exp.Select) and \
                not body.args.get("group") and not body.args.get("distinct"):
            names.add(cte.alias)
    return frozenset(names)


def _used_columns(tree: exp.Expression) -> dict[str, frozenset[str]]:
    used: dict[str, set[str]] = {}
    for column in tree.find_all(exp.Column):
        if column.table:
            used.setdefault(column.table, set()).add(column.name)
    return {alias: frozenset(cols) for alias, cols in used.items()}


def _qualified_stars(tree: exp.Expression) -> list[str]:
    """The ``x.*`` items whose x is no table, subquery or CTE of the query."""
    aliases = _source_names(tree)
    return [column.sql(dialect="duckdb") for column in tree.find_all(exp.Column)
            if isinstance(column.this, exp.Star) and column.table
            and column.table not in aliases]


def _source_names(tree: exp.Expression) -> set[str]:
    """The names of the query's tables, aliased subqueries and CTEs."""
    return {t.alias_or_name for t in tree.find_all(exp.Table)} | \
        {s.alias for s in tree.find_all(exp.Subquery) if s.alias} | \
        {c.alias for c in tree.find_all(exp.CTE)}


def _name_error(err: OptimizeError, tree, schema, sql: str) -> SqlError | UnsupportedSql:
    """sqlglot says 'Column ... could not be resolved'; point at it and suggest a close name.
    A ``*`` it could not expand is a subquery whose ``*`` beside another item repeats a name
    (``SELECT * FROM (SELECT *, a FROM t)``: DuckDB names the second ``a_1``)."""
    text = str(err)
    stars = _qualified_stars(tree) if "star-free" in text else []
    if stars:  # s.* of a STRUCT column s
        return UnsupportedSql(f"{stars[0]}: a qualified * that names no "
                              "table (a STRUCT's fields as columns) is not supported")
    if "star-free" in text:
        return UnsupportedSql("a subquery whose * is beside an item of the same name (SELECT "
                              "*, a FROM t) is not supported: alias the item")
    columns = sorted({c for cols in schema.values() for c in cols})
    aliases = _source_names(tree)
    written = [node for node in tree.find_all(exp.Column) if not renames(node)]
    for node in written:
        if node.table and node.table not in aliases:
            ident = node.args.get("table")
            return SqlError(f"unknown table or alias {node.table!r} in {node.sql()!r}", sql,
                            span_of(ident) if ident is not None else span_of(node))
    for node in written:
        if f"'{node.name}'" in text or f'"{node.name}"' in text or node.sql() in text:
            if node.name in columns and node.table:
                tables = [t for t, cols in schema.items() if node.name in cols]
                return SqlError(f"unknown table or alias {node.table!r} for column {node.name!r}"
                                f" (it is in {', '.join(map(repr, tables))})", sql, span_of(node))
            if node.name not in columns:
                close = difflib.get_close_matches(node.name, columns, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                return SqlError(f"unknown column {node.name!r}{hint}", sql, span_of(node))
    if "ambiguous" in text.lower():
        return SqlError(f"ambiguous column reference: {text}", sql)
    return SqlError(f"cannot resolve the query: {text}", sql)
