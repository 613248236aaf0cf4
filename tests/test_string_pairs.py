"""``engine.string_pairs``: a constant side reaches the kernel as its one string (two offsets,
step 0), not copied once per row; NULL on either side is NULL in the answer."""

import numpy as np
import pyarrow as pa

from tdbsql.engine.string_pairs import pair_rows, with_nulls
from tdbsql.kernels.glob import glob_rows
from tdbsql.kernels.string_distance import levenshtein


def test_a_constant_side_is_one_string_read_with_step_0():
    seen = []

    def kernel(values, offsets, step, others, other_offsets, other_step, valid, out):
        seen.append((len(offsets), step, len(other_offsets), other_step, bytes(others)))

    pair_rows(kernel, pa.array(["a", "bb", None]), pa.scalar("x*"), np.int64)
    assert seen == [(4, 1, 2, 0, b"x*")]


def test_constant_and_column_answers():
    strings = pa.array(["kitten", None, "sitting", ""])
    out, valid = pair_rows(glob_rows, strings, pa.scalar("*itt*"), np.bool_)
    assert with_nulls(out, valid).to_pylist() == [True, None, True, False]
    out, valid = pair_rows(levenshtein, pa.scalar("kitten"), strings, np.int64)
    assert with_nulls(out, valid).to_pylist() == [0, None, 3, 6]
    out, valid = pair_rows(levenshtein, pa.scalar(None, pa.string()), strings, np.int64)
    assert with_nulls(out, valid).to_pylist() == [None] * 4
    out, valid = pair_rows(levenshtein, pa.scalar("ab"), pa.scalar("b"), np.int64)
    assert with_nulls(out, valid).to_pylist() == [1]
