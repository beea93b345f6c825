"""The demo's breaker tour in words: which breaker is open in a route's store fields, and
what the demo prints when it opened one, when none opened, and when Redis is down."""

from __future__ import annotations

from routing.demo import BreakerTrip, demo_breaker_report, open_breaker

ROUTE = "llama-3-3-70b-instruct-meridian-fp8"
PAGE = "http://127.0.0.1:8000/admin/observability/breakerboard/"


def test_open_breaker_finds_the_open_class_and_ignores_closed_and_half_open_ones():
    fields = {"invalid_response:state": "closed", "invalid_response:window": "10",
              "transient:state": "open", "transient:until": "1764763200000", "transient:opened": "1764759600000",
              "ambiguous:state": "half_open"}
    assert open_breaker(fields) == ("transient", 1764763200000, 1764759600000)
    assert open_breaker({"transient:state": "half_open", "transient:until": "1"}) == ("", 0, 0)
    assert open_breaker({}) == ("", 0, 0)


def test_the_report_names_the_open_breaker_its_expiry_and_the_page():
    trip = BreakerTrip(route=ROUTE, tag="meridian/fp8", calls=["accepted", "InternalServerError 502 x"],
                       failure_class="transient", open_until_ms=1764763200000, opened_at_ms=1764759600000,
                       refused="InternalServerError 503 all_routes_suppressed: every capable route is suppressed")
    text = demo_breaker_report(trip, page_url=PAGE)
    assert f"Opened: the transient breaker of route {ROUTE} after 2 calls" in text
    assert "open until 2025-12-03 12:00:00 UTC" in text
    assert f"Look at it: {PAGE}" in text
    assert "all_routes_suppressed" in text


def test_the_report_says_so_when_redis_is_down_or_nothing_opened():
    down = BreakerTrip(route=ROUTE, tag="meridian/fp8", calls=["accepted"], store_error="ConnectionError: refused")
    text = demo_breaker_report(down, page_url=PAGE)
    assert "unreachable (ConnectionError: refused): breakers fail open" in text and "Opened" not in text
    none = BreakerTrip(route=ROUTE, tag="meridian/fp8", calls=["accepted"] * 3)
    assert "No breaker opened after 3 calls" in demo_breaker_report(none, page_url=PAGE)

