"""JSON text read by RFC 8259's rules, for files people write (routing contracts) and the
bodies the gateway reads.

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


# Python refuses to convert an integer of more digits than this (CVE-2020-10735), with a
# message meant for the server's own code ("use sys.set_int_max_str_digits()").
_MAX_INT_DIGITS = 4300


def _shown(text: str) -> str:
    """A number's text as a message shows it: its first digits and its length."""
    return f"{text[:12]}... ({len(text.lstrip('-'))} digits)"


def _bounded_int(text: str) -> int:
    if len(text) > _MAX_INT_DIGITS:
        raise ValueError(f"{_shown(text)} is out of range for a number")
    return int(text)


def _marked_int(text: str) -> int | float:
    return NotJsonNumber(float("inf"), _shown(text)) if len(text) > _MAX_INT_DIGITS else int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is out of range for a number")
    return value


class NotJsonNumber(float):
    """A number JSON text cannot hold (NaN, Infinity, ``1e400``), kept as a float that
    remembers how it was written (``source``), so a later check can name both the field
    and the number."""

    source: str

    def __new__(cls, value: float, source: str) -> NotJsonNumber:
        number = super().__new__(cls, value)
        number.source = source
        return number

    @property
    def problem(self) -> str:
        """Why it is not JSON, in the words ``strict_loads`` uses."""
        if self.source in ("NaN", "Infinity", "-Infinity"):
            return f"{self.source} is not JSON (RFC 8259 has no NaN or Infinity)"
        return f"{self.source} is out of range for a number"


def _marked_constant(name: str) -> float:
    return NotJsonNumber(float(name.replace("Infinity", "inf")), name)


def _marked_float(text: str) -> float:
    value = float(text)
    return NotJsonNumber(value, text) if value in (float("inf"), float("-inf")) else value


def loads_marking(text: str) -> Any:
    """``json.loads(text)`` that reads NaN, Infinity and out-of-range numbers (an integer
    past Python's 4,300-digit conversion limit included) as
    ``NotJsonNumber`` values instead of refusing them, for a caller that refuses them
    itself with the path of the field that holds them (the gateway's body check).

    Raises ``json.JSONDecodeError`` for malformed text and ``RecursionError`` for
    nesting past Python's limit."""
    return json.loads(text, parse_constant=_marked_constant, parse_float=_marked_float, parse_int=_marked_int)


def strict_loads(text: str) -> Any:
    """``json.loads(text)`` refusing NaN, Infinity and out-of-range numbers (an integer past
    Python's 4,300-digit conversion limit included).

    Raises ``json.JSONDecodeError`` for malformed text (line and column), ``ValueError``
    naming the offending number, and ``RecursionError`` for nesting past Python's limit.
    """
    return json.loads(text, parse_constant=_not_json, parse_float=_finite_float, parse_int=_bounded_int)
