"""Window functions: give each ``SELECT`` that has ``... OVER (...)`` a step of its own.

A window function sees the rows a SELECT has after WHERE, GROUP BY and HAVING, and its value is
then used by the select list, QUALIFY, DISTINCT, ORDER BY and LIMIT.  sqlglot's planner has no
window step (and would take ``sum(x) OVER ()`` for an aggregate of the SELECT), so a windowed
SELECT is split into three, chained as CTEs (``k`` numbers the windowed SELECTs of a query):

    _w<k>_rows   SELECT <every non-window expression the rest needs> AS _wc<i>
                 FROM ... WHERE ... GROUP BY ... HAVING ...          (the original rows)
    _w<k>        SELECT _wc<i>, <window call over _wc columns> AS _ww<j>
                 FROM _w<k>_rows                                     (windows, all rows at once)
    (in place)   SELECT [DISTINCT] <select list over _wc/_ww> FROM _w<k>
                 WHERE <QUALIFY> ORDER BY ... LIMIT ...

In ``_w<k>`` each window call reads plain columns only, and its function is written as an
``Anonymous`` call named by the function's SQL name (``row_number``, ``sum``, ``lag`` ...), so no
aggregate node is left for the planner to mistake; ``engine.window_functions`` computes it.
Constant arguments (``lag(x, 2, 0)``, ``ntile(4)``) stay inline.  A ``FILTER (WHERE c)`` stays
around the call, its condition a ``_wc`` column like the arguments.  Runs on the optimized tree,
where every column names its table and a bare column in ORDER BY / QUALIFY names an output
alias.
"""

from __future__ import annotations

from itertools import count

from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from .column_names import note_call, written_call
from .named_windows import definitions, own_windows, resolved

_FRAME_KINDS = ("ROWS", "RANGE", "GROUPS")


def lift_windows(tree: exp.Expression) -> exp.Expression:
    """``tree`` with every SELECT that computes window functions split into its three steps."""
    numbers = count()
    for select in reversed(list(tree.find_all(exp.Select))):
        if not own_windows(select):
            continue
        split = _Split(select, next(numbers)).build()
        if select is tree:
            tree = split
        else:
            select.replace(split)
    return tree


