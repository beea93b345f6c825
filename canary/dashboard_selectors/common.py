"""What every dashboard read shares: labels, bounds, the model picker, policy-state labels."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import (
    OuterRef,
    QuerySet,
    Subquery,
)

from canary.models import (
    Endpoint,
    EndpointPolicyState,
    ModelConfig,
)
from canary.terms import Action

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

# The short label a health-matrix cell prints for a failed probe kind (the cell is a few
# characters wide; the full label is in the legend and the tooltip).
KIND_SHORT: dict[str, str] = {
    "ttft": "ttft",
    "refusal": "ref",
    "structured_output": "json",
    "language": "lang",
    "leading_garbage": "lead",
    "corruption": "corr",
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
END_ACTIONS = (Action.RESTORED, Action.EXPIRED, Action.LIFTED)
START_ACTIONS = (Action.SUSPENDED, Action.WOULD_SUSPEND)


def latest_per(rows: QuerySet[Any], key: str, *order: str) -> list[dict[str, Any]]:
    """The first row (``values()`` dicts) per ``key`` of ``rows`` in ``order`` (e.g. the
    last round per model): one ``DISTINCT ON`` query on PostgreSQL; elsewhere (SQLite, for
    trying the app) the ordered rows reduced in Python."""
    ordered = rows.order_by(key, *order)
    if connection.features.can_distinct_on_fields:
        return list(ordered.distinct(key))
    first: dict[Any, dict[str, Any]] = {}
    for row in ordered:
        first.setdefault(row[key], row)
    return list(first.values())


def clamp(value: Any, default: int, maximum: int, minimum: int = 1) -> int:
    """``value`` (a query-string value or None) as an int within [minimum, maximum]."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        return default
    return max(minimum, min(maximum, number))


def models_known() -> list[str]:
    """Model ids the pages offer, sorted: the watched ones (``CANARY_MODELS``), those with
    discovered endpoints, and those whose config an admin changed. Two queries.

    A round of a model id nobody watches (a typo in ``canary_round --model``) stores its
    failed round, and the round creates the model's config row on the way; neither makes
    the model one the canary knows, so the typo never becomes an entry of every picker.
    """
    found = set(settings.CANARY_MODELS)
    found |= set(Endpoint.objects.values_list("model_id", flat=True).distinct())
    found |= set(ModelConfig.objects.exclude(updated_by="").values_list("model_id", flat=True))
    return sorted(found)


def model_pick(requested: str | None, models: list[str]) -> str:
    """The requested model if known (compared case-insensitively, as every model id is:
    ``core.identifiers``), else the configured ``CANARY_MODEL``, else the first."""
    wanted = (requested or "").strip().lower()
    if wanted and wanted in models:
        return wanted
    if settings.CANARY_MODEL in models or not models:
        return str(settings.CANARY_MODEL)
    return models[0]


def mode_subquery() -> Subquery:
    return Subquery(ModelConfig.objects.filter(model_id=OuterRef("model_id")).values("mode")[:1])


def state_label(state: EndpointPolicyState | None, now: datetime) -> str:
    """``suspended`` (in the ignore list), ``shadow`` (observe mode), or ``""``."""
    if state is None or state.suspended_until is None or state.suspended_until <= now:
        return ""
    return "suspended" if state.enforced else "shadow"


def state_of(ep: Endpoint) -> EndpointPolicyState | None:
    # Reverse one-to-one: reading it raises when the row is missing, even after
    # select_related (which caches the absence).
    try:
        return ep.policy_state
    except EndpointPolicyState.DoesNotExist:
        return None


