"""User-report correlation: probes and decisions within two hours of a user's report, and
the provider behind a generation id (OpenRouter's generation endpoint)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from canary.models import Decision, ProbeResult
from canary.services import client as services

pytestmark = pytest.mark.django_db


@pytest.fixture
def served_by_cinder(start_sim, use_sim) -> str:
    """A real generation: one chat request pinned to cinder/fp8 on the simulator (which
    serves OpenRouter's generation endpoint); returns its generation id."""
    from tests.conftest import FLEETS

    use_sim(start_sim(FLEETS / "default.json"))
    call = services.openrouter_client().chat_pinned(
        "meta-llama/llama-3.3-70b-instruct", "cinder/fp8", [{"role": "user", "content": "Olá"}],
        max_tokens=50, stream=False, ttft_limit_s=10, total_timeout_s=20, expected_provider="Cinder",
    )
    assert call.outcome == "completed" and call.generation_id
    return str(call.generation_id)


def report(client: Client, at, **params) -> Any:
    query = {"at": at.strftime("%Y-%m-%dT%H:%M"), "symptom": "language", "language": "", **params}
    return client.get(reverse("admin:canary_proberesult_correlate"), query)


def test_the_form_alone_renders_without_a_report(viewer: Client, day_history):
    response = viewer.get(reverse("admin:canary_proberesult_correlate"))
    assert response.status_code == 200
    assert "report" not in response.context and b'id="report-form"' in response.content


def test_every_result_and_decision_within_two_hours(viewer: Client, day_history, now):
    at = now - timedelta(hours=5)
    response = report(viewer, at, symptom="language", language="es")
    r = response.context["report"]
    start, end = at.replace(second=0, microsecond=0) - timedelta(hours=2), at.replace(second=0, microsecond=0) + timedelta(hours=2)
    expected = ProbeResult.objects.filter(round__started_at__gte=start, round__started_at__lte=end).count()
    assert len(r["results"]) == expected > 0
    assert len(r["rounds"]) == 8 or len(r["rounds"]) == 9
    assert {d.pk for d in r["decisions"]} == set(
        Decision.objects.filter(created_at__gte=start, created_at__lte=end).values_list("pk", flat=True)
    )
    # cinder/fp8 drifts into Spanish: its language failures are the relevant ones.
    cinder = next(e for e in r["endpoints"] if e["tag"] == "cinder/fp8")
    assert cinder["relevant"] >= len(r["rounds"])
    assert r["endpoints"][0]["tag"] == "cinder/fp8"  # most relevant first
    assert all(row["kind"] == "language" for row in r["results"] if row["relevant"])
    assert response.context["lookup"] is None


def test_only_relevant_rows_on_request(viewer: Client, day_history, now):
    response = report(viewer, now - timedelta(hours=5), relevant="1")
    html = response.content.decode()
    assert html.count('class="canary-relevant') > 0
    assert "leading_punctuation" not in html.split('id="report-results"')[1]


def test_a_generation_id_names_the_serving_endpoint(viewer: Client, day_history, now, served_by_cinder):
    response = report(viewer, now - timedelta(hours=5), generation_id=f" {served_by_cinder} ")
    assert response.context["lookup"].provider_name == "Cinder"
    assert response.context["report"]["served"] == ["cinder/fp8"]
    assert response.context["report"]["endpoints"][0]["served"]
    html = response.content.decode()
    assert 'id="generation-found"' in html and "<b>Cinder</b>" in html


def test_an_unknown_generation_is_a_clear_message_not_a_500(viewer: Client, day_history, now, start_sim, use_sim):
    from tests.conftest import FLEETS

    use_sim(start_sim(FLEETS / "three-hosts.json"))
    response = report(viewer, now - timedelta(hours=5), generation_id="nope")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="generation-error"' in html and "OpenRouter has no generation" in html
    # The probes are still listed.
    assert response.context["report"]["results"]


def test_an_openrouter_failure_is_a_clear_message_not_a_500(viewer: Client, day_history, now, settings):
    from fake_openrouter.process import free_port

    settings.OPENROUTER_BASE_URL = f"http://127.0.0.1:{free_port()}/api/v1"  # nothing listens there
    response = report(viewer, now - timedelta(hours=5), generation_id="gen-1")
    assert response.status_code == 200
    assert "Could not ask OpenRouter" in response.content.decode()


def test_a_bad_time_is_a_form_error(viewer: Client, day_history):
    response = viewer.get(reverse("admin:canary_proberesult_correlate"), {"at": "yesterday-ish", "symptom": "language"})
    assert response.status_code == 200
    assert "report" not in response.context
    assert response.context["form"].errors["at"]


def test_a_window_without_rounds_says_so(viewer: Client, day_history, now):
    response = report(viewer, now - timedelta(days=20))
    assert response.context["report"]["rounds"] == []
    assert "No rounds of this model in the window." in response.content.decode()


def test_a_pasted_reply_is_judged_as_a_probe_would(viewer: Client, day_history, now):
    refusal = "I'm sorry, but I cannot provide instructions on how to do that."
    response = report(viewer, now - timedelta(hours=5), language="en", reply=refusal)
    judged = response.context["reply_judgement"]
    assert (judged["check"], judged["verdict"]) == ("refusal", "fail")
    assert {j["check"] for j in judged["judgements"]} >= {"refusal", "structured_output"}
    assert b'id="reply-judgement"' in response.content
    response = report(viewer, now - timedelta(hours=5), language="pt", reply="Ela sorriu e abriu a porta do farol.")
    assert response.context["reply_judgement"]["verdict"] != "fail"


def test_no_pasted_reply_no_judgement(viewer: Client, day_history, now):
    assert "reply_judgement" not in report(viewer, now - timedelta(hours=5)).context
