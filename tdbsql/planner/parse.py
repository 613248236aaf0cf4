"""SQL text -> sqlglot AST, with errors that underline the culprit.

A syntax error names what was found where the statement went wrong -- a token by its text, or
the end of the statement -- and, when sqlglot knew it, what was expected there; it never shows
sqlglot's internal token or class reprs.

What sqlglot reads but DuckDB refuses is a syntax error too, never a different statement run
quietly (``_check_tree``): a DuckDB reserved word taken for an alias (``SELECT k FROM t LIMIT``
is not a table aliased ``LIMIT``), an ``AS`` naming nothing, a JOIN without ON or USING (or
with ON and no condition), ``SELECT`` with nothing selected, parentheses left open at the end,
a bare ``FETCH`` / ``OVER`` / ``k IN``, a window frame missing its bounds, and malformed INSERT
/ DELETE statements (``DELETE t``, ``INSERT t``, ``VALUES (1) (2)``, ``VALUES ()``).
``parse_condition`` reads a bare condition (``tdbsql.delete(path, "v > 1")``) the same way.

Also reads the ``FOR SYSTEM_TIME AS OF t`` / ``FOR SYSTEM_TIME BETWEEN t1 AND t2`` clause of a
table into a timestamp window in milliseconds.
"""

from __future__ import annotations

import bisect
import datetime as dt
import difflib
import re

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.expressions import apply_index_offset
from sqlglot.tokens import Token, TokenType

from ..errors import SqlError, UnsupportedSql
from .aggregate_names import AGGREGATE_PARSERS
from .column_names import (note_call, note_extract, note_interval, note_nulls_last,
                           written_arguments)
from .named_windows import note_bare_reference
from .file_tables import file_tables
from .table_refs import cte_names_as_written
from .unnest_select import subqueries_in_unnest, unnest_after_grouping

_DIALECT = Dialect.get_or_raise("duckdb")
WITHIN_GROUP = "tdbsql_within_group"  # meta on a string_agg written with WITHIN GROUP
# what sqlglot wraps around a call it parsed (``_parse_function_call`` returns the wrapper)
_AROUND_CALLS = (exp.WithinGroup, exp.Filter, exp.Window, exp.IgnoreNulls, exp.RespectNulls)
_FRAME_STARTS = ("BETWEEN", "UNBOUNDED", "CURRENT")  # after ROWS / RANGE / GROUPS (or a number)


def parse(sql: str) -> exp.Expression:
    tokens = _tokens(sql, "SQL statement")
    parser = _Parser(dialect=_DIALECT)
    try:
        statements = [s for s in parser.parse(tokens, sql) if s is not None]
    except ParseError as err:
        raise syntax_error(sql, tokens, err, parser) from None
    if not statements:
        raise SqlError("empty SQL statement", sql, (0, len(sql)))
    if len(statements) != 1:
        span = None
        if len(statements) > 1:
            second = _second_statement(tokens)
            span = None if second is None else (second.start, len(sql.rstrip()))
        raise SqlError(f"expected one SQL statement, got {len(statements)}", sql, span)
    if isinstance(statements[0], (exp.Column, exp.Var, exp.Alias)):  # ``SELEC`` / ``SELEC k``
        misspelled = _misspelled_statement(sql, tokens)
        if misspelled is not None:
            raise misspelled
    _check_tokens(sql, tokens)
    _check_tree(sql, tokens, statements[0])
    return file_tables(unnest_after_grouping(subqueries_in_unnest(
        written_indexes(unit_columns(bucket_origins(quantified_lists(list_comprehensions(
            cte_names_as_written(_unparenthesized(statements[0]))))))))))


_QUANTIFIERS = {"ALL": exp.All, "ANY": exp.Any, "SOME": exp.Any}


def quantified_lists(tree: exp.Expression) -> exp.Expression:
    """``x > ALL([1, 2])`` / ``x = SOME([...])``: sqlglot reads ALL and SOME before a list as
    calls of functions by those names; they are the quantifiers, as ANY is (in place)."""
    for call in list(tree.find_all(exp.Anonymous)):
        kind = _QUANTIFIERS.get(call.name.upper())
        if kind is not None and len(call.expressions) == 1 and \
                isinstance(call.parent, exp.Binary) and call.parent.expression is call:
            call.replace(kind(this=call.expressions[0]))
    return tree


def list_comprehensions(tree: exp.Expression) -> exp.Expression:
    """DuckDB's ``[expr FOR x IN l IF cond]`` is ``list_transform(list_filter(l, lambda x:
    cond), lambda x: expr)``; ``FOR x, i IN l`` binds each element's position too, which a
    filter would renumber: with an ``IF`` that form is ``UnsupportedSql``."""
    for array in reversed(list(tree.find_all(exp.Array))):  # the innermost first
        loop = _comprehension(array)
        if loop is None:
            continue
        variables = [loop.expression] + ([loop.args["position"]] if loop.args.get("position")
                                         else [])
        condition = loop.args.get("condition")
        if condition is not None and len(variables) > 1:
            raise UnsupportedSql("a list comprehension with a position variable and IF is not "
                                 f"supported: {array.sql(dialect='duckdb')!r}")
        names = {v.name for v in variables}
        values = loop.args["iterator"]
        if condition is not None:
            values = exp.ArrayFilter(this=values, expression=_lambda(condition, variables, names))
        array.replace(exp.Transform(this=values,
                                    expression=_lambda(loop.this, variables, names)))
    return tree


def _comprehension(array: exp.Array) -> exp.Comprehension | None:
    """The comprehension ``array`` holds, its body the whole expression before ``FOR``:
    sqlglot binds ``FOR`` tighter than a comparison (``[x > 2 FOR x IN l]`` reads as ``x >
    (2 FOR x IN l)``)."""
    if len(array.expressions) != 1:
        return None
    written = array.expressions[0]
    loop = next(written.find_all(exp.Comprehension), None)
    if loop is None or loop is written:
        return loop
    loop.replace(loop.this)
    loop.set("this", written)
    return loop


def _lambda(body: exp.Expression, variables: list, names: set[str]) -> exp.Lambda:
    """``lambda variables: body``, the variables read as a lambda's are (bare identifiers,
    not columns)."""
    body = body.copy()
    for column in list(body.find_all(exp.Column)):
        if not column.table and column.name in names:
            replacement = exp.to_identifier(column.name)
            if column is body:
                body = replacement
            else:
                column.replace(replacement)
    return exp.Lambda(this=body, expressions=[v.copy() for v in variables])


def _unparenthesized(tree: exp.Expression) -> exp.Expression:
    """A statement written in parentheses, ``(SELECT ...)`` -- perhaps with an ORDER BY /
    LIMIT / OFFSET after them -- is its query; with those, ``SELECT * FROM (query)`` with them
    (the star keeps the query's column names)."""
    while isinstance(tree, exp.Subquery) and not tree.alias:
        outside = {key: tree.args[key] for key in ("order", "limit", "offset")
                   if tree.args.get(key) is not None}
        tree = tree.this
        if outside:
            tree = exp.select("*").from_(exp.Subquery(this=tree))
            for key, value in outside.items():
                tree.set(key, value)
    return tree


def bucket_origins(tree: exp.Expression) -> exp.Expression:
    """``time_bucket(width, ts, origin)`` with a column as the origin: sqlglot reads a bare
    name in that place as a unit keyword (``Var``), which no column resolution would find;
    it is the column (case-insensitive, as DuckDB's unquoted names)."""
    for node in list(tree.find_all(exp.DateBin)):
        origin = node.args.get("unit")
        if isinstance(origin, exp.Var):
            node.set("unit", exp.column(origin.name.lower()))
    return tree


def unit_columns(tree: exp.Expression) -> exp.Expression:
    """``date_trunc(s, t)`` / ``date_diff(s, a, b)`` with a column as the part: sqlglot reads
    a bare name there as a unit keyword (``Var``, as it reads ``'month'``); written without
    quotes it is the column (a part per row, as in DuckDB), not the unit its name spells."""
    for node in list(tree.find_all(exp.TimestampTrunc, exp.DateDiff)):
        unit, written = node.args.get("unit"), written_arguments(node)
        if isinstance(unit, exp.Var) and written and not written[0].startswith("'"):
            node.set("unit", exp.column(unit.name.lower()))
    return tree


def _tokens(text: str, what: str) -> list:
    """The tokens of ``text`` (a statement or a condition, ``what``); an empty or comment-only
    text, or one sqlglot cannot tokenize, is a clear SqlError."""
    if not text or not text.strip():
        raise SqlError(f"empty {what}")
    try:
        tokens = _DIALECT.tokenize(text)
    except TokenError:
        raise _unreadable(text) from None
    for token in tokens:  # DuckDB's other name for UNPIVOT (sqlglot knows PIVOT_WIDER's)
        if token.token_type == TokenType.VAR and token.text.upper() == "PIVOT_LONGER":
            token.token_type = TokenType.UNPIVOT
    if not tokens:
        raise SqlError(f"empty {what}: it holds only a comment", text, (0, len(text)))
    return _slice_steps(tokens)


def _slice_steps(tokens: list) -> list:
    """``l[3::-1]`` / ``l[::-1]``: in brackets, ``::`` before a minus sign is an omitted
    slice bound and a step, as DuckDB reads it (no type name starts with ``-``), not a cast."""
    out, brackets = [], []
    for i, token in enumerate(tokens):
        kind = token.token_type
        if kind in (TokenType.L_BRACKET, TokenType.L_PAREN, TokenType.L_BRACE):
            brackets.append(kind)
        elif kind in (TokenType.R_BRACKET, TokenType.R_PAREN, TokenType.R_BRACE) and brackets:
            brackets.pop()
        if kind == TokenType.DCOLON and brackets and brackets[-1] == TokenType.L_BRACKET \
                and i + 1 < len(tokens) and tokens[i + 1].token_type == TokenType.DASH:
            out += [Token(TokenType.COLON, ":", token.line, token.col - 1, token.start,
                          token.start, token.comments),
                    Token(TokenType.COLON, ":", token.line, token.col, token.end, token.end)]
            continue
        out.append(token)
    return out


