"""Argument checks the pure modules share (no Django)."""

from __future__ import annotations

from datetime import datetime


def require_aware(name: str, value: datetime) -> None:
    """Raise ValueError unless ``value`` is a timezone-aware datetime.

    Naive datetimes compare as TypeError against aware ones, or worse, silently shift by
    the server's offset when converted; the pure modules refuse them at the door.
    """
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be a timezone-aware datetime, got naive {value!r}")
