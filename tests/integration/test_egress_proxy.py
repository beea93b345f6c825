"""Issue "one OpenRouter wire ... that honours egress proxies", done when: a canary round
and a gateway request both work through an HTTP proxy named by the environment, tested
against a real forwarding proxy on loopback (``tests/openrouter/forward_proxy.py``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from io import StringIO

import pytest
from django.core.management import call_command

from canary.models import ProbeResult, Round
from tests.openrouter.forward_proxy import ForwardProxy
from tests.routing.conftest import MODEL, api_world, endpoint, fleet, sim_stats

pytestmark = pytest.mark.django_db


@pytest.fixture
def proxy(no_proxy_env: pytest.MonkeyPatch) -> Iterator[ForwardProxy]:
    """A forwarding proxy named by ``HTTP_PROXY`` (the simulator is plain HTTP), every
    other proxy variable cleared."""
    server = ForwardProxy()
    no_proxy_env.setenv("HTTP_PROXY", server.url)
    yield server
    server.close()


def test_a_canary_round_discovers_and_probes_through_the_proxy(proxy, start_sim, use_sim, default_fleet):
    model = default_fleet["models"][0]
    model["endpoints"] = [e for e in model["endpoints"] if e["tag"] in ("atlas/fp8", "harbor/fp4")]
    sim = use_sim(start_sim(default_fleet))
    out = StringIO()
    call_command("canary_round", "--json", "--language", "en", stdout=out)
    report = json.loads(out.getvalue())
    assert Round.objects.get(pk=report["round"]).status == "completed"
    verdicts = {p["verdict"] for ep in report["endpoints"] for p in ep["probes"]}
    assert verdicts <= {"pass", "not_applicable"}, report
    assert ProbeResult.objects.filter(round_id=report["round"]).exists()
    sent = [line for line in proxy.seen if line == f"POST {sim.base_url}/chat/completions"]
    assert f"GET {sim.base_url}/models/{model['id']}/endpoints" in proxy.seen
    # Every chat request the simulator answered came through the proxy.
    assert sent and len(sent) == sum(sim_stats(sim).values())


@pytest.fixture
def gateway_env(settings, start_sim, use_sim):
    contract = {"name": "chat", "workload": "text", "deadline_s": 8, "max_attempts": 2, "max_fallbacks": 1,
                "finish_reasons": ["stop", "length"]}
    yield from api_world(settings, start_sim, use_sim, prices={"alpha": "0.0000001"}, contract=contract)


def test_a_gateway_request_reaches_its_route_through_the_proxy(proxy, client, gateway_env):
    sim = gateway_env.sim(fleet(endpoint("alpha")))
    body = {"model": MODEL, "messages": [{"role": "user", "content": "Say hello to the traveller."}], "max_tokens": 60}
    response = client.post("/v1/chat/completions", data=json.dumps(body), content_type="application/json",
                           **gateway_env.auth)
    assert response.status_code == 200, response.content
    assert response["X-Routing-Route"] == "alpha"
    assert response.json()["choices"][0]["message"]["content"]
    # The test harness's own calls to the simulator (its /_sim/ controls) go through too.
    assert [line for line in proxy.seen if "/_sim/" not in line] == [f"POST {sim.base_url}/chat/completions"]
