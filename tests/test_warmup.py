"""``tdbsql warmup`` runs the usual operators once, so their kernels are compiled (and cached
on disk) before a user's first query."""

from __future__ import annotations

from tdbsql.kernels import (expression_sums, hashing, like, predicate, short_string_groups,
                            tile_codes)
from tdbsql.warmup import warmup


def test_warmup_compiles_the_usual_kernels():
    assert warmup() > 0
    for kernel in (expression_sums.fold_expression_sums, expression_sums.finish_sums,
                   short_string_groups.group_short_strings,
                   short_string_groups.group_coded_strings, tile_codes.float_codes,
                   tile_codes.string_codes, predicate.keep_code_range, predicate.keep_coded,
                   hashing.group_direct, like.like_pieces):
        assert kernel.signatures, kernel.py_func.__name__
