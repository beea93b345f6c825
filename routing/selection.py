"""Fallback by capability, not rank. Pure.

Candidates are first filtered against the contract and the request (modalities, context
>= estimated input + reserved output, tools, structured-output mode actually honoured,
model class, region, estimated cost within the remaining budget, not on the ignore list),
then ranked by measured health, latency and price. Breaker suppression is checked by the
gateway when it is about to use a route (the breaker's half-open lease must be claimed at
that moment, not at filtering time).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.ignore_rule import covered
from routing.contracts import Contract
from routing.provider_prefs import ProviderConstraints, route_misfit
from routing.terms import OutputMode

# A route whose canary structured-output probes pass less often than this does not
# count as supporting json_schema, whatever it advertises ("advertised versus honoured";
# LLM verifiers hold schema accuracy >= 98 %, docs/sources/resilience.md, "Canary analysis"; we allow some noise).
DEFAULT_MIN_STRUCTURED_HONOURED = 0.9
_CHARS_PER_TOKEN = 4  # the usual English estimate; also the simulator's count


@dataclass(frozen=True)
class RouteProfile:
    """A route: a model on an endpoint, with its capability profile and measurements.

    ``provider_tag`` pins one OpenRouter endpoint (``slug/variant``); None for a plain
    OpenAI-compatible ``base_url`` (None = the default OpenRouter URL).
    ``context_length`` tokens; prices USD per token (None = unknown: no price ceiling
    admits it, costs count it 0, ranking puts it after a known price); ``health`` 0..1 (recent success
    share); ``latency_ms`` recent median (None = unmeasured);
    ``structured_honoured`` 0..1 share of the canary's structured-output verdicts that
    passed (None = no evidence); ``quantization`` the pinned endpoint's level as the
    canary's listing gives it (``fp8``; None = unknown).
    """

    name: str
    model_id: str
    provider_tag: str | None = None
    base_url: str | None = None
    api_key: str = ""
    modalities: frozenset[str] = frozenset({"text"})
    context_length: int = 8192
    tools: bool = False
    output_modes: frozenset[str] = frozenset()
    model_class: str = ""
    price_prompt_usd: float | None = 0.0
    price_completion_usd: float | None = 0.0
    region: str = ""
    health: float = 1.0
    latency_ms: float | None = None
    structured_honoured: float | None = None
    quantization: str | None = None


@dataclass(frozen=True)
class RequestNeeds:
    """What a request asks of a route: estimated ``input_tokens``, reserved
    ``output_tokens`` (max_tokens), input ``modalities``, whether it sends tools."""

    input_tokens: int
    output_tokens: int
    modalities: frozenset[str]


def estimate_needs(messages: Sequence[Mapping[str, Any]], *, max_tokens: int | None, tools: Any = None) -> RequestNeeds:
    """Estimate tokens as characters / 4 over message text (and tool schemas), rounded up.

    Image parts count as the "image" modality (and a flat 1000 tokens, a common tile
    cost). The estimate errs high on purpose: a context filter that is too generous sends
    requests that overflow (field case 5).
    """
    chars = 0
    extra = 0
    modalities = {"text"}
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            for part in content:
                if not isinstance(part, dict):
                    continue
                if part.get("type") in ("image_url", "input_image", "image"):
                    modalities.add("image")
                    extra += 1000
                elif part.get("type") in ("input_audio", "audio"):
                    modalities.add("audio")
                    extra += 1000
                elif isinstance(part.get("text"), str):
                    chars += len(part["text"])
        chars += 4  # role and framing
    if tools:
        chars += len(repr(tools))
    return RequestNeeds(math.ceil(chars / _CHARS_PER_TOKEN) + extra, max_tokens or 0, frozenset(modalities))


def estimated_cost_usd(route: RouteProfile, needs: RequestNeeds) -> float:
    """Upper estimate of one attempt's cost: input + reserved output tokens at list price
    (an unknown price counts 0)."""
    return needs.input_tokens * (route.price_prompt_usd or 0.0) + needs.output_tokens * (route.price_completion_usd or 0.0)


# The start of ``rejection_reason``'s answer for a route whose context is too small.
_CONTEXT_SHORT = "context "


def rejections_text(rejected: Mapping[str, str]) -> str:
    """Route name -> why it was passed over, for a person: each distinct reason once with
    the routes it covers (at most three named), "" when there are none."""
    groups: dict[str, list[str]] = {}
    for name, reason in rejected.items():
        groups.setdefault(reason, []).append(name)
    return "; ".join(f"{reason} ({len(names)} route{'' if len(names) == 1 else 's'}: {', '.join(names[:3])}"
                     f"{', ...' if len(names) > 3 else ''})" for reason, names in groups.items())


def suppressed_message(rejected: Mapping[str, str], suppressed: Iterable[str], tried: Iterable[str] = ()) -> str:
    """Why no route may be called now, for the 503 ``all_routes_suppressed``, with its
    causes apart so on-call staff read it at a glance: the routes ``suppressed`` by their
    breakers, each named with why (``circuit breaker open (transient)``); the routes
    ``tried`` already; then those not capable of the request (or not allowed it: the
    ignore list, the caller's provider preferences), counted per reason (``no tool use:
    15``), since they are often many and the same. ``rejected``: route name -> why it was
    passed over."""
    tried = set(tried)
    blocked = [name for name in rejected if name in set(suppressed) - tried]
    others: dict[str, int] = {}
    for name, reason in rejected.items():
        if name not in blocked and name not in tried:
            others[reason] = others.get(reason, 0) + 1
    text = "every capable route is suppressed by its circuit breaker. Suppressed by breakers: " + (
        "; ".join(f"{name}: {rejected[name].removeprefix('circuit breaker ')}" for name in blocked) or "none")
    if tried:
        text += f". Tried already: {', '.join(sorted(tried))}"
    if others:
        count = sum(others.values())
        text += (f". Not capable: {count} route{'' if count == 1 else 's'} ("
                 + "; ".join(f"{reason}: {n}" for reason, n in sorted(others.items(), key=lambda kv: (-kv[1], kv[0]))) + ")")
    return text


def passed_over(message: str, misfits: Mapping[str, str]) -> str:
    """``message`` with the routes the caller's provider preferences passed over and why
    (route name -> reason) added, for the request's record even when another route served."""
    return "; ".join(filter(None, [message, f"passed over for the provider preferences: {rejections_text(misfits)}"]))