def split_statements(sql: str) -> list[str]:
    """The statements of a script (``CREATE VIEW v AS ...; SELECT * FROM v``), each as its
    own text, split at the semicolons between tokens (never one inside a string or a
    comment); empty statements (``;;``) are dropped."""
    texts, statement = [], []
    for token in [*_tokens(sql, "SQL statement"), None]:
        if token is not None and token.token_type != TokenType.SEMICOLON:
            statement.append(token)
        elif statement:
            texts.append(sql[statement[0].start:statement[-1].end + 1])
            statement = []
    return texts


def statement_ended(text: str) -> bool:
    """Does ``text`` end with a semicolon outside strings and comments (or hold only blanks
    and comments: nothing to wait for)?  An open string or comment has not ended."""
    try:
        tokens = _DIALECT.tokenize(text)
    except TokenError:
        return False
    return not tokens or tokens[-1].token_type == TokenType.SEMICOLON


def parse_condition(text: str) -> exp.Expression:
    """A bare SQL condition (``v > 1 AND s = 'a'``, as ``tdbsql.delete`` takes it) -> its tree,
    with the same syntax errors as a statement, underlined in ``text``."""
    tokens = _tokens(text, "condition")
    if tokens[0].token_type == TokenType.WHERE:
        raise _unexpected(text, tokens[0], False, None, "give the condition alone, without WHERE")
    parser = _Parser(dialect=_DIALECT)
    try:
        trees = [t for t in parser.parse_into(exp.Condition, tokens, text) if t is not None]
    except ParseError as err:
        raise syntax_error(text, tokens, err, parser, whole="condition") from None
    if len(trees) != 1:
        second = _second_statement(tokens)
        raise SqlError(f"expected one condition, got {len(trees)}", text,
                       None if second is None else (second.start, len(text.rstrip())))
    try:
        _check_tokens(text, tokens)
        _check_tree(text, tokens, trees[0])
    except SqlError as err:
        message = err.plain_message.replace("end of the statement", "end of the condition", 1)
        raise SqlError(message, text, err.span) from None
    return written_indexes(trees[0])


def written_indexes(tree: exp.Expression) -> exp.Expression:
    """``tree`` with each ``l[i]`` index as written (DuckDB's 1-based): sqlglot shifts the
    indexes it can type as integers to 0-based and leaves the others (``l[k]``) alone, so the
    shift is undone by the same rule and marked (``offset``: DuckDB SQL is generated as
    written)."""
    tree = map_literal_subscripts(tree)
    for bracket in list(tree.find_all(exp.Bracket)):
        if bracket.args.get("json_access") or bracket.args.get("offset"):
            continue
        bracket.set("expressions", apply_index_offset(bracket.this, bracket.expressions, 1,
                                                      dialect=_DIALECT))
        bracket.set("offset", 1)
    return tree


def map_literal_subscripts(tree: exp.Expression) -> exp.Expression:
    """``MAP {'a': 1}['a']``: sqlglot reads it as the MAP of ``{'a': 1}['a']``; the index
    is the MAP's (``ToMap(Bracket(Struct))`` becomes ``Bracket(ToMap(Struct))``)."""
    for to_map in list(tree.find_all(exp.ToMap)):
        brackets = []
        inner = to_map.this
        while isinstance(inner, exp.Bracket) and isinstance(inner.this, (exp.Bracket,
                                                                          exp.Struct)):
            brackets.append(inner)
            inner = inner.this
        if not brackets or not isinstance(inner, exp.Struct):
            continue
        brackets[-1].set("this", exp.ToMap(this=inner.pop()))
        to_map.replace(brackets[0])
    return tree


# what may follow an ON column of ``PIVOT t ON c`` (else it is a condition, ``ON x > 6``)
_AFTER_PIVOT_ON = {TokenType.IN, TokenType.ALIAS, TokenType.COMMA, TokenType.USING,
                   TokenType.GROUP_BY, TokenType.ORDER_BY, TokenType.LIMIT, TokenType.OFFSET,
                   TokenType.INTO, TokenType.R_PAREN, TokenType.SEMICOLON}


