"""Live evidence joins the quarantine: the sweep that turns the gateway's scorecard into
suspects, and the confirmation rounds that convict or clear them (docs/live-evidence.md).

- ``suspects_sweep``: for every model the gateway scored, the suspect rule
  (``canary.live.rule``) on the window; a new suspect is stored (the gateway demotes
  it), audited and notified, and its confirmation is due at once; a suspect whose
  confirmation round finished is convicted (the policy suspended it), cleared (a clean
  round: the demotion ends) or asked for another round ``CANARY_CONFIRM_GAP_S`` later
  (at most ``CANARY_CONFIRM_MAX``); a due confirmation is opened unless a round of the
  model is running (rounds never overlap for one endpoint: it waits for the next sweep).
- ``confirmation_open`` and ``confirmation_run``: a confirmation round is a round of one
  endpoint, the scheduled round's pinned probes with the failing check first and in the
  language of the live failures; it is finalised like any round, so every brake of the
  policy holds (transport errors freeze, observe and enforce, the capacity floor with
  the model's other endpoints counted, escalation and decay). Live evidence alone never
  suspends: only failed rounds do.

The sweep is the one writer of the suspects' state; a Redis lock keeps two sweeps from
running at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from canary import probes as probe_mod
from canary.live.rule import RuleSettings, Suspect, suspects_find
from canary.live.scorecard import Scorecard, SuspectState, Window
from canary.live.store import rule_settings, scorecard_get
from canary.models import Decision, Endpoint, EndpointPolicyState, EndpointRound, ModelConfig, Round
from canary.services.client import openrouter_client
from canary.services.notifications import notification_create
from canary.services.probes_run import ProbeJob, endpoint_probes_run
from canary.services.quarantine import model_config_get
from canary.services.rounds import round_finalize, round_language, spend_today_usd
from canary.terms import Action, Outcome
from openrouter.client import OpenRouterClient

log = logging.getLogger(__name__)

# The probe kind a live check speaks to; the others run after it.
_CHECK_KIND = {"language": probe_mod.LANGUAGE, "refusal": probe_mod.REFUSAL, "validation": probe_mod.STRUCTURED}
SWEEP_LOCK_S = 30


@dataclass(frozen=True)
class SweepReport:
    """What one sweep did: tags made suspects, rounds opened (ids), suspects convicted,
    cleared or given up, and confirmations left waiting for a running round."""

    suspected: list[str]
    opened: list[int]
    convicted: list[str]
    cleared: list[str]
    waiting: list[str]


def probe_order(check: str) -> tuple[str, ...]:
    """The probe kinds of a confirmation, the one the failing live check (e.g.
    ``prefix.language``) speaks to first; the round checks (leading garbage,
    corruption) read every probe's reply, so for those the order stays."""
    name = check.split(".", 1)[-1]
    first = _CHECK_KIND.get(name)
    if first is None:
        return probe_mod.PROBE_KINDS
    return (first, *(k for k in probe_mod.PROBE_KINDS if k != first))


def live_window_evidence(window: Window, suspect: Suspect) -> dict[str, object]:
    """The live evidence a decision records: the check, the detector, the endpoint's and
    its peers' ``[judged, failed]`` in the window, the p-value, the streak and the
    window's start (ISO)."""
    return {
        "check": suspect.check, "kind": suspect.kind, "tally": [suspect.tally.n, suspect.tally.failed],
        "peers": [suspect.peers.n, suspect.peers.failed], "p_value": suspect.p_value, "streak": suspect.streak,
        "window_since": datetime.fromtimestamp(window.since_s, tz=timezone.get_current_timezone()).isoformat(),
        "reason": suspect.reason,
    }


def _failure_language(window: Window, tag: str, check: str) -> str | None:
    by_language = window.languages.get(tag, {}).get(check)
    return by_language.most_common(1)[0][0] if by_language else None


def _serving_tags(model_id: str, now: datetime) -> list[str]:
    """The model's active endpoints not suspended for real (what the gateway can route to)."""
    out = set(EndpointPolicyState.objects.filter(
        endpoint__model_id=model_id, enforced=True, suspended_until__gt=now).values_list("endpoint__tag", flat=True))
    return sorted(t for t in Endpoint.objects.filter(model_id=model_id, active=True).values_list("tag", flat=True)
                  if t not in out)


