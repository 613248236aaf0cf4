"""Timestamps at other precisions, registered into ``functions.REGISTRY``, as DuckDB:

- ``nanosecond(t)``: the seconds of the minute in nanoseconds, exact for a TIMESTAMP_NS
  (``microsecond`` rounds it to the microsecond), 1000 times the microseconds otherwise.
- ``make_timestamp_ms(n)``: n milliseconds since 1970-01-01 as a TIMESTAMP;
  ``make_timestamp_ns(n)``: n nanoseconds as a TIMESTAMP_NS.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import datetime_ops as dto
from .functions import register
from .functions_math import numpy_unary
from .interval_parts import interval_part, is_interval_value
from .value_types import plain

_NS_PER_MINUTE = 60 * 10**9
_INFINITY = 2**63 - 1  # DuckDB's infinity timestamp: no count of ticks


@register("nanosecond", 1)
def _nanosecond(ctx, value):
    value = plain(value)
    if is_interval_value(value):
        return pc.multiply(interval_part("microsecond", value), 1000)
    value = ctx.temporal(value, 0, times=True)
    if getattr(value.type, "unit", None) == "ns":  # TIMESTAMP_NS or TIME_NS: every digit
        ticks = pc.cast(value.cast(pa.timestamp("ns")) if pa.types.is_timestamp(value.type)
                        else value, pa.int64())
        return numpy_unary(ticks, lambda v: np.mod(v, _NS_PER_MINUTE), pa.int64())
    return pc.multiply(dto.extract("microsecond", value), 1000)


@register("make_timestamp_ms", 1)
def _make_timestamp_ms(ctx, count):
    millis = ctx.integer(count, 0)
    try:
        return pc.cast(pc.multiply_checked(millis, 1000), pa.timestamp("us"))
    except pa.ArrowInvalid:
        raise ctx.error("Could not convert Timestamp(MS) to Timestamp(US)") from None


@register("make_timestamp_ns", 1)
def _make_timestamp_ns(ctx, count):
    nanos = ctx.integer(count, 0)
    bounds = (nanos, nanos) if isinstance(nanos, pa.Scalar) else pc.min_max(nanos).values()
    for bound in bounds:
        if bound.is_valid and abs(bound.as_py()) >= _INFINITY:
            raise ctx.error(f"Timestamp nanoseconds out of range: {bound.as_py()}")
    return pc.cast(nanos, pa.timestamp("ns"))
