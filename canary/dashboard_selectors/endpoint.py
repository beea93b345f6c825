"""One endpoint's page: TTFT chart, verdict history, failed checks, suspension timeline."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import (
    Avg,
    Count,
    Exists,
    Max,
    OuterRef,
    Q,
)

from canary.dashboard_selectors.common import (
    END_ACTIONS,
    EXCERPT_CHARS,
    KIND_LABELS,
    RECENT_FAILURES,
    START_ACTIONS,
    TIMELINE_DECISIONS,
    mode_subquery,
    state_label,
    state_of,
)
from canary.models import (
    Decision,
    Endpoint,
    EndpointPolicyState,
    EndpointRound,
    ProbeResult,
    Round,
)
from canary.probes import ALL_KINDS
from canary.reply_evidence import failing_replies
from canary.terms import Action, Mode, Outcome
from canary.verdicts import Verdict
from canary.why import round_summary

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
    chart_rounds: int
    last_round: dict[str, Any] | None
    checks_chart: dict[str, Any]
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
      "capped": [{"x", "y": limit_ms, "v": "fail"}] (failed probes that never saw a first
      token, drawn at the limit), "fleet": [{"x", "y": mean TTFT ms of the fleet}],
      "limit_ms"}``;
    - ``history``: the last ``table_rounds`` rounds, newest first, each ``{"round_id",
      "started_at", "language", "outcome", "action", "streak", "cells": [result dict or
      None per kind]}``;
    - ``failed_checks``: per failed (kind, check) in the chart window: this endpoint's
      failures, the fleet's failure rate for the check over the window, and the mean of the
      fleet rate recorded at each failure (``evidence.fleet_rate``);
    - ``decisions`` and ``timeline``: the audit rows of the endpoint and its suspension
      intervals (enforced or shadow) clipped to the window;
    - ``recent_failures``: failed checks (each with ``shown``, the failing reply:
      ``canary.reply_evidence``) and frozen rounds (their status), newest first;
    - ``last_round`` (``{"round_id", "started_at", "outcome", "summary"}``), ``chart_rounds``
      (rounds actually in the chart) and ``checks_chart`` (``_checks_chart``).

    Eleven queries (the failing replies and the per-check chart's verdicts are two).
    """
    ep = (
        Endpoint.objects.select_related("provider", "policy_state")
        .annotate(mode=mode_subquery())
        .filter(pk=endpoint_id)
        .first()
    )
    if ep is None:
        return None
    state = state_of(ep)
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
    limit_ms = float(settings.CANARY_TTFT_LIMIT_S) * 1000
    points: list[dict[str, Any]] = []
    capped: list[dict[str, Any]] = []
    for rid, ttft, verdict in ProbeResult.objects.filter(
        Q(ttft_ms__isnull=False) | Q(verdict=Verdict.FAIL), endpoint=ep, kind="ttft", sample=0, round_id__in=round_ids
    ).values_list("round_id", "ttft_ms", "verdict"):
        x = int(started[rid].timestamp() * 1000)
        if ttft is None:
            # Failed with no first token at all (the stream stayed silent past the limit):
            # drawn at the limit and marked, or the worst rounds would vanish from the chart.
            capped.append({"x": x, "y": limit_ms, "v": verdict})
        else:
            points.append({"x": x, "y": round(float(ttft), 1), "v": verdict})
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
    capped.sort(key=lambda p: p["x"])
    fleet.sort(key=lambda p: p["x"])
    chart = {"points": points, "capped": capped, "fleet": fleet, "limit_ms": limit_ms}

    # Verdict history per probe (sample 0: the probe's verdict after round-level evidence).
    kinds = list(ALL_KINDS)
    cells: dict[tuple[int, str], dict[str, Any]] = {}
    failures: list[dict[str, Any]] = []
    for values in ProbeResult.objects.filter(endpoint=ep, sample=0, round_id__in=table_ids).values(
        "round_id", "kind", "verdict", "raw_verdict", "check_name", "reason", "ttft_ms",
        "transport_kind", "http_status", "reply_excerpt", "serving_provider", "generation_id", "fleet_rate",
        "round_reason", "evidence",
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
        for er in EndpointRound.objects.filter(endpoint=ep, round_id__in=round_ids).values(
            "round_id", "outcome", "action", "streak", "suspended_until", "evidence"
        )
    }
    for er in outcomes.values():
        er["summary"] = round_summary(er.get("evidence") or {})
    controls = set(ep.positive_control_kinds or [])
    for row in cells.values():
        row["control"] = row["kind"] in controls
    history = []
    for rid, at, language in rounds[:table_rounds]:
        er = outcomes.get(rid, {})
        history.append(
            {
                "round_id": rid,
                "started_at": at,
                "language": language,
                "outcome": er.get("outcome", ""),
                "summary": er.get("summary", ""),
                "action": er.get("action", ""),
                "streak": er.get("streak", 0),
                "cells": [cells.get((rid, k)) for k in kinds],
            }
        )
    # Each failure with the reply it failed on (a round-level check's culprit reply, never
    # another probe's clean one), centred on the first bad character.
    shown = failing_replies(
        {"round_id": r["round_id"], "endpoint_id": ep.pk, "kind": r["kind"], "check_name": r["check_name"],
         "evidence": r["evidence"], "sample": 0} for r in failures
    )
    for row in failures:
        row["shown"] = shown.get((row["round_id"], ep.pk, row["kind"]))
    # A frozen round has no failed check, but its status is the finding (a 429, a 5xx).
    for rid, at, _language in rounds[:table_rounds]:
        er = outcomes.get(rid, {})
        if er.get("outcome") == Outcome.FROZEN:
            failures.append({"round_id": rid, "started_at": at, "kind": "transport", "check_name": Outcome.FROZEN.value,
                             "reason": er["summary"] or "transport errors", "fleet_rate": None, "shown": None})
    failures.sort(key=lambda r: r["started_at"], reverse=True)
    latest = outcomes.get(rounds[0][0]) if rounds else None
    last_round = None if latest is None else {
        "round_id": rounds[0][0], "started_at": rounds[0][1], "outcome": latest["outcome"], "summary": latest["summary"],
    }
    checks_chart = _checks_chart(round_ids, started, outcomes, cells_all(ep, round_ids))

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
        state_label=state_label(state, now),
        window_start=window_start,
        window_end=window_end,
        chart=chart,
        chart_rounds=len(rounds),
        last_round=last_round,
        checks_chart=checks_chart,
        kinds=[(k, KIND_LABELS.get(k, k)) for k in kinds],
        history=history,
        failed_checks=failed_checks,
        recent_failures=failures[:RECENT_FAILURES],
        decisions=decisions,
        timeline=timeline,
    )


