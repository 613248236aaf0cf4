"""``TABLESAMPLE`` / ``USING SAMPLE`` (DuckDB): a random sample of a table's rows.

Each sample becomes a derived table over the sampled table, before any other rewrite:

    t TABLESAMPLE 10%              (SELECT * FROM t WHERE system_sample(0.1)) AS t
    t USING SAMPLE 10% (bernoulli)   (SELECT * FROM t WHERE random() < 0.1) AS t
    t USING SAMPLE 50 ROWS         (SELECT * FROM t ORDER BY random() LIMIT 50) AS t
    t USING SAMPLE reservoir(10%)  (SELECT * FROM t QUALIFY row_number() OVER (ORDER BY
                                    random()) <= round(count(*) OVER () * 10 / 100)) AS t

A percentage with SYSTEM, DuckDB's default, keeps or drops whole blocks: DuckDB's vectors of
2,048 rows, tdbsql's tiles.  An array scan that streams (no overlapping fragments to merge)
draws for each tile it would read and reads only those kept, so a 1% sample of a big array
decodes 1% of its tiles; anywhere else ``system_sample(p)`` keeps each row with chance p.
BERNOULLI keeps each row with chance p.  Each row's chance is p either way.  A number of rows is a reservoir:
exactly that many rows (all of them if fewer), each set of them equally likely.  ``USING
SAMPLE`` applies to the FROM clause before WHERE; over a join it is refused by name.
``REPEATABLE (seed)`` / ``(system, seed)`` draws a SYSTEM share's tiles (or rows) alike on
every run over the same array; where an array's cells are merged (or a dense box) first, the
scan draws rows per task from its own stream, ``(seed, the task's position)``, so no slab
repeats another's draws (``engine.scan_step``).  With another method a seed is refused by
name (random() has no seed).  A share past 100%, a negative size or a row
count with BERNOULLI is DuckDB's error.  A fraction of a row rounds half to even (2.5 ROWS: 2,
3.5 ROWS: 4) and a reservoir's share of rows half up (2.5 rows: 3), as DuckDB counts them.
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import SqlError, UnsupportedSql

SYSTEM_SAMPLE = "system_sample"  # the mark of a SYSTEM sample: its share, 0 to 1
from .conjuncts import and_all, conjuncts
from .limit_percent import number_constant
from .parse import span_of


def table_samples(tree: exp.Expression, sql: str) -> exp.Expression:
    """``tree`` with every sampled table a derived table drawing the sample."""
    for sample in list(tree.find_all(exp.TableSample)):
        table = sample.parent
        if isinstance(table, exp.Select):  # USING SAMPLE: the FROM clause's rows
            if table.args.get("joins") or not isinstance(table.args.get("from_"), exp.From) or \
                    not isinstance(table.args["from_"].this, exp.Table):
                raise UnsupportedSql(f"USING SAMPLE over a join or a derived table is not "
                                     f"supported: {sample.sql(dialect='duckdb')!r}")
            sample.pop()
            table = table.args["from_"].this
        elif isinstance(table, exp.Table):
            sample.pop()
        else:
            raise UnsupportedSql(f"TABLESAMPLE here is not supported: {sample.sql()!r}")
        table.replace(_sampled(table, sample, sql))
    return tree


def _sampled(table: exp.Table, sample: exp.TableSample, sql: str) -> exp.Subquery:
    method = (sample.text("method") or "").upper()
    seed = sample.args.get("seed") or None  # (sqlglot leaves False for "(method)" alone)
    system = sample.args.get("percent") is not None and method in ("", "SYSTEM")
    if seed is not None and not system:
        raise UnsupportedSql(f"a sample with REPEATABLE (seed) is not supported but for a "
                             f"SYSTEM share: {sample.sql(dialect='duckdb')!r}")
    alias = table.args.get("alias")
    inner = table.copy()
    inner.set("alias", None)
    select = exp.select("*").from_(inner)
    percent, size = sample.args.get("percent"), sample.args.get("size")
    if percent is not None:
        share = _number(percent, sql, sample)
        if share > 100:
            raise SqlError(f"Sample sample_size {share:f} out of range, must be between 0 and "
                           f"100", sql, span_of(sample))
        if method == "RESERVOIR":  # p% of the rows, rounded half up, as DuckDB counts
            select.set("qualify", exp.Qualify(this=exp.maybe_parse(
                f"row_number() OVER (ORDER BY random()) <= "
                f"round(count(*) OVER () * {percent.this} / 100)", dialect="duckdb")))
        elif method == "BERNOULLI":
            select = select.where(exp.LT(this=exp.Rand(),
                                         expression=exp.Literal.number(share / 100)))
        else:  # SYSTEM: whole tiles of an array (engine.scan_step), rows of anything else
            mark = [exp.Literal.number(share / 100)]
            if seed is not None:
                value = number_constant(seed)
                if value is None or value != int(value) or value < 0:
                    raise SqlError("REPEATABLE takes a non-negative integer seed", sql,
                                   span_of(seed))
                mark.append(exp.Literal.number(int(value)))
            select = select.where(exp.Anonymous(this=SYSTEM_SAMPLE, expressions=mark))
    elif size is not None:
        if method == "BERNOULLI":
            raise SqlError(f"Sample method {method.title()} cannot be used with a discrete "
                           f"sample count, either switch to reservoir sampling or use a "
                           f"sample_size", sql, span_of(sample))
        select.set("order", _random_order())
        select = select.limit(round(_number(size, sql, sample)))  # 2.5 ROWS: 2, as DuckDB
    else:
        raise SqlError("a sample needs a size", sql, span_of(sample))
    name = alias.this.copy() if alias is not None else exp.to_identifier(table.name, quoted=True)
    return exp.Subquery(this=select, alias=exp.TableAlias(
        this=name, columns=[c.copy() for c in alias.columns] if alias is not None else []))


def _random_order() -> exp.Order:
    return exp.Order(expressions=[exp.Ordered(this=exp.Rand(), desc=False, nulls_first=False)])


def _number(node: exp.Expression, sql: str, sample: exp.TableSample) -> float:
    """The size's value: a number literal (DuckDB's grammar has no sign there)."""
    if isinstance(node, exp.Neg):
        raise SqlError('syntax error at or near "-"', sql, span_of(node))
    value = number_constant(node)
    if value is None:
        raise UnsupportedSql(f"a sample size that is not a number is not supported: "
                             f"{sample.sql(dialect='duckdb')!r}")
    return value


def is_sample_mark(node: exp.Expression) -> bool:
    return isinstance(node, exp.Anonymous) and node.name.lower() == SYSTEM_SAMPLE


def sample_last(condition: exp.Expression | None) -> exp.Expression | None:
    """``condition`` with a SYSTEM sample's mark as its last conjunct (as it is when there is
    none or it is last already)."""
    terms = conjuncts(condition)
    marks = [term for term in terms if is_sample_mark(term)]
    if not marks or terms[-len(marks):] == marks:
        return condition
    return and_all([term for term in terms if not is_sample_mark(term)] + marks)


def sample_drawn(condition: exp.Expression | None) -> tuple[float, int | None] | None:
    """(the share of tiles a scan of ``condition`` (``sample_last``'s) draws, a number from 0
    to 1; its REPEATABLE seed or None) of its one sample mark -- or None (no mark, or
    several: those test rows)."""
    terms = conjuncts(condition)
    marks = [term for term in terms if is_sample_mark(term)]
    if len(marks) != 1 or terms[-1] is not marks[0] or \
            not 1 <= len(marks[0].expressions) <= 2 or \
            not all(isinstance(a, exp.Literal) and not a.is_string for a in marks[0].expressions):
        return None
    share, *seed = (float(a.this) for a in marks[0].expressions)
    if not 0 <= share <= 1 or seed and (seed[0] != int(seed[0]) or seed[0] < 0):
        return None
    return share, int(seed[0]) if seed else None
