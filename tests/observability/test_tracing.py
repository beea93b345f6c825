"""Traces with the SDK's in-memory exporter: a span per gateway request with a child per
attempt (GenAI and our attributes), a span per canary round with a child per endpoint."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from observability import tracing
from observability.canary import round_finished
from observability.gateway import ObservedSink
from routing.contracts import contract_from_dict
from tests.observability.conftest import NPC, canary_state_create
from tests.routing.conftest import ListSink, gateway_for, route, user  # noqa: F401 - fixture


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    tracing.configure(processor=SimpleSpanProcessor(exporter))
    yield exporter
    tracing.disable()


def test_tracing_is_off_without_an_otlp_endpoint(monkeypatch):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    tracing.configure_from_env()
    assert not tracing.enabled()


def test_a_request_span_has_a_child_per_attempt_with_genai_attributes(spans, gateway_world, gateway_for):  # noqa: F811
    gw = gateway_for(gateway_world, [route("alpha", latency_ms=1), route("beta", latency_ms=2)],
                     sink=ObservedSink(ListSink(), routes=lambda: [route("alpha"), route("beta")]))
    result = gw.complete(contract_from_dict({**NPC, "version": 1}), user("Describe the innkeeper as JSON."))
    assert result.ok
    finished = spans.get_finished_spans()
    parent = next(s for s in finished if s.name == "chat npc@1")
    children = sorted((s for s in finished if s.parent is not None and s.parent.span_id == parent.context.span_id),
                      key=lambda s: s.attributes["reverie.attempt.index"])
    assert [c.attributes["reverie.route"] for c in children] == ["alpha", "beta"]
    alpha, beta = children
    assert alpha.attributes["reverie.attempt.status"] == "rejected"
    assert alpha.attributes["reverie.failure_class"] == "invalid_response"
    assert "required property" in alpha.attributes["reverie.validation"]
    assert beta.attributes["reverie.validation"] == "passed"
    assert beta.attributes["gen_ai.system"] == "openrouter"
    assert beta.attributes["gen_ai.request.model"] == "acme/chat-1"
    assert beta.attributes["gen_ai.usage.output_tokens"] == result.attempts[1].tokens_out > 0
    assert tuple(beta.attributes["gen_ai.response.finish_reasons"]) == ("stop",)
    assert parent.attributes["reverie.contract"] == "npc@1"
    assert parent.attributes["reverie.route"] == "beta"
    assert parent.attributes["gen_ai.usage.input_tokens"] == sum(a.tokens_in for a in result.attempts)
    assert parent.start_time <= alpha.start_time <= beta.start_time and beta.end_time <= parent.end_time + 1_000_000


@pytest.mark.django_db
def test_a_round_span_has_a_child_per_endpoint_with_its_failed_checks(spans):
    rnd = canary_state_create(suspended=1, endpoints=2)
    round_finished(rnd.pk)
    finished = spans.get_finished_spans()
    parent = next(s for s in finished if s.name.startswith("canary round"))
    children = {s.attributes["reverie.endpoint"]: s for s in finished if s.parent is not None}
    assert parent.attributes["reverie.round_id"] == rnd.pk
    assert set(children) == {"acme/v0", "acme/v1"}
    assert tuple(children["acme/v0"].attributes["reverie.failed_checks"]) == ("structured",)
    assert children["acme/v1"].attributes["reverie.verdicts.pass"] == 2
    assert tuple(parent.attributes["reverie.weak_probes"]) == ("refusal",)
