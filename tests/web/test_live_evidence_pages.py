"""Live evidence is seen in one place: the endpoint page shows canary and live verdicts
side by side with the suspect's state, the fleet matrix marks suspects and confirmation
rounds, and /metrics has live failures per endpoint and suspects per model (real
PostgreSQL and Redis)."""

from __future__ import annotations

import json
import uuid

import pytest
import redis
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from canary.live.scorecard import AttemptVerdicts, SuspectState
from canary.live.store import scorecard_get, scorecard_reset
from canary.models import EndpointRound, ProbeResult, Round
from canary.services.rounds import endpoints_sync
from observability.live import LiveCollector
from openrouter.endpoints import parse_endpoints_body

pytestmark = pytest.mark.django_db
MODEL = "acme/live-1"
CHECK = "prefix.leading_garbage"


@pytest.fixture
def card(settings):
    settings.CANARY_LIVE_PREFIX = f"test:live:{uuid.uuid4().hex}"
    scorecard_reset()
    yield scorecard_get()
    client = redis.Redis.from_url(settings.ROUTING_REDIS_URL)
    keys = list(client.scan_iter(f"{settings.CANARY_LIVE_PREFIX}:*"))
    if keys:
        client.delete(*keys)
    scorecard_reset()


@pytest.fixture
def endpoints():
    body = json.dumps({"data": {"endpoints": [
        {"tag": t, "provider_name": t.split("/")[0].capitalize(), "pricing": {"prompt": "0.0000001", "completion": "0.0000002"}}
        for t in ("atlas/fp8", "harbor/fp8", "kestrel/fp8")]}}).encode()
    return endpoints_sync(MODEL, parse_endpoints_body(body), timezone.now())


def test_the_endpoint_page_shows_both_kinds_of_evidence_and_the_suspect(operator: Client, card, endpoints):
    atlas = endpoints[0]
    now = timezone.now()
    rnd = Round.objects.create(model_id=MODEL, language="en", started_at=now, status=Round.Status.COMPLETED)
    for kind, verdict in (("refusal", "pass"), ("language", "fail")):
        ProbeResult.objects.create(round=rnd, endpoint=atlas, kind=kind, verdict=verdict, probe_verdict=verdict,
                                   raw_verdict=verdict, language="en", created_at=now)
    card.record([AttemptVerdicts(MODEL, "atlas/fp8", {CHECK: False, "validation": True}, True, CHECK, "en")] * 7,
                now.timestamp())
    card.suspect_put(MODEL, "atlas/fp8", SuspectState(CHECK, "consecutive", "7 commit-point failures in a row",
                                                     now.timestamp(), confirmations=[rnd.pk]))
    html = operator.get(reverse("admin:canary_endpoint_history", args=[atlas.pk])).content.decode()
    assert 'id="canary-side"' in html and 'id="live-side"' in html and 'id="live-suspect"' in html
    canary_side = html.split('id="canary-side"')[1].split("</table>")[0]
    live_side = html.split('id="live-side"')[1].split("</table>")[0]
    assert "<td>language</td><td>1</td><td>1</td><td>100 %</td>" in canary_side
    assert f"<td>{CHECK}</td><td>7</td><td>7</td><td>100 %</td>" in live_side
    assert "<td>validation</td><td>7</td><td>0</td><td>0 %</td>" in live_side
    assert "7 commit-point failures in a row" in html and "prefers its peers" in html
    harbor_html = operator.get(reverse("admin:canary_endpoint_history", args=[endpoints[1].pk])).content.decode()
    assert 'id="live-suspect"' not in harbor_html and "No live verdicts in the window." in harbor_html


def test_the_fleet_matrix_marks_suspects_and_confirmation_rounds(operator: Client, card, endpoints):
    now = timezone.now()
    rnd = Round.objects.create(model_id=MODEL, language="en", started_at=now, status=Round.Status.COMPLETED,
                               trigger=Round.Triggers.CONFIRMATION, endpoint=endpoints[0])
    EndpointRound.objects.create(round=rnd, endpoint=endpoints[0], outcome="fail", created_at=now)
    card.suspect_put(MODEL, "atlas/fp8", SuspectState(CHECK, "rate", "r", now.timestamp()))
    html = operator.get(reverse("admin:canary_round_health") + f"?model={MODEL}").content.decode()
    head = html.split("<thead>")[1].split("</thead>")[0]
    atlas_col, harbor_col = head.split("atlas/fp8")[1].split("</th>")[0], head.split("harbor/fp8")[1].split("</th>")[0]
    assert ">suspect</span>" in atlas_col and ">suspect</span>" not in harbor_col
    assert ">confirm</span>" in html


def test_metrics_have_live_failures_per_endpoint_and_suspects_per_model(card):
    now = timezone.now().timestamp()
    card.record([AttemptVerdicts(MODEL, "atlas/fp8", {CHECK: False}, True, CHECK)] * 3
                + [AttemptVerdicts(MODEL, "harbor/fp8", {CHECK: True}, False)] * 4, now)
    card.suspect_put(MODEL, "atlas/fp8", SuspectState(CHECK, "rate", "r", now))
    families = {f.name: f for f in LiveCollector(scorecard_get).collect()}
    assert families["reverie_live_check_failures"].value(MODEL, "atlas/fp8", CHECK) == 3
    assert families["reverie_live_check_judged"].value(MODEL, "harbor/fp8", CHECK) == 4
    assert families["reverie_live_check_failures"].value(MODEL, "harbor/fp8", CHECK) == 0
    assert families["reverie_live_suspects"].value(MODEL) == 1
    assert families["reverie_live_scorecard_up"].value() == 1


def test_metrics_answer_without_redis(settings):
    settings.ROUTING_REDIS_URL = "redis://127.0.0.1:1/0"
    scorecard_reset()
    try:
        families = {f.name: f for f in LiveCollector(scorecard_get).collect()}
        assert list(families) == ["reverie_live_scorecard_up"] and families["reverie_live_scorecard_up"].value() == 0
    finally:
        scorecard_reset()
