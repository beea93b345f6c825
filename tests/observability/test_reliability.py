"""The reliability report: the design's measures from events, rollups that agree with
the raw events, and the masking warning with one notification."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from canary.models import Notification
from observability.fixtures import request_add
from observability.models import RequestHour
from observability.reliability import (
    NOTIFY_KIND,
    reliability_page,
    reliability_report,
    rollup_refresh,
)

pytestmark = pytest.mark.django_db


def _thirteen_past() -> datetime:
    """A ``now`` 13 minutes into an hour: the last hour spans two clock hours, one of them
    rolled up (the case where whole-hour rollups must not be read for part of an hour)."""
    return timezone.now().replace(minute=13, second=0, microsecond=0)


def _window(reports, name):
    return next(r for r in reports if r.name == name)


def test_the_last_hour_gives_the_designs_measures_per_contract_and_route():
    now = _thirteen_past()
    at = now - timedelta(minutes=10)
    for _ in range(8):
        request_add(at, contract="chat@1", attempts=[("alpha", "accepted")], latency_ms=400)
    request_add(at, contract="chat@1", attempts=[("alpha", "rejected"), ("beta", "accepted")], latency_ms=1200)
    request_add(at, contract="chat@1", attempts=[("alpha", "failed")], outcome="failed", error_code="deadline_exhausted")
    w = _window(reliability_report(now), "1h")
    t = w.by_contract["chat@1"]
    assert t.requests == 10 and t.accepted == 9
    assert t.fallback_rate == pytest.approx(0.1)
    assert t.attempts_per_completed == pytest.approx(10 / 9)
    assert t.deadline_rate == pytest.approx(0.1)
    assert t.cost_per_accepted_usd == pytest.approx(0.010 / 9)
    alpha = w.by_route["alpha"]
    assert alpha.rejection_rate == pytest.approx(1 / 9)  # 8 accepted + 1 rejected answers
    assert alpha.http_success_rate == pytest.approx(9 / 10)
    assert alpha.mean_latency_ms == pytest.approx(400)
    assert w.by_route["beta"].mean_latency_ms == pytest.approx(1200)
    assert alpha.p95_latency_ms == 500  # 8 of 8 accepted under 500 ms
    assert t.p95_latency_ms == 2000  # 9 accepted: the 1.2 s one is past the 95th percentile's rank
    roles = w.roles["chat@1"]
    assert (roles["primary"].attempts, roles["primary"].accepted) == (10, 8)
    assert (roles["fallback"].attempts, roles["fallback"].accepted) == (1, 1)


def test_closed_hours_come_from_the_rollup_and_agree_with_the_events():
    now = timezone.now()
    for hours in (3, 5, 30):
        request_add(now - timedelta(hours=hours), contract="npc@1", attempts=[("alpha", "rejected"), ("beta", "accepted")])
    rolled = rollup_refresh(now)
    assert rolled <= now - timedelta(minutes=2)
    assert sum(r.requests for r in RequestHour.objects.all()) == 3
    assert rollup_refresh(now) == rolled  # each hour once
    assert sum(r.requests for r in RequestHour.objects.all()) == 3
    reports = reliability_report(now)
    assert _window(reports, "24h").by_contract["npc@1"].requests == 2
    assert _window(reports, "7d").by_contract["npc@1"].with_fallback == 3
    assert _window(reports, "7d").roles["npc@1"]["fallback"].accepted == 3


def test_rising_http_success_with_rising_rejections_warns_and_notifies_once():
    now = _thirteen_past()
    before, current = now - timedelta(minutes=90), now - timedelta(minutes=20)
    for i in range(30):  # previous hour: 70 % HTTP success, no rejection
        request_add(before, contract="chat@1", attempts=[("alpha", "failed" if i < 9 else "accepted")],
                    outcome="failed" if i < 9 else "accepted")
    for i in range(30):  # last hour: every attempt answered, one in five rejected
        request_add(current, contract="chat@1",
                    attempts=[("alpha", "rejected"), ("beta", "accepted")] if i < 6 else [("alpha", "accepted")])
    page = reliability_page(now)
    [finding] = [f for f in page["findings"] if f.window == "1h"]
    assert finding.route == "alpha"
    assert finding.http_before == pytest.approx(0.7) and finding.http_now == pytest.approx(1.0)
    assert finding.rejection_before == pytest.approx(0.0) and finding.rejection_now == pytest.approx(0.2)
    assert Notification.objects.filter(kind=NOTIFY_KIND).count() == 1
    reliability_page(now + timedelta(minutes=1))
    assert Notification.objects.filter(kind=NOTIFY_KIND).count() == 1


def test_no_warning_when_only_rejections_rise():
    now = timezone.now()
    for _ in range(30):
        request_add(now - timedelta(minutes=90), contract="chat@1", attempts=[("alpha", "accepted")])
    for i in range(30):
        request_add(now - timedelta(minutes=20), contract="chat@1",
                    attempts=[("alpha", "rejected"), ("beta", "accepted")] if i < 6 else [("alpha", "accepted")])
    assert reliability_page(now)["findings"] == []
    assert not Notification.objects.filter(kind=NOTIFY_KIND).exists()