class _Parser(type(_DIALECT.parser())):
    """sqlglot's DuckDB parser, noting on each JOIN it read what DuckDB would refuse about its
    condition (``_check_joins`` raises it if the JOIN is in the final tree: a JOIN parsed on a
    path the parser later abandons must not fail the statement).  DuckDB aggregates sqlglot
    reads as anonymous calls become aggregate nodes (``planner.aggregate_names``)."""

    FUNCTIONS = {**type(_DIALECT.parser()).FUNCTIONS, **AGGREGATE_PARSERS}
    # DuckDB has no ``:name`` parameters (``$name`` and ``?`` only): ``s[:m]`` is a slice to m
    PLACEHOLDER_PARSERS = {token: parse for token, parse in
                           type(_DIALECT.parser()).PLACEHOLDER_PARSERS.items()
                           if token != TokenType.COLON}

    def reset(self):
        super().reset()
        self._written_args: dict[int, list] = {}  # token index -> a call's arguments there

    def _parse_generic_operator(self, this, node_type):
        """``a ^@ b``, ``a @> b``, ``a <@ b``, ``a && b``: DuckDB's (PostgreSQL's) generic
        operators, of ``||``'s precedence and left to right -- ``'ab' ^@ 'a' || 'x'`` is
        ``'truex'`` -- where sqlglot reads them as LIKE is, after ``||`` (``'ab' ^@ ('a' ||
        'x')``)."""
        this = self.expression(node_type(this=this, expression=self._parse_term()))
        while self._match(TokenType.DPIPE):
            this = self.expression(exp.DPipe(this=this, expression=self._parse_term(),
                                             safe=not self.dialect.STRICT_STRING_CONCAT))
        return this

    RANGE_PARSERS = {
        **type(_DIALECT.parser()).RANGE_PARSERS,
        **{token: (lambda node_type: lambda self, this:
                   self._parse_generic_operator(this, node_type))(node_type)
           for token, node_type in ((TokenType.CARET_AT, exp.StartsWith),
                                    (TokenType.AT_GT, exp.ArrayContainsAll),
                                    (TokenType.LT_AT, exp.ArrayContainedBy),
                                    (TokenType.DAMP, exp.ArrayOverlaps))},
    }

    def _parse_insert(self):
        self._inserting = True
        try:
            return super()._parse_insert()
        finally:
            self._inserting = False

    def _parse_exists(self, not_: bool = False):
        """``INSERT INTO t BY POSITION SELECT ...``: DuckDB's default, spelled out (sqlglot
        reads BY NAME only; this is called right after it, and nowhere else in an INSERT)."""
        if getattr(self, "_inserting", False) and self._match_text_seq("BY", "POSITION"):
            before = self._tokens[self._index - 3]
            if before.text.upper() == "NAME":
                self.raise_error("an INSERT is BY NAME or BY POSITION, not both")
            if before.token_type == TokenType.R_PAREN:  # as DuckDB, not after a column list
                self.raise_error("BY POSITION comes before an INSERT's column list")
            self._inserting = False
        return super()._parse_exists(not_)

    def _parse_function_args(self, alias: bool = False):
        start = self._index
        args = super()._parse_function_args(alias)
        self._written_args[start] = args
        return args

    def _parse_function_call(self, functions=None, anonymous=False, optional_parens=True,
                             any_token=False):
        """The call, noting how it was written for its result column name
        (``planner.column_names``): sqlglot's node forgets the name and the arguments."""
        start = self._index
        call = super()._parse_function_call(functions=functions, anonymous=anonymous,
                                            optional_parens=optional_parens,
                                            any_token=any_token)
        parens = start + 1 < len(self._tokens) and \
            self._tokens[start + 1].token_type == TokenType.L_PAREN
        misplaced = _option_before_an_argument(self._tokens, start + 1) if parens else None
        if misplaced is not None:  # lag(x IGNORE NULLS, 2): DuckDB's syntax error
            self._retreat(misplaced)
            self.raise_error(f"{self._curr.text.upper()} NULLS goes after the call's last "
                             "argument, as in lag(x, 2 IGNORE NULLS) OVER (...)")
        # the call comes back with what follows it: WITHIN GROUP (...), FILTER (...), OVER (...)
        noted, args = call, self._written_args.pop(start + 2, None)
        while isinstance(noted, _AROUND_CALLS):
            if isinstance(noted, (exp.IgnoreNulls, exp.RespectNulls)):
                args = None  # ``f(x IGNORE NULLS)``: the option left the arguments
            noted = noted.this
        if isinstance(noted, exp.Func) or (parens and isinstance(noted, exp.Binary)):  # mod(x, 2)
            note_call(noted, self._tokens[start].text, args, parens)
        return call

    def _parse_ordered(self, parse_method=None):
        """``x NULLS LAST`` reads as plain ``x``; DuckDB prints it back in a result column's
        name (``planner.column_names``): noted."""
        ordered = super()._parse_ordered(parse_method)
        words = [token.text.upper() for token in self._tokens[max(self._index - 2, 0):self._index]]
        if ordered is not None and words == ["NULLS", "LAST"]:
            note_nulls_last(ordered)
        return ordered

    def _parse_window(self, this, alias=False):
        """``OVER w`` and ``OVER (w)`` read alike; DuckDB refuses the second when ``w`` has a
        frame (``planner.named_windows``): the first is noted.  ``lag(x) IGNORE NULLS OVER
        (...)`` -- the option after the call's parentheses -- is a syntax error in DuckDB,
        which takes it only inside them; sqlglot reads both alike."""
        start = self._index
        window = super()._parse_window(this, alias=alias)
        option = _null_option(self._tokens, start, self._index)
        # sqlglot comes here after an argument too: lag(abs(x) IGNORE NULLS) is DuckDB's form
        if option is not None and not self._in_call_arguments(option):
            self._retreat(option)
            self.raise_error(f"{self._curr.text.upper()} NULLS goes inside the call's "
                             "parentheses, as in lag(x IGNORE NULLS) OVER (...)")
        if isinstance(window, exp.Window) and _over_a_name(self._tokens[start:self._index]):
            note_bare_reference(window)
        return window

    def _parse_id_var(self, any_token: bool = True, tokens=None):
        """``OVER (GROUPS BETWEEN ...)``: sqlglot reads a window's first word as the name of
        a window it extends, and GROUPS is no keyword to it (ROWS and RANGE are), so a GROUPS
        frame with no PARTITION BY / ORDER BY before it was a syntax error."""
        if tokens is self.WINDOW_ALIAS_TOKENS and self._curr is not None and \
                self._curr.text.upper() == "GROUPS" and self._next is not None and \
                (self._next.text.upper() in _FRAME_STARTS or
                 self._next.token_type == TokenType.NUMBER):
            return None
        return super()._parse_id_var(any_token=any_token, tokens=tokens)

    def _in_call_arguments(self, index: int) -> bool:
        """Is token ``index`` inside a call's parentheses (its innermost open parenthesis
        follows a function's name), not at the top of an expression, a subquery or a
        parenthesized expression?"""
        depth = 0
        for i in range(index - 1, 0, -1):
            kind = self._tokens[i].token_type
            if kind == TokenType.R_PAREN:
                depth += 1
            elif kind == TokenType.L_PAREN:
                if depth == 0:
                    name = self._tokens[i - 1]
                    return name.token_type == TokenType.VAR or name.text.upper() in self.FUNCTIONS
                depth -= 1
        return False

    def validate_expression(self, expression, args=None):
        if isinstance(expression, (exp.Grouping, exp.GroupingId)) and not expression.expressions:
            return expression  # GROUPING(): over every GROUP BY key (planner.grouping_sets)
        return super().validate_expression(expression, args)

    def _parse_group(self, skip_group_by_token: bool = False):
        """``GROUP BY ALL a`` / ``GROUP BY ALL CUBE (a)`` is a syntax error in DuckDB, where
        ALL stands alone; sqlglot reads the keys after it (and GROUP BY ALL would drop them)."""
        start = self._index
        group = super()._parse_group(skip_group_by_token)
        if group is not None and group.args.get("all") and any(
                group.args.get(part) for part in ("expressions", "cube", "rollup",
                                                  "grouping_sets")):
            self._retreat(next(i for i in range(start, self._index)
                               if self._tokens[i].token_type == TokenType.ALL) + 1)
            self.raise_error("GROUP BY ALL takes no grouping keys")
        return group

    def _parse_pivot_aggregation(self):
        """``PIVOT (<aggregate or an expression of one> [AS s], ... FOR ...)``: sqlglot reads
        a call only (``sum(x) + 1`` was a syntax error)."""
        if self._curr is not None and self._curr.token_type == TokenType.COMMA:
            return None
        value = self._parse_bitwise()
        if value is None:
            self.raise_error("Expecting an aggregation function in PIVOT")
        return self._parse_alias(value)

    def _parse_simplified_pivot(self, is_unpivot: bool | None = None):
        """DuckDB's ``PIVOT t ON c [IN (v [AS n], ...)] USING <aggregate or an expression of
        one> [AS s], ... [GROUP BY ...] [ORDER BY ...] [LIMIT n] [OFFSET m]`` (UNPIVOT too):
        sqlglot's reading, which takes no alias in the IN list, a column or call only after
        USING and stops before ORDER BY or UNION; with those, ``SELECT * FROM (PIVOT ...)
        ORDER BY ... LIMIT n OFFSET m``, ``PIVOT ... UNION ALL SELECT ...``."""
        def on():
            start = self._index
            this = self._parse_bitwise()
            if self._curr is not None and self._curr.token_type not in _AFTER_PIVOT_ON:
                self._retreat(start)  # ON x > 6, ON x IS NULL: a condition's values
                this = self._parse_disjunction()
            if self._match(TokenType.IN):
                listed = self._parse_in(this, alias=True)
                listed.set("expressions", [
                    exp.PivotAlias(this=v.this, alias=v.args["alias"])
                    if isinstance(v, exp.Alias) else v for v in listed.expressions])
                return listed
            if self._match(TokenType.ALIAS, advance=False):  # UNPIVOT ON (a, b) AS x
                return self._parse_alias(this)
            return this

        source = self._parse_table()
        expressions = self._match(TokenType.ON) and self._parse_csv(on)
        into = self._parse_unpivot_columns()
        using = self._match(TokenType.USING) and self._parse_csv(
            lambda: self._parse_alias(self._parse_assignment()))
        pivot = self.expression(exp.Pivot(this=source, expressions=expressions, using=using,
                                          group=self._parse_group(), unpivot=is_unpivot,
                                          into=into))
        modifiers = {"order": self._parse_order(), "limit": self._parse_limit(),
                     "offset": self._parse_offset()}
        if not any(modifiers.values()):
            return self._parse_set_operations(pivot)  # PIVOT ... UNION ALL SELECT ...
        query = exp.select("*").from_(exp.Subquery(this=pivot), copy=False)
        for key, value in modifiers.items():
            query.set(key, value)
        return query

    def _parse_cube_or_rollup(self, with_prefix: bool = False):
        """``CUBE (a, b IS NULL)`` / ``ROLLUP (a = 1)``: DuckDB takes any expression as an
        element; sqlglot reads only up to a comparison (``_parse_bitwise``)."""
        if with_prefix or not self._match_set((TokenType.CUBE, TokenType.ROLLUP)):
            return super()._parse_cube_or_rollup(with_prefix=with_prefix)
        kind = exp.Cube if self._prev.token_type == TokenType.CUBE else exp.Rollup
        return self.expression(kind(expressions=self._parse_wrapped_csv(self._parse_disjunction)))

    def _parse_grouping_set(self):
        """An element of ``GROUPING SETS (...)``: any expression, as for CUBE / ROLLUP."""
        return self._parse_grouping_sets() or self._parse_cube_or_rollup() \
            or self._parse_disjunction()

    def _parse_extract(self):
        """``extract(dow FROM d)``: sqlglot upper-cases the part; DuckDB prints it as written
        in the result column's name (``planner.column_names``): noted."""
        token = self._curr
        extract = super()._parse_extract()
        if isinstance(extract, exp.Extract) and isinstance(extract.this, exp.Var):
            note_extract(extract, token.text)
        return extract

    def _parse_string_agg(self):
        """sqlglot reads ``listagg(x, ',') WITHIN GROUP (ORDER BY y)`` as ``listagg(x, ','
        ORDER BY y)``; DuckDB refuses it (``planner.binder_checks``): noted here."""
        start = self._index
        call = super()._parse_string_agg()
        words = [token.text.upper() for token in self._tokens[start:self._index]]
        if any(a == "WITHIN" and b == "GROUP" for a, b in zip(words, words[1:])):
            call.meta[WITHIN_GROUP] = True
        return call

    def _parse_types(self, check_func: bool = False, schema: bool = False,
                     allow_identifiers: bool = True, with_collation: bool = False):
        """``row(1, 2)`` in an expression is DuckDB's call, never the type ROW(...) (sqlglot
        reads ROW as STRUCT, and ``row(1, 2) < x`` then as a ``STRUCT(...)<...>`` type)."""
        if check_func and self._curr is not None and self._next is not None \
                and self._curr.token_type == TokenType.STRUCT \
                and self._curr.text.upper() == "ROW" \
                and self._next.token_type == TokenType.L_PAREN:
            return None
        return super()._parse_types(check_func=check_func, schema=schema,
                                    allow_identifiers=allow_identifiers,
                                    with_collation=with_collation)

    def _parse_type(self, parse_interval: bool = True, fallback_to_identifier: bool = False):
        """A typed literal takes the ``::`` casts and ``[...]`` after it as DuckDB does:
        ``DATE '2024-01-01'::VARCHAR`` is the DATE as text, where sqlglot casts the string
        to VARCHAR and that to DATE (so the DATE came back)."""
        typed = self._curr is not None and self._next is not None \
            and self._curr.token_type in self.TYPE_TOKENS \
            and self._curr.token_type != TokenType.INTERVAL \
            and self._next.token_type in _STRINGS
        self._literal_ops_deferred = typed
        try:
            this = super()._parse_type(parse_interval=parse_interval,
                                       fallback_to_identifier=fallback_to_identifier)
        finally:
            self._literal_ops_deferred = False
        return self._parse_column_ops(this) if typed and this is not None else this

    def _parse_column_ops(self, this):
        if getattr(self, "_literal_ops_deferred", False) and isinstance(this, exp.Literal):
            self._literal_ops_deferred = False  # the typed literal's string: its type first
            return this
        return super()._parse_column_ops(this)

    def _parse_interval(self, require_interval: bool = True, parse_function_unit: bool = True):
        """An INTERVAL as DuckDB's grammar reads one: ``INTERVAL`` then a string, a number
        or a parenthesised expression, then perhaps a unit.  Anything else after the word
        makes it a column name (``INTERVAL -3 HOUR`` is ``interval - 3`` and a stray
        ``HOUR``); nothing continues it (sqlglot's ``INTERVAL '2' DAY '3' HOUR`` and
        ``INTERVAL 3 DAY + 1`` as a sum of intervals); a string before a unit is the
        amount whatever it holds (``INTERVAL '1e2' DAY``, which sqlglot splits into ``1``
        and a unit ``e2``).  DuckDB knows a closed set of unit words; any other word is an
        alias (``INTERVAL '3' yrs`` is ``INTERVAL '3' AS yrs``, three seconds; ``INTERVAL 3
        yrs`` casts 3 to INTERVAL, an error), where sqlglot takes every word for a unit.
        Such a word is given back to the parser."""
        start = self._index
        if not (require_interval and self._match(TokenType.INTERVAL)):
            return None
        if not self._match_set((TokenType.STRING, TokenType.NUMBER, TokenType.L_PAREN),
                               advance=False):
            self._retreat(start)
            return None
        if self._curr.token_type == TokenType.STRING:  # one string: sqlglot joins 'a' 'b'
            self._advance()
            this = exp.Literal.string(self._prev.text)
        else:
            this = self._parse_primary()
        at_unit = self._curr is not None and _is_interval_unit(self._curr)
        if isinstance(this, exp.Paren) and not at_unit:  # INTERVAL (x): CAST(x AS INTERVAL)
            return exp.Cast(this=this.this, to=exp.DataType.build("INTERVAL"))
        if this.is_string and at_unit and not self._follows_to(self._index + 1):
            self._advance()
            interval = exp.Interval(this=this, unit=exp.var(self._prev.text.upper()))
        else:
            interval = self._parse_interval_span(this, parse_function_unit=parse_function_unit)
        if isinstance(interval, exp.Interval):
            tokens = self._tokens[start:self._index]
            words = [token.text.upper() for token in tokens]
            if len(words) > 4 and words[-2] == "TO":  # INTERVAL 3 YEAR TO MONTH
                raise SqlError(f"{words[-3]} TO {words[-1]} is not supported", self.sql,
                               _span(tokens[-2]))
            if len(tokens) > 2 and interval.args.get("unit") is not None \
                    and not _is_interval_unit(tokens[-1]):
                self._retreat(self._index - 1)
                interval.set("unit", None)
                tokens = tokens[:-1]
            _whole_interval_string(interval, tokens)
            _note_interval(interval, tokens)
        return interval

    def _follows_to(self, index: int) -> bool:
        return index < len(self._tokens) and self._tokens[index].text.upper() == "TO"

    def _parse_join(self, skip_join_token=False, parse_bracket=False, alias_tokens=None):
        start = self._index
        join = super()._parse_join(skip_join_token=skip_join_token,
                                   parse_bracket=parse_bracket, alias_tokens=alias_tokens)
        if join is not None and start < len(self._tokens) \
                and self._tokens[start].token_type != TokenType.COMMA:
            problem = self._join_problem(join, start)
            if problem is not None:
                join.meta[_JOIN_PROBLEM] = problem
        return join

    def _join_problem(self, join: exp.Join, start: int):
        """(culprit token, at the end?, what was expected, a note) or None."""
        method = str(join.args.get("method") or "").upper()
        kind = str(join.args.get("kind") or "").upper()
        using = join.args.get("using")
        if method in ("NATURAL", "POSITIONAL") or kind == "CROSS":
            if join.args.get("on") is None and using is None:
                return None
            depth = 0
            for token in self._tokens[start:self._index]:
                depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(token.token_type, 0)
                if depth == 0 and token.token_type in (TokenType.ON, TokenType.USING):
                    return (token, False, None, f"a {method or kind} JOIN takes no join "
                                                "condition")
            return None
        if kind not in ("", "INNER", "OUTER", "SEMI", "ANTI") or method not in ("", "ASOF"):
            return None  # not DuckDB syntax: left to the planner to refuse
        if join.args.get("on") is not None or using:
            return None
        prev, current = self._prev, self._curr
        at_end = not current or current.token_type == TokenType.SEMICOLON
        culprit = prev if at_end else current
        if prev.token_type == TokenType.ON:
            return (culprit, at_end, "a join condition", None)
        if prev.token_type == TokenType.USING:
            return (culprit, at_end, "'(' and the names of the columns to join on", None)
        if using is not None and prev.token_type == TokenType.R_PAREN:
            return (prev, False, "a column name", None)
        return (culprit, at_end, "ON or USING",
                "only a CROSS or NATURAL JOIN goes without a join condition")


