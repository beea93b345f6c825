"""Failure classes: every attempt outcome maps to exactly one.

Pure: no Django, no HTTP. The upstream reader (``routing/gateway/upstream.py``) reports *what it
saw* as a ``Signal``; ``classify`` says *what it means* for the chain:

=================  ===========================================================  ==========  ========  ========
class              examples                                                     same-route  fallback  breaker
=================  ===========================================================  ==========  ========  ========
permanent          401/403 auth, 402 payment (blame: account); 400 malformed    never       route     route
                   request (blame: client); unknown model, no such endpoint     (never)     blame     blame
                   (blame: route)                                                           only      only
transient          429, 5xx, 408, connect failure, timeout/reset/error chunk    early       yes       yes
                   before any output                                            connect
                                                                                only
incompatible       context overflow, unsupported parameter or modality,        never       yes       no
                   413, moderation refusal: whatever the wording
invalid_response   unparseable body, validation failed (``validation.py``),     never       yes       yes
                   an HTML page as a 200 event stream (``malformed_body``)
ambiguous          connection or stream failed after output was produced       never       only if   yes
                   (billable, maybe acted on)                                               no side
                                                                                            effects
=================  ===========================================================  ==========  ========  ========

"Early connect" = the TCP connection could not be set up, so the request never left and no
output can have been billed: the only case with an extra same-route retry (issue point 5).
``blame`` decides whether the route's circuit breaker counts it: a client's malformed
request never does (issue point 8; field case 4).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from openrouter.errors import ErrorInfo, is_moderation_error
from routing.terms import Blame, FailureReason, SignalKind


class FailureClass(StrEnum):
    """The five failure classes of the issue, point 3 (the table above): ``Failure.cls``,
    the ``failure_class`` of request and attempt events, of an error body and of the
    attempt metrics, and the failure class a route's circuit breaker counts per class
    (the ``<class>:`` fields of its Redis hash, ``routing.breaker``)."""

    PERMANENT = "permanent"
    TRANSIENT = "transient"
    INCOMPATIBLE = "incompatible"
    INVALID_RESPONSE = "invalid_response"
    AMBIGUOUS = "ambiguous"


@dataclass(frozen=True)
class Signal:
    """What the HTTP layer observed for one failed attempt.

    ``output_seen``: at least one content or tool-call delta arrived (output was produced
    and may be billed). ``retry_after_s``: the ``Retry-After`` header, seconds.
    """

    kind: SignalKind
    output_seen: bool = False
    http_status: int | None = None
    error: ErrorInfo | None = None
    retry_after_s: float | None = None
    message: str = ""


@dataclass(frozen=True)
class Failure:
    """One classified failure. ``reason`` is a short machine code: a ``FailureReason``
    (``first_token_timeout``, ``context_overflow``, ``validation`` ...), OpenRouter's typed
    code, ``http_<status>`` or ``<kind>_after_output``; ``message`` is for
    people. ``early_connect`` marks a failure before the request left (safe to retry on the
    same route). ``retry_after_s`` is the provider's Retry-After (seconds) when given.
    ``excluded_by``: the filters OpenRouter's availability error says left no endpoint
    (``max_price``, ``quantization``, ``require_parameters`` ...; docs/sources/openrouter-api.md,
    "Errors"), empty when it says none."""

    cls: FailureClass
    reason: str
    message: str
    blame: Blame = Blame.ROUTE
    http_status: int | None = None
    retry_after_s: float | None = None
    early_connect: bool = False
    excluded_by: tuple[str, ...] = ()

    @property
    def counts_against_route(self) -> bool:
        """True when the route's circuit breaker records this failure (issue point 8)."""
        return self.blame == Blame.ROUTE and self.cls != FailureClass.INCOMPATIBLE


