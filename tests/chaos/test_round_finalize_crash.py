"""A finaliser that dies between storing the judgement and applying the policy: the
round is not left in ``finalizing``, the overdue-round sweep finalises it, and the
policy's decisions exist exactly once. Real rounds over HTTP to the simulator, real
PostgreSQL; the crash is an exception raised at the finaliser's hook point."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command

from canary.models import Decision, EndpointRound, Round
from canary.services import rounds
from tests.conftest import FLEETS

pytestmark = pytest.mark.django_db(transaction=True)

MODEL = "meta-llama/llama-3.3-70b-instruct"


class Killed(BaseException):
    """Stands for the process dying: not an ``Exception``, so nothing on the way catches it."""


def run_round(*args: str) -> dict:
    out = StringIO()
    call_command("canary_round", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def test_a_finaliser_killed_before_the_policy_step_is_recovered_with_the_policy_applied_once(start_sim, use_sim, monkeypatch):
    use_sim(start_sim(FLEETS / "three-hosts.json"))
    run_round("--mode", "enforce", "--language", "pt", "--now", "2026-11-29T10:00:00Z")

    def die(step: str, round_id: int) -> None:
        raise Killed(step)

    monkeypatch.setattr(rounds, "finalize_hook", die)
    with pytest.raises(Killed):
        run_round("--mode", "enforce", "--language", "pt", "--now", "2026-11-29T10:30:00Z")
    monkeypatch.undo()
    second = Round.objects.order_by("-pk").first()
    assert second is not None
    # Nothing of the dead finaliser's work survived, and the round can be taken again.
    assert second.status == Round.Status.RUNNING
    assert not EndpointRound.objects.filter(round=second).exists()
    assert not Decision.objects.filter(round=second).exists()

    after_budget = second.deadline_at + timedelta(seconds=1)
    assert rounds.round_close_stuck(MODEL, after_budget) == [second.pk]
    second.refresh_from_db()
    assert second.status == Round.Status.COMPLETED
    suspended = Decision.objects.filter(round=second, action="suspended")
    assert list(suspended.values_list("endpoint__tag", flat=True)) == ["borealis/fp8"]
    decisions = Decision.objects.filter(round=second).count()
    # Idempotent: a late finaliser and a second sweep change nothing.
    assert rounds.round_finalize(second.pk) is None
    assert rounds.round_close_stuck(MODEL, after_budget) == []
    assert Decision.objects.filter(round=second).count() == decisions and suspended.count() == 1


def test_a_round_left_in_finalizing_is_finalised_by_the_sweep(start_sim, use_sim, monkeypatch):
    use_sim(start_sim(FLEETS / "three-hosts.json"))
    monkeypatch.setattr(rounds, "finalize_hook", lambda step, round_id: (_ for _ in ()).throw(Killed(step)))
    with pytest.raises(Killed):
        run_round("--language", "pt", "--now", "2026-11-29T10:00:00Z")
    monkeypatch.undo()
    rnd = Round.objects.get()
    # What an earlier version's crash left behind: the claim committed on its own.
    Round.objects.filter(pk=rnd.pk).update(status=Round.Status.FINALIZING)
    assert rounds.round_close_stuck(MODEL, rnd.deadline_at + timedelta(seconds=1)) == [rnd.pk]
    rnd.refresh_from_db()
    assert rnd.status == Round.Status.COMPLETED
    assert EndpointRound.objects.filter(round=rnd).count() == 3
