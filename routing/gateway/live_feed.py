"""The gateway's verdicts on live traffic, fed to the canary's live scorecard
(``canary.live.scorecard``), and the demotion of suspects in the ranking. Pure of Django.

What counts (docs/live-evidence.md, "What counts"): each check verdict an attempt on a
pinned endpoint got (``prefix.*`` before the commit point, ``post.*`` after the stream,
``answer.*`` on an answer that was not streamed; ``pass`` or ``fail``, never
``inconclusive``) and the validation of an answer that arrived. What does not speak to the
endpoint's quality never counts: transport failures (no answer: only the checks its
prefix already got count), attempts the request itself caused to fail (a 400 or 422
from upstream, an answer cut at the caller's own ``max_tokens``, a failure the request's own
language, stop, tools or max_tokens explain when no peer passed the same request:
``routing.attribution``), client disconnects and
hedge losers (``cancelled``), routes that pin no endpoint.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from canary.live.scorecard import AttemptVerdicts
from canary.verdicts import Verdict
from routing.gateway.result import AttemptRecord, GatewayResult
from routing.live_checks import ANSWER_CHECKS, PREFIX_CANDIDATES, REPLY_CHECKS
from routing.selection import RouteProfile
from routing.terms import AttemptStatus, CheckStage, FailureReason

log = logging.getLogger(__name__)

# Upstream statuses that say the request was refused for itself, not the endpoint's quality.
REQUEST_CAUSED_STATUSES = frozenset({400, 422})
# Failure reasons the request caused (``routing.failures.validation_failure``).
REQUEST_CAUSED_REASONS = frozenset({FailureReason.TRUNCATED_BY_MAX_TOKENS})
_STAGES = tuple(f"{stage}." for stage in CheckStage)
_COMMIT_STAGES = (f"{CheckStage.PREFIX}.", f"{CheckStage.ANSWER}.")
# Checks whose fail only informs (it rejects nothing): they count in the window, never in
# the run of commit-point failures.
EVIDENCE_ONLY = frozenset(c.name for c in (*PREFIX_CANDIDATES, *REPLY_CHECKS, *ANSWER_CHECKS) if not c.blocks)


def _blocking(name: str) -> bool:
    return name.split(".", 1)[-1] not in EVIDENCE_ONLY


def attempt_verdicts(record: AttemptRecord, route: RouteProfile | None, language: str | None) -> AttemptVerdicts | None:
    """What one attempt says about its endpoint (see the module docstring), or None when
    it says nothing (the route pins no endpoint, a client disconnect, a hedge loser, a
    request-caused refusal, a transport failure before any check)."""
    if route is None or not route.provider_tag:
        return None
    if record.status == AttemptStatus.CANCELLED or record.http_status in REQUEST_CAUSED_STATUSES:
        return None
    if record.failure_reason in REQUEST_CAUSED_REASONS or record.request_caused:
        return None
    checks: dict[str, bool] = {}
    for name, verdict in record.checks.items():
        if name.startswith(_STAGES) and verdict in (Verdict.PASS, Verdict.FAIL):
            checks[name] = verdict == Verdict.PASS
    check_failed = any(not ok for name, ok in checks.items() if _blocking(name))
    if record.status == AttemptStatus.ACCEPTED:
        checks["validation"] = True
    elif record.status == AttemptStatus.REJECTED and record.failure_reason == FailureReason.VALIDATION and not check_failed:
        checks["validation"] = False
    commit = {k: ok for k, ok in checks.items() if k.startswith(_COMMIT_STAGES) and _blocking(k)}
    commit_failed: bool | None = None
    commit_check = ""
    if commit:
        failed = [k for k, ok in commit.items() if not ok]
        commit_failed = bool(failed)
        commit_check = failed[0] if failed else ""
    if not checks:
        return None
    return AttemptVerdicts(route.model_id, route.provider_tag, checks, commit_failed, commit_check, language)


def result_verdicts(result: GatewayResult, routes: Iterable[RouteProfile]) -> list[AttemptVerdicts]:
    """The verdicts of every attempt of one finished request (``attempt_verdicts``)."""
    by_name = {r.name: r for r in routes}
    out = []
    for record in result.attempts:
        verdicts = attempt_verdicts(record, by_name.get(record.route), result.language)
        if verdicts is not None:
            out.append(verdicts)
    return out


def finished_at(result: GatewayResult) -> float:
    """When ``result``'s request ended (epoch s): the bucket its verdicts count in."""
    return result.started_at + result.latency_ms / 1000.0


class ScorecardFeed:
    """Counts finished requests' verdicts into the live scorecard, a batch at a time:
    called with a batch of results, it calls ``record_many([(finished_at, verdicts),
    ...])`` (e.g. ``Scorecard.record_many``) once. A listener of the gateway's event sink
    (``routing.events``), so it runs in the event writer's thread, after the answer went
    out: the scorecard costs a request neither latency nor a Redis round trip, and its
    evidence arrives within the writer's interval (1 s; the sweep reads every 5 s). It
    never raises: when the scorecard cannot be written the verdicts are dropped with a log
    line (at most one a minute). ``routes()`` gives the current route profiles (a route
    removed since the request ended is not scored)."""

    def __init__(self, routes: Callable[[], Sequence[RouteProfile]],
                 record_many: Callable[[list[tuple[float, list[AttemptVerdicts]]]], Any]) -> None:
        self.routes = routes
        self.record_many = record_many
        self._logged_at = 0.0

    def __call__(self, results: Sequence[GatewayResult]) -> None:
        try:
            profiles = self.routes()
            batch = [(finished_at(r), verdicts) for r in results if (verdicts := result_verdicts(r, profiles))]
            if batch:
                self.record_many(batch)
        except Exception as exc:  # noqa: BLE001 - live evidence is never worth a lost event
            now = time.monotonic()
            if now - self._logged_at > 60:
                self._logged_at = now
                log.warning("live scorecard not written, verdicts of %d requests dropped: %s", len(results), exc)


def demote(ranked: Sequence[RouteProfile], demoted: frozenset[str]) -> list[RouteProfile]:
    """``ranked`` with the routes pinned to a demoted endpoint (lower-cased tags) moved
    after every other route, each group in its order: the gateway prefers the suspects'
    peers and still serves from a suspect when nothing else is left."""
    if not demoted:
        return list(ranked)
    preferred = [r for r in ranked if not (r.provider_tag and r.provider_tag.casefold() in demoted)]
    later = [r for r in ranked if r.provider_tag and r.provider_tag.casefold() in demoted]
    return preferred + later
