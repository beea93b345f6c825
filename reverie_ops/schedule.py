"""The beat schedule in code: one canary round per watched model every 30 minutes, the
reliability masking check every 10 minutes, and the execution ledger's sweep and the
routes' measurements every 5.

django-celery-beat's DatabaseScheduler copies these entries into PeriodicTask rows at
start-up without touching their ``enabled`` flag, so an admin can pause one model's
rounds in the admin and the pause survives restarts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from celery.schedules import crontab

ROUND_EXPIRES_S = 25 * 60
# How often (s) the beat sweeps for rounds past their budget: finalisation is then late
# by at most this much when the worker holding a round's budget timer died.
ROUND_SWEEP_S = 10.0
# How often (s) the live evidence sweep looks for suspects and due confirmation rounds:
# a new suspect's first round starts within this much (docs/live-evidence.md).
LIVE_SWEEP_S = 5.0


def canary_beat_schedule(models: Iterable[str]) -> dict[str, dict[str, Any]]:
    """``CELERY_BEAT_SCHEDULE`` entries ``canary-round:<model>`` for each model id, and
    ``canary-rounds-sweep`` (rounds past their budget finalised, every ``ROUND_SWEEP_S``),
    ``canary-live-sweep`` (live suspects and their confirmation rounds, every ``LIVE_SWEEP_S``)."""
    sweep = {
        "canary-live-sweep": {
            "task": "canary.tasks.live_sweep_task",
            "schedule": LIVE_SWEEP_S,
            "options": {"expires": LIVE_SWEEP_S, "expire_seconds": int(LIVE_SWEEP_S)},
        },
        "canary-rounds-sweep": {
            "task": "canary.tasks.rounds_sweep_task",
            "schedule": ROUND_SWEEP_S,
            "options": {"expires": ROUND_SWEEP_S, "expire_seconds": int(ROUND_SWEEP_S)},
        },
    }
    return sweep | {
        f"canary-round:{model_id}": {
            "task": "canary.tasks.round_start_task",
            # On the slot boundaries the rounds are keyed by.
            "schedule": crontab(minute="0,30"),
            "args": [model_id],
            # A tick that waited too long is dropped: the next slot runs a fresh round.
            # (``expires`` for Celery's own scheduler, ``expire_seconds`` for the database one.)
            "options": {"expires": ROUND_EXPIRES_S, "expire_seconds": ROUND_EXPIRES_S},
        }
        for model_id in models
    }


MASKING_CHECK_EVERY_S = 10 * 60
MASKING_EXPIRES_S = 9 * 60


def observability_beat_schedule() -> dict[str, dict[str, Any]]:
    """``CELERY_BEAT_SCHEDULE`` entry ``reliability-masking-check``: the masking check
    (``observability.tasks.masking_check_task``) every 10 minutes; a check that waited
    past the next one is dropped (``expires``)."""
    return {
        "reliability-masking-check": {
            "task": "observability.tasks.masking_check_task",
            "schedule": float(MASKING_CHECK_EVERY_S),
            "options": {"expires": MASKING_EXPIRES_S, "expire_seconds": MASKING_EXPIRES_S},
        }
    }


LEDGER_SWEEP_EVERY_S = 5 * 60
# Routes rank on their measured health, latency and structured-output honour rate
# (routing.selection); refreshed this often (s) from the last hour of attempt events and
# canary verdicts, so a route that degrades ranks lower within about this long.
ROUTE_MEASUREMENTS_EVERY_S = 5 * 60


def routing_beat_schedule() -> dict[str, dict[str, Any]]:
    """``CELERY_BEAT_SCHEDULE`` entries ``routing-ledger-sweep``: settled idempotency keys
    pruned and dead claims marked unknown (``routing.tasks.ledger_sweep_task``) every
    ``LEDGER_SWEEP_EVERY_S``, and ``routing-route-measurements``: every route's
    measurements refreshed (``routing.tasks.route_measurements_refresh_task``) every
    ``ROUTE_MEASUREMENTS_EVERY_S``; a run that waited past the next one is dropped."""
    return {
        "routing-ledger-sweep": {
            "task": "routing.tasks.ledger_sweep_task",
            "schedule": float(LEDGER_SWEEP_EVERY_S),
            "options": {"expires": LEDGER_SWEEP_EVERY_S - 60, "expire_seconds": LEDGER_SWEEP_EVERY_S - 60},
        },
        "routing-route-measurements": {
            "task": "routing.tasks.route_measurements_refresh_task",
            "schedule": float(ROUTE_MEASUREMENTS_EVERY_S),
            "options": {"expires": ROUTE_MEASUREMENTS_EVERY_S - 60, "expire_seconds": ROUTE_MEASUREMENTS_EVERY_S - 60},
        },
    }
