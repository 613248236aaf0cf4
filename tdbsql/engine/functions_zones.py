"""``timezone(zone, value)`` and ``value AT TIME ZONE zone``, as DuckDB with its session time
zone UTC (tdbsql's TIMESTAMP WITH TIME ZONE holds UTC's instants):

* a TIMESTAMP is read as the wall-clock time in ``zone``: the instant, a TIMESTAMP WITH TIME
  ZONE.  A time the zone skips (a spring-forward gap: 02:30 in Europe/Berlin on 2024-03-31)
  is read with the offset before the change, one it repeats (fall back) with the later
  offset, as DuckDB's ICU calendar does;
* a TIMESTAMP WITH TIME ZONE gives the wall-clock time in ``zone``, a TIMESTAMP;
* a DATE (its midnight) or a TIMESTAMP of seconds, milliseconds or nanoseconds gives DuckDB's
  TIMESTAMPTZ_NS (``timestamp[ns, tz=UTC]``), which gives a TIMESTAMP_NS.

The zone is a constant: a tz database name in any case or a fixed offset by name
(``engine.zone_offsets``: ``GMT+1`` is one hour east; one with seconds is ``UnsupportedSql``,
as Arrow's zones have none).  A NULL zone gives NULL; a zone per row is ``UnsupportedSql``.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UnsupportedSql
from . import datetime_ops as dto
from .functions import register
from .value_types import kind, null_like, plain, type_name

TIMEZONE = "timezone"


@register(TIMEZONE, 2)
def _timezone(ctx, zone, value):
    zone, value = ctx.string(zone, 0), plain(value)
    if not isinstance(zone, pa.Scalar):
        raise UnsupportedSql(f"{ctx.written_name}() with a time zone that is not a constant is "
                             f"not supported: {ctx.sql_of(0)!r}")
    if kind(value.type) == "null":
        return null_like(value, pa.timestamp("us", "UTC"))
    result_type = _result_type(ctx, value.type)
    if not zone.is_valid:
        return null_like(value, result_type)
    name = arrow_zone(zone.as_py())
    if isinstance(value, pa.Scalar):
        return _timezone(ctx, zone, pa.array([value], value.type))[0]
    if isinstance(value, pa.ChunkedArray):
        return pa.chunked_array([_timezone(ctx, zone, c) for c in value.chunks], result_type)
    if result_type.tz is None:
        stamps = pc.cast(value, pa.timestamp(value.type.unit))
        walls = pc.local_timestamp(pc.cast(value, pa.timestamp(value.type.unit, name)))
        return _past_2037(stamps, walls, name, to_walls=True)
    try:  # a DATE gives nanoseconds: from 1677-09-22 to 2262-04-11 only
        walls = pc.cast(value, pa.timestamp(result_type.unit))
    except pa.ArrowInvalid:
        raise ctx.error("a DATE outside TIMESTAMP_NS's range "
                        "(1677-09-22 to 2262-04-11)", 1) from None
    return _past_2037(walls, instants(walls, name), name, to_walls=False)


def _result_type(ctx, t: pa.DataType) -> pa.DataType:
    """DuckDB's: a TIMESTAMP gives a TIMESTAMP WITH TIME ZONE and back; a DATE or a TIMESTAMP
    of seconds, milliseconds or nanoseconds gives DuckDB's TIMESTAMPTZ_NS, and that a
    TIMESTAMP_NS."""
    if pa.types.is_date32(t) or (pa.types.is_timestamp(t) and t.tz is None):
        unit = "us" if pa.types.is_timestamp(t) and t.unit == "us" else "ns"
        return pa.timestamp(unit, "UTC")
    if pa.types.is_timestamp(t) and t.unit in ("us", "ns"):
        return pa.timestamp(t.unit)
    raise UnsupportedSql(f"{ctx.written_name}() of a {type_name(t)} is not supported (a DATE "
                         "or TIMESTAMP, with or without time zone, is)")


def arrow_zone(name: str) -> str:
    """The zone ``name`` as Arrow names one: its tz database key, or ``+HH:MM``."""
    try:
        zone = dto.time_zone(name)
    except ValueError:
        raise dto.DatetimeError(f"Unknown TimeZone '{name}'!") from None
    if not isinstance(zone, dt.timezone):
        return zone.key
    offset = zone.utcoffset(None)
    minutes, seconds = divmod(int(offset.total_seconds()), 60)
    if seconds:
        raise UnsupportedSql(f"the time zone {name!r}: an offset with seconds is not supported "
                             "here")
    sign, minutes = ("-", -minutes) if minutes < 0 else ("+", minutes)
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def instants(walls: pa.Array, zone: str) -> pa.Array:
    """The instants (TIMESTAMP WITH TIME ZONE, the unit of ``walls``) at which ``zone``'s
    clocks show ``walls``."""
    unit = walls.type.unit
    at = pc.assume_timezone(walls, timezone=zone, ambiguous="latest", nonexistent="latest")
    skipped = pc.not_equal(pc.local_timestamp(at), walls)  # 'latest': the gap's end
    at = pc.cast(at, pa.timestamp(unit, "UTC"))
    if not pc.any(skipped).as_py():
        return at
    before = pc.cast(pc.subtract(at, pa.scalar(1, pa.duration(unit))), walls.type)
    offset = pc.subtract(pc.local_timestamp(pc.cast(before, pa.timestamp(unit, zone))), before)
    return pc.if_else(skipped, pc.cast(pc.subtract(walls, offset), at.type), at)


_LAST_ARROW_YEAR = 2037  # Arrow's zone rules stop with the tz database's transition table


def _past_2037(stamps: pa.Array, converted: pa.Array, zone: str, to_walls: bool) -> pa.Array:
    """``converted`` (instants -> walls, or walls -> instants, of ``stamps``) with the values
    after 2037 worked out from Python's zoneinfo: Arrow applies no daylight saving time
    there, where the tz database's rules go on (and DuckDB applies them)."""
    info = dto.time_zone(zone) if zone[:1] not in "+-" else None
    if info is None or isinstance(info, dt.timezone):
        return converted
    per_second = dto.PER_SECOND[stamps.type.unit]
    first = (dt.datetime(_LAST_ARROW_YEAR + 1, 1, 1) - dt.datetime(1970, 1, 1)) // \
        dt.timedelta(seconds=1) * per_second
    ticks = stamps.cast(pa.int64())
    late = pc.fill_null(pc.greater_equal(ticks, first), False)
    at = np.flatnonzero(late.to_numpy(zero_copy_only=False))
    if not len(at):
        return converted
    moved = pc.fill_null(ticks, 0).to_numpy().copy()  # a NULL is not late: kept NULL
    for i in at.tolist():  # only the late values go through Python
        moment = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=int(moved[i]) // per_second)
        if to_walls:  # an instant: the offset in force then
            offset = moment.replace(tzinfo=dt.timezone.utc).astimezone(info).utcoffset()
        else:
            offset = dto.wall_offset(moment, info)
        moved[i] += int(offset.total_seconds()) * per_second * (1 if to_walls else -1)
    return pc.if_else(late, pa.array(moved).cast(converted.type), converted)
