"""Streamed pinned chats on one asyncio event loop per process, for the probes.

Why: a probe reads about 40 SSE chunks. Read by a thread each, every chunk is a GIL
hand-off among a worker's hundreds of probe threads; read on one event loop, the calling
thread blocks once per call, not once per chunk.

``LoopOpenRouterClient`` is an ``OpenRouterClient`` (discovery, generation lookups and
non-streamed chats stay on its sync httpx clients) whose streamed ``chat_pinned`` is
handed to the loop once per call and read there by ``httpx.AsyncClient``, through the
proxy of the standard environment (``openrouter.egress``). The frames, the JSON policy
and the way a stream ends are ``openrouter.streamcall``'s, as for the sync client, so
both return the same ``Call`` for the same bytes.

Timing: ``Call.ttft_ms`` and ``total_ms`` count from the instant the request head went to
the socket (httpx's ``trace`` extension, ``http11.send_request_headers``); what came before
on our side (the hand-off to the loop, the connection pool, the TCP connect) is
``Call.wait_ms``, so a burst of our own probes does not inflate the endpoint's TTFT.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import itertools
import os
import threading
import weakref
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
import orjson
import uvloop

from openrouter.client import OpenRouterClient, pinned_body
from openrouter.codings import UndecodableError, adecoded
from openrouter.egress import AsyncEgressTransport
from openrouter.errors import ErrorInfo, is_moderation_error, parse_error_body
from openrouter.jsonbody import InvalidBodyError, TooLargeError
from openrouter.result import Call, CallContext, status_kind
from openrouter.streamcall import StreamCall
from openrouter.transport import Cut, GuardedBody, NoCookies, declared_length

T = TypeVar("T")
# How long past a call's own limits the calling thread waits for the loop before it
# gives the call up as a timeout (a loop wedged by a bug must not hang a probe).
LOOP_MARGIN_S = 15.0
# How long the end of a stream's body (its last chunk, after [DONE]) is waited for so that
# its connection can be reused (s).
DRAIN_S = 1.0


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
        self._aclients: list[httpx.AsyncClient] = []
        self._aclient_pid = 0
        self._aturn = itertools.count()
        url = httpx.URL(f"{self.base_url}/chat/completions")
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"the base URL {self.base_url!r} is not http(s) with a host")
        self._chat_url = url
        # A process-wide client is never closed by its owner: close its pool at exit.
        atexit.register(_close_at_exit, weakref.ref(self))

    def close(self) -> None:
        super().close()
        aclients, self._aclients = self._aclients, []
        if aclients and self._aclient_pid == os.getpid():
            try:
                self._runner.run(_aclose_all(aclients), 5.0)
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
        called = self._clock()
        ctx = CallContext(start=called, clock=self._clock, expected_provider=expected_provider, max_tokens=max_tokens)
        limit_s = self.connect_timeout_s + total_timeout_s + LOOP_MARGIN_S
        try:
            return self._runner.run(self._stream(body, ctx, called, ttft_limit_s, total_timeout_s), limit_s)
        except TimeoutError:
            return ctx.call(kind="timeout", message=f"no result from the event loop within {limit_s:.0f} s")

    def _aclient_get(self) -> httpx.AsyncClient:
        """The next of the loop's clients, in turn (made on the loop, again in a forked
        child). Several, as for the sync client: httpcore's pool scans every request
        against every connection it holds whenever a request starts or ends, which with a
        worker's hundreds of probes in one pool was most of the loop's time and queued
        probes for seconds before sending (bench/round_scale.py, 2026-12-03)."""
        if not self._aclients or self._aclient_pid != os.getpid():
            ssl_context = httpx.create_ssl_context()
            per_shard = max(1, self.max_connections // self.pool_shards)
            limits = httpx.Limits(max_connections=per_shard, max_keepalive_connections=per_shard)
            self._aclients = [self._aclient_new(ssl_context, limits) for _ in range(self.pool_shards)]
            self._aclient_pid = os.getpid()
        return self._aclients[next(self._aturn) % len(self._aclients)]

    def _aclient_new(self, ssl_context: Any, limits: httpx.Limits) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            headers={**self.headers, "Accept": "text/event-stream", "Cache-Control": "no-store",
                     "Content-Type": "application/json"},
            transport=AsyncEgressTransport(
                lambda proxy: httpx.AsyncHTTPTransport(retries=0, verify=ssl_context, limits=limits, proxy=proxy),
                self.proxy_rule,
            ),
            follow_redirects=False,
            cookies=NoCookies(),
        )

    async def _stream(self, body: bytes, ctx: CallContext, called: float, ttft_limit_s: float,
                      total_timeout_s: float) -> Call:
        client = self._aclient_get()
        loop = asyncio.get_running_loop()
        read_s = min(ttft_limit_s, self.idle_timeout_s, total_timeout_s)
        timeout = httpx.Timeout(connect=min(self.connect_timeout_s, ttft_limit_s), read=read_s, write=total_timeout_s,
                                pool=self.connect_timeout_s)
        # Until the request goes out, the connect and pool limits bound the wait; from
        # then on, the first-token limit bounds the headers however they trickle in.
        sent: list[float] = []
        deadline = asyncio.timeout_at(loop.time() + self.connect_timeout_s + ttft_limit_s)

        async def trace(event: str, info: Mapping[str, Any]) -> None:
            if event == "http11.send_request_headers.started" and not sent:
                sent.append(ctx.clock())
                deadline.reschedule(loop.time() + ttft_limit_s)

        request = client.build_request("POST", self._chat_url, content=body, timeout=timeout,
                                       extensions={"trace": trace})
        try:
            async with deadline:
                response = await client.send(request, stream=True)
        except TimeoutError:
            self._mark_sent(ctx, sent, called)
            if not sent:
                return ctx.call(kind="connect", message="TCP/TLS connect timed out")
            return ctx.call(kind="timeout", message=f"no response headers within {ttft_limit_s}s")
        except httpx.ConnectTimeout:
            self._mark_sent(ctx, sent, called)
            return ctx.call(kind="connect", message="TCP/TLS connect timed out")
        except httpx.PoolTimeout:
            self._mark_sent(ctx, sent, called)
            return ctx.call(kind="timeout", message="no free connection in the local pool")
        except httpx.TimeoutException:
            self._mark_sent(ctx, sent, called)
            return ctx.call(kind="timeout", message=f"no response headers within {read_s}s")
        except (httpx.ConnectError, httpx.ProxyError, httpx.UnsupportedProtocol) as exc:
            self._mark_sent(ctx, sent, called)
            return ctx.call(kind="connect", message=f"could not connect: {exc}")
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            self._mark_sent(ctx, sent, called)
            return ctx.call(kind="reset", message=f"connection closed before a response: {exc}")
        except httpx.HTTPError as exc:  # the request could not be made (a local protocol error)
            self._mark_sent(ctx, sent, called)
            return ctx.call(kind="connect", message=f"request could not be sent: {type(exc).__name__}: {exc}")
        self._mark_sent(ctx, sent, called)
        limits = _Limits.of(ctx, ttft_limit_s, total_timeout_s)
        try:
            ctx.take_headers(response)
            status = response.status_code
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
            await response.aclose()

    @staticmethod
    def _mark_sent(ctx: CallContext, sent: list[float], called: float) -> None:
        """The clock starts when the request went out (or, when it never did, now: when
        the loop gave up on sending it); the time before is ``wait_ms``."""
        at = sent[0] if sent else ctx.clock()
        ctx.start = at
        ctx.wait_ms = max(0.0, (at - called) * 1000.0)

    async def _aread_stream(self, response: httpx.Response, ctx: CallContext, ttft_limit_s: float,
                            total_timeout_s: float, limits: _Limits) -> Call:
        stream = StreamCall(ctx, max_line_bytes=self.max_line_bytes, ttft_limit_s=ttft_limit_s, total_timeout_s=total_timeout_s)
        guard = GuardedBody(
            None, clock=ctx.clock, first_token_deadline=ctx.start + ttft_limit_s,
            total_deadline=ctx.start + total_timeout_s, max_bytes=self.max_response_bytes,
            first_token_seen=stream.first_token_seen,
        )
        chunks = adecoded(response)
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
        except TimeoutError:
            return stream.cut("timeout" if stream.first_token_seen() else "first_token_timeout")
        except Cut as cut:
            return stream.cut(cut.kind)
        except TooLargeError as exc:
            return stream.fail("too_large", str(exc))
        except InvalidBodyError as exc:
            return stream.fail("invalid_body", str(exc))
        except httpx.TimeoutException:
            return stream.silent()
        except (httpx.DecodingError, UndecodableError) as exc:
            return stream.fail("invalid_body", f"undecodable stream: {exc}")
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            return stream.broken(exc)
        call = stream.finished()
        if stream.acc.done and stream.acc.error is None:
            await _drain(chunks, guard, limits)
        return call

    async def _aread_capped(self, response: httpx.Response, ctx: CallContext, total_deadline: float,
                            limits: _Limits) -> bytes | Call:
        """A whole body under the size cap and the total deadline; a Call on failure."""
        declared = declared_length(response)
        if declared is not None and declared > self.max_response_bytes:
            return ctx.call(kind="too_large", message=f"Content-Length {declared} exceeds the {self.max_response_bytes}-byte cap")
        guard = GuardedBody(
            None, clock=ctx.clock, first_token_deadline=None, total_deadline=total_deadline,
            max_bytes=self.max_response_bytes, first_token_seen=lambda: True,
        )
        parts: list[bytes] = []
        try:
            async with asyncio.timeout_at(limits.total_at):
                async for chunk in adecoded(response):
                    guard.take(chunk)
                    parts.append(chunk)
        except TooLargeError as exc:
            return ctx.call(kind="too_large", message=str(exc))
        except (Cut, TimeoutError):
            return ctx.call(kind="timeout", message="total timeout passed")
        except httpx.TimeoutException as exc:
            return ctx.call(kind="timeout", message=f"body stalled: {type(exc).__name__}")
        except (httpx.DecodingError, UndecodableError) as exc:
            return ctx.call(kind="invalid_body", message=f"undecodable body: {exc}")
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            return ctx.call(kind="reset", message=f"connection closed mid-body: {exc}")
        return b"".join(parts)

    async def _aerror_response(self, response: httpx.Response, ctx: CallContext, total_deadline: float,
                               limits: _Limits) -> Call:
        status = response.status_code
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


async def _aclose_all(clients: list[httpx.AsyncClient]) -> None:
    for client in clients:
        await client.aclose()


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
