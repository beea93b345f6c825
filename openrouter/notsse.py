"""A ``200 text/event-stream`` reply that is not an event stream: one rule for every wire.

The canary's probe clients (``openrouter.streamcall``, both of them) and the gateway's
upstream reader (``routing.gateway.upstream``) read the same fault alike: a body that
closed cleanly after zero SSE events, whose first bytes hold a line no event stream holds
(an HTML error page a proxy served as the stream), is a completed exchange with malformed
output, ``malformed_body``, with those first bytes as evidence; not a broken connection.
"""

from __future__ import annotations

from typing import Final

from openrouter.result import body_excerpt_of

# The name of the fault, on both wires: the canary's probe check and the gateway's
# failure reason.
MALFORMED_BODY: Final = "malformed_body"
# How much of a body's start is kept as the evidence (bytes).
HEAD_BYTES: Final = 512
MALFORMED_STREAM: Final = "the 200 event stream held no SSE event, only bytes that are not SSE"
# The line starts an SSE stream may hold besides data (WHATWG HTML, "Server-sent events"):
# comments (":"), the fields event/id/retry, blank lines.
_SSE_LINE_STARTS = (b":", b"event:", b"id:", b"retry:", b"data:", b"event", b"id", b"retry", b"data")


def not_sse(head: bytes) -> bool:
    """True when ``head`` (a body's first bytes) holds a line that no SSE stream holds:
    neither blank, a comment, nor one of the fields ``data``, ``event``, ``id``,
    ``retry``. The last line is skipped when it may have been cut by ``HEAD_BYTES``."""
    lines = head.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    if len(head) >= HEAD_BYTES:
        lines = lines[:-1]
    return any(line.strip() and not line.startswith(_SSE_LINE_STARTS) for line in lines)


def malformed_stream(head: bytes, *, events_seen: bool) -> bool:
    """For a 200 event stream whose body closed cleanly: True (``malformed_body``) when it
    held no SSE event (``events_seen`` False) and ``head``, the body's first
    ``HEAD_BYTES``, is not SSE (``not_sse``); False otherwise (an ordinary stream that
    ended early)."""
    return not events_seen and not_sse(head)


def malformed_evidence(head: bytes) -> str:
    """``MALFORMED_STREAM`` with the evidence: the excerpt of ``head`` the canary's probe
    keeps too (``openrouter.result.body_excerpt_of``, 300 characters)."""
    return f"{MALFORMED_STREAM}: {body_excerpt_of(head)!r}"


class StreamHead:
    """The first ``HEAD_BYTES`` of a body fed chunk by chunk (``bytes``)."""

    __slots__ = ("bytes",)

    def __init__(self) -> None:
        self.bytes = b""

    def feed(self, chunk: bytes) -> None:
        if len(self.bytes) < HEAD_BYTES:
            self.bytes += chunk[: HEAD_BYTES - len(self.bytes)]
