"""``python manage.py service_token issue NAME`` / ``revoke NAME``: internal API tokens."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.models import ServiceToken
from core.tokens import service_token_issue, service_token_revoke


class Command(BaseCommand):
    help = "Issue or revoke a bearer token of a backend service (the token is shown once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["issue", "revoke"])
        parser.add_argument("name")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["action"] == "issue":
            try:
                _, token = service_token_issue(opts["name"])
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(token)
        else:
            try:
                service_token_revoke(opts["name"])
            except ServiceToken.DoesNotExist as exc:
                raise CommandError(f"no service token named {opts['name']!r}") from exc
            self.stdout.write(f"revoked {opts['name']}")
