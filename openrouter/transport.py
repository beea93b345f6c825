"""The httpx layer under both clients: pooled transports, the size caps, the clocks.

Guards, and why each exists:

- **first-token limit**: OpenRouter sends ``: OPENROUTER PROCESSING`` about every second
  while a provider sits on a request, so a socket read timeout alone never fires; the
  deadline is checked whenever bytes arrive (``GuardedBody``, the canary) or enforced by
  a watchdog thread that shuts the socket down (``Watchdog``/``AttemptHandle``, the
  gateway, which must also cut a stream mid-read at an exact instant).
- **idle limit**: a socket read timeout between chunks, for a connection gone fully
  silent; ``silence_label`` says which limit a silent socket actually ran into.
- **size caps**: bytes per reply (decoded bytes, what we hold in memory; a gzip bomb
  counts as what it inflates to) and per line (``openrouter.sse``).
"""

from __future__ import annotations

import http.cookiejar
import itertools
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final, Literal

import httpx

from openrouter.codings import decoded
from openrouter.jsonbody import TooLargeError

DEFAULT_MAX_REPLY_BYTES: Final = 16 * 1024 * 1024  # 16 MiB: ~30k streamed tokens with their envelopes
# A timer that fired within this of a limit is that limit (clock granularity, scheduling).
_SLACK_S: Final = 0.05

Silence = Literal["first_token", "idle", "total"]


class NoCookies(http.cookiejar.CookieJar):
    """An API client keeps no session: skip parsing Set-Cookie on every response, and
    never send one upstream's cookies on a later request."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None


def pooled_transport(*, max_connections: int, verify: Any = True, proxy: str | None = None) -> httpx.HTTPTransport:
    """One httpcore pool with ``retries=0`` (retrying is the caller's decision, who knows
    the deadline) that keeps every connection it may open alive, direct or through
    ``proxy`` (a proxy URL, ``openrouter.egress``). ``verify`` may be a shared
    ``ssl.SSLContext`` (building one costs ~20 ms of CPU). ``limits`` must be given here:
    httpx ignores a client's ``limits`` when a transport is given."""
    return httpx.HTTPTransport(
        retries=0,
        verify=verify,
        limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        proxy=proxy,
    )


def silence_label(*, elapsed_s: float, first_token_seen: bool, first_token_s: float, total_s: float) -> Silence:
    """Which limit a socket read timeout ran into, ``elapsed_s`` after the request was sent.

    ``first_token`` when no content arrived and the first-token limit has passed,
    ``total`` when the whole-call limit has, else ``idle`` (silence between chunks).
    """
    if not first_token_seen and elapsed_s >= first_token_s - _SLACK_S:
        return "first_token"
    if elapsed_s >= total_s - _SLACK_S:
        return "total"
    return "idle"


def declared_length(response: httpx.Response) -> int | None:
    """The ``Content-Length`` header as an int, None when absent or not a number."""
    value = response.headers.get("content-length")
    if value is None:
        return None
    try:
        return int(value.strip())
    except ValueError:
        return None


def read_capped(response: httpx.Response, cap: int) -> bytes:
    """The whole (decoded) body, refusing more than ``cap`` bytes.

    Raises ``TooLargeError`` as soon as the declared length or the bytes read exceed the
    cap; ``openrouter.codings.UndecodableError`` and httpx's errors (timeouts, resets)
    pass through.
    """
    declared = declared_length(response)
    if declared is not None and declared > cap:
        raise TooLargeError("reply", cap)
    return join_capped(decoded(response), cap)


def join_capped(chunks: Iterable[bytes], cap: int) -> bytes:
    """``chunks`` joined, reading no further once they pass ``cap`` bytes (raises
    ``TooLargeError`` then); the iterator's own errors pass through."""
    parts: list[bytes] = []
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > cap:
            raise TooLargeError("reply", cap)
        parts.append(chunk)
    return b"".join(parts)


class Cut(Exception):
    """Reading stopped on purpose at a deadline; ``kind`` says which."""

    def __init__(self, kind: Literal["first_token_timeout", "timeout"]) -> None:
        super().__init__(kind)
        self.kind = kind


class GuardedBody:
    """Reads a response body chunk by chunk under the deadlines and the reply cap.

    The first-token and total deadlines (monotonic seconds from ``clock``) are checked
    every time bytes arrive, keep-alive comment bytes included; a fully silent connection
    is cut by the socket read timeout (``httpx.ReadTimeout``) instead. Iterating raises
    ``Cut`` at a deadline and ``TooLargeError`` past ``max_bytes``; ``response`` may be
    None for a reader of another library, which calls ``take`` on every chunk.
    """

    def __init__(
        self,
        response: httpx.Response | None,
        *,
        clock: Callable[[], float],
        first_token_deadline: float | None,
        total_deadline: float,
        max_bytes: int,
        first_token_seen: Callable[[], bool],
    ) -> None:
        self._response = response
        self._clock = clock
        self._first_token_deadline = first_token_deadline
        self._total_deadline = total_deadline
        self._max_bytes = max_bytes
        self._first_token_seen = first_token_seen
        self.received = 0

    def __iter__(self) -> Iterator[bytes]:
        if self._response is None:
            raise TypeError("a GuardedBody without a response only checks chunks (take)")
        for chunk in decoded(self._response):
            self.take(chunk)
            yield chunk

    def take(self, chunk: bytes) -> None:
        """Check the deadlines and the cap as ``chunk`` arrives (a reader that is not an
        httpx response calls it per chunk); raises ``Cut`` or ``TooLargeError``."""
        self._check_deadlines()
        self.received += len(chunk)
        if self.received > self._max_bytes:
            raise TooLargeError("reply", self._max_bytes)

    def _check_deadlines(self) -> None:
        now = self._clock()
        if self._first_token_deadline is not None and not self._first_token_seen() and now > self._first_token_deadline:
            raise Cut("first_token_timeout")
        if now > self._total_deadline:
            raise Cut("timeout")


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
        self._alarms: dict[int, Alarm] = {}
        self._seq = itertools.count()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the watchdog's thread now, if it has not started (idempotent): a
        server process does it before it accepts work, so its first attempt does not
        wait for a thread to start (8 ms on a loaded machine). Threads do not survive a
        fork: call it in the process that serves."""
        with self._lock:
            self._start_locked()

    def _start_locked(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="openrouter-watchdog", daemon=True)
            self._thread.start()

    def arm(self, at: float, fn: Callable[[], None]) -> Alarm:
        alarm = Alarm(self, next(self._seq), at, fn)
        with self._lock:
            self._alarms[alarm.key] = alarm
            self._start_locked()
        if not self._wake.is_set():  # set() takes a lock and notifies even when set
            self._wake.set()
        return alarm

    def disarm(self, alarm: Alarm) -> None:
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


class Alarm:
    """One armed instant of a ``Watchdog``."""

    __slots__ = ("watchdog", "key", "at", "fn")

    def __init__(self, watchdog: Watchdog, key: int, at: float, fn: Callable[[], None]) -> None:
        self.watchdog = watchdog
        self.key = key
        self.at = at
        self.fn = fn

    def cancel(self) -> None:
        self.watchdog.disarm(self)


class AttemptHandle:
    """Lets another thread cut a request short (a deadline, or hedging cancels the loser).

    ``cut(reason)`` shuts the request's socket down; the reading thread then reports
    ``reason`` instead of a connection error. Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self.reason: str | None = None

    def attach(self, sock: socket.socket | None) -> None:
        """Watch ``sock``, the request's connection (None: nothing to cut); a cut that came
        before it shuts it down at once."""
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
