"""LIST functions beyond what the SQL files pin (``tests/sql/lists``): which implementation a
name runs must not depend on import order, and a name is registered once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tdbsql.engine.functions import register, registry

ROOT = Path(__file__).resolve().parents[1]


def test_length_and_concat_of_lists_and_strings_in_a_fresh_interpreter():
    """``length`` / ``concat`` take lists and strings alike in a process that imports only
    what a library user imports (they were a text function re-registered by the list module,
    right only when that module happened to be imported after the text one)."""
    script = ("import tdbsql\n"
              "con = tdbsql.connect()\n"
              "print(con.sql(\"SELECT length([1, 2]), length('héllo'), len([]), "
              "concat([1], [2, 3]), concat('a', NULL, 1)\").fetchall())\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[(2, 5, 0, [1, 2, 3], 'a1')]"


def test_a_name_is_registered_once():
    registry()  # every function family registered (they load on demand)
    with pytest.raises(ValueError, match=r"length\(\) is registered twice"):
        register("length", 1)(lambda ctx, value: value)
