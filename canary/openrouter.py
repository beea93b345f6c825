"""The one OpenRouter client: endpoint discovery, provider-pinned chat calls, SSE parsing.

Pure Python, no Django: the base URL, API key, attribution headers and limits are
passed in by the caller (settings live in ``reverie_ops/settings.py``).

Three layers, top to bottom:

- ``OpenRouterClient``: one shared, thread-safe ``httpx.Client`` with no retries of
  its own (retry policy belongs to the caller, who knows the deadline budget).
  ``list_endpoints``, ``chat_pinned`` and ``get_generation``.
- Classification: every chat call ends as a ``Call`` that is either a COMPLETED
  generation (``Call.reply`` is a ``canary.verdicts.Reply`` the judges read) or a
  TRANSPORT ERROR with a ``transport_kind`` (table in ``TRANSPORT_KINDS``).
  ``chat_pinned`` never raises on what the network or upstream sends.
- Pure parsers, unit-testable without HTTP: ``parse_chat_body``,
  ``parse_sse_events``, ``StreamAccumulator``/``accumulate_stream``,
  ``parse_error_body``/``parse_error_object``, ``parse_endpoints_body``,
  ``parse_retry_after``.

Wire facts this code is written against (``tests/fixtures/captures/INDEX.md`` and
the project's OpenRouter reference): non-streaming bodies can start with
whitespace keep-alive padding; SSE streams carry ``: OPENROUTER PROCESSING``
comments before and between data frames; the final usage chunk comes in three
shapes; a mid-stream error can arrive with ``finish_reason: null`` and still be
followed by ``[DONE]``; provider display names have arbitrary casing.
"""

from __future__ import annotations

import http.cookiejar
import itertools
import json
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from email.utils import parsedate_to_datetime
from typing import Any, Final, Literal
from urllib.parse import quote

import httpx
from httpx_sse import EventSource, ServerSentEvent

from canary.verdicts import Reply

DEFAULT_REFERER: Final = "https://github.com/reverie-ops"
DEFAULT_TITLE: Final = "Reverie Ops canary"
DEFAULT_MAX_RESPONSE_BYTES: Final = 1024 * 1024  # 1 MiB: a probe reply is a few KB

TransportKind = Literal[
    "connect",
    "timeout",
    "http_429",
    "http_5xx",
    "http_4xx",
    "moderation",
    "error_chunk",
    "reset",
    "invalid_body",
    "too_large",
]

# What each kind means; the round runner maps all of them to the verdict
# ``transport_error`` (no evidence about output quality), except that the caller
# may treat ``moderation`` as the provider refusing content.
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
    "too_large": "the response exceeded the size cap; reading stopped at the cap",
}

_EXCERPT_CHARS: Final = 300


# --------------------------------------------------------------------------- errors


