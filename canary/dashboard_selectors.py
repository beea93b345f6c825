"""Reads behind the staff dashboards (the canary pages inside the Django admin).

Every function here serves one page and runs a fixed number of queries whatever the length
of the history: windows are bounded (the last N rounds, or N days), rows are fetched with
``values()`` or ``select_related`` in one query per table, and counts and rates are
aggregated in the database. Times are aware UTC datetimes; TTFT and latencies are in ms;
rates are fractions in [0, 1].

Shapes are plain dicts and dataclasses so templates and tests read them the same way.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import (
    Avg,
    Count,
    Exists,
    F,
    Max,
    OuterRef,
    Q,
    Subquery,
)
from django.db.models.functions import TruncDate

from canary.models import (
    Decision,
    Endpoint,
    EndpointPolicyState,
    EndpointRound,
    Exclusion,
    ModelConfig,
    ProbeResult,
    Round,
)
from canary.openrouter import GenerationNotFoundError, OpenRouterError, same_provider
from canary.probes import ALL_KINDS
from canary.services.client import openrouter_client
from canary.services.ignore_list import ignore_list_get
from canary.terms import Action, Mode
from canary.verdicts import Verdict

# Display labels of the probe kinds, in the canary's own order (the four probes, then the
# round-level checks).
KIND_LABELS: dict[str, str] = {
    "ttft": "TTFT",
    "refusal": "refusal",
    "structured_output": "structured output",
    "language": "language",
    "leading_garbage": "leading garbage",
    "corruption": "corruption",
}

# What a user may report, and the probe kinds that would catch it (user-report correlation).
SYMPTOMS: dict[str, tuple[str, tuple[str, ...]]] = {
    "language": ("answers in the wrong language", ("language",)),
    "refusal": ("refuses or lectures", ("refusal",)),
    "garbage": ("stray characters at the start of replies", ("leading_garbage",)),
    "corruption": ("garbled text, mojibake, loops or cut-off replies", ("corruption",)),
    "slow": ("slow to start answering", ("ttft",)),
    "json": ("broken JSON / structured output", ("structured_output",)),
    "other": ("something else", ()),
}

# The report window of the user-report correlation: probes this far either side of the time
# the user gave (people remember "around 9 pm", not the minute).
CORRELATION_WINDOW = timedelta(hours=2)

# Bounds of the page parameters, so no request can make a page scan the whole history.
MATRIX_ROUNDS_DEFAULT, MATRIX_ROUNDS_MAX = 48, 336
CHART_ROUNDS_DEFAULT, CHART_ROUNDS_MAX = 336, 1440
TABLE_ROUNDS_DEFAULT, TABLE_ROUNDS_MAX = 48, 336
DAYS_DEFAULT, DAYS_MAX = 30, 90
TIMELINE_DECISIONS = 200
OBSERVE_LIST_MAX = 200
RECENT_FAILURES = 12
EXCERPT_CHARS = 240

# The letter a health-matrix cell shows for the policy's action in that round.
ACTION_LETTERS = {
    Action.SUSPENDED: "S", Action.WOULD_SUSPEND: "W", Action.FLOOR_BLOCKED: "F", Action.RESTORED: "R", Action.EXPIRED: "E",
}
_END_ACTIONS = (Action.RESTORED, Action.EXPIRED, Action.LIFTED)
_START_ACTIONS = (Action.SUSPENDED, Action.WOULD_SUSPEND)


def clamp(value: Any, default: int, maximum: int, minimum: int = 1) -> int:
    """``value`` (a query-string value or None) as an int within [minimum, maximum]."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        return default
    return max(minimum, min(maximum, number))


def models_known() -> list[str]:
    """Model ids the canary knows (from its endpoints and configs), sorted. Two queries."""
    found = set(Endpoint.objects.values_list("model_id", flat=True).distinct())
    found |= set(ModelConfig.objects.values_list("model_id", flat=True))
    return sorted(found)


def model_pick(requested: str | None, models: list[str]) -> str:
    """The requested model if known, else the configured ``CANARY_MODEL``, else the first."""
    if requested and requested in models:
        return requested
    if settings.CANARY_MODEL in models or not models:
        return str(settings.CANARY_MODEL)
    return models[0]


def _mode_subquery() -> Subquery:
    return Subquery(ModelConfig.objects.filter(model_id=OuterRef("model_id")).values("mode")[:1])


