"""An upstream reply holding a lone surrogate (``"\\ud800"``: JSON may spell it, UTF-8
cannot encode it) is an ``invalid_response`` of that route: the next route serves, the
breaker counts it, the events say what happened, and the idempotency key is settled,
never left claimed. Before, the client got an HTML 500 while the event said
``accepted`` and the key stayed claimed. Real HTTP to a hostile upstream, the real view,
real PostgreSQL and Redis."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from routing.contracts import contract_from_dict
from routing.gateway.door import Gateway
from routing.gateway.upstream import Upstream
from routing.models import AttemptEvent, ExecutionLedger, RequestEvent
from tests.chaos.hostile import Hostile
from tests.routing.conftest import api_world, route, user

pytestmark = pytest.mark.django_db

BOOKING = {"name": "booking-agent", "workload": "text", "deadline_s": 10, "max_attempts": 3, "max_fallbacks": 2,
           "finish_reasons": ["stop"], "connect_s": 0.5, "generation_s": 2.0, "validation_s": 0.1, "side_effects": True}
BODY = {"model": "acme/chat-1", "messages": [{"role": "user", "content": "Book the usual table."}], "max_tokens": 60}


@pytest.fixture(scope="module")
def hostile() -> Iterator[Hostile]:
    server = Hostile()
    yield server
    server.close()


def _env(settings, start_sim, use_sim, hostile, prices):  # type: ignore[no-untyped-def]
    world = api_world(settings, start_sim, use_sim, prices=prices, contract=dict(BOOKING))
    env = next(world)
    settings.OPENROUTER_BASE_URL = hostile.base_url
    settings.OPENROUTER_API_KEY = "sk-test"
    return env, world


def post(client, env, key: str):  # type: ignore[no-untyped-def]
    return client.post("/v1/chat/completions", data=json.dumps(BODY), content_type="application/json",
                       HTTP_IDEMPOTENCY_KEY=key, **env.auth)


def test_a_lone_surrogate_falls_back_opens_the_breaker_and_the_key_replays(client, settings, start_sim, use_sim, hostile):
    env, world = _env(settings, start_sim, use_sim, hostile, {"surrogate": "0.0000001", "good": "0.0000002"})
    served_before = hostile.served.get("surrogate", 0)
    response = post(client, env, "book-1")
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    assert (response["X-Routing-Route"], response["X-Routing-Attempts"]) == ("good", "2")
    event = RequestEvent.objects.get(operation_id=response["X-Routing-Operation-Id"])
    assert (event.outcome, event.final_route) == ("accepted", "good")
    attempts = list(AttemptEvent.objects.filter(request=event).order_by("index"))
    assert [(a.route, a.status, a.failure_class) for a in attempts] == [
        ("surrogate", "failed", "invalid_response"), ("good", "accepted", "")]
    assert "lone surrogate U+D800" in attempts[0].message
    assert ExecutionLedger.objects.get(key__endswith=":booking-agent:book-1").status == "done"
    again = post(client, env, "book-1")
    assert (again.status_code, again["Idempotent-Replayed"]) == (200, "true")
    assert again.json() == response.json()
    # The breaker (one failure opens it in this world) keeps the next request off the route.
    other = post(client, env, "book-2")
    assert other.status_code == 200 and other["X-Routing-Attempts"] == "1"
    assert hostile.served["surrogate"] == served_before + 1
    next(world, None)


def test_when_every_route_sends_one_the_client_gets_a_json_error_and_the_key_is_released(
    client, settings, start_sim, use_sim, hostile
):
    env, world = _env(settings, start_sim, use_sim, hostile, {"surrogate": "0.0000001"})
    response = post(client, env, "book-9")
    assert response.status_code >= 500 and response.status_code != 500, response.content
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["failure_class"] == "invalid_response"
    event = RequestEvent.objects.get(operation_id=response["X-Routing-Operation-Id"])
    assert (event.outcome, event.failure_class) == ("failed", "invalid_response")
    row = ExecutionLedger.objects.get(key__endswith=":booking-agent:book-9")
    assert row.status != "claimed"
    next(world, None)


@pytest.mark.parametrize("mode", ["surrogate", "surrogate_whole"])
def test_streamed_or_whole_the_attempt_is_an_invalid_response(hostile, mode):
    routes = [route(mode, provider_tag=f"{mode}/x", price_prompt_usd=1e-9, price_completion_usd=1e-9),
              route("good", provider_tag="good/x")]
    gw = Gateway(routes=lambda: routes, upstream=Upstream(default_base_url=hostile.base_url, api_key="sk-test"))
    try:
        result = gw.complete(contract_from_dict({**BOOKING, "version": 1, "side_effects": False}), user())
    finally:
        gw.upstream.close()
    first = result.attempts[0]
    assert (first.route, first.failure_class) == (mode, "invalid_response")
    assert result.ok and result.route is not None and result.route.name == "good"


def test_a_surrogate_pair_split_across_two_chunks_is_valid_text_and_accepted(hostile):
    routes = [route("surrogate_pair", provider_tag="surrogate_pair/x")]
    gw = Gateway(routes=lambda: routes, upstream=Upstream(default_base_url=hostile.base_url, api_key="sk-test"))
    try:
        result = gw.complete(contract_from_dict({**BOOKING, "version": 1, "side_effects": False}), user())
    finally:
        gw.upstream.close()
    assert result.ok and result.answer is not None and result.answer.content == "Hello \U0001f600 traveller."


def test_an_answer_holding_u0000_is_refused_as_invalid_and_leaves_no_key_claimed(
    client, settings, start_sim, use_sim, hostile
):
    # U+0000 in a reply is an invalid character (the gateway's whole-reply checks, as the
    # canary's encoding judge): the attempt is an invalid_response of its route, never an
    # answer PostgreSQL's jsonb could not keep, and the key is released, not left claimed.
    env, world = _env(settings, start_sim, use_sim, hostile, {"nul": "0.0000001"})
    response = post(client, env, "book-nul")
    assert response.status_code == 502, response.content
    attempt = response.json()["error"]["attempts"][0]
    assert (attempt["route"], attempt["failure_class"], attempt["checks"]["answer.invalid_chars"]) == (
        "nul", "invalid_response", "fail")
    assert ExecutionLedger.objects.get(key__endswith=":booking-agent:book-nul").status == "failed"
    again = post(client, env, "book-nul")
    # Served afresh (its one route now failed, or its breaker open after that failure),
    # never 409: nothing was left claimed.
    assert again.status_code in (502, 503) and again.json()["error"]["code"] != "idempotency_key_in_use"
    next(world, None)
