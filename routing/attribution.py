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
from routing.terms import FailureReason, FinishReason

# Failure reasons of a reply the gateway judged and refused (``routing.failures``,
# ``routing.gateway.attempts``): only these can follow from the request's parameters.
JUDGED_REASONS = frozenset({FailureReason.VALIDATION, FailureReason.PREFIX_REJECTED,
                            FailureReason.TRUNCATED_BY_MAX_TOKENS, FailureReason.EMPTY_REPLY})


@dataclass(frozen=True)
class RequestParams:
    """The parameters of a request that change what a correct reply looks like:
    ``language`` the expected language came from the request (header or conversation),
    not the contract; ``stop`` it sets stop sequences; ``tools`` it sends its own tools
    or tool_choice; ``max_tokens`` it sets its own output cap."""

    language: bool = False
    stop: bool = False
    tools: bool = False
    max_tokens: bool = False

    @classmethod
    def of(cls, body: Mapping[str, Any], *, request_language: bool) -> RequestParams:
        """The parameters ``body`` (a checked chat request) sets; ``request_language``:
        the expected language is the request's, not the contract's."""
        stop = body.get("stop")
        return cls(
            language=request_language,
            stop=bool(stop) if isinstance(stop, str | list) else False,
            tools=bool(body.get("tools")) or body.get("tool_choice") is not None,
            max_tokens=any(isinstance(body.get(k), int) for k in ("max_tokens", "max_completion_tokens")),
        )

    @property
    def any(self) -> bool:
        return self.language or self.stop or self.tools or self.max_tokens


def failed_checks(checks: Mapping[str, str]) -> list[str]:
    """The names of the checks that failed (``prefix.language`` -> ``language``)."""
    return [key.rpartition(".")[2] for key, verdict in checks.items() if verdict == Verdict.FAIL]


def parameterised_by(failure: Failure, params: RequestParams, *, checks: Mapping[str, str],
                     finish_reason: str | None, has_tool_calls: bool) -> tuple[str, ...]:
    """The request parameters that could explain ``failure`` ("language", "stop",
    "tools", "max_tokens"); empty when none can (the failure is the route's).

    ``checks``: the attempt's check verdicts (``prefix.<check>``, ``post.<check>``,
    ``answer.<check>``); ``finish_reason`` and ``has_tool_calls`` of the reply (None/False
    when no reply arrived)."""
    if failure.cls != FailureClass.INVALID_RESPONSE or failure.reason not in JUDGED_REASONS or not params.any:
        return ()
    failed = failed_checks(checks)
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