def _state_label(state: EndpointPolicyState | None, now: datetime) -> str:
    """``suspended`` (in the ignore list), ``shadow`` (observe mode), or ``""``."""
    if state is None or state.suspended_until is None or state.suspended_until <= now:
        return ""
    return "suspended" if state.enforced else "shadow"


def _state_of(ep: Endpoint) -> EndpointPolicyState | None:
    # Reverse one-to-one: reading it raises when the row is missing, even after
    # select_related (which caches the absence).
    try:
        return ep.policy_state
    except EndpointPolicyState.DoesNotExist:
        return None


# --------------------------------------------------------------------- health matrix


@dataclass
class MatrixColumn:
    """One endpoint column: ``state`` is ``suspended``/``shadow``/``""`` now."""

    endpoint: Endpoint
    state: str
    suspended_until: datetime | None
    fail_streak: int


@dataclass
class MatrixRow:
    """One round row; ``cells`` aligns with the columns (None: not probed that round)."""

    round: Round
    weak: str
    cells: list[dict[str, Any] | None]


def health_matrix(model_id: str, rounds: int, now: datetime) -> dict[str, Any]:
    """The fleet health matrix: the last ``rounds`` rounds of ``model_id`` × its endpoints.

    Returns ``{"model", "mode", "columns": [MatrixColumn], "rows": [MatrixRow] (newest
    first), "counts": {outcome: n}}``; a cell is ``{"outcome", "action", "severity",
    "streak", "failed": "kind, kind"}``. Four queries.
    """
    rnds = list(
        Round.objects.filter(model_id=model_id)
        .order_by("-started_at")
        .only("id", "model_id", "started_at", "language", "mode", "status", "weak_probes", "error")[:rounds]
    )
    round_ids = [r.pk for r in rnds]
    cells: dict[tuple[int, int], dict[str, Any]] = {}
    seen: set[int] = set()
    counts: dict[str, int] = defaultdict(int)
    for round_id, endpoint_id, outcome, action, severity, streak, failed in EndpointRound.objects.filter(
        round_id__in=round_ids
    ).values_list("round_id", "endpoint_id", "outcome", "action", "severity", "streak", F("evidence__failed")):
        seen.add(endpoint_id)
        counts[outcome] += 1
        cells[(round_id, endpoint_id)] = {
            "endpoint_id": endpoint_id,
            "outcome": outcome,
            "action": action,
            "severity": severity,
            "streak": streak,
            "failed": ", ".join(KIND_LABELS.get(k, k) for k in (failed or {})),
        }
    endpoints = list(
        Endpoint.objects.filter(Q(model_id=model_id) & (Q(active=True) | Q(pk__in=seen)))
        .select_related("policy_state")
        .order_by("tag")
    )
    tags = {ep.pk: ep.tag for ep in endpoints}
    columns = []
    for ep in endpoints:
        state = _state_of(ep)
        columns.append(
            MatrixColumn(
                endpoint=ep,
                state=_state_label(state, now),
                suspended_until=state.suspended_until if state else None,
                fail_streak=state.fail_streak if state else 0,
            )
        )
    for (_, endpoint_id), cell in cells.items():
        # Label and tooltip made here, once per cell: the matrix is the biggest template
        # loop of the dashboards (up to 336 rounds × the fleet).
        cell["tag"] = tags.get(endpoint_id, "")
        cell["letter"] = ACTION_LETTERS.get(cell["action"], "")
        cell["title"] = (
            f"{cell['tag']}: {cell['outcome']}"
            + (f" ({cell['failed']})" if cell["failed"] else "")
            + (f" · {cell['action']}" if cell["action"] != "none" else "")
            + f" · streak {cell['streak']}"
        )
    rows = [
        MatrixRow(
            round=r,
            weak=", ".join(KIND_LABELS.get(k, k) for k in (r.weak_probes or {})),
            cells=[cells.get((r.pk, c.endpoint.pk)) for c in columns],
        )
        for r in rnds
    ]
    mode = ModelConfig.objects.filter(model_id=model_id).values_list("mode", flat=True).first() or Mode.OBSERVE
    return {"model": model_id, "mode": mode, "columns": columns, "rows": rows, "counts": dict(counts)}


# --------------------------------------------------------------------- round results


