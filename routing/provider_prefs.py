"""The client's provider preferences the gateway honours itself. Pure.

A client may send OpenRouter's ``provider`` object (``routing.request_check.PROVIDER_KEYS``).
Each route pins one endpoint, so a preference that endpoint cannot meet makes OpenRouter
answer 404 ("No allowed providers are available", "No endpoints found for ...") on every
route alike: the request's doing, not the routes' (routing/README.md, "Provider
preferences"). Where the gateway knows a route's endpoint facts it applies two of them
before any attempt:

- ``max_price`` (``prompt`` / ``completion``, USD per million tokens, numbers or numeric
  strings as OpenRouter takes them): a route whose list price is above it, or unknown (the
  listing gave none), is not tried;
- ``quantizations`` (OpenRouter's enum, ``QUANTIZATIONS``; ``fp4`` also covers ``mxfp4``
  and ``nvfp4``, ``fp8`` covers ``mxfp8``, as OpenRouter documents it): a route whose
  endpoint's quantization is known (the canary's listing) and not among them is not tried.
  A route of unknown quantization stays a candidate: its endpoint decides.

``constraints_of`` reads and checks them (``ProviderInvalid`` names the field);
``check_passed_on`` checks the shape of the preferences OpenRouter applies alone;
``route_misfit`` says which constraint a route breaks. Source: OpenRouter's API docs,
"Provider routing" (docs/sources/openrouter-api.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

# OpenRouter's quantization enum (docs/sources/openrouter-api.md, "Provider routing").
QUANTIZATIONS: tuple[str, ...] = (
    "int4", "int8", "fp4", "mxfp4", "nvfp4", "fp6", "fp8", "mxfp8", "fp16", "bf16", "fp32",
    "unknown",  # vocabulary: OpenRouter's quantization level
)
# A family name covers its variants (same source).
_FAMILIES = {"fp4": frozenset({"fp4", "mxfp4", "nvfp4"}), "fp8": frozenset({"fp8", "mxfp8"})}
# OpenRouter's provider sort strategies (OpenRouter API docs, "Provider routing", and its
# SDKs' ProviderSort enum).
SORTS: tuple[str, ...] = ("price", "throughput", "latency", "exacto")
_PRICE_KEYS = ("prompt", "completion")
# Every field of OpenRouter's ``max_price`` (its API reference, "MaxPrice"): the gateway
# applies the token prices itself; the image, audio and request prices are OpenRouter's.
MAX_PRICE_FIELDS = frozenset({*_PRICE_KEYS, "image", "audio", "request"})
_PER_MILLION = 1_000_000


class ProviderInvalid(ValueError):
    """A provider preference of the wrong shape; ``path`` names it (``provider.max_price.prompt``)."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path


@dataclass(frozen=True)
class ProviderConstraints:
    """What the client's ``provider`` object asks of an endpoint that the gateway can
    check: ``max_price_prompt`` / ``max_price_completion`` USD per million tokens (None:
    no limit), ``quantizations`` the accepted levels with their families expanded (None:
    any)."""

    max_price_prompt: float | None = None
    max_price_completion: float | None = None
    quantizations: frozenset[str] | None = None

    @property
    def any(self) -> bool:
        return self.max_price_prompt is not None or self.max_price_completion is not None or self.quantizations is not None