# the unit words of DuckDB's grammar after INTERVAL x (its opt_interval)
_INTERVAL_UNITS = {
    *(word + plural for word in ("YEAR", "MONTH", "DAY", "WEEK", "HOUR", "MINUTE", "SECOND",
                                 "MILLISECOND", "MICROSECOND", "QUARTER", "DECADE")
      for plural in ("", "S")),
    "CENTURY", "CENTURIES", "MILLENNIUM", "MILLENNIA",
}


def _is_interval_unit(token: Token) -> bool:
    return token.token_type not in (TokenType.IDENTIFIER, TokenType.STRING) \
        and token.text.upper() in _INTERVAL_UNITS


def _whole_interval_string(interval: exp.Interval, tokens: list[Token]) -> None:
    """``INTERVAL '1 day 3'``: sqlglot reads the leading ``1 day`` of the string as amount
    and unit and drops the rest; the whole string is kept instead, to be read (and refused,
    as DuckDB refuses it) by the evaluator."""
    if len(tokens) != 2 or tokens[1].token_type != TokenType.STRING \
            or interval.args.get("unit") is None:
        return
    text = tokens[1].text
    if not re.fullmatch(r"\s*[+-]?\d+(\.\d+)?\s*[A-Za-z]+\s*", text):
        interval.set("this", exp.Literal.string(text))
        interval.set("unit", None)
        interval.set("fraction_in_string", None)


def _note_interval(interval: exp.Interval, tokens: list[Token]) -> None:
    """What an INTERVAL's tokens were: ``INTERVAL 2 DAY`` (a number), ``INTERVAL '2' DAY``,
    ``INTERVAL '2 days'`` (the unit in the string) -- sqlglot reads all three alike."""
    if not tokens or tokens[0].token_type != TokenType.INTERVAL:
        return
    rest = tokens[1:]
    if len(rest) == 1 and rest[0].token_type in (TokenType.NUMBER, TokenType.STRING):
        value = rest[0].text if rest[0].token_type == TokenType.NUMBER else _quoted(rest[0].text)
        note_interval(interval, value, None)
    elif len(rest) == 2 and rest[0].token_type in (TokenType.NUMBER, TokenType.STRING):
        value = rest[0].text if rest[0].token_type == TokenType.NUMBER else _quoted(rest[0].text)
        note_interval(interval, value, rest[1].text)
    elif rest:
        note_interval(interval, None, rest[-1].text)


def _null_option(tokens: list[Token], start: int, end: int) -> int | None:
    """The index of an ``IGNORE NULLS`` / ``RESPECT NULLS`` among ``tokens[start:end]``
    outside parentheses (after a call, not among its arguments), or None."""
    depth = 0
    for i in range(start, end - 1):
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(tokens[i].token_type, 0)
        if depth == 0 and tokens[i].text.upper() in ("IGNORE", "RESPECT") \
                and tokens[i + 1].text.upper() == "NULLS":
            return i
    return None


def _option_before_an_argument(tokens: list[Token], open_paren: int) -> int | None:
    """The index of an ``IGNORE NULLS`` / ``RESPECT NULLS`` among the arguments of the call
    whose parenthesis opens at ``open_paren`` that is not right before its closing one (DuckDB
    takes the option after the last argument only), or None."""
    depth = 0
    for i in range(open_paren, len(tokens) - 2):
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(tokens[i].token_type, 0)
        if depth == 0:
            return None
        if depth == 1 and tokens[i].text.upper() in ("IGNORE", "RESPECT") \
                and tokens[i + 1].text.upper() == "NULLS" \
                and tokens[i + 2].token_type != TokenType.R_PAREN:
            return i
    return None


def _over_a_name(tokens: list[Token]) -> bool:
    """Do ``tokens`` (a call and its window) hold ``OVER name``, not ``OVER (...)``?"""
    depth = 0
    for token, following in zip(tokens, tokens[1:]):
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(token.token_type, 0)
        if depth == 0 and token.token_type == TokenType.OVER:
            return following.token_type != TokenType.L_PAREN
    return False


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# -- syntax errors --------------------------------------------------------------------------

# words a misspelling is checked against ("SELEC" -> SELECT)
_STATEMENT_WORDS = ("SELECT", "WITH", "FROM", "VALUES", "INSERT", "DELETE", "EXPLAIN",
                    "DESCRIBE", "SHOW")
# clause keywords a misspelled one is read as an alias in front of ("SELECT k FORM t")
_CLAUSE_WORDS = ("FROM", "WHERE", "GROUP", "ORDER", "HAVING", "QUALIFY", "LIMIT", "OFFSET",
                 "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "OUTER", "CROSS", "USING", "UNION",
                 "INTERSECT", "EXCEPT", "WINDOW", "SELECT")
# SQL words sqlglot reads as plain names: never taken for misspellings
_NOT_TYPOS = set(_CLAUSE_WORDS) | {
    "NULLS", "FIRST", "LAST", "ROWS", "RANGE", "GROUPS", "PRECEDING", "FOLLOWING", "UNBOUNDED",
    "CURRENT", "ROW", "RECURSIVE", "TIES", "ONLY", "NEXT", "EXCLUDE", "CAST", "CASE", "WHEN",
    "THEN", "ELSE"}
_STRINGS = {TokenType.STRING, TokenType.NATIONAL_STRING, TokenType.RAW_STRING,
            TokenType.NATIONAL_RAW_STRING, TokenType.HEREDOC_STRING, TokenType.UNICODE_STRING,
            TokenType.BIT_STRING, TokenType.HEX_STRING, TokenType.BYTE_STRING}
# what a clause or operator sqlglot found incomplete still needs, by sqlglot's class name
_NEEDS = {"Where": "a condition", "Having": "a condition", "Qualify": "a condition",
          "Join": "a table", "Limit": "a row count", "Offset": "a row count",
          "Fetch": "a row count", "Alias": "a name", "TableAlias": "a name",
          "Cast": "a type name", "TryCast": "a type name", "DataType": "a type name"}
# sqlglot descriptions -> what was expected there
_EXPECTED = {"Expected END after CASE": "END to close the CASE",
             "Expected TYPE after CAST": "a type name",
             "Expected type": "a type name",
             "Expected type after '::'": "a type name after '::'",
             "Expected CTE to have alias": "a name for the WITH query",
             "Failed to parse any statement following CTE": "a query after the WITH clause",
             "Expected table or query statement": "a table or a query",
             "Expecting ) or encountered unexpected keyword": "')'"}
_REPR = re.compile(r"<Token [^>]*>|<class '[\w.]+'>|TokenType\.\w+")
_TOO_MANY = re.compile(r"The number of provided arguments \((\d+)\) is greater than the maximum "
                       r"number of supported arguments \((\d+)\)")


