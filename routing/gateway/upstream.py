"""The gateway's one HTTP path to a route: send one attempt, watch its clocks, report.

One shared connection pool per process and egress (httpx's transport, httpcore, with
``retries=0``: the gateway owns retries, at a single point; ``openrouter.watched``), the
proxy of the standard environment honoured (``openrouter.egress``). Every attempt is streamed upstream, so the
first content byte is observable:

- no response headers within the first-token limit: the socket read timeout fires;
- headers, then keep-alive comments but no content by the first-token limit: the
  process-wide ``openrouter.transport.Watchdog`` shuts the socket down at that instant
  (a socket read timeout cannot do it: the keep-alive comments re-arm it every second);
- after the first content byte: the attempt deadline (watchdog) and the idle limit
  (socket read timeout between chunks) bound the rest;
- a reply over ``max_reply_bytes`` or a line over ``max_line_bytes`` stops reading at the
  cap and is an ``invalid_body`` signal (an ``invalid_response``: the next route is tried).

Returns an ``AttemptOutcome``: an ``Answer`` (whole, not yet validated) or a ``Signal``
for ``routing.failures.classify``. Never raises on anything the network or upstream does.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, replace
from typing import Any

import httpx

from openrouter.client import check_headers
from openrouter.codings import ACCEPT_ENCODING, UndecodableError, decoded
from openrouter.egress import EgressTransport, ProxyRule
from openrouter.errors import parse_error_body, parse_retry_after
from openrouter.jsonbody import InvalidBodyError, TooLargeError
from openrouter.notsse import HEAD_BYTES, StreamHead, malformed_evidence, malformed_stream
from openrouter.sse import DEFAULT_MAX_LINE_BYTES
from openrouter.transport import (
    DEFAULT_MAX_REPLY_BYTES,
    Alarm,
    AttemptHandle,
    Watchdog,
    read_capped,
    silence_label,
)
from openrouter.watched import WatchedTransport, sending, shared_ssl_context
from routing.answer_text import answer_text_checked
from routing.deadline import AttemptTimes
from routing.failures import Signal
from routing.gateway.preconnect import Preconnected, preconnect
from routing.selection import RouteProfile
from routing.stream import Answer, ChatStream, parse_body
from routing.terms import CutReason, SignalKind

# An error body is read for its message only.
_MAX_ERROR_BYTES = 64 * 1024
# Failures in which nothing reached the route: a same-route retry is safe.
_NOT_SENT = (httpx.ConnectTimeout, httpx.ConnectError, httpx.PoolTimeout, httpx.ProxyError, httpx.UnsupportedProtocol)


class Unsendable(ValueError):
    """A route whose URL or headers cannot make a request (the message says which)."""


def cut_message(reason: str, times: AttemptTimes) -> str:
    """What an attempt cut short by ``reason`` (a ``CutReason``, ``AttemptHandle.cut``) reports."""
    messages: dict[str, str] = {
        CutReason.FIRST_TOKEN_TIMEOUT: f"no content within the first-token limit ({times.first_token_s:.2f} s)",
        CutReason.ATTEMPT_TIMEOUT: f"attempt timeout ({times.timeout_s:.2f} s) passed",
        CutReason.CANCELLED: "cancelled: another attempt won",
        CutReason.CLIENT_GONE: "cancelled: the client disconnected",
        CutReason.REJECTED: "cut: the held prefix was rejected",
    }
    return messages.get(reason, reason)


@dataclass(frozen=True)
class AttemptOutcome:
    """One attempt's raw result: ``answer`` (completed transport, not yet validated) or
    ``signal`` (failed). ``latency_ms`` from send to end; ``ttft_ms`` to first content.
    ``notes``: what the reader passed over without failing (``LiveAttempt.notes``), for
    the attempt's record."""

    answer: Answer | None
    signal: Signal | None
    http_status: int | None
    latency_ms: float
    ttft_ms: float | None
    usage: dict[str, Any] | None = None
    cancelled: bool = False
    notes: str = ""


