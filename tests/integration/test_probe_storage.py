"""An endpoint task against the simulator over real HTTP: its probes are stored in one
bulk write, each with the wait on our side apart from the time to first token."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from canary.models import ProbeResult
from canary.probes import PROBE_KINDS
from canary.services.rounds import round_endpoint_probes, round_open
from tests.verdicts.fleets import MODEL, healthy_fleet

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def test_an_endpoint_task_stores_its_probes_in_one_insert(start_sim, use_sim):
    use_sim(start_sim(healthy_fleet(2)))
    rnd, jobs = round_open(MODEL, now=NOW, language="pt")
    endpoint_id = jobs[0].endpoint_id
    with CaptureQueriesContext(connection) as queries:
        round_endpoint_probes(rnd.pk, endpoint_id, "pt")
    inserts = [q["sql"] for q in queries.captured_queries if q["sql"].startswith('INSERT INTO "canary_proberesult"')]
    assert len(inserts) == 1
    kinds = set(ProbeResult.objects.filter(round=rnd, endpoint_id=endpoint_id, sample=0).values_list("kind", flat=True))
    assert kinds == set(PROBE_KINDS)


def test_a_streamed_probe_stores_its_wait_apart_from_its_ttft(start_sim, use_sim):
    use_sim(start_sim(healthy_fleet(1)))
    rnd, jobs = round_open(MODEL, now=NOW, language="pt")
    round_endpoint_probes(rnd.pk, jobs[0].endpoint_id, "pt")
    ttft = ProbeResult.objects.get(round=rnd, kind="ttft", sample=0)
    assert ttft.probe_verdict == "pass"
    assert ttft.ttft_ms is not None and ttft.ttft_ms > 0
    # Measured: the rate limit's wait (none here) plus the client's before the wire.
    assert ttft.wait_ms is not None and 0 <= ttft.wait_ms < ttft.total_ms
