"""Rebuild examples/stations, the sample array the README queries (needs the `tiledb` package).

A sparse array of daily weather readings on dimensions (day, station), written in two
overlapping fragments so that the sample exercises the newest-wins merge; rain_mm has NULLs.
"""

import shutil
import sys

import numpy as np
import pyarrow as pa
import tiledb

uri = sys.argv[1] if len(sys.argv) > 1 else "examples/stations"
shutil.rmtree(uri, ignore_errors=True)
dom = tiledb.Domain(
    tiledb.Dim("day", domain=(0, 3650), tile=30, dtype=np.int32),
    tiledb.Dim("station", domain=(1, 100), tile=10, dtype=np.int32),
)
zstd = tiledb.FilterList([tiledb.ZstdFilter(level=3)])
schema = tiledb.ArraySchema(
    domain=dom, sparse=True, capacity=64,
    attrs=[
        tiledb.Attr("temp_c", dtype=np.float32, filters=zstd),
        tiledb.Attr("rain_mm", dtype=np.float64, nullable=True, filters=zstd),
        tiledb.Attr("city", dtype=str, var=True, filters=zstd),
    ],
)
tiledb.Array.create(uri, schema)
rng = np.random.default_rng(7)
cities = ["Oslo", "Lima", "Pune", "Kyiv", "Perth"]
for t, days in ((1000, range(0, 30)), (2000, range(25, 45))):
    day = np.repeat(np.array(days, dtype=np.int32), 5)
    station = np.tile(np.arange(1, 6, dtype=np.int32), len(days))
    temp = np.round(rng.normal(12, 8, len(day)), 1).astype(np.float32)
    rain = np.round(rng.gamma(1.0, 3.0, len(day)), 1)
    with tiledb.open(uri, "w", timestamp=t) as A:
        A[day, station] = {
            "temp_c": temp,
            "rain_mm": pa.array(rain, mask=rain < 0.5),
            "city": np.array([cities[s - 1] for s in station], dtype=object),
        }
print("wrote", uri)
