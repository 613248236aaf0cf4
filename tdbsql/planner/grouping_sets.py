"""GROUP BY GROUPING SETS / ROLLUP / CUBE and ``GROUPING(...)``, rewritten into plain SQL.

DuckDB's definition: the GROUP BY list expands into a list of grouping sets, each a set of
distinct key expressions.  ``ROLLUP (a, b)`` is ``(), (a), (a, b)``; ``CUBE (a, b)`` is
``(), (a), (a, b), (b)``; ``GROUPING SETS (...)`` lists its sets (a nested ROLLUP / CUBE
contributes its own); ``()`` is the empty set, ``(a, b)`` one set of both.  Several items in
the GROUP BY list combine as a cross product, left to right (``GROUP BY a, ROLLUP (b)`` is
``(a), (a, b)``).  Duplicate sets are kept, so their rows come twice.  More than 65535 sets is
an error (DuckDB's limit).  Each set groups the rows by its keys; in its result rows the keys
outside the set are NULL, and ``GROUPING(k1, ..., kn)`` (also spelled ``grouping_id``) is the
bitmask with bit ``n-1-i`` set when ``ki`` is not in the set -- what tells a rolled-up NULL from
a NULL key value.

``expand_grouping_sets`` runs before sqlglot's optimizer.  It qualifies the tree (stars,
aliases, tables) and rewrites every SELECT with grouping sets, innermost first, into::

    SELECT [DISTINCT] <select list over _grouping_sets>
    FROM (<branch for set 1> UNION ALL <branch for set 2> ...) AS _grouping_sets
    [QUALIFY ...] [ORDER BY ...] [LIMIT ...] [OFFSET ...]

Branch i is ``SELECT <key or NULL> AS _gK..., <aggregate> AS _aJ..., <GROUPING value> AS _xJ...
FROM <the FROM / joins / WHERE> GROUP BY <the keys of set i> HAVING <HAVING for set i>``, the
HAVING with the keys outside set i read as NULL and GROUPING calls as constants.  A rolled-up
key is a bare NULL: the engine types a UNION column from its non-NULL-typed sides, so the
column keeps the key's exact type (a ``CAST`` to the key's SQL type could lose, e.g., a
timestamp's unit).  Outside the branches, the select list, ORDER BY, QUALIFY and a named WINDOW
clause read the keys, aggregates and GROUPING values as those columns, so window functions see
the rows of every set together (as in DuckDB) and ORDER BY may name an aggregate that is not
selected.  A SELECT with one non-empty set (``GROUP BY (a, b)``, or plain GROUP BY with
``GROUPING(...)``) is rewritten in place: plain keys, GROUPING calls as constants.

What cannot be expressed this way is refused with UnsupportedSql (a grouping-sets SELECT that is
a correlated subquery, more than ``MAX_BRANCHES`` sets); wrong SQL gets DuckDB's SqlError: a
column outside the keys and aggregates, GROUPING of a non-key, GROUPING without GROUP BY or
inside an aggregate, an aggregate or out-of-range ordinal as a key, more than 65535 sets.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from ..errors import SqlError, UnsupportedSql
from .grouped_columns import (
    AGGREGATE_WRAPPERS, is_aggregate, is_window_function, select_sources, ungrouped_error,
)
from .parse import span_of
from .using_columns import bind_using_columns

MAX_SETS = 65535  # DuckDB refuses more grouping sets than this
MAX_BRANCHES = 256  # each set is one grouped SELECT over the input: CUBE of 8 keys at most
MAX_GROUPING_ARGS = 64  # DuckDB: GROUPING statement cannot have more than 64 groups
SOURCE = "_grouping_sets"

_CONSTRUCTS = (exp.Rollup, exp.Cube, exp.GroupingSets)
_GROUPING = (exp.Grouping, exp.GroupingId)


# -- entry points ---------------------------------------------------------------------------


def expand_grouping_sets(tree: exp.Expression, schema: dict[str, dict[str, str]],
                         sql: str) -> exp.Expression:
    """``tree`` with every GROUPING SETS / ROLLUP / CUBE / ``()`` / ``(a, b)`` GROUP BY and
    every GROUPING call rewritten (see the module doc); other trees are returned as they are.
    A tree sqlglot cannot qualify is returned as it is too: the optimizer reports why."""
    if not _needs_rewrite(tree):
        return tree
    from .build import _DIALECT  # build imports this module

    work = tree.copy()
    try:
        work = qualify(work, dialect=_DIALECT, schema=MappingSchema(
            schema, dialect=_DIALECT, normalize=False))
    except SqlglotError:
        return tree
    work = bind_using_columns(work)  # qualify wrote bare USING columns as COALESCE
    selects = list(work.find_all(exp.Select, bfs=False))  # parents before children
    for select in reversed(selects):
        new = _rewrite_select(select, sql)
        if new is not select:
            if select is work:
                work = new
            else:
                select.replace(new)
    return work


def _needs_rewrite(tree: exp.Expression) -> bool:
    if tree.find(*_CONSTRUCTS, *_GROUPING) is not None:
        return True
    return any(isinstance(key, exp.Tuple) for group in tree.find_all(exp.Group)
               for key in group.expressions)


# -- one SELECT -----------------------------------------------------------------------------


def _rewrite_select(select: exp.Select, sql: str) -> exp.Expression:
    group = select.args.get("group")
    calls = [n for n in _own_nodes(select) if isinstance(n, _GROUPING)]
    if group is None:
        if calls:
            raise SqlError("GROUPING statement cannot be used without groups", sql,
                           span_of(calls[0]))
        return select
    if not calls and not any(isinstance(k, (*_CONSTRUCTS, exp.Tuple)) for k in group.expressions):
        return select
    for arg in ("grouping_sets", "cube", "rollup", "totals"):
        if group.args.get(arg):
            raise UnsupportedSql(f"GROUP BY ... WITH {arg.upper()} is not supported")
    keys = _Keys(select, sql)
    sets = _grouping_sets(group, keys, sql)
    if len(sets) == 1 and sets[0]:
        return _in_place(select, keys, sets[0], sql)
    if len(sets) > MAX_BRANCHES:
        raise UnsupportedSql(f"GROUP BY with {len(sets)} grouping sets is not supported (at most "
                             f"{MAX_BRANCHES}: each set is one grouped pass over the input)")
    _refuse_correlated(select)
    return _union(select, keys, sets, sql)


class _Keys:
    """The distinct GROUP BY key expressions of a SELECT, in order of first mention."""

    def __init__(self, select: exp.Select, sql: str):
        self.select, self.sql = select, sql
        self.exprs: list[exp.Expression] = []

    def add(self, node: exp.Expression) -> int:
        node = _strip(node)
        if isinstance(node, exp.Literal) and not node.is_string and node.is_int:
            node = self._ordinal(node)
        if isinstance(node, (*_CONSTRUCTS, exp.Tuple)):
            raise SqlError(f"{node.key.upper()} cannot be nested inside a grouping set", self.sql,
                           span_of(node))
        for found in node.find_all(exp.AggFunc, exp.Window):
            if found.find_ancestor(exp.Select) is self.select:
                raise SqlError("GROUP BY clause cannot contain aggregates or window functions",
                               self.sql, span_of(found))
        index = self.index(node)
        if index is None:
            self.exprs.append(node)
            index = len(self.exprs) - 1
        return index

    def index(self, node: exp.Expression) -> int | None:
        node = _strip(node)
        for i, key in enumerate(self.exprs):
            if key == node:
                return i
        return None

    def _ordinal(self, literal: exp.Literal) -> exp.Expression:
        items = self.select.expressions
        position = int(literal.name)
        if not 1 <= position <= len(items):
            raise SqlError(f"GROUP BY term out of range - should be between 1 and {len(items)}",
                           self.sql, span_of(literal))
        return _strip(items[position - 1].unalias())


def _grouping_sets(group: exp.Group, keys: _Keys, sql: str) -> list[frozenset[int]]:
    """DuckDB's list of grouping sets for a GROUP BY, each a set of key indices."""
    count = 1
    for item in group.expressions:
        count *= _count(item)
        if count > MAX_SETS:
            raise SqlError(f"Maximum grouping set count of {MAX_SETS} exceeded", sql,
                           span_of(item))
    result: list[frozenset[int]] | None = None
    for item in group.expressions:
        sets = _item_sets(item, keys)
        result = sets if result is None else [a | b for a in result for b in sets]
    return result or [frozenset()]


