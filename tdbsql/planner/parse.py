"""SQL text -> sqlglot AST, with errors that underline the culprit.

A syntax error names what was found where the statement went wrong -- a token by its text, or
the end of the statement -- and, when sqlglot knew it, what was expected there; it never shows
sqlglot's internal token or class reprs.

Also reads the ``FOR SYSTEM_TIME AS OF t`` / ``FOR SYSTEM_TIME BETWEEN t1 AND t2`` clause of a
table into a timestamp window in milliseconds.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from ..errors import SqlError

_DIALECT = Dialect.get_or_raise("duckdb")


def parse(sql: str) -> exp.Expression:
    if not sql or not sql.strip():
        raise SqlError("empty SQL statement")
    try:
        tokens = _DIALECT.tokenize(sql)
    except TokenError:
        raise _unreadable(sql) from None
    if not tokens:
        raise SqlError("empty SQL statement: it holds only a comment", sql, (0, len(sql)))
    parser = _DIALECT.parser()
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
    _check_tokens(sql, tokens)
    return statements[0]


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


def syntax_error(sql: str, tokens: list[Token], err: ParseError, parser=None) -> SqlError:
    """A person's account of sqlglot's ``err``, raised while ``parser`` (if given) parsed
    ``tokens`` of ``sql``: ``SQL syntax error: unexpected <what was found>; expected <what was
    missing>``.  What was found is a token by its text, underlined, or the end of the statement
    (the last token is underlined)."""
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
    misspelled = _misspelled_statement(sql, tokens)
    if misspelled is not None:
        return misspelled
    index = _index_of(tokens, culprit)
    if at_end:
        found = f"end of the statement after {_show(sql, culprit)}"
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
        if isinstance(node_class, type) and issubclass(node_class, exp.Func):
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
            if after.token_type == TokenType.R_PAREN:
                raise SqlError(f"SQL syntax error: unexpected ')' after {_show(sql, before)}; "
                               "expected an expression", sql, _span(after))


def span_of(node: exp.Expression) -> tuple[int, int] | None:
    """Character span of a node in the SQL text, when sqlglot recorded it."""
    meta = getattr(node, "meta", None) or {}
    if "start" in meta and "end" in meta:
        return meta["start"], meta["end"] + 1
    ident = node.find(exp.Identifier) if not isinstance(node, exp.Identifier) else node
    if ident is not None and ident is not node:
        return span_of(ident)
    return None


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
