"""A lean HTTP/1.1 client for one asyncio event loop: the canary's probes read their
streams through it (``openrouter.aiochat``).

Why not aiohttp: a probe's stream is about 40 socket reads, and aiohttp's client spent
most of a probe's event-loop CPU around them (its request set-up, tracing, per-read
timeout rescheduling, its stream reader); through this module's protocol a read is one
``data_received`` into httptools (``openrouter.h1reply``, the parser the gateway's
blocking client uses too). Side by side on the scale bench's fleet, 400 streams 80 at a
time (2026-12-02): 2.6-3.2 ms of client CPU per stream through aiohttp, 1.4-1.8 ms here,
SSE decoding included.

What it does, and no more (RFC 9112; ``openrouter.h1reply`` for the framing and codings):

- one request at a time per connection, ``http://`` and ``https://`` (TLS verified with
  httpx's default context, as ``openrouter.http1``); no proxies, redirects or cookies;
- a pool of at most ``max_connections`` connections over all origins; a request waits
  for a free one at most its connect timeout; an idle connection is reused only while the
  server has neither closed it nor sent bytes on it, and only within
  ``KEEPALIVE_EXPIRY_S`` of going idle;
- one idle timer per connection, moved lazily: a read that waits longer than its
  timeout since the last bytes arrived raises ``TimedOut``; a timer is not re-armed per
  read, which is most of what per-read timeouts cost.

Everything runs on the loop that created the pool (asyncio's or uvloop's); nothing here
is thread-safe.
Errors: ``openrouter.h1reply``'s ``SendFailed``, ``TimedOut`` and ``ConnectionLost``.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import cast

import httpx

from openrouter.h1idle import IdleConnections, Origin
from openrouter.h1reply import (
    ConnectionLost,
    ParsedReply,
    ReplyParser,
    SendFailed,
    TimedOut,
    WireError,
)
from openrouter.http1 import KEEPALIVE_EXPIRY_S, Target


class _Wire(asyncio.Protocol):
    """One connection: feeds the current exchange's parser, wakes its reader."""

    __slots__ = ("transport", "reply", "waiter", "lost", "eof", "last_data", "timer", "timer_s", "loop",
                 "batch_s", "batch_until", "resume")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.reply: ReplyParser | None = None  # None while idle in the pool
        self.waiter: asyncio.Future[None] | None = None
        self.lost: WireError | None = None  # why the connection cannot be read any more
        self.eof = False
        self.last_data = 0.0  # loop time of the last bytes (or of the request's sending)
        self.timer: asyncio.TimerHandle | None = None
        self.timer_s = 0.0  # the silence the timer allows (s)
        self.batch_s = 0.0  # reading pauses this long after each read (s; 0: read as bytes come)
        self.batch_until = 0.0  # loop time after which reading no longer pauses
        self.resume: asyncio.TimerHandle | None = None  # the pending resume of a paused read

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport (uvloop's is not a subclass of asyncio's, but has its methods).
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.last_data = self.loop.time()
        reply = self.reply
        if reply is None:  # bytes on an idle connection: nobody asked; never reuse it
            self.lost = ConnectionLost("bytes arrived on an idle connection")
            self.close()
            return
        try:
            reply.feed(data)
        except ConnectionLost as exc:
            self.lost = exc
            self.close()
        else:
            if self.batch_s and self.resume is None and self.last_data + self.batch_s < self.batch_until:
                # What arrives meanwhile waits in the socket's buffer and is read at once.
                self.transport.pause_reading()  # type: ignore[union-attr]
                self.resume = self.loop.call_later(self.batch_s, self._resume)
        self._wake()

    def _resume(self) -> None:
        self.resume = None
        if self.transport is not None and not self.transport.is_closing():
            self.transport.resume_reading()

    def batch_reads(self, interval_s: float, until: float) -> None:
        """From now until loop time ``until``, read at most every ``interval_s`` s (0: as
        bytes come, resuming a paused read at once)."""
        self.batch_s, self.batch_until = interval_s, until
        if not interval_s and self.resume is not None:
            self.resume.cancel()
            self._resume()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        if self.lost is None and isinstance(exc, OSError):
            reason = f"[Errno {exc.errno}] {exc.strerror}" if exc.errno is not None and exc.strerror else str(exc) or type(exc).__name__
            self.lost = ConnectionLost(reason)
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _idle_check(self, timeout_s: float) -> None:
        self.timer = None
        waiter = self.waiter
        if waiter is None or waiter.done():
            return
        due = self.last_data + timeout_s
        if self.loop.time() >= due:
            waiter.set_exception(TimedOut(f"nothing received for {timeout_s:g} s"))
        else:  # bytes came since the timer was set: move it, once
            self.timer = self.loop.call_at(due, self._idle_check, timeout_s)

    async def wait(self, timeout_s: float) -> None:
        """Until something happens on the connection; ``TimedOut`` when nothing arrived
        for ``timeout_s`` since the last bytes."""
        self.waiter = self.loop.create_future()
        if self.timer is not None and self.timer_s != timeout_s:
            self.timer.cancel()
            self.timer = None
        if self.timer is None:
            self.timer_s = timeout_s
            self.timer = self.loop.call_at(self.last_data + timeout_s, self._idle_check, timeout_s)
        try:
            await self.waiter
        finally:
            self.waiter = None

    def usable(self) -> bool:
        return self.lost is None and not self.eof and self.transport is not None and not self.transport.is_closing()

    def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.resume is not None:
            self.resume.cancel()
            self.resume = None
        if self.transport is not None:
            self.transport.close()


