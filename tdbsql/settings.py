"""Settings read from the environment, each checked the same way: a value that is not a
number in range is an ``InterfaceError`` naming the variable, never a silent default."""

from __future__ import annotations

import os

from .errors import InterfaceError


def env_number(name: str, default: float, *, minimum: float = 0, integer: bool = True):
    """``$name`` as an int (or float), ``default`` when unset or empty."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        kind = "an integer" if integer else "a number"
        raise InterfaceError(f"{name}={raw!r} is not {kind}") from None
    if value < minimum:
        raise InterfaceError(f"{name}={raw!r} is below its minimum {minimum}")
    return value
