"""Canary metrics (read from the canary's rows at scrape time) and round traces.

``CanaryCollector`` answers each scrape with bounded aggregates: the label sets are the
watched models, their endpoints (the ``Endpoint`` table) and the probe kinds, and every
query reads either one round per model (the latest finished one) or small tables
(decisions, policy states, notifications). It lives in the web process's registry only,
so several processes never report the same rows twice.

``round_finished(round_id)`` is called once when a round is finalised (through the
``canary.signals.round_finalised`` signal); it emits the
round's trace when tracing is on (``observability.tracing``) and does nothing otherwise.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta

from django.db import connection
from django.db.models import Count, Max, Min, Sum
from django.utils import timezone

from canary.models import Decision, Endpoint, EndpointPolicyState, Notification, ProbeResult, Round
from canary.services.baselines import declared_checks, realised_false_positives
from canary.terms import Action
from observability import tracing
from observability.exposition import Family

log = logging.getLogger(__name__)

_FINISHED = (Round.Status.COMPLETED, Round.Status.FAILED, Round.Status.SKIPPED)
_DECISIONS = (Action.SUSPENDED, Action.WOULD_SUSPEND, Action.FLOOR_BLOCKED, Action.WEAK_PROBE)


def _latest_rounds() -> list[Round]:
    """The latest finished round of each model (one query over the model/started index)."""
    # A confirmation round probes one endpoint: the model's latest picture is its latest full round.
    ids = (Round.objects.filter(status__in=_FINISHED).exclude(trigger=Round.Triggers.CONFIRMATION).values("model_id").annotate(last=Max("id")).values_list("last", flat=True))
    return list(Round.objects.filter(id__in=list(ids)))


def _baseline_families(model_ids: list[str], now: datetime) -> Iterator[Family]:
    """Per model and check: the baseline, its volume and the declared false suspensions
    per endpoint-year; per model: the realised rate (docs/baselines.md)."""
    labels = ("model", "check")
    rate = Family("reverie_canary_baseline_rate", "gauge", "Healthy failure rate of a check (failures / samples)", labels)
    samples = Family("reverie_canary_baseline_samples", "gauge", "Judged samples behind a check's baseline", labels)
    declared = Family("reverie_canary_declared_false_suspensions_per_endpoint_year", "gauge",
                      "False suspensions per endpoint-year the rule and cadence imply for a check", labels)
    realised = Family("reverie_canary_realised_false_positives_per_endpoint_year", "gauge",
                      "Suspensions marked false positives over the last year, per endpoint-year", ("model",))
    for model in model_ids:
        for c in declared_checks(model, now):
            rate.add((model, c.check), c.baseline_rate)
            samples.add((model, c.check), c.samples)
            declared.add((model, c.check), c.expected_false_suspensions_per_endpoint_year)
        realised.add((model,), realised_false_positives(model, now)["per_endpoint_year"])
    yield from (rate, samples, declared, realised)


class CanaryCollector:
    """Scrape-time canary metrics (see the module docstring). ``now`` is injectable."""

    def __init__(self, now: Callable[[], datetime] = timezone.now) -> None:
        self._now = now

    def collect(self) -> list[Family]:
        """Every canary family; only ``reverie_canary_metrics_up`` 0 when the database
        cannot be read (a scrape must still answer)."""
        up = Family("reverie_canary_metrics_up", "gauge", "1 when the canary's rows could be read")
        try:
            families = list(self._collect())
        except Exception as exc:  # noqa: BLE001 - a scrape must answer without the database
            log.error("canary metrics unavailable: %s", exc)
            up.add((), 0)
            return [up]
        up.add((), 1)
        return [*families, up]

    def _collect(self) -> Iterator[Family]:
        now = self._now()
        rounds = Family("reverie_canary_rounds", "counter", "Finished canary rounds by model and status", ("model", "status"))
        running = Family("reverie_canary_rounds_running", "gauge", "Canary rounds running now", ("model",))
        cost = Family("reverie_canary_round_cost_usd", "counter", "Cost of the canary's probes in USD", ("model",))
        spent: dict[str, float] = defaultdict(float)
        for model, status, n, usd in (Round.objects.values("model_id", "status").annotate(n=Count("id"), c=Sum("cost_usd"))
                                      .order_by().values_list("model_id", "status", "n", "c")):
            spent[model] += float(usd or 0)
            if status in _FINISHED:
                rounds.add((model, status), n)
            else:
                running.add((model,), n)
        for model, usd in sorted(spent.items()):
            cost.add((model,), usd)
        yield rounds
        yield running
        yield cost

        latest = _latest_rounds()
        duration = Family("reverie_canary_last_round_duration_seconds", "gauge", "Duration of the latest finished round", ("model",))
        last_cost = Family("reverie_canary_last_round_cost_usd", "gauge", "Cost of the latest finished round (USD)", ("model",))
        last_at = Family("reverie_canary_last_round_timestamp_seconds", "gauge", "When the latest finished round ended (epoch s)", ("model", "status",))
        weak = Family("reverie_canary_weak_probes", "gauge", "Probe kinds judged weak in the latest round (1 each)", ("model", "check",))
        for rnd in latest:
            end = rnd.finished_at or rnd.started_at
            duration.add([rnd.model_id], max(0.0, (end - rnd.started_at).total_seconds()))
            last_cost.add([rnd.model_id], float(rnd.cost_usd))
            last_at.add([rnd.model_id, rnd.status], end.timestamp())
            for kind in sorted(rnd.weak_probes or {}):
                weak.add([rnd.model_id, kind], 1)
        yield duration
        yield last_cost
        yield last_at
        yield weak

        verdicts = Family("reverie_canary_probe_verdicts", "gauge",
                          "Probe verdicts in the latest finished round by endpoint, check (probe kind) and verdict",
                          ("model", "endpoint", "check", "verdict"))
        models = {r.pk: r.model_id for r in latest}
        if models:
            # Plain SQL: the ORM's per-row cost was most of a scrape with 4,500 series.
            q = connection.ops.quote_name
            sql = (f"SELECT p.round_id, e.tag, p.kind, p.verdict, COUNT(*) FROM {q(ProbeResult._meta.db_table)} p "  # noqa: S608
                   f"JOIN {q(Endpoint._meta.db_table)} e ON e.id = p.endpoint_id "
                   f"WHERE p.round_id IN ({', '.join(['%s'] * len(models))}) GROUP BY 1, 2, 3, 4")
            with connection.cursor() as cur:
                cur.execute(sql, list(models))
                verdicts.rows = [((models[r], tag, kind, verdict), n) for r, tag, kind, verdict, n in cur.fetchall()]
        yield verdicts
        yield from _baseline_families(sorted({r.model_id for r in latest}), now)

        suspended = Family("reverie_canary_suspensions_active", "gauge", "Endpoints suspended now (enforced suspensions)", ("model",))
        for row in (EndpointPolicyState.objects.filter(suspended_until__gt=now, enforced=True)
                    .values("endpoint__model_id").annotate(n=Count("id")).order_by()):
            suspended.add([row["endpoint__model_id"]], row["n"])
        yield suspended

        decisions = Family("reverie_canary_decisions", "counter", "Canary decisions by model and action", ("model", "action",))
        for row in Decision.objects.filter(action__in=_DECISIONS).values("model_id", "action").annotate(n=Count("id")).order_by():
            decisions.add([row["model_id"], row["action"]], row["n"])
        yield decisions

        notes = Family("reverie_canary_notifications", "counter", "Admin notifications by delivery state", ("state",))
        failed = Family("reverie_canary_notifications_failed", "gauge", "Notifications whose delivery failed")
        by_state = dict(Notification.objects.values("state").annotate(n=Count("id")).order_by().values_list("state", "n"))
        for state, n in sorted(by_state.items()):
            notes.add((state,), n)
        yield notes
        failed.add((), by_state.get(Notification.States.FAILED, 0))
        yield failed


def round_finished(round_id: int) -> None:
    """Called once when round ``round_id`` is finalised: emits its trace (a span for the
    round, a child per endpoint's probes) when tracing is on. Never raises."""
    if not tracing.enabled():
        return
    try:
        _round_trace(round_id)
    except Exception:  # noqa: BLE001 - a trace must never fail a round
        log.exception("trace of round %s not recorded", round_id)


def round_finished_receiver(sender: object, round_id: int, **_: object) -> None:
    """Receiver of ``canary.signals.round_finalised`` (connected in ``apps.ready``)."""
    round_finished(round_id)


def _round_trace(round_id: int) -> None:
    rnd = Round.objects.get(pk=round_id)
    per: dict[str, dict[str, int]] = defaultdict(dict)
    failed: dict[str, set[str]] = defaultdict(set)
    spans: dict[str, tuple[datetime, datetime, float]] = {}
    rows = (ProbeResult.objects.filter(round=rnd).values("endpoint__tag", "verdict")
            .annotate(n=Count("id"), first=Min("created_at"), last=Max("created_at"), cost=Sum("cost_usd"),
                      longest_ms=Max("total_ms")).order_by())
    for row in rows:
        tag = row["endpoint__tag"]
        per[tag][row["verdict"]] = row["n"]
        # A probe row is stored when the probe ends: its endpoint's probes began about the
        # longest probe's duration before the first row.
        began = max(rnd.started_at, row["first"] - timedelta(milliseconds=row["longest_ms"] or 0))
        first, last, cost = spans.get(tag, (began, row["last"], 0.0))
        spans[tag] = (min(first, began), max(last, row["last"]), cost + float(row["cost"] or 0))
    for tag, kind in ProbeResult.objects.filter(round=rnd, verdict="fail").values_list("endpoint__tag", "kind").distinct():
        failed[tag].add(kind)
    endpoints = [
        tracing.EndpointProbes(tag=tag, started_at=spans[tag][0].timestamp(),
                               ended_at=spans[tag][1].timestamp(), verdicts=per[tag], failed_checks=tuple(sorted(failed[tag])),
                               cost_usd=spans[tag][2])
        for tag in sorted(per)
    ]
    end = rnd.finished_at or timezone.now()
    tracing.round_spans(round_id=rnd.pk, model_id=rnd.model_id, status=rnd.status, started_at=rnd.started_at.timestamp(),
                        ended_at=end.timestamp(), cost_usd=float(rnd.cost_usd), weak_probes=(rnd.weak_probes or {}).keys(),
                        endpoints=endpoints)
