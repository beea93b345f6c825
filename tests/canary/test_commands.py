"""Management commands of the route quarantine: reviewed exclusions from a versioned file,
the ignore list, the policy replay, service tokens."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from canary.models import (
    Decision,
    Endpoint,
    EndpointRound,
    Exclusion,
    Provider,
    Round,
)
from core.models import ServiceToken

MODEL = "meta-llama/llama-3.3-70b-instruct"
REPO_FILE = Path(__file__).resolve().parents[2] / "canary" / "exclusions" / "reviewed.json"
pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_the_repos_reviewed_file_loads_and_reloading_is_idempotent():
    assert "1 added" in run("exclusions_load", str(REPO_FILE))
    assert "0 added, 0 removed" in run("exclusions_load", str(REPO_FILE))
    row = Exclusion.objects.get(layer="reviewed", active=True)
    assert (row.target, row.created_by) == ("dynamo", "founding-team")
    assert json.loads(run("ignore_list", "--model", MODEL, "--json"))["sources"]["reviewed"] == ["dynamo"]


def test_an_entry_dropped_from_the_file_is_deactivated_with_an_audit_row(tmp_path):
    path = tmp_path / "reviewed.json"
    entry = {"model": MODEL, "target": "dynamo", "reason": "filter", "reviewer": "ana"}
    path.write_text(json.dumps({"exclusions": [entry]}))
    run("exclusions_load", str(path))
    path.write_text(json.dumps({"exclusions": []}))
    assert "1 removed" in run("exclusions_load", str(path))
    assert not Exclusion.objects.filter(active=True).exists()
    assert Decision.objects.filter(action="exclusion_removed").count() == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "invalid JSON at line 1"),
        ('{"exclusion": []}', "one key 'exclusions'"),
        ('{"exclusions": [{"model": "m", "target": "dynamo", "reason": "r", "reviewer": "a", "extra": 1}]}', r"exclusions\[0\].extra: unknown key"),
        ('{"exclusions": [{"model": "m", "target": "dynamo", "reason": " ", "reviewer": "a"}]}', r"exclusions\[0\].reason: required"),
        ('{"exclusions": [{"model": "m", "target": "Bad Slug!", "reason": "r", "reviewer": "a"}]}', r"exclusions\[0\].target"),
    ],
)
def test_a_bad_reviewed_file_is_refused_with_the_path_of_the_problem(tmp_path, content, message):
    path = tmp_path / "reviewed.json"
    path.write_text(content)
    with pytest.raises(CommandError, match=message):
        run("exclusions_load", str(path))
    assert not Exclusion.objects.exists()


def test_replay_prints_what_would_have_been_suspended_with_overridable_thresholds():
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    provider = Provider.objects.create(slug="borealis", name="Borealis", first_seen=t0, last_seen=t0)
    eps = [
        Endpoint.objects.create(model_id=MODEL, tag=f"{slug}/fp8", provider=provider, provider_name=slug, first_seen=t0, last_seen=t0)
        for slug in ("borealis", "atlas", "harbor")
    ]
    for i in range(3):
        rnd = Round.objects.create(model_id=MODEL, language="pt", started_at=t0 + timedelta(minutes=30 * i), status="completed")
        for ep in eps:
            EndpointRound.objects.create(round=rnd, endpoint=ep, outcome="fail" if ep.tag == "borealis/fp8" else "clean", severity=1, created_at=rnd.started_at)
    default = json.loads(run("canary_replay", "--model", MODEL, "--since", "2026-10-31T00:00:00Z", "--until", "2026-11-02T00:00:00Z", "--json"))
    assert default["rounds"] == 3 and default["suspensions"] == 1
    assert default["actions"][0]["at"].startswith("2026-11-01T00:30")
    stricter = json.loads(run("canary_replay", "--model", MODEL, "--since", "2026-10-31T00:00:00Z", "--until", "2026-11-02T00:00:00Z", "--fail-rounds", "3", "--json"))
    assert stricter["actions"][0]["at"].startswith("2026-11-01T01:00")
    with pytest.raises(CommandError, match="bad threshold"):
        run("canary_replay", "--model", MODEL, "--since", "2026-10-31T00:00:00Z", "--durations-days", "0")


def test_service_tokens_are_issued_once_and_stored_hashed():
    token = run("service_token", "issue", "product").strip()
    row = ServiceToken.objects.get(name="product")
    assert token.startswith("rvo_") and token not in row.token_hash
    with pytest.raises(CommandError, match="already exists"):
        run("service_token", "issue", "product")
    with pytest.raises(CommandError, match="no valid service token"):
        run("service_token", "revoke", "nobody", "--reason", "unused")


def test_the_same_file_by_relative_or_absolute_path_is_one_source(monkeypatch):
    monkeypatch.chdir(REPO_FILE.parents[2])
    run("exclusions_load", "canary/exclusions/reviewed.json")
    assert "0 added, 0 removed" in run("exclusions_load", str(REPO_FILE))
    assert Exclusion.objects.filter(active=True).count() == 1
    assert Exclusion.objects.get().source_file == "canary/exclusions/reviewed.json"


def test_a_duplicate_entry_in_the_file_is_refused(tmp_path):
    path = tmp_path / "reviewed.json"
    entry = {"model": MODEL, "target": "dynamo", "reason": "filter", "reviewer": "ana"}
    path.write_text(json.dumps({"exclusions": [entry, dict(entry, target="Dynamo")]}))
    with pytest.raises(CommandError, match=r"exclusions\[1\]: duplicate of exclusions\[0\]"):
        run("exclusions_load", str(path))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fail-rounds", "0"], "fail_rounds_to_suspend"),
        (["--durations-days", "7,3,1"], "must not decrease"),
        (["--durations-days", "1,x"], "numbers separated by commas"),
        (["--until", "2026-10-01T00:00:00Z"], "is after --until"),
    ],
)
def test_replay_refuses_bad_thresholds_instead_of_defaulting(args, message):
    with pytest.raises(CommandError, match=message):
        run("canary_replay", "--model", MODEL, "--since", "2026-10-31T00:00:00Z", *args)


def test_a_model_that_is_not_author_slug_is_refused_before_anything_is_stored():
    with pytest.raises(CommandError, match="author/slug"):
        run("canary_round", "--model", "nope")
    with pytest.raises(CommandError, match="--since must be ISO 8601"):
        run("canary_replay", "--model", MODEL, "--since", "yesterday")
    assert not Round.objects.exists()


def test_replay_keeps_manual_reruns_that_share_a_start_time():
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    provider = Provider.objects.create(slug="borealis", name="Borealis", first_seen=t0, last_seen=t0)
    eps = [
        Endpoint.objects.create(model_id=MODEL, tag=f"{slug}/fp8", provider=provider, provider_name=slug, first_seen=t0, last_seen=t0)
        for slug in ("borealis", "atlas", "harbor")
    ]
    for _ in range(2):  # the same --now twice: an operator re-ran the round by hand
        rnd = Round.objects.create(model_id=MODEL, language="pt", started_at=t0, status="completed")
        for ep in eps:
            EndpointRound.objects.create(round=rnd, endpoint=ep, outcome="fail" if ep.tag == "borealis/fp8" else "clean", severity=1, created_at=t0)
    replayed = json.loads(run("canary_replay", "--model", MODEL, "--since", "2026-10-31T00:00:00Z", "--until", "2026-11-02T00:00:00Z", "--json"))
    assert replayed["rounds"] == 2 and replayed["suspensions"] == 1


# --- bad input from the second fresh-user trial: a clear error, never a traceback ------


def _exclusions(tmp_path: Path, **entry: object) -> str:
    item = {"model": MODEL, "target": "dynamo", "reason": "filters", "reviewer": "ana", **entry}
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"exclusions": [item]}))
    return str(path)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"target": "a" * 300}, "at most 200 characters"),
        ({"model": "a/" + "b" * 300}, "at most 200 characters"),
        ({"reviewer": "r" * 200}, "reviewer: at most 150 characters"),
        ({"evidence_url": 5}, "evidence_url: an http\\(s\\) URL"),
        ({"evidence_url": "not a url"}, "evidence_url: an http\\(s\\) URL"),
    ],
)
def test_exclusions_load_refuses_values_the_database_could_not_hold(tmp_path, entry, message):
    with pytest.raises(CommandError, match=message):
        run("exclusions_load", _exclusions(tmp_path, **entry))
    assert not Exclusion.objects.exists()


def test_exclusions_load_refuses_more_targets_for_a_model_than_an_ignore_list_may_hold(tmp_path, monkeypatch):
    monkeypatch.setattr("canary.management.commands.exclusions_load.IGNORE_LIST_MAX_ENTRIES", 3)
    items = [{"model": MODEL, "target": f"host-{i}", "reason": "filters", "reviewer": "ana"} for i in range(4)]
    path = tmp_path / "many.json"
    path.write_text(json.dumps({"exclusions": items}))
    with pytest.raises(CommandError, match=f"4 targets for {MODEL}, more than the 3 an ignore list may hold"):
        run("exclusions_load", str(path))
    assert not Exclusion.objects.exists()
    path.write_text(json.dumps({"exclusions": items[:3]}))
    run("exclusions_load", str(path))
    assert Exclusion.objects.count() == 3


def test_exclusions_load_refuses_a_directory_and_a_file_that_is_not_utf8(tmp_path):
    with pytest.raises(CommandError, match="is a directory"):
        run("exclusions_load", str(tmp_path))
    latin = tmp_path / "latin.json"
    latin.write_bytes('{"exclusions": [{"reason": "caf\u00e9"}]}'.encode("latin-1"))
    with pytest.raises(CommandError, match="not UTF-8"):
        run("exclusions_load", str(latin))


def test_model_ids_are_checked_before_they_reach_the_database():
    with pytest.raises(CommandError, match="at most 200 characters"):
        run("canary_round", "--model", "a/" + "b" * 300)
    with pytest.raises(CommandError, match="no spaces or control characters"):
        run("ignore_list", "--model", "a/b\x00c")
    assert not Round.objects.exists()


def test_canary_round_refuses_a_time_too_far_out_to_compute_with():
    with pytest.raises(CommandError, match="between the years 1971 and 9000"):
        run("canary_round", "--now", "9999-12-31T23:59:59Z")
    assert not Round.objects.exists()


def test_canary_round_refuses_a_time_in_the_future():
    # Found by a new user's try: --now 9000-12-31 suspended endpoints from today until 9001.
    with pytest.raises(CommandError, match="--now may not be in the future"):
        run("canary_round", "--now", "9000-12-31T23:00:00")
    assert not Round.objects.exists()


@pytest.mark.parametrize(("flag", "value"), [("--durations-days", "0.5,1e400"), ("--decay-days", "1e9"), ("--decay-days", "nan")])
def test_canary_replay_refuses_durations_out_of_range(flag, value):
    with pytest.raises(CommandError, match="at most 3650 days"):
        run("canary_replay", "--model", MODEL, "--since", "2026-11-01T00:00:00Z", flag, value)


def test_a_service_token_name_longer_than_its_column_is_refused():
    with pytest.raises(CommandError, match="at most 150 characters"):
        run("service_token", "issue", "n" * 200)
    assert not ServiceToken.objects.exists()


def test_demo_refuses_a_busy_address_before_starting_anything():
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        addr = f"127.0.0.1:{busy.getsockname()[1]}"
        with pytest.raises(CommandError, match=f"cannot serve the web app on {addr}"):
            run("demo", "--addr", addr)
    assert not Round.objects.exists()


def test_an_upper_cased_model_id_in_a_command_or_a_file_names_the_same_model(tmp_path):
    path = tmp_path / "reviewed.json"
    entries = [
        {"model": MODEL.upper(), "target": "dynamo", "reason": "filter", "reviewer": "ana"},
        {"model": MODEL, "target": "fjord", "reason": "filter", "reviewer": "ana"},
    ]
    path.write_text(json.dumps({"exclusions": entries}))
    run("exclusions_load", str(path))
    assert set(Exclusion.objects.values_list("model_id", flat=True)) == {MODEL}
    listed = json.loads(run("ignore_list", "--model", "Meta-Llama/Llama-3.3-70B-Instruct", "--json"))
    assert listed["model"] == MODEL and listed["ignore"] == ["dynamo", "fjord"]
    duplicate = tmp_path / "dup.json"
    duplicate.write_text(json.dumps({"exclusions": [entries[0], dict(entries[0], model=MODEL)]}))
    with pytest.raises(CommandError, match=r"exclusions\[1\]: duplicate of exclusions\[0\]"):
        run("exclusions_load", str(duplicate))


def _three_endpoint_history() -> None:
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    provider = Provider.objects.create(slug="borealis", name="Borealis", first_seen=t0, last_seen=t0)
    eps = [
        Endpoint.objects.create(model_id=MODEL, tag=f"{slug}/fp8", provider=provider, provider_name=slug, first_seen=t0, last_seen=t0)
        for slug in ("borealis", "atlas", "harbor")
    ]
    for i in range(3):
        rnd = Round.objects.create(model_id=MODEL, language="pt", started_at=t0 + timedelta(minutes=30 * i), status="completed")
        for ep in eps:
            EndpointRound.objects.create(round=rnd, endpoint=ep, outcome="fail" if ep.tag == "borealis/fp8" else "clean", severity=1, created_at=rnd.started_at)


def test_canary_replay_validates_the_model_id_like_every_command():
    _three_endpoint_history()
    window = ("--since", "2026-10-31T00:00:00Z", "--until", "2026-11-02T00:00:00Z")
    with pytest.raises(CommandError, match="--model: a model id must look like 'author/slug'"):
        run("canary_replay", "--model", "nope", *window)
    with pytest.raises(CommandError, match="--model: a model id has no spaces"):
        run("canary_replay", "--model", "a/b c", *window)
    upper = json.loads(run("canary_replay", "--model", MODEL.upper(), *window, "--json"))
    assert upper["model"] == MODEL and upper["rounds"] == 3 and upper["suspensions"] == 1


def test_a_replay_floor_larger_than_the_fleet_is_one_clear_line():
    _three_endpoint_history()
    window = ("--since", "2026-10-31T00:00:00Z", "--until", "2026-11-02T00:00:00Z")
    with pytest.raises(CommandError) as refused:
        run("canary_replay", "--model", MODEL, *window, "--floor", "5")
    message = str(refused.value)
    assert "\n" not in message and "capacity allows" not in message
    assert message == (f"--floor 5 is larger than the fleet (3 endpoint(s) of {MODEL} in the replayed rounds): "
                       "no endpoint could ever be suspended; use --floor 2 or less")
    with pytest.raises(CommandError, match=r"^--floor 3 equals the fleet \(3 endpoint"):
        run("canary_replay", "--model", MODEL, *window, "--floor", "3")
    # A floor the fleet can meet still replays.
    assert "1 suspensions" in run("canary_replay", "--model", MODEL, *window, "--floor", "2")


def test_canary_baselines_refuses_a_model_the_canary_does_not_watch():
    # Found by a new user's trial: zeros and exit 0 for a misspelt model id.
    with pytest.raises(CommandError, match="the canary does not watch 'foo/bar'"):
        run("canary_baselines", "--model", "foo/bar")
    assert MODEL in run("canary_baselines", "--model", MODEL)


def test_exclusions_load_refuses_a_target_no_discovered_endpoint_has(tmp_path):
    # Found by a new user's trial: "nosuchprovider/zz" was "1 added" and excluded nothing.
    now = datetime(2026, 11, 1, tzinfo=UTC)
    provider = Provider.objects.create(slug="borealis", name="Borealis", first_seen=now, last_seen=now)
    Endpoint.objects.create(model_id=MODEL, tag="borealis/fp8", provider=provider, provider_name="Borealis",
                            first_seen=now, last_seen=now)
    path = _exclusions(tmp_path, target="borealis/fp9")
    with pytest.raises(CommandError, match=r"'borealis/fp9' is no endpoint tag or provider of .*close: borealis/fp8"):
        run("exclusions_load", path)
    assert not Exclusion.objects.exists()
    assert "1 added" in run("exclusions_load", path, "--allow-unknown-targets")
    for target in ("borealis", "borealis/fp8"):
        assert "1 added" in run("exclusions_load", _exclusions(tmp_path, target=target))