def syntax_error(sql: str, tokens: list[Token], err: ParseError, parser=None, *,
                 whole: str = "statement") -> SqlError:
    """A person's account of sqlglot's ``err``, raised while ``parser`` (if given) parsed
    ``tokens`` of ``sql``: ``SQL syntax error: unexpected <what was found>; expected <what was
    missing>``.  What was found is a token by its text, underlined, or the end of the statement
    (the last token is underlined).  ``whole`` is what ``sql`` is: a "statement", or a
    "condition" (then it may well start with a plain word)."""
    info = err.errors[0] if err.errors else {}
    description = str(info.get("description") or "")
    reported = _token_at(tokens, info.get("line"), info.get("col"))
    current = getattr(parser, "_curr", None)
    at_end = parser is not None and not current
    if description.startswith("Found multiple") and reported is not None:
        clause = re.search(r"'([^']+)'", description)
        word = clause.group(1) if clause else _text(sql, reported)
        return SqlError(f"SQL syntax error: more than one {word} clause", sql, _span(reported))
    if at_end:
        culprit = getattr(parser, "_prev", None) or reported or tokens[-1]
    else:
        culprit = current if parser is not None else reported
    if culprit is None:  # no position at all: what sqlglot said, minus its reprs
        return SqlError(f"SQL syntax error: {_clean(description) or 'cannot read the statement'}",
                        sql)
    misspelled = _misspelled_statement(sql, tokens) if whole == "statement" else None
    if misspelled is not None:
        return misspelled
    colon = _named_parameter(tokens)
    if colon is not None:
        return _unexpected(sql, colon, False, "an expression",
                           "DuckDB has no :name parameters: write $name or ?")
    index = _index_of(tokens, culprit)
    if not at_end and index >= 2 and tokens[index - 2].token_type == TokenType.ALIAS \
            and tokens[index - 1].token_type not in (TokenType.IDENTIFIER, *_STRINGS) \
            and _text(sql, tokens[index - 1]).split()[0].upper() in _NOT_ALIASES:
        # ``FROM t AS WHERE v > 1``: sqlglot took WHERE for the alias, and broke after it
        word = tokens[index - 1]
        text = _text(sql, word).split()[0]
        return _unexpected(sql, word, False, "a name after AS",
                           f'{text.upper()} is a reserved word: write "{text}" to use it as a '
                           "name")
    if at_end:
        found = f"end of the {whole} after {_show(sql, culprit)}"
    else:
        found = _show(sql, culprit)
        if culprit.token_type == TokenType.R_PAREN and _depth(tokens, index) < 0:
            found += " with no '(' to close"
    too_many = _TOO_MANY.fullmatch(description)
    if too_many:
        given, most = too_many.groups()
        call = _open_call(sql, tokens, index + (1 if at_end else 0))
        name = f"{_text(sql, call)}()" if call else "the function"
        unit = "argument" if most == "1" else "arguments"
        return SqlError(f"SQL syntax error: {name} takes at most {most} {unit}, got {given}",
                        sql, _span(call or culprit))
    expected = _expected(sql, tokens, index, description, at_end)
    if expected is None and description and not description.startswith("Invalid expression"):
        said = _clean(description)
        said = said[:1].lower() + said[1:] if said[1:2].islower() else said
        message = f"SQL syntax error: {said} (at {found})"
    else:
        message = f"SQL syntax error: unexpected {found}"
        if expected:
            message += f"; expected {expected}"
    hint = _misspelling_hint(sql, tokens, index)
    if hint:
        message += f" ({hint})"
    return SqlError(message, sql, _span(culprit))


def _expected(sql: str, tokens: list[Token], index: int, description: str,
              at_end: bool) -> str | None:
    """What should have stood where the statement went wrong, from sqlglot's description
    (None: nothing in particular, or a description this does not know)."""
    before = tokens[index] if at_end else (tokens[index - 1] if index > 0 else None)
    word = _text(sql, before).upper() if before is not None else ""
    if word in ("GROUP", "ORDER", "PARTITION") and before.token_type == TokenType.VAR:
        return f"BY after {word}"
    if description.startswith(("Expected table name", "Expected database name")):
        return "a table name"
    if description in _EXPECTED:
        return _EXPECTED[description]
    match = re.fullmatch(r"Expect(?:ing|ed) (\S)", description)
    if match:
        return f"'{match.group(1)}'"
    match = re.fullmatch(r"Required keyword: '(\w+)' missing for <class '[\w.]+\.(\w+)'>",
                         description)
    if match:
        arg, cls = match.groups()
        if cls == "Between":
            return "AND and an upper bound" if arg == "high" else "a lower bound"
        if cls in _NEEDS:
            return _NEEDS[cls]
        node_class = getattr(exp, cls, None)
        if isinstance(node_class, type) and issubclass(node_class, exp.Func) \
                and not issubclass(node_class, (exp.Connector, exp.Binary)):  # AND, OR: no
            call = _open_call(sql, tokens, index + (1 if at_end else 0))
            return f"an argument for {_text(sql, call)}()" if call else "an argument"
        return "an expression"
    match = re.fullmatch(r"Expected ([\w ]+) after (\w+)", description)
    if match:
        return f"{match.group(1)} after {match.group(2)}"
    return None


def _open_call(sql: str, tokens: list[Token], end: int) -> Token | None:
    """The name of the innermost function call still open before ``tokens[end]``."""
    opened: list[int] = []
    for i, token in enumerate(tokens[:end]):
        if token.token_type == TokenType.L_PAREN:
            opened.append(i)
        elif token.token_type == TokenType.R_PAREN and opened:
            opened.pop()
    if opened and opened[-1] > 0:
        name = tokens[opened[-1] - 1]
        if re.fullmatch(r"[A-Za-z_]\w*", _text(sql, name)):
            return name
    return None


def _misspelled_statement(sql: str, tokens: list[Token]) -> SqlError | None:
    """``SELEC k FROM t`` (or ``WITH x AS (...) SELEC ...``): a statement or the query after a
    WITH clause that starts with a plain word, not a keyword."""
    start, what = tokens[0], "a statement"
    if start.token_type == TokenType.WITH:
        start, what = _after_with(tokens), "the query after WITH"
    if start is None or start.token_type != TokenType.VAR:
        return None
    word = _text(sql, start)
    guess = difflib.get_close_matches(word.upper(), _STATEMENT_WORDS, n=1, cutoff=0.6)
    message = f"SQL syntax error: {what} cannot start with {_show(sql, start)}"
    if guess:
        message += f" (did you mean {guess[0]}?)"
    return SqlError(message, sql, _span(start))


def _after_with(tokens: list[Token]) -> Token | None:
    """The first token after the last ``name AS (...)`` of a WITH clause."""
    depth = 0
    for i, token in enumerate(tokens):
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0 and i + 1 < len(tokens) and \
                    tokens[i + 1].token_type not in (TokenType.COMMA, TokenType.ALIAS):
                return tokens[i + 1]
    return None


def _misspelling_hint(sql: str, tokens: list[Token], index: int) -> str | None:
    """A plain word at or just before the culprit that is one typo away from a clause keyword
    (``FORM``, ``WHRE``): sqlglot read it as an alias, so the statement broke right after it.
    Not a word after AS (an alias on purpose) nor one before ``(`` (a function)."""
    for i in (index, index - 1):
        if i < 0:
            continue
        token = tokens[i]
        word = _text(sql, token).upper()
        if token.token_type != TokenType.VAR or len(word) < 4 or word in _NOT_TYPOS:
            continue
        if i > 0 and tokens[i - 1].token_type == TokenType.ALIAS:
            continue
        if i + 1 < len(tokens) and tokens[i + 1].token_type == TokenType.L_PAREN:
            continue
        for keyword in _CLAUSE_WORDS:
            if _one_typo(word, keyword):
                return f"is {_show(sql, token)} a misspelling of {keyword}?"
    return None


def _one_typo(a: str, b: str) -> bool:
    """Are ``a`` and ``b`` one insertion, deletion, substitution or swap of neighbours apart?"""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def _unreadable(sql: str) -> SqlError:
    """The tokenizer gave up: find the unterminated literal or comment, or the stray character."""
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if sql.startswith("--", i):
            newline = sql.find("\n", i)
            i = n if newline == -1 else newline + 1
        elif sql.startswith("/*", i):
            close = sql.find("*/", i + 2)
            if close == -1:
                return SqlError("SQL syntax error: unterminated comment: '/*' has no '*/'", sql,
                                (i, i + 2))
            i = close + 2
        elif ch in "'\"":
            escapes = ch == "'" and i > 0 and sql[i - 1] in "eE"
            j = i + 1
            while j < n:
                if escapes and sql[j] == "\\":
                    j += 2
                    continue
                if sql[j] == ch:
                    if j + 1 < n and sql[j + 1] == ch:
                        j += 2
                        continue
                    break
                j += 1
            if j >= n:
                what = "string literal" if ch == "'" else "quoted name"
                return SqlError(f"SQL syntax error: unterminated {what}: the {ch} that opens it "
                                "is never closed", sql, (i, n))
            i = j + 1
        elif ch == "$":
            tag = re.match(r"\$([A-Za-z_]\w*)?\$", sql[i:])
            if tag:
                close = sql.find(tag.group(0), i + len(tag.group(0)))
                if close == -1:
                    return SqlError(f"SQL syntax error: unterminated string literal: "
                                    f"{tag.group(0)} is never closed", sql, (i, n))
                i = close + len(tag.group(0))
            elif i + 1 < n and sql[i + 1].isdigit():
                i += 2
            else:
                return SqlError("SQL syntax error: unexpected character '$'", sql, (i, i + 1))
        else:
            i += 1
    return SqlError("SQL syntax error: cannot split the statement into words", sql)


def _token_at(tokens: list[Token], line, col) -> Token | None:
    if line is None or col is None:
        return None
    for token in tokens:
        if token.line == line and token.col == col:
            return token
    return None


def _index_of(tokens: list[Token], token: Token) -> int:
    for i, candidate in enumerate(tokens):
        if candidate is token or (candidate.start, candidate.end) == (token.start, token.end):
            return i
    return len(tokens) - 1


