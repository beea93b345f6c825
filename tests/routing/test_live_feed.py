"""The gateway's verdicts reach the live scorecard (real HTTP to the simulator, real
Redis), only those that speak to the endpoint count, and suspects are demoted."""

from __future__ import annotations

import time
import uuid

import pytest

from canary.live.rule import Streak, Tally
from canary.live.scorecard import AttemptVerdicts, Scorecard, SuspectState
from routing.contracts import contract_from_dict
from routing.events import DbEventSink
from routing.gateway.live_feed import ScorecardFeed, attempt_verdicts, demote
from routing.gateway.result import AttemptRecord, GatewayResult
from routing.terms import RequestOutcome
from tests.routing.conftest import MODEL, ListSink, endpoint, fleet, route, user

CHAT = contract_from_dict({
    "name": "chat", "version": 1, "workload": "text", "deadline_s": 8, "max_attempts": 3, "max_fallbacks": 2,
    "finish_reasons": ["stop", "length"], "connect_s": 0.2, "generation_s": 1.0, "validation_s": 0.1,
    "first_token_s": 3, "stream_commit": {"mode": "prefix", "hold_chars": 64, "hold_ms": 200},
})


@pytest.fixture
def card(redis_client):
    prefix = f"test:live:{uuid.uuid4().hex}"
    yield Scorecard(redis_client, prefix=prefix, window_s=600)
    keys = list(redis_client.scan_iter(f"{prefix}:*"))
    if keys:
        redis_client.delete(*keys)


def record(status: str = "accepted", **kw) -> AttemptRecord:
    base = {"attempt_id": "a", "index": 0, "route": "alpha", "fallback_reason": "primary", "breaker_state": "closed",
            "started_at": 0.0, "status": status}
    return AttemptRecord(**{**base, **kw})


def test_a_judged_attempt_counts_its_checks_and_its_validation():
    got = attempt_verdicts(record(checks={"prefix.leading_garbage": "pass", "prefix.language": "inconclusive",
                                          "post.repetition": "pass"}), route("alpha"), "pt")
    assert got == AttemptVerdicts(MODEL, "alpha/fp8", {"prefix.leading_garbage": True, "post.repetition": True,
                                                       "validation": True}, False, "", "pt")
    rejected = attempt_verdicts(record("rejected", failure_reason="prefix_rejected",
                                       checks={"prefix.leading_garbage": "fail"}), route("alpha"), None)
    assert rejected is not None and rejected.checks == {"prefix.leading_garbage": False}
    assert (rejected.commit_failed, rejected.commit_check) == (True, "prefix.leading_garbage")


def test_an_evidence_only_check_counts_in_the_window_but_never_breaks_the_commit_point():
    got = attempt_verdicts(record(checks={"answer.leading_garbage": "pass", "answer.refusal": "fail"}), route("alpha"), None)
    assert got is not None and got.checks["answer.refusal"] is False
    assert (got.commit_failed, got.checks["validation"]) == (False, True)


@pytest.mark.parametrize("rec", [
    record("cancelled", checks={"prefix.leading_garbage": "pass"}),  # client gone or hedge loser
    record("failed", http_status=400),  # the request was refused for itself
    record("failed", http_status=422),
    record("rejected", failure_reason="truncated_by_max_tokens"),  # the caller's own max_tokens
    record("failed", failure_class="transient", failure_reason="timeout"),  # transport: no check reached
    # the request's own language explains it and no peer passed it (routing.attribution)
    record("rejected", failure_reason="prefix_rejected", checks={"prefix.language": "fail"}, request_caused=True),
])
def test_what_does_not_speak_to_the_endpoint_never_counts(rec):
    assert attempt_verdicts(rec, route("alpha"), None) is None


def test_a_route_that_pins_no_endpoint_is_not_scored():
    assert attempt_verdicts(record(), route("alpha", provider_tag=None), None) is None


def test_demotion_moves_suspects_after_their_peers_and_keeps_them_as_a_last_resort():
    ranked = [route("alpha"), route("beta"), route("gamma")]
    assert [r.name for r in demote(ranked, frozenset({"alpha/fp8"}))] == ["beta", "gamma", "alpha"]
    assert [r.name for r in demote(ranked, frozenset())] == ["alpha", "beta", "gamma"]


