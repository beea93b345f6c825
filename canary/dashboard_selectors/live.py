"""The live evidence beside the canary's (docs/live-evidence.md): one endpoint's live
window and suspect state next to its recent probe verdicts, and a model's suspects for
the fleet matrix. Redis away: the pages say so and show the canary's side alone."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import redis
from django.db.models import Count, Q

from canary.live.store import scorecard_get
from canary.models import Endpoint, ProbeResult
from canary.verdicts import Verdict

log = logging.getLogger(__name__)

# How far back the canary's side of the comparison reaches.
CANARY_SIDE = timedelta(days=1)


def _rate(n: int, failed: int) -> dict[str, Any]:
    return {"n": n, "failed": failed, "rate": failed / n if n else None}


def endpoint_live(endpoint: Endpoint, now: datetime) -> dict[str, Any]:
    """Both kinds of evidence of ``endpoint``: ``{"canary": [{"check", "n", "failed",
    "rate"}], "canary_since", "live": [...same...], "live_since", "window_s", "suspect":
    {"check", "kind", "reason", "since", "confirmations", "demoted"} | None, "live_up"}``.
    The canary side counts probe verdicts (first samples, pass or fail) per probe kind
    over the last day; the live side the gateway's verdicts per check in the window."""
    since = now - CANARY_SIDE
    canary = (
        ProbeResult.objects.filter(endpoint=endpoint, sample=0, created_at__gte=since,
                                   verdict__in=(Verdict.PASS, Verdict.FAIL))
        .values("kind").annotate(n=Count("id"), failed=Count("id", filter=Q(verdict=Verdict.FAIL))).order_by("kind")
    )
    out: dict[str, Any] = {
        "canary": [{"check": row["kind"], **_rate(row["n"], row["failed"])} for row in canary],
        "canary_since": since, "live": [], "live_since": None, "window_s": None, "suspect": None, "live_up": True,
    }
    try:
        card = scorecard_get()
        window = card.window(endpoint.model_id, now.timestamp())
        out["window_s"] = card.window_s
        out["live_since"] = datetime.fromtimestamp(window.since_s, tz=UTC)
        out["live"] = [{"check": c, **_rate(t.n, t.failed)} for c, t in sorted(window.counts.get(endpoint.tag, {}).items())]
        state = card.suspects(endpoint.model_id).get(endpoint.tag)
        if state is not None:
            out["suspect"] = {"check": state.check, "kind": state.kind, "reason": state.reason,
                              "since": datetime.fromtimestamp(state.since_s, tz=UTC),
                              "confirmations": state.confirmations, "demoted": state.demoted}
    except redis.RedisError as exc:
        log.warning("live scorecard unavailable for the endpoint page: %s", exc)
        out["live_up"] = False
    return out


def suspect_tags(model_id: str) -> set[str]:
    """The model's live suspects (tags); empty when Redis is away."""
    try:
        return set(scorecard_get().suspects(model_id))
    except redis.RedisError as exc:
        log.warning("live suspects unavailable for the fleet matrix: %s", exc)
        return set()
