"""The canary's vocabulary, one enum per term (pure: no Django).

Model ``choices`` are derived from these (``canary.models``); code compares against the
members, never against bare strings. Verdicts live beside the judgement type in
``canary.verdicts``.
"""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    """An endpoint's outcome in one round (decided by ``canary.round_judgement``)."""

    FAIL = "fail"
    CLEAN = "clean"
    FROZEN = "frozen"
    INCONCLUSIVE = "inconclusive"


class Mode(StrEnum):
    """A model's canary mode: observe records shadow suspensions, enforce makes them real."""

    OBSERVE = "observe"
    ENFORCE = "enforce"


class Action(StrEnum):
    """What a decision (an audit row) did: the policy's actions first, then manual ones."""

    NONE = "none"
    SUSPENDED = "suspended"
    WOULD_SUSPEND = "would_suspend"
    FLOOR_BLOCKED = "floor_blocked"
    RESTORED = "restored"
    EXPIRED = "expired"
    LIFTED = "lifted"
    FALSE_POSITIVE = "false_positive"
    EXCLUSION_ADDED = "exclusion_added"
    EXCLUSION_REMOVED = "exclusion_removed"
    MODE_CHANGED = "mode_changed"
    WEAK_PROBE = "weak_probe"
    DISCOVERY_FAILED = "discovery_failed"
    LISTING_EMPTY = "listing_empty"
    # Live evidence (docs/live-evidence.md): the gateway's verdicts made a suspect; a
    # confirmation round convicted it (the policy suspended it) or cleared it.
    LIVE_SUSPECT = "live_suspect"
    LIVE_CONVICTED = "live_convicted"
    LIVE_CLEARED = "live_cleared"


class Layer(StrEnum):
    """The exclusion layers merged into the ignore list."""

    REVIEWED = "reviewed"
    INCIDENT = "incident"
    CANARY = "canary"


# The policy's actions (``canary.policy.policy_apply`` returns only these).
POLICY_ACTIONS: tuple[Action, ...] = (
    Action.SUSPENDED, Action.WOULD_SUSPEND, Action.FLOOR_BLOCKED, Action.RESTORED, Action.EXPIRED, Action.NONE,
)
