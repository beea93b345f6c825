"""The gateway's edges over real HTTP (gunicorn, httpx, the openai SDK): idempotency keys
are the calling service's own, the Idempotency-Key header is one visible-ASCII key, and
paths under /v1/ and /api/v1/ answer JSON, never Django's HTML pages."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import openai
import pytest

from tests.clients.conftest import Live
from tests.routing.conftest import MODEL

BODY = {"model": MODEL, "messages": [{"role": "user", "content": "Book a table for two."}], "max_tokens": 40}


def post(live: Live, token: str, headers: list[tuple[str, str | bytes]], body: dict | None = None) -> httpx.Response:
    return httpx.post(f"{live.url}/chat/completions", json=body or BODY, timeout=30,
                      headers=[("Authorization", f"Bearer {token}"), ("X-Routing-Contract", "chat@1"), *headers])


@pytest.fixture
def other_token(live: Live) -> Iterator[str]:
    """A second service's token, committed where the server sees it, deleted after."""
    from core.tokens import service_token_issue

    with live.db():
        row, token = service_token_issue(f"other-{uuid.uuid4().hex[:6]}")
    yield token
    with live.db():
        row.delete()


def test_two_services_sending_one_key_each_get_their_own_answer(live: Live, other_token: str) -> None:
    key = f"order-{uuid.uuid4().hex[:8]}"
    first = post(live, live.token, [("Idempotency-Key", key)])
    assert first.status_code == 200 and "Idempotent-Replayed" not in first.headers
    # The other service's same key and body: its own request, run, not the first one's answer.
    theirs = post(live, other_token, [("Idempotency-Key", key)])
    assert theirs.status_code == 200 and "Idempotent-Replayed" not in theirs.headers
    assert theirs.json()["id"] != first.json()["id"]
    assert theirs.headers["X-Routing-Operation-Id"] != first.headers["X-Routing-Operation-Id"]
    # Another body under that key is the other service's own business too, not a 422.
    other_body = post(live, other_token, [("Idempotency-Key", f"{key}-b")])
    assert other_body.status_code == 200
    assert post(live, other_token, [("Idempotency-Key", key)], {**BODY, "max_tokens": 41}).status_code == 422
    # Each service's replay is its own first answer, with the same ids.
    for token, original in ((live.token, first), (other_token, theirs)):
        again = post(live, token, [("Idempotency-Key", key)])
        assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
        assert again.json() == original.json()
        assert again.headers["X-Routing-Operation-Id"] == original.headers["X-Routing-Operation-Id"]
    # The raw key is no one's operation id: ids are derived per caller.
    assert key not in (first.headers["X-Routing-Operation-Id"], theirs.headers["X-Routing-Operation-Id"])


def test_the_sdk_replays_its_own_key_and_a_quoted_key_is_the_same_key(live: Live) -> None:
    client = openai.OpenAI(base_url=live.url, api_key=live.token, max_retries=0)
    key = f"sdk-{uuid.uuid4().hex[:8]}"
    first = client.chat.completions.with_raw_response.create(
        **BODY, extra_headers={"X-Routing-Contract": "chat@1", "Idempotency-Key": key})
    # The draft's form: the key as a Structured Field string.
    quoted = client.chat.completions.with_raw_response.create(
        **BODY, extra_headers={"X-Routing-Contract": "chat@1", "Idempotency-Key": f'"{key}"'})
    assert quoted.headers["Idempotent-Replayed"] == "true"
    assert quoted.parse().id == first.parse().id


@pytest.mark.parametrize(("headers", "says"), [
    ([("Idempotency-Key", "a1"), ("Idempotency-Key", "a2")], "sent twice"),
    ([("Idempotency-Key", '"a1"'), ("Idempotency-Key", '"a2"')], "sent twice"),
    ([("Idempotency-Key", "clé".encode())], "visible ASCII"),
    ([("Idempotency-Key", '"abc')], "does not close"),
    ([("Idempotency-Key", "k" * 101)], "1 to 100 printable characters"),
])
def test_a_key_that_is_not_one_visible_ascii_key_is_a_400_naming_the_header(
        live: Live, headers: list[tuple[str, str | bytes]], says: str) -> None:
    before = live.sim_requests()
    response = post(live, live.token, headers)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_idempotency_key" and error["header"] == "Idempotency-Key"
    assert error["message"].startswith("Idempotency-Key ") and says in error["message"]
    assert live.sim_requests() == before


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "path", "says"), [
    ("GET", "/v1/models", "no such path: /v1/models"),
    ("POST", "/v1/completions", "no such path: /v1/completions"),
    ("POST", "/v1/chat/completions/", "did you mean /v1/chat/completions"),
    ("GET", "/api/v1/nothing-here", "no such path: /api/v1/nothing-here"),
])
def test_an_unknown_api_path_is_a_json_404_naming_it(live: Live, method: str, path: str, says: str) -> None:
    root = live.url.removesuffix("/v1")
    response = httpx.request(method, root + path, json=BODY, headers={"Authorization": f"Bearer {live.token}"}, timeout=10)
    assert response.status_code == 404 and response.headers["Content-Type"] == "application/json"
    assert says in response.json()["error"]["message"]
    # Answered by ApiPathErrorsMiddleware: SecurityMiddleware's headers, its own length.
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert int(response.headers["Content-Length"]) == len(response.content)
    if path.startswith("/v1/"):
        assert response.json()["error"]["code"] == "not_found" and response.headers["X-Routing-Operation-Id"]
    else:
        assert response.json()["error"]["code"] == 404


