"""Per-request attribution: is a failed check the route's fault or the request's? Pure.

A check the request parameterises can fail on every route for the request's sake: a
language the caller asked for (its ``X-Expected-Language`` header, or one read from its
conversation) that the conversation does not support, ``stop: ["*"]`` cutting a roleplay
reply at its first narration mark, the caller's tools, its own ``max_tokens``. Charged to
the routes, about fifty such requests from one token holder opened every breaker and the
gateway answered 503 to every other client. The rule (routing/README.md, "What the request
causes"):

- a failure is *parameterised* when it is an invalid reply (a rejected prefix, a failed
  validation, a rejection after the commit point) and one of the request's own
  parameters could explain it (``parameterised_by``);
- a parameterised failure counts against its route only when a peer passes the same
  request (another route's answer to it is accepted: the request was servable, so the
  route was at fault) or the route's record already shows the same check failing on
  requests that were charged (``BreakerStore.shows``);
- otherwise it is neutral: neither a failure nor a success (a half-open breaker stays
  half-open), and the request's own failure is answered to its caller alone.

The client's ``provider`` preferences explain an upstream's refusal the same way: with
each route pinned to one endpoint, a quantization or price limit the endpoint cannot
meet comes back as OpenRouter's 404 ("No allowed providers are available", "No endpoints
found for ...") or a 400/422 about the ``provider`` field, on every route alike
(``provider_causes``). When every attempt of a request failed for the request's sake,
``request_fault`` says which parameter to change: the caller gets a 422 naming it.

``Deferred`` keeps a request's parameterised failures until the chain knows whether a
peer passed. A failure no parameter explains (a transport error, mojibake under no
language, an empty reply with zero completion tokens) is the route's as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from canary.verdicts import Verdict
from routing.failures import Failure, FailureClass
from routing.terms import FailureReason, FinishReason, LanguageSource

# Failure reasons of a reply the gateway judged and refused (``routing.failures``,
# ``routing.gateway.attempts``): only these can follow from the request's parameters.
JUDGED_REASONS = frozenset({FailureReason.VALIDATION, FailureReason.PREFIX_REJECTED,
                            FailureReason.TRUNCATED_BY_MAX_TOKENS, FailureReason.EMPTY_REPLY})

# Checks of broken text that no request parameter can cause (routing.live_checks): a
# failure with one of them is the route's whatever else failed beside it.
ROUTE_ONLY_CHECKS = frozenset({"mojibake", "encoding", "invalid_chars", "leading_garbage", "template_leak",
                               "bpe_glyphs", "repetition"})

# Refusals an upstream answers when no endpoint meets the request's provider preferences:
# the reasons ``routing.failures.classify_http`` gives OpenRouter's 404s and 400/422s
# (docs/sources/openrouter-api.md, "Errors" and "Provider routing"), and their statuses.
PROVIDER_REASONS = frozenset({
    FailureReason.UNKNOWN_MODEL, FailureReason.ENDPOINT_UNAVAILABLE, FailureReason.UNSUPPORTED,
    FailureReason.MALFORMED_REQUEST, "no_endpoints", "not_found", "unprocessable", "constraint_filtered",
    "invalid_request",  # vocabulary: OpenRouter's error type
})
PROVIDER_STATUSES = frozenset({400, 404, 422})
# Which preference each of OpenRouter's refusals points at when the route is pinned
# (``only``): its filters run only -> quantizations ("No allowed providers") -> max_price
# ("No endpoints found for <model>") -> require_parameters ("... can handle the requested
# parameters"); OpenRouter's API docs, "Provider routing".
_PROVIDER_WORDING = (
    ("no allowed providers", "quantizations"),
    ("no endpoints found for", "max_price"),
    ("can handle the requested parameters", "require_parameters"),
)
# OpenRouter's ``excluded_by`` names (its availability errors) -> the provider key that
# sets that filter; ``allowed_providers`` is the gateway's own pin (the route's).
_EXCLUDED_BY = {"max_price": "max_price", "quantization": "quantizations", "require_parameters": "require_parameters",
                "data_policy:zdr": "zdr", "data_policy:training": "data_collection"}
# Where each request parameter is set, for the caller's 422: (kind, name) with kind
# "field" (a body path) or "header".
_LANGUAGE_HEADER = ("header", "X-Expected-Language")
# The check a provider preference fails: no endpoint met it (the fault's ``check``).
PROVIDER_CHECK = "provider_preferences"


@dataclass(frozen=True)
class RequestParams:
    """The parameters of a request that change what a correct reply looks like:
    ``language`` the expected language came from the request (header or conversation),
    not the contract; ``stop`` it sets stop sequences; ``tools`` it sends its own tools
    or tool_choice; ``max_tokens`` it sets its own output cap; ``provider`` the keys of
    its own provider preferences (``routing.request_check.PROVIDER_KEYS``)."""

    language: bool = False
    stop: bool = False
    tools: bool = False
    max_tokens: bool = False
    provider: tuple[str, ...] = ()

    @classmethod
    def of(cls, body: Mapping[str, Any], *, request_language: bool) -> RequestParams:
        """The parameters ``body`` (a checked chat request) sets; ``request_language``:
        the expected language is the request's, not the contract's."""
        stop = body.get("stop")
        provider = body.get("provider")
        return cls(
            language=request_language,
            stop=bool(stop) if isinstance(stop, str | list) else False,
            tools=bool(body.get("tools")) or body.get("tool_choice") is not None,
            max_tokens=any(isinstance(body.get(k), int) for k in ("max_tokens", "max_completion_tokens")),
            provider=tuple(sorted(provider)) if isinstance(provider, Mapping) else (),
        )

    @property
    def any(self) -> bool:
        return self.language or self.stop or self.tools or self.max_tokens or bool(self.provider)


def provider_causes(failure: Failure, keys: tuple[str, ...]) -> tuple[str, ...]:
    """The request's provider preferences (``provider.<key>``) that explain ``failure``, an
    upstream's refusal; empty when none does (the route's). ``keys``: those the client
    sent. OpenRouter's typed availability error names the filters (``excluded_by``): the
    client's among them explain it. Else a 404 explains only the preference its wording
    points at (``_PROVIDER_WORDING``) when the client sent it: "No allowed providers" without a client's ``quantizations``
    is a pinned endpoint gone, the route's. A 400/422 explains the keys its message
    names (``provider.sort: expected ...``), none when it names none."""
    if not keys or failure.http_status not in PROVIDER_STATUSES or failure.reason not in PROVIDER_REASONS:
        return ()
    if failure.excluded_by:
        # The typed error says which filters left no endpoint: the client's among them.
        sent = [_EXCLUDED_BY[n] for n in failure.excluded_by if _EXCLUDED_BY.get(n) in keys]
        return tuple(f"provider.{k}" for k in dict.fromkeys(sent))
    text = failure.message.casefold()
    for words, key in _PROVIDER_WORDING:
        if words in text:
            return (f"provider.{key}",) if key in keys else ()
    if failure.http_status == 404:
        return ()
    # Only a message naming the key: "Provider returned error" is OpenRouter's wrapper of
    # any host's 400, not a word about the client's preferences (the captured 400s).
    return tuple(f"provider.{k}" for k in keys if k.casefold() in text)


def failed_checks(checks: Mapping[str, str]) -> list[str]:
    """The names of the checks that failed (``prefix.language`` -> ``language``)."""
    return [key.rpartition(".")[2] for key, verdict in checks.items() if verdict == Verdict.FAIL]


def parameterised_by(failure: Failure, params: RequestParams, *, checks: Mapping[str, str],
                     finish_reason: str | None, has_tool_calls: bool) -> tuple[str, ...]:
    """The request parameters that could explain ``failure`` ("language", "stop",
    "tools", "max_tokens", "provider.<key>"); empty when none can (the route's).

    ``checks``: the attempt's check verdicts (``prefix.<check>``, ``post.<check>``,
    ``answer.<check>``); ``finish_reason`` and ``has_tool_calls`` of the reply (None/False
    when no reply arrived). A refusal the client's provider preferences explain gives
    ``provider.<key>`` (``provider_causes``)."""
    by_provider = provider_causes(failure, params.provider)
    if by_provider:
        return by_provider
    if failure.cls != FailureClass.INVALID_RESPONSE or failure.reason not in JUDGED_REASONS or not params.any:
        return ()
    failed = failed_checks(checks)
    if any(name in ROUTE_ONLY_CHECKS for name in failed):
        # Broken text no parameter makes (a mojibake reply also reads as another
        # language): the route's, and never a 422 telling the caller to change its request.
        return ()
    causes: list[str] = []
    if params.language and any(name.startswith("language") for name in failed):
        causes.append("language")
    if params.stop:
        # A stop sequence ends the reply wherever it appears: short, empty, unterminated
        # JSON, missing fields, a prefix cut to nothing all follow from it.
        causes.append("stop")
    if params.tools and (has_tool_calls or "tool_calls" in failure.message):
        causes.append("tools")
    if params.max_tokens and finish_reason == FinishReason.LENGTH:
        causes.append("max_tokens")
    return tuple(causes)


def check_name(failure: Failure, checks: Mapping[str, str]) -> str:
    """What failed, in one word, for the breaker's record: the first failed check's name,
    else the failure's reason (``validation``, ``http_503``)."""
    failed = failed_checks(checks)
    return failed[0] if failed else failure.reason