class Upstream:
    """The process's HTTP client for routes.

    ``default_base_url``: used by routes without their own (OpenRouter, with /api/v1);
    ``api_key``: sent to routes without their own key; ``connect_timeout_s`` bounds TCP
    setup (never beyond the attempt's first-token limit); ``max_connections`` is the pool
    size shared by all concurrent requests; ``headers`` go with every request;
    ``max_reply_bytes`` caps each reply (decoded bytes), ``max_line_bytes`` each SSE
    line (settings ``OPENROUTER_MAX_REPLY_BYTES``, ``OPENROUTER_MAX_LINE_BYTES``).
    ``clock``: monotonic seconds. ``proxy_rule``: which proxy each route's origin goes
    through (default: the process environment's, ``openrouter.egress``).

    Requests go straight to the transport (``openrouter.watched``), not through an
    ``httpx.Client``: the client's layers (auth and redirect flows, a cookie jar filled
    from every response, header and URL merging) do nothing here (no auth flow, no
    redirects, and an upstream's cookies must not ride along on later requests). Each
    route's URL and headers are parsed once.
    """

    def __init__(
        self,
        *,
        default_base_url: str,
        api_key: str = "",
        connect_timeout_s: float = 3.0,
        max_connections: int = 256,
        headers: dict[str, str] | None = None,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        clock: Callable[[], float] = time.monotonic,
        watchdog: Watchdog | None = None,
        proxy_rule: ProxyRule | None = None,
    ) -> None:
        self.default_base_url = default_base_url.rstrip("/")
        self.api_key = api_key
        self.connect_timeout_s = connect_timeout_s
        self.max_reply_bytes = max_reply_bytes
        self.max_line_bytes = max_line_bytes
        self._clock = clock
        self._watchdog = watchdog or Watchdog(clock)
        ssl_context = shared_ssl_context()  # one per process: building one costs 20-40 ms of CPU
        self._transport = EgressTransport(
            lambda proxy: WatchedTransport(proxy=proxy, max_connections=max_connections, ssl_context=ssl_context),
            proxy_rule if proxy_rule is not None else ProxyRule.from_environment(),
        )
        # The decoded content-codings, then the caller's headers, then the chat request's own.
        self._common_headers = {
            "Accept-Encoding": ACCEPT_ENCODING, "Connection": "keep-alive", "User-Agent": "reverie-ops-gateway/1",
            **(headers or {}),
        }
        self._base_headers = {**self._common_headers, "Content-Type": "application/json", "Accept": "text/event-stream"}
        # Parsed URLs and header sets, once per route base URL and API key.
        self._prepared: dict[tuple[str, str], tuple[httpx.URL, httpx.Headers]] = {}

    def close(self) -> None:
        self._transport.close()

    def warm(self) -> None:
        """Start the attempts' watchdog thread before the process accepts work (never a
        request upstream). Call it in the process that serves, not before a fork."""
        self._watchdog.start()

    def preconnect(self, routes: Iterable[RouteProfile], timeout_s: float) -> Preconnected | None:
        """Open a connection to the default base URL (OpenRouter) in this upstream's pool,
        through its proxy if the egress rule names one, when one of ``routes`` uses it
        (``routing.gateway.preconnect``: ``GET /key`` with the default API key, within
        ``timeout_s`` seconds); None when none does or ``timeout_s`` is 0. Routes with a
        base URL of their own open theirs on their first request. Threads and sockets do
        not survive a fork: call it in the process that serves. Never raises on what the
        network or the upstream does; ``Unsendable`` for a default base URL or API key
        that cannot make a request."""
        default = self.default_base_url
        if timeout_s <= 0 or not any((route.base_url or default).rstrip("/") == default for route in routes):
            return None
        headers = {**self._common_headers, "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        try:
            check_headers(headers)
            return preconnect(self._transport, default, headers, timeout_s, self._clock)
        except (ValueError, httpx.InvalidURL) as exc:
            raise Unsendable(f"the default base URL {default!r} or API key cannot make a request: {exc}") from None

    def url_for(self, route: RouteProfile) -> str:
        return (route.base_url or self.default_base_url).rstrip("/") + "/chat/completions"

    def _prepare(self, route: RouteProfile) -> tuple[httpx.URL, httpx.Headers]:
        """The route's parsed URL and headers; raises ``Unsendable`` for a malformed or
        non-HTTP URL, or a header that cannot be sent (an API key with a line break)."""
        raw, key = self.url_for(route), route.api_key or self.api_key
        prepared = self._prepared.get((raw, key))
        if prepared is None:
            try:
                url = httpx.URL(raw)
            except httpx.InvalidURL as exc:
                raise Unsendable(f"malformed URL {raw!r}: {exc}") from None
            if url.scheme not in ("http", "https") or not url.host:
                raise Unsendable(f"URL {raw!r} is not http(s) with a host")
            headers = dict(self._base_headers)
            if key:
                headers["Authorization"] = f"Bearer {key}"
            try:
                check_headers(headers)
            except ValueError as exc:
                raise Unsendable(str(exc)) from None
            prepared = self._prepared[(raw, key)] = (url, httpx.Headers(headers))
        return prepared

    def attempt(
        self,
        route: RouteProfile,
        body: bytes,
        times: AttemptTimes,
        *,
        idle_s: float,
        handle: AttemptHandle | None = None,
    ) -> AttemptOutcome:
        """Send ``body`` (a JSON chat request with ``stream: true``) to ``route`` and read
        the whole reply."""
        opened = self.open(route, body, times, idle_s=idle_s, handle=handle)
        if isinstance(opened, AttemptOutcome):
            return opened
        try:
            return opened.drain()
        finally:
            opened.close()

    def open(
        self,
        route: RouteProfile,
        body: bytes,
        times: AttemptTimes,
        *,
        idle_s: float,
        handle: AttemptHandle | None = None,
        record: bool = False,
    ) -> AttemptOutcome | LiveAttempt:
        """Send ``body`` to ``route``; return the ``AttemptOutcome`` of a reply that is not
        a stream (an error status, a whole body, a failure to connect) or, for a 200 event
        stream, a ``LiveAttempt`` to read chunk by chunk (its watchdog alarms are armed;
        the caller must ``close()`` it). ``record`` keeps the content deltas for a
        caller that passes them on (``ChatStream.events``). Never raises."""
        handle = handle or AttemptHandle()
        start = self._clock()
        attempt_end = start + times.timeout_s
        pool_s = min(self.connect_timeout_s, times.first_token_s)

        def failed(kind: SignalKind, message: str, status: int | None = None, **kw: Any) -> AttemptOutcome:
            return AttemptOutcome(
                None, Signal(kind, http_status=status, message=message, **kw), status,
                (self._clock() - start) * 1000.0, None, cancelled=handle.reason == CutReason.CANCELLED,
            )

        def cut_short(status: int | None = None) -> AttemptOutcome:
            """The outcome of an attempt another thread or an alarm cut (``handle.reason``)."""
            assert handle.reason is not None
            return failed(SignalKind.TIMEOUT, cut_message(handle.reason, times), status)

        if handle.reason is not None:
            return failed(SignalKind.TIMEOUT, f"attempt {handle.reason} before it was sent")
        try:
            url, headers = self._prepare(route)
        except Unsendable as exc:
            # A route's malformed base URL, an unsupported scheme, an unsendable key: the
            # request never left; never a crash.
            return failed(SignalKind.CONNECT, f"request could not be sent: {exc}")
        # Armed before sending: a server that trickles its headers or a whole body a byte
        # at a time re-arms every socket read timeout, and only these bound it. The
        # first-token alarm stands until content (a stream's) or the headers (a whole body).
        alarms = Alarms(self._watchdog, handle, start, times, attempt_end)
        live: LiveAttempt | None = None
        # The read timeout is the first-token limit until the headers; ``LiveAttempt``
        # makes it the idle limit for the body (httpcore reads it once per phase).
        request = httpx.Request("POST", url, content=body, headers=headers, extensions={
            "timeout": {"connect": pool_s, "read": times.first_token_s, "write": times.timeout_s, "pool": pool_s}})
        try:
            try:
                # The request's socket goes to the handle as the request goes out, so a
                # cut (an alarm, hedging) reaches it even before the headers.
                with sending(handle.attach):
                    response = self._transport.handle_request(request)
            except httpx.HTTPError as exc:
                if handle.reason is not None:
                    return cut_short()
                if isinstance(exc, _NOT_SENT):
                    # Nothing left this process: no output can exist, so a same-route retry is safe.
                    return failed(SignalKind.CONNECT, f"could not connect: {type(exc).__name__}: {exc}")
                if isinstance(exc, httpx.TimeoutException):
                    return failed(SignalKind.TIMEOUT, f"no response headers within {times.first_token_s:.2f} s")
                return failed(SignalKind.RESET, f"connection closed before a response: {type(exc).__name__}: {exc}")
            response.request = request
            try:
                status = response.status_code
                retry_after = parse_retry_after(response.headers.get("retry-after"))
                if "text/event-stream" in response.headers.get("content-type", "") and 200 <= status < 300:
                    live = LiveAttempt(self, response, times, idle_s, handle, start, attempt_end, retry_after, record, alarms)
                    return live
                alarms.first_token_done()
                if not 200 <= status < 300:
                    raw = self._read_capped(response, _MAX_ERROR_BYTES)
                    if handle.reason is not None:
                        return cut_short(status)
                    error = parse_error_body(raw or b"")
                    return failed(SignalKind.HTTP_ERROR, error.message or f"HTTP {status}", status, error=error,
                                  retry_after_s=retry_after)
                try:
                    raw = read_capped(response, self.max_reply_bytes)
                except TooLargeError as exc:
                    return failed(SignalKind.INVALID_BODY, str(exc), status)
                except (httpx.HTTPError, UndecodableError) as exc:
                    if handle.reason is not None:
                        return cut_short(status)
                    return failed(SignalKind.RESET, f"body cut: {type(exc).__name__}: {exc}", status)
                if handle.reason is not None:  # a cut that a read-until-close body took for its end
                    return cut_short(status)
                return self._whole(raw, status, start, retry_after)
            finally:
                if live is None:
                    response.close()
        finally:
            if live is None:
                alarms.cancel()
                handle.detach()

    def _read_capped(self, response: httpx.Response, cap: int) -> bytes | None:
        """An error body up to ``cap`` bytes (what arrived before a cut), None past the cap."""
        parts: list[bytes] = []
        size = 0
        try:
            for chunk in decoded(response):
                size += len(chunk)
                if size > cap:
                    return None
                parts.append(chunk)
        except (httpx.HTTPError, UndecodableError):
            return b"".join(parts) if parts else None
        return b"".join(parts)

    def _whole(self, raw: bytes, status: int, start: float, retry_after: float | None) -> AttemptOutcome:
        latency = (self._clock() - start) * 1000.0
        try:
            parsed = parse_body(raw)
        except InvalidBodyError as exc:
            return AttemptOutcome(None, Signal(SignalKind.INVALID_BODY, http_status=status, message=str(exc)), status, latency, None)
        if parsed.error is not None:
            signal = Signal(SignalKind.ERROR_BODY, output_seen=parsed.output_seen, http_status=status, error=parsed.error,
                            retry_after_s=retry_after, message=parsed.error.message or "error in body")
            return AttemptOutcome(None, signal, status, latency, None, usage=parsed.usage)
        answer, problem = answer_text_checked(parsed.answer())
        if problem is not None:
            return AttemptOutcome(None, Signal(SignalKind.INVALID_BODY, output_seen=parsed.output_seen, http_status=status, message=problem),
                                  status, latency, None, usage=parsed.usage)
        return AttemptOutcome(answer, None, status, latency, None, usage=parsed.usage)


class Alarms:
    """An attempt's two watchdog alarms: the first-token limit and the attempt's end, each
    cutting ``handle`` with the limit it stands for (when the attempt ends no later than
    the first-token limit, only the attempt timeout is armed). Times: monotonic s."""

    __slots__ = ("_first", "_end")

    def __init__(self, watchdog: Watchdog, handle: AttemptHandle, start: float, times: AttemptTimes,
                 attempt_end: float) -> None:
        first_at = start + times.first_token_s
        self._first: Alarm | None = (
            watchdog.arm(first_at, lambda: handle.cut(CutReason.FIRST_TOKEN_TIMEOUT)) if first_at < attempt_end else None)
        self._end: Alarm | None = watchdog.arm(attempt_end, lambda: handle.cut(CutReason.ATTEMPT_TIMEOUT))

    def first_token_done(self) -> None:
        """The first-token limit is met (content arrived, or a whole body's headers)."""
        if self._first is not None:
            self._first.cancel()
            self._first = None

    def cancel(self) -> None:
        self.first_token_done()
        if self._end is not None:
            self._end.cancel()
            self._end = None


class LiveAttempt:
    """An attempt whose 200 event stream is being read (``Upstream.open``).

    ``chunks()`` reads the body, yielding after every network read (keep-alive bytes
    included) so the caller can look at ``stream`` (the folded ``ChatStream``) between
    reads; when it ends, ``outcome`` holds the ``AttemptOutcome``. The first-token and
    attempt alarms cut the socket at their instant; the idle limit is the socket read
    timeout. ``cut(reason)`` ends it from another thread (``"cancelled"``: the client
    left). ``close()`` returns the connection (or drops it when the body is unread).
    """

    def __init__(self, upstream: Upstream, response: httpx.Response, times: AttemptTimes,
                 idle_s: float, handle: AttemptHandle, start: float, attempt_end: float, retry_after: float | None,
                 record: bool, alarms: Alarms) -> None:
        self.response = response
        self.times = times
        self.handle = handle
        self.start = start
        self.retry_after = retry_after
        self.stream = ChatStream(upstream.max_line_bytes, record=record)
        # The body's first bytes: the evidence of a 200 event stream that is not one.
        self.head = StreamHead()
        self.ttft_ms: float | None = None
        self.outcome: AttemptOutcome | None = None
        self._clock = upstream._clock
        self._cap = upstream.max_reply_bytes
        self._attempt_end = attempt_end
        # The body's socket reads time out at the idle limit; the first-token limit,
        # which keep-alive comments would re-arm a read timeout for, is the watchdog's.
        timeouts = response.request.extensions.get("timeout")
        if isinstance(timeouts, dict):
            timeouts["read"] = max(0.001, min(idle_s, attempt_end - self._clock()))
        self._alarms = alarms
        self._closed = False

    def elapsed_ms(self) -> float:
        return (self._clock() - self.start) * 1000.0

    def cut(self, reason: CutReason) -> None:
        self.handle.cut(reason)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._alarms.cancel()
        self.handle.detach()
        self.response.close()

    def drain(self) -> AttemptOutcome:
        """Read to the end; the outcome."""
        for _ in self.chunks():
            pass
        assert self.outcome is not None
        return self.outcome

    def _failed(self, kind: SignalKind, message: str, **kw: Any) -> AttemptOutcome:
        stream = self.stream
        status = self.response.status_code
        return AttemptOutcome(
            None,
            Signal(kind, output_seen=stream.output_seen, http_status=status, message=message, **kw),
            status, self.elapsed_ms(), self.ttft_ms, usage=stream.usage,
            cancelled=self.handle.reason == CutReason.CANCELLED,
        )

    def notes(self) -> str:
        """What the stream passed over without failing, for the attempt's record: chunks
        whose ``choices`` was null (skipped), "" when none."""
        skipped = self.stream.null_choices
        return f"{skipped} chunk{'s' if skipped != 1 else ''} with choices null skipped" if skipped else ""

    def held_broken(self) -> AttemptOutcome | None:
        """Before a commit point: the outcome of a stream whose bytes already received hold
        an event no later byte can mend (``routing.stream.ChatStream.held_fault``), an
        ``invalid_body`` of the route, set as ``outcome``; None when all of them can still
        parse. Reads nothing more. The caller closes the reader and the attempt."""
        fault = self.stream.held_fault()
        if fault is None:
            return None
        self.outcome = replace(self._failed(SignalKind.INVALID_BODY, f"a data frame received before the commit point "
                                            f"cannot parse, whatever follows: {fault}"), notes=self.notes())
        return self.outcome

    def chunks(self) -> Generator[None, None, None]:
        """Read the body, yielding after each read; sets ``outcome`` at the end."""
        outcome = yield from self._read()
        notes = self.notes()
        self.outcome = replace(outcome, notes=notes) if notes else outcome

    def _read(self) -> Generator[None, None, AttemptOutcome]:
        response, stream, clock, start, times = self.response, self.stream, self._clock, self.start, self.times
        handle = self.handle
        cap = self._cap
        head = self.head
        head_room = HEAD_BYTES
        received = 0
        try:
            # Decoded in bounded steps, each counted against the cap (openrouter.codings).
            for chunk in decoded(response):
                # After [DONE] the body is still read to its end (the terminating chunk
                # follows at once) so the connection goes back to the pool: closing a
                # half-read response would cost a new TCP connection per request.
                if stream.finished or not chunk:  # empty: compressed bytes that decoded to nothing yet
                    continue
                received += len(chunk)
                if received > cap:
                    raise TooLargeError("reply", cap)
                if head_room > 0:  # a local int: the per-read path stays one comparison
                    head.feed(chunk)
                    head_room -= len(chunk)
                stream.feed(chunk)
                if self.ttft_ms is None and stream.output_seen:
                    self.ttft_ms = (clock() - start) * 1000.0
                    self._alarms.first_token_done()
                yield None
        except InvalidBodyError as exc:  # TooLargeError included: reading stopped at the cap
            if self.ttft_ms is None and stream.output_seen:
                self.ttft_ms = (clock() - start) * 1000.0
            return self._failed(SignalKind.INVALID_BODY, str(exc))
        except httpx.TimeoutException:
            if handle.reason is None:
                # The socket read timeout is the idle limit, cut short by the attempt's
                # end: name the limit the silence actually ran into.
                label = silence_label(
                    elapsed_s=clock() - start, first_token_seen=stream.output_seen,
                    first_token_s=times.first_token_s, total_s=times.timeout_s,
                )
                limit = {"first_token": "first-token", "idle": "idle", "total": "attempt timeout"}[label]
                return self._failed(SignalKind.TIMEOUT, f"stream silent past the {limit} limit ({label})")
        except (httpx.HTTPError, UndecodableError) as exc:  # network errors, protocol errors, undecodable bytes
            if handle.reason is None:
                return self._failed(SignalKind.RESET, f"connection closed mid-stream: {type(exc).__name__}: {exc}")
        finally:
            self._alarms.cancel()
        finished = stream.finished
        if handle.reason is not None and not finished:
            return self._failed(SignalKind.TIMEOUT, cut_message(handle.reason, times))
        try:
            stream.feed_end()
        except InvalidBodyError as exc:
            return self._failed(SignalKind.INVALID_BODY, str(exc))
        if stream.error is not None:
            return self._failed(SignalKind.ERROR_BODY, stream.error.message or "error chunk", error=stream.error,
                                retry_after_s=self.retry_after)
        if stream.finish_reason is None and malformed_stream(head.bytes, events_seen=stream.events_seen):
            # No SSE event, only bytes that are not SSE (an HTML page): the canary's rule.
            return self._failed(SignalKind.MALFORMED_BODY, malformed_evidence(head.bytes))
        if stream.finish_reason is None:
            # A stream that ends without a finish reason is not a success, [DONE] or not
            # (field case 7, ``tests/fixtures/field-cases/gateway.md``).
            kind = SignalKind.NO_FINISH if stream.done else SignalKind.RESET
            return self._failed(kind, "stream ended without a finish reason")
        status = response.status_code
        answer, problem = answer_text_checked(stream.answer(self.ttft_ms))
        if problem is not None:
            return self._failed(SignalKind.INVALID_BODY, problem)
        return AttemptOutcome(answer, None, status, self.elapsed_ms(), self.ttft_ms, usage=stream.usage)