def _depth(tokens: list[Token], index: int) -> int:
    """Parenthesis depth just after ``tokens[index]``."""
    depth = 0
    for token in tokens[:index + 1]:
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
    return depth


def _text(sql: str, token: Token) -> str:
    return sql[token.start:token.end + 1]


def _show(sql: str, token: Token) -> str:
    """A token as a message names it: ``'FROM'``, ``')'``, ``string 'abc'``, ``number 42``."""
    text = _text(sql, token)
    if len(text) > 40:
        text = text[:37] + "..."
    if token.token_type in _STRINGS:
        return f"string {text}"
    if token.token_type == TokenType.NUMBER:
        return f"number {text}"
    if token.token_type == TokenType.IDENTIFIER:
        return f"name {text}"
    return f"'{text}'"


def _span(token: Token) -> tuple[int, int]:
    return token.start, token.end + 1


def _clean(description: str) -> str:
    return _REPR.sub("?", description).strip()


def _second_statement(tokens: list[Token]) -> Token | None:
    for before, token in zip(tokens, tokens[1:]):
        if before.token_type == TokenType.SEMICOLON and token.token_type != TokenType.SEMICOLON:
            return token
    return None


# tokens a ':' may follow in DuckDB's SQL: an operand's end (a slice's ``[a:b]``, a struct's
# ``{'k': v}``) or a slice's open start (``[:b]``); after any other a ':' before a name
# begins a ``:name`` parameter, which DuckDB does not have
_BEFORE_COLON = {TokenType.VAR, TokenType.IDENTIFIER, TokenType.NUMBER, *_STRINGS,
                 TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE, TokenType.NULL,
                 TokenType.TRUE, TokenType.FALSE, TokenType.L_BRACKET}


def _named_parameter(tokens: list[Token]) -> Token | None:
    """The ':' of the first ``:name`` parameter (``SELECT :m``, ``WHERE k IN (:m)``), if
    any: the parser refuses it, this names it."""
    for before, colon, name in zip(tokens, tokens[1:], tokens[2:]):
        if colon.token_type == TokenType.COLON and before.token_type not in _BEFORE_COLON \
                and name.token_type in (TokenType.VAR, TokenType.IDENTIFIER):
            return colon
    return None


def _check_tokens(sql: str, tokens: list[Token]) -> None:
    """What sqlglot lets through but SQL calls a syntax error: ``SELECT a,, b`` (read as
    ``SELECT a, b``) and ``GROUP BY`` / ``ORDER BY`` / ``PARTITION BY`` with nothing after."""
    for i, (before, after) in enumerate(zip(tokens, tokens[1:] + [None])):
        if after is not None and (before.token_type == TokenType.COMMA
                                  and after.token_type == TokenType.COMMA):
            raise SqlError("SQL syntax error: unexpected ','; expected an expression between "
                           "the commas", sql, _span(after))
        if (before.token_type in (TokenType.GROUP_BY, TokenType.ORDER_BY, TokenType.PARTITION_BY)
                or (_text(sql, before).upper() == "BY" and i > 0
                    and _text(sql, tokens[i - 1]).upper() in ("GROUP", "ORDER", "PARTITION"))):
            if after is None or after.token_type == TokenType.SEMICOLON:
                raise SqlError(f"SQL syntax error: unexpected end of the statement after "
                               f"{_show(sql, before)}; expected an expression", sql,
                               _span(before))
            if after.token_type in (TokenType.R_PAREN, TokenType.COMMA):
                raise SqlError(f"SQL syntax error: unexpected {_show(sql, after)} after "
                               f"{_show(sql, before)}; expected an expression", sql,
                               _span(after))
    _check_condition_commas(sql, tokens)


_CONDITIONS = (TokenType.WHERE, TokenType.HAVING, TokenType.QUALIFY)
_OPENING = (TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE)
_CLOSING = (TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE)
# words that end a WHERE / HAVING / QUALIFY condition (a comma after them is theirs)
_CONDITION_ENDS = frozenset("GROUP ORDER HAVING QUALIFY WINDOW LIMIT OFFSET FETCH UNION EXCEPT "
                            "INTERSECT RETURNING".split())
_CONDITION_END_TOKENS = (TokenType.GROUP_BY, TokenType.ORDER_BY, TokenType.SEMICOLON)


def _check_condition_commas(sql: str, tokens: list[Token]) -> None:
    """``WHERE a > 0, t2``: a condition is one expression, but sqlglot reads a comma after
    one as a further FROM item (a comma join) where DuckDB stops at the comma."""
    for i, token in enumerate(tokens):
        if token.token_type not in _CONDITIONS:
            continue
        depth = 0
        for after in tokens[i + 1:]:
            if after.token_type in _OPENING:
                depth += 1
            elif after.token_type in _CLOSING:
                depth -= 1
                if depth < 0:
                    break
            elif depth == 0 and (after.token_type in _CONDITION_END_TOKENS or
                                 _text(sql, after).upper() in _CONDITION_ENDS):
                break
            elif depth == 0 and after.token_type == TokenType.COMMA:
                raise SqlError(f"SQL syntax error: unexpected ',' after the "
                               f"{_text(sql, token).upper()} condition", sql, _span(after))


# -- what sqlglot reads but DuckDB refuses ----------------------------------------------------

_JOIN_PROBLEM = "tdbsql_join_problem"  # meta key: what _Parser found wrong with a JOIN

# DuckDB's reserved keywords and its type/function-name keywords (``duckdb_keywords()``): no
# table alias, CTE name or alias column may be one of these unless quoted (DuckDB's ColId).
_RESERVED = frozenset("""
    ALL ANALYSE ANALYZE AND ANY ARRAY AS ASC ASYMMETRIC BOTH CASE CAST CHECK COLLATE COLUMN
    CONSTRAINT CREATE DEFAULT DEFERRABLE DESC DESCRIBE DISTINCT DO ELSE END EXCEPT FALSE FETCH FOR
    FOREIGN FROM GROUP HAVING IN INITIALLY INTERSECT INTO LAMBDA LATERAL LEADING LIMIT NOT NULL
    OFFSET ON ONLY OR ORDER PIVOT PIVOT_LONGER PIVOT_WIDER PLACING PRIMARY QUALIFY REFERENCES
    RETURNING SELECT SHOW SOME SUMMARIZE SYMMETRIC TABLE THEN TO TRAILING TRUE UNION UNIQUE UNPIVOT
    USING VARIADIC WHEN WHERE WINDOW WITH""".split())
_TYPE_FUNCTION_NAMES = frozenset("""
    ANTI ASOF AT AUTHORIZATION BINARY BY COLLATION CONCURRENTLY CROSS FREEZE FULL GLOB ILIKE INNER
    IS ISNULL JOIN LEFT LIKE NATURAL NOTNULL OUTER OVERLAPS POSITIONAL RIGHT SEMI SIMILAR
    TABLESAMPLE UNPACK VERBOSE""".split())
_NOT_ALIASES = _RESERVED | _TYPE_FUNCTION_NAMES
# ... and what DuckDB takes for more of the expression when it follows one without AS
# (``k year``, ``sum(v) filter``, ``k over``, ``* exclude``): a column alias only after AS
# (``k UNION ...`` and ``k ISNULL`` are operators, to sqlglot as to DuckDB)
_OPERATORS = {"EXCEPT", "INTERSECT", "UNION", "ISNULL", "NOTNULL"}
_NOT_BARE_LABELS = (_NOT_ALIASES - _OPERATORS) | frozenset("""
    CENTURIES CENTURY DAY DAYS DECADE DECADES ESCAPE EXCLUDE EXPORT_STATE FILTER HOUR HOURS IGNORE
    MICROSECOND MICROSECONDS MILLENNIA MILLENNIUM MILLISECOND MILLISECONDS MINUTE MINUTES MONTH
    MONTHS OVER PRECISION QUARTER QUARTERS RENAME REPLACE RESPECT SECOND SECONDS VARYING WEEK WEEKS
    WITHIN WITHOUT YEAR YEARS""".split())
# a clause keyword sqlglot took for an alias because the clause was left unfinished
_UNFINISHED = {"LIMIT": "a row count", "OFFSET": "a row count", "GROUP": "BY after GROUP",
               "ORDER": "BY after ORDER"}
_ENDS = (TokenType.SEMICOLON,)
# tokens that cannot start a select-list expression: SELECT followed by one selects nothing
_NO_EXPRESSION = {TokenType.FROM, TokenType.WHERE, TokenType.R_PAREN, TokenType.SEMICOLON,
                  TokenType.COMMA, TokenType.UNION, TokenType.EXCEPT, TokenType.INTERSECT,
                  TokenType.GROUP_BY, TokenType.ORDER_BY, TokenType.HAVING, TokenType.QUALIFY,
                  TokenType.LIMIT, TokenType.WINDOW}


def _check_tree(sql: str, tokens: list[Token], tree: exp.Expression) -> None:
    """Raise the syntax error DuckDB would give for a statement sqlglot read without one."""
    for check in (_check_parens, _check_as, _check_select_lists, _check_distinct, _check_over,
                  _check_frames, _check_fetch, _check_in, _check_sources, _check_samples,
                  _check_dml, _check_aliases, _check_joins):
        check(sql, tokens, tree)


def _named(tokens: list[Token], i: int) -> bool:
    """Is ``tokens[i]`` a name, whatever word it is (``k AS fetch``, ``t.over``)?"""
    return i > 0 and tokens[i - 1].token_type in (TokenType.ALIAS, TokenType.DOT)


def _check_sources(sql: str, tokens: list[Token], tree: exp.Expression) -> None:
    """``SELECT k FROM FROM t`` / ``SELECT k LATERAL FROM t``: sqlglot reads a query with no
    parentheses around it as a table."""
    if not any(isinstance(node.this, exp.Query)
               for node in tree.find_all(exp.From, exp.Join, exp.Into, exp.Lateral)):
        return
    for i, token in enumerate(tokens[:-1]):
        if token.token_type in (TokenType.FROM, TokenType.JOIN, TokenType.INTO,
                                TokenType.LATERAL) and not _named(tokens, i) and \
                tokens[i + 1].token_type in (TokenType.FROM, TokenType.SELECT, TokenType.WITH):
            raise _unexpected(sql, tokens[i + 1], False,
                              "a table name, or a query in parentheses")


