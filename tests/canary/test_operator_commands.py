"""Commands and the API for a new operator: a hint when the model is not one the canary
watches, and the demo's rounds stamped in the past, never in the future."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from canary.models import Endpoint, Provider, Round
from core.tokens import service_token_issue
from observability.breakers import breaker_rows
from reverie_ops.management.commands.demo import Command, demo_first_round_at
from routing.models import Route
from routing.services.wiring import breaker_store

pytestmark = pytest.mark.django_db

WATCHED = "meta-llama/llama-3.3-70b-instruct"
TYPO = "meta-lama/llama-3.3-70b-instruct"


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def watched(settings):
    settings.CANARY_MODELS = [WATCHED]
    return WATCHED


def test_ignore_list_hints_when_the_canary_does_not_watch_the_model(watched):
    text = run("ignore_list", "--model", TYPO)
    assert f"hint: the canary does not watch '{TYPO}'" in text
    assert "Check the model id's spelling" in text
    data = json.loads(run("ignore_list", "--model", TYPO, "--json"))
    assert data["ignore"] == [] and data["hint"].startswith(f"the canary does not watch '{TYPO}'")


def test_ignore_list_gives_no_hint_for_a_watched_model_or_one_with_endpoints(watched):
    assert "hint" not in run("ignore_list", "--model", WATCHED)
    assert "hint" not in json.loads(run("ignore_list", "--model", WATCHED, "--json"))
    at = timezone.now()
    provider = Provider.objects.create(name="Atlas", slug="atlas", first_seen=at, last_seen=at)
    Endpoint.objects.create(model_id="vendor/other", provider=provider, tag="atlas/fp8", provider_name="Atlas",
                            first_seen=at, last_seen=at)
    assert "hint" not in run("ignore_list", "--model", "vendor/other")


def test_the_api_hints_when_the_canary_does_not_watch_the_model(watched):
    _, token = service_token_issue("router")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    body = client.get("/api/v1/routing/ignore", {"model": TYPO}).json()
    assert body["ignore"] == [] and "does not watch" in body["hint"]
    assert "does not watch" in client.get("/api/v1/routing/provider", {"model": TYPO}).json()["hint"]
    assert "hint" not in client.get("/api/v1/routing/ignore", {"model": WATCHED}).json()
    schema = client.get("/api/v1/openapi.json").json()["components"]["schemas"]["IgnoreList"]
    assert "hint" in schema["properties"] and "hint" not in schema["required"]


def test_the_demos_last_round_runs_now_and_the_first_30_minutes_before():
    now = datetime(2026, 12, 1, 9, 50, tzinfo=UTC)
    assert demo_first_round_at(now, 2) == now - timedelta(minutes=30)
    assert demo_first_round_at(now, 1) == now
    assert demo_first_round_at(now, 3) == now - timedelta(hours=1)


@pytest.mark.slow(30)
@pytest.mark.django_db(transaction=True)  # the tour's gateway serves from another thread: committed rows
def test_the_demo_stamps_no_round_in_the_future_and_ends_with_one_breaker_open(settings, monkeypatch):
    settings.OPENROUTER_BASE_URL = settings.OPENROUTER_BASE_URL  # restored after the test
    settings.ROUTING_BREAKER_PREFIX = settings.ROUTING_BREAKER_PREFIX
    settings.CANARY_LIVE_PREFIX = settings.CANARY_LIVE_PREFIX
    monkeypatch.setenv("OPENROUTER_BASE_URL", settings.OPENROUTER_BASE_URL)
    # The breakers as the pages would read them at the end of the tour, just before the
    # demo removes its keys on exit.
    seen: dict = {}
    leave = Command._redis_leave

    def read_then_leave(self: Command) -> None:
        store = breaker_store()
        seen["prefix"], seen["client"] = self._prefix, store.client
        seen["rows"] = breaker_rows(store, list(Route.objects.values_list("name", flat=True)), int(time.time() * 1000))
        leave(self)

    monkeypatch.setattr(Command, "_redis_leave", read_then_leave)
    keys_before = set(breaker_store().client.scan_iter())
    monkeypatch.setenv("COLUMNS", "80")
    before = timezone.now()
    text = run("demo", "--no-serve")
    after = timezone.now()
    opened = [r for r in seen["rows"] if r.state == "open"]
    assert [(r.route, r.failure_class) for r in opened] == [("llama-3-3-70b-instruct-meridian-fp8", "transient")]
    assert opened[0].open_until_ms > (after.timestamp() + 50 * 60) * 1000  # the demo's hour, not 30 s
    assert opened[0].opened_at_ms is not None
    assert "Opened: the transient breaker of route llama-3-3-70b-instruct-meridian-fp8" in text
    assert "all_routes_suppressed" in text
    assert "/admin/observability/breakerboard/" in text
    # It reads whole in a terminal 80 columns wide (COLUMNS, set above): wrapped at words,
    # never wider.
    assert max(len(line) for line in text.splitlines()) <= 80, max(text.splitlines(), key=len)
    # The second round's header language is explained: the endpoints whose language probe
    # showed an anomaly in the first round are prompted in its language again.
    flat = " ".join(text.split())
    # The refused call's reason is its first sentence, whole; the list of routes ruled out
    # is the page's to show.
    assert "all_routes_suppressed: every capable route is suppressed by its circuit breaker." in flat
    assert "Suppressed by breakers" not in flat
    assert "Prompted in another language than the round's" in flat
    # The showcase tool call books a restaurant by an id, not by a sentence.
    assert re.search(r'"restaurant_id": "restaurant_[0-9a-f]{8}"', flat), flat
    assert not list(seen["client"].scan_iter(match=f"{seen['prefix']}*"))
    # Nothing left outside its prefix either; other xdist workers' keys (their broker's and
    # live scorecard's, under ``test:<worker>:``, tests/environment.py, and the bench scripts
    # they run, under ``bench:``) come and go meanwhile.
    left = {k for k in seen["client"].scan_iter() if not k.startswith((b"test:", b"bench:"))}
    assert left <= keys_before
    assert getattr(settings, "ROUTING_BREAKER", None) in (None, {})
    starts = sorted(Round.objects.values_list("started_at", flat=True))
    assert len(starts) == 2
    assert starts[1] - starts[0] == timedelta(minutes=30)
    assert before <= starts[1] <= after
    assert all(s <= after for s in Round.objects.values_list("finished_at", flat=True) if s)
