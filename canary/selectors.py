"""Canary selectors: the reads behind commands and the API, and the only doors through
which ``routing/`` reads the canary: ``endpoints_of_model``, ``structured_honour_rate``,
``ignored_targets`` and ``route_canary_states``.

What the canary says about a route: a route pinned to an endpoint (``provider_tag``) is
avoided by the gateway when the merged ignore list covers that tag
(``canary.services.ignore_list.ignore_list_get``: the reviewed and incident exclusion
layers and the enforced canary suspensions). An observe-mode suspension is invisible to
routing and shown as "would suspend"."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from django.conf import settings

from canary.exclusions import target_matches
from canary.models import Endpoint, EndpointPolicyState, EndpointRound, ProbeResult, Round
from canary.probes import ALL_KINDS, PROBE_KINDS, STRUCTURED
from canary.reply_evidence import failing_replies
from canary.services.ignore_list import ignore_list_cached, ignore_list_get
from canary.verdicts import Verdict
from canary.why import round_summary


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


def endpoint_quantizations(model_ids: set[str]) -> dict[tuple[str, str], str]:
    """(model id, lower-cased tag) -> the quantization the listing gives, for the endpoints
    of ``model_ids`` that name one (one query)."""
    rows = Endpoint.objects.filter(model_id__in=model_ids).exclude(quantization="").values_list("model_id", "tag", "quantization")
    return {(model_id, tag.lower()): quantization for model_id, tag, quantization in rows}


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


class PinnedRoute(Protocol):
    """What ``route_canary_states`` reads of a route (``routing.models.Route`` has it):
    its ``name``, ``model_id`` and ``provider_tag`` (empty when the route is not pinned)."""

    name: str
    model_id: str
    provider_tag: str


@dataclass(frozen=True)
class RouteCanaryState:
    """``layers``: the ignore-list layers covering the route (``canary``, ``reviewed``,
    ``incident``); ``suspended_until``: an enforced suspension's end; ``would_suspend``:
    an observe-mode suspension in force (routing does not see it)."""

    layers: tuple[str, ...] = ()
    suspended_until: datetime | None = None
    would_suspend: bool = False

    @property
    def avoided(self) -> bool:
        return bool(self.layers)

    def label(self) -> str:
        if self.suspended_until is not None and "canary" in self.layers:
            text = f"suspended until {self.suspended_until:%Y-%m-%d %H:%M}"
            others = [x for x in self.layers if x != "canary"]
            return text + (f"; excluded ({', '.join(others)})" if others else "")
        if self.layers:
            return f"excluded ({', '.join(self.layers)})"
        if self.would_suspend:
            return "would suspend (observe mode)"
        return "—"


def route_canary_states(routes: Iterable[PinnedRoute], now: datetime) -> dict[str, RouteCanaryState]:
    """The canary state of each pinned route (by route name); routes without a
    ``provider_tag`` are absent. One ignore-list lookup per model, one policy query."""
    pinned = [r for r in routes if r.provider_tag]
    models = sorted({r.model_id for r in pinned})
    lists = {m: ignore_list_get(m, now)["sources"] for m in models}
    states = {
        (s.endpoint.model_id, s.endpoint.tag.casefold()): s
        for s in EndpointPolicyState.objects.filter(endpoint__model_id__in=models, suspended_until__gt=now)
        .select_related("endpoint")
    }
    out = {}
    for r in pinned:
        layers = []
        for layer, targets in lists[r.model_id].items():
            try:
                if any(target_matches(t, r.provider_tag) for t in targets):
                    layers.append(layer)
            except ValueError:
                continue  # a malformed stored target covers nothing
        policy = states.get((r.model_id, r.provider_tag.casefold()))
        out[r.name] = RouteCanaryState(
            layers=tuple(sorted(layers)),
            suspended_until=policy.suspended_until if policy is not None and policy.enforced else None,
            would_suspend=policy is not None and not policy.enforced,
        )
    return out


def round_report(rnd: Round) -> dict[str, Any]:
    """A round as JSON-ready data (the shape ``canary_round --json`` prints).

    ``{"round", "model", "language", "mode", "status", "started_at", "finished_at",
    "cost_usd", "prompt_tokens", "completion_tokens", "weak_probes", "endpoints": [{"provider",
    "tag", "outcome", "streak", "action", "suspended_until", "summary" (what failed, on k of n
    replies: ``canary.why.round_summary``), "controls" (the kinds it is a positive control of),
    "language" (its probes' prompt language: the round's, or the one it repeats after a
    language anomaly in its last round, ``canary.services.rounds.round_open``),
    "probes": [{"kind", "verdict", "check", "reason", "ttft_ms", "fleet_rate", "reply_excerpt",
    "control" (a positive control's own kind), "shown" (failures only: the failing reply,
    ``canary.reply_evidence.FailingReply.as_dict``)}]}]}``.
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
    shown = failing_replies(
        {"round_id": r.round_id, "endpoint_id": r.endpoint_id, "kind": r.kind, "check_name": r.check_name,
         "evidence": r.evidence, "sample": r.sample}
        for r in results if r.verdict == Verdict.FAIL
    )
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
                    "control": kind in (r.endpoint.positive_control_kinds or []),
                    "shown": shown[key].as_dict() if (key := (r.round_id, r.endpoint_id, kind)) in shown else None,
                }
            )
        prompted = [by_tag[tag][k].language for k in PROBE_KINDS if k in by_tag[tag] and by_tag[tag][k].language]
        endpoints.append(
            {
                "language": prompted[0] if prompted else rnd.language,
                "provider": providers[tag],
                "tag": tag,
                "outcome": er.outcome if er else None,
                "streak": er.streak if er else 0,
                "action": er.action if er else "none",
                "suspended_until": er.suspended_until.isoformat() if er and er.suspended_until else None,
                "summary": round_summary(er.evidence or {}) if er else "",
                "controls": list((er.evidence or {}).get("controls") or []) if er else [],
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
