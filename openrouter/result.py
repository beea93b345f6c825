"""The typed result of one pinned chat call: a completed generation or a transport error.

Every chat call ends as a ``Call``: either COMPLETED (``Call.reply`` is a ``Completion``,
the text the canary's judges read) or a TRANSPORT ERROR with a ``transport_kind``
(table in ``TRANSPORT_KINDS``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

import httpx

from openrouter.endpoints import same_provider
from openrouter.errors import ErrorInfo, is_moderation_error, parse_retry_after
from openrouter.values import EXCERPT_CHARS, excerpt, usage_tokens

TransportKind = Literal[
    "connect", "timeout", "http_429", "http_5xx", "http_4xx", "moderation", "error_chunk", "reset", "invalid_body", "too_large",
]

# What each kind means; the round runner maps all of them to the verdict
# ``transport_error`` (no evidence about output quality), except that the caller may
# treat ``moderation`` as the provider refusing content.
TRANSPORT_KINDS: Final[dict[str, str]] = {
    "connect": "TCP/TLS connection to OpenRouter could not be established",
    "timeout": "no response headers in time, a silent connection, or the total deadline passed",
    "http_429": "HTTP 429 rate limit (OpenRouter's or the pinned provider's)",
    "http_5xx": "HTTP 5xx (including 524/529) before the stream started",
    "http_4xx": "any other non-2xx status (400/401/402/404/..., unexpected 3xx)",
    "moderation": "HTTP 403 moderation: the provider's filter refused the content",
    "error_chunk": "an error inside a 200 response: SSE error chunk or error body",
    "reset": "connection closed before [DONE]/finish, or the SSE stream was cut mid-frame",
    "invalid_body": "a body or SSE data frame that is not the JSON we expect",
    "too_large": "the response or one of its lines exceeded the size cap; reading stopped at the cap",
}


@dataclass(frozen=True)
class Completion:
    """A completed generation, as it came off the wire.

    ``content`` is the assistant text (None when the provider sent null);
    ``finish_reason`` is OpenRouter's normalised value (``stop``, ``length``,
    ``content_filter``, ``tool_calls``, ``error``) or None; ``completion_tokens`` comes
    from ``usage`` (None when absent); ``max_tokens`` is what the request asked for;
    ``ttft_ms`` is the time from sending the request to the first non-empty content
    delta (None when no content arrived or the call was not streamed); ``total_ms`` is
    the whole call; ``stream_opened`` says the response had started (status 200 and
    headers received); ``refusal`` is ``message.refusal`` when the provider set it.
    """

    content: str | None
    finish_reason: str | None = "stop"
    reasoning: str | None = None
    refusal: str | None = None
    completion_tokens: int | None = None
    max_tokens: int | None = None
    ttft_ms: float | None = None
    total_ms: float | None = None
    stream_opened: bool = True


@dataclass(frozen=True)
class Call:
    """The classified outcome of one pinned chat request.

    ``outcome`` is ``"completed"`` (``reply`` is set) or ``"transport_error"`` (``reply``
    is None and ``transport_kind`` says why; see ``TRANSPORT_KINDS``). ``http_status`` is
    the response status when one arrived. ``error_message``/``error_raw`` come from the
    error object (``error_raw`` is ``metadata.raw`` as given: string, text or object).
    ``retry_after_s`` is the ``Retry-After`` header in seconds. ``serving_provider`` is
    the display name of the provider that answered (top-level ``provider``, else error
    ``metadata.provider_name``, else the ``X-Provider-Name`` header);
    ``provider_mismatch`` is True when it differs (case-insensitively) from the pinned
    endpoint's display name, and the caller then treats the call as no evidence about
    that endpoint. ``first_token_timeout`` is True when the stream opened but no content
    arrived within the TTFT limit (a COMPLETED call with ``reply.ttft_ms=None``).
    ``generation_id`` is the body ``id`` or the ``X-Generation-Id`` header. ``usage`` is
    the last usage object as sent. ``total_ms`` is the whole call in milliseconds;
    ``ttft_ms`` the time from sending the request to the first non-empty content delta
    (None when none arrived or the call was not streamed). ``body_excerpt`` is a short
    excerpt (``openrouter.values.excerpt``, 300 characters) of what came back when the
    call failed with a body: the error body of a non-2xx status or an HTTP-200 error, the
    body or SSE data frame that did not parse, the last data frame before a stream broke.
    ``wait_ms`` is the time the call spent on our side before its request was on the
    wire (the hand-off to the event loop, the local connection pool, the TCP connect), in
    ms, kept out of ``ttft_ms`` and ``total_ms``, which count from the request's sending;
    None when the client does not measure it (the httpx client's clock starts before its
    pool wait).
    """

    outcome: Literal["completed", "transport_error"]
    reply: Completion | None
    transport_kind: str | None
    http_status: int | None
    error_message: str | None
    error_raw: Any
    retry_after_s: float | None
    serving_provider: str | None
    provider_mismatch: bool
    first_token_timeout: bool
    generation_id: str | None
    usage: dict[str, Any] | None
    total_ms: float
    ttft_ms: float | None
    body_excerpt: str | None = None
    wait_ms: float | None = None


@dataclass
class CallContext:
    """Per-call facts the classifier needs (one per chat call); ``clock`` is monotonic s,
    ``start`` the instant the request was sent, ``wait_ms`` the time before that on our
    side (``Call.wait_ms``)."""

    start: float
    clock: Callable[[], float]
    expected_provider: str | None
    max_tokens: int
    http_status: int | None = None
    header_generation_id: str | None = None
    header_provider: str | None = None
    retry_after_s: float | None = None
    wait_ms: float | None = None

    def elapsed_ms(self) -> float:
        return (self.clock() - self.start) * 1000.0

    def take_headers(self, response: httpx.Response) -> None:
        self.take_status(response.status_code, response.headers)

    def take_status(self, status: int, headers: Mapping[str, str]) -> None:
        """The status and the headers the classifier reads (a case-insensitive mapping)."""
        self.http_status = status
        self.header_generation_id = headers.get("x-generation-id") or None
        self.header_provider = headers.get("x-provider-name") or None
        self.retry_after_s = parse_retry_after(headers.get("retry-after"))

    def call(
        self,
        *,
        reply: Completion | None = None,
        kind: TransportKind | None = None,
        error: ErrorInfo | None = None,
        message: str | None = None,
        provider: str | None = None,
        generation_id: str | None = None,
        usage: dict[str, Any] | None = None,
        ttft_ms: float | None = None,
        first_token_timeout: bool = False,
        total_ms: float | None = None,
        body: bytes | str | None = None,
    ) -> Call:
        """The ``Call``: completed when ``reply`` is given, else a transport error of
        ``kind``; ``body`` (raw bytes or a decoded frame) becomes the ``body_excerpt``."""
        serving = provider or (error.provider_name if error else None) or self.header_provider
        mismatch = serving is not None and self.expected_provider is not None and not same_provider(serving, self.expected_provider)
        return Call(
            outcome="completed" if reply is not None else "transport_error",
            reply=reply,
            transport_kind=None if reply is not None else kind,
            http_status=self.http_status,
            error_message=message if message is not None else (error.message if error else None),
            error_raw=error.raw if error else None,
            retry_after_s=self.retry_after_s,
            serving_provider=serving,
            provider_mismatch=mismatch,
            first_token_timeout=first_token_timeout,
            generation_id=generation_id or self.header_generation_id,
            usage=usage,
            total_ms=total_ms if total_ms is not None else self.elapsed_ms(),
            ttft_ms=ttft_ms,
            body_excerpt=body_excerpt_of(body),
            wait_ms=self.wait_ms,
        )


def body_excerpt_of(body: bytes | str | None) -> str | None:
    """A short, whitespace-collapsed excerpt of ``body`` (bytes decoded as UTF-8 with
    replacement), or None when there is nothing to show."""
    if body is None:
        return None
    text = body[:4 * EXCERPT_CHARS].decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    return excerpt(text) or None


def completion_tokens(usage: dict[str, Any] | None) -> int | None:
    """``usage.completion_tokens`` as a count (``usage_tokens``), or None."""
    return usage_tokens(usage.get("completion_tokens")) if usage else None


def status_kind(status: int, error: ErrorInfo) -> TransportKind:
    """The transport kind of a non-2xx status."""
    if status == 429:
        return "http_429"
    if status >= 500:
        return "http_5xx"
    if is_moderation_error(status, error):
        return "moderation"
    return "http_4xx"
