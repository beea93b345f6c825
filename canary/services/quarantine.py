"""Route quarantine services: apply the suspension policy to a finished round, manual
overrides (lift, false positive, mode) and exclusions. The merged ignore list they
change is built and cached in ``canary.services.ignore_list``.

The rules live in the pure ``canary.policy`` and ``canary.exclusions``; this module loads
their inputs from the database, stores what they decide, and writes the audit rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from canary import policy
from canary.db import rows_insert, rows_update
from canary.exclusions import INCIDENT_MAX_HOURS, target_matches, target_normalise
from canary.models import (
    Decision,
    Endpoint,
    EndpointPolicyState,
    EndpointRound,
    Exclusion,
    ModelConfig,
    ProbeResult,
    Round,
)
from canary.services.ignore_list import ignore_list_changed
from canary.services.notifications import notification_create
from canary.terms import Action, Layer, Mode, Outcome
from canary.verdicts import Verdict
from canary.why import round_summary, with_summary
from core.identifiers import validate_model_id

NOTIFY_ACTIONS = {Action.SUSPENDED, Action.WOULD_SUSPEND, Action.FLOOR_BLOCKED, Action.RESTORED}


class QuarantineError(ValueError):
    """A manual action was refused; the message says why."""


def policy_settings() -> policy.PolicySettings:
    """The suspension policy's numbers from Django settings."""
    return policy.PolicySettings(
        fail_rounds_to_suspend=settings.CANARY_FAIL_ROUNDS_TO_SUSPEND,
        clean_rounds_to_restore=settings.CANARY_CLEAN_ROUNDS_TO_RESTORE,
        suspension_durations=tuple(timedelta(days=d) for d in settings.CANARY_SUSPENSION_DAYS),
        decay_after=timedelta(days=settings.CANARY_DECAY_DAYS),
        floor=settings.CANARY_FLOOR,
    )


def model_config_get(model_id: str) -> ModelConfig:
    """The model's switches row (created in observe mode on first use)."""
    config, _ = ModelConfig.objects.get_or_create(model_id=model_id)
    return config


def _state_of(row: EndpointPolicyState) -> policy.EndpointState:
    return policy.EndpointState(
        tag=row.endpoint.tag,
        fail_streak=row.fail_streak,
        clean_streak=row.clean_streak,
        suspended_until=row.suspended_until,
        enforced=row.enforced,
        suspension_level=row.suspension_level,
        last_suspended_at=row.last_suspended_at,
    )


POLICY_STATE_FIELDS = ["fail_streak", "clean_streak", "suspended_until", "enforced", "suspension_level",
                       "last_suspended_at", "updated_at"]


def _state_onto(row: EndpointPolicyState, state: policy.EndpointState) -> None:
    row.fail_streak = state.fail_streak
    row.clean_streak = state.clean_streak
    row.suspended_until = state.suspended_until
    row.enforced = state.enforced
    row.suspension_level = state.suspension_level
    row.last_suspended_at = state.last_suspended_at
    row.updated_at = timezone.now()  # bulk_update skips auto_now


def _policy_rows_locked(endpoints: list[Endpoint]) -> dict[str, EndpointPolicyState]:
    """The policy rows of ``endpoints`` by tag, locked FOR UPDATE, created when missing
    (in two statements whatever the fleet size)."""
    by_id = {ep.pk: ep for ep in endpoints}
    have = set(EndpointPolicyState.objects.filter(endpoint_id__in=by_id).values_list("endpoint_id", flat=True))
    if len(have) < len(by_id):
        rows_insert([EndpointPolicyState(endpoint_id=pk) for pk in by_id.keys() - have])
    locked = list(EndpointPolicyState.objects.select_for_update().filter(endpoint_id__in=by_id))
    for row in locked:
        row.endpoint = by_id[row.endpoint_id]  # the caller's instances: no second read of the endpoints
    return {row.endpoint.tag: row for row in locked}


def _active_exclusions(model_id: str, now: datetime) -> list[Exclusion]:
    return [
        e
        for e in Exclusion.objects.filter(model_id=model_id, active=True)
        if e.expires_at is None or e.expires_at > now
    ]


def _excluded(tag: str, exclusions: Iterable[Exclusion]) -> bool:
    return any(target_matches(e.target, tag) for e in exclusions)