def _check_samples(sql: str, tokens: list[Token], tree: exp.Expression) -> None:
    """``FROM t TABLESAMPLE`` / ``USING SAMPLE`` with no sample size."""
    sizes = ("size", "percent", "rows", "bucket_numerator", "expressions")
    if all(any(sample.args.get(a) for a in sizes) for sample in tree.find_all(exp.TableSample)):
        return
    for i, token in enumerate(tokens):
        word = _text(sql, token).upper()
        if not _named(tokens, i) and (token.token_type == TokenType.TABLE_SAMPLE or (
                word == "SAMPLE" and i > 0 and tokens[i - 1].token_type == TokenType.USING)):
            raise _after(sql, tokens, i, "a sample size")


def _check_parens(sql: str, tokens: list[Token], tree: exp.Expression) -> None:
    """``SELECT max(v`` / ``CAST(x AS INT``: sqlglot closes what the statement left open."""
    depth = 0
    for token in tokens:
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(token.token_type, 0)
    if depth > 0:
        last = len(tokens) - 1
        while last > 0 and tokens[last].token_type in _ENDS:
            last -= 1
        raise _unexpected(sql, tokens[last], True, "')'")


def _check_distinct(sql: str, tokens: list[Token], tree: exp.Expression) -> None:
    """``count(DISTINCT)`` / ``SELECT DISTINCT, k``: DISTINCT of nothing."""
    for i, token in enumerate(tokens):
        if token.token_type == TokenType.DISTINCT and not _named(tokens, i) and (
                i + 1 == len(tokens) or tokens[i + 1].token_type in (
                    TokenType.R_PAREN, TokenType.COMMA, TokenType.SEMICOLON)):
            raise _after(sql, tokens, i, "an expression after DISTINCT")


def _check_over(sql: str, tokens: list[Token], tree: exp.Expression) -> None:
    """``rank() OVER`` with no window: sqlglot reads it as ``OVER ()``."""
    for i, token in enumerate(tokens):
        if token.token_type == TokenType.OVER and not _named(tokens, i) and (
                i + 1 == len(tokens) or tokens[i + 1].token_type not in (
                    TokenType.L_PAREN, TokenType.VAR, TokenType.IDENTIFIER)):
            raise _after(sql, tokens, i, "'(' and a window, or a window name, after OVER")


def _unexpected(sql: str, token: Token, at_end: bool, expected: str | None = None,
                note: str | None = None) -> SqlError:
    """``SQL syntax error: unexpected <token | end of the statement after token>; expected
    <expected> (<note>)``, the token underlined."""
    found = f"end of the statement after {_show(sql, token)}" if at_end else _show(sql, token)
    message = f"SQL syntax error: unexpected {found}"
    if expected:
        message += f"; expected {expected}"
    if note:
        message += f" ({note})"
    return SqlError(message, sql, _span(token))


def _after(sql: str, tokens: list[Token], index: int, expected: str,
           note: str | None = None) -> SqlError:
    """The statement went wrong right after ``tokens[index]``."""
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    if following is None or following.token_type in _ENDS:
        return _unexpected(sql, tokens[index], True, expected, note)
    return _unexpected(sql, following, False, expected, note)


def _token_index(tokens: list[Token], start: int) -> int | None:
    """The index of the token that starts at character ``start`` (tokens are in text order)."""
    i = bisect.bisect_left(tokens, start, key=lambda token: token.start)
    return i if i < len(tokens) and tokens[i].start == start else None


def _check_as(sql: str, tokens: list[Token], tree: exp.Expression) -> None:
    """``SELECT k AS, v`` / ``FROM t AS``: sqlglot drops an AS that names nothing."""
    for i, token in enumerate(tokens):
        if token.token_type != TokenType.ALIAS or _named(tokens, i):
            continue
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if following is None or following.token_type in (
                TokenType.SEMICOLON, TokenType.COMMA, TokenType.R_PAREN):
            raise _after(sql, tokens, i, "a name after AS")


def _check_select_lists(sql: str, tokens: list[Token], tree: exp.Expression) -> None:
    """``SELECT FROM t`` (and ``INSERT INTO t SELECT``): DuckDB's "SELECT clause without
    selection list"; and ``SELECT , k``."""
    for i, token in enumerate(tokens):
        if token.token_type != TokenType.SELECT or _named(tokens, i):
            continue
        j = i + 1
        while j < len(tokens) and tokens[j].token_type in (TokenType.DISTINCT, TokenType.ALL):
            j += 1
        if j == len(tokens) or tokens[j].token_type in _NO_EXPRESSION:
            raise _after(sql, tokens, j - 1, "an expression to select")


# tokens an expression can end with: a frame keyword after one of these starts the frame
_EXPRESSION_ENDS = {TokenType.VAR, TokenType.IDENTIFIER, TokenType.NUMBER, TokenType.STRING,
                    TokenType.R_PAREN, TokenType.DESC, TokenType.ASC, TokenType.NULL,
                    TokenType.TRUE, TokenType.FALSE, TokenType.STAR, TokenType.FIRST}
_BOUND = "UNBOUNDED PRECEDING, CURRENT ROW, or an offset and PRECEDING or FOLLOWING"


def _check_frames(sql: str, tokens: list[Token], tree: exp.Expression) -> None:
    """``OVER (ORDER BY k ROWS)`` / ``RANGE BETWEEN 1 )``: a window frame whose bounds are
    missing or lack PRECEDING / FOLLOWING, which sqlglot fills in with a guess."""
    if not any(spec.args.get("kind") for spec in tree.find_all(exp.WindowSpec)):
        return
    windows: list[int] = []  # indexes of the '(' opening window specifications
    depth = 0
    for i, token in enumerate(tokens):
        kind = token.token_type
        if kind == TokenType.L_PAREN:
            if i > 0 and (tokens[i - 1].token_type == TokenType.OVER or (
                    tokens[i - 1].token_type == TokenType.ALIAS and i + 1 < len(tokens)
                    and tokens[i + 1].token_type in (TokenType.PARTITION_BY, TokenType.ORDER_BY,
                                                     TokenType.VAR, TokenType.R_PAREN))):
                windows.append(depth + 1)
            depth += 1
        elif kind == TokenType.R_PAREN:
            if windows and windows[-1] == depth:
                windows.pop()
            depth -= 1
        elif (windows and windows[-1] == depth and _text(sql, token).upper() in (
                "ROWS", "RANGE", "GROUPS") and tokens[i - 1].token_type in _EXPRESSION_ENDS):
            _check_frame(sql, tokens, i)


def _check_frame(sql: str, tokens: list[Token], start: int) -> None:
    """The frame that ``tokens[start]`` (ROWS / RANGE / GROUPS) opens, up to the window's
    ')' or EXCLUDE: one bound, or BETWEEN a bound AND a bound."""
    i = start + 1
    between = i < len(tokens) and tokens[i].token_type == TokenType.BETWEEN
    if between:
        i += 1
    i = _frame_bound(sql, tokens, i)
    if between:
        if i >= len(tokens) or tokens[i].token_type != TokenType.AND:
            raise _after(sql, tokens, i - 1, "AND and the frame's end")
        _frame_bound(sql, tokens, i + 1)


def _frame_bound(sql: str, tokens: list[Token], i: int) -> int:
    """Check the frame bound at ``tokens[i]``; the index just after it."""
    words = [_text(sql, t).upper() for t in tokens[i:i + 2]]
    if words in (["UNBOUNDED", "PRECEDING"], ["UNBOUNDED", "FOLLOWING"], ["CURRENT", "ROW"]):
        return i + 2
    depth, j = 0, i
    while j < len(tokens):
        kind = tokens[j].token_type
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(kind, 0)
        if depth < 0 or (depth == 0 and (kind == TokenType.AND or _text(sql, tokens[j]).upper()
                                         in ("PRECEDING", "FOLLOWING", "EXCLUDE"))):
            break
        j += 1
    word = _text(sql, tokens[j]).upper() if j < len(tokens) else ""
    if word in ("PRECEDING", "FOLLOWING") and j > i:
        return j + 1
    if j == i:
        raise _after(sql, tokens, i - 1, _BOUND)
    raise _after(sql, tokens, j - 1, "PRECEDING or FOLLOWING")


def _check_fetch(sql: str, tokens: list[Token], tree: exp.Expression) -> None:
    """``FETCH {FIRST | NEXT} [n] {ROW | ROWS} ONLY``: sqlglot reads a bare ``FETCH`` (or one
    missing ROWS ONLY) as ``LIMIT 1``."""
    for i, token in enumerate(tokens):
        if token.token_type != TokenType.FETCH or _named(tokens, i):
            continue
        if i + 1 == len(tokens) or _text(sql, tokens[i + 1]).upper() not in ("FIRST", "NEXT"):
            raise _after(sql, tokens, i, "FIRST or NEXT after FETCH")
        j, depth = i + 2, 0
        while j < len(tokens):
            kind = tokens[j].token_type
            depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(kind, 0)
            if depth < 0 or kind in _ENDS or _text(sql, tokens[j]).upper() in ("ROW", "ROWS"):
                break
            j += 1
        if j == len(tokens) or _text(sql, tokens[j]).upper() not in ("ROW", "ROWS"):
            raise _after(sql, tokens, j - 1, "ROWS ONLY")
        if j + 1 == len(tokens) or _text(sql, tokens[j + 1]).upper() not in ("ONLY", "WITH"):
            raise _after(sql, tokens, j, f"ONLY after {_text(sql, tokens[j]).upper()}")


