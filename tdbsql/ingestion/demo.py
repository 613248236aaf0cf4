"""``tdbsql demo``: the README's sample array, built through the ingest path.

In: a path.  Out: the same array as ``examples/stations`` (made with ``tiledb`` by
``examples/make_sample.py``): daily weather readings on dimensions (day, station), Zstd,
capacity 64, written as two overlapping fragments at timestamps 1000 and 2000 so queries show
the newest-wins merge; rain_mm has NULLs.  The readings come from the same seeded generator,
are written to two Parquet files in a temporary folder, and ingested (then appended).
"""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

CITIES = ("Oslo", "Lima", "Pune", "Kyiv", "Perth")
WRITES = ((1000, range(0, 30)), (2000, range(25, 45)))  # (timestamp, days) per fragment
DIMS = {"day": (0, 3650), "station": (1, 100)}
TILES = {"day": 30, "station": 10}


def readings() -> list[tuple[int, pa.Table]]:
    """The two writes of ``examples/make_sample.py``, value for value (same seed and order)."""
    rng = np.random.default_rng(7)
    out = []
    for stamp, days in WRITES:
        day = np.repeat(np.array(days, dtype=np.int32), 5)
        station = np.tile(np.arange(1, 6, dtype=np.int32), len(days))
        temp = np.round(rng.normal(12, 8, len(day)), 1).astype(np.float32)
        rain = np.round(rng.gamma(1.0, 3.0, len(day)), 1)
        out.append((stamp, pa.table({
            "day": day, "station": station, "temp_c": temp,
            "rain_mm": pa.array(rain, mask=rain < 0.5),
            "city": pa.array([CITIES[s - 1] for s in station], type=pa.string()),
        })))
    return out


def build_demo(path: str) -> str:
    """Build the sample array at ``path`` (refuses an existing array); returns the path."""
    from .run import ingest

    with tempfile.TemporaryDirectory(prefix="tdbsql-demo-") as folder:
        for index, (stamp, table) in enumerate(readings()):
            source = os.path.join(folder, f"readings_{stamp}.parquet")
            pq.write_table(table, source)
            ingest(source, path, dims=DIMS, tile=TILES, capacity=64, filters="zstd:3",
                   timestamp=stamp, append=index > 0, allows_duplicates=False, progress=False)
    return path
