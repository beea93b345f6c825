"""Why a route's circuit breaker is not closed, and what the on-call person does about it.

The breaker stores the failure that opened it, but its window restarts when it opens
(``routing.breaker``), so the count behind it is read back from the gateway's attempt
events: the route's last attempts up to the moment it opened, counted by failure reason ("5 of the last 6 attempts failed as
transient: http_502 x3, first_token_timeout x2"). Beside it, the canary's latest verdict
on the route's endpoint, with a link to the endpoint's page, so a frozen or failing host
reads the same on both pages. The advice follows the breaker semantics of
docs/sources/resilience.md, "Circuit breakers".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.urls import reverse

from canary.models import Endpoint, EndpointRound
from canary.why import round_summary
from observability.breakers import BreakerRow
from routing.models import AttemptEvent, Route
from routing.terms import BreakerState

# As many attempts as the breaker's default window (routing.breaker.BreakerConfig.window).
WINDOW = 20

ADVICE: dict[str, str] = {
    BreakerState.OPEN: ("Nothing to undo: the gateway skips this route until the time under 'open until', then lets one "
             "trial call through (half-open). If the host stays broken, look at its endpoint page and exclude "
             "it for an incident; after the provider fixes it, Routes > 'Reset circuit breakers' closes it at once."),
    BreakerState.HALF_OPEN: ("The next call is a trial: it closes the breaker after enough successes or opens it again. "
                  "Nothing to do unless it keeps re-opening (then exclude the endpoint for an incident)."),
}


@dataclass(frozen=True)
class Attempt:
    """One gateway attempt on a route: ``status`` ("accepted", "failed", ...),
    ``failure_class`` ("" when it did not fail) and ``failure_reason`` (e.g. http_502)."""

    status: str
    failure_class: str
    failure_reason: str


def attempts_summary(attempts: Sequence[Attempt], failure_class: str) -> str:
    """``attempts`` (newest first) in words for the breaker of ``failure_class``: how many
    failed with that class, of how many, and their reasons by count. "" for none."""
    if not attempts:
        return ""
    failed = [a for a in attempts if a.failure_class == failure_class]
    if not failed:
        return f"none of the last {len(attempts)} attempts failed as {failure_class}"
    reasons = Counter(a.failure_reason or failure_class for a in failed)
    parts = ", ".join(f"{reason} ×{n}" for reason, n in reasons.most_common())
    return f"{len(failed)} of the last {len(attempts)} attempts failed as {failure_class}: {parts}"


def breaker_reasons(rows: Iterable[BreakerRow], *, window: int = WINDOW) -> dict[tuple[str, str], str]:
    """For each row that is not closed and has an opening time: ``attempts_summary`` of
    the route's last ``window`` attempts up to a second after it opened, keyed by
    (route, failure class). One query per such row (a handful at most)."""
    out: dict[tuple[str, str], str] = {}
    for row in rows:
        if row.state == BreakerState.CLOSED or row.opened_at_ms is None:
            continue
        until = datetime.fromtimestamp(row.opened_at_ms / 1000, UTC) + timedelta(seconds=1)
        found = (AttemptEvent.objects.filter(route=row.route, started_at__lte=until).order_by("-started_at")
                 .values_list("status", "failure_class", "failure_reason")[:window])
        out[(row.route, row.failure_class)] = attempts_summary([Attempt(*a) for a in found], row.failure_class)
    return out


@dataclass(frozen=True)
class EndpointVerdict:
    """The canary's latest verdict on a route's endpoint: ``outcome`` (clean, fail,
    frozen, inconclusive), ``summary`` (what failed, on k of n), ``at`` the round's start,
    ``url`` the endpoint's page."""

    outcome: str
    summary: str
    at: datetime
    url: str


def endpoint_verdicts(routes: Iterable[Route]) -> dict[str, EndpointVerdict]:
    """The latest canary verdict of each pinned route's endpoint, by route name; routes
    whose endpoint the canary has not judged are absent."""
    out: dict[str, EndpointVerdict] = {}
    for route in routes:
        if not route.provider_tag:
            continue
        endpoint = Endpoint.objects.filter(model_id=route.model_id, tag__iexact=route.provider_tag).first()
        if endpoint is None:
            continue
        last = (EndpointRound.objects.filter(endpoint=endpoint).select_related("round")
                .order_by("-round__started_at").first())
        if last is None:
            continue
        out[route.name] = EndpointVerdict(
            outcome=last.outcome, summary=round_summary(last.evidence), at=last.round.started_at,
            url=reverse("admin:canary_endpoint_history", args=[endpoint.pk]),
        )
    return out
