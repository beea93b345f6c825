"""A lean HTTP/1.1 client for the gateway's upstream: pooled keep-alive connections on
plain sockets, responses parsed by httptools (Python bindings of llhttp, Node.js's HTTP
parser, in C).

Why the gateway does not read its streams through httpx: a streamed chat reply is ~30
events, each its own socket read, and httpx's transport (httpcore over h11, both pure
Python) spends ~1.3 ms of CPU per reply of this machine's ~1.6 ms on parsing and layering
(``bench/gateway.py``, one request at a time, 2026-12-01); through this module the same
reply costs ~0.35 ms, the rest being the system calls. The canary's probes read through
the same parser on an event loop (``openrouter.http1_loop``); discovery and the internal
clients stay on httpx, where a request's CPU does not matter.

What it does, and no more (RFC 9112, "HTTP/1.1"; RFC 9110 for the content-codings):

- one request at a time per connection, ``http://`` and ``https://`` (TLS verified with
  httpx's default context, so the CA bundle is the same as before: certifi's, or
  ``SSL_CERT_FILE``); no proxies, redirects, cookies, HTTP/2 or ``Expect: 100-continue``;
- response bodies framed by chunked transfer-coding, ``Content-Length`` or the closing of
  the connection (RFC 9112 section 6.3), interim 1xx responses skipped;
- content-codings ``gzip`` and ``deflate`` decoded (zlib, in bounded steps, so an
  inflating body is capped by the caller as it inflates), ``identity`` passed through;
- a pool of at most ``max_connections`` connections over all origins; an idle connection
  is reused only while its socket has nothing to read (a server that closed it, or sent
  bytes nobody asked for, makes it unusable) and goes back only after a complete response
  that may be kept alive, and is closed once idle for ``KEEPALIVE_EXPIRY_S``. A server that closes an idle connection just as a request goes
  out on it leaves that request a ``ConnectionLost`` with nothing read: it is never sent
  again here (a chat completion is not idempotent), the gateway's retry policy decides.

Responses are parsed by ``openrouter.h1reply.ReplyParser``, as the probes' event-loop
client (``openrouter.http1_loop``) parses them.

Errors (``openrouter.h1reply``): every failure is a ``WireError``; ``SendFailed`` when nothing was sent (a bad URL,
DNS, connect, TLS handshake, no free connection within the pool timeout), ``TimedOut``
for a socket timeout, ``ConnectionLost`` for a connection that closed, reset or sent
something that is not HTTP after the request began to go out.
"""

from __future__ import annotations

import select
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

import httpx

from openrouter.h1idle import IdleConnections
from openrouter.h1reply import (
    ConnectionLost,
    ParsedReply,
    ReplyParser,
    SendFailed,
    TimedOut,
    WireError,
)
from openrouter.jsonbody import TooLargeError
from openrouter.transport import join_capped

# An idle connection older than this is closed, not reused (httpx's default keep-alive
# expiry): many servers close idle connections after a few seconds, and a request sent
# on one just as it closes fails.
KEEPALIVE_EXPIRY_S: Final = 5.0
_READ_SIZE: Final = 64 * 1024
_TOKEN_CHARS: Final = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


@dataclass(frozen=True)
class Target:
    """A parsed request URL: ``scheme`` ("http" or "https"), ``host`` (ASCII, IDNA-encoded),
    ``port``, ``path`` (with its query, at least "/"), ``host_header`` (the Host value:
    the port only when it is not the scheme's default)."""

    scheme: str
    host: str
    port: int
    path: str
    host_header: str

    @property
    def origin(self) -> tuple[str, str, int]:
        return self.scheme, self.host, self.port


