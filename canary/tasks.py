"""Celery tasks: thin wrappers that take ids and call one service.

A scheduled round fans out as one ``endpoint_probes_task`` per endpoint, which runs that
endpoint's four probes concurrently (one task per endpoint, not per probe: a quarter of the
broker and database round trips, and the probes of one endpoint share the task's rows).
Tasks acknowledge late and are redelivered when a worker dies (``acks_late`` +
``reject_on_worker_lost``); a redelivered task runs only the probes that have not
reported, and results are unique per round, endpoint, kind and sample. The last endpoint
to report finalises the round; a ``round_finalize_task`` timer does it when the budget runs out
(probes that never reported become transport errors); the next trigger closes a round
stuck past its budget.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from django.db import InterfaceError, OperationalError
from django.utils import timezone

log = logging.getLogger(__name__)

# Sized to one probe: TTFT limit + total timeout + two confirmation samples, with margin.
PROBE_SOFT_TIME_LIMIT_S = 150
PROBE_TIME_LIMIT_S = 180


@shared_task(bind=True, acks_late=True, max_retries=None)
def notification_send_task(self: Any, notification_id: int) -> str:
    """Deliver one notification; retried with exponential backoff (2, 4, 8 … s, at most
    ``NOTIFY_MAX_RETRIES`` times) and recorded on the row either way."""
    from canary.services_notify import notification_send

    retry_in = notification_send(notification_id)
    if retry_in is not None:
        raise self.retry(countdown=retry_in)
    return "done"


@shared_task(acks_late=True)
def round_start_task(model_id: str, now_iso: str | None = None) -> dict[str, Any]:
    """Beat's entry point: close stuck rounds, claim this slot's round, fan out probes.

    A second trigger for the same slot (two beats, a manual run of the schedule) does
    nothing and says so in its result and the log.
    """
    from datetime import datetime

    from django.conf import settings

    from canary.models import Round
    from canary.services import (
        DuplicateRound,
        RoundError,
        SpendCapReached,
        round_close_stuck,
        round_open,
    )

    now = datetime.fromisoformat(now_iso) if now_iso else timezone.now()
    closed = round_close_stuck(model_id, timezone.now())
    try:
        rnd, jobs = round_open(model_id, now=now, trigger=Round.Triggers.SCHEDULE)
    except DuplicateRound as dup:
        log.info("%s", dup)
        return {"status": "duplicate", "round": dup.existing.pk, "message": str(dup), "closed": closed}
    except SpendCapReached as cap:
        log.warning("%s", cap)
        return {"status": "spend_cap", "message": str(cap), "closed": closed}
    except RoundError as exc:
        return {"status": "discovery_failed", "message": str(exc), "closed": closed}
    by_endpoint = {(job.endpoint_id, job.language) for job in jobs}
    for endpoint_id, language in sorted(by_endpoint):
        endpoint_probes_task.delay(rnd.pk, endpoint_id, language)
    budget = settings.CANARY_ROUND_BUDGET_S
    round_finalize_task.apply_async((rnd.pk,), countdown=budget)
    return {"status": "started", "round": rnd.pk, "probes": len(jobs), "closed": closed}


@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=PROBE_SOFT_TIME_LIMIT_S,
    time_limit=PROBE_TIME_LIMIT_S,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=2,
    retry_backoff_max=30,
    max_retries=3,
)
def endpoint_probes_task(round_id: int, endpoint_id: int, language: str) -> str:
    """Run the endpoint's probes that have not reported yet, store each result as it
    completes; the last endpoint to report finalises the round.

    Retries (with backoff) only on database hiccups, a transient failure of ours; an
    upstream fault is a verdict, never a retry.
    """
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from canary.db import connection_release
    from canary.models import Endpoint, ProbeResult, Round
    from canary.probes import PROBE_KINDS
    from canary.ratelimit import provider_limiter
    from canary.services import (
        ProbeJob,
        probe_execute,
        probe_record,
        round_finalize,
        round_probes_done,
    )

    rnd = Round.objects.get(pk=round_id)
    if rnd.status != Round.Status.RUNNING:
        return "round closed"
    reported = set(
        ProbeResult.objects.filter(round_id=round_id, endpoint_id=endpoint_id, sample=0).values_list("kind", flat=True)
    )
    jobs = [ProbeJob(round_id, endpoint_id, kind, language) for kind in PROBE_KINDS if kind not in reported]
    if jobs:
        ep = Endpoint.objects.select_related("provider").get(pk=endpoint_id)
        connection_release()
        # One rate-limit round trip for the endpoint's probes (they share a provider).
        provider_limiter().acquire(ep.provider.slug, len(jobs))
        # Probes wait on the network; the pool threads never touch the database.
        with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
            futures = {pool.submit(probe_execute, job, ep, rate_limited=True): job for job in jobs}
            for fut in as_completed(futures):
                probe_record(futures[fut], fut.result(), rnd.started_at, rnd=rnd, ep=ep)
                connection_release()
    if round_probes_done(round_id):
        round_finalize(round_id)
    return "done"


@shared_task(acks_late=True)
def round_finalize_task(round_id: int) -> str:
    """Finalise a round when its time budget ran out (no-op if already finalised)."""
    from canary.services import round_finalize

    return "finalized" if round_finalize(round_id) is not None else "already finalized"