def test_a_known_path_with_another_method_is_a_json_405(live: Live) -> None:
    root = live.url.removesuffix("/v1")
    gateway = httpx.get(f"{live.url}/chat/completions", timeout=10)
    api = httpx.post(f"{root}/api/v1/health", timeout=10)
    assert gateway.status_code == api.status_code == 405
    assert gateway.headers["Allow"] == "POST" and gateway.json()["error"]["code"] == "method_not_allowed"
    assert api.headers["Allow"] == "GET, HEAD" and api.json()["error"]["code"] == 405


def test_a_disallowed_host_is_a_json_400_on_api_paths_and_admin_pages_stay_html(live: Live) -> None:
    root = live.url.removesuffix("/v1")
    for path in ("/v1/chat/completions", "/api/v1/health"):
        response = httpx.post(root + path, json=BODY, headers={"Host": "evil.example"}, timeout=10)
        assert response.status_code == 400 and response.headers["Content-Type"] == "application/json"
        assert "Host" in response.json()["error"]["message"] and "evil.example" not in response.text
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        if path.startswith("/v1/"):
            assert response.json()["error"]["header"] == "Host" and response.headers["x-should-retry"] == "false"
    admin = httpx.get(f"{root}/admin/no-such-page/", timeout=10, follow_redirects=False)
    assert admin.status_code in (302, 404) and "application/json" not in admin.headers.get("Content-Type", "")
    page = httpx.get(f"{root}/no-such-page", timeout=10)
    assert page.status_code == 404 and page.headers["Content-Type"].startswith("text/html")


def test_the_gateway_passes_its_own_middleware_and_pages_the_whole_stack(live: Live) -> None:
    """/v1/ runs settings.GATEWAY_MIDDLEWARE (reverie_ops.handlers): the security headers
    and Content-Length, no session, CSRF or frame rule; the admin's pages run them all."""
    root = live.url.removesuffix("/v1")
    answer = post(live, live.token, [])
    assert answer.status_code == 200, answer.text
    assert answer.headers["X-Content-Type-Options"] == "nosniff"  # SecurityMiddleware
    assert int(answer.headers["Content-Length"]) == len(answer.content)  # CommonMiddleware
    assert "X-Frame-Options" not in answer.headers and "set-cookie" not in answer.headers
    assert "Cookie" not in answer.headers.get("Vary", "")
    refused = httpx.post(f"{live.url}/chat/completions", json=BODY, timeout=10)  # no token: the view's 401
    assert refused.status_code == 401 and "X-Frame-Options" not in refused.headers
    login = httpx.get(f"{root}/admin/login/", timeout=10)
    assert login.status_code == 200 and login.headers["X-Frame-Options"] == "DENY"
    assert "csrftoken" in login.headers.get("set-cookie", "")
    assert login.headers["X-Content-Type-Options"] == "nosniff"


def test_a_chunked_body_is_a_411_asking_for_its_length(live: Live) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"messages": [{"role": "user", "content": "Hi"}]}'

    response = httpx.post(f"{live.url}/chat/completions", content=chunks(), timeout=10,
                          headers={"Authorization": f"Bearer {live.token}", "X-Routing-Contract": "chat@1",
                                   "Content-Type": "application/json"})
    assert response.request.headers["Transfer-Encoding"] == "chunked"
    assert response.status_code == 411 and response.json()["error"]["header"] == "Content-Length"


@pytest.mark.django_db
def test_with_debug_on_as_in_the_demo_api_paths_still_answer_json(client, settings) -> None:  # type: ignore[no-untyped-def]
    # DEBUG swaps Django's error handlers for its debug pages; the middleware answers first.
    settings.DEBUG = True
    missing = client.get("/v1/models")
    assert missing.status_code == 404 and missing.json()["error"]["message"] == "no such path: /v1/models"
    slash = client.post("/v1/chat/completions/", data="{}", content_type="application/json")
    assert slash.status_code == 404 and "did you mean /v1/chat/completions" in slash.json()["error"]["message"]
    host = client.get("/api/v1/health", HTTP_HOST="evil.example")
    assert host.status_code == 400 and host.json()["error"]["code"] == 400
    page = client.get("/no-such-page")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")
