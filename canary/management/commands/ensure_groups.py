"""``python manage.py ensure_groups``: create or update the staff permission groups
(``canary.groups``; also run after every ``migrate``)."""

from __future__ import annotations

from typing import Any

from canary.groups import groups_ensure
from core.management.strict import StrictCommand


class Command(StrictCommand):
    help = "Create or update the staff groups viewer, operator and reviewer with their permissions."

    def handle(self, *args: Any, **opts: Any) -> None:
        for name, n in groups_ensure().items():
            self.stdout.write(f"{name}: {n} permissions")
