"""RE2 patterns -- DuckDB's regular expressions -- as Python ``re`` patterns matching the same
text.

Arrow's compute functions run RE2 themselves; Python's ``re`` serves where they cannot answer
(a match's groups: ``regexp_extract``, ``regexp_extract_all``).  The two read most patterns
alike.  Where they differ, ``python_pattern`` rewrites the pattern:

- ``\\d \\w \\s \\b`` and their negations are ASCII in RE2 and Unicode in ``re``: each is
  written as its ASCII class (``[0-9]``; ``\\s`` is ``[\\t\\n\\f\\r ]``, without ``re``'s
  ``\\v``; ``\\b`` as lookarounds of ``\\w``), inside brackets too (a negated one there as a
  union or intersection of classes).  Not ``re``'s ASCII flag: it also limits case folding
  to ASCII, and a pattern starting with a scoped ``(?a:\\W)`` never matches a non-ASCII
  character (CPython's start-of-pattern check ignores the scoped flag).
- Outside multi-line mode, ``$`` is the end of the text in RE2, where ``re`` also matches
  before a final newline: it becomes ``\\Z`` (RE2's ``\\z`` too).
- Flags set inside a pattern, ``a(?i)b``, hold to the end of the enclosing group in RE2;
  ``re`` takes them only at the very start: the rest of the group becomes ``(?i:...)``,
  each alternative of it on its own.
- POSIX classes (``[[:alpha:]]``) become their ASCII ranges; ``\\Q...\\E`` its text escaped;
  ``\\x{263a}`` the character; ``{,n}``, text in RE2, stays text.

What ``re`` cannot express -- Unicode classes (``\\pL``), the ungreedy flag ``U``, a negated
POSIX class, ``\\C`` -- raises ``UnsupportedSql``.  Patterns RE2 rejects (backreferences,
lookarounds) must be refused before they come here (``functions_text.compiled_regex``).
"""

from __future__ import annotations

import re

from ..errors import UnsupportedSql

_WORD = "0-9A-Za-z_"
_CLASSES = {"d": "0-9", "w": _WORD, "s": "\\t\\n\\f\\r "}  # RE2's, inside brackets
_ESCAPES = {**{c: f"[{ranges}]" for c, ranges in _CLASSES.items()},
            **{c.upper(): f"[^{ranges}]" for c, ranges in _CLASSES.items()},
            # a word boundary is not case-folded in RE2: (?i) must not make ſ a word letter
            "b": f"(?-i:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))",
            "B": f"(?-i:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))"}
_POSIX = {"alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7f", "blank": "\\t ",
          "cntrl": "\\x00-\\x1f\\x7f", "digit": "0-9", "graph": "!-~", "lower": "a-z",
          "print": " -~", "punct": "!-/:-@\\[-`{-~", "space": "\\t\\n\\v\\f\\r ",
          "upper": "A-Z", "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f"}
_REPEAT = re.compile(r"\{\d+(?:,\d*)?\}")
_FLAGS = re.compile(r"\(\?([imsU]*(?:-[imsU]*)?)([:)])")


class _Group:
    """An open group: whether ``$`` is multi-line in it, and the flag groups opened inside it
    by ``(?flags)`` (closed with it, and reopened after each ``|``)."""

    def __init__(self, multiline: bool):
        self.multiline = multiline
        self.flag_groups: list[str] = []


def python_pattern(pattern: str) -> str:
    """``pattern`` (RE2) rewritten for Python's ``re`` (see the module docstring)."""
    return _Translation(pattern).text()


