"""Every case of tests/fixtures/field-cases/gateway.md, with its numbers, against the
simulator over real HTTP (and the real Redis where a breaker is involved)."""

from __future__ import annotations

import time

import pytest

from routing.breaker import BreakerConfig
from routing.contracts import contract_from_dict
from routing.failures import FailureClass
from routing.request_check import RequestInvalid
from routing.responses import reply_for
from tests.routing.conftest import (
    ListSink,
    WallClock,
    endpoint,
    fleet,
    route,
    sim_reset_stats,
    sim_stats,
    user,
)


def text_contract(**kw):
    spec = {"name": "chat", "version": 1, "workload": "text", "deadline_s": 8,
            "connect_s": 0.2, "generation_s": 1.0, "validation_s": 0.1,
            "max_attempts": 2, "max_fallbacks": 1, "finish_reasons": ["stop", "length"]}
    spec.update(kw)
    return contract_from_dict(spec)


def test_case1_first_token_timer_fires_before_the_first_chunk(start_sim, gateway_for):
    """LiteLLM #19909: A waits 10 s for its first token (keep-alives meanwhile); limit 2 s."""
    sim = start_sim(fleet(endpoint("alpha", {"ttft_ms": 10000}), endpoint("beta")))
    gw = gateway_for(sim, [route("alpha", price_prompt_usd=1e-8), route("beta")])
    started = time.monotonic()
    result = gw.complete(text_contract(first_token_s=2, deadline_s=8), user())
    total = time.monotonic() - started
    assert result.ok and result.route.name == "beta"
    first = result.attempts[0]
    assert first.route == "alpha" and first.failure_class == FailureClass.TRANSIENT
    assert first.failure_reason == "first_token_timeout"
    assert abs(first.latency_ms / 1000 - 2.0) <= 0.3
    assert total < 3.0


def test_case2_a_longer_quarantine_is_never_shortened(start_sim, gateway_for, breakers):
    """LiteLLM #40130: 429 with Retry-After 1 s, then a 429 without it trips the breaker
    for 60 s; A stays suppressed 60 s and the recorded expiry is the later one."""
    sim = start_sim(fleet(endpoint("alpha", {"http_error": {"rate": 1, "status": 429, "retry_after_s": 1}}), endpoint("beta")))
    wall = WallClock()
    store = breakers(BreakerConfig(consecutive=2, open_s=60))
    gw = gateway_for(sim, [route("alpha", price_prompt_usd=1e-8), route("beta")], breakers=store, wall=wall)
    contract = text_contract()

    # Expiries are checked against the clock read just before and after each call, so a
    # slow (loaded) machine cannot make the test fail.
    before = wall()
    first = gw.complete(contract, user())
    after = wall()
    assert first.ok and [a.route for a in first.attempts] == ["alpha", "beta"]
    retry_after_expiry = store.suppressed_until_ms("alpha")
    assert (before + 1) * 1000 - 1 <= retry_after_expiry <= (after + 1) * 1000 + 1

    sim.write_fleet(fleet(endpoint("alpha", {"http_error": {"rate": 1, "status": 429}}), endpoint("beta")))
    wall.offset += 1.5  # the Retry-After has passed
    before = wall()
    second = gw.complete(contract, user())
    after = wall()
    assert [a.route for a in second.attempts] == ["alpha", "beta"]
    assert second.attempts[0].breaker_opened == "transient"
    expiry = store.suppressed_until_ms("alpha")
    assert expiry >= retry_after_expiry
    assert before * 1000 + 60_000 - 1 <= expiry <= after * 1000 + 60_000 + 1

    # A later, shorter Retry-After (an in-flight attempt from another process) does not
    # shorten the 60 s quarantine.
    store.record("alpha", int(wall() * 1000), "transient", retry_after_s=1)
    assert store.suppressed_until_ms("alpha") == expiry

    sim_reset_stats(sim)
    wall.offset += 58  # 58 s into the 60 s: still suppressed
    third = gw.complete(contract, user())
    assert [a.route for a in third.attempts] == ["beta"]
    assert sim_stats(sim).get("alpha/fp8", 0) == 0

    wall.offset += 2.5  # past 60 s: a half-open trial reaches A again
    fourth = gw.complete(contract, user())
    assert fourth.attempts[0].route == "alpha" and fourth.attempts[0].breaker_state == "half_open"


