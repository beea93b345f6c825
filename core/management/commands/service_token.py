"""``python manage.py service_token issue NAME | rotate NAME [--overlap-s N] |
revoke NAME --reason R | list``: bearer tokens of backend services."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from core.management.strict import StrictCommand
from core.models import ServiceToken
from core.tokens import (
    VERIFY_CACHE_S,
    service_token_issue,
    service_token_list,
    service_token_revoke,
    service_token_rotate,
)


def _at(value: Any) -> str:
    return f"{value:%Y-%m-%d %H:%M:%S}Z" if value is not None else "-"


class Command(StrictCommand):
    help = (
        "Issue, rotate, revoke or list bearer tokens of backend services (a new token is "
        "shown once). Rotation keeps the old token valid for --overlap-s seconds."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="{issue,rotate,revoke,list}")
        issue = actions.add_parser("issue", help="a new token for a service that has none")
        issue.add_argument("name")
        rotate = actions.add_parser("rotate", help="a new secret under the same name; the old one ends after the overlap")
        rotate.add_argument("name")
        rotate.add_argument("--overlap-s", type=float, default=0.0, help="seconds both tokens are valid (default 0)")
        revoke = actions.add_parser("revoke", help="end every valid token of a name now")
        revoke.add_argument("name")
        revoke.add_argument("--reason", required=True, help="why (kept on the row)")
        actions.add_parser("list", help="names, creation, last use and state of every token")

    def handle(self, *args: Any, **opts: Any) -> None:
        action = opts["action"]
        try:
            if action == "issue":
                _, token = service_token_issue(opts["name"])
                self.stdout.write(token)
            elif action == "rotate":
                _, token = service_token_rotate(opts["name"], overlap_s=opts["overlap_s"])
                self.stdout.write(token)
            elif action == "revoke":
                count = service_token_revoke(opts["name"], reason=opts["reason"])
                self.stdout.write(f"revoked {opts['name']} ({count} token{'s' if count != 1 else ''}); refused "
                                  f"everywhere within {VERIFY_CACHE_S:.0f} s (each process trusts a checked token that long)")
            else:
                self._list()
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        except ServiceToken.DoesNotExist as exc:
            raise CommandError(f"no valid service token named {opts['name']!r}") from exc

    def _list(self) -> None:
        rows = service_token_list()
        if not rows:
            self.stdout.write("no service tokens")
            return
        self.stdout.write(f"{'name':<24} {'prefix':<11} {'created':<20} {'last used':<20} state")
        for r in rows:
            state = r.state if r.state == "active" else f"{r.state} {_at(r.revoked_at)}: {r.revoke_reason}"
            self.stdout.write(f"{r.name:<24} {r.prefix:<11} {_at(r.created_at):<20} {_at(r.last_used_at):<20} {state}")