def _count(item: exp.Expression) -> int:
    if isinstance(item, exp.Rollup):
        return len(item.expressions) + 1
    if isinstance(item, exp.Cube):
        return 2 ** min(len(item.expressions), 20)
    if isinstance(item, exp.GroupingSets):
        return sum(_count(e) if isinstance(e, _CONSTRUCTS) else 1 for e in item.expressions)
    return 1


def _item_sets(item: exp.Expression, keys: _Keys) -> list[frozenset[int]]:
    if isinstance(item, exp.Rollup):
        sets, current = [frozenset()], frozenset()
        for element in item.expressions:
            current = current | _members(element, keys)
            sets.append(current)
        return sets
    if isinstance(item, exp.Cube):
        elements = [_members(e, keys) for e in item.expressions]
        sets: list[frozenset[int]] = []

        def add(current: frozenset[int], start: int) -> None:  # DuckDB's AddCubeSets order
            sets.append(current)
            for k in range(start, len(elements)):
                add(current | elements[k], k + 1)

        add(frozenset(), 0)
        return sets
    if isinstance(item, exp.GroupingSets):
        sets = []
        for element in item.expressions:
            if isinstance(element, _CONSTRUCTS):
                sets += _item_sets(element, keys)
            else:
                sets.append(_members(element, keys))
        return sets
    return [_members(item, keys)]