def test_case3_one_attempt_budget_for_the_whole_chain(start_sim, gateway_for):
    """LiteLLM #19985: A, B, C always 429; max 3 attempts -> exactly 3 upstream requests."""
    always_429 = {"http_error": {"rate": 1, "status": 429}}
    sim = start_sim(fleet(endpoint("alpha", always_429), endpoint("beta", always_429), endpoint("gamma", always_429)))
    gw = gateway_for(sim, [route("alpha"), route("beta"), route("gamma")])
    sim_reset_stats(sim)
    result = gw.complete(text_contract(max_attempts=3, max_fallbacks=2), user())
    assert sum(sim_stats(sim).values()) == 3
    assert not result.ok and result.failure_class == FailureClass.TRANSIENT
    reply = reply_for(result)
    listed = reply.body["error"]["attempts"]
    assert [a["route"] for a in listed] == ["alpha", "beta", "gamma"]
    assert all(a["failure_class"] == "transient" and a["http_status"] == 429 for a in listed)
    assert reply.body["error"]["failure_class"] == "transient"
    assert reply.headers["X-Routing-Attempts"] == "3"


@pytest.mark.parametrize(
    "body",
    [
        {"messages": []},
        {"messages": [{"role": "user", "content": "hi"}], "provider": {"sort": "price", "colour": "blue"}},
    ],
    ids=["empty-messages", "unknown-provider-field"],
)
def test_case4_malformed_requests_caught_by_us_send_nothing(start_sim, gateway_for, breakers, body):
    """LiteLLM #19216: our own validation catches it: zero upstream requests."""
    sim = start_sim(fleet(endpoint("alpha"), endpoint("beta")))
    store = breakers()
    gw = gateway_for(sim, [route("alpha"), route("beta")], breakers=store)
    sim_reset_stats(sim)
    with pytest.raises(RequestInvalid):
        gw.complete(text_contract(), body)
    assert sum(sim_stats(sim).values()) == 0
    assert store.snapshot("alpha") == {}


def test_case4_a_400_from_upstream_fails_fast_and_never_counts_against_the_route(start_sim, gateway_for, breakers):
    """A request only the upstream rejects (400): one upstream request, no retry, no
    fallback, and the route's breaker does not count it."""
    sim = start_sim(fleet(endpoint("alpha"), endpoint("beta")))
    store = breakers(BreakerConfig(consecutive=1))
    gw = gateway_for(sim, [route("alpha", price_prompt_usd=1e-8), route("beta")], breakers=store)
    sim_reset_stats(sim)
    result = gw.complete(text_contract(), user(response_format={"type": "yaml"}))
    # One request left the gateway; OpenRouter (the simulator) refused it before any
    # endpoint, so no endpoint counts it.
    assert sum(sim_stats(sim).values()) == 0
    assert len(result.attempts) == 1 and result.error_code == "permanent_failure"
    assert result.attempts[0].failure_reason == "malformed_request"
    assert reply_for(result).status == 400
    assert store.snapshot("alpha") == {}


def test_case5_capability_filter_before_fallback(start_sim, gateway_for):
    """LiteLLM #31557: a ~10,000-token request; A (131072) 429s; B (8192) is never
    tried; C (32768) serves."""
    sim = start_sim(fleet(
        endpoint("alpha", {"http_error": {"rate": 1, "status": 429}}),
        endpoint("beta", context_length=8192),
        endpoint("gamma", context_length=32768),
    ))
    gw = gateway_for(sim, [
        route("alpha", latency_ms=100),
        route("beta", context_length=8192, latency_ms=150),
        route("gamma", context_length=32768, latency_ms=200),
    ])
    sim_reset_stats(sim)
    long_text = "The caravan crossed the salt flats at dawn. " * 909  # ~40,000 chars ~ 10,000 tokens
    result = gw.complete(text_contract(), user(long_text))
    assert result.ok and result.route.name == "gamma"
    assert [a.route for a in result.attempts] == ["alpha", "gamma"]
    assert sim_stats(sim).get("beta/fp8", 0) == 0
    assert "context 8192" in result.rejected_routes["beta"]