def _audit(model_id: str, endpoint: Endpoint | None, action: str, reason: str, evidence: dict[str, object],
           now: datetime, rnd: Round | None = None) -> Decision:
    mode = model_config_get(model_id).mode
    with transaction.atomic():
        audit = Decision.objects.create(
            model_id=model_id, endpoint=endpoint, round=rnd, action=action, mode=mode, actor="canary",
            reason=reason[:2000], evidence=evidence, created_at=now,
        )
        tag = endpoint.tag if endpoint is not None else "?"
        notification_create(action, f"[{mode}] {action.replace('_', ' ')}: {tag} ({model_id})", reason,
                            model_id=model_id, decision=audit)
    return audit


def confirmation_running(model_id: str) -> bool:
    """Is a confirmation round of ``model_id`` running (or finalising)? A scheduled round
    waits for it."""
    return Round.objects.filter(model_id=model_id, trigger=Round.Triggers.CONFIRMATION,
                                status__in=(Round.Status.RUNNING, Round.Status.FINALIZING)).exists()


def confirmation_open(model_id: str, tag: str, state: SuspectState, now: datetime) -> Round | None:
    """Open a confirmation round of ``tag`` (a ``Round`` of trigger ``confirmation`` with
    that one endpoint and the suspect's live evidence), or None when a round of the
    model is still running (it waits: rounds never overlap for one endpoint), the
    model's daily spend cap is reached (it waits too), or the endpoint is unknown. The model's config row is locked while looking and creating,
    so two sweeps cannot open two."""
    endpoint = Endpoint.objects.filter(model_id=model_id, tag=tag).first()
    if endpoint is None:
        return None
    model_config_get(model_id)
    with transaction.atomic():
        config = ModelConfig.objects.select_for_update().get(model_id=model_id)
        if Round.objects.filter(model_id=model_id, status__in=(Round.Status.RUNNING, Round.Status.FINALIZING)).exists():
            return None
        cap = Decimal(str(settings.CANARY_DAILY_SPEND_CAP_USD))
        if cap > 0 and spend_today_usd(model_id, now) >= cap:
            log.warning("confirmation of %s waits: the daily spend cap of %s is reached", tag, model_id)
            return None
        language = state.language or round_language(now, list(settings.CANARY_LANGUAGES))
        return Round.objects.create(
            model_id=model_id, language=language, started_at=now, trigger=Round.Triggers.CONFIRMATION,
            mode=config.mode, endpoint=endpoint, expected_probes=len(probe_mod.PROBE_KINDS),
            deadline_at=timezone.now() + timedelta(seconds=settings.CANARY_ROUND_BUDGET_S),
            live_evidence={"check": state.check, "kind": state.kind, "reason": state.reason, "tally": state.tally,
                           "peers": state.peers, "since": state.since_s, "confirmation": len(state.confirmations) + 1},
        )


def confirmation_run(round_id: int, *, client: OpenRouterClient | None = None) -> Round | None:
    """Run a confirmation round's probes (the failing check's kind first) and finalise
    it (``round_finalize``: the judgement and the policy, under every brake). Returns the
    finalised round, or None when it was no longer running."""
    rnd = Round.objects.filter(pk=round_id, status=Round.Status.RUNNING).first()
    if rnd is None or rnd.endpoint_id is None:
        return None
    check = str((rnd.live_evidence or {}).get("check", ""))
    jobs = [ProbeJob(rnd.pk, rnd.endpoint_id, kind, rnd.language) for kind in probe_order(check)]
    endpoint_probes_run(rnd, jobs, client=client or openrouter_client(), max_workers=len(jobs))
    return round_finalize(rnd.pk)


def _settle(model_id: str, tag: str, state: SuspectState, card: Scorecard, now: datetime,
            gap_s: float, max_rounds: int) -> str:
    """Apply a finished confirmation round to its suspect: "convicted", "cleared",
    "again" (another round after ``gap_s``), "given_up", or "running" (not finished)."""
    rnd = Round.objects.filter(pk=state.confirmations[-1]).first()
    if rnd is None or rnd.status in (Round.Status.RUNNING, Round.Status.FINALIZING):
        return "running"
    er = EndpointRound.objects.filter(round=rnd).select_related("endpoint").first()
    endpoint = er.endpoint if er is not None else rnd.endpoint
    evidence = {"evidence_kind": "confirmation_round", "round": rnd.pk, "live_window": rnd.live_evidence,
                "outcome": er.outcome if er else None, "action": er.action if er else None}
    if er is not None and er.action in (Action.SUSPENDED, Action.WOULD_SUSPEND):
        card.suspect_drop(model_id, tag)
        card.streak_reset(model_id, tag)
        _audit(model_id, endpoint, Action.LIVE_CONVICTED,
               f"confirmation round {rnd.pk} failed and the policy {er.action.replace('_', ' ')} {tag}: "
               f"{state.reason}", evidence, now, rnd)
        return "convicted"
    if er is not None and er.outcome == Outcome.CLEAN:
        card.suspect_drop(model_id, tag)
        card.streak_reset(model_id, tag)
        _audit(model_id, endpoint, Action.LIVE_CLEARED,
               f"confirmation round {rnd.pk} was clean: {tag} is preferred again (live evidence: {state.reason})",
               evidence, now, rnd)
        return "cleared"
    if len(state.confirmations) >= max_rounds:
        card.suspect_drop(model_id, tag)
        _audit(model_id, endpoint, Action.LIVE_CLEARED,
               f"{len(state.confirmations)} confirmation rounds neither convicted nor cleared {tag} "
               f"(last: {er.outcome if er else 'no outcome'}, {er.action if er else ''}); the demotion ends and "
               "the scheduled rounds go on", evidence, now, rnd)
        return "given_up"
    state.next_confirm_s = now.timestamp() + gap_s
    card.suspect_put(model_id, tag, state)
    return "again"


