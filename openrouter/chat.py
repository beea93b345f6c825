"""Chat completion bodies and stream chunks folded into replies.

Wire facts (``tests/fixtures/captures/INDEX.md``): non-streaming bodies can start with
whitespace keep-alive padding; the final usage chunk comes in three shapes (``choices:
[]``; a repeated finish choice; an extra choice with ``finish_reason: null``); a
mid-stream error can arrive with ``finish_reason: null`` and still be followed by
``[DONE]``. ``ChunkEnvelope`` is the part every chunk and body shares; the canary's
``StreamAccumulator`` and the gateway's ``routing.stream.ChatStream`` build on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openrouter.errors import ErrorInfo, parse_error_object
from openrouter.jsonbody import InvalidBodyError, InvalidUtf8, decode_object
from openrouter.sse import DEFAULT_MAX_LINE_BYTES, iter_frames
from openrouter.values import content_text, str_or_none


@dataclass(frozen=True)
class ChatBody:
    """A parsed non-streaming chat completion body (``parse_chat_body``).

    ``error`` is set when the body is just ``{"error": {...}}`` or when
    ``choices[0].finish_reason == "error"`` (the upstream failed after the generation
    started; HTTP status is still 200). ``usage`` is the usage object as sent
    (``prompt_tokens``, ``completion_tokens``, ``total_tokens``, ``cost`` in USD when
    present). ``provider`` is the serving provider's display name.
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


def parse_chat_body(raw: bytes, *, invalid_utf8: InvalidUtf8 = "replace") -> ChatBody:
    """Parse a non-streaming ``/chat/completions`` 200 body.

    Tolerates leading whitespace padding; invalid UTF-8 follows ``invalid_utf8``
    (``openrouter.jsonbody``). Reads ``choices[0]``: ``message.content``/``reasoning``/
    ``refusal``, ``finish_reason``, ``native_finish_reason``, ``error``; plus top-level
    ``id``, ``provider``, ``model``, ``usage`` and ``error``.

    Raises ``InvalidBodyError`` when the body is not a JSON object, or has neither a
    usable ``choices`` list nor an ``error``.
    """
    obj = decode_object(raw, "chat body", invalid_utf8=invalid_utf8)
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
    finish_reason = str_or_none(choice.get("finish_reason"))
    if error is None and choice.get("error") is not None:
        error = parse_error_object(choice["error"])
    if error is None and finish_reason == "error":
        error = ErrorInfo(message="finish_reason 'error' without an error object")
    usage = obj.get("usage")
    return ChatBody(
        generation_id=str_or_none(obj.get("id")),
        provider=str_or_none(obj.get("provider")),
        model=str_or_none(obj.get("model")),
        content=content_text(message.get("content")),
        reasoning=str_or_none(message.get("reasoning")),
        refusal=str_or_none(message.get("refusal")),
        finish_reason=finish_reason,
        native_finish_reason=str_or_none(choice.get("native_finish_reason")),
        usage=usage if isinstance(usage, dict) else None,
        error=error,
    )


class ChunkEnvelope:
    """The envelope every OpenRouter chunk or chat body carries around its choices, folded
    into attributes the subclass declares: ``generation_id``, ``provider``, ``model``
    (first non-empty value wins), ``usage`` (last one wins: the final usage chunk),
    ``error`` (a top-level or choice-level error object).
    """

    __slots__ = ("generation_id", "provider", "model", "usage", "error")
    generation_id: str | None
    provider: str | None
    model: str | None
    usage: dict[str, Any] | None
    error: ErrorInfo | None

    def fold_envelope(self, obj: dict[str, Any]) -> list[dict[str, Any]]:
        """Fold ``obj``'s envelope; return its choices of index 0 (the only one we ask for)."""
        self.generation_id = self.generation_id or str_or_none(obj.get("id"))
        self.provider = self.provider or str_or_none(obj.get("provider")) or None
        self.model = self.model or str_or_none(obj.get("model"))
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
    """Folds the SSE ``data`` payloads of one chat stream into the canary's reply.

    Feed each event's ``data`` with ``feed(data, at_ms=...)`` (``at_ms`` is the elapsed
    time since the request was sent, in ms). Handles the role chunk and empty/null
    content deltas (not the first token); reasoning deltas (kept in ``reasoning``; not
    content, not the first token); the final usage in any of its three shapes (the last
    ``usage`` object wins); ``finish_reason``/``native_finish_reason`` (the last non-null
    value); error chunks in both shapes (documented ``finish_reason: "error"`` + ``error``;
    observed ``finish_reason: null`` + top-level ``error`` + usage); ``[DONE]`` (sets
    ``done``). Invalid UTF-8 is replaced: the judges read what arrived.

    ``feed`` raises ``InvalidBodyError`` for a data frame that is not a JSON object;
    nothing else raises.
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

    def feed(self, data: bytes | str, *, at_ms: float | None = None) -> None:
        """Fold one event's ``data``; ``at_ms`` stamps the first token (ms since send)."""
        text = data.strip()
        if not text:
            return
        if text in (b"[DONE]", "[DONE]"):
            self.done = True
            return
        obj = decode_object(text, "SSE data frame", invalid_utf8="replace")
        self.frames += 1
        for choice in self.fold_envelope(obj):
            self._feed_choice(choice, at_ms)

    def _feed_choice(self, choice: dict[str, Any], at_ms: float | None) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict):
            content = content_text(delta.get("content"))
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
        finish_reason = str_or_none(choice.get("finish_reason"))
        if finish_reason:
            self.finish_reason = finish_reason
        native = str_or_none(choice.get("native_finish_reason"))
        if native:
            self.native_finish_reason = native
        self.fold_choice_error(choice, finish_reason)


def accumulate_stream(raw: bytes, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> StreamAccumulator:
    """Parse a whole recorded SSE stream (bytes) into a ``StreamAccumulator``.

    Stops at ``[DONE]`` or at the first error chunk, like the live client. Raises
    ``InvalidBodyError`` for a data frame that is not a JSON object, ``TooLargeError``
    for a line over ``max_line_bytes``.
    """
    acc = StreamAccumulator()
    for data in iter_frames((raw,), max_line_bytes):
        acc.feed(data)
        if acc.done or acc.error is not None:
            break
    return acc