def _pretty(evidence: Any) -> str:
    return json.dumps(evidence, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def round_results(round_id: int) -> dict[str, Any] | None:
    """One round's probe results with evidence, grouped by endpoint; None if no such round.

    Returns ``{"round", "weak": [(kind, why)], "endpoints": [{"endpoint", "er" (EndpointRound
    or None), "results": [ProbeResult with .evidence_json, .fleet_rate]}], "decisions":
    [Decision]}``.
    Four queries.
    """
    rnd = Round.objects.filter(pk=round_id).first()
    if rnd is None:
        return None
    ers = {er.endpoint_id: er for er in EndpointRound.objects.filter(round=rnd)}
    order = {k: i for i, k in enumerate(ALL_KINDS)}
    by_endpoint: dict[int, dict[str, Any]] = {}
    for r in ProbeResult.objects.filter(round=rnd).select_related("endpoint"):
        r.evidence_json = _pretty(r.evidence)  # type: ignore[attr-defined]
        group = by_endpoint.setdefault(
            r.endpoint_id, {"endpoint": r.endpoint, "er": ers.get(r.endpoint_id), "results": []}
        )
        group["results"].append(r)
    for group in by_endpoint.values():
        group["results"].sort(key=lambda r: (order.get(r.kind, 99), r.sample))
    decisions = list(Decision.objects.filter(round=rnd).select_related("endpoint").order_by("created_at", "id"))
    return {
        "round": rnd,
        "weak": sorted((rnd.weak_probes or {}).items()),
        "endpoints": sorted(by_endpoint.values(), key=lambda g: g["endpoint"].tag),
        "decisions": decisions,
    }


# --------------------------------------------------------------------- endpoint page


@dataclass
class TimelineBar:
    """A suspension interval on the endpoint page's timeline, as % of the window."""

    start: datetime
    end: datetime
    enforced: bool
    reason: str
    left_pct: float = 0.0
    width_pct: float = 0.0


@dataclass
class EndpointHistory:
    """Everything the endpoint page shows (see ``endpoint_history``)."""

    endpoint: Endpoint
    mode: str
    state: EndpointPolicyState | None
    state_label: str
    window_start: datetime | None
    window_end: datetime
    chart: dict[str, Any]
    kinds: list[tuple[str, str]]
    history: list[dict[str, Any]]
    failed_checks: list[dict[str, Any]]
    recent_failures: list[dict[str, Any]]
    decisions: list[Decision]
    timeline: list[TimelineBar] = field(default_factory=list)


def endpoint_history(endpoint_id: int, chart_rounds: int, table_rounds: int, now: datetime) -> EndpointHistory | None:
    """The endpoint page of ``endpoint_id``; None when there is no such endpoint.

    - ``chart``: TTFT of the endpoint's TTFT probe per round over the last ``chart_rounds``
      rounds of its model, ``{"points": [{"x": epoch ms, "y": TTFT ms, "v": verdict}],
      "fleet": [{"x", "y": mean TTFT ms of the fleet}], "limit_ms"}``;
    - ``history``: the last ``table_rounds`` rounds, newest first, each ``{"round_id",
      "started_at", "language", "outcome", "action", "streak", "cells": [result dict or
      None per kind]}``;
    - ``failed_checks``: per failed (kind, check) in the chart window: this endpoint's
      failures, the fleet's failure rate for the check over the window, and the mean of the
      fleet rate recorded at each failure (``evidence.fleet_rate``);
    - ``decisions`` and ``timeline``: the audit rows of the endpoint and its suspension
      intervals (enforced or shadow) clipped to the window.

    Nine queries.
    """
    ep = (
        Endpoint.objects.select_related("provider", "policy_state")
        .annotate(mode=_mode_subquery())
        .filter(pk=endpoint_id)
        .first()
    )
    if ep is None:
        return None
    state = _state_of(ep)
    rounds = list(
        Round.objects.filter(model_id=ep.model_id)
        .order_by("-started_at")
        .values_list("id", "started_at", "language")[:chart_rounds]
    )
    round_ids = [r[0] for r in rounds]
    table_ids = round_ids[:table_rounds]
    started = {r[0]: r[1] for r in rounds}
    window_start = rounds[-1][1] if rounds else None

    # TTFT chart: this endpoint's TTFT probe, and the fleet's mean for context (a slow round
    # for everyone is OpenRouter or the model, not this host).
    points: list[dict[str, Any]] = [
        {"x": int(started[rid].timestamp() * 1000), "y": round(float(ttft or 0), 1), "v": verdict}
        for rid, ttft, verdict in ProbeResult.objects.filter(
            endpoint=ep, kind="ttft", sample=0, round_id__in=round_ids, ttft_ms__isnull=False
        ).values_list("round_id", "ttft_ms", "verdict")
    ]
    fleet: list[dict[str, Any]] = [
        {"x": int(started[row["round_id"]].timestamp() * 1000), "y": round(row["mean"], 1)}
        for row in ProbeResult.objects.filter(
            kind="ttft", sample=0, round_id__in=round_ids, ttft_ms__isnull=False
        )
        .values("round_id")
        .annotate(mean=Avg("ttft_ms"))
        .order_by()
    ]
    points.sort(key=lambda p: p["x"])
    fleet.sort(key=lambda p: p["x"])
    chart = {"points": points, "fleet": fleet, "limit_ms": float(settings.CANARY_TTFT_LIMIT_S) * 1000}

    # Verdict history per probe (sample 0: the probe's verdict after round-level evidence).
    kinds = list(ALL_KINDS)
    cells: dict[tuple[int, str], dict[str, Any]] = {}
    failures: list[dict[str, Any]] = []
    for values in ProbeResult.objects.filter(endpoint=ep, sample=0, round_id__in=table_ids).values(
        "round_id", "kind", "verdict", "raw_verdict", "check_name", "reason", "ttft_ms",
        "transport_kind", "http_status", "reply_excerpt", "serving_provider", "generation_id", "fleet_rate",
        "round_reason",
    ):
        row: dict[str, Any] = dict(values)
        row["reason"] = row.pop("round_reason") or row["reason"]
        row["excerpt"] = (row.pop("reply_excerpt") or "")[:EXCERPT_CHARS]
        row["started_at"] = started[row["round_id"]]
        cells[(row["round_id"], row["kind"])] = row
        if row["verdict"] == "fail":
            failures.append(row)
    outcomes: dict[int, dict[str, Any]] = {
        er["round_id"]: dict(er)
        for er in EndpointRound.objects.filter(endpoint=ep, round_id__in=table_ids).values(
            "round_id", "outcome", "action", "streak", "suspended_until"
        )
    }
    history = []
    for rid, at, language in rounds[:table_rounds]:
        er = outcomes.get(rid, {})
        history.append(
            {
                "round_id": rid,
                "started_at": at,
                "language": language,
                "outcome": er.get("outcome", ""),
                "action": er.get("action", ""),
                "streak": er.get("streak", 0),
                "cells": [cells.get((rid, k)) for k in kinds],
            }
        )
    failures.sort(key=lambda r: r["started_at"], reverse=True)
    for row in failures:
        # Round-level checks (leading garbage, corruption) judge the probes' replies and
        # keep none of their own: show the first reply of the same round instead.
        if not row["excerpt"]:
            for k in kinds:
                other = cells.get((row["round_id"], k))
                if other and other["excerpt"]:
                    row["excerpt"], row["excerpt_from"] = other["excerpt"], KIND_LABELS.get(k, k)
                    break

    failed_checks = _failed_checks(ep, round_ids)
    decisions = list(
        Decision.objects.filter(endpoint=ep)
        .select_related("round")
        .annotate(marked_fp=Exists(Decision.objects.filter(refers_to=OuterRef("pk"), action=Action.FALSE_POSITIVE)))
        .order_by("-created_at", "-id")[:TIMELINE_DECISIONS]
    )
    window_end = max(now, state.suspended_until) if state and state.suspended_until else now
    timeline = _timeline(decisions, window_start, window_end)
    return EndpointHistory(
        endpoint=ep,
        mode=getattr(ep, "mode", None) or Mode.OBSERVE,
        state=state,
        state_label=_state_label(state, now),
        window_start=window_start,
        window_end=window_end,
        chart=chart,
        kinds=[(k, KIND_LABELS.get(k, k)) for k in kinds],
        history=history,
        failed_checks=failed_checks,
        recent_failures=failures[:RECENT_FAILURES],
        decisions=decisions,
        timeline=timeline,
    )


def _failed_checks(ep: Endpoint, round_ids: list[int]) -> list[dict[str, Any]]:
    """Per (kind, check) this endpoint failed in ``round_ids``: its failures, the fleet's
    failure rate for that check over the same rounds, and the mean recorded fleet rate.
    Two queries, both aggregated in the database."""
    mine = list(
        ProbeResult.objects.filter(endpoint=ep, sample=0, verdict="fail", round_id__in=round_ids)
        .values("kind", "check_name")
        .annotate(
            failures=Count("id"),
            recorded_fleet_rate=Avg("fleet_rate"),
            last_at=Max("created_at"),
        )
        .order_by("kind", "check_name")
    )
    if not mine:
        return []
    kinds = {row["kind"] for row in mine}
    # Denominator: every judged result of the kind in the fleet (pass, fail, inconclusive);
    # transport errors and not-applicable probes say nothing about the check.
    judged: dict[str, int] = defaultdict(int)
    fleet_failed: dict[tuple[str, str], int] = defaultdict(int)
    endpoints_failing: dict[tuple[str, str], int] = {}
    for row in (
        ProbeResult.objects.filter(
            round_id__in=round_ids, sample=0, kind__in=kinds, verdict__in=(Verdict.PASS, Verdict.FAIL, Verdict.INCONCLUSIVE)
        )
        .values("kind", "check_name", "verdict")
        .annotate(n=Count("id"), endpoints=Count("endpoint_id", distinct=True))
        .order_by()
    ):
        judged[row["kind"]] += row["n"]
        if row["verdict"] == "fail":
            fleet_failed[(row["kind"], row["check_name"])] += row["n"]
            endpoints_failing[(row["kind"], row["check_name"])] = row["endpoints"]
    rounds_judged = len(round_ids)
    out = []
    for row in mine:
        key = (row["kind"], row["check_name"])
        out.append(
            {
                "kind": row["kind"],
                "kind_label": KIND_LABELS.get(row["kind"], row["kind"]),
                "check": row["check_name"],
                "failures": row["failures"],
                "rounds": rounds_judged,
                "fleet_rate": (fleet_failed[key] / judged[row["kind"]]) if judged[row["kind"]] else None,
                "endpoints_failing": endpoints_failing.get(key, 0),
                "recorded_fleet_rate": row["recorded_fleet_rate"],
                "last_at": row["last_at"],
            }
        )
    return out


def _timeline(decisions: list[Decision], start: datetime | None, end: datetime) -> list[TimelineBar]:
    """Suspension intervals from the audit rows: from each ``suspended``/``would_suspend``
    to the first later restore/expiry/lift, or its ``suspended_until``; clipped to the window."""
    if start is None or end <= start:
        return []
    chronological = sorted(decisions, key=lambda d: (d.created_at, d.pk))
    bars: list[TimelineBar] = []
    for i, d in enumerate(chronological):
        if d.action not in _START_ACTIONS:
            continue
        until = d.suspended_until or end
        for later in chronological[i + 1 :]:
            if later.action in _END_ACTIONS or later.action in _START_ACTIONS:
                until = min(until, later.created_at)
                break
        if until <= start or d.created_at >= end:
            continue
        bars.append(TimelineBar(start=d.created_at, end=until, enforced=d.action == "suspended", reason=d.reason))
    span = (end - start).total_seconds()
    for bar in bars:
        left = max(0.0, (bar.start - start).total_seconds() / span)
        right = min(1.0, (bar.end - start).total_seconds() / span)
        bar.left_pct = round(left * 100, 2)
        bar.width_pct = round(max(0.4, (right - left) * 100), 2)
    return bars


# --------------------------------------------------------------------- ignore list


def ignore_lists(models: list[str], now: datetime) -> list[dict[str, Any]]:
    """The ignore list in force now of each model, with the source of each entry.

    Per model ``{"model", "mode", "ignore": [target], "entries": [{"layer", "target",
    "reason", "by", "since", "until", "exclusion" (Exclusion or None), "endpoint" (Endpoint
    or None), "covered_by": slug or ""}], "shadow": [EndpointPolicyState]}``. The merged
    list comes from ``canary.services.quarantine.ignore_list_get`` (the routing API's own answer);
    the rows behind it are read once for all models. 3 + 2 × models queries.
    """
    modes = dict(ModelConfig.objects.filter(model_id__in=models).values_list("model_id", "mode"))
    exclusions: dict[str, list[Exclusion]] = defaultdict(list)
    for e in Exclusion.objects.filter(model_id__in=models, active=True).filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=now)
    ):
        exclusions[e.model_id].append(e)
    suspended: dict[str, list[EndpointPolicyState]] = defaultdict(list)
    for s in (
        EndpointPolicyState.objects.filter(endpoint__model_id__in=models, suspended_until__gt=now)
        .select_related("endpoint")
        .order_by("endpoint__tag")
    ):
        suspended[s.endpoint.model_id].append(s)
    out = []
    for model in models:
        merged = ignore_list_get(model, now)
        ignored = set(merged["ignore"])
        slugs = {t for t in ignored if "/" not in t}
        entries: list[dict[str, Any]] = []
        for e in exclusions[model]:
            entries.append(
                {
                    "layer": e.layer, "target": e.target, "reason": e.reason, "by": e.created_by,
                    "since": e.created_at, "until": e.expires_at, "exclusion": e, "endpoint": None,
                    "evidence_url": e.evidence_url,
                }
            )
        for s in suspended[model]:
            if s.enforced:
                entries.append(
                    {
                        "layer": "canary", "target": s.endpoint.tag, "reason": "canary suspension",
                        "by": "canary", "since": s.last_suspended_at, "until": s.suspended_until,
                        "exclusion": None, "endpoint": s.endpoint, "evidence_url": "",
                    }
                )
        for entry in entries:
            slug = entry["target"].partition("/")[0]
            entry["covered_by"] = slug if entry["target"] not in ignored and slug in slugs else ""
        entries.sort(key=lambda x: (x["target"], x["layer"]))
        out.append(
            {
                "model": model,
                "mode": modes.get(model, Mode.OBSERVE),
                "ignore": merged["ignore"],
                "sources": merged["sources"],
                "entries": entries,
                "shadow": [s for s in suspended[model] if not s.enforced],
            }
        )
    return out


