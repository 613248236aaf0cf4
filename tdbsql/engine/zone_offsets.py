"""Fixed-offset time zone names DuckDB reads besides the tz database's (its ICU time zones).

* ``GMT+1``, ``gmt-05:30``, ``GMT+0530``, ``GMT+123456`` -- ICU's custom zone IDs: ``GMT`` in
  any case, a sign, then ``H[H]:MM[:SS]`` or 1 to 6 digits (``H``, ``HH``, ``HMM``, ``HHMM``,
  ``HMMSS``, ``HHMMSS``), hours below 24, minutes and seconds below 60.  The sign is ISO's:
  ``GMT+1`` is one hour EAST of Greenwich (10:00 GMT+1 is 09:00 UTC), the opposite of the tz
  database's POSIX-style ``Etc/GMT+1`` (one hour west), which is read as the tz database has it.
* ``UTC+2``, ``UTC-05``, ``UTC+0230`` (``UTC`` in capitals) -- whole hours only, as DuckDB reads
  them: the number after the sign is the hours below 100 and ``HHMM`` from 100 on, whose
  minutes are dropped (``UTC+0230`` is ``UTC+2``), as is anything after a colon
  (``UTC+02:45`` is ``UTC+2``); from -12 to +14 hours (the tz database's ``Etc/GMT`` zones).
"""

from __future__ import annotations

import datetime as dt
import re

_GMT = re.compile(r"GMT([+-])(?:(\d{1,2}):(\d\d)(?::(\d\d))?|(\d{1,6}))",
                  re.IGNORECASE | re.ASCII)
_UTC = re.compile(r"UTC([+-])(\d+)(?::[\d:]*)?", re.ASCII)


def fixed_zone(name: str) -> dt.timezone | None:
    """The fixed offset ``name`` stands for (the module docstring), or None."""
    found = _GMT.fullmatch(name)
    if found is not None:
        return _gmt(*found.groups())
    found = _UTC.fullmatch(name)
    if found is not None:
        sign, digits = found.groups()
        number = int(digits)
        hours = number if number < 100 else number // 100
        hours = -hours if sign == "-" else hours
        return dt.timezone(dt.timedelta(hours=hours)) if -12 <= hours <= 14 else None
    return None


def _gmt(sign: str, hours, minutes, seconds, digits) -> dt.timezone | None:
    if digits is not None:  # H, HH, HMM, HHMM, HMMSS, HHMMSS
        head = 2 - len(digits) % 2 if len(digits) > 2 else len(digits)
        hours, rest = digits[:head], digits[head:]
        minutes, seconds = rest[:2] or None, rest[2:4] or None
    h, m, s = int(hours), int(minutes or 0), int(seconds or 0)
    if h > 23 or m > 59 or s > 59:
        return None
    offset = dt.timedelta(hours=h, minutes=m, seconds=s)
    return dt.timezone(-offset if sign == "-" else offset)
