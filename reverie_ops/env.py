"""The settings' reader of the environment: django-environ, strict about types.

django-environ reads a boolean that is not one ("maybe") as False and lets a number that
is not one ("abc") end start-up in a traceback that names no variable. Here both are an
``ImproperlyConfigured`` naming the variable and the value, which ``manage.py`` prints as
one line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import environ

# What django-environ reads as false; anything outside these and its true strings is refused.
BOOLEAN_FALSE_STRINGS = ("false", "off", "no", "n", "f", "0", "")
T = TypeVar("T")
R = TypeVar("R")
_KINDS: dict[Any, str] = {int: "a whole number", float: "a number", bool: "true or false"}


class StrictEnv(environ.Env):
    """``environ.Env`` whose casts fail loudly: ``get_value`` raises
    ``environ.ImproperlyConfigured("NAME must be a whole number, not 'abc'")`` for a value
    that does not parse as its type (int, float, bool, the items of a list)."""

    def get_value(self, var: str, cast: Any = None, default: Any = environ.Env.NOTSET, parse_default: bool = False) -> Any:
        raw = self.ENVIRON.get(f"{self.prefix}{var}")
        if cast is bool and raw is not None:
            text = raw.strip().lower()
            if text not in self.BOOLEAN_TRUE_STRINGS and text not in BOOLEAN_FALSE_STRINGS:
                raise environ.ImproperlyConfigured(f"{var} must be true or false, not {raw!r}")
        try:
            return super().get_value(var, cast=cast, default=default, parse_default=parse_default)
        except ValueError as exc:
            item = cast[0] if isinstance(cast, list) and cast else cast
            kind = _KINDS.get(item, "a valid value")
            what = f"a comma-separated list, each {kind}" if isinstance(cast, list) else kind
            raise environ.ImproperlyConfigured(f"{var} must be {what}, not {raw!r}") from exc


def positive(name: str, value: int) -> int:
    """``value`` if it is at least 1, else ``ImproperlyConfigured`` naming ``name``."""
    if value < 1:
        raise environ.ImproperlyConfigured(f"{name} must be at least 1, not {value}")
    return value


def above_zero(name: str, value: float) -> float:
    """``value`` if it is a finite number above 0 (a time limit, s), else
    ``ImproperlyConfigured`` naming ``name``."""
    if not (value > 0 and value != float("inf")):
        raise environ.ImproperlyConfigured(f"{name} must be a number above 0, not {value}")
    return value


def not_negative(name: str, value: float) -> float:
    """``value`` if it is a finite number of at least 0, else ``ImproperlyConfigured``."""
    if not (value >= 0 and value != float("inf")):
        raise environ.ImproperlyConfigured(f"{name} must be a number of at least 0, not {value}")
    return value


def port(name: str, value: int) -> int:
    """``value`` if it is a TCP port (1 to 65535) or 0 (off), else ``ImproperlyConfigured``."""
    if not 0 <= value <= 65535:
        raise environ.ImproperlyConfigured(f"{name} must be a port from 1 to 65535 (or 0: off), not {value}")
    return value


REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def redis_url(value: str) -> str:
    """``value`` if it is a Redis URL redis-py reads (``redis://``, ``rediss://`` or
    ``unix://``), else ValueError saying so (for ``checked``)."""
    if not value.startswith(REDIS_SCHEMES):
        raise ValueError(f"expected a URL starting with {', '.join(REDIS_SCHEMES)}, got {value!r}")
    return value


def checked(name: str, check: Callable[[T], R], value: T) -> R:
    """``check(value)``, its ValueError an ``ImproperlyConfigured`` naming ``name``
    (``CANARY_MODEL: a model id must look like 'author/slug', got 'bad'``)."""
    try:
        return check(value)
    except ValueError as exc:
        raise environ.ImproperlyConfigured(f"{name}: {exc}") from exc
