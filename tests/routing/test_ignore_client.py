"""The product backend's ignore-list client: cache, revalidation, stale-if-error."""

from __future__ import annotations

import logging

import httpx
import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from ignore_client import IgnoreListClient, TokenRejected

MODEL = "meta-llama/llama-3.3-70b-instruct"
BODY = {"model": MODEL, "ignore": ["borealis/fp8", "dynamo"], "sources": {"reviewed": ["dynamo"], "incident": [], "canary": ["borealis/fp8"]}, "generated_at": "2026-11-29T10:00:00+00:00"}


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _serve(httpserver: HTTPServer, seen: list[dict]) -> None:
    def handler(request: Request) -> Response:
        seen.append(dict(request.headers))
        if request.headers.get("Authorization") != "Bearer tok":
            return Response('{"error":{"code":401,"message":"no"}}', status=401)
        if request.headers.get("If-None-Match") == '"v1"':
            return Response(status=304, headers={"ETag": '"v1"', "Cache-Control": "private, max-age=30"})
        import json

        return Response(json.dumps(BODY), headers={"ETag": '"v1"', "Cache-Control": "private, max-age=30"}, content_type="application/json")

    httpserver.expect_request("/api/v1/routing/ignore").respond_with_handler(handler)


def test_fetches_then_serves_from_cache_within_max_age(httpserver: HTTPServer):
    seen: list[dict] = []
    _serve(httpserver, seen)
    clock = Clock()
    client = IgnoreListClient(httpserver.url_for("/"), "tok", clock=clock)
    assert client.get(MODEL).ignore == ("borealis/fp8", "dynamo")
    clock.t += 10
    assert client.get(MODEL).ignore == ("borealis/fp8", "dynamo")
    assert len(seen) == 1
    assert client.provider_ignore(MODEL) == {"ignore": ["borealis/fp8", "dynamo"]}


def test_revalidates_with_the_etag_after_max_age(httpserver: HTTPServer):
    seen: list[dict] = []
    _serve(httpserver, seen)
    clock = Clock()
    client = IgnoreListClient(httpserver.url_for("/"), "tok", clock=clock)
    client.get(MODEL)
    clock.t += 31
    result = client.get(MODEL)
    # The cached list is served at once; one background thread revalidates it.
    assert client.refresh_join(5)
    assert len(seen) == 2 and seen[1]["If-None-Match"] == '"v1"'
    assert result.ignore == ("borealis/fp8", "dynamo") and not result.stale


def test_serves_the_last_good_list_when_the_ops_app_is_down_and_says_so_when_too_old(caplog):
    # A server of its own: stopping the shared session fixture would break later tests.
    httpserver = HTTPServer(host="127.0.0.1", port=0)
    httpserver.start()
    _serve(httpserver, [])
    clock = Clock()
    client = IgnoreListClient(httpserver.url_for("/"), "tok", clock=clock, max_stale_s=600, timeout_s=0.5)
    client.get(MODEL)
    httpserver.stop()
    clock.t += 60
    client.get(MODEL)
    assert client.refresh_join(5)
    during = client.get(MODEL)
    assert during.ignore == ("borealis/fp8", "dynamo")
    assert during.error and not during.stale
    clock.t += 600
    with caplog.at_level(logging.ERROR, logger="ignore_client.client"):
        late = client.get(MODEL)
        assert client.refresh_join(5)
    assert late.ignore == ("borealis/fp8", "dynamo") and late.stale
    assert any("past the" in r.getMessage() for r in caplog.records)


def test_never_fetched_and_unreachable_returns_an_empty_stale_list():
    from fake_openrouter.process import free_port

    client = IgnoreListClient(f"http://127.0.0.1:{free_port()}", "tok", timeout_s=0.5)
    result = client.get(MODEL)
    assert result.ignore == () and result.stale and result.error


def test_a_malformed_answer_is_an_error_not_a_crash(httpserver: HTTPServer):
    httpserver.expect_request("/api/v1/routing/ignore").respond_with_json({"ignore": "dynamo"})
    client = IgnoreListClient(httpserver.url_for("/"), "tok")
    result = client.get(MODEL)
    assert result.ignore == () and result.error and "not a list" in result.error


