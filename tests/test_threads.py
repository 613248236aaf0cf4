"""Several application threads querying one connection at once: every result as alone, and
no deadlock -- a scan task of the shared pool that maps tiles again runs them itself instead
of waiting for the pool (two threads' merged scans held both workers, each waiting for
tasks queued behind the other's)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tdbsql.engine.parallel import map_ordered

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "stations"

_CHILD = """
import random, sys, threading
import tdbsql
con = tdbsql.connect().register("st", sys.argv[1])
queries = [
    "SELECT city, count(*), sum(temp_c) FROM st GROUP BY city ORDER BY city",
    "SELECT day, avg(rain_mm) FROM st WHERE station < 3 GROUP BY day ORDER BY day",
    "SELECT * FROM st WHERE day BETWEEN 10 AND 12 ORDER BY day, station",
    "SELECT a.city, count(*) FROM st a JOIN st b ON a.day = b.day AND a.station = b.station "
    "GROUP BY 1 ORDER BY 1",
    "SELECT max(temp_c) OVER (PARTITION BY city ORDER BY day) FROM st ORDER BY city, day",
]
want = {q: con.sql(q).fetchall() for q in queries}
wrong = []

def work(seed):
    rnd = random.Random(seed)
    for _ in range(40):
        q = rnd.choice(queries)
        text = q + " " * rnd.randint(0, 30)  # new texts: planned again, concurrently
        if con.sql(text).fetchall() != want[q]:
            wrong.append(q)

threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(len(wrong))
"""


def test_threads_share_a_connection_without_deadlock():
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(SAMPLE)], capture_output=True,
                          text=True, timeout=300, env={"TDBSQL_THREADS": "2",
                                                      **_environment()})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "0"


def _environment() -> dict:
    import os

    return {k: v for k, v in os.environ.items() if k != "TDBSQL_THREADS"}


def test_a_pool_task_that_maps_again_runs_its_items_itself():
    def outer(i):
        return sum(map_ordered(lambda j: i * j, list(range(5))))

    # more outer tasks than workers, each mapping again: all finish, in order
    assert list(map_ordered(outer, list(range(12)))) == [i * 10 for i in range(12)]
