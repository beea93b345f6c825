"""JSON text read by RFC 8259's rules, for files people write (routing contracts).

Python's ``json`` reads ``NaN``, ``Infinity`` and ``-Infinity`` as numbers, and a number
past float's range (``1e400``) as infinity; none of them is JSON (RFC 8259, section 6),
and stored or used they fail later and further away (PostgreSQL's JSON columns refuse
them at INSERT). The simulator's fleet check refuses them at the key instead, to report
the path beside the file's other errors.
"""

from __future__ import annotations

import json
from typing import Any


def _not_json(name: str) -> float:
    raise ValueError(f"{name} is not JSON (RFC 8259 has no NaN or Infinity)")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is out of range for a number")
    return value


def strict_loads(text: str) -> Any:
    """``json.loads(text)`` refusing NaN, Infinity and out-of-range numbers.

    Raises ``json.JSONDecodeError`` for malformed text (line and column), ``ValueError``
    naming the offending number, and ``RecursionError`` for nesting past Python's limit.
    """
    return json.loads(text, parse_constant=_not_json, parse_float=_finite_float)
