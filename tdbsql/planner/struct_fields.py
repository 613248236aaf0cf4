"""A STRUCT's fields as columns: ``SELECT s.*`` (s a STRUCT, not a table) and a select item
``unnest(s)`` stand for one column per field of s, named as the field (DuckDB; an unnamed
struct's ``unnest`` gives ``element1``, ``element2``, ...).

Which fields s has is only known from its type, so the select's own FROM is asked first: a
query of the same FROM, WHERE and CTEs that selects the candidates is run by the connection
over empty tables, reading nothing (``Connection.result_schema``; not for an unnest whose
operand sqlglot types as a list from the tables' column types: the common unnest costs no
second run), and each candidate that is a STRUCT becomes ``struct_extract_at(s, i) AS
"field"`` items (``s.* EXCLUDE (a)`` leaves field a out).  A select whose typing query fails
(a correlated subquery, an error the statement's own planning reports) is left as written;
the engine refuses what is left (a qualified star that names no table, unnest of a STRUCT).
"""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from ..errors import SqlError, UnsupportedSql
from .parse import span_over
from .pivots import ctes_before

# calls that give a list (sqlglot's nodes of them, and names it keeps as written)
_LIST_CALLS = (exp.Split, exp.RegexpSplit, exp.MapKeys, exp.ArrayFilter, exp.Transform,
               exp.ArraySort, exp.ArrayDistinct, exp.Flatten, exp.ArrayAgg, exp.Array)
_LISTS = {"regexp_split_to_array", "map_values", "map_entries", "list_reverse", "list_slice",
          "array_slice", "array_reverse", "list_zip"}
_DROPPED = ("group", "having", "order", "qualify", "distinct", "windows", "limit", "offset")


def expands_structs(tree: exp.Expression) -> bool:
    """Does a select of ``tree`` hold an item that may stand for a STRUCT's fields?"""
    return any(_candidates(select) for select in tree.find_all(exp.Select))


def with_struct_fields(con, tree: exp.Expression, schema: dict, sql: str) -> exp.Expression:
    """``tree`` with each STRUCT star and unnest item of its selects (innermost first) as
    the struct's fields, typed by queries ``con`` runs (``schema``: {table: {column: SQL
    type}}; ``sql``: the statement, where a star of no struct is underlined)."""
    for select in reversed(list(tree.find_all(exp.Select))):
        candidates = _unless_lists(select, _candidates(select), schema)
        if candidates:
            types = _types(con, tree, select, [operand for _, operand in candidates])
            if types is not None:
                _expand(select, candidates, types, sql)
    return tree


def _candidates(select: exp.Select) -> list[tuple[exp.Expression, exp.Expression]]:
    """(item, operand) of the items that may stand for fields: ``s.*`` whose s is not one
    of the select's sources, and ``unnest(x)`` (aliased or not) of no options."""
    sources = _source_names(select)
    found = []
    for item in select.expressions:
        call = item.this if isinstance(item, exp.Alias) else item
        if isinstance(call, exp.Explode) and not call.expressions:
            found.append((item, call.this))
        elif isinstance(item, exp.Column) and isinstance(item.this, exp.Star) and \
                item.table and not item.args.get("db") and item.table not in sources and \
                not any(item.this.args.get(k) for k in ("replace", "rename", "ilike")):
            found.append((item, exp.column(item.args["table"].copy())))
    return found


def _unless_lists(select: exp.Select, candidates, schema: dict) -> list:
    """The candidates but the unnests whose operand is a list: a call that always gives one,
    or one sqlglot types as a list."""
    candidates = [(item, operand) for item, operand in candidates
                  if not isinstance(operand, _LIST_CALLS) and
                  not (isinstance(operand, exp.Anonymous) and operand.name.lower() in _LISTS)]
    unnests = [operand for item, operand in candidates if not isinstance(item, exp.Column)]
    if not unnests:
        return candidates
    lists = {id(operand) for operand, type_ in zip(unnests, _sqlglot_types(select, unnests,
                                                                           schema))
             if type_ is not None and type_.is_type(exp.DataType.Type.ARRAY)}
    return [(item, operand) for item, operand in candidates if id(operand) not in lists]


def _sqlglot_types(select: exp.Select, operands, schema: dict) -> list:
    mapping = MappingSchema(schema, dialect="duckdb", normalize=False)
    try:
        typed = annotate_types(qualify(_typing_query(select, operands), schema=mapping,
                                       dialect="duckdb", quote_identifiers=False,
                                       validate_qualify_columns=False), schema=mapping)
    except SqlglotError:
        return [None] * len(operands)
    return [item.type for item in typed.selects]


