"""The gateway's one HTTP path to a route: send one attempt, watch its clocks, report.

One shared ``httpx.Client`` per process with ``retries=0`` (the gateway owns retries and
nothing below it retries, issue 7 point 5; resilience.md §4.2 "retry at a single point").
Every attempt is streamed upstream, so the first content byte is observable:

- no response headers within the first-token limit: the socket read timeout fires;
- headers, then keep-alive comments but no content by the first-token limit: a
  process-wide ``Watchdog`` thread shuts the socket down at that instant (a socket read
  timeout cannot do it: the keep-alive comments re-arm it every second);
- after the first content byte: the attempt deadline (watchdog) and the idle limit
  (socket read timeout between chunks) bound the rest (issue point 9).

Returns an ``AttemptOutcome``: an ``Answer`` (whole, not yet validated) or a ``Signal``
for ``routing.failures.classify``. Never raises on anything the network or upstream does.
"""

from __future__ import annotations

import itertools
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from canary.openrouter import parse_error_body, parse_retry_after
from routing.deadline import AttemptTimes
from routing.failures import Signal
from routing.selection import RouteProfile
from routing.stream import Answer, ChatStream, FrameError, parse_body

_MAX_ERROR_BYTES = 64 * 1024
_MAX_BODY_BYTES = 4 * 1024 * 1024


class Watchdog:
    """Cuts attempts at monotonic instants, from one daemon thread per process.

    ``arm(at, fn)`` registers ``fn`` to run once ``at`` has passed; ``cancel()`` on the
    returned alarm disarms it. The thread polls every ``tick_s`` (50 ms: the field cases
    allow +-0.3 s) instead of waking per alarm, so the cost under load is one dict insert
    and delete per alarm plus 20 wake-ups a second, not a wake-up per request.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic, tick_s: float = 0.05) -> None:
        self._clock = clock
        self._tick_s = tick_s
        self._alarms: dict[int, _Alarm] = {}
        self._seq = itertools.count()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def arm(self, at: float, fn: Callable[[], None]) -> _Alarm:
        alarm = _Alarm(self, next(self._seq), at, fn)
        with self._lock:
            self._alarms[alarm.key] = alarm
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="routing-watchdog", daemon=True)
                self._thread.start()
        if not self._wake.is_set():  # set() takes a lock and notifies even when set
            self._wake.set()
        return alarm

    def _disarm(self, alarm: _Alarm) -> None:
        with self._lock:
            self._alarms.pop(alarm.key, None)

    def _run(self) -> None:
        while True:
            with self._lock:
                idle = not self._alarms
            if idle:
                # Nothing to watch: sleep until an alarm is armed.
                self._wake.wait()
                self._wake.clear()
                continue
            time.sleep(self._tick_s)
            now = self._clock()
            with self._lock:
                due = [a for a in self._alarms.values() if a.at <= now]
                for alarm in due:
                    del self._alarms[alarm.key]
            for alarm in due:
                try:
                    alarm.fn()
                except Exception:  # noqa: BLE001, S110 - a failed cut must not kill the watchdog
                    pass


class _Alarm:
    __slots__ = ("watchdog", "key", "at", "fn")

    def __init__(self, watchdog: Watchdog, key: int, at: float, fn: Callable[[], None]) -> None:
        self.watchdog = watchdog
        self.key = key
        self.at = at
        self.fn = fn

    def cancel(self) -> None:
        self.watchdog._disarm(self)


class AttemptHandle:
    """Lets another thread cut an attempt short (hedging cancels the loser).

    ``cut(reason)`` shuts the attempt's socket down; the reading thread then reports
    ``reason`` instead of a connection error. Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self.reason: str | None = None

    def attach(self, response: httpx.Response) -> None:
        stream: Any = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        with self._lock:
            self._socket = sock
            if self.reason is not None:
                self._shutdown()

    def detach(self) -> None:
        """Forget the socket before the connection goes back to the pool: a late cut
        must never shut down a connection another request is now using."""
        with self._lock:
            self._socket = None

    def cut(self, reason: str) -> None:
        with self._lock:
            if self.reason is None:
                self.reason = reason
            self._shutdown()

    def _shutdown(self) -> None:
        if self._socket is not None:
            try:
                # shutdown (not close) wakes a recv blocked in another thread.
                self._socket.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


@dataclass(frozen=True)
class AttemptOutcome:
    """One attempt's raw result: ``answer`` (completed transport, not yet validated) or
    ``signal`` (failed). ``latency_ms`` from send to end; ``ttft_ms`` to first content."""

    answer: Answer | None
    signal: Signal | None
    http_status: int | None
    latency_ms: float
    ttft_ms: float | None
    usage: dict[str, Any] | None = None
    cancelled: bool = False


