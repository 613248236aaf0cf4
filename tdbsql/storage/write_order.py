"""The timestamp of a statement's write: after everything the statement read.

Newest wins by a fragment's first timestamp, and fragments of one millisecond tie (their
order is their names', random); a delete at ``t`` removes the cells of fragments that start
by ``t``.  So two statements in one millisecond -- ``INSERT ...; UPDATE ...`` in a script --
could be applied out of order.  ``write_after`` gives a stamp past every fragment and delete
commit visible now (the clock, or one past the newest of them when that is as recent), and
``wait_past`` returns once the clock has passed it, so the next statement's read sees the
write and its own write comes after.
"""

from __future__ import annotations

import time

from ..errors import OperationalError
from ..format.names import now_ms

AHEAD_MS = 1000  # how far past the clock a write may be stamped (``wait_past`` waits)


def write_after(array) -> int:
    """A write timestamp after every fragment and delete commit a read now sees."""
    now = now_ms()
    directory = array.directory
    stamps = [entry.timestamp_range[1] for entry in directory.committed
              if entry.timestamp_range[0] <= now]
    stamps += [delete.timestamp for delete in directory.deletes]
    when = max([now, *(t + 1 for t in stamps)])
    if when > now + AHEAD_MS:  # a consolidated fragment ending in the future
        raise OperationalError(f"cannot write to {array.path} now: it holds writes stamped up "
                               f"to {when - 1} ms, {(when - now) / 1000:.1f} s ahead of the "
                               "clock, and a statement's write must come after them")
    return when


def wait_past(t: int) -> None:
    """Return once the clock reads after ``t`` (at most about ``AHEAD_MS`` from now)."""
    while now_ms() <= t:
        time.sleep(0.0002)
