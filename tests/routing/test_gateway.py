"""Gateway behaviours beyond the field cases: validate before accept, the early-connect
retry, hedging, the ignore list, the cost budget. Real HTTP to the simulator."""

from __future__ import annotations

import time

from fake_openrouter.process import free_port
from routing.contracts import contract_from_dict
from routing.failures import FailureClass
from tests.routing.conftest import (
    ListSink,
    endpoint,
    fleet,
    route,
    sim_reset_stats,
    sim_stats,
    user,
)

SCHEMA = {"type": "object", "required": ["name", "mood"], "properties": {"name": {"type": "string"}, "mood": {"type": "string"}}}


def structured(**kw):
    return contract_from_dict({"name": "npc", "version": 1, "workload": "structured", "output_mode": "json_schema",
                               "output_schema": SCHEMA, "max_attempts": 3, "max_fallbacks": 2, **kw})


def test_the_primarys_invalid_answer_is_rejected_and_a_fallback_serves(start_sim, gateway_for):
    sim = start_sim(fleet(endpoint("alpha", {"structured_output": "missing_field"}),
                          endpoint("beta", {"structured_output": "fenced"}),
                          endpoint("gamma", {"structured_output": "ok"})))
    gw = gateway_for(sim, [route("alpha", latency_ms=1), route("beta", latency_ms=2), route("gamma", latency_ms=3)])
    result = gw.complete(structured(), user("Describe the innkeeper as JSON."))
    assert result.ok and result.route.name == "gamma"
    assert [(a.route, a.status, a.failure_class) for a in result.attempts] == [
        ("alpha", "rejected", "invalid_response"), ("beta", "rejected", "invalid_response"), ("gamma", "accepted", "")]
    assert "required property" in result.attempts[0].validation
    assert "not JSON" in result.attempts[1].validation
    assert set(result.value) >= {"name", "mood"}


def test_an_early_connect_failure_earns_one_same_route_retry_after_a_jittered_wait(start_sim, gateway_for):
    sim = start_sim(fleet(endpoint("beta")))
    dead = route("dead", base_url=f"http://127.0.0.1:{free_port()}/api/v1", latency_ms=1)
    waits: list[float] = []
    gw = gateway_for(sim, [dead, route("beta", latency_ms=5)], sleep=waits.append)
    result = gw.complete(contract_from_dict({"name": "c", "version": 1, "workload": "text", "backoff_base_s": 0.2,
                                             "backoff_cap_s": 1.0, "finish_reasons": ["stop", "length"]}), user())
    assert result.ok and [a.route for a in result.attempts] == ["dead", "dead", "beta"]
    assert result.attempts[0].failure_reason == "connect"
    assert result.attempts[1].fallback_reason.startswith("same-route retry after connect")
    assert len(waits) == 1 and 0 <= waits[0] <= 0.2


def test_a_timeout_gets_no_same_route_retry(start_sim, gateway_for):
    sim = start_sim(fleet(endpoint("alpha", {"timeout": {"rate": 1}}), endpoint("beta")))
    gw = gateway_for(sim, [route("alpha", latency_ms=1), route("beta", latency_ms=5)])
    result = gw.complete(contract_from_dict({"name": "c", "version": 1, "workload": "text", "attempt_timeout_s": 1,
                                             "finish_reasons": ["stop", "length"]}), user())
    assert [a.route for a in result.attempts] == ["alpha", "beta"] and result.ok


def test_hedging_starts_a_second_route_after_the_delay_and_cancels_the_loser(start_sim, gateway_for):
    sim = start_sim(fleet(endpoint("alpha", {"ttft_ms": 3000}), endpoint("beta")))
    gw = gateway_for(sim, [route("alpha", latency_ms=1), route("beta", latency_ms=5)])
    contract = contract_from_dict({"name": "autocomplete", "version": 1, "workload": "text", "latency_critical": True,
                                   "hedge": True, "hedge_delay_s": 0.3, "max_attempts": 2, "max_fallbacks": 1,
                                   "finish_reasons": ["stop", "length"]})
    started = time.monotonic()
    result = gw.complete(contract, user())
    elapsed = time.monotonic() - started
    assert result.ok and result.route.name == "beta" and elapsed < 1.5
    by_route = {a.route: a for a in result.attempts}
    assert by_route["alpha"].status == "cancelled" and by_route["beta"].hedge
    assert by_route["alpha"].latency_ms < 1500  # cut, not left to run its 3 s
    assert by_route["alpha"].cost_usd > 0 and by_route["beta"].cost_usd > 0  # both costs counted
    assert result.cost_usd == by_route["alpha"].cost_usd + by_route["beta"].cost_usd