def _members(element: exp.Expression, keys: _Keys) -> frozenset[int]:
    """The keys of one grouping set element: ``(a, b)``, ``()``, ``(a)`` or ``a``."""
    inner = _strip(element)
    if isinstance(inner, exp.Tuple):
        return frozenset(keys.add(e) for e in inner.expressions)
    return frozenset({keys.add(inner)})


def _in_place(select: exp.Select, keys: _Keys, members: frozenset[int],
              sql: str) -> exp.Select:
    """One non-empty grouping set: plain GROUP BY keys, GROUPING calls as constants."""
    select.set("group", exp.Group(expressions=[keys.exprs[i].copy() for i in sorted(members)]))
    for call in [n for n in _own_nodes(select) if isinstance(n, _GROUPING)]:
        if call.find_ancestor(exp.Select) is not select:
            continue
        _check_inside_aggregate(call, select, sql)
        call.replace(_grouping_value(_grouping_args(call, keys, sql), members))
    return select


def _grouping_value(args: list[int], members: frozenset[int]) -> exp.Expression:
    """GROUPING(args) in a set as a constant, a BIGINT as in DuckDB (a bare literal would be an
    INTEGER)."""
    return exp.cast(exp.Literal.number(_mask(args, members)), exp.DataType.build("BIGINT"))


def _mask(args: list[int], members: frozenset[int]) -> int:
    """GROUPING(args) in a set: bit n-1-i set when key args[i] is rolled up."""
    value = 0
    for i in args:
        value = value * 2 + (0 if i in members else 1)
    return value


def _grouping_args(call: exp.Expression, keys: _Keys, sql: str) -> list[int]:
    """The keys a GROUPING call reads, by index; ``GROUPING()`` reads every key (DuckDB)."""
    if not call.expressions:
        if not keys.exprs:
            raise SqlError("GROUPING statement cannot be used without groups", sql,
                           span_of(call))
        return list(range(len(keys.exprs)))
    if len(call.expressions) > MAX_GROUPING_ARGS:
        raise SqlError(f"GROUPING statement cannot have more than {MAX_GROUPING_ARGS} groups",
                       sql, span_of(call))
    indices = []
    for arg in call.expressions:
        index = keys.index(arg)
        if index is None:
            raise SqlError(f'GROUPING child "{_display(arg)}" must be a grouping column', sql,
                           span_of(arg) or span_of(call))
        indices.append(index)
    return indices


def _check_inside_aggregate(call: exp.Expression, select: exp.Select, sql: str) -> None:
    node = call.parent
    while node is not None and node is not select:
        if isinstance(node, exp.AggFunc) and not isinstance(node, _GROUPING) and \
                not is_window_function(node):
            raise SqlError("GROUPING cannot be used inside an aggregate function", sql,
                           span_of(call))
        node = node.parent


