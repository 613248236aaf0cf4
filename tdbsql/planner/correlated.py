"""Correlated subqueries the optimizer left in place, taken out of their expression.

sqlglot's ``unnest_subqueries`` decorrelates a subquery whose correlation is an equality into
a join with a grouped CTE (all of TPC-H).  Any other correlated subquery -- an inequality
(``WHERE u.y <= t.x``), equality beside an inequality in a scalar subquery, ORDER BY / LIMIT
on the inner rows, a correlation in HAVING or nested two levels deep -- stays inside its
expression, and the planner must not see it: sqlglot's Aggregate step would take the inner
query's ``count(*)`` for one of the outer query's own aggregates.

In: the optimized tree.  Out: the tree with each outermost such subquery replaced by a
``Correlated`` call whose arguments are the probe (``x`` of ``x IN (...)``, ``x > ANY
(...)``) and the outer columns the subquery reads, so the planner rewrites them like any
operand (a group key in HAVING becomes the Aggregate step's key column); and one
``CorrelatedSubquery`` per call: the subquery with those outer columns read from a table
``__outer`` (``c0``, ``c1``, ...) instead, which ``engine.correlated`` runs once for the
distinct outer values (``planner.decorrelate``).  A subquery nested in it goes along and is
taken out again when that query is planned.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from ..errors import UnsupportedSql
from .table_refs import inside, local_names

OUTER = "__outer"  # the table of distinct outer values a decorrelated subquery joins
KEY = "__k"  # its row number: which outer values a result row belongs to

# a Subquery under these is a table or a set operation's operand, not a value
_NOT_A_VALUE = (exp.From, exp.Join, exp.SetOperation, exp.Subquery, exp.CTE, exp.With,
                exp.Query, exp.Lateral, exp.Table)
_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)
_renames = itertools.count()


class Correlated(exp.Expression, exp.Func):
    """``CORRELATED_SUBQUERY(n, probe..., outer column...)``: the value of correlated
    subquery ``n`` of the query (``LogicalQuery.correlated``) for each row."""
    arg_types = {"this": True, "expressions": False}
    is_var_len_args = True
    _sql_names = ["CORRELATED_SUBQUERY"]


@dataclass(frozen=True)
class CorrelatedSubquery:
    kind: str  # scalar | exists | in | any | all
    query: exp.Expression  # reads the outer columns as __outer.c0, __outer.c1, ...
    probes: int  # how many leading arguments of the call are probe values
    operator: type | None  # the comparison of ANY / ALL
    ctes: tuple  # copies of the enclosing CTEs the query may read
    schema: dict  # the tables' columns, for planning the query again
    plans: dict = field(default_factory=dict, compare=False, repr=False)  # types -> plan


def keep_correlated_derived_tables(rule):
    """``rule`` (sqlglot's ``eliminate_subqueries``) leaving alone every derived table that
    reads an outer query's column: it would move one into a CTE of the whole query, out of
    the subquery whose row it reads (``(SELECT max(c) FROM (SELECT ... WHERE u.y < t.x
    GROUP BY ...) x)`` read ``t.x`` where there is no ``t``)."""
    def apply(expression, **kwargs):
        hidden = {}
        for scope in traverse_scope(expression):
            node = scope.expression.parent
            if scope.is_derived_table and scope.external_columns and \
                    isinstance(node, exp.Subquery) and node.parent is not None:
                name = f"__tdbsql_derived_{len(hidden)}"
                hidden[name] = node
                stand_in = exp.Table(this=exp.to_identifier(name, quoted=True),
                                     alias=node.args.get("alias").copy()
                                     if node.args.get("alias") else None)
                node.replace(stand_in)
        expression = rule(expression, **kwargs)
        while True:  # a derived table hidden inside another comes back with it
            stand_ins = [t for t in expression.find_all(exp.Table) if t.name in hidden]
            if not stand_ins:
                return expression
            for table in stand_ins:
                table.replace(hidden.pop(table.name))
    apply.__name__ = rule.__name__
    return apply


def extract_correlated(tree: exp.Expression, schema: dict) -> tuple[exp.Expression, tuple]:
    """(tree, subqueries): each outermost correlated subquery of ``tree`` left in an
    expression replaced by a ``Correlated`` call (in place)."""
    found = []
    for node in list(tree.find_all(exp.Exists, exp.Subquery, exp.Any, exp.All)):
        if isinstance(node, exp.Subquery) and isinstance(node.parent, (exp.Any, exp.All)):
            continue  # taken with its ANY / ALL
        query = node.this.this if isinstance(node.this, exp.Subquery) else node.this
        if not isinstance(query, exp.Query) or node.parent is None or (
                isinstance(node, exp.Subquery) and not is_value(node)):
            continue
        if any(inside(node, other) for other, _ in found):
            continue  # nested in one already taken: planned with it
        outer = outer_columns(query)
        if outer:
            found.append((node, outer))
    entries = []
    for node, outer in found:
        entries.append(_entry(node, outer, schema, len(entries)))
    return tree, tuple(entries)


def is_value(node: exp.Expression) -> bool:
    """Is ``node`` (a subquery) an expression's operand -- a select item too -- not a table
    or a set operation's side?"""
    parent = node.parent
    if isinstance(parent, exp.Select):
        return any(item is node for item in parent.expressions)
    return not isinstance(parent, _NOT_A_VALUE)


def outer_columns(query: exp.Expression) -> list[exp.Column]:
    """The columns ``query`` reads (at any depth) from a source defined outside it, one per
    (table, name), in the order they appear."""
    local = local_names(query)
    seen, columns = set(), []
    for column in query.find_all(exp.Column):
        key = (column.table, column.name)
        if column.table and column.table not in local and key not in seen:
            seen.add(key)
            columns.append(column)
    return columns


def _entry(node: exp.Expression, outer: list[exp.Column], schema: dict, index: int):
    kind, target, probes, operator = _usage(node)
    names = {(c.table, c.name): f"c{i}" for i, c in enumerate(outer)}
    query = (node.this.this if isinstance(node.this, exp.Subquery) else node.this).copy()
    for column in list(query.find_all(exp.Column)):
        name = names.get((column.table, column.name))
        if name is not None and column.table:
            column.replace(exp.column(name, OUTER, quoted=True))
    ctes = _read_ctes(query, _enclosing_ctes(node))
    query, ctes = _own_names(query, ctes)
    arguments = [p.copy() for p in probes] + [exp.column(c.name, c.table, quoted=True)
                                              for c in outer]
    call = Correlated(this=exp.Literal.number(index), expressions=arguments)
    if target is node.parent and isinstance(node.parent, exp.Paren):
        target = node.parent
    alias = target.args.get("alias") if isinstance(target, exp.Subquery) else None
    target.replace(exp.alias_(call, alias.this.copy()) if alias is not None else call)
    return CorrelatedSubquery(kind, query, len(probes), operator, ctes, schema)


def _usage(node: exp.Expression):
    """(kind, the node the call replaces, probe expressions, ANY/ALL's comparison)."""
    if isinstance(node, exp.Exists):
        return "exists", node, [], None
    parent = node.parent
    if isinstance(parent, exp.In) and parent.args.get("query") is node:
        probe = parent.this
        probes = list(probe.expressions) if isinstance(probe, exp.Tuple) else [probe]
        return "in", parent, probes, None
    if isinstance(node, (exp.Any, exp.All)):
        if not isinstance(parent, _COMPARISONS) or parent.expression is not node:
            raise UnsupportedSql(f"{node.key.upper()} must be the right side of a "
                                 f"comparison: {parent.sql(dialect='duckdb')!r}")
        kind = "all" if isinstance(node, exp.All) else "any"
        return kind, parent, [parent.this], type(parent)
    return "scalar", node, [], None


def _enclosing_ctes(node: exp.Expression) -> tuple:
    """Copies of the CTEs of the queries around ``node``, the nearest last (it shadows)."""
    chain = []
    parent = node.parent
    while parent is not None:
        with_ = parent.args.get("with_") if isinstance(parent, exp.Query) else None
        if with_ is not None:
            chain[:0] = [cte.copy() for cte in with_.expressions]
        parent = parent.parent
    unique = {}
    for cte in chain:
        unique[cte.alias_or_name] = cte
    return tuple(unique.values())


def _read_ctes(query: exp.Expression, ctes: tuple) -> tuple:
    """Those of ``ctes`` that ``query`` reads, directly or through another of them.  The
    others stay behind: planned with the subquery they would read its ``__outer`` (one a
    decorrelated query one level out made, ``SELECT __outer.c1 ...``, over the subquery's own
    ``__outer``, which has no ``c1``)."""
    by_name = {cte.alias_or_name: cte for cte in ctes}
    wanted, pending = set(), [query]
    while pending:
        for table in pending.pop().find_all(exp.Table):
            if table.name in by_name and table.name not in wanted:
                wanted.add(table.name)
                pending.append(by_name[table.name].this)
    return tuple(cte for cte in ctes if cte.alias_or_name in wanted)


def _own_names(query: exp.Expression, ctes: tuple):
    """The query and CTEs with sqlglot's unnesting names (``_u_N``) made unique: planning
    the query again unnests from ``_u_0`` once more."""
    tag = next(_renames)

    def rename(node):
        if isinstance(node, exp.Identifier) and re.fullmatch(r"_u_\d+", node.name):
            return exp.to_identifier(f"_c{tag}{node.name}", quoted=node.quoted)
        if isinstance(node, exp.Table) and isinstance(node.args.get("alias"), exp.Identifier):
            node.set("alias", exp.TableAlias(this=node.args["alias"]))  # as the parser has it
        return node
    return query.transform(rename), tuple(cte.transform(rename) for cte in ctes)