@dataclass
class Deferred:
    """A request's parameterised failures, not yet charged: (route, failure class,
    detail) each; ``settle(peer_passed)`` says which to charge."""

    pending: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)

    def add(self, route: str, cls: str, detail: dict[str, Any]) -> None:
        self.pending.append((route, cls, detail))

    def settle(self, peer_passed: bool) -> list[tuple[str, str, dict[str, Any]]]:
        """The failures to charge now: all of them when a peer passed the same request,
        none otherwise (they stay neutral). Empties the list either way."""
        out, self.pending = (self.pending if peer_passed else []), []
        return out


def parameter_place(cause: str, body: Mapping[str, Any], language_source: str) -> tuple[str, str]:
    """Where the caller set the parameter ``cause`` (from ``parameterised_by``): ("header",
    "X-Expected-Language") or ("field", a body path: ``stop``, ``max_completion_tokens``,
    ``tool_choice``, ``provider.quantizations``; ``messages`` when the expected language
    was read from the conversation)."""
    if cause == "language":
        return _LANGUAGE_HEADER if language_source == LanguageSource.HEADER else ("field", "messages")
    if cause == "max_tokens":
        return "field", "max_tokens" if isinstance(body.get("max_tokens"), int) else "max_completion_tokens"
    if cause == "tools":
        return "field", "tools" if body.get("tools") else "tool_choice"
    return "field", cause


def request_fault(causes: list[tuple[str, ...]], checks: list[str], body: Mapping[str, Any],
                  language_source: str) -> dict[str, Any] | None:
    """What a 422 says when every attempt failed for the request's sake: ``causes`` per
    failed attempt (each non-empty, else None: a route failed for its own reason),
    ``checks`` the check each failed (``check_name``). Returns ``{"field" | "header":
    where to change it, "parameter": the cause, "parameters": every cause seen,
    "check": the failed check}``; the parameter named is one every attempt shares when
    there is one, else the first attempt's."""
    if not causes or not all(causes):
        return None
    shared = [c for c in causes[0] if all(c in other for other in causes[1:])]
    cause = (shared or list(causes[0]))[0]
    kind, name = parameter_place(cause, body, language_source)
    every = list(dict.fromkeys(c for per in causes for c in per))
    # OpenRouter's refusal says no endpoint passed its filter, whatever reason it maps to.
    check = PROVIDER_CHECK if cause.startswith("provider.") else (checks[-1] if checks else "")
    return {kind: name, "parameter": cause, "parameters": every, "check": check}
