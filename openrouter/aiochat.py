"""Streamed pinned chats on one asyncio event loop per process, for the probes.

Why: a probe reads about 40 SSE chunks. Read by a thread each, every chunk is a GIL
hand-off among a worker's hundreds of probe threads; read on one event loop, the calling
thread blocks once per call, not once per chunk.

``LoopOpenRouterClient`` is an ``OpenRouterClient`` (discovery, generation lookups and
non-streamed chats stay on its sync httpx clients) whose streamed ``chat_pinned`` is
handed to the loop once per call and read there by ``aiohttp.ClientSession``, through the
proxy the standard environment names for the chat URL (``openrouter.egress``'s rule,
passed as aiohttp's ``proxy=``). The frames, the JSON policy, the caps, the bounded
decoding of a content-coding and the way a stream ends are ``openrouter``'s own, as for
the sync client, so both return the same ``Call`` for the same bytes (the wording of a
transport error may differ: each names its parser's reason).

Why aiohttp here and httpx elsewhere (issue #30 allows a well-kept alternative for the
probe loop when it serves a measured need): a round opens hundreds of probes at once
on one worker. On ``httpx.AsyncClient`` (httpcore over anyio) the burst cost the loop
about 1.3 ms of CPU per stream and each probe waited 0.2-1.4 s (p50) before its request
left; on aiohttp (C parser, one connector pool) about 0.5 ms per stream (300 streams
on one loop, 0.15 s of CPU against 0.40 s), and ``bench/round_scale.py`` side by side
with the httpx loop (2026-12-03, five pairs on a 2-core machine at load 7-19): worker
CPU per probe 2.7-2.9 ms against 3.4-4.6 ms, wait p50 0.10-0.62 s against 0.45-1.40 s,
ratio 1.79-2.88 against 2.40-5.04.

Timing: ``Call.ttft_ms`` and ``total_ms`` count from the instant the request head went to
the socket (aiohttp's trace signal ``on_request_headers_sent``); what came before on our
side (the hand-off to the loop, the connection pool, the TCP connect) is ``Call.wait_ms``,
so a burst of our own probes does not inflate the endpoint's TTFT.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, TypeVar

import aiohttp
import httpx
import orjson
import uvloop
import yarl

from openrouter.client import OpenRouterClient, pinned_body
from openrouter.codings import UndecodableError, adecoded
from openrouter.errors import ErrorInfo, is_moderation_error, parse_error_body
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
# How long an idle connection stays in the pool (s): httpx's keep-alive expiry, which
# the sync client keeps.
KEEPALIVE_S = 5.0


class EventLoopThread:
    """One event loop running in a daemon thread, started on first use and again in a
    forked child (a loop thread does not survive ``fork``).

    The loop is uvloop's (libuv under asyncio's API): it read the scale bench's round for
    less worker CPU per probe than asyncio's selector loop in three side-by-side pairs of
    runs (2026-12-02, under the probes' earlier wire)."""

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

    Same arguments as ``OpenRouterClient``; ``max_connections`` bounds the loop's
    connection pool too. With a ``transport`` (tests' in-process fakes) every call stays
    on the sync client. ``close()`` closes both pools. Raises ``ValueError`` for a base
    URL that is not http(s) with a host.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loop_streams = not self.transport_injected
        self._runner = EventLoopThread()
        self._session: aiohttp.ClientSession | None = None
        self._session_pid = 0
        url = httpx.URL(f"{self.base_url}/chat/completions")
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"the base URL {self.base_url!r} is not http(s) with a host")
        self._chat_url_str = str(url)
        # The proxy (None: direct) of the one URL this client streams from, by the rule
        # every wire of ``openrouter`` follows (``openrouter.egress``).
        # aiohttp sends a proxy URL's ``user:password@`` only when given apart: as the
        # ``Proxy-Authorization: Basic`` header httpx sends for it.
        self._chat_proxy, credentials = _proxy_parts(self.proxy_rule.proxy_for(url))
        # An https target is tunnelled (the header goes with CONNECT); an http one is
        # forwarded whole (the header goes with the request itself).
        self._chat_proxy_headers = credentials if url.scheme == "https" else None
        self._chat_headers = credentials if url.scheme != "https" else None
        # A process-wide client is never closed by its owner: close its pool at exit.
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

    def warm(self, timeout_s: float = 10.0) -> None:
        """Start the process's event loop and build its session now (its thread, an SSL
        context: about 23 ms of CPU on the first probe), not on the first probe, where a
        worker's first round paid it on the loop while that task's probes waited. Opens no
        connection. Raises ``TimeoutError`` when the loop gives no answer in ``timeout_s``."""
        if self._loop_streams:
            self._runner.run(self._session_ready(), timeout_s)

    async def _session_ready(self) -> None:
        self._session_get()

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
        called = self._clock()
        ctx = CallContext(start=called, clock=self._clock, expected_provider=expected_provider, max_tokens=max_tokens)
        limit_s = self.connect_timeout_s + total_timeout_s + LOOP_MARGIN_S
        try:
            return self._runner.run(self._stream(body, ctx, called, ttft_limit_s, total_timeout_s), limit_s)
        except TimeoutError:
            return ctx.call(kind="timeout", message=f"no result from the event loop within {limit_s:.0f} s")

    def _session_get(self) -> aiohttp.ClientSession:
        """The loop's one session (made on the loop, again in a forked child).

        One pool, not shards: aiohttp's connector keeps idle connections per origin in a
        queue and hands one out in constant time, where httpcore scanned every request
        against every connection it held. Idle connections close after ``KEEPALIVE_S``,
        as httpx's did. Redirects are not followed and cookies not kept (a probe is one
        request); bodies arrive raw and are decoded in bounded steps
        (``openrouter.codings``)."""
        if self._session is None or self._session_pid != os.getpid():
            connector = aiohttp.TCPConnector(
                limit=self.max_connections, limit_per_host=0, ssl=httpx.create_ssl_context(),
                keepalive_timeout=KEEPALIVE_S,
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                headers={**self.headers, "Accept": "text/event-stream", "Cache-Control": "no-store",
                         "Content-Type": "application/json"},
                cookie_jar=aiohttp.DummyCookieJar(),
                auto_decompress=False,
                trust_env=False,  # the proxy is ``openrouter.egress``'s rule, passed per request
                trace_configs=[_SEND_TRACE],
            )
            self._session_pid = os.getpid()
        return self._session

    async def _stream(self, body: bytes, ctx: CallContext, called: float, ttft_limit_s: float,
                      total_timeout_s: float) -> Call:
        session = self._session_get()
        loop = asyncio.get_running_loop()
        read_s = min(ttft_limit_s, self.idle_timeout_s, total_timeout_s)
        # ``connect`` bounds the wait for a free connection and the connect together;
        # ``sock_read`` is the silence timer (headers and body), as httpx's read timeout.
        timeout = aiohttp.ClientTimeout(total=None, connect=self.connect_timeout_s,
                                        sock_connect=min(self.connect_timeout_s, ttft_limit_s), sock_read=read_s)
        # Until the request goes out, the connect and pool limits bound the wait; from
        # then on, the first-token limit bounds the headers however they trickle in.
        deadline = asyncio.timeout_at(loop.time() + self.connect_timeout_s + ttft_limit_s)
        sending = _Sending(ctx.clock, lambda: deadline.reschedule(loop.time() + ttft_limit_s))
        sent = sending.sent
        try:
            async with deadline:
                response = await session.post(
                    self._chat_url_str, data=body, headers=self._chat_headers, proxy=self._chat_proxy,
                    proxy_headers=self._chat_proxy_headers, timeout=timeout, allow_redirects=False,
                    trace_request_ctx=sending,
                )
        # aiohttp's own timeouts are TimeoutErrors too: they come first.
        except aiohttp.ConnectionTimeoutError:
            self._mark_sent(ctx, sent, called)
            if sending.queued and not sending.connecting:
                return ctx.call(kind="timeout", message="no free connection in the local pool")
            return ctx.call(kind="connect", message="TCP/TLS connect timed out")
        except aiohttp.SocketTimeoutError:
            self._mark_sent(ctx, sent, called)
            return ctx.call(kind="timeout", message=f"no response headers within {read_s}s")
        except TimeoutError:
            self._mark_sent(ctx, sent, called)
            if not sent:
                return ctx.call(kind="connect", message="TCP/TLS connect timed out")
            return ctx.call(kind="timeout", message=f"no response headers within {ttft_limit_s}s")
        except (aiohttp.ClientHttpProxyError, aiohttp.ClientConnectorError) as exc:
            self._mark_sent(ctx, sent, called)
            return ctx.call(kind="connect", message=f"could not connect: {exc}")
        except aiohttp.ClientResponseError as exc:
            # A reply that does not parse (its head, or body bytes read with it): like a
            # cut, the connection gave no usable reply.
            self._mark_sent(ctx, sent, called)
            return ctx.call(kind="reset", message=f"malformed reply: {_reason(exc)}")
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError, aiohttp.ClientPayloadError) as exc:
            self._mark_sent(ctx, sent, called)
            return ctx.call(kind="reset", message=f"connection closed before a response: {_reason(exc)}")
        except aiohttp.ClientError as exc:  # the request could not be made (a local error)
            self._mark_sent(ctx, sent, called)
            return ctx.call(kind="connect", message=f"request could not be sent: {type(exc).__name__}: {exc}")
        self._mark_sent(ctx, sent, called)
        limits = _Limits.of(ctx, ttft_limit_s, total_timeout_s)
        try:
            ctx.take_status(response.status, response.headers)
            status = response.status
            if not 200 <= status < 300:
                return await self._aerror_response(response, ctx, ctx.start + total_timeout_s, limits)
            if ctx.clock() - ctx.start > ttft_limit_s:
                return ctx.call(kind="timeout", message=f"response headers after {ttft_limit_s}s")
            if "text/event-stream" in response.headers.get("content-type", ""):
                return await self._aread_stream(response, ctx, ttft_limit_s, total_timeout_s, limits)
            # A stream request answered with a plain body (e.g. an HTTP-200 {"error": ...}).
            raw = await self._aread_capped(response, ctx, ctx.start + total_timeout_s, limits)
            return raw if isinstance(raw, Call) else self.plain_body_call(raw, ctx)
        finally:
            # A body read to its end leaves its connection in the pool; any other is closed.
            response.release()

    @staticmethod
    def _mark_sent(ctx: CallContext, sent: list[float], called: float) -> None:
        """The clock starts when the request went out (or, when it never did, now: when
        the loop gave up on sending it); the time before is ``wait_ms``."""
        at = sent[0] if sent else ctx.clock()
        ctx.start = at
        ctx.wait_ms = max(0.0, (at - called) * 1000.0)

    async def _aread_stream(self, response: aiohttp.ClientResponse, ctx: CallContext, ttft_limit_s: float,
                            total_timeout_s: float, limits: _Limits) -> Call:
        stream = StreamCall(ctx, max_line_bytes=self.max_line_bytes, ttft_limit_s=ttft_limit_s, total_timeout_s=total_timeout_s)
        guard = GuardedBody(
            None, clock=ctx.clock, first_token_deadline=ctx.start + ttft_limit_s,
            total_deadline=ctx.start + total_timeout_s, max_bytes=self.max_response_bytes,
            first_token_seen=stream.first_token_seen,
        )
        chunks = _decoded(response)
        try:
            # The deadlines hold whatever arrives: bytes that never make a chunk (a
            # trickled chunk size, a gzip header) reset the silence timer, not these.
            async with asyncio.timeout_at(limits.first_at) as deadline:
                first_pending = True
                async for chunk in chunks:
                    # Every chunk (comments included) passes the deadline check before its
                    # events are decoded.
                    guard.take(chunk)
                    if stream.feed(chunk):
                        break
                    if first_pending and stream.first_token_seen():
                        first_pending = False
                        deadline.reschedule(limits.total_at)
        except aiohttp.SocketTimeoutError:  # the silence timer (a TimeoutError too: first)
            return stream.silent()
        except TimeoutError:
            return stream.cut("timeout" if stream.first_token_seen() else "first_token_timeout")
        except Cut as cut:
            return stream.cut(cut.kind)
        except TooLargeError as exc:
            return stream.fail("too_large", str(exc))
        except InvalidBodyError as exc:
            return stream.fail("invalid_body", str(exc))
        except UndecodableError as exc:
            return stream.fail("invalid_body", f"undecodable stream: {exc}")
        except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError, aiohttp.ClientResponseError) as exc:
            return stream.broken(_Plain(_reason(exc)))
        call = stream.finished()
        if stream.acc.done and stream.acc.error is None:
            await _drain(chunks, guard, limits)
        return call

    async def _aread_capped(self, response: aiohttp.ClientResponse, ctx: CallContext, total_deadline: float,
                            limits: _Limits) -> bytes | Call:
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
            async with asyncio.timeout_at(limits.total_at):
                async for chunk in _decoded(response):
                    guard.take(chunk)
                    parts.append(chunk)
        except TooLargeError as exc:
            return ctx.call(kind="too_large", message=str(exc))
        except aiohttp.SocketTimeoutError as exc:  # a TimeoutError too: first
            return ctx.call(kind="timeout", message=f"body stalled: {type(exc).__name__}")
        except (Cut, TimeoutError):
            return ctx.call(kind="timeout", message="total timeout passed")
        except UndecodableError as exc:
            return ctx.call(kind="invalid_body", message=f"undecodable body: {exc}")
        except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError, aiohttp.ClientResponseError) as exc:
            return ctx.call(kind="reset", message=f"connection closed mid-body: {_reason(exc)}")
        return b"".join(parts)

    async def _aerror_response(self, response: aiohttp.ClientResponse, ctx: CallContext, total_deadline: float,
                               limits: _Limits) -> Call:
        status = response.status
        raw = await self._aread_capped(response, ctx, total_deadline, limits)
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


