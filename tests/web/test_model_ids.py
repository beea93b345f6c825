"""Admin doors that take a model id answer a malformed one with a page or form error
naming the field (``core.identifiers.validate_model_id``), never a silent default."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from routing.models import Route

pytestmark = pytest.mark.django_db

PAGES = ["admin:canary_round_health", "admin:canary_decision_observe_report", "admin:canary_round_probe_health"]


def page_messages(response) -> list[tuple[str, str]]:
    return [(m.level_tag, m.message) for m in response.context["messages"]]


@pytest.mark.parametrize("page", PAGES)
def test_a_malformed_model_parameter_is_an_error_on_the_page(viewer: Client, page: str) -> None:
    response = viewer.get(reverse(page), {"model": "meta-llama/llama-3.3-70b/instruct"})
    assert response.status_code == 200
    (level, message), = page_messages(response)
    assert level == "error"
    assert message.startswith("model: a model id must look like 'author/slug' with exactly one '/'")
    assert message.endswith(f"showing {settings.CANARY_MODEL}")
    html = response.content.decode().replace("&#x27;", "'")
    assert '<li class="error">Model: a model id must look like' in html and f"showing {settings.CANARY_MODEL}</li>" in html


def test_a_model_the_canary_has_no_data_for_is_a_warning_and_the_configured_model_no_message(viewer: Client) -> None:
    response = viewer.get(reverse("admin:canary_round_health"), {"model": "Vendor/Unknown"})
    assert page_messages(response) == [
        ("warning", f"model: the canary has no data for vendor/unknown; showing {settings.CANARY_MODEL}")
    ]
    assert page_messages(viewer.get(reverse("admin:canary_round_health"), {"model": settings.CANARY_MODEL.upper()})) == []


def route_form(model_id: str) -> dict[str, str]:
    return {
        "name": "atlas-fp8", "model_id": model_id, "provider_tag": "atlas/fp8", "base_url": "", "api_key_setting": "",
        "modalities": '["text"]', "context_length": "131072", "output_modes": "[]", "model_class": "",
        "price_prompt_usd": "0", "price_completion_usd": "0", "region": "", "enabled": "on", "health": "1.0",
        "latency_ms": "", "structured_honoured": "", "measured_at_0": "", "measured_at_1": "",
    }


@pytest.mark.parametrize("model_id", ["a/b/c", "noslash", "a/b?x=1"])
def test_a_route_with_a_malformed_model_id_is_a_form_error(staff, model_id: str) -> None:
    root = staff(None, superuser=True)
    response = root.post(reverse("admin:routing_route_add"), route_form(model_id))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert list(errors) == ["model_id"]
    assert "a model id" in errors["model_id"][0]
    assert not Route.objects.exists()


def test_a_route_model_id_is_stored_in_its_canonical_form(staff) -> None:
    root = staff(None, superuser=True)
    response = root.post(reverse("admin:routing_route_add"), route_form(" Meta-Llama/Llama-3.3-70B-Instruct"))
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert Route.objects.get().model_id == "meta-llama/llama-3.3-70b-instruct"
