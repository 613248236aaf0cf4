"""Hash join inner loops: matched (left row, right row) index pairs from probe results.

In: ``right_ids`` (group id of every build-side row in the build table, -1 = NULL key) and
``left_groups`` (the build group each probe row found, -1 = none).  ``csr_build`` lists the
build rows of each group contiguously (in row order); ``join_count`` sizes the output and
``join_fill`` writes it into caller-allocated index arrays: probe rows in order, each followed
by its matches in build-row order, unmatched probe rows (when kept) paired with -1.
"""

from __future__ import annotations

from . import jit


@jit
def csr_build(ids, ngroups, offsets, rows):
    """Counting sort of rows by group: group ``g``'s rows are ``rows[offsets[g]:offsets[g+1]]``.

    ``offsets`` (length ``ngroups + 1``) must be zeroed; rows with id -1 are left out.
    Returns the number of rows placed.
    """
    for row in range(ids.shape[0]):
        group = ids[row]
        if group >= 0:
            offsets[group + 1] += 1
    for group in range(ngroups):
        offsets[group + 1] += offsets[group]
    for row in range(ids.shape[0]):
        group = ids[row]
        if group >= 0:
            rows[offsets[group]] = row
            offsets[group] += 1
    # each offsets[g] now holds the end of group g: shift right to get the starts back
    for group in range(ngroups, 0, -1):
        offsets[group] = offsets[group - 1]
    offsets[0] = 0
    return offsets[ngroups]


@jit
def join_count(left_groups, offsets, keep_unmatched):
    """Number of output pairs: the match count of every probe row, or 1 for a probe row
    without matches when ``keep_unmatched`` is set (left/full joins)."""
    total = 0
    for row in range(left_groups.shape[0]):
        group = left_groups[row]
        if group >= 0:
            total += offsets[group + 1] - offsets[group]
        elif keep_unmatched:
            total += 1
    return total


@jit
def join_fill(left_groups, offsets, rows, keep_unmatched, group_matched, left_out, right_out):
    """Write the pairs ``join_count`` counted; marks ``group_matched[g] = 1`` for every build
    group that found a partner.  Returns the number of pairs written."""
    pos = 0
    for row in range(left_groups.shape[0]):
        group = left_groups[row]
        if group >= 0:
            group_matched[group] = 1
            for match in range(offsets[group], offsets[group + 1]):
                pos = _pair(row, rows[match], left_out, right_out, pos)
        elif keep_unmatched:
            pos = _pair(row, -1, left_out, right_out, pos)
    return pos


@jit(inline="always")
def _pair(row, match, left_out, right_out, pos):
    """Write the pair (``row``, ``match``) at ``pos``; the next position."""
    left_out[pos] = row
    right_out[pos] = match
    return pos + 1


@jit
def unmatched_rows(right_ids, group_matched, out):
    """Build rows whose group found no partner (or whose key is NULL), in row order."""
    count = 0
    for row in range(right_ids.shape[0]):
        group = right_ids[row]
        if group < 0 or group_matched[group] == 0:
            out[count] = row
            count += 1
    return count


@jit
def unique_join_count(left_groups, keep_unmatched):
    """``join_count`` when every build group is one row: a probe row's match count is 0 or 1."""
    total = 0
    for row in range(left_groups.shape[0]):
        total += left_groups[row] >= 0 or keep_unmatched
    return total


@jit
def unique_join_fill(left_groups, group_rows, keep_unmatched, group_matched, left_out,
                     right_out):
    """``join_fill`` when every build group is one row (``group_rows[g]``): no counting sort
    of the build rows first (fact rows probing a dimension's unique keys)."""
    pos = 0
    for row in range(left_groups.shape[0]):
        group = left_groups[row]
        if group >= 0:
            group_matched[group] = 1
            pos = _pair(row, group_rows[group], left_out, right_out, pos)
        elif keep_unmatched:
            pos = _pair(row, -1, left_out, right_out, pos)
    return pos
