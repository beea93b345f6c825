"""The gateway's upstream at the wire's limits, over real HTTP: an oversized reply or line,
JSON nested too deeply, a last event without its blank line, and which limit a silent
stream ran into. Oversize and bad JSON are ``invalid_response`` and the next route serves."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from routing.contracts import contract_from_dict
from routing.deadline import AttemptTimes
from routing.failures import FailureClass, classify
from routing.gateway.door import Gateway
from routing.gateway.upstream import Upstream
from tests.routing.conftest import route, user

TIMES = AttemptTimes(timeout_s=5.0, first_token_s=5.0)
ROLE = b'data: {"id":"gen-1","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n'
HELLO = b'data: {"choices":[{"index":0,"delta":{"content":"Hello"}}]}\n\n'
FINISH = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
SSE = ROLE + HELLO + FINISH + b"data: [DONE]\n\n"
DEEP = b"[" * 200_000 + b"]" * 200_000


def _sse(body: bytes | Iterator[bytes]) -> Response:
    return Response(body, content_type="text/event-stream")


def _attempt(httpserver: HTTPServer, response: Response, *, times: AttemptTimes = TIMES, idle_s: float = 5.0, **kw: int):
    httpserver.expect_request("/api/v1/chat/completions").respond_with_response(response)
    upstream = Upstream(default_base_url=httpserver.url_for("/api/v1"), **kw)
    try:
        return upstream.attempt(route("a"), b'{"stream":true}', times, idle_s=idle_s)
    finally:
        upstream.close()


def _invalid(outcome) -> str:  # type: ignore[no-untyped-def]
    assert outcome.answer is None and outcome.signal is not None and outcome.signal.kind == "invalid_body", outcome
    assert classify(outcome.signal).cls is FailureClass.INVALID_RESPONSE
    return outcome.signal.message


def test_a_stream_over_the_reply_cap_is_an_invalid_response(httpserver: HTTPServer):
    many = (HELLO for _ in range(20_000))  # ~1.2 MB of content frames, never finished
    message = _invalid(_attempt(httpserver, _sse(many), max_reply_bytes=256 * 1024))
    assert "reply exceeds the 262144-byte cap" in message


def test_a_whole_body_over_the_reply_cap_is_an_invalid_response(httpserver: HTTPServer):
    body = json.dumps({"choices": [{"index": 0, "message": {"content": "x" * 300_000}, "finish_reason": "stop"}]})
    response = Response(body, content_type="application/json")
    assert "reply exceeds" in _invalid(_attempt(httpserver, response, max_reply_bytes=256 * 1024))


def test_a_line_over_the_line_cap_is_an_invalid_response(httpserver: HTTPServer):
    line = b"data: " + b"x" * 100_000 + b"\n\n"
    assert "line exceeds the 65536-byte cap" in _invalid(_attempt(httpserver, _sse(ROLE + line), max_line_bytes=65536))


def test_json_nested_too_deeply_is_an_invalid_response(httpserver: HTTPServer):
    assert "nested too deeply" in _invalid(_attempt(httpserver, _sse(ROLE + b"data: " + DEEP + b"\n\n")))


def test_a_deeply_nested_whole_body_is_an_invalid_response(httpserver: HTTPServer):
    assert "nested too deeply" in _invalid(_attempt(httpserver, Response(DEEP, content_type="application/json")))


def test_a_last_finish_event_without_its_blank_line_is_kept(httpserver: HTTPServer):
    outcome = _attempt(httpserver, _sse(ROLE + HELLO + FINISH[:-1]))  # "...}\n", no blank line, no [DONE]
    assert outcome.answer is not None and outcome.answer.content == "Hello" and outcome.answer.finish_reason == "stop"


def test_a_silence_before_content_is_named_by_the_idle_limit_that_fired(httpserver: HTTPServer):
    def slow() -> Iterator[bytes]:
        yield ROLE
        time.sleep(1.5)  # the idle limit (0.3 s) fires long before the first-token limit (5 s)
        yield FINISH

    outcome = _attempt(httpserver, _sse(slow()), idle_s=0.3)
    assert outcome.signal is not None and outcome.signal.kind == "timeout"
    assert "idle limit" in outcome.signal.message and "first-token" not in outcome.signal.message


def test_an_oversized_reply_falls_back_to_the_next_route(httpserver: HTTPServer):
    def big(request: Request) -> Response:
        return _sse(HELLO for _ in range(20_000))

    httpserver.expect_request("/big/api/v1/chat/completions").respond_with_handler(big)
    httpserver.expect_request("/ok/api/v1/chat/completions").respond_with_response(_sse(SSE))
    upstream = Upstream(default_base_url=httpserver.url_for("/ok/api/v1"), max_reply_bytes=256 * 1024)
    routes = [route("big", base_url=httpserver.url_for("/big/api/v1"), latency_ms=1), route("ok", latency_ms=5)]
    gw = Gateway(routes=lambda: routes, upstream=upstream)
    try:
        contract = contract_from_dict({"name": "c", "version": 1, "workload": "text", "finish_reasons": ["stop"]})
        result = gw.complete(contract, user())
    finally:
        upstream.close()
    assert result.ok and result.route.name == "ok"
    assert [(a.route, a.failure_class) for a in result.attempts] == [("big", "invalid_response"), ("ok", "")]
