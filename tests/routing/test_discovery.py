"""Routes from the canary's discovery, over the simulator's real endpoint listing."""

from __future__ import annotations

import copy
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from canary.models import Endpoint
from canary.services.rounds import endpoints_sync
from openrouter.client import OpenRouterClient
from routing.discovery import output_modes, route_modalities, route_name, routes_sync
from routing.models import Route
from routing.services.contracts import contracts_load_file

CONTRACTS = Path(__file__).resolve().parents[2] / "routing" / "contract_files" / "workloads.json"

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
def test_a_new_route_accepts_what_the_listing_says_the_model_takes_in(start_sim, default_fleet):
    vision = copy.deepcopy(default_fleet)
    vision["models"][0]["input_modalities"] = ["text", "image"]
    discover(start_sim(vision))
    routes_sync(MODEL)
    assert {tuple(r.modalities) for r in Route.objects.filter(model_id=MODEL)} == {("text", "image")}
    # Modalities are the admin's once the route exists: a later listing does not change them.
    Route.objects.filter(provider_tag="gale/fp8").update(modalities=["text"])
    routes_sync(MODEL)
    assert Route.objects.get(provider_tag="gale/fp8").modalities == ["text"]


def test_a_new_routes_modalities_keep_the_ones_contracts_name_and_always_text():
    assert route_modalities(["image", "file", "TEXT", "audio"]) == ["text", "image", "audio"]
    assert route_modalities([]) == route_modalities(None) == ["text"]


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
    contracts_load_file(CONTRACTS)
    out = StringIO()
    call_command("routes_sync", "--model", MODEL, "--model-class", "chat-70b", stdout=out)
    assert set(Route.objects.values_list("model_class", flat=True)) == {"chat-70b"}
    Route.objects.filter(provider_tag="atlas/fp8").update(model_class="frontier")
    again = StringIO()
    call_command("routes_sync", "--model", MODEL, "--enable-new", "--model-class", "chat-70b", stdout=again)
    # An admin's class stays; nothing new was created, so nothing was enabled, and it says so.
    assert Route.objects.get(provider_tag="atlas/fp8").model_class == "frontier"
    assert not Route.objects.filter(enabled=True).exists()
    assert "15 routes created earlier are still disabled" in again.getvalue()
    with pytest.raises(CommandError, match="author/slug"):
        call_command("routes_sync", "--model", "")


@pytest.mark.django_db
def test_an_admins_edits_survive_a_sync_and_the_command_says_what_it_changed(start_sim, default_fleet):
    sim = start_sim(default_fleet)
    discover(sim)
    routes_sync(MODEL)
    # The admin knows better than the listing: gale serves tools, cinder only 32k.
    Route.objects.filter(provider_tag="gale/fp8").update(tools=True)
    Route.objects.filter(provider_tag="cinder/fp8").update(context_length=32768)
    changed = copy.deepcopy(default_fleet)
    atlas = next(e for e in changed["models"][0]["endpoints"] if e["tag"] == "atlas/fp8")
    atlas["pricing"]["completion"] = "0.000001"
    discover(start_sim(changed))
    out = StringIO()
    call_command("routes_sync", "--model", MODEL, stdout=out)
    assert Route.objects.get(provider_tag="gale/fp8").tools is True
    assert Route.objects.get(provider_tag="cinder/fp8").context_length == 32768
    assert Route.objects.get(provider_tag="atlas/fp8").price_completion_usd == Decimal("0.000001")
    text = out.getvalue()
    assert f"{route_name(MODEL, 'atlas/fp8')}: price_completion_usd 0.0000004 -> 0.000001" in text
    assert f"{route_name(MODEL, 'gale/fp8')}: tools kept at True (an admin's edit; the listing says False)" in text
    assert f"{route_name(MODEL, 'cinder/fp8')}: context_length kept at 32768" in text
    # The next sync still keeps them and changes nothing else.
    again = routes_sync(MODEL)
    assert again.updated == [] and set(again.kept) == {route_name(MODEL, "gale/fp8"), route_name(MODEL, "cinder/fp8")}


@pytest.mark.django_db
def test_a_model_class_no_contract_allows_is_refused(start_sim, default_fleet):
    contracts_load_file(CONTRACTS)
    with pytest.raises(CommandError, match="--model-class 'chat-7b' is allowed by no contract .*chat-70b"):
        call_command("routes_sync", "--model", MODEL, "--model-class", "chat-7b")
    assert not Route.objects.exists()


@pytest.mark.django_db
def test_a_price_the_listing_does_not_give_is_unknown_not_zero(start_sim, default_fleet):
    discover(start_sim(default_fleet))
    routes_sync(MODEL)
    # The listing's price stops parsing (the canary keeps it empty): unknown, not free.
    Endpoint.objects.filter(model_id=MODEL, tag="atlas/fp8").update(price_prompt_usd=None)
    out = StringIO()
    call_command("routes_sync", "--model", MODEL, stdout=out)
    assert Route.objects.get(provider_tag="atlas/fp8").price_prompt_usd is None
    [line] = [x for x in out.getvalue().splitlines() if "price_prompt_usd" in x]
    assert line.startswith(f"  {route_name(MODEL, 'atlas/fp8')}: price_prompt_usd ") and line.endswith("-> unknown")
    # A route created from such a listing starts unknown too.
    Route.objects.filter(provider_tag="atlas/fp8").delete()
    routes_sync(MODEL)
    assert Route.objects.get(provider_tag="atlas/fp8").price_prompt_usd is None
