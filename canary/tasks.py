"""Celery tasks: thin wrappers that take ids and call one service.

A scheduled round fans out as one ``endpoint_probes_task`` per batch of
``CANARY_ENDPOINTS_PER_TASK`` endpoints, which runs their probes concurrently (a batch,
not a task per probe or per endpoint: a task's fixed cost, its broker messages, the
consumer's bookkeeping and the round's reads, was about a third of a worker's CPU per
probe with one endpoint per task; bench/round_scale.py).
Tasks acknowledge late and are redelivered when a worker dies (``acks_late`` +
``reject_on_worker_lost``); a redelivered task runs only the probes that have not
reported, and results are unique per round, endpoint, kind and sample. The last task
to report finalises the round; a ``round_finalize_task`` timer does it when the budget runs out
(probes that never reported become transport errors). That timer lives in the memory of
the worker that received it, so the beat also runs ``rounds_sweep_task`` every few
seconds: it finalises any round past its budget, whichever worker died.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from canary.models import Round
from canary.services.confirmation import confirmation_run, confirmation_running, suspects_sweep_now
from canary.services.notifications import notification_send
from canary.services.rounds import (
    DuplicateRound,
    RoundError,
    SpendCapReached,
    endpoint_batches,
    round_close_stuck,
    round_endpoint_probes,
    round_finalize,
    round_open,
    rounds_overdue_finalize,
)
from canary.terms import Action

log = logging.getLogger(__name__)

# Sized to one probe: TTFT limit + total timeout + two confirmation samples, with margin.
PROBE_SOFT_TIME_LIMIT_S = 150
PROBE_TIME_LIMIT_S = 180


@shared_task(bind=True, acks_late=True, max_retries=None)
def notification_send_task(self: Any, notification_id: int) -> str:
    """Deliver one notification; retried with exponential backoff (2, 4, 8 … s, at most
    ``NOTIFY_MAX_RETRIES`` times) and recorded on the row either way."""
    retry_in = notification_send(notification_id)
    if retry_in is not None:
        raise self.retry(countdown=retry_in)
    return "done"


# A scheduled round waits for a running confirmation round of its model this often (s),
# at most this many times: longer than a round's time budget (180 s), after which the
# overdue sweep has finalised the confirmation.
CONFIRMATION_WAIT_S = 20
CONFIRMATION_WAIT_RETRIES = 12


@shared_task(bind=True, acks_late=True, max_retries=CONFIRMATION_WAIT_RETRIES + 1)
def round_start_task(self: Any, model_id: str, now_iso: str | None = None) -> dict[str, Any]:
    """Beat's entry point: close stuck rounds, claim this slot's round, fan out probes.

    A second trigger for the same slot (two beats, a manual run of the schedule) does
    nothing and says so in its result and the log. While a confirmation round of the
    model runs, the scheduled round waits (rounds never overlap for one endpoint),
    keeping its slot's time.
    """
    now = datetime.fromisoformat(now_iso) if now_iso else timezone.now()
    closed = round_close_stuck(model_id, timezone.now())
    if confirmation_running(model_id) and self.request.retries < CONFIRMATION_WAIT_RETRIES:
        # Past the last wait the confirmation is stuck (the overdue sweep closes it): go on.
        raise self.retry(args=(model_id, now.isoformat()), countdown=CONFIRMATION_WAIT_S)
    try:
        rnd, jobs = round_open(model_id, now=now, trigger=Round.Triggers.SCHEDULE)
    except DuplicateRound as dup:
        log.info("%s", dup)
        return {"status": "duplicate", "round": dup.existing.pk, "message": str(dup), "closed": closed}
    except SpendCapReached as cap:
        log.warning("%s", cap)
        return {"status": "spend_cap", "message": str(cap), "closed": closed}
    except RoundError as exc:
        return {"status": Action.DISCOVERY_FAILED, "message": str(exc), "closed": closed}
    for endpoint_ids, language in endpoint_batches(jobs, settings.CANARY_ENDPOINTS_PER_TASK):
        endpoint_probes_task.delay(rnd.pk, endpoint_ids, language)
    # No jobs (an empty listing): nothing will report, so the round is finalised now
    # rather than when its budget runs out.
    budget = settings.CANARY_ROUND_BUDGET_S if jobs else 0
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
def endpoint_probes_task(round_id: int, endpoint_ids: list[int] | int, language: str) -> str:
    """Run the probes of the endpoints ``endpoint_ids`` that have not reported yet, store
    each endpoint's results once its probes are in; the last task to report finalises
    the round. A single id is one endpoint (the message of a version that sent one task
    per endpoint, still in the queue during an upgrade).

    Retries (with backoff) only on database hiccups, a transient failure of ours; an
    upstream fault is a verdict, never a retry.
    """
    ids = [endpoint_ids] if isinstance(endpoint_ids, int) else endpoint_ids
    return round_endpoint_probes(round_id, ids, language)


@shared_task(acks_late=True)
def round_finalize_task(round_id: int) -> str:
    """Finalise a round when its time budget ran out (no-op if already finalised)."""
    return "finalized" if round_finalize(round_id) is not None else "already finalized"


@shared_task(acks_late=True)
def rounds_sweep_task() -> list[int]:
    """Finalise every round past its time budget (the beat runs it every
    ``ROUND_SWEEP_S`` seconds); returns the ids finalised."""
    return rounds_overdue_finalize(timezone.now())


@shared_task(acks_late=True)
def live_sweep_task() -> dict[str, Any]:
    """The live evidence sweep (the beat runs it every ``LIVE_SWEEP_S`` seconds):
    new suspects, finished confirmations, due confirmation rounds started."""
    report = suspects_sweep_now(lambda round_id: confirmation_round_task.delay(round_id))
    return {"status": "locked"} if report is None else {"status": "done", **report.__dict__}


@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=PROBE_SOFT_TIME_LIMIT_S,
    time_limit=PROBE_TIME_LIMIT_S,
)
def confirmation_round_task(round_id: int) -> str:
    """Run and finalise one confirmation round (the overdue sweep finalises it if this
    worker dies)."""
    return "finalized" if confirmation_run(round_id) is not None else "not running"
