"""Routing contracts: strict parsing and versions in the database."""

from __future__ import annotations

import json
import re
import time

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from routing.contracts import ContractError, contract_from_dict, contract_to_dict
from routing.models import ContractVersion
from routing.services.chat import chat_completion_create
from routing.services.contracts import contract_get, contract_version_create, contracts_load_file
from routing.services.wiring import gateway_reset

INVOICE = {
    "name": "invoice-extract", "version": 1, "workload": "structured", "output_mode": "json_schema",
    "output_schema": {"type": "object", "required": ["total", "currency"],
                      "properties": {"total": {"type": "number"}, "currency": {"type": "string"}}},
    "semantic_checks": ["invoice_totals_non_negative", {"name": "currency_code_valid", "params": {"field": "currency"}}],
    "deadline_s": 20, "max_attempts": 2, "max_fallbacks": 1,
}


def test_a_full_contract_round_trips():
    contract = contract_from_dict(INVOICE)
    assert contract.key == "invoice-extract@1" and contract.allowances.required_s == pytest.approx(1.6)
    assert contract_from_dict(contract_to_dict(contract)) == contract


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"colour": "blue"}, "unknown field(s) ['colour']"),
        ({"max_fallbacks": 2, "max_attempts": None}, "max_fallbacks is 2 but max_attempts"),
        ({"workload": "poetry"}, "workload: 'poetry' is not one of"),
        ({"deadline_s": -1}, "deadline_s: must be > 0"),
        ({"deadline_s": "soon"}, "deadline_s: expected a number"),
        ({"max_attempts": 9}, "max_attempts: at most 5"),
        ({"output_schema": {"type": "nonsense"}}, "output_schema: not a valid JSON Schema"),
        ({"semantic_checks": ["vibes_ok"]}, "unknown check 'vibes_ok'"),
        ({"hedge": True}, "hedge: only for contracts marked latency_critical"),
        ({"hedge": True, "latency_critical": True, "side_effects": True}, "hedge: not allowed with side_effects"),
        ({"deadline_s": 1, "generation_s": 2}, "exceeds deadline_s"),
        ({"modalities": ["smell"]}, "modalities: unknown value(s) ['smell']"),
    ],
)
def test_bad_contracts_are_rejected_with_a_clear_message(change, message):
    with pytest.raises(ContractError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[").replace("]", r"\]")):
        contract_from_dict({**INVOICE, **change})


def test_fallbacks_without_an_attempt_budget_are_rejected():
    spec = {k: v for k, v in INVOICE.items() if k != "max_attempts"}
    with pytest.raises(ContractError, match="attempt budget"):
        contract_from_dict(spec)


def test_the_default_policy_is_one_primary_plus_one_fallback():
    contract = contract_from_dict({"name": "chat", "version": 1, "workload": "text"})
    assert (contract.max_fallbacks, contract.attempt_budget) == (1, 3)


@pytest.mark.django_db
def test_a_contract_change_creates_a_new_version():
    gateway_reset()
    first = contract_version_create(dict(INVOICE), actor="alice")
    second = contract_version_create({**INVOICE, "deadline_s": 12}, actor="bob")
    assert (first.version, second.version) == (1, 2)
    assert contract_get("invoice-extract", 1).deadline_s == 20
    assert contract_get("invoice-extract", 2).deadline_s == 12


@pytest.mark.django_db
def test_a_version_in_use_is_immutable():
    gateway_reset()
    row = contract_version_create(dict(INVOICE))
    contract_get("invoice-extract", 1)  # a request ran under it
    row.refresh_from_db()
    assert row.first_used_at is not None
    row.spec = {**row.spec, "deadline_s": 5}
    with pytest.raises(ValidationError, match="in use and immutable"):
        row.save()
    assert ContractVersion.objects.get(pk=row.pk).spec["deadline_s"] == 20