@dataclass(frozen=True)
class _Limits:
    """A call's limits on the event loop: the loop-clock instants of the first-token
    deadline (``first_at``) and the total one (``total_at``)."""

    first_at: float
    total_at: float

    @classmethod
    def of(cls, ctx: CallContext, ttft_limit_s: float, total_timeout_s: float) -> _Limits:
        # The call's clock may not be the loop's: its deadlines are carried over as offsets.
        sent_at = asyncio.get_running_loop().time() - (ctx.clock() - ctx.start)
        total_at = sent_at + total_timeout_s
        return cls(min(sent_at + ttft_limit_s, total_at), total_at)


def _proxy_parts(proxy: str | None) -> tuple[str | None, dict[str, str] | None]:
    """A proxy URL without its credentials, and the headers that carry them to the proxy
    (``Proxy-Authorization: Basic``; None when the URL has none)."""
    if proxy is None:
        return None, None
    url = yarl.URL(proxy)
    if url.user is None:
        return proxy, None
    credentials = aiohttp.encode_basic_auth(url.user, url.password or "")
    return str(url.with_user(None)), {"Proxy-Authorization": credentials}


class _Plain(Exception):
    """An aiohttp error's plain reason, for ``StreamCall.broken``."""


def _reason(exc: BaseException) -> str:
    """An aiohttp error as a plain reason: the parser's own words (first line, without
    aiohttp's internal ``400`` code and the URL), the cause of a payload error."""
    if isinstance(exc, aiohttp.ClientPayloadError) and exc.__cause__ is not None:
        return f"{str(exc).split(': <', 1)[0]}: {_reason(exc.__cause__)}"
    message = getattr(exc, "message", None)
    text = (message if isinstance(message, str) and message else str(exc)).strip()
    return text.splitlines()[0].rstrip(":") if text else type(exc).__name__