class OpenRouterError(Exception):
    """A non-chat request (discovery, generation lookup) failed.

    ``status`` is the HTTP status when a response arrived (None on connect
    failures and timeouts); ``body_excerpt`` is the first few hundred characters
    of the body.
    """

    def __init__(
        self, message: str, *, status: int | None = None, body_excerpt: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body_excerpt = body_excerpt


class DiscoveryError(OpenRouterError):
    """``GET /models/{author}/{slug}/endpoints`` failed or returned an unusable body."""


class GenerationError(OpenRouterError):
    """``GET /generation?id=`` failed or returned an unusable body."""


class GenerationNotFoundError(GenerationError):
    """``GET /generation`` answered 404.

    Often transient: OpenRouter returns 404 for about 0.5-1 s (or longer) right
    after a completion, so callers may retry later.
    """


class InvalidBodyError(ValueError):
    """A chat body or SSE data frame is not the JSON object we expect.

    Raised by the pure parsers; ``OpenRouterClient.chat_pinned`` turns it into a
    ``Call`` with ``transport_kind="invalid_body"``.
    """


# --------------------------------------------------------------------------- shapes


@dataclass(frozen=True)
class EndpointInfo:
    """One provider's deployment of a model, from ``/models/{author}/{slug}/endpoints``.

    ``tag`` is the routing address (``slug`` or ``slug/variant``) to put in
    ``provider.only``; responses before late May 2025 had no ``tag``, and then
    ``tag`` is the slug derived from the display name. ``provider_slug`` is the
    part of ``tag`` before ``/``. ``provider_name`` is the display name, with
    OpenRouter's casing ("xAI", "SambaNova"). ``pricing_prompt`` and
    ``pricing_completion`` are USD per token (None when absent or not a number).
    ``context_length`` and ``max_completion_tokens`` are tokens. ``status`` is
    OpenRouter's int code (0 normal; -2 seen with degraded uptime; others
    undocumented). ``raw`` is the endpoint object as sent.
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


@dataclass(frozen=True)
class ErrorInfo:
    """An OpenRouter error object, whatever shape it came in.

    ``code`` is ``error.code`` as sent (an int in every capture; the docs also
    show strings). ``message`` is ``error.message`` (or a body excerpt when the
    body was not JSON). ``raw`` is ``metadata.raw`` exactly as given: a
    JSON-encoded string, plain text, or an object. ``provider_name`` is
    ``metadata.provider_name`` (a display name, often null). ``error_type`` is
    ``metadata.error_type`` (newer typed shape). ``metadata`` is the whole
    metadata object ({} when absent).
    """

    code: int | str | None = None
    message: str | None = None
    raw: Any = None
    provider_name: str | None = None
    error_type: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ChatBody:
    """A parsed non-streaming chat completion body (``parse_chat_body``).

    ``error`` is set when the body is just ``{"error": {...}}`` or when
    ``choices[0].finish_reason == "error"`` (the upstream failed after the
    generation started; HTTP status is still 200). ``usage`` is the usage object
    as sent (``prompt_tokens``, ``completion_tokens``, ``total_tokens``, ``cost``
    in USD when present). ``provider`` is the serving provider's display name.
    """

    generation_id: str | None
    provider: str | None
    model: str | None
    content: str | None
    reasoning: str | None
    refusal: str | None
    finish_reason: str | None
    native_finish_reason: str | None
    usage: dict[str, Any] | None
    error: ErrorInfo | None


@dataclass(frozen=True)
class Call:
    """The classified outcome of one pinned chat request.

    ``outcome`` is ``"completed"`` (``reply`` is set and the judges read it) or
    ``"transport_error"`` (``reply`` is None and ``transport_kind`` says why; see
    ``TRANSPORT_KINDS``). ``http_status`` is the response status when one
    arrived. ``error_message``/``error_raw`` come from the error object
    (``error_raw`` is ``metadata.raw`` as given: string, text or object).
    ``retry_after_s`` is the ``Retry-After`` header in seconds.
    ``serving_provider`` is the display name of the provider that answered
    (top-level ``provider``, else error ``metadata.provider_name``, else the
    ``X-Provider-Name`` header); ``provider_mismatch`` is True when it differs
    (case-insensitively) from the pinned endpoint's display name, and the
    caller then treats the call as no evidence about that endpoint.
    ``first_token_timeout`` is True when the stream opened but no content
    arrived within the TTFT limit (a COMPLETED call with ``reply.ttft_ms=None``
    so the TTFT judge fails it). ``generation_id`` is the body ``id`` or the
    ``X-Generation-Id`` header. ``usage`` is the last usage object as sent.
    ``total_ms`` is the whole call in milliseconds; ``ttft_ms`` the time from
    sending the request to the first non-empty content delta (None when none
    arrived or the call was not streamed).
    """

    outcome: Literal["completed", "transport_error"]
    reply: Reply | None
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


# --------------------------------------------------------------------------- small pure helpers


def _excerpt(text: str, limit: int = _EXCERPT_CHARS) -> str:
    """Collapse whitespace and cut ``text`` to ``limit`` characters for messages."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int_or_none(value: Any) -> int | None:
    # bool is an int subclass; a JSON true is not a token count.
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _decimal_or_none(value: Any) -> Decimal | None:
    # Pricing is sent as strings ("0.00000125"); str() keeps floats exact enough
    # (Decimal(0.1) would carry binary noise).
    if value is None or isinstance(value, bool):
        return None
    try:
        result = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return result if result.is_finite() else None


def _content_text(value: Any) -> str | None:
    """``content`` as text: a string, or a list of ``{"type":"text","text":...}`` parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [p.get("text") for p in value if isinstance(p, dict)]
        strings = [t for t in texts if isinstance(t, str)]
        return "".join(strings) if strings else None
    return None


def slugify_provider(name: str) -> str:
    """Derive a routing slug from a provider display name.

    ``"Google AI Studio"`` → ``"google-ai-studio"``, ``"xAI"`` → ``"xai"``. Only
    used for endpoint lists older than the ``tag`` field; it cannot know that
    ``"Google"`` is routed as ``google-vertex``.
    """
    return re.sub(r"[^a-z0-9]+", "-", name.casefold()).strip("-")


def same_provider(a: str | None, b: str | None) -> bool:
    """Compare two provider display names case-insensitively ("SambaNova" == "sambanova")."""
    if a is None or b is None:
        return False
    return a.strip().casefold() == b.strip().casefold()


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Parse a ``Retry-After`` header into seconds (float, >= 0).

    Accepts delta-seconds (``"30"``, ``"1.5"``) or an HTTP date (seconds from
    ``now``, default the current UTC time). Returns None when absent or unparseable.
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if seconds != seconds or seconds in (float("inf"), float("-inf")):  # NaN/inf
        return None
    return max(0.0, seconds)


# --------------------------------------------------------------------------- error bodies


def parse_error_object(obj: Any) -> ErrorInfo:
    """Read one error object (the value of ``"error"``) into an ``ErrorInfo``.

    Accepts the documented ``{code, message, metadata{...}}``, the older
    ``metadata{raw, provider_name}`` shape, the 2025 Minimax chunk shape without
    metadata, and a bare string. Never raises.
    """
    if isinstance(obj, str):
        return ErrorInfo(message=obj)
    if not isinstance(obj, dict):
        return ErrorInfo(message=None if obj is None else _excerpt(repr(obj)))
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        metadata = {}
    code = obj.get("code")
    if isinstance(code, bool) or not isinstance(code, int | str):
        code = None
    error_type = _str_or_none(metadata.get("error_type")) or _str_or_none(obj.get("error_type"))
    return ErrorInfo(
        code=code,
        message=_str_or_none(obj.get("message")),
        raw=metadata.get("raw"),
        provider_name=_str_or_none(metadata.get("provider_name")),
        error_type=error_type,
        metadata=metadata,
    )


def parse_error_body(raw: bytes) -> ErrorInfo:
    """Parse an error response body (any status) into an ``ErrorInfo``.

    Accepts the envelope ``{"error": {...}, "user_id": ...}``, a bare error
    member ``{"message", "code", "metadata"}`` (as clients print mid-stream
    errors), and non-JSON bodies (an HTML 502 page): then ``message`` is an
    excerpt of the text. Invalid UTF-8 is replaced, never raised. Never raises.
    """
    text = raw.decode("utf-8", errors="replace").strip()
    if not text:
        return ErrorInfo()
    try:
        obj = json.loads(text)
    except ValueError:
        return ErrorInfo(message=_excerpt(text))
    if isinstance(obj, dict):
        if "error" in obj:
            return parse_error_object(obj["error"])
        if "message" in obj or "code" in obj:
            return parse_error_object(obj)
    return ErrorInfo(message=_excerpt(text))


def is_moderation_error(status: int, error: ErrorInfo) -> bool:
    """True for a 403 that is a moderation refusal (not a guardrail or a permission error).

    OpenRouter's moderation 403 carries ``metadata.reasons`` and
    ``metadata.flagged_input``; the guardrail 403 carries ``metadata.patterns``
    instead, and a permission 403 neither.
    """
    if status != 403:
        return False
    meta = error.metadata
    if "reasons" in meta or "flagged_input" in meta:
        return True
    message = (error.message or "").casefold()
    return "moderation" in message or "flagged" in message


# --------------------------------------------------------------------------- non-streaming bodies


def _decode_json_object(raw: bytes, what: str) -> dict[str, Any]:
    # Invalid UTF-8 is replaced rather than rejected: a stray byte inside the
    # content must not hide the whole reply from the judges. The JSON itself
    # must still parse. Leading whitespace padding ("\n" + spaces + "\n" units,
    # sent while OpenRouter waits upstream) is legal JSON whitespace; strip it
    # anyway so a body of only padding reads as "empty", not "invalid".
    text = raw.decode("utf-8", errors="replace").strip().lstrip("\ufeff")
    if not text:
        raise InvalidBodyError(f"{what}: empty body")
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise InvalidBodyError(f"{what}: not JSON ({exc}): {_excerpt(text, 120)}") from exc
    if not isinstance(obj, dict):
        raise InvalidBodyError(f"{what}: JSON is a {type(obj).__name__}, not an object")
    return obj


def parse_chat_body(raw: bytes) -> ChatBody:
    """Parse a non-streaming ``/chat/completions`` 200 body.

    Tolerates leading whitespace padding and invalid UTF-8 (replaced with
    U+FFFD). Reads ``choices[0]``: ``message.content``/``reasoning``/``refusal``,
    ``finish_reason``, ``native_finish_reason``, ``error``; plus top-level
    ``id``, ``provider``, ``model``, ``usage`` and ``error``.

    Raises ``InvalidBodyError`` when the body is not a JSON object, or has
    neither a usable ``choices`` list nor an ``error``.
    """
    obj = _decode_json_object(raw, "chat body")
    error = parse_error_object(obj["error"]) if obj.get("error") is not None else None
    choices = obj.get("choices")
    choice: dict[str, Any] = {}
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        choice = choices[0]
    elif error is None:
        raise InvalidBodyError("chat body: no choices and no error")
    message = choice.get("message")
    if not isinstance(message, dict):
        message = {}
    finish_reason = _str_or_none(choice.get("finish_reason"))
    if error is None and choice.get("error") is not None:
        error = parse_error_object(choice["error"])
    if error is None and finish_reason == "error":
        error = ErrorInfo(message="finish_reason 'error' without an error object")
    usage = obj.get("usage")
    return ChatBody(
        generation_id=_str_or_none(obj.get("id")),
        provider=_str_or_none(obj.get("provider")),
        model=_str_or_none(obj.get("model")),
        content=_content_text(message.get("content")),
        reasoning=_str_or_none(message.get("reasoning")),
        refusal=_str_or_none(message.get("refusal")),
        finish_reason=finish_reason,
        native_finish_reason=_str_or_none(choice.get("native_finish_reason")),
        usage=usage if isinstance(usage, dict) else None,
        error=error,
    )


# --------------------------------------------------------------------------- SSE


def parse_sse_events(raw: bytes | Iterator[bytes]) -> list[ServerSentEvent]:
    """Split raw ``text/event-stream`` bytes into events with httpx-sse.

    Comment lines (``: OPENROUTER PROCESSING``) are dropped; an event is
    dispatched only at its terminating blank line, so a frame cut off at the end
    is not returned. Invalid UTF-8 is replaced. Never raises on input content.
    """
    chunks = iter((raw,)) if isinstance(raw, bytes) else raw
    response = httpx.Response(
        200, headers={"content-type": "text/event-stream"}, stream=_IterStream(chunks)
    )
    return list(EventSource(response).iter_sse())


class ChunkEnvelope:
    """The envelope every OpenRouter chunk or chat body carries around its choices, folded
    into attributes the subclass declares: ``generation_id``, ``provider``, ``model``
    (first non-empty value wins), ``usage`` (last one wins: the final usage chunk),
    ``error`` (a top-level or choice-level error object). Shared by the canary's
    ``StreamAccumulator`` and the gateway's ``routing.stream.ChatStream``.
    """

    __slots__ = ("generation_id", "provider", "model", "usage", "error")
    generation_id: str | None
    provider: str | None
    model: str | None
    usage: dict[str, Any] | None
    error: ErrorInfo | None

    def fold_envelope(self, obj: dict[str, Any]) -> list[dict[str, Any]]:
        """Fold ``obj``'s envelope; return its choices of index 0 (the only one we ask for)."""
        self.generation_id = self.generation_id or _str_or_none(obj.get("id"))
        self.provider = self.provider or _str_or_none(obj.get("provider")) or None
        self.model = self.model or _str_or_none(obj.get("model"))
        usage = obj.get("usage")
        if isinstance(usage, dict):
            self.usage = usage
        if obj.get("error") is not None:
            self.error = parse_error_object(obj["error"])
        choices = obj.get("choices")
        if not isinstance(choices, list):
            return []
        return [c for c in choices if isinstance(c, dict) and c.get("index", 0) in (0, None)]

    def fold_choice_error(self, choice: dict[str, Any], finish_reason: str | None) -> None:
        """A choice's own error object, or ``finish_reason: "error"`` without one."""
        if choice.get("error") is not None and self.error is None:
            self.error = parse_error_object(choice["error"])
        if finish_reason == "error" and self.error is None:
            self.error = ErrorInfo(message="finish_reason 'error' without an error object")


class StreamAccumulator(ChunkEnvelope):
    """Folds SSE ``data`` payloads of one chat stream into a reply.

    Feed each event's ``data`` with ``feed(data, at_ms=...)`` (``at_ms`` is the
    elapsed time since the request was sent, in ms). Handles:

    - the role chunk and empty/null content deltas (not the first token);
    - reasoning deltas (kept in ``reasoning``; not content, not the first token);
    - the final usage in any of its three shapes (``choices: []``; a repeated
      finish choice; an extra choice with ``finish_reason: null``): the last
      ``usage`` object wins;
    - ``finish_reason``/``native_finish_reason``: the last non-null value;
    - error chunks in both shapes (documented ``finish_reason: "error"`` +
      ``error``; observed ``finish_reason: null`` + top-level ``error`` + usage);
    - ``[DONE]`` (sets ``done``).

    ``feed`` raises ``InvalidBodyError`` for a data frame that is not a JSON
    object; nothing else raises.
    """

    def __init__(self) -> None:
        self.generation_id: str | None = None
        self.provider: str | None = None
        self.model: str | None = None
        self.finish_reason: str | None = None
        self.native_finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.error: ErrorInfo | None = None
        self.done = False
        self.frames = 0
        self.ttft_ms: float | None = None
        self._content: list[str] | None = None
        self._reasoning: list[str] = []
        self._refusal: list[str] = []

    @property
    def content(self) -> str | None:
        """Concatenated content deltas; None if no delta ever carried a content string."""
        return None if self._content is None else "".join(self._content)

    @property
    def reasoning(self) -> str | None:
        return "".join(self._reasoning) if self._reasoning else None

    @property
    def refusal(self) -> str | None:
        return "".join(self._refusal) if self._refusal else None

    def feed(self, data: str, *, at_ms: float | None = None) -> None:
        """Fold one event's ``data``; ``at_ms`` stamps the first token (ms since send)."""
        text = data.strip()
        if not text:
            return
        if text == "[DONE]":
            self.done = True
            return
        try:
            obj = json.loads(text)
        except ValueError as exc:
            raise InvalidBodyError(f"SSE data frame is not JSON: {_excerpt(text, 120)}") from exc
        if not isinstance(obj, dict):
            raise InvalidBodyError(f"SSE data frame is a {type(obj).__name__}, not an object")
        self.frames += 1
        for choice in self.fold_envelope(obj):
            self._feed_choice(choice, at_ms)

    def _feed_choice(self, choice: dict[str, Any], at_ms: float | None) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict):
            content = _content_text(delta.get("content"))
            if content is not None:
                if self._content is None:
                    self._content = []
                if content:
                    self._content.append(content)
                    if self.ttft_ms is None:
                        self.ttft_ms = at_ms
            reasoning = delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                self._reasoning.append(reasoning)
            refusal = delta.get("refusal")
            if isinstance(refusal, str) and refusal:
                self._refusal.append(refusal)
        finish_reason = _str_or_none(choice.get("finish_reason"))
        if finish_reason:
            self.finish_reason = finish_reason
        native = _str_or_none(choice.get("native_finish_reason"))
        if native:
            self.native_finish_reason = native
        self.fold_choice_error(choice, finish_reason)


