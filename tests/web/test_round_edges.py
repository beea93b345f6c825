"""Rounds at their edges, over real HTTP to the simulator: an empty endpoint listing, and
a manual round that finds an earlier round stuck running."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from canary.models import Decision, ModelConfig, Notification, Round
from canary.terms import Action
from tests.conftest import FLEETS

pytestmark = pytest.mark.django_db
MODEL = "meta-llama/llama-3.3-70b-instruct"
EMPTY_FLEET = {"seed": 1, "models": [{"id": MODEL, "context_length": 131072, "endpoints": []}]}


def run_round(*args: str) -> tuple[dict, str]:
    out, err = StringIO(), StringIO()
    call_command("canary_round", "--json", "--language", "pt", *args, stdout=out, stderr=err)
    return json.loads(out.getvalue()), err.getvalue()


def test_an_empty_listing_completes_the_round_warns_notifies_and_shows_on_the_matrix(start_sim, use_sim, operator: Client):
    use_sim(start_sim(EMPTY_FLEET))
    report, err = run_round()
    assert report["status"] == "completed" and report["endpoints"] == []
    assert "warning" in err and "the model lists no endpoints: is it delisted or renamed?" in err
    note = Notification.objects.get(kind=Action.LISTING_EMPTY)
    assert note.model_id == MODEL and "is it delisted or renamed?" in note.title
    assert Decision.objects.get(action=Action.LISTING_EMPTY).round_id == report["round"]
    page = operator.get(reverse("admin:canary_round_health"), {"model": MODEL})
    assert page.context["empty_listing"] is True and page.context["rows"][0].no_endpoints
    html = page.content.decode()
    assert 'id="listing-empty"' in html and "The model lists no endpoints: is it delisted or renamed?" in html


def test_a_listing_with_endpoints_raises_no_such_warning(start_sim, use_sim, operator: Client):
    use_sim(start_sim(FLEETS / "three-hosts.json"))
    report, err = run_round()
    assert len(report["endpoints"]) == 3 and "no endpoints" not in err
    assert not Notification.objects.filter(kind=Action.LISTING_EMPTY).exists()
    page = operator.get(reverse("admin:canary_round_health"), {"model": MODEL})
    assert page.context["empty_listing"] is False and 'id="listing-empty"' not in page.content.decode()


def test_a_manual_round_closes_rounds_stuck_running_like_the_scheduled_trigger(start_sim, use_sim):
    use_sim(start_sim(EMPTY_FLEET))
    now = timezone.now()
    stuck = Round.objects.create(model_id=MODEL, language="pt", started_at=now - timedelta(hours=2),
                                 deadline_at=now - timedelta(hours=1), status=Round.Status.RUNNING)
    within_budget = Round.objects.create(model_id=MODEL, language="pt", started_at=now,
                                         deadline_at=now + timedelta(hours=1), status=Round.Status.RUNNING)
    _, err = run_round()
    stuck.refresh_from_db()
    within_budget.refresh_from_db()
    assert stuck.status == Round.Status.COMPLETED and stuck.finished_at is not None
    assert within_budget.status == Round.Status.RUNNING  # still inside its budget: left alone
    assert f"closed 1 round(s) of {MODEL} stuck running past their budget: {stuck.pk}" in err


def test_the_dashboards_take_an_upper_cased_model_id_for_the_same_model(operator: Client, settings):
    settings.CANARY_MODEL = "acme/other-model"
    for model in (MODEL, "acme/other-model"):
        ModelConfig.objects.create(model_id=model)
    page = operator.get(reverse("admin:canary_round_health"), {"model": MODEL.upper()})
    assert page.context["model"] == MODEL
