"""Parse an OpenAI-compatible chat answer, streamed (SSE) or whole, into an ``Answer``.

Pure and fast: one JSON decode per data frame, no per-frame objects beyond that. The
wire facts are those the canary's parser handles (``canary/openrouter.py``): keep-alive
comment lines before and between frames, the role chunk with empty content, the final
usage in three shapes, error chunks with or without ``finish_reason: "error"``. What the
canary's ``StreamAccumulator`` does not need and the gateway does: tool-call deltas,
merged by index (OpenAI streams a call's name once and its arguments in pieces).
Error objects are read with the canary's ``parse_error_object``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from canary.openrouter import ChunkEnvelope, ErrorInfo

# ``json.loads`` on bytes first guesses the encoding, decodes, then scans; a data frame is
# UTF-8 (SSE is), so decode and scan directly, which is about half the CPU. Anything the
# fast path refuses goes through ``json.loads`` itself: the result and the errors are
# exactly those of ``json.loads``.
_decoder = json.JSONDecoder()


def _loads(text: bytes) -> Any:
    """``json.loads(text)`` for ``text`` without surrounding whitespace."""
    try:
        decoded = text.decode()
        obj, end = _decoder.raw_decode(decoded)
        if end == len(decoded):
            return obj
    except ValueError:
        pass
    return json.loads(text)


class FrameError(ValueError):
    """A data frame or body that is not the JSON object we expect (-> invalid_response)."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call as the model sent it: ``arguments`` is the raw JSON text, never
    repaired (issue point 7: never rewrite tool arguments)."""

    id: str | None
    name: str | None
    arguments: str


@dataclass(frozen=True)
class Answer:
    """A complete answer from one attempt, before validation.

    ``usage`` is the usage object as sent (tokens; ``cost`` in USD when the upstream
    reports it); ``ttft_ms`` is the time from sending to the first content byte.
    """

    content: str | None
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str | None
    usage: dict[str, Any] | None = None
    provider: str | None = None
    model: str | None = None
    generation_id: str | None = None
    ttft_ms: float | None = None


@dataclass
class _ToolDraft:
    id: str | None = None
    name: str | None = None
    parts: list[str] = field(default_factory=list)


class ChatStream(ChunkEnvelope):
    """Folds one chat stream. Feed body bytes as they arrive with ``feed`` (then
    ``feed_end`` at the end of the body), or single lines with ``feed_line``; read
    ``done``, ``error``, ``output_seen``, ``finished`` and ``answer()``.

    ``feed`` and ``feed_line`` raise ``FrameError`` for a data frame that is not a JSON
    object.
    """

    __slots__ = ("_data", "_tail", "_content", "_tools", "finish_reason", "done", "output_seen", "finished")

    def __init__(self) -> None:
        self._data: list[bytes] = []
        self._tail = b""
        self._content: list[str] = []
        self._tools: dict[int, _ToolDraft] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.provider: str | None = None
        self.model: str | None = None
        self.generation_id: str | None = None
        self.error: ErrorInfo | None = None
        self.done = False
        # True once a content or tool-call byte arrived: from here a failure is ambiguous.
        self.output_seen = False
        # True after [DONE] or an error: ``feed`` ignores the rest of the body.
        self.finished = False

    def feed(self, chunk: bytes) -> None:
        """Body bytes as they arrive, split anywhere. Complete lines are folded now, the
        rest waits for the next chunk; nothing after [DONE] or an error is folded.

        The loop is ``feed_line`` inlined: a call per line was a third of the parsing
        CPU (a chat answer is two or three lines per token)."""
        if self.finished:
            return
        lines = (self._tail + chunk).split(b"\n") if self._tail else chunk.split(b"\n")
        self._tail = lines.pop()
        data = self._data
        for line in lines:
            if line[-1:] == b"\r":
                line = line[:-1]
            if not line:
                if data:
                    frame = data[0] if len(data) == 1 else b"\n".join(data)
                    data.clear()
                    self._frame(frame)
                    if self.done or self.error is not None:
                        self.finished = True
                        return
            elif line[0] == 0x3A:  # ":" keep-alive comment (": OPENROUTER PROCESSING")
                continue
            elif line.startswith(b"data:"):
                value = line[5:]
                data.append(value[1:] if value[:1] == b" " else value)
            # event:, id:, retry: lines carry nothing we use.

    def feed_end(self) -> None:
        """The body ended: fold a last line that had no newline (and its frame)."""
        tail, self._tail = self._tail, b""
        if not self.finished and tail.strip():
            self.feed_line(tail.rstrip(b"\r"))
            self.feed_line(b"")

    def feed_line(self, line: bytes) -> None:
        """One line of the event stream (``\\r`` already stripped)."""
        if not line:
            if self._data:
                data = b"\n".join(self._data)
                self._data.clear()
                self._frame(data)
            return
        if line[0] == 0x3A:  # ":" keep-alive comment (": OPENROUTER PROCESSING")
            return
        if line.startswith(b"data:"):
            value = line[5:]
            self._data.append(value[1:] if value[:1] == b" " else value)
        # event:, id:, retry: lines carry nothing we use.

    def _frame(self, data: bytes) -> None:
        text = data.strip()
        if text == b"[DONE]":
            self.done = True
            return
        if not text:
            return
        try:
            obj = _loads(text)
        except ValueError as exc:
            raise FrameError(f"SSE data frame is not JSON: {text[:120]!r}") from exc
        if not isinstance(obj, dict):
            raise FrameError(f"SSE data frame is a {type(obj).__name__}, not an object")
        for choice in self.fold_envelope(obj):  # ``fold(obj, streaming=True)``, one call less per frame
            self._choice(choice, "delta")

    def fold(self, obj: dict[str, Any], *, streaming: bool) -> None:
        """Fold one chunk (``streaming``) or a whole ``chat.completion`` body."""
        for choice in self.fold_envelope(obj):
            self._choice(choice, "delta" if streaming else "message")

    def _choice(self, choice: dict[str, Any], key: str) -> None:
        part = choice.get(key)
        if isinstance(part, dict):
            content = part.get("content")
            if isinstance(content, str):
                if content:
                    self._content.append(content)
                    self.output_seen = True
            elif isinstance(content, list):
                texts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
                if any(texts):
                    self._content.extend(t for t in texts if t)
                    self.output_seen = True
            tool_calls = part.get("tool_calls")
            if isinstance(tool_calls, list):
                for position, call in enumerate(tool_calls):
                    if isinstance(call, dict):
                        self._tool(call, position)
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish:
            self.finish_reason = finish
        if finish == "error" or choice.get("error") is not None:  # nothing to fold otherwise
            self.fold_choice_error(choice, finish)

    def _tool(self, call: dict[str, Any], position: int) -> None:
        index = call.get("index", position)
        if not isinstance(index, int):
            index = position
        draft = self._tools.setdefault(index, _ToolDraft())
        if isinstance(call.get("id"), str):
            draft.id = call["id"]
        function = call.get("function")
        if isinstance(function, dict):
            if isinstance(function.get("name"), str) and function["name"]:
                draft.name = function["name"]
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                draft.parts.append(arguments)
            elif isinstance(arguments, dict):
                # Some hosts send parsed arguments; keep them as the JSON text they mean.
                draft.parts.append(json.dumps(arguments))
        self.output_seen = True

    def answer(self, ttft_ms: float | None = None) -> Answer:
        """The answer folded so far."""
        return Answer(
            content="".join(self._content) if self._content else None,
            tool_calls=tuple(
                ToolCall(d.id, d.name, "".join(d.parts)) for _, d in sorted(self._tools.items())
            ),
            finish_reason=self.finish_reason,
            usage=self.usage,
            provider=self.provider,
            model=self.model,
            generation_id=self.generation_id,
            ttft_ms=ttft_ms,
        )


def parse_body(raw: bytes) -> ChatStream:
    """Parse a whole (non-streamed) chat body; leading whitespace padding is allowed.

    Raises ``FrameError`` when the body is not a JSON object with choices or an error.
    """
    text = raw.strip()
    if not text:
        raise FrameError("empty body")
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise FrameError(f"body is not JSON: {text[:120]!r}") from exc
    if not isinstance(obj, dict):
        raise FrameError(f"body is a {type(obj).__name__}, not an object")
    if not isinstance(obj.get("choices"), list) and obj.get("error") is None:
        raise FrameError("body has neither choices nor an error")
    stream = ChatStream()
    stream.fold(obj, streaming=False)
    stream.done = True
    return stream
