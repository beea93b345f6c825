"""The default fleet over real HTTP, twice in enforce mode: every failure shows the reply
that failed (not another probe's), centred on its first bad character, with the prompt's
language and the check's rule; every decision and notification names the check and k of n;
a frozen endpoint names its status; the positive control is labelled."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from canary.models import Decision, Endpoint, Notification
from canary.report import render_round_table
from tests.conftest import FLEETS

pytestmark = pytest.mark.django_db


def run_round(now: str, *args: str) -> str:
    out = StringIO()
    call_command("canary_round", "--mode", "enforce", "--language", "de", "--now", now, *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def two_rounds(start_sim, use_sim, settings):
    settings.NOTIFY_APPRISE_URLS = []
    use_sim(start_sim(FLEETS / "default.json"))
    run_round("2026-11-29T10:00:00Z")
    # As the demo seeds it: the host with its own content filter controls the refusal probe.
    Endpoint.objects.filter(tag="dynamo/bf16").update(positive_control_kinds=["refusal"])
    return json.loads(run_round("2026-11-29T10:30:00Z", "--json")), run_round("2026-11-29T11:00:00Z")


def probe(report: dict, tag: str, kind: str) -> dict:
    ep = next(e for e in report["endpoints"] if e["tag"] == tag)
    return next(p for p in ep["probes"] if p["kind"] == kind)


def endpoint(report: dict, tag: str) -> dict:
    return next(e for e in report["endpoints"] if e["tag"] == tag)


def test_failures_show_their_own_reply_centred_on_the_defect(two_rounds):
    report, _ = two_rounds
    leading = probe(report, "borealis/fp8", "leading_garbage")["shown"]
    # The round check keeps no reply of its own: the one shown starts with the junk.
    assert leading["excerpt"]["at"] is not None and leading["excerpt"]["before"].strip() == ""
    assert leading["excerpt"]["bad"].strip() and leading["language"] == "de" and leading["rule"]
    mojibake = probe(report, "juniper/fp8", "language")["shown"]
    assert mojibake["check"] == "encoding" and mojibake["excerpt"]["bad"] in "âÃ"
    assert "⟦" in mojibake["excerpt"]["plain"] and "mojibake" in mojibake["rule"]


def test_reasons_name_the_check_and_how_many_replies_and_frozen_names_its_status(two_rounds):
    report, table = two_rounds
    assert endpoint(report, "gale/fp8")["summary"].startswith("structured_output on 1 of 1 reply")
    assert "leading_garbage on " in endpoint(report, "borealis/fp8")["summary"]
    fjord = endpoint(report, "fjord/fp8")
    assert fjord["outcome"] == "frozen" and "http_429 on " in fjord["summary"] and " probes" in fjord["summary"]
    suspended = Decision.objects.filter(action="suspended")
    assert suspended.count() == 6
    for decision in suspended:
        assert " of " in decision.reason.split(":")[0], decision.reason
        assert decision.reason.split(" ")[0] in {"structured_output", "language", "ttft", "leading_garbage"}, decision.reason
    note = Notification.objects.get(decision__endpoint__tag="gale/fp8", kind="suspended")
    assert "— structured_output on 1 of 1 reply" in note.title and note.body.startswith("structured_output on 1 of 1 reply")
    # The baseline the failure was held against is named (established or not yet).
    assert "baseline" in endpoint(report, "gale/fp8")["summary"]
    # The CLI table labels the positive control's expected failure.
    assert "ctrl-FAIL" in table and "positive control, expected:" in table
    assert probe(report, "dynamo/bf16", "refusal")["control"] is True
    assert "positive control of refusal" in endpoint(report, "dynamo/bf16")["summary"]


@pytest.mark.slow(30)
def test_an_endpoint_prompted_again_in_its_anomalys_language_is_named_under_the_header(start_sim, use_sim, settings):
    settings.NOTIFY_APPRISE_URLS = []
    use_sim(start_sim(FLEETS / "default.json"))
    out = StringIO()
    # The rotation's language (no --language): an anomaly's language is repeated only then.
    call_command("canary_round", "--mode", "enforce", "--now", "2026-11-29T10:00:00Z", "--json", stdout=out)
    first = json.loads(out.getvalue())["language"]
    out = StringIO()
    call_command("canary_round", "--mode", "enforce", "--now", "2026-11-29T10:30:00Z", "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["language"] != first
    # The default fleet's language shifter and mojibake host showed an anomaly in the first
    # round: every probe of theirs is in its language again, the others in the rotation's.
    repeated = sorted(ep["tag"] for ep in report["endpoints"] if ep["language"] == first)
    assert repeated == ["cinder/fp8", "juniper/fp8"]
    assert all(ep["language"] == report["language"] for ep in report["endpoints"] if ep["tag"] not in repeated)
    assert probe(report, "cinder/fp8", "language")["shown"]["language"] == first
    text = " ".join(render_round_table(report).split())
    assert f"Prompted in another language than the round's {report['language']}: cinder/fp8, juniper/fp8 in {first}" in text