def accumulate_stream(raw: bytes) -> StreamAccumulator:
    """Parse a whole recorded SSE stream (bytes) into a ``StreamAccumulator``.

    Stops at ``[DONE]`` or at the first error chunk, like the live client.
    Raises ``InvalidBodyError`` for a data frame that is not a JSON object.
    """
    acc = StreamAccumulator()
    for event in parse_sse_events(raw):
        acc.feed(event.data)
        if acc.done or acc.error is not None:
            break
    return acc


# --------------------------------------------------------------------------- endpoints


def parse_endpoints_body(raw: bytes) -> list[EndpointInfo]:
    """Parse a ``/models/{author}/{slug}/endpoints`` body into ``EndpointInfo`` rows.

    Reads both shapes seen in the wild: the 2025 shape (no ``model_id``,
    ``uptime_*``, ``latency_*``; before late May 2025 no ``tag`` either) and the
    newer one with latency/throughput percentile objects. ``"endpoints": []`` is
    valid and returns []. Numeric fields that are missing or not numbers become
    None.

    Raises ``DiscoveryError`` when the body is not JSON, ``data.endpoints`` is
    not a list, or an entry has neither ``tag`` nor ``provider_name`` (it could
    not be pinned).
    """
    try:
        obj = _decode_json_object(raw, "endpoints body")
    except InvalidBodyError as exc:
        raise DiscoveryError(
            str(exc), body_excerpt=_excerpt(raw[:2000].decode(errors="replace"))
        ) from exc
    data = obj.get("data")
    endpoints = data.get("endpoints") if isinstance(data, dict) else None
    if not isinstance(endpoints, list):
        raise DiscoveryError("endpoints body: data.endpoints is missing or not a list")
    result: list[EndpointInfo] = []
    for index, entry in enumerate(endpoints):
        if not isinstance(entry, dict):
            raise DiscoveryError(f"endpoints body: endpoint #{index} is not an object")
        name = _str_or_none(entry.get("provider_name"))
        tag = _str_or_none(entry.get("tag"))
        if not name and not tag:
            raise DiscoveryError(
                f"endpoints body: endpoint #{index} has no tag and no provider_name"
            )
        slug = tag.split("/", 1)[0] if tag else slugify_provider(name or "")
        pricing = entry.get("pricing")
        if not isinstance(pricing, dict):
            pricing = {}
        params = entry.get("supported_parameters")
        result.append(
            EndpointInfo(
                tag=tag or slug,
                provider_name=name or slug,
                provider_slug=slug,
                quantization=_str_or_none(entry.get("quantization")),
                context_length=_int_or_none(entry.get("context_length")),
                supported_parameters=tuple(p for p in params if isinstance(p, str))
                if isinstance(params, list)
                else (),
                pricing_prompt=_decimal_or_none(pricing.get("prompt")),
                pricing_completion=_decimal_or_none(pricing.get("completion")),
                max_completion_tokens=_int_or_none(entry.get("max_completion_tokens")),
                status=_int_or_none(entry.get("status")),
                raw=entry,
            )
        )
    return result


