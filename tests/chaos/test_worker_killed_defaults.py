"""A worker SIGKILLed mid-round on the default settings (visibility timeout, restore
interval, round budget): its probes are redelivered to another worker and run inside the
round's budget, so the round loses nothing. Real Redis broker, real Celery workers,
real PostgreSQL, the simulator over HTTP."""

from __future__ import annotations

import pytest
from django.conf import settings

from canary.models import ProbeResult, Round
from canary.probes import PROBE_KINDS
from canary.tasks import round_start_task
from tests.celery.conftest import wait_for
from tests.verdicts.fleets import MODEL, endpoint, fleet

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]

# The fixture's workers restore unacknowledged messages every second; these are the
# settings' own defaults instead (this process reads no override of them).
_OPTIONS = settings.CELERY_BROKER_TRANSPORT_OPTIONS
DEFAULTS = {"CELERY_UNACKED_RESTORE_INTERVAL_S": str(_OPTIONS["unacked_restore_interval"]),
            "CELERY_UNACKED_RESTORE_THROTTLE": str(_OPTIONS["unacked_restore_throttle"])}
# The round must finish with room to spare: the redelivery (visibility timeout + one
# restore scan + the probes' run) took 169 s of the 180 s budget with a scan every 100 s.
MARGIN_S = 60


@pytest.mark.slow(120)
def test_a_worker_killed_mid_round_on_the_defaults_costs_no_probe(start_sim, use_sim, start_worker):
    budget_s = settings.CANARY_ROUND_BUDGET_S
    slow = {"ttft_ms": [300, 3000]}
    use_sim(start_sim(fleet([endpoint(n, slow) for n in ("Atlas", "Harbor", "Indigo", "Lumen", "Nimbus", "Orchid")])))
    first = start_worker("a", **DEFAULTS)
    round_start_task.delay(MODEL)
    wait_for(lambda: ProbeResult.objects.filter(sample=0).count() >= 2, 60, "the first results")
    first.kill()
    assert ProbeResult.objects.filter(sample=0, kind__in=PROBE_KINDS).count() < 6 * 4
    start_worker("b", **DEFAULTS)
    wait_for(lambda: Round.objects.filter(model_id=MODEL, status="completed").exists(), budget_s + 30,
             "the round to be finalised")
    rnd = Round.objects.get(model_id=MODEL)
    took_s = (rnd.finished_at - rnd.started_at).total_seconds()
    probes = ProbeResult.objects.filter(round=rnd, sample=0, kind__in=PROBE_KINDS)
    lost = probes.filter(transport_kind="lost").count()
    print(f"round finalised at +{took_s:.0f} s; {lost} of {probes.count()} probes lost")
    assert lost == 0 and probes.count() == 6 * 4
    assert took_s < budget_s - MARGIN_S, f"finalised at +{took_s:.0f} s, less than {MARGIN_S} s inside the {budget_s:.0f} s budget"
