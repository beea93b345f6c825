"""Baselines from stored history: each endpoint's judged samples per check over the
model's trailing rounds, and the model's baseline, threshold and declared
false-suspension rate per check (docs/baselines.md).

What counts as a judged sample: a probe row of sample 0 (the probe's decision) or a
round-check row, whose own verdict (before the round softened it) is ``pass`` or
``fail``. Left out: frozen probes (transport errors), endpoints that are positive
controls for the check, and rows of an endpoint in a round after which it was suspended.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q, Value
from django.db.models.functions import Coalesce, NullIf

from canary import probes as probe_mod
from canary.baselines import (
    BaselineSettings,
    false_suspensions_per_endpoint_year,
    threshold,
)
from canary.models import Decision, Endpoint, EndpointRound, ProbeResult, Round
from canary.round_judgement import peer_baseline
from canary.terms import Action
from canary.verdicts import Verdict

History = dict[tuple[str, str], list[bool]]
_JUDGED = (Verdict.PASS.value, Verdict.FAIL.value)


def baseline_settings() -> BaselineSettings:
    """The declared numbers from settings (``CANARY_BASELINE_*``)."""
    return BaselineSettings(
        alpha=settings.CANARY_BASELINE_ALPHA,
        endpoint_window=settings.CANARY_BASELINE_ENDPOINT_WINDOW,
        min_volume=settings.CANARY_BASELINE_MIN_VOLUME,
        history_rounds=settings.CANARY_BASELINE_HISTORY_ROUNDS,
    )


def model_history(model_id: str, before: datetime, config: BaselineSettings) -> tuple[History, History]:
    """``(own, pool)``: (tag, kind) -> judged samples, oldest first, over the model's last
    ``config.history_rounds`` completed rounds started before ``before``. ``own`` holds
    every judged sample (an endpoint's own window); ``pool`` leaves out the rounds after
    which the endpoint was suspended (really or in observe mode's shadow), since a
    suspended host is not the model's healthy habit. Three queries."""
    round_ids = list(
        Round.objects.filter(model_id=model_id, status=Round.Status.COMPLETED, started_at__lt=before)
        .order_by("-started_at")
        .values_list("pk", flat=True)[: config.history_rounds]
    )
    if not round_ids:
        return {}, {}
    suspended = set(
        EndpointRound.objects.filter(round_id__in=round_ids, suspended_until__isnull=False).values_list(
            "round_id", "endpoint_id"
        )
    )
    endpoints = {ep.pk: ep for ep in Endpoint.objects.filter(model_id=model_id).only("pk", "tag", "positive_control_kinds")}
    # Rows stored before the probe's own verdict had a column hold only the raw one.
    judged = Q(probe_verdict__in=_JUDGED) | Q(probe_verdict="", raw_verdict__in=_JUDGED)
    rows = (
        ProbeResult.objects.filter(judged, round_id__in=round_ids, sample=0)
        .order_by("round__started_at", "pk")
        .annotate(own=Coalesce(NullIf("probe_verdict", Value("")), "raw_verdict"))
        .values_list("round_id", "endpoint_id", "kind", "own")
    )
    own: History = defaultdict(list)
    pool: History = defaultdict(list)
    for round_id, endpoint_id, kind, verdict in rows:
        ep = endpoints.get(endpoint_id)
        if ep is None or kind in (ep.positive_control_kinds or ()):
            continue
        failed = verdict == Verdict.FAIL
        own[(ep.tag, kind)].append(failed)
        if (round_id, endpoint_id) not in suspended:
            pool[(ep.tag, kind)].append(failed)
    return dict(own), dict(pool)


@dataclass(frozen=True)
class DeclaredCheck:
    """One check's declared numbers for a model (what ``canary_baselines --json`` prints).

    ``baseline_rate`` (failures / samples), ``failures``, ``samples`` (volume),
    ``established``; ``threshold`` (failures of ``window`` samples that stand at
    ``alpha``); ``expected_false_suspensions_per_endpoint_year`` under the rule in force
    and ``fixed_rule_false_suspensions_per_endpoint_year`` under "every failure counts",
    both at the 30-minute cadence and ``fail_rounds_to_suspend``.
    """

    check: str
    baseline_rate: float
    failures: int
    samples: int
    established: bool
    alpha: float
    window: int
    threshold: int
    expected_false_suspensions_per_endpoint_year: float
    fixed_rule_false_suspensions_per_endpoint_year: float


def declared_checks(model_id: str, now: datetime) -> list[DeclaredCheck]:
    """The model's baseline, threshold and declared false-suspension rate per check."""
    config = baseline_settings()
    _own, history = model_history(model_id, now, config)
    need = settings.CANARY_FAIL_ROUNDS_TO_SUSPEND
    out: list[DeclaredCheck] = []
    for kind in probe_mod.ALL_KINDS:
        samples = {tag: values for (tag, k), values in history.items() if k == kind}
        base = peer_baseline(kind, "", samples, config)
        rate = round(base.rate, 4)
        out.append(
            DeclaredCheck(
                check=kind,
                baseline_rate=rate,
                failures=base.failures,
                samples=base.trials,
                established=base.established,
                alpha=config.alpha,
                window=config.endpoint_window,
                threshold=threshold(config.endpoint_window, rate, config.alpha) if base.established else 1,
                expected_false_suspensions_per_endpoint_year=round(
                    false_suspensions_per_endpoint_year(rate, config, need, established=base.established), 4
                ),
                fixed_rule_false_suspensions_per_endpoint_year=round(
                    false_suspensions_per_endpoint_year(rate, config, need, established=False), 4
                ),
            )
        )
    return out


def realised_false_positives(model_id: str, now: datetime, days: int = 365) -> dict[str, float]:
    """Suspensions marked false positives by operators over the last ``days``, and per
    endpoint-year of the endpoints the model listed: ``{"false_positives", "endpoints",
    "per_endpoint_year"}``."""
    since = now - timedelta(days=days)
    marked = Decision.objects.filter(
        model_id=model_id, action=Action.FALSE_POSITIVE, created_at__gte=since
    ).count()
    endpoints = Endpoint.objects.filter(model_id=model_id, active=True).count()
    years = days / 365
    return {
        "false_positives": float(marked),
        "endpoints": float(endpoints),
        "per_endpoint_year": round(marked / (endpoints * years), 4) if endpoints else 0.0,
    }