# --------------------------------------------------------------------------- streaming internals


class _NoCookies(http.cookiejar.CookieJar):
    """An API client keeps no session: skip parsing Set-Cookie on every response."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None


class _IterStream(httpx.SyncByteStream):
    """Adapts a bytes iterator to httpx's stream interface (for httpx-sse)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks


class _Cut(Exception):
    """Internal: reading stopped on purpose; ``kind`` says why."""

    def __init__(self, kind: Literal["first_token_timeout", "timeout", "too_large"]) -> None:
        super().__init__(kind)
        self.kind = kind


class _GuardedBody:
    """Reads an httpx response body chunk by chunk, enforcing our limits.

    The TTFT and total deadlines are checked every time bytes arrive, including
    keep-alive comment bytes: OpenRouter sends ``: OPENROUTER PROCESSING`` about
    every second, so a socket read timeout alone would never fire while a
    provider sits on a request. A connection that goes fully silent is cut by the
    socket read timeout (``httpx.ReadTimeout``) instead. The size cap is counted
    on decoded bytes, which is what we hold in memory.
    """

    def __init__(
        self,
        response: httpx.Response,
        *,
        clock: Callable[[], float],
        first_token_deadline: float | None,
        total_deadline: float,
        max_bytes: int,
        first_token_seen: Callable[[], bool],
    ) -> None:
        self._response = response
        self._clock = clock
        self._first_token_deadline = first_token_deadline
        self._total_deadline = total_deadline
        self._max_bytes = max_bytes
        self._first_token_seen = first_token_seen
        self.received = 0
        self._tail = b""

    @property
    def ended_on_event_boundary(self) -> bool:
        """True when the bytes so far end with a blank line (no half-sent SSE frame)."""
        return self.received == 0 or self._tail.endswith(b"\n\n")

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._response.iter_bytes():
            self._check_deadlines()
            self.received += len(chunk)
            if self.received > self._max_bytes:
                raise _Cut("too_large")
            # Only "\n\n" matters for the boundary test; CRLF streams normalise to it.
            self._tail = (self._tail + chunk.replace(b"\r", b""))[-2:]
            yield chunk

    def _check_deadlines(self) -> None:
        now = self._clock()
        if (
            self._first_token_deadline is not None
            and not self._first_token_seen()
            and now > self._first_token_deadline
        ):
            raise _Cut("first_token_timeout")
        if now > self._total_deadline:
            raise _Cut("timeout")