def round_evidence_kind(rnd: Round) -> dict[str, object]:
    """Which evidence a round's decisions rest on: ``{"evidence_kind": "scheduled_round" |
    "confirmation_round" | "manual_round"}``, and a confirmation's ``live_window`` (the
    gateway's verdicts that asked for it)."""
    if rnd.trigger == Round.Triggers.CONFIRMATION:
        return {"evidence_kind": "confirmation_round", "live_window": rnd.live_evidence}
    return {"evidence_kind": "scheduled_round" if rnd.trigger == Round.Triggers.SCHEDULE else "manual_round"}


def _peers_in_production(rnd: Round, mode: str, now: datetime, exclusions: list[Exclusion]) -> int:
    """The model's other active endpoints that serve (not excluded, not suspended as
    this mode counts it): a confirmation round's one endpoint is held to the same
    capacity floor as in a scheduled round."""
    peers = Endpoint.objects.filter(model_id=rnd.model_id, active=True).exclude(pk=rnd.endpoint_id or 0)
    suspended = {
        row.endpoint_id
        for row in EndpointPolicyState.objects.filter(endpoint__in=peers, suspended_until__gt=now)
        if row.enforced or mode == Mode.OBSERVE
    }
    return sum(1 for ep in peers if ep.pk not in suspended and not _excluded(ep.tag, exclusions))


def suspension_apply(rnd: Round, now: datetime, mode: str | None = None) -> list[policy.PolicyDecision]:
    """Apply the suspension policy to a completed round and store its decisions.

    ``mode`` overrides the model's stored mode for this round only (``canary_round
    --mode``). The model's config row is locked (SELECT … FOR UPDATE) for the whole
    decision, so two rounds finishing at the same moment are decided one after the other
    and can never double-suspend. Writes the new policy states, the round's per-endpoint
    ``streak``/``action``/``suspended_until``, one audit row per action, and notifications.
    """
    # Called inside the finaliser's transaction: no savepoint of its own (a failure rolls
    # the whole finalisation back); alone, it is its own transaction.
    with transaction.atomic(savepoint=False):
        config = ModelConfig.objects.select_for_update().filter(model_id=rnd.model_id).first()
        if config is None:
            ModelConfig.objects.get_or_create(model_id=rnd.model_id)
            config = ModelConfig.objects.select_for_update().get(model_id=rnd.model_id)
        effective = mode or config.mode
        ers = list(EndpointRound.objects.filter(round=rnd).select_related("endpoint"))
        rows = _policy_rows_locked([er.endpoint for er in ers])
        exclusions = _active_exclusions(rnd.model_id, now)
        completed_any = set(
            ProbeResult.objects.filter(round=rnd, transport_kind="", sample=0)
            .exclude(kind__in=("leading_garbage", "corruption"))
            .exclude(verdict=Verdict.NOT_APPLICABLE)
            .values_list("endpoint__tag", flat=True)
        )
        inputs = [
            policy.RoundInput(
                tag=er.endpoint.tag,
                outcome=er.outcome,
                severity=er.severity,
                excluded=_excluded(er.endpoint.tag, exclusions),
                # Every probe a transport error: the endpoint is effectively down.
                down=er.outcome == Outcome.FROZEN and er.endpoint.tag not in completed_any,
            )
            for er in ers
        ]
        states = {tag: _state_of(row) for tag, row in rows.items()}
        peers = _peers_in_production(rnd, effective, now, exclusions) if rnd.endpoint_id else 0
        decisions = policy.policy_apply(now, effective, states, inputs, policy_settings(), peers_in_production=peers)
        by_tag = {er.endpoint.tag: er for er in ers}
        for d in decisions:
            _state_onto(rows[d.tag], d.state)
            er = by_tag[d.tag]
            er.streak = d.streak
            er.action = d.action
            er.suspended_until = d.suspended_until
        # The rows exist and are locked: one UPDATE of the decided columns each.
        rows_update([rows[d.tag] for d in decisions], POLICY_STATE_FIELDS)
        rows_update([by_tag[d.tag] for d in decisions], ["streak", "action", "suspended_until"])
        for d in decisions:
            er = by_tag[d.tag]
            if d.action == "none":
                continue
            # The reason leads with what failed, on how many replies (canary.why); the
            # policy's sentence says what that made of it.
            summary = round_summary(er.evidence or {})
            audit = Decision.objects.create(
                model_id=rnd.model_id,
                endpoint=er.endpoint,
                round=rnd,
                action=d.action,
                mode=effective,
                actor="canary",
                reason=with_summary(summary, d.reason),
                evidence={"round": rnd.pk, "outcome": d.outcome, "round_evidence": er.evidence,
                          **round_evidence_kind(rnd)},
                suspended_until=d.suspended_until,
                created_at=now,
            )
            if d.action in NOTIFY_ACTIONS:
                notification_create(
                    d.action,
                    f"[{effective}] {d.action.replace('_', ' ')}: {d.tag} ({rnd.model_id})" + (f" — {summary}" if summary else ""),
                    audit.reason,
                    model_id=rnd.model_id,
                    decision=audit,
                )
        for kind, why in (rnd.weak_probes or {}).items():
            audit = Decision.objects.create(
                model_id=rnd.model_id, round=rnd, action=Action.WEAK_PROBE, mode=effective, actor="canary",
                reason=f"{kind}: {why}", evidence={"round": rnd.pk, "kind": kind}, created_at=now,
            )
            notification_create(Action.WEAK_PROBE, f"weak probe {kind} in round {rnd.pk}", why, model_id=rnd.model_id, decision=audit)
        rnd.mode = effective
        rnd.save(update_fields=["mode"])
        ignore_list_changed()
    return decisions


