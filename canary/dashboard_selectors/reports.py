"""User reports: which provider served a generation, and what the canary saw around it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import (
    F,
)

from canary.dashboard_selectors.common import (
    CORRELATION_WINDOW,
    EXCERPT_CHARS,
    KIND_LABELS,
    SYMPTOMS,
)
from canary.models import (
    Decision,
    EndpointRound,
    ProbeResult,
    Round,
)
from canary.probes import ALL_KINDS
from canary.services.client import openrouter_client
from canary.verdicts import Verdict
from openrouter.endpoints import same_provider
from openrouter.errors import GenerationNotFoundError, OpenRouterError

# --------------------------------------------------------------------- user reports


@dataclass
class GenerationLookup:
    """What OpenRouter says about a generation id: ``provider_name`` when found, otherwise
    ``error`` (a message fit for staff); ``data`` is OpenRouter's ``data`` object."""

    generation_id: str
    provider_name: str = ""
    error: str = ""
    data: dict[str, Any] = field(default_factory=dict)


def generation_lookup(generation_id: str) -> GenerationLookup:
    """Ask OpenRouter (``GET /generation?id=``) which provider served ``generation_id``.

    Never raises for OpenRouter's answers: a 404 and any other failure become ``error``.
    """
    found = GenerationLookup(generation_id=generation_id)
    try:
        client = openrouter_client()
    except Exception as exc:  # a misconfigured client must not take the page down
        found.error = f"The OpenRouter client is not configured: {exc}"
        return found
    try:
        data = client.get_generation(generation_id)
    except GenerationNotFoundError:
        found.error = (
            f"OpenRouter has no generation {generation_id!r}. Check the id; a generation can "
            "take a few seconds to appear, and only generations of our own API key are visible."
        )
        return found
    except OpenRouterError as exc:
        found.error = f"Could not ask OpenRouter about generation {generation_id!r}: {exc}"
        return found
    # The client is the process's shared one (services.openrouter_client): never closed here.
    found.data = data
    found.provider_name = str(data.get("provider_name") or "")
    if not found.provider_name:
        found.error = f"OpenRouter knows generation {generation_id!r} but does not say which provider served it."
    return found


def report_correlate(
    model_id: str, at: datetime, language: str, symptom: str, provider_name: str = ""
) -> dict[str, Any]:
    """Every probe result and decision of ``model_id``'s endpoints within two hours of
    ``at``, marked by relevance to a user's report.

    A result is *relevant* when its kind would catch the ``symptom`` (``SYMPTOMS``) and it
    did not pass; a round *matches* when it ran in the user's ``language``. When the serving
    ``provider_name`` is known (from the generation id), its endpoints are ``served``.
    Returns ``{"window": (start, end), "rounds": [...], "results": [row dict],
    "decisions": [Decision], "endpoints": [{"tag", "endpoint_id", "provider", "served",
    "relevant", "failed", "outcomes": [outcome per round]}], "served": [tag],
    "symptom_kinds": [kind]}``. Four queries.
    """
    start, end = at - CORRELATION_WINDOW, at + CORRELATION_WINDOW
    symptom_kinds = SYMPTOMS.get(symptom, ("", ()))[1]
    rounds: list[dict[str, Any]] = [
        dict(r)
        for r in Round.objects.filter(model_id=model_id, started_at__gte=start, started_at__lte=end)
        .order_by("started_at")
        .values("id", "started_at", "language", "mode", "status")
    ]
    round_ids = [r["id"] for r in rounds]
    for r in rounds:
        r["matches_language"] = bool(language) and r["language"] == language
    order = {k: i for i, k in enumerate(ALL_KINDS)}
    results: list[dict[str, Any]] = [
        dict(r)
        for r in ProbeResult.objects.filter(round_id__in=round_ids).values(
            "id", "round_id", "endpoint_id", "kind", "sample", "language", "verdict", "check_name",
            "reason", "ttft_ms", "transport_kind", "serving_provider", "generation_id",
            "reply_excerpt", "created_at", tag=F("endpoint__tag"), provider=F("endpoint__provider_name"),
        )
    ]
    starts = {r["id"]: r["started_at"] for r in rounds}
    endpoints: dict[int, dict[str, Any]] = {}
    for row in results:
        row["started_at"] = starts[row["round_id"]]
        row["excerpt"] = (row.pop("reply_excerpt") or "")[:EXCERPT_CHARS]
        row["kind_label"] = KIND_LABELS.get(row["kind"], row["kind"])
        row["served"] = bool(provider_name) and same_provider(row["provider"], provider_name)
        row["relevant"] = row["kind"] in symptom_kinds and row["verdict"] not in (Verdict.PASS, Verdict.NOT_APPLICABLE)
        row["language_match"] = bool(language) and row["language"] == language
        ep = endpoints.setdefault(
            row["endpoint_id"],
            {"tag": row["tag"], "endpoint_id": row["endpoint_id"], "provider": row["provider"],
             "served": row["served"], "relevant": 0, "failed": 0},
        )
        ep["relevant"] += int(row["relevant"])
        ep["failed"] += int(row["verdict"] == "fail")
    results.sort(key=lambda r: (r["started_at"], r["tag"], order.get(r["kind"], 99), r["sample"]))
    outcomes = {
        (er["round_id"], er["endpoint_id"]): er
        for er in EndpointRound.objects.filter(round_id__in=round_ids).values(
            "round_id", "endpoint_id", "outcome", "action"
        )
    }
    summary = sorted(endpoints.values(), key=lambda e: (not e["served"], -e["relevant"], e["tag"]))
    for ep in summary:
        ep["outcomes"] = [outcomes.get((rid, ep["endpoint_id"])) for rid in round_ids]
    decisions = list(
        Decision.objects.filter(model_id=model_id, created_at__gte=start, created_at__lte=end)
        .select_related("endpoint")
        .order_by("created_at", "id")
    )
    return {
        "window": (start, end),
        "rounds": rounds,
        "results": results,
        "decisions": decisions,
        "endpoints": summary,
        "served": [e["tag"] for e in summary if e["served"]],
        "symptom_kinds": list(symptom_kinds),
    }