@pytest.mark.django_db
def test_live_streams_fill_the_window_and_the_junk_hosts_streak(start_sim, gateway_for, card):
    sim = start_sim(fleet(endpoint("alpha", {"leading_garbage": {"rate": 1, "fragments": [";"]}}),
                          endpoint("beta"), endpoint("gamma")))
    routes = [route("alpha"), route("beta"), route("gamma")]
    inner = ListSink()
    gw = gateway_for(sim, routes, sink=DbEventSink(listeners=[ScorecardFeed(lambda: routes, card.record_many),
                                                              lambda batch: inner.results.extend(batch)]))
    for _ in range(3):
        result = gw.complete(CHAT, user(max_tokens=200), stream=True, language="en")
        assert result.committed is not None
        list(result.committed.deltas())
    assert len(inner.results) == 3
    window = card.window(MODEL, time.time())
    assert window.counts["alpha/fp8"]["prefix.leading_garbage"].failed == 3
    assert window.counts["beta/fp8"]["prefix.leading_garbage"].failed == 0
    assert window.counts["beta/fp8"]["validation"].n == 3
    assert window.languages["alpha/fp8"]["prefix.leading_garbage"]["en"] == 3
    assert card.streaks(MODEL)["alpha/fp8"].count == 3
    assert card.streaks(MODEL)["beta/fp8"].count == 0


@pytest.mark.django_db
def test_a_demoted_suspect_is_tried_last(start_sim, gateway_for, card):
    sim = start_sim(fleet(endpoint("alpha"), endpoint("beta")))
    routes = [route("alpha"), route("beta")]
    card.suspect_put(MODEL, "alpha/fp8", SuspectState("prefix.leading_garbage", "rate", "test", time.time()))
    gw = gateway_for(sim, routes, demoted=card.demoted)
    result = gw.complete(CHAT, user())
    assert result.ok and result.route is not None and result.route.name == "beta"
    # Nothing else left: the suspect still serves.
    only = gateway_for(sim, [route("alpha")], demoted=card.demoted)
    assert only.complete(CHAT, user()).ok


def test_the_scorecard_counts_an_attempt_moves_its_streak_and_expires_its_bucket(card, redis_client):
    now = time.time()
    card.record([AttemptVerdicts(MODEL, "alpha/fp8", {"answer.mojibake": False, "validation": True},
                                 commit_failed=True, commit_check="answer.mojibake", language="pt")], now)
    window = card.window(MODEL, now)
    tally = window.counts["alpha/fp8"]["answer.mojibake"]
    assert (tally.n, tally.failed) == (1, 1) and window.counts["alpha/fp8"]["validation"].failed == 0
    assert window.languages["alpha/fp8"]["answer.mojibake"]["pt"] == 1
    assert card.streaks(MODEL)["alpha/fp8"] == Streak(1, "answer.mojibake")
    bucket = f"{card.prefix}:w:{MODEL}:{int(now // 10)}"
    assert 0 < redis_client.ttl(bucket) <= card.window_s + 20
    assert MODEL in card.models()
    card.record([AttemptVerdicts(MODEL, "alpha/fp8", {"answer.mojibake": True}, commit_failed=False),
                 AttemptVerdicts(MODEL, "beta/fp8", {})], now)
    assert card.streaks(MODEL)["alpha/fp8"].count == 0 and "beta/fp8" not in card.window(MODEL, now).counts


def test_a_batch_counts_each_request_in_the_bucket_it_ended_in(card):
    now = time.time()
    then = now - 30  # three buckets earlier: still in the window, not in now's bucket
    counted = card.record_many([
        (then, [AttemptVerdicts(MODEL, "alpha/fp8", {"answer.mojibake": False}, commit_failed=True,
                                commit_check="answer.mojibake")]),
        (now, [AttemptVerdicts(MODEL, "alpha/fp8", {"answer.mojibake": True}, commit_failed=False),
               AttemptVerdicts(MODEL, "beta/fp8", {"answer.mojibake": False}, commit_failed=True,
                               commit_check="answer.mojibake")]),
    ])
    assert counted == 3
    assert card.window(MODEL, now).counts["alpha/fp8"]["answer.mojibake"] == Tally(2, 1)
    assert card.window(MODEL, then).counts["alpha/fp8"]["answer.mojibake"] == Tally(1, 1)
    # In order: alpha's failure, then its pass, leaves its streak at 0; beta's is 1.
    assert card.streaks(MODEL)["alpha/fp8"].count == 0 and card.streaks(MODEL)["beta/fp8"].count == 1


def test_the_feed_drops_a_batch_redis_refuses_and_the_events_are_still_written(caplog):
    def refused(batch):
        raise ConnectionError("Redis is away")

    feed = ScorecardFeed(lambda: [route("alpha")], refused)
    result = GatewayResult("op", "chat@1", RequestOutcome.ACCEPTED, [record(checks={"answer.refusal": "pass"})], 0.0, 5.0)
    feed([result])  # never raises
    assert "verdicts of 1 requests dropped: Redis is away" in caplog.text
