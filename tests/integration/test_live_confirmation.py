"""Live evidence joins the quarantine, end to end on PostgreSQL, Redis and the simulator
over HTTP: a suspect earns a confirmation round of its one endpoint; two failed rounds
suspend (never live evidence alone); a clean round clears it; the floor and a running
round hold."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
import redis
from celery.exceptions import Retry
from django.conf import settings

from canary.live.rule import RuleSettings
from canary.live.scorecard import AttemptVerdicts, Scorecard
from canary.models import Decision, Endpoint, EndpointPolicyState, Notification, Round
from canary.services.client import openrouter_client
from canary.services.confirmation import confirmation_run, suspects_sweep
from canary.services.quarantine import mode_set
from canary.services.rounds import endpoints_sync
from canary.tasks import round_start_task
from tests.routing.conftest import MODEL, endpoint, fleet

pytestmark = pytest.mark.django_db
CHECK = "prefix.leading_garbage"
T0 = datetime(2026, 12, 3, 10, 0, tzinfo=UTC)
GAP_S = 300
JUNK = {"leading_garbage": {"rate": 1, "fragments": [";"]}}


@pytest.fixture
def card():
    client = redis.Redis.from_url(settings.REDIS_URL)
    prefix = f"test:live:{uuid.uuid4().hex}"
    yield Scorecard(client, prefix=prefix, window_s=600)
    keys = list(client.scan_iter(f"{prefix}:*"))
    if keys:
        client.delete(*keys)
    client.close()


def world(start_sim, use_sim, faults: dict[str, dict], *, mode: str = "enforce") -> None:
    names = ["alpha", "beta", "gamma", "delta"]
    use_sim(start_sim(fleet(*(endpoint(n, faults.get(n)) for n in names))))
    endpoints_sync(MODEL, openrouter_client().list_endpoints(MODEL), T0)
    mode_set(MODEL, mode, actor="test", reason="live evidence test", now=T0)


def live(card: Scorecard, bad: str, at: datetime, n: int = 25) -> None:
    """``n`` live replies of ``bad`` failing the commit point, 4n passing on its peers."""
    verdicts = [AttemptVerdicts(MODEL, f"{bad}/fp8", {CHECK: False}, True, CHECK, "pt") for _ in range(n)]
    verdicts += [AttemptVerdicts(MODEL, f"{peer}/fp8", {CHECK: True}, False, "", "pt")
                 for peer in ("alpha", "beta", "gamma", "delta") if peer != bad for _ in range(n * 4 // 3)]
    card.record(verdicts, at.timestamp())


def sweep(card: Scorecard, at: datetime):
    return suspects_sweep(at, card=card, rule=RuleSettings(), start=confirmation_run, gap_s=GAP_S, max_rounds=3)


@pytest.mark.slow(20)
def test_two_failed_confirmation_rounds_suspend_a_junk_host_within_minutes(start_sim, use_sim, card):
    world(start_sim, use_sim, {"alpha": JUNK})
    live(card, "alpha", T0)
    first = sweep(card, T0 + timedelta(seconds=5))
    assert first.suspected == ["alpha/fp8"] and len(first.opened) == 1
    assert card.demoted(MODEL) == frozenset({"alpha/fp8"})
    rnd = Round.objects.get(pk=first.opened[0])
    assert (rnd.trigger, rnd.endpoint.tag, rnd.language, rnd.status) == ("confirmation", "alpha/fp8", "pt", "completed")
    assert set(rnd.endpoint_rounds.values_list("endpoint__tag", flat=True)) == {"alpha/fp8"}
    er = rnd.endpoint_rounds.get()
    assert (er.outcome, er.streak, er.action) == ("fail", 1, "none")
    # The next sweep reads the failed round and asks for another after the gap, not before.
    again = sweep(card, T0 + timedelta(seconds=10))
    assert again.opened == [] and card.suspects(MODEL)["alpha/fp8"].next_confirm_s == pytest.approx(
        (T0 + timedelta(seconds=10)).timestamp() + GAP_S)
    second = sweep(card, T0 + timedelta(seconds=10 + GAP_S))
    [second_id] = second.opened
    er2 = Round.objects.get(pk=second_id).endpoint_rounds.get()
    assert (er2.outcome, er2.streak, er2.action) == ("fail", 2, "suspended")
    done = sweep(card, T0 + timedelta(seconds=15 + GAP_S))
    assert done.convicted == ["alpha/fp8"] and card.suspects(MODEL) == {}
    state = EndpointPolicyState.objects.get(endpoint__tag="alpha/fp8")
    assert state.enforced and state.suspended_until is not None
    kinds = {d.action: d.evidence.get("evidence_kind") for d in Decision.objects.filter(endpoint__tag="alpha/fp8")}
    assert kinds["live_suspect"] == "live_window"
    assert kinds["suspended"] == "confirmation_round"
    assert kinds["live_convicted"] == "confirmation_round"
    assert Decision.objects.get(action="suspended").evidence["live_window"]["check"] == CHECK
    assert set(Notification.objects.values_list("kind", flat=True)) >= {"live_suspect", "suspended", "live_convicted"}


@pytest.mark.slow(10)
def test_a_clean_confirmation_round_clears_the_suspect_and_its_demotion(start_sim, use_sim, card):
    world(start_sim, use_sim, {})
    live(card, "beta", T0)  # live traffic blamed a healthy host
    first = sweep(card, T0 + timedelta(seconds=5))
    assert first.suspected == ["beta/fp8"]
    assert Round.objects.get(pk=first.opened[0]).endpoint_rounds.get().outcome == "clean"
    cleared = sweep(card, T0 + timedelta(seconds=10))
    assert cleared.cleared == ["beta/fp8"] and card.demoted(MODEL) == frozenset()
    assert card.streaks(MODEL)["beta/fp8"].count == 0
    assert not EndpointPolicyState.objects.filter(endpoint__tag="beta/fp8", suspended_until__isnull=False).exists()
    assert Decision.objects.filter(action="live_cleared", endpoint__tag="beta/fp8").count() == 1


@pytest.mark.slow(10)
def test_a_confirmation_waits_while_a_round_of_the_model_runs(start_sim, use_sim, card):
    world(start_sim, use_sim, {"alpha": JUNK})
    Round.objects.create(model_id=MODEL, language="en", started_at=T0, status=Round.Status.RUNNING)
    live(card, "alpha", T0)
    waiting = sweep(card, T0 + timedelta(seconds=5))
    assert waiting.suspected == ["alpha/fp8"] and waiting.opened == [] and waiting.waiting == ["alpha/fp8"]
    Round.objects.filter(status=Round.Status.RUNNING).update(status=Round.Status.COMPLETED)
    assert len(sweep(card, T0 + timedelta(seconds=10)).opened) == 1


@pytest.mark.slow(20)
def test_the_floor_holds_in_a_confirmation_round(start_sim, use_sim, card, settings):
    settings.CANARY_FLOOR = 3
    world(start_sim, use_sim, {"alpha": JUNK})
    for ep in Endpoint.objects.filter(tag__in=["gamma/fp8", "delta/fp8"]):
        EndpointPolicyState.objects.update_or_create(
            endpoint=ep, defaults={"suspended_until": T0 + timedelta(days=1), "enforced": True})
    live(card, "alpha", T0)
    first = sweep(card, T0 + timedelta(seconds=5))
    assert first.suspected == ["alpha/fp8"]
    assert card.demoted(MODEL) == frozenset()  # two serve, floor 3: it stays preferred
    sweep(card, T0 + timedelta(seconds=10))
    second = sweep(card, T0 + timedelta(seconds=10 + GAP_S))
    er = Round.objects.get(pk=second.opened[0]).endpoint_rounds.get()
    assert (er.outcome, er.action) == ("fail", "floor_blocked")


def test_a_scheduled_round_waits_while_a_confirmation_round_of_its_model_runs(start_sim, use_sim):
    world(start_sim, use_sim, {})
    alpha = Endpoint.objects.get(tag="alpha/fp8")
    Round.objects.create(model_id=MODEL, language="en", started_at=T0, status=Round.Status.RUNNING,
                         trigger=Round.Triggers.CONFIRMATION, endpoint=alpha)
    with pytest.raises(Retry):
        round_start_task(MODEL, T0.isoformat())
    assert not Round.objects.filter(model_id=MODEL, trigger=Round.Triggers.SCHEDULE).exists()