def _typing_query(select: exp.Select, operands) -> exp.Select:
    """The select's rows (FROM, WHERE), giving ``operands`` as columns ``_f0``, ``_f1``..."""
    query = select.copy()
    for key in _DROPPED:
        query.set(key, None)
    query.set("expressions", [operand.copy().as_(f"_f{n}") for n, operand in enumerate(operands)])
    return query


def _source_names(select: exp.Select) -> set[str]:
    froms = [select.args.get("from_"), *(select.args.get("joins") or [])]
    return {source.alias_or_name for part in froms if part is not None
            for source in [part.this]} | \
        {cte.alias for node in _ancestry(select) if isinstance(node, exp.Query)
         for cte in (node.args["with_"].expressions if node.args.get("with_") else [])}


def _ancestry(node: exp.Expression):
    while node is not None:
        yield node
        node = node.parent


def _types(con, tree: exp.Expression, select: exp.Select, operands) -> list | None:
    """The Arrow types of ``operands`` over the select's rows (None: not known here)."""
    query = _typing_query(select, operands)
    ctes = ctes_before(tree, select) if select is not tree else []
    if ctes:
        own = query.args["with_"].expressions if query.args.get("with_") else []
        query.set("with_", exp.With(expressions=ctes + list(own)))
    try:
        return list(con.result_schema(query.sql(dialect="duckdb")).types)
    except (SqlError, UnsupportedSql, SqlglotError, ValueError):  # sqlglot cannot print some
        return None


def _expand(select: exp.Select, candidates, types, sql: str) -> None:
    """Replace each candidate whose operand is a STRUCT by its field items."""
    from ..engine.struct_values import is_unnamed

    replaced = {}
    for (item, operand), type_ in zip(candidates, types):
        star = isinstance(item, exp.Column)
        if star and (not pa.types.is_struct(type_) or is_unnamed(type_)):
            raise SqlError(f'Cannot extract field from expression "{item.sql("duckdb")}" '
                           "because it is not a struct", sql, span_over(item))
        if not pa.types.is_struct(type_):
            continue
        excluded = {e.name.lower() for e in (item.this.args.get("except_") or [])} if star \
            else set()
        if not excluded <= {field.name.lower() for field in type_}:
            continue  # EXCLUDE of no field: left for the engine to refuse
        replaced[id(item)] = [
            exp.Anonymous(this="struct_extract_at",
                          expressions=[operand.copy(), exp.Literal.number(n)]).as_(
                exp.to_identifier(field.name, quoted=True))
            for n, field in enumerate(type_, start=1) if field.name.lower() not in excluded]
    if replaced:
        _from_columns_named(select, {new.alias.lower() for items in replaced.values()
                                     for new in items},
                            {item.alias.lower() for item, _ in candidates
                             if id(item) in replaced and isinstance(item, exp.Alias)},
                            {item.alias.lower(): item.this for item in select.expressions
                             if isinstance(item, exp.Alias) and id(item) not in replaced})
        select.set("expressions", [new for item in select.expressions
                                   for new in replaced.get(id(item), [item])])


def _from_columns_named(select: exp.Select, fields: set[str], aliases: set[str],
                        others: dict) -> None:
    """DuckDB's ORDER BY (GROUP BY, HAVING, QUALIFY) does not see the field columns by their
    names (``fields``): a name there is the FROM's column, so it is qualified with the
    select's one source (named ``__fields`` if it is an unnamed subquery; beside a join:
    refused, not read as the field) -- but a whole ORDER BY term naming another item's
    alias (``others``: alias -> expression) is that item, as DuckDB binds it.  An unnest's
    alias there (``aliases``, DuckDB's struct itself) is refused."""
    source = select.args.get("from_")
    table = ""
    if source is not None and not select.args.get("joins"):
        if isinstance(source.this, exp.Subquery) and not source.this.alias:
            source.this.set("alias", exp.TableAlias(this=exp.to_identifier("__fields")))
        table = source.this.alias_or_name
    for key in ("order", "group", "having", "qualify", "distinct"):
        clause = select.args.get(key)
        for column in list(clause.find_all(exp.Column)) if clause is not None else []:
            name = column.name.lower()
            if column.table or name not in fields | aliases:
                continue
            if key == "order" and name in others and isinstance(column.parent, exp.Ordered):
                column.replace(others[name].copy())  # a whole ORDER BY term: the alias
                continue
            if name in aliases or not table:
                raise UnsupportedSql(f"{key.upper()} naming {column.name!r} beside a STRUCT's "
                                     "fields (s.*, unnest(s)) is not supported here: qualify "
                                     "it or use its position")
            column.set("table", exp.to_identifier(table))
