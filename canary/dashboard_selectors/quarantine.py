"""The quarantine pages: ignore lists in force, the observe-mode report, probe health."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from django.db.models import (
    Count,
    Exists,
    OuterRef,
    Q,
)
from django.db.models.functions import TruncDate

from canary.dashboard_selectors.common import (
    KIND_LABELS,
    OBSERVE_LIST_MAX,
    START_ACTIONS,
    latest_per,
)
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
from canary.services.ignore_list import ignore_list_get
from canary.terms import Action, Mode
from canary.why import round_summary
from core.ignore_rule import covering

# --------------------------------------------------------------------- ignore list


def suspension_evidence(models: list[str], now: datetime) -> dict[int, dict[str, Any]]:
    """Why each endpoint of ``models`` suspended now (enforced or shadow) is suspended: the
    latest round whose policy action suspended it, and the checks it failed there.

    Returns ``{endpoint_id: {"round_id", "decided_at", "summary" (the checks on k of n
    replies: ``canary.why.round_summary``), "failed": [{"kind", "kind_label", "check",
    "reason"}]}}``. One query (``DISTINCT ON`` the endpoint) whatever the number
    of endpoints or rounds.
    """
    order = {k: i for i, k in enumerate(KIND_LABELS)}
    out: dict[int, dict[str, Any]] = {}
    for row in latest_per(
        EndpointRound.objects.filter(
            endpoint__model_id__in=models, endpoint__policy_state__suspended_until__gt=now, action__in=START_ACTIONS
        ).values("endpoint_id", "round_id", "created_at", "evidence"),
        "endpoint_id", "-created_at", "-id",
    ):
        evidence = row["evidence"] if isinstance(row["evidence"], dict) else {}
        raw = evidence.get("failed")
        failed: dict[str, Any] = raw if isinstance(raw, dict) else {}
        out[row["endpoint_id"]] = {
            "round_id": row["round_id"],
            "decided_at": row["created_at"],
            "summary": round_summary(evidence),
            "failed": [
                {
                    "kind": kind,
                    "kind_label": KIND_LABELS.get(kind, kind),
                    "check": info.get("check", "") if isinstance(info, dict) else "",
                    "reason": info.get("reason", "") if isinstance(info, dict) else "",
                }
                for kind, info in sorted(failed.items(), key=lambda kv: order.get(kv[0], 99))
            ],
        }
    return out


def ignore_lists(models: list[str], now: datetime) -> list[dict[str, Any]]:
    """The ignore list in force now of each model, with the source of each entry.

    Per model ``{"model", "mode", "ignore": [target], "entries": [{"layer", "target",
    "reason", "by", "since", "until", "exclusion" (Exclusion or None), "endpoint" (Endpoint
    or None), "covered_by": slug or ""}], "shadow": [EndpointPolicyState]}``. The merged
    list comes from ``canary.services.quarantine.ignore_list_get`` (the routing API's own answer);
    the rows behind it are read once for all models. 4 + 2 × models queries.
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
    why = suspension_evidence(models, now)
    for group in suspended.values():
        for s in group:
            s.why = why.get(s.endpoint_id)  # type: ignore[attr-defined]
    out = []
    for model in models:
        merged = ignore_list_get(model, now)
        ignored = set(merged["ignore"])
        slugs = [t for t in ignored if "/" not in t]
        entries: list[dict[str, Any]] = []
        for e in exclusions[model]:
            entries.append(
                {
                    "layer": e.layer, "target": e.target, "reason": e.reason, "by": e.created_by,
                    "since": e.created_at, "until": e.expires_at, "exclusion": e, "endpoint": None,
                    "evidence_url": e.evidence_url, "why": None,
                }
            )
        for s in suspended[model]:
            if s.enforced:
                entries.append(
                    {
                        "layer": "canary", "target": s.endpoint.tag, "reason": "canary suspension",
                        "by": "canary", "since": s.last_suspended_at, "until": s.suspended_until,
                        "exclusion": None, "endpoint": s.endpoint, "evidence_url": "",
                        "why": why.get(s.endpoint_id),
                    }
                )
        for entry in entries:
            by = covering(entry["target"], slugs) if entry["target"] not in ignored else None
            entry["covered_by"] = by or ""
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
    base = Decision.objects.filter(model_id=model_id, created_at__gte=since, action__in=START_ACTIONS)
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
