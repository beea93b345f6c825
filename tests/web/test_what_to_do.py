"""The endpoint page says what to do when the last round froze or the endpoint is suspended."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from canary.models import EndpointPolicyState, EndpointRound

pytestmark = pytest.mark.django_db


def _page(viewer: Client, endpoint_id: int) -> str:
    return viewer.get(reverse("admin:canary_endpoint_history", args=[endpoint_id])).content.decode()


def test_a_frozen_endpoint_says_the_canary_could_not_judge_it_and_points_to_the_breakers(viewer: Client, day_history):
    last = EndpointRound.objects.filter(endpoint__tag="atlas/fp8").order_by("-round__started_at").first()
    last.outcome = "frozen"
    last.save(update_fields=["outcome"])
    page = _page(viewer, last.endpoint_id)
    note = page.split('id="what-to-do"')[1].split("</p>")[0]
    assert "frozen means the canary could not judge this endpoint" in note
    assert "Circuit breakers" in note


def test_a_suspended_endpoint_says_routing_avoids_it_until_the_suspension_ends(viewer: Client, day_history, now):
    state = EndpointPolicyState.objects.filter(enforced=True, suspended_until__gt=now).select_related("endpoint").first()
    assert state is not None
    last = EndpointRound.objects.filter(endpoint=state.endpoint).order_by("-round__started_at").first()
    if last.outcome == "frozen":
        last.outcome = "fail"
        last.save(update_fields=["outcome"])
    note = _page(viewer, state.endpoint_id).split('id="what-to-do"')[1].split("</p>")[0]
    assert "routing avoids this endpoint until its suspension ends" in note