def suspension_lift(endpoint: Endpoint, *, actor: str, reason: str, now: datetime) -> Decision:
    """Lift an endpoint's suspension (real or shadow) now; it returns with a fresh streak.

    Raises QuarantineError when the reason is blank or nothing is suspended.
    """
    if not reason.strip():
        raise QuarantineError("lifting a suspension needs a reason")
    with transaction.atomic():
        row = EndpointPolicyState.objects.select_for_update().filter(endpoint=endpoint).first()
        if row is None or row.suspended_until is None or row.suspended_until <= now:
            raise QuarantineError(f"{endpoint.tag} is not suspended")
        was_until = row.suspended_until
        row.suspended_until = None
        row.enforced = False
        row.fail_streak = 0
        row.clean_streak = 0
        row.save()
        audit = Decision.objects.create(
            model_id=endpoint.model_id, endpoint=endpoint, action=Action.LIFTED, actor=actor, reason=reason,
            evidence={"was_suspended_until": was_until.isoformat()}, created_at=now,
        )
        notification_create("lift", f"lifted: {endpoint.tag} by {actor}", reason, model_id=endpoint.model_id, decision=audit)
        ignore_list_changed()
    return audit


def decision_mark_false_positive(decision: Decision, *, actor: str, reason: str, now: datetime) -> Decision:
    """Record that an automatic suspension decision was a false positive (a new audit row
    referring to it). Raises QuarantineError for a blank reason, a decision that is not a
    suspension, or one already marked."""
    if not reason.strip():
        raise QuarantineError("marking a false positive needs a reason")
    if decision.action not in (Action.SUSPENDED, Action.WOULD_SUSPEND):
        raise QuarantineError(f"only suspensions can be false positives, not {decision.action!r}")
    if decision.followups.filter(action=Action.FALSE_POSITIVE).exists():
        raise QuarantineError("this decision is already marked a false positive")
    return Decision.objects.create(
        model_id=decision.model_id, endpoint=decision.endpoint, round=decision.round, refers_to=decision,
        action=Action.FALSE_POSITIVE, actor=actor, reason=reason, evidence={"decision": decision.pk}, created_at=now,
    )


def mode_set(model_id: str, mode: str, *, actor: str, reason: str, now: datetime) -> Decision:
    """Switch a model between observe and enforce. Raises QuarantineError for an unknown
    mode or a blank reason."""
    if mode not in (Mode.OBSERVE, Mode.ENFORCE):
        raise QuarantineError(f"unknown mode {mode!r}; expected observe or enforce")
    if not reason.strip():
        raise QuarantineError("changing the mode needs a reason")
    with transaction.atomic():
        config = model_config_get(model_id)
        old = config.mode
        config.mode = mode
        config.updated_by = actor
        config.save()
        return Decision.objects.create(
            model_id=model_id, action=Action.MODE_CHANGED, mode=mode, actor=actor, reason=reason,
            evidence={"from": old, "to": mode}, created_at=now,
        )