@pytest.mark.django_db
def test_contracts_load_from_files_and_skip_unchanged(tmp_path):
    path = tmp_path / "contracts.json"
    path.write_text(json.dumps([INVOICE, {"name": "chat", "version": 1, "workload": "text"}]))
    assert [str(c) for c in contracts_load_file(path)] == ["invoice-extract@1", "chat@1"]
    assert contracts_load_file(path) == []
    path.write_text(json.dumps([{**INVOICE, "version": 2, "deadline_s": 9}]))
    assert [str(c) for c in contracts_load_file(path)] == ["invoice-extract@2"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("version", "message"),
    [
        (1, "'invoice-extract': version 1 in the file, but the load would assign 2"),
        (5, "'invoice-extract': version 5 in the file, but the load would assign 2"),
        ("2", "'invoice-extract': version must be an integer, got '2'; the load would assign 2"),
        (2.0, "'invoice-extract': version must be an integer, got 2.0; the load would assign 2"),
        (True, "'invoice-extract': version must be an integer, got True; the load would assign 2"),
    ],
)
def test_a_file_version_other_than_the_one_the_load_assigns_is_refused(tmp_path, version, message):
    path = tmp_path / "contracts.json"
    path.write_text(json.dumps([INVOICE]))
    contracts_load_file(path)
    path.write_text(json.dumps([{"name": "chat", "version": 1, "workload": "text"}, {**INVOICE, "version": version, "deadline_s": 9}]))
    with pytest.raises(ContractError, match=re.escape(f"contracts.json entry 1: {message}")):
        contracts_load_file(path)
    assert list(ContractVersion.objects.values_list("name", "version")) == [("invoice-extract", 1)]


@pytest.mark.django_db
def test_an_unchanged_entry_must_carry_its_stored_version_and_a_new_name_starts_at_1(tmp_path):
    path = tmp_path / "contracts.json"
    path.write_text(json.dumps([{"name": "chat", "version": 2, "workload": "text"}]))
    with pytest.raises(ContractError, match="'chat': version 2 in the file, but the load would assign 1"):
        contracts_load_file(path)
    path.write_text(json.dumps([INVOICE]))
    contracts_load_file(path)
    path.write_text(json.dumps([{**INVOICE, "version": 2}]))
    with pytest.raises(ContractError, match="version 2 in the file, but the load would assign 1"):
        contracts_load_file(path)


@pytest.mark.django_db
def test_two_entries_with_one_name_in_a_file_are_refused(tmp_path):
    path = tmp_path / "contracts.json"
    path.write_text(json.dumps([INVOICE, {"name": "chat", "version": 1, "workload": "text"}, {**INVOICE, "deadline_s": 9}]))
    with pytest.raises(ContractError, match="entries 0 and 2 both name the contract 'invoice-extract'"):
        contracts_load_file(path)
    assert not ContractVersion.objects.exists()


@pytest.mark.django_db
def test_an_invalid_file_stores_nothing(tmp_path):
    path = tmp_path / "contracts.json"
    path.write_text(json.dumps([{"name": "chat", "version": 1, "workload": "text"}, {**INVOICE, "typo_field": 1}]))
    with pytest.raises(ContractError, match="entry 1: unknown field"):
        contracts_load_file(path)
    assert not ContractVersion.objects.exists()


ROLEPLAY = {"name": "roleplay-reply", "version": 1, "workload": "text", "deadline_s": 20, "first_token_s": 4}


def test_a_text_contract_commits_after_a_prefix_and_a_structured_one_buffers():
    assert contract_from_dict(ROLEPLAY).stream_commit.mode == "prefix"
    assert contract_from_dict(INVOICE).stream_commit.mode == "buffer"


def test_a_prefix_commit_round_trips():
    contract = contract_from_dict({**ROLEPLAY, "stream_commit": {"mode": "prefix", "hold_chars": 40, "hold_ms": 150}})
    assert (contract.stream_commit.hold_chars, contract.stream_commit.hold_ms) == (40, 150.0)
    assert contract_from_dict(contract_to_dict(contract)) == contract


def test_the_default_hold_fits_a_tight_first_token_limit():
    contract = contract_from_dict({**ROLEPLAY, "first_token_s": 0.2})
    assert contract.stream_commit.hold_ms == pytest.approx(100.0)


