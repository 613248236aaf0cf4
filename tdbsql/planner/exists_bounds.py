"""Correlated ``EXISTS`` with an inequality, answered from each key's MIN and MAX.

sqlglot decorrelates ``EXISTS (SELECT ... WHERE i.k = o.k AND i.c <> o.c)`` into a CTE that
groups the inner rows by ``k`` with ``ARRAY_AGG(i.c)``, a LEFT JOIN on ``k``, and the test
``ARRAY_ANY(list, x -> o.c <> x)``.  Building one list per key (1.5M lists for TPC-H Q21) and
filtering every joined row's list is most of such a query's time.  A comparison that has to
hold for *some* element needs only the extremes of the non-NULL elements:

    o <> x for some x   <=>   lo <> o OR hi <> o
    o <  x              <=>   o < hi          o <= x   <=>   o <= hi
    o >  x              <=>   o > lo          o >= x   <=>   o >= lo

where a NULL ``o``, or a key whose elements are all NULL, matches none (``lo``/``hi`` are
NULL, the comparison is NULL, and COALESCE makes it FALSE).  ``ARRAY_ANY`` is also TRUE for an
empty list and NULL when there is no list (the key is missing from the LEFT JOIN); the list's
length is ``COUNT(*)`` of the key's rows, which tells both.  So when every use of such a list is
one of these tests (or its length), the CTE computes ``MIN``, ``MAX`` and ``COUNT(*)`` instead
of the list.  Both sides must be of one family that MIN/MAX order as the comparison does:
numbers, dates and times, or strings (bytewise).
"""

from __future__ import annotations

from sqlglot import exp

from .comparison_order import FLIPPED
from .grouped_columns import source_clauses

_FLIPPED = {exp.NEQ: exp.NEQ, **FLIPPED}  # the comparisons a bound can stand for


def exists_from_bounds(tree: exp.Expression) -> exp.Expression:
    """Rewrite (in place) every ARRAY_AGG list that only serves comparison tests."""
    tests: dict[tuple[str, str], list[tuple[exp.ArrayAny, type, exp.Expression]]] = {}
    for node in tree.find_all(exp.ArrayAny):
        test = _comparison_test(node)
        if test is not None:
            tests.setdefault((node.this.table, node.this.name), []).append((node, *test))
    for (table, name), found in tests.items():
        aggregate = _list_aggregate(tree, found[0][0], table, name)
        if aggregate is not None and _only_tests(tree, table, name, found) and all(
                _family(outer.type) == _family(aggregate.this.this.type)
                for _, _, outer in found):
            _rewrite(tree, aggregate, table, name, found)
    return tree


def _family(data_type) -> str | None:
    """Values of one family compare in the order MIN/MAX use (a string against a number
    compares as numbers, row by row, so such a test keeps its list)."""
    if data_type is None:
        return None
    for family, types in (("number", exp.DataType.NUMERIC_TYPES),
                          ("time", exp.DataType.TEMPORAL_TYPES), ("text", exp.DataType.TEXT_TYPES)):
        if data_type.is_type(*types):
            return family
    return None


def _comparison_test(node: exp.ArrayAny):
    """(operator with the outer value on the left, outer value) of ``ARRAY_ANY(t.c, x -> o OP
    x)`` (either side), or None for any other lambda."""
    lam = node.expression
    if not isinstance(node.this, exp.Column) or not node.this.table or \
            not isinstance(lam, exp.Lambda) or len(lam.expressions) != 1:
        return None
    body, variable = lam.this, lam.expressions[0].name
    if type(body) not in _FLIPPED:
        return None
    left, right = body.this, body.expression
    if _is_variable(right, variable) and not _mentions(left, variable):
        return type(body), left
    if _is_variable(left, variable) and not _mentions(right, variable):
        return _FLIPPED[type(body)], right
    return None


def _is_variable(node: exp.Expression, variable: str) -> bool:
    return (isinstance(node, exp.Identifier) or isinstance(node, exp.Column) and
            not node.table) and node.name == variable


def _mentions(node: exp.Expression, variable: str) -> bool:
    return any(_is_variable(n, variable) for n in node.walk())


def _list_aggregate(tree: exp.Expression, use: exp.Expression, table: str, name: str):
    """The ``ARRAY_AGG(value) AS name`` alias of the one CTE that ``table`` names in the
    SELECT around ``use``, if that CTE is read nowhere else and the value is ordered."""
    select = use.find_ancestor(exp.Select)
    tables = [s.this for s in source_clauses(select) if isinstance(s.this, exp.Table)
              and s.this.alias_or_name == table]
    if len(tables) != 1:
        return None
    ctes = [c for c in tree.find_all(exp.CTE) if c.alias == tables[0].name]
    readers = [t for t in tree.find_all(exp.Table) if t.name == tables[0].name]
    if len(ctes) != 1 or len(readers) != 1 or not isinstance(ctes[0].this, exp.Select) or \
            not ctes[0].this.args.get("group"):
        return None
    for item in ctes[0].this.expressions:
        if isinstance(item, exp.Alias) and item.alias == name and \
                type(item.this) is exp.ArrayAgg and set(item.this.args) <= {"this"}:
            if _family(item.this.this.type) is not None:
                return item
    return None


def _only_tests(tree: exp.Expression, table: str, name: str, found) -> bool:
    """Is every reference to ``table.name`` a test in ``found`` or the list's length?"""
    tests = {id(node) for node, _, _ in found}
    for column in tree.find_all(exp.Column):
        if column.table == table and column.name == name:
            parent = column.parent
            if not (id(parent) in tests or isinstance(parent, exp.ArraySize)):
                return False
    return True


def _rewrite(tree: exp.Expression, aggregate: exp.Alias, table: str, name: str,
             found) -> None:
    select = aggregate.parent
    taken = {e.alias_or_name for e in select.expressions}
    lo, hi, count = (_fresh(f"{name}_{part}", taken) for part in ("lo", "hi", "n"))
    value = aggregate.this.this
    items = list(select.expressions)
    at = next(i for i, e in enumerate(items) if e is aggregate)
    items[at:at + 1] = [exp.alias_(exp.Min(this=value.copy()), lo, quoted=True),
                        exp.alias_(exp.Max(this=value.copy()), hi, quoted=True),
                        exp.alias_(exp.Count(this=exp.Star()), count, quoted=True)]
    select.set("expressions", items)

    def column(part):
        return exp.column(part, table=table, quoted=True)

    for node, operator, outer in found:
        node.replace(_test(operator, outer, column(lo), column(hi), column(count)))
    for size in list(tree.find_all(exp.ArraySize)):
        if isinstance(size.this, exp.Column) and size.this.table == table and \
                size.this.name == name:
            size.replace(column(count))


def _test(operator, outer, lo, hi, count) -> exp.Expression:
    """``ARRAY_ANY(list, x -> outer OP x)`` from the list's MIN, MAX and length."""
    if operator is exp.NEQ:
        holds = exp.or_(exp.NEQ(this=lo, expression=outer.copy()),
                        exp.NEQ(this=hi, expression=outer.copy()))
    else:
        bound = hi if operator in (exp.LT, exp.LTE) else lo
        holds = operator(this=outer.copy(), expression=bound)
    return exp.Case(ifs=[
        exp.If(this=exp.Is(this=count.copy(), expression=exp.Null()), true=exp.Null()),
        exp.If(this=exp.EQ(this=count.copy(), expression=exp.Literal.number(0)),
               true=exp.true()),
    ], default=exp.func("COALESCE", exp.paren(holds), exp.false()))


def _fresh(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "_"
    taken.add(name)
    return name
