"""Fixtures of the observability tests: a canary state with known numbers, a gateway
world (routes alpha and beta on the simulator, contracts chat@1 and npc@1)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from canary.models import Endpoint, EndpointPolicyState, ProbeResult, Provider, Round
from routing.models import Route
from routing.services.contracts import contract_version_create
from tests.routing.conftest import MODEL, endpoint, fleet

SCHEMA = {"type": "object", "required": ["name", "mood"],
          "properties": {"name": {"type": "string"}, "mood": {"type": "string"}}}
CHAT = {"name": "chat", "workload": "text", "deadline_s": 8, "max_attempts": 3, "max_fallbacks": 2,
        "finish_reasons": ["stop", "length"], "connect_s": 0.2, "generation_s": 1.0, "validation_s": 0.1}
NPC = {"name": "npc", "workload": "structured", "output_mode": "json_schema", "output_schema": SCHEMA,
       "deadline_s": 8, "max_attempts": 3, "max_fallbacks": 2, "connect_s": 0.2, "generation_s": 1.0,
       "validation_s": 0.1}
CANARY_MODEL = "acme/watched-1"


def routes_create() -> None:
    """Routes alpha (primary: fastest) and beta, pinned to the simulator's endpoints."""
    for i, name in enumerate(["alpha", "beta"]):
        Route.objects.create(name=name, model_id=MODEL, provider_tag=f"{name}/fp8", modalities=["text"],
                             context_length=131072, output_modes=["json_object", "json_schema"], tools=True,
                             price_prompt_usd="0.0000001", price_completion_usd="0.0000002", latency_ms=i + 1)


def contracts_create() -> None:
    contract_version_create(dict(CHAT))
    contract_version_create(dict(NPC))


def canary_state_create(*, suspended: int = 2, endpoints: int = 3) -> Round:
    """A model with ``endpoints`` endpoints, ``suspended`` of them suspended now (enforced),
    and one completed round where each endpoint passed ttft and the suspended ones failed
    structured. Returns the round."""
    now = timezone.now()
    provider = Provider.objects.create(slug="acme", name="Acme", first_seen=now, last_seen=now)
    rnd = Round.objects.create(model_id=CANARY_MODEL, language="en", started_at=now - timedelta(seconds=40),
                               finished_at=now - timedelta(seconds=10), status=Round.Status.COMPLETED,
                               cost_usd="0.0125", weak_probes={"refusal": "positive control acme/bf16 passed"})
    for i in range(endpoints):
        ep = Endpoint.objects.create(provider=provider, model_id=CANARY_MODEL, tag=f"acme/v{i}", provider_name="Acme",
                                     first_seen=now, last_seen=now)
        ProbeResult.objects.create(round=rnd, endpoint=ep, kind="ttft", verdict="pass", raw_verdict="pass",
                                   created_at=now - timedelta(seconds=30), total_ms=900)
        bad = i < suspended
        ProbeResult.objects.create(round=rnd, endpoint=ep, kind="structured", verdict="fail" if bad else "pass",
                                   raw_verdict="fail" if bad else "pass", check_name="schema" if bad else "",
                                   created_at=now - timedelta(seconds=20), total_ms=1500)
        if bad:
            EndpointPolicyState.objects.create(endpoint=ep, suspended_until=now + timedelta(hours=1), enforced=True,
                                               fail_streak=2)
    return rnd


@pytest.fixture
def gateway_world(start_sim):  # type: ignore[no-untyped-def]
    """The simulator: alpha answers text but breaks the structured schema, beta is fine."""
    return start_sim(fleet(endpoint("alpha", {"structured_output": "missing_field"}),
                           endpoint("beta", {"structured_output": "ok"})))
