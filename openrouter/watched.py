"""The gateway's sync httpx transport: httpcore's pool, whose sockets another thread can cut.

Why not ``httpx.HTTPTransport`` as it comes: the gateway must cut an attempt at an exact
instant from another thread (a first-token deadline while keep-alive comments keep the
socket busy, hedging cancelling the loser), and before the response headers too (a
server that trickles its headers byte by byte re-arms every read timeout). That needs the
request's socket as soon as the request goes out, which ``httpx.HTTPTransport`` does not
expose; httpcore's documented extension point, a network backend, does. So this module
builds the same httpcore pools httpx does (``ConnectionPool``, or ``HTTPProxy`` for a
proxy), over a backend whose streams hand their socket to ``sending``'s callback on the
first write of each request. Framing, pooling, TLS and proxy tunnelling stay httpcore's;
this module only maps its types to httpx's, as ``httpx.HTTPTransport`` does.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import ssl
import threading
import typing
from collections.abc import Callable, Iterable, Iterator

import httpcore
import httpx

# Most specific first: the first match is the httpx type raised.
_ERRORS: tuple[tuple[type[Exception], type[httpx.HTTPError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)

_local = threading.local()


@contextlib.contextmanager
def sending(attach: Callable[[socket.socket | None], None]) -> Iterator[None]:
    """Within the block, this thread's requests through a ``WatchedTransport`` call
    ``attach(sock)`` with their connection's socket before writing to it (once per
    write; the socket is the proxy's for a proxied request, the one a cut must shut)."""
    previous = getattr(_local, "attach", None)
    _local.attach = attach
    try:
        yield
    finally:
        _local.attach = previous


@contextlib.contextmanager
def _httpx_errors() -> Iterator[None]:
    try:
        yield
    except httpcore.TimeoutException as exc:
        raise _mapped(exc) from exc
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.ProxyError, httpcore.UnsupportedProtocol) as exc:
        raise _mapped(exc) from exc


def _mapped(exc: Exception) -> httpx.HTTPError:
    for source, target in _ERRORS:
        if isinstance(exc, source):
            return target(str(exc))
    return httpx.TransportError(str(exc))


class _Stream(httpcore.NetworkStream):
    """A network stream that shows its socket to the thread's ``sending`` callback."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        attach = getattr(_local, "attach", None)
        if attach is not None:
            attach(self._inner.get_extra_info("socket"))
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: typing.Iterable[typing.Any] | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: typing.Iterable[typing.Any] | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _Body(httpx.SyncByteStream):
    def __init__(self, inner: Iterable[bytes]) -> None:
        self._inner = inner

    def __iter__(self) -> Iterator[bytes]:
        with _httpx_errors():
            yield from self._inner

    def close(self) -> None:
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()


def shared_ssl_context() -> ssl.SSLContext:
    """The process's TLS client context, httpx's defaults (verification on; the trust
    store ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` names, else certifi's CAs), built once
    per trust store: building one costs 20-40 ms of CPU, most of it loading the CA file.
    Built before gunicorn forks (``routing.warm``), the workers share it instead of each
    building its own before it accepts; an ``SSLContext`` holds no socket nor thread."""
    return _ssl_context(os.environ.get("SSL_CERT_FILE") or None, os.environ.get("SSL_CERT_DIR") or None)


@functools.cache
def _ssl_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    # Keyed by the variables httpx reads: a process told of another trust store uses it.
    return httpx.create_ssl_context()


class WatchedTransport(httpx.BaseTransport):
    """httpx's HTTP/1.1 transport for one egress: direct, or through ``proxy`` (an
    ``http://``/``https://`` proxy URL, credentials in its userinfo sent as
    ``Proxy-Authorization``; an ``https://`` target is tunnelled with CONNECT).

    ``max_connections`` (all kept alive, idle ones closed after ``keepalive_expiry_s``, 5 s
    as httpx), ``ssl_context`` shared (building one costs ~20 ms of CPU); never retries
    (the gateway owns retries). Raises httpx's exception types, as ``httpx.HTTPTransport``.
    """

    def __init__(self, *, proxy: str | None, max_connections: int, ssl_context: ssl.SSLContext,
                 keepalive_expiry_s: float = 5.0) -> None:
        pool: httpcore.ConnectionPool | httpcore.HTTPProxy
        if proxy is None:
            pool = httpcore.ConnectionPool(
                ssl_context=ssl_context, max_connections=max_connections, max_keepalive_connections=max_connections,
                keepalive_expiry=keepalive_expiry_s, retries=0, network_backend=_Backend(),
            )
        else:
            parsed = httpx.Proxy(proxy)
            pool = httpcore.HTTPProxy(
                proxy_url=httpcore.URL(scheme=parsed.url.raw_scheme, host=parsed.url.raw_host, port=parsed.url.port,
                                       target=parsed.url.raw_path),
                proxy_auth=parsed.raw_auth, proxy_headers=parsed.headers.raw, ssl_context=ssl_context,
                max_connections=max_connections, max_keepalive_connections=max_connections,
                keepalive_expiry=keepalive_expiry_s, retries=0, network_backend=_Backend(),
            )
        self._pool = pool

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)
        url = request.url
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path),
            headers=request.headers.raw, content=request.stream, extensions=request.extensions,
        )
        with _httpx_errors():
            reply = self._pool.handle_request(core)
        assert isinstance(reply.stream, Iterable)
        return httpx.Response(status_code=reply.status, headers=reply.headers, stream=_Body(reply.stream),
                              extensions=reply.extensions)

    def close(self) -> None:
        self._pool.close()