# --------------------------------------------------------------------- observe report


def observe_report(model_id: str, since: datetime) -> dict[str, Any]:
    """Observe-mode report of ``model_id`` since ``since``: the would-suspend decisions, how
    many were marked false positive, the false-positive rate, per endpoint and per day.

    Returns ``{"model", "since", "total", "false_positives", "fp_rate" (None when there
    are no decisions), "by_endpoint": [{"tag", "endpoint_id", "total", "false_positives",
    "fp_rate"}], "chart": {"days": [iso date], "confirmed": [n], "false_positive": [n]},
    "decisions": [Decision with .marked_fp], "truncated": bool}``. Enforced suspensions
    are counted separately in ``suspended_total``/``suspended_false_positives``.
    Four queries.
    """
    fp = Exists(Decision.objects.filter(refers_to=OuterRef("pk"), action=Action.FALSE_POSITIVE))
    base = Decision.objects.filter(model_id=model_id, created_at__gte=since, action__in=_START_ACTIONS)
    totals = {
        row["action"]: row
        for row in base.annotate(fp=fp)
        .values("action")
        .annotate(n=Count("id"), fps=Count("id", filter=Q(fp=True)))
        .order_by()
    }
    would = totals.get(Action.WOULD_SUSPEND, {"n": 0, "fps": 0})
    enforced = totals.get("suspended", {"n": 0, "fps": 0})
    by_endpoint = [
        {
            "tag": row["endpoint__tag"],
            "endpoint_id": row["endpoint_id"],
            "total": row["n"],
            "false_positives": row["fps"],
            "fp_rate": row["fps"] / row["n"] if row["n"] else None,
        }
        for row in base.filter(action=Action.WOULD_SUSPEND)
        .annotate(fp=fp)
        .values("endpoint_id", "endpoint__tag")
        .annotate(n=Count("id"), fps=Count("id", filter=Q(fp=True)))
        .order_by("-n", "endpoint__tag")
    ]
    daily: dict[str, dict[str, int]] = {}
    for row in (
        base.filter(action=Action.WOULD_SUSPEND)
        .annotate(fp=fp, day=TruncDate("created_at"))
        .values("day")
        .annotate(n=Count("id"), fps=Count("id", filter=Q(fp=True)))
        .order_by("day")
    ):
        daily[row["day"].isoformat()] = {"n": row["n"], "fps": row["fps"]}
    decisions = list(
        base.filter(action=Action.WOULD_SUSPEND)
        .select_related("endpoint", "round")
        .annotate(marked_fp=fp)
        .order_by("-created_at", "-id")[: OBSERVE_LIST_MAX + 1]
    )
    return {
        "model": model_id,
        "since": since,
        "total": would["n"],
        "false_positives": would["fps"],
        "fp_rate": would["fps"] / would["n"] if would["n"] else None,
        "suspended_total": enforced["n"],
        "suspended_false_positives": enforced["fps"],
        "by_endpoint": by_endpoint,
        "chart": {
            "days": list(daily),
            "confirmed": [d["n"] - d["fps"] for d in daily.values()],
            "false_positive": [d["fps"] for d in daily.values()],  # vocabulary: a chart series
        },
        "decisions": decisions[:OBSERVE_LIST_MAX],
        "truncated": len(decisions) > OBSERVE_LIST_MAX,
    }


