"""A host answering ``200 text/event-stream`` with an HTML page and no ``data:`` line
(issue "Verdicts whose error rate is known", item 5): a completed exchange with malformed
output, ``malformed_body`` with the page's first bytes as evidence, suspended after two
enforce rounds; a host whose connection breaks mid-stream stays a transport error."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from canary.models import Decision, ProbeResult
from canary.terms import Action
from tests.verdicts.fleets import MODEL, endpoint, fleet

pytestmark = pytest.mark.django_db


@pytest.fixture
def fast_limits(settings):
    settings.CANARY_TTFT_LIMIT_S = 3.0
    settings.CANARY_TOTAL_TIMEOUT_S = 10.0


def run_round(at: str) -> dict:
    out = StringIO()
    call_command("canary_round", "--json", "--language", "en", "--mode", "enforce", "--now", at, stdout=out)
    return json.loads(out.getvalue())


def test_an_html_page_in_a_200_stream_is_malformed_and_suspended_after_two_rounds(start_sim, use_sim, fast_limits):
    hosts = [
        endpoint("Atlas"),
        endpoint("Borealis", {"html_body": {"rate": 1.0}}),
        endpoint("Cinder", {"reset": {"rate": 1.0}}),
        endpoint("Dynamo"),
    ]
    use_sim(start_sim(fleet(hosts)))
    first = {ep["tag"]: ep["outcome"] for ep in run_round("2026-11-29T10:00:00Z")["endpoints"]}
    assert first == {"atlas/fp8": "clean", "borealis/fp8": "fail", "cinder/fp8": "frozen", "dynamo/fp8": "clean"}
    row = ProbeResult.objects.filter(endpoint__tag="borealis/fp8", kind="refusal", sample=0).get()
    assert row.check_name == "malformed_body"
    assert "<!DOCTYPE html>" in row.evidence["body_excerpt"]
    broken = ProbeResult.objects.filter(endpoint__tag="cinder/fp8", kind="refusal", sample=0).get()
    assert (broken.probe_verdict, broken.transport_kind) == ("transport_error", "reset")

    run_round("2026-11-29T10:30:00Z")
    suspended = set(Decision.objects.filter(model_id=MODEL, action=Action.SUSPENDED).values_list("endpoint__tag", flat=True))
    assert suspended == {"borealis/fp8"}