def parse_url(url: str) -> Target:
    """Split ``url`` into a ``Target``. Raises ``SendFailed`` naming what is wrong: a scheme
    other than http or https, no host, a port that is not a number in 1-65535, or
    whitespace or control characters anywhere in it."""
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        raise SendFailed(f"invalid URL {url[:200]!r}: it contains whitespace or a control character")
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError as exc:  # an unclosed "[", a bracketed host that is no IPv6 address
        raise SendFailed(f"invalid URL {url[:200]!r}: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise SendFailed(f"invalid URL {url[:200]!r}: the scheme must be http or https, not {parts.scheme or 'none'!r}")
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is not None and not 1 <= port <= 65535:
        raise SendFailed(f"invalid URL {url[:200]!r}: the port is not a number in 1-65535")
    if not host:
        raise SendFailed(f"invalid URL {url[:200]!r}: it names no host")
    if ":" not in host:  # a name or an IPv4 address; IPv6 literals were checked by urlsplit
        try:
            # Empty or over-long labels fail here, as they would in the connect's lookup.
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise SendFailed(f"invalid URL {url[:200]!r}: the host is not a valid domain name") from None
    default = 443 if scheme == "https" else 80
    port = port or default
    shown = f"[{host}]" if ":" in host else host
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(scheme, host, port, path, shown if port == default else f"{shown}:{port}")


def request_head(method: str, target: Target, headers: dict[str, str]) -> bytes:
    """The request line and header lines (``Host`` first, then ``headers`` in order),
    without ``Content-Length`` and the blank line that ``Pool.request`` adds. Raises
    ``SendFailed`` for a header name that is not an RFC 9110 token or a value with CR, LF
    or NUL in it (a header must never smuggle another)."""
    lines = [f"{method} {target.path} HTTP/1.1", f"Host: {target.host_header}"]
    for name, value in headers.items():
        if not name or not set(name) <= _TOKEN_CHARS:
            raise SendFailed(f"header name {name[:80]!r} is not a valid token")
        if any(c in value for c in "\r\n\0"):
            raise SendFailed(f"header {name} has a line break or NUL in its value")
        lines.append(f"{name}: {value}")
    try:
        return ("\r\n".join(lines) + "\r\n").encode("latin-1")
    except UnicodeEncodeError:
        raise SendFailed("a header value has a character outside ISO-8859-1") from None


class Pool:
    """Keep-alive connections for any number of origins, at most ``max_connections`` open
    at once; thread-safe. ``ssl_context``: the TLS context for https (built once: building
    one costs ~20 ms of CPU), httpx's default when None. ``keepalive_expiry_s``: an idle
    connection older than this (s, by ``clock``, monotonic) is closed instead of reused."""

    def __init__(self, *, max_connections: int = 256, ssl_context: ssl.SSLContext | None = None,
                 keepalive_expiry_s: float = KEEPALIVE_EXPIRY_S, clock: Callable[[], float] = time.monotonic) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.max_connections = max_connections
        self.keepalive_expiry_s = keepalive_expiry_s
        self._clock = clock
        self._ssl_context = ssl_context
        self._idle: IdleConnections[socket.socket] = IdleConnections(socket.socket.close)
        self._open = 0
        self._lock = threading.Condition(threading.Lock())
        self._closed = False

    def request(self, target: Target, head: bytes, body: bytes, *, connect_timeout_s: float, read_timeout_s: float,
                write_timeout_s: float, attach: Callable[[socket.socket], None] | None = None) -> Response:
        """Send one request (``head`` from ``request_head``, then ``Content-Length`` and
        ``body``) and read its status line and headers; the body is read from the returned
        ``Response``, which must be closed. Times in seconds: ``connect_timeout_s`` for a
        free connection and for TCP and TLS set-up, ``write_timeout_s`` per socket write,
        ``read_timeout_s`` per socket read until the headers are in (``Response`` may
        change it for the body). ``attach`` is given the connection's socket before the
        request goes out (so another thread can cut it, ``AttemptHandle``). Raises
        ``SendFailed``, ``TimedOut`` or ``ConnectionLost``."""
        sock = self._checkout(target, connect_timeout_s)
        response = Response(self, target.origin, sock)
        try:
            if attach is not None:
                attach(sock)
            sock.settimeout(write_timeout_s)
            sock.sendall(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
            sock.settimeout(read_timeout_s)
            response.read_head()
        except TimeoutError:
            response.discard()
            raise TimedOut("no reply within the read timeout" if response.sent else "the request could not be written in time") from None
        except OSError as exc:
            response.discard()
            raise ConnectionLost(str(exc) or type(exc).__name__) from None
        except WireError:
            response.discard()
            raise
        return response

    def close(self) -> None:
        """Close every idle connection; a connection still in use is closed when its
        response is."""
        with self._lock:
            self._closed = True
            self._open -= self._idle.close_all()
            self._lock.notify_all()

    def _checkout(self, target: Target, timeout_s: float) -> socket.socket:
        origin = target.origin
        deadline = self._clock() + timeout_s
        with self._lock:
            while True:
                if self._closed:
                    raise SendFailed("the connection pool is closed")
                sock, closed = self._idle.take(origin, self._clock() - self.keepalive_expiry_s, _usable)
                self._open -= closed
                if sock is not None:
                    return sock
                if self._open < self.max_connections:
                    self._open += 1
                    break
                if self._evict_idle():  # another origin's idle connection gives up its slot
                    continue
                left = deadline - self._clock()
                if left <= 0 or not self._lock.wait(left):
                    if self._open < self.max_connections or self._evict_idle():
                        continue  # freed just as the wait ended
                    raise SendFailed(f"no free connection within {timeout_s:.2f} s (all {self.max_connections} in use)")
        try:
            return self._connect(target, timeout_s)
        except BaseException:
            self._release(None)
            raise

    def _evict_idle(self) -> bool:
        """Close the longest-idle connection of any origin (the caller holds the lock and
        found the pool full); False when none is idle."""
        if not self._idle.evict_oldest():
            return False
        self._open -= 1
        return True

    def _connect(self, target: Target, timeout_s: float) -> socket.socket:
        try:
            sock = socket.create_connection((target.host, target.port), timeout=timeout_s)
        except TimeoutError:
            raise SendFailed(f"could not connect to {target.host_header} within {timeout_s:.2f} s") from None
        except (OSError, UnicodeError) as exc:
            raise SendFailed(f"could not connect to {target.host_header}: {exc}") from None
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if target.scheme == "https":
                if self._ssl_context is None:
                    self._ssl_context = httpx.create_ssl_context()
                sock = self._ssl_context.wrap_socket(sock, server_hostname=target.host)
        except (OSError, ssl.SSLError) as exc:
            sock.close()
            raise SendFailed(f"TLS with {target.host_header} failed: {exc}") from None
        return sock

    def _release(self, sock: socket.socket | None, origin: tuple[str, str, int] | None = None) -> None:
        """Give a slot back: ``sock`` to the idle list when given (a complete, reusable
        response), else the slot alone (the caller closed its socket)."""
        with self._lock:
            if sock is not None and origin is not None and not self._closed:
                self._idle.put(origin, sock, self._clock())
            else:
                self._open -= 1
                if sock is not None:
                    sock.close()
            # Every waiter: the one woken by notify() may want another origin.
            self._lock.notify_all()


def _usable(sock: socket.socket) -> bool:
    """An idle keep-alive connection may carry a new request: nothing to read on it (a
    readable idle socket is one the server closed, or one with stray bytes)."""
    if isinstance(sock, ssl.SSLSocket) and sock.pending():
        return False
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return not poller.poll(0)


class Response(ParsedReply):
    """One response being read: ``status`` (int), ``headers`` (lower-cased names; repeated
    fields joined with ", "), ``socket`` (for a cut from another thread, which
    ``socket.shutdown`` wakes). ``chunks()`` yields the decoded body per socket read;
    ``close()`` returns the connection to the pool after a complete body that may be kept
    alive, and closes it otherwise. The bytes are parsed by ``openrouter.h1reply``."""

    __slots__ = ("socket", "sent", "_pool", "_origin", "_reply", "_closed")

    def __init__(self, pool: Pool, origin: tuple[str, str, int], sock: socket.socket) -> None:
        self.socket = sock
        self.sent = False
        self._pool = pool
        self._origin = origin
        self._reply = ReplyParser()
        self._closed = False

    def read_head(self) -> None:
        """Read until the final status line and headers are in (body bytes that came with
        them are kept for ``chunks``). Raises ``ConnectionLost``, ``OSError``, ``TimeoutError``."""
        self.sent = True
        reply = self._reply
        while not reply.head_done:
            data = self.socket.recv(_READ_SIZE)
            if not data:
                raise ConnectionLost("the server closed the connection without a reply")
            reply.feed(data)
        reply.check_head()

    def set_read_timeout(self, seconds: float) -> None:
        """The socket read timeout for the rest of the body (s)."""
        self.socket.settimeout(seconds)

    def chunks(self) -> Iterator[bytes]:
        """The body, decoded, one piece per socket read (pieces may be empty: keep-alive
        bytes, or compressed bytes that decode to nothing yet). Raises ``TimedOut`` or
        ``ConnectionLost``; after an error the connection is never reused."""
        reply = self._reply
        try:
            while True:
                if raw := reply.take_raw():
                    yield from reply.decode(raw)
                if reply.complete:
                    yield from reply.decode_end()
                    return
                data = self.socket.recv(_READ_SIZE)
                if data:
                    reply.feed(data)
                else:
                    reply.end_of_input()
        except TimeoutError:
            reply.spoil()
            raise TimedOut("the body went silent past the read timeout") from None
        except OSError as exc:
            reply.spoil()
            raise ConnectionLost(f"the connection failed mid-body: {exc}") from None
        except WireError:
            reply.spoil()
            raise

    def read(self, cap: int) -> bytes:
        """The whole decoded body; raises ``TooLargeError`` once a declared
        ``Content-Length`` or the bytes read pass ``cap``, or a ``WireError``."""
        declared = self.declared_length
        if declared is not None and declared > cap:
            raise TooLargeError("reply", cap)
        return join_capped(self.chunks(), cap)

    def discard(self) -> None:
        """Close the connection whatever was read (after an error: it is never reused)."""
        self._reply.spoil()
        self.close()

    def close(self) -> None:
        """Hand the connection back (complete and keep-alive) or close it."""
        if self._closed:
            return
        self._closed = True
        if self._reply.keep:
            self._pool._release(self.socket, self._origin)
        else:
            self.socket.close()
            self._pool._release(None)
