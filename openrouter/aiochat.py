"""Streamed pinned chats on one asyncio event loop per process (aiohttp), for the probes.

Why: a probe reads about 40 SSE chunks. Read by a thread each (httpx, httpcore, h11),
every chunk is a GIL hand-off among a worker's hundreds of probe threads and a walk
through three pure-Python layers; read on one event loop by aiohttp (its HTTP parser is
C), a chunk costs a callback. Measured on the scale bench's fleet, 400 streams 80 at a
time: 4.3 ms of client CPU per stream with httpx in threads, 7-12 ms with
``httpx.AsyncClient`` (anyio underneath), 2.2 ms with aiohttp. aiohttp is already the
simulator's server: no new dependency.

``LoopOpenRouterClient`` is an ``OpenRouterClient`` (discovery, generation lookups and
non-streamed chats stay on httpx) whose streamed ``chat_pinned`` is handed to the loop
once per call, not per chunk; the calling thread blocks on the result. The frames, the
JSON policy and the way a stream ends are ``openrouter.streamcall``'s, as for the httpx
client, so both clients return the same ``Call`` for the same bytes.

Timing: ``Call.ttft_ms`` and ``total_ms`` count from the instant the request's headers
were written to the socket (aiohttp's ``on_request_headers_sent``); what came before on
our side (the hand-off to the loop, the connection pool, the TCP connect) is
``Call.wait_ms``, so a burst of our own probes does not inflate the endpoint's TTFT.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import threading
import weakref
from collections.abc import Callable, Coroutine, Mapping, Sequence
from types import SimpleNamespace
from typing import Any, TypeVar

import aiohttp

from openrouter.client import OpenRouterClient, pinned_body
from openrouter.errors import ErrorInfo, is_moderation_error, parse_error_body
from openrouter.jsonbody import InvalidBodyError, TooLargeError
from openrouter.result import Call, CallContext, status_kind
from openrouter.streamcall import StreamCall
from openrouter.transport import Cut, GuardedBody

T = TypeVar("T")
# How long past a call's own limits the calling thread waits for the loop before it
# gives the call up as a timeout (a loop wedged by a bug must not hang a probe).
LOOP_MARGIN_S = 15.0


class EventLoopThread:
    """One asyncio event loop running in a daemon thread, started on first use and again
    in a forked child (a loop thread does not survive ``fork``)."""

    def __init__(self, name: str = "openrouter-loop") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = 0

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._pid != os.getpid():
                loop = asyncio.new_event_loop()
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


async def _headers_sent(session: aiohttp.ClientSession, trace: SimpleNamespace, params: Any) -> None:
    clock: Callable[[], float] = trace.trace_request_ctx["clock"]
    trace.trace_request_ctx["sent"] = clock()


class LoopOpenRouterClient(OpenRouterClient):
    """``OpenRouterClient`` whose streamed chats run on a process-wide event loop.

    Same arguments as ``OpenRouterClient``; ``max_connections`` bounds the loop's
    connection pool too. With a ``transport`` (tests' in-process fakes) every call stays
    on httpx. ``close()`` closes both pools.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loop_streams = not self.transport_injected
        self._runner = EventLoopThread()
        self._session: aiohttp.ClientSession | None = None
        self._session_pid = 0
        # A process-wide client is never closed by its owner: close its session at exit
        # (aiohttp complains on stderr about an unclosed one).
        atexit.register(_close_at_exit, weakref.ref(self))

    def close(self) -> None:
        super().close()
        session, self._session = self._session, None
        if session is not None and self._session_pid == os.getpid():
            try:
                self._runner.run(session.close(), 5.0)
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
        body = pinned_body(
            model_id, tag, messages, max_tokens=max_tokens, temperature=temperature, stream=True,
            response_format=response_format, require_parameters=require_parameters, seed=seed,
        )
        called = self._clock()
        ctx = CallContext(start=called, clock=self._clock, expected_provider=expected_provider, max_tokens=max_tokens)
        limit_s = self.connect_timeout_s + total_timeout_s + LOOP_MARGIN_S
        try:
            return self._runner.run(self._stream(body, ctx, called, ttft_limit_s, total_timeout_s), limit_s)
        except TimeoutError:
            return ctx.call(kind="timeout", message=f"no result from the event loop within {limit_s:.0f} s")

    async def _session_get(self) -> aiohttp.ClientSession:
        if self._session is None or self._session_pid != os.getpid():
            trace = aiohttp.TraceConfig()
            trace.on_request_headers_sent.append(_headers_sent)
            # No cookie jar (an API client keeps no session), no automatic retries, the
            # process's DNS cache; keep-alive as httpx's (5 s).
            self._session = aiohttp.ClientSession(
                base_url=None, headers=self.headers, cookie_jar=aiohttp.DummyCookieJar(), trace_configs=[trace],
                connector=aiohttp.TCPConnector(limit=self.max_connections, limit_per_host=0, keepalive_timeout=5.0),
            )
            self._session_pid = os.getpid()
        return self._session

    async def _stream(
        self, body: dict[str, Any], ctx: CallContext, called: float, ttft_limit_s: float, total_timeout_s: float,
    ) -> Call:
        session = await self._session_get()
        # One socket read timeout serves both phases, as for the httpx client: the
        # smallest of the TTFT, idle and total limits. ``connect`` includes the pool wait.
        timeout = aiohttp.ClientTimeout(
            total=None, connect=self.connect_timeout_s, sock_connect=min(self.connect_timeout_s, ttft_limit_s),
            sock_read=min(ttft_limit_s, self.idle_timeout_s, total_timeout_s),
        )
        marks: dict[str, Any] = {"clock": self._clock}
        try:
            response = await session.post(
                f"{self.base_url}/chat/completions", json=body, timeout=timeout, allow_redirects=False,
                headers={"Accept": "text/event-stream", "Cache-Control": "no-store"}, trace_request_ctx=marks,
            )
        except aiohttp.ConnectionTimeoutError:
            self._mark_sent(ctx, marks, called)
            return ctx.call(kind="connect", message="TCP/TLS connect (or a free pooled connection) timed out")
        except aiohttp.ClientConnectorError as exc:
            self._mark_sent(ctx, marks, called)
            return ctx.call(kind="connect", message=f"could not connect: {exc}")
        except aiohttp.ServerTimeoutError:
            self._mark_sent(ctx, marks, called)
            return ctx.call(kind="timeout", message=f"no response headers within {timeout.sock_read}s")
        except aiohttp.ClientResponseError as exc:
            # The status line arrived, but what followed did not parse (a bad chunk size).
            self._mark_sent(ctx, marks, called)
            return ctx.call(kind="reset", message=f"the response could not be read: {_one_line(exc.message) or type(exc).__name__}")
        except (aiohttp.ClientError, OSError) as exc:
            self._mark_sent(ctx, marks, called)
            return ctx.call(kind="reset", message=f"connection closed before a response: {broken_reason(exc)}")
        self._mark_sent(ctx, marks, called)
        try:
            ctx.take_status(response.status, response.headers)
            status = response.status
            if not 200 <= status < 300:
                return await self._aerror_response(response, ctx, ctx.start + total_timeout_s)
            if ctx.clock() - ctx.start > ttft_limit_s:
                return ctx.call(kind="timeout", message=f"response headers after {ttft_limit_s}s")
            if "text/event-stream" in response.headers.get("content-type", ""):
                return await self._aread_stream(response, ctx, ttft_limit_s, total_timeout_s)
            # A stream request answered with a plain body (e.g. an HTTP-200 {"error": ...}).
            raw = await self._aread_capped(response, ctx, ctx.start + total_timeout_s)
            return raw if isinstance(raw, Call) else self.plain_body_call(raw, ctx)
        finally:
            response.release()

    @staticmethod
    def _mark_sent(ctx: CallContext, marks: Mapping[str, Any], called: float) -> None:
        """The clock starts when the request's headers went out (or, when they never
        did, when the loop took the call up); the time before is ``wait_ms``."""
        sent = marks.get("sent", ctx.clock())
        ctx.start = sent
        ctx.wait_ms = max(0.0, (sent - called) * 1000.0)

    async def _aread_stream(self, response: aiohttp.ClientResponse, ctx: CallContext, ttft_limit_s: float, total_timeout_s: float) -> Call:
        stream = StreamCall(ctx, max_line_bytes=self.max_line_bytes, ttft_limit_s=ttft_limit_s, total_timeout_s=total_timeout_s)
        guard = GuardedBody(
            None, clock=ctx.clock, first_token_deadline=ctx.start + ttft_limit_s,
            total_deadline=ctx.start + total_timeout_s, max_bytes=self.max_response_bytes,
            first_token_seen=stream.first_token_seen,
        )
        try:
            async for chunk in response.content.iter_any():
                # Every chunk (comments included) passes the deadline check before its
                # events are decoded.
                guard.take(chunk)
                if stream.feed(chunk):
                    break
        except Cut as cut:
            return stream.cut(cut.kind)
        except TooLargeError as exc:
            return stream.fail("too_large", str(exc))
        except InvalidBodyError as exc:
            return stream.fail("invalid_body", str(exc))
        except aiohttp.ServerTimeoutError:
            return stream.silent()
        except aiohttp.ClientPayloadError as exc:
            if isinstance(exc.__cause__, aiohttp.http_exceptions.ContentEncodingError):
                return stream.fail("invalid_body", f"undecodable stream: {exc}")
            return stream.broken(ConnectionError(broken_reason(exc)))
        except (aiohttp.ClientError, OSError) as exc:
            return stream.broken(ConnectionError(broken_reason(exc)))
        call = stream.finished()
        if stream.acc.done and stream.acc.error is None:
            await _drain(response, guard)
        return call

    async def _aread_capped(self, response: aiohttp.ClientResponse, ctx: CallContext, total_deadline: float) -> bytes | Call:
        """A whole body under the size cap and the total deadline; a Call on failure."""
        declared = response.content_length
        if declared is not None and declared > self.max_response_bytes:
            return ctx.call(kind="too_large", message=f"Content-Length {declared} exceeds the {self.max_response_bytes}-byte cap")
        guard = GuardedBody(
            None, clock=ctx.clock, first_token_deadline=None, total_deadline=total_deadline,
            max_bytes=self.max_response_bytes, first_token_seen=lambda: True,
        )
        parts: list[bytes] = []
        try:
            async for chunk in response.content.iter_any():
                guard.take(chunk)
                parts.append(chunk)
        except TooLargeError as exc:
            return ctx.call(kind="too_large", message=str(exc))
        except Cut:
            return ctx.call(kind="timeout", message="total timeout passed")
        except aiohttp.ServerTimeoutError as exc:
            return ctx.call(kind="timeout", message=f"body stalled: {type(exc).__name__}")
        except (aiohttp.ClientError, OSError) as exc:
            return ctx.call(kind="reset", message=f"connection closed mid-body: {exc}")
        return b"".join(parts)

    async def _aerror_response(self, response: aiohttp.ClientResponse, ctx: CallContext, total_deadline: float) -> Call:
        status = response.status
        raw = await self._aread_capped(response, ctx, total_deadline)
        if isinstance(raw, Call):
            error = ErrorInfo(message=f"HTTP {status}; body unreadable: {raw.error_message}")
            return ctx.call(kind=status_kind(status, error), error=error)
        error = parse_error_body(raw)
        if 300 <= status < 400:
            error = ErrorInfo(message=f"unexpected redirect HTTP {status} to {response.headers.get('location')!r}")
        message = error.message
        if status == 403 and is_moderation_error(status, error):
            reasons = error.metadata.get("reasons")
            if isinstance(reasons, list) and reasons:
                message = f"{message} (reasons: {', '.join(str(r) for r in reasons)})"
        return ctx.call(kind=status_kind(status, error), error=error, message=message, body=raw)


def _one_line(message: object) -> str:
    """aiohttp's parser message on one line, without its caret line ("Invalid character in
    chunk size: b'zz'")."""
    lines = (line.strip() for line in str(message or "").splitlines())
    return " ".join(line for line in lines if line and set(line) != {"^"})


def broken_reason(exc: BaseException) -> str:
    """What an admin reads for a stream aiohttp could not finish: the operating system's
    error where there is one (``[Errno 104] Connection reset by peer``, as the httpx
    client says), else a plain phrase; never aiohttp's internal text
    (``<TransferEncodingError: 400, message='Not enough data ...'>``)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno is not None and seen.strerror:
            return f"[Errno {seen.errno}] {seen.strerror}"
        seen = seen.__cause__ or seen.__context__
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the server closed the connection"
    if isinstance(exc, aiohttp.ClientPayloadError):
        return "the chunked body ended early (the connection was closed or reset mid-stream)"
    return type(exc).__name__


def _close_at_exit(ref: weakref.ref[LoopOpenRouterClient]) -> None:
    client = ref()
    if client is not None:
        client.close()


async def _drain(response: aiohttp.ClientResponse, guard: GuardedBody) -> None:
    """Read what follows ``[DONE]`` (the end of the chunked body) so the connection goes
    back to the pool instead of being closed (aiohttp closes a connection released with
    unread bytes), as the httpx client does; any error only means no reuse."""
    try:
        async for chunk in response.content.iter_any():
            guard.take(chunk)
    except Exception:  # noqa: BLE001, S110 - the verdict is already taken
        pass

