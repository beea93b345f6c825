"""Fold an OpenAI-compatible chat answer, streamed (SSE) or whole, into an ``Answer``.

The wire is read by ``openrouter/``: its event-stream splitter (``openrouter.sse``, with
the per-line cap and the end-of-body rule), its one JSON decoder with the gateway's
policy for invalid UTF-8 (``reject``: a corrupted answer is never passed off as the
provider's) and its chunk envelope. What this module adds, which the canary does not
need: tool-call deltas, merged by index (OpenAI streams a call's name once and its
arguments in pieces), and ``output_seen``, the commit point of an attempt.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from openrouter.chat import ChunkEnvelope
from openrouter.errors import ErrorInfo
from openrouter.heldframe import held_frame_fault
from openrouter.jsonbody import InvalidBodyError, decode_object
from openrouter.sse import DEFAULT_MAX_LINE_BYTES, SSEFrames
from routing.terms import FinishReason


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
    ``feed_end`` at the end of the body); read ``done``, ``error``, ``output_seen``,
    ``finished`` and ``answer()``.

    ``feed`` and ``feed_end`` raise ``InvalidBodyError`` for a data frame that is not a
    JSON object (or not UTF-8), and its subclass ``TooLargeError`` for a line over
    ``max_line_bytes``.
    """

    __slots__ = ("_frames", "_aligned", "_max_line", "_content", "_tools", "finish_reason", "done", "output_seen",
                 "finished", "events", "content_chars", "content_events", "other_frame_seen", "null_choices")

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, *, record: bool = False) -> None:
        self._frames = SSEFrames(max_line_bytes)
        # True while every chunk fed so far ended on an event boundary (a blank line):
        # the splitter then holds nothing, and a chunk that is exactly one ``data:``
        # event can skip it (``feed``).
        self._aligned = True
        self._max_line = max_line_bytes
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
        # With ``record``: the content-bearing deltas (content or tool-call pieces) folded
        # since the caller last cleared the list, as the upstream sent them, for a stream
        # passed on chunk by chunk. Role-only and empty deltas are not content: not kept.
        self.events: list[dict[str, Any]] | None = [] if record else None
        self.content_chars = 0
        self.content_events = 0  # content-bearing deltas recorded, for the pass-through count
        # True once a data frame that carried no content and was not [DONE] was folded
        # (``events_seen``; set off the per-token path).
        self.other_frame_seen = False
        # Chunks whose ``choices`` is null (or not a list), skipped: noted in the attempt's
        # record, never a failure.
        self.null_choices = 0

    def feed(self, chunk: bytes) -> None:
        """Body bytes as they arrive, split anywhere. Complete events are folded now, the
        rest waits for the next chunk; nothing after [DONE] or an error is folded."""
        if self.finished:
            return
        # Upstreams write one event per chunk (``data: {...}`` and a blank line): fold
        # it without the splitter, which gives the same data for such a chunk (one data
        # line, its one leading space dropped, a trailing CR stripped by ``_frame``) and
        # cost about a third of the parsing CPU per event. Anything else (comments,
        # events split across chunks, several events per chunk) takes the splitter.
        if (self._aligned and chunk.startswith(b"data: ") and chunk.endswith(b"\n\n") and chunk.count(b"\n") == 2
                and len(chunk) <= self._max_line):
            self._frame(chunk[6:-2])
            if self.done or self.error is not None:
                self.finished = True
            return
        # Aligned again when this chunk ends on a blank line and holds no line over the
        # cap (an over-cap line the splitter refuses on its next call must reach it).
        self._aligned = chunk[-2:] == b"\n\n" and len(chunk) <= self._max_line
        for frame in self._frames.feed(chunk):
            self._frame(frame)
            if self.done or self.error is not None:
                self.finished = True
                return

    def feed_end(self) -> None:
        """The body ended: fold a last event left without its closing blank line (its
        last line with or without a newline; ``openrouter.sse``)."""
        if self.finished:
            return
        for frame in self._frames.end():
            self._frame(frame)
            if self.done or self.error is not None:
                self.finished = True
                return

    def held_fault(self) -> str | None:
        """Why the bytes received but not folded yet (an event whose blank line has not
        arrived) can no longer become a chunk, whatever follows; None while they can
        (``openrouter.heldframe``). Reads nothing more and folds nothing."""
        if self.finished:
            return None
        return held_frame_fault(*self._frames.held())

    @property
    def events_seen(self) -> bool:
        """True once any SSE data frame arrived (``[DONE]`` included)."""
        return self.done or self.output_seen or self.other_frame_seen

    def _frame(self, data: bytes) -> None:
        text = data.strip()
        if text == b"[DONE]":
            self.done = True
            return
        if not text:
            self.other_frame_seen = True
            return
        obj = decode_object(text, "SSE data frame", invalid_utf8="reject")
        if self._content_delta(obj):
            return
        self.other_frame_seen = True
        choices = self.fold_envelope(obj)  # ``fold(obj, streaming=True)``, one call less per frame
        if not choices and "choices" in obj and not isinstance(obj["choices"], list):
            self.null_choices += 1
        for choice in choices:
            self._choice(choice, "delta")

    def _content_delta(self, obj: dict[str, Any]) -> bool:
        """Fold ``obj`` and return True when it is the common chunk: one choice (index 0)
        whose delta is a text content piece, no finish reason, usage, error or tool call,
        after the envelope's id, provider and model are known. For such a chunk
        ``fold_envelope`` and ``_choice`` would change nothing else; this skips their
        generic checks, about 40 % of the parsing CPU per chunk (a reply is one chunk
        per token). False, with nothing folded, for any other chunk."""
        if not (self.generation_id and self.provider and self.model) or "usage" in obj or "error" in obj:
            return False
        choices = obj.get("choices")
        if type(choices) is not list or len(choices) != 1:
            return False
        choice = choices[0]
        if (type(choice) is not dict or choice.get("finish_reason") is not None or "error" in choice
                or choice.get("index", 0) not in (0, None)):
            return False
        delta = choice.get("delta")
        if type(delta) is not dict or "tool_calls" in delta:
            return False
        content = delta.get("content")
        if type(content) is not str:
            return False
        if content:
            self._content.append(content)
            self.output_seen = True
            self.content_chars += len(content)
            if self.events is not None:
                self.events.append({"content": content})
                self.content_events += 1
        else:
            self.other_frame_seen = True
        return True

    def fold(self, obj: dict[str, Any], *, streaming: bool) -> None:
        """Fold one chunk (``streaming``) or a whole ``chat.completion`` body."""
        for choice in self.fold_envelope(obj):
            self._choice(choice, "delta" if streaming else "message")

    def _choice(self, choice: dict[str, Any], key: str) -> None:
        part = choice.get(key)
        if isinstance(part, dict):
            content = part.get("content")
            text = ""
            if isinstance(content, str):
                if content:
                    text = content
                    self._content.append(content)
                    self.output_seen = True
            elif isinstance(content, list):
                texts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
                if any(texts):
                    text = "".join(t for t in texts if t)
                    self._content.append(text)
                    self.output_seen = True
            self.content_chars += len(text)
            tool_calls = part.get("tool_calls")
            calls = []
            if isinstance(tool_calls, list):
                for position, call in enumerate(tool_calls):
                    if isinstance(call, dict):
                        self._tool(call, position)
                        calls.append(call)
            if self.events is not None and (text or calls):
                event: dict[str, Any] = {}
                if text:
                    event["content"] = text
                if calls:
                    event["tool_calls"] = calls
                self.events.append(event)
                self.content_events += 1
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish:
            self.finish_reason = finish
        if finish == FinishReason.ERROR or choice.get("error") is not None:  # nothing to fold otherwise
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

    @property
    def content_so_far(self) -> str:
        """The content folded so far (the held prefix of a stream)."""
        return "".join(self._content)


def parse_body(raw: bytes) -> ChatStream:
    """Parse a whole (non-streamed) chat body; leading whitespace padding is allowed.

    Raises ``InvalidBodyError`` when the body is not UTF-8, not a JSON object (nesting
    too deep included), or has neither choices nor an error.
    """
    obj = decode_object(raw, "body", invalid_utf8="reject")
    if not isinstance(obj.get("choices"), list) and obj.get("error") is None:
        raise InvalidBodyError("body has neither choices nor an error")
    stream = ChatStream()
    stream.fold(obj, streaming=False)
    stream.done = True
    return stream
