"""The request's ``provider`` object (OpenRouter ``ProviderPreferences``), parsed strictly.

The schema has ``additionalProperties: false`` (docs/sources/openrouter-api.md, "Provider routing"), so unknown keys and values of
the wrong type are answered with a 400 in OpenRouter's error envelope.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from fake_openrouter.wire import error_body

SORT_KEYS: tuple[str, ...] = ("price", "throughput", "latency", "exacto")
_LIST_KEYS = ("only", "order", "ignore", "quantizations")
_BOOL_KEYS = ("allow_fallbacks", "require_parameters", "zdr", "enforce_distillable_text")
# Accepted for compatibility; they do not change the simulator's routing.
_ACCEPTED_KEYS = ("data_collection", "preferred_min_throughput", "preferred_max_latency")
KNOWN_KEYS: frozenset[str] = frozenset(
    {*_LIST_KEYS, *_BOOL_KEYS, *_ACCEPTED_KEYS, "sort", "max_price"}
)


class PreferencesError(Exception):
    """An invalid ``provider`` object: answer 400 with ``body``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.status = 400
        self.body = error_body(400, message)


@dataclass(frozen=True)
class ProviderPreferences:
    """Routing preferences. Names in ``only``/``order``/``ignore`` are lower-cased and match a
    provider slug, a full tag or a display name. ``max_price_*`` are USD per million tokens."""

    only: tuple[str, ...] | None = None
    order: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    allow_fallbacks: bool = True
    require_parameters: bool = False
    sort: str | None = None
    quantizations: tuple[str, ...] | None = None
    max_price_prompt: Decimal | None = None
    max_price_completion: Decimal | None = None


def parse_preferences(raw: Any) -> ProviderPreferences:
    """Parse the ``provider`` object (None or absent means defaults).

    Raises PreferencesError on unknown keys or wrongly typed values.
    """
    if raw is None:
        return ProviderPreferences()
    if not isinstance(raw, dict):
        raise PreferencesError("provider: expected an object")
    for key in raw:
        if key not in KNOWN_KEYS:
            raise PreferencesError(f'provider: unrecognized key "{key}"')
    lists = {key: _names(raw.get(key), key) for key in _LIST_KEYS}
    flags = {key: _flag(raw.get(key), key) for key in _BOOL_KEYS}
    prompt_max, completion_max = _max_price(raw.get("max_price"))
    return ProviderPreferences(
        only=lists["only"],
        order=lists["order"],
        ignore=lists["ignore"] or (),
        allow_fallbacks=True if flags["allow_fallbacks"] is None else flags["allow_fallbacks"],
        require_parameters=bool(flags["require_parameters"]),
        sort=_sort(raw.get("sort")),
        quantizations=lists["quantizations"],
        max_price_prompt=prompt_max,
        max_price_completion=completion_max,
    )


def _names(value: Any, key: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PreferencesError(f"provider.{key}: expected an array of strings")
    return tuple(v.strip().lower() for v in value)


def _flag(value: Any, key: str) -> bool | None:
    if value is None:
        return None
    if not isinstance(value, bool):
        raise PreferencesError(f"provider.{key}: expected a boolean")
    return value


def _sort(value: Any) -> str | None:
    if value is None:
        return None
    by = value.get("by") if isinstance(value, dict) else value
    if isinstance(value, dict) and set(value) - {"by", "partition"}:
        raise PreferencesError("provider.sort: expected {by, partition}")
    if by not in SORT_KEYS:
        raise PreferencesError(f"provider.sort: expected one of {', '.join(SORT_KEYS)}")
    return str(by)


def _max_price(value: Any) -> tuple[Decimal | None, Decimal | None]:
    if value is None:
        return None, None
    if not isinstance(value, dict):
        raise PreferencesError("provider.max_price: expected an object")
    prices: list[Decimal | None] = []
    for key in ("prompt", "completion"):
        item = value.get(key)
        if item is None:
            prices.append(None)
            continue
        # The docs' example uses numbers, the OAS strings: accept both (docs/sources/openrouter-api.md, "Provider routing").
        if isinstance(item, bool) or not isinstance(item, (int, float, str)):
            raise PreferencesError(f"provider.max_price.{key}: expected a number")
        try:
            prices.append(Decimal(str(item)))
        except InvalidOperation as exc:
            raise PreferencesError(f"provider.max_price.{key}: expected a number") from exc
    return prices[0], prices[1]
