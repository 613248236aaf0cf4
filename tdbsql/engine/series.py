"""The rows of ``range`` / ``generate_series`` in FROM (``planner/table_functions.py``).

In: a ``Series`` (its constant arguments).  Out: a one-column Arrow table, as DuckDB builds
it: BIGINT values ``start, start + step, ...`` before ``stop`` (up to and including it for
generate_series), none when an argument is NULL or the step points away from ``stop``;
TIMESTAMP values stepping by an INTERVAL, months first with the day clamped to the month's
end, each step from the previous value (``2024-01-31 + 1 month`` is Feb 29, then Mar 29).
A zero step is DuckDB's ``interval cannot be 0!``.  The rows are checked against the row
cap and the memory budget before they are made.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from sqlglot import exp

from ..catalog import ArrowSource, Catalog
from ..errors import SqlError
from ..planner.table_refs import table_key
from .datetime_ops import Interval
from .evaluate import evaluate
from .frame import rows_only
from .integer_series import series_counts, series_values
from .timestamp_series import series_steps



class SeriesCatalog(Catalog):
    """The runner's tables and the query's ``__series_N`` tables, built when first read."""

    def __init__(self, catalog, series: tuple, runner):
        super().__init__()
        self.catalog = catalog
        self.specs = {spec.table: spec for spec in series}
        self.runner = runner
        self.built: dict[str, ArrowSource] = {}

    def resolve(self, table: exp.Table, sql: str):
        spec = self.specs.get(table_key(table))
        if spec is None:
            return self.catalog.resolve(table, sql)
        if spec.table not in self.built:
            self.built[spec.table] = ArrowSource(series_table(self.runner, spec))
        return self.built[spec.table], None


def series_table(runner, spec) -> pa.Table:
    values = _arguments(runner, spec)
    if any(v is None for v in values):
        return pa.table({spec.column: pa.array([], _ARROW[spec.sql_type])})
    if spec.sql_type == "BIGINT":
        start, stop, step = values if len(values) == 3 else (*values, 1)
        column = _integers(runner, spec, int(start), int(stop), int(step))
    else:
        column = _timestamps(runner, spec, *values)
    return pa.table({spec.column: column})


_ARROW = {"BIGINT": pa.int64(), "TIMESTAMP": pa.timestamp("us"),
          "TIMESTAMPTZ": pa.timestamp("us", "UTC")}


def _arguments(runner, spec) -> list:
    """The arguments as Python values: integers cast to BIGINT (strings too, with CAST's
    errors), temporal ones to microseconds since the epoch, an INTERVAL as (months, days,
    microseconds); None for NULL."""
    one_row = rows_only(1)
    values = []
    for position, argument in enumerate(a for a in spec.arguments if a is not None):
        if spec.sql_type == "BIGINT":
            node = exp.Cast(this=argument.copy(), to=exp.DataType.build("BIGINT"))
        elif position < 2:
            node = exp.Cast(this=argument.copy(), to=exp.DataType.build(
                "TIMESTAMPTZ" if spec.sql_type == "TIMESTAMPTZ" else "TIMESTAMP"))
        else:
            node = argument
        value = evaluate(one_row, node, runner.sql, runner.budget)
        if not isinstance(value, pa.Scalar):
            value = value[0]
        if not value.is_valid:
            values.append(None)
        elif pa.types.is_timestamp(value.type):
            values.append(value.cast(pa.timestamp("us", value.type.tz)).value)
        elif pa.types.is_interval(value.type):
            interval = Interval.of_arrow(value)
            values.append((interval.months, interval.days, interval.micros))
        else:
            values.append(value.as_py())
    return values


def _integers(runner, spec, start: int, stop: int, step: int) -> pa.Array:
    if step == 0:
        raise SqlError("interval cannot be 0!", runner.sql)
    return pa.array(_fixed_steps(runner, spec, start, stop, step))


def _fixed_steps(runner, spec, start: int, stop: int, step: int) -> np.ndarray:
    """The int64 values of a series whose step is one number (``integer_series``)."""
    start_, step_ = np.array([start], np.int64), np.array([step], np.int64)
    counts = series_counts(start_, np.array([stop], np.int64), step_, spec.inclusive)
    _check(runner, spec, int(counts[0]))
    return series_values(start_, step_, counts)


def _timestamps(runner, spec, start: int, stop: int, step: tuple) -> pa.Array:
    if step == (0, 0, 0):
        raise SqlError("interval cannot be 0!", runner.sql)
    _, values = series_steps(*(np.array([part], np.int64) for part in (start, stop, *step)),
                             spec.inclusive, lambda count: _check(runner, spec, count))
    return pa.array(values, _ARROW[spec.sql_type])


def _check(runner, spec, count: int) -> None:
    what = f"{spec.function}()"
    runner.check_rows(count, what)
    runner.budget.check(count * 8, what)