def _price(value: Any, path: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ProviderInvalid(path, f"expected a number (USD per million tokens), got {value!r}")
    try:
        number = float(Decimal(str(value)))
    except InvalidOperation:
        raise ProviderInvalid(path, f"expected a number (USD per million tokens), got {value!r}") from None
    if not math.isfinite(number) or number < 0:
        raise ProviderInvalid(path, f"expected a number from 0 (USD per million tokens), got {value!r}")
    return number


def check_passed_on(provider: Mapping[str, Any]) -> None:
    """The preferences passed to OpenRouter as they are, checked for the shape its schema
    takes (an unknown value there is OpenRouter's 400, every route alike): ``sort`` one of
    ``SORTS`` or ``{"by": one of them, "partition": ...}``; ``data_collection`` "allow" or
    "deny"; ``zdr``, ``require_parameters``, ``enforce_distillable_text`` booleans.
    Raises ``ProviderInvalid`` naming the field."""
    sort = provider.get("sort")
    if sort is not None:
        by = sort.get("by") if isinstance(sort, Mapping) else sort
        path = "provider.sort.by" if isinstance(sort, Mapping) else "provider.sort"
        if by not in SORTS:
            raise ProviderInvalid(path, f"expected one of {list(SORTS)}, got {by!r}")
    policy = provider.get("data_collection")
    if policy is not None and policy not in ("allow", "deny"):
        raise ProviderInvalid("provider.data_collection", f"expected 'allow' or 'deny', got {policy!r}")
    for key in ("zdr", "require_parameters", "enforce_distillable_text"):
        value = provider.get(key)
        if value is not None and not isinstance(value, bool):
            raise ProviderInvalid(f"provider.{key}", f"expected true or false, got {value!r}")


def constraints_of(provider: Mapping[str, Any] | None) -> ProviderConstraints:
    """The constraints of a client's ``provider`` object (None or without them: none).
    Raises ``ProviderInvalid`` for ``max_price`` that is not an object of non-negative
    numbers under OpenRouter's fields (``MAX_PRICE_FIELDS``), ``quantizations`` that is not a list of
    OpenRouter's levels."""
    if not provider:
        return ProviderConstraints()
    prices: dict[str, float | None] = {key: None for key in _PRICE_KEYS}
    limits = provider.get("max_price")
    if limits is not None:
        if not isinstance(limits, Mapping):
            raise ProviderInvalid("provider.max_price", f"expected an object with prompt and/or completion, got {limits!r}")
        unknown = sorted(str(key) for key in limits if key not in MAX_PRICE_FIELDS)
        if unknown:
            # A misspelt ceiling ("promt") would cap nothing, silently.
            raise ProviderInvalid(f"provider.max_price.{unknown[0]}",
                                  f"unknown field; max_price has {', '.join(sorted(MAX_PRICE_FIELDS))}")
        for key in sorted(MAX_PRICE_FIELDS):
            price = _price(limits.get(key), f"provider.max_price.{key}")
            if key in prices:
                prices[key] = price
    levels = provider.get("quantizations")
    accepted: frozenset[str] | None = None
    if levels is not None:
        if not isinstance(levels, list) or not all(isinstance(q, str) for q in levels):
            raise ProviderInvalid("provider.quantizations", f"expected a list of strings, got {levels!r}")
        unknown = [q for q in levels if q not in QUANTIZATIONS]
        if unknown:
            raise ProviderInvalid("provider.quantizations", f"unknown level(s) {unknown}; expected some of {list(QUANTIZATIONS)}")
        accepted = frozenset().union(*(_FAMILIES.get(q, {q}) for q in levels)) if levels else None
    return ProviderConstraints(prices["prompt"], prices["completion"], accepted)


def route_misfit(constraints: ProviderConstraints, *, price_prompt_usd: float | None, price_completion_usd: float | None,
                 quantization: str | None, pinned: bool) -> tuple[str, str] | None:
    """(field, why) of the first constraint a route breaks, or None when it fits (or the
    gateway cannot tell a quantization). Prices: the route's list price, USD per token
    (None: unknown, which no ceiling admits: an unknown price is not a price under it);
    ``quantization`` its endpoint's level (None: unknown); ``pinned``: the route is an
    OpenRouter endpoint (only those have a quantization the client can select)."""
    for key, limit, price in (("prompt", constraints.max_price_prompt, price_prompt_usd),
                              ("completion", constraints.max_price_completion, price_completion_usd)):
        if limit is not None and price is None:
            return (f"provider.max_price.{key}",
                    f"{key} price unknown (the route has none), so not known to be within provider.max_price.{key} {limit:g}")
        if price is None:
            continue
        per_million = price * _PER_MILLION
        # Rounded to the listing's precision: 1e-7 USD per token is 0.1 per million, not 0.09999.
        if limit is not None and round(per_million, 6) > limit:
            return (f"provider.max_price.{key}",
                    f"{key} price {per_million:g} USD per million tokens above provider.max_price.{key} {limit:g}")
    wanted = constraints.quantizations
    if wanted is not None and pinned and quantization and quantization not in wanted:
        return "provider.quantizations", f"quantization {quantization} not in provider.quantizations"
    return None
