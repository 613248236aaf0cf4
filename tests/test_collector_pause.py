"""``imports_paused``: the garbage collector is off while a body runs, back on afterwards
exactly as it was, the objects an import made are moved to the oldest generation without
being walked, and garbage among them is still freed by a full collection."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import threading
import weakref
from pathlib import Path

import pytest

from tdbsql.collector_pause import imports_paused

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "stations"


class _Node:
    def __init__(self):
        self.me = self  # a cycle: only the collector frees it


@pytest.fixture
def module_dir(tmp_path, monkeypatch):
    """A folder on sys.path for modules made by a test (imported once each)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [n for n in sys.modules if n.startswith("paused_")]:
        del sys.modules[name]


def test_the_collector_is_off_inside_and_on_after():
    assert gc.isenabled()
    with imports_paused():
        assert not gc.isenabled()
        with imports_paused():  # nested: the outer pause still holds when the inner ends
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_the_application_stopped_stays_stopped():
    gc.disable()
    try:
        with imports_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_error_inside_still_restarts_the_collector():
    with pytest.raises(ZeroDivisionError):
        with imports_paused():
            1 / 0
    assert gc.isenabled()


def test_threads_share_one_pause():
    inside, leave = threading.Event(), threading.Event()

    def hold():
        with imports_paused():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=hold)
    thread.start()
    inside.wait(10)
    with imports_paused():
        pass
    assert not gc.isenabled()  # this thread left, the other is still inside
    leave.set()
    thread.join()
    assert gc.isenabled()


def test_an_import_moves_new_objects_to_the_oldest_generation(module_dir):
    (module_dir / "paused_one.py").write_text("KEPT = [[i] for i in range(1000)]\n")
    with imports_paused():
        import paused_one  # noqa: F401
        made = [paused_one.KEPT]
    assert gc.get_count()[0] < 50  # not 1000 young objects waiting for a collection
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(made[0]) in oldest and id(made[0][500]) in oldest


def test_without_an_import_objects_stay_young():
    with imports_paused():
        young = [[i] for i in range(100)]
    assert id(young) not in {id(o) for o in gc.get_objects(generation=2)}


def test_garbage_made_during_an_import_is_freed_by_a_full_collection(module_dir):
    (module_dir / "paused_two.py").write_text("X = 1\n")
    with imports_paused():
        node = _Node()
        import paused_two  # noqa: F401
    alive = weakref.ref(node)
    del node
    gc.collect()
    assert alive() is None


def test_objects_the_application_froze_stay_frozen(module_dir):
    (module_dir / "paused_three.py").write_text("X = 1\n")
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with imports_paused():
            import paused_three  # noqa: F401
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


_COUNTING = """
import gc, json, sys
seen = {"all": 0, "oldest": 0}
def count(phase, info):
    if phase == "start":
        seen["all"] += 1
        seen["oldest"] += info["generation"] == 2
gc.callbacks.append(count)
import tdbsql
rows = tdbsql.query(sys.argv[2], sys.argv[1]).num_rows
print(json.dumps({"rows": rows, **seen}))
"""


def test_a_fresh_process_first_query_walks_no_full_collection():
    """A process's first query (numpy, pyarrow, sqlglot, numba and tdbsql imported): about
    230 collections, a few of them full, without the pause; a few dozen young ones with it."""
    proc = subprocess.run(
        [sys.executable, "-c", _COUNTING, str(SAMPLE),
         "SELECT day, station, temp_c FROM array WHERE day BETWEEN 24 AND 26 AND station <= 2"],
        capture_output=True, text=True, check=True)
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["rows"] == 6
    assert found["oldest"] == 0, found
    assert found["all"] < 80, found
