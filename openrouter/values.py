"""Readers for JSON values as OpenRouter sends them: never raise, None when unusable."""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from typing import Any, Final

EXCERPT_CHARS: Final = 300


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """Collapse whitespace and cut ``text`` to ``limit`` characters for messages."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def str_or_none(value: Any) -> str | None:
    """``value`` if it is a string, else None."""
    return value if isinstance(value, str) else None


def int_or_none(value: Any) -> int | None:
    """``value`` as an int when it is an integral number (a JSON ``true`` is not), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


# A usage block is the host's word, stored as is in integer and numeric(14, 8) columns:
# a count over PostgreSQL's integer, a negative one or a cost of a million USD is no
# count a reply can have, and one such value cost a canary round its rows or a gateway
# request its events.
USAGE_TOKENS_MAX: Final = 2**31 - 1
USAGE_COST_MAX_USD: Final = 10**6


def usage_tokens(value: Any) -> int | None:
    """A ``usage`` token count (``prompt_tokens``, ``completion_tokens``): an integral
    number (``int_or_none``) from 0 to ``USAGE_TOKENS_MAX``, else None (unknown)."""
    tokens = int_or_none(value)
    return tokens if tokens is not None and 0 <= tokens <= USAGE_TOKENS_MAX else None


def usage_cost(value: Any) -> float | None:
    """``usage.cost`` in USD: a finite number from 0 up to (not including)
    ``USAGE_COST_MAX_USD``, else None (unknown: a negative cost would offset a spend cap)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    cost = float(value)
    return cost if math.isfinite(cost) and 0 <= cost < USAGE_COST_MAX_USD else None


def decimal_or_none(value: Any) -> Decimal | None:
    """A finite price as a ``Decimal`` (prices are sent as strings, ``"0.00000125"``), else None.

    ``str()`` first keeps floats exact enough (``Decimal(0.1)`` would carry binary noise).
    """
    if value is None or isinstance(value, bool):
        return None
    try:
        result = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return result if result.is_finite() else None


def content_text(value: Any) -> str | None:
    """``content`` as text: a string, or a list of ``{"type":"text","text":...}`` parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [p.get("text") for p in value if isinstance(p, dict)]
        strings = [t for t in texts if isinstance(t, str)]
        return "".join(strings) if strings else None
    return None
