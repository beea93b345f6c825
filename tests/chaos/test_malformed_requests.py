"""No request can open a route's circuit breaker by itself: malformed bodies are refused
at the edge with a 400 naming the field, and a truncation under the caller's own
``max_tokens`` counts against no route. Django test client -> gateway -> simulator over
HTTP, breakers in the real Redis (one counted failure opens a breaker)."""

from __future__ import annotations

import json
import uuid

import pytest
import redis

from core.tokens import service_token_issue
from routing.models import Route
from routing.services.contracts import contract_version_create
from routing.services.wiring import breaker_store, gateway_reset
from tests.routing.conftest import MODEL, endpoint, fleet, sim_stats

STRICT = {"name": "strict", "version": 1, "workload": "text", "deadline_s": 8, "max_attempts": 3, "max_fallbacks": 2,
          "finish_reasons": ["stop"], "connect_s": 0.2, "generation_s": 1.0, "validation_s": 0.1}
ROUTES = ("alpha", "beta", "gamma")


def _raw(text: str) -> bytes:
    return text.encode()


def _msg(content: object) -> dict:
    return {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"},
                         {"role": "user", "content": content}], "max_tokens": 40}


# (raw body, the field the 400 must name): what a careless or hostile caller sends.
MALFORMED: list[tuple[bytes, str]] = [
    (_raw('{"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"},'
          ' {"role": "user", "content": "bad \\ud800 text"}]}'), "messages[2].content"),
    (_raw('{"messages": [{"role": "user", "content": "hi"}], "temperature": NaN}'), "temperature"),
    (_raw('{"messages": [{"role": "user", "content": "hi"}], "top_p": Infinity}'), "top_p"),
    (json.dumps(_msg([{"type": "hologram", "hologram": "x"}])).encode(), "messages[2].content[0].type"),
    (json.dumps({**_msg("hi"), "temperature": "hot"}).encode(), "temperature"),
    (json.dumps({**_msg("hi"), "stop": 7}).encode(), "stop"),
]


@pytest.fixture
def env(settings, start_sim, use_sim):
    prefix = f"test:breaker:{uuid.uuid4().hex}"
    settings.ROUTING_EVENTS_ASYNC = False
    settings.ROUTING_BREAKER_PREFIX = prefix
    settings.ROUTING_BREAKER = {"consecutive": 1, "open_s": 30}
    gateway_reset()
    for name in ROUTES:
        Route.objects.create(name=name, model_id=MODEL, provider_tag=f"{name}/fp8", modalities=["text"],
                             context_length=131072, price_prompt_usd="0.0000001", price_completion_usd="0.0000002")
    contract_version_create(dict(STRICT))
    _, token = service_token_issue(f"fuzzer-{uuid.uuid4().hex[:6]}")
    fast = {"ttft_ms": 0, "tokens_per_s": 100000}
    sim = use_sim(start_sim(fleet(*(endpoint(n, fast) for n in ROUTES))))
    yield {"HTTP_AUTHORIZATION": f"Bearer {token}", "HTTP_X_ROUTING_CONTRACT": "strict@1"}, sim
    gateway_reset()
    client = redis.Redis.from_url(settings.REDIS_URL)
    keys = list(client.scan_iter(f"{prefix}:*"))
    if keys:
        client.delete(*keys)


@pytest.mark.django_db
def test_sixty_malformed_requests_then_twenty_good_ones_all_succeed_with_every_breaker_closed(client, env):
    auth, sim = env
    refused = 0
    for i in range(50):
        raw, field = MALFORMED[i % len(MALFORMED)]
        response = client.post("/v1/chat/completions", data=raw, content_type="application/json", **auth)
        assert response.status_code == 400, (raw, response.content)
        error = response.json()["error"]
        assert error["field"] == field and error["message"].startswith(f"{field}: ")
        refused += 1
    assert sum(sim_stats(sim).values()) == 0  # no route ever saw them
    # Ten requests a route cannot finish: the caller's own max_tokens cuts every answer.
    for _ in range(10):
        body = {"messages": [{"role": "user", "content": "Tell me a long story."}], "max_tokens": 3}
        response = client.post("/v1/chat/completions", data=json.dumps(body), content_type="application/json", **auth)
        error = response.json()["error"]
        assert response.status_code == 422 and error["failure_class"] == "invalid_response"
        # The caller reads what to change: its own max_tokens cut the answer.
        assert (error["code"], error["field"]) == ("request_unservable", "max_tokens")
        assert "(truncated_by_max_tokens)" in error["message"]
    store = breaker_store()
    assert all(store.suppressed_until_ms(name) == 0 for name in ROUTES)
    good = {"messages": [{"role": "user", "content": "Say hello to the traveller."}], "max_tokens": 60}
    statuses = [client.post("/v1/chat/completions", data=json.dumps(good), content_type="application/json", **auth).status_code
                for _ in range(20)]
    assert statuses == [200] * 20 and refused == 50
    assert all(store.suppressed_until_ms(name) == 0 for name in ROUTES)
