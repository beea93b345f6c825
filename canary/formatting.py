"""How numbers read on every page and in every command: one format per kind of number."""

from __future__ import annotations

from typing import Any

NO_VALUE = "—"


def percent(share: Any) -> str:
    """A share in [0, 1] as a percentage with at most one decimal (``0.6`` -> ``"60%"``,
    ``0.125`` -> ``"12.5%"``, ``0.004`` -> ``"0.4%"``); ``NO_VALUE`` for None or a value
    that is not a number. The one format of fleet rates and every other rate shown."""
    if share is None or isinstance(share, bool):
        return NO_VALUE
    try:
        value = float(share) * 100
    except (TypeError, ValueError):
        return NO_VALUE
    text = f"{value:.1f}".rstrip("0").rstrip(".")
    return f"{'0' if text == '-0' else text}%"


def ratio_percent(part: Any, whole: Any) -> str:
    """``part / whole`` as ``percent``; ``NO_VALUE`` when ``whole`` is 0 or missing."""
    try:
        return percent(float(part) / float(whole)) if whole else NO_VALUE
    except (TypeError, ValueError):
        return NO_VALUE


def milliseconds(value: Any) -> str:
    """A duration in ms rounded to a whole ms with its unit and thousands separators
    (``230.769`` -> ``"231 ms"``, ``12034.5`` -> ``"12,034 ms"`` (half to even)); ``NO_VALUE``
    for None or a value that is not a number."""
    if value is None or isinstance(value, bool):
        return NO_VALUE
    try:
        return f"{round(float(value)):,} ms"
    except (TypeError, ValueError, OverflowError):
        return NO_VALUE


def usd(value: Any, places: int = 6) -> str:
    """An amount in USD with ``places`` decimals (``0.00018`` -> ``"$0.000180"``);
    ``NO_VALUE`` for None or a value that is not a number."""
    if value is None or isinstance(value, bool):
        return NO_VALUE
    try:
        return f"${float(value):,.{places}f}"
    except (TypeError, ValueError, OverflowError):
        return NO_VALUE