class Upstream:
    """The process's HTTP client for routes.

    ``default_base_url``: used by routes without their own (OpenRouter, with /api/v1);
    ``api_key``: sent to routes without their own key; ``connect_timeout_s`` bounds TCP
    setup (never beyond the attempt's first-token limit); ``max_connections`` is the pool
    size shared by all concurrent requests; ``headers`` go with every request.
    ``clock``: monotonic seconds.

    Requests go straight to one ``httpx.HTTPTransport`` (httpcore's pool), not through an
    ``httpx.Client``: the client's layers (auth and redirect flows, a cookie jar filled
    from every response, header and URL merging, a wrapped stream) cost about 0.2 ms of
    CPU per request and do nothing here (no auth flow, no redirects, and an upstream's
    cookies must not ride along on later requests). httpx's exception types, timeouts and
    pool are the same.
    """

    def __init__(
        self,
        *,
        default_base_url: str,
        api_key: str = "",
        connect_timeout_s: float = 3.0,
        max_connections: int = 256,
        headers: dict[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        watchdog: Watchdog | None = None,
    ) -> None:
        self.default_base_url = default_base_url.rstrip("/")
        self.api_key = api_key
        self.connect_timeout_s = connect_timeout_s
        self._clock = clock
        self._watchdog = watchdog or Watchdog(clock)
        self._transport = httpx.HTTPTransport(
            retries=0,
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        )
        # httpx.Client's default headers (gzip and deflate are decoded without extras),
        # then the caller's, then the chat request's own.
        self._base_headers = {
            "Accept-Encoding": "gzip, deflate", "Connection": "keep-alive", "User-Agent": f"python-httpx/{httpx.__version__}",
            **(headers or {}),
            "Content-Type": "application/json", "Accept": "text/event-stream",
        }
        # Parsed URLs and header sets, built once per route base URL and per API key.
        self._urls: dict[str, httpx.URL] = {}
        self._headers: dict[str, httpx.Headers] = {}

    def close(self) -> None:
        self._transport.close()

    def url_for(self, route: RouteProfile) -> str:
        return (route.base_url or self.default_base_url).rstrip("/") + "/chat/completions"

    def _url(self, route: RouteProfile) -> httpx.URL:
        """The route's parsed URL (raises ``httpx.InvalidURL`` for a malformed one)."""
        raw = self.url_for(route)
        url = self._urls.get(raw)
        if url is None:
            url = self._urls[raw] = httpx.URL(raw)
        return url

    def _headers_for(self, key: str) -> httpx.Headers:
        headers = self._headers.get(key)
        if headers is None:
            merged = dict(self._base_headers)
            if key:
                merged["Authorization"] = f"Bearer {key}"
            headers = self._headers[key] = httpx.Headers(merged)
        return headers

    def attempt(
        self,
        route: RouteProfile,
        body: bytes,
        times: AttemptTimes,
        *,
        idle_s: float,
        handle: AttemptHandle | None = None,
    ) -> AttemptOutcome:
        """Send ``body`` (a JSON chat request with ``stream: true``) to ``route``."""
        handle = handle or AttemptHandle()
        start = self._clock()
        attempt_end = start + times.timeout_s
        pool_s = min(self.connect_timeout_s, times.first_token_s)
        timeout = {"connect": pool_s, "read": times.first_token_s, "write": times.timeout_s, "pool": pool_s}

        def failed(kind: Any, message: str, status: int | None = None, **kw: Any) -> AttemptOutcome:
            return AttemptOutcome(
                None, Signal(kind, http_status=status, message=message, **kw), status,
                (self._clock() - start) * 1000.0, None, cancelled=handle.reason == "cancelled",
            )

        if handle.reason is not None:
            return failed("timeout", f"attempt {handle.reason} before it was sent")
        try:
            # Headers are copied by the request (it adds Host and Content-Length).
            request = httpx.Request("POST", self._url(route), content=body,
                                    headers=self._headers_for(route.api_key or self.api_key),
                                    extensions={"timeout": timeout})
            response = self._transport.handle_request(request)
        except (httpx.ConnectTimeout, httpx.ConnectError, httpx.PoolTimeout, httpx.ProxyError) as exc:
            # Nothing left this process: no output can exist, so a same-route retry is safe.
            return failed("connect", f"could not connect: {type(exc).__name__}: {exc}")
        except httpx.TimeoutException:
            return failed("timeout", f"no response headers within {times.first_token_s:.2f} s")
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            return failed("reset", f"connection closed before a response: {exc}")
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            # Anything else (a route's malformed base URL, an unsupported scheme): the
            # request never left; never a crash (issue: a bad reply is a failure class).
            return failed("connect", f"request could not be sent: {type(exc).__name__}: {exc}")
        response.request = request
        try:
            handle.attach(response)
            status = response.status_code
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            if not 200 <= status < 300:
                raw = self._read_capped(response, _MAX_ERROR_BYTES)
                error = parse_error_body(raw or b"")
                return failed("http_error", error.message or f"HTTP {status}", status, error=error, retry_after_s=retry_after)
            content_type = response.headers.get("content-type", "")
            if "text/event-stream" not in content_type:
                raw = self._read_capped(response, _MAX_BODY_BYTES)
                if raw is None:
                    return failed("reset", "body cut or too large", status)
                return self._whole(raw, status, start, retry_after)
            return self._stream(response, request, times, idle_s, handle, start, attempt_end, retry_after)
        finally:
            handle.detach()
            response.close()

    def _read_capped(self, response: httpx.Response, cap: int) -> bytes | None:
        parts: list[bytes] = []
        size = 0
        try:
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > cap:
                    return None
                parts.append(chunk)
        except httpx.HTTPError:
            return b"".join(parts) if parts else None
        return b"".join(parts)

    def _whole(self, raw: bytes, status: int, start: float, retry_after: float | None) -> AttemptOutcome:
        latency = (self._clock() - start) * 1000.0
        try:
            parsed = parse_body(raw)
        except FrameError as exc:
            return AttemptOutcome(None, Signal("invalid_body", http_status=status, message=str(exc)), status, latency, None)
        if parsed.error is not None:
            signal = Signal("error_body", output_seen=parsed.output_seen, http_status=status, error=parsed.error,
                            retry_after_s=retry_after, message=parsed.error.message or "error in body")
            return AttemptOutcome(None, signal, status, latency, None, usage=parsed.usage)
        return AttemptOutcome(parsed.answer(), None, status, latency, None, usage=parsed.usage)

    def _stream(
        self,
        response: httpx.Response,
        request: httpx.Request,
        times: AttemptTimes,
        idle_s: float,
        handle: AttemptHandle,
        start: float,
        attempt_end: float,
        retry_after: float | None,
    ) -> AttemptOutcome:
        status = response.status_code
        clock = self._clock
        # The body's socket reads use the request's read timeout as it is when reading
        # starts: after the first token it is the idle limit (issue point 9).
        timeouts = request.extensions.get("timeout")
        if isinstance(timeouts, dict):
            timeouts["read"] = max(0.001, min(idle_s, attempt_end - clock()))
        first_alarm = self._watchdog.arm(min(start + times.first_token_s, attempt_end), lambda: handle.cut("first_token_timeout"))
        end_alarm = self._watchdog.arm(attempt_end, lambda: handle.cut("attempt_timeout"))
        stream = ChatStream()
        ttft_ms: float | None = None

        def failed(kind: Any, message: str, **kw: Any) -> AttemptOutcome:
            return AttemptOutcome(
                None,
                Signal(kind, output_seen=stream.output_seen, http_status=status, message=message, **kw),
                status, (clock() - start) * 1000.0, ttft_ms, usage=stream.usage,
                cancelled=handle.reason == "cancelled",
            )

        # The transport's own stream, unless the body is compressed (then httpx decodes):
        # iter_bytes' chunking and decoder layers cost CPU per chunk for nothing.
        encoded = response.headers.get("content-encoding", "identity").strip().lower() not in ("identity", "")
        chunks: Any = response.iter_bytes() if encoded else response.stream
        try:
            for chunk in chunks:
                # After [DONE] the body is still read to its end (the terminating chunk
                # follows at once) so the connection goes back to the pool: closing a
                # half-read response would cost a new TCP connection per request.
                if stream.finished:
                    continue
                stream.feed(chunk)
                if ttft_ms is None and stream.output_seen:
                    ttft_ms = (clock() - start) * 1000.0
                    first_alarm.cancel()
        except FrameError as exc:
            if ttft_ms is None and stream.output_seen:
                ttft_ms = (clock() - start) * 1000.0
            return failed("invalid_body", str(exc))
        except httpx.TimeoutException:
            if handle.reason is None:
                kind = "first token" if not stream.output_seen else "idle"
                return failed("timeout", f"stream silent past the {kind} limit")
        except httpx.HTTPError as exc:  # network errors, protocol errors, undecodable bytes
            if handle.reason is None:
                return failed("reset", f"connection closed mid-stream: {type(exc).__name__}")
        finally:
            first_alarm.cancel()
            end_alarm.cancel()
        finished = stream.finished
        if handle.reason is not None and not finished:
            messages = {
                "first_token_timeout": f"no content within the first-token limit ({times.first_token_s:.2f} s)",
                "attempt_timeout": f"attempt timeout ({times.timeout_s:.2f} s) passed",
                "cancelled": "cancelled: another attempt won",
            }
            return failed("timeout", messages.get(handle.reason, handle.reason))
        try:
            stream.feed_end()
        except FrameError as exc:
            return failed("invalid_body", str(exc))
        if stream.error is not None:
            return failed("error_body", stream.error.message or "error chunk", error=stream.error, retry_after_s=retry_after)
        if stream.finish_reason is None:
            # Issue point 9 / field case 7: a stream that ends without a finish reason is
            # not a success, [DONE] or not.
            kind = "no_finish" if stream.done else "reset"
            return failed(kind, "stream ended without a finish reason")
        return AttemptOutcome(stream.answer(ttft_ms), None, status, (clock() - start) * 1000.0, ttft_ms, usage=stream.usage)
