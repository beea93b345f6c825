"""The staff permission groups: ``viewer``, ``operator``, ``reviewer``.

Kept in step after every ``migrate`` (a ``post_migrate`` handler connected in
``canary.apps.CanaryConfig.ready``) and by ``manage.py ensure_groups``. Idempotent: each
group ends with exactly the permissions listed here.

- ``viewer``: the dashboards and every canary changelist, read-only.
- ``operator``: viewer, plus incident exclusions (add, remove) and lifting suspensions.
- ``reviewer``: operator, plus reviewed exclusions (add, remove, promote), switching a
  model between observe and enforce, positive controls of endpoints, and marking
  suspension decisions false positives.

Staff still need ``is_staff`` to log in to the admin; a group only grants permissions.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group, Permission

VIEW_MODELS = (
    "provider", "endpoint", "round", "proberesult", "endpointround", "modelconfig",
    "endpointpolicystate", "decision", "exclusion", "notification",
)
VIEWER = tuple(f"view_{m}" for m in VIEW_MODELS)
OPERATOR = VIEWER + ("add_exclusion", "change_exclusion", "change_endpointpolicystate")
# change_endpoint lets reviewers set an endpoint's positive controls.
REVIEWER = OPERATOR + ("review_exclusion", "change_mode", "change_endpoint", "mark_false_positive")

GROUPS: dict[str, tuple[str, ...]] = {"viewer": VIEWER, "operator": OPERATOR, "reviewer": REVIEWER}


def groups_ensure(using: str = "default") -> dict[str, int]:
    """Create or update the groups; returns ``{group name: number of permissions}``.

    Permissions are canary codenames; any not (yet) in the database are skipped, so this
    is safe to call in the middle of a partial migration.
    """
    wanted = {code for codes in GROUPS.values() for code in codes}
    perms = {
        p.codename: p
        for p in Permission.objects.using(using).filter(content_type__app_label="canary", codename__in=wanted)
    }
    out = {}
    for name, codes in GROUPS.items():
        group, _ = Group.objects.using(using).get_or_create(name=name)
        chosen = [perms[c] for c in codes if c in perms]
        group.permissions.set(chosen)
        out[name] = len(chosen)
    return out


def groups_after_migrate(sender: Any, using: str = "default", **kwargs: Any) -> None:
    """``post_migrate`` handler: keep the groups in step with the code after each migrate."""
    groups_ensure(using=using)
