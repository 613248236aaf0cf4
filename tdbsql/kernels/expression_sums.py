"""Per-group compensated sums of arithmetic expressions over float64 columns, in one pass.

An expression is a small postfix program, one row of the int64 matrix ``programs``: pairs
``(opcode, argument)`` ending with ``END``.  ``LOAD`` pushes column ``argument`` (one of the
up to ``COLUMNS`` arrays passed as ``c0 .. c5``), ``CONSTANT`` pushes ``constants[argument]``,
``ADD`` / ``SUBTRACT`` / ``MULTIPLY`` pop two and push the result, ``NEGATE`` flips the top.

Rows go through in blocks of ``BLOCK``: each instruction runs over the whole block into a
stack of block-sized registers that stay in the L1 cache, so nothing row-sized is ever
written (``l_extendedprice * (1 - l_discount) * (1 + l_tax)`` costs no temporary arrays), and
the loop per instruction is as tight as a vectorised one.  Each expression's values are then
added to its group's accumulator with the exact rounding error kept (TwoSum), as
``kernels.aggregate.sum_float`` does: a block whose rows are all of one group is summed in four
register accumulators, others row by row into several accumulators (lanes) per group, so rows
of one group in a row do not wait on each other.
"""

from __future__ import annotations

import numpy as np

from . import jit
from .aggregate import neumaier, two_sum

END, LOAD, CONSTANT, ADD, SUBTRACT, MULTIPLY, NEGATE = range(7)
COLUMNS = 6
BLOCK = 1024
STACK = 8


@jit
def fold_expression_sums(programs, constants, c0, c1, c2, c3, c4, c5, ids, lanes, sums,
                         errors):
    """Add every row's value of each expression ``e`` (a row of ``programs``) to
    ``sums[e, lanes * group + lane]``, its exact rounding error to the same slot of
    ``errors`` (``lanes``: 1, 2, 4 or 8 accumulators a group; ``finish_sums`` merges them).
    ``ids`` (int64, one per row, all >= 0) gives each row's group; every column has at least
    ``ids.shape[0]`` values.  Returns the number of rows."""
    n = ids.shape[0]
    registers = np.empty((STACK, BLOCK))
    for start in range(0, n, BLOCK):
        size = min(BLOCK, n - start)
        group = ids[start]
        differ = 0
        for i in range(1, size):  # no early exit: this loop vectorises
            differ |= ids[start + i] ^ group
        single = differ == 0
        for e in range(programs.shape[0]):
            _run(programs[e], constants, c0, c1, c2, c3, c4, c5, start, size, registers)
            if single and lanes >= 4:
                _add_block(registers, size, lanes * group, sums[e], errors[e])
            else:
                _add_rows(registers, size, ids, start, lanes, sums[e], errors[e])
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
    """Run one program over rows ``start .. start + size``; the result is left in
    ``registers[0, :size]``.  (Loops go over 1-D views: indexing the 2-D registers row by row
    is four times slower.)"""
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


@jit(inline="always")
def _add_block(registers, size, first, sums, errors):
    """A block of one group's values (its lanes start at slot ``first``), summed in four
    register accumulators: independent chains, where TwoSum's adds would wait on each other."""
    values = registers[0]
    s0, s1, s2, s3 = sums[first], sums[first + 1], sums[first + 2], sums[first + 3]
    e0 = e1 = e2 = e3 = 0.0
    i = 0
    while i + 3 < size:
        s0, e = two_sum(s0, values[i])
        e0 += e
        s1, e = two_sum(s1, values[i + 1])
        e1 += e
        s2, e = two_sum(s2, values[i + 2])
        e2 += e
        s3, e = two_sum(s3, values[i + 3])
        e3 += e
        i += 4
    while i < size:
        s0, e = two_sum(s0, values[i])
        e0 += e
        i += 1
    sums[first], sums[first + 1], sums[first + 2], sums[first + 3] = s0, s1, s2, s3
    errors[first] += e0
    errors[first + 1] += e1
    errors[first + 2] += e2
    errors[first + 3] += e3


@jit(inline="always")
def _add_rows(registers, size, ids, start, lanes, sums, errors):
    """A block of mixed groups, row by row into the row's lane of its group: with several
    lanes, rows of one group in a row do not wait on each other's store."""
    values = registers[0]
    spread = lanes - 1
    for i in range(size):
        slot = lanes * ids[start + i] + (i & spread)
        sums[slot], error = two_sum(sums[slot], values[i])
        errors[slot] += error