def cells_all(ep: Endpoint, round_ids: list[int]) -> dict[tuple[int, str], str | None]:
    """The final verdict of each (round, kind) of ``ep`` in ``round_ids`` (sample 0)."""
    return {
        (rid, kind): verdict
        for rid, kind, verdict in ProbeResult.objects.filter(endpoint=ep, sample=0, round_id__in=round_ids)
        .values_list("round_id", "kind", "verdict")
    }


def _checks_chart(
    round_ids: list[int], started: dict[int, datetime], outcomes: dict[int, dict[str, Any]],
    verdicts: dict[tuple[int, str], str | None],
) -> dict[str, Any]:
    """Per probe kind, the endpoint's failure rate in each round: the share of its replies
    that showed the failure (``k / n`` from the round evidence; 1 for a failure stored
    before the counts were), 0 when the kind was judged and did not fail, None when it was
    not judged (a transport error, not applicable). Shape: ``{"series": [{"kind", "label",
    "points": [{"x": epoch ms, "y": 0..1 | None, "k", "n"}]}]}``, oldest round first."""
    series = []
    for kind in ALL_KINDS:
        points: list[dict[str, Any]] = []
        for rid in sorted(round_ids, key=lambda r: started[r]):
            verdict = verdicts.get((rid, kind))
            evidence = (outcomes.get(rid) or {}).get("evidence") or {}
            x = int(started[rid].timestamp() * 1000)
            if verdict == Verdict.FAIL:
                pair = ((evidence.get("replies") or {}).get("checks") or {}).get(kind)
                k, n = (int(pair[0]), int(pair[1])) if isinstance(pair, list) and len(pair) == 2 and pair[1] else (1, 1)
                points.append({"x": x, "y": round(k / n, 3), "k": k, "n": n})
            elif verdict in (Verdict.PASS, Verdict.INCONCLUSIVE):
                points.append({"x": x, "y": 0, "k": 0, "n": None})
            else:
                points.append({"x": x, "y": None, "k": None, "n": None})
        series.append({"kind": kind, "label": KIND_LABELS.get(kind, kind), "points": points})
    return {"series": series}


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
        if d.action not in START_ACTIONS:
            continue
        until = d.suspended_until or end
        for later in chronological[i + 1 :]:
            if later.action in END_ACTIONS or later.action in START_ACTIONS:
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