def test_a_fast_primary_is_never_hedged(start_sim, gateway_for):
    sim = start_sim(fleet(endpoint("alpha"), endpoint("beta")))
    gw = gateway_for(sim, [route("alpha", latency_ms=1), route("beta", latency_ms=5)])
    contract = contract_from_dict({"name": "autocomplete", "version": 1, "workload": "text", "latency_critical": True,
                                   "hedge": True, "hedge_delay_s": 2, "max_attempts": 2, "max_fallbacks": 1,
                                   "finish_reasons": ["stop", "length"]})
    sim_reset_stats(sim)
    result = gw.complete(contract, user())
    assert [a.route for a in result.attempts] == ["alpha"] and sim_stats(sim) == {"alpha/fp8": 1}


def test_routes_on_the_ignore_list_are_never_tried(start_sim, gateway_for):
    sim = start_sim(fleet(endpoint("alpha"), endpoint("beta")))
    gw = gateway_for(sim, [route("alpha", latency_ms=1), route("beta", latency_ms=5)], ignored=lambda model: frozenset({"alpha"}))
    result = gw.complete(contract_from_dict({"name": "c", "version": 1, "workload": "text", "finish_reasons": ["stop", "length"]}), user())
    assert result.route.name == "beta" and result.rejected_routes["alpha"] == "on the ignore list"


def test_no_capable_route_is_a_clear_failure_without_any_request(start_sim, gateway_for):
    sim = start_sim(fleet(endpoint("alpha")))
    sink = ListSink()
    gw = gateway_for(sim, [route("alpha", context_length=4096)], sink=sink)
    sim_reset_stats(sim)
    result = gw.complete(contract_from_dict({"name": "c", "version": 1, "workload": "text"}), user("word " * 8000))
    assert result.error_code == "no_eligible_route" and result.failure_class == FailureClass.INCOMPATIBLE
    assert sum(sim_stats(sim).values()) == 0 and sink.results == [result]


def test_silence_after_the_first_token_is_cut_by_the_idle_limit(start_sim, gateway_for):
    """Issue point 9: the idle limit is distinct from the deadline; output was produced,
    so the failure is ambiguous, and a side-effect-free workload falls back."""
    sim = start_sim(fleet(endpoint("alpha", {"tokens_per_s": 2}), endpoint("beta")))
    gw = gateway_for(sim, [route("alpha", latency_ms=1), route("beta", latency_ms=5)])
    result = gw.complete(contract_from_dict({"name": "c", "version": 1, "workload": "text", "idle_s": 0.3,
                                             "deadline_s": 10, "finish_reasons": ["stop", "length"]}), user())
    assert result.ok and result.route.name == "beta"
    first = result.attempts[0]
    assert first.failure_class == FailureClass.AMBIGUOUS and first.failure_reason == "timeout_after_output"
    assert first.latency_ms < 2000


def test_a_hedge_loser_that_never_answered_does_not_hold_the_winner(start_sim, gateway_for):
    sim = start_sim(fleet(endpoint("alpha", {"timeout": {"rate": 1}}), endpoint("beta")))
    gw = gateway_for(sim, [route("alpha", latency_ms=1), route("beta", latency_ms=5)])
    contract = contract_from_dict({"name": "autocomplete", "version": 1, "workload": "text", "latency_critical": True,
                                   "hedge": True, "hedge_delay_s": 0.2, "max_attempts": 2, "max_fallbacks": 1,
                                   "finish_reasons": ["stop", "length"]})
    started = time.monotonic()
    result = gw.complete(contract, user())
    assert result.ok and result.route.name == "beta" and time.monotonic() - started < 1.5
    assert result.attempts[0].status == "cancelled"
