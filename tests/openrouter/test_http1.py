"""The gateway's HTTP/1.1 client (openrouter/http1.py) against a real server that scripts
its bytes: every framing a reply may use, connections kept and dropped, and every way a
reply can go wrong ending in one of the client's errors, never in a hang or a crash."""

from __future__ import annotations

import gzip
import socket
import ssl
import subprocess
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from openrouter.h1reply import ConnectionLost, SendFailed, TimedOut
from openrouter.http1 import Pool, parse_url, request_head
from openrouter.jsonbody import TooLargeError
from tests.openrouter.scripted import ScriptedServer, _read_request, closed_port

SSE = b'data: {"choices":[]}\n\n' * 3 + b"data: [DONE]\n\n"


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    s = ScriptedServer()
    yield s
    s.close()


@pytest.fixture
def pool() -> Iterator[Pool]:
    """A pool with the defaults, closed after the test."""
    p = Pool()
    yield p
    p.close()


def _get(pool: Pool, base: str, body: bytes = b"{}", read_timeout_s: float = 5.0):
    target = parse_url(base + "/chat/completions")
    head = request_head("POST", target, {"Content-Type": "application/json"})
    return pool.request(target, head, body, connect_timeout_s=2.0, read_timeout_s=read_timeout_s, write_timeout_s=2.0)