# OpenRouter's typed ``error_type`` / availability ``code`` (docs/sources/openrouter-api.md, "Errors").
_TYPED: dict[str, tuple[FailureClass, Blame]] = {
    "context_length_exceeded": (FailureClass.INCOMPATIBLE, Blame.ROUTE),
    "max_tokens_exceeded": (FailureClass.INCOMPATIBLE, Blame.ROUTE),
    "token_limit_exceeded": (FailureClass.INCOMPATIBLE, Blame.ROUTE),
    "string_too_long": (FailureClass.INCOMPATIBLE, Blame.ROUTE),
    "payload_too_large": (FailureClass.INCOMPATIBLE, Blame.ROUTE),  # vocabulary: OpenRouter's error type
    "invalid_image": (FailureClass.INCOMPATIBLE, Blame.ROUTE),
    "image_too_large": (FailureClass.INCOMPATIBLE, Blame.ROUTE),
    "image_too_small": (FailureClass.INCOMPATIBLE, Blame.ROUTE),
    "unsupported_image_format": (FailureClass.INCOMPATIBLE, Blame.ROUTE),
    "image_download_failed": (FailureClass.INCOMPATIBLE, Blame.ROUTE),
    "content_policy_violation": (FailureClass.INCOMPATIBLE, Blame.ROUTE),
    "refusal": (FailureClass.INCOMPATIBLE, Blame.ROUTE),
    "constraint_filtered": (FailureClass.INCOMPATIBLE, Blame.ROUTE),
    "authentication": (FailureClass.PERMANENT, Blame.ACCOUNT),  # vocabulary: OpenRouter's error type
    "permission_denied": (FailureClass.PERMANENT, Blame.ACCOUNT),  # vocabulary: OpenRouter's error type
    "payment_required": (FailureClass.PERMANENT, Blame.ACCOUNT),  # vocabulary: OpenRouter's error type
    "invalid_request": (FailureClass.PERMANENT, Blame.CLIENT),  # vocabulary: OpenRouter's error type
    "invalid_prompt": (FailureClass.PERMANENT, Blame.CLIENT),
    "unprocessable": (FailureClass.PERMANENT, Blame.CLIENT),
    "precondition_failed": (FailureClass.PERMANENT, Blame.CLIENT),
    "not_found": (FailureClass.PERMANENT, Blame.ROUTE),
    "model_not_found": (FailureClass.PERMANENT, Blame.ROUTE),
    "wrong_endpoint": (FailureClass.PERMANENT, Blame.ROUTE),
    "no_endpoints": (FailureClass.PERMANENT, Blame.ROUTE),
    "model_deprecated": (FailureClass.PERMANENT, Blame.ROUTE),
    "model_unavailable_upstream": (FailureClass.TRANSIENT, Blame.ROUTE),
    "region_restricted": (FailureClass.INCOMPATIBLE, Blame.ROUTE),
    "privacy_restricted": (FailureClass.INCOMPATIBLE, Blame.ROUTE),
    "free_variant_ended": (FailureClass.PERMANENT, Blame.ROUTE),
    "rate_limit_exceeded": (FailureClass.TRANSIENT, Blame.ROUTE),
    "capacity_exhausted": (FailureClass.TRANSIENT, Blame.ROUTE),
    "temporarily_unavailable": (FailureClass.TRANSIENT, Blame.ROUTE),
    "provider_overloaded": (FailureClass.TRANSIENT, Blame.ROUTE),
    "provider_unavailable": (FailureClass.TRANSIENT, Blame.ROUTE),
    "server": (FailureClass.TRANSIENT, Blame.ROUTE),
    "timeout": (FailureClass.TRANSIENT, Blame.ROUTE),
    "unmapped": (FailureClass.TRANSIENT, Blame.ROUTE),
}

