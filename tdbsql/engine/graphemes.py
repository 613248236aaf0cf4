"""User-perceived characters (Unicode extended grapheme clusters, UAX #29), for ``reverse``.

DuckDB reverses a string by grapheme clusters -- ``e`` + a combining acute stays ``é``, a
flag's two regional indicators, an emoji with its skin tone or a ZWJ family stay whole --
while its other functions count code points.  In: a Python string.  Out: its clusters, by
the UAX #29 rules that matter for text (breaks around controls but CR LF, Extend /
SpacingMark / ZWJ, Prepend, emoji ZWJ sequences, regional indicator pairs, Hangul
syllables); Extended_Pictographic is approximated by the emoji blocks.
"""

from __future__ import annotations

import unicodedata

_PREPEND = ((0x0600, 0x0605), (0x06DD, 0x06DD), (0x070F, 0x070F), (0x0890, 0x0891),
            (0x08E2, 0x08E2), (0x0D4E, 0x0D4E), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
            (0x111C2, 0x111C3), (0x1193F, 0x1193F), (0x11941, 0x11941), (0x11A3A, 0x11A3A),
            (0x11A84, 0x11A89), (0x11D46, 0x11D46))
# Code points whose clusters can differ from single code points: marks (variation selectors
# too), Prepend, ZWJ, skin tones, tags, regional indicators, Hangul jamo and syllables.
# An RE2 pattern: rows without a match reverse by code point, as do ASCII rows (DuckDB reverses
# their bytes: CR LF becomes LF CR there, not in a row with other text).
JOINING = "[\\pM" + "".join(f"\\x{{{low:X}}}-\\x{{{high:X}}}" for low, high in _PREPEND + (
    (0x200D, 0x200D), (0x1F3FB, 0x1F3FF), (0xE0020, 0xE007F), (0x1F1E6, 0x1F1FF),
    (0x1100, 0x11FF), (0xA960, 0xA97C), (0xD7B0, 0xD7FB), (0xAC00, 0xD7A3))) + "]|\\r\\n"
_PICTOGRAPHIC = ((0x1F000, 0x1FAFF), (0x2600, 0x27BF), (0x2300, 0x23FF), (0x2B00, 0x2BFF),
                 (0x2190, 0x21FF), (0x00A9, 0x00A9), (0x00AE, 0x00AE), (0x203C, 0x203C),
                 (0x2049, 0x2049), (0x2122, 0x2122), (0x2139, 0x2139), (0x3030, 0x3030),
                 (0x303D, 0x303D), (0x3297, 0x3297), (0x3299, 0x3299))


def reversed_clusters(text: str) -> str:
    return "".join(reversed(clusters(text)))


def clusters(text: str) -> list[str]:
    out: list[str] = []
    for char in text:
        if out and _joins(out[-1], char):
            out[-1] += char
        else:
            out.append(char)
    return out


def _joins(cluster: str, char: str) -> bool:
    """No break between ``cluster`` (so far) and ``char``."""
    before = cluster[-1]
    if _control(before) or _control(char):  # breaks around controls, not inside CR LF
        return before == "\r" and char == "\n"
    if _extends(char) or unicodedata.category(char) == "Mc" or _prepended(before):
        return True
    if before == "\u200d" and _pictographic(char):  # an emoji ZWJ sequence
        base = next((c for c in reversed(cluster) if not _extends(c)), "")
        return base != "" and _pictographic(base)
    if _regional(char) and _regional(before):
        return sum(map(_regional, cluster)) % 2 == 1  # pairs
    return _hangul_joins(_hangul(before), _hangul(char))


def _control(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Zl", "Zp")


def _extends(char: str) -> bool:
    point = ord(char)
    return unicodedata.category(char) in ("Mn", "Me") or point == 0x200D \
        or 0x1F3FB <= point <= 0x1F3FF or 0xE0020 <= point <= 0xE007F


def _prepended(char: str) -> bool:
    point = ord(char)
    return any(low <= point <= high for low, high in _PREPEND)


def _pictographic(char: str) -> bool:
    point = ord(char)
    return not _regional(char) and any(low <= point <= high for low, high in _PICTOGRAPHIC)


def _regional(char: str) -> bool:
    return 0x1F1E6 <= ord(char) <= 0x1F1FF


def _hangul(char: str) -> str:
    point = ord(char)
    if 0x1100 <= point <= 0x115F or 0xA960 <= point <= 0xA97C:
        return "L"
    if 0x1160 <= point <= 0x11A7 or 0xD7B0 <= point <= 0xD7C6:
        return "V"
    if 0x11A8 <= point <= 0x11FF or 0xD7CB <= point <= 0xD7FB:
        return "T"
    if 0xAC00 <= point <= 0xD7A3:
        return "LV" if (point - 0xAC00) % 28 == 0 else "LVT"
    return ""


def _hangul_joins(before: str, after: str) -> bool:
    if before == "L":
        return after in ("L", "V", "LV", "LVT")
    if before in ("LV", "V"):
        return after in ("V", "T")
    return before in ("LVT", "T") and after == "T"
