"""What the request causes is never the route's: per-request attribution, the caller's
tool schema, client faults neutral for breakers, an empty reply fails over at once.
Real HTTP to the simulator, breakers on the real Redis."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from routing.attribution import RequestParams, parameterised_by
from routing.breaker import BreakerConfig, FailureDetail
from routing.contracts import contract_from_dict
from routing.failures import Failure, FailureClass
from routing.request_check import RequestInvalid, check_request
from routing.tool_schema import first_difference
from tests.routing.conftest import (
    PARAMS,
    WallClock,
    endpoint,
    fleet,
    route,
    sim_reset_stats,
    sim_stats,
    user,
)

WORKLOADS = json.loads((Path(__file__).resolve().parents[2] / "routing/contract_files/workloads.json").read_text())
BOOKING = contract_from_dict(next(c for c in WORKLOADS if c["name"] == "booking-agent"))
ROLEPLAY = contract_from_dict({"name": "rp", "version": 1, "workload": "text", "finish_reasons": ["stop"],
                               "min_output_chars": 20, "max_attempts": 2, "max_fallbacks": 1})
# The caller's own, looser book_table: no maximum, no format.
LOOSE = {"type": "object", "required": ["restaurant_id", "party_size", "time"], "additionalProperties": False,
         "properties": {"restaurant_id": {"type": "string", "minLength": 1}, "party_size": {"type": "integer", "minimum": 1},
                        "time": {"type": "string"}}}


def ep(name, faults=None):
    return endpoint(name, faults, supported_parameters=[*PARAMS, "stop"])


def open_classes(store, name):
    fields = store.snapshot(name)
    return sorted(k[:-6] for k, v in fields.items() if k.endswith(":state") and v == "open")


def windows(store, name):
    return {k: v for k, v in store.snapshot(name).items() if k.endswith(":window") and "1" in v}


# ------------------------------------------------------------------ pure rules


def test_the_first_differing_path_of_a_tool_schema_annotations_aside():
    contract_schema = BOOKING.tools["book_table"]
    assert first_difference(contract_schema, json.loads(json.dumps(contract_schema))) is None
    described = {**contract_schema, "description": "Book a table", "properties": {
        **contract_schema["properties"], "time": {**contract_schema["properties"]["time"], "description": "when"}}}
    assert first_difference(contract_schema, described) is None
    assert first_difference(contract_schema, LOOSE) == "$.properties.party_size.maximum"
    no_format = {**contract_schema, "properties": {**contract_schema["properties"], "time": {"type": "string"}}}
    assert first_difference(contract_schema, no_format) == "$.properties.time.format"
    # A property called "description" is data, not an annotation.
    extra = {**contract_schema, "properties": {**contract_schema["properties"], "description": {"type": "string"}}}
    assert first_difference(contract_schema, extra) == "$.properties.description"


def test_a_looser_caller_schema_is_a_400_naming_the_tool_and_the_path():
    body = user("Book a table for two at eight.", tools=[{"type": "function", "function": {"name": "book_table", "parameters": LOOSE}}])
    with pytest.raises(RequestInvalid) as err:
        check_request(body, BOOKING)
    assert err.value.path == "tools[0].function.parameters"
    assert "'book_table'" in str(err.value) and "$.properties.party_size.maximum" in str(err.value)
    assert "the contract has 20, the request has nothing" in str(err.value)
    same = user("Book.", tools=[{"type": "function", "function": {"name": "book_table", "description": "Book it",
                                                                   "parameters": BOOKING.tools["book_table"]}}])
    check_request(same, BOOKING)  # the contract's own schema passes


def test_which_parameters_explain_a_failure():
    params = RequestParams.of({"stop": ["*"], "max_tokens": 10}, request_language=True)
    rejected = Failure(FailureClass.INVALID_RESPONSE, "prefix_rejected", "language: English")
    assert parameterised_by(rejected, params, checks={"prefix.language": "fail"}, finish_reason=None,
                            has_tool_calls=False) == ("language", "stop")
    assert parameterised_by(rejected, RequestParams(), checks={"prefix.language": "fail"}, finish_reason=None,
                            has_tool_calls=False) == ()
    transport = Failure(FailureClass.TRANSIENT, "http_503", "down")
    assert parameterised_by(transport, params, checks={}, finish_reason=None, has_tool_calls=False) == ()
    mojibake = Failure(FailureClass.INVALID_RESPONSE, "prefix_rejected", "invalid_characters")
    only_language = RequestParams(language=True)
    assert parameterised_by(mojibake, only_language, checks={"prefix.encoding": "fail", "prefix.language": "pass"},
                            finish_reason=None, has_tool_calls=False) == ()
    # Mojibake that also reads as another language is still the route's (no 422 telling
    # the caller to change its conversation): the real-text gateway bench met 238 of them.
    for broken in ("mojibake", "leading_garbage", "invalid_chars"):
        assert parameterised_by(rejected, params, checks={f"post.{broken}": "fail", "post.language": "fail"},
                                finish_reason=None, has_tool_calls=False) == ()


def test_failure_details_round_trip_and_garbage_is_ignored():
    d = FailureDetail("invalid_response", "language", None, "op1", 123, "language: en")
    assert FailureDetail.from_json(d.to_json()) == d
    assert FailureDetail.from_json("not json") is None and FailureDetail.from_json('{"x": 1}') is None


# ------------------------------------------------------------------ the three poisonings


@pytest.mark.parametrize("stream", [False, True])
def test_a_language_header_no_reply_matches_opens_no_breaker_and_costs_others_nothing(start_sim, gateway_for, breakers, stream):
    sim = start_sim(fleet(ep("alpha"), ep("beta")))
    store = breakers(BreakerConfig(consecutive=2, min_calls=2))
    gw = gateway_for(sim, [route("alpha", latency_ms=1), route("beta", latency_ms=2)], breakers=store)
    for _ in range(6):
        poisoned = gw.complete(ROLEPLAY, user("Tell me about the storm."), language="pt", stream=stream)
        if poisoned.committed is not None:  # the prefix was inconclusive: judged when the stream ends
            list(poisoned.committed.deltas())
            poisoned = poisoned.committed.result
        assert not poisoned.ok and poisoned.attempts[-1].status == "rejected"
        assert all("attribution: the request's (language)" in a.validation for a in poisoned.attempts)
        assert all(a.request_caused for a in poisoned.attempts)  # nor counted in the live scorecard
    assert open_classes(store, "alpha") == open_classes(store, "beta") == []
    assert windows(store, "alpha") == windows(store, "beta") == {}
    plain = gw.complete(ROLEPLAY, user("Tell me about the storm."))
    assert plain.ok and plain.route.name == "alpha" and len(plain.attempts) == 1


def test_stop_star_opens_no_breaker_and_costs_others_nothing(start_sim, gateway_for, breakers):
    sim = start_sim(fleet(ep("alpha"), ep("beta")))
    store = breakers(BreakerConfig(consecutive=2, min_calls=2))
    gw = gateway_for(sim, [route("alpha", latency_ms=1), route("beta", latency_ms=2)], breakers=store)
    for _ in range(6):
        poisoned = gw.complete(ROLEPLAY, user("Greet me.", stop=["*"]))
        assert not poisoned.ok
        assert {a.failure_reason for a in poisoned.attempts} == {"empty_reply"}
    assert open_classes(store, "alpha") == open_classes(store, "beta") == []
    assert gw.complete(ROLEPLAY, user("Greet me.")).ok


def test_caller_tools_on_booking_agent_never_reach_a_route(start_sim, gateway_for, breakers):
    sim = start_sim(fleet(ep("alpha"), ep("beta")))
    store = breakers(BreakerConfig(consecutive=1))
    gw = gateway_for(sim, [route("alpha", latency_ms=1), route("beta", latency_ms=2)], breakers=store)
    sim_reset_stats(sim)
    loose = user("Book a table for two at eight tonight.", max_tokens=200,
                 tools=[{"type": "function", "function": {"name": "book_table", "parameters": LOOSE}}])
    for _ in range(10):
        with pytest.raises(RequestInvalid):
            gw.complete(BOOKING, loose)
    assert sum(sim_stats(sim).values()) == 0
    plain = [gw.complete(BOOKING, user("Book a table for two at eight tonight.", max_tokens=200)) for _ in range(10)]
    assert [r.outcome for r in plain] == ["accepted"] * 10
    validator = BOOKING.tool_validators["book_table"]
    for r in plain:
        for call in r.answer.tool_calls:
            assert validator.is_valid(json.loads(call.arguments))  # formats checked
    assert open_classes(store, "alpha") == open_classes(store, "beta") == []


# ------------------------------------------------------------------ when the route is at fault


def test_a_peer_passing_the_same_request_charges_the_failed_route(start_sim, gateway_for, breakers):
    sim = start_sim(fleet(ep("alpha", {"language_drift": {"rate": 1, "into": "de", "share": 1.0}}), ep("beta")))
    store = breakers(BreakerConfig(consecutive=1))
    gw = gateway_for(sim, [route("alpha", latency_ms=1), route("beta", latency_ms=2)], breakers=store)
    result = gw.complete(ROLEPLAY, user("Tell me about the storm.", max_tokens=400), language="en")
    assert result.ok and result.route.name == "beta"
    assert result.attempts[0].status == "rejected" and result.attempts[0].breaker_opened == "invalid_response"
    assert not result.attempts[0].request_caused
    assert open_classes(store, "alpha") == ["invalid_response"]
    last = store.last_failures("alpha")
    assert [(d.failure_class, d.check, d.operation_id) for d in last] == [("invalid_response", "language", result.operation_id)]
    reason = FailureDetail.from_json(store.snapshot("alpha")["invalid_response:reason"])
    assert reason is not None and reason.check == "language"


def test_a_route_whose_record_shows_the_check_is_charged_without_a_peer(start_sim, gateway_for, breakers):
    sim = start_sim(fleet(ep("alpha", {"language_drift": {"rate": 1, "into": "de", "share": 1.0}})))
    store = breakers(BreakerConfig(consecutive=3, min_calls=10))
    gw = gateway_for(sim, [route("alpha")], breakers=store)
    store.record("alpha", int(gw.wall() * 1000), "invalid_response",
                 detail=FailureDetail("invalid_response", "language", None, "earlier", int(gw.wall() * 1000)))
    result = gw.complete(ROLEPLAY, user("Tell me about the storm.", max_tokens=400), language="en")
    assert not result.ok
    assert "attribution" not in result.attempts[0].validation
    assert len(store.last_failures("alpha")) == 2


def test_an_empty_reply_with_zero_tokens_fails_over_at_once(start_sim, gateway_for, breakers):
    sim = start_sim(fleet(ep("alpha", {"refusal": {"rate": 1, "style": "empty"}}), ep("beta")))
    store = breakers(BreakerConfig(consecutive=1))
    gw = gateway_for(sim, [route("alpha", latency_ms=1), route("beta", latency_ms=2)], breakers=store)
    result = gw.complete(ROLEPLAY, user())
    assert result.ok and result.route.name == "beta"
    first = result.attempts[0]
    assert (first.route, first.failure_class, first.failure_reason) == ("alpha", "invalid_response", "empty_reply")
    assert [a.route for a in result.attempts] == ["alpha", "beta"]  # no same-route retry
    assert open_classes(store, "alpha") == ["invalid_response"]


def test_neutral_never_closes_a_half_open_breaker(breakers):
    store = breakers(BreakerConfig(consecutive=1, open_s=1, close_after=1))
    clock = WallClock()
    now = int(clock() * 1000)
    store.record("r", now, "transient")
    permit = store.acquire("r", now + 1500)
    assert permit.allowed and permit.state == "half_open"
    store.record("r", now + 1501, "neutral", permit=permit)  # a client 4xx or a client that left
    assert store.snapshot("r")["transient:state"] == "half_open"
    permit = store.acquire("r", now + 1502)
    store.record("r", now + 1503, "success", permit=permit)
    assert store.snapshot("r")["transient:state"] == "closed"


# ------------------------------------------------------------------ the request's own settings: a 422, no breaker


def test_quantizations_no_endpoint_offers_open_no_breaker_and_name_the_field(start_sim, gateway_for, breakers):
    sim = start_sim(fleet(ep("alpha"), ep("beta")))  # both fp8; the routes do not know it
    store = breakers(BreakerConfig(consecutive=2, min_calls=2))
    gw = gateway_for(sim, [route("alpha", latency_ms=1), route("beta", latency_ms=2)], breakers=store)
    for _ in range(8):
        result = gw.complete(ROLEPLAY, user("Greet me.", provider={"quantizations": ["int4"]}))
        assert not result.ok and result.error_code == "request_unservable"
        assert result.fault["field"] == "provider.quantizations"
        assert [a.http_status for a in result.attempts] == [404, 404]
        assert all(a.request_caused for a in result.attempts)
    assert open_classes(store, "alpha") == open_classes(store, "beta") == []
    assert windows(store, "alpha") == windows(store, "beta") == {}
    plain = gw.complete(ROLEPLAY, user("Greet me."))
    assert plain.ok and plain.route.name == "alpha" and len(plain.attempts) == 1


@pytest.mark.parametrize(("provider", "field"), [
    ({"max_price": {"prompt": 0, "completion": 0}}, "provider.max_price.prompt"),
    ({"quantizations": ["int4"]}, "provider.quantizations"),
])
def test_preferences_no_route_meets_are_refused_before_any_upstream_request(start_sim, gateway_for, breakers, provider, field):
    sim = start_sim(fleet(ep("alpha"), endpoint("beta", supported_parameters=[*PARAMS, "stop"], quantization="bf16")))
    store = breakers(BreakerConfig(consecutive=1))
    routes = [route("alpha", latency_ms=1, quantization="fp8"), route("beta", latency_ms=2, quantization="bf16")]
    gw = gateway_for(sim, routes, breakers=store)
    sim_reset_stats(sim)
    result = gw.complete(ROLEPLAY, user("Greet me.", provider=provider))
    assert (result.error_code, result.fault["field"], result.attempts) == ("request_unservable", field, [])
    assert set(result.rejected_routes) == {"alpha", "beta"}
    assert sum(sim_stats(sim).values()) == 0
    # A limit one route meets: that route serves.
    fits = gw.complete(ROLEPLAY, user("Greet me.", provider={"quantizations": ["bf16"]}))
    assert fits.ok and fits.route.name == "beta" and "alpha" in fits.rejected_routes


@pytest.mark.parametrize(("body", "field"), [({"stop": ["*"]}, "stop"), ({"max_tokens": 1}, "max_tokens")])
def test_a_request_that_fails_only_for_its_own_parameter_names_it(start_sim, gateway_for, breakers, body, field):
    sim = start_sim(fleet(ep("alpha"), ep("beta")))
    gw = gateway_for(sim, [route("alpha", latency_ms=1), route("beta", latency_ms=2)], breakers=breakers())
    result = gw.complete(ROLEPLAY, user("Greet me.", **body))
    assert result.error_code == "request_unservable" and result.fault["field"] == field
    assert field in result.message and len(result.attempts) == 2