def _check_in(sql: str, tokens: list[Token], tree: exp.Expression) -> None:
    """``k IN`` with no list: sqlglot reads it as ``k IN ()``, false for every row."""
    if not any(not (node.expressions or node.args.get("query") or node.args.get("unnest")
                    or node.args.get("field")) for node in tree.find_all(exp.In)):
        return
    for i, token in enumerate(tokens):
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if token.token_type == TokenType.IN and not _named(tokens, i) and (
                following is None or following.token_type not in (
                    TokenType.L_PAREN, TokenType.VAR, TokenType.IDENTIFIER, TokenType.UNNEST)):
            raise _after(sql, tokens, i, "'(' and a list of values or a query after IN")


def _check_dml(sql: str, tokens: list[Token], tree: exp.Expression) -> None:
    """INSERT / DELETE statements sqlglot reads more loosely than DuckDB."""
    if len(tokens) < 2:
        return
    if isinstance(tree, exp.Delete):
        if tokens[1].token_type != TokenType.FROM:
            raise _after(sql, tokens, 0, "FROM after DELETE")
    if not isinstance(tree, exp.Insert):
        return
    into = 1
    if tokens[1].token_type == TokenType.OR and len(tokens) > 3:  # INSERT OR REPLACE INTO
        into = 3
    if tokens[into].token_type != TokenType.INTO:
        raise _after(sql, tokens, into - 1, "INTO after INSERT")
    target = tree.this
    table = target.this if isinstance(target, exp.Schema) else target
    if not isinstance(table, exp.Table) or not table.name:
        raise _after(sql, tokens, into, "a table name")
    if isinstance(target, exp.Schema):
        _check_column_list(sql, tokens, target)
    body = tree.expression
    if body is None and not tree.args.get("default"):
        raise _after(sql, tokens, len(tokens) - 1, "VALUES or a query")
    if isinstance(body, exp.Values):
        _check_values(sql, tokens, body)
        alias = body.args.get("alias")
        if alias is not None and alias.this is not None and span_of(alias.this):
            at = _token_index(tokens, span_of(alias.this)[0])
            if at is not None:
                if tokens[at - 1].token_type == TokenType.ALIAS:
                    at -= 1
                raise _unexpected(sql, tokens[at], False, None,
                                  "the VALUES of an INSERT take no alias")


def _check_column_list(sql: str, tokens: list[Token], schema: exp.Schema) -> None:
    """``INSERT INTO t (k v)`` (read as a column definition) and ``INSERT INTO t ()``."""
    for column in schema.expressions:
        if not isinstance(column, exp.Identifier):
            name = column.this if isinstance(column.this, exp.Identifier) else column
            span = span_of(name)
            at = None if span is None else _token_index(tokens, span[0])
            if at is not None:
                raise _after(sql, tokens, at, "',' or ')' in the list of columns")
            raise SqlError("SQL syntax error: the INSERT column list takes column names only",
                           sql, span_of(column))
    if not schema.expressions:
        span = span_of(schema.this)
        at = None if span is None else _token_index(tokens, span[0])
        while at is not None and at < len(tokens) and tokens[at].token_type != TokenType.L_PAREN:
            at += 1
        if at is not None and at + 1 < len(tokens):
            raise _unexpected(sql, tokens[at + 1], False, "a column name")
        raise SqlError("SQL syntax error: the INSERT column list is empty", sql)


def _check_values(sql: str, tokens: list[Token], values: exp.Values) -> None:
    """Rows of ``VALUES`` must each hold a value and be separated by commas: sqlglot reads
    ``VALUES (1, 2) (3, 4)`` as one row with an alias, and ``VALUES ()`` as an empty row."""
    start = next((i for i, t in enumerate(tokens) if t.token_type == TokenType.VALUES), None)
    if start is None:
        return
    i = start + 1
    while i < len(tokens) and tokens[i].token_type == TokenType.L_PAREN:
        if i + 1 < len(tokens) and tokens[i + 1].token_type == TokenType.R_PAREN:
            raise _unexpected(sql, tokens[i + 1], False, "a value")
        depth, j = 0, i
        while j < len(tokens):
            depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(tokens[j].token_type, 0)
            if depth == 0:
                break
            j += 1
        if j + 1 >= len(tokens):
            return
        following = tokens[j + 1]
        if following.token_type == TokenType.L_PAREN:
            raise _unexpected(sql, following, False, "',' between the rows")
        if following.token_type != TokenType.COMMA:
            return
        i = j + 2


def _check_aliases(sql: str, tokens: list[Token], tree: exp.Expression) -> None:
    """A DuckDB reserved word sqlglot took for an alias: ``SELECT k FROM t LIMIT`` is an
    unfinished LIMIT, not the table aliased ``LIMIT``.  Quoted, any word is a name; after AS a
    column alias may be any word (as in DuckDB)."""
    for alias in tree.find_all(exp.TableAlias):
        if alias.this is None and alias.columns and isinstance(alias.parent, (exp.Values,
                                                                              exp.Subquery)):
            span = span_of(alias.columns[0])
            at = None if span is None else _token_index(tokens, span[0])
            if at is not None and at > 0 and tokens[at - 1].token_type == TokenType.L_PAREN:
                what = ("',' between the rows" if isinstance(alias.parent, exp.Values)
                        else "a name before the column names")
                raise _unexpected(sql, tokens[at - 1], False, what)
        # the alias of a table or subquery follows it: there an unfinished clause reads as one
        follows = isinstance(alias.parent, (exp.Table, exp.Subquery, exp.Values))
        _check_alias_name(sql, tokens, alias.this, table=True, follows=follows)
        for name in alias.columns:
            _check_alias_name(sql, tokens, name, table=True, follows=False)
    for alias in tree.find_all(exp.Alias):
        _check_alias_name(sql, tokens, alias.args.get("alias"), table=False, follows=False)


def _check_alias_name(sql: str, tokens: list[Token], name, *, table: bool,
                      follows: bool) -> None:
    """``name`` (an alias as sqlglot read it) if DuckDB takes it for a name in that place; a
    syntax error underlining it if not."""
    if not isinstance(name, exp.Identifier) or name.quoted:
        return
    start = name.meta.get("start")
    at = None if start is None else _token_index(tokens, start)
    if at is None:  # a name sqlglot made up
        return
    word = name.name.upper()
    after_as = at > 0 and tokens[at - 1].token_type == TokenType.ALIAS
    if table:
        if word not in _NOT_ALIASES:
            return
    elif after_as or word not in _NOT_BARE_LABELS or (
            at + 1 < len(tokens) and tokens[at + 1].token_type == TokenType.COLON):
        return  # ``k AS year`` and the prefix alias ``year: k`` are fine
    token = tokens[at]
    text = _text(sql, token)
    at_end = at + 1 == len(tokens) or tokens[at + 1].token_type in _ENDS
    if not after_as and (follows or at_end) and word in _UNFINISHED:
        raise _after(sql, tokens, at, _UNFINISHED[word])
    if table:
        note = f'{word} is a reserved word: write "{text}" to use it as a name'
    else:
        note = f"{word} can be a column alias only after AS: write AS {text}"
    raise _unexpected(sql, token, False, None, note)


def _check_joins(sql: str, tokens: list[Token], tree: exp.Expression) -> None:
    """A JOIN with no ON or USING (or ON with nothing after it), or a CROSS / NATURAL JOIN
    with one: DuckDB refuses both, and sqlglot would run the first as a cross join."""
    problems = [join.meta[_JOIN_PROBLEM] for join in tree.find_all(exp.Join)
                if _JOIN_PROBLEM in join.meta]
    if problems:
        token, at_end, expected, note = min(problems, key=lambda p: p[0].start)
        raise _unexpected(sql, token, at_end, expected, note)


def span_of(node: exp.Expression) -> tuple[int, int] | None:
    """Character span of a node in the SQL text, when sqlglot recorded it."""
    meta = getattr(node, "meta", None) or {}
    if "start" in meta and "end" in meta:
        return meta["start"], meta["end"] + 1
    ident = node.find(exp.Identifier) if not isinstance(node, exp.Identifier) else node
    if ident is not None and ident is not node:
        return span_of(ident)
    return None


def span_over(node: exp.Expression) -> tuple[int, int] | None:
    """From the first to the last place in the SQL text that ``node``'s parts recorded."""
    spans = [span for span in map(span_of, node.walk()) if span is not None]
    return (min(s[0] for s in spans), max(s[1] for s in spans)) if spans else None


def timestamp_window(version: exp.Version | None, sql: str) -> tuple[int | None, int | None] | None:
    """The ``FOR SYSTEM_TIME`` window of a table: (start, end) ms, or None if absent."""
    if version is None:
        return None
    kind = str(version.args.get("kind", "")).upper()
    target = version.expression
    if kind == "AS OF":
        return (None, _millis(target, sql))
    if kind in ("BETWEEN", "FROM") and isinstance(target, exp.Tuple) and len(target.expressions) == 2:
        start, end = (_millis(e, sql) for e in target.expressions)
        if start > end:
            raise SqlError(f"FOR SYSTEM_TIME BETWEEN: start {start} is after end {end}", sql,
                           span_of(target))
        return (start, end)
    raise SqlError(f"unsupported FOR SYSTEM_TIME form {kind!r} (use AS OF or BETWEEN)", sql,
                   span_of(version))


def _millis(node: exp.Expression, sql: str) -> int:
    """A timestamp literal in ms: an integer, or a TIMESTAMP/DATE literal (UTC)."""
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            value = int(node.this)
        except ValueError:
            raise SqlError("timestamp must be an integer number of milliseconds", sql,
                           span_of(node)) from None
        if value < 0:
            raise SqlError("timestamp must not be negative", sql, span_of(node))
        return value
    text = None
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal):
        text = node.this.this
    elif isinstance(node, exp.Literal) and node.is_string:
        text = node.this
    if text is not None:
        try:
            when = dt.datetime.fromisoformat(text)
        except ValueError:
            raise SqlError(f"cannot read {text!r} as a timestamp", sql, span_of(node)) from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.timezone.utc)
        return int(when.timestamp() * 1000)
    raise SqlError("FOR SYSTEM_TIME needs a number of milliseconds or a TIMESTAMP literal", sql,
                   span_of(node))
