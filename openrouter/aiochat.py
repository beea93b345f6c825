"""Streamed pinned chats on one asyncio event loop per process, for the probes.

Why: a probe reads about 40 SSE chunks. Read by a thread each (httpx, httpcore, h11),
every chunk is a GIL hand-off among a worker's hundreds of probe threads and a walk
through three pure-Python layers; read on one event loop, a chunk costs a callback.
Measured on the scale bench's fleet, 400 streams 80 at a time: 4.3 ms of client CPU per
stream with httpx in threads, 7-12 ms with ``httpx.AsyncClient`` (anyio underneath), 2.2
ms with aiohttp (on a faster host); on 2026-12-02, side by side, 2.6-3.2 ms with aiohttp
and 1.4-1.8 ms with ``openrouter.http1_loop`` (an asyncio protocol over httptools, the
parser of the gateway's wire), which it now uses.

``LoopOpenRouterClient`` is an ``OpenRouterClient`` (discovery, generation lookups and
non-streamed chats stay on httpx) whose streamed ``chat_pinned`` is handed to the loop
once per call, not per chunk; the calling thread blocks on the result. The frames, the
JSON policy and the way a stream ends are ``openrouter.streamcall``'s, as for the httpx
client, so both clients return the same ``Call`` for the same bytes.

Timing: ``Call.ttft_ms`` and ``total_ms`` count from the instant the request was handed
to the socket (``Exchange.sent_at``); what came before on our side (the hand-off to the
loop, the connection pool, the TCP connect) is ``Call.wait_ms``, so a burst of our own
probes does not inflate the endpoint's TTFT.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import threading
import weakref
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson
import uvloop

from openrouter.client import OpenRouterClient, pinned_body
from openrouter.errors import ErrorInfo, is_moderation_error, parse_error_body
from openrouter.h1reply import ConnectionLost, InvalidReply, SendFailed, TimedOut, UndecodableBody
from openrouter.http1 import Target, parse_url, request_head
from openrouter.http1_loop import Exchange, LoopPool
from openrouter.jsonbody import InvalidBodyError, TooLargeError
from openrouter.result import Call, CallContext, status_kind
from openrouter.streamcall import StreamCall
from openrouter.transport import Cut, GuardedBody

T = TypeVar("T")
# How long past a call's own limits the calling thread waits for the loop before it
# gives the call up as a timeout (a loop wedged by a bug must not hang a probe).
LOOP_MARGIN_S = 15.0
# How long the end of a stream's body (its last chunk, after [DONE]) is waited for so that
# its connection can be reused (s).
DRAIN_S = 1.0
# After a stream's first token the probe times nothing per chunk: its reads are batched,
# one every READ_BATCH_S (s), so that a reply's ~30 chunks wake the loop a few times
# instead of once each. Measured by bench/wire_batching.py (600 streams, 80 at a time,
# alternating in one run, 2026-12-02): client CPU per stream 3.3-3.7 ms reading as bytes
# come, 2.4-2.8 ms at 50 ms, 2.5 at 100 ms, 3.2 at 25 ms; the reply's total_ms is up to
# one interval late, its TTFT untouched.
READ_BATCH_S = 0.05


class EventLoopThread:
    """One event loop running in a daemon thread, started on first use and again in a
    forked child (a loop thread does not survive ``fork``).

    The loop is uvloop's (libuv under asyncio's API): with the probes' own protocol
    (``openrouter.http1_loop``) it read the scale bench's round for less CPU than
    asyncio's selector loop, side by side in three pairs of runs (2026-12-02): worker CPU
    per probe 4.70 / 5.33, 5.08 / 5.75 and 3.95 / 5.52 ms (uvloop / asyncio), ratio to the
    slowest chain 1.83 / 1.93, 1.90 / 2.22 and 1.72 / 2.13. (Under aiohttp's client it
    had made no difference.)"""

    def __init__(self, name: str = "openrouter-loop") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = 0

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._pid != os.getpid():
                loop = uvloop.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self._name, daemon=True)
                thread.start()
                self._loop, self._pid = loop, os.getpid()
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T], timeout_s: float) -> T:
        """Run ``coro`` on the loop and wait for its result (at most ``timeout_s``, then
        it is cancelled and ``TimeoutError`` raised)."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop())
        try:
            return future.result(timeout_s)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"the event loop gave no result within {timeout_s:.0f} s") from None

    def close(self) -> None:
        with self._lock:
            if self._loop is not None and self._pid == os.getpid():
                self._loop.call_soon_threadsafe(self._loop.stop)
            self._loop = None


