"""Per-group sums of arithmetic expressions over float64 columns, in one pass.

An expression is a small postfix program, one row of the int64 matrix ``programs``: pairs
``(opcode, argument)`` ending with ``END``.  ``LOAD`` pushes column ``argument`` (one of the
up to ``COLUMNS`` arrays passed as ``c0 .. c5``), ``CONSTANT`` pushes ``constants[argument]``,
``ADD`` / ``SUBTRACT`` / ``MULTIPLY`` pop two and push the result, ``NEGATE`` flips the top.

Rows go through in blocks of ``BLOCK``: each instruction runs over the whole block into a
stack of block-sized registers that stay in the L1 cache, so nothing row-sized is ever
written (``l_extendedprice * (1 - l_discount) * (1 + l_tax)`` costs no temporary arrays), and
the loop per instruction is as tight as a vectorised one; a program that only loads a column
reads it in place.

Sums are exact to a block: a block whose rows fall in at most ``NARROW`` neighbouring groups
(few groups, or rows sorted by what the groups follow) is added up per group in eight plain
partial sums (independent chains; a block's rounding error is that of 128 adds), and each
block's total goes into its group's running sum with the exact rounding error kept (TwoSum).
A block spread over more groups adds row by row, each add's error kept, into ``lanes``
accumulators per group so rows of one group in a row do not wait on each other.
"""

from __future__ import annotations

import numpy as np

from . import jit
from .aggregate import neumaier, two_sum

END, LOAD, CONSTANT, ADD, SUBTRACT, MULTIPLY, NEGATE = range(7)
COLUMNS = 6
BLOCK = 1024
STACK = 8
NARROW = 8  # groups a block may span to be summed per group


@jit
def fold_expression_sums(programs, constants, c0, c1, c2, c3, c4, c5, ids, lanes, sums,
                         errors):
    """Add every row's value of each expression ``e`` (a row of ``programs``) to
    ``sums[e, lanes * group + lane]``, rounding errors to the same slot of ``errors``
    (``lanes``: 1, 2, 4 or 8 accumulators a group; ``finish_sums`` merges them).  ``ids``
    (int64, one per row, all >= 0) gives each row's group; every column has at least
    ``ids.shape[0]`` values.  Returns the number of rows."""
    n = ids.shape[0]
    registers = np.empty((STACK, BLOCK))
    partials = np.empty(8 * NARROW)
    for start in range(0, n, BLOCK):
        size = min(BLOCK, n - start)
        low = ids[start]
        high = low
        for i in range(1, size):  # branch-free: vectorises
            low = min(low, ids[start + i])
            high = max(high, ids[start + i])
        for e in range(programs.shape[0]):
            values = _run(programs[e], constants, c0, c1, c2, c3, c4, c5, start, size,
                          registers)
            if high - low < NARROW:
                _add_narrow(values, size, ids, start, low, high - low + 1, lanes, partials,
                            sums[e], errors[e])
            else:
                _add_rows(values, size, ids, start, lanes, sums[e], errors[e])
    return n


@jit
def finish_sums(sums, errors, lanes, out):
    """``out[e, g]``: the lanes of ``fold_expression_sums`` merged, errors added back (unless
    the sum is not finite: an inf or NaN makes the error meaningless)."""
    for e in range(out.shape[0]):
        for group in range(out.shape[1]):
            total = 0.0
            error = 0.0
            for lane in range(lanes):
                total, step = neumaier(total, sums[e, lanes * group + lane])
                error += step + errors[e, lanes * group + lane]
            out[e, group] = total + error if np.isfinite(total) else total
    return out.shape[0]


@jit(inline="always")
def _column(index, c0, c1, c2, c3, c4, c5):
    if index == 0:
        return c0
    if index == 1:
        return c1
    if index == 2:
        return c2
    if index == 3:
        return c3
    if index == 4:
        return c4
    return c5


@jit(inline="always")
def _run(program, constants, c0, c1, c2, c3, c4, c5, start, size, registers):
    """The values of one program over rows ``start .. start + size``: a column itself when
    the program only loads it, else in ``registers[0, :size]``.  (Loops go over 1-D views:
    indexing the 2-D registers row by row is four times slower.)"""
    if program[0] == LOAD and program[2] == END:
        return _column(program[1], c0, c1, c2, c3, c4, c5)[start:start + size]
    top = -1
    at = 0
    while program[at] != END:
        op = program[at]
        argument = program[at + 1]
        at += 2
        if op == LOAD:
            top += 1
            target = registers[top]
            column = _column(argument, c0, c1, c2, c3, c4, c5)[start:start + size]
            for i in range(size):
                target[i] = column[i]
        elif op == CONSTANT:
            top += 1
            target = registers[top]
            value = constants[argument]
            for i in range(size):
                target[i] = value
        elif op == NEGATE:
            target = registers[top]
            for i in range(size):
                target[i] = -target[i]
        else:
            top -= 1
            left = registers[top]
            right = registers[top + 1]
            if op == ADD:
                for i in range(size):
                    left[i] = left[i] + right[i]
            elif op == SUBTRACT:
                for i in range(size):
                    left[i] = left[i] - right[i]
            else:
                for i in range(size):
                    left[i] = left[i] * right[i]
    return registers[0, :size]


@jit(inline="always")
def _add_narrow(values, size, ids, start, low, width, lanes, partials, sums, errors):
    """A block whose groups lie in ``low .. low + width - 1`` (``width <= NARROW``): eight
    plain partial sums per group (row ``i`` into partial ``i % 8``), then each group's total
    into its running sum (lane 0) with the rounding error kept."""
    for k in range(8 * width):
        partials[k] = 0.0
    if width == 1:
        for i in range(size):
            partials[i & 7] += values[i]
    else:
        for i in range(size):
            partials[8 * (ids[start + i] - low) + (i & 7)] += values[i]
    for g in range(width):
        total = 0.0
        for k in range(8):
            total += partials[8 * g + k]
        slot = lanes * (low + g)
        sums[slot], error = two_sum(sums[slot], total)
        errors[slot] += error


@jit(inline="always")
def _add_rows(values, size, ids, start, lanes, sums, errors):
    """A block of many groups, row by row into the row's lane of its group, each add's
    rounding error kept."""
    spread = lanes - 1
    for i in range(size):
        slot = lanes * ids[start + i] + (i & spread)
        sums[slot], error = two_sum(sums[slot], values[i])
        errors[slot] += error