def _chunked(*parts: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"


CHUNKED_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def test_a_chunked_stream_is_read_per_write_and_its_connection_reused(server, pool):
    connections = []

    def script(sock: socket.socket) -> None:
        connections.append(sock)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # each write its own segment
        for i in range(2):
            if i:
                _read_request(sock)
            sock.sendall(CHUNKED_HEAD)
            for line in SSE.split(b"\n\n")[:-1]:
                sock.sendall(b"%x\r\n%s\n\n\r\n" % (len(line) + 2, line))
                time.sleep(0.01)
            sock.sendall(b"0\r\n\r\n")

    server.script = script
    for _ in range(2):
        response = _get(pool, server.base_url)
        pieces = list(response.chunks())
        response.close()
        assert response.status == 200 and response.headers["content-type"] == "text/event-stream"
        assert b"".join(pieces) == SSE and len(pieces) >= 3  # handed out as they arrived
    assert len(connections) == 1  # the second request rode the kept-alive connection
    assert server.requests == [b"{}"]  # the body, framed by the Content-Length sent


def test_content_length_and_close_delimited_bodies(server, pool):
    replies = iter([
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
        b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end",
    ])
    server.script = lambda sock: sock.sendall(next(replies))
    for expected in (b"hello", b"until the end"):
        response = _get(pool, server.base_url)
        assert response.read(1 << 20) == expected
        response.close()
        # The scripted server closes after each reply: let its FIN arrive, or the next
        # request may race it on the kept connection (a reset, the retry policy's call).
        time.sleep(0.1)
    assert pool._open == 0  # a body ended by the close is never pooled


def test_an_interim_response_is_skipped():
    s = ScriptedServer()
    s.script = lambda sock: sock.sendall(
        b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-A: 1\r\n\r\nok")
    pool = Pool()
    try:
        response = _get(pool, s.base_url)
        assert (response.status, response.headers.get("link"), response.read(10)) == (200, None, b"ok")
        response.close()
    finally:
        pool.close()
        s.close()


@pytest.mark.parametrize("coding", ["gzip", "deflate", "raw-deflate"])
def test_compressed_bodies_are_decoded(server, coding, pool):
    if coding == "gzip":
        data = gzip.compress(SSE)
    else:
        c = zlib.compressobj(wbits=zlib.MAX_WBITS if coding == "deflate" else -zlib.MAX_WBITS)
        data = c.compress(SSE) + c.flush()
    name = coding.removeprefix("raw-").encode()
    server.script = lambda sock: sock.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Encoding: %s\r\nTransfer-Encoding: chunked\r\n\r\n" % name
        + _chunked(data[:7], data[7:]))
    response = _get(pool, server.base_url)
    assert response.read(1 << 20) == SSE
    response.close()


def test_an_inflating_body_is_capped_as_it_inflates(server, pool):
    bomb = gzip.compress(b"\0" * (32 << 20), compresslevel=9)  # ~32 KB that inflate to 32 MB
    server.script = lambda sock: sock.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s" % (len(bomb), bomb))
    response = _get(pool, server.base_url)
    started = time.process_time()
    with pytest.raises(TooLargeError):
        response.read(1 << 20)
    assert time.process_time() - started < 0.05  # stopped near the cap, not after 32 MB
    response.close()


def test_a_declared_length_over_the_cap_is_refused_before_reading(server, pool):
    server.script = lambda sock: sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\nabc")
    response = _get(pool, server.base_url)
    with pytest.raises(TooLargeError):
        response.read(1000)
    response.close()


@pytest.mark.parametrize(("reply", "message"), [
    (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "not valid HTTP/1.1"),
    (b"HTTP/1.1 200 OK\r\n" + b"X-Pad: " + b"a" * (70 << 10) + b"\r\n\r\n", "headers over"),
    (b"", "without a reply"),
    (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n", "switched protocols"),
    (b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 1\r\n\r\nx", "'br' is not supported"),
])
def test_a_reply_that_is_not_usable_http_is_connection_lost(server, reply, message, pool):
    server.script = lambda sock: sock.sendall(reply)
    with pytest.raises(ConnectionLost, match=message):
        _get(pool, server.base_url)
    assert pool._open == 0


def test_a_body_cut_mid_chunk_or_gone_silent_is_an_error_not_a_hang(server, pool):
    replies = iter([CHUNKED_HEAD + b"10\r\nonly-half", CHUNKED_HEAD + b"3\r\nabc\r\n"])

    def script(sock: socket.socket) -> None:
        reply = next(replies)
        sock.sendall(reply)
        if reply.endswith(b"abc\r\n"):
            time.sleep(1.0)  # silent: the read timeout fires

    server.script = script
    response = _get(pool, server.base_url)
    with pytest.raises(ConnectionLost, match="closed mid-body"):
        list(response.chunks())
    response.close()
    response = _get(pool, server.base_url)
    response.set_read_timeout(0.2)
    started = time.monotonic()
    with pytest.raises(TimedOut):
        list(response.chunks())
    assert time.monotonic() - started < 0.9
    response.close()
    assert pool._open == 0


def test_no_headers_within_the_read_timeout_is_timed_out(server, pool):
    server.script = lambda sock: time.sleep(1.0)
    with pytest.raises(TimedOut, match="no reply within"):
        _get(pool, server.base_url, read_timeout_s=0.2)


def test_an_idle_connection_the_server_closed_is_not_reused(server, pool):
    # The server says keep-alive but closes after each reply: the next request must get
    # a fresh connection, not an error.
    server.script = lambda sock: sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    for _ in range(3):
        response = _get(pool, server.base_url)
        assert response.read(10) == b"ok"
        response.close()
        time.sleep(0.1)  # the server's close has arrived
    assert len(server.requests) == 3


def test_an_idle_connection_past_the_keepalive_expiry_is_closed_not_reused(server):
    connections = []

    def script(sock: socket.socket) -> None:  # answers every request on the connection
        connections.append(sock)
        while True:
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            if not _read_request(sock):
                return

    server.script = script
    now = [100.0]
    pool = Pool(keepalive_expiry_s=5.0, clock=lambda: now[0])
    try:
        for step in (0.0, 4.9, 5.1):  # reused after 4.9 s idle, not after 5.1 s
            now[0] += step
            response = _get(pool, server.base_url)
            assert response.read(10) == b"ok"
            response.close()
        assert len(connections) == 2
    finally:
        pool.close()


def test_a_full_pool_waits_its_timeout_then_fails_and_frees_on_close(server):
    server.script = lambda sock: sock.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n") or time.sleep(2)
    pool = Pool(max_connections=1)
    try:
        held = _get(pool, server.base_url)
        target = parse_url(server.base_url + "/x")
        started = time.monotonic()
        with pytest.raises(SendFailed, match="no free connection within 0.30 s"):
            pool.request(target, request_head("GET", target, {}), b"", connect_timeout_s=0.3, read_timeout_s=1,
                         write_timeout_s=1)
        assert 0.25 < time.monotonic() - started < 1.0
        waiter: list[object] = []

        def wait_for_slot() -> None:
            try:
                pool._checkout(target, 3.0).close()
                waiter.append("got it")
            except SendFailed as exc:
                waiter.append(exc)

        thread = threading.Thread(target=wait_for_slot)
        thread.start()
        time.sleep(0.1)
        held.close()  # an unfinished body: its connection is closed, its slot handed on
        thread.join(5)
        assert waiter == ["got it"]
    finally:
        pool.close()


def test_a_refused_connection_is_send_failed_and_frees_its_slot():
    pool = Pool(max_connections=1)
    try:
        for _ in range(2):
            with pytest.raises(SendFailed, match="could not connect to 127.0.0.1:"):
                _get(pool, f"http://127.0.0.1:{closed_port()}")
        assert pool._open == 0
    finally:
        pool.close()


@pytest.mark.parametrize(("url", "message"), [
    ("ftp://127.0.0.1/api", "scheme must be http or https"),
    ("http://exa mple.com/api", "whitespace"),
    ("http://127.0.0.1:port/api", "port is not a number"),
    ("http://127.0.0.1:70000/api", "port is not a number"),
    ("http:///api", "names no host"),
    ("http://h:0/api", "port is not a number"),
    ("http://[::1/api", "Invalid IPv6 URL"),
    ("http://[zz]/api", "does not appear to be an IPv4 or IPv6 address"),
    ("http://a..b/api", "not a valid domain name"),
    ("http://" + "a" * 64 + ".example/api", "not a valid domain name"),
])
def test_a_bad_url_is_refused_with_what_is_wrong(url, message):
    with pytest.raises(SendFailed, match=message):
        parse_url(url)


def test_urls_and_heads():
    t = parse_url("https://OpenRouter.ai/api/v1/chat/completions?x=1")
    assert (t.scheme, t.host, t.port, t.path, t.host_header) == ("https", "openrouter.ai", 443, "/api/v1/chat/completions?x=1", "openrouter.ai")
    assert parse_url("http://[::1]:8080/").host_header == "[::1]:8080"
    assert parse_url("http://bücher.example/").host == "xn--bcher-kva.example"
    target = parse_url("http://h:81/p")
    assert request_head("POST", target, {"A": "1"}) == b"POST /p HTTP/1.1\r\nHost: h:81\r\nA: 1\r\n"
    for headers, message in (({"Authorization": "Bearer k\r\nX-Evil: 1"}, "line break"), ({"Bad Name": "v"}, "not a valid token"),
                             ({"A": "€"}, "ISO-8859-1")):
        with pytest.raises(SendFailed, match=message):
            request_head("POST", target, headers)


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory) -> Iterator[tuple[int, Path]]:
    """A one-thread TLS server on 127.0.0.1 with a self-signed certificate: answers every
    request with a 2-byte body."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                raw, _ = listener.accept()
            except TimeoutError:
                continue
            try:
                with context.wrap_socket(raw, server_side=True) as conn:
                    _read_request(conn)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            except (OSError, ssl.SSLError):
                raw.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1], cert
    stop.set()
    thread.join(2)
    listener.close()


def test_tls_is_verified_by_default_and_works_with_a_trusted_certificate(tls_server, pool):
    port, cert = tls_server
    with pytest.raises(SendFailed, match="TLS with 127.0.0.1:.* failed: .*CERTIFICATE_VERIFY_FAILED"):
        _get(pool, f"https://127.0.0.1:{port}")
    assert pool._open == 0
    pool = Pool(ssl_context=ssl.create_default_context(cafile=str(cert)))
    try:
        response = _get(pool, f"https://127.0.0.1:{port}")
        assert (response.status, response.read(10)) == (200, b"ok")
        response.close()
    finally:
        pool.close()


@pytest.mark.parametrize("after", [b"HTTP/1.1 201 EVIL\r\nX-Evil: 1\r\nContent-Length: 4\r\n\r\nEVIL", b"GARBAGE"])
def test_bytes_after_a_complete_reply_are_never_read_as_part_of_it_nor_reused(server, after, pool):
    server.script = lambda sock: sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" + after)
    response = _get(pool, server.base_url)
    assert (response.status, response.read(100)) == (200, b"ok")
    assert "x-evil" not in response.headers and response.headers["content-length"] == "2"
    response.close()
    assert pool._open == 0  # a second reply nobody asked for: the connection is dropped


def test_a_compressed_body_cut_short_is_an_error_not_a_shorter_reply(server, pool):
    data = gzip.compress(b"hello world " * 400)[:30]
    server.script = lambda sock: sock.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s" % (len(data), data))
    response = _get(pool, server.base_url)
    with pytest.raises(ConnectionLost, match="ended before its end marker"):
        response.read(1 << 20)
    response.close()
    assert pool._open == 0


def test_a_full_pool_gives_another_origins_idle_connection_up_and_wakes_every_waiter():
    a, b = ScriptedServer(), ScriptedServer()
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    # A's connection is kept idle; B's replies close theirs (one request per connection).
    a.script = lambda sock: sock.sendall(ok) or time.sleep(0.3)
    b.script = lambda sock: sock.sendall(ok.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
    pool = Pool(max_connections=1)
    try:
        response = _get(pool, a.base_url)
        assert response.read(10) == b"ok"
        response.close()  # idle, for origin A
        started = time.monotonic()
        response = _get(pool, b.base_url)  # origin B takes A's slot at once
        assert response.read(10) == b"ok" and time.monotonic() - started < 0.5
        response.close()
        # Two waiters, one per origin, while B's connection is in use: both get a
        # connection when it is released, each within its own timeout.
        held = _get(pool, b.base_url)
        results: dict[str, object] = {}

        def wait(name: str, base: str) -> None:
            try:
                r = _get(pool, base)
                results[name] = r.read(10)
                r.close()
            except SendFailed as exc:
                results[name] = exc

        threads = [threading.Thread(target=wait, args=(n, u)) for n, u in (("a", a.base_url), ("b", b.base_url))]
        for t in threads:
            t.start()
        time.sleep(0.2)
        held.read(10)
        held.close()
        for t in threads:
            t.join(5)
        assert results == {"a": b"ok", "b": b"ok"}
    finally:
        pool.close()
        a.close()
        b.close()
