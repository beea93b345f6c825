"""On a contract with side effects, an upstream reply that is a JSON bomb, or an attempt
whose reader crashes, is an ``invalid_response`` with fallback, and the request's
``Idempotency-Key`` is settled: asked again, it replays the answer (never a 409 left
behind). Real HTTP to a hostile upstream, real PostgreSQL."""

from __future__ import annotations

import pytest

from routing.gateway.door import Gateway
from routing.gateway.upstream import Upstream
from routing.models import ExecutionLedger
from routing.services.chat import chat_completion_create
from routing.services.contracts import contract_version_create
from tests.chaos.hostile import Hostile
from tests.routing.conftest import route, user

pytestmark = pytest.mark.django_db

BOOKING = {"name": "booking", "version": 1, "workload": "text", "deadline_s": 10, "max_attempts": 2, "max_fallbacks": 1,
           "finish_reasons": ["stop"], "connect_s": 0.2, "generation_s": 1.0, "validation_s": 0.1, "side_effects": True}


@pytest.fixture
def hostile():
    server = Hostile()
    yield server
    server.close()


def _gateway(server: Hostile, first: str, upstream: Upstream | None = None) -> Gateway:
    routes = [route(first, provider_tag=f"{first}/x", price_prompt_usd=1e-9, price_completion_usd=1e-9),
              route("good", provider_tag="good/x")]
    return Gateway(routes=lambda: routes, upstream=upstream or Upstream(default_base_url=server.base_url, api_key="sk-test"))


def _settled_and_replayed(gw: Gateway, key: str) -> None:
    reply = chat_completion_create("booking", 1, user(), operation_id=key, gateway=gw)
    assert reply.status == 200, reply.body
    assert reply.headers["X-Routing-Route"] == "good" and reply.headers["X-Routing-Attempts"] == "2"
    assert ExecutionLedger.objects.get(key=f"request:booking:{key}").status == "done"
    again = chat_completion_create("booking", 1, user(), operation_id=key, gateway=gw)
    assert (again.status, again.replayed) == (200, True) and again.body == reply.body


def test_a_json_bomb_on_a_side_effect_contract_falls_back_and_the_key_replays(hostile):
    contract_version_create(dict(BOOKING))
    gw = _gateway(hostile, "bomb")
    _settled_and_replayed(gw, "bomb-1")
    assert hostile.served["bomb"] == 1
    gw.upstream.close()


def test_an_attempt_that_crashes_its_reader_falls_back_and_the_key_replays(hostile):
    contract_version_create(dict(BOOKING))

    class Crashing(Upstream):
        def attempt(self, route, body, times, **kw):  # type: ignore[no-untyped-def]
            if route.name == "crash":
                raise RecursionError("maximum recursion depth exceeded")
            return super().attempt(route, body, times, **kw)

    gw = _gateway(hostile, "crash", Crashing(default_base_url=hostile.base_url, api_key="sk-test"))
    _settled_and_replayed(gw, "crash-1")
    gw.upstream.close()
