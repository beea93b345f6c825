"""Canary selectors: the reads behind commands and the API, and the only doors through
which ``routing/`` reads the canary: ``endpoints_of_model``, ``structured_honour_rate``
and ``ignored_targets``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings

from canary.models import Endpoint, EndpointRound, ProbeResult, Round
from canary.probes import ALL_KINDS, STRUCTURED
from canary.services.ignore_list import ignore_list_cached
from canary.verdicts import Verdict


def model_watched(model_id: str) -> bool:
    """Whether the canary watches ``model_id``: it is in ``CANARY_MODELS`` or has
    discovered endpoints. At most one query."""
    return model_id in settings.CANARY_MODELS or Endpoint.objects.filter(model_id=model_id).exists()


def watch_hint(model_id: str) -> str:
    """A line for people and clients asking about a model the canary does not watch
    (its ignore list then holds only exclusions, never canary suspensions); ``""`` for a
    watched model. At most one query."""
    if model_watched(model_id):
        return ""
    watched = ", ".join(settings.CANARY_MODELS) or "none"
    return (
        f"the canary does not watch {model_id!r} (no endpoints discovered, not in CANARY_MODELS: {watched}); "
        "its ignore list holds only exclusions. Check the model id's spelling, or add it to CANARY_MODELS."
    )


def endpoints_of_model(model_id: str) -> list[Endpoint]:
    """Every endpoint the canary has discovered for ``model_id`` (active or not), by tag."""
    return list(Endpoint.objects.filter(model_id=model_id).order_by("tag"))


def structured_honour_rate(model_id: str, tag: str, since: datetime) -> float | None:
    """Share (0..1) of the conclusive structured-output verdicts on endpoint ``tag`` of
    ``model_id`` since ``since`` that passed ("advertised versus honoured"); None when
    there is none. Inconclusive, transport-error and not-applicable verdicts say nothing
    about the endpoint and are left out."""
    verdicts = list(
        ProbeResult.objects.filter(endpoint__tag=tag, endpoint__model_id=model_id, kind=STRUCTURED, created_at__gte=since)
        .filter(verdict__in=[Verdict.PASS, Verdict.FAIL])
        .values_list("verdict", flat=True)
    )
    if not verdicts:
        return None
    return sum(1 for v in verdicts if v == Verdict.PASS) / len(verdicts)


def ignored_targets(model_id: str) -> frozenset[str]:
    """The merged ignore list of ``model_id`` now, lower-cased provider slugs and
    endpoint tags, from the per-process cache of ``canary.services.ignore_list``."""
    return frozenset(t.casefold() for t in ignore_list_cached(model_id).data["ignore"])


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
                    "reason": r.round_reason or r.reason,
                    "ttft_ms": round(r.ttft_ms, 1) if r.ttft_ms is not None else None,
                    "fleet_rate": r.fleet_rate,
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
