"""Routes from the canary's discovery, over the simulator's real endpoint listing."""

from __future__ import annotations

import copy
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from canary.services.rounds import endpoints_sync
from openrouter.client import OpenRouterClient
from routing.discovery import output_modes, route_name, routes_sync
from routing.models import Route

MODEL = "meta-llama/llama-3.3-70b-instruct"


def discover(sim) -> None:  # type: ignore[no-untyped-def]
    with OpenRouterClient(base_url=sim.base_url) as client:
        endpoints_sync(MODEL, client.list_endpoints(MODEL), timezone.now())


@pytest.mark.django_db
def test_every_discovered_endpoint_becomes_a_disabled_pinned_route(start_sim, default_fleet):
    sim = start_sim(default_fleet)
    discover(sim)
    result = routes_sync(MODEL)
    listed = default_fleet["models"][0]["endpoints"]
    assert len(result.created) == len(listed) and not result.updated and not result.disabled
    gale = Route.objects.get(provider_tag="gale/fp8")
    spec = next(e for e in listed if e["tag"] == "gale/fp8")
    assert gale.name == "llama-3-3-70b-instruct-gale-fp8"
    assert gale.enabled is False and gale.base_url == "" and gale.model_id == MODEL
    assert gale.context_length == default_fleet["models"][0]["context_length"]
    assert gale.output_modes == output_modes(spec["supported_parameters"])
    assert gale.price_prompt_usd == Decimal(spec["pricing"]["prompt"])
    # A second run changes nothing.
    again = routes_sync(MODEL)
    assert (again.created, again.updated, again.disabled) == ([], [], [])


@pytest.mark.django_db
def test_listing_changes_update_profiles_and_disable_delisted_routes_but_keep_admin_fields(start_sim, default_fleet):
    sim = start_sim(default_fleet)
    discover(sim)
    routes_sync(MODEL, enable_new=True)
    Route.objects.filter(provider_tag="atlas/fp8").update(model_class="frontier", region="eu")
    changed = copy.deepcopy(default_fleet)
    eps = changed["models"][0]["endpoints"]
    atlas = next(e for e in eps if e["tag"] == "atlas/fp8")
    atlas["pricing"]["prompt"] = "0.000009"
    atlas["context_length"] = 4096
    changed["models"][0]["endpoints"] = [e for e in eps if e["tag"] != "orchid/fp8"]
    sim2 = start_sim(changed)
    discover(sim2)
    result = routes_sync(MODEL)
    assert result.updated == [route_name(MODEL, "atlas/fp8")]
    assert result.disabled == [route_name(MODEL, "orchid/fp8")]
    atlas_route = Route.objects.get(provider_tag="atlas/fp8")
    assert (atlas_route.context_length, atlas_route.price_prompt_usd) == (4096, Decimal("0.000009"))
    assert (atlas_route.model_class, atlas_route.region, atlas_route.enabled) == ("frontier", "eu", True)
    assert Route.objects.get(provider_tag="orchid/fp8").enabled is False


def test_output_modes_follow_the_listing_vocabulary():
    assert output_modes(["max_tokens"]) == []
    assert output_modes(["response_format"]) == ["json_object"]
    assert output_modes(["response_format", "structured_outputs"]) == ["json_object", "json_schema"]


@pytest.mark.django_db
def test_the_command_refuses_a_model_the_canary_never_discovered():
    with pytest.raises(CommandError, match="run a canary round for it first"):
        call_command("routes_sync", "--model", "acme/unknown")


@pytest.mark.django_db
def test_model_class_and_the_hint_about_routes_still_waiting_for_an_admin(start_sim, default_fleet):
    sim = start_sim(default_fleet)
    discover(sim)
    out = StringIO()
    call_command("routes_sync", "--model", MODEL, "--model-class", "chat-70b", stdout=out)
    assert set(Route.objects.values_list("model_class", flat=True)) == {"chat-70b"}
    Route.objects.filter(provider_tag="atlas/fp8").update(model_class="frontier")
    again = StringIO()
    call_command("routes_sync", "--model", MODEL, "--enable-new", "--model-class", "other", stdout=again)
    # An admin's class stays; nothing new was created, so nothing was enabled, and it says so.
    assert Route.objects.get(provider_tag="atlas/fp8").model_class == "frontier"
    assert not Route.objects.filter(enabled=True).exists()
    assert "15 routes created earlier are still disabled" in again.getvalue()
    with pytest.raises(CommandError, match="author/slug"):
        call_command("routes_sync", "--model", "")