def exclusion_add(
    model_id: str, layer: str, target: str, *, actor: str, reason: str, now: datetime,
    expires_at: datetime | None = None, evidence_url: str = "", source_file: str = "",
) -> Exclusion:
    """Add a reviewed or incident exclusion (effective at once, no deploy).

    ``model_id`` is stored in its canonical lower-case form (``core.identifiers``).
    Raises QuarantineError for a malformed model id, an unknown layer, a malformed target,
    a blank reason, an expiry in the past, an incident without an expiry or expiring more
    than ``INCIDENT_MAX_HOURS`` ahead, or an incident on a target the model's incident
    layer excludes already (one row per incident: extend or remove that one).
    """
    try:
        model_id = validate_model_id(model_id)
    except ValueError as exc:
        raise QuarantineError(str(exc)) from exc
    if layer not in (Layer.REVIEWED, Layer.INCIDENT):
        raise QuarantineError(f"unknown layer {layer!r}; expected reviewed or incident")
    if not reason.strip():
        raise QuarantineError("an exclusion needs a reason")
    try:
        normalised = target_normalise(target)
    except ValueError as exc:
        raise QuarantineError(str(exc)) from exc
    if expires_at is not None and expires_at <= now:
        raise QuarantineError("the expiry must be in the future")
    if layer == Layer.INCIDENT:
        if expires_at is None:
            raise QuarantineError("an incident exclusion needs an expiry")
        if expires_at > now + timedelta(hours=INCIDENT_MAX_HOURS):
            raise QuarantineError(f"an incident exclusion expires within {INCIDENT_MAX_HOURS // 24} days; "
                                  f"a longer one is a reviewed exclusion")
    with transaction.atomic():
        if layer == Layer.INCIDENT:
            existing = (
                Exclusion.objects.select_for_update()
                .filter(model_id=model_id, layer=layer, target=normalised, active=True, expires_at__gt=now)
                .first()
            )
            if existing is not None:
                raise QuarantineError(f"{normalised} is already excluded by incident #{existing.pk} until "
                                      f"{existing.expires_at:%Y-%m-%d %H:%M} UTC: remove it first to change it")
        row = Exclusion.objects.create(
            model_id=model_id, layer=layer, target=normalised, reason=reason, evidence_url=evidence_url,
            created_by=actor, created_at=now, expires_at=expires_at, source_file=source_file,
        )
        Decision.objects.create(
            model_id=model_id, action=Action.EXCLUSION_ADDED, actor=actor, reason=reason,
            evidence={"exclusion": row.pk, "layer": layer, "target": normalised,
                      "expires_at": expires_at.isoformat() if expires_at else None},
            created_at=now,
        )
        ignore_list_changed()
    return row


def exclusion_remove(exclusion: Exclusion, *, actor: str, reason: str, now: datetime) -> None:
    """Deactivate an exclusion (kept as a row). Raises QuarantineError for a blank reason."""
    if not reason.strip():
        raise QuarantineError("removing an exclusion needs a reason")
    with transaction.atomic():
        exclusion.active = False
        exclusion.removed_by = actor
        exclusion.removed_at = now
        exclusion.removal_reason = reason
        exclusion.save()
        Decision.objects.create(
            model_id=exclusion.model_id, action=Action.EXCLUSION_REMOVED, actor=actor, reason=reason,
            evidence={"exclusion": exclusion.pk, "layer": exclusion.layer, "target": exclusion.target},
            created_at=now,
        )
        ignore_list_changed()


def exclusion_promote(exclusion: Exclusion, *, actor: str, reason: str, now: datetime, evidence_url: str = "") -> Exclusion:
    """Promote an incident exclusion to a reviewed one (measured, must not come back by
    accident): the incident row is closed and a reviewed row takes its place, both
    audited. Raises QuarantineError for a blank reason or a row that is not an active
    incident exclusion."""
    if exclusion.layer != Layer.INCIDENT or not exclusion.active:
        raise QuarantineError("only an active incident exclusion can be promoted")
    if not reason.strip():
        raise QuarantineError("promoting an exclusion needs a reason")
    # The reviewed row is added before the incident row goes, in one transaction: the
    # target never leaves the ignore list between the two steps.
    with transaction.atomic():
        reviewed = exclusion_add(
            exclusion.model_id, Layer.REVIEWED, exclusion.target, actor=actor, reason=reason, now=now,
            evidence_url=evidence_url or exclusion.evidence_url,
        )
        exclusion_remove(exclusion, actor=actor, reason=f"promoted to reviewed exclusion #{reviewed.pk}", now=now)
    return reviewed