class _Sending:
    """One request's progress as aiohttp's trace reports it (``_SEND_TRACE``): whether
    it waited for a free connection (``queued``), started one (``connecting``), and the
    call clock's instant its head went to the socket (``sent``, at most one), when
    ``on_sent`` is called."""

    def __init__(self, clock: Callable[[], float], on_sent: Callable[[], None]) -> None:
        self.clock = clock
        self.on_sent = on_sent
        self.queued = False
        self.connecting = False
        self.sent: list[float] = []


def _sending(trace_ctx: SimpleNamespace) -> _Sending | None:
    found = trace_ctx.trace_request_ctx
    return found if isinstance(found, _Sending) else None


async def _on_queued(session: aiohttp.ClientSession, trace_ctx: SimpleNamespace, params: Any) -> None:
    if (sending := _sending(trace_ctx)) is not None:
        sending.queued = True


async def _on_connecting(session: aiohttp.ClientSession, trace_ctx: SimpleNamespace, params: Any) -> None:
    if (sending := _sending(trace_ctx)) is not None:
        sending.connecting = True


async def _on_headers_sent(session: aiohttp.ClientSession, trace_ctx: SimpleNamespace, params: Any) -> None:
    sending = _sending(trace_ctx)
    if sending is not None and not sending.sent:
        sending.sent.append(sending.clock())
        sending.on_sent()