class Exchange(ParsedReply):
    """One request sent on a connection and its response being read.

    ``sent_at``: the instant (the pool's clock, s) the request was handed to the socket.
    ``await head(timeout_s)`` reads the status and headers (``status``, ``headers`` with
    lower-cased names); ``await chunk(timeout_s)`` the next decoded body piece, None at
    the end of the body; ``close()`` hands a complete, keep-alive connection back to the
    pool and closes any other. Timeouts count silence since the last bytes received.
    Raises ``TimedOut`` or ``ConnectionLost``; after an error the connection is never
    reused.
    """

    __slots__ = ("sent_at", "_pool", "_origin", "_wire", "_reply", "_closed", "_ended", "_pieces")

    def __init__(self, pool: LoopPool, origin: Origin, wire: _Wire, reply: ReplyParser, sent_at: float) -> None:
        self.sent_at = sent_at
        self._pool = pool
        self._origin = origin
        self._wire = wire
        self._reply = reply
        self._closed = False
        self._ended = False
        self._pieces: Iterator[bytes] | None = None  # the decoded pieces of the raw bytes taken last

    async def head(self, timeout_s: float) -> None:
        """Wait for the final status line and headers (at most ``timeout_s`` of silence)."""
        wire, reply = self._wire, self._reply
        try:
            while not reply.head_done:
                if wire.lost is not None:
                    raise wire.lost
                if wire.eof:
                    reply.end_of_input()
                await wire.wait(timeout_s)
            reply.check_head()
        except WireError:
            reply.spoil()
            raise

    async def chunk(self, timeout_s: float) -> bytes | None:
        """The next piece of the decoded body (never empty; a compressed body inflates at
        most ``h1reply.INFLATE_STEP`` bytes a piece, so the caller's cap stops a bomb), or
        None once it ended."""
        wire, reply = self._wire, self._reply
        try:
            while True:
                if self._pieces is not None:
                    piece = next(self._pieces, None)
                    if piece is None:
                        self._pieces = None
                    elif piece:
                        return piece
                    continue
                if raw := reply.take_raw():
                    self._pieces = reply.decode(raw)
                    continue
                if reply.complete:
                    if self._ended:
                        return None
                    self._ended = True
                    self._pieces = reply.decode_end()
                    continue
                if wire.lost is not None:
                    raise wire.lost
                if wire.eof:
                    reply.end_of_input()
                    continue
                await wire.wait(timeout_s)
        except WireError:
            reply.spoil()
            raise

    def batch_reads(self, interval_s: float, until: float) -> None:
        """Read the rest of the body in batches: after each read, pause reading for
        ``interval_s`` s, so that bytes arriving meanwhile are read, parsed and handed on
        together (one wake-up of the reader instead of one per chunk), until loop time
        ``until`` (a deadline: no pause may run past it). 0 reads as bytes come again.
        Each piece then arrives up to ``interval_s`` late: for a reader that no longer
        times each chunk (the canary after its first token), not for one relaying them."""
        self._wire.batch_reads(interval_s, until)

    def close(self) -> None:
        """Hand the connection back (a complete reply that may be kept alive) or close it."""
        if self._closed:
            return
        self._closed = True
        wire = self._wire
        wire.batch_reads(0.0, 0.0)
        if wire.timer is not None:
            wire.timer.cancel()
            wire.timer = None
        keep = self._reply.keep and wire.usable()
        wire.reply = None
        self._pool.release(self._origin, wire if keep else None)
        if not keep:
            wire.close()