def no_route_message(contract_key: str, rejected: Mapping[str, str], needs: RequestNeeds) -> str:
    """Why no route may serve a request, for its 422: ``rejections_text``, then, when every
    route lacks the context, what the caller can change (``max_tokens``)."""
    text = f"no route satisfies contract {contract_key}: " + (rejections_text(rejected) or "it has no routes")
    if rejected and needs.output_tokens and all(r.startswith(_CONTEXT_SHORT) for r in rejected.values()):
        text += (f". The prompt and max_tokens ({needs.output_tokens}) need more context than any route has: "
                 "lower max_tokens")
    return text


def rejection_reason(
    route: RouteProfile,
    contract: Contract,
    needs: RequestNeeds,
    *,
    budget_left_usd: float | None,
    ignored: frozenset[str] = frozenset(),
    min_structured_honoured: float = DEFAULT_MIN_STRUCTURED_HONOURED,
) -> str | None:
    """Why ``route`` may not serve this request under ``contract``; None when it may."""
    missing = (needs.modalities | set(contract.modalities)) - route.modalities
    if missing:
        return f"modalities {sorted(missing)} not supported"
    wanted_context = max(contract.min_context, needs.input_tokens + needs.output_tokens)
    if route.context_length < wanted_context:
        return f"{_CONTEXT_SHORT}{route.context_length} < {wanted_context} tokens needed"
    if contract.tools and not route.tools:
        return "no tool use"
    if contract.output_mode != OutputMode.NONE:
        if contract.output_mode not in route.output_modes:
            return f"output mode {contract.output_mode} not advertised"
        honoured = route.structured_honoured
        if contract.output_mode == OutputMode.JSON_SCHEMA and honoured is not None and honoured < min_structured_honoured:
            return f"json_schema advertised but honoured in {honoured:.0%} of canary probes"
    if contract.model_classes and route.model_class not in contract.model_classes:
        return f"model class {route.model_class!r} not allowed"
    if contract.regions and route.region not in contract.regions:
        return f"region {route.region!r} not allowed"
    if budget_left_usd is not None and estimated_cost_usd(route, needs) > budget_left_usd:
        return f"estimated cost {estimated_cost_usd(route, needs):.6f} USD exceeds the {budget_left_usd:.6f} USD left"
    if route.provider_tag and ignored and covered(route.provider_tag, ignored):
        # The one ignore rule (core.ignore_rule): a slug leaves its service tiers routable.
        return "on the ignore list"
    return None


def rank(routes: Iterable[RouteProfile]) -> list[RouteProfile]:
    """Best first: health (in 5 % bands, so noise does not reorder), then latency
    (unmeasured routes after measured ones), then price per token (unknown after known),
    then name."""

    def key(route: RouteProfile) -> tuple[float, float, float, str]:
        latency = route.latency_ms if route.latency_ms is not None else math.inf
        prompt, completion = route.price_prompt_usd, route.price_completion_usd
        price = math.inf if prompt is None or completion is None else prompt + completion
        return (-round(route.health * 20), latency, price, route.name)

    return sorted(routes, key=key)


def candidates(
    routes: Iterable[RouteProfile],
    contract: Contract,
    needs: RequestNeeds,
    *,
    budget_left_usd: float | None,
    ignored: frozenset[str] = frozenset(),
    min_structured_honoured: float = DEFAULT_MIN_STRUCTURED_HONOURED,
) -> tuple[list[RouteProfile], dict[str, str]]:
    """Filter then rank. Returns (eligible routes best first, {route name: why rejected})."""
    eligible: list[RouteProfile] = []
    rejected: dict[str, str] = {}
    for route in routes:
        reason = rejection_reason(
            route, contract, needs, budget_left_usd=budget_left_usd, ignored=ignored,
            min_structured_honoured=min_structured_honoured,
        )
        if reason is None:
            eligible.append(route)
        else:
            rejected[route.name] = reason
    return rank(eligible), rejected


def fitting(ranked: Sequence[RouteProfile], constraints: ProviderConstraints) -> tuple[list[RouteProfile], dict[str, tuple[str, str]]]:
    """``ranked`` (order kept) without the routes whose known endpoint facts break the
    client's provider preferences (``routing.provider_prefs``); also {route name: (the
    field it breaks, why)} for those left out."""
    kept: list[RouteProfile] = []
    misfits: dict[str, tuple[str, str]] = {}
    for route in ranked:
        misfit = route_misfit(constraints, price_prompt_usd=route.price_prompt_usd, price_completion_usd=route.price_completion_usd,
                              quantization=route.quantization, pinned=bool(route.provider_tag))
        if misfit is None:
            kept.append(route)
        else:
            misfits[route.name] = misfit
    return kept, misfits