class LoopOpenRouterClient(OpenRouterClient):
    """``OpenRouterClient`` whose streamed chats run on a process-wide event loop.

    Same arguments as ``OpenRouterClient``, and ``read_batch_s`` (s, 0 to 1): after a
    stream's first token, read at most this often (``READ_BATCH_S``; 0 reads as bytes
    come); ``max_connections`` bounds the loop's connection pool too. With a ``transport`` (tests' in-process fakes) every call stays
    on httpx. ``close()`` closes both pools. Raises ``ValueError`` for a base URL that is
    not http(s) with a host, a header value (the API key, the attribution headers)
    with a line break or a character outside ISO-8859-1, or a ``read_batch_s`` out of range.
    """

    def __init__(self, *args: Any, read_batch_s: float = READ_BATCH_S, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if isinstance(read_batch_s, bool) or not isinstance(read_batch_s, int | float) or not 0 <= read_batch_s <= 1:
            raise ValueError(f"read_batch_s must be a number between 0 and 1 s, not {read_batch_s!r}")
        self.read_batch_s = read_batch_s
        self._loop_streams = not self.transport_injected
        self._runner = EventLoopThread()
        self._pool: LoopPool | None = None
        self._pool_pid = 0
        if self._loop_streams:
            try:
                self._target: Target = parse_url(f"{self.base_url.rstrip('/')}/chat/completions")
                # The same head for every probe: rendered once.
                self._head = request_head("POST", self._target, {
                    **self.headers, "Accept": "text/event-stream", "Cache-Control": "no-store",
                    "Content-Type": "application/json", "Accept-Encoding": "gzip, deflate",
                })
            except SendFailed as exc:  # a base URL or a header value (the API key) that cannot be sent
                raise ValueError(str(exc)) from None
        # A process-wide client is never closed by its owner: close its pool at exit.
        atexit.register(_close_at_exit, weakref.ref(self))

    def close(self) -> None:
        super().close()
        pool, self._pool = self._pool, None
        if pool is not None and self._pool_pid == os.getpid():
            try:
                self._runner.run(_pool_close(pool), 5.0)
            except (TimeoutError, RuntimeError):
                pass
        self._runner.close()

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
        """``OpenRouterClient.chat_pinned``'s contract; a streamed call is read on the
        event loop, with ``Call.wait_ms`` set (module docstring)."""
        if not (stream and self._loop_streams):
            return super().chat_pinned(
                model_id, tag, messages, max_tokens=max_tokens, temperature=temperature, stream=stream,
                response_format=response_format, require_parameters=require_parameters, ttft_limit_s=ttft_limit_s,
                total_timeout_s=total_timeout_s, seed=seed, expected_provider=expected_provider,
            )
        body = orjson.dumps(pinned_body(
            model_id, tag, messages, max_tokens=max_tokens, temperature=temperature, stream=True,
            response_format=response_format, require_parameters=require_parameters, seed=seed,
        ))
        request = self._head + b"Content-Length: %d\r\n\r\n" % len(body) + body
        called = self._clock()
        ctx = CallContext(start=called, clock=self._clock, expected_provider=expected_provider, max_tokens=max_tokens)
        limit_s = self.connect_timeout_s + total_timeout_s + LOOP_MARGIN_S
        try:
            return self._runner.run(self._stream(request, ctx, called, ttft_limit_s, total_timeout_s), limit_s)
        except TimeoutError:
            return ctx.call(kind="timeout", message=f"no result from the event loop within {limit_s:.0f} s")

    def _pool_get(self) -> LoopPool:
        if self._pool is None or self._pool_pid != os.getpid():
            self._pool = LoopPool(max_connections=self.max_connections, clock=self._clock)
            self._pool_pid = os.getpid()
        return self._pool

    async def _stream(self, request: bytes, ctx: CallContext, called: float, ttft_limit_s: float, total_timeout_s: float) -> Call:
        try:
            exchange = await self._pool_get().send(self._target, request, connect_timeout_s=min(self.connect_timeout_s, ttft_limit_s))
        except SendFailed as exc:
            self._mark_sent(ctx, ctx.clock(), called)
            return ctx.call(kind="connect", message=str(exc))
        self._mark_sent(ctx, exchange.sent_at, called)
        limits = _Limits.of(ctx, ttft_limit_s, total_timeout_s, self.idle_timeout_s)
        try:
            try:
                async with asyncio.timeout_at(limits.first_at):
                    await exchange.head(limits.read_s)
            except TimeoutError:  # headers trickled past the limit (silence is TimedOut)
                return ctx.call(kind="timeout", message=f"no response headers within {ttft_limit_s}s")
            except TimedOut:
                return ctx.call(kind="timeout", message=f"no response headers within {limits.read_s}s")
            except UndecodableBody as exc:  # a content-coding we did not offer
                return ctx.call(kind="invalid_body", message=f"undecodable body: {exc}")
            except InvalidReply as exc:
                return ctx.call(kind="reset", message=f"the response could not be read: {exc}")
            except ConnectionLost as exc:
                return ctx.call(kind="reset", message=f"connection closed before a response: {exc}")
            ctx.take_status(exchange.status, exchange.headers)
            status = exchange.status
            if not 200 <= status < 300:
                return await self._aerror_response(exchange, ctx, ctx.start + total_timeout_s, limits)
            if ctx.clock() - ctx.start > ttft_limit_s:
                return ctx.call(kind="timeout", message=f"response headers after {ttft_limit_s}s")
            if "text/event-stream" in exchange.headers.get("content-type", ""):
                return await self._aread_stream(exchange, ctx, ttft_limit_s, total_timeout_s, limits)
            # A stream request answered with a plain body (e.g. an HTTP-200 {"error": ...}).
            raw = await self._aread_capped(exchange, ctx, ctx.start + total_timeout_s, limits)
            return raw if isinstance(raw, Call) else self.plain_body_call(raw, ctx)
        finally:
            exchange.close()

    @staticmethod
    def _mark_sent(ctx: CallContext, sent: float, called: float) -> None:
        """The clock starts when the request went out (or, when it never did, when the
        loop gave up on sending it); the time before is ``wait_ms``."""
        ctx.start = sent
        ctx.wait_ms = max(0.0, (sent - called) * 1000.0)

    async def _aread_stream(self, exchange: Exchange, ctx: CallContext, ttft_limit_s: float, total_timeout_s: float,
                            limits: _Limits) -> Call:
        stream = StreamCall(ctx, max_line_bytes=self.max_line_bytes, ttft_limit_s=ttft_limit_s, total_timeout_s=total_timeout_s)
        guard = GuardedBody(
            None, clock=ctx.clock, first_token_deadline=ctx.start + ttft_limit_s,
            total_deadline=ctx.start + total_timeout_s, max_bytes=self.max_response_bytes,
            first_token_seen=stream.first_token_seen,
        )
        try:
            # The deadlines hold whatever arrives: bytes that never make a chunk (a
            # trickled chunk size, a gzip header) reset the silence timer, not these.
            async with asyncio.timeout_at(limits.first_at) as deadline:
                first_pending = True
                while (chunk := await exchange.chunk(limits.read_s)) is not None:
                    # Every chunk (comments included) passes the deadline check before its
                    # events are decoded.
                    guard.take(chunk)
                    if stream.feed(chunk):
                        break
                    if first_pending and stream.first_token_seen():
                        first_pending = False
                        deadline.reschedule(limits.total_at)
                        # Never a pause that the silence timer could mistake for silence.
                        exchange.batch_reads(min(self.read_batch_s, limits.read_s / 4), limits.total_at)
        except TimeoutError:
            return stream.cut("timeout" if stream.first_token_seen() else "first_token_timeout")
        except Cut as cut:
            return stream.cut(cut.kind)
        except TooLargeError as exc:
            return stream.fail("too_large", str(exc))
        except InvalidBodyError as exc:
            return stream.fail("invalid_body", str(exc))
        except TimedOut:
            return stream.silent()
        except UndecodableBody as exc:
            return stream.fail("invalid_body", f"undecodable stream: {exc}")
        except InvalidReply as exc:
            return stream.fail("reset", f"the response could not be read: {exc}")
        except ConnectionLost as exc:
            return stream.broken(exc)
        call = stream.finished()
        if stream.acc.done and stream.acc.error is None:
            exchange.batch_reads(0.0, 0.0)  # the caller waits for the verdict: no pause now
            await _drain(exchange, guard, limits)
        return call

    async def _aread_capped(self, exchange: Exchange, ctx: CallContext, total_deadline: float, limits: _Limits) -> bytes | Call:
        """A whole body under the size cap and the total deadline; a Call on failure."""
        declared = exchange.declared_length
        if declared is not None and declared > self.max_response_bytes:
            return ctx.call(kind="too_large", message=f"Content-Length {declared} exceeds the {self.max_response_bytes}-byte cap")
        guard = GuardedBody(
            None, clock=ctx.clock, first_token_deadline=None, total_deadline=total_deadline,
            max_bytes=self.max_response_bytes, first_token_seen=lambda: True,
        )
        parts: list[bytes] = []
        try:
            async with asyncio.timeout_at(limits.total_at):
                while (chunk := await exchange.chunk(limits.read_s)) is not None:
                    guard.take(chunk)
                    parts.append(chunk)
        except TooLargeError as exc:
            return ctx.call(kind="too_large", message=str(exc))
        except (Cut, TimeoutError):
            return ctx.call(kind="timeout", message="total timeout passed")
        except TimedOut as exc:
            return ctx.call(kind="timeout", message=f"body stalled: {exc}")
        except UndecodableBody as exc:
            return ctx.call(kind="invalid_body", message=f"undecodable body: {exc}")
        except ConnectionLost as exc:
            return ctx.call(kind="reset", message=f"connection closed mid-body: {exc}")
        return b"".join(parts)

    async def _aerror_response(self, exchange: Exchange, ctx: CallContext, total_deadline: float, limits: _Limits) -> Call:
        status = exchange.status
        raw = await self._aread_capped(exchange, ctx, total_deadline, limits)
        if isinstance(raw, Call):
            error = ErrorInfo(message=f"HTTP {status}; body unreadable: {raw.error_message}")
            return ctx.call(kind=status_kind(status, error), error=error)
        error = parse_error_body(raw)
        if 300 <= status < 400:
            error = ErrorInfo(message=f"unexpected redirect HTTP {status} to {exchange.headers.get('location')!r}")
        message = error.message
        if status == 403 and is_moderation_error(status, error):
            reasons = error.metadata.get("reasons")
            if isinstance(reasons, list) and reasons:
                message = f"{message} (reasons: {', '.join(str(r) for r in reasons)})"
        return ctx.call(kind=status_kind(status, error), error=error, message=message, body=raw)


@dataclass(frozen=True)
class _Limits:
    """A call's limits on the event loop: ``read_s``, the longest silence (s: the smallest
    of the TTFT, idle and total limits, as for the httpx client), and the loop-clock
    instants of the first-token deadline (``first_at``) and the total one (``total_at``)."""

    read_s: float
    first_at: float
    total_at: float

    @classmethod
    def of(cls, ctx: CallContext, ttft_limit_s: float, total_timeout_s: float, idle_timeout_s: float) -> _Limits:
        # The call's clock may not be the loop's: its deadlines are carried over as offsets.
        sent_at = asyncio.get_running_loop().time() - (ctx.clock() - ctx.start)
        total_at = sent_at + total_timeout_s
        return cls(min(ttft_limit_s, idle_timeout_s, total_timeout_s), min(sent_at + ttft_limit_s, total_at), total_at)


async def _pool_close(pool: LoopPool) -> None:
    pool.close()


def _close_at_exit(ref: weakref.ref[LoopOpenRouterClient]) -> None:
    client = ref()
    if client is not None:
        client.close()


async def _drain(exchange: Exchange, guard: GuardedBody, limits: _Limits) -> None:
    """Read what follows ``[DONE]`` (the end of the chunked body) so the connection goes
    back to the pool instead of being closed, as the httpx client does; any error only
    means no reuse. At most ``DRAIN_S`` and never past the call's total deadline: the
    verdict is taken, and the caller is waiting for it."""
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout_at(min(limits.total_at, loop.time() + DRAIN_S)):
            while (chunk := await exchange.chunk(limits.read_s)) is not None:
                guard.take(chunk)
    except Exception:  # noqa: BLE001, S110 - the verdict is already taken
        pass