def test_a_non_ascii_etag_does_not_stop_revalidation(httpserver: HTTPServer):
    # An ETag of bytes outside ASCII (RFC 9110 allows obs-text in one; httpx cannot send
    # it back): the client used to raise in its refresh thread, leave the refresh "in
    # flight" and never fetch again. Now such a tag is not sent back, and every later
    # revalidation is a plain GET.
    seen: list[dict] = []

    def handler(request: Request) -> Response:
        import json

        seen.append(dict(request.headers))
        response = Response(json.dumps({**BODY, "ignore": [f"host-{len(seen)}"]}), content_type="application/json",
                            headers={"Cache-Control": "private, max-age=30"})
        response.headers["ETag"] = '"v\u00e9"'  # sent as the latin-1 byte 0xE9
        return response

    httpserver.expect_request("/api/v1/routing/ignore").respond_with_handler(handler)
    clock = Clock()
    client = IgnoreListClient(httpserver.url_for("/"), "tok", clock=clock)
    assert client.get(MODEL).ignore == ("host-1",)
    for fetch in (2, 3):
        clock.t += 31
        client.get(MODEL)
        assert client.refresh_join(5)
        assert len(seen) == fetch and "If-None-Match" not in seen[-1]
        assert client.get(MODEL).ignore == (f"host-{fetch}",)


def test_a_wrong_token_is_a_configuration_error_naming_the_token_problem_not_an_outage(httpserver: HTTPServer, caplog):
    # Found by a new user's trial: a wrong token was logged "ops app unreachable", as an outage.
    _serve(httpserver, [])
    client = IgnoreListClient(httpserver.url_for("/"), "wrong-token")
    with caplog.at_level(logging.WARNING, logger="ignore_client.client"):
        result = client.get(MODEL)
    assert result.ignore == () and result.stale and result.token_rejected
    assert "configuration error" in result.error and "HTTP 401" in result.error and "service token" in result.error
    [record] = [r for r in caplog.records if r.name == "ignore_client.client"]
    said = record.getMessage()
    assert record.levelno == logging.ERROR and "configuration error" in said and "unreachable" not in said
    assert "not one it knows" in said and "wrong-token" not in said  # the problem, never the token
    with pytest.raises(TokenRejected) as caught:
        client.check(MODEL)
    assert caught.value.status == 401


def test_a_token_revoked_after_a_good_fetch_serves_the_last_list_and_says_why(httpserver: HTTPServer, caplog):
    revoked = {"now": False}
    seen: list[dict] = []

    def handler(request: Request) -> Response:
        import json

        seen.append(dict(request.headers))
        if revoked["now"]:
            return Response('{"error":{"code":403,"message":"no"}}', status=403)
        return Response(json.dumps(BODY), headers={"Cache-Control": "private, max-age=30"}, content_type="application/json")

    httpserver.expect_request("/api/v1/routing/ignore").respond_with_handler(handler)
    clock = Clock()
    client = IgnoreListClient(httpserver.url_for("/"), "tok", clock=clock)
    assert client.check(MODEL).ignore == ("borealis/fp8", "dynamo") and len(client) == 0  # check leaves the cache
    assert not client.get(MODEL).token_rejected
    revoked["now"] = True
    clock.t += 31
    with caplog.at_level(logging.WARNING, logger="ignore_client.client"):
        client.get(MODEL)
        assert client.refresh_join(5)
    served = client.get(MODEL)
    assert served.ignore == ("borealis/fp8", "dynamo") and served.token_rejected and not served.stale
    [record] = [r for r in caplog.records if r.name == "ignore_client.client"]
    assert record.levelno == logging.ERROR and "HTTP 403" in record.getMessage()
    assert "serving the last good list (31 s old)" in record.getMessage()
    with pytest.raises(TokenRejected) as caught:
        client.check(MODEL)
    assert caught.value.status == 403


def test_check_raises_an_outage_as_an_http_error_not_a_token_problem():
    from fake_openrouter.process import free_port

    client = IgnoreListClient(f"http://127.0.0.1:{free_port()}", "tok", timeout_s=0.5)
    with pytest.raises(httpx.HTTPError):
        client.check(MODEL)
    result = client.get(MODEL)
    assert result.error and not result.token_rejected and "configuration error" not in result.error
