"""Per-group accumulators of the statistical and folding aggregates (``engine.statistics``,
``engine.folds``), in DuckDB's arithmetic.

In: ``ids`` (int64 group id per row; -1 = no group), values as writable C-contiguous float64 or
int64 arrays, ``valid`` (uint8, 1 = use the row; empty = every row).  Out: accumulators the
caller allocates with one slot (or row) per group, initialised as stated; ``counts[g]``
receives the number of rows of group ``g`` used.

``power_sums``: n, sum x, x^2, x^3, x^4 (skewness, kurtosis add plain power sums, in row
order, as DuckDB does).  ``comoments``: for pairs (y, x) the running means, co-moment and
both sums of squared deviations by DuckDB's Welford updates, plus plain sums of x and y
(corr, covar_*, regr_*).  ``products``: running products; ``bit_fold``: AND / OR / XOR;
``arg_extreme``: the first row holding each group's largest / smallest key.
"""

from __future__ import annotations

from . import jit


@jit
def power_sums(values, valid, ids, counts, sums):
    """``sums`` (groups x 4, zeroed): sums of x, x^2, x^3, x^4 of each group's rows."""
    has_valid = valid.shape[0] > 0
    total = 0
    for row in range(ids.shape[0]):
        group = ids[row]
        if group < 0 or (has_valid and valid[row] == 0):
            continue
        x = values[row]
        square = x * x
        counts[group] += 1
        sums[group, 0] += x
        sums[group, 1] += square
        sums[group, 2] += x ** 3
        sums[group, 3] += square * square
        total += 1
    return total


@jit
def comoments(ys, xs, valid, ids, counts, state):
    """``state`` (groups x 7, zeroed): mean x, mean y, co-moment, squared deviations of x and
    of y (Welford), sum x, sum y over each group's pairs."""
    has_valid = valid.shape[0] > 0
    total = 0
    for row in range(ids.shape[0]):
        group = ids[row]
        if group < 0 or (has_valid and valid[row] == 0):
            continue
        x = xs[row]
        y = ys[row]
        counts[group] += 1
        n = float(counts[group])
        dx = x - state[group, 0]
        mean_x = state[group, 0] + dx / n
        mean_y = state[group, 1] + (y - state[group, 1]) / n
        state[group, 2] += dx * (y - mean_y)
        state[group, 3] += (x - mean_x) * dx
        state[group, 4] += (y - mean_y) * (y - state[group, 1])
        state[group, 0] = mean_x
        state[group, 1] = mean_y
        state[group, 5] += x
        state[group, 6] += y
        total += 1
    return total


@jit
def products(values, valid, ids, out, counts):
    """``out`` (ones): each group's product."""
    has_valid = valid.shape[0] > 0
    total = 0
    for row in range(ids.shape[0]):
        group = ids[row]
        if group < 0 or (has_valid and valid[row] == 0):
            continue
        out[group] *= values[row]
        counts[group] += 1
        total += 1
    return total


@jit
def bit_fold(values, valid, ids, operation, out, counts):
    """``out`` (int64: all ones for AND, zeros for OR / XOR): ``operation`` 0 = AND, 1 = OR,
    2 = XOR over each group's values."""
    has_valid = valid.shape[0] > 0
    total = 0
    for row in range(ids.shape[0]):
        group = ids[row]
        if group < 0 or (has_valid and valid[row] == 0):
            continue
        value = values[row]
        if operation == 0:
            out[group] &= value
        elif operation == 1:
            out[group] |= value
        else:
            out[group] ^= value
        counts[group] += 1
        total += 1
    return total


@jit
def arg_extreme(keys, valid, ids, want_max, best, rows):
    """``rows`` (-1): per group the first row whose key is the largest (``want_max``) or
    smallest; ``best`` (keys' dtype) receives that key.  NaN ranks above every number, as
    in DuckDB (``x != x`` is the NaN test: constant false for int64)."""
    has_valid = valid.shape[0] > 0
    total = 0
    for row in range(ids.shape[0]):
        group = ids[row]
        if group < 0 or (has_valid and valid[row] == 0):
            continue
        key = keys[row]
        if rows[group] < 0:
            better = True
        else:
            current = best[group]
            if want_max:
                better = current == current and (key != key or key > current)
            else:
                better = key == key and (current != current or key < current)
        if better:
            best[group] = key
            rows[group] = row
        total += 1
    return total