def suspects_sweep(
    now: datetime,
    *,
    card: Scorecard,
    rule: RuleSettings,
    start: Callable[[int], object],
    gap_s: float,
    max_rounds: int,
) -> SweepReport:
    """One pass over every scored model (see the module docstring). ``start(round_id)``
    runs an opened confirmation round (a Celery task in production). Raises
    ``redis.RedisError`` when the scorecard cannot be read."""
    report = SweepReport([], [], [], [], [])
    now_s = now.timestamp()
    for model_id in card.models():
        window = card.window(model_id, now_s)
        serving = _serving_tags(model_id, now)
        known = card.suspects(model_id)
        found = suspects_find(window.counts, card.streaks(model_id), rule, endpoints=serving)
        demotable: set[str] = set()
        room = max(0, len(serving) - rule.floor)
        for suspect in found:
            if suspect.tag in known or suspect.tag not in serving:
                continue
            demote = len(demotable) + sum(1 for s in known.values() if s.demoted) < room
            state = SuspectState(
                check=suspect.check, kind=suspect.kind, reason=suspect.reason, since_s=now_s,
                tally=[suspect.tally.n, suspect.tally.failed], peers=[suspect.peers.n, suspect.peers.failed],
                language=_failure_language(window, suspect.tag, suspect.check), next_confirm_s=now_s, demoted=demote,
            )
            if demote:
                demotable.add(suspect.tag)
            card.suspect_put(model_id, suspect.tag, state)
            known[suspect.tag] = state
            endpoint = Endpoint.objects.filter(model_id=model_id, tag=suspect.tag).first()
            _audit(model_id, endpoint, Action.LIVE_SUSPECT,
                   f"live traffic: {suspect.reason}; a confirmation round follows"
                   + ("" if demote else " (not demoted: the floor keeps it preferred)"),
                   {"evidence_kind": "live_window", **live_window_evidence(window, suspect),
                    "language": state.language, "demoted": demote}, now)
            report.suspected.append(suspect.tag)
        for tag, state in known.items():
            if state.confirmations and state.next_confirm_s == 0:
                outcome = _settle(model_id, tag, state, card, now, gap_s, max_rounds)
                {"convicted": report.convicted, "cleared": report.cleared, "given_up": report.cleared}.get(
                    outcome, []).append(tag)
                if outcome != "again":
                    continue
            if state.next_confirm_s and state.next_confirm_s <= now_s:
                rnd = confirmation_open(model_id, tag, state, now)
                if rnd is None:
                    report.waiting.append(tag)
                    continue
                state.confirmations.append(rnd.pk)
                state.next_confirm_s = 0
                card.suspect_put(model_id, tag, state)
                start(rnd.pk)
                report.opened.append(rnd.pk)
    return report


def suspects_sweep_now(start: Callable[[int], object]) -> SweepReport | None:
    """``suspects_sweep`` now, on the process's scorecard and the settings' rule, gap and
    maximum; None when another sweep holds the lock (it does this one's work)."""
    card = scorecard_get()
    lock = f"{card.prefix}:sweep-lock"
    if not card.client.set(lock, "1", nx=True, ex=SWEEP_LOCK_S):
        return None
    try:
        return suspects_sweep(timezone.now(), card=card, rule=rule_settings(), start=start,
                              gap_s=float(settings.CANARY_CONFIRM_GAP_S), max_rounds=settings.CANARY_CONFIRM_MAX)
    finally:
        card.client.delete(lock)
