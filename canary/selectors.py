"""Canary selectors: the reads behind commands, the API and the dashboards."""

from __future__ import annotations

from typing import Any

from canary.models import EndpointRound, ProbeResult, Round
from canary.probes import ALL_KINDS


def round_report(rnd: Round) -> dict[str, Any]:
    """A round as JSON-ready data (the shape ``canary_round --json`` prints).

    ``{"round", "model", "language", "mode", "status", "started_at", "finished_at",
    "cost_usd", "prompt_tokens", "completion_tokens", "weak_probes", "endpoints": [{"provider",
    "tag", "outcome", "streak", "action", "suspended_until", "languages", "probes": [{"kind",
    "verdict", "check", "reason", "ttft_ms", "fleet_rate", "reply_excerpt"}]}]}``.
    Times are ISO 8601 UTC; ``ttft_ms`` in ms; ``cost_usd`` a decimal string in USD.
    """
    results = (
        ProbeResult.objects.filter(round=rnd, sample=0).select_related("endpoint").order_by("endpoint__tag")
    )
    by_tag: dict[str, dict[str, ProbeResult]] = {}
    providers: dict[str, str] = {}
    for r in results:
        by_tag.setdefault(r.endpoint.tag, {})[r.kind] = r
        providers[r.endpoint.tag] = r.endpoint.provider_name
    ers = {er.endpoint.tag: er for er in EndpointRound.objects.filter(round=rnd).select_related("endpoint")}
    endpoints = []
    for tag in sorted(by_tag):
        er = ers.get(tag)
        probes = []
        for kind in ALL_KINDS:
            found = by_tag[tag].get(kind)
            if found is None:
                continue
            r = found
            probes.append(
                {
                    "kind": kind,
                    "verdict": r.verdict,
                    "check": r.check_name,
                    "reason": r.reason,
                    "ttft_ms": round(r.ttft_ms, 1) if r.ttft_ms is not None else None,
                    "fleet_rate": (r.evidence or {}).get("fleet_rate"),
                    "language": r.language,
                    "reply_excerpt": r.reply_excerpt[:200] if r.verdict == "fail" else "",
                }
            )
        endpoints.append(
            {
                "provider": providers[tag],
                "tag": tag,
                "outcome": er.outcome if er else None,
                "streak": er.streak if er else 0,
                "action": er.action if er else "none",
                "suspended_until": er.suspended_until.isoformat() if er and er.suspended_until else None,
                "probes": probes,
            }
        )
    return {
        "round": rnd.pk,
        "model": rnd.model_id,
        "language": rnd.language,
        "mode": rnd.mode,
        "status": rnd.status,
        "started_at": rnd.started_at.isoformat(),
        "finished_at": rnd.finished_at.isoformat() if rnd.finished_at else None,
        "prompt_tokens": rnd.prompt_tokens,
        "completion_tokens": rnd.completion_tokens,
        # Fixed-point: a Decimal zero would print as "0E-8".
        "cost_usd": f"{rnd.cost_usd:f}",
        "weak_probes": rnd.weak_probes,
        "endpoints": endpoints,
    }