class _Split:
    def __init__(self, select: exp.Select, number: int):
        self.select = select
        self.rows_name, self.windowed_name = f"_w{number}_rows", f"_w{number}"
        self.lifted: dict[exp.Expression, str] = {}  # expression -> _wc<i> in rows
        self.windows: dict[exp.Window, str] = {}  # window call -> _ww<j> in windowed
        self.named = definitions(select)  # WINDOW w AS (...)

    def build(self) -> exp.Select:
        select = self.select
        outputs = {e.alias_or_name: e for e in select.expressions}
        projections = [exp.alias_(self.rewrite(e.unalias()), e.alias_or_name, quoted=True)
                       for e in select.expressions]
        outer = exp.Select(expressions=projections)
        outer.set("from_", exp.From(this=exp.Table(this=_ident(self.windowed_name))))
        qualify = select.args.get("qualify")
        if qualify is not None:
            condition = _with_outputs(qualify.this, outputs)
            outer.set("where", exp.Where(this=self.rewrite(condition)))
        order = select.args.get("order")
        if order is not None:
            outer.set("order", exp.Order(expressions=[
                exp.Ordered(this=self.rewrite(o.this), desc=o.args.get("desc"),
                            nulls_first=o.args.get("nulls_first"))
                for o in order.expressions]))
        for key in ("distinct", "limit", "offset"):
            if select.args.get(key) is not None:
                outer.set(key, select.args[key].copy())
        ctes = [cte.copy() for cte in (select.args.get("with_") or exp.With()).expressions]
        ctes += [exp.CTE(this=self._rows(), alias=exp.TableAlias(this=_ident(self.rows_name))),
                 exp.CTE(this=self._windowed(),
                         alias=exp.TableAlias(this=_ident(self.windowed_name)))]
        outer.set("with_", exp.With(expressions=ctes))
        return outer

    # -- the three steps ---------------------------------------------------------------------

    def _rows(self) -> exp.Select:
        # exp.Alias itself: alias_ would name a Subquery as a derived table, ``(SELECT 1) AS
        # _wc1``, whose column the planner then loses
        rows = exp.Select(expressions=[exp.Alias(this=node.copy(), alias=_ident(name))
                                       for node, name in self.lifted.items()]
                          or [exp.alias_(exp.Literal.number(1), "_wc0", quoted=True)])
        for key in ("from_", "joins", "where", "group", "having"):
            value = self.select.args.get(key)
            if value is not None:  # an empty join list too: the planner then names steps right
                rows.set(key, [v.copy() for v in value] if isinstance(value, list)
                         else value.copy())
        return rows

    def _windowed(self) -> exp.Select:
        passed = [exp.alias_(exp.column(name, self.rows_name, quoted=True), name, quoted=True)
                  for name in self.lifted.values()]
        windowed = exp.Select(expressions=passed + [
            exp.alias_(window, name, quoted=True) for window, name in self.windows.items()])
        windowed.set("from_", exp.From(this=exp.Table(this=_ident(self.rows_name))))
        return windowed

    # -- rewriting expressions of the select list, QUALIFY and ORDER BY -----------------------

    def rewrite(self, node: exp.Expression) -> exp.Expression:
        """``node`` over the windowed step's columns: window calls become ``_ww`` columns,
        the largest parts without one become ``_wc`` columns computed by the rows step, bare
        output aliases and constants stay."""
        if isinstance(node, exp.Window):
            return self._window(node)
        branches = isinstance(node, exp.If) and isinstance(node.parent, exp.Case)
        if not branches and not _has(node, exp.Window) and not _alias_refs(node):
            if _is_constant(node):
                return node.copy()
            if _is_branch(node) and not isinstance(node, exp.Column) and \
                    node.find(exp.AggFunc, exp.Subquery) is None:
                # a CASE result is computed for the rows choosing it only (``CASE WHEN g <>
                # 0 THEN v // g``): its columns come from the rows step, not the expression
                return node.transform(lambda n: exp.column(
                    self._lift(n), self.windowed_name, quoted=True)
                    if isinstance(n, exp.Column) else n)
            return exp.column(self._lift(node), self.windowed_name, quoted=True)
        if isinstance(node, exp.Column):  # an output alias (ORDER BY x)
            return node.copy()
        original = node
        node = node.copy()
        for key, value in list(original.args.items()):
            if isinstance(value, exp.Expression):
                node.set(key, self.rewrite(value))
            elif isinstance(value, list):
                node.set(key, [self.rewrite(v) if isinstance(v, exp.Expression) else v
                               for v in value])
        return node

    def _lift(self, node: exp.Expression) -> str:
        if node not in self.lifted:
            self.lifted[node] = f"_wc{len(self.lifted)}"
        return self.lifted[node]

    def _column(self, node: exp.Expression) -> exp.Expression:
        """An operand of a window call, read from the rows step (constants stay inline)."""
        if _has(node, exp.Window):
            raise UnsupportedSql(f"a window function inside a window function: {node.sql()!r}")
        if _is_constant(node):
            return node.copy()
        return exp.column(self._lift(node), self.rows_name, quoted=True)

    def _argument(self, node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Star):
            return _STAR
        if isinstance(node, exp.Order):  # array_agg(x ORDER BY y) OVER (...): keys lifted too
            this = None if node.this is None else self._argument(node.this)  # rank(ORDER BY y)
            return exp.Order(this=this, expressions=[
                exp.Ordered(this=self._column(o.this), desc=o.args.get("desc"),
                            nulls_first=o.args.get("nulls_first")) for o in node.expressions])
        if isinstance(node, exp.Distinct):  # count(DISTINCT x) OVER (...)
            if len(node.expressions) != 1:
                raise UnsupportedSql(f"DISTINCT over several columns: {node.sql()!r}")
            return exp.Distinct(expressions=[self._column(node.expressions[0])])
        return self._column(node)

    def _window(self, window: exp.Window) -> exp.Column:
        window = resolved(window, self.named)  # OVER w: the window w stands for
        function, ignore_nulls, condition = _unwrapped(window.this)
        call = exp.Anonymous(this=_function_name(function),
                             expressions=[self._argument(a) for a in _arguments(function)])
        written = written_call(function)
        if written is not None:  # the engine's messages name the function as written
            note_call(call, written[0], None, True)
        if condition is not None:  # which functions take it is the engine's check
            call = exp.Filter(this=call, expression=exp.Where(this=self._column(condition)))
        order = window.args.get("order")
        lifted = exp.Window(
            this=exp.IgnoreNulls(this=call) if ignore_nulls else call,
            partition_by=[self._column(p) for p in window.args.get("partition_by") or []],
            order=None if order is None else exp.Order(expressions=[
                exp.Ordered(this=self._column(o.this), desc=o.args.get("desc"),
                            nulls_first=o.args.get("nulls_first"))
                for o in order.expressions]),
            spec=_checked_spec(window, self._column))
        _keep_span(lifted, window)
        name = self.windows.get(lifted)
        if name is None:  # the same call twice (QUALIFY naming a select-list window) runs once
            name = self.windows[lifted] = f"_ww{len(self.windows)}"
        return exp.column(name, self.windowed_name, quoted=True)