# "Whatever the wording" (issue point 3): upstreams phrase the same incompatibility many
# ways (OpenAI, Anthropic, vLLM, llama.cpp, OpenRouter). Matched case-insensitively against
# the message and metadata.raw.
_CONTEXT_WORDS = re.compile(
    r"context[ _-]?(length|window|size)|maximum context|max(imum)?[ _]?(input|prompt)?[ _]?tokens"
    r"|too many tokens|prompt is too long|input is too long|exceeds? (the )?(model'?s? )?"
    r"(maximum|max|context|token)|reduce the length|token limit|input length",
    re.IGNORECASE,
)
_UNSUPPORTED_WORDS = re.compile(
    r"not support|unsupported|no endpoints found that can handle|does not accept"
    r"|cannot handle (image|audio|tool)|image input|modalit|not available for this model"
    r"|unknown parameter|unrecognized (request )?argument|extra inputs are not permitted",
    re.IGNORECASE,
)
_UNKNOWN_MODEL_WORDS = re.compile(
    r"is not a valid model|model[_ ]not[_ ]found|no allowed providers|unknown model"
    r"|model .* does not exist|invalid model",
    re.IGNORECASE,
)


def _error_text(error: ErrorInfo | None) -> str:
    if error is None:
        return ""
    raw = error.raw
    raw_text = raw if isinstance(raw, str) else (json.dumps(raw) if raw is not None else "")
    return f"{error.message or ''} {raw_text}"


def _typed_code(error: ErrorInfo | None) -> str | None:
    if error is None:
        return None
    if error.error_type:
        return error.error_type
    code = error.availability.get("code")
    return code if isinstance(code, str) else None


def _excluded_by(error: ErrorInfo | None) -> tuple[str, ...]:
    names = error.availability.get("excluded_by") if error is not None else None
    return tuple(n for n in names if isinstance(n, str)) if isinstance(names, list) else ()


def classify_http(
    status: int, error: ErrorInfo | None, *, retry_after_s: float | None = None
) -> Failure:
    """Classify a non-2xx answer (or an HTTP-200 error body: pass ``status`` = error.code).

    Order: OpenRouter's typed code when present, then the wording of message and raw
    body (so an untyped "maximum context length" 400 is incompatible, not a client error),
    then the status. Never raises.
    """
    message = (error.message if error else None) or f"HTTP {status}"
    typed = _typed_code(error)
    if typed in _TYPED:
        cls, blame = _TYPED[typed]
        return Failure(cls, typed, message, blame, status, retry_after_s, excluded_by=_excluded_by(error))
    text = _error_text(error)
    if status in (408, 429) or status >= 500:
        return Failure(FailureClass.TRANSIENT, f"http_{status}", message, Blame.ROUTE, status, retry_after_s)
    if status == 413 or _CONTEXT_WORDS.search(text):
        return Failure(FailureClass.INCOMPATIBLE, FailureReason.CONTEXT_OVERFLOW, message, Blame.ROUTE, status, retry_after_s)
    if _UNSUPPORTED_WORDS.search(text):
        return Failure(FailureClass.INCOMPATIBLE, FailureReason.UNSUPPORTED, message, Blame.ROUTE, status, retry_after_s)
    if status == 403 and error is not None and is_moderation_error(status, error):
        # One host's content filter refused: another host may serve it (LiteLLM's
        # content_policy_fallbacks, docs/sources/peers.md, "Retries and fallbacks"), and it says nothing about the host's health.
        return Failure(FailureClass.INCOMPATIBLE, FailureReason.MODERATION, message, Blame.ROUTE, status, retry_after_s)
    if status in (401, 402, 403):
        reason = {401: FailureReason.AUTHENTICATION, 402: FailureReason.PAYMENT_REQUIRED}.get(status, FailureReason.PERMISSION_DENIED)
        return Failure(FailureClass.PERMANENT, reason, message, Blame.ACCOUNT, status, retry_after_s)
    if status == 404 or _UNKNOWN_MODEL_WORDS.search(text):
        if "no endpoints found for" in text.casefold():
            # A pinned provider listed but momentarily unroutable (docs/sources/openrouter-api.md, "Errors": seen
            # when Groq was out of capacity): it comes back, so transient.
            return Failure(FailureClass.TRANSIENT, FailureReason.ENDPOINT_UNAVAILABLE, message, Blame.ROUTE, status, retry_after_s)
        return Failure(FailureClass.PERMANENT, FailureReason.UNKNOWN_MODEL, message, Blame.ROUTE, status, retry_after_s)
    return Failure(FailureClass.PERMANENT, FailureReason.MALFORMED_REQUEST, message, Blame.CLIENT, status, retry_after_s)


