"""Per-group sums of arithmetic expressions over float64 columns, in one pass.

An expression is a small postfix program, one row of the int64 matrix ``programs``: pairs
``(opcode, argument)`` ending with ``END``.  ``LOAD`` pushes column ``argument`` (one of up to
``COLUMNS``), ``CONSTANT`` pushes ``constants[argument]``, ``ADD`` / ``SUBTRACT`` /
``MULTIPLY`` pop two and push the result, ``NEGATE`` flips the top.  A column comes as its
float64 values, or as one-byte codes into a dictionary of its values (``tile_codes``): a
tile of few distinct values is read at a byte a cell.

Rows go through in blocks of ``BLOCK``: each instruction runs over the whole block into a
stack of block-sized registers that stay in the L1 cache, so nothing row-sized is ever
written (``l_extendedprice * (1 - l_discount) * (1 + l_tax)`` costs no temporary arrays), and
the loop per instruction is as tight as a vectorised one; a program that only loads a column
reads it in place.

Sums are exact to a block: a block whose rows fall in at most ``NARROW`` neighbouring groups
(few groups, or rows sorted by what the groups follow) is added up plainly per group, a pass
over the block for each group, in vector-wide partial sums (a block's rounding error is that
of a few hundred adds), and each block's total goes into its group's running sum with the
exact rounding error kept (TwoSum).
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
def fold_expression_sums(programs, constants, columns, codes, dictionaries, ids, lanes, sums,
                         errors):
    """Add every row's value of each expression ``e`` (a row of ``programs``) to
    ``sums[e, lanes * group + lane]``, rounding errors to the same slot of ``errors``
    (``lanes``: 1, 2, 4 or 8 accumulators a group; ``finish_sums`` merges them).  ``ids``
    (int64, one per row, all >= 0) gives each row's group.  Column ``c`` is ``columns[c]``
    (float64), or when that is empty ``dictionaries[c][codes[c]]`` (uint8 codes); each tuple
    holds ``COLUMNS`` arrays, and every column at least ``ids.shape[0]`` rows.  Returns the
    number of rows."""
    n = ids.shape[0]
    registers = np.empty((STACK, BLOCK))
    for start in range(0, n, BLOCK):
        size = min(BLOCK, n - start)
        block = ids[start:start + size]  # (a slice: ``start + i`` would not vectorise)
        low = block[0]
        high = low
        for i in range(1, size):  # branch-free: vectorises
            low = min(low, block[i])
            high = max(high, block[i])
        for e in range(programs.shape[0]):
            values = _run(programs[e], constants, columns, codes, dictionaries, start, size,
                          registers)
            if high - low < NARROW:
                _add_narrow(values, block, low, high - low + 1, lanes, sums[e], errors[e])
            else:
                _add_rows(values, block, lanes, sums[e], errors[e])
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
def _run(program, constants, columns, codes, dictionaries, start, size, registers):
    """The values of one program over rows ``start .. start + size``: a column's values
    themselves when the program only loads a column of values, else in
    ``registers[0, :size]``.  (Loops go over 1-D views: indexing the 2-D registers row by
    row is four times slower.)"""
    if program[0] == LOAD and program[2] == END and columns[program[1]].shape[0] > 0:
        return columns[program[1]][start:start + size]
    top = -1
    at = 0
    while program[at] != END:
        op = program[at]
        argument = program[at + 1]
        at += 2
        if op == LOAD:
            top += 1
            target = registers[top]
            column = columns[argument]
            if column.shape[0] > 0:
                column = column[start:start + size]
                for i in range(size):
                    target[i] = column[i]
            else:
                cells = codes[argument][start:start + size]
                dictionary = dictionaries[argument]
                for i in range(size):
                    target[i] = dictionary[cells[i]]
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
def _add_narrow(values, ids, low, width, lanes, sums, errors):
    """A block (``values`` and its rows' ``ids``) whose groups lie in ``low .. low + width
    - 1`` (``width <= NARROW``): each group's total, summed plainly, into its running sum
    (lane 0) with the rounding error kept."""
    for group in range(low, low + width):
        total = _group_total(values, ids, group, width > 1)
        slot = lanes * group
        sums[slot], error = two_sum(sums[slot], total)
        errors[slot] += error


@jit(fastmath={"reassoc"})
def _group_total(values, ids, group, masked):
    """The plain sum of the ``values`` whose ``ids`` are ``group`` (all of them unless
    ``masked``).  Reassociation only here, so the loop vectorises into several partial sums;
    the compensated adds around it keep their order."""
    total = 0.0
    if masked:
        for i in range(values.shape[0]):
            total += values[i] if ids[i] == group else 0.0
    else:
        for i in range(values.shape[0]):
            total += values[i]
    return total


@jit(inline="always")
def _add_rows(values, ids, lanes, sums, errors):
    """A block of many groups, row by row into the row's lane of its group, each add's
    rounding error kept."""
    spread = lanes - 1
    for i in range(values.shape[0]):
        slot = lanes * ids[i] + (i & spread)
        sums[slot], error = two_sum(sums[slot], values[i])
        errors[slot] += error
