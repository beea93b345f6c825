"""The on-call pages' time series (pure): hourly rates per route, masking marks, and a
route's breaker state over time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from observability.breakers import BreakerRow
from observability.models import LATENCY_EDGES_MS
from observability.reliability import Masking
from observability.series import breaker_timeline, route_series

H0 = datetime(2026, 12, 3, 8, tzinfo=UTC)
H1 = H0 + timedelta(hours=1)
BUCKETS = len(LATENCY_EDGES_MS) + 1


def request_row(hour, route, requests, with_fallback, accepted_buckets):
    accepted = sum(accepted_buckets)
    return (hour, "chat@1", route, requests, accepted, requests - accepted, 0, with_fallback, 0, accepted, 0, 0,
            100.0 * accepted, accepted_buckets)


def attempt_row(hour, route, attempts, accepted, rejected):
    return (hour, "chat@1", route, "primary", attempts, accepted, rejected, attempts - accepted - rejected, 0, 0, 0.0, 0)


def test_hourly_rates_per_route_with_gaps_where_a_route_had_no_traffic():
    fast = [10] + [0] * (BUCKETS - 1)            # every request within the first bucket
    slow = [0, 0, 0, 10] + [0] * (BUCKETS - 4)   # every request in the 2,000 ms bucket
    requests = [request_row(H0, "a", 10, 2, fast), request_row(H1.isoformat(sep=" ")[:19], "a", 10, 0, slow)]
    attempts = [attempt_row(H0, "a", 10, 8, 1), attempt_row(H1, "b", 4, 2, 2)]
    out = route_series(requests, attempts, [H0, H1])
    assert out["success"]["hours"] == [int(H0.timestamp() * 1000), int(H1.timestamp() * 1000)]
    by_route = {r["route"]: r["values"] for r in out["success"]["routes"]}
    assert by_route == {"a": [0.9, None], "b": [None, 1.0]}
    assert {r["route"]: r["values"] for r in out["rejection"]["routes"]} == {"a": [0.1111, None], "b": [None, 0.5]}
    assert out["fallback"]["routes"] == [{"route": "a", "values": [0.2, 0.0]}]
    # A slowdown shows: the p95 bucket edge moves from 250 to 2,000 ms.
    assert out["p95"]["routes"] == [{"route": "a", "values": [250.0, 2000.0]}] and out["p95"]["unit"] == "ms"


def test_a_masking_warning_is_marked_on_the_success_and_rejection_charts():
    finding = Masking("a", "1h", H1, 0.7, 1.0, 0.0, 0.2)
    out = route_series([], [attempt_row(H1, "a", 10, 8, 2)], [H0, H1], [finding])
    assert out["success"]["marks"] == out["rejection"]["marks"]
    (mark,) = out["rejection"]["marks"]
    assert mark["x"] == int(H1.timestamp() * 1000) and "HTTP success 70% → 100%" in mark["label"]
    assert out["fallback"]["marks"] == []


def row(route, state, opened_at=None, until=None):
    return BreakerRow(route=route, failure_class="transient", state=state, window_failures=0, window_calls=0,
                      consecutive=0, opened_at_ms=opened_at, open_until_ms=until, next_trial_ms=None, trials=0)


def test_a_breaker_steps_to_open_when_an_attempt_opens_it_and_shows_its_state_now():
    since, now = H0, H0 + timedelta(hours=2)
    events = [(H0 + timedelta(minutes=10), "a", "closed", ""), (H0 + timedelta(minutes=11), "a", "closed", "transient"),
              (H0 + timedelta(minutes=20), "b", "closed", "")]
    opened = int((H0 + timedelta(minutes=11)).timestamp() * 1000)
    out = breaker_timeline(events, [row("a", "open", opened, opened + 30_000), row("a", "closed")], since, now)
    # b was closed throughout and is closed now: left out.
    assert [r["route"] for r in out["routes"]] == ["a"]
    points = out["routes"][0]["points"]
    assert [p["y"] for p in points] == [0, 0, 2, 2, 2]  # closed, closed, opened (store), opened (attempt), now
    assert points[-1]["x"] == int(now.timestamp() * 1000) and points[-1]["why"].startswith("now: transient, open until")
    assert (out["since"], out["until"]) == (int(since.timestamp() * 1000), int(now.timestamp() * 1000))
