"""Gateway metrics from the results the event sink receives, after known traffic over
real HTTP to the simulator; and the bounded validation check names."""

from __future__ import annotations

import pytest
from prometheus_client import REGISTRY

from observability.gateway import ObservedSink, record, validation_check
from routing.contracts import contract_from_dict
from routing.gateway.result import GatewayResult
from tests.observability.conftest import NPC
from tests.routing.conftest import ListSink, gateway_for, route, user  # noqa: F401 - fixture


def value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_three_requests_one_fallback_one_rejection_give_exactly_those_counts(gateway_world, gateway_for):  # noqa: F811
    sink = ListSink()
    gw = gateway_for(gateway_world, [route("alpha", latency_ms=1), route("beta", latency_ms=2)],
                     sink=ObservedSink(sink))
    chat = contract_from_dict({"name": "chat-m", "version": 1, "workload": "text", "finish_reasons": ["stop", "length"]})
    npc = contract_from_dict({**NPC, "name": "npc-m", "version": 1})
    before = {
        "alpha": value("reverie_gateway_requests_total", contract="chat-m@1", outcome="accepted", final_route="alpha"),
        "beta": value("reverie_gateway_requests_total", contract="npc-m@1", outcome="accepted", final_route="beta"),
        "fallback": value("reverie_gateway_fallbacks_total", contract="npc-m@1", reason="invalid_response"),
        "rejected": value("reverie_gateway_validation_rejections_total", route="alpha", check="schema"),
        "attempts_beta": value("reverie_gateway_attempts_total", route="beta", status="accepted", failure_class=""),
        "duration": value("gen_ai_client_operation_duration_seconds_count", gen_ai_operation_name="chat",
                          final_route="beta", outcome="accepted"),
    }
    for contract in (chat, chat, npc):
        assert gw.complete(contract, user("Describe the innkeeper as JSON.")).ok
    assert len(sink.results) == 3  # the wrapped sink still gets every result
    assert value("reverie_gateway_requests_total", contract="chat-m@1", outcome="accepted", final_route="alpha") - before["alpha"] == 2
    assert value("reverie_gateway_requests_total", contract="npc-m@1", outcome="accepted", final_route="beta") - before["beta"] == 1
    assert value("reverie_gateway_fallbacks_total", contract="npc-m@1", reason="invalid_response") - before["fallback"] == 1
    assert value("reverie_gateway_validation_rejections_total", route="alpha", check="schema") - before["rejected"] == 1
    assert value("reverie_gateway_attempts_total", route="beta", status="accepted", failure_class="") - before["attempts_beta"] == 1
    assert value("gen_ai_client_operation_duration_seconds_count", gen_ai_operation_name="chat", final_route="beta",
                 outcome="accepted") - before["duration"] == 1
    npc_result = sink.results[2]
    tokens_out = sum(a.tokens_out for a in npc_result.attempts if a.route == "beta")
    assert tokens_out > 0
    assert value("reverie_gateway_tokens_total", route="beta", gen_ai_token_type="output") >= tokens_out


def test_a_deadline_exhaustion_is_counted_once_per_request():
    before = value("reverie_gateway_deadline_exhaustions_total", contract="dl@1")
    record(GatewayResult(operation_id="x", contract="dl@1", outcome="failed", attempts=[], started_at=0.0,
                         latency_ms=5.0, error_code="deadline_exhausted"))
    assert value("reverie_gateway_deadline_exhaustions_total", contract="dl@1") - before == 1
    assert value("reverie_gateway_request_errors_total", contract="dl@1", error_code="deadline_exhausted") >= 1


@pytest.mark.parametrize(("problem", "check"), [
    ("output $: 'mood' is a required property", "schema"),
    ("structured output is not JSON (Expecting value at char 0)", "json"),
    ("truncated (finish_reason length) not accepted; contract accepts ['stop']", "finish_reason"),
    ("no finish reason: the answer may be incomplete", "finish_reason"),
    ("output is 3 characters, contract requires at least 10", "min_output"),
    ("tool_calls[0]: tool 'x' is not registered; allowed: []", "tool_call"),
    ("same_language: the answer is in de, not en", "same_language"),
    ("something unforeseen happened here", "other"),
])
def test_validation_problems_map_to_a_bounded_check_name(problem, check):
    assert validation_check(problem) == check