_STAR = exp.Star()


def _unwrapped(function: exp.Expression) -> tuple[exp.Expression, bool, exp.Expression | None]:
    """(the function of a window call, IGNORE NULLS?, its FILTER condition or None), from
    under the IGNORE / RESPECT NULLS and FILTER (WHERE ...) wrapped around it."""
    ignore_nulls, condition = False, None
    while isinstance(function, (exp.IgnoreNulls, exp.RespectNulls, exp.Filter)):
        if isinstance(function, exp.Filter):
            condition = function.expression.this
        else:
            ignore_nulls = ignore_nulls or isinstance(function, exp.IgnoreNulls)
        function = function.this
    return function, ignore_nulls, condition


def _function_name(function: exp.Expression) -> str:
    if isinstance(function, exp.Anonymous):
        return function.name.lower()
    if not isinstance(function, exp.Func) or isinstance(function, exp.Cast):
        # e.g. GROUPING() OVER () (a BIGINT constant by now), CAST(x AS T) OVER (): DuckDB
        # refuses both
        raise SqlError(f"OVER needs a window or aggregate function, not "
                       f"{function.sql(dialect='duckdb')!r}")
    return function.sql_name().lower()


def _arguments(function: exp.Expression) -> list[exp.Expression]:
    """A call's arguments in their SQL order (sqlglot keeps them as named args)."""
    args = []
    for key in type(function).arg_types:
        value = function.args.get(key)
        if isinstance(value, list):
            args.extend(value)
        elif isinstance(value, exp.Expression):
            args.append(value)
    return args


def _checked_spec(window: exp.Window, lift) -> exp.WindowSpec | None:
    """The frame clause, checked; a ROWS offset that is not a constant (one per row, as in
    DuckDB) becomes a column of the rows (``lift``)."""
    spec = window.args.get("spec")
    if spec is None:
        return None
    kind = str(spec.args.get("kind") or "").upper()
    text = window.sql(dialect="duckdb")
    if kind not in _FRAME_KINDS:
        raise UnsupportedSql(f"{kind} frames are not supported (ROWS, RANGE and GROUPS are): {text!r}")
    spec = spec.copy()
    for key in ("start", "end"):
        bound = spec.args.get(key)
        if isinstance(bound, exp.Expression) and not _is_constant(bound):
            if kind != "ROWS":
                raise UnsupportedSql(f"a {kind} frame offset must be a constant: {text!r}")
            spec.set(key, lift(bound))
    return spec


def _keep_span(lifted: exp.Expression, original: exp.Expression) -> None:
    """Give the rewritten call the original's place in the SQL text (what sqlglot recorded of
    it: names and literals), so an error in it underlines the call, not one of its parts."""
    starts, ends = [], []
    for node in original.walk():
        meta = getattr(node, "_meta", None) or {}
        if "start" in meta and "end" in meta:
            starts.append(meta["start"])
            ends.append(meta["end"])
    if starts:
        lifted.meta["start"], lifted.meta["end"] = min(starts), max(ends)


def _with_outputs(condition: exp.Expression, outputs: dict[str, exp.Expression]):
    """QUALIFY may name select-list aliases: read them as the expressions they stand for."""
    condition = condition.copy()
    for column in list(condition.find_all(exp.Column)):
        if not column.table and column.name in outputs:
            column.replace(outputs[column.name].unalias().copy())
    return condition


def _is_branch(node: exp.Expression) -> bool:
    """Is ``node`` a result of a CASE / IF (not a condition)?  A CASE's WHEN branches are
    ``If`` nodes kept as they are (lifting one whole made the CASE unreadable)."""
    parent = node.parent
    if isinstance(parent, exp.If):
        return node.arg_key in ("true", "false")
    return isinstance(parent, exp.Case) and node.arg_key == "default"


def _has(node: exp.Expression, kind) -> bool:
    return node.find(kind) is not None


def _alias_refs(node: exp.Expression) -> bool:
    """Does ``node`` name an output alias (a column without a table)?"""
    return any(not c.table for c in node.find_all(exp.Column))


def _is_constant(node: exp.Expression) -> bool:
    return node.find(exp.Column, exp.AggFunc, exp.Subquery, exp.Star, exp.Window) is None


def _ident(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)
