"""Two rounds finishing at the same moment never double-suspend (PostgreSQL row locks)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest
from django.db import connection

from canary.models import Decision, Endpoint, EndpointPolicyState, EndpointRound, Provider, Round
from canary.services.quarantine import suspension_apply

MODEL = "vendor/model"
NOW = datetime(2026, 11, 29, 10, 30, tzinfo=UTC)


def _endpoint(slug: str) -> Endpoint:
    provider = Provider.objects.create(slug=slug, name=slug.title(), first_seen=NOW, last_seen=NOW)
    return Endpoint.objects.create(model_id=MODEL, tag=f"{slug}/fp8", provider=provider, provider_name=slug.title(), first_seen=NOW, last_seen=NOW)


@pytest.mark.django_db(transaction=True)
def test_two_rounds_finishing_together_suspend_once():
    bad = _endpoint("borealis")
    healthy = [_endpoint(s) for s in ("atlas", "harbor", "indigo")]
    EndpointPolicyState.objects.create(endpoint=bad, fail_streak=1)
    rounds = []
    for _ in range(2):
        rnd = Round.objects.create(model_id=MODEL, language="pt", started_at=NOW, status="completed")
        EndpointRound.objects.create(round=rnd, endpoint=bad, outcome="fail", severity=1, created_at=NOW)
        for ep in healthy:
            EndpointRound.objects.create(round=rnd, endpoint=ep, outcome="clean", created_at=NOW)
        rounds.append(rnd)

    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def finish(rnd: Round) -> None:
        try:
            barrier.wait()
            suspension_apply(rnd, NOW, "enforce")
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=finish, args=(r,)) for r in rounds]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    assert Decision.objects.filter(action="suspended", endpoint=bad).count() == 1
    state = EndpointPolicyState.objects.get(endpoint=bad)
    assert state.enforced and state.suspension_level == 1
    actions = sorted(EndpointRound.objects.filter(endpoint=bad).values_list("action", flat=True))
    assert actions == ["none", "suspended"]
