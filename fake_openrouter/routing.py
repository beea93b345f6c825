"""Provider routing as OpenRouter does it: which endpoints may serve a request, in which order.

Filters run in the order of the reference checklist: only/ignore -> quantizations ->
max_price -> require_parameters (and the soft response_format preference) -> sort/order ->
fallbacks. Names in only/order/ignore match a provider slug (every endpoint of that provider),
a full tag (that endpoint) or a display name, case-insensitively.
"""

from __future__ import annotations

import random
from decimal import Decimal
from typing import Any

from fake_openrouter.chat_request import ChatRequest
from fake_openrouter.fleet import DEFAULT_TOKENS_PER_S, DEFAULT_TTFT_MS, Endpoint, Model
from fake_openrouter.wire import error_body

_MILLION = Decimal(1_000_000)
# fp4 also covers mxfp4/nvfp4 and fp8 also covers mxfp8 (docs/sources/openrouter-api.md, "Provider routing", quantizations).
_QUANT_FAMILIES = {"fp4": {"fp4", "mxfp4", "nvfp4"}, "fp8": {"fp8", "mxfp8"}}


class RoutingError(Exception):
    """No endpoint may serve the request: answer ``status`` with ``body``."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(body["error"]["message"])
        self.status = status
        self.body = body


def matches(endpoint: Endpoint, names: tuple[str, ...]) -> bool:
    """True if any lower-cased name is the endpoint's slug, tag or display name."""
    keys = {endpoint.slug.lower(), endpoint.tag.lower(), endpoint.provider.lower()}
    return any(name in keys for name in names)


def plan_route(model: Model | None, request: ChatRequest, rng: random.Random) -> list[Endpoint]:
    """The endpoints to try, in order (the first serves unless it fails and fallbacks apply).

    ``rng`` drives load balancing when neither ``sort`` nor ``order`` is given.
    Raises RoutingError: 400 for an unknown model, 404 when no endpoint is eligible.
    """
    if model is None:
        raise RoutingError(400, error_body(400, f"{request.model_id} is not a valid model ID"))
    if request.images and "image" not in model.input_modalities:
        raise RoutingError(404, error_body(404, "No endpoints found that support image input"))
    prefs = request.provider
    endpoints = list(model.endpoints)
    if not endpoints:
        raise _no_endpoints(model.id)
    if prefs.only is not None:
        endpoints = [e for e in endpoints if matches(e, prefs.only)]
    endpoints = [e for e in endpoints if not matches(e, prefs.ignore)]
    if prefs.quantizations is not None:
        wanted = set().union(*(_QUANT_FAMILIES.get(q, {q}) for q in prefs.quantizations))
        endpoints = [e for e in endpoints if (e.quantization or "unknown") in wanted]
    if not endpoints:
        raise _no_allowed_providers(model, prefs.only)
    endpoints = [e for e in endpoints if _within_price(e, request)]
    if not endpoints:
        raise _no_endpoints(model.id)
    endpoints = _by_parameters(endpoints, request)
    return _ordered(endpoints, request, rng)


def _by_parameters(endpoints: list[Endpoint], request: ChatRequest) -> list[Endpoint]:
    required = request.required_parameters
    if request.provider.require_parameters:
        kept = [e for e in endpoints if required <= set(e.supported_parameters)]
        if not kept:
            raise RoutingError(
                404, error_body(404, "No endpoints found that can handle the requested parameters.")
            )
        return kept
    # Soft preference (docs/sources/openrouter-api.md, "Provider routing"): with require_parameters off, a structured-output
    # request still goes only to endpoints that support it, when at least one does; if none
    # does, the parameter is dropped and every endpoint stays eligible.
    soft = required & {"structured_outputs", "response_format", "tools"}
    if soft:
        kept = [e for e in endpoints if soft <= set(e.supported_parameters)]
        if kept:
            return kept
    return endpoints


def _ordered(endpoints: list[Endpoint], request: ChatRequest, rng: random.Random) -> list[Endpoint]:
    prefs = request.provider
    base = _sorted(endpoints, prefs.sort) if prefs.sort else _load_balanced(endpoints, rng)
    if prefs.order:
        first: list[Endpoint] = []
        for name in prefs.order:
            first.extend(e for e in base if matches(e, (name,)) and e not in first)
        rest = [e for e in base if e not in first]
        if not prefs.allow_fallbacks:
            # "Only the primary provider or the providers in order are used" (OAS).
            return first or base[:1]
        return first + rest
    return base if prefs.allow_fallbacks else base[:1]


def _sorted(endpoints: list[Endpoint], by: str) -> list[Endpoint]:
    if by == "price":
        return sorted(endpoints, key=_price)
    if by == "throughput":
        return sorted(endpoints, key=lambda e: -(e.faults.tokens_per_s or DEFAULT_TOKENS_PER_S))
    if by == "latency":
        return sorted(endpoints, key=lambda e: sum(e.faults.ttft_ms or DEFAULT_TTFT_MS) / 2)
    return list(endpoints)  # "exacto": no quality signal in a fleet; keep the fleet's order


def _load_balanced(endpoints: list[Endpoint], rng: random.Random) -> list[Endpoint]:
    """Weighted shuffle, weight 1/price^2 (OpenRouter's documented default); hosts that are
    down go last, as OpenRouter skips providers with recent outages."""
    pool = [e for e in endpoints if not e.faults.down]
    order: list[Endpoint] = []
    while pool:
        weights = [1.0 / (float(_price(e)) + 1e-9) ** 2 for e in pool]
        pick = rng.choices(range(len(pool)), weights=weights)[0]
        order.append(pool.pop(pick))
    return order + [e for e in endpoints if e.faults.down]


def _price(endpoint: Endpoint) -> Decimal:
    return endpoint.pricing.prompt + endpoint.pricing.completion


def _within_price(endpoint: Endpoint, request: ChatRequest) -> bool:
    prefs = request.provider
    if (
        prefs.max_price_prompt is not None
        and endpoint.pricing.prompt * _MILLION > prefs.max_price_prompt
    ):
        return False
    limit = prefs.max_price_completion
    return limit is None or endpoint.pricing.completion * _MILLION <= limit


def _no_endpoints(model_id: str) -> RoutingError:
    return RoutingError(404, error_body(404, f"No endpoints found for {model_id}."))


def _no_allowed_providers(model: Model, only: tuple[str, ...] | None) -> RoutingError:
    available: list[str] = []
    for endpoint in model.endpoints:
        if endpoint.slug.lower() not in available:
            available.append(endpoint.slug.lower())
    metadata = {"available_providers": available, "requested_providers": list(only or ())}
    # The captured body (agent-zero#1255) has metadata and no user_id.
    return RoutingError(
        404,
        error_body(
            404,
            "No allowed providers are available for the selected model.",
            metadata,
            user_id=False,
        ),
    )