# -- the UNION ALL of one grouped SELECT per set --------------------------------------------


class _Outer:
    """Reads a select-list / ORDER BY / QUALIFY / HAVING expression over the union's columns:
    keys as ``_gK``, aggregate calls as ``_aJ``, GROUPING calls as ``_xJ`` (registered as met),
    and refuses a column of the SELECT's sources read outside them."""

    def __init__(self, select: exp.Select, keys: _Keys, sql: str):
        self.select, self.keys, self.sql = select, keys, sql
        self.sources = select_sources(select)
        self.used_keys: list[int] = []
        self.aggregates: list[exp.Expression] = []
        self.groupings: list[list[int]] = []

    def rewrite(self, node: exp.Expression) -> exp.Expression:
        return self._visit(node, frozenset(), False)

    def _ref(self, name: str) -> exp.Column:
        return exp.column(name, table=SOURCE, quoted=True)

    def _visit(self, node: exp.Expression, shadow: frozenset[str], nested: bool) -> exp.Expression:
        if not _reads(node, shadow) and (not nested or node.find(exp.Column)):
            index = self.keys.index(node)
            if index is not None:
                if index not in self.used_keys:
                    self.used_keys.append(index)
                return self._ref(f"_g{index}")
        if not nested and isinstance(node, _GROUPING):
            args = _grouping_args(node, self.keys, self.sql)
            if args not in self.groupings:
                self.groupings.append(args)
            return self._ref(f"_x{self.groupings.index(args)}")
        if not nested and is_aggregate(node):
            for call in node.find_all(*_GROUPING):
                raise SqlError("GROUPING cannot be used inside an aggregate function", self.sql,
                               span_of(call))
            if node not in self.aggregates:
                self.aggregates.append(node.copy())
            return self._ref(f"_a{self.aggregates.index(node)}")
        if isinstance(node, exp.Column):
            if node.table in self.sources and node.table not in shadow:
                raise ungrouped_error(node, self.sql)
            return node
        if isinstance(node, exp.Select):
            shadow, nested = shadow | (select_sources(node) & self.sources), True
        if isinstance(node, exp.Window) and not nested:
            function = node.this
            while isinstance(function, AGGREGATE_WRAPPERS):  # FILTER (WHERE ...) is per row
                _map_children(function, lambda c: c if c is function.this else
                              self._visit(c, shadow, nested))
                function = function.this
            _map_children(function, lambda c: self._visit(c, shadow, nested))
            _map_children(node, lambda c: c if c is node.this else self._visit(c, shadow, nested))
            return node
        _map_children(node, lambda c: self._visit(c, shadow, nested))
        return node


def _union(select: exp.Select, keys: _Keys, sets: list[frozenset[int]],
           sql: str) -> exp.Select:
    outer = _Outer(select, keys, sql)
    items = [outer.rewrite(item.copy()) for item in select.expressions]
    order = select.args.get("order")
    order = outer.rewrite(order.copy()) if order is not None else None
    qualify_ = select.args.get("qualify")
    qualify_ = outer.rewrite(qualify_.copy()) if qualify_ is not None else None
    windows = [outer.rewrite(w.copy()) for w in select.args.get("windows") or []]
    having = select.args.get("having")
    where = None
    if having is not None and having.find(exp.Select) is not None:
        # a subquery in HAVING: the planner cannot unnest one under an ungrouped aggregate
        # (the empty set's branch), so the condition filters the union's rows instead
        where = outer.rewrite(having.this.copy())
    elif having is not None:
        _Outer(select, keys, sql).rewrite(having.this.copy())  # checks its columns only

    branches = [_branch(select, keys, members, outer, where is None) for members in sets]
    body = branches[0]
    for branch in branches[1:]:
        body = exp.Union(this=body, expression=branch, distinct=False)
    result = exp.Select(expressions=items)
    result.set("from_", exp.From(this=exp.Subquery(
        this=body, alias=exp.TableAlias(this=exp.to_identifier(SOURCE, quoted=True)))))
    if where is not None:
        result.set("where", exp.Where(this=where))
    if windows:
        result.set("windows", windows)
    for arg in ("with_", "distinct", "limit", "offset"):
        if select.args.get(arg) is not None:
            result.set(arg, select.args[arg].copy())
    for arg, value in (("qualify", qualify_), ("order", order)):
        if value is not None:
            result.set(arg, value)
    return result


