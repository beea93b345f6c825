"""OpenRouter error objects and bodies, ``Retry-After``, and the exceptions of the wire.

Error shapes read here (``tests/fixtures/captures/INDEX.md``): the documented
``{code, message, metadata{...}}``, the older ``metadata{raw, provider_name}``, the 2025
Minimax chunk shape without metadata, a bare string, and non-JSON bodies (an HTML 502).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from openrouter.jsonbody import InvalidBodyError, decode_json
from openrouter.values import excerpt, str_or_none


class OpenRouterError(Exception):
    """A non-chat request (discovery, generation lookup) failed.

    ``status`` is the HTTP status when a response arrived (None on connect failures and
    timeouts); ``body_excerpt`` is the first few hundred characters of the body.
    """

    def __init__(self, message: str, *, status: int | None = None, body_excerpt: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body_excerpt = body_excerpt


class DiscoveryError(OpenRouterError):
    """``GET /models/{author}/{slug}/endpoints`` failed or returned an unusable body."""


class GenerationError(OpenRouterError):
    """``GET /generation?id=`` failed or returned an unusable body."""


class GenerationNotFoundError(GenerationError):
    """``GET /generation`` answered 404.

    Often transient: OpenRouter returns 404 for about 0.5-1 s (or longer) right after a
    completion, so callers may retry later.
    """


@dataclass(frozen=True)
class ErrorInfo:
    """An OpenRouter error object, whatever shape it came in.

    ``code`` is ``error.code`` as sent (an int in every capture; the docs also show
    strings). ``message`` is ``error.message`` (or a body excerpt when the body was not
    JSON). ``raw`` is ``metadata.raw`` exactly as given: a JSON-encoded string, plain
    text, or an object. ``provider_name`` is ``metadata.provider_name`` (a display name,
    often null). ``error_type`` is ``metadata.error_type`` (newer typed shape).
    ``metadata`` is the whole metadata object ({} when absent). ``availability`` is an
    availability error's ``{code, retryable, excluded_by, ...}``: ``error.availability``
    as documented (docs/sources/openrouter-api.md, "Errors"), else
    ``metadata.availability`` as seen in captures ({} when neither is an object).
    """

    code: int | str | None = None
    message: str | None = None
    raw: Any = None
    provider_name: str | None = None
    error_type: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    availability: dict[str, Any] = field(default_factory=dict)


def parse_error_object(obj: Any) -> ErrorInfo:
    """Read one error object (the value of ``"error"``) into an ``ErrorInfo``. Never raises."""
    if isinstance(obj, str):
        return ErrorInfo(message=obj)
    if not isinstance(obj, dict):
        return ErrorInfo(message=None if obj is None else excerpt(repr(obj)))
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        metadata = {}
    code = obj.get("code")
    if isinstance(code, bool) or not isinstance(code, int | str):
        code = None
    error_type = str_or_none(metadata.get("error_type")) or str_or_none(obj.get("error_type"))
    return ErrorInfo(
        code=code,
        message=str_or_none(obj.get("message")),
        raw=metadata.get("raw"),
        provider_name=str_or_none(metadata.get("provider_name")),
        error_type=error_type,
        metadata=metadata,
        availability=next((a for a in (obj.get("availability"), metadata.get("availability")) if isinstance(a, dict)), {}),
    )


def parse_error_body(raw: bytes) -> ErrorInfo:
    """Parse an error response body (any status) into an ``ErrorInfo``.

    Accepts the envelope ``{"error": {...}, "user_id": ...}``, a bare error member
    ``{"message", "code", "metadata"}`` (as clients print mid-stream errors), and
    non-JSON bodies (an HTML 502 page): then ``message`` is an excerpt of the text.
    Invalid UTF-8 is replaced: an error body is read for its message, never forwarded.
    Never raises.
    """
    text = raw.decode("utf-8", errors="replace").strip()
    if not text:
        return ErrorInfo()
    try:
        obj = decode_json(text, invalid_utf8="replace")
    except InvalidBodyError:
        return ErrorInfo(message=excerpt(text))
    if isinstance(obj, dict):
        if "error" in obj:
            return parse_error_object(obj["error"])
        if "message" in obj or "code" in obj:
            return parse_error_object(obj)
    return ErrorInfo(message=excerpt(text))


def is_moderation_error(status: int, error: ErrorInfo) -> bool:
    """True for a 403 that is a moderation refusal (not a guardrail or a permission error).

    OpenRouter's moderation 403 carries ``metadata.reasons`` and ``metadata.flagged_input``;
    the guardrail 403 carries ``metadata.patterns`` instead, and a permission 403 neither.
    """
    if status != 403:
        return False
    meta = error.metadata
    if "reasons" in meta or "flagged_input" in meta:
        return True
    message = (error.message or "").casefold()
    return "moderation" in message or "flagged" in message


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Parse a ``Retry-After`` header into seconds (float, >= 0) (RFC 9110 §10.2.3).

    Accepts delta-seconds (``"30"``, ``"1.5"``) or an HTTP date (seconds from ``now``,
    default the current UTC time). Returns None when absent or unparseable.
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
            if when.tzinfo is None:
                when = when.replace(tzinfo=UTC)
            seconds = (when - (now or datetime.now(UTC))).total_seconds()
        except (TypeError, ValueError, OverflowError):  # a zone offset of 20 digits overflows
            return None
    if seconds != seconds or seconds in (float("inf"), float("-inf")):  # NaN/inf
        return None
    return max(0.0, seconds)
