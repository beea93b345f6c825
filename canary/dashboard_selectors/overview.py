"""The canary's part of the admin's home page: what is suspended now, what would be, and
how each model's last round went."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Count, Q

from canary.dashboard_selectors.common import latest_per, models_known
from canary.models import EndpointPolicyState, ModelConfig, Round
from canary.terms import Mode


def canary_overview(now: datetime) -> list[dict[str, Any]]:
    """One row per model the canary knows (``models_known``): ``{"model", "mode",
    "suspended" (enforced suspensions in force now: in the ignore list), "shadow_suspended"
    (observe-mode shadow suspensions in force now), "last_round": {"id", "status",
    "started_at", "error"} or None}``. Five queries whatever the fleet or history size
    (the last round per model is one ``DISTINCT ON``, served by the model/started_at index).
    """
    models = models_known()
    if not models:
        return []
    modes = dict(ModelConfig.objects.filter(model_id__in=models).values_list("model_id", "mode"))
    counts = {
        row["endpoint__model_id"]: row
        for row in EndpointPolicyState.objects.filter(endpoint__model_id__in=models, suspended_until__gt=now)
        .values("endpoint__model_id")
        .annotate(suspended=Count("id", filter=Q(enforced=True)), shadow=Count("id", filter=Q(enforced=False)))
        .order_by()
    }
    last = {
        r["model_id"]: r
        for r in latest_per(
            Round.objects.filter(model_id__in=models).values("id", "model_id", "status", "started_at", "error"),
            "model_id", "-started_at", "-id",
        )
    }
    return [
        {
            "model": model,
            "mode": modes.get(model, Mode.OBSERVE),
            "suspended": counts.get(model, {}).get("suspended", 0),
            "shadow_suspended": counts.get(model, {}).get("shadow", 0),
            "last_round": last.get(model),
        }
        for model in models
    ]
