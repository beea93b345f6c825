"""User-report correlation: probes and decisions within two hours of a user's report, and
the provider behind a generation id (OpenRouter's generation endpoint)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from canary import services
from canary.models import Decision, ProbeResult
from canary.openrouter import GenerationError, GenerationNotFoundError
from tests.web.conftest import simulator_available

pytestmark = pytest.mark.django_db


class FakeClient:
    """Stands in for ``OpenRouterClient``: answers ``get_generation`` or raises."""

    def __init__(self, answer: dict[str, Any] | Exception) -> None:
        self.answer = answer
        self.closed = False
        self.asked: list[str] = []

    def get_generation(self, generation_id: str) -> dict[str, Any]:
        self.asked.append(generation_id)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def fake_openrouter(monkeypatch):
    def _install(answer: dict[str, Any] | Exception) -> FakeClient:
        fake = FakeClient(answer)
        monkeypatch.setattr(services, "openrouter_client", lambda: fake)
        return fake

    return _install


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


def test_a_generation_id_names_the_serving_endpoint(viewer: Client, day_history, now, fake_openrouter):
    fake = fake_openrouter({"id": "gen-123", "provider_name": "Cinder", "model": "meta-llama/llama-3.3-70b-instruct", "latency": 812})
    response = report(viewer, now - timedelta(hours=5), generation_id=" gen-123 ")
    assert fake.asked == ["gen-123"] and fake.closed
    assert response.context["lookup"].provider_name == "Cinder"
    assert response.context["report"]["served"] == ["cinder/fp8"]
    assert response.context["report"]["endpoints"][0]["served"]
    html = response.content.decode()
    assert 'id="generation-found"' in html and "<b>Cinder</b>" in html


def test_an_unknown_generation_is_a_clear_message_not_a_500(viewer: Client, day_history, now, fake_openrouter):
    fake_openrouter(GenerationNotFoundError("generation 'nope' not found (HTTP 404)", status=404))
    response = report(viewer, now - timedelta(hours=5), generation_id="nope")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="generation-error"' in html and "OpenRouter has no generation" in html
    # The probes are still listed.
    assert response.context["report"]["results"]


def test_an_openrouter_failure_is_a_clear_message_not_a_500(viewer: Client, day_history, now, fake_openrouter):
    fake_openrouter(GenerationError("GET /generation: timed out (ReadTimeout)"))
    response = report(viewer, now - timedelta(hours=5), generation_id="gen-1")
    assert response.status_code == 200
    assert "Could not ask OpenRouter" in response.content.decode()
    assert "timed out" in response.content.decode()


def test_a_bad_time_is_a_form_error(viewer: Client, day_history):
    response = viewer.get(reverse("admin:canary_proberesult_correlate"), {"at": "yesterday-ish", "symptom": "language"})
    assert response.status_code == 200
    assert "report" not in response.context
    assert response.context["form"].errors["at"]


def test_a_window_without_rounds_says_so(viewer: Client, day_history, now):
    response = report(viewer, now - timedelta(days=20))
    assert response.context["report"]["rounds"] == []
    assert "No rounds of this model in the window." in response.content.decode()


@pytest.mark.skipif(not simulator_available(), reason="the OpenRouter simulator command is not there yet")
def test_generation_lookup_against_the_simulator(viewer: Client, start_sim, use_sim, day_history, now):
    """The simulator serves OpenRouter's generation endpoint: an unknown id is a 404."""
    from tests.conftest import FLEETS

    use_sim(start_sim(FLEETS / "three-hosts.json"))
    response = report(viewer, now - timedelta(hours=5), generation_id="gen-does-not-exist")
    assert response.status_code == 200
    assert response.context["lookup"].error
