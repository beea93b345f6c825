"""The gateway's HTTP path (routing/gateway/upstream.py) on what a real server can send: headers
it must carry, cookies it must not, compressed streams, unusable route URLs."""

from __future__ import annotations

import gzip
import threading
import time

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from openrouter.transport import AttemptHandle
from routing.deadline import AttemptTimes
from routing.gateway.upstream import Upstream
from tests.routing.conftest import route

SSE = (
    b': OPENROUTER PROCESSING\n\n'
    b'data: {"id":"gen-1","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}\n\n'
    b'data: [DONE]\n\n'
)
TIMES = AttemptTimes(timeout_s=5.0, first_token_s=5.0)


def _upstream(httpserver: HTTPServer) -> Upstream:
    return Upstream(default_base_url=httpserver.url_for("/api/v1"), api_key="sk-test", headers={"X-Title": "gw"})


def test_each_attempt_carries_its_headers_and_never_an_upstreams_cookies(httpserver: HTTPServer):
    seen: list[dict[str, str]] = []

    def handler(request: Request) -> Response:
        seen.append(dict(request.headers))
        return Response(SSE, content_type="text/event-stream", headers={"Set-Cookie": "__cf_bm=abc; Path=/"})

    httpserver.expect_request("/api/v1/chat/completions", method="POST").respond_with_handler(handler)
    upstream = _upstream(httpserver)
    try:
        for _ in range(2):
            outcome = upstream.attempt(route("a"), b'{"stream":true}', TIMES, idle_s=5.0)
            assert outcome.answer is not None and outcome.answer.content == "Hello", outcome
    finally:
        upstream.close()
    for headers in seen:
        assert headers["Authorization"] == "Bearer sk-test" and headers["X-Title"] == "gw"
        assert headers["Accept"] == "text/event-stream" and headers["Content-Type"] == "application/json"
        assert headers["Content-Length"] == str(len(b'{"stream":true}'))
        assert "Cookie" not in headers  # one route's cookies never ride along on later requests


def test_a_compressed_stream_is_decoded(httpserver: HTTPServer):
    httpserver.expect_request("/api/v1/chat/completions").respond_with_response(
        Response(gzip.compress(SSE), content_type="text/event-stream", headers={"Content-Encoding": "gzip"}))
    upstream = _upstream(httpserver)
    try:
        outcome = upstream.attempt(route("a"), b"{}", TIMES, idle_s=5.0)
    finally:
        upstream.close()
    assert outcome.answer is not None and outcome.answer.content == "Hello" and outcome.answer.finish_reason == "stop"


def test_a_malformed_route_url_is_a_connect_failure_not_a_crash():
    upstream = Upstream(default_base_url="http://127.0.0.1:1/api/v1")
    try:
        for base_url in ("http://exa mple.com:port/api/v1", "ftp://127.0.0.1/api/v1"):
            outcome = upstream.attempt(route("a", base_url=base_url), b"{}", TIMES, idle_s=5.0)
            assert outcome.signal is not None and outcome.signal.kind == "connect", outcome
    finally:
        upstream.close()


def test_an_api_key_that_would_break_the_request_head_is_refused_before_sending():
    # A key pasted with its newline must never become a second header upstream.
    upstream = Upstream(default_base_url="http://127.0.0.1:1/api/v1", api_key="sk-or-v1-abc\r\nX-Injected: 1")
    try:
        outcome = upstream.attempt(route("a"), b"{}", TIMES, idle_s=5.0)
    finally:
        upstream.close()
    assert outcome.signal is not None and outcome.signal.kind == "connect"
    assert outcome.signal.message == "request could not be sent: header Authorization has a line break or NUL in its value"



def _scripted(script):
    from tests.openrouter.scripted import ScriptedServer

    server = ScriptedServer()
    server.script = script
    return server


def test_a_reply_trickled_a_byte_at_a_time_is_cut_at_the_first_token_limit_not_read_for_ever():
    def trickle(sock):
        for byte in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}":
            sock.sendall(bytes([byte]))
            time.sleep(0.05)  # each byte re-arms a socket read timeout: only the alarm ends it

    server = _scripted(trickle)
    upstream = Upstream(default_base_url=server.base_url)
    try:
        started = time.monotonic()
        outcome = upstream.attempt(route("a"), b"{}", AttemptTimes(timeout_s=2.0, first_token_s=0.5), idle_s=0.5)
        took = time.monotonic() - started
    finally:
        upstream.close()
        server.close()
    assert outcome.signal is not None and outcome.signal.kind == "timeout", outcome
    assert outcome.signal.message == "no content within the first-token limit (0.50 s)"
    assert took < 1.2


def test_a_cut_before_the_headers_arrive_ends_the_attempt_at_once_as_cancelled():
    server = _scripted(lambda sock: time.sleep(2.0))
    upstream = Upstream(default_base_url=server.base_url)
    handle = AttemptHandle()
    threading.Timer(0.2, handle.cut, args=("cancelled",)).start()
    try:
        started = time.monotonic()
        outcome = upstream.attempt(route("a"), b"{}", AttemptTimes(timeout_s=5.0, first_token_s=4.0), idle_s=4.0,
                                   handle=handle)
        took = time.monotonic() - started
    finally:
        upstream.close()
        server.close()
    assert outcome.cancelled and outcome.signal is not None and outcome.signal.kind == "timeout"
    assert outcome.signal.message == "cancelled: another attempt won" and took < 1.0


def test_a_retry_after_whose_zone_overflows_is_ignored_not_a_crash(httpserver: HTTPServer):
    httpserver.expect_request("/api/v1/chat/completions").respond_with_response(Response(
        b"{}", status=429, content_type="application/json",
        headers={"Retry-After": "Tue, 01 Jan 2020 00:00:00 +99999999999999999999"}))
    upstream = _upstream(httpserver)
    try:
        outcome = upstream.attempt(route("a"), b"{}", TIMES, idle_s=5.0)
    finally:
        upstream.close()
    assert outcome.signal is not None and outcome.signal.kind == "http_error" and outcome.http_status == 429
    assert outcome.signal.retry_after_s is None
