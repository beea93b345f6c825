"""Malformed input from the third fresh-user trial: a verdict or a clear error, never a
crash or a round left running."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from canary.models import Endpoint
from canary.services.rounds import endpoints_sync
from fake_openrouter.fleet import FleetError, parse_fleet
from openrouter.endpoints import EndpointInfo
from routing.contracts import ContractError
from routing.services.contracts import contracts_load_file

MODEL = "author/slug"


def info(tag: str, name: str = "Acme", quantization: str = "fp8") -> EndpointInfo:
    return EndpointInfo(tag, name, tag.split("/")[0], quantization, 8192, ("max_tokens",), None, None, None, 0, raw={})


@pytest.mark.django_db
def test_a_listing_with_over_long_fields_is_stored_cut_or_skipped_not_a_database_error():
    rows = endpoints_sync(MODEL, [info("acme/fp8", "N" * 500, "q" * 80), info("x" * 300 + "/fp8")], timezone.now())
    assert [ep.tag for ep in rows] == ["acme/fp8"]
    ep = Endpoint.objects.get()
    assert (len(ep.provider_name), len(ep.quantization)) == (200, 50)


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"seed": 1' + "9" * 5000 + "}"])
def test_fleet_json_too_deep_or_with_a_huge_integer_is_a_fleet_error(text):
    with pytest.raises(FleetError, match="invalid JSON"):
        parse_fleet(text)


@pytest.mark.django_db
def test_contract_files_too_deep_are_a_contract_error_naming_the_file(tmp_path: Path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ContractError, match="deep.json: invalid JSON: arrays or objects nested too deeply"):
        contracts_load_file(path)
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": ')
    with pytest.raises(ContractError, match="bad.json: invalid JSON"):
        contracts_load_file(bad)


@pytest.mark.django_db
def test_exclusions_too_deep_are_refused(tmp_path: Path):
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"exclusions": []})[:-1] + "," + '"a":' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(CommandError, match="nested too deeply"):
        call_command("exclusions_load", str(path))


@pytest.mark.django_db
@pytest.mark.parametrize("model_class", ["c" * 51, "bad class", "bad\nclass"])
def test_routes_sync_refuses_a_model_class_the_route_cannot_hold(model_class):
    with pytest.raises(CommandError, match="--model-class"):
        call_command("routes_sync", "--model", MODEL, "--model-class", model_class)
