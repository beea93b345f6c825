"""A service token's last use is written after the response of the request that checked
it, never on that request's path (``core.tokens.last_use_flush``, ``core.last_use``),
and is still what the listing and the admin show once the request is over."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from core.models import ServiceToken
from core.tokens import _forget_verified, last_use_flush, service_token_caller, service_token_issue
from tests.routing.conftest import MODEL, api_world, endpoint, fleet

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_remembered_checks():
    """Every test's tokens are checked against the database."""
    _forget_verified()
    yield
    _forget_verified()


def _last_used(name: str):  # type: ignore[no-untyped-def]
    return ServiceToken.objects.get(name=name).last_used_at


def test_a_check_writes_nothing_and_the_next_request_end_writes_its_time(client):
    _, token = service_token_issue("backend")
    before = timezone.now()
    assert service_token_caller(f"Bearer {token}") == "backend"
    checked = timezone.now()
    assert _last_used("backend") is None  # the check's request has not ended
    assert client.get("/favicon.ico").status_code == 301  # any request's end writes it
    assert before <= _last_used("backend") <= checked


def test_a_request_with_a_token_shows_its_use_once_it_is_answered(client):
    service_token_issue("other")  # a check of one token leaves the others alone
    _, token = service_token_issue("backend")
    before = timezone.now()
    response = client.get("/api/v1/routing/ignore", {"model": "acme/chat-1"}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200, response.content
    assert _last_used("backend") >= before
    assert _last_used("other") is None


def test_a_later_write_never_moves_the_last_use_back():
    _, token = service_token_issue("backend")
    later = timezone.now() + timedelta(minutes=1)
    ServiceToken.objects.filter(name="backend").update(last_used_at=later)  # another process's newer write
    service_token_caller(f"Bearer {token}")
    assert last_use_flush() == 0
    assert _last_used("backend") == later


@pytest.fixture
def gateway_env(settings, start_sim, use_sim):
    contract = {"name": "chat", "workload": "text", "deadline_s": 8, "max_attempts": 1, "max_fallbacks": 0,
                "finish_reasons": ["stop", "length"]}
    yield from api_world(settings, start_sim, use_sim, prices={"alpha": "0.0000001"}, contract=contract)


def test_a_streamed_gateway_reply_writes_its_tokens_use_after_its_last_byte(client, gateway_env):
    gateway_env.sim(fleet(endpoint("alpha")))
    name = ServiceToken.objects.get().name
    body = {"model": MODEL, "messages": [{"role": "user", "content": "Say hello to the traveller."}], "max_tokens": 60,
            "stream": True}
    response = client.post("/v1/chat/completions", data=json.dumps(body), content_type="application/json",
                           **gateway_env.auth)
    assert response.status_code == 200
    chunks = iter(response.streaming_content)
    assert next(chunks)  # the reply has started: its request has not ended
    assert _last_used(name) is None
    rest = b"".join(chunks)
    assert b"data: [DONE]" in rest
    assert _last_used(name) is not None