_SEND_TRACE = aiohttp.TraceConfig()
_SEND_TRACE.on_connection_queued_start.append(_on_queued)
_SEND_TRACE.on_connection_create_start.append(_on_connecting)
_SEND_TRACE.on_request_headers_sent.append(_on_headers_sent)
_SEND_TRACE.freeze()


async def _decoded(response: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
    """``response``'s body (its transfer coding undone by aiohttp, its content-coding
    left) decoded in bounded steps (``openrouter.codings``)."""
    async for piece in adecoded(response.headers.get("content-encoding"), response.content.iter_any()):
        yield piece


def _close_at_exit(ref: weakref.ref[LoopOpenRouterClient]) -> None:
    client = ref()
    if client is not None:
        client.close()


async def _drain(chunks: Any, guard: GuardedBody, limits: _Limits) -> None:
    """Read what follows ``[DONE]`` (the end of the chunked body) so the connection goes
    back to the pool instead of being closed, as the sync client does; any error only
    means no reuse. At most ``DRAIN_S`` and never past the call's total deadline: the
    verdict is taken, and the caller is waiting for it."""
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout_at(min(limits.total_at, loop.time() + DRAIN_S)):
            async for chunk in chunks:
                guard.take(chunk)
    except Exception:  # noqa: BLE001, S110 - the verdict is already taken
        pass