# --------------------------------------------------------------------- probe health


def probe_health(model_id: str, since: datetime) -> dict[str, Any]:
    """Probe health of ``model_id`` since ``since``: positive-control results and the
    rounds where a probe was weak.

    A positive control is an endpoint known to fail a probe kind (``positive_control_kinds``);
    each round it must fail, or the probe is judged weak that round. Returns ``{"model",
    "since", "controls": [{"endpoint", "kind", "kind_label", "rounds", "failed", "passed",
    "other", "weak_rate", "last": [(started_at, verdict, round_id)]}], "weak_rounds":
    [{"round_id", "started_at", "language", "kinds": [(label, why)]}], "weak_by_kind":
    [(label, n)], "rounds": n}``. Four queries.
    """
    controls = [
        ep for ep in Endpoint.objects.filter(model_id=model_id).order_by("tag") if ep.positive_control_kinds
    ]
    control_rows: list[dict[str, Any]] = []
    if controls:
        cond = Q()
        for ep in controls:
            cond |= Q(endpoint=ep, kind__in=list(ep.positive_control_kinds))
        stats = {
            (row["endpoint_id"], row["kind"]): row
            for row in ProbeResult.objects.filter(cond, sample=0, round__started_at__gte=since)
            .values("endpoint_id", "kind")
            .annotate(
                n=Count("id"),
                failed=Count("id", filter=Q(verdict="fail")),
                passed=Count("id", filter=Q(verdict="pass")),
            )
            .order_by()
        }
        for ep in controls:
            for kind in ep.positive_control_kinds:
                row = stats.get((ep.pk, kind), {"n": 0, "failed": 0, "passed": 0})
                control_rows.append(
                    {
                        "endpoint": ep,
                        "kind": kind,
                        "kind_label": KIND_LABELS.get(kind, kind),
                        "rounds": row["n"],
                        "failed": row["failed"],
                        "passed": row["passed"],
                        "other": row["n"] - row["failed"] - row["passed"],
                        "weak_rate": (row["n"] - row["failed"]) / row["n"] if row["n"] else None,
                    }
                )
    rounds_total = Round.objects.filter(model_id=model_id, started_at__gte=since).count()
    weak_rounds = []
    weak_by_kind: dict[str, int] = defaultdict(int)
    for rid, at, language, weak in (
        Round.objects.filter(model_id=model_id, started_at__gte=since)
        .exclude(weak_probes={})
        .order_by("-started_at")
        .values_list("id", "started_at", "language", "weak_probes")
    ):
        for kind in weak or {}:
            weak_by_kind[kind] += 1
        weak_rounds.append(
            {
                "round_id": rid,
                "started_at": at,
                "language": language,
                "kinds": [(KIND_LABELS.get(k, k), why) for k, why in sorted((weak or {}).items())],
            }
        )
    return {
        "model": model_id,
        "since": since,
        "controls": control_rows,
        "weak_rounds": weak_rounds,
        "weak_by_kind": sorted(((KIND_LABELS.get(k, k), n) for k, n in weak_by_kind.items()), key=lambda x: -x[1]),
        "rounds": rounds_total,
    }


