"""Load routing contracts from JSON files: each changed contract becomes a new version.

All files load in one transaction: a missing, unreadable or invalid file (the message
names it and says what is wrong, with line and column for bad JSON) exits non-zero and
stores nothing, not even from the files before it."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from core.management.strict import StrictCommand
from routing.contracts import ContractError
from routing.services.contracts import contracts_load_files


class Command(StrictCommand):
    help = "Load routing contracts from JSON files (one contract or a list per file)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+")
        parser.add_argument("--actor", default="routing_contracts_load")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            loaded = contracts_load_files(options["paths"], actor=options["actor"])
        except ContractError as exc:
            raise CommandError(str(exc)) from exc
        for path, created in loaded:
            self.stdout.write(f"{path}: {', '.join(str(c) for c in created) or 'no change'}")
