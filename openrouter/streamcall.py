"""One streamed pinned chat being read, whatever reads its bytes: SSE frames folded into
the reply, and every way such a stream ends as a ``Call``.

Both probe wires share it, the httpx client (``openrouter.client``, a thread per call)
and the event-loop client (``openrouter.aiochat``): the frames, the JSON policy (invalid
UTF-8 replaced: the judges read what arrived) and the verdict on a stream's end are the
same whichever library read the socket.
"""

from __future__ import annotations

from openrouter.chat import StreamAccumulator
from openrouter.errors import ErrorInfo
from openrouter.jsonbody import InvalidBodyError, TooLargeError
from openrouter.notsse import MALFORMED_STREAM, StreamHead, malformed_stream
from openrouter.result import Call, CallContext, Completion, TransportKind, completion_tokens
from openrouter.sse import SSEFrames
from openrouter.transport import silence_label


class StreamCall:
    """The state of one ``text/event-stream`` reply: ``feed`` each body chunk as it
    arrives, then end with one of ``finished`` (the body ended or ``feed`` said stop),
    ``cut`` (a deadline of ``openrouter.transport.GuardedBody``), ``silent`` (a socket
    read timeout), ``broken`` (the connection failed) or ``fail``.

    ``ttft_limit_s`` and ``total_timeout_s`` are the call's limits in s, counted from
    ``ctx.start`` (the request's sending); ``max_line_bytes`` caps each SSE line.
    """

    __slots__ = ("ctx", "acc", "frames", "last", "head", "ttft_limit_s", "total_timeout_s")

    def __init__(self, ctx: CallContext, *, max_line_bytes: int, ttft_limit_s: float, total_timeout_s: float) -> None:
        self.ctx = ctx
        self.acc = StreamAccumulator()
        self.frames = SSEFrames(max_line_bytes)
        # The data frame being read: the evidence of a failure (a frame that did not
        # parse, an error chunk, the last frame before the stream broke).
        self.last: bytes | None = None
        # The body's first bytes: the evidence when a 200 event stream holds no event.
        self.head = StreamHead()
        self.ttft_limit_s = ttft_limit_s
        self.total_timeout_s = total_timeout_s

    def first_token_seen(self) -> bool:
        return self.acc.ttft_ms is not None

    def feed(self, chunk: bytes) -> bool:
        """Fold the events ``chunk`` completes; True once the stream is over: ``[DONE]``,
        or an error chunk (OpenRouter ends the stream after it, with or without
        ``[DONE]``). Raises ``TooLargeError`` (a line over the cap) and
        ``InvalidBodyError`` (a data frame that is not a JSON object)."""
        acc = self.acc
        self.head.feed(chunk)
        for data in self.frames.feed(chunk):
            self.last = data
            acc.feed(data, at_ms=self.ctx.elapsed_ms())
            if acc.done or acc.error is not None:
                return True
        return False

    def fail(self, kind: TransportKind, message: str, error: ErrorInfo | None = None) -> Call:
        acc = self.acc
        return self.ctx.call(
            kind=kind, message=message if error is None else None, error=error, provider=acc.provider,
            generation_id=acc.generation_id, usage=acc.usage, ttft_ms=acc.ttft_ms, body=self.last,
        )

    def complete(self, *, first_token_timeout: bool = False) -> Call:
        acc, ctx = self.acc, self.ctx
        total_ms = ctx.elapsed_ms()
        if first_token_timeout:
            # Cut at the first-token deadline: the call lasted the limit, even when the
            # event loop's timer fired a hair early by this clock (uvloop reads its clock
            # once per turn), which read as "ended sooner" and made a fail inconclusive.
            total_ms = max(total_ms, self.ttft_limit_s * 1000.0)
        reply = Completion(
            content=acc.content, finish_reason=None if first_token_timeout else acc.finish_reason,
            reasoning=acc.reasoning, refusal=acc.refusal, completion_tokens=completion_tokens(acc.usage),
            max_tokens=ctx.max_tokens, ttft_ms=acc.ttft_ms, total_ms=total_ms, stream_opened=True,
        )
        return ctx.call(
            reply=reply, provider=acc.provider, generation_id=acc.generation_id, usage=acc.usage,
            ttft_ms=acc.ttft_ms, first_token_timeout=first_token_timeout, total_ms=total_ms,
        )

    def cut(self, kind: str) -> Call:
        """Reading stopped at a deadline (``Cut.kind``)."""
        if kind == "first_token_timeout":
            return self.complete(first_token_timeout=True)
        return self.fail("timeout", "total timeout passed")

    def silent(self) -> Call:
        """The socket went fully silent (not even keep-alive comments): say which limit
        that silence ran into."""
        label = silence_label(
            elapsed_s=self.ctx.clock() - self.ctx.start, first_token_seen=self.first_token_seen(),
            first_token_s=self.ttft_limit_s, total_s=self.total_timeout_s,
        )
        if label == "first_token":
            return self.complete(first_token_timeout=True)
        if label == "total":
            return self.fail("timeout", "stream went silent until the total timeout passed")
        return self.fail("timeout", "stream went silent (idle timeout)")

    def broken(self, exc: BaseException) -> Call:
        """The connection failed mid-stream (reset, closed, a broken chunked body)."""
        if self.acc.error is not None:
            return self.fail("error_chunk", "", self.acc.error)
        return self.fail("reset", f"connection closed before [DONE]: {exc}")

    def finished(self) -> Call:
        """The call once reading stopped without an exception: ``feed`` said the stream
        is over, or the body ended (then a last event without its closing blank line is
        kept, ``openrouter.sse``; one cut inside its JSON is a truncated stream)."""
        acc = self.acc
        if acc.error is not None:
            return self.fail("error_chunk", "", acc.error)
        if acc.done:
            return self.complete()
        try:
            for data in self.frames.end():
                self.last = data
                acc.feed(data, at_ms=self.ctx.elapsed_ms())
        except TooLargeError as exc:
            return self.fail("too_large", str(exc))
        except InvalidBodyError:
            return self.fail("reset", "stream ended mid-frame (truncated SSE)")
        if acc.error is not None:
            return self.fail("error_chunk", "", acc.error)
        if acc.done or acc.finish_reason is not None:
            # Closed cleanly after the finish chunk but without [DONE]: the generation
            # is whole; only the trailer is missing.
            return self.complete()
        if malformed_stream(self.head.bytes, events_seen=self.last is not None):
            # A clean close after zero events, with bytes that were not SSE (an HTML page
            # served as text/event-stream): a completed exchange with malformed output,
            # not a broken connection (``openrouter.notsse``, the gateway's rule too).
            return self.ctx.call(
                kind="invalid_body", message=MALFORMED_STREAM,
                provider=acc.provider, generation_id=acc.generation_id, usage=acc.usage, ttft_ms=acc.ttft_ms,
                body=self.head.bytes,
            )
        return self.fail("reset", "stream closed before a finish_reason or [DONE]")