def _branch(select: exp.Select, keys: _Keys, members: frozenset[int], outer: _Outer,
            with_having: bool) -> exp.Select:
    columns = []
    for index in outer.used_keys:
        value = keys.exprs[index].copy() if index in members else exp.Null()
        columns.append(exp.alias_(value, f"_g{index}", quoted=True))
    for j, aggregate in enumerate(outer.aggregates):
        columns.append(exp.alias_(aggregate.copy(), f"_a{j}", quoted=True))
    for j, args in enumerate(outer.groupings):
        columns.append(exp.alias_(_grouping_value(args, members), f"_x{j}", quoted=True))
    if not outer.aggregates:  # a set without keys is still one group, not a row per input row
        columns.append(exp.alias_(exp.Count(this=exp.Star()), "_n", quoted=True))
    branch = exp.Select(expressions=columns)
    for arg in ("from_", "joins", "where"):
        value = select.args.get(arg)
        if value:
            branch.set(arg, [v.copy() for v in value] if isinstance(value, list) else value.copy())
    if members:
        branch.set("group", exp.Group(expressions=[keys.exprs[i].copy() for i in sorted(members)]))
    having = select.args.get("having")
    if having is not None and with_having:
        condition = _for_set(having.this.copy(), keys, members)
        branch.set("having", exp.Having(this=condition))
    return branch


def _for_set(node: exp.Expression, keys: _Keys, members: frozenset[int]) -> exp.Expression:
    """A HAVING condition (without subqueries) for one grouping set: keys outside it are NULL,
    GROUPING calls constants; aggregates read the rows as they are."""
    index = keys.index(node)
    if index is not None:
        return node if index in members else exp.Null()
    if isinstance(node, _GROUPING):
        return _grouping_value(_grouping_args(node, keys, keys.sql), members)
    if is_aggregate(node):
        return node
    _map_children(node, lambda c: _for_set(c, keys, members))
    return node


def _refuse_correlated(select: exp.Select) -> None:
    """The branches repeat the SELECT inside a derived table; one that reads an outer query's
    columns would be a correlated derived table, which the planner does not decorrelate."""
    defined = set()
    for node in select.find_all(exp.Table, exp.Subquery, exp.CTE, exp.Values):
        if node.alias_or_name:
            defined.add(node.alias_or_name)
    for column in select.find_all(exp.Column):
        if column.table and column.table not in defined:
            raise UnsupportedSql("GROUPING SETS / ROLLUP / CUBE in a correlated subquery is not "
                                 f"supported (it reads {column.sql(dialect='duckdb')})")


# -- helpers --------------------------------------------------------------------------------


def _display(node: exp.Expression) -> str:
    """An expression as the user wrote it, about: columns without their tables."""
    node = _strip(node).copy()
    for column in list(node.find_all(exp.Column)):
        column.set("table", None)
    for ident in node.find_all(exp.Identifier):
        ident.set("quoted", False)
    return node.sql(dialect="duckdb", normalize_functions="lower")


def _strip(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _reads(node: exp.Expression, shadow: frozenset[str]) -> bool:
    """Does ``node`` read a column of a source a nested query shadows?"""
    return bool(shadow) and any(c.table in shadow for c in node.find_all(exp.Column))


def _own_nodes(select: exp.Select):
    """The nodes of ``select`` outside nested queries (its FROM / joins excluded)."""
    for arg, value in select.args.items():
        if arg in ("from_", "joins", "with_"):
            continue
        for part in value if isinstance(value, list) else [value]:
            if isinstance(part, exp.Expression):
                yield from _outside(part, exp.Select)


def _outside(node: exp.Expression, *kinds):
    return node.walk(prune=lambda n: n is not node and isinstance(n, kinds))


def _map_children(node: exp.Expression, fn) -> None:
    for key, value in list(node.args.items()):
        if isinstance(value, exp.Expression):
            new = fn(value)
            if new is not value:
                node.set(key, new)
        elif isinstance(value, list):
            new_list = [fn(v) if isinstance(v, exp.Expression) else v for v in value]
            if any(a is not b for a, b in zip(new_list, value)):
                node.set(key, new_list)
