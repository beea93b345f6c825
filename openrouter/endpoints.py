"""The endpoint listing: ``GET /models/{author}/{slug}/endpoints`` into ``EndpointInfo``.

Both shapes seen in the wild are read: the 2025 one (no ``model_id``, ``uptime_*``,
``latency_*``; before late May 2025 no ``tag`` either) and the newer one with latency
and throughput percentile objects (``tests/fixtures/captures/INDEX.md``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from openrouter.errors import DiscoveryError
from openrouter.jsonbody import InvalidBodyError, decode_object
from openrouter.values import decimal_or_none, excerpt, int_or_none, str_or_none


@dataclass(frozen=True)
class EndpointInfo:
    """One provider's deployment of a model, from ``/models/{author}/{slug}/endpoints``.

    ``tag`` is the routing address (``slug`` or ``slug/variant``) to put in
    ``provider.only``; responses before late May 2025 had no ``tag``, and then ``tag`` is
    the slug derived from the display name. ``provider_slug`` is the part of ``tag``
    before ``/``. ``provider_name`` is the display name, with OpenRouter's casing
    ("xAI", "SambaNova"). ``pricing_prompt`` and ``pricing_completion`` are USD per token
    (None when absent or not a number). ``context_length`` and ``max_completion_tokens``
    are tokens. ``status`` is OpenRouter's int code (0 normal; -2 seen with degraded
    uptime; others undocumented). ``raw`` is the endpoint object as sent. ``problems``
    names each field that was present but did not parse (``"pricing.prompt: 'abc' is
    not a number"``): its value above is None, and the caller must say so rather than
    store it as silently empty. ``input_modalities`` is the model's
    (``data.architecture.input_modalities``: ``("text", "image", "file")``), the same for
    every endpoint of the listing; empty when the listing gives none.
    """

    tag: str
    provider_name: str
    provider_slug: str
    quantization: str | None
    context_length: int | None
    supported_parameters: tuple[str, ...]
    pricing_prompt: Decimal | None
    pricing_completion: Decimal | None
    max_completion_tokens: int | None
    status: int | None
    raw: dict[str, Any] = field(repr=False, compare=False)
    problems: tuple[str, ...] = ()
    input_modalities: tuple[str, ...] = ()


def slugify_provider(name: str) -> str:
    """Derive a routing slug from a provider display name.

    ``"Google AI Studio"`` → ``"google-ai-studio"``, ``"xAI"`` → ``"xai"``. Only used for
    endpoint lists older than the ``tag`` field; it cannot know that ``"Google"`` is
    routed as ``google-vertex``.
    """
    return re.sub(r"[^a-z0-9]+", "-", name.casefold()).strip("-")


def same_provider(a: str | None, b: str | None) -> bool:
    """Compare two provider display names case-insensitively ("SambaNova" == "sambanova")."""
    if a is None or b is None:
        return False
    return a.strip().casefold() == b.strip().casefold()


# What a listing's numbers can be: a price per token from 0 to 1,000 USD, to the
# picodollar (prices are about 1e-7 USD per token; a smaller non-zero value, like
# 1e-999999, names no price), and a token count from 1 to 2^31 - 1. Outside, the value is
# a listing problem of that endpoint (stored as unknown), never a failed discovery.
MAX_PRICE_USD = Decimal(1000)
PRICE_STEP_USD = Decimal("1e-12")
MAX_TOKENS = 2**31 - 1
PRICE_WHAT = "a price (USD per token, 0 to 1000)"
TOKENS_WHAT = f"a token count (1 to {MAX_TOKENS})"


def price_or_none(value: object) -> Decimal | None:
    """A listing's price (``decimal_or_none``) when plausible (``MAX_PRICE_USD``,
    ``PRICE_STEP_USD``), else None."""
    price = decimal_or_none(value)
    if price is None or not (price == 0 or PRICE_STEP_USD <= price <= MAX_PRICE_USD):
        return None
    return price


def tokens_or_none(value: object) -> int | None:
    """A listing's token count (``int_or_none``) from 1 to ``MAX_TOKENS``, else None."""
    tokens = int_or_none(value)
    return tokens if tokens is not None and 1 <= tokens <= MAX_TOKENS else None


