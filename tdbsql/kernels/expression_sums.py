"""Per-group sums of arithmetic expressions over float64 columns, in one pass.

The expressions are compiled together into straight-line code over block-sized rows of
registers: each instruction, a row of the int64 matrix ``code``, is ``(opcode, target, a, b)``
and computes register ``target`` from registers ``a`` and ``b`` (``ADD``, ``SUBTRACT``,
``MULTIPLY``), from ``a`` and the number ``constants[b]`` (``ADD_CONSTANT``,
``SUBTRACT_CONSTANT``: ``a - c``, ``CONSTANT_SUBTRACT``: ``c - a``, ``MULTIPLY_CONSTANT``), or
from ``a`` alone (``NEGATE``).  Registers ``0 .. COLUMNS - 1`` are the input columns; the
compiler (``engine.scan_sums``) gives each distinct subexpression one register, so
``l_extendedprice * (1 - l_discount)`` is computed once for both of TPC-H Q1's sums that use
it.  ``results[e]`` is the register holding expression ``e``.

A column comes as its float64 values, read in place, or as one-byte codes into a dictionary of
its values (``tile_codes``), decoded into its register once a block: a tile of few distinct
values is read at a byte a cell.

Rows go through in blocks of ``BLOCK``: the registers stay in the core's caches, nothing
row-sized is ever written, and each instruction is one tight loop over the block.

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

(ADD, SUBTRACT, MULTIPLY, ADD_CONSTANT, SUBTRACT_CONSTANT, CONSTANT_SUBTRACT, MULTIPLY_CONSTANT,
 NEGATE) = range(8)
COLUMNS = 6
REGISTERS = 24  # the columns' and the instructions' results
BLOCK = 1024
NARROW = 8  # groups a block may span to be summed per group


@jit
def fold_expression_sums(code, constants, results, columns, codes, dictionaries, ids, lanes,
                         sums, errors, registers):
    """Add every row's value of each expression ``e`` (register ``results[e]`` after
    ``code`` ran) to ``sums[e, lanes * group + lane]``, rounding errors to the same slot of
    ``errors`` (``lanes``: 1, 2, 4 or 8 accumulators a group; ``finish_sums`` merges them).
    ``ids`` (int64, one per row, all >= 0) gives each row's group.  Column ``c`` is
    ``columns[c]`` (float64), or when that is empty ``dictionaries[c][codes[c]]`` (uint8
    codes); each tuple holds ``COLUMNS`` arrays, and every column used at least
    ``ids.shape[0]`` rows.  ``registers`` (float64, ``(COLUMNS + code.shape[0], BLOCK)``) is
    scratch the caller keeps from call to call (allocated on every call, 200 KB went to the
    kernel through mmap on every tile).  Returns the number of rows."""
    n = ids.shape[0]
    for start in range(0, n, BLOCK):
        size = min(BLOCK, n - start)
        block = ids[start:start + size]  # (a slice: ``start + i`` would not vectorise)
        low = block[0]
        high = low
        for i in range(1, size):  # branch-free: vectorises
            low = min(low, block[i])
            high = max(high, block[i])
        _run_block(code, constants, columns, codes, dictionaries, registers, start, size)
        for e in range(results.shape[0]):
            values = _register(results[e], registers, columns, start, size)
            if high - low < NARROW:
                _add_narrow(values, block, low, high - low + 1, lanes, sums[e], errors[e])
            else:
                _add_rows(values, block, lanes, sums[e], errors[e])
    return n


@jit
def fold_selected_sums(code, constants, results, columns, codes, dictionaries, selection,
                       no_columns, no_codes, sums, errors, registers):
    """``fold_expression_sums`` of one group over the rows ``selection`` (int64) of the
    columns: a filtered tile's kept cells summed where they lie, each block's cells gathered
    straight into their registers, not first copied out of the tile.  Adds into ``sums[e, 0]``
    and ``errors[e, 0]``; the blocks and their order are those of ``fold_expression_sums``
    over the gathered rows, so the sums are the same to the bit.  ``no_columns`` and
    ``no_codes`` are ``COLUMNS`` empty arrays each (the instructions then read every column
    from its register).  Returns the number of rows."""
    n = selection.shape[0]
    for start in range(0, n, BLOCK):
        size = min(BLOCK, n - start)
        rows = selection[start:start + size]
        for c in range(COLUMNS):
            target = registers[c]
            if columns[c].shape[0] > 0:
                values = columns[c]
                for i in range(size):
                    target[i] = values[rows[i]]
            elif codes[c].shape[0] > 0:
                cells = codes[c]
                dictionary = dictionaries[c]
                for i in range(size):
                    target[i] = dictionary[cells[rows[i]]]
        _run_block(code, constants, no_columns, no_codes, dictionaries, registers, 0, size)
        for e in range(results.shape[0]):
            total = _group_total(registers[results[e]][:size], rows, 0, False)
            sums[e, 0], error = two_sum(sums[e, 0], total)
            errors[e, 0] += error
    return n


@jit
def fold_slot_sums(code, constants, results, columns, codes, dictionaries, slots, sums,
                   registers):
    """``fold_expression_sums`` into one record per group: row ``slots[row]`` of ``sums``
    (float64, ``(groups, 1 + 2 * expressions)``) counts the row in its column 0 and adds
    expression ``e`` to column ``1 + 2 e``, the add's rounding error to column ``2 + 2 e``.
    With very many groups every row's group is a cache miss: one record is one miss, where
    a count and a sum and an error array apart are three.  Returns the number of rows."""
    n = slots.shape[0]
    for start in range(0, n, BLOCK):
        size = min(BLOCK, n - start)
        _run_block(code, constants, columns, codes, dictionaries, registers, start, size)
        block = slots[start:start + size]
        for i in range(size):  # the block's records come into the cache here
            sums[block[i], 0] += 1.0
        for e in range(results.shape[0]):
            values = _register(results[e], registers, columns, start, size)
            column = 1 + 2 * e
            for i in range(size):
                slot = block[i]
                sums[slot, column], error = two_sum(sums[slot, column], values[i])
                sums[slot, column + 1] += error
    return n


@jit
def add_slot_sums(sums, into):
    """Records of ``fold_slot_sums`` added into others of the same shape: counts added, sums
    with their add's rounding error kept (TwoSum), errors added."""
    for group in range(sums.shape[0]):
        if sums[group, 0] == 0.0:
            continue
        into[group, 0] += sums[group, 0]
        for column in range(1, sums.shape[1], 2):
            into[group, column], error = two_sum(into[group, column], sums[group, column])
            into[group, column + 1] += error + sums[group, column + 1]
    return sums.shape[0]


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
def _run_block(code, constants, columns, codes, dictionaries, registers, start, size):
    """Rows ``start .. start + size - 1``: the coded columns decoded into their registers,
    then every instruction of ``code``."""
    for c in range(COLUMNS):
        if columns[c].shape[0] == 0 and codes[c].shape[0] > 0:
            cells = codes[c][start:start + size]
            dictionary = dictionaries[c]
            target = registers[c]
            for i in range(size):
                target[i] = dictionary[cells[i]]
    for k in range(code.shape[0]):
        _step(code[k, 0], registers[code[k, 1]][:size],
              _register(code[k, 2], registers, columns, start, size),
              _register(code[k, 3], registers, columns, start, size)
              if code[k, 0] <= MULTIPLY else registers[0][:0],
              constants[code[k, 3]] if ADD_CONSTANT <= code[k, 0] <= MULTIPLY_CONSTANT
              else 0.0)


@jit(inline="always")
def _register(index, registers, columns, start, size):
    """Register ``index`` over the block: a column of values in place, else the row."""
    if index < COLUMNS and columns[index].shape[0] > 0:
        return columns[index][start:start + size]
    return registers[index][:size]


@jit(inline="always")
def _step(op, target, a, b, constant):
    """One instruction over the block (``b`` is empty, ``constant`` 0 when unused)."""
    size = target.shape[0]
    if op == ADD:
        for i in range(size):
            target[i] = a[i] + b[i]
    elif op == SUBTRACT:
        for i in range(size):
            target[i] = a[i] - b[i]
    elif op == MULTIPLY:
        for i in range(size):
            target[i] = a[i] * b[i]
    elif op == ADD_CONSTANT:
        for i in range(size):
            target[i] = a[i] + constant
    elif op == SUBTRACT_CONSTANT:
        for i in range(size):
            target[i] = a[i] - constant
    elif op == CONSTANT_SUBTRACT:
        for i in range(size):
            target[i] = constant - a[i]
    elif op == MULTIPLY_CONSTANT:
        for i in range(size):
            target[i] = a[i] * constant
    else:
        for i in range(size):
            target[i] = -a[i]


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