def classify(signal: Signal) -> Failure:
    """Map what the HTTP layer saw to a failure class (the table in the module docstring)."""
    if signal.kind == SignalKind.HTTP_ERROR:
        return classify_http(signal.http_status or 0, signal.error, retry_after_s=signal.retry_after_s)
    if signal.kind == SignalKind.CONNECT:
        return Failure(
            FailureClass.TRANSIENT, FailureReason.CONNECT, signal.message or "could not connect",
            early_connect=True,
        )
    if signal.kind in (SignalKind.INVALID_BODY, SignalKind.MALFORMED_BODY):
        # The route answered and what it sent is not the JSON we expect (an HTML page in a
        # 200 event stream included): its own fault, whatever output came before.
        reason = FailureReason.MALFORMED_BODY if signal.kind == SignalKind.MALFORMED_BODY else FailureReason.INVALID_BODY
        return Failure(FailureClass.INVALID_RESPONSE, reason, signal.message, http_status=signal.http_status)
    if signal.output_seen:
        # Output was produced and may be billed or already acted on: we cannot know what
        # the caller would have received (issue point 3, "ambiguous"; field case 7).
        return Failure(
            FailureClass.AMBIGUOUS, f"{signal.kind}_after_output", signal.message or signal.kind,
            http_status=signal.http_status,
        )
    if signal.kind == SignalKind.ERROR_BODY:
        code = signal.error.code if signal.error else None
        status = code if isinstance(code, int) and 400 <= code < 600 else 502
        failure = classify_http(status, signal.error, retry_after_s=signal.retry_after_s)
        if failure.cls == FailureClass.PERMANENT and failure.blame == Blame.CLIENT:
            # The request was accepted (200) before the error: the upstream, not the client,
            # failed (field case 6: an error chunk before content is transient).
            return Failure(FailureClass.TRANSIENT, FailureReason.ERROR_CHUNK, failure.message, http_status=200)
        return failure
    reason = FailureReason.FIRST_TOKEN_TIMEOUT if signal.kind == SignalKind.TIMEOUT else FailureReason(signal.kind)
    return Failure(FailureClass.TRANSIENT, reason, signal.message or signal.kind, http_status=signal.http_status)


def validation_failure(problems: list[str] | tuple[str, ...], *, caller_max_tokens: int | None = None) -> Failure:
    """The failure for an answer that arrived whole but broke the contract (issue point 7).
    ``caller_max_tokens``: the answer was cut at the request's own ``max_tokens`` (finish
    reason ``length``; ``request_check.caused_by_request``): the reason and the message
    say so (``truncated_by_max_tokens``), so the caller reads what to change."""
    message = "; ".join(problems)
    if caller_max_tokens is not None:
        message = f"cut at the request's own max_tokens ({caller_max_tokens}); raise it: {message}"
        return Failure(FailureClass.INVALID_RESPONSE, FailureReason.TRUNCATED_BY_MAX_TOKENS, message[:500])
    return Failure(FailureClass.INVALID_RESPONSE, FailureReason.VALIDATION, message[:500])


def empty_reply_failure(content: str | None, has_tool_calls: bool, usage: Mapping[str, Any] | None) -> Failure | None:
    """The failure of a reply that finished with no content, no tool call and zero
    completion tokens (``usage.completion_tokens == 0``): the host produced nothing. It is
    the route's (``invalid_response``, reason ``empty_reply``): the chain falls back to
    another route at once (never a same-route retry), and it is never read as a context
    overflow, whatever its finish reason says. None for any other reply."""
    if has_tool_calls or (content or "").strip():
        return None
    tokens = usage.get("completion_tokens") if usage else None
    if not (isinstance(tokens, int) and not isinstance(tokens, bool) and tokens == 0):
        return None
    return Failure(FailureClass.INVALID_RESPONSE, FailureReason.EMPTY_REPLY,
                   "the reply was empty: no content, no tool call, zero completion tokens")