def test_case6_an_error_inside_a_200_stream_before_content_still_fails_over(start_sim, gateway_for):
    """LiteLLM #6957: A sends an error chunk (HTTP 200) before any content delta."""
    # With the fleet's seed 7 and this prompt (first time seen), the simulator places the
    # error chunk right after the role chunk, before any content delta: its
    # ``midstream_error`` draws the position and has no knob for it, so the prompt was
    # found by trying.
    sim = start_sim(fleet(endpoint("alpha", {"midstream_error": {"rate": 1}}), endpoint("beta")))
    gw = gateway_for(sim, [route("alpha", price_prompt_usd=1e-8), route("beta")])
    result = gw.complete(text_contract(), user(PROMPT_ERROR_FIRST))
    assert result.ok and result.route.name == "beta"
    first = result.attempts[0]
    assert first.failure_class == FailureClass.TRANSIENT
    reply = reply_for(result)
    assert reply.body["provider"] == "Beta"
    assert "Network connection lost" not in str(reply.body)


PROMPT_ERROR_FIRST = "Say hello to traveller number 6."


def test_case7_a_stream_that_stops_without_a_finish_is_not_a_success(start_sim, gateway_for):
    """Portkey #1797: A resets after ~2/3 of its tokens: ambiguous; a side-effect-free
    text workload falls back to B."""
    sim = start_sim(fleet(endpoint("alpha", {"reset": {"rate": 1}}), endpoint("beta")))
    gw = gateway_for(sim, [route("alpha", price_prompt_usd=1e-8), route("beta")])
    result = gw.complete(text_contract(), user())
    assert result.ok and result.route.name == "beta"
    first = result.attempts[0]
    assert first.failure_class == FailureClass.AMBIGUOUS and first.status == "failed"
    assert first.cost_usd > 0  # output was produced: billed, counted


def test_case7_with_side_effects_the_outcome_is_unknown_and_not_replayed(start_sim, gateway_for):
    sim = start_sim(fleet(endpoint("alpha", {"reset": {"rate": 1}}), endpoint("beta")))
    sink = ListSink()
    gw = gateway_for(sim, [route("alpha", price_prompt_usd=1e-8), route("beta")], sink=sink)
    sim_reset_stats(sim)
    result = gw.complete(text_contract(side_effects=True), user())
    assert result.outcome == "unknown" and result.error_code == "outcome_unknown"
    assert result.failure_class == FailureClass.AMBIGUOUS
    assert sim_stats(sim) == {"alpha/fp8": 1}
    assert sink.results[0].outcome == "unknown"


def test_case8_a_silent_upstream_is_bounded_by_the_deadline(start_sim, gateway_for):
    """Bifrost #7034: A accepts and never answers; deadline 5 s: B is tried in time and
    the request ends by 5 s."""
    sim = start_sim(fleet(endpoint("alpha", {"timeout": {"rate": 1}}), endpoint("beta")))
    gw = gateway_for(sim, [route("alpha", price_prompt_usd=1e-8), route("beta")])
    started = time.monotonic()
    result = gw.complete(text_contract(deadline_s=5, attempt_timeout_s=2), user())
    total = time.monotonic() - started
    assert result.ok and result.route.name == "beta"
    assert result.attempts[0].failure_class == FailureClass.TRANSIENT
    assert total < 5.0


def test_case9_retries_are_bounded_by_one_deadline(start_sim, gateway_for):
    """openai-python #3828: every route silent; per-attempt 3 s; 3 attempts; deadline
    5 s -> deadline_exhausted at 5 s (+-0.3), not 9 s."""
    silent = {"timeout": {"rate": 1}}
    sim = start_sim(fleet(endpoint("alpha", silent), endpoint("beta", silent), endpoint("gamma", silent)))
    gw = gateway_for(sim, [route("alpha"), route("beta"), route("gamma")])
    contract = text_contract(deadline_s=5, attempt_timeout_s=3, max_attempts=3, max_fallbacks=2)
    started = time.monotonic()
    result = gw.complete(contract, user())
    total = time.monotonic() - started
    assert result.error_code == "deadline_exhausted"
    assert abs(total - 5.0) <= 0.3
    # The second attempt was cut to fit; no third attempt with less than the allowance.
    assert len(result.attempts) == 2
    second_started = result.attempts[1].started_at - result.started_at
    assert 5.0 - second_started >= contract.allowances.required_s