# --------------------------------------------------------------------- user reports


@dataclass
class GenerationLookup:
    """What OpenRouter says about a generation id: ``provider_name`` when found, otherwise
    ``error`` (a message fit for staff); ``data`` is OpenRouter's ``data`` object."""

    generation_id: str
    provider_name: str = ""
    error: str = ""
    data: dict[str, Any] = field(default_factory=dict)


def generation_lookup(generation_id: str) -> GenerationLookup:
    """Ask OpenRouter (``GET /generation?id=``) which provider served ``generation_id``.

    Never raises for OpenRouter's answers: a 404 and any other failure become ``error``.
    """
    found = GenerationLookup(generation_id=generation_id)
    try:
        client = openrouter_client()
    except Exception as exc:  # a misconfigured client must not take the page down
        found.error = f"The OpenRouter client is not configured: {exc}"
        return found
    try:
        data = client.get_generation(generation_id)
    except GenerationNotFoundError:
        found.error = (
            f"OpenRouter has no generation {generation_id!r}. Check the id; a generation can "
            "take a few seconds to appear, and only generations of our own API key are visible."
        )
        return found
    except OpenRouterError as exc:
        found.error = f"Could not ask OpenRouter about generation {generation_id!r}: {exc}"
        return found
    # The client is the process's shared one (services.openrouter_client): never closed here.
    found.data = data
    found.provider_name = str(data.get("provider_name") or "")
    if not found.provider_name:
        found.error = f"OpenRouter knows generation {generation_id!r} but does not say which provider served it."
    return found