@dataclass
class _CallContext:
    """Per-call facts the classifier needs (one per ``chat_pinned`` call)."""

    start: float
    clock: Callable[[], float]
    expected_provider: str | None
    max_tokens: int
    http_status: int | None = None
    header_generation_id: str | None = None
    header_provider: str | None = None
    retry_after_s: float | None = None

    def elapsed_ms(self) -> float:
        return (self.clock() - self.start) * 1000.0

    def take_headers(self, response: httpx.Response) -> None:
        self.http_status = response.status_code
        self.header_generation_id = response.headers.get("x-generation-id") or None
        self.header_provider = response.headers.get("x-provider-name") or None
        self.retry_after_s = parse_retry_after(response.headers.get("retry-after"))

    def call(
        self,
        *,
        reply: Reply | None = None,
        kind: TransportKind | None = None,
        error: ErrorInfo | None = None,
        message: str | None = None,
        provider: str | None = None,
        generation_id: str | None = None,
        usage: dict[str, Any] | None = None,
        ttft_ms: float | None = None,
        first_token_timeout: bool = False,
        total_ms: float | None = None,
    ) -> Call:
        serving = provider or (error.provider_name if error else None) or self.header_provider
        mismatch = (
            serving is not None
            and self.expected_provider is not None
            and not same_provider(serving, self.expected_provider)
        )
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
        )


def _completion_tokens(usage: dict[str, Any] | None) -> int | None:
    return _int_or_none(usage.get("completion_tokens")) if usage else None


def _status_kind(status: int, error: ErrorInfo) -> TransportKind:
    if status == 429:
        return "http_429"
    if status >= 500:
        return "http_5xx"
    if is_moderation_error(status, error):
        return "moderation"
    return "http_4xx"


# --------------------------------------------------------------------------- the client


