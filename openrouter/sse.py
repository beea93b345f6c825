"""Split a ``text/event-stream`` body into the ``data`` of its events, in linear time.

Rules (WHATWG HTML, "Server-sent events", interpreting an event stream), restricted to
what OpenRouter sends: lines end in LF or CRLF; a line starting with ``:`` is a comment
(``: OPENROUTER PROCESSING`` keep-alives); ``data:`` lines of one event are joined with
LF; a blank line dispatches the event; ``event:``, ``id:`` and ``retry:`` carry nothing
we use. One edge rule for the end of the body, the same for the canary and the gateway:
an event whose last ``data:`` line is complete, or whose last line has no newline, is
still dispatched (``SSEFrames.end``); whether it parses is then the JSON decoder's call.

A partial line waits in a list of chunks and is joined once, when its newline arrives:
re-joining it on every chunk made a single 200 MB line cost seconds of CPU. A line
longer than ``max_line_bytes`` raises ``TooLargeError`` as soon as it is seen, after the
events completed before it were handed out (they are evidence: the first token, the
provider).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

from openrouter.jsonbody import TooLargeError

DEFAULT_MAX_LINE_BYTES: Final = 1024 * 1024  # 1 MiB: a chunk line is a few hundred bytes


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched event: ``data`` is its joined ``data:`` lines (UTF-8, invalid bytes
    replaced)."""

    data: str


class SSEFrames:
    """Feed body bytes as they arrive, split anywhere; get the ``data`` (bytes) of each
    event completed by them. Call ``end()`` when the body ends.

    ``feed`` and ``end`` raise ``TooLargeError`` for a line over ``max_line_bytes``: at
    once when no event came before it in the same chunk, else at the next call.
    """

    __slots__ = ("_partial", "_partial_size", "_data", "_overflow", "max_line_bytes")

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._partial: list[bytes] = []
        self._partial_size = 0
        self._data: list[bytes] = []
        self._overflow: TooLargeError | None = None
        self.max_line_bytes = max_line_bytes

    def feed(self, chunk: bytes) -> list[bytes]:
        """The data of every event a blank line in ``chunk`` completed, in order."""
        if self._overflow is not None:
            raise self._overflow
        newline = chunk.find(b"\n")
        if newline < 0:
            self._hold(chunk)
            return []
        frames: list[bytes] = []
        if self._partial:
            self._partial.append(chunk[:newline])
            line = b"".join(self._partial)
            self._partial.clear()
            self._partial_size = 0
            self._line(line, frames)
            lines = chunk[newline + 1 :].split(b"\n")
        else:
            lines = chunk.split(b"\n")
        tail = lines.pop()
        cap = self.max_line_bytes
        data = self._data
        # ``_line`` inlined: a call per line was a third of the gateway's parsing CPU
        # (a chat answer is two or three lines per token).
        for line in lines:
            if len(line) > cap:
                return self._overflowed(frames)
            if line[-1:] == b"\r":
                line = line[:-1]
            if not line:
                if data:
                    frames.append(data[0] if len(data) == 1 else b"\n".join(data))
                    data.clear()
            elif line[0] == 0x3A:  # ":" comment
                continue
            elif line.startswith(b"data:"):
                value = line[5:]
                data.append(value[1:] if value[:1] == b" " else value)
        if tail:
            if self._partial_size + len(tail) > cap:
                return self._overflowed(frames)
            self._hold(tail)
        return frames

    def end(self) -> list[bytes]:
        """The body ended: the data of a last event left without its closing blank line
        (its last line with or without a newline), or []."""
        if self._overflow is not None:
            raise self._overflow
        frames: list[bytes] = []
        if self._partial:
            line = b"".join(self._partial)
            self._partial.clear()
            self._partial_size = 0
            self._line(line, frames)
        self._line(b"", frames)
        return frames

    def held(self) -> tuple[list[bytes], bytes]:
        """What arrived but no blank line has dispatched yet, left in place: the ``data``
        values of the event in progress (lines complete, their field name and one leading
        space dropped) and the line in progress (no newline yet, as received, b"" when
        none)."""
        return list(self._data), b"".join(self._partial)

    def _overflowed(self, frames: list[bytes]) -> list[bytes]:
        """A line is over the cap: hand out the events before it, refuse everything after."""
        self._overflow = TooLargeError("line", self.max_line_bytes)
        self._partial.clear()
        self._data.clear()
        if not frames:
            raise self._overflow
        return frames

    def _hold(self, part: bytes) -> None:
        self._partial_size += len(part)
        if self._partial_size > self.max_line_bytes:
            self._overflowed([])
        self._partial.append(part)

    def _line(self, line: bytes, frames: list[bytes]) -> None:
        if len(line) > self.max_line_bytes:
            self._overflowed(frames)
            return
        if line[-1:] == b"\r":
            line = line[:-1]
        if not line:
            if self._data:
                data = self._data
                frames.append(data[0] if len(data) == 1 else b"\n".join(data))
                data.clear()
        elif line[0] == 0x3A:
            return
        elif line.startswith(b"data:"):
            value = line[5:]
            self._data.append(value[1:] if value[:1] == b" " else value)


def iter_frames(chunks: Iterable[bytes], max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Iterator[bytes]:
    """The data of every event in ``chunks``, the last one kept by the end-of-body rule."""
    frames = SSEFrames(max_line_bytes)
    for chunk in chunks:
        yield from frames.feed(chunk)
    yield from frames.end()


def parse_sse_events(raw: bytes | Iterable[bytes], max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> list[SSEEvent]:
    """Split a recorded event stream into events; comments produce none.

    Invalid UTF-8 is replaced. Raises ``TooLargeError`` for a line over the cap.
    """
    chunks = (raw,) if isinstance(raw, bytes) else raw
    return [SSEEvent(d.decode("utf-8", errors="replace")) for d in iter_frames(chunks, max_line_bytes)]