def parse_endpoints_body(raw: bytes) -> list[EndpointInfo]:
    """Parse an endpoints body into ``EndpointInfo`` rows (``"endpoints": []`` gives []).

    Numeric fields that are missing or not numbers become None; one that was sent but
    does not parse is also named in the row's ``problems``. Raises
    ``DiscoveryError`` when the body is not JSON, ``data.endpoints`` is not a list, or an
    entry has neither ``tag`` nor ``provider_name`` (it could not be pinned).
    """
    try:
        obj = decode_object(raw, "endpoints body", invalid_utf8="replace")
    except InvalidBodyError as exc:
        raise DiscoveryError(str(exc), body_excerpt=excerpt(raw[:2000].decode(errors="replace"))) from exc
    data = obj.get("data")
    endpoints = data.get("endpoints") if isinstance(data, dict) else None
    if not isinstance(endpoints, list):
        raise DiscoveryError("endpoints body: data.endpoints is missing or not a list")
    modalities, modality_problem = _input_modalities(data if isinstance(data, dict) else {})
    result: list[EndpointInfo] = []
    for index, entry in enumerate(endpoints):
        if not isinstance(entry, dict):
            raise DiscoveryError(f"endpoints body: endpoint #{index} is not an object")
        name = str_or_none(entry.get("provider_name"))
        tag = str_or_none(entry.get("tag"))
        if not name and not tag:
            raise DiscoveryError(f"endpoints body: endpoint #{index} has no tag and no provider_name")
        slug = tag.split("/", 1)[0] if tag else slugify_provider(name or "")
        pricing = entry.get("pricing")
        if not isinstance(pricing, dict):
            pricing = {}
        params = entry.get("supported_parameters")
        prompt_price, completion_price = price_or_none(pricing.get("prompt")), price_or_none(pricing.get("completion"))
        context_length, max_completion = tokens_or_none(entry.get("context_length")), tokens_or_none(entry.get("max_completion_tokens"))
        parsed = {
            "pricing.prompt": (pricing.get("prompt"), prompt_price, PRICE_WHAT),
            "pricing.completion": (pricing.get("completion"), completion_price, PRICE_WHAT),
            "context_length": (entry.get("context_length"), context_length, TOKENS_WHAT),
            "max_completion_tokens": (entry.get("max_completion_tokens"), max_completion, TOKENS_WHAT),
            "quantization": (entry.get("quantization"), str_or_none(entry.get("quantization")), "a string"),
        }
        problems = [
            f"{name}: {excerpt(repr(sent), 80)} is not {what}"
            for name, (sent, value, what) in parsed.items()
            if sent is not None and value is None
        ]
        if entry.get("pricing") is not None and not isinstance(entry.get("pricing"), dict):
            problems.append(f"pricing: {excerpt(repr(entry.get('pricing')), 80)} is not an object")
        if params is not None and not isinstance(params, list):
            problems.append(f"supported_parameters: {excerpt(repr(params), 80)} is not a list")
        if modality_problem:
            problems.append(modality_problem)
        result.append(
            EndpointInfo(
                tag=tag or slug,
                provider_name=name or slug,
                provider_slug=slug,
                quantization=str_or_none(entry.get("quantization")),
                context_length=context_length,
                supported_parameters=tuple(p for p in params if isinstance(p, str)) if isinstance(params, list) else (),
                pricing_prompt=prompt_price,
                pricing_completion=completion_price,
                max_completion_tokens=max_completion,
                status=int_or_none(entry.get("status")),
                raw=entry,
                problems=tuple(problems),
                input_modalities=modalities,
            )
        )
    return result


def _input_modalities(data: dict[str, Any]) -> tuple[tuple[str, ...], str | None]:
    """The model's input modalities from ``data.architecture`` (lower-cased, in order),
    and the problem when they were sent in another shape than a list of strings."""
    architecture = data.get("architecture")
    sent = architecture.get("input_modalities") if isinstance(architecture, dict) else None
    if sent is None:
        return (), None
    if not isinstance(sent, list) or not all(isinstance(m, str) for m in sent):
        return (), f"architecture.input_modalities: {excerpt(repr(sent), 80)} is not a list of strings"
    return tuple(dict.fromkeys(m.strip().lower() for m in sent if m.strip())), None