class OpenRouterClient:
    """One shared, thread-safe OpenRouter client (wraps ``httpx.Client`` objects).

    ``base_url`` includes ``/api/v1`` (``https://openrouter.ai/api/v1``).
    ``api_key`` may be empty: then no ``Authorization`` header is sent (endpoint
    discovery works unauthenticated). ``referer``/``title`` are the attribution
    headers ``HTTP-Referer`` and ``X-OpenRouter-Title``. ``max_response_bytes``
    caps every body and stream (default 1 MiB). ``connect_timeout_s`` bounds
    TCP/TLS setup; ``idle_timeout_s`` bounds silence on a streaming socket after
    the first token (it never exceeds the call's TTFT limit, because one socket
    read timeout serves both phases); ``request_timeout_s`` bounds discovery and
    generation lookups. ``clock`` returns seconds (monotonic); tests pass their
    own. ``max_connections`` (kept alive too) is spread over ``pool_shards`` httpx
    clients used in turn. ``transport`` replaces the HTTP transport (tests only; one
    client then); the default has ``retries=0`` because retrying is the caller's
    decision.

    Use as a context manager or call ``close()``.
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str = "",
        referer: str = DEFAULT_REFERER,
        title: str = DEFAULT_TITLE,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        connect_timeout_s: float = 10.0,
        idle_timeout_s: float = 30.0,
        request_timeout_s: float = 30.0,
        max_connections: int = 100,
        pool_shards: int = 1,
        clock: Callable[[], float] = time.monotonic,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"HTTP-Referer": referer, "X-OpenRouter-Title": title}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.max_response_bytes = max_response_bytes
        self.connect_timeout_s = connect_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self.request_timeout_s = request_timeout_s
        self._clock = clock
        # Several httpx clients, used in turn: httpcore's pool scans every connection it
        # holds on each request start and end, which with a worker's hundreds of probes in
        # flight became a sixth of its CPU. They share one SSL context (building one costs
        # ~20 ms of CPU). ``limits`` must go to the transport: httpx ignores a client's
        # ``limits`` when a transport is given.
        shards = 1 if transport is not None else max(1, pool_shards)
        per_shard = max(1, max_connections // shards)
        ssl_context = httpx.create_ssl_context() if transport is None else None
        self._clients = [
            httpx.Client(
                base_url=base_url,
                headers=headers,
                transport=transport
                or httpx.HTTPTransport(
                    retries=0,
                    verify=ssl_context if ssl_context is not None else True,
                    # Within a round's burst, a finished probe's connection serves the
                    # next one (no new TCP/TLS handshake inside its TTFT); idle ones
                    # close after 5 s (httpx's keep-alive expiry).
                    limits=httpx.Limits(max_connections=per_shard, max_keepalive_connections=per_shard),
                ),
                timeout=httpx.Timeout(request_timeout_s, connect=connect_timeout_s),
                follow_redirects=False,
                cookies=_NoCookies(),
            )
            for _ in range(shards)
        ]
        self._turn = itertools.count()

    def _http(self) -> httpx.Client:
        """The next httpx client in turn (``next`` on a count is atomic under the GIL)."""
        return self._clients[next(self._turn) % len(self._clients)]

    def close(self) -> None:
        """Close pooled connections."""
        for client in self._clients:
            client.close()

    def __enter__(self) -> OpenRouterClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ----------------------------------------------------------------- discovery

    def list_endpoints(self, model_id: str) -> list[EndpointInfo]:
        """List the endpoints serving ``model_id`` (``"author/slug"``).

        ``GET /models/{author}/{slug}/endpoints``. Returns [] when the model has
        no endpoints. Raises ``ValueError`` for a model id without ``/``, and
        ``DiscoveryError`` on a connect failure or timeout, a non-200 status
        (message carries status and a body excerpt), an oversized body, or a
        body ``parse_endpoints_body`` rejects.
        """
        author, sep, slug = model_id.partition("/")
        if not sep or not author or not slug:
            raise ValueError(f"model id must be 'author/slug', got {model_id!r}")
        path = f"/models/{quote(author, safe='')}/{quote(slug, safe=':~')}/endpoints"
        status, body = self._get(path, DiscoveryError)
        if status != 200:
            excerpt = _excerpt(body.decode("utf-8", errors="replace"))
            raise DiscoveryError(
                f"GET {path} returned HTTP {status}: {excerpt}", status=status, body_excerpt=excerpt
            )
        return parse_endpoints_body(body)

    def get_generation(self, generation_id: str) -> dict[str, Any]:
        """Fetch generation stats: ``GET /generation?id=<generation_id>``; returns ``data``.

        The dict holds e.g. ``provider_name`` (display name), ``latency`` and
        ``generation_time`` (ms), ``tokens_*``/``native_tokens_*``,
        ``total_cost`` (USD), ``provider_responses``. Raises
        ``GenerationNotFoundError`` on 404 (often transient right after the
        call), ``GenerationError`` on other statuses, connect failures,
        timeouts and bodies without a ``data`` object.
        """
        path = "/generation"
        status, body = self._get(path, GenerationError, params={"id": generation_id})
        excerpt = _excerpt(body.decode("utf-8", errors="replace"))
        if status == 404:
            raise GenerationNotFoundError(
                f"generation {generation_id!r} not found (HTTP 404): {excerpt}",
                status=status,
                body_excerpt=excerpt,
            )
        if status != 200:
            raise GenerationError(
                f"GET {path}?id={generation_id} returned HTTP {status}: {excerpt}",
                status=status,
                body_excerpt=excerpt,
            )
        try:
            obj = _decode_json_object(body, "generation body")
        except InvalidBodyError as exc:
            raise GenerationError(str(exc), status=status, body_excerpt=excerpt) from exc
        data = obj.get("data")
        if not isinstance(data, dict):
            raise GenerationError(
                "generation body: 'data' is missing or not an object", status=status
            )
        return data

    def _get(
        self,
        path: str,
        error_cls: type[OpenRouterError],
        params: Mapping[str, str] | None = None,
    ) -> tuple[int, bytes]:
        """GET ``path`` with the size cap; returns (status, body). Raises ``error_cls``."""
        try:
            with self._http().stream("GET", path, params=params) as response:
                declared = _to_int(response.headers.get("content-length"))
                if declared is not None and declared > self.max_response_bytes:
                    raise error_cls(
                        f"GET {path}: body of {declared} bytes exceeds the {self.max_response_bytes}-byte cap",
                        status=response.status_code,
                    )
                parts: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > self.max_response_bytes:
                        raise error_cls(
                            f"GET {path}: body exceeds the {self.max_response_bytes}-byte cap",
                            status=response.status_code,
                        )
                    parts.append(chunk)
                return response.status_code, b"".join(parts)
        except httpx.TimeoutException as exc:
            raise error_cls(f"GET {path}: timed out ({type(exc).__name__})") from exc
        except (httpx.ConnectError, httpx.ProxyError) as exc:
            raise error_cls(f"GET {path}: could not connect to OpenRouter: {exc}") from exc
        except (httpx.NetworkError, httpx.RemoteProtocolError, httpx.DecodingError) as exc:
            raise error_cls(f"GET {path}: connection failed mid-response: {exc}") from exc

    # ----------------------------------------------------------------- chat

    def chat_pinned(
        self,
        model_id: str,
        tag: str,
        messages: Sequence[Mapping[str, Any]],
        *,
        max_tokens: int,
        temperature: float | None = 0.0,
        stream: bool,
        response_format: Mapping[str, Any] | None = None,
        require_parameters: bool = False,
        ttft_limit_s: float,
        total_timeout_s: float,
        seed: int | None = None,
        expected_provider: str | None = None,
    ) -> Call:
        """Send one chat completion pinned to one endpoint and classify the outcome.

        The request pins ``provider: {"only": [tag], "allow_fallbacks": false}``
        (plus ``"require_parameters": true`` when asked), so OpenRouter returns
        the pinned endpoint's own error instead of failing over. ``temperature``
        None omits it; ``seed`` and ``response_format`` are sent when given.
        ``expected_provider`` is the pinned endpoint's display name
        (``EndpointInfo.provider_name``); the serving provider is compared with
        it case-insensitively to set ``Call.provider_mismatch``.

        Timing (seconds in, milliseconds out):

        - streaming: no response headers within ``ttft_limit_s`` → transport
          ``timeout``. Headers with status 200 but no non-empty content delta
          within ``ttft_limit_s`` (keep-alive comments, the role chunk, empty
          and reasoning deltas do not count) → a COMPLETED call with
          ``first_token_timeout=True`` and ``reply.ttft_ms=None``. After the
          first token, ``total_timeout_s`` (from sending) and the idle timeout
          bound the rest → transport ``timeout``.
        - non-streaming: ``total_timeout_s`` bounds headers and body;
          ``ttft_ms`` is None.
        - a connection that cannot be set up (refused, DNS, TLS, connect
          timeout) → ``connect``; a local pool wait that times out → ``timeout``.

        Never raises on anything the network or upstream does; returns a
        ``Call`` (see ``TRANSPORT_KINDS``). Raises only on programming errors
        (e.g. a malformed base URL).
        """
        body: dict[str, Any] = {
            "model": model_id,
            "messages": [dict(m) for m in messages],
            "max_tokens": max_tokens,
            "stream": stream,
            "provider": {"only": [tag], "allow_fallbacks": False},
        }
        if require_parameters:
            body["provider"]["require_parameters"] = True
        if temperature is not None:
            body["temperature"] = temperature
        if response_format is not None:
            body["response_format"] = dict(response_format)
        if seed is not None:
            body["seed"] = seed

        if stream:
            # One socket read timeout serves both phases (httpcore reads it once
            # per body), so it is the smaller of the TTFT limit and the idle limit.
            read_s = min(ttft_limit_s, self.idle_timeout_s, total_timeout_s)
            timeout = httpx.Timeout(
                connect=min(self.connect_timeout_s, ttft_limit_s),
                read=read_s,
                write=total_timeout_s,
                pool=self.connect_timeout_s,
            )
            headers = {"Accept": "text/event-stream", "Cache-Control": "no-store"}
        else:
            # Without padding, a non-streamed reply sends its headers only when
            # the generation is done: the socket may rightly be silent that long.
            timeout = httpx.Timeout(
                connect=min(self.connect_timeout_s, total_timeout_s),
                read=total_timeout_s,
                write=total_timeout_s,
                pool=self.connect_timeout_s,
            )
            headers = {"Accept": "application/json"}
        http = self._http()
        request = http.build_request("POST", "/chat/completions", json=body, headers=headers, timeout=timeout)
        ctx = _CallContext(
            start=self._clock(),
            clock=self._clock,
            expected_provider=expected_provider,
            max_tokens=max_tokens,
        )
        try:
            response = http.send(request, stream=True)
        except httpx.ConnectTimeout:
            # A connection that cannot be set up is a connect failure, whoever is slow.
            return ctx.call(kind="connect", message="TCP/TLS connect timed out")
        except httpx.PoolTimeout:
            return ctx.call(kind="timeout", message="no free connection in the local pool")
        except httpx.TimeoutException:
            waited_s = timeout.read
            return ctx.call(kind="timeout", message=f"no response headers within {waited_s}s")
        except (httpx.ConnectError, httpx.ProxyError) as exc:
            return ctx.call(kind="connect", message=f"could not connect: {exc}")
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            return ctx.call(kind="reset", message=f"connection closed before a response: {exc}")

        try:
            ctx.take_headers(response)
            total_deadline = ctx.start + total_timeout_s
            status = response.status_code
            if not 200 <= status < 300:
                return self._error_response(response, ctx, total_deadline)
            if stream and ctx.clock() - ctx.start > ttft_limit_s:
                # The headers came, but after the limit: "no response within the
                # TTFT limit" is a timeout, not a slow first token.
                return ctx.call(kind="timeout", message=f"response headers after {ttft_limit_s}s")
            content_type = response.headers.get("content-type", "")
            if stream and "text/event-stream" in content_type:
                return self._read_stream(response, ctx, ttft_limit_s, total_deadline)
            # Non-streaming, or a stream request answered with a plain body
            # (e.g. an HTTP-200 {"error": ...}): parse it as a whole.
            return self._read_plain(response, ctx, total_deadline)
        finally:
            response.close()

    def _read_capped(
        self, response: httpx.Response, ctx: _CallContext, total_deadline: float
    ) -> bytes | Call:
        """Read a whole body under the size cap and total deadline; a Call on failure."""
        declared = _to_int(response.headers.get("content-length"))
        if declared is not None and declared > self.max_response_bytes:
            return ctx.call(
                kind="too_large",
                message=f"Content-Length {declared} exceeds the {self.max_response_bytes}-byte cap",
            )
        guard = _GuardedBody(
            response,
            clock=ctx.clock,
            first_token_deadline=None,
            total_deadline=total_deadline,
            max_bytes=self.max_response_bytes,
            first_token_seen=lambda: True,
        )
        try:
            return b"".join(guard)
        except _Cut as cut:
            kind: TransportKind = "too_large" if cut.kind == "too_large" else "timeout"
            return ctx.call(kind=kind, message=_cut_message(cut, self))
        except httpx.TimeoutException as exc:
            return ctx.call(kind="timeout", message=f"body stalled: {type(exc).__name__}")
        except httpx.DecodingError as exc:
            return ctx.call(kind="invalid_body", message=f"undecodable body: {exc}")
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            return ctx.call(kind="reset", message=f"connection closed mid-body: {exc}")

    def _error_response(
        self, response: httpx.Response, ctx: _CallContext, total_deadline: float
    ) -> Call:
        status = response.status_code
        raw = self._read_capped(response, ctx, total_deadline)
        if isinstance(raw, Call):
            # The status already says what happened; keep it as the kind and
            # note why the body is missing.
            error = ErrorInfo(message=f"HTTP {status}; body unreadable: {raw.error_message}")
            return ctx.call(kind=_status_kind(status, error), error=error)
        error = parse_error_body(raw)
        if 300 <= status < 400:
            error = ErrorInfo(
                message=f"unexpected redirect HTTP {status} to {response.headers.get('location')!r}"
            )
        message = error.message
        if status == 403 and is_moderation_error(status, error):
            reasons = error.metadata.get("reasons")
            if isinstance(reasons, list) and reasons:
                message = f"{message} (reasons: {', '.join(str(r) for r in reasons)})"
        return ctx.call(kind=_status_kind(status, error), error=error, message=message)

    def _read_plain(
        self, response: httpx.Response, ctx: _CallContext, total_deadline: float
    ) -> Call:
        raw = self._read_capped(response, ctx, total_deadline)
        if isinstance(raw, Call):
            return raw
        try:
            parsed = parse_chat_body(raw)
        except InvalidBodyError as exc:
            return ctx.call(kind="invalid_body", message=str(exc))
        total_ms = ctx.elapsed_ms()
        if parsed.error is not None:
            return ctx.call(
                kind="error_chunk",
                error=parsed.error,
                provider=parsed.provider,
                generation_id=parsed.generation_id,
                usage=parsed.usage,
                total_ms=total_ms,
            )
        reply = Reply(
            content=parsed.content,
            finish_reason=parsed.finish_reason,
            reasoning=parsed.reasoning,
            refusal=parsed.refusal,
            completion_tokens=_completion_tokens(parsed.usage),
            max_tokens=ctx.max_tokens,
            ttft_ms=None,
            total_ms=total_ms,
            stream_opened=True,
        )
        return ctx.call(
            reply=reply,
            provider=parsed.provider,
            generation_id=parsed.generation_id,
            usage=parsed.usage,
            total_ms=total_ms,
        )

    def _read_stream(
        self,
        response: httpx.Response,
        ctx: _CallContext,
        ttft_limit_s: float,
        total_deadline: float,
    ) -> Call:
        acc = StreamAccumulator()
        guard = _GuardedBody(
            response,
            clock=ctx.clock,
            first_token_deadline=ctx.start + ttft_limit_s,
            total_deadline=total_deadline,
            max_bytes=self.max_response_bytes,
            first_token_seen=lambda: acc.ttft_ms is not None,
        )
        # httpx-sse parses the guarded bytes: every chunk (comments included)
        # passes the deadline check before its events are decoded.
        chunks = iter(guard)
        source = EventSource(
            httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=_IterStream(chunks))
        )

        def fail(kind: TransportKind, message: str, error: ErrorInfo | None = None) -> Call:
            return ctx.call(
                kind=kind,
                message=message if error is None else None,
                error=error,
                provider=acc.provider,
                generation_id=acc.generation_id,
                usage=acc.usage,
                ttft_ms=acc.ttft_ms,
            )

        def complete(*, first_token_timeout: bool = False) -> Call:
            total_ms = ctx.elapsed_ms()
            reply = Reply(
                content=acc.content,
                finish_reason=None if first_token_timeout else acc.finish_reason,
                reasoning=acc.reasoning,
                refusal=acc.refusal,
                completion_tokens=_completion_tokens(acc.usage),
                max_tokens=ctx.max_tokens,
                ttft_ms=acc.ttft_ms,
                total_ms=total_ms,
                stream_opened=True,
            )
            return ctx.call(
                reply=reply,
                provider=acc.provider,
                generation_id=acc.generation_id,
                usage=acc.usage,
                ttft_ms=acc.ttft_ms,
                first_token_timeout=first_token_timeout,
                total_ms=total_ms,
            )

        events = source.iter_sse()
        try:
            for event in events:
                acc.feed(event.data, at_ms=ctx.elapsed_ms())
                # Stop at [DONE]; stop at an error chunk too, because OpenRouter
                # ends the stream after it (with or without [DONE]).
                if acc.done or acc.error is not None:
                    break
        except _Cut as cut:
            if cut.kind == "first_token_timeout":
                return complete(first_token_timeout=True)
            return fail(
                "too_large" if cut.kind == "too_large" else "timeout", _cut_message(cut, self)
            )
        except InvalidBodyError as exc:
            return fail("invalid_body", str(exc))
        except httpx.TimeoutException:
            # The socket went fully silent (not even keep-alive comments).
            if acc.ttft_ms is None and ctx.clock() - ctx.start >= ttft_limit_s - 0.01:
                return complete(first_token_timeout=True)
            return fail("timeout", "stream went silent (idle timeout)")
        except httpx.DecodingError as exc:
            return fail("invalid_body", f"undecodable stream: {exc}")
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            if acc.error is not None:
                return fail("error_chunk", "", acc.error)
            return fail("reset", f"connection closed before [DONE]: {exc}")

        if acc.error is not None:
            return fail("error_chunk", "", acc.error)
        if acc.done:
            call = complete()
            _drain(chunks)
            del events
            return call
        if not guard.ended_on_event_boundary:
            return fail("reset", "stream ended mid-frame (truncated SSE)")
        if acc.finish_reason is not None:
            # Closed cleanly after the finish chunk but without [DONE]: the
            # generation is whole; only the trailer is missing.
            return complete()
        return fail("reset", "stream closed before a finish_reason or [DONE]")


def _drain(chunks: Iterator[bytes]) -> None:
    """Read what follows ``[DONE]`` (the end of the chunked body) so the connection goes
    back to the pool for the next probe instead of being closed: no new TCP and TLS
    handshake per probe, which would also sit inside the next probe's TTFT. OpenAI's
    Python SDK drains the same way. The guard's deadlines still apply; any error only
    means this connection is not reused."""
    try:
        for _ in chunks:
            pass
    except Exception:  # noqa: BLE001, S110 - the verdict is already taken
        pass


def _to_int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value.strip())
    except ValueError:
        return None


def _cut_message(cut: _Cut, client: OpenRouterClient) -> str:
    if cut.kind == "too_large":
        return f"response exceeds the {client.max_response_bytes}-byte cap; reading stopped"
    if cut.kind == "timeout":
        return "total timeout passed"
    return "no content within the TTFT limit"
