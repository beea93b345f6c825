"""Django admin of the canary: operational state at a glance, and the manual overrides.

Changelists show what an operator needs first (suspended now and until when, streak, the
last outcomes, the model's mode). Overrides are admin actions that ask for a reason and
call the services in ``canary.services.quarantine``: the admin never writes policy state itself,
so every override leaves the same audit row as the command line would. A refused action
(``QuarantineError``) is shown as a message, never a 500.

History rows (rounds, probe results, outcomes, decisions, notifications) are read-only and
never deleted. The dashboards (``canary.dashboards``) are routed through these
ModelAdmins' ``get_urls``.

Permissions (groups in ``canary/groups.py``):
viewer: ``view_*``; operator: incident exclusions (``add_exclusion``, ``change_exclusion``)
and lifts (``change_endpointpolicystate``); reviewer: reviewed exclusions
(``review_exclusion``), mode changes (``change_mode``), positive controls
(``change_endpoint``), false positives (``mark_false_positive``).
"""

from canary.admin import endpoints, exclusions, history, overrides

__all__ = ["endpoints", "exclusions", "history", "overrides"]