class LoopPool:
    """Keep-alive HTTP/1.1 connections for any number of origins on one event loop, at
    most ``max_connections`` open at once. ``ssl_context``: the TLS context for https
    (httpx's default when None, built on first use). ``keepalive_expiry_s``: an idle
    connection older than this (s) is closed instead of reused. ``clock``: the monotonic
    clock of ``Exchange.sent_at`` (s)."""

    def __init__(self, *, max_connections: int = 256, ssl_context: ssl.SSLContext | None = None,
                 keepalive_expiry_s: float = KEEPALIVE_EXPIRY_S, clock: Callable[[], float] = time.monotonic) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.max_connections = max_connections
        self.keepalive_expiry_s = keepalive_expiry_s
        self._clock = clock
        self._ssl_context = ssl_context
        self._idle: IdleConnections[_Wire] = IdleConnections(_Wire.close)
        self._open = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._closed = False

    async def send(self, target: Target, request: bytes, *, connect_timeout_s: float) -> Exchange:
        """Check out a connection to ``target``'s origin (waiting for a free slot and
        connecting within ``connect_timeout_s`` s in all), write ``request`` (its head
        and body, whole) and return the ``Exchange``. Raises ``SendFailed``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + connect_timeout_s
        wire = await self._checkout(target, deadline, connect_timeout_s)
        assert wire.transport is not None
        reply = wire.reply = ReplyParser()
        wire.transport.write(request)
        sent_at = self._clock()
        wire.last_data = loop.time()
        return Exchange(self, target.origin, wire, reply, sent_at)

    def close(self) -> None:
        """Close every idle connection; one in use is closed when its exchange is."""
        self._closed = True
        self._open -= self._idle.close_all()
        self._wake_waiters()

    def release(self, origin: Origin, wire: _Wire | None) -> None:
        """A slot comes back: ``wire`` to the idle list when given, else the slot alone."""
        if wire is not None and not self._closed:
            self._idle.put(origin, wire, time.monotonic())
        else:
            self._open -= 1
            if wire is not None:
                wire.close()
        self._wake_waiters()

    def _wake_waiters(self) -> None:
        # Every waiter: the first may want another origin than the connection freed.
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)

    async def _checkout(self, target: Target, deadline: float, timeout_s: float) -> _Wire:
        loop = asyncio.get_running_loop()
        origin = target.origin
        while True:
            if self._closed:
                raise SendFailed("the connection pool is closed")
            wire, closed = self._idle.take(origin, time.monotonic() - self.keepalive_expiry_s, _Wire.usable)
            self._open -= closed
            if wire is not None:
                return wire
            if self._open < self.max_connections:
                self._open += 1
                break
            if self._evict_idle():
                continue
            left = deadline - loop.time()
            if left <= 0:
                raise SendFailed(f"no free connection within {timeout_s:.2f} s (all {self.max_connections} in use)")
            waiter = loop.create_future()
            self._waiters.append(waiter)
            try:
                await asyncio.wait_for(waiter, left)
            except TimeoutError:
                continue  # the loop's top checks once more, then gives up on the deadline
        try:
            return await self._connect(target, deadline - loop.time(), timeout_s)
        except BaseException:
            self._open -= 1
            self._wake_waiters()
            raise

    def _evict_idle(self) -> bool:
        """Close the longest-idle connection of any origin (the pool is full); False when
        none is idle."""
        if not self._idle.evict_oldest():
            return False
        self._open -= 1
        return True

    async def _connect(self, target: Target, left_s: float, timeout_s: float) -> _Wire:
        loop = asyncio.get_running_loop()
        context: ssl.SSLContext | None = None
        if target.scheme == "https":
            if self._ssl_context is None:
                self._ssl_context = httpx.create_ssl_context()
            context = self._ssl_context
        try:
            async with asyncio.timeout(max(left_s, 0.0)):
                _, wire = await loop.create_connection(
                    lambda: _Wire(loop), target.host, target.port, ssl=context,
                    server_hostname=target.host if context is not None else None,
                )
        except TimeoutError:
            raise SendFailed(f"could not connect to {target.host_header} within {timeout_s:.2f} s") from None
        except ssl.SSLError as exc:
            raise SendFailed(f"TLS with {target.host_header} failed: {exc}") from None
        except (OSError, UnicodeError) as exc:
            raise SendFailed(f"could not connect to {target.host_header}: {exc}") from None
        return wire