def report_correlate(
    model_id: str, at: datetime, language: str, symptom: str, provider_name: str = ""
) -> dict[str, Any]:
    """Every probe result and decision of ``model_id``'s endpoints within two hours of
    ``at``, marked by relevance to a user's report.

    A result is *relevant* when its kind would catch the ``symptom`` (``SYMPTOMS``) and it
    did not pass; a round *matches* when it ran in the user's ``language``. When the serving
    ``provider_name`` is known (from the generation id), its endpoints are ``served``.
    Returns ``{"window": (start, end), "rounds": [...], "results": [row dict],
    "decisions": [Decision], "endpoints": [{"tag", "endpoint_id", "provider", "served",
    "relevant", "failed", "outcomes": [outcome per round]}], "served": [tag],
    "symptom_kinds": [kind]}``. Four queries.
    """
    start, end = at - CORRELATION_WINDOW, at + CORRELATION_WINDOW
    symptom_kinds = SYMPTOMS.get(symptom, ("", ()))[1]
    rounds: list[dict[str, Any]] = [
        dict(r)
        for r in Round.objects.filter(model_id=model_id, started_at__gte=start, started_at__lte=end)
        .order_by("started_at")
        .values("id", "started_at", "language", "mode", "status")
    ]
    round_ids = [r["id"] for r in rounds]
    for r in rounds:
        r["matches_language"] = bool(language) and r["language"] == language
    order = {k: i for i, k in enumerate(ALL_KINDS)}
    results: list[dict[str, Any]] = [
        dict(r)
        for r in ProbeResult.objects.filter(round_id__in=round_ids).values(
            "id", "round_id", "endpoint_id", "kind", "sample", "language", "verdict", "check_name",
            "reason", "ttft_ms", "transport_kind", "serving_provider", "generation_id",
            "reply_excerpt", "created_at", tag=F("endpoint__tag"), provider=F("endpoint__provider_name"),
        )
    ]
    starts = {r["id"]: r["started_at"] for r in rounds}
    endpoints: dict[int, dict[str, Any]] = {}
    for row in results:
        row["started_at"] = starts[row["round_id"]]
        row["excerpt"] = (row.pop("reply_excerpt") or "")[:EXCERPT_CHARS]
        row["kind_label"] = KIND_LABELS.get(row["kind"], row["kind"])
        row["served"] = bool(provider_name) and same_provider(row["provider"], provider_name)
        row["relevant"] = row["kind"] in symptom_kinds and row["verdict"] not in (Verdict.PASS, Verdict.NOT_APPLICABLE)
        row["language_match"] = bool(language) and row["language"] == language
        ep = endpoints.setdefault(
            row["endpoint_id"],
            {"tag": row["tag"], "endpoint_id": row["endpoint_id"], "provider": row["provider"],
             "served": row["served"], "relevant": 0, "failed": 0},
        )
        ep["relevant"] += int(row["relevant"])
        ep["failed"] += int(row["verdict"] == "fail")
    results.sort(key=lambda r: (r["started_at"], r["tag"], order.get(r["kind"], 99), r["sample"]))
    outcomes = {
        (er["round_id"], er["endpoint_id"]): er
        for er in EndpointRound.objects.filter(round_id__in=round_ids).values(
            "round_id", "endpoint_id", "outcome", "action"
        )
    }
    summary = sorted(endpoints.values(), key=lambda e: (not e["served"], -e["relevant"], e["tag"]))
    for ep in summary:
        ep["outcomes"] = [outcomes.get((rid, ep["endpoint_id"])) for rid in round_ids]
    decisions = list(
        Decision.objects.filter(model_id=model_id, created_at__gte=start, created_at__lte=end)
        .select_related("endpoint")
        .order_by("created_at", "id")
    )
    return {
        "window": (start, end),
        "rounds": rounds,
        "results": results,
        "decisions": decisions,
        "endpoints": summary,
        "served": [e["tag"] for e in summary if e["served"]],
        "symptom_kinds": list(symptom_kinds),
    }