class _Translation:
    def __init__(self, pattern: str):
        self.pattern = pattern
        self.out: list[str] = []
        self.groups = [_Group(False)]

    def text(self) -> str:
        at, pattern = 0, self.pattern
        while at < len(pattern):
            char = pattern[at]
            if char == "\\":
                at = self._escape(at)
            elif char == "[":
                at = self._bracket(at)
            elif char == "(":
                at = self._open(at)
            elif char == ")":
                self._close()
                at += 1
            elif char == "|":
                group = self.groups[-1]
                self.out.append(")" * len(group.flag_groups) + "|" + "".join(
                    f"(?{flags}:" for flags in group.flag_groups))
                at += 1
            elif char == "$":
                self.out.append("$" if self.groups[-1].multiline else r"\Z")
                at += 1
            elif char == "{":
                found = _REPEAT.match(pattern, at)
                self.out.append(found.group() if found else r"\{")
                at = found.end() if found else at + 1
            else:
                self.out.append(char)
                at += 1
        self.out.append(")" * len(self.groups[0].flag_groups))
        return "".join(self.out)

    def _escape(self, at: int) -> int:
        """An escape outside brackets; returns where the pattern goes on."""
        pattern = self.pattern
        if at + 1 >= len(pattern):
            self.out.append("\\")
            return at + 1
        char = pattern[at + 1]
        if char in _ESCAPES:
            self.out.append(_ESCAPES[char])
        elif char == "z":
            self.out.append(r"\Z")
        elif char == "Q":
            end = pattern.find(r"\E", at + 2)
            stop = len(pattern) if end < 0 else end
            self.out.append(re.escape(pattern[at + 2:stop]))
            return stop if end < 0 else end + 2
        elif char == "x" and pattern.startswith("{", at + 2):
            text, after = _code_point(pattern, at)
            self.out.append(text)
            return after
        elif char in "pPC":
            raise UnsupportedSql(f"the regular expression class \\{char} (RE2) has no "
                                 f"equivalent in Python's re, which extracts groups: "
                                 f"{self.pattern!r}")
        else:
            self.out.append(pattern[at:at + 2])
        return at + 2

    def _bracket(self, at: int) -> int:
        """A bracket class ``[...]``; returns the position after its ``]``."""
        pattern, parts, complements = self.pattern, [], []
        at += 1
        negated = pattern.startswith("^", at)
        at += negated
        if pattern.startswith("]", at):  # a leading ] is itself
            parts.append(r"\]")
            at += 1
        while at < len(pattern) and pattern[at] != "]":
            char = pattern[at]
            if char == "[" and pattern.startswith("[:", at):
                end = pattern.find(":]", at + 2)
                name = pattern[at + 2:end] if end > 0 else ""
                if name not in _POSIX:
                    raise UnsupportedSql(f"the POSIX class [:{name}:] has no equivalent in "
                                         f"Python's re, which extracts groups: {pattern!r}")
                parts.append(_POSIX[name])
                at = end + 2
            elif char == "\\" and at + 1 < len(pattern):
                escaped = pattern[at + 1]
                if escaped in "pPC":
                    self._escape(at)  # the refusal
                if escaped == "x" and pattern.startswith("{", at + 2):
                    text, at = _code_point(pattern, at)
                    parts.append(text)
                    continue
                if escaped in _CLASSES:
                    parts.append(_CLASSES[escaped])
                elif escaped.lower() in _CLASSES:  # \D \W \S: everything but a class
                    complements.append(_CLASSES[escaped.lower()])
                else:
                    parts.append(pattern[at:at + 2])
                at += 2
            else:  # [ & ~ | are plain in RE2; re warns of set operations ahead
                parts.append("\\" + char if char in "[&~|" else char)
                at += 1
        self.out.append(_bracket_class("".join(parts), complements, negated))
        return at + 1

    def _open(self, at: int) -> int:
        """A group's opening, or a ``(?flags)`` setting; returns where the pattern goes on."""
        pattern, outer = self.pattern, self.groups[-1]
        flags = _FLAGS.match(pattern, at)
        if flags is not None:
            letters = flags.group(1)
            if "U" in letters:
                raise UnsupportedSql(f"the ungreedy flag U (RE2) has no equivalent in "
                                     f"Python's re, which extracts groups: {pattern!r}")
            on, _, off = letters.partition("-")
            multiline = ("m" in on) or (outer.multiline and "m" not in off)
            if flags.group(2) == ")":  # to the end of the enclosing group
                if letters:
                    self.out.append(f"(?{letters}:")
                    outer.flag_groups.append(letters)
                outer.multiline = multiline
            else:
                self.out.append(f"(?{letters}:" if letters else "(?:")
                self.groups.append(_Group(multiline))
            return flags.end()
        self.out.append("(")
        self.groups.append(_Group(outer.multiline))
        return at + 1

    def _close(self) -> None:
        group = self.groups.pop() if len(self.groups) > 1 else self.groups[0]
        self.out.append(")" * len(group.flag_groups) + ")")


def _code_point(pattern: str, at: int) -> tuple[str, int]:
    """``\\x{263a}`` at ``at``: the character, escaped for ``re``, and where the pattern
    goes on."""
    end = pattern.index("}", at + 3)
    return re.escape(chr(int(pattern[at + 3:end], 16))), end + 1


def _bracket_class(listed: str, complements: list[str], negated: bool) -> str:
    """A bracket class of the ``listed`` characters and ranges and of everything outside
    each of ``complements`` (the classes of ``\\D \\W \\S``), or of none of them when
    ``negated``: a union of classes, or an intersection by lookaheads."""
    if not complements:
        return f"[^{listed}]" if negated else f"[{listed}]"
    if not negated:  # a character listed, or outside one of the complements' classes
        options = ([f"[{listed}]"] if listed else []) + [f"[^{c}]" for c in complements]
        return "(?:" + "|".join(options) + ")"
    # none of those: not listed, and inside every complement's class
    guard = f"(?![{listed}])" if listed else ""
    return "(?:" + guard + "".join(f"(?=[{c}])" for c in complements[1:]) + \
        f"[{complements[0]}])"