@pytest.mark.parametrize(
    ("commit", "message"),
    [
        ({"mode": "prefix", "hold_ms": 4000}, "stream_commit.hold_ms: 4000 ms is not shorter than first_token_s (4 s)"),
        ({"mode": "eager"}, "stream_commit.mode: expected one of"),
        ({"mode": "prefix", "hold_chars": 0}, "hold_chars: must be >= 1"),
        ({"mode": "buffer", "hold_ms": 10}, "apply to mode prefix only"),
        ({"mode": "prefix", "hold_bytes": 10}, "stream_commit: unknown field(s) ['hold_bytes']"),
    ],
)
def test_a_bad_commit_point_is_refused_naming_the_field(commit, message):
    with pytest.raises(ContractError) as caught:
        contract_from_dict({**ROLEPLAY, "stream_commit": commit})
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"output_schema": {"type": "object", "properties": {"total": {"$ref": "URL"}}}}, "output_schema"),
        ({"workload": "tools", "output_mode": "none", "output_schema": None,
          "tools": {"refund": {"type": "object", "properties": {"total": {"$ref": "URL"}}}}}, "tools.refund"),
    ],
)
def test_a_schema_with_a_remote_ref_is_refused_at_load_and_never_fetched(schema_host, change, where):
    spec = json.loads(json.dumps({**INVOICE, **change}).replace('"URL"', json.dumps(schema_host.url)))
    with pytest.raises(ContractError) as refused:
        contract_from_dict(spec)
    assert str(refused.value) == (
        f"{where}: $ref '{schema_host.url}' at $.properties.total does not resolve within the schema"
        " (references are never fetched)"
    )
    assert schema_host.gets == 0


@pytest.mark.django_db
def test_a_stored_contract_with_a_remote_ref_is_refused_at_once_without_a_fetch(schema_host):
    # A version stored before remote refs were refused: the gateway answers at once,
    # rather than fetching the schema on each attempt past the contract's deadline.
    gateway_reset()
    spec = {**INVOICE, "output_schema": {"$ref": schema_host.url}}
    ContractVersion.objects.create(name=INVOICE["name"], version=1, spec=spec, created_at=timezone.now())
    started = time.monotonic()
    reply = chat_completion_create(INVOICE["name"], 1, {"messages": [{"role": "user", "content": "hi"}]})
    assert time.monotonic() - started < INVOICE["deadline_s"]
    assert reply.status == 500 and reply.body["error"]["code"] == "invalid_contract"
    assert f"$ref '{schema_host.url}' at $ does not resolve" in reply.body["error"]["message"]
    assert schema_host.gets == 0


@pytest.mark.parametrize(("language", "read", "refused"), [
    ("pt", "pt", None), ("PT-br", "pt", None), ("xx", None, "expected_language: unknown language 'xx'"),
    (5, None, "expected_language: an ISO 639-1 code such as 'pt', got 5"),
])
def test_a_contract_expects_one_of_the_languages_the_judge_reads(language, read, refused):
    if refused is None:
        assert contract_from_dict({**ROLEPLAY, "expected_language": language}).expected_language == read
        return
    with pytest.raises(ContractError, match=refused):
        contract_from_dict({**ROLEPLAY, "expected_language": language})


@pytest.mark.parametrize("key", ["deadline_s", "backoff_cap_s", "first_token_s"])
def test_a_time_past_an_hour_is_refused_naming_the_field(key):
    with pytest.raises(ContractError, match=f"{key}: at most 3600 s \\(an hour\\), got 1e\\+300"):
        contract_from_dict({**ROLEPLAY, key: 1e300})


@pytest.mark.django_db
def test_a_bad_value_in_a_changed_contract_is_named_before_its_version(tmp_path):
    path = tmp_path / "contracts.json"
    path.write_text(json.dumps([INVOICE]))
    contracts_load_file(path)
    # The edit is the mistake, and the version was not bumped: the value is what to fix.
    path.write_text(json.dumps([{**INVOICE, "deadline_s": -3}]))
    with pytest.raises(ContractError, match=re.escape("contracts.json entry 0: deadline_s: must be > 0, got -3")):
        contracts_load_file(path)
