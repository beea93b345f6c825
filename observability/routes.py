"""What the canary says about each route: suspended, would be suspended, or excluded.

A route pinned to an endpoint (``provider_tag``) is avoided by the gateway when the
canary's merged ignore list covers that tag (``canary.services.ignore_list.ignore_list_get``: the
reviewed and incident exclusion layers and the enforced canary suspensions). An observe-
mode suspension is invisible to routing and shown as "would suspend".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from canary.exclusions import target_matches
from canary.models import EndpointPolicyState
from canary.services.ignore_list import ignore_list_get
from routing.models import Route


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


def route_canary_states(routes: Iterable[Route], now: datetime) -> dict[str, RouteCanaryState]:
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
