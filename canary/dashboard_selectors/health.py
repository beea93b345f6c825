"""The fleet health matrix and one round's results."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import (
    F,
    Q,
)

from canary.dashboard_selectors.common import (
    ACTION_LETTERS,
    KIND_LABELS,
    KIND_SHORT,
    state_label,
    state_of,
)
from canary.models import (
    Decision,
    Endpoint,
    EndpointRound,
    ModelConfig,
    ProbeResult,
    Round,
)
from canary.probes import ALL_KINDS
from canary.reply_evidence import failing_replies
from canary.terms import Mode
from canary.verdicts import Verdict
from canary.why import round_summary

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
    # A completed round without a single endpoint: the listing was empty.
    no_endpoints: bool = False


def health_matrix(model_id: str, rounds: int, now: datetime) -> dict[str, Any]:
    """The fleet health matrix: the last ``rounds`` rounds of ``model_id`` × its endpoints.

    Returns ``{"model", "mode", "columns": [MatrixColumn], "rows": [MatrixRow] (newest
    first), "counts": {outcome: n}, "check_legend": [(short, label)], "empty_listing": the
    newest round completed with no endpoints (the model lists none)}``; a cell is
    ``{"outcome", "action", "severity", "streak", "failed": "kind, kind", "failed_short":
    "lang+1"}`` (what the cell prints: the first failed check's short label and how many
    more). Four queries.
    """
    rnds = list(
        Round.objects.filter(model_id=model_id)
        .order_by("-started_at")
        .only("id", "model_id", "started_at", "language", "mode", "status", "weak_probes", "error", "trigger")[:rounds]
    )
    round_ids = [r.pk for r in rnds]
    cells: dict[tuple[int, int], dict[str, Any]] = {}
    with_endpoints: set[int] = set()
    seen: set[int] = set()
    counts: dict[str, int] = defaultdict(int)
    for round_id, endpoint_id, outcome, action, severity, streak, failed in EndpointRound.objects.filter(
        round_id__in=round_ids
    ).values_list("round_id", "endpoint_id", "outcome", "action", "severity", "streak", F("evidence__failed")):
        seen.add(endpoint_id)
        with_endpoints.add(round_id)
        counts[outcome] += 1
        cells[(round_id, endpoint_id)] = {
            "endpoint_id": endpoint_id,
            "outcome": outcome,
            "action": action,
            "severity": severity,
            "streak": streak,
            "failed": ", ".join(KIND_LABELS.get(k, k) for k in (failed or {})),
            "failed_short": _short(list(failed or {})),
        }
    endpoints = list(
        Endpoint.objects.filter(Q(model_id=model_id) & (Q(active=True) | Q(pk__in=seen)))
        .select_related("policy_state")
        .order_by("tag")
    )
    tags = {ep.pk: ep.tag for ep in endpoints}
    columns = []
    for ep in endpoints:
        state = state_of(ep)
        columns.append(
            MatrixColumn(
                endpoint=ep,
                state=state_label(state, now),
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
            no_endpoints=r.status == Round.Status.COMPLETED and r.pk not in with_endpoints,
        )
        for r in rnds
    ]
    mode = ModelConfig.objects.filter(model_id=model_id).values_list("mode", flat=True).first() or Mode.OBSERVE
    return {
        "model": model_id, "mode": mode, "columns": columns, "rows": rows, "counts": dict(counts),
        "check_legend": [(KIND_SHORT[k], KIND_LABELS[k]) for k in KIND_LABELS if k in KIND_SHORT],
        "empty_listing": bool(rows) and rows[0].no_endpoints,
    }


def _short(kinds: list[str]) -> str:
    if not kinds:
        return ""
    order = {k: i for i, k in enumerate(KIND_LABELS)}
    kinds = sorted(kinds, key=lambda k: order.get(k, 99))
    first = KIND_SHORT.get(kinds[0], kinds[0][:4])
    return first + (f"+{len(kinds) - 1}" if len(kinds) > 1 else "")


# --------------------------------------------------------------------- round results


def _pretty(evidence: Any) -> str:
    return json.dumps(evidence, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def round_results(round_id: int) -> dict[str, Any] | None:
    """One round's probe results with evidence, grouped by endpoint; None if no such round.

    Returns ``{"round", "weak": [(kind, why)], "endpoints": [{"endpoint", "er" (EndpointRound
    or None), "summary" (what failed on k of n replies, or the frozen status: ``canary.why``),
    "results": [ProbeResult with .evidence_json, .fleet_rate, .control (a positive
    control's own kind), .shown (a failure's ``FailingReply``, else None)]}], "decisions":
    [Decision]}``.
    Five queries.
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
    failed = [r for g in by_endpoint.values() for r in g["results"] if r.verdict == Verdict.FAIL and r.sample == 0]
    shown = failing_replies(
        {"round_id": r.round_id, "endpoint_id": r.endpoint_id, "kind": r.kind, "check_name": r.check_name,
         "evidence": r.evidence, "sample": r.sample} for r in failed
    )
    for group in by_endpoint.values():
        group["results"].sort(key=lambda r: (order.get(r.kind, 99), r.sample))
        er = group["er"]
        group["summary"] = round_summary(er.evidence or {}) if er is not None else ""
        controls = set(group["endpoint"].positive_control_kinds or [])
        for r in group["results"]:
            r.control = r.kind in controls
            r.shown = shown.get((r.round_id, r.endpoint_id, r.kind)) if r.sample == 0 else None
    decisions = list(Decision.objects.filter(round=rnd).select_related("endpoint").order_by("created_at", "id"))
    return {
        "round": rnd,
        "weak": sorted((rnd.weak_probes or {}).items()),
        "endpoints": sorted(by_endpoint.values(), key=lambda g: g["endpoint"].tag),
        "decisions": decisions,
    }
