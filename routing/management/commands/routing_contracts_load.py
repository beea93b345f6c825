"""Load routing contracts from JSON files: each changed contract becomes a new version."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from routing.contracts import ContractError
from routing.services import contracts_load_file


class Command(BaseCommand):
    help = "Load routing contracts from JSON files (one contract or a list per file)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+")
        parser.add_argument("--actor", default="routing_contracts_load")

    def handle(self, *args: Any, **options: Any) -> None:
        for path in options["paths"]:
            try:
                created = contracts_load_file(path, actor=options["actor"])
            except (ContractError, OSError, ValueError) as exc:
                raise CommandError(str(exc)) from exc
            names = ", ".join(str(c) for c in created) or "no change"
            self.stdout.write(f"{path}: {names}")
